// cnn_per_sample_grads: functorch's per-sample-gradients tutorial in C++. The tutorial's CNN
// (examples/tutorial_cnn.h) on a minibatch of MNIST-shaped data: vmap(grad(loss)) gives the
// gradient of each example's own loss with respect to every parameter in one batched pass
// (the convolutions run once on the whole batch; their weight gradients fold the examples
// into groups). The result is checked against grad run on each example in a loop; the
// program exits non-zero on a mismatch.
//   ./bazelw run -c opt //examples:cnn_per_sample_grads             # B = 64, the tutorial's
//   ./bazelw run -c opt //examples:cnn_per_sample_grads -- --batch=256
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "examples/tutorial_cnn.h"
#include "ft.h"

namespace {

// One example's loss: x [1, 28, 28], y (0-dim int64); the example gets the batch dim back
// (unsqueeze) so the model code is the minibatch code, as in the tutorial.
ft::Tensor ExampleLoss(const tutorial::Cnn& p, const ft::Tensor& x, const ft::Tensor& y) {
  return tutorial::CnnLoss(p, ft::unsqueeze(x, 0), ft::unsqueeze(y, 0));
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t batch = 64;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--batch=", 8) == 0) batch = std::atoll(argv[i] + 8);
  }
  ft::Generator gen(0);
  const tutorial::Cnn params = tutorial::InitCnn(gen);
  const tutorial::Mnist data = tutorial::SyntheticMnist(batch, gen);

  // vmap over the data (dim 0 of x and y), the parameters shared (nullopt): a Cnn whose every
  // leaf is [batch, shape of that parameter].
  const auto per_sample = ft::vmap(ft::grad(&ExampleLoss), {std::nullopt, 0, 0});
  auto start = std::chrono::steady_clock::now();
  const tutorial::Cnn grads = per_sample(params, data.x, data.y);
  const double vmap_seconds = Seconds(start);

  // The oracle: grad of each example's loss, one example at a time, stacked.
  start = std::chrono::steady_clock::now();
  std::vector<tutorial::Cnn> each;
  for (int64_t i = 0; i < batch; ++i) {
    each.push_back(
        ft::grad(&ExampleLoss)(params, ft::select(data.x, 0, i), ft::select(data.y, 0, i)));
  }
  const tutorial::Cnn looped = ft::tree_stack(each);
  const double loop_seconds = Seconds(start);

  std::printf("per-sample gradients of the tutorial CNN, batch %lld:\n",
              static_cast<long long>(batch));
  const std::vector<std::string> paths = ft::tree_leaf_paths(grads);
  const ft::TensorList leaves = ft::tree_leaves(grads);
  for (size_t i = 0; i < leaves.size(); ++i) {
    std::printf("  %-9s %s\n", paths[i].c_str(), ft::ShapeToString(leaves[i].sizes()).c_str());
  }
  // The mean of the per-sample gradients is the minibatch gradient.
  const tutorial::Cnn batch_grad = ft::grad(&tutorial::CnnLoss)(params, data.x, data.y);
  const tutorial::Cnn mean_grads =
      ft::tree_map([](const ft::Tensor& g) { return ft::mean(g, {0}); }, grads);
  const double gap = tutorial::RelativeGap(grads, looped);
  const double mean_gap = tutorial::RelativeGap(mean_grads, batch_grad);
  std::printf("vmap(grad): %.3f s, loop of grad: %.3f s (%.1fx)\n", vmap_seconds, loop_seconds,
              loop_seconds / vmap_seconds);
  std::printf("max relative |vmap - loop| = %.1e, |mean - minibatch grad| = %.1e\n", gap, mean_gap);
  if (!(gap < 1e-4) || !(mean_gap < 1e-4)) {
    std::printf("MISMATCH\n");
    return 1;
  }
  return 0;
}

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
#include <vector>

#include "examples/tutorial_cnn.h"
#include "ft.h"

namespace {

// One example's loss: a = {params..., x [1, 28, 28], y (0-dim int64)}; the example gets the
// batch dim back (unsqueeze) so the model code is the minibatch code, as in the tutorial.
ft::Tensor ExampleLoss(const ft::TensorList& a) {
  return tutorial::CnnLoss(tutorial::Params(a), ft::unsqueeze(a[8], 0), ft::unsqueeze(a[9], 0));
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
  const ft::TensorList params = tutorial::InitCnn(gen);
  const tutorial::Mnist data = tutorial::SyntheticMnist(batch, gen);
  const std::vector<int64_t> argnums = {0, 1, 2, 3, 4, 5, 6, 7};

  // vmap over the data (dim 0 of x and y), the parameters shared (nullopt).
  std::vector<std::optional<int64_t>> in_dims(tutorial::kCnnParams, std::nullopt);
  in_dims.push_back(0);
  in_dims.push_back(0);
  const ft::TensorListFn per_sample = ft::vmap(ft::grad(ft::ScalarFn(ExampleLoss), argnums), ft::Dims(in_dims));
  ft::TensorList args = params;
  args.push_back(data.x);
  args.push_back(data.y);
  auto start = std::chrono::steady_clock::now();
  const ft::TensorList grads = per_sample(args);
  const double vmap_seconds = Seconds(start);

  // The oracle: grad of each example's loss, one example at a time, stacked.
  start = std::chrono::steady_clock::now();
  std::vector<ft::TensorList> per_param(tutorial::kCnnParams);
  for (int64_t i = 0; i < batch; ++i) {
    ft::TensorList one = params;
    one.push_back(ft::select(data.x, 0, i));
    one.push_back(ft::select(data.y, 0, i));
    const ft::TensorList g = ft::grad(ft::ScalarFn(ExampleLoss), argnums)(one);
    for (int64_t p = 0; p < tutorial::kCnnParams; ++p) per_param[p].push_back(g[p]);
  }
  ft::TensorList looped;
  for (const ft::TensorList& gs : per_param) looped.push_back(ft::stack(gs, 0));
  const double loop_seconds = Seconds(start);

  std::printf("per-sample gradients of the tutorial CNN, batch %lld:\n",
              static_cast<long long>(batch));
  for (int64_t p = 0; p < tutorial::kCnnParams; ++p) {
    std::printf("  param %lld: %s\n", static_cast<long long>(p),
                ft::ShapeToString(grads[p].sizes()).c_str());
  }
  // The mean of the per-sample gradients is the minibatch gradient.
  const ft::TensorList batch_grad = ft::grad(
      ft::ScalarFn([&data](const ft::TensorList& p) { return tutorial::CnnLoss(p, data.x, data.y); }),
      argnums)(params);
  ft::TensorList mean_grads;
  for (const ft::Tensor& g : grads) mean_grads.push_back(ft::mean(g, {0}));
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

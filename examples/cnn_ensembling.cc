// cnn_ensembling: functorch's model-ensembling tutorial in C++, on the tutorial's CNN
// (examples/tutorial_cnn.h). The parameters of M models are stacked along a new leading dim
// by ft::tree_stack (torch.func.stack_module_state: one Cnn tree whose every leaf is
// [M, ...]) and vmap runs all M models in one batched pass: the convolutions with batched
// weights fold the models into the groups of one convolution.
//   1. every model on the same minibatch (the data shared: in_dim nullopt);
//   2. every model on its own minibatch (the data mapped with the parameters).
// Each result is checked against a loop over the models; exits non-zero on a mismatch.
//   ./bazelw run -c opt //examples:cnn_ensembling [-- --models=10 --batch=64]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "examples/tutorial_cnn.h"
#include "ft.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t models = 10, batch = 64;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--models=", 9) == 0) models = std::atoll(argv[i] + 9);
    if (std::strncmp(argv[i], "--batch=", 8) == 0) batch = std::atoll(argv[i] + 8);
  }
  ft::Generator gen(1);
  std::vector<tutorial::Cnn> each;
  for (int64_t m = 0; m < models; ++m) each.push_back(tutorial::InitCnn(gen));
  const tutorial::Cnn stacked = ft::tree_stack(each);  // every leaf [M, ...]
  const tutorial::Mnist shared = tutorial::SyntheticMnist(batch, gen);
  const tutorial::Mnist per_model = tutorial::SyntheticMnist(models * batch, gen);
  const ft::Tensor own_x = ft::reshape(per_model.x, {models, batch, 1, 28, 28});
  bool ok = true;

  for (bool same_minibatch : {true, false}) {
    // in_dims, a prefix of the arguments: 0 for every leaf of the stacked Cnn; the images
    // shared (nullopt) or each model's own (0).
    const std::optional<int64_t> x_dim = same_minibatch ? std::nullopt : std::optional<int64_t>(0);
    const auto ensemble = ft::vmap(&tutorial::CnnLogProbs, {0, x_dim});
    auto start = std::chrono::steady_clock::now();
    const ft::Tensor batched = ensemble(stacked, same_minibatch ? shared.x : own_x);  // [M, B, 10]
    const double vmap_seconds = Seconds(start);
    start = std::chrono::steady_clock::now();
    ft::TensorList loop;
    for (int64_t m = 0; m < models; ++m) {
      loop.push_back(tutorial::CnnLogProbs(each[static_cast<size_t>(m)],
                                           same_minibatch ? shared.x : ft::select(own_x, 0, m)));
    }
    const double loop_seconds = Seconds(start);
    const double gap = tutorial::RelativeGap(batched, ft::stack(loop, 0));
    std::printf("%s: %lld models x %lld images -> %s, vmap %.3f s, loop %.3f s, max relative "
                "|vmap - loop| = %.1e\n",
                same_minibatch ? "same minibatch" : "own minibatches",
                static_cast<long long>(models), static_cast<long long>(batch),
                ft::ShapeToString(batched.sizes()).c_str(),
                vmap_seconds, loop_seconds, gap);
    ok = ok && gap < 1e-5;
  }
  if (!ok) std::printf("MISMATCH\n");
  return ok ? 0 : 1;
}

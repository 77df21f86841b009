// cnn_ensembling: functorch's model-ensembling tutorial in C++, on the tutorial's CNN
// (examples/tutorial_cnn.h). The parameters of M models are stacked along a new leading dim
// and vmap runs all M models in one batched pass: the convolutions with batched weights fold
// the models into the groups of one convolution.
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

// a = {stacked params of one model..., x}: log-probabilities of x under that model.
ft::TensorList Model(const ft::TensorList& a) {
  return {tutorial::CnnLogProbs(tutorial::Params(a), a[tutorial::kCnnParams])};
}

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
  std::vector<ft::TensorList> each;
  for (int64_t m = 0; m < models; ++m) each.push_back(tutorial::InitCnn(gen));
  ft::TensorList stacked;
  for (int64_t p = 0; p < tutorial::kCnnParams; ++p) {
    ft::TensorList one_param;
    for (const ft::TensorList& params : each) one_param.push_back(params[p]);
    stacked.push_back(ft::stack(one_param, 0));  // [M, ...]
  }
  const tutorial::Mnist shared = tutorial::SyntheticMnist(batch, gen);
  const tutorial::Mnist per_model = tutorial::SyntheticMnist(models * batch, gen);
  const ft::Tensor own_x = ft::reshape(per_model.x, {models, batch, 1, 28, 28});
  bool ok = true;

  for (bool same_minibatch : {true, false}) {
    std::vector<std::optional<int64_t>> in_dims(tutorial::kCnnParams, 0);
    in_dims.push_back(same_minibatch ? std::nullopt : std::optional<int64_t>(0));
    ft::TensorList args = stacked;
    args.push_back(same_minibatch ? shared.x : own_x);
    auto start = std::chrono::steady_clock::now();
    const ft::Tensor batched = ft::vmap(ft::TensorListFn(Model), ft::Dims(in_dims))(args)[0];  // [M, B, 10]
    const double vmap_seconds = Seconds(start);
    start = std::chrono::steady_clock::now();
    ft::TensorList loop;
    for (int64_t m = 0; m < models; ++m) {
      ft::TensorList a = each[static_cast<size_t>(m)];
      a.push_back(same_minibatch ? shared.x : ft::select(own_x, 0, m));
      loop.push_back(Model(a)[0]);
    }
    const double loop_seconds = Seconds(start);
    const double gap = tutorial::RelativeGap({batched}, {ft::stack(loop, 0)});
    std::printf("%s: %lld models x %lld images -> %s, vmap %.3f s, loop %.3f s, max relative "
                "|vmap - loop| = %.1e\n",
                same_minibatch ? "same minibatch" : "own minibatches", static_cast<long long>(models),
                static_cast<long long>(batch), ft::ShapeToString(batched.sizes()).c_str(),
                vmap_seconds, loop_seconds, gap);
    ok = ok && gap < 1e-5;
  }
  if (!ok) std::printf("MISMATCH\n");
  return ok ? 0 : 1;
}

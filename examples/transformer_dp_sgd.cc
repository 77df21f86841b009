// transformer_dp_sgd: a transformer encoder block (transformer_block.h: multi-head attention,
// layer_norm, a gelu MLP, residual connections) trained with DP-SGD: vmap(grad) gives every example's own
// gradient, each is clipped to norm C, their sum gets Gaussian noise of scale sigma C, and
// one step updates the parameters. The task: classify synthetic sequences by the sign of the
// mean of their first feature.
// Checks (exit non-zero on a failure): the per-sample gradients of the first step against a
// loop of single-example grads, and that training lowers the loss.
//   ./bazelw run -c opt //examples:transformer_dp_sgd
//   ./bazelw run -c opt //examples:transformer_dp_sgd -- --d=128 --heads=4 --seq=64 --batch=32
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "examples/transformer_block.h"
#include "ft.h"

namespace {

struct Config {
  int64_t d = 32, heads = 4, seq = 16, batch = 16, steps = 40;
  double lr = 0.5, clip = 1.0, noise = 0.1;
};
Config config;

transformer::BlockShape Shape() { return {.d = config.d, .heads = config.heads}; }

ft::Tensor ExampleLoss(const ft::TensorList& a) { return transformer::ExampleLoss(Shape(), a); }

double MeanLoss(const ft::TensorList& p, const ft::Tensor& xs, const ft::Tensor& ys) {
  double total = 0;
  for (int64_t i = 0; i < xs.size(0); ++i) {
    ft::TensorList a = p;
    a.push_back(ft::select(xs, 0, i));
    a.push_back(ft::select(ys, 0, i));
    total += ExampleLoss(a).item<double>();
  }
  return total / static_cast<double>(xs.size(0));
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strncmp(a, "--d=", 4) == 0) config.d = std::atoll(a + 4);
    if (std::strncmp(a, "--heads=", 8) == 0) config.heads = std::atoll(a + 8);
    if (std::strncmp(a, "--seq=", 6) == 0) config.seq = std::atoll(a + 6);
    if (std::strncmp(a, "--batch=", 8) == 0) config.batch = std::atoll(a + 8);
    if (std::strncmp(a, "--steps=", 8) == 0) config.steps = std::atoll(a + 8);
  }
  ft::Generator gen(5);
  ft::TensorList params = transformer::InitParams(Shape(), gen);
  const int64_t n = 8 * config.batch;
  const transformer::Sequences data = transformer::SyntheticSequences(Shape(), n, config.seq, gen);
  const ft::Tensor& xs = data.x;
  const ft::Tensor& ys = data.y;

  const std::vector<int64_t> argnums = transformer::ParamArgnums();
  std::vector<std::optional<int64_t>> in_dims(transformer::kNumParams, std::nullopt);
  in_dims.push_back(0);
  in_dims.push_back(0);
  const ft::TensorListFn per_example =
      ft::vmap(ft::grad(ft::ScalarFn(ExampleLoss), argnums), ft::Dims(in_dims));
  const double initial = MeanLoss(params, xs, ys);
  bool ok = true;
  for (int64_t step = 0; step < config.steps; ++step) {
    const int64_t start = (step * config.batch) % n;
    const ft::Tensor xb = ft::narrow(xs, 0, start, config.batch);
    const ft::Tensor yb = ft::narrow(ys, 0, start, config.batch);
    ft::TensorList args = params;
    args.push_back(xb);
    args.push_back(yb);
    const ft::TensorList grads = per_example(args);  // each [B, shape of the parameter]
    if (step == 0) {  // the per-sample gradients against a loop of grad
      double gap = 0, scale = 1e-30;
      for (int64_t i = 0; i < config.batch; ++i) {
        ft::TensorList one = params;
        one.push_back(ft::select(xb, 0, i));
        one.push_back(ft::select(yb, 0, i));
        const ft::TensorList g = ft::grad(ft::ScalarFn(ExampleLoss), argnums)(one);
        for (int64_t p = 0; p < transformer::kNumParams; ++p) {
          gap = std::max(gap, ft::amax(ft::abs(ft::select(grads[p], 0, i) - g[p])).item<double>());
          scale = std::max(scale, ft::amax(ft::abs(g[p])).item<double>());
        }
      }
      std::printf("per-sample gradients, %lld examples: max relative |vmap - loop| = %.1e\n",
                  static_cast<long long>(config.batch), gap / scale);
      ok = ok && gap / scale < 1e-4;
    }
    // Clip each example's whole gradient to norm `clip`, sum, add noise, average.
    ft::Tensor sq = ft::zeros({config.batch});
    for (const ft::Tensor& g : grads) sq = sq + ft::sum(ft::square(ft::flatten(g, 1)), {1});
    const ft::Tensor factor = ft::clamp(config.clip / (ft::sqrt(sq) + 1e-12), std::nullopt, 1.0);
    for (int64_t p = 0; p < transformer::kNumParams; ++p) {
      std::vector<int64_t> shape(static_cast<size_t>(grads[p].dim()), 1);
      shape[0] = config.batch;
      const ft::Tensor clipped = ft::sum(grads[p] * ft::reshape(factor, shape), {0});
      const ft::Tensor noisy =
          clipped + ft::randn_like(clipped, &gen) * (config.noise * config.clip);
      params[p] = params[p] - noisy * (config.lr / static_cast<double>(config.batch));
    }
  }
  const double final_loss = MeanLoss(params, xs, ys);
  std::printf("DP-SGD on a transformer block (d %lld, %lld heads, seq %lld, batch %lld, %lld "
              "steps): loss %.4f -> %.4f\n",
              static_cast<long long>(config.d), static_cast<long long>(config.heads),
              static_cast<long long>(config.seq), static_cast<long long>(config.batch),
              static_cast<long long>(config.steps), initial, final_loss);
  ok = ok && final_loss < initial;
  if (!ok) std::printf("FAILED\n");
  return ok ? 0 : 1;
}

// transformer_dp_sgd: a transformer encoder block (transformer_block.h: multi-head attention,
// layer_norm, a gelu MLP, residual connections) trained with DP-SGD: vmap(grad) gives every
// example's own gradient (a transformer::Block, the parameters' tree), each is clipped to
// norm C, their sum gets Gaussian noise of scale sigma C, and one step updates the
// parameters. The task: classify synthetic sequences by the sign of the mean of their first
// feature.
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

ft::Tensor ExampleLoss(const transformer::Block& p, const ft::Tensor& x, const ft::Tensor& y) {
  return transformer::ExampleLoss(Shape(), p, x, y);
}

double MeanLoss(const transformer::Block& p, const ft::Tensor& xs, const ft::Tensor& ys) {
  double total = 0;
  for (int64_t i = 0; i < xs.size(0); ++i) {
    total += ExampleLoss(p, ft::select(xs, 0, i), ft::select(ys, 0, i)).item<double>();
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
  transformer::Block params = transformer::InitParams(Shape(), gen);
  const int64_t n = 8 * config.batch;
  const transformer::Sequences data = transformer::SyntheticSequences(Shape(), n, config.seq, gen);
  const ft::Tensor& xs = data.x;
  const ft::Tensor& ys = data.y;

  // The parameters shared (nullopt), the examples mapped: a Block whose every leaf is
  // [B, shape of that parameter].
  const auto per_example = ft::vmap(ft::grad(&ExampleLoss), {std::nullopt, 0, 0});
  const double initial = MeanLoss(params, xs, ys);
  bool ok = true;
  for (int64_t step = 0; step < config.steps; ++step) {
    const int64_t start = (step * config.batch) % n;
    const ft::Tensor xb = ft::narrow(xs, 0, start, config.batch);
    const ft::Tensor yb = ft::narrow(ys, 0, start, config.batch);
    const transformer::Block grads = per_example(params, xb, yb);
    if (step == 0) {  // the per-sample gradients against a loop of grad
      const std::vector<transformer::Block> rows = ft::tree_unstack(grads);  // one per example
      double gap = 0, scale = 1e-30;
      for (int64_t i = 0; i < config.batch; ++i) {
        const transformer::Block one =
            ft::grad(&ExampleLoss)(params, ft::select(xb, 0, i), ft::select(yb, 0, i));
        const ft::TensorList looped = ft::tree_leaves(one), batched = ft::tree_leaves(rows[i]);
        for (size_t leaf = 0; leaf < looped.size(); ++leaf) {
          gap = std::max(gap, ft::amax(ft::abs(batched[leaf] - looped[leaf])).item<double>());
          scale = std::max(scale, ft::amax(ft::abs(looped[leaf])).item<double>());
        }
      }
      std::printf("per-sample gradients, %lld examples: max relative |vmap - loop| = %.1e\n",
                  static_cast<long long>(config.batch), gap / scale);
      ok = ok && gap / scale < 1e-4;
    }
    // Clip each example's whole gradient to norm `clip`, sum, add noise, average, step.
    ft::Tensor sq = ft::zeros({config.batch});
    for (const ft::Tensor& g : ft::tree_leaves(grads)) {
      sq = sq + ft::sum(ft::square(ft::flatten(g, 1)), {1});
    }
    const ft::Tensor factor = ft::clamp(config.clip / (ft::sqrt(sq) + 1e-12), std::nullopt, 1.0);
    params = ft::tree_map(
        [&](const ft::Tensor& p, const ft::Tensor& g) {
          std::vector<int64_t> shape(static_cast<size_t>(g.dim()), 1);
          shape[0] = config.batch;
          const ft::Tensor clipped = ft::sum(g * ft::reshape(factor, shape), {0});
          const ft::Tensor noisy =
              clipped + ft::randn_like(clipped, &gen) * (config.noise * config.clip);
          return p - noisy * (config.lr / static_cast<double>(config.batch));
        },
        params, grads);
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

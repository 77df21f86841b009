// transformer_dp_sgd: a transformer encoder block (multi-head attention, layer_norm, a gelu
// MLP, residual connections) trained with DP-SGD: vmap(grad) gives every example's own
// gradient, each is clipped to norm C, their sum gets Gaussian noise of scale sigma C, and
// one step updates the parameters. The task: classify synthetic sequences by the sign of the
// mean of their first feature.
// Checks (exit non-zero on a failure): the per-sample gradients of the first step against a
// loop of single-example grads, and that training lowers the loss.
//   ./bazelw run -c opt //examples:transformer_dp_sgd
//   ./bazelw run -c opt //examples:transformer_dp_sgd -- --d=128 --heads=4 --seq=64 --batch=32
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "ft.h"

namespace {

struct Config {
  int64_t d = 32, heads = 4, seq = 16, batch = 16, steps = 40;
  double lr = 0.5, clip = 1.0, noise = 0.1;
};
Config config;

// The parameters, in this order.
enum Param : int64_t {
  kLn1W, kLn1B, kWq, kBq, kWk, kBk, kWv, kBv, kWo, kBo, kLn2W, kLn2B, kW1, kB1, kW2, kB2, kWc,
  kBc, kNumParams
};

ft::TensorList InitParams(ft::Generator& gen) {
  const int64_t d = config.d, h = 4 * config.d;
  auto uniform = [&gen](std::vector<int64_t> shape, double fan_in) {
    return (ft::rand_like(ft::zeros(shape), &gen) * 2.0 - 1.0) / std::sqrt(fan_in);
  };
  return {ft::ones({d}),        ft::zeros({d}),    uniform({d, d}, d), ft::zeros({d}),
          uniform({d, d}, d),   ft::zeros({d}),    uniform({d, d}, d), ft::zeros({d}),
          uniform({d, d}, d),   ft::zeros({d}),    ft::ones({d}),      ft::zeros({d}),
          uniform({h, d}, d),   ft::zeros({h}),    uniform({d, h}, h), ft::zeros({d}),
          uniform({2, d}, d),   ft::zeros({2})};
}

// Multi-head self-attention of one sequence x [S, d].
ft::Tensor Attention(const ft::TensorList& p, const ft::Tensor& x) {
  const int64_t s = x.size(0), d = config.d, heads = config.heads;
  auto split = [&](const ft::Tensor& t) {  // [S, d] -> [heads, S, d / heads]
    return ft::transpose(ft::reshape(t, {s, heads, d / heads}), 0, 1);
  };
  const ft::Tensor q = split(ft::linear(x, p[kWq], p[kBq]));
  const ft::Tensor k = split(ft::linear(x, p[kWk], p[kBk]));
  const ft::Tensor v = split(ft::linear(x, p[kWv], p[kBv]));
  const ft::Tensor o = ft::scaled_dot_product_attention(q, k, v);
  return ft::linear(ft::reshape(ft::transpose(o, 0, 1), {s, d}), p[kWo], p[kBo]);
}

// One example's logits [2]: a pre-norm encoder block, then the mean over the sequence.
ft::Tensor Logits(const ft::TensorList& p, const ft::Tensor& x) {
  const std::vector<int64_t> d = {config.d};
  ft::Tensor h = x + Attention(p, ft::layer_norm(x, d, p[kLn1W], p[kLn1B]));
  const ft::Tensor mlp = ft::linear(
      ft::gelu(ft::linear(ft::layer_norm(h, d, p[kLn2W], p[kLn2B]), p[kW1], p[kB1])), p[kW2],
      p[kB2]);
  h = h + mlp;
  return ft::linear(ft::mean(h, {0}), p[kWc], p[kBc]);
}

// a = {params..., x [S, d], y (0-dim int64)}: one example's cross-entropy.
ft::Tensor ExampleLoss(const ft::TensorList& a) {
  const ft::TensorList p(a.begin(), a.begin() + kNumParams);
  return ft::cross_entropy(ft::unsqueeze(Logits(p, a[kNumParams]), 0),
                           ft::unsqueeze(a[kNumParams + 1], 0));
}

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
  ft::TensorList params = InitParams(gen);
  const int64_t n = 8 * config.batch;
  const ft::Tensor xs = ft::randn_like(ft::zeros({n, config.seq, config.d}), &gen);
  const ft::Tensor ys = ft::to(ft::gt(ft::mean(ft::select(xs, 2, 0), {1}), 0.0), ft::kInt64);

  std::vector<int64_t> argnums;
  std::vector<std::optional<int64_t>> in_dims;
  for (int64_t i = 0; i < kNumParams; ++i) {
    argnums.push_back(i);
    in_dims.push_back(std::nullopt);
  }
  in_dims.push_back(0);
  in_dims.push_back(0);
  const ft::TensorListFn per_example = ft::vmap(ft::grad(ft::ScalarFn(ExampleLoss), argnums), ft::Dims(in_dims));
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
        for (int64_t p = 0; p < kNumParams; ++p) {
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
    for (int64_t p = 0; p < kNumParams; ++p) {
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

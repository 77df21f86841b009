// transformer_block.h: a pre-norm transformer encoder block with a classifier head, written
// with ft's ops, for the example transformer_dp_sgd.cc and the benchmark //benchmarks:models.
//
// One example is a sequence x [S, d]:
//   h = x + Attention(layer_norm(x))            multi-head self-attention, `heads` heads
//   h = h + W2 gelu(W1 layer_norm(h) + b1) + b2  an MLP of width 4 d
//   logits [2] = Wc mean_over_S(h) + bc;  the loss is cross_entropy against a label in {0, 1}.
// Attention is softmax(Q K^T / sqrt(d / heads)) V per head (scaled_dot_product_attention).
//
// The parameters are a TensorList of kNumParams tensors in the order of enum Param,
// initialized like torch's LayerNorm (weight 1, bias 0) and Linear (weight uniform in
// +-1/sqrt(fan_in)), with the Linear biases 0. d must be a multiple of heads.
// Example:
//   const transformer::BlockShape shape{.d = 128, .heads = 4};
//   ft::Generator gen(5);
//   const ft::TensorList params = transformer::InitParams(shape, gen);
//   const transformer::Sequences data = transformer::SyntheticSequences(shape, 32, 64, gen);
//   ft::TensorList args = params;
//   args.push_back(ft::select(data.x, 0, 0));
//   args.push_back(ft::select(data.y, 0, 0));
//   const ft::Tensor loss = transformer::ExampleLoss(shape, args);  // 0-dim
#ifndef FT_EXAMPLES_TRANSFORMER_BLOCK_H_
#define FT_EXAMPLES_TRANSFORMER_BLOCK_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "ft.h"

namespace transformer {

// BlockShape: the model width and the number of attention heads (d % heads == 0).
struct BlockShape {
  int64_t d = 32;
  int64_t heads = 4;
};

// The parameters, in this order.
enum Param : int64_t {
  kLn1W, kLn1B, kWq, kBq, kWk, kBk, kWv, kBv, kWo, kBo, kLn2W, kLn2B, kW1, kB1, kW2, kB2, kWc,
  kBc, kNumParams
};

// InitParams: one block's parameters.
inline ft::TensorList InitParams(const BlockShape& shape, ft::Generator& gen) {
  const int64_t d = shape.d, h = 4 * shape.d;
  auto uniform = [&gen](std::vector<int64_t> sizes, double fan_in) {
    return (ft::rand_like(ft::zeros(sizes), &gen) * 2.0 - 1.0) / std::sqrt(fan_in);
  };
  return {ft::ones({d}),        ft::zeros({d}),    uniform({d, d}, d), ft::zeros({d}),
          uniform({d, d}, d),   ft::zeros({d}),    uniform({d, d}, d), ft::zeros({d}),
          uniform({d, d}, d),   ft::zeros({d}),    ft::ones({d}),      ft::zeros({d}),
          uniform({h, d}, d),   ft::zeros({h}),    uniform({d, h}, h), ft::zeros({d}),
          uniform({2, d}, d),   ft::zeros({2})};
}

// Attention: multi-head self-attention of one sequence x [S, d] -> [S, d].
inline ft::Tensor Attention(const BlockShape& shape, const ft::TensorList& p,
                            const ft::Tensor& x) {
  const int64_t s = x.size(0), d = shape.d, heads = shape.heads;
  auto split = [&](const ft::Tensor& t) {  // [S, d] -> [heads, S, d / heads]
    return ft::transpose(ft::reshape(t, {s, heads, d / heads}), 0, 1);
  };
  const ft::Tensor q = split(ft::linear(x, p[kWq], p[kBq]));
  const ft::Tensor k = split(ft::linear(x, p[kWk], p[kBk]));
  const ft::Tensor v = split(ft::linear(x, p[kWv], p[kBv]));
  const ft::Tensor o = ft::scaled_dot_product_attention(q, k, v);
  return ft::linear(ft::reshape(ft::transpose(o, 0, 1), {s, d}), p[kWo], p[kBo]);
}

// Logits: one example's logits [2]: the encoder block, then the mean over the sequence.
inline ft::Tensor Logits(const BlockShape& shape, const ft::TensorList& p, const ft::Tensor& x) {
  const std::vector<int64_t> d = {shape.d};
  ft::Tensor h = x + Attention(shape, p, ft::layer_norm(x, d, p[kLn1W], p[kLn1B]));
  const ft::Tensor mlp = ft::linear(
      ft::gelu(ft::linear(ft::layer_norm(h, d, p[kLn2W], p[kLn2B]), p[kW1], p[kB1])), p[kW2],
      p[kB2]);
  h = h + mlp;
  return ft::linear(ft::mean(h, {0}), p[kWc], p[kBc]);
}

// ExampleLoss: one example's cross-entropy, a = {params..., x [S, d], y (0-dim int64)}: the
// form grad and vmap(grad) take (argnums 0 .. kNumParams - 1).
inline ft::Tensor ExampleLoss(const BlockShape& shape, const ft::TensorList& a) {
  const ft::TensorList p(a.begin(), a.begin() + kNumParams);
  return ft::cross_entropy(ft::unsqueeze(Logits(shape, p, a[kNumParams]), 0),
                           ft::unsqueeze(a[kNumParams + 1], 0));
}

// ParamArgnums: the argument positions of the parameters in ExampleLoss' list.
inline std::vector<int64_t> ParamArgnums() {
  std::vector<int64_t> r;
  for (int64_t i = 0; i < kNumParams; ++i) r.push_back(i);
  return r;
}

struct Sequences {
  ft::Tensor x;  // [n, S, d] float32, standard normal
  ft::Tensor y;  // [n] int64: 1 where the mean of the sequence's first feature is > 0
};

// SyntheticSequences: n seeded sequences of length seq and their labels, a task the block
// can learn.
inline Sequences SyntheticSequences(const BlockShape& shape, int64_t n, int64_t seq,
                                    ft::Generator& gen) {
  const ft::Tensor x = ft::randn_like(ft::zeros({n, seq, shape.d}), &gen);
  return {x, ft::to(ft::gt(ft::mean(ft::select(x, 2, 0), {1}), 0.0), ft::kInt64)};
}

}  // namespace transformer

#endif  // FT_EXAMPLES_TRANSFORMER_BLOCK_H_

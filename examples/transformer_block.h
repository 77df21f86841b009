// transformer_block.h: a pre-norm transformer encoder block with a classifier head, written
// with ft's ops, for the example transformer_dp_sgd.cc and the benchmark //benchmarks:models.
//
// One example is a sequence x [S, d]:
//   h = x + Attention(layer_norm(x))            multi-head self-attention, `heads` heads
//   h = h + W2 gelu(W1 layer_norm(h) + b1) + b2  an MLP of width 4 d
//   logits [2] = Wc mean_over_S(h) + bc;  the loss is cross_entropy against a label in {0, 1}.
// Attention is softmax(Q K^T / sqrt(d / heads)) V per head (scaled_dot_product_attention).
//
// The parameters are a tree, Block: layer norms and linear layers by name, initialized like
// torch's LayerNorm (weight 1, bias 0) and Linear (weight uniform in +-1/sqrt(fan_in)), with
// the Linear biases 0. d must be a multiple of heads.
// Example:
//   const transformer::BlockShape shape{.d = 128, .heads = 4};
//   ft::Generator gen(5);
//   const transformer::Block params = transformer::InitParams(shape, gen);
//   const transformer::Sequences data = transformer::SyntheticSequences(shape, 32, 64, gen);
//   const ft::Tensor loss = transformer::ExampleLoss(
//       shape, params, ft::select(data.x, 0, 0), ft::select(data.y, 0, 0));  // 0-dim
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

// Linear: a linear layer's weight [out, in] and bias [out].
struct Linear {
  ft::Tensor w, b;
};
FT_TREE(Linear, w, b);

// LayerNorm: a layer norm's elementwise weight and bias [d].
struct LayerNorm {
  ft::Tensor w, b;
};
FT_TREE(LayerNorm, w, b);

// Block: one block's parameters.
struct Block {
  LayerNorm ln1;
  Linear q, k, v, o;  // attention: the query, key, value and output projections, d -> d
  LayerNorm ln2;
  Linear fc1;   // the MLP, d -> 4 d
  Linear fc2;   // 4 d -> d
  Linear head;  // the classifier, d -> 2
};
FT_TREE(Block, ln1, q, k, v, o, ln2, fc1, fc2, head);

// InitParams: one block's parameters.
inline Block InitParams(const BlockShape& shape, ft::Generator& gen) {
  const int64_t d = shape.d, h = 4 * shape.d;
  auto uniform = [&gen](std::vector<int64_t> sizes, double fan_in) {
    return (ft::rand_like(ft::zeros(sizes), &gen) * 2.0 - 1.0) / std::sqrt(fan_in);
  };
  auto linear = [&](int64_t out, int64_t in) {
    return Linear{uniform({out, in}, static_cast<double>(in)), ft::zeros({out})};
  };
  auto layer_norm = [&]() { return LayerNorm{ft::ones({d}), ft::zeros({d})}; };
  return {.ln1 = layer_norm(),
          .q = linear(d, d),
          .k = linear(d, d),
          .v = linear(d, d),
          .o = linear(d, d),
          .ln2 = layer_norm(),
          .fc1 = linear(h, d),
          .fc2 = linear(d, h),
          .head = linear(2, d)};
}

// Attention: multi-head self-attention of one sequence x [S, d] -> [S, d].
inline ft::Tensor Attention(const BlockShape& shape, const Block& p, const ft::Tensor& x) {
  const int64_t s = x.size(0), d = shape.d, heads = shape.heads;
  auto split = [&](const ft::Tensor& t) {  // [S, d] -> [heads, S, d / heads]
    return ft::transpose(ft::reshape(t, {s, heads, d / heads}), 0, 1);
  };
  const ft::Tensor q = split(ft::linear(x, p.q.w, p.q.b));
  const ft::Tensor k = split(ft::linear(x, p.k.w, p.k.b));
  const ft::Tensor v = split(ft::linear(x, p.v.w, p.v.b));
  const ft::Tensor o = ft::scaled_dot_product_attention(q, k, v);
  return ft::linear(ft::reshape(ft::transpose(o, 0, 1), {s, d}), p.o.w, p.o.b);
}

// Logits: one example's logits [2]: the encoder block, then the mean over the sequence.
inline ft::Tensor Logits(const BlockShape& shape, const Block& p, const ft::Tensor& x) {
  const std::vector<int64_t> d = {shape.d};
  ft::Tensor h = x + Attention(shape, p, ft::layer_norm(x, d, p.ln1.w, p.ln1.b));
  const ft::Tensor normed = ft::layer_norm(h, d, p.ln2.w, p.ln2.b);
  h = h + ft::linear(ft::gelu(ft::linear(normed, p.fc1.w, p.fc1.b)), p.fc2.w, p.fc2.b);
  return ft::linear(ft::mean(h, {0}), p.head.w, p.head.b);
}

// ExampleLoss: one example's cross-entropy, x [S, d] and y (0-dim int64).
inline ft::Tensor ExampleLoss(const BlockShape& shape, const Block& p, const ft::Tensor& x,
                              const ft::Tensor& y) {
  return ft::cross_entropy(ft::unsqueeze(Logits(shape, p, x), 0), ft::unsqueeze(y, 0));
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

// Batching rules: attention and contractions (addmm, baddbmm, einsum,
// scaled_dot_product_attention and its dropout form).
//
// Every rule validates the LOGICAL (per-example) arguments first with the kernels' own checks
// (kernels/attention.h), so errors under vmap read like the op's for one example, and
// then computes the whole batch with one call of an op:
//   - addmm: one baddbmm, the batch being the batch of matrices (unbatched operands expanded,
//     a view);
//   - baddbmm: one baddbmm over the batch dim merged with the op's own batch dim;
//   - einsum: the equation (in normal form: ellipses spelled out, explicit output) gets one
//     fresh letter for the batch dim, prepended to the terms of the batched operands and to
//     the output: one einsum call;
//   - scaled_dot_product_attention: batch dims to the front, operands padded to one logical
//     rank, so the op's own batch-dim broadcasting lines the examples up: one call.
//   - scaled_dot_product_attention_dropout (random): randomness "different" draws the whole
//     batch's dropout factors in one call on batch-front operands (example b takes counters
//     b * per_example + i, as a loop would); "same" draws one set of factors of the logical
//     weights' shape (dropout of ones, the counters the kernel uses) and applies it to every
//     example's weights. Both go through Draw (NOTE: [Randomness and chunks]).
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dispatch/dispatch.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "kernels/attention.h"
#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/factories.h"
#include "tensor/shape.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

BatchedResult Batched0(Tensor out) { return BatchedResult{{Value(std::move(out))}, {BDim(0)}}; }

// ---- addmm (input, mat1, mat2, beta, alpha) and baddbmm ----

// AddmmBatch: beta * input + alpha * mat1 @ mat2 for every example, as one baddbmm. `rank` is
// the op's matrix rank (2: addmm, 3: baddbmm); with rank 3 the vmap batch dim and the op's
// batch dim are merged into one.
BatchedResult AddmmBatch(const VmapContext& ctx, BatchedArgs& args, const char* op,
                         int64_t rank) {
  const Tensor& input = args.tensor(0);
  const Tensor& m1 = args.tensor(1);
  const Tensor& m2 = args.tensor(2);
  const Scalar beta = args.values[3].scalar();
  const Scalar alpha = args.values[4].scalar();
  const auto [shape, dtype] = kernels::CheckAddmm(
      op, rank, LogicalShape(input, args.bdim(0)), input.dtype(), LogicalShape(m1, args.bdim(1)),
      m1.dtype(), LogicalShape(m2, args.bdim(2)), m2.dtype(), beta, alpha);
  (void)dtype;
  const int64_t b = ctx.batch_size;
  Tensor a1 = EnsureBatchedFront(m1, args.bdim(1), b);
  Tensor a2 = EnsureBatchedFront(m2, args.bdim(2), b);
  Shape full = {b};
  full.insert(full.end(), shape.begin(), shape.end());
  // input broadcasts to the logical product's shape: padded to its rank (batched) or right-
  // aligned (unbatched), it broadcasts to the physical [b, ...] as well.
  Tensor in = args.bdim(0) ? PadToLogicalRank(MoveBdimToFront(input, args.bdim(0)), 0, rank)
                           : input;
  if (rank == 2) return Batched0(baddbmm(in, a1, a2, beta, alpha));
  // baddbmm: [b, B, n, m] -> [b * B, n, m]; input materialized at [b, B, n, p] first.
  const int64_t merged = b * shape[0];
  a1 = reshape(a1, {merged, shape[1], a1.size(3)});
  a2 = reshape(a2, {merged, a2.size(2), shape[2]});
  in = reshape(expand(in, full), {merged, shape[1], shape[2]});
  return Batched0(reshape(baddbmm(in, a1, a2, beta, alpha), full));
}

BatchedResult AddmmRule(const VmapContext& ctx, BatchedArgs& args) {
  return AddmmBatch(ctx, args, "addmm", 2);
}

BatchedResult BaddbmmRule(const VmapContext& ctx, BatchedArgs& args) {
  return AddmmBatch(ctx, args, "baddbmm", 3);
}

// ---- einsum (equation, operands) ----

BatchedResult EinsumRule(const VmapContext&, BatchedArgs& args) {
  const std::string equation = kernels::EinsumString(args.values[0].shape());
  const TensorList& operands = args.values[1].tensor_list();
  const std::vector<BDim>& bdims = args.list_bdims.at(1);
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (size_t i = 0; i < operands.size(); ++i) {
    shapes.push_back(LogicalShape(operands[i], bdims[i]));
    dtypes.push_back(operands[i].dtype());
  }
  const std::string normal = kernels::EinsumNormalize(equation, shapes, dtypes);
  const std::string unused = kernels::UnusedEinsumLetters(normal);
  if (unused.empty()) {
    ThrowError("einsum(): under vmap the batch dim needs a subscript letter of its own, but the "
               "equation \"", equation, "\" uses all 52");
  }
  const char letter = unused[0];
  kernels::EinsumParts parts = kernels::SplitEinsum(normal);
  TensorList physical;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (bdims[i]) {
      parts.inputs[i].insert(parts.inputs[i].begin(), letter);
      physical.push_back(MoveBdimToFront(operands[i], bdims[i]));
    } else {
      physical.push_back(operands[i]);
    }
  }
  parts.output.insert(parts.output.begin(), letter);
  return Batched0(einsum(kernels::JoinEinsum(parts), physical));
}

// ---- scaled_dot_product_attention ----

// The attention operands of one call, physical, batch dims in front.
struct Attention {
  Tensor q, k, v;
  std::optional<Tensor> mask;
  bool qk_batched = false;   // the weights vary over the batch
  bool any_batched = false;  // the output does
  kernels::AttentionShapes logical;
};

// PrepareAttention validates the logical arguments (query, key, value, attn_mask at 0..3) and
// lines the physical values up: batched ones moved to the front and padded to the largest
// logical rank, so the kernel's batch broadcasting pairs example b with example b; unbatched
// ones broadcast as they are. `batch_q` makes query batched (expanded) whatever it was.
Attention PrepareAttention(const VmapContext& ctx, BatchedArgs& args, double dropout_p,
                           bool is_causal, std::optional<Scalar> scale, bool batch_q) {
  const bool has_mask = !args.values[3].is_none();
  Shape shapes[4];
  const size_t n = has_mask ? 4 : 3;
  for (size_t i = 0; i < n; ++i) shapes[i] = LogicalShape(args.tensor(i), args.bdim(i));
  const IntArrayRef mask_shape(shapes[3]);
  Attention a;
  a.logical = kernels::CheckAttention(
      shapes[0], args.tensor(0).dtype(), shapes[1], args.tensor(1).dtype(), shapes[2],
      args.tensor(2).dtype(), has_mask ? &mask_shape : nullptr,
      has_mask ? args.tensor(3).dtype() : kFloat32, dropout_p, is_causal, scale);
  int64_t rank = 0;
  for (size_t i = 0; i < n; ++i) {
    rank = std::max(rank, static_cast<int64_t>(shapes[i].size()));
  }
  BDim bd[4] = {args.bdim(0), args.bdim(1), args.bdim(2), has_mask ? args.bdim(3) : BDim()};
  Tensor t[4] = {args.tensor(0), args.tensor(1), args.tensor(2),
                 has_mask ? args.tensor(3) : Tensor()};
  // A batched mask needs batched weights (the kernel's mask never widens the weights).
  if (batch_q || (bd[3] && !bd[0] && !bd[1])) {
    t[0] = EnsureBatchedFront(t[0], bd[0], ctx.batch_size);
    bd[0] = 0;
  }
  for (size_t i = 0; i < 4; ++i) {
    if (bd[i]) t[i] = PadToLogicalRank(MoveBdimToFront(t[i], bd[i]), 0, rank);
  }
  a.q = t[0];
  a.k = t[1];
  a.v = t[2];
  if (has_mask) a.mask = t[3];
  a.qk_batched = bd[0] || bd[1];
  a.any_batched = a.qk_batched || bd[2] || bd[3];
  return a;
}

std::optional<Scalar> OptionalScalar(const Value& v) {
  return v.is_none() ? std::nullopt : std::optional<Scalar>(v.scalar());
}

BatchedResult SdpaRule(const VmapContext& ctx, BatchedArgs& args) {
  const bool is_causal = args.values[4].to_bool();
  const std::optional<Scalar> scale = OptionalScalar(args.values[5]);
  const Attention a = PrepareAttention(ctx, args, 0.0, is_causal, scale, false);
  ValueList call = {Value(a.q), Value(a.k), Value(a.v), a.mask ? Value(*a.mask) : Value(),
                    args.values[4], args.values[5]};
  return {DispatchBoxed(ctx.op, call), {BDim(0)}};
}

// Weights: softmax(q k^T * scale + mask) with public ops (the kernel's computation), for the
// shared-mask path below.
Tensor Weights(const Attention& a, bool is_causal, double scale) {
  const DType dtype = a.logical.dtype;
  Tensor s = mul(matmul(to(a.q, dtype), transpose(to(a.k, dtype), -2, -1)), scale);
  const double inf = std::numeric_limits<double>::infinity();
  if (is_causal) {
    const int64_t l = a.logical.weights[a.logical.weights.size() - 2];
    const int64_t n = a.logical.weights.back();
    std::vector<bool> keep(static_cast<size_t>(l * n));
    for (int64_t i = 0; i < l; ++i) {
      for (int64_t j = 0; j < n; ++j) keep[static_cast<size_t>(i * n + j)] = j <= i;
    }
    s = where(tensor(keep, {l, n}), s, -inf);
  } else if (a.mask) {
    s = a.mask->dtype() == kBool ? where(*a.mask, s, -inf) : add(s, to(*a.mask, dtype));
  }
  return softmax(s, -1);
}

// (query, key, value, attn_mask, dropout_p, is_causal, scale, generator)
BatchedResult SdpaDropoutRule(const VmapContext& ctx, BatchedArgs& args) {
  const double p = args.values[4].to_double();
  const bool is_causal = args.values[5].to_bool();
  const std::optional<Scalar> scale = OptionalScalar(args.values[6]);
  Generator& gen = args.values[7].is_none() ? DefaultGenerator() : *args.values[7].generator();
  const bool different = ctx.randomness == Randomness::kDifferent;
  // p == 1 draws nothing (every factor is 0): no counters are claimed, as for dropout.
  const bool draws = p != 1.0;
  const Attention a = PrepareAttention(ctx, args, p, is_causal, scale, different && draws);
  const auto bdim = [](bool batched) { return batched ? BDim(0) : BDim(); };
  auto run = [&]() {
    ValueList call = {Value(a.q),     Value(a.k),     Value(a.v),
                      a.mask ? Value(*a.mask) : Value(),
                      args.values[4], args.values[5], args.values[6], Value(&gen)};
    return DispatchBoxed(ctx.op, call);
  };
  const int64_t per_example = Numel(a.logical.weights);
  if (!draws) {
    ValueList out = run();
    return {std::move(out), {bdim(a.any_batched), bdim(a.qk_batched)}};
  }
  if (different || !a.any_batched) {
    Tensor keep;
    Tensor out = Draw(ctx, gen, per_example, [&] {
      ValueList r = run();
      keep = r[1].tensor();
      return r[0].tensor();
    });
    return {{Value(std::move(out)), Value(std::move(keep))},
            {bdim(a.any_batched), bdim(a.qk_batched)}};
  }
  // Randomness "same" with varying operands: one set of factors for every example.
  const DType dtype = a.logical.dtype;
  const Tensor keep = Draw(ctx, gen, per_example, [&] {
    return dropout(ones(a.logical.weights, dtype), p, /*train=*/true, &gen);
  });
  const double s = kernels::AttentionScale(LogicalShape(args.tensor(0), args.bdim(0)), scale);
  const Tensor out = matmul(mul(Weights(a, is_causal, s), keep), to(a.v, dtype));
  return {{Value(out), Value(keep)}, {BDim(0), BDim()}};
}

}  // namespace

void RegisterAttentionRules() {
  OpRegistry& r = OpRegistry::Global();
  SetBatchRule(r.Get("addmm"), &AddmmRule);
  SetBatchRule(r.Get("baddbmm"), &BaddbmmRule);
  SetBatchRule(r.Get("einsum"), &EinsumRule);
  SetBatchRule(r.Get("scaled_dot_product_attention"), &SdpaRule);
  SetBatchRule(r.Get("scaled_dot_product_attention_dropout"), &SdpaDropoutRule);
}

}  // namespace ft::vmap_rules

// Batching rules: convolution and pooling (conv1d/2d/3d, conv_transpose1d/2d/3d,
// conv_weight_grad, unfold,
// fold, max_pool1d/2d (with indices), avg_pool1d/2d, adaptive_avg_pool1d/2d,
// adaptive_max_pool2d, upsample_nearest/linear and their backwards).
//
// Every rule validates the LOGICAL (one example's) arguments first with the kernels' own
// shape functions (kernels/conv.h), so errors under vmap name the example's shapes,
// and then computes the whole batch with ONE call of the op:
//   - Only the input batched (every pool, unfold, fold, and a conv with shared weights): the
//     vmap dim folds into the batch dim N ([B, N, C, ...] -> [B * N, C, ...]); a logically
//     unbatched input [C, ...] just uses B as its N.
//   - A batched weight or bias (per-example weights): functorch's trick folds B into the
//     channels and the groups: input [N, B * C, ...], weight [B * O, C / g, ...] (a transposed
//     conv's [B * C_in, C_out / g, ...]), bias [B * O], groups B * g, so example b's channels
//     form groups of their own; the output [N, B * O, ...] is unflattened at dim 1.
#include <optional>

#include "dispatch/dispatch.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "kernels/conv.h"
#include "kernels/pooling.h"
#include "kernels/upsample.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

BatchedResult Front(Tensor out) { return BatchedResult{{Value(std::move(out))}, {BDim(0)}}; }

// SingleInputRule: an op of one tensor (args 0) whose unbatched form has rank
// `unbatched_rank`: validate(logical shape) throws like the op; run(physical input) returns
// the op's outputs for a physical input whose dim 0 is the (merged) batch.
template <typename Validate, typename Run>
BatchedResult SingleInputRule(const VmapContext& ctx, const BatchedArgs& a,
                              int64_t unbatched_rank, Validate validate, Run run) {
  const Shape logical = LogicalShape(a.tensor(0), a.bdim(0));
  validate(logical);
  if (!a.bdim(0)) {  // not batched at this level: one plain call
    BatchedResult r;
    for (const Tensor& t : run(a.tensor(0))) {
      r.values.emplace_back(t);
      r.bdims.push_back(std::nullopt);
    }
    return r;
  }
  Tensor x = MoveBdimToFront(a.tensor(0), a.bdim(0));
  const bool merged = static_cast<int64_t>(logical.size()) != unbatched_rank;
  if (merged) x = flatten(x, 0, 1);
  const TensorList outs = run(x);
  BatchedResult r;
  for (const Tensor& t : outs) {
    r.values.emplace_back(merged ? unflatten(t, 0, {ctx.batch_size, logical[0]}) : t);
    r.bdims.push_back(BDim(0));
  }
  return r;
}

// ---- Convolutions. ----

template <int64_t kN, bool kTransposed>
Tensor CallConv(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b,
                const BatchedArgs& a, int64_t groups) {
  if constexpr (kTransposed) {
    const IntArrayRef s = a.values[3].shape(), p = a.values[4].shape(),
                      op = a.values[5].shape(), d = a.values[7].shape();
    if constexpr (kN == 1) return conv_transpose1d(x, w, b, s, p, op, groups, d);
    if constexpr (kN == 2) return conv_transpose2d(x, w, b, s, p, op, groups, d);
    if constexpr (kN == 3) return conv_transpose3d(x, w, b, s, p, op, groups, d);
  } else {
    const IntArrayRef s = a.values[3].shape(), p = a.values[4].shape(),
                      d = a.values[5].shape();
    if constexpr (kN == 1) return conv1d(x, w, b, s, p, d, groups);
    if constexpr (kN == 2) return conv2d(x, w, b, s, p, d, groups);
    if constexpr (kN == 3) return conv3d(x, w, b, s, p, d, groups);
  }
}

template <int64_t kN, bool kTransposed>
BatchedResult ConvRule(const VmapContext& ctx, BatchedArgs& a) {
  const char* name = ctx.op.name().c_str();
  const bool has_bias = !a.values[2].is_none();
  const Shape lx = LogicalShape(a.tensor(0), a.bdim(0));
  const Shape lw = LogicalShape(a.tensor(1), a.bdim(1));
  std::optional<Shape> lb;
  if (has_bias) lb = LogicalShape(a.tensor(2), a.bdim(2));
  const int64_t groups = a.values[6].to_int();
  const Shape lout =
      kTransposed
          ? kernels::ConvTransposeShape(name, kN, lx, lw, lb, a.values[3].shape(),
                                        a.values[4].shape(), a.values[5].shape(), groups,
                                        a.values[7].shape())
          : kernels::ConvShape(name, kN, lx, lw, lb, a.values[3].shape(), a.values[4].shape(),
                               a.values[5].shape(), groups);
  const BDim xbd = a.bdim(0), wbd = a.bdim(1);
  const BDim bbd = has_bias ? a.bdim(2) : std::nullopt;
  const int64_t B = ctx.batch_size;
  const bool batched_input = static_cast<int64_t>(lx.size()) == kN + 2;
  std::optional<Tensor> bias;
  if (has_bias) bias = a.tensor(2);
  if (!wbd && !bbd) {
    // Shared weights: the vmap dim joins N.
    Tensor x = MoveBdimToFront(a.tensor(0), xbd);
    if (!batched_input) return Front(CallConv<kN, kTransposed>(x, a.tensor(1), bias, a, groups));
    const Tensor out = CallConv<kN, kTransposed>(flatten(x, 0, 1), a.tensor(1), bias, a, groups);
    return Front(unflatten(out, 0, {B, lx[0]}));
  }
  if (B == 0) {
    // No example (groups * B would be 0): any weight gives the empty result; the sum over
    // the empty batch is one of the right shape.
    const Tensor w0 = wbd ? sum(a.tensor(1), {*wbd}) : a.tensor(1);
    std::optional<Tensor> b0 = bias;
    if (bbd) b0 = sum(a.tensor(2), {*bbd});
    const Tensor x = EnsureBatchedFront(a.tensor(0), xbd, B);
    if (!batched_input) return Front(CallConv<kN, kTransposed>(x, w0, b0, a, groups));
    const Tensor out = CallConv<kN, kTransposed>(flatten(x, 0, 1), w0, b0, a, groups);
    return Front(unflatten(out, 0, {B, lx[0]}));
  }
  // Per-example weights: the vmap dim joins the channels and the groups.
  const Tensor w = flatten(EnsureBatchedFront(a.tensor(1), wbd, B), 0, 1);
  std::optional<Tensor> b;
  if (has_bias) b = flatten(EnsureBatchedFront(a.tensor(2), bbd, B), 0, 1);
  Tensor x = EnsureBatchedFront(a.tensor(0), xbd, B);
  x = batched_input ? flatten(movedim(x, 0, 1), 1, 2) : unsqueeze(flatten(x, 0, 1), 0);
  const Tensor out = CallConv<kN, kTransposed>(x, w, b, a, groups * B);
  const int64_t O = lout[batched_input ? 1 : 0];
  if (batched_input) return BatchedResult{{Value(unflatten(out, 1, {B, O}))}, {BDim(1)}};
  return Front(unflatten(squeeze_dim(out, 0), 0, {B, O}));
}

// conv_weight_grad(input, weight_size, grad_output, stride, padding, dilation, groups): example
// b's weight gradient pairs its own input with its own grad_output, so B joins the channels
// and the groups of both (input [N, B * C], grad_output [N, B * O], weight_size [B * O, ...],
// groups B * g): one call, whose [B * O, C / g, k...] result unflattens at dim 0. An operand
// batched at another level only is expanded to B first.
BatchedResult ConvWeightGradRule(const VmapContext& ctx, BatchedArgs& a) {
  const IntArrayRef ws = a.values[1].shape(), s = a.values[3].shape(),
                    p = a.values[4].shape(), d = a.values[5].shape();
  const int64_t groups = a.values[6].to_int();
  const Shape lx = LogicalShape(a.tensor(0), a.bdim(0));
  const Shape lg = LogicalShape(a.tensor(2), a.bdim(2));
  kernels::ConvWeightGradShape(lx, ws, lg, s, p, d, groups);
  const int64_t B = ctx.batch_size;
  Shape wsb(ws.begin(), ws.end());
  if (B == 0) {
    wsb.insert(wsb.begin(), 0);
    return Front(zeros(wsb, a.tensor(0).dtype()));
  }
  Tensor x = EnsureBatchedFront(a.tensor(0), a.bdim(0), B);
  Tensor gy = EnsureBatchedFront(a.tensor(2), a.bdim(2), B);
  if (lx.size() == ws.size() - 1) {  // unbatched examples: N = 1
    x = unsqueeze(x, 1);
    gy = unsqueeze(gy, 1);
  }
  x = flatten(movedim(x, 0, 1), 1, 2);  // [B, N, C, ...] -> [N, B * C, ...]
  gy = flatten(movedim(gy, 0, 1), 1, 2);
  wsb[0] *= B;
  const Tensor out = conv_weight_grad(x, wsb, gy, s, p, d, groups * B);
  return Front(unflatten(out, 0, {B, ws[0]}));
}

// ---- Pools, unfold, fold: the vmap dim joins N. ----

template <int64_t kN>
BatchedResult MaxPoolRule(const VmapContext& ctx, BatchedArgs& a) {
  const char* name = ctx.op.name().c_str();
  const IntArrayRef k = a.values[1].shape(), s = a.values[2].shape(), p = a.values[3].shape(),
                    d = a.values[4].shape();
  const bool ceil = a.values[5].to_bool();
  const bool with_indices = ctx.op.schema().returns.size() == 2;
  return SingleInputRule(
      ctx, a, kN + 1,
      [&](const Shape& l) { kernels::PoolShape(name, kN, l, k, s, p, d, ceil); },
      [&](const Tensor& x) -> TensorList {
        if (kN == 1 && with_indices) {
          auto [v, i] = max_pool1d_with_indices(x, k, s, p, d, ceil);
          return {v, i};
        }
        if (kN == 2 && with_indices) {
          auto [v, i] = max_pool2d_with_indices(x, k, s, p, d, ceil);
          return {v, i};
        }
        return {kN == 1 ? max_pool1d(x, k, s, p, d, ceil) : max_pool2d(x, k, s, p, d, ceil)};
      });
}

BatchedResult AvgPool1dRule(const VmapContext& ctx, BatchedArgs& a) {
  const IntArrayRef k = a.values[1].shape(), s = a.values[2].shape(), p = a.values[3].shape();
  const bool ceil = a.values[4].to_bool(), count = a.values[5].to_bool();
  return SingleInputRule(
      ctx, a, 2, [&](const Shape& l) { kernels::PoolShape("avg_pool1d", 1, l, k, s, p, {1}, ceil); },
      [&](const Tensor& x) -> TensorList { return {avg_pool1d(x, k, s, p, ceil, count)}; });
}

BatchedResult AvgPool2dRule(const VmapContext& ctx, BatchedArgs& a) {
  const IntArrayRef k = a.values[1].shape(), s = a.values[2].shape(), p = a.values[3].shape();
  const bool ceil = a.values[4].to_bool(), count = a.values[5].to_bool();
  std::optional<int64_t> div;
  if (!a.values[6].is_none()) div = a.values[6].to_int();
  return SingleInputRule(
      ctx, a, 3, [&](const Shape& l) { kernels::PoolShape("avg_pool2d", 2, l, k, s, p, {1}, ceil); },
      [&](const Tensor& x) -> TensorList { return {avg_pool2d(x, k, s, p, ceil, count, div)}; });
}

BatchedResult AdaptiveRule(const VmapContext& ctx, BatchedArgs& a) {
  const std::string& name = ctx.op.name();
  const IntArrayRef os = a.values[1].shape();
  const int64_t n = name == "adaptive_avg_pool1d" ? 1 : 2;
  return SingleInputRule(
      ctx, a, n + 1,
      [&](const Shape& l) { kernels::AdaptivePoolShape(name.c_str(), n, l, os); },
      [&](const Tensor& x) -> TensorList {
        if (name == "adaptive_avg_pool1d") return {adaptive_avg_pool1d(x, os)};
        if (name == "adaptive_avg_pool2d") return {adaptive_avg_pool2d(x, os)};
        auto [v, i] = adaptive_max_pool2d(x, os);
        return {v, i};
      });
}

BatchedResult UnfoldRule(const VmapContext& ctx, BatchedArgs& a) {
  const IntArrayRef k = a.values[1].shape(), d = a.values[2].shape(), p = a.values[3].shape(),
                    s = a.values[4].shape();
  return SingleInputRule(
      ctx, a, 3, [&](const Shape& l) { kernels::UnfoldShape(l, k, d, p, s); },
      [&](const Tensor& x) -> TensorList { return {unfold(x, k, d, p, s)}; });
}

BatchedResult FoldRule(const VmapContext& ctx, BatchedArgs& a) {
  const IntArrayRef os = a.values[1].shape(), k = a.values[2].shape(), d = a.values[3].shape(),
                    p = a.values[4].shape(), s = a.values[5].shape();
  return SingleInputRule(
      ctx, a, 2, [&](const Shape& l) { kernels::FoldShape(l, os, k, d, p, s); },
      [&](const Tensor& x) -> TensorList { return {fold(x, os, k, d, p, s)}; });
}

// ---- Upsampling: N and C are free dims, so the vmap dim folds into N. ----

std::optional<double> OptDouble(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_double();
}

// UpsampleRule: upsample_nearest (input, output_size, scales_d, scales_h, scales_w, exact),
// upsample_linear (input, output_size, align_corners, scales_d, scales_h, scales_w) and their
// backwards (grad_output, output_size, input_size, ...the forward's remaining arguments). A
// backward's input_size is one example's; the merged call gets [B * N, C, ...].
template <bool kLinear, bool kBackward>
BatchedResult UpsampleRule(const VmapContext& ctx, BatchedArgs& a) {
  const char* name = ctx.op.name().c_str();
  const IntArrayRef os = a.values[1].shape();
  const size_t k = kBackward ? 3 : 2;  // the first argument after input_size
  const bool flag = a.values[kLinear ? k : k + 3].to_bool();
  const size_t sk = kLinear ? k + 1 : k;  // scales_d
  const std::optional<double> sd = OptDouble(a.values[sk]), sh = OptDouble(a.values[sk + 1]),
                              sw = OptDouble(a.values[sk + 2]);
  const Shape logical = LogicalShape(a.tensor(0), a.bdim(0));
  Shape input_size;
  if constexpr (kBackward) {
    input_size = kernels::UpsampleBackwardShape(name, logical, os, a.values[2].shape(), sd, sh,
                                                sw);
  } else {
    kernels::UpsampleShape(name, logical, os, sd, sh, sw);
  }
  const auto run = [&](const Tensor& x) {
    if constexpr (kBackward) {
      Shape in = input_size;
      in[0] = x.size(0);
      return kLinear ? upsample_linear_backward(x, os, in, flag, sd, sh, sw)
                     : upsample_nearest_backward(x, os, in, sd, sh, sw, flag);
    } else {
      return kLinear ? upsample_linear(x, os, flag, sd, sh, sw)
                     : upsample_nearest(x, os, sd, sh, sw, flag);
    }
  };
  if (!a.bdim(0)) return BatchedResult{{Value(run(a.tensor(0)))}, {std::nullopt}};
  const Tensor x = flatten(MoveBdimToFront(a.tensor(0), a.bdim(0)), 0, 1);
  return Front(unflatten(run(x), 0, {ctx.batch_size, logical[0]}));
}

}  // namespace

void RegisterConvRules() {
  OpRegistry& r = OpRegistry::Global();
  SetBatchRule(r.Get("conv1d"), &ConvRule<1, false>);
  SetBatchRule(r.Get("conv2d"), &ConvRule<2, false>);
  SetBatchRule(r.Get("conv3d"), &ConvRule<3, false>);
  SetBatchRule(r.Get("conv_transpose1d"), &ConvRule<1, true>);
  SetBatchRule(r.Get("conv_transpose2d"), &ConvRule<2, true>);
  SetBatchRule(r.Get("conv_transpose3d"), &ConvRule<3, true>);
  SetBatchRule(r.Get("conv_weight_grad"), &ConvWeightGradRule);
  SetBatchRule(r.Get("max_pool1d"), &MaxPoolRule<1>);
  SetBatchRule(r.Get("max_pool2d"), &MaxPoolRule<2>);
  SetBatchRule(r.Get("max_pool1d_with_indices"), &MaxPoolRule<1>);
  SetBatchRule(r.Get("max_pool2d_with_indices"), &MaxPoolRule<2>);
  SetBatchRule(r.Get("avg_pool1d"), &AvgPool1dRule);
  SetBatchRule(r.Get("avg_pool2d"), &AvgPool2dRule);
  SetBatchRule(r.Get("adaptive_avg_pool1d"), &AdaptiveRule);
  SetBatchRule(r.Get("adaptive_avg_pool2d"), &AdaptiveRule);
  SetBatchRule(r.Get("adaptive_max_pool2d"), &AdaptiveRule);
  SetBatchRule(r.Get("unfold"), &UnfoldRule);
  SetBatchRule(r.Get("fold"), &FoldRule);
  SetBatchRule(r.Get("upsample_nearest"), &UpsampleRule<false, false>);
  SetBatchRule(r.Get("upsample_nearest_backward"), &UpsampleRule<false, true>);
  SetBatchRule(r.Get("upsample_linear"), &UpsampleRule<true, false>);
  SetBatchRule(r.Get("upsample_linear_backward"), &UpsampleRule<true, true>);
}

}  // namespace ft::vmap_rules

// Batching rules: losses (mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy,
// binary_cross_entropy_with_logits, kl_div, nll_loss, cross_entropy).
//
// Every rule validates the LOGICAL (per-example) arguments with the kernels' own checks
// (kernels/loss.h), then computes the per-element ("none") losses of the whole batch
// in one call, batch dim first, and reduces each example over its own dims:
//   - elementwise losses: operands padded to the common logical rank (broadcasting like the
//     example), or, for binary_cross_entropy[_with_logits] whose input and target must match,
//     both expanded to the batch; weights padded so they broadcast per example;
//   - nll_loss / cross_entropy with class indices: the batch dim becomes one more trailing
//     "d" dim of the [N, C, d...] layout (for a logical [C] input it is the N dim), the op runs
//     unweighted with reduction none (so it still checks every class index with its own
//     message), and the class weights w[t] (batched or not) are applied per element; kMean
//     divides each example's sum by its own summed target weights;
//   - cross_entropy with class probabilities: log_softmax over the physical class dim and the
//     weighted sum, all on the batch-front tensors.
// Results are batched at 0.
#include <algorithm>
#include <optional>
#include <string>

#include "dispatch/dispatch.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "kernels/loss.h"
#include "ops/ops.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

using kernels::LossArg;

// Logical: a tensor argument's per-example shape and dtype.
struct Logical {
  Shape shape;
  DType dtype;
  LossArg arg() const { return {shape, dtype}; }
};
Logical LogicalOf(const BatchedArgs& a, size_t i) {
  const Tensor& t = a.tensor(i);
  Shape s(t.sizes().begin(), t.sizes().end());
  if (a.bdim(i)) s.erase(s.begin() + *a.bdim(i));
  return {s, t.dtype()};
}
std::optional<Logical> OptionalLogicalOf(const BatchedArgs& a, size_t i) {
  if (a.values[i].is_none()) return std::nullopt;
  return LogicalOf(a, i);
}
std::optional<LossArg> ArgOf(const std::optional<Logical>& l) {
  if (!l) return std::nullopt;
  return l->arg();
}

// ExampleDims: the dims 1 .. rank - 1 of a batch-front tensor (each example's own dims).
Shape ExampleDims(const Tensor& front) {
  Shape dims;
  for (int64_t d = 1; d < front.dim(); ++d) dims.push_back(d);
  return dims;
}

// SumPerExample / MeanPerExample: the reduction of each example (a rank-1 tensor [B] is one
// value per example already).
Tensor SumPerExample(const Tensor& front) {
  return front.dim() == 1 ? front : sum(front, ExampleDims(front));
}
Tensor MeanPerExample(const Tensor& front) {
  return front.dim() == 1 ? front : mean(front, ExampleDims(front));
}

// ReducePerExample: an elementwise loss's reduction applied to each example of `none`.
Tensor ReducePerExample(const Tensor& none, int64_t reduction, int64_t batchmean_divisor) {
  switch (reduction) {
    case kernels::kLossNone:
      return none;
    case kernels::kLossSum:
      return SumPerExample(none);
    case kernels::kLossMean:
      return MeanPerExample(none);
    default:
      return SumPerExample(none) / static_cast<double>(batchmean_divisor);
  }
}

BatchedResult Front(Tensor t) { return {{Value(std::move(t))}, {int64_t{0}}}; }

// mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div: (self, target, reduction, ...).
BatchedResult BroadcastLossRule(const VmapContext& ctx, BatchedArgs& a) {
  const std::string& op = ctx.op.name();
  const int64_t reduction = a.values[2].to_int();
  const Logical x = LogicalOf(a, 0), t = LogicalOf(a, 1);
  kernels::CheckLossReduction(op, reduction, op == "kl_div");
  kernels::CheckPointwiseLoss(op, x.arg(), t.arg(), false);
  const int64_t rank = std::max<int64_t>(x.shape.size(), t.shape.size());
  ValueList values = a.values;
  values[0] = Value(PadToLogicalRank(MoveBdimToFront(a.tensor(0), a.bdim(0)), a.bdim(0), rank));
  values[1] = Value(PadToLogicalRank(MoveBdimToFront(a.tensor(1), a.bdim(1)), a.bdim(1), rank));
  values[2] = Value(int64_t{kernels::kLossNone});
  const Tensor none = DispatchBoxed(ctx.op, values)[0].tensor();
  return Front(ReducePerExample(none, reduction, x.shape.empty() ? 1 : x.shape[0]));
}

// binary_cross_entropy (self, target, weight, reduction) and
// binary_cross_entropy_with_logits (self, target, weight, reduction, pos_weight).
BatchedResult BinaryLossRule(const VmapContext& ctx, BatchedArgs& a) {
  const std::string& op = ctx.op.name();
  const int64_t reduction = a.values[3].to_int();
  const Logical x = LogicalOf(a, 0), t = LogicalOf(a, 1);
  kernels::CheckLossReduction(op, reduction);
  kernels::CheckPointwiseLoss(op, x.arg(), t.arg(), /*same_shape=*/true);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  ValueList values = a.values;
  values[0] = Value(EnsureBatchedFront(a.tensor(0), a.bdim(0), ctx.batch_size));
  values[1] = Value(EnsureBatchedFront(a.tensor(1), a.bdim(1), ctx.batch_size));
  values[3] = Value(int64_t{kernels::kLossNone});
  for (size_t i : {size_t{2}, size_t{4}}) {
    if (i >= a.values.size() || a.values[i].is_none()) continue;
    const Logical w = LogicalOf(a, i);
    kernels::CheckLossWeight(op, i == 2 ? "weight" : "pos_weight", w.arg(), x.shape);
    values[i] = Value(PadToLogicalRank(MoveBdimToFront(a.tensor(i), a.bdim(i)), a.bdim(i), rank));
  }
  const Tensor none = DispatchBoxed(ctx.op, values)[0].tensor();
  return Front(ReducePerExample(none, reduction, 1));
}

// ---- Class-index losses. ----

// ClassLayout: a batch-front tensor [B, N, C, d...] (or target [B, N, d...]) with the batch
// as the last "d" dim, or, for a logical [C] input / 0-dim target, as it is (B is the N dim).
Tensor ToClassLayout(const Tensor& front, bool logical_1d) {
  return logical_1d ? front : movedim(front, 0, -1);
}
Tensor FromClassLayout(const Tensor& none, bool logical_1d) {
  return logical_1d ? none : movedim(none, -1, 0);
}

// TargetWeightsFront: for a batch-front int64 target T [B, ...], the per-element class
// weights w[t] (weight [C], or batched [B, C], or none: 1) times the non-ignored mask, in
// `dtype`.
Tensor TargetWeightsFront(const Tensor& target, const std::optional<Tensor>& weight,
                          bool weight_batched, int64_t ignore_index, DType dtype) {
  const Tensor ignored = eq(target, Scalar(ignore_index));
  const Tensor valid = to(logical_not(ignored), dtype);
  if (!weight) return valid;
  const Tensor safe = where(ignored, Scalar(int64_t{0}), target);
  const Tensor w = to(*weight, dtype);
  Tensor picked;
  if (weight_batched) {
    const Tensor rows = target.dim() == 1 ? unsqueeze(safe, 1) : flatten(safe, 1);
    picked = reshape(gather(w, 1, rows), target.sizes());
  } else {
    picked = reshape(index_select(w, 0, flatten(safe)), target.sizes());
  }
  return picked * valid;
}

// ClassWeightFront: the class weights as a batch-front view broadcasting along the class dim
// `cdim` (physical) of a rank-`rank` batch-front input.
Tensor ClassWeightFront(const Tensor& w, bool batched, int64_t cdim, int64_t rank, DType dtype) {
  Shape s(static_cast<size_t>(rank), 1);
  s[static_cast<size_t>(cdim)] = w.size(batched ? 1 : 0);
  if (batched) s[0] = w.size(0);
  return reshape(to(w, dtype), s);
}

// The reduction of a class loss per example: kMean divides by the summed target weights.
Tensor ReduceClassPerExample(const Tensor& none, const Tensor& wt, int64_t reduction) {
  switch (reduction) {
    case kernels::kLossNone:
      return none;
    case kernels::kLossSum:
      return SumPerExample(none);
    default:
      return SumPerExample(none) / SumPerExample(wt);
  }
}

// nll_loss (self, target, weight, ignore_index, reduction) and cross_entropy (..., reduction,
// label_smoothing).
BatchedResult ClassLossRule(const VmapContext& ctx, BatchedArgs& a) {
  const std::string& op = ctx.op.name();
  const bool ce = op == "cross_entropy";
  const int64_t ignore_index = a.values[3].to_int();
  const int64_t reduction = a.values[4].to_int();
  const double eps = ce ? a.values[5].to_double() : 0.0;
  const Logical x = LogicalOf(a, 0), t = LogicalOf(a, 1);
  const std::optional<Logical> w = OptionalLogicalOf(a, 2);
  kernels::CheckLossReduction(op, reduction);
  if (ce) kernels::CheckLossScalar(op, eps);
  const bool prob = ce && kernels::IsProbTarget(t.dtype);
  if (prob) {
    kernels::CheckProbLoss(x.arg(), t.arg(), ArgOf(w), ignore_index);
  } else {
    kernels::CheckClassLoss(op, x.arg(), t.arg(), ArgOf(w));
  }
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const bool logical_1d = rank == 1;
  const int64_t cdim = kernels::LossClassDim(rank) + 1;  // physical, batch in front
  const double classes = static_cast<double>(x.shape[static_cast<size_t>(cdim - 1)]);
  const Tensor xf = EnsureBatchedFront(a.tensor(0), a.bdim(0), ctx.batch_size);
  const Tensor tf = EnsureBatchedFront(a.tensor(1), a.bdim(1), ctx.batch_size);
  const bool w_batched = w && a.bdim(2).has_value();
  std::optional<Tensor> wf;
  if (w) wf = w_batched ? MoveBdimToFront(a.tensor(2), a.bdim(2)) : a.tensor(2);

  if (prob) {
    const DType dtype = PromoteTypes(xf.dtype(), tf.dtype());
    const Tensor lsm = log_softmax(to(xf, dtype), cdim);
    Tensor tp = to(tf, dtype);
    if (eps > 0) tp = tp * (1.0 - eps) + eps / classes;
    Tensor prod = lsm * tp;
    if (wf) prod = prod * ClassWeightFront(*wf, w_batched, cdim, rank + 1, dtype);
    return Front(ReducePerExample(-sum(prod, {cdim}), reduction, 1));
  }

  // The unweighted per-target losses -lsm[t] (or -x[t]), 0 at ignored targets, from the op
  // itself on the class layout.
  ValueList values = a.values;
  values[0] = Value(ToClassLayout(xf, logical_1d));
  values[1] = Value(ToClassLayout(tf, logical_1d));
  values[2] = Value();
  values[4] = Value(int64_t{kernels::kLossNone});
  if (ce) values[5] = Value(0.0);
  const Tensor picked = FromClassLayout(DispatchBoxed(ctx.op, values)[0].tensor(), logical_1d);
  const Tensor wt = TargetWeightsFront(tf, wf, w_batched, ignore_index, picked.dtype());
  Tensor none = wf ? picked * wt : picked;
  if (eps > 0) {
    Tensor lsm = log_softmax(xf, cdim);
    if (wf) lsm = lsm * ClassWeightFront(*wf, w_batched, cdim, rank + 1, lsm.dtype());
    const Tensor valid = to(ne(tf, Scalar(ignore_index)), lsm.dtype());
    const Tensor smooth = -sum(lsm, {cdim}) * valid;
    none = none * (1.0 - eps) + smooth * (eps / classes);
  }
  return Front(ReduceClassPerExample(none, wt, reduction));
}

}  // namespace

void RegisterLossRules() {
  OpRegistry& r = OpRegistry::Global();
  for (const char* name : {"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div"}) {
    SetBatchRule(r.Get(name), &BroadcastLossRule);
  }
  SetBatchRule(r.Get("binary_cross_entropy"), &BinaryLossRule);
  SetBatchRule(r.Get("binary_cross_entropy_with_logits"), &BinaryLossRule);
  SetBatchRule(r.Get("nll_loss"), &ClassLossRule);
  SetBatchRule(r.Get("cross_entropy"), &ClassLossRule);
}

}  // namespace ft::vmap_rules

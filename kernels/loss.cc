#include "kernels/loss.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "kernels/binary.h"
#include "kernels/index.h"
#include "kernels/reduction.h"
#include "kernels/unary.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/error.h"

// The losses are compositions of the other base kernels (elementwise maps, reductions,
// log_softmax) plus one gather loop for the class-index losses: every intermediate is a
// dense tensor of the compute dtype, and the reductions are the shared ones, so a loss sums
// exactly like sum() of its "none" values.
namespace ft::kernels {
namespace {

// Constant: a 0-dim tensor of `dtype` (broadcasts without promoting: ResultType keeps the
// dimensioned operand's dtype).
Tensor Constant(double value, DType dtype) {
  Tensor t = EmptyContiguous({}, dtype);
  fill_(t, Scalar(value));
  return t;
}

// Reduce applies `reduction` to the per-element losses `none`. batchmean divides the sum by
// `batch` (the input's dim 0 size; 1 for a 0-dim input).
Tensor Reduce(const Tensor& none, int64_t reduction, int64_t batch = 1) {
  switch (reduction) {
    case kLossNone:
      return none;
    case kLossMean:
      return mean(none, {}, false);
    case kLossSum:
      return sum(none, {}, false);
    default:  // kLossBatchMean
      return div(sum(none, {}, false), Constant(static_cast<double>(batch), none.dtype()));
  }
}

const char* DTypeLabel(DType d) { return DTypeName(d); }

// AllProbabilities: every element of the floating tensor x is in [0, 1] (NaN is not). Reads
// the data directly (not through item(), which the jit tracer counts as a value read).
bool AllProbabilities(const Tensor& x) {
  const Tensor xc = contiguous(x);
  const auto scan = [&](auto* data) {
    for (int64_t i = 0; i < xc.numel(); ++i) {
      if (!(data[i] >= 0 && data[i] <= 1)) return false;
    }
    return true;
  };
  if (xc.dtype() == kFloat32) return scan(static_cast<const float*>(xc.impl()->raw_data()));
  return scan(static_cast<const double*>(xc.impl()->raw_data()));
}

// Pointwise prologue: validated arguments, converted to their common floating dtype.
struct Pair {
  Tensor x, t;
  DType dtype;
};
Pair PointwiseArgs(const char* op, const Tensor& input, const Tensor& target, int64_t reduction,
                   bool same_shape = false, bool allow_batchmean = false) {
  CheckLossReduction(op, reduction, allow_batchmean);
  CheckPointwiseLoss(op, {input.sizes(), input.dtype()}, {target.sizes(), target.dtype()},
                     same_shape);
  const DType dtype = PromoteTypes(input.dtype(), target.dtype());
  return {input.dtype() == dtype ? input : to(input, dtype),
          target.dtype() == dtype ? target : to(target, dtype), dtype};
}

// The weight of a weighted loss in the compute dtype (validated against input's shape).
Tensor WeightArg(const char* op, const char* name, const Tensor& w, const Tensor& input,
                 DType dtype) {
  CheckLossWeight(op, name, {w.sizes(), w.dtype()}, input.sizes());
  return w.dtype() == dtype ? w : to(w, dtype);
}

// ClassLoss: nll_loss's per-target values for an input of log-probabilities, with the
// per-target weights and validity masks the reductions and cross_entropy need.
struct ClassLoss {
  Tensor none;   // -w[t] x[n, t, k], 0 where t == ignore_index; target's shape
  Tensor wt;     // w[t] (1 without weight), 0 where ignored
  Tensor valid;  // 1 where t != ignore_index, else 0
};

template <typename T>
ClassLoss GatherClassLoss(const char* op, const Tensor& x, const Tensor& target,
                          const std::optional<Tensor>& weight, int64_t ignore_index) {
  const Tensor xc = contiguous(x);
  const Tensor tc = contiguous(target);
  const int64_t rank = x.dim();
  const int64_t n = rank == 1 ? 1 : x.size(0);
  const int64_t c = x.size(LossClassDim(rank));
  int64_t k = 1;
  for (int64_t d = 2; d < rank; ++d) k *= x.size(d);
  Tensor w;
  if (weight) w = contiguous(weight->dtype() == x.dtype() ? *weight : to(*weight, x.dtype()));
  ClassLoss out{EmptyContiguous(target.sizes(), x.dtype()),
                EmptyContiguous(target.sizes(), x.dtype()),
                EmptyContiguous(target.sizes(), x.dtype())};
  const T* px = static_cast<const T*>(xc.impl()->raw_data());
  const int64_t* pt = static_cast<const int64_t*>(tc.impl()->raw_data());
  const T* pw = w.defined() ? static_cast<const T*>(w.impl()->raw_data()) : nullptr;
  T* po = static_cast<T*>(out.none.impl()->raw_data());
  T* pwt = static_cast<T*>(out.wt.impl()->raw_data());
  T* pv = static_cast<T*>(out.valid.impl()->raw_data());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t e = i * k + j;
      const int64_t cls = pt[e];
      if (cls == ignore_index) {
        po[e] = T(0);
        pwt[e] = T(0);
        pv[e] = T(0);
        continue;
      }
      if (cls < 0 || cls >= c) {
        ThrowError(op, ": target ", cls, " is out of bounds for ", c, " classes");
      }
      const T wc = pw ? pw[cls] : T(1);
      po[e] = -wc * px[(i * c + cls) * k + j];
      pwt[e] = wc;
      pv[e] = T(1);
    }
  }
  return out;
}

ClassLoss GatherClass(const char* op, const Tensor& x, const Tensor& target,
                      const std::optional<Tensor>& weight, int64_t ignore_index) {
  if (x.dtype() == kFloat32) return GatherClassLoss<float>(op, x, target, weight, ignore_index);
  return GatherClassLoss<double>(op, x, target, weight, ignore_index);
}

// ReduceClass: a class-index loss's reduction; mean divides by the summed target weights.
Tensor ReduceClass(const Tensor& none, const Tensor& wt, int64_t reduction) {
  if (reduction == kLossNone) return none;
  Tensor s = sum(none, {}, false);
  return reduction == kLossSum ? s : div(s, sum(wt, {}, false));
}

std::optional<LossArg> ArgOf(const std::optional<Tensor>& t) {
  if (!t) return std::nullopt;
  return LossArg{t->sizes(), t->dtype()};
}

// ClassWeightView: weight [C] viewed to broadcast along the class dim of a rank-`rank` input.
Tensor ClassWeightView(const Tensor& w, int64_t rank) {
  Shape s(static_cast<size_t>(rank), 1);
  s[static_cast<size_t>(LossClassDim(rank))] = w.size(0);
  return reshape(w, s);
}

}  // namespace

// ---- Checks. ----

void CheckLossReduction(absl::string_view op, int64_t reduction, bool allow_batchmean) {
  if (reduction >= 0 && reduction <= 2) return;
  if (allow_batchmean && reduction == kLossBatchMean) return;
  ThrowError(op, ": reduction must be none (0), mean (1), sum (2)",
             allow_batchmean ? " or batchmean (3)" : "", ", got ", reduction);
}

Shape CheckPointwiseLoss(absl::string_view op, LossArg input, LossArg target, bool same_shape) {
  if (!IsFloating(input.dtype) || !IsFloating(target.dtype)) {
    ThrowError(op, ": expected floating point input and target, got ", DTypeLabel(input.dtype),
               " and ", DTypeLabel(target.dtype));
  }
  if (same_shape) {
    if (!std::equal(input.sizes.begin(), input.sizes.end(), target.sizes.begin(),
                    target.sizes.end())) {
      ThrowError(op, ": target size ", ShapeToString(target.sizes),
                 " must be the same as input size ", ShapeToString(input.sizes));
    }
    return Shape(input.sizes.begin(), input.sizes.end());
  }
  return BroadcastShapes(op, input.sizes, target.sizes);
}

void CheckLossWeight(absl::string_view op, const char* name, LossArg weight, IntArrayRef shape) {
  if (!IsFloating(weight.dtype)) {
    ThrowError(op, ": expected a floating point ", name, ", got ", DTypeLabel(weight.dtype));
  }
  bool ok = weight.sizes.size() <= shape.size();
  for (size_t i = 0; ok && i < weight.sizes.size(); ++i) {
    const int64_t w = weight.sizes[weight.sizes.size() - 1 - i];
    ok = w == 1 || w == shape[shape.size() - 1 - i];
  }
  if (!ok) {
    ThrowError(op, ": ", name, " of shape ", ShapeToString(weight.sizes),
               " does not broadcast to input shape ", ShapeToString(shape));
  }
}

void CheckLossScalar(absl::string_view op, double value) {
  if (op == "smooth_l1_loss" && !(value >= 0)) {
    ThrowError(op, ": beta must be non-negative, got ", value);
  }
  if (op == "huber_loss" && !(value > 0)) {
    ThrowError(op, ": delta must be positive, got ", value);
  }
  if (op == "cross_entropy" && !(value >= 0 && value <= 1)) {
    ThrowError(op, ": label_smoothing must be in [0, 1], got ", value);
  }
}

namespace {
void CheckClassWeight(absl::string_view op, int64_t classes,
                      const std::optional<LossArg>& weight) {
  if (!weight) return;
  if (!IsFloating(weight->dtype)) {
    ThrowError(op, ": expected a floating point weight, got ", DTypeLabel(weight->dtype));
  }
  if (weight->sizes.size() != 1 || weight->sizes[0] != classes) {
    ThrowError(op, ": weight must be a 1-D tensor of ", classes, " class weights, got ",
               ShapeToString(weight->sizes));
  }
}
void CheckClassInput(absl::string_view op, LossArg input) {
  if (!IsFloating(input.dtype)) {
    ThrowError(op, ": expected a floating point input, got ", DTypeLabel(input.dtype));
  }
  if (input.sizes.empty()) {
    ThrowError(op, ": expected an input of 1 or more dims ([C] or [N, C, d1, ...]), got []");
  }
}
}  // namespace

void CheckClassLoss(absl::string_view op, LossArg input, LossArg target,
                    const std::optional<LossArg>& weight) {
  CheckClassInput(op, input);
  if (target.dtype != kInt64) {
    ThrowError(op, ": expected an int64 target of class indices, got ", DTypeLabel(target.dtype));
  }
  Shape expected;
  if (input.sizes.size() >= 2) {
    expected.push_back(input.sizes[0]);
    expected.insert(expected.end(), input.sizes.begin() + 2, input.sizes.end());
  }
  if (!std::equal(expected.begin(), expected.end(), target.sizes.begin(), target.sizes.end())) {
    ThrowError(op, ": target shape ", ShapeToString(target.sizes), " does not match input shape ",
               ShapeToString(input.sizes), " (expected target shape ", ShapeToString(expected),
               ")");
  }
  CheckClassWeight(op, input.sizes[static_cast<size_t>(LossClassDim(input.sizes.size()))],
                   weight);
}

void CheckProbLoss(LossArg input, LossArg target, const std::optional<LossArg>& weight,
                   int64_t ignore_index) {
  const char* op = "cross_entropy";
  CheckClassInput(op, input);
  if (!std::equal(input.sizes.begin(), input.sizes.end(), target.sizes.begin(),
                  target.sizes.end())) {
    ThrowError(op, ": a target of class probabilities must have the input's shape ",
               ShapeToString(input.sizes), ", got ", ShapeToString(target.sizes));
  }
  if (ignore_index >= 0) {
    ThrowError(op, ": ignore_index (", ignore_index,
               ") is not supported for targets of class probabilities");
  }
  CheckClassWeight(op, input.sizes[static_cast<size_t>(LossClassDim(input.sizes.size()))],
                   weight);
}

// ---- The losses. ----

Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  const Pair p = PointwiseArgs("mse_loss", input, target, reduction);
  const Tensor d = sub(p.x, p.t);
  return Reduce(mul(d, d), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  const Pair p = PointwiseArgs("l1_loss", input, target, reduction);
  return Reduce(abs(sub(p.x, p.t)), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction,
                      double beta) {
  const char* op = "smooth_l1_loss";
  const Pair p = PointwiseArgs(op, input, target, reduction);
  CheckLossScalar(op, beta);
  const Tensor z = abs(sub(p.x, p.t));
  if (beta == 0) return Reduce(z, reduction);  // the l1 loss (no quadratic zone)
  const Tensor quad = div(mul(mul(z, z), Constant(0.5, p.dtype)), Constant(beta, p.dtype));
  const Tensor lin = sub(z, Constant(0.5 * beta, p.dtype));
  return Reduce(where(lt(z, Constant(beta, p.dtype)), quad, lin), reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, int64_t reduction, double delta) {
  const char* op = "huber_loss";
  const Pair p = PointwiseArgs(op, input, target, reduction);
  CheckLossScalar(op, delta);
  const Tensor z = abs(sub(p.x, p.t));
  const Tensor quad = mul(mul(z, z), Constant(0.5, p.dtype));
  const Tensor lin = mul(sub(z, Constant(0.5 * delta, p.dtype)), Constant(delta, p.dtype));
  return Reduce(where(lt(z, Constant(delta, p.dtype)), quad, lin), reduction);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const std::optional<Tensor>& weight, int64_t reduction) {
  const char* op = "binary_cross_entropy";
  const Pair p = PointwiseArgs(op, input, target, reduction, /*same_shape=*/true);
  Tensor w;
  if (weight) w = WeightArg(op, "weight", *weight, input, p.dtype);
  // Values outside [0, 1] (or NaN) are an error, as in torch.
  if (!AllProbabilities(p.x)) ThrowError(op, ": all elements of input should be between 0 and 1");
  // torch clamps each log at -100, so that 0 and 1 probabilities give a finite loss.
  const Tensor floor_log = Constant(-100, p.dtype);
  const Tensor log_p = maximum(log(p.x), floor_log);
  const Tensor log_q = maximum(log1p(neg(p.x)), floor_log);
  const Tensor one = Constant(1, p.dtype);
  Tensor none = neg(add(mul(p.t, log_p), mul(sub(one, p.t), log_q)));
  if (w.defined()) none = mul(none, w);
  return Reduce(none, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight, int64_t reduction,
                                        const std::optional<Tensor>& pos_weight) {
  const char* op = "binary_cross_entropy_with_logits";
  const Pair p = PointwiseArgs(op, input, target, reduction, /*same_shape=*/true);
  Tensor w, pw;
  if (weight) w = WeightArg(op, "weight", *weight, input, p.dtype);
  if (pos_weight) pw = WeightArg(op, "pos_weight", *pos_weight, input, p.dtype);
  const Tensor one = Constant(1, p.dtype);
  // softplus(-x) = log(1 + exp(-x)) = max(-x, 0) + log1p(exp(-|x|)), stable for any x.
  const Tensor sp = add(maximum(neg(p.x), Constant(0, p.dtype)), log1p(exp(neg(abs(p.x)))));
  // loss = (1 - t) x + (1 + (pw - 1) t) softplus(-x)   (pw = 1 without pos_weight)
  const Tensor coef = pw.defined() ? add(one, mul(sub(pw, one), p.t)) : Tensor();
  Tensor none = add(mul(sub(one, p.t), p.x), coef.defined() ? mul(coef, sp) : sp);
  if (w.defined()) none = mul(none, w);
  return Reduce(none, reduction);
}

Tensor kl_div(const Tensor& input, const Tensor& target, int64_t reduction, bool log_target) {
  const Pair p = PointwiseArgs("kl_div", input, target, reduction, false,
                               /*allow_batchmean=*/true);
  Tensor none;
  if (log_target) {
    none = mul(exp(p.t), sub(p.t, p.x));
  } else {
    // t log t - t x, with 0 log 0 = 0 (torch's xlogy).
    const Tensor zero = Constant(0, p.dtype);
    const Tensor tlogt = where(eq(p.t, zero), zero, mul(p.t, log(p.t)));
    none = sub(tlogt, mul(p.t, p.x));
  }
  return Reduce(none, reduction, input.dim() == 0 ? 1 : input.size(0));
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                int64_t ignore_index, int64_t reduction) {
  const char* op = "nll_loss";
  CheckLossReduction(op, reduction);
  CheckClassLoss(op, {input.sizes(), input.dtype()}, {target.sizes(), target.dtype()},
                 ArgOf(weight));
  const ClassLoss l = GatherClass(op, input, target, weight, ignore_index);
  return ReduceClass(l.none, l.wt, reduction);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const std::optional<Tensor>& weight, int64_t ignore_index,
                     int64_t reduction, double label_smoothing) {
  const char* op = "cross_entropy";
  CheckLossReduction(op, reduction);
  CheckLossScalar(op, label_smoothing);
  const int64_t rank = input.dim();
  if (IsProbTarget(target.dtype())) {
    CheckProbLoss({input.sizes(), input.dtype()}, {target.sizes(), target.dtype()},
                  ArgOf(weight), ignore_index);
    const int64_t cdim = LossClassDim(rank);
    const DType dtype = PromoteTypes(input.dtype(), target.dtype());
    const Tensor lsm = log_softmax(input.dtype() == dtype ? input : to(input, dtype), cdim);
    Tensor t = target.dtype() == dtype ? target : to(target, dtype);
    if (label_smoothing > 0) {
      const double classes = static_cast<double>(input.size(cdim));
      t = add(mul(t, Constant(1 - label_smoothing, dtype)),
              Constant(label_smoothing / classes, dtype));
    }
    Tensor prod = mul(lsm, t);
    if (weight) prod = mul(prod, ClassWeightView(to(*weight, dtype), rank));
    const Tensor none = neg(sum(prod, {cdim}, false));
    // mean divides by the number of examples (positions), numel / C: the mean of `none`.
    return Reduce(none, reduction);
  }
  CheckClassLoss(op, {input.sizes(), input.dtype()}, {target.sizes(), target.dtype()},
                 ArgOf(weight));
  const int64_t cdim = LossClassDim(rank);
  const Tensor lsm = log_softmax(input, cdim);
  const ClassLoss l = GatherClass(op, lsm, target, weight, ignore_index);
  Tensor none = l.none;
  if (label_smoothing > 0) {
    const DType dtype = input.dtype();
    Tensor prod = lsm;
    if (weight) prod = mul(prod, ClassWeightView(to(*weight, dtype), rank));
    const Tensor smooth = mul(neg(sum(prod, {cdim}, false)), l.valid);
    const double classes = static_cast<double>(input.size(cdim));
    none = add(mul(none, Constant(1 - label_smoothing, dtype)),
               mul(smooth, Constant(label_smoothing / classes, dtype)));
  }
  return ReduceClass(none, l.wt, reduction);
}

}  // namespace ft::kernels

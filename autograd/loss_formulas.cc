// vjp and jvp formulas: losses (mse_loss, l1_loss, smooth_l1_loss, huber_loss,
// binary_cross_entropy, binary_cross_entropy_with_logits, kl_div, nll_loss, cross_entropy).
//
// Like the other formula files, every formula is written with the public ops only, so it is
// itself differentiable (hessian of a loss) and batchable.
//
// The elementwise losses share one shape: a per-element derivative d_arg of the "none" loss
// (broadcastable to the loss's broadcast shape S), the reduced loss's gradient spread over S
// (SpreadGrad: kSum expands g, kMean also divides by numel(S), kBatchMean by input.size(0)),
// and sum_to_size back to each argument's shape. Their jvp is the transpose: the per-element
// tangent sum_k t_k d_k expanded to S and reduced like the forward (ReduceTangent).
//
// Choices:
//   - Derivatives at the kinks follow the forward's branches: l1 uses sign (0 at a tie),
//     smooth_l1 / huber take the quadratic branch's derivative where |d| < beta / delta.
//   - binary_cross_entropy differentiates its forward exactly, the -100 log clamp included
//     (a clamped log has derivative 0), with no division by an input that can be 0; its
//     target gets the exact gradient too (torch has none), its weight the unweighted loss.
//   - kl_div's target gradient is 0 where target == 0 (torch's masked_fill), computed without
//     log(0).
//   - binary_cross_entropy_with_logits differentiates input, target, weight and pos_weight.
//   - nll_loss / cross_entropy: the class weights get their gradient too (torch has none),
//     kMean's denominator (the summed target weights) included; integer targets get none.
//     These formulas read the op's output (the loss, for kMean's denominator derivative).
//   - nll_loss is linear in its input: its jvp is nll_loss of the tangent. cross_entropy's
//     jvp pushes the tangent through log_softmax (t - sum(softmax t)) and applies the
//     (linear) loss of log-probabilities to it.
#include <cmath>
#include <cstdint>

#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "kernels/loss.h"
#include "ops/ops.h"

namespace ft::autograd {
namespace {

using internal::AddTangents;
using internal::Op;

// LossShape: the shape of an elementwise loss's per-element values (input and target
// broadcast).
Shape LossShape(const Tensor& x, const Tensor& t) { return BroadcastShapes("loss", x.sizes(), t.sizes()); }

// BatchOf: kl_div's batchmean divisor.
int64_t BatchOf(const Tensor& x) { return x.dim() == 0 ? 1 : x.size(0); }

// SpreadGrad: the reduced loss's gradient g as the gradient of each per-element loss of
// shape `shape`.
Tensor SpreadGrad(const Tensor& g, int64_t reduction, IntArrayRef shape, int64_t batch) {
  switch (reduction) {
    case kernels::kLossNone:
      return g;
    case kernels::kLossSum:
      return expand(g, shape);
    case kernels::kLossMean:
      return expand(g / static_cast<double>(Numel(shape)), shape);
    default:
      return expand(g / static_cast<double>(batch), shape);
  }
}

// ReduceTangent: per-element tangents t (broadcastable to `shape`) reduced like the forward.
Tensor ReduceTangent(const Tensor& t, int64_t reduction, IntArrayRef shape, int64_t batch) {
  if (!t.defined()) return t;
  const Tensor e = expand(t, shape);
  switch (reduction) {
    case kernels::kLossNone:
      return e;
    case kernels::kLossSum:
      return sum(e);
    case kernels::kLossMean:
      return mean(e);
    default:
      return sum(e) / static_cast<double>(batch);
  }
}

// Scaled: t * d, undefined when t is (an undefined tangent is zero).
Tensor Scaled(const Tensor& t, const Tensor& d) { return t.defined() ? t * d : Tensor(); }

// A two-argument elementwise loss: derivative factors w.r.t. input and target.
struct Factors {
  Tensor dx, dt;
};
using FactorFn = Factors (*)(const Tensor& x, const Tensor& t, const ValueList& inputs);

template <FactorFn kFactors, int kReductionArg>
void SetPointwiseLoss(const char* name) {
  SetVjp(Op(name), [](const VjpContext& c, const TensorList& g) {
    const Tensor &x = c.input(0), &t = c.input(1);
    const Shape shape = LossShape(x, t);
    const Tensor ge = SpreadGrad(g[0], c.inputs[kReductionArg].to_int(), shape, BatchOf(x));
    const Factors f = kFactors(x, t, c.inputs);
    return TensorList{c.needs(0) ? sum_to_size(ge * f.dx, x.sizes()) : Tensor(),
                      c.needs(1) ? sum_to_size(ge * f.dt, t.sizes()) : Tensor()};
  });
  SetJvp(Op(name), [](const JvpContext& c, const TensorList& tan) {
    const Tensor &x = c.input(0), &t = c.input(1);
    const Factors f = kFactors(x, t, c.inputs);
    return TensorList{ReduceTangent(AddTangents(Scaled(tan[0], f.dx), Scaled(tan[1], f.dt)),
                                    c.inputs[kReductionArg].to_int(), LossShape(x, t),
                                    BatchOf(x))};
  });
}

Factors MseFactors(const Tensor& x, const Tensor& t, const ValueList&) {
  const Tensor d = (x - t) * 2.0;
  return {d, -d};
}
Factors L1Factors(const Tensor& x, const Tensor& t, const ValueList&) {
  const Tensor s = sign(x - t);
  return {s, -s};
}
Factors SmoothL1Factors(const Tensor& x, const Tensor& t, const ValueList& in) {
  const double beta = in[3].to_double();
  const Tensor d = x - t;
  const Tensor s = beta == 0 ? sign(d) : where(lt(abs(d), beta), d / beta, sign(d));
  return {s, -s};
}
Factors HuberFactors(const Tensor& x, const Tensor& t, const ValueList& in) {
  const double delta = in[3].to_double();
  const Tensor d = x - t;
  const Tensor s = where(lt(abs(d), delta), d, sign(d) * delta);
  return {s, -s};
}
Factors KlDivFactors(const Tensor& x, const Tensor& t, const ValueList& in) {
  if (in[3].to_bool()) {  // log_target
    const Tensor e = exp(t);
    return {-e, e * (t - x + 1.0)};
  }
  const Tensor zero = eq(t, 0.0);
  const Tensor safe = where(zero, 1.0, t);
  return {-t, where(zero, 0.0, log(safe) + 1.0 - x)};
}

// The optional weight arguments: their slot among the tensor inputs (after input, target).
struct Weights {
  Tensor w, pw;  // undefined when not given
  int w_slot = -1, pw_slot = -1;
};
Weights WeightsOf(const ValueList& inputs, int weight_arg, int pos_weight_arg) {
  Weights r;
  int slot = 2;
  if (!inputs[weight_arg].is_none()) {
    r.w = inputs[weight_arg].tensor();
    r.w_slot = slot++;
  }
  if (pos_weight_arg >= 0 && !inputs[pos_weight_arg].is_none()) {
    r.pw = inputs[pos_weight_arg].tensor();
    r.pw_slot = slot++;
  }
  return r;
}

// Clamped logs of binary_cross_entropy: value max(log(p), -100), its derivative
// 1 / p where the clamp is inactive (0 where it is), without dividing by a zero p.
struct ClampedLog {
  Tensor value, derivative;
};
ClampedLog ClampedLogOf(const Tensor& p) {
  const Tensor lp = log(p);
  const Tensor active = gt(lp, -100.0);
  return {maximum(lp, -100.0), where(active, reciprocal(where(active, p, 1.0)), 0.0)};
}

// Softplus(-x) = log(1 + exp(-x)), stable, with the exact derivative -sigmoid(-x) at x = 0
// too (the abs terms' kinks cancel there).
Tensor SoftplusNeg(const Tensor& x) {
  const Tensor ax = abs(x);
  return log1p(exp(-ax)) + (ax - x) * 0.5;
}

// ---- Class-index losses. ----

// The per-target weights w[t] (1 without weight) and the validity mask, 0 at ignored targets,
// in x's dtype and the target's shape.
struct TargetWeights {
  Tensor wt, valid, safe_target;
};
TargetWeights TargetWeightsOf(const Tensor& x, const Tensor& target, const Value& weight,
                              int64_t ignore_index) {
  const Tensor ignored = eq(target, Scalar(ignore_index));
  TargetWeights r;
  r.safe_target = where(ignored, Scalar(int64_t{0}), target);
  r.valid = to(logical_not(ignored), x.dtype());
  if (weight.is_none()) {
    r.wt = r.valid;
  } else {
    const Tensor w = to(weight.tensor(), x.dtype());
    r.wt = reshape(index_select(w, 0, flatten(r.safe_target)), target.sizes()) * r.valid;
  }
  return r;
}

// ClassSpread: a class loss's gradient spread over its per-target values (target's shape);
// kMean divides by the summed target weights.
Tensor ClassSpread(const Tensor& g, int64_t reduction, const TargetWeights& tw) {
  switch (reduction) {
    case kernels::kLossNone:
      return g;
    case kernels::kLossSum:
      return expand(g, tw.wt.sizes());
    default:
      return expand(g / sum(tw.wt), tw.wt.sizes());
  }
}
Tensor ClassReduce(const Tensor& none, int64_t reduction, const TargetWeights& tw) {
  switch (reduction) {
    case kernels::kLossNone:
      return none;
    case kernels::kLossSum:
      return sum(none);
    default:
      return sum(none) / sum(tw.wt);
  }
}

// AtClassDim: v (shaped like the target) with a size-1 class dim, to broadcast against x.
Tensor AtClassDim(const Tensor& v, int64_t rank) {
  return unsqueeze(v, kernels::LossClassDim(rank));
}

// ClassWeightView: weight [C] as [1, C, 1, ...] against an input of rank `rank` (x's dtype).
Tensor ClassWeightView(const Value& weight, const Tensor& x) {
  const Tensor w = to(weight.tensor(), x.dtype());
  Shape s(static_cast<size_t>(x.dim()), 1);
  s[static_cast<size_t>(kernels::LossClassDim(x.dim()))] = w.size(0);
  return reshape(w, s);
}

// NllInputGrad: d nll_loss / d input for per-target gradients ge: -ge w[t] at [n, t, d...].
Tensor NllInputGrad(const Tensor& x, const Tensor& ge, const TargetWeights& tw) {
  const int64_t cdim = kernels::LossClassDim(x.dim());
  Tensor oh = to(one_hot(tw.safe_target, x.size(cdim)), x.dtype());
  if (x.dim() > 1) oh = movedim(oh, -1, 1);
  return oh * AtClassDim(-(ge * tw.wt), x.dim());
}

// LogSoftmaxVjp / LogSoftmaxJvp for lsm = log_softmax(x, dim).
Tensor LogSoftmaxVjp(const Tensor& x, const Tensor& g, int64_t dim) {
  return g - softmax(x, dim) * sum(g, {dim}, true);
}
Tensor LogSoftmaxJvp(const Tensor& x, const Tensor& t, int64_t dim) {
  return t - sum(softmax(x, dim) * t, {dim}, true);
}

// ScatterToClasses: v (shaped like the target) summed into its targets' classes: [C].
Tensor ScatterToClasses(const Tensor& v, const TargetWeights& tw, int64_t classes) {
  const Tensor oh = to(one_hot(tw.safe_target, classes), v.dtype()) * unsqueeze(v, -1);
  if (v.dim() == 0) return oh;
  Shape dims;
  for (int64_t d = 0; d < v.dim(); ++d) dims.push_back(d);
  return sum(oh, dims);
}

// Picked: x (or log_softmax(x)) at each target's class, shaped like the target.
Tensor Picked(const Tensor& x, const TargetWeights& tw) {
  const int64_t cdim = kernels::LossClassDim(x.dim());
  Tensor oh = to(one_hot(tw.safe_target, x.size(cdim)), x.dtype());
  if (x.dim() > 1) oh = movedim(oh, -1, 1);
  return sum(oh * x, {cdim});
}

// ClassLossWeightGrad: d loss / d weight of nll_loss (lsm = x, eps = 0) or cross_entropy
// with class indices (lsm = log_softmax(x)). Per target e with class t and mask m:
//   none / sum: g_e ((1 - eps) (-lsm[e, t]) m_e [c = t] + eps / C (-lsm[e, c]) m_e);
//   mean (loss = S / W, W = sum of w[t] m): the same with g / W, minus g / W * loss * m_e
//   at c = t (the derivative of the denominator).
Tensor ClassLossWeightGrad(const Tensor& g, const Tensor& lsm, const TargetWeights& tw,
                           int64_t reduction, double eps, const Tensor& out) {
  const int64_t cdim = kernels::LossClassDim(lsm.dim());
  const int64_t classes = lsm.size(cdim);
  const Tensor ge = ClassSpread(g, reduction, tw);
  Tensor per_target = ge * -Picked(lsm, tw) * tw.valid * (1.0 - eps);
  if (reduction == kernels::kLossMean) {
    per_target = per_target - expand(g * out / sum(tw.wt), tw.wt.sizes()) * tw.valid;
  }
  Tensor grad = ScatterToClasses(per_target, tw, classes);
  if (eps > 0) {
    const Tensor smooth = -lsm * AtClassDim(ge * tw.valid, lsm.dim());
    Shape dims;
    for (int64_t d = 0; d < lsm.dim(); ++d) {
      if (d != cdim) dims.push_back(d);
    }
    grad = grad + (dims.empty() ? smooth : sum(smooth, dims)) * (eps / static_cast<double>(classes));
  }
  return grad;
}

// ClassLossWeightJvp: the tangent of a class-index loss along a weight tangent tw_dot:
// `loss_of(tw_dot, r)` is the loss with weight tw_dot and reduction r (linear in the
// weight); kMean also differentiates its denominator W: (S(tw_dot) - loss * W(tw_dot)) / W.
template <typename LossOf>
Tensor ClassLossWeightJvp(const Tensor& x, const Tensor& target, const Tensor& tw_dot,
                          const TargetWeights& tw, int64_t ignore_index, int64_t reduction,
                          const Tensor& out, LossOf loss_of) {
  if (reduction != kernels::kLossMean) {
    return loss_of(tw_dot, static_cast<Reduction::Mode>(reduction));
  }
  const Tensor dw = sum(TargetWeightsOf(x, target, Value(tw_dot), ignore_index).wt);
  return (loss_of(tw_dot, Reduction::kSum) - out * dw) / sum(tw.wt);
}

}  // namespace

void RegisterLossFormulas() {
  // Inputs: mse/l1 (self, target, reduction); smooth_l1 / huber (..., beta / delta);
  // kl_div (self, target, reduction, log_target).
  SetPointwiseLoss<MseFactors, 2>("mse_loss");
  SetPointwiseLoss<L1Factors, 2>("l1_loss");
  SetPointwiseLoss<SmoothL1Factors, 2>("smooth_l1_loss");
  SetPointwiseLoss<HuberFactors, 2>("huber_loss");
  SetPointwiseLoss<KlDivFactors, 2>("kl_div");
  MarkOutputValuesRead(Op("nll_loss"));
  MarkOutputValuesRead(Op("cross_entropy"));

  // binary_cross_entropy(self, target, weight, reduction): loss = -w (t lp + (1 - t) lq).
  SetVjp(Op("binary_cross_entropy"), [](const VjpContext& c, const TensorList& g) {
    const Tensor &x = c.input(0), &t = c.input(1);
    const Weights w = WeightsOf(c.inputs, 2, -1);
    const Tensor ge = SpreadGrad(g[0], c.inputs[3].to_int(), x.sizes(), 1);
    const ClampedLog lp = ClampedLogOf(x), lq = ClampedLogOf(1.0 - x);
    const Tensor gw = w.w.defined() ? ge * w.w : ge;
    TensorList out = {
        c.needs(0) ? sum_to_size(gw * ((1.0 - t) * lq.derivative - t * lp.derivative),
                                 x.sizes())
                   : Tensor(),
        c.needs(1) ? sum_to_size(gw * (lq.value - lp.value), t.sizes()) : Tensor()};
    if (w.w_slot >= 0) {
      out.push_back(c.needs(2) ? sum_to_size(ge * -(t * lp.value + (1.0 - t) * lq.value),
                                             w.w.sizes())
                               : Tensor());
    }
    return out;
  });
  SetJvp(Op("binary_cross_entropy"), [](const JvpContext& c, const TensorList& tan) {
    const Tensor &x = c.input(0), &t = c.input(1);
    const Weights w = WeightsOf(c.inputs, 2, -1);
    const ClampedLog lp = ClampedLogOf(x), lq = ClampedLogOf(1.0 - x);
    Tensor per = AddTangents(Scaled(tan[0], (1.0 - t) * lq.derivative - t * lp.derivative),
                             Scaled(tan[1], lq.value - lp.value));
    if (per.defined() && w.w.defined()) per = per * w.w;
    if (w.w_slot >= 0 && tan[2].defined()) {
      per = AddTangents(per, tan[2] * -(t * lp.value + (1.0 - t) * lq.value));
    }
    return TensorList{ReduceTangent(per, c.inputs[3].to_int(), x.sizes(), 1)};
  });

  // binary_cross_entropy_with_logits(self, target, weight, reduction, pos_weight):
  // loss = w ((1 - t) x + k sp), k = 1 + (pw - 1) t, sp = softplus(-x).
  struct Logits {
    Tensor sp, k, dx, dt, unweighted;
  };
  static constexpr auto logits_terms = [](const Tensor& x, const Tensor& t, const Weights& w) {
    Logits r;
    r.sp = SoftplusNeg(x);
    r.k = w.pw.defined() ? (w.pw - 1.0) * t + 1.0 : Tensor();
    const Tensor dsp = sigmoid(x) - 1.0;
    r.dx = (1.0 - t) + (r.k.defined() ? r.k * dsp : dsp);
    r.dt = w.pw.defined() ? (w.pw - 1.0) * r.sp - x : -x;
    r.unweighted = (1.0 - t) * x + (r.k.defined() ? r.k * r.sp : r.sp);
    return r;
  };
  SetVjp(Op("binary_cross_entropy_with_logits"), [](const VjpContext& c, const TensorList& g) {
    const Tensor &x = c.input(0), &t = c.input(1);
    const Weights w = WeightsOf(c.inputs, 2, 4);
    const Tensor ge = SpreadGrad(g[0], c.inputs[3].to_int(), x.sizes(), 1);
    const Logits l = logits_terms(x, t, w);
    const Tensor gw = w.w.defined() ? ge * w.w : ge;
    TensorList out = {c.needs(0) ? sum_to_size(gw * l.dx, x.sizes()) : Tensor(),
                      c.needs(1) ? sum_to_size(gw * l.dt, t.sizes()) : Tensor()};
    if (w.w_slot >= 0) {
      out.push_back(c.needs(2) ? sum_to_size(ge * l.unweighted, w.w.sizes()) : Tensor());
    }
    if (w.pw_slot >= 0) {
      out.push_back(c.needs(static_cast<size_t>(w.pw_slot))
                        ? sum_to_size(gw * t * l.sp, w.pw.sizes())
                        : Tensor());
    }
    return out;
  });
  SetJvp(Op("binary_cross_entropy_with_logits"), [](const JvpContext& c, const TensorList& tan) {
    const Tensor &x = c.input(0), &t = c.input(1);
    const Weights w = WeightsOf(c.inputs, 2, 4);
    const Logits l = logits_terms(x, t, w);
    Tensor per = AddTangents(Scaled(tan[0], l.dx), Scaled(tan[1], l.dt));
    if (w.pw_slot >= 0 && tan[static_cast<size_t>(w.pw_slot)].defined()) {
      per = AddTangents(per, tan[static_cast<size_t>(w.pw_slot)] * t * l.sp);
    }
    if (per.defined() && w.w.defined()) per = per * w.w;
    if (w.w_slot >= 0 && tan[2].defined()) per = AddTangents(per, tan[2] * l.unweighted);
    return TensorList{ReduceTangent(per, c.inputs[3].to_int(), x.sizes(), 1)};
  });

  // nll_loss(self, target, weight, ignore_index, reduction).
  SetVjp(Op("nll_loss"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const TargetWeights tw = TargetWeightsOf(x, c.input(1), c.inputs[2], c.inputs[3].to_int());
    const int64_t reduction = c.inputs[4].to_int();
    TensorList out = {
        c.needs(0) ? NllInputGrad(x, ClassSpread(g[0], reduction, tw), tw) : Tensor(), Tensor()};
    if (!c.inputs[2].is_none()) {
      out.push_back(c.needs(2) ? ClassLossWeightGrad(g[0], x, tw, reduction, 0.0, c.output(0))
                               : Tensor());
    }
    return out;
  });
  SetJvp(Op("nll_loss"), [](const JvpContext& c, const TensorList& tan) {
    const Tensor &x = c.input(0), &t = c.input(1);
    const std::optional<Tensor> w =
        c.inputs[2].is_none() ? std::nullopt : std::optional<Tensor>(c.input(2));
    const int64_t ignore_index = c.inputs[3].to_int();
    const int64_t reduction = c.inputs[4].to_int();
    Tensor out;
    if (tan[0].defined()) {
      out = nll_loss(tan[0], t, w, ignore_index, static_cast<Reduction::Mode>(reduction));
    }
    if (w && tan.size() > 2 && tan[2].defined()) {
      const TargetWeights tw = TargetWeightsOf(x, t, c.inputs[2], ignore_index);
      out = AddTangents(out, ClassLossWeightJvp(x, t, tan[2], tw, ignore_index, reduction,
                                                c.output(0), [&](const Tensor& wd, Reduction::Mode r) {
                                                  return nll_loss(x, t, wd, ignore_index, r);
                                                }));
    }
    return TensorList{out};
  });

  // cross_entropy(self, target, weight, ignore_index, reduction, label_smoothing).
  SetVjp(Op("cross_entropy"), [](const VjpContext& c, const TensorList& g) {
    const Tensor &x = c.input(0), &t = c.input(1);
    const Value& weight = c.inputs[2];
    const int64_t reduction = c.inputs[4].to_int();
    const double eps = c.inputs[5].to_double();
    const int64_t cdim = kernels::LossClassDim(x.dim());
    const double classes = static_cast<double>(x.size(cdim));
    TensorList out;
    if (kernels::IsProbTarget(t.dtype())) {
      const Tensor lsm = log_softmax(x, cdim);
      const Tensor tp = eps > 0 ? t * (1.0 - eps) + eps / classes : t;
      Shape none_shape(x.sizes().begin(), x.sizes().end());
      none_shape.erase(none_shape.begin() + cdim);
      Tensor ge = AtClassDim(SpreadGrad(g[0], reduction, none_shape, 1), x.dim());
      if (!weight.is_none()) ge = ge * ClassWeightView(weight, x);
      out = {c.needs(0) ? LogSoftmaxVjp(x, -(ge * tp), cdim) : Tensor(),
             c.needs(1) ? -(ge * lsm) * (1.0 - eps) : Tensor()};
      if (!weight.is_none()) {
        Tensor gw;
        if (c.needs(2)) {
          // ge already carries the weight: recompute the unweighted spread.
          const Tensor per = -(lsm * tp) * AtClassDim(SpreadGrad(g[0], reduction, none_shape, 1),
                                                      x.dim());
          Shape dims;
          for (int64_t d = 0; d < x.dim(); ++d) {
            if (d != cdim) dims.push_back(d);
          }
          gw = dims.empty() ? per : sum(per, dims);
        }
        out.push_back(gw);
      }
    } else {
      const TargetWeights tw = TargetWeightsOf(x, t, weight, c.inputs[3].to_int());
      Tensor gx;
      if (c.needs(0)) {
        const Tensor ge = ClassSpread(g[0], reduction, tw);
        Tensor glsm = NllInputGrad(x, ge, tw);
        if (eps > 0) {
          Tensor smooth = AtClassDim(-(ge * tw.valid), x.dim());
          if (!weight.is_none()) smooth = smooth * ClassWeightView(weight, x);
          glsm = glsm * (1.0 - eps) + smooth * (eps / classes);
        }
        gx = LogSoftmaxVjp(x, glsm, cdim);
      }
      out = {gx, Tensor()};
      if (!weight.is_none()) {
        out.push_back(c.needs(2) ? ClassLossWeightGrad(g[0], log_softmax(x, cdim), tw, reduction,
                                                       eps, c.output(0))
                                 : Tensor());
      }
    }
    return out;
  });
  SetJvp(Op("cross_entropy"), [](const JvpContext& c, const TensorList& tan) {
    const Tensor &x = c.input(0), &t = c.input(1);
    const Value& weight = c.inputs[2];
    const int64_t reduction = c.inputs[4].to_int();
    const double eps = c.inputs[5].to_double();
    const int64_t cdim = kernels::LossClassDim(x.dim());
    const double classes = static_cast<double>(x.size(cdim));
    const Tensor tl = tan[0].defined() ? LogSoftmaxJvp(x, tan[0], cdim) : Tensor();
    // The weight's tangent: the loss is linear in the weight (except kMean's denominator).
    Tensor by_weight;
    if (!weight.is_none() && tan.size() > 2 && tan[2].defined()) {
      const int64_t ignore_index = c.inputs[3].to_int();
      const auto loss_of = [&](const Tensor& wd, Reduction::Mode r) {
        return cross_entropy(x, t, wd, ignore_index, r, eps);
      };
      if (kernels::IsProbTarget(t.dtype())) {
        by_weight = loss_of(tan[2], static_cast<Reduction::Mode>(reduction));
      } else {
        const TargetWeights tw = TargetWeightsOf(x, t, weight, ignore_index);
        by_weight = ClassLossWeightJvp(x, t, tan[2], tw, ignore_index, reduction, c.output(0),
                                       loss_of);
      }
    }
    if (kernels::IsProbTarget(t.dtype())) {
      const Tensor lsm = log_softmax(x, cdim);
      const Tensor tp = eps > 0 ? t * (1.0 - eps) + eps / classes : t;
      Tensor per = AddTangents(Scaled(tl, tp), Scaled(tan[1], lsm * (1.0 - eps)));
      if (!per.defined()) return TensorList{by_weight};
      if (!weight.is_none()) per = per * ClassWeightView(weight, x);
      const Tensor none = -sum(per, {cdim});
      return TensorList{AddTangents(ReduceTangent(none, reduction, none.sizes(), 1), by_weight)};
    }
    if (!tl.defined()) return TensorList{by_weight};
    const std::optional<Tensor> w =
        weight.is_none() ? std::nullopt : std::optional<Tensor>(weight.tensor());
    const int64_t ignore_index = c.inputs[3].to_int();
    Tensor out = nll_loss(tl, t, w, ignore_index, static_cast<Reduction::Mode>(reduction));
    if (eps > 0) {
      const TargetWeights tw = TargetWeightsOf(x, t, weight, ignore_index);
      Tensor prod = tl;
      if (!weight.is_none()) prod = prod * ClassWeightView(weight, x);
      const Tensor smooth = -sum(prod, {cdim}) * tw.valid;
      out = out * (1.0 - eps) + ClassReduce(smooth, reduction, tw) * (eps / classes);
    }
    return TensorList{AddTangents(out, by_weight)};
  });
}

}  // namespace ft::autograd

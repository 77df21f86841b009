// vjp and jvp formulas: normalization (layer_norm, rms_norm, normalize, group_norm,
// batch_norm, instance_norm).
//
// Written with the public ops only, recomputing the statistics from the inputs, so every
// formula is differentiable again (hessian, jacfwd of jacrev) and batchable. No formula
// divides by a value that can be zero: the standard deviations are rsqrt(var + eps) with
// eps > 0, normalize's denominator is max(norm, eps), and the counts are constants.
//
// Standardizing xhat = (x - mean) * rstd, rstd = rsqrt(var + eps) over dims D has the
// symmetric Jacobian rstd * (I - 1 / n - xhat xhat^T / n), so one expression is both its vjp
// and its jvp (StdJvp): rstd * (v - mean(v) - xhat * mean(v * xhat)). rms_norm likewise:
// z = x * r, r = rsqrt(mean(x^2) + eps), Jacobian r * (I - z z^T / n).
// normalize reuses norm's own vjp / jvp (each p's cases live there) for the denominator,
// which gets a gradient only where norm >= eps (clamp_min's rule).
// batch_norm / instance_norm also differentiate the returned running statistics:
// new = (1 - m) * running + m * statistic, so gradients reach running_mean / running_var
// and the input through the batch statistics; with the given running statistics (eval) the
// output is an elementwise function of all five tensors.
#include <optional>
#include <vector>

#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "ops/ops.h"

namespace ft::autograd {
namespace {

using internal::AddTangents;
using internal::Op;

// Slots: the position of each argument among the op's tensor inputs (the order of the
// gradients and tangents), or -1 for a None argument or a non-tensor.
std::vector<int> Slots(const ValueList& inputs) {
  std::vector<int> slots;
  int next = 0;
  for (const Value& v : inputs) slots.push_back(v.is_tensor() ? next++ : -1);
  return slots;
}
int CountTensors(const ValueList& inputs) {
  int n = 0;
  for (const Value& v : inputs) n += v.is_tensor() ? 1 : 0;
  return n;
}
std::optional<Tensor> Opt(const ValueList& inputs, size_t i) {
  if (inputs[i].is_none()) return std::nullopt;
  return inputs[i].tensor();
}
// The tangent of argument i (undefined when None or zero).
Tensor TangentOf(const TensorList& t, const std::vector<int>& slots, size_t i) {
  return slots[i] < 0 ? Tensor() : t[static_cast<size_t>(slots[i])];
}

Shape Range(int64_t begin, int64_t end) {
  Shape r;
  for (int64_t d = begin; d < end; ++d) r.push_back(d);
  return r;
}

struct Standardized {
  Tensor mean;  // kept dims
  Tensor rstd;  // kept dims
  Tensor xhat;
};
Standardized Standardize(const Tensor& x, IntArrayRef dims, double eps) {
  Standardized s;
  s.mean = mean(x, dims, true);
  s.rstd = rsqrt(var(x, dims, 0, true) + eps);
  s.xhat = (x - s.mean) * s.rstd;
  return s;
}
// The vjp (= jvp) of x -> xhat at v.
Tensor StdJvp(const Tensor& v, const Standardized& s, IntArrayRef dims) {
  return s.rstd * (v - mean(v, dims, true) - s.xhat * mean(v * s.xhat, dims, true));
}

// A per-channel [C] tensor viewed [C, 1, ..., 1] against an [N, C, *] input of rank `rank`.
Tensor ChannelView(const Tensor& t, int64_t rank) {
  Shape s(static_cast<size_t>(rank - 1), 1);
  s[0] = t.size(0);
  return reshape(t, s);
}
// The dims of an [N, C, *] input other than the channel dim.
Shape NonChannelDims(int64_t rank) {
  Shape d = {0};
  for (int64_t i = 2; i < rank; ++i) d.push_back(i);
  return d;
}

// ---- layer_norm (input, normalized_shape, weight, bias, eps) ----

Shape TrailingDims(const Tensor& x, const Value& normalized_shape) {
  const int64_t k = static_cast<int64_t>(normalized_shape.shape().size());
  return Range(x.dim() - k, x.dim());
}

TensorList LayerNormVjp(const VjpContext& c, const TensorList& g) {
  const Tensor& x = c.input(0);
  const Shape dims = TrailingDims(x, c.inputs[1]);
  const std::optional<Tensor> w = Opt(c.inputs, 2);
  const std::optional<Tensor> b = Opt(c.inputs, 3);
  const Standardized s = Standardize(x, dims, c.inputs[4].to_double());
  TensorList out;
  out.push_back(c.needs(0) ? StdJvp(w ? g[0] * *w : g[0], s, dims) : Tensor());
  const std::vector<int> slots = Slots(c.inputs);
  if (w) out.push_back(c.needs(slots[2]) ? sum_to_size(g[0] * s.xhat, w->sizes()) : Tensor());
  if (b) out.push_back(c.needs(slots[3]) ? sum_to_size(g[0], b->sizes()) : Tensor());
  return out;
}

TensorList LayerNormJvp(const JvpContext& c, const TensorList& t) {
  const Tensor& x = c.input(0);
  const Shape dims = TrailingDims(x, c.inputs[1]);
  const std::optional<Tensor> w = Opt(c.inputs, 2);
  const std::vector<int> slots = Slots(c.inputs);
  const Standardized s = Standardize(x, dims, c.inputs[4].to_double());
  Tensor out;
  if (const Tensor dx = TangentOf(t, slots, 0); dx.defined()) {
    const Tensor dxhat = StdJvp(dx, s, dims);
    out = w ? dxhat * *w : dxhat;
  }
  if (const Tensor dw = TangentOf(t, slots, 2); dw.defined()) out = AddTangents(out, s.xhat * dw);
  out = AddTangents(out, TangentOf(t, slots, 3));
  return TensorList{out};
}

// ---- rms_norm (input, normalized_shape, weight, eps) ----

struct Rms {
  Tensor r;  // kept dims
  Tensor z;  // x * r
};
Rms RmsOf(const JvpContext* jc, const VjpContext* vc, const Shape& dims) {
  const ValueList& in = jc ? jc->inputs : vc->inputs;
  const Tensor& x = in[0].tensor();
  std::optional<Scalar> eps;
  if (!in[3].is_none()) eps = in[3].scalar();
  const double e = eps ? eps->to<double>()
                       : (x.dtype() == kFloat32 ? 1.1920928955078125e-07 : 2.220446049250313e-16);
  Rms s;
  s.r = rsqrt(mean(x * x, dims, true) + e);
  s.z = x * s.r;
  return s;
}
Tensor RmsJvp(const Tensor& v, const Rms& s, IntArrayRef dims) {
  return s.r * (v - s.z * mean(v * s.z, dims, true));
}

TensorList RmsNormVjp(const VjpContext& c, const TensorList& g) {
  const Shape dims = TrailingDims(c.input(0), c.inputs[1]);
  const std::optional<Tensor> w = Opt(c.inputs, 2);
  const Rms s = RmsOf(nullptr, &c, dims);
  TensorList out;
  out.push_back(c.needs(0) ? RmsJvp(w ? g[0] * *w : g[0], s, dims) : Tensor());
  if (w) out.push_back(c.needs(1) ? sum_to_size(g[0] * s.z, w->sizes()) : Tensor());
  return out;
}

TensorList RmsNormJvp(const JvpContext& c, const TensorList& t) {
  const Shape dims = TrailingDims(c.input(0), c.inputs[1]);
  const std::optional<Tensor> w = Opt(c.inputs, 2);
  const std::vector<int> slots = Slots(c.inputs);
  const Rms s = RmsOf(&c, nullptr, dims);
  Tensor out;
  if (const Tensor dx = TangentOf(t, slots, 0); dx.defined()) {
    const Tensor dz = RmsJvp(dx, s, dims);
    out = w ? dz * *w : dz;
  }
  if (const Tensor dw = TangentOf(t, slots, 2); dw.defined()) out = AddTangents(out, s.z * dw);
  return TensorList{out};
}

// ---- normalize (input, p, dim, eps): y = x / d, d = max(n, eps), n = norm(x, p, {dim}) ----

struct NormalizeParts {
  ValueList norm_inputs;
  ValueList norm_outputs;
  Tensor n;
  Tensor d;
  Tensor active;  // n >= eps, in x's dtype: where the denominator follows the norm
};
NormalizeParts NormalizePartsOf(const ValueList& in) {
  const Tensor& x = in[0].tensor();
  const double p = in[1].to_double();
  const int64_t dim = in[2].to_int();
  const double eps = in[3].to_double();
  NormalizeParts parts;
  parts.norm_inputs = {Value(x), Value(p), Value(Shape{dim}), Value(true)};
  parts.n = norm(x, p, {dim}, true);
  parts.norm_outputs = {Value(parts.n)};
  parts.d = maximum(parts.n, Scalar(eps));
  parts.active = to(ge(parts.n, Scalar(eps)), x.dtype());
  return parts;
}

TensorList NormalizeVjp(const VjpContext& c, const TensorList& g) {
  const Tensor& x = c.input(0);
  const int64_t dim = c.inputs[2].to_int();
  const NormalizeParts parts = NormalizePartsOf(c.inputs);
  // dL/dd = -sum(g * x) / d^2, passed to the norm where it is active.
  const Tensor g_d = -sum(g[0] * x, {dim}, true) / (parts.d * parts.d);
  const Operator& norm_op = Op("norm");
  const TensorList g_x_norm = (*GetVjp(norm_op))(
      VjpContext{norm_op, parts.norm_inputs, parts.norm_outputs}, TensorList{g_d * parts.active});
  return TensorList{g[0] / parts.d + g_x_norm[0]};
}

TensorList NormalizeJvp(const JvpContext& c, const TensorList& t) {
  const Tensor& x = c.input(0);
  const NormalizeParts parts = NormalizePartsOf(c.inputs);
  const Operator& norm_op = Op("norm");
  const TensorList dn =
      (*GetJvp(norm_op))(JvpContext{norm_op, parts.norm_inputs, parts.norm_outputs}, t);
  Tensor out = t[0] / parts.d;
  if (dn[0].defined()) out = out - x * (dn[0] * parts.active) / (parts.d * parts.d);
  return TensorList{out};
}

// ---- group_norm (input, num_groups, weight, bias, eps) ----

Shape Grouped(const Tensor& x, int64_t groups) {
  int64_t per_group = x.size(1) / groups;
  for (int64_t d = 2; d < x.dim(); ++d) per_group *= x.size(d);
  return {x.size(0), groups, per_group};
}

TensorList GroupNormVjp(const VjpContext& c, const TensorList& g) {
  const Tensor& x = c.input(0);
  const Shape grouped = Grouped(x, c.inputs[1].to_int());
  const std::optional<Tensor> w = Opt(c.inputs, 2);
  const std::optional<Tensor> b = Opt(c.inputs, 3);
  const std::vector<int> slots = Slots(c.inputs);
  const Standardized s = Standardize(reshape(x, grouped), {2}, c.inputs[4].to_double());
  const Shape other = NonChannelDims(x.dim());
  TensorList out;
  if (c.needs(0)) {
    const Tensor gxhat = w ? g[0] * ChannelView(*w, x.dim()) : g[0];
    out.push_back(reshape(StdJvp(reshape(gxhat, grouped), s, {2}), x.sizes()));
  } else {
    out.emplace_back();
  }
  if (w) {
    out.push_back(c.needs(slots[2]) ? sum(g[0] * reshape(s.xhat, x.sizes()), other)
                                    : Tensor());
  }
  if (b) out.push_back(c.needs(slots[3]) ? sum(g[0], other) : Tensor());
  return out;
}

TensorList GroupNormJvp(const JvpContext& c, const TensorList& t) {
  const Tensor& x = c.input(0);
  const Shape grouped = Grouped(x, c.inputs[1].to_int());
  const std::optional<Tensor> w = Opt(c.inputs, 2);
  const std::vector<int> slots = Slots(c.inputs);
  const Standardized s = Standardize(reshape(x, grouped), {2}, c.inputs[4].to_double());
  Tensor out;
  if (const Tensor dx = TangentOf(t, slots, 0); dx.defined()) {
    const Tensor dxhat = reshape(StdJvp(reshape(dx, grouped), s, {2}), x.sizes());
    out = w ? dxhat * ChannelView(*w, x.dim()) : dxhat;
  }
  if (const Tensor dw = TangentOf(t, slots, 2); dw.defined()) {
    out = AddTangents(out, reshape(s.xhat, x.sizes()) * ChannelView(dw, x.dim()));
  }
  if (const Tensor db = TangentOf(t, slots, 3); db.defined()) {
    out = AddTangents(out, ChannelView(db, x.dim()));
  }
  return TensorList{out};
}

// ---- batch_norm / instance_norm (input, running_mean, running_var, weight, bias, flag,
// momentum, eps); outputs (output, new running_mean, new running_var) ----
//
// With batch statistics over dims D (batch_norm: all but the channel; instance_norm: the
// spatial dims), the running statistics average the statistic over the `extra` = N
// instances of a channel for instance_norm (1 for batch_norm):
//   new_mean = (1 - m) rm + m * mean(x over N and spatial)
//   new_var  = (1 - m) rv + m * mean over instances of sum((x - mean_D)^2, D) / (count_D - 1)

struct ChannelNormSetup {
  bool batch_stats;
  // An input without elements has no statistics: the kernel returns the running stats as
  // given (PyTorch's early return; instance_norm with N = 0 averages nothing and stays NaN).
  bool stats_passed_through;
  Shape dims;           // D
  int64_t extra;        // instances averaged per channel by the running stats
  int64_t count;        // elements per statistic (over D)
  double momentum;
  double eps;
};
ChannelNormSetup SetupOf(const Operator& op, const ValueList& in) {
  const Tensor& x = in[0].tensor();
  const bool instance = op.name() == "instance_norm";
  ChannelNormSetup s;
  s.batch_stats = in[5].to_bool();
  s.stats_passed_through = s.batch_stats && x.numel() == 0 && (!instance || x.size(0) > 0);
  s.dims = instance ? Range(2, x.dim()) : NonChannelDims(x.dim());
  s.extra = instance ? x.size(0) : 1;
  s.count = 1;
  for (int64_t d : s.dims) s.count *= x.size(d);
  s.momentum = in[6].to_double();
  s.eps = in[7].to_double();
  return s;
}

TensorList ChannelNormVjp(const VjpContext& c, const TensorList& g) {
  const Tensor& x = c.input(0);
  const int64_t rank = x.dim();
  const ChannelNormSetup st = SetupOf(c.op, c.inputs);
  const std::optional<Tensor> rm = Opt(c.inputs, 1);
  const std::optional<Tensor> rv = Opt(c.inputs, 2);
  const std::optional<Tensor> w = Opt(c.inputs, 3);
  const std::optional<Tensor> b = Opt(c.inputs, 4);
  const Shape other = NonChannelDims(rank);
  const double m = st.momentum;
  const Tensor g_out = w ? g[0] * ChannelView(*w, rank) : g[0];
  Tensor gx, grm, grv, xhat;
  if (st.stats_passed_through) {
    xhat = x;  // no elements: the weight's and bias's gradients are sums of nothing
    gx = g_out;
    grm = g[1];
    grv = g[2];
  } else if (st.batch_stats) {
    const Standardized s = Standardize(x, st.dims, st.eps);
    xhat = s.xhat;
    gx = StdJvp(g_out, s, st.dims);
    if (rm) {
      const double k = m / static_cast<double>(st.extra * st.count);
      gx = gx + expand(ChannelView(g[1] * k, rank), x.sizes());
      grm = g[1] * (1.0 - m);
    }
    if (rv) {
      const double k = 2.0 * m / static_cast<double>(st.extra * (st.count - 1));
      gx = gx + ChannelView(g[2] * k, rank) * (x - s.mean);
      grv = g[2] * (1.0 - m);
    }
  } else {
    const Tensor rstd = rsqrt(ChannelView(*rv, rank) + st.eps);
    const Tensor xc = x - ChannelView(*rm, rank);
    xhat = xc * rstd;
    gx = g_out * rstd;
    grm = g[1] - sum(gx, other);
    grv = g[2] + sum(g_out * xc * rstd * rstd * rstd, other) * -0.5;
  }
  const std::vector<int> slots = Slots(c.inputs);
  TensorList out(static_cast<size_t>(CountTensors(c.inputs)));
  out[0] = gx;
  if (rm) out[static_cast<size_t>(slots[1])] = grm;
  if (rv) out[static_cast<size_t>(slots[2])] = grv;
  if (w && c.needs(slots[3])) out[static_cast<size_t>(slots[3])] = sum(g[0] * xhat, other);
  if (b && c.needs(slots[4])) out[static_cast<size_t>(slots[4])] = sum(g[0], other);
  return out;
}

TensorList ChannelNormJvp(const JvpContext& c, const TensorList& t) {
  const Tensor& x = c.input(0);
  const int64_t rank = x.dim();
  const ChannelNormSetup st = SetupOf(c.op, c.inputs);
  const std::optional<Tensor> rm = Opt(c.inputs, 1);
  const std::optional<Tensor> rv = Opt(c.inputs, 2);
  const std::optional<Tensor> w = Opt(c.inputs, 3);
  const std::vector<int> slots = Slots(c.inputs);
  const Tensor dx = TangentOf(t, slots, 0);
  const Tensor drm = TangentOf(t, slots, 1);
  const Tensor drv = TangentOf(t, slots, 2);
  const Tensor dw = TangentOf(t, slots, 3);
  const Tensor db = TangentOf(t, slots, 4);
  const Shape other = NonChannelDims(rank);
  const double m = st.momentum;
  Tensor dxhat, xhat, dmean, dvar;
  if (st.stats_passed_through) {
    xhat = x;  // no elements
    dxhat = dx;
    dmean = drm;
    dvar = drv;
  } else if (st.batch_stats) {
    const Standardized s = Standardize(x, st.dims, st.eps);
    xhat = s.xhat;
    if (dx.defined()) {
      dxhat = StdJvp(dx, s, st.dims);
      if (rm) dmean = mean(dx, other) * m;
      if (rv) {
        const double k = 2.0 * m / static_cast<double>(st.extra * (st.count - 1));
        dvar = sum((x - s.mean) * dx, other) * k;
      }
    }
    if (rm && drm.defined()) dmean = AddTangents(dmean, drm * (1.0 - m));
    if (rv && drv.defined()) dvar = AddTangents(dvar, drv * (1.0 - m));
  } else {
    const Tensor rstd = rsqrt(ChannelView(*rv, rank) + st.eps);
    const Tensor xc = x - ChannelView(*rm, rank);
    xhat = xc * rstd;
    if (dx.defined()) dxhat = dx * rstd;
    if (drm.defined()) dxhat = AddTangents(dxhat, -(ChannelView(drm, rank) * rstd));
    if (drv.defined()) {
      dxhat = AddTangents(dxhat, xc * rstd * rstd * rstd * ChannelView(drv, rank) * -0.5);
    }
    dmean = drm;
    dvar = drv;
  }
  Tensor out;
  if (dxhat.defined()) out = w ? dxhat * ChannelView(*w, rank) : dxhat;
  if (dw.defined()) out = AddTangents(out, xhat * ChannelView(dw, rank));
  if (db.defined()) out = AddTangents(out, ChannelView(db, rank));
  return TensorList{out, rm ? dmean : Tensor(), rv ? dvar : Tensor()};
}

}  // namespace

void RegisterNormalizationFormulas() {


  SetVjp(Op("layer_norm"), &LayerNormVjp);
  SetJvp(Op("layer_norm"), &LayerNormJvp);
  SetVjp(Op("rms_norm"), &RmsNormVjp);
  SetJvp(Op("rms_norm"), &RmsNormJvp);
  SetVjp(Op("normalize"), &NormalizeVjp);
  SetJvp(Op("normalize"), &NormalizeJvp);
  SetVjp(Op("group_norm"), &GroupNormVjp);
  SetJvp(Op("group_norm"), &GroupNormJvp);
  SetVjp(Op("batch_norm"), &ChannelNormVjp);
  SetJvp(Op("batch_norm"), &ChannelNormJvp);
  SetVjp(Op("instance_norm"), &ChannelNormVjp);
  SetJvp(Op("instance_norm"), &ChannelNormJvp);

}

}  // namespace ft::autograd

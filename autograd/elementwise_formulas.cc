// vjp and jvp formulas: elementwise ops (unary, binary, where, clamp, to) and the
// non-differentiable comparisons and logical ops. Binary gradients are summed back to each
// input's shape (sum_to_size), undoing broadcasting; binary tangents are left broadcastable
// (the jvp interpreter expands them to the output's shape).
//
// An elementwise op's Jacobian is diagonal (after broadcasting), so one function
// part(v, inputs, output) = D * v serves as both the vjp (v = grad, then summed to the
// input's shape) and the jvp (v = tangent): Unary and Binary register both from it.
#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "ops/ops.h"

namespace ft::autograd {
namespace {

using internal::AddTangents;
using internal::Op;

// ReduceTo: g summed to the shape of `like` (undoing broadcasting), in like's dtype.
Tensor ReduceTo(const Tensor& g, const Tensor& like) {
  Tensor r = g;
  if (!std::equal(g.sizes().begin(), g.sizes().end(), like.sizes().begin(), like.sizes().end())) {
    r = sum_to_size(g, like.sizes());
  }
  if (IsFloating(like.dtype()) && r.dtype() != like.dtype()) r = to(r, like.dtype());
  return r;
}

// Unary vjp and jvp formulas from one function of (grad or tangent, input, output).
void Unary(const char* name, Tensor (*f)(const Tensor& g, const Tensor& x, const Tensor& y)) {
  SetVjp(Op(name), [f](const VjpContext& c, const TensorList& g) {
    return TensorList{f(g[0], c.input(0), c.output(0))};
  });
  SetJvp(Op(name), [f](const JvpContext& c, const TensorList& t) {
    return TensorList{f(t[0], c.input(0), c.output(0))};
  });
}

// Binary vjp and jvp formulas from one function per input; an input that needs no gradient
// or has no tangent (a constant at this level, e.g. the 0.9 in x * 0.9) costs nothing (and
// cannot bring a NaN in: pow's log(a) for a constant exponent).
using BinaryPart = Tensor (*)(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& y);
void Binary(const char* name, BinaryPart fa, BinaryPart fb) {
  SetVjp(Op(name), [fa, fb](const VjpContext& c, const TensorList& g) {
    const Tensor &a = c.input(0), &b = c.input(1), &y = c.output(0);
    return TensorList{c.needs(0) ? ReduceTo(fa(g[0], a, b, y), a) : Tensor(),
                      c.needs(1) ? ReduceTo(fb(g[0], a, b, y), b) : Tensor()};
  });
  SetJvp(Op(name), [fa, fb](const JvpContext& c, const TensorList& t) {
    const Tensor &a = c.input(0), &b = c.input(1), &y = c.output(0);
    return TensorList{AddTangents(t[0].defined() ? fa(t[0], a, b, y) : Tensor(),
                                  t[1].defined() ? fb(t[1], a, b, y) : Tensor())};
  });
}

// ClampKeep: where clamp(x, min, max) passes x through (min <= x <= max; a None bound
// always holds).
// (One bound is one comparison, with no bool constant or logical_and around it: the masks
// jit fuses.)
Tensor ClampKeep(const ValueList& inputs) {
  const Tensor& x = inputs[0].tensor();
  const bool has_min = !inputs[1].is_none(), has_max = !inputs[2].is_none();
  if (has_min && has_max) {
    return logical_and(ge(x, inputs[1].scalar()), le(x, inputs[2].scalar()));
  }
  if (has_min) return ge(x, inputs[1].scalar());
  if (has_max) return le(x, inputs[2].scalar());
  return ones_like(x, kBool);  // clamp refuses this; kept total
}

}  // namespace

void RegisterElementwiseFormulas() {
  Unary("neg", [](const Tensor& g, const Tensor&, const Tensor&) { return neg(g); });
  Unary("abs", [](const Tensor& g, const Tensor& x, const Tensor&) { return g * sign(x); });
  // Piecewise-constant functions: zero gradient and tangent (as PyTorch).
  for (const char* name : {"sign", "floor", "round"}) {
    Unary(name, [](const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); });
  }
  Unary("exp", [](const Tensor& g, const Tensor&, const Tensor& y) { return g * y; });
  Unary("expm1", [](const Tensor& g, const Tensor&, const Tensor& y) { return g * (y + 1.0); });
  Unary("log", [](const Tensor& g, const Tensor& x, const Tensor&) { return g / x; });
  Unary("log1p", [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x + 1.0); });
  Unary("sin", [](const Tensor& g, const Tensor& x, const Tensor&) { return g * cos(x); });
  Unary("cos", [](const Tensor& g, const Tensor& x, const Tensor&) { return neg(g * sin(x)); });
  Unary("tan", [](const Tensor& g, const Tensor&, const Tensor& y) {
    return g * (square(y) + 1.0);
  });
  Unary("tanh", [](const Tensor& g, const Tensor&, const Tensor& y) {
    return g * (1.0 - square(y));
  });
  Unary("sigmoid", [](const Tensor& g, const Tensor&, const Tensor& y) {
    return g * y * (1.0 - y);
  });
  Unary("relu", [](const Tensor& g, const Tensor&, const Tensor& y) {
    return where(gt(y, 0), g, 0);
  });
  Unary("sqrt", [](const Tensor& g, const Tensor&, const Tensor& y) { return g / (y * 2.0); });
  Unary("rsqrt", [](const Tensor& g, const Tensor&, const Tensor& y) {
    return g * (y * square(y)) * -0.5;
  });
  Unary("square", [](const Tensor& g, const Tensor& x, const Tensor&) { return g * x * 2.0; });
  Unary("reciprocal", [](const Tensor& g, const Tensor&, const Tensor& y) {
    return neg(g * square(y));
  });

  using T = const Tensor&;
  Binary("add", [](T g, T, T, T) { return g; }, [](T g, T, T, T) { return g; });
  Binary("sub", [](T g, T, T, T) { return g; }, [](T g, T, T, T) { return neg(g); });
  Binary("mul", [](T g, T, T b, T) { return g * b; }, [](T g, T a, T, T) { return g * a; });
  Binary(
      "div", [](T g, T, T b, T) { return g / b; },
      [](T g, T a, T b, T) { return neg(g * a / square(b)); });
  // d/db a^b = a^b log a, taken as 0 where a == 0 and b >= 0 (PyTorch's convention).
  Binary(
      "pow", [](T g, T a, T b, T) { return g * b * pow(a, b - 1.0); },
      [](T g, T a, T b, T y) { return where(logical_and(eq(a, 0), ge(b, 0)), 0, g * y * log(a)); });
  // Ties split the gradient evenly (PyTorch's convention).
  Binary(
      "maximum", [](T g, T a, T b, T) { return where(lt(a, b), 0, where(eq(a, b), g * 0.5, g)); },
      [](T g, T a, T b, T) { return where(gt(a, b), 0, where(eq(a, b), g * 0.5, g)); });
  Binary(
      "minimum", [](T g, T a, T b, T) { return where(gt(a, b), 0, where(eq(a, b), g * 0.5, g)); },
      [](T g, T a, T b, T) { return where(lt(a, b), 0, where(eq(a, b), g * 0.5, g)); });
  Binary(
      "atan2", [](T g, T a, T b, T) { return g * b / (square(a) + square(b)); },
      [](T g, T a, T b, T) { return neg(g * a / (square(a) + square(b))); });
  SetVjp(Op("where"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& cond = c.input(0);
    return TensorList{Tensor(), ReduceTo(where(cond, g[0], 0), c.input(1)),
                      ReduceTo(where(cond, 0, g[0]), c.input(2))};
  });
  SetJvp(Op("where"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& cond = c.input(0);  // t[0], the condition's, is undefined
    const Tensor &ta = t[1], &tb = t[2];
    if (!tb.defined()) return TensorList{where(cond, ta, 0)};
    if (!ta.defined()) return TensorList{where(cond, 0, tb)};
    return TensorList{where(cond, ta, tb)};
  });
  // clamp passes the gradient / tangent where min <= x <= max (both ends included, as
  // PyTorch).
  SetVjp(Op("clamp"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{where(ClampKeep(c.inputs), g[0], 0)};
  });
  SetJvp(Op("clamp"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{where(ClampKeep(c.inputs), t[0], 0)};
  });
  for (const char* name : {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                           "logical_not"}) {
    MarkNonDifferentiable(Op(name));
  }
  // Outputs that do not depend differentiably on the inputs' values.
  for (const char* name : {"zeros_like", "ones_like", "full_like", "full_like_dtype",
                           "rand_like", "randn_like", "randint", "stop_gradient"}) {
    MarkNonDifferentiable(Op(name));
  }
  // to(dtype): the gradient converts back (none for a non-floating input); the tangent
  // converts forward (none for a non-floating output).
  SetVjp(Op("to"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    return TensorList{IsFloating(x.dtype()) ? to(g[0], x.dtype()) : Tensor()};
  });
  SetJvp(Op("to"), [](const JvpContext& c, const TensorList& t) {
    const DType out = c.output(0).dtype();
    return TensorList{IsFloating(out) ? to(t[0], out) : Tensor()};
  });
}

}  // namespace ft::autograd

// vjp and jvp formulas: activations (gelu, silu, mish, softplus, elu, selu, celu, leaky_relu,
// hardtanh, hardswish, hardsigmoid, logsigmoid, softsign) and the special functions (erf,
// erfc, erfinv, lgamma, digamma, polygamma).
//
// Every op is elementwise in one tensor argument, so its Jacobian is diagonal: one function
// part(v, inputs, output) = f'(x) * v serves as the vjp (v = grad) and the jvp (v = tangent).
// The derivatives are closed forms in public ops, so they differentiate again: lgamma' =
// digamma, digamma' = polygamma(1, .), polygamma(n, .)' = polygamma(n + 1, .), and every order
// of each works. At the kinks they take PyTorch's one-sided choices (see activation_ops.h).
#include <cmath>
#include <functional>

#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "ops/ops.h"

namespace ft::autograd {
namespace {

using internal::Op;

// Part: f'(x) * v, from v (a gradient or a tangent), the op's inputs and its output.
using Part = std::function<Tensor(const Tensor& v, const ValueList& inputs, const Tensor& y)>;

// Elementwise: registers op's vjp and jvp from one Part (its one tensor argument has the only
// gradient and tangent).
void Elementwise(const char* name, Part part) {
  SetVjp(Op(name), [part](const VjpContext& c, const TensorList& g) {
    return TensorList{part(g[0], c.inputs, c.output(0))};
  });
  SetJvp(Op(name), [part](const JvpContext& c, const TensorList& t) {
    return TensorList{part(t[0], c.inputs, c.output(0))};
  });
}

// ExpNonPositive: exp(min(x, 0)), the negative side's exp for the elu family. Clamped so
// that exp never overflows where x > 0: the second derivative sends zero gradients through
// the unselected where() branch, and 0 * inf would be NaN.
Tensor ExpNonPositive(const Tensor& x) { return exp(clamp(x, std::nullopt, 0.0)); }

constexpr double kSqrt1_2 = 0.70710678118654752440;        // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;     // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;    // sqrt(2 / pi)
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;  // 2 / sqrt(pi)
constexpr double kSqrtPiOver2 = 0.88622692545275801365;    // sqrt(pi) / 2
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

}  // namespace

void RegisterActivationFormulas() {
  using V = const ValueList&;
  using T = const Tensor&;
  // gelu: Phi(x) + x phi(x); tanh form: 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2) with
  // t = tanh(k (x + c x^3)).
  Elementwise("gelu", [](T v, V in, T) {
    const Tensor& x = in[0].tensor();
    if (in[1].to_bool()) {
      const double c = 0.044715;
      const Tensor x2 = square(x);
      const Tensor t = tanh((x + x * x2 * c) * kSqrt2OverPi);
      const Tensor d =
          (t + 1.0) * 0.5 + x * (1.0 - square(t)) * (x2 * (3.0 * c) + 1.0) * (0.5 * kSqrt2OverPi);
      return v * d;
    }
    const Tensor cdf = (erf(x * kSqrt1_2) + 1.0) * 0.5;
    const Tensor pdf = exp(square(x) * -0.5) * kInvSqrt2Pi;
    return v * (cdf + x * pdf);
  });
  Elementwise("silu", [](T v, V in, T) {
    const Tensor& x = in[0].tensor();
    const Tensor s = sigmoid(x);
    return v * s * (x * (1.0 - s) + 1.0);
  });
  // mish: tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2), sp = softplus(x) (sp' = sigmoid).
  Elementwise("mish", [](T v, V in, T) {
    const Tensor& x = in[0].tensor();
    const Tensor t = tanh(softplus(x));
    return v * (t + x * sigmoid(x) * (1.0 - square(t)));
  });
  // softplus: sigmoid(beta x), and 1 past the threshold (where the op is x itself).
  Elementwise("softplus", [](T v, V in, T) {
    const Tensor& x = in[0].tensor();
    const double beta = in[1].to_double(), threshold = in[2].to_double();
    const Tensor bx = x * beta;
    return where(gt(bx, threshold), v, v * sigmoid(bx));
  });
  // elu, selu, celu: the negative side's slope at x == 0 (torch's x <= 0 branch).
  Elementwise("elu", [](T v, V in, T) {
    const Tensor& x = in[0].tensor();
    return where(gt(x, 0.0), v, v * ExpNonPositive(x) * in[1].to_double());
  });
  Elementwise("selu", [](T v, V in, T) {
    const Tensor& x = in[0].tensor();
    return where(gt(x, 0.0), v * kSeluScale, v * ExpNonPositive(x) * (kSeluScale * kSeluAlpha));
  });
  Elementwise("celu", [](T v, V in, T) {
    const Tensor& x = in[0].tensor();
    const double alpha = in[1].to_double();
    return where(gt(x, 0.0), v, v * exp(clamp(x, std::nullopt, 0.0) / alpha));
  });
  Elementwise("leaky_relu", [](T v, V in, T) {
    return where(gt(in[0].tensor(), 0.0), v, v * in[1].to_double());
  });
  // hardtanh: 1 strictly inside (min_val, max_val), 0 at and beyond the bounds.
  Elementwise("hardtanh", [](T v, V in, T) {
    const Tensor& x = in[0].tensor();
    return where(logical_and(gt(x, in[1].to_double()), lt(x, in[2].to_double())), v, 0.0);
  });
  // hardswish: 0 below -3, x/3 + 1/2 on [-3, 3], 1 above.
  Elementwise("hardswish", [](T v, V in, T) {
    const Tensor& x = in[0].tensor();
    return where(lt(x, -3.0), 0.0, where(le(x, 3.0), v * (x / 3.0 + 0.5), v));
  });
  // hardsigmoid: 1/6 strictly inside (-3, 3), 0 elsewhere.
  Elementwise("hardsigmoid", [](T v, V in, T) {
    const Tensor& x = in[0].tensor();
    return where(logical_and(gt(x, -3.0), lt(x, 3.0)), v / 6.0, 0.0);
  });
  Elementwise("logsigmoid", [](T v, V in, T) { return v * sigmoid(neg(in[0].tensor())); });
  Elementwise("softsign", [](T v, V in, T) { return v / square(abs(in[0].tensor()) + 1.0); });
  Elementwise("erf",
              [](T v, V in, T) { return v * exp(neg(square(in[0].tensor()))) * kTwoOverSqrtPi; });
  Elementwise("erfc",
              [](T v, V in, T) { return v * exp(neg(square(in[0].tensor()))) * -kTwoOverSqrtPi; });
  // erfinv: 1 / erf'(y) = sqrt(pi)/2 exp(y^2) at the output y.
  Elementwise("erfinv", [](T v, V, T y) { return v * exp(square(y)) * kSqrtPiOver2; });
  MarkOutputValuesRead(Op("erfinv"));
  Elementwise("lgamma", [](T v, V in, T) { return v * digamma(in[0].tensor()); });
  Elementwise("digamma", [](T v, V in, T) { return v * polygamma(1, in[0].tensor()); });
  Elementwise("polygamma",
              [](T v, V in, T) { return v * polygamma(in[0].to_int() + 1, in[1].tensor()); });
}

}  // namespace ft::autograd

#include "tensor/activation_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "tensor/copy.h"
#include "tensor/kernel_util.h"
#include "tensor/unary_kernels.h"
#include "tensor/vecmath.h"

namespace ft::kernels {
namespace {

using internal::UnaryLoop;

constexpr double kPi = 3.14159265358979323846;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// FloatingActivation holds the dtype rules every activation here shares: int64 computes in
// float32 (PyTorch's int-to-float promotion), bool is rejected. loop(tag, out, in) fills the
// contiguous `out` from `in` of a floating dtype (tag's type).
template <typename Loop>
Tensor FloatingActivation(const char* op, const Tensor& x, Loop loop) {
  if (x.dtype() == kBool) {
    ThrowError(op, ": not supported for bool tensors (shape ", ShapeToString(x.sizes()),
               "); convert with to(kFloat32) first");
  }
  Tensor converted;
  const Tensor& in = IsFloating(x.dtype()) ? x : (converted = kernels::to(x, kDefaultFloat));
  Tensor out = EmptyContiguous(in.sizes(), in.dtype());
  VisitDType(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) loop(tag, out, in);
  });
  return out;
}

// Pointwise applies the scalar function f (called with the element's own type, float or
// double) to every element. The functions here are scalar code (std::erf, branches), so the
// loop is Eigen's scalar unaryExpr.
template <typename F>
Tensor Pointwise(const char* op, const Tensor& x, F f) {
  return FloatingActivation(op, x, [&f](auto tag, const Tensor& out, const Tensor& in) {
    using T = typename decltype(tag)::type;
    UnaryLoop<T, T>(out, in, [&f](const auto& a) {
      return a.unaryExpr([&f](T v) { return static_cast<T>(f(v)); });
    });
  });
}

// VecPointwise is Pointwise for activations built from tensor/vecmath.h's vector functions:
// `strip(const T* in, T* out, int64_t n)` (generic over T) computes n elements, and runs on
// every contiguous piece of x (StripLoop).
template <typename Strip>
Tensor VecPointwise(const char* op, const Tensor& x, Strip strip) {
  return FloatingActivation(op, x, [&strip](auto tag, const Tensor& out, const Tensor& in) {
    using T = typename decltype(tag)::type;
    internal::StripLoop<T>(out, in, strip);
  });
}

// InL1Strips runs an activation as passes over strips of kStrip elements that stay in L1:
// before(v, t, m) writes the argument of `fn` into the scratch t, fn runs on t in place
// (vector code), and after(v, t, o, m) combines v and fn's result into o. `o` may equal `v`:
// after reads v[i] before writing o[i].
constexpr int64_t kStrip = 256;

template <typename T, typename Before, typename After>
void InL1Strips(const T* in, T* out, int64_t n, vecmath::Fn fn, Before before, After after) {
  T t[kStrip];
  for (int64_t s = 0; s < n; s += kStrip) {
    const int64_t m = std::min(kStrip, n - s);
    before(in + s, t, m);
    vecmath::Apply(fn, t, t, m);
    after(in + s, static_cast<const T*>(t), out + s, m);
  }
}

// Softplus with PyTorch's cut-over: log(1 + e^v), or v itself past `threshold`.
template <typename T>
T Softplus(T v, T threshold) {
  return v > threshold ? v : std::log1p(std::exp(v));
}

// ErfinvDouble: the inverse of erf on [-1, 1]: Giles' single-precision approximation
// ("Approximating the erfinv function", GPU Computing Gems, 2010) as the start, then up to
// three Newton steps on erf(r) = y, each roughly doubling the correct digits, to ~1 ulp.
double ErfinvDouble(double y) {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return kNaN;
  if (y == 1.0) return kInf;
  if (y == -1.0) return -kInf;
  if (y == 0.0) return y;  // keeps the sign of zero
  double w = -std::log((1.0 - y) * (1.0 + y));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double r = p * y;
  // Newton on f(r) = erf(r) - y, f'(r) = 2/sqrt(pi) e^{-r^2}. Near |y| = 1 the residual is
  // taken from erfc, which keeps its relative precision there.
  const double two_over_sqrt_pi = 1.12837916709551257390;
  for (int i = 0; i < 3; ++i) {
    // For |y| > 0.5: erf(r) - y = sign(y) ((1 - |y|) - erfc(|r|)) (r and y share a sign).
    const double ay = std::fabs(y);
    const double residual = ay > 0.5
                                ? (y > 0.0 ? 1.0 : -1.0) * ((1.0 - ay) - std::erfc(std::fabs(r)))
                                : std::erf(r) - y;
    const double step = residual / (two_over_sqrt_pi * std::exp(-r * r));
    if (!std::isfinite(step)) break;
    r -= step;
  }
  return r;
}

// DigammaDouble: psi(x). Poles at 0 and the negative integers: -inf at +0 and +inf at -0
// (PyTorch's and SciPy's convention), NaN at the negative integers. Negative x reflects
// (psi(1 - x) - pi / tan(pi x)); positive x steps up to >= 10 by psi(x) = psi(x + 1) - 1/x,
// then the asymptotic series in 1/x^2.
double DigammaDouble(double x) {
  if (std::isnan(x)) return x;
  if (x == 0.0) return std::signbit(x) ? kInf : -kInf;
  if (x == -kInf) return kNaN;
  if (x < 0.0) {
    if (x == std::floor(x)) return kNaN;
    // pi / tan(pi x) with the argument reduced to (-1, 1) first, so tan keeps its precision.
    const double frac = x - std::floor(x);  // in (0, 1)
    return DigammaDouble(1.0 - x) - kPi / std::tan(kPi * frac);
  }
  double result = 0.0;
  while (x < 10.0) {
    result -= 1.0 / x;
    x += 1.0;
  }
  if (x == kInf) return kInf;
  // psi(x) ~ log x - 1/(2x) - sum B_2k / (2k x^2k).
  static constexpr double kB[] = {8.33333333333333333333e-2, -2.10927960927960927961e-2,
                                  7.57575757575757575758e-3, -4.16666666666666666667e-3,
                                  3.96825396825396825397e-3, -8.33333333333333333333e-3,
                                  8.33333333333333333333e-2};
  // kB[k] = B_{2(7-k)} / (2 (7-k)): Horner in z = 1/x^2 from the highest power down.
  const double z = 1.0 / (x * x);
  double poly = 0.0;
  for (double b : kB) poly = poly * z + b;
  poly *= z;
  return result + std::log(x) - 0.5 / x - poly;
}

// HurwitzZeta: zeta(s, q) = sum_{k >= 0} (k + q)^-s for s > 1 (an integer here, s = n + 1):
// the first terms summed directly, then the Euler-Maclaurin tail with Bernoulli terms. A pole
// when q is 0 or a negative integer.
double HurwitzZeta(double s, double q) {
  if (std::isnan(q)) return q;
  if (q <= 0.0 && q == std::floor(q)) return kInf;
  if (q == kInf) return 0.0;
  if (q == -kInf) return kNaN;
  // The direct sum below takes about -q terms for a negative q (a hang for q = -1e15 + 0.5).
  // Far left of 0, move those terms to the right instead: with m = -floor(q) and
  // f = q + m in (0, 1), the terms (q + k)^-s, k < m, are (-1)^s (j + 1 - f)^-s, j < m, so
  // for an integer s
  //   zeta(s, q) = (-1)^s (zeta(s, 1 - f) - zeta(s, 1 - q)) + zeta(s, f),
  // each term with a positive argument (a few direct terms each).
  if (q < -1e4) {
    const double f = q - std::floor(q);
    const double sign = std::fmod(s, 2.0) == 0.0 ? 1.0 : -1.0;
    return sign * (HurwitzZeta(s, 1.0 - f) - HurwitzZeta(s, 1.0 - q)) + HurwitzZeta(s, f);
  }
  // (2k)! / B_2k for k = 1..12: the Euler-Maclaurin denominators.
  static constexpr double kA[] = {12.0,
                                  -720.0,
                                  30240.0,
                                  -1209600.0,
                                  47900160.0,
                                  -1.8924375803183791606e9,
                                  7.47242496e10,
                                  -2.950130727918164224e12,
                                  1.1646782814350067249e14,
                                  -4.5979787224074726105e15,
                                  1.8152105401943546773e17,
                                  -7.1661652561756670113e18};
  constexpr double kEps = 1.11022302462515654042e-16;
  double sum = std::pow(q, -s);
  double a = q;
  double b = 0.0;
  int i = 0;
  while (i < 9 || a <= 9.0) {
    ++i;
    a += 1.0;
    b = std::pow(a, -s);
    sum += b;
    if (std::fabs(b / sum) < kEps) return sum;
  }
  const double w = a;
  sum += b * w / (s - 1.0);
  sum -= 0.5 * b;
  double factor = 1.0;
  double k = 0.0;
  for (double denominator : kA) {
    factor *= s + k;
    b /= w;
    const double term = factor * b / denominator;
    sum += term;
    if (std::fabs(term / sum) < kEps) break;
    k += 1.0;
    factor *= s + k;
    b /= w;
    k += 1.0;
  }
  return sum;
}

// PolygammaDouble: psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1.
double PolygammaDouble(int64_t n, double x) {
  if (n == 0) return DigammaDouble(x);
  double factorial = 1.0;  // n! (inf past 170!, as the result then is)
  for (int64_t i = 2; i <= n && factorial < kInf; ++i) factorial *= static_cast<double>(i);
  const double sign = (n % 2 == 1) ? 1.0 : -1.0;
  return sign * factorial * HurwitzZeta(static_cast<double>(n) + 1.0, x);
}

}  // namespace

// The activations made of exp, expm1, log1p, tanh or erfc run those on vecmath's vector
// code (InL1Strips), as kernels::exp and the others do, so they are as accurate as those ops
// (1 ulp) and take the vector path of the CPU capability set.
Tensor gelu(const Tensor& x, bool tanh_approximation) {
  using vecmath::Fn;
  if (tanh_approximation) {
    // x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
    return VecPointwise("gelu", x, [](const auto* in, auto* out, int64_t n) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(in)>>;
      const T k = static_cast<T>(0.79788456080286535588);  // sqrt(2 / pi)
      InL1Strips(
          in, out, n, Fn::kTanh,
          [k](const T* v, T* t, int64_t m) {
            for (int64_t i = 0; i < m; ++i) t[i] = k * (v[i] + T(0.044715) * v[i] * v[i] * v[i]);
          },
          [](const T* v, const T* t, T* o, int64_t m) {
            for (int64_t i = 0; i < m; ++i) o[i] = T(0.5) * v[i] * (T(1) + t[i]);
          });
    });
  }
  // x * Phi(x) with Phi(x) = erfc(-x / sqrt 2) / 2, accurate for negative x too.
  return VecPointwise("gelu", x, [](const auto* in, auto* out, int64_t n) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(in)>>;
    InL1Strips(
        in, out, n, Fn::kErfc,
        [](const T* v, T* t, int64_t m) {
          for (int64_t i = 0; i < m; ++i) t[i] = -v[i] * static_cast<T>(0.70710678118654752440);
        },
        [](const T* v, const T* t, T* o, int64_t m) {
          for (int64_t i = 0; i < m; ++i) o[i] = T(0.5) * v[i] * t[i];
        });
  });
}
Tensor silu(const Tensor& x) {
  // x / (1 + e^-x).
  return VecPointwise("silu", x, [](const auto* in, auto* out, int64_t n) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(in)>>;
    InL1Strips(
        in, out, n, vecmath::Fn::kExp,
        [](const T* v, T* t, int64_t m) {
          for (int64_t i = 0; i < m; ++i) t[i] = -v[i];
        },
        [](const T* v, const T* t, T* o, int64_t m) {
          for (int64_t i = 0; i < m; ++i) o[i] = v[i] / (T(1) + t[i]);
        });
  });
}
Tensor mish(const Tensor& x) {
  return Pointwise("mish", x, [](auto v) { return v * std::tanh(Softplus(v, decltype(v)(20))); });
}
Tensor softplus(const Tensor& x, double beta, double threshold) {
  return Pointwise("softplus", x, [beta, threshold](auto v) {
    using T = decltype(v);
    const T bv = v * static_cast<T>(beta);
    return bv > static_cast<T>(threshold) ? v : static_cast<T>(std::log1p(std::exp(bv)) / beta);
  });
}
Tensor elu(const Tensor& x, double alpha) {
  // x for x > 0, alpha * (e^x - 1) otherwise.
  return VecPointwise("elu", x, [alpha](const auto* in, auto* out, int64_t n) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(in)>>;
    InL1Strips(
        in, out, n, vecmath::Fn::kExpm1,
        [](const T* v, T* t, int64_t m) { std::copy(v, v + m, t); },
        [a = static_cast<T>(alpha)](const T* v, const T* t, T* o, int64_t m) {
          for (int64_t i = 0; i < m; ++i) o[i] = v[i] > T(0) ? v[i] : a * t[i];
        });
  });
}
Tensor selu(const Tensor& x) {
  // scale * elu(x, alpha) with the self-normalizing constants.
  return VecPointwise("selu", x, [](const auto* in, auto* out, int64_t n) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(in)>>;
    InL1Strips(
        in, out, n, vecmath::Fn::kExpm1,
        [](const T* v, T* t, int64_t m) { std::copy(v, v + m, t); },
        [](const T* v, const T* t, T* o, int64_t m) {
          const T alpha = static_cast<T>(1.6732632423543772848170429916717);
          const T scale = static_cast<T>(1.0507009873554804934193349852946);
          for (int64_t i = 0; i < m; ++i) o[i] = scale * (v[i] > T(0) ? v[i] : alpha * t[i]);
        });
  });
}
Tensor celu(const Tensor& x, double alpha) {
  if (alpha == 0.0) ThrowError("celu: alpha cannot be 0 (it divides x)");
  // x for x > 0, alpha * (e^(x / alpha) - 1) otherwise.
  return VecPointwise("celu", x, [alpha](const auto* in, auto* out, int64_t n) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(in)>>;
    const T a = static_cast<T>(alpha);
    InL1Strips(
        in, out, n, vecmath::Fn::kExpm1,
        [a](const T* v, T* t, int64_t m) {
          for (int64_t i = 0; i < m; ++i) t[i] = v[i] / a;
        },
        [a](const T* v, const T* t, T* o, int64_t m) {
          for (int64_t i = 0; i < m; ++i) o[i] = v[i] > T(0) ? v[i] : a * t[i];
        });
  });
}
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return Pointwise("leaky_relu", x, [negative_slope](auto v) {
    using T = decltype(v);
    return v > T(0) ? v : v * static_cast<T>(negative_slope);
  });
}
Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  // min(max(x, min_val), max_val): with min_val > max_val every element is max_val (as
  // torch's clamp); NaN stays NaN.
  return Pointwise("hardtanh", x, [min_val, max_val](auto v) {
    using T = decltype(v);
    if (std::isnan(v)) return v;
    return std::min(std::max(v, static_cast<T>(min_val)), static_cast<T>(max_val));
  });
}
Tensor hardswish(const Tensor& x) {
  return Pointwise("hardswish", x, [](auto v) {
    using T = decltype(v);
    if (std::isnan(v)) return v;
    return v * std::min(std::max(v + T(3), T(0)), T(6)) / T(6);
  });
}
Tensor hardsigmoid(const Tensor& x) {
  return Pointwise("hardsigmoid", x, [](auto v) {
    using T = decltype(v);
    if (std::isnan(v)) return v;
    return std::min(std::max(v + T(3), T(0)), T(6)) / T(6);
  });
}
Tensor logsigmoid(const Tensor& x) {
  // -log(1 + e^-x) = min(x, 0) - log1p(e^-|x|): no overflow for either sign.
  return Pointwise("logsigmoid", x, [](auto v) {
    using T = decltype(v);
    if (std::isnan(v)) return v;
    return std::min(v, T(0)) - std::log1p(std::exp(-std::fabs(v)));
  });
}
Tensor softsign(const Tensor& x) {
  return Pointwise("softsign", x, [](auto v) { return v / (decltype(v)(1) + std::fabs(v)); });
}

Tensor erf(const Tensor& x) { return internal::VecMathUnary("erf", x, vecmath::Fn::kErf); }
Tensor erfc(const Tensor& x) { return internal::VecMathUnary("erfc", x, vecmath::Fn::kErfc); }
Tensor erfinv(const Tensor& x) {
  return Pointwise("erfinv", x, [](auto v) { return ErfinvDouble(static_cast<double>(v)); });
}
Tensor lgamma(const Tensor& x) {
  return internal::VecMathUnary("lgamma", x, vecmath::Fn::kLgamma);
}
Tensor digamma(const Tensor& x) {
  return Pointwise("digamma", x, [](auto v) { return DigammaDouble(static_cast<double>(v)); });
}
Tensor polygamma(int64_t n, const Tensor& x) {
  if (n < 0) {
    ThrowError("polygamma: n must be a non-negative integer, got n = ", n);
  }
  return Pointwise("polygamma", x,
                   [n](auto v) { return PolygammaDouble(n, static_cast<double>(v)); });
}

}  // namespace ft::kernels

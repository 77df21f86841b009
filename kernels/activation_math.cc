#include "kernels/activation_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu/vecmath.h"

namespace ft::activation {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ErfinvDouble: the inverse of erf on [-1, 1]: Giles' single-precision approximation
// ("Approximating the erfinv function", GPU Computing Gems, 2010) as the start, then four
// Newton steps, each roughly doubling the correct digits, to ~1 ulp.
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
  // For |y| <= 0.5, Newton on f(r) = erf(r) - y, f'(r) = 2/sqrt(pi) e^{-r^2}. Above, on
  // g(|r|) = log(erfc(|r|)) - log(1 - |y|) (1 - |y| is exact), g' = -2/sqrt(pi) e^{-r^2} /
  // erfc(|r|): g is nearly quadratic in |r|, so this converges even where the start is a few
  // percent off (|y| within 1e-10 of 1, beyond the single-precision range Giles fitted), where
  // Newton on erfc itself crawls (three of its steps left erfinv(1 - 1e-14) 0.2% off).
  const double two_over_sqrt_pi = 1.12837916709551257390;
  const double ay = std::fabs(y);
  for (int i = 0; i < 4; ++i) {
    double step;
    if (ay > 0.5) {
      const double e = std::erfc(std::fabs(r));  // r and y share a sign
      step = (y > 0.0 ? 1.0 : -1.0) * (std::log(1.0 - ay) - std::log(e)) * e /
             (two_over_sqrt_pi * std::exp(-r * r));
    } else {
      step = (std::erf(r) - y) / (two_over_sqrt_pi * std::exp(-r * r));
    }
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
    // pi / tan(pi x) with the argument reduced to x minus its nearest integer first, which is
    // exact and in [-1/2, 1/2], so tan keeps its precision on both sides of every pole (x -
    // floor(x) rounds near 0-: it made digamma(-1e-20) 2.6e16 instead of 1e20).
    const double d = x - std::round(x);
    return DigammaDouble(1.0 - x) - kPi / std::tan(kPi * d);
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
  if (q == -kInf) return kNaN;  // before the poles' test, which -inf (== floor(-inf)) passes
  if (q <= 0.0 && q == std::floor(q)) return kInf;
  if (q == kInf) return 0.0;
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


// Strips of kStrip elements: a function's intermediate values stay in the L1 cache between
// its passes (the argument, then vecmath's function over it in place, then the combination).
constexpr int64_t kStrip = 256;

// ForStrips calls body(in + s, out + s, m) for the strips [s, s + m) of [0, n).
template <typename T, typename Body>
void ForStrips(const T* in, T* out, int64_t n, Body body) {
  for (int64_t s = 0; s < n; s += kStrip) body(in + s, out + s, std::min(kStrip, n - s));
}

// InPlace runs vecmath's fn over t[0, m) in place. Its callers write t[0, m) first; GCC 12
// at -O2 cannot see that through the strip loops and warns that a strip array passed as
// `const T*` may be uninitialized (a false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
template <typename T>
void InPlace(vecmath::Fn fn, T* t, int64_t m) {
  vecmath::Apply(fn, t, t, m);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// Each Apply below reads v[i] before it writes o[i], so `in` may equal `out`.
template <typename T>
void GeluExact(const T* in, T* out, int64_t n) {
  // x * Phi(x) with Phi(x) = erfc(-x / sqrt 2) / 2, accurate for negative x too.
  ForStrips(in, out, n, [](const T* v, T* o, int64_t m) {
    T t[kStrip];
    for (int64_t i = 0; i < m; ++i) t[i] = -v[i] * static_cast<T>(0.70710678118654752440);
    InPlace(vecmath::Fn::kErfc, t, m);
    for (int64_t i = 0; i < m; ++i) o[i] = T(0.5) * v[i] * t[i];
  });
}

template <typename T>
void GeluTanh(const T* in, T* out, int64_t n) {
  // x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
  ForStrips(in, out, n, [](const T* v, T* o, int64_t m) {
    const T k = static_cast<T>(0.79788456080286535588);  // sqrt(2 / pi)
    T t[kStrip];
    for (int64_t i = 0; i < m; ++i) t[i] = k * (v[i] + T(0.044715) * v[i] * v[i] * v[i]);
    InPlace(vecmath::Fn::kTanh, t, m);
    for (int64_t i = 0; i < m; ++i) o[i] = T(0.5) * v[i] * (T(1) + t[i]);
  });
}

template <typename T>
void Silu(const T* in, T* out, int64_t n) {
  // x / (1 + e^-x).
  ForStrips(in, out, n, [](const T* v, T* o, int64_t m) {
    T t[kStrip];
    for (int64_t i = 0; i < m; ++i) t[i] = -v[i];
    InPlace(vecmath::Fn::kExp, t, m);
    for (int64_t i = 0; i < m; ++i) o[i] = v[i] / (T(1) + t[i]);
  });
}

// SoftplusInto writes log(1 + e^(v * beta)) into t[0, m) (exp, then log1p, in place); the
// callers replace it past their threshold, where e^(v * beta) may overflow.
template <typename T>
void SoftplusInto(const T* v, T* t, int64_t m, T beta) {
  for (int64_t i = 0; i < m; ++i) t[i] = v[i] * beta;
  InPlace(vecmath::Fn::kExp, t, m);
  InPlace(vecmath::Fn::kLog1p, t, m);
}

template <typename T>
void Mish(const T* in, T* out, int64_t n) {
  // x * tanh(softplus(x)), softplus with beta 1 and threshold 20.
  ForStrips(in, out, n, [](const T* v, T* o, int64_t m) {
    T t[kStrip];
    SoftplusInto(v, t, m, T(1));
    for (int64_t i = 0; i < m; ++i) t[i] = v[i] > T(20) ? v[i] : t[i];
    InPlace(vecmath::Fn::kTanh, t, m);
    for (int64_t i = 0; i < m; ++i) o[i] = v[i] * t[i];
  });
}

template <typename T>
void Softplus(const T* in, T* out, int64_t n, double beta, double threshold) {
  // log(1 + e^(beta x)) / beta, and x itself where beta x > threshold (PyTorch's cut-over).
  ForStrips(in, out, n, [beta, threshold](const T* v, T* o, int64_t m) {
    T t[kStrip];
    SoftplusInto(v, t, m, static_cast<T>(beta));
    const T cut = static_cast<T>(threshold);
    for (int64_t i = 0; i < m; ++i) {
      o[i] = v[i] * static_cast<T>(beta) > cut ? v[i] : static_cast<T>(t[i] / beta);
    }
  });
}

// EluFamily: scale * (x for x > 0, alpha * (e^(x / divisor) - 1) otherwise); elu has
// divisor 1 and scale 1 (no division or scaling is applied then, so the bits are those of
// the plain formula).
template <typename T>
void EluFamily(const T* in, T* out, int64_t n, T alpha, T divisor, T scale) {
  ForStrips(in, out, n, [=](const T* v, T* o, int64_t m) {
    T t[kStrip];
    if (divisor == T(1)) {
      std::copy(v, v + m, t);
    } else {
      for (int64_t i = 0; i < m; ++i) t[i] = v[i] / divisor;
    }
    InPlace(vecmath::Fn::kExpm1, t, m);
    if (scale == T(1)) {
      for (int64_t i = 0; i < m; ++i) o[i] = v[i] > T(0) ? v[i] : alpha * t[i];
    } else {
      for (int64_t i = 0; i < m; ++i) o[i] = scale * (v[i] > T(0) ? v[i] : alpha * t[i]);
    }
  });
}

template <typename T>
void Logsigmoid(const T* in, T* out, int64_t n) {
  // -log(1 + e^-x) = min(x, 0) - log1p(e^-|x|): no overflow for either sign.
  ForStrips(in, out, n, [](const T* v, T* o, int64_t m) {
    T t[kStrip];
    for (int64_t i = 0; i < m; ++i) t[i] = -std::fabs(v[i]);
    InPlace(vecmath::Fn::kExp, t, m);
    InPlace(vecmath::Fn::kLog1p, t, m);
    for (int64_t i = 0; i < m; ++i) {
      o[i] = std::isnan(v[i]) ? v[i] : std::min(v[i], T(0)) - t[i];
    }
  });
}

// Elementwise applies the scalar f to every element (the scalar special functions).
template <typename T, typename F>
void Elementwise(const T* in, T* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(f(in[i]));
}

template <typename T>
void ApplyAs(Fn fn, const Params& p, const T* in, T* out, int64_t n) {
  switch (fn) {
    case Fn::kGelu:
      if (p.a != 0.0) {
        GeluTanh(in, out, n);
      } else {
        GeluExact(in, out, n);
      }
      return;
    case Fn::kSilu:
      return Silu(in, out, n);
    case Fn::kMish:
      return Mish(in, out, n);
    case Fn::kSoftplus:
      return Softplus(in, out, n, p.a, p.b);
    case Fn::kElu:
      return EluFamily(in, out, n, static_cast<T>(p.a), T(1), T(1));
    case Fn::kSelu:
      return EluFamily(in, out, n, static_cast<T>(1.6732632423543772848170429916717), T(1),
                       static_cast<T>(1.0507009873554804934193349852946));
    case Fn::kCelu:
      return EluFamily(in, out, n, static_cast<T>(p.a), static_cast<T>(p.a), T(1));
    // The piecewise-linear functions run on vecmath's vector code (their definitions are
    // vecmath.h's ParamFn and Fn comments: the same steps as torch's scalar forms).
    case Fn::kLeakyRelu:
      return vecmath::Apply(vecmath::ParamFn::kLeakyRelu, static_cast<T>(p.a), T(0), in, out, n);
    case Fn::kHardtanh:
      // With min_val > max_val every element is max_val (as torch's clamp); NaN stays NaN.
      return vecmath::Apply(vecmath::ParamFn::kHardtanh, static_cast<T>(p.a),
                            static_cast<T>(p.b), in, out, n);
    case Fn::kHardswish:
      return vecmath::Apply(vecmath::Fn::kHardswish, in, out, n);
    case Fn::kHardsigmoid:
      return vecmath::Apply(vecmath::Fn::kHardsigmoid, in, out, n);
    case Fn::kLogsigmoid:
      return Logsigmoid(in, out, n);
    case Fn::kSoftsign:
      return vecmath::Apply(vecmath::Fn::kSoftsign, in, out, n);
    case Fn::kErfinv:
      return Elementwise(in, out, n, [](T v) { return ErfinvDouble(static_cast<double>(v)); });
    case Fn::kDigamma:
      return Elementwise(in, out, n, [](T v) { return DigammaDouble(static_cast<double>(v)); });
    case Fn::kPolygamma:
      return Elementwise(in, out, n, [order = p.n](T v) {
        return PolygammaDouble(order, static_cast<double>(v));
      });
    case Fn::kClamp:
      // max(x, lo) then min(., hi), PyTorch's order; NaN in x or in a bound propagates. An
      // absent bound is an infinite one, which no comparison passes.
      return vecmath::Apply(vecmath::ParamFn::kClamp, ClampBound<T>(p.a), ClampBound<T>(p.b),
                            in, out, n);
  }
}

}  // namespace

absl::string_view FnName(Fn fn) {
  static constexpr const char* kNames[] = {
      "gelu",       "silu",      "mish",        "softplus",   "elu",      "selu",
      "celu",       "leaky_relu", "hardtanh",   "hardswish",  "hardsigmoid", "logsigmoid",
      "softsign",   "erfinv",    "digamma",     "polygamma", "clamp"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == kNumFns);
  return kNames[static_cast<int>(fn)];
}

void Apply(Fn fn, const Params& params, const float* in, float* out, int64_t n) {
  ApplyAs(fn, params, in, out, n);
}
void Apply(Fn fn, const Params& params, const double* in, double* out, int64_t n) {
  ApplyAs(fn, params, in, out, n);
}

}  // namespace ft::activation

// Direct tests of the activation kernels (kernels/activation.h): gelu ... softsign, erf, erfc,
// erfinv, lgamma, digamma and polygamma on dense tensors, without dispatch. Covers values and
// IEEE special values in float32 and float64, the scalar arguments (alpha, beta, threshold,
// bounds, n), the dtype rules (int64 computes in float32, bool throws), layouts (transposed,
// stepped, offset and stride-0 views), rank 0, size-0 and size-1 dims, inputs past the
// intra-op threading threshold, and the documented errors. (kernels/activation_math_test.cc
// covers the strip functions' accuracy and position independence.)
//
// Oracles, each element recomputed from the input's own values (to_vector<double>()):
// - the closed form of each activation in double with <cmath> (std::erfc, std::expm1, ...),
//   within a few ulps of the dtype plus the conditioning of the argument the formula rounds;
// - erfinv: bisection of std::erf / std::erfc in long double;
// - digamma and polygamma: the recurrence psi^(n)(x) = psi^(n)(x + 1) - (-1)^n n! / x^(n+1)
//   up to x >= 60, then the asymptotic series, in long double; checked itself against the
//   closed forms at 1/4, 1/2, 3/4 and 1 (Euler's gamma, log 2, pi, Catalan's G, zeta(3));
// - PyTorch's values (tests/fixtures/torch/activation, tools/torch_fixtures/activation.py).
#include "kernels/activation.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "interop/npy.h"
#include "kernels/test_helpers.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::ScopedThreads;
using ::ft::testing::SteppedView;
using ::ft::testing::TransposedView;
using ::ft::testing::Uniform;

using LD = long double;
using KernelFn = std::function<Tensor(const Tensor&)>;
using Oracle = std::function<double(double)>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr LD kPi = 3.141592653589793238462643383279502884L;
constexpr LD kEulerGamma = 0.577215664901532860606512090082402431L;
constexpr LD kLn2 = 0.693147180559945309417232121458176568L;
constexpr LD kCatalan = 0.915965594177219015054603514932384110L;
constexpr LD kZeta3 = 1.202056903159594285399738161511449991L;

// Enough elements for two chunks of the intra-op split (ParallelRun splits from two grains of
// kElementwiseGrain = 65536, tensor/loops.h), and not a multiple of a vector.
constexpr int64_t kLarge = 2 * 65536 + 123;

// ---- The oracles ----

double Logsigmoid(double x) {
  // log(1 / (1 + e^-x)), on the side where e^(-|x|) cannot overflow.
  return x < 0 ? x - std::log1p(std::exp(x)) : -std::log1p(std::exp(-x));
}

// ErfinvOracle: r with erf(r) = y, by bisection in long double: on erf(r) = |y| for
// |y| <= 0.5, on erfc(r) = 1 - |y| (exact in double) above, where erf is too flat. Below 1e-5
// the series sqrt(pi) / 2 (y + pi y^3 / 12) is exact to long double precision.
double ErfinvOracle(double y) {
  if (std::isnan(y) || std::fabs(y) > 1) return kNaN;
  if (std::fabs(y) == 1) return y * kInf;
  if (y == 0) return y;
  const LD a = std::fabs(y);
  LD r;
  if (a < 1e-5) {
    r = std::sqrt(kPi) / 2 * (a + kPi * a * a * a / 12);
  } else {
    LD lo = 0, hi = 10;
    const LD tail = 1 - a;  // exact: a is a double in [0.5, 1)
    for (int i = 0; i < 200; ++i) {
      const LD mid = (lo + hi) / 2;
      const bool below = a <= 0.5 ? std::erf(mid) < a : std::erfc(mid) > tail;
      (below ? lo : hi) = mid;
    }
    r = (lo + hi) / 2;
  }
  return static_cast<double>(y < 0 ? -r : r);
}

// PolygammaOracle: psi^(n)(x) (n = 0: digamma). Poles at 0 and the negative integers
// (digamma: -inf at +0, +inf at -0, NaN at the negative integers; n >= 1: (-1)^(n+1) inf).
// Otherwise the recurrence up to x >= 60 in long double, then Abramowitz & Stegun 6.3.18
// (n = 0) or 6.4.11 (n >= 1) to the B_14 term.
double PolygammaOracle(int n, double xd) {
  if (std::isnan(xd)) return xd;
  if (xd == kInf) return n == 0 ? kInf : 0.0;
  if (xd == -kInf) return kNaN;
  if (xd <= 0 && xd == std::floor(xd)) {
    if (n == 0) return xd == 0 ? (std::signbit(xd) ? kInf : -kInf) : kNaN;
    return n % 2 == 1 ? kInf : -kInf;
  }
  LD factorial = 1;  // n!
  for (int i = 2; i <= n; ++i) factorial *= i;
  const LD sign_n = n % 2 == 0 ? 1 : -1;  // (-1)^n
  LD x = xd;
  LD acc = 0;
  while (x < 60) {
    LD power = x;  // x^(n+1)
    for (int i = 0; i < n; ++i) power *= x;
    acc -= sign_n * factorial / power;
    x += 1;
  }
  static constexpr LD kB[] = {1.0L / 6,  -1.0L / 30,     1.0L / 42, -1.0L / 30,
                              5.0L / 66, -691.0L / 2730, 7.0L / 6};  // B_2 ... B_14
  LD series;
  if (n == 0) {
    series = std::log(x) - 1 / (2 * x);
    LD x2k = 1;
    for (int k = 1; k <= 7; ++k) {
      x2k *= x * x;
      series -= kB[k - 1] / (2 * k * x2k);
    }
  } else {
    LD xn = 1;  // x^n
    for (int i = 0; i < n; ++i) xn *= x;
    series = factorial / n / xn + factorial / (2 * xn * x);
    LD x2k = 1;
    for (int k = 1; k <= 7; ++k) {
      x2k *= x * x;
      LD ratio = 1;  // (2k + n - 1)! / (2k)!
      for (int j = 2 * k + 1; j <= 2 * k + n - 1; ++j) ratio *= j;
      series += kB[k - 1] * ratio / (xn * x2k);
    }
    if (n % 2 == 0) series = -series;  // (-1)^(n+1)
  }
  return static_cast<double>(acc + series);
}

// RecurrenceScale: the size of the terms a recurrence or series for psi^(n) adds up before
// they cancel to psi^(n)(x): n! sum |x + k|^-(n+1) over k >= 0 with x + k < 10, and log x
// beyond (digamma). Any such evaluation (the kernel's, PyTorch's) loses eps times this, e.g.
// psi^(2)(-3.5) ~ 0.08 out of terms of +-16.
double RecurrenceScale(int n, double x) {
  if (!std::isfinite(x)) return 0;
  double factorial = 1;
  for (int i = 2; i <= n; ++i) factorial *= i;
  double sum = 0;
  for (double t = x; t < 10; t += 1) {
    double power = std::fabs(t);  // |t|^(n+1)
    for (int i = 0; i < n; ++i) power *= std::fabs(t);
    sum += factorial / power;
  }
  return sum + (n == 0 ? std::fabs(std::log(std::max(x, 10.0))) : 0.0);
}

// ---- Comparison with an oracle ----

double Epsilon(DType dtype) {
  return dtype == kFloat32 ? std::numeric_limits<float>::epsilon()
                           : std::numeric_limits<double>::epsilon();
}

double RoundTo(double v, DType dtype) {
  return dtype == kFloat32 ? static_cast<double>(static_cast<float>(v)) : v;
}

struct Case {
  std::string name;
  KernelFn run;
  Oracle f;
  double lo, hi;                // random points in [lo, hi]
  std::vector<double> special;  // kinks, thresholds, poles (NaN and +-inf are added to all)
  // The formula rounds a multiple of x first (x / sqrt 2, beta x, x / alpha): an error of an
  // ulp in the argument, which f amplifies by its condition number |x f'(x) / f(x)|.
  bool conditioning = false;
  // An absolute allowance beyond |f(x)| (times the dtype's eps), where f's usual evaluation
  // cancels: lgamma near its zeros, gelu's 1 + tanh for x < 0, the recurrences of digamma
  // and polygamma (RecurrenceScale).
  std::function<double(double)> absolute = nullptr;
};

// Within this many eps of max(|f(x)|, conditioning): the functions are a few ulps each
// (docs/api.md), composed in two or three rounded steps.
constexpr double kUlps = 8;

// ExpectOracle: `got` is a new contiguous tensor of x's shape and dtype `dtype`, and each
// element is c.f of x's element (first converted to `dtype`, as the kernel computes), rounded
// to `dtype`, within the tolerance above. A NaN must be NaN, an infinity exactly itself.
void ExpectOracle(const Tensor& got, const Tensor& x, DType dtype, const Case& c,
                  const std::string& what) {
  SCOPED_TRACE(c.name + " " + what);
  ASSERT_TRUE(got.defined());
  ASSERT_EQ(got.dtype(), dtype);
  ASSERT_EQ(got.sizes(), x.sizes());
  EXPECT_TRUE(got.is_contiguous());
  if (x.numel() > 0) {
    EXPECT_NE(got.impl()->raw_data(), x.impl()->raw_data()) << "the result aliases the input";
  }
  const std::vector<double> xs = x.to_vector<double>();
  const std::vector<double> ys = got.to_vector<double>();
  const double eps = Epsilon(dtype);
  const double tiny = dtype == kFloat32 ? std::numeric_limits<float>::denorm_min()
                                        : std::numeric_limits<double>::denorm_min();
  int failures = 0;
  for (size_t i = 0; i < xs.size() && failures < 5; ++i) {
    const double in = RoundTo(xs[i], dtype);
    const double want = RoundTo(c.f(in), dtype);
    const double y = ys[i];
    bool ok;
    if (std::isnan(want)) {
      ok = std::isnan(y);
    } else if (std::isinf(want)) {
      ok = y == want;
    } else {
      double scale = std::fabs(want) + (c.absolute ? c.absolute(in) : 0.0);
      if (c.conditioning && std::isfinite(in)) {
        const double h = 1e-7 * std::max(1.0, std::fabs(in));
        const double slope = (c.f(in + h) - c.f(in - h)) / (2 * h);
        if (std::isfinite(slope)) scale += std::fabs(in * slope);
      }
      ok = std::fabs(y - want) <= kUlps * eps * scale + 16 * tiny;
    }
    if (!ok) {
      ++failures;
      ADD_FAILURE() << "element " << i << ": f(" << in << ") = " << y << ", want " << want;
    }
  }
}

// ---- The cases: every kernel, its scalar arguments in a few modes ----

std::vector<Case> Cases() {
  const double k = std::sqrt(2.0 / static_cast<double>(kPi));
  const double selu_alpha = 1.6732632423543772848170429916717;
  const double selu_scale = 1.0507009873554804934193349852946;
  auto polygamma_case = [](int n, double lo, double hi) {
    return Case{"polygamma" + std::to_string(n),
                [n](const Tensor& x) { return polygamma(n, x); },
                [n](double x) { return PolygammaOracle(n, x); },
                lo,
                hi,
                {0.0, -0.0, -1.0, -3.0, 0.5, -0.5, 1.0, -2.25, -1e-9, -4 + 1e-9, 1e-20},
                false,
                [n](double x) { return RecurrenceScale(n, x); }};
  };
  return {
      {"gelu",
       [](const Tensor& x) { return gelu(x, false); },
       [](double x) { return x * 0.5 * std::erfc(-x / std::sqrt(2.0)); },
       -8, 8, {0.0, -0.0, 1e-30, -1e-30, 3.0, -3.0, -10.0}, true},
      {"gelu_tanh",
       [](const Tensor& x) { return gelu(x, true); },
       [k](double x) { return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x))); },
       -6, 6, {0.0, -0.0, 1e-30, 3.0, 20.0}, true,
       // 1 + tanh(...) cancels for x < 0: an absolute error of eps |x| (torch's formula too).
       [](double x) { return std::fabs(x); }},
      {"silu", [](const Tensor& x) { return silu(x); },
       [](double x) { return x / (1 + std::exp(-x)); }, -20, 20, {0.0, -0.0, 1e-30, 50.0},
       true},
      {"mish", [](const Tensor& x) { return mish(x); },
       [](double x) { return x * std::tanh(x > 20 ? x : std::log1p(std::exp(x))); }, -20, 30,
       {0.0, 20.0, 19.999, 20.001, 1000.0}, true},
      {"softplus", [](const Tensor& x) { return softplus(x, 1.0, 20.0); },
       [](double x) { return x > 20 ? x : std::log1p(std::exp(x)); }, -30, 40,
       {0.0, 20.0, 1000.0, -1000.0}, true},
      // beta 2, threshold 3: the cut-over at x = 1.5 (2x is exact in both dtypes).
      {"softplus_beta", [](const Tensor& x) { return softplus(x, 2.0, 3.0); },
       [](double x) { return 2 * x > 3 ? x : std::log1p(std::exp(2 * x)) / 2; }, -10, 10,
       {1.5, 1.4999, 1.5001, 0.0}, true},
      {"softplus_small_beta", [](const Tensor& x) { return softplus(x, 0.5, 10.0); },
       [](double x) { return 0.5 * x > 10 ? x : std::log1p(std::exp(0.5 * x)) / 0.5; }, -40, 40,
       {20.0, 19.99, 20.01}, true},
      {"elu", [](const Tensor& x) { return elu(x, 1.0); },
       [](double x) { return x > 0 ? x : std::expm1(x); }, -20, 5, {0.0, -0.0, -1e-30}, true},
      {"elu_alpha", [](const Tensor& x) { return elu(x, 0.5); },
       [](double x) { return x > 0 ? x : 0.5 * std::expm1(x); }, -20, 5, {0.0, -1e-30}, true},
      {"elu_negative_alpha", [](const Tensor& x) { return elu(x, -0.75); },
       [](double x) { return x > 0 ? x : -0.75 * std::expm1(x); }, -20, 5, {0.0}, true},
      {"selu", [](const Tensor& x) { return selu(x); },
       [=](double x) { return selu_scale * (x > 0 ? x : selu_alpha * std::expm1(x)); }, -20, 5,
       {0.0, -0.0, -1e-30}, true},
      {"celu", [](const Tensor& x) { return celu(x, 1.0); },
       [](double x) { return x > 0 ? x : std::expm1(x); }, -20, 5, {0.0}, true},
      {"celu_alpha", [](const Tensor& x) { return celu(x, 2.5); },
       [](double x) { return x > 0 ? x : 2.5 * std::expm1(x / 2.5); }, -20, 5, {0.0}, true},
      {"celu_negative_alpha", [](const Tensor& x) { return celu(x, -1.5); },
       [](double x) { return x > 0 ? x : -1.5 * std::expm1(x / -1.5); }, -20, 5, {0.0}, true},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.01); },
       [](double x) { return x > 0 ? x : x * 0.01; }, -10, 10, {0.0, -0.0, 1e-30, -1e-30}},
      {"leaky_relu_slope", [](const Tensor& x) { return leaky_relu(x, 0.2); },
       [](double x) { return x > 0 ? x : x * 0.2; }, -10, 10, {0.0}},
      {"leaky_relu_negative_slope", [](const Tensor& x) { return leaky_relu(x, -2.0); },
       [](double x) { return x > 0 ? x : x * -2.0; }, -10, 10, {0.0}},
      {"hardtanh", [](const Tensor& x) { return hardtanh(x, -1.0, 1.0); },
       [](double x) { return std::isnan(x) ? x : std::min(std::max(x, -1.0), 1.0); }, -3, 3,
       {-1.0, 1.0, 0.0}},
      {"hardtanh_bounds", [](const Tensor& x) { return hardtanh(x, -0.5, 1.5); },
       [](double x) { return std::isnan(x) ? x : std::min(std::max(x, -0.5), 1.5); }, -3, 3,
       {-0.5, 1.5}},
      // min_val > max_val: max_val everywhere (as torch's clamp); NaN stays NaN.
      {"hardtanh_crossed_bounds", [](const Tensor& x) { return hardtanh(x, 2.0, 1.0); },
       [](double x) { return std::isnan(x) ? x : 1.0; }, -3, 3, {1.5, 2.0, 1.0}},
      {"hardswish", [](const Tensor& x) { return hardswish(x); },
       [](double x) { return x * std::min(std::max(x + 3, 0.0), 6.0) / 6; }, -10, 10,
       {-3.0, 3.0, 0.0, -0.0}},
      {"hardsigmoid", [](const Tensor& x) { return hardsigmoid(x); },
       [](double x) { return std::min(std::max(x + 3, 0.0), 6.0) / 6; }, -10, 10,
       {-3.0, 3.0, 0.0}},
      {"logsigmoid", [](const Tensor& x) { return logsigmoid(x); }, &Logsigmoid, -50, 50,
       {0.0, -1000.0, 1000.0, -1e-30}, true},
      {"softsign", [](const Tensor& x) { return softsign(x); },
       [](double x) { return x / (1 + std::fabs(x)); }, -20, 20, {0.0, -0.0, 1e30, -1e30}},
      {"erf", [](const Tensor& x) { return erf(x); }, [](double x) { return std::erf(x); }, -6, 6,
       {0.0, -0.0, 1e-30, 10.0}},
      {"erfc", [](const Tensor& x) { return erfc(x); }, [](double x) { return std::erfc(x); }, -6,
       9, {0.0, 26.0, 27.0, -10.0}},
      {"erfinv", [](const Tensor& x) { return erfinv(x); }, &ErfinvOracle, -1, 1,
       {0.0, -0.0, 1.0, -1.0, 1.5, -1.5, 0.5, 0.9999999, 1e-30, -1e-300, 0.999999999999}},
      {"lgamma", [](const Tensor& x) { return lgamma(x); },
       [](double x) { return std::lgamma(x); }, -10, 20,
       {0.0, -0.0, 1.0, 2.0, -1.0, -2.0, 0.5, -0.5, 1e-30, 1e30}, false,
       [](double) { return 1.0; }},
      {"digamma", [](const Tensor& x) { return digamma(x); },
       [](double x) { return PolygammaOracle(0, x); }, -4.5, 6,
       {0.0, -0.0, -1.0, -2.0, 0.5, -0.5, 1.0, 1e-30, -1e-30, 1e30}, false,
       [](double x) { return RecurrenceScale(0, x); }},
      polygamma_case(1, -4.5, 6),
      polygamma_case(2, -4.5, 6),
      polygamma_case(3, 0.1, 30),
  };
}

Case Find(const std::string& name) {
  for (const Case& c : Cases()) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no case " << name;
  return Cases()[0];
}

std::vector<double> Points(const Case& c, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(c.lo, c.hi);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(u(rng));
  v.insert(v.end(), c.special.begin(), c.special.end());
  for (double s : {kNaN, kInf, -kInf}) v.push_back(s);
  return v;
}

// RandomMatrix: a [rows, cols] tensor of `dtype` with seeded values uniform in [c.lo, c.hi).
Tensor RandomMatrix(const Case& c, int64_t rows, int64_t cols, DType dtype, uint32_t seed) {
  return Uniform({rows, cols}, dtype, seed, c.lo, c.hi);
}

// ---- Values ----

TEST(ActivationKernels, EveryKernelMatchesItsClosedFormInFloat32AndFloat64) {
  for (const Case& c : Cases()) {
    const std::vector<double> v = Points(c, 300, 1);
    for (DType dtype : {kFloat32, kFloat64}) {
      const Tensor x = to(tensor(v), dtype);
      ExpectOracle(c.run(x), x, dtype, c, DTypeName(dtype));
    }
  }
}

// The digamma / polygamma oracle and the kernels against closed forms at r + m, r in
// {1/4, 1/2, 3/4, 1}, m in [-5, 2]: psi^(n)(r) from the constants, moved by the recurrence
// psi^(n)(x + 1) = psi^(n)(x) + (-1)^n n! / x^(n+1) one step at a time in long double
// (further up the steps cancel the anchor's digits: psi^(3)(6.5) = 0.009 = pi^4 - 96 - ...).
TEST(ActivationKernels, DigammaAndPolygammaMatchClosedFormsOnTheQuarterGrid) {
  const LD pi2 = kPi * kPi;
  struct Anchor {
    int n;
    LD r;
    LD value;
  };
  const std::vector<Anchor> anchors = {
      {0, 1, -kEulerGamma},
      {0, 0.5L, -kEulerGamma - 2 * kLn2},
      {0, 0.25L, -kEulerGamma - kPi / 2 - 3 * kLn2},
      {0, 0.75L, -kEulerGamma + kPi / 2 - 3 * kLn2},
      {1, 1, pi2 / 6},
      {1, 0.5L, pi2 / 2},
      {1, 0.25L, pi2 + 8 * kCatalan},
      {1, 0.75L, pi2 - 8 * kCatalan},
      {2, 1, -2 * kZeta3},
      {2, 0.5L, -14 * kZeta3},
      {2, 0.25L, -2 * pi2 * kPi - 56 * kZeta3},
      {2, 0.75L, 2 * pi2 * kPi - 56 * kZeta3},
      {3, 1, pi2 * pi2 / 15},
      {3, 0.5L, pi2 * pi2},
  };
  for (const Anchor& a : anchors) {
    LD factorial = 1;
    for (int i = 2; i <= a.n; ++i) factorial *= i;
    const LD sign_n = a.n % 2 == 0 ? 1 : -1;
    auto step = [&](LD x) {  // (-1)^n n! / x^(n+1)
      LD p = x;
      for (int i = 0; i < a.n; ++i) p *= x;
      return sign_n * factorial / p;
    };
    std::vector<double> xs;
    std::vector<LD> want;
    LD value = a.value;
    for (int m = 0; m <= 2; ++m) {  // up: psi(r + m + 1) = psi(r + m) + step(r + m)
      xs.push_back(static_cast<double>(a.r + m));
      want.push_back(value);
      value += step(a.r + m);
    }
    value = a.value;
    // down: psi(r + m) = psi(r + m + 1) - step(r + m); r = 1 steps onto the poles.
    for (int m = -1; m >= -5 && a.r != 1; --m) {
      value -= step(a.r + m);
      xs.push_back(static_cast<double>(a.r + m));
      want.push_back(value);
    }
    for (DType dtype : {kFloat32, kFloat64}) {
      const Tensor x = to(tensor(xs), dtype);
      const std::vector<double> got = (a.n == 0 ? digamma(x) : polygamma(a.n, x))
                                          .to_vector<double>();
      for (size_t i = 0; i < xs.size(); ++i) {
        const double w = static_cast<double>(want[i]);
        EXPECT_NEAR(PolygammaOracle(a.n, xs[i]), w, 1e-15 * std::fabs(w))
            << "oracle, n = " << a.n << ", x = " << xs[i];
        const double scale = std::fabs(w) + RecurrenceScale(a.n, xs[i]);
        EXPECT_NEAR(got[i], RoundTo(w, dtype), kUlps * Epsilon(dtype) * scale)
            << "n = " << a.n << ", x = " << xs[i] << " " << DTypeName(dtype);
      }
    }
  }
}

// Next to the poles, where reflection formulas lose digits: psi(x) ~ -1/x as x -> 0, and
// psi(-k +- d) ~ -+1/d for a small d (regression: the reflection reduced x by floor(x), which
// rounds for a tiny negative x: digamma(-1e-20) was 2.6e16).
TEST(ActivationKernels, DigammaNextToItsPoles) {
  const std::vector<double> xs = {-1e-20, -1e-12, -1e-8, -1e-3, 1e-20, 1e-8,
                                  -3 - 1e-9, -3 + 1e-9, -1 - 1e-6, -1 + 1e-6,
                                  -0.5, -1.5, -100.5, -1e6 + 0.5};
  const Case c = Find("digamma");
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor x = to(tensor(xs), dtype);
    ExpectOracle(digamma(x), x, dtype, c, DTypeName(dtype));
  }
  // Spelled out: psi(-1e-20) = 1e20 - gamma + O(1e-20).
  EXPECT_NEAR(digamma(tensor({-1e-20})).item<double>(), 1e20, 1e5);
  EXPECT_NEAR(digamma(tensor({-1e-20f})).item<float>(), 1e20f, 1e14f);
}

TEST(ActivationKernels, PolygammaFarLeftOfZeroAndForLargeOrders) {
  // psi1(1 - x) + psi1(x) = pi^2 / sin^2(pi x): at x = -N + 1/2, psi1(x) = pi^2 - psi1(N + 1/2);
  // psi2(1 - x) - psi2(x) = pi d^2/dx^2 cot(pi x) = 0 there: psi2(x) = psi2(N + 1/2). N = 1e5
  // takes the kernel's path for q < -1e4, N = 10 its direct sum. psi2 there is -1/N^2 out of
  // terms of +-16 (RecurrenceScale), so only an absolute accuracy of eps times those terms can
  // be asked for.
  for (double big_n : {10.0, 1e5}) {
    const double x = -big_n + 0.5;
    const double p1 = PolygammaOracle(1, big_n + 0.5);
    const double p2 = PolygammaOracle(2, big_n + 0.5);
    const double eps = std::numeric_limits<double>::epsilon();
    EXPECT_NEAR(polygamma(1, tensor({x})).item<double>(), static_cast<double>(kPi * kPi) - p1,
                kUlps * eps * 10);
    EXPECT_NEAR(polygamma(2, tensor({x})).item<double>(), p2,
                kUlps * eps * RecurrenceScale(2, x));
    EXPECT_LT(polygamma(2, tensor({x})).item<double>(), 0.0);
    // And the recurrence oracle agrees with the reflection.
    EXPECT_NEAR(PolygammaOracle(1, x), static_cast<double>(kPi * kPi) - p1, 1e-13);
  }
  // psi^(n)(1) = (-1)^(n+1) n! zeta(n + 1): zeta(11) = 1.000494188604119464559, and past
  // n = 170, n! overflows: psi^(170)(1) = -170! (zeta(171) = 1 + 2^-171), psi^(171)(1) = inf.
  EXPECT_NEAR(polygamma(10, tensor({1.0})).item<double>(), -3628800 * 1.000494188604119464559,
              1e-7);
  const double f170 = std::tgamma(171.0);
  EXPECT_NEAR(polygamma(170, tensor({1.0})).item<double>(), -f170, 1e-12 * f170);
  EXPECT_EQ(polygamma(171, tensor({1.0})).item<double>(), kInf);
  EXPECT_EQ(polygamma(172, tensor({1.0})).item<double>(), -kInf);
  // n = 0 is digamma.
  const Tensor x = tensor({0.25, -2.5, 7.0, 0.0, -0.0, -3.0});
  const std::vector<double> d = polygamma(0, x).to_vector<double>();
  const std::vector<double> xs = x.to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = PolygammaOracle(0, xs[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(d[i])) << xs[i];
    } else if (std::isinf(want)) {
      EXPECT_EQ(d[i], want) << xs[i];
    } else {
      EXPECT_NEAR(d[i], want, 1e-14 * std::fabs(want)) << xs[i];
    }
  }
}

TEST(ActivationKernels, ErfinvAtKnownPointsAndEnds) {
  // erfinv(0.5) = 0.4769362762044698733814...; erfinv(erf(1)) = 1.
  const Tensor y = tensor({0.5, -0.5, std::erf(1.0), 1.0, -1.0, 0.0, -0.0, 1.0000001, -7.0});
  const std::vector<double> r = erfinv(y).to_vector<double>();
  EXPECT_NEAR(r[0], 0.4769362762044698733814, 2e-16);
  EXPECT_NEAR(r[1], -0.4769362762044698733814, 2e-16);
  EXPECT_NEAR(r[2], 1.0, 5e-16);
  EXPECT_EQ(r[3], kInf);
  EXPECT_EQ(r[4], -kInf);
  EXPECT_EQ(r[5], 0.0);
  EXPECT_FALSE(std::signbit(r[5]));
  EXPECT_TRUE(std::signbit(r[6]));
  EXPECT_TRUE(std::isnan(r[7]));
  EXPECT_TRUE(std::isnan(r[8]));
}

// Within 1e-10 of +-1, Giles' start is a few percent off, and the Newton steps must still
// converge (regression: erfinv(1 - 1e-14) was 0.2% off, erfinv(1 - 2^-53) 7%).
TEST(ActivationKernels, ErfinvNextToPlusMinusOne) {
  std::vector<double> ys;
  for (int k = 6; k <= 16; ++k) ys.push_back(1 - std::pow(10.0, -k));
  for (int k = 1; k <= 4; ++k) ys.push_back(1 - k * std::ldexp(1.0, -53));
  const size_t n = ys.size();
  for (size_t i = 0; i < n; ++i) ys.push_back(-ys[i]);
  const std::vector<double> r = erfinv(tensor(ys)).to_vector<double>();
  for (size_t i = 0; i < ys.size(); ++i) {
    const double want = ErfinvOracle(ys[i]);
    EXPECT_NEAR(r[i], want, 4 * std::numeric_limits<double>::epsilon() * std::fabs(want))
        << "erfinv(1 - " << 1 - ys[i] << ")";
  }
}

// polygamma(n, -inf) has no limit (poles all the way): NaN for every n, as digamma(-inf)
// (regression: n >= 1 gave (-1)^(n+1) inf, as if -inf were one of the poles).
TEST(ActivationKernels, PolygammaOfMinusInfinityIsNaN) {
  for (int64_t n : {0, 1, 2, 3, 6}) {
    for (DType dtype : {kFloat32, kFloat64}) {
      EXPECT_TRUE(std::isnan(polygamma(n, to(tensor({-kInf}), dtype)).item<double>()))
          << "n = " << n << " " << DTypeName(dtype);
    }
  }
  EXPECT_TRUE(std::isnan(digamma(tensor({-kInf})).item<double>()));
  // +inf: digamma grows like log, the higher orders vanish.
  EXPECT_EQ(polygamma(0, tensor({kInf})).item<double>(), kInf);
  EXPECT_EQ(polygamma(1, tensor({kInf})).item<double>(), 0.0);
  EXPECT_EQ(polygamma(2, tensor({kInf})).item<double>(), 0.0);
}

// The kernels against PyTorch's own results (float64, [3, 4] inputs drawn across each op's
// kinks and thresholds).
Tensor Fixture(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string root = srcdir != nullptr ? std::string(srcdir) + "/" +
                                                   (workspace != nullptr ? workspace : "ft") + "/"
                                             : "";
  return LoadNpy(root + "tests/fixtures/torch/activation/" + name + ".npy");
}

TEST(ActivationKernels, MatchPyTorchFixtures) {
  struct FixtureCase {
    std::string name;
    KernelFn run;
    double tol = 1e-12;
  };
  const std::vector<FixtureCase> cases = {
      {"gelu", [](const Tensor& x) { return gelu(x, false); }},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, true); }},
      {"silu", [](const Tensor& x) { return silu(x); }},
      {"mish", [](const Tensor& x) { return mish(x); }},
      {"softplus", [](const Tensor& x) { return softplus(x, 1.0, 20.0); }},
      {"softplus_beta", [](const Tensor& x) { return softplus(x, 2.0, 3.0); }},
      {"elu", [](const Tensor& x) { return elu(x, 1.0); }},
      {"elu_alpha", [](const Tensor& x) { return elu(x, 0.5); }},
      {"selu", [](const Tensor& x) { return selu(x); }},
      {"celu", [](const Tensor& x) { return celu(x, 1.0); }},
      {"celu_alpha", [](const Tensor& x) { return celu(x, 2.5); }},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.01); }},
      {"leaky_relu_slope", [](const Tensor& x) { return leaky_relu(x, 0.2); }},
      {"hardtanh", [](const Tensor& x) { return hardtanh(x, -1.0, 1.0); }},
      {"hardtanh_bounds", [](const Tensor& x) { return hardtanh(x, -0.5, 1.5); }},
      {"hardswish", [](const Tensor& x) { return hardswish(x); }},
      {"hardsigmoid", [](const Tensor& x) { return hardsigmoid(x); }},
      {"logsigmoid", [](const Tensor& x) { return logsigmoid(x); }},
      {"softsign", [](const Tensor& x) { return softsign(x); }},
      {"erf", [](const Tensor& x) { return erf(x); }},
      {"erfc", [](const Tensor& x) { return erfc(x); }},
      {"erfinv", [](const Tensor& x) { return erfinv(x); }},
      {"lgamma", [](const Tensor& x) { return lgamma(x); }},
      {"digamma", [](const Tensor& x) { return digamma(x); }},
      // torch 1.13's trigamma sums 6 terms and a short asymptotic series: ~1e-10 relative
      // (x = 2.4435: torch 0.504059811353, exact 0.504059811205); the oracle tests above hold
      // the kernel to a few ulps.
      {"polygamma1", [](const Tensor& x) { return polygamma(1, x); }, 1e-8},
      {"polygamma2", [](const Tensor& x) { return polygamma(2, x); }},
      {"polygamma3", [](const Tensor& x) { return polygamma(3, x); }},
  };
  for (const FixtureCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Tensor x = Fixture(c.name + ".x");
    ASSERT_EQ(x.dtype(), kFloat64);
    EXPECT_TRUE(testing::TensorNear(c.run(x), Fixture(c.name + ".y"), c.tol, c.tol));
  }
}

// ---- Dtype rules and errors ----

TEST(ActivationKernels, Int64ComputesInFloat32) {
  const Tensor x = tensor(std::vector<int64_t>{-4, -3, -1, 0, 1, 2, 5, 25, (int64_t{1} << 24) + 1});
  for (const Case& c : Cases()) {
    ExpectOracle(c.run(x), x, kFloat32, c, "int64");
  }
}

TEST(ActivationKernels, BoolInputsThrowNamingTheOp) {
  const Tensor b = tensor(std::vector<bool>{true, false});
  const std::vector<std::pair<std::string, KernelFn>> kernels = {
      {"gelu", [](const Tensor& x) { return gelu(x, true); }},
      {"silu", [](const Tensor& x) { return silu(x); }},
      {"mish", [](const Tensor& x) { return mish(x); }},
      {"softplus", [](const Tensor& x) { return softplus(x, 1.0, 20.0); }},
      {"elu", [](const Tensor& x) { return elu(x, 1.0); }},
      {"selu", [](const Tensor& x) { return selu(x); }},
      {"celu", [](const Tensor& x) { return celu(x, 1.0); }},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.01); }},
      {"hardtanh", [](const Tensor& x) { return hardtanh(x, -1.0, 1.0); }},
      {"hardswish", [](const Tensor& x) { return hardswish(x); }},
      {"hardsigmoid", [](const Tensor& x) { return hardsigmoid(x); }},
      {"logsigmoid", [](const Tensor& x) { return logsigmoid(x); }},
      {"softsign", [](const Tensor& x) { return softsign(x); }},
      {"erf", [](const Tensor& x) { return erf(x); }},
      {"erfc", [](const Tensor& x) { return erfc(x); }},
      {"erfinv", [](const Tensor& x) { return erfinv(x); }},
      {"lgamma", [](const Tensor& x) { return lgamma(x); }},
      {"digamma", [](const Tensor& x) { return digamma(x); }},
      {"polygamma", [](const Tensor& x) { return polygamma(2, x); }},
  };
  for (const auto& kernel : kernels) {
    // A named pair, not a structured binding: clang 14 cannot capture a binding in the
    // lambda EXPECT_FT_ERROR wraps its statement in.
    const auto& run = kernel.second;
    EXPECT_FT_ERROR(run(b), kernel.first + ": not supported for bool tensors (shape [2])");
  }
  EXPECT_FT_ERROR(gelu(scalar_tensor(true), false), "gelu: not supported for bool tensors");
  EXPECT_FT_ERROR(silu(empty({0, 3}, kBool)),
                  "silu: not supported for bool tensors (shape [0, 3])");
}

TEST(ActivationKernels, CeluRejectsAZeroAlpha) {
  for (const Tensor& x : {tensor({1.0f, -1.0f}), tensor({-2.0}), tensor(std::vector<int64_t>{3}),
                          empty({0}, kFloat64)}) {
    EXPECT_FT_ERROR(celu(x, 0.0), "celu: alpha cannot be 0");
    EXPECT_FT_ERROR(celu(x, -0.0), "celu: alpha cannot be 0");
  }
  // A tiny alpha is not 0.
  EXPECT_EQ(celu(tensor({2.0}), 1e-300).item<double>(), 2.0);
}

TEST(ActivationKernels, PolygammaRejectsANegativeOrder) {
  const Tensor x = tensor({1.0, 2.0});
  EXPECT_FT_ERROR(polygamma(-1, x), "polygamma: n must be a non-negative integer, got n = -1");
  EXPECT_FT_ERROR(polygamma(-7, tensor(std::vector<int64_t>{1})), "got n = -7");
  EXPECT_FT_ERROR(polygamma(std::numeric_limits<int64_t>::min(), x),
                  "polygamma: n must be a non-negative integer, got n = -9223372036854775808");
}

// ---- Layouts and shapes ----

TEST(ActivationKernels, NonContiguousInputsGiveContiguousResultsOfTheRightValues) {
  for (const Case& c : Cases()) {
    for (DType dtype : {kFloat32, kFloat64}) {
      const Tensor base = RandomMatrix(c, 6, 5, dtype, 2);
      const std::vector<double> before = base.to_vector<double>();
      const std::vector<std::pair<std::string, Tensor>> views = {
          {"transposed", TransposedView(base)},
          {"every other column", SteppedView(base, 1, 1, 2)},
          {"every third row", SteppedView(base, 0, 1, 3)},
          {"offset rows", MakeDense(base.storage(), dtype, {2, 5}, {5, 1}, 10)},
          {"expanded column", MakeDense(base.storage(), dtype, {6, 4}, {5, 0}, 2)},
          {"expanded row", MakeDense(base.storage(), dtype, {3, 5}, {0, 1}, 5)},
          {"stride-2 3-D copy",
           testing::NonContiguousCopy(MakeDense(base.storage(), dtype, {3, 2, 5}, {10, 5, 1}, 0))},
      };
      for (const auto& [layout, view] : views) {
        ExpectOracle(c.run(view), view, dtype, c, std::string(DTypeName(dtype)) + " " + layout);
      }
      EXPECT_EQ(base.to_vector<double>(), before) << c.name << ": the input was written";
    }
  }
  // int64 through a view: converted, then computed.
  const Tensor i = tensor(std::vector<int64_t>{-3, 1, 4, -1, 5, 9}, {2, 3});
  for (const Case& c : {Find("gelu"), Find("digamma"), Find("hardtanh")}) {
    const Tensor t = TransposedView(i);
    ExpectOracle(c.run(t), t, kFloat32, c, "int64 transposed");
  }
}

TEST(ActivationKernels, RankZeroSizeZeroAndSizeOneDims) {
  for (const Case& c : Cases()) {
    for (DType dtype : {kFloat32, kFloat64, kInt64}) {
      const DType out = dtype == kInt64 ? kFloat32 : dtype;
      const double v = dtype == kInt64 ? 2.0 : 0.5 * (c.lo + c.hi) + 0.3;
      const Tensor s = scalar_tensor(v, dtype);
      const Tensor r = c.run(s);
      EXPECT_EQ(r.dim(), 0) << c.name;
      ExpectOracle(r, s, out, c, "rank 0");
      for (const Shape& shape : {Shape{0}, Shape{0, 3}, Shape{3, 0, 2}}) {
        const Tensor y = c.run(empty(shape, dtype));
        EXPECT_EQ(y.sizes(), IntArrayRef(shape)) << c.name;
        EXPECT_EQ(y.dtype(), out) << c.name;
      }
      const Tensor ones_like = full({1, 2, 1, 1}, v, dtype);
      ExpectOracle(c.run(ones_like), ones_like, out, c, "size-1 dims");
    }
  }
}

// Four threads, so that at least two chunks run on pool threads whatever the machine.
TEST(ActivationKernels, InputsPastTheThreadingThresholdMatchTheOracle) {
  ScopedThreads threads(4);
  // One kernel per path: vecmath inside strips (gelu), vecmath's ParamFn (hardtanh), the
  // scalar special functions (digamma).
  for (const char* name : {"gelu", "hardtanh", "digamma"}) {
    Case c = Find(name);
    if (c.name == "digamma") {
      // The scalar (per element) path; where the oracle's recurrence is short, to stay fast.
      c.lo = 40;
      c.hi = 60;
    }
    for (DType dtype : {kFloat32, kFloat64}) {
      const Tensor x = RandomMatrix(c, 1, kLarge, dtype, 5);
      ExpectOracle(c.run(x), x, dtype, c, std::string("large ") + DTypeName(dtype));
    }
  }
  // Transposed, with inner runs of 700 elements: gathered a 256-element block at a time.
  const Case c = Find("silu");
  const Tensor t = TransposedView(RandomMatrix(c, 10, 700, kFloat32, 6));
  ExpectOracle(c.run(t), t, kFloat32, c, "transposed, long runs");
}

}  // namespace
}  // namespace ft::kernels

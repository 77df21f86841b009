// vecmath at every CPU capability the machine has: accuracy against a long double reference
// on >= 10^6 points per function and dtype (special values, denormals, huge arguments
// included), results independent of where an array begins or ends, and the vector path
// taken at the level set.
#include "cpu/vecmath.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cpu/cpu_capability.h"
#include "gtest/gtest.h"

namespace ft::vecmath {
namespace {

constexpr int kPoints = 1 << 20;  // per function and dtype: 1,048,576

// The reference for each Fn, in long double (64-bit significand: 11 bits beyond double).
long double Reference(Fn fn, long double x) {
  switch (fn) {
    case Fn::kExp: return std::exp(x);
    case Fn::kExpm1: return std::expm1(x);
    case Fn::kLog: return std::log(x);
    case Fn::kLog1p: return std::log1p(x);
    case Fn::kSin: return std::sin(x);
    case Fn::kCos: return std::cos(x);
    case Fn::kTan: return std::tan(x);
    case Fn::kTanh: return std::tanh(x);
    case Fn::kSigmoid: return 1.0L / (1.0L + std::exp(-x));
    case Fn::kSqrt: return std::sqrt(x);
    case Fn::kRsqrt: return 1.0L / std::sqrt(x);
    case Fn::kErf: return std::erf(x);
    case Fn::kErfc: return std::erfc(x);
    case Fn::kLgamma: {
      int sign = 0;
      return ::lgammal_r(x, &sign);
    }
    case Fn::kNeg: return -x;
    case Fn::kAbs: return std::fabs(x);
    case Fn::kSign: return std::isnan(x) ? x : static_cast<long double>((x > 0) - (x < 0));
    case Fn::kRelu: return x < 0 ? 0.0L : x;
    case Fn::kSquare: return x * x;
    case Fn::kReciprocal: return 1.0L / x;
    case Fn::kFloor: return std::floor(x);
    case Fn::kRound: return std::nearbyint(x);  // to nearest, halves to even
    case Fn::kSoftsign: return x / (1.0L + std::fabs(x));
    case Fn::kHardsigmoid:
      return std::isnan(x) ? x : std::min(std::max(x + 3.0L, 0.0L), 6.0L) / 6.0L;
    case Fn::kHardswish:
      return std::isnan(x) ? x : x * std::min(std::max(x + 3.0L, 0.0L), 6.0L) / 6.0L;
  }
  return 0;
}

// The bound each function is held to, in ulp of the result's type: SLEEF's documented bound
// (1.0; 1.5 for erfc), 0.5 for the correctly rounded sqrt, and for the compositions the sum
// of their steps' bounds (rsqrt: two roundings, 1.5; sigmoid: exp's 1.0, then 1 + t, the
// division and, left of 0, the product t * s, 2.5).
// SLEEF's bounds are met to within 0.001 ulp of measurement (its own tests use a slightly
// different ulp near powers of two); tanh reaches 1.0005 at tiny arguments. The exact
// functions (neg, abs, sign, relu, floor, round) must be exact; square and reciprocal are one
// IEEE step, correctly rounded; softsign and hardsigmoid round twice (1 + |x| or x + 3, then
// the division: 0.5 ulp and a relative 2^-p, at most 1 ulp more), hardswish three times.
double UlpBound(Fn fn) {
  switch (fn) {
    case Fn::kNeg:
    case Fn::kAbs:
    case Fn::kSign:
    case Fn::kRelu:
    case Fn::kFloor:
    case Fn::kRound: return 0.0;
    case Fn::kSquare:
    case Fn::kReciprocal: return 0.5;
    case Fn::kSoftsign:
    case Fn::kHardsigmoid: return 1.5;
    case Fn::kHardswish: return 2.5;
    case Fn::kErfc: return 1.501;
    case Fn::kSqrt: return 0.5;
    case Fn::kRsqrt: return 1.5;
    case Fn::kSigmoid: return 2.5;
    default: return 1.001;
  }
}

// Results within 2^digits of T's denormals: intermediate products there are denormal and
// lose bits (erfc at SSE2, without FMA, reaches 2.2 ulp), so they are held to 2.5 ulp.
template <typename T>
bool IsTiny(long double ref) {
  return std::fabs(ref) < std::ldexp(1.0L, std::numeric_limits<T>::min_exponent - 1 +
                                               std::numeric_limits<T>::digits);
}

// lgamma's bound is SLEEF's: max(1 ulp, an absolute floor), the floor for its zeros (x = 1,
// x = 2 and one between each pair of poles left of 0), where no relative bound holds.
template <typename T>
constexpr double kLgammaAbsoluteFloor = std::is_same_v<T, float> ? 1e-7 : 1e-15;

// The arguments that matter for each function, where random bit patterns (a quarter of the
// points, covering every exponent, denormals, infinities and NaNs) are sparse.
struct Domain {
  double lo, hi;
};
template <typename T>
Domain DenseDomain(Fn fn) {
  constexpr bool kF = std::is_same_v<T, float>;
  switch (fn) {
    case Fn::kExp: return kF ? Domain{-104, 89} : Domain{-746, 710};
    case Fn::kExpm1: return kF ? Domain{-20, 89} : Domain{-40, 710};
    case Fn::kLog: return {0, 10};
    case Fn::kLog1p: return {-1, 10};
    case Fn::kSin:
    case Fn::kCos:
    case Fn::kTan: return {-1e4, 1e4};
    case Fn::kTanh: return {-20, 20};
    case Fn::kSigmoid: return kF ? Domain{-104, 20} : Domain{-746, 40};
    case Fn::kSqrt:
    case Fn::kRsqrt: return {0, 100};
    case Fn::kErf: return {-6, 6};
    case Fn::kErfc: return kF ? Domain{-4, 11} : Domain{-6, 27.3};
    case Fn::kLgamma: return {-30, 200};
    case Fn::kFloor:
    case Fn::kRound: return {-8, 8};  // many halves and integers
    case Fn::kHardsigmoid:
    case Fn::kHardswish: return {-7, 7};  // both bends and beyond
    default: return {-10, 10};
  }
}

// Special arguments every function is checked on.
template <typename T>
std::vector<T> SpecialValues() {
  using L = std::numeric_limits<T>;
  return {T(0),          -T(0),         L::infinity(), -L::infinity(), L::quiet_NaN(),
          L::denorm_min(), -L::denorm_min(), L::min(),  -L::min(),      L::max(),
          L::lowest(),   T(1),          T(-1),         T(2),           T(0.5),
          T(-0.5),       L::epsilon(),  T(1e4),        T(-1e4),        T(1e6),
          T(1e15),       T(-1e15),      T(3.1415926535897932), T(-3.1415926535897932)};
}

template <typename T>
std::vector<T> Points(Fn fn, uint32_t seed) {
  std::vector<T> points = SpecialValues<T>();
  std::mt19937_64 rng(seed);
  const Domain d = DenseDomain<T>(fn);
  std::uniform_real_distribution<double> dense(d.lo, d.hi);
  using Bits = std::conditional_t<std::is_same_v<T, float>, uint32_t, uint64_t>;
  while (static_cast<int>(points.size()) < kPoints) {
    if (points.size() % 4 == 0) {
      const Bits bits = static_cast<Bits>(rng());
      T v;
      std::memcpy(&v, &bits, sizeof v);
      points.push_back(v);
    } else {
      points.push_back(static_cast<T>(dense(rng)));
    }
  }
  return points;
}

// The spacing of T's values at `ref` (its denormal spacing below the normal range).
template <typename T>
long double UlpOf(long double ref) {
  int e = 0;
  std::frexp(std::fabs(ref), &e);  // |ref| = m 2^e, m in [0.5, 1)
  const int exponent = std::max(e - 1, std::numeric_limits<T>::min_exponent - 1);
  return std::ldexp(1.0L, exponent - (std::numeric_limits<T>::digits - 1));
}

struct Accuracy {
  double max_ulp = 0;
  double at = 0;         // the argument of the worst error
  int64_t failures = 0;  // special-value mismatches (NaN, infinities, signed zeros)
  std::string first_failure;
};

// Error of `got` against `ref` in ulp of T; a mismatch of NaN, infinity or the sign of a
// zero (exp(-inf) = +0, sin(-0) = -0, rsqrt(-0) = -inf) is a failure, not a number of ulp.
template <typename T>
void Score(Fn fn, T x, T got, long double ref, Accuracy& acc) {
  const T rounded = static_cast<T>(ref);  // the correctly rounded answer (ties aside)
  auto fail = [&](const char* why) {
    if (acc.failures++ == 0) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "%s: x = %.17g got %.17g, reference %.21Lg", why,
                    static_cast<double>(x), static_cast<double>(got), ref);
      acc.first_failure = buf;
    }
  };
  if (std::isnan(rounded)) {
    if (!std::isnan(got)) fail("expected nan");
    return;
  }
  if (std::isnan(got)) return fail("unexpected nan");
  if (std::isinf(rounded) || std::isinf(got)) {
    if (got != rounded) {
      // Overflow at the edge: within the bound of the largest finite value is right too.
      const long double err = std::fabs(static_cast<long double>(got) - ref) /
                              UlpOf<T>(std::numeric_limits<T>::max());
      if (std::isinf(got) || err > 2) fail("infinity mismatch");
    }
    return;
  }
  if (rounded == 0 && got == 0 && std::signbit(rounded) != std::signbit(got) && ref != 0) {
    return;  // an underflowed result: either zero is within the bound
  }
  if (ref == 0 && got == 0 && std::signbit(rounded) != std::signbit(got)) {
    return fail("sign of zero");
  }
  const long double abs_error = std::fabs(static_cast<long double>(got) - ref);
  double ulp = static_cast<double>(abs_error / UlpOf<T>(ref));
  if (IsTiny<T>(ref) && UlpBound(fn) > 0) ulp *= UlpBound(fn) / std::max(UlpBound(fn), 2.5);
  if (fn == Fn::kLgamma && abs_error <= kLgammaAbsoluteFloor<T>) ulp = 0;
  if (ulp > acc.max_ulp) {
    acc.max_ulp = ulp;
    acc.at = static_cast<double>(x);
  }
}

template <typename T>
void CheckAccuracy(Fn fn, uint32_t seed) {
  const std::vector<T> x = Points<T>(fn, seed);
  std::vector<long double> ref(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ref[i] = Reference(fn, x[i]);
    // hardswish's x * 6 overflows before the division by 6 (torch's formula does too), so
    // above max / 6 the result is inf.
    const long double six_x = static_cast<long double>(x[i]) * 6;
    if (fn == Fn::kHardswish && six_x > std::numeric_limits<T>::max()) {
      ref[i] = std::numeric_limits<long double>::infinity();
    }
  }
  std::vector<T> got(x.size());
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    Apply(fn, x.data(), got.data(), static_cast<int64_t>(x.size()));
    Accuracy acc;
    for (size_t i = 0; i < x.size(); ++i) Score(fn, x[i], got[i], ref[i], acc);
    const std::string what = std::string(FnName(fn)) + " " +
                             (std::is_same_v<T, float> ? "float32" : "float64") + " at " +
                             std::string(CpuCapabilityName(level));
    std::printf("%-28s max %.4f ulp (x = %.9g)\n", what.c_str(), acc.max_ulp, acc.at);
    EXPECT_EQ(acc.failures, 0) << what << ": " << acc.first_failure;
    EXPECT_LE(acc.max_ulp, UlpBound(fn)) << what << " at x = " << acc.at;
  }
}

class VecMathAccuracy : public ::testing::TestWithParam<int> {
 protected:
  void TearDown() override { SetCpuCapability(MachineCpuCapability()); }
};

TEST_P(VecMathAccuracy, Float32WithinItsBoundAtEveryLevel) {
  CheckAccuracy<float>(static_cast<Fn>(GetParam()), 1000 + GetParam());
}

TEST_P(VecMathAccuracy, Float64WithinItsBoundAtEveryLevel) {
  CheckAccuracy<double>(static_cast<Fn>(GetParam()), 2000 + GetParam());
}

INSTANTIATE_TEST_SUITE_P(EveryFunction, VecMathAccuracy, ::testing::Range(0, kNumFns),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(FnName(static_cast<Fn>(info.param)));
                         });

// A result depends on the element alone: an array computed whole, element by element
// (each a padded tail of one), from every start offset and in place all agree bit for bit.
template <typename T>
void CheckPositionIndependence(Fn fn) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-3, 3);
  std::vector<T> x(203);
  for (T& v : x) v = static_cast<T>(fn == Fn::kLog || fn == Fn::kSqrt || fn == Fn::kRsqrt
                                        ? std::fabs(u(rng)) : u(rng));
  std::vector<T> whole(x.size()), one(1), in_place = x;
  Apply(fn, x.data(), whole.data(), static_cast<int64_t>(x.size()));
  Apply(fn, in_place.data(), in_place.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    Apply(fn, &x[i], one.data(), 1);
    ASSERT_EQ(std::memcmp(&one[0], &whole[i], sizeof(T)), 0) << FnName(fn) << " element " << i;
    ASSERT_EQ(std::memcmp(&in_place[i], &whole[i], sizeof(T)), 0) << FnName(fn) << " in place";
  }
  for (size_t start = 1; start < 20; ++start) {
    std::vector<T> part(x.size() - start);
    Apply(fn, x.data() + start, part.data(), static_cast<int64_t>(part.size()));
    ASSERT_EQ(std::memcmp(part.data(), whole.data() + start, part.size() * sizeof(T)), 0)
        << FnName(fn) << " from offset " << start;
  }
}

TEST(VecMath, ResultsDoNotDependOnWhereAnArrayBeginsOrEnds) {
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    for (int f = 0; f < kNumFns; ++f) {
      CheckPositionIndependence<float>(static_cast<Fn>(f));
      CheckPositionIndependence<double>(static_cast<Fn>(f));
    }
  }
  SetCpuCapability(MachineCpuCapability());
}

TEST(VecMath, PowFollowsCsSpecialCasesAndItsBound) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> a = {2, 0, -2, -2, 1, 2, -0.0, 0, 4, 10, inf, 0.5};
  const std::vector<double> b = {10, 0, 3, 0.5, inf, -1, -1, -1, 0.5, -308, -1, 1e4};
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    std::vector<double> out(a.size());
    Pow(a.data(), b.data(), out.data(), static_cast<int64_t>(a.size()));
    std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()), outf(a.size());
    Pow(af.data(), bf.data(), outf.data(), static_cast<int64_t>(a.size()));
    for (size_t i = 0; i < a.size(); ++i) {
      const double expected = std::pow(a[i], b[i]);
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(out[i])) << a[i] << "^" << b[i];
      } else if (std::isinf(expected)) {
        EXPECT_EQ(out[i], expected) << a[i] << "^" << b[i];
      } else {
        EXPECT_NEAR(out[i], expected, std::fabs(expected) * 3e-16) << a[i] << "^" << b[i];
        EXPECT_EQ(std::signbit(out[i]), std::signbit(expected)) << a[i] << "^" << b[i];
      }
      const float expected_f = std::pow(af[i], bf[i]);
      if (std::isnan(expected_f)) {
        EXPECT_TRUE(std::isnan(outf[i])) << af[i] << "^" << bf[i];
      } else if (std::isinf(expected_f)) {
        EXPECT_EQ(outf[i], expected_f) << af[i] << "^" << bf[i];
      } else {
        EXPECT_NEAR(outf[i], expected_f, std::fabs(expected_f) * 2e-7) << af[i] << "^" << bf[i];
      }
    }
  }
  SetCpuCapability(MachineCpuCapability());
}

// atan2 against long double's at 2^20 points spread over the plane (both signs, magnitudes
// from 1e-30 to 1e30 so the ratio spans underflow to overflow, and near the axes), within
// SLEEF's 1-ulp bound (2.5 ulp for results near the denormals, IsTiny: SSE2's float atan2
// reaches 1.8 there), and C's special cases (signed zeros, infinities, NaN) exactly.
template <typename T>
void CheckAtan2() {
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> exponent(-30.0, 30.0), mantissa(1.0, 10.0);
  const auto draw = [&] {
    const double v = mantissa(rng) * std::pow(10.0, exponent(rng));
    return static_cast<T>(rng() % 2 == 0 ? v : -v);
  };
  const size_t n = size_t{1} << 20;
  std::vector<T> a(n), b(n), out(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = draw();
    b[i] = draw();
  }
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<std::pair<T, T>> special = {
      {T(0), T(1)},  {-T(0), T(1)}, {T(0), -T(1)}, {-T(0), -T(1)}, {T(0), T(0)},
      {-T(0), T(0)}, {T(0), -T(0)}, {-T(0), -T(0)}, {T(1), T(0)},  {T(-1), -T(0)},
      {inf, inf},    {-inf, inf},   {inf, -inf},   {-inf, -inf},  {T(1), inf},
      {T(1), -inf},  {-T(1), -inf}, {inf, T(2)},   {nan, T(1)},   {T(1), nan}};
  for (const auto& [y, x] : special) {
    a.push_back(y);
    b.push_back(x);
  }
  out.resize(a.size());
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    Atan2(a.data(), b.data(), out.data(), static_cast<int64_t>(a.size()));
    double worst = 0.0;
    size_t worst_at = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const long double want = std::atan2(static_cast<long double>(a[i]),
                                          static_cast<long double>(b[i]));
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(out[i])) << a[i] << ", " << b[i];
        continue;
      }
      if (i >= n) {  // the special cases: C's values exactly, sign of zero included
        const T c = std::atan2(a[i], b[i]);
        ASSERT_EQ(out[i], c) << "atan2(" << a[i] << ", " << b[i] << ")";
        ASSERT_EQ(std::signbit(out[i]), std::signbit(c)) << a[i] << ", " << b[i];
        continue;
      }
      const long double error = std::fabs(static_cast<long double>(out[i]) - want);
      double ulp = static_cast<double>(error / UlpOf<T>(want));
      if (IsTiny<T>(want)) ulp /= 2.5;  // held to 2.5 ulp there, as the functions above
      if (ulp > worst) {
        worst = ulp;
        worst_at = i;
      }
    }
    EXPECT_LE(worst, 1.0) << "atan2 at " << CpuCapabilityName(level) << ", worst at ("
                          << a[worst_at] << ", " << b[worst_at] << "): " << out[worst_at]
                          << " (" << sizeof(T) * 8 << "-bit)";
  }
  SetCpuCapability(MachineCpuCapability());
}

TEST(VecMath, Atan2IsWithinOneUlpWithCsSpecialCases) {
  CheckAtan2<float>();
  CheckAtan2<double>();
}

// Sum against a long double sum of the same values: every length from 0 to 300 (whole
// vectors, blocks of four, tails of every size), then 10^6 and 10^7 elements, where a float
// accumulated lane by lane would drift. The bound is the one a blocked sum has: about
// (terms one lane adds in sequence) * eps * sum of |x|.
template <typename T>
void CheckSum() {
  std::mt19937 rng(77);
  std::uniform_real_distribution<double> dist(-1.0, 2.0);
  const std::vector<int64_t> lengths = [] {
    std::vector<int64_t> v;
    for (int64_t n = 0; n <= 300; ++n) v.push_back(n);
    v.push_back(4095);
    v.push_back(4097);
    v.push_back(1000000);
    v.push_back(10000000);
    return v;
  }();
  for (const int64_t n : lengths) {
    std::vector<T> x(static_cast<size_t>(n));
    long double exact = 0, magnitude = 0;
    for (T& v : x) {
      v = static_cast<T>(dist(rng));
      exact += v;
      magnitude += std::fabs(static_cast<long double>(v));
    }
    const double eps = std::numeric_limits<T>::epsilon();
    const double sequential_terms = 4096.0 / 16 + static_cast<double>(n) / 4096 + 16;
    const double bound = sequential_terms * eps * static_cast<double>(magnitude);
    for (CpuCapability level : SupportedCpuCapabilities()) {
      SetCpuCapability(level);
      const T got = Sum(x.data(), n);
      EXPECT_LE(std::fabs(static_cast<double>(got - static_cast<T>(exact))), bound + 1e-300)
          << "n " << n << " at " << CpuCapabilityName(level);
      // The same values give the same bits on every call.
      const T again = Sum(x.data(), n);
      EXPECT_EQ(std::memcmp(&got, &again, sizeof(T)), 0);
    }
  }
  // Non-finite values: inf + -inf is nan, inf alone stays inf, nan propagates.
  const T inf = std::numeric_limits<T>::infinity();
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    std::vector<T> v(37, T(1));
    v[36] = inf;
    EXPECT_EQ(Sum(v.data(), 37), inf);
    v[3] = -inf;
    EXPECT_TRUE(std::isnan(Sum(v.data(), 37)));
    v[3] = std::numeric_limits<T>::quiet_NaN();
    EXPECT_TRUE(std::isnan(Sum(v.data(), 37)));
  }
  SetCpuCapability(MachineCpuCapability());
}

TEST(VecMath, SumIsAccurateAndDeterministicAtEveryLevel) {
  CheckSum<float>();
  CheckSum<double>();
}

// SumRows gives Sum's bits row by row, for row lengths around every vector and block size.
template <typename T>
void CheckSumRows() {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> dist(-1.0, 2.0);
  for (const int64_t n : {0, 1, 7, 16, 63, 64, 65, 1000, 4096, 4097}) {
    // Rows are summed in pairs, so both rows of a pair are checked on random values (rows 4
    // to 7; row 8 is an odd last row) and on special ones: row 1 is all negative zeros
    // (its sum is +0), row 2 has an infinity and row 3 a NaN.
    const int64_t rows = 9;
    std::vector<T> x(static_cast<size_t>(rows * n));
    for (T& v : x) v = static_cast<T>(dist(rng));
    for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(n + i)] = T(-0.0);
    if (n > 0) x[static_cast<size_t>(2 * n + n / 2)] = std::numeric_limits<T>::infinity();
    if (n > 0) x[static_cast<size_t>(3 * n)] = std::numeric_limits<T>::quiet_NaN();
    for (CpuCapability level : SupportedCpuCapabilities()) {
      SetCpuCapability(level);
      std::vector<T> out(rows, T(-7));
      SumRows(x.data(), rows, n, out.data());
      for (int64_t r = 0; r < rows; ++r) {
        const T one = Sum(x.data() + r * n, n);
        EXPECT_EQ(std::memcmp(&out[static_cast<size_t>(r)], &one, sizeof(T)), 0)
            << "row " << r << " of " << n << " at " << CpuCapabilityName(level);
      }
    }
  }
  SetCpuCapability(MachineCpuCapability());
}

TEST(VecMath, SumRowsIsSumRowByRow) {
  CheckSumRows<float>();
  CheckSumRows<double>();
}

// SumColumns, MaxColumns and MinColumns give a sequential loop's bits per column (row order
// from the first row; the extremes take a value beyond or NaN) at every level, for column
// counts around the vector and block widths, rows 1 to 9, a row stride larger than the
// columns, and special values (-0, inf, NaN) in some columns.
template <typename T, typename Columns, typename Combine>
void CheckColumns(const char* name, Columns columns, Combine combine, T no_rows) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> dist(-1.0, 2.0);
  for (const int64_t cols : {1, 3, 8, 15, 16, 17, 63, 64, 65, 130}) {
    for (const int64_t rows : {1, 2, 9}) {
      const int64_t ld = cols + 5;
      std::vector<T> x(static_cast<size_t>(rows * ld));
      for (T& v : x) v = static_cast<T>(dist(rng));
      for (int64_t r = 0; r < rows; ++r) x[static_cast<size_t>(r * ld)] = T(-0.0);  // column 0
      if (cols > 2) x[static_cast<size_t>((rows - 1) * ld + 2)] = std::numeric_limits<T>::infinity();
      if (cols > 5) x[static_cast<size_t>(5)] = std::numeric_limits<T>::quiet_NaN();
      if (cols > 9) x[static_cast<size_t>((rows - 1) * ld + 9)] = std::numeric_limits<T>::quiet_NaN();
      for (CpuCapability level : SupportedCpuCapabilities()) {
        SetCpuCapability(level);
        std::vector<T> out(static_cast<size_t>(cols), T(-7));
        columns(x.data(), rows, cols, ld, out.data());
        for (int64_t c = 0; c < cols; ++c) {
          T expected = x[static_cast<size_t>(c)];
          for (int64_t r = 1; r < rows; ++r) {
            expected = combine(expected, x[static_cast<size_t>(r * ld + c)]);
          }
          EXPECT_EQ(std::memcmp(&out[static_cast<size_t>(c)], &expected, sizeof(T)), 0)
              << name << ": column " << c << " of " << cols << " x " << rows << " at "
              << CpuCapabilityName(level) << ": " << out[static_cast<size_t>(c)] << " vs "
              << expected;
        }
      }
    }
  }
  std::vector<T> none(4, T(5));
  columns(none.data(), 0, 4, 4, none.data());
  for (T v : none) EXPECT_TRUE(v == no_rows || (std::isnan(v) && std::isnan(no_rows))) << name;
  SetCpuCapability(MachineCpuCapability());
}

template <typename T>
void CheckSumColumns() {
  CheckColumns<T>(
      "SumColumns",
      [](const T* x, int64_t rows, int64_t cols, int64_t ld, T* out) {
        SumColumns(x, rows, cols, ld, out);
      },
      [](T acc, T v) { return acc + v; }, T(0));
}

TEST(VecMath, SumColumnsIsASequentialLoopPerColumn) {
  CheckSumColumns<float>();
  CheckSumColumns<double>();
}

template <typename T>
void CheckExtremeColumns() {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  CheckColumns<T>(
      "MaxColumns",
      [](const T* x, int64_t rows, int64_t cols, int64_t ld, T* out) {
        MaxColumns(x, rows, cols, ld, out);
      },
      [](T acc, T v) { return (v > acc || v != v) ? v : acc; }, nan);
  CheckColumns<T>(
      "MinColumns",
      [](const T* x, int64_t rows, int64_t cols, int64_t ld, T* out) {
        MinColumns(x, rows, cols, ld, out);
      },
      [](T acc, T v) { return (v < acc || v != v) ? v : acc; }, nan);
}

TEST(VecMath, MaxAndMinColumnsAreASequentialLoopPerColumn) {
  CheckExtremeColumns<float>();
  CheckExtremeColumns<double>();
}

// Max and Min against a plain loop: every length from 1 to 300 and 10^5, values of both
// signs with the extreme at a random place (the tail included), and the special values: a
// NaN anywhere makes the result NaN, infinities are extremes like any other value.
template <typename T>
void CheckExtremes() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> dist(-100.0, 100.0);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 300; ++n) lengths.push_back(n);
  lengths.push_back(100000);
  for (const int64_t n : lengths) {
    std::vector<T> x(static_cast<size_t>(n));
    for (T& v : x) v = static_cast<T>(dist(rng));
    T lo = x[0], hi = x[0];
    for (T v : x) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const size_t at = static_cast<size_t>(rng() % static_cast<uint32_t>(n));
    for (CpuCapability level : SupportedCpuCapabilities()) {
      SetCpuCapability(level);
      const std::string where = "n " + std::to_string(n) + " at " + std::string(CpuCapabilityName(level));
      EXPECT_EQ(Max(x.data(), n), hi) << where;
      EXPECT_EQ(Min(x.data(), n), lo) << where;
      std::vector<T> y = x;
      y[at] = inf;
      EXPECT_EQ(Max(y.data(), n), inf) << where;
      y[at] = -inf;
      EXPECT_EQ(Min(y.data(), n), -inf) << where;
      y[at] = nan;
      EXPECT_TRUE(std::isnan(Max(y.data(), n))) << where << ", NaN at " << at;
      EXPECT_TRUE(std::isnan(Min(y.data(), n))) << where << ", NaN at " << at;
    }
  }
  // All negative (a zero padding would win), and no elements at all.
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    const std::vector<T> negative = {T(-3), T(-2), T(-5)};
    EXPECT_EQ(Max(negative.data(), 3), T(-2));
    const std::vector<T> positive = {T(3), T(2), T(5)};
    EXPECT_EQ(Min(positive.data(), 3), T(2));
    EXPECT_TRUE(std::isnan(Max(positive.data(), 0)));
  }
  SetCpuCapability(MachineCpuCapability());
}

TEST(VecMath, MaxAndMinPropagateNaNAtEveryLevel) {
  CheckExtremes<float>();
  CheckExtremes<double>();
}

TEST(VecMath, ProdColumnsIsASequentialLoopPerColumn) {
  CheckColumns<float>(
      "ProdColumns",
      [](const float* x, int64_t rows, int64_t cols, int64_t ld, float* out) {
        ProdColumns(x, rows, cols, ld, out);
      },
      [](float acc, float v) { return acc * v; }, 1.0f);
  CheckColumns<double>(
      "ProdColumns",
      [](const double* x, int64_t rows, int64_t cols, int64_t ld, double* out) {
        ProdColumns(x, rows, cols, ld, out);
      },
      [](double acc, double v) { return acc * v; }, 1.0);
}

// Values that exercise the bends and special cases of the exact functions: both zeros,
// infinities, NaN, halves (round's ties), integers, and the ends of every piece.
template <typename T>
std::vector<T> EdgeValues() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {T(0), -T(0), L::infinity(), -L::infinity(), L::quiet_NaN(),
                      -L::quiet_NaN(), L::denorm_min(), -L::denorm_min(), L::max(), L::lowest(),
                      T(0.5), T(-0.5), T(1.5), T(-1.5), T(2.5), T(-2.5), T(3), T(-3), T(6),
                      T(-6), T(1), T(-1), T(2), T(-2), T(0.25), T(-0.75), T(1e30), T(-1e30)};
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> dist(-8.0, 8.0);
  while (v.size() < 301) v.push_back(static_cast<T>(dist(rng)));
  return v;
}

// The ParamFn functions against their scalar definitions (vecmath.h), bit for bit, at every
// level and every array length up to 301 (so every tail), with bounds that are ordinary,
// reversed (p > q), NaN, infinite and -0 (which a bound must keep when it is the result).
template <typename T>
void CheckParamFns() {
  const std::vector<T> x = EdgeValues<T>();
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const std::vector<std::pair<T, T>> bounds = {
      {T(-1), T(1)}, {T(2), T(-2)}, {nan, T(1)}, {T(-1), nan}, {-inf, inf}, {-T(0), T(0.5)},
      {T(0.01), T(0)}};
  auto reference = [](ParamFn fn, T v, T p, T q) -> T {
    switch (fn) {
      case ParamFn::kLeakyRelu: return v > T(0) ? v : v * p;
      case ParamFn::kHardtanh: return std::isnan(v) ? v : std::min(std::max(v, p), q);
      case ParamFn::kClamp:
        if (std::isnan(p) || v < p) v = p;
        if (std::isnan(q) || v > q) v = q;
        return v;
    }
    return 0;
  };
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    for (int f = 0; f < kNumParamFns; ++f) {
      const ParamFn fn = static_cast<ParamFn>(f);
      for (const auto& [p, q] : bounds) {
        for (size_t n : {size_t{1}, size_t{3}, size_t{7}, size_t{17}, x.size()}) {
          std::vector<T> out(n, T(-7)), in_place(x.begin(), x.begin() + static_cast<long>(n));
          Apply(fn, p, q, x.data(), out.data(), static_cast<int64_t>(n));
          Apply(fn, p, q, in_place.data(), in_place.data(), static_cast<int64_t>(n));
          for (size_t i = 0; i < n; ++i) {
            const T expected = reference(fn, x[i], p, q);
            // Which NaN a product of two NaNs gives depends on the operand order, which the
            // compiler chooses (multiplication commutes): a NaN matches any NaN.
            if (std::isnan(expected) && std::isnan(out[i]) && std::isnan(in_place[i])) continue;
            ASSERT_EQ(std::memcmp(&out[i], &expected, sizeof(T)), 0)
                << "ParamFn " << f << " of " << x[i] << " (p " << p << ", q " << q << ") n "
                << n << " at " << CpuCapabilityName(level) << ": " << out[i] << " vs "
                << expected;
            ASSERT_EQ(std::memcmp(&in_place[i], &expected, sizeof(T)), 0) << "in place";
          }
        }
      }
    }
  }
  SetCpuCapability(MachineCpuCapability());
}

TEST(VecMath, ParamFnsAreTheirScalarDefinitionsBitForBit) {
  CheckParamFns<float>();
  CheckParamFns<double>();
}

// Compare against C++'s comparisons on every pair of edge values (NaN, both zeros,
// infinities), array against array, against a broadcast value on either side, and every
// length (so every tail), at every level.
template <typename T>
void CheckCompare() {
  const std::vector<T> x = EdgeValues<T>();
  std::vector<T> y(x.rbegin(), x.rend());
  auto reference = [](Cmp op, T a, T b) {
    switch (op) {
      case Cmp::kEq: return a == b;
      case Cmp::kNe: return a != b;
      case Cmp::kLt: return a < b;
      case Cmp::kLe: return a <= b;
      case Cmp::kGt: return a > b;
      case Cmp::kGe: return a >= b;
    }
    return false;
  };
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    for (int c = 0; c < kNumCmp; ++c) {
      const Cmp op = static_cast<Cmp>(c);
      for (size_t n = 1; n <= x.size(); n += (n < 40 ? 1 : 37)) {
        for (int steps = 0; steps < 3; ++steps) {
          const int64_t a_step = steps == 1 ? 0 : 1, b_step = steps == 2 ? 0 : 1;
          std::vector<char> out(n, 7);
          Compare(op, x.data(), a_step, y.data(), b_step, reinterpret_cast<bool*>(out.data()),
                  static_cast<int64_t>(n));
          for (size_t i = 0; i < n; ++i) {
            const T a = x[i * static_cast<size_t>(a_step)], b = y[i * static_cast<size_t>(b_step)];
            ASSERT_EQ(out[i], reference(op, a, b) ? 1 : 0)
                << "Cmp " << c << " " << a << " vs " << b << " n " << n << " at "
                << CpuCapabilityName(level);
          }
        }
      }
    }
  }
  SetCpuCapability(MachineCpuCapability());
}

TEST(VecMath, CompareIsCppsComparisonAsBoolsAtEveryLevel) {
  CheckCompare<float>();
  CheckCompare<double>();
}

// Prod: close to the exact product (long double) for every length up to 300 and 10^4
// (values near 1, so nothing overflows or underflows), the same bits on every call at a
// level, 1 for no elements, and zeros, infinities and NaN behave as in any product.
template <typename T>
void CheckProd() {
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> dist(0.95, 1.05);
  std::vector<int64_t> lengths;
  for (int64_t n = 0; n <= 300; ++n) lengths.push_back(n);
  lengths.push_back(10000);
  for (const int64_t n : lengths) {
    std::vector<T> x(static_cast<size_t>(n));
    for (T& v : x) v = static_cast<T>(dist(rng));
    long double exact = 1;
    for (T v : x) exact *= v;
    for (CpuCapability level : SupportedCpuCapabilities()) {
      SetCpuCapability(level);
      const T got = Prod(x.data(), n);
      const T again = Prod(x.data(), n);
      EXPECT_EQ(std::memcmp(&got, &again, sizeof(T)), 0);
      // Each of the n - 1 products rounds once: a relative error of n eps / 2 at most.
      const long double bound =
          std::fabs(exact) * (static_cast<long double>(n) + 1) * std::numeric_limits<T>::epsilon();
      EXPECT_NEAR(static_cast<long double>(got), exact, bound)
          << "n " << n << " at " << CpuCapabilityName(level);
      if (n > 2) {
        std::vector<T> y = x;
        y[static_cast<size_t>(n / 2)] = T(0);
        EXPECT_EQ(Prod(y.data(), n), T(0));
        y[static_cast<size_t>(n - 1)] = std::numeric_limits<T>::infinity();
        EXPECT_TRUE(std::isnan(Prod(y.data(), n)));  // 0 * inf
        y[static_cast<size_t>(n / 2)] = T(2);
        EXPECT_EQ(Prod(y.data(), n), std::numeric_limits<T>::infinity());
        y[0] = std::numeric_limits<T>::quiet_NaN();
        EXPECT_TRUE(std::isnan(Prod(y.data(), n)));
      }
    }
  }
  SetCpuCapability(MachineCpuCapability());
}

TEST(VecMath, ProdIsAccurateAndDeterministicAtEveryLevel) {
  CheckProd<float>();
  CheckProd<double>();
}

// Outer: each element the one product a[r * a_step] * b[j], at every level, for row lengths
// around every vector width (so every tail) and both a steps.
TEST(VecMath, OuterIsEveryProductOnce) {
  std::mt19937 rng(53);
  std::uniform_real_distribution<double> u(-3, 3);
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    for (const int64_t n : {1, 3, 8, 15, 16, 17, 33}) {
      for (const int64_t a_step : {1, 3}) {
        const int64_t m = 5;
        std::vector<double> a(static_cast<size_t>(m * a_step)), b(static_cast<size_t>(n));
        for (double& v : a) v = u(rng);
        for (double& v : b) v = u(rng);
        std::vector<double> out(static_cast<size_t>(m * n), -7.0);
        Outer(a.data(), a_step, m, b.data(), n, out.data());
        std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()), outf(out.size());
        Outer(af.data(), a_step, m, bf.data(), n, outf.data());
        for (int64_t r = 0; r < m; ++r) {
          for (int64_t j = 0; j < n; ++j) {
            const size_t at = static_cast<size_t>(r * n + j);
            EXPECT_EQ(out[at], a[static_cast<size_t>(r * a_step)] * b[static_cast<size_t>(j)]);
            EXPECT_EQ(outf[at], af[static_cast<size_t>(r * a_step)] * bf[static_cast<size_t>(j)]);
          }
        }
      }
    }
  }
  SetCpuCapability(MachineCpuCapability());
}

TEST(VecMath, EachCallRunsOnTheLevelSet) {
  std::vector<float> x(100, 0.5f), y(100);
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    const int64_t before = CallCount(level);
    Apply(Fn::kExp, x.data(), y.data(), 100);
    EXPECT_EQ(CallCount(level), before + 1) << CpuCapabilityName(level);
    EXPECT_FLOAT_EQ(y[99], std::exp(0.5f));
    EXPECT_EQ(Sum(x.data(), 100), 50.0f);
    EXPECT_EQ(CallCount(level), before + 2) << CpuCapabilityName(level);
    float rows[2];
    SumRows(x.data(), 2, 50, rows);
    EXPECT_EQ(rows[1], 25.0f);
    EXPECT_EQ(Max(x.data(), 100), 0.5f);
    EXPECT_EQ(CallCount(level), before + 4) << CpuCapabilityName(level);
    bool mask[100];
    Compare(Cmp::kLt, x.data(), 1, y.data(), 1, mask, 100);
    Apply(ParamFn::kLeakyRelu, 0.1f, 0.0f, x.data(), y.data(), 100);
    EXPECT_EQ(Prod(x.data(), 4), 0.0625f);
    EXPECT_EQ(CallCount(level), before + 7) << CpuCapabilityName(level);
  }
  SetCpuCapability(MachineCpuCapability());
}

}  // namespace
}  // namespace ft::vecmath

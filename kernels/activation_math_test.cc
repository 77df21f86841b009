#include "kernels/activation_math.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/cpu_capability.h"
#include "gtest/gtest.h"

namespace ft::activation {
namespace {

using LD = long double;

struct Case {
  Fn fn;
  Params params;
  // The closed form in long double (an oracle independent of the strip code).
  std::function<LD(LD)> reference;
  // Scale of an absolute error the formula makes at x beyond its conditioning (cancellation).
  std::function<LD(LD)> scale = [](LD) { return LD(0); };
  double lo = -30.0;
  double hi = 30.0;
};

LD Softplus(LD x) { return std::log1p(std::exp(x)); }

std::vector<Case> Cases() {
  const LD kSeluAlpha = 1.6732632423543772848170429916717L;
  const LD kSeluScale = 1.0507009873554804934193349852946L;
  return {
      {Fn::kGelu, {0.0}, [](LD x) { return x * std::erfc(-x / std::sqrt(LD(2))) / 2; }},
      {Fn::kGelu,
       {1.0},
       [](LD x) {
         const LD k = std::sqrt(LD(2) / LD(3.14159265358979323846264338327950288L));
         return x / 2 * (1 + std::tanh(k * (x + LD(0.044715) * x * x * x)));
       },
       [](LD x) { return std::fabs(x); }},  // 1 + tanh(...) cancels for x < 0
      {Fn::kSilu, {}, [](LD x) { return x / (1 + std::exp(-x)); }},
      {Fn::kMish, {}, [](LD x) { return x * std::tanh(x > 20 ? x : Softplus(x)); }},
      {Fn::kSoftplus, {1.0, 20.0}, [](LD x) { return x > 20 ? x : Softplus(x); }},
      {Fn::kSoftplus, {2.5, 3.0}, [](LD x) { return 2.5 * x > 3 ? x : Softplus(2.5 * x) / 2.5; }},
      {Fn::kElu, {0.7}, [](LD x) { return x > 0 ? x : LD(0.7) * std::expm1(x); }},
      {Fn::kSelu,
       {},
       [=](LD x) { return kSeluScale * (x > 0 ? x : kSeluAlpha * std::expm1(x)); }},
      {Fn::kCelu, {1.5}, [](LD x) { return x > 0 ? x : LD(1.5) * std::expm1(x / LD(1.5)); }},
      {Fn::kLeakyRelu, {0.01}, [](LD x) { return x > 0 ? x : x * LD(0.01); }},
      {Fn::kHardtanh, {-2.0, 0.5}, [](LD x) { return std::min(std::max(x, LD(-2)), LD(0.5)); }},
      {Fn::kHardswish, {}, [](LD x) { return x * std::min(std::max(x + 3, LD(0)), LD(6)) / 6; }},
      {Fn::kHardsigmoid, {}, [](LD x) { return std::min(std::max(x + 3, LD(0)), LD(6)) / 6; }},
      {Fn::kLogsigmoid, {}, [](LD x) { return -std::log1p(std::exp(-x)); }},
      {Fn::kSoftsign, {}, [](LD x) { return x / (1 + std::fabs(x)); }},
      {Fn::kClamp, {-0.5, 0.75}, [](LD x) { return std::min(std::max(x, LD(-0.5)), LD(0.75)); }},
      {Fn::kClamp,
       {-std::numeric_limits<double>::infinity(), 0.0},
       [](LD x) { return std::min(x, LD(0)); }},
  };
}

template <typename T>
std::vector<T> Points(double lo, double hi, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<T> x;
  for (size_t i = 0; i < n; ++i) x.push_back(static_cast<T>(uniform(rng)));
  // Points where the formulas switch branches, and the edges of the range.
  for (double v : {0.0, -0.0, 1e-30, -1e-30, 3.0, -3.0, 20.0, 1.2, 0.5, -2.0, lo, hi}) {
    x.push_back(static_cast<T>(v));
  }
  return x;
}

template <typename T>
void CheckAccuracy(const Case& c, T tolerance_ulps) {
  const std::string name(FnName(c.fn));
  const std::vector<T> x = Points<T>(c.lo, c.hi, 20000, 7);
  std::vector<T> y(x.size());
  Apply(c.fn, c.params, x.data(), y.data(), static_cast<int64_t>(x.size()));
  const LD eps = std::numeric_limits<T>::epsilon();
  for (size_t i = 0; i < x.size(); ++i) {
    const LD want = c.reference(x[i]);
    // The formulas round a multiple of x first (x * beta, -x / sqrt 2), an error of eps in
    // the argument that the function amplifies by its condition number |x f'(x) / f(x)|: at
    // gelu(-10) that alone is ~200 ulps, in every implementation.
    const LD h = LD(1e-7) * std::max(LD(1), std::fabs(LD(x[i])));
    const LD conditioning = std::fabs(x[i] * (c.reference(x[i] + h) - c.reference(x[i] - h)) /
                                      (2 * h));
    // Subnormal results may lose their few bits to an intermediate's underflow (gelu's
    // erfc factor underflows before the product with x does).
    const LD allowed = tolerance_ulps * eps * (std::fabs(want) + conditioning + c.scale(x[i])) +
                       16 * std::numeric_limits<T>::denorm_min();
    ASSERT_LE(std::fabs(static_cast<LD>(y[i]) - want), allowed)
        << name << "(" << x[i] << ") = " << y[i] << ", want " << static_cast<double>(want);
  }
}

// Every function agrees with its closed form to a few ulps, at every capability.
TEST(ActivationMath, MatchesClosedFormsAtEveryCapability) {
  const CpuCapability machine = ActiveCpuCapability();
  for (CpuCapability capability : SupportedCpuCapabilities()) {
    SetCpuCapability(capability);
    SCOPED_TRACE(std::string(CpuCapabilityName(capability)));
    for (const Case& c : Cases()) {
      CheckAccuracy<float>(c, 8.0f);
      CheckAccuracy<double>(c, 8.0);
    }
  }
  SetCpuCapability(machine);
}

template <typename T>
bool SameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// An element's bits depend on its value alone: cut into strips at any offset, computed in
// place, or alone, every element comes out the same (what lets jit's fused chunks, thread
// ranges and strided blocks give the kernel's bits).
template <typename T>
void CheckPositionIndependence() {
  std::vector<Case> cases = Cases();
  cases.push_back({Fn::kErfinv, {}, nullptr, nullptr, -1.0, 1.0});
  cases.push_back({Fn::kDigamma, {}, nullptr, nullptr, -5.0, 20.0});
  Params order2;
  order2.n = 2;
  cases.push_back({Fn::kPolygamma, order2, nullptr, nullptr, 0.1, 20.0});
  std::mt19937 rng(11);
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(FnName(c.fn)));
    std::vector<T> x = Points<T>(c.lo, c.hi, 1000, 3);
    x.push_back(std::numeric_limits<T>::quiet_NaN());
    x.push_back(std::numeric_limits<T>::infinity());
    x.push_back(-std::numeric_limits<T>::infinity());
    const int64_t n = static_cast<int64_t>(x.size());
    std::vector<T> whole(x.size());
    Apply(c.fn, c.params, x.data(), whole.data(), n);
    std::vector<T> pieces(x.size());
    for (int64_t begin = 0; begin < n;) {
      const int64_t len = std::min<int64_t>(n - begin, 1 + rng() % 300);
      Apply(c.fn, c.params, x.data() + begin, pieces.data() + begin, len);
      begin += len;
    }
    std::vector<T> in_place = x;
    Apply(c.fn, c.params, in_place.data(), in_place.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      T alone;
      Apply(c.fn, c.params, &x[i], &alone, 1);
      ASSERT_TRUE(SameBits(whole[i], pieces[i]) && SameBits(whole[i], in_place[i]) &&
                  SameBits(whole[i], alone))
          << "x = " << x[i] << ": " << whole[i] << " " << pieces[i] << " " << in_place[i]
          << " " << alone;
    }
  }
}

TEST(ActivationMath, BitsDependOnTheElementAlone) {
  CheckPositionIndependence<float>();
  CheckPositionIndependence<double>();
}

TEST(ActivationMath, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto at = [](Fn fn, Params p, double x) {
    double y;
    Apply(fn, p, &x, &y, 1);
    return y;
  };
  for (const Case& c : Cases()) {
    SCOPED_TRACE(std::string(FnName(c.fn)));
    EXPECT_TRUE(std::isnan(at(c.fn, c.params, std::nan(""))));
  }
  // Past the threshold softplus and mish are x itself (no overflow of e^x).
  EXPECT_EQ(at(Fn::kSoftplus, {1.0, 20.0}, 1000.0), 1000.0);
  EXPECT_EQ(at(Fn::kMish, {}, 1000.0), 1000.0);
  EXPECT_EQ(at(Fn::kMish, {}, inf), inf);
  EXPECT_EQ(at(Fn::kLogsigmoid, {}, -1000.0), -1000.0);
  EXPECT_EQ(at(Fn::kLogsigmoid, {}, 1000.0), 0.0);
  EXPECT_EQ(at(Fn::kLogsigmoid, {}, -inf), -inf);
  EXPECT_EQ(at(Fn::kElu, {1.0}, -inf), -1.0);
  EXPECT_EQ(at(Fn::kGelu, {0.0}, inf), inf);
  EXPECT_EQ(at(Fn::kHardtanh, {2.0, 1.0}, -5.0), 1.0);  // min_val > max_val: max_val
  // clamp: min > max gives max; a NaN bound is the result; absent bounds are infinite, so
  // infinities pass through; a finite bound past float's range is infinite in float.
  EXPECT_EQ(at(Fn::kClamp, {2.0, 1.0}, -5.0), 1.0);
  EXPECT_TRUE(std::isnan(at(Fn::kClamp, {std::nan(""), inf}, 3.0)));
  EXPECT_TRUE(std::isnan(at(Fn::kClamp, {-inf, std::nan("")}, 3.0)));
  EXPECT_EQ(at(Fn::kClamp, {-inf, inf}, -inf), -inf);
  EXPECT_EQ(at(Fn::kClamp, {0.0, inf}, -0.0), 0.0);
  {
    const float x = std::numeric_limits<float>::infinity();
    float y;
    Apply(Fn::kClamp, {-inf, 3.4028235e38}, &x, &y, 1);  // a cast would give FLT_MAX
    EXPECT_EQ(y, x);
  }
  EXPECT_EQ(at(Fn::kErfinv, {}, 1.0), inf);
  EXPECT_TRUE(std::isnan(at(Fn::kErfinv, {}, 1.5)));
  EXPECT_EQ(at(Fn::kDigamma, {}, 0.0), -inf);
  Params trigamma;
  trigamma.n = 1;
  EXPECT_NEAR(at(Fn::kPolygamma, trigamma, 1.0), 1.6449340668482264, 1e-14);  // pi^2 / 6
  EXPECT_NEAR(at(Fn::kDigamma, {}, 1.0), -0.5772156649015329, 1e-15);         // -gamma
}

TEST(ActivationMath, NamesAreTheOps) {
  EXPECT_EQ(FnName(Fn::kGelu), "gelu");
  EXPECT_EQ(FnName(Fn::kLeakyRelu), "leaky_relu");
  EXPECT_EQ(FnName(Fn::kPolygamma), "polygamma");
  EXPECT_EQ(FnName(Fn::kClamp), "clamp");
}

}  // namespace
}  // namespace ft::activation

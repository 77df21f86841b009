// ft/benchmarks/vecmath_libs.cc: the measurement behind //cpu:vecmath's choice of SLEEF.
//
// Issue 22 asked for vectorized math from a library made for it, measured between the two
// Debian has: SLEEF 3.5 (libsleef-dev) and Highway 1.0 (libhwy-dev, hwy/contrib/math with
// HWY_DYNAMIC_DISPATCH). Each figure "<fn>_<dtype>_<level>" times 10^6 elements on one thread:
//   ft        SLEEF, through ft::vecmath::Apply at that capability (what ft's kernels run);
//   baseline  Highway's function of the same name, dispatched by HWY_DYNAMIC_DISPATCH with
//             the supported targets limited to that level (sse2 has no Highway target in
//             1.0; SSSE3, its lowest x86 target, stands in for it).
// "<fn>_<dtype>_scalar" puts the widest level's SLEEF beside the scalar <cmath> loop ft ran
// before issue 22.
//
// Throughput is one half of the choice; docs/performance.md ("Vectorized math") gives the
// other: Highway's stated bounds are 1 ulp (exp), 3 (sin, cos, valid only for |x| <= 39000)
// and 4 (log, tanh), and it has no tan, erf, erfc, lgamma or pow, where SLEEF's u10
// functions are 1 ulp over the whole range (vecmath_test measures them).
//
//   ./bazelw run -c opt //benchmarks:vecmath_libs

// Highway compiles this file once per x86 target (foreach_target.h re-includes it).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "benchmarks/vecmath_libs.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target.h must come first.
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ft_bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Whole vectors, then the tail through a padded vector (as ft::vecmath does).
template <typename T, typename F>
void Map(const T* in, T* out, size_t n, F f) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(d, hn::LoadU(d, in + i)), d, out + i);
  if (i < n) {
    HWY_ALIGN T buf[hn::MaxLanes(d)] = {};
    for (size_t j = i; j < n; ++j) buf[j - i] = in[j];
    hn::Store(f(d, hn::Load(d, buf)), d, buf);
    for (size_t j = i; j < n; ++j) out[j] = buf[j - i];
  }
}

#define FT_HWY_FN(name)                                                                   \
  void Hwy##name##F32(const float* in, float* out, size_t n) {                           \
    Map(in, out, n, [](auto d, auto v) { return hn::name(d, v); });                      \
  }                                                                                       \
  void Hwy##name##F64(const double* in, double* out, size_t n) {                         \
    Map(in, out, n, [](auto d, auto v) { return hn::name(d, v); });                      \
  }
FT_HWY_FN(Exp)
FT_HWY_FN(Log)
FT_HWY_FN(Sin)
FT_HWY_FN(Tanh)
#undef FT_HWY_FN

}  // namespace HWY_NAMESPACE
}  // namespace ft_bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/side_by_side.h"
#include "cpu/cpu_capability.h"
#include "cpu/vecmath.h"

namespace ft_bench {

HWY_EXPORT(HwyExpF32);
HWY_EXPORT(HwyExpF64);
HWY_EXPORT(HwyLogF32);
HWY_EXPORT(HwyLogF64);
HWY_EXPORT(HwySinF32);
HWY_EXPORT(HwySinF64);
HWY_EXPORT(HwyTanhF32);
HWY_EXPORT(HwyTanhF64);

namespace {

using ft::CpuCapability;
using ft::vecmath::Fn;

// The scalar <cmath> loop ft's kernels ran before (float overloads for float); the switch is
// outside the loop so that it costs nothing per element.
template <typename T>
void ScalarLoop(Fn fn, const std::vector<T>& x, std::vector<T>& y) {
  const auto run = [&](auto f) {
    for (size_t i = 0; i < x.size(); ++i) y[i] = f(x[i]);
  };
  switch (fn) {
    case Fn::kExp:
      return run([](T v) { return std::exp(v); });
    case Fn::kLog:
      return run([](T v) { return std::log(v); });
    case Fn::kSin:
      return run([](T v) { return std::sin(v); });
    default:
      return run([](T v) { return std::tanh(v); });
  }
}

struct Workload {
  const char* name;
  Fn fn;
  double lo, hi;  // the inputs: uniform in [lo, hi], where both libraries are valid
};

const std::vector<Workload>& Workloads() {
  static const auto* w = new std::vector<Workload>{
      {"exp", Fn::kExp, -10.0, 10.0},
      {"log", Fn::kLog, 1e-3, 1e3},
      {"sin", Fn::kSin, -100.0, 100.0},
      {"tanh", Fn::kTanh, -5.0, 5.0},
  };
  return *w;
}

template <typename T>
void CallHwy(const std::string& name, const T* in, T* out, size_t n) {
  if constexpr (std::is_same_v<T, float>) {
    if (name == "exp") return HWY_DYNAMIC_DISPATCH(HwyExpF32)(in, out, n);
    if (name == "log") return HWY_DYNAMIC_DISPATCH(HwyLogF32)(in, out, n);
    if (name == "sin") return HWY_DYNAMIC_DISPATCH(HwySinF32)(in, out, n);
    return HWY_DYNAMIC_DISPATCH(HwyTanhF32)(in, out, n);
  } else {
    if (name == "exp") return HWY_DYNAMIC_DISPATCH(HwyExpF64)(in, out, n);
    if (name == "log") return HWY_DYNAMIC_DISPATCH(HwyLogF64)(in, out, n);
    if (name == "sin") return HWY_DYNAMIC_DISPATCH(HwySinF64)(in, out, n);
    return HWY_DYNAMIC_DISPATCH(HwyTanhF64)(in, out, n);
  }
}

// Highway's targets at or below an ft capability.
int64_t HwyTargetsFor(CpuCapability c) {
  int64_t targets = HWY_SCALAR | HWY_EMU128 | HWY_SSSE3;
  if (c >= CpuCapability::kAvx2) targets |= HWY_SSE4 | HWY_AVX2;
  if (c >= CpuCapability::kAvx512) targets |= HWY_AVX3;
  return targets;
}

template <typename T>
std::vector<T> Inputs(const Workload& w, int64_t n) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> dist(w.lo, w.hi);
  std::vector<T> x(static_cast<size_t>(n));
  for (T& v : x) v = static_cast<T>(dist(rng));
  return x;
}

template <typename T>
void RegisterWorkload(const Workload& w, const char* dtype, int64_t n) {
  const std::vector<CpuCapability> levels = ft::SupportedCpuCapabilities();
  for (const CpuCapability level : levels) {
    const std::string figure =
        std::string(w.name) + "_" + dtype + "_" + std::string(ft::CpuCapabilityName(level));
    ft::bench::SetFigure(figure, "SLEEF (ft) vs Highway, same level", 1e-6 * n, "1e6 elems");
    benchmark::RegisterBenchmark((figure + "/ft").c_str(), [w, n, level](benchmark::State& s) {
      const std::vector<T> x = Inputs<T>(w, n);
      std::vector<T> y(x.size());
      ft::SetCpuCapability(level);
      for (auto _ : s) {
        ft::vecmath::Apply(w.fn, x.data(), y.data(), n);
        benchmark::DoNotOptimize(y.data());
      }
      ft::SetCpuCapability(ft::MachineCpuCapability());
    });
    benchmark::RegisterBenchmark((figure + "/baseline").c_str(),
                                 [w, n, level](benchmark::State& s) {
                                   const std::vector<T> x = Inputs<T>(w, n);
                                   std::vector<T> y(x.size());
                                   hwy::SetSupportedTargetsForTest(HwyTargetsFor(level));
                                   for (auto _ : s) {
                                     CallHwy<T>(w.name, x.data(), y.data(),
                                                static_cast<size_t>(n));
                                     benchmark::DoNotOptimize(y.data());
                                   }
                                   hwy::SetSupportedTargetsForTest(0);
                                 });
  }
  const std::string figure = std::string(w.name) + "_" + dtype + "_scalar";
  ft::bench::SetFigure(figure, "SLEEF widest (ft) vs <cmath> loop", 1e-6 * n, "1e6 elems");
  benchmark::RegisterBenchmark((figure + "/ft").c_str(), [w, n](benchmark::State& s) {
    const std::vector<T> x = Inputs<T>(w, n);
    std::vector<T> y(x.size());
    for (auto _ : s) {
      ft::vecmath::Apply(w.fn, x.data(), y.data(), n);
      benchmark::DoNotOptimize(y.data());
    }
  });
  benchmark::RegisterBenchmark((figure + "/baseline").c_str(), [w, n](benchmark::State& s) {
    const std::vector<T> x = Inputs<T>(w, n);
    std::vector<T> y(x.size());
    for (auto _ : s) {
      ScalarLoop<T>(w.fn, x, y);
      benchmark::DoNotOptimize(y.data());
    }
  });
}

}  // namespace
}  // namespace ft_bench

int main(int argc, char** argv) {
  const int64_t n = ft::bench::SmokeTest() ? 1000 : 1000000;
  for (const ft_bench::Workload& w : ft_bench::Workloads()) {
    ft_bench::RegisterWorkload<float>(w, "f32", n);
    ft_bench::RegisterWorkload<double>(w, "f64", n);
  }
  return ft::bench::RunAndCompare(argc, argv);
}

#endif  // HWY_ONCE

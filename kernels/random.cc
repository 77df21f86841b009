#include "kernels/random.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/checks.h"
#include "tensor/loops.h"
#include "tensor/scalar_check.h"

namespace ft::kernels {
namespace {

using internal::ForEachStrided;
using internal::MakeOperand;
using internal::Operand;

Generator& Resolve(Generator* gen) { return gen != nullptr ? *gen : DefaultGenerator(); }

void CheckFloatingDType(const char* op, const Tensor& x) {
  if (!IsFloating(x.dtype())) {
    ThrowError(op, ": expected a floating point dtype, got ", DTypeName(x.dtype()),
               " (input of shape ", ShapeToString(x.sizes()), ")");
  }
}

Tensor Filled(const Tensor& x, DType dtype, Scalar value) {
  Tensor out = EmptyContiguous(x.sizes(), dtype);
  VisitEveryDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::fill_n(out.data<T>(), out.numel(), value.to<T>());
  });
  return out;
}

// UniformSample: counter `c` of stream `seed` as a uniform [0, 1) value of type T, keeping
// the top `digits` (T's significand width) of the 53 random bits: exact in T and strictly
// below 1 (rounding the double to nearest could give 1). So a float32 draw is the float64
// draw truncated, and a float16 (11 digits) or bfloat16 (8) draw is a multiple of 2^-11 or
// 2^-8, as torch's uniform_real_distribution makes them.
template <typename T>
inline T UniformSample(uint64_t seed, uint64_t c) {
  const double u = Generator::Uniform(seed, c);
  if constexpr (std::is_same_v<T, double>) {
    return u;
  } else {
    constexpr double kSteps = static_cast<double>(uint64_t{1} << std::numeric_limits<T>::digits);
    return T(static_cast<float>(static_cast<double>(static_cast<uint32_t>(u * kSteps)) / kSteps));
  }
}

// NormalSample: counter `c` as a standard normal value of type T (through float for the
// 16-bit types, rounded once).
template <typename T>
inline T NormalSample(uint64_t seed, uint64_t c) {
  const double z = Generator::Normal(seed, c);
  if constexpr (std::is_same_v<T, double>) {
    return z;
  } else {
    return T(static_cast<float>(z));
  }
}

// FillCounters writes out[i] = sample(TypeTag<T>, first + i) over a contiguous real floating
// tensor (float16, bfloat16, float32, float64): the fast path, one Philox call per element
// and nothing else. A complex tensor takes two counters per element, its real part at
// first + 2i and its imaginary part at first + 2i + 1, each drawn as the part's type and
// scaled by `complex_scale` (1/sqrt(2) for randn: torch's complex normal has variance 1/2
// in each part, 1 in all).
template <typename Sample>
void FillCounters(const Tensor& out, uint64_t first, double complex_scale, Sample&& sample) {
  VisitEveryDType(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const int64_t n = out.numel();
    if constexpr (kIsFloatingElement<T>) {
      for (int64_t i = 0; i < n; ++i) o[i] = sample(tag, first + static_cast<uint64_t>(i));
    } else if constexpr (kIsComplexElement<T>) {
      using Part = typename T::value_type;
      const Part scale = static_cast<Part>(complex_scale);
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t c = first + 2 * static_cast<uint64_t>(i);
        o[i] = T(sample(TypeTag<Part>{}, c) * scale, sample(TypeTag<Part>{}, c + 1) * scale);
      }
    }
  });
}

// CheckRandomDType: rand_like and randn_like draw floating and complex values.
void CheckRandomDType(const char* op, const Tensor& x) {
  if (!IsFloating(x.dtype()) && !IsComplex(x.dtype())) {
    ThrowError(op, ": expected a floating point or complex dtype, got ", DTypeName(x.dtype()),
               " (input of shape ", ShapeToString(x.sizes()), ")");
  }
}

// Counters: how many counters a draw into `out` takes (two per complex element).
uint64_t Counters(const Tensor& out) {
  return static_cast<uint64_t>(out.numel()) * (IsComplex(out.dtype()) ? 2 : 1);
}

// ForEachRunWithIndex walks `in` (any strides, out's shape and dtype T) alongside the
// contiguous `out` and calls f(o, o_stride, a, a_stride, n, index) for each inner run, where
// `index` is the row-major logical index of o[0] (its offset in `out`), i.e. what element
// o[0] adds to its generator's first counter. Strides are in elements.
template <typename T, typename F>
void ForEachRunWithIndex(const Tensor& out, const Tensor& in, F&& f) {
  FT_CHECK(out.is_contiguous());
  const std::array<Operand, 2> ops = {MakeOperand(out, out.sizes()), MakeOperand(in, out.sizes())};
  T* const base = out.data<T>();
  constexpr int64_t kItem = sizeof(T);
  ForEachStrided<2>(out.sizes(), ops,
                    [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                      T* o = reinterpret_cast<T*>(p[0]);
                      f(o, s[0] / kItem, reinterpret_cast<const T*>(p[1]), s[1] / kItem, n,
                        static_cast<uint64_t>(o - base));
                    });
}

}  // namespace

// ---- *_like factories ----

Tensor zeros_like(const Tensor& x) {
  Tensor out = EmptyContiguous(x.sizes(), x.dtype());
  if (out.numel() > 0) {
    std::memset(out.impl()->raw_data(), 0, static_cast<size_t>(out.numel() * ItemSize(x.dtype())));
  }
  return out;
}

Tensor ones_like(const Tensor& x) { return Filled(x, x.dtype(), 1); }

Tensor full_like(const Tensor& x, Scalar value) {
  CheckScalarFits("full_like", value, x.dtype());
  return Filled(x, x.dtype(), value);
}

Tensor full_like_dtype(const Tensor& x, Scalar value, DType dtype) {
  CheckScalarFits("full_like", value, dtype);
  return Filled(x, dtype, value);
}

// ---- random ops ----

Tensor rand_like(const Tensor& x, Generator* gen) {
  CheckRandomDType("rand_like", x);
  Tensor out = EmptyContiguous(x.sizes(), x.dtype());
  Generator& g = Resolve(gen);
  const uint64_t seed = g.seed();
  const uint64_t first = g.Reserve(Counters(out));
  FillCounters(out, first, 1.0, [seed](auto tag, uint64_t c) {
    using T = typename decltype(tag)::type;
    return UniformSample<T>(seed, c);
  });
  return out;
}

Tensor randn_like(const Tensor& x, Generator* gen) {
  CheckRandomDType("randn_like", x);
  Tensor out = EmptyContiguous(x.sizes(), x.dtype());
  Generator& g = Resolve(gen);
  const uint64_t seed = g.seed();
  const uint64_t first = g.Reserve(Counters(out));
  FillCounters(out, first, M_SQRT1_2, [seed](auto tag, uint64_t c) {
    using T = typename decltype(tag)::type;
    return NormalSample<T>(seed, c);
  });
  return out;
}

Tensor bernoulli(const Tensor& p, Generator* gen) {
  CheckFloatingDType("bernoulli", p);
  Tensor out = EmptyContiguous(p.sizes(), p.dtype());
  VisitDType(p.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      // Validate every probability first (NaN fails the comparison too).
      const std::array<Operand, 1> ops = {MakeOperand(p, p.sizes())};
      ForEachStrided<1>(
          p.sizes(), ops,
          [&](const std::array<char*, 1>& ptr, const std::array<int64_t, 1>& s, int64_t n) {
            const T* a = reinterpret_cast<const T*>(ptr[0]);
            const int64_t stride = s[0] / static_cast<int64_t>(sizeof(T));
            for (int64_t j = 0; j < n; ++j) {
              const T v = a[j * stride];
              if (!(v >= T(0) && v <= T(1))) {
                ThrowError("bernoulli: probabilities must be in [0, 1], got ",
                           static_cast<double>(v), " (probabilities of shape ",
                           ShapeToString(p.sizes()), ")");
              }
            }
          });
      Generator& g = Resolve(gen);
      const uint64_t seed = g.seed();
      const uint64_t first = g.Reserve(static_cast<uint64_t>(out.numel()));
      // 1 with probability p: u < p (u in [0, 1), so p == 0 never fires and p == 1 always).
      ForEachRunWithIndex<T>(
          out, p, [&](T* o, int64_t os, const T* a, int64_t as, int64_t n, uint64_t index) {
            for (int64_t j = 0; j < n; ++j) {
              const double u =
                  Generator::Uniform(seed, first + index + static_cast<uint64_t>(j * os));
              o[j * os] = u < static_cast<double>(a[j * as]) ? T(1) : T(0);
            }
          });
    }
  });
  return out;
}

Tensor dropout(const Tensor& x, double p, bool train, Generator* gen) {
  CheckFloatingDType("dropout", x);
  if (!(p >= 0.0 && p <= 1.0)) {
    ThrowError("dropout: p must be in [0, 1], got ", p);
  }
  // PyTorch returns the input itself here and draws nothing.
  if (!train || p == 0.0) return x;
  if (p == 1.0) return zeros_like(x);
  Tensor out = EmptyContiguous(x.sizes(), x.dtype());
  Generator& g = Resolve(gen);
  const uint64_t seed = g.seed();
  const uint64_t first = g.Reserve(static_cast<uint64_t>(out.numel()));
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      // Keep an element when u < T(1 - p): exactly bernoulli(full_like(x, 1 - p)) on the same
      // counters, so dropout == x * bernoulli(full_like(x, 1 - p)) * (1 / (1 - p)) element
      // for element (what a decomposed gradient rule can rely on).
      const double keep = static_cast<double>(static_cast<T>(1.0 - p));
      const T scale = static_cast<T>(1.0 / (1.0 - p));
      ForEachRunWithIndex<T>(
          out, x, [&](T* o, int64_t os, const T* a, int64_t as, int64_t n, uint64_t index) {
            for (int64_t j = 0; j < n; ++j) {
              const double u =
                  Generator::Uniform(seed, first + index + static_cast<uint64_t>(j * os));
              o[j * os] = u < keep ? a[j * as] * scale : T(0);
            }
          });
    }
  });
  return out;
}

Tensor randint(int64_t low, int64_t high, IntArrayRef shape, Generator* gen) {
  CheckShapeValid("randint", shape);
  if (high <= low) {
    ThrowError("randint: expected low < high, got low=", low, " and high=", high,
               " (the range [low, high) is empty)");
  }
  // Unsigned arithmetic: high - low can exceed INT64_MAX (e.g. the full int64 range).
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  Tensor out = EmptyContiguous(shape, kInt64);
  Generator& g = Resolve(gen);
  const uint64_t seed = g.seed();
  const uint64_t first = g.Reserve(static_cast<uint64_t>(out.numel()));
  int64_t* o = out.data<int64_t>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) {
    // 64 random bits reduced modulo the range (PyTorch's method; the bias is at most
    // range / 2^64 per value).
    const std::array<uint32_t, 4> r = Generator::Philox(seed, first + static_cast<uint64_t>(i));
    const uint64_t bits = (static_cast<uint64_t>(r[0]) << 32) | r[1];
    o[i] = static_cast<int64_t>(static_cast<uint64_t>(low) + bits % range);
  }
  return out;
}

}  // namespace ft::kernels

// Tests of the casting copy (tensor/copy.h: kernels::to and kernels::copy_into) over every ordered
// pair of the twelve dtypes, bit for bit against torch 1.13's src.to(dst). For each source dtype
// the fixture holds values chosen to probe conversions (signed zeros, fractions toward zero and at
// ties, NaNs of both signs, infinities, the limits of every integer dtype and the values just past
// them, float16's and bfloat16's range edges, subnormals, complex numbers with zero, nonzero and
// NaN imaginary parts) and torch's result for each destination: tests/fixtures/torch/casts, made by
// tools/torch_fixtures/casts.py, which stores every element as its raw bit pattern (the .npy
// loader reads int64, not the other dtypes). A NaN result matches any NaN of the same format (per
// part for complex): torch's NaN payloads vary with its code path (bfloat16's is 0xFFFF or 0x7FC0).
// Each pair is checked through the contiguous loop, a strided source, a strided destination and a
// tensor long enough to be split over threads, since each reaches different loop code.
#include <array>
#include <bit>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "interop/npy.h"
#include "tensor/copy.h"
#include "tensor/dtype.h"
#include "tensor/factories.h"
#include "tensor/half.h"
#include "tensor/tensor.h"

namespace ft {
namespace {

// The fixture's patterns are little-endian, and elements are written by copying their low bytes.
static_assert(std::endian::native == std::endian::little);

// Bits: one element's raw bit pattern as the fixture stores it: [0] the element's bits
// zero-extended (a complex number's real part), [1] a complex number's imaginary part, else 0.
using Bits = std::array<uint64_t, 2>;

template <typename T>
struct IsComplex : std::false_type {};
template <typename T>
struct IsComplex<std::complex<T>> : std::true_type {};

// Fixture: the [n, 2] int64 file tests/fixtures/torch/casts/<name>.npy as patterns.
std::vector<Bits> Fixture(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string root = srcdir != nullptr ? std::string(srcdir) + "/" +
                                                   (workspace != nullptr ? workspace : "ft") + "/"
                                             : "";
  const Tensor t = LoadNpy(root + "tests/fixtures/torch/casts/" + name + ".npy");
  EXPECT_EQ(t.dtype(), kInt64) << name;
  EXPECT_EQ(t.dim(), 2) << name;
  EXPECT_EQ(t.size(1), 2) << name;
  const std::vector<int64_t> flat = t.to_vector<int64_t>();
  std::vector<Bits> out(flat.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = {static_cast<uint64_t>(flat[2 * i]), static_cast<uint64_t>(flat[2 * i + 1])};
  }
  return out;
}

// Store writes pattern `b` into the element at `p`; Load reads one back. A complex element is two
// parts of half its size each.
template <typename T>
void Store(T* p, const Bits& b) {
  constexpr size_t kPart = IsComplex<T>::value ? sizeof(T) / 2 : sizeof(T);
  std::memcpy(reinterpret_cast<char*>(p), &b[0], kPart);
  if constexpr (IsComplex<T>::value) std::memcpy(reinterpret_cast<char*>(p) + kPart, &b[1], kPart);
}

template <typename T>
Bits Load(const T* p) {
  constexpr size_t kPart = IsComplex<T>::value ? sizeof(T) / 2 : sizeof(T);
  Bits b = {0, 0};
  std::memcpy(&b[0], reinterpret_cast<const char*>(p), kPart);
  if constexpr (IsComplex<T>::value)
    std::memcpy(&b[1], reinterpret_cast<const char*>(p) + kPart, kPart);
  return b;
}

// Make returns a 1-D tensor of `dtype` holding `values` with stride `step`. The elements between
// (step > 1) hold the values in reverse order: valid elements, so that a loop reading one by
// mistake converts a real value into a wrong result instead of reading garbage.
Tensor Make(DType dtype, const std::vector<Bits>& values, int64_t step) {
  const auto n = static_cast<int64_t>(values.size());
  const Tensor base = empty({n * step}, dtype);
  VisitEveryDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = base.data<T>();
    for (int64_t i = 0; i < n * step; ++i) {
      Store(p + i, i % step == 0 ? values[i / step] : values[n - 1 - i / step]);
    }
  });
  if (step == 1) return base;
  return MakeDense(base.storage(), dtype, Shape{n}, Shape{step}, 0);
}

// Read returns the patterns of a 1-D tensor's elements, whatever its stride.
std::vector<Bits> Read(const Tensor& t) {
  std::vector<Bits> out(static_cast<size_t>(t.numel()));
  VisitEveryDType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) out[i] = Load(p + i * t.stride(0));
  });
  return out;
}

// IsNan: whether `bits` is a NaN of the floating dtype `part` (a complex dtype's part format).
bool IsNan(DType part, uint64_t bits) {
  switch (part) {
    case kFloat16:
      return (bits & 0x7C00) == 0x7C00 && (bits & 0x03FF) != 0;
    case kBFloat16:
      return (bits & 0x7F80) == 0x7F80 && (bits & 0x007F) != 0;
    case kFloat32:
      return (bits & 0x7F800000) == 0x7F800000 && (bits & 0x007FFFFF) != 0;
    case kFloat64:
      return (bits & 0x7FF0000000000000) == 0x7FF0000000000000 && (bits & 0x000FFFFFFFFFFFFF) != 0;
    default:
      return false;
  }
}

// Same: ft's result `a` matches torch's `b` for `dtype`: equal bits, or NaN in both (per part).
bool Same(DType dtype, const Bits& a, const Bits& b) {
  const DType part = ToRealDType(dtype);
  for (int k = 0; k < 2; ++k) {
    if (a[k] != b[k] && !(IsNan(part, a[k]) && IsNan(part, b[k]))) return false;
  }
  return true;
}

// Describe: a pattern of `dtype` as its value and its bits, for failure messages: "-2.5
// (0xc0200000)", "(0, 1) (0x00000000, 0x3f800000)", "true (0x01)".
std::string Describe(DType dtype, const Bits& b) {
  return VisitEveryDType(dtype, [&](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    T v;
    Store(&v, b);
    const int digits = static_cast<int>(IsComplex<T>::value ? sizeof(T) : 2 * sizeof(T));
    if constexpr (IsComplex<T>::value) {
      return absl::StrFormat("(%.17g, %.17g) (0x%0*x, 0x%0*x)", static_cast<double>(v.real()),
                             static_cast<double>(v.imag()), digits, b[0], digits, b[1]);
    } else if constexpr (std::is_same_v<T, bool>) {
      return absl::StrFormat("%s (0x%0*x)", v ? "true" : "false", digits, b[0]);
    } else if constexpr (std::is_integral_v<T>) {
      return absl::StrFormat("%d (0x%0*x)", static_cast<int64_t>(v), digits, b[0]);
    } else {
      return absl::StrFormat("%.17g (0x%0*x)", static_cast<double>(v), digits, b[0]);
    }
  });
}

class Cast : public ::testing::TestWithParam<std::tuple<DType, DType>> {
 protected:
  void SetUp() override {
    std::tie(from_, to_) = GetParam();
    source_ = Fixture(std::string("casts.") + DTypeName(from_));
    expected_ = Fixture(std::string("casts.") + DTypeName(from_) + ".to." + DTypeName(to_));
    ASSERT_EQ(source_.size(), expected_.size());
    ASSERT_FALSE(source_.empty());
  }

  // Check: `actual` (element i from source value i % n) against torch's results, one failure per
  // source value and path naming both dtypes, the value and both results.
  void Check(const char* path, const Tensor& result, const std::vector<Bits>& actual) {
    EXPECT_EQ(result.dtype(), to_) << path;
    ASSERT_EQ(actual.size() % source_.size(), 0u) << path;
    std::vector<bool> reported(source_.size(), false);
    for (size_t i = 0; i < actual.size(); ++i) {
      const size_t k = i % source_.size();
      if (reported[k] || Same(to_, actual[i], expected_[k])) continue;
      reported[k] = true;
      ADD_FAILURE() << DTypeName(from_) << " -> " << DTypeName(to_) << " (" << path << ", element "
                    << i << "): source " << Describe(from_, source_[k]) << ": ft "
                    << Describe(to_, actual[i]) << ", torch " << Describe(to_, expected_[k]);
    }
  }

  DType from_ = kFloat32;
  DType to_ = kFloat32;
  std::vector<Bits> source_;    // the source values' patterns
  std::vector<Bits> expected_;  // torch's result for each
};

TEST_P(Cast, Contiguous) {
  const Tensor out = kernels::to(Make(from_, source_, 1), to_);
  Check("to, contiguous", out, Read(out));
}

// A strided source goes through the strided loop instead of the contiguous one.
TEST_P(Cast, StridedSource) {
  const Tensor out = kernels::to(Make(from_, source_, 2), to_);
  Check("to, stride-2 source", out, Read(out));
}

// copy_into a strided destination: the strided loop writing, and nothing written between.
TEST_P(Cast, StridedDestination) {
  const auto n = static_cast<int64_t>(source_.size());
  const std::vector<Bits> zeros(source_.size(), Bits{0, 0});  // 0, false or +0 in every dtype
  const Tensor dst = Make(to_, zeros, 2);
  kernels::copy_into(dst, Make(from_, source_, 1));
  Check("copy_into, stride-2 destination", dst, Read(dst));
  const Tensor between = MakeDense(dst.storage(), to_, Shape{n}, Shape{2}, 1);
  for (const Bits& b : Read(between)) {
    ASSERT_EQ(b, (Bits{0, 0})) << "copy_into wrote between the destination's elements";
  }
}

// The values repeated to at least 2^17 elements, two grains of the elementwise loops
// (tensor/loops.h), so the conversion splits over the intra-op threads, and each value meets the
// vectorized body of the loop at many positions, not only its scalar head or tail.
TEST_P(Cast, LongContiguous) {
  std::vector<Bits> tiled;
  while (tiled.size() < (size_t{1} << 17)) {
    tiled.insert(tiled.end(), source_.begin(), source_.end());
  }
  const Tensor out = kernels::to(Make(from_, tiled, 1), to_);
  Check("to, long contiguous", out, Read(out));
}

INSTANTIATE_TEST_SUITE_P(AllPairs, Cast,
                         ::testing::Combine(::testing::ValuesIn(kAllDTypes),
                                            ::testing::ValuesIn(kAllDTypes)),
                         [](const ::testing::TestParamInfo<Cast::ParamType>& param) {
                           return std::string(DTypeName(std::get<0>(param.param))) + "_to_" +
                                  DTypeName(std::get<1>(param.param));
                         });

}  // namespace
}  // namespace ft

// dtype_fuzzer: the twelve dtypes from decoded bytes. Elements are arbitrary bit patterns of
// a decoded source dtype (NaN payloads, subnormals, values past every integer range), in a
// decoded layout, and go through every path that converts or moves elements of any dtype:
// ft::to into a decoded destination dtype, copy_ into a strided destination, item and
// to_vector as other element types, full with a decoded scalar, cat of two dtypes, flip and
// index_select. Under the fuzz config's UBSan no conversion may be undefined behaviour (a
// float-to-integer cast out of range is one); besides, invariants that need no oracle abort
// when broken:
//   - each element of ft::to(x, d) is ConvertElement of x's element (the loops, Eigen's for
//     the original four and plain ones for the rest, agree with the element rule);
//   - widening into a dtype of the same category that holds every value, then narrowing
//     back, gives the element again (a NaN stays a NaN);
//   - cat's dtype is PromoteTypes of its operands', result_type is symmetric, and an
//     operation's result dtype can always be cast to from each operand (CanCast).
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ops/ops.h"
#include "tensor/copy.h"
#include "tensor/dtype.h"
#include "tensor/error.h"
#include "tensor/factories.h"
#include "tensor/promotion.h"
#include "tests/fuzz/fuzz_input.h"

namespace ft::fuzz {
namespace {

[[noreturn]] void Fail(const char* what, DType from, DType to) {
  std::fprintf(stderr, "dtype_fuzzer: %s (%s -> %s)\n", what, DTypeName(from), DTypeName(to));
  std::abort();
}

// SameValue: equal bits, or both NaN (per part for complex): NaN payloads are not kept by
// every conversion (torch's neither).
template <typename T>
bool SameValue(const T& a, const T& b) {
  if constexpr (kIsComplexElement<T>) {
    return SameValue(a.real(), b.real()) && SameValue(a.imag(), b.imag());
  } else if constexpr (kIsFloatingElement<T>) {
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    if (std::isnan(fa) || std::isnan(fb)) return std::isnan(fa) && std::isnan(fb);
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return a == b;
  }
}

// DecodeTensor: up to 8 elements of `dtype` from raw bytes, contiguous or every other
// element of a buffer twice as long (the gaps hold other decoded bytes).
Tensor DecodeTensor(FuzzInput& in, DType dtype) {
  const int64_t n = in.Below(9);
  const bool strided = in.Bool();
  const int64_t stored = strided ? 2 * n : n;
  Tensor buffer = empty({stored}, dtype);
  std::vector<uint8_t> bytes = in.Take(static_cast<size_t>(stored * ItemSize(dtype)));
  bytes.resize(static_cast<size_t>(stored * ItemSize(dtype)), 0);
  if (stored > 0) std::memcpy(buffer.impl()->raw_data(), bytes.data(), bytes.size());
  if (dtype == kBool) {
    // A bool element holds 0 or 1 (any other byte is not a bool value in C++).
    auto* p = static_cast<uint8_t*>(buffer.impl()->raw_data());
    for (int64_t i = 0; i < stored; ++i) p[i] &= 1;
  }
  return strided ? slice(buffer, 0, 0, stored, 2) : buffer;
}

// CheckConversion: every element of ft::to(x, to) and of a copy_ into a strided destination
// is ConvertElement of x's element.
void CheckConversion(const Tensor& x, DType to) {
  const Tensor y = ft::to(x, to);
  if (y.dtype() != to || y.numel() != x.numel()) Fail("to: wrong dtype or size", x.dtype(), to);
  Tensor strided_dst = slice(zeros({2 * x.numel()}, to), 0, 0, 2 * x.numel(), 2);
  kernels::copy_into(strided_dst, x);
  VisitEveryDType(x.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    VisitEveryDType(to, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const std::vector<From> src = x.to_vector<From>();
      const std::vector<To> got = y.to_vector<To>();
      const std::vector<To> got_strided = strided_dst.to_vector<To>();
      for (size_t i = 0; i < src.size(); ++i) {
        const To want = ConvertElement<To>(src[i]);
        if (!SameValue(got[i], want))
          Fail("to: an element differs from ConvertElement", x.dtype(), to);
        if (!SameValue(got_strided[i], want))
          Fail("copy_: a strided element differs", x.dtype(), to);
      }
    });
  });
}

// WiderOf: a dtype of x's category that holds every value of x's dtype exactly, if any.
bool WiderOf(DType d, DType* wider) {
  switch (d) {
    case DType::kInt8:
    case DType::kUInt8:
      *wider = kInt16;
      return true;
    case DType::kInt16:
      *wider = kInt32;
      return true;
    case DType::kInt32:
      *wider = kInt64;
      return true;
    case DType::kFloat16:
    case DType::kBFloat16:
      *wider = kFloat32;
      return true;
    case DType::kFloat32:
      *wider = kFloat64;
      return true;
    case DType::kComplex64:
      *wider = kComplex128;
      return true;
    default:
      return false;
  }
}

void CheckRoundTrip(const Tensor& x) {
  DType wider;
  if (!WiderOf(x.dtype(), &wider)) return;
  const Tensor back = ft::to(ft::to(x, wider), x.dtype());
  VisitEveryDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::vector<T> a = x.to_vector<T>(), b = back.to_vector<T>();
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SameValue(a[i], b[i]))
        Fail("widening and narrowing back changed a value", x.dtype(), wider);
    }
  });
}

void CheckPromotion(const Tensor& a, const Tensor& b) {
  const DType promoted = PromoteTypes(a.dtype(), b.dtype());
  if (!CanCast(a.dtype(), promoted) || !CanCast(b.dtype(), promoted)) {
    Fail("PromoteTypes gives a dtype an operand cannot be cast to", a.dtype(), b.dtype());
  }
  if (result_type(a, b) != result_type(b, a))
    Fail("result_type is not symmetric", a.dtype(), b.dtype());
  if (a.dim() == 1 && b.dim() == 1) {
    const Tensor c = cat({a, b}, 0);
    if (c.dtype() != promoted) Fail("cat's dtype is not PromoteTypes", a.dtype(), b.dtype());
  }
}

void DTypes(FuzzInput& in) {
  const DType from = static_cast<DType>(in.Below(kNumDTypes));
  const DType to = static_cast<DType>(in.Below(kNumDTypes));
  const Tensor x = DecodeTensor(in, from);
  CheckConversion(x, to);
  CheckRoundTrip(x);
  CheckPromotion(x, DecodeTensor(in, to));
  // Reads as another element type, a fill from a decoded scalar (an ft::Error when the
  // value does not fit), and the element-moving ops.
  (void)x.to_vector<int8_t>();
  (void)x.to_vector<Half>();
  (void)x.to_vector<std::complex<float>>();
  if (x.numel() > 0) (void)ft::flip(x, {0});
  if (x.numel() > 0) (void)index_select(x, 0, full({2}, x.numel() - 1, kInt64));
  (void)full({2}, in.AnyScalar(), to);
}

}  // namespace
}  // namespace ft::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ft::fuzz::RunInput([&] {
    ft::fuzz::FuzzInput in(data, size);
    ft::fuzz::DTypes(in);
  });
  return 0;
}

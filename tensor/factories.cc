#include "tensor/factories.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "tensor/copy.h"
#include "tensor/scalar_check.h"

namespace ft {

namespace internal {
constinit thread_local FactoryResultHook* tls_factory_result_hook = nullptr;
}  // namespace internal

namespace {

// Allocate: EmptyContiguous for factory `op`: a shape too large to represent or to allocate
// is an ft::Error naming the factory.
Tensor Allocate(const char* op, IntArrayRef shape, DType dtype) {
  try {
    return EmptyContiguous(shape, dtype);
  } catch (const AllocationError& e) {
    throw AllocationError(absl::StrCat(op, ": ", e.message()));
  }
}

// Adopted: what a public factory returns for its new dense tensor (FactoryResultHook).
Tensor Adopted(Tensor t) {
  if (internal::tls_factory_result_hook != nullptr) [[unlikely]] {
    return internal::tls_factory_result_hook->Adopt(std::move(t));
  }
  return t;
}

template <typename T>
void Fill(const Tensor& t, T value) {
  T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = value;
}

void FillScalar(const Tensor& t, Scalar value) {
  VisitEveryDType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Fill<T>(t, value.to<T>());
  });
}

// FitsInt64 reports whether a double converts to int64 without undefined behavior.
bool FitsInt64(double v) { return v >= -0x1p63 && v < 0x1p63; }

template <typename T>
Tensor FromVector(const std::vector<T>& values, IntArrayRef shape, DType dtype) {
  CheckShapeValid("tensor", shape);
  if (Numel(shape) != static_cast<int64_t>(values.size())) {
    ThrowError("tensor: ", values.size(), " values cannot fill a tensor of shape ",
               ShapeToString(shape), " (", Numel(shape), " elements)");
  }
  Tensor t = Allocate("tensor", shape, dtype);
  VisitEveryDType(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    S* p = t.data<S>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = ConvertElement<S>(values[i]);
  });
  return Adopted(std::move(t));
}

Tensor DenseZeros(const char* op, IntArrayRef shape, DType dtype) {
  Tensor t = Allocate(op, shape, dtype);
  std::memset(t.impl()->raw_data(), 0, static_cast<size_t>(t.numel() * ItemSize(dtype)));
  return t;
}

}  // namespace

Tensor empty(IntArrayRef shape, DType dtype) {
  CheckShapeValid("empty", shape);
  return Adopted(Allocate("empty", shape, dtype));
}

Tensor zeros(IntArrayRef shape, DType dtype) {
  CheckShapeValid("zeros", shape);
  return Adopted(DenseZeros("zeros", shape, dtype));
}

Tensor ones(IntArrayRef shape, DType dtype) {
  CheckShapeValid("ones", shape);
  return full(shape, 1, dtype);
}

Tensor full(IntArrayRef shape, Scalar value) { return full(shape, value, value.DefaultDType()); }

Tensor full(IntArrayRef shape, Scalar value, DType dtype) {
  CheckShapeValid("full", shape);
  CheckScalarFits("full", value, dtype);
  Tensor t = Allocate("full", shape, dtype);
  FillScalar(t, value);
  return Adopted(std::move(t));
}

Tensor scalar_tensor(Scalar value) { return full({}, value); }
Tensor scalar_tensor(Scalar value, DType dtype) { return full({}, value, dtype); }

Tensor arange(Scalar end) { return arange(0, end, 1); }

Tensor arange(Scalar start, Scalar end, Scalar step) {
  const bool integral = !start.is_floating() && !end.is_floating() && !step.is_floating();
  return arange(start, end, step, integral ? kInt64 : kDefaultFloat);
}

Tensor arange(Scalar start, Scalar end, Scalar step, DType dtype) {
  const double s = start.to<double>();
  const double e = end.to<double>();
  const double st = step.to<double>();
  if (!std::isfinite(s) || !std::isfinite(e) || !std::isfinite(st)) {
    ThrowError("arange: start, end and step must be finite (start ", s, ", end ", e, ", step ", st,
               ")");
  }
  if (st == 0) ThrowError("arange: step must be nonzero");
  if (IsComplex(dtype) || dtype == kBool) {
    ThrowError("arange: ", DTypeName(dtype), " results are not supported (as in torch)");
  }
  // Integral arguments with an integral result are handled in exact integer arithmetic (as
  // PyTorch does): in double, arange(2^53 + 1, 2^53 + 3) would have 4 elements. A result
  // narrower than int64 keeps the low bits (arange(250, 260, dtype=uint8) wraps to 0..3).
  const bool exact = IsIntegral(dtype, /*include_bool=*/false) && !start.is_floating() &&
                     !end.is_floating() && !step.is_floating();
  const int64_t is = exact ? start.to<int64_t>() : 0;
  const int64_t ie = exact ? end.to<int64_t>() : 0;
  const int64_t ist = exact ? step.to<int64_t>() : 0;
  const bool inconsistent =
      exact ? (ist > 0 && ie < is) || (ist < 0 && ie > is) : (st > 0 && e < s) || (st < 0 && e > s);
  if (inconsistent) {
    ThrowError("arange: upper bound and step sign are inconsistent (start ", s, ", end ", e,
               ", step ", st, ")");
  }
  if (IsIntegral(dtype, false) && !exact && !(FitsInt64(s) && FitsInt64(e) && FitsInt64(st))) {
    ThrowError("arange: start ", s, ", end ", e, " and step ", st,
               " must be within the int64 range for an ", DTypeName(dtype), " result");
  }
  double length;
  if (exact) {
    // ceil(|end - start| / |step|) in uint64 (the span of two int64 always fits).
    const uint64_t span = ist > 0 ? static_cast<uint64_t>(ie) - static_cast<uint64_t>(is)
                                  : static_cast<uint64_t>(is) - static_cast<uint64_t>(ie);
    const uint64_t mag =
        ist > 0 ? static_cast<uint64_t>(ist) : uint64_t{0} - static_cast<uint64_t>(ist);
    length = static_cast<double>(span / mag + (span % mag != 0 ? 1 : 0));
  } else {
    length = std::ceil((e - s) / st);
  }
  // Checked before the cast: converting an out-of-range double to int64 is undefined.
  if (!(length < 0x1p62)) {
    ThrowError("arange: the range (start ", s, ", end ", e, ", step ", st,
               ") has too many elements");
  }
  const int64_t n = static_cast<int64_t>(length);
  Tensor t = Allocate("arange", {n}, dtype);
  VisitEveryDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    if (exact) {
      // start + i * step in wrapping uint64 arithmetic: every result lies between start and
      // end, but i * step alone may not fit in int64.
      const uint64_t base = static_cast<uint64_t>(is);
      const uint64_t inc = static_cast<uint64_t>(ist);
      for (int64_t i = 0; i < n; ++i) {
        p[i] = ConvertElement<T>(static_cast<int64_t>(base + static_cast<uint64_t>(i) * inc));
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        p[i] = ConvertElement<T>(s + static_cast<double>(i) * st);
      }
    }
  });
  return Adopted(std::move(t));
}

Tensor linspace(double start, double end, int64_t steps, DType dtype) {
  if (steps < 0) ThrowError("linspace: number of steps must be non-negative, got ", steps);
  if (IsIntegral(dtype, false) && !(FitsInt64(start) && FitsInt64(end))) {
    ThrowError("linspace: start ", start, " and end ", end,
               " must be finite and within the int64 range for an ", DTypeName(dtype), " result");
  }
  Tensor t = Allocate("linspace", {steps}, dtype);
  const double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  VisitEveryDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    // Symmetric fill (as PyTorch does) so both endpoints are exact. A single step is the
    // start alone (torch.linspace(0, 10, 1) == [0]); the symmetric formula would give end.
    if (steps == 1) {
      p[0] = ConvertElement<T>(start);
      return;
    }
    const int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i) {
      const double v = i < half ? start + step * static_cast<double>(i)
                                : end - step * static_cast<double>(steps - 1 - i);
      p[i] = ConvertElement<T>(v);
    }
  });
  return Adopted(std::move(t));
}

Tensor eye(int64_t n, DType dtype) { return eye(n, n, dtype); }

Tensor eye(int64_t n, int64_t m, DType dtype) {
  if (n < 0 || m < 0) ThrowError("eye: sizes must be non-negative, got n=", n, ", m=", m);
  Tensor t = DenseZeros("eye", {n, m}, dtype);
  VisitEveryDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = ConvertElement<T>(1);
  });
  return Adopted(std::move(t));
}

Tensor tensor(const std::vector<float>& values, IntArrayRef shape) {
  return FromVector(values, shape, kFloat32);
}
Tensor tensor(const std::vector<double>& values, IntArrayRef shape) {
  return FromVector(values, shape, kFloat64);
}
Tensor tensor(const std::vector<int64_t>& values, IntArrayRef shape) {
  return FromVector(values, shape, kInt64);
}
Tensor tensor(const std::vector<int>& values, IntArrayRef shape) {
  return FromVector(values, shape, kInt64);
}
Tensor tensor(const std::vector<bool>& values, IntArrayRef shape) {
  std::vector<int64_t> as_int(values.begin(), values.end());
  return FromVector(as_int, shape, kBool);
}
Tensor tensor(const std::vector<std::complex<float>>& values, IntArrayRef shape) {
  return FromVector(values, shape, kComplex64);
}
Tensor tensor(const std::vector<std::complex<double>>& values, IntArrayRef shape) {
  return FromVector(values, shape, kComplex128);
}
Tensor tensor(const std::vector<Half>& values, IntArrayRef shape) {
  return FromVector(values, shape, kFloat16);
}
Tensor tensor(const std::vector<BFloat16>& values, IntArrayRef shape) {
  return FromVector(values, shape, kBFloat16);
}
Tensor tensor(const std::vector<int8_t>& values, IntArrayRef shape) {
  return FromVector(values, shape, kInt8);
}
Tensor tensor(const std::vector<int16_t>& values, IntArrayRef shape) {
  return FromVector(values, shape, kInt16);
}
Tensor tensor(const std::vector<uint8_t>& values, IntArrayRef shape) {
  return FromVector(values, shape, kUInt8);
}

}  // namespace ft

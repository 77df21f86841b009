#include "tensor/scalar_check.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>

#include "tensor/error.h"

namespace ft {
namespace {

// Range: the finite limits of a real dtype's elements, as doubles (exact for every dtype
// but int64, whose limits are checked apart).
struct Range {
  double lowest;
  double max;
};

template <typename T>
Range RangeOf() {
  return {static_cast<double>(static_cast<float>(std::numeric_limits<T>::lowest())),
          static_cast<double>(static_cast<float>(std::numeric_limits<T>::max()))};
}

Range RealRange(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return RangeOf<Half>();
    case DType::kBFloat16:
      return RangeOf<BFloat16>();
    case DType::kFloat32:
      return {std::numeric_limits<float>::lowest(), std::numeric_limits<float>::max()};
    case DType::kInt8:
      return {-128, 127};
    case DType::kInt16:
      return {-32768, 32767};
    case DType::kInt32:
      return {-2147483648.0, 2147483647};
    case DType::kUInt8:
      return {0, 255};
    default:
      break;
  }
  return {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max()};
}

// FloatingOverflows: a real floating value against a real dtype.
bool FloatingOverflows(double v, DType dtype) {
  if (IsFloating(dtype)) {
    if (std::isinf(v) || std::isnan(v)) return false;
  } else if (std::isnan(v)) {
    return true;
  }
  if (dtype == kInt64) return !(v >= -0x1p63 && v <= 0x1p63 - 1024);  // the doubles in range
  const Range r = RealRange(dtype);
  return v < r.lowest || v > r.max;
}

// IntegerOverflows: an int64 against a real dtype.
bool IntegerOverflows(int64_t v, DType dtype) {
  if (dtype == kInt64 || IsFloating(dtype)) {
    if (dtype == kInt64 || dtype == kFloat64 || dtype == kFloat32) return false;
    return FloatingOverflows(static_cast<double>(v), dtype);
  }
  const Range r = RealRange(dtype);
  const double d = static_cast<double>(v);  // exact: the narrow ranges are small
  if (dtype == kUInt8 && v < 0) return -d > r.max;
  return d < r.lowest || d > r.max;
}

}  // namespace

bool ScalarOverflows(const Scalar& value, DType dtype) {
  if (value.kind() == ScalarKind::kBool || dtype == kBool) return false;
  const DType part = ToRealDType(dtype);
  switch (value.kind()) {
    case ScalarKind::kInt:
      return IntegerOverflows(value.to<int64_t>(), part);
    case ScalarKind::kDouble:
      return FloatingOverflows(value.to<double>(), part);
    case ScalarKind::kComplex: {
      const auto z = value.to<std::complex<double>>();
      if (!IsComplex(dtype) && z.imag() != 0) return true;
      return FloatingOverflows(z.real(), part) || FloatingOverflows(z.imag(), part);
    }
    case ScalarKind::kBool:
      break;
  }
  return false;
}

void CheckScalarFits(const char* op, const Scalar& value, DType dtype) {
  if (ScalarOverflows(value, dtype)) {
    ThrowError(op, ": value ", value.ToString(), " cannot be converted to ", DTypeName(dtype),
               " without overflow");
  }
}

}  // namespace ft

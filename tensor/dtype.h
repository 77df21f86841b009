// ft/tensor/dtype.h
//
// DType: the element types ft supports (float32, float64, int64, bool) and PyTorch's type
// promotion rules for mixing them.
//
// Promotion follows torch.result_type: categories bool < integer < floating. Among operands
// the result takes the highest category; within a category the widest dtype. Dimensioned
// tensors win over zero-dim tensors, which win over plain C++ scalars, unless the lower
// priority operand is of a higher category (then the default dtype of that category is used
// for scalars: float32 for a floating scalar, int64 for an integral scalar).
//
// Example:
//   PromoteTypes(kInt64, kFloat32) == kFloat32
//   ResultTypeWithScalar(kInt64, ScalarKind::kDouble) == kFloat32   // int tensor * 2.5
#ifndef FT_TENSOR_DTYPE_H_
#define FT_TENSOR_DTYPE_H_

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <type_traits>

namespace ft {

enum class DType : uint8_t { kFloat32, kFloat64, kInt64, kBool };

inline constexpr DType kFloat32 = DType::kFloat32;
inline constexpr DType kFloat64 = DType::kFloat64;
inline constexpr DType kInt64 = DType::kInt64;
inline constexpr DType kBool = DType::kBool;

// kDefaultFloat is the dtype of factories and of floating scalars promoted with integers.
inline constexpr DType kDefaultFloat = kFloat32;

// DTypeName returns "float32", "float64", "int64" or "bool".
const char* DTypeName(DType dtype);
std::ostream& operator<<(std::ostream& os, DType dtype);

// ItemSize returns the element size in bytes.
constexpr int64_t ItemSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 4;
    case DType::kFloat64:
    case DType::kInt64:
      return 8;
    case DType::kBool:
      return 1;
  }
  return 0;
}

constexpr bool IsFloating(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64;
}
constexpr bool IsIntegral(DType dtype, bool include_bool) {
  return dtype == DType::kInt64 || (include_bool && dtype == DType::kBool);
}

// FloatToInt64: v truncated toward zero when int64 can hold the result; NaN, infinities and
// values outside int64's range give INT64_MIN (PyTorch's CPU result, x86's "integer
// indefinite") instead of C++'s undefined behavior.
constexpr int64_t FloatToInt64(double v) {
  return v >= -0x1p63 && v < 0x1p63 ? static_cast<int64_t>(v)
                                    : std::numeric_limits<int64_t>::min();
}

// ConvertElement: one element converted between the element types of two dtypes, as every
// kernel converts (a casting copy, item<T>(), a scalar): to bool is `!= 0`; a floating
// value to int64 is FloatToInt64; anything else static_cast (IEEE defines the floating
// conversions: out of float32's range is an infinity).
template <typename To, typename From>
constexpr To ConvertElement(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return static_cast<To>(FloatToInt64(static_cast<double>(v)));
  } else {
    return static_cast<To>(v);
  }
}

// PromoteTypes returns the dtype both operands are computed in (torch.promote_types).
DType PromoteTypes(DType a, DType b);

// ScalarKind is the category of a C++ scalar argument (x * 2.0, x + 1, x & true).
enum class ScalarKind : uint8_t { kBool, kInt, kDouble };

// ResultTypeWithScalar returns the dtype of `tensor_dtype (op) scalar`: the tensor's dtype
// unless the scalar is of a higher category, then that category's default dtype.
DType ResultTypeWithScalar(DType tensor_dtype, ScalarKind scalar);

// ResultType returns the dtype of an op over two tensors, honouring PyTorch's priority of
// dimensioned tensors over zero-dim tensors.
DType ResultType(DType a, bool a_zero_dim, DType b, bool b_zero_dim);

// TypeTag carries a C++ element type through generic lambdas (see VisitDType).
template <typename T>
struct TypeTag {
  using type = T;
};

template <typename T>
constexpr DType DTypeOf();
template <>
constexpr DType DTypeOf<float>() { return kFloat32; }
template <>
constexpr DType DTypeOf<double>() { return kFloat64; }
template <>
constexpr DType DTypeOf<int64_t>() { return kInt64; }
template <>
constexpr DType DTypeOf<bool>() { return kBool; }

// VisitDType calls f(TypeTag<T>{}) with the C++ type of `dtype`.
template <typename F>
decltype(auto) VisitDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32:
      return f(TypeTag<float>{});
    case DType::kFloat64:
      return f(TypeTag<double>{});
    case DType::kInt64:
      return f(TypeTag<int64_t>{});
    case DType::kBool:
      break;
  }
  return f(TypeTag<bool>{});
}

}  // namespace ft

#endif  // FT_TENSOR_DTYPE_H_

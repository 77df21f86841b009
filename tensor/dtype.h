// ft/tensor/dtype.h
//
// DType: the element types of ft's tensors, and PyTorch's type promotion rules for mixing them.
//
// The twelve dtypes are torch's CPU dtypes: bool; the integers uint8, int8, int16, int32 and
// int64; the floating float16 (ft::Half), bfloat16 (ft::BFloat16), float32 and float64; the
// complex complex64 and complex128 (std::complex of float and double). Tensors of every
// dtype can be made, converted (ConvertElement, the casting copy), read, printed and saved;
// issue 43 brings the eight beyond float32, float64, int64 and bool (kOriginalDTypes) to
// the operations in steps. Each op states the dtypes it is written for (OpSchema::dtypes in
// dispatch/operator.h) and refuses others by name; a kernel generic over the original four
// visits them with VisitDType, which refuses the rest too.
//
// Promotion follows torch.result_type: categories bool < integral < floating < complex.
// Among operands the result takes the highest category; within a category the wider dtype
// (uint8 with int8 gives int16; float16 with bfloat16 gives float32); a complex operand with
// a floating one takes the wider of their component widths (complex64 with float64 gives
// complex128). Dimensioned tensors win over zero-dim tensors, which win over C++ scalars,
// unless the lower-priority operand is of a higher category: then it decides the category
// and, for a scalar, that category's default dtype (int64, float32, complex64) is used, with a
// floating tensor keeping its width under a complex operand (float64 tensor * 1i is
// complex128). One difference from torch: torch 1.13 gives complex32 for float16 with a
// complex scalar, and ft, which has no complex32, gives complex64.
//
// Example:
//   PromoteTypes(kInt64, kFloat32) == kFloat32
//   PromoteTypes(kUInt8, kInt8) == kInt16
//   ResultTypeWithScalar(kInt64, ScalarKind::kDouble) == kFloat32   // int tensor * 2.5
//   CanCast(kFloat32, kInt64) == false                             // int_tensor += 0.5 throws
#ifndef FT_TENSOR_DTYPE_H_
#define FT_TENSOR_DTYPE_H_

#include <complex>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <ostream>
#include <string>
#include <type_traits>

#include "tensor/half.h"

namespace ft {

// The values are stable (the first four are ft's original dtypes); kNumDTypes counts them.
enum class DType : uint8_t {
  kFloat32,
  kFloat64,
  kInt64,
  kBool,
  kComplex64,
  kComplex128,
  kBFloat16,
  kFloat16,
  kInt8,
  kInt16,
  kInt32,
  kUInt8,
};
inline constexpr int kNumDTypes = 12;

inline constexpr DType kFloat32 = DType::kFloat32;
inline constexpr DType kFloat64 = DType::kFloat64;
inline constexpr DType kInt64 = DType::kInt64;
inline constexpr DType kBool = DType::kBool;
inline constexpr DType kComplex64 = DType::kComplex64;
inline constexpr DType kComplex128 = DType::kComplex128;
inline constexpr DType kBFloat16 = DType::kBFloat16;
inline constexpr DType kFloat16 = DType::kFloat16;
inline constexpr DType kInt8 = DType::kInt8;
inline constexpr DType kInt16 = DType::kInt16;
inline constexpr DType kInt32 = DType::kInt32;
inline constexpr DType kUInt8 = DType::kUInt8;

// kAllDTypes lists every dtype, in the enum's order.
inline constexpr DType kAllDTypes[kNumDTypes] = {kFloat32, kFloat64,  kInt64, kBool,
                                                 kComplex64, kComplex128, kBFloat16, kFloat16,
                                                 kInt8,   kInt16,   kInt32, kUInt8};

// kDefaultFloat is the dtype of factories and of floating scalars promoted with integers.
inline constexpr DType kDefaultFloat = kFloat32;

// DTypeName returns torch's name without the prefix: "float32", "complex64", "uint8", ...
const char* DTypeName(DType dtype);
std::ostream& operator<<(std::ostream& os, DType dtype);

// ItemSize returns the element size in bytes.
constexpr int64_t ItemSize(DType dtype) {
  switch (dtype) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8:
      return 1;
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kFloat32:
    case DType::kInt32:
      return 4;
    case DType::kFloat64:
    case DType::kInt64:
    case DType::kComplex64:
      return 8;
    case DType::kComplex128:
      return 16;
  }
  return 0;
}

// IsFloating: a real floating dtype (float16, bfloat16, float32, float64), as
// torch.is_floating_point: complex dtypes are not.
constexpr bool IsFloating(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}
constexpr bool IsComplex(DType dtype) {
  return dtype == DType::kComplex64 || dtype == DType::kComplex128;
}
// IsDifferentiable: a dtype whose values carry derivatives (floating or complex), as torch's
// isDifferentiableType.
constexpr bool IsDifferentiable(DType dtype) { return IsFloating(dtype) || IsComplex(dtype); }
// IsIntegral: uint8, int8, int16, int32, int64, and bool when include_bool.
constexpr bool IsIntegral(DType dtype, bool include_bool) {
  switch (dtype) {
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
      return true;
    case DType::kBool:
      return include_bool;
    default:
      return false;
  }
}

// ToRealDType: the dtype of a complex dtype's parts (complex64 -> float32); others unchanged.
constexpr DType ToRealDType(DType dtype) {
  if (dtype == DType::kComplex64) return DType::kFloat32;
  if (dtype == DType::kComplex128) return DType::kFloat64;
  return dtype;
}
// ToComplexDType: the complex dtype whose parts hold a floating dtype's values (float64 ->
// complex128; float32, float16 and bfloat16 -> complex64); a complex dtype is unchanged. ft
// has no complex32, so float16 maps to complex64. Throws for integral and bool dtypes.
DType ToComplexDType(DType dtype);

// FloatToInt64: v truncated toward zero when int64 can hold the result; NaN, infinities and
// values outside int64's range give INT64_MIN (PyTorch's CPU result, x86's "integer
// indefinite") instead of C++'s undefined behavior.
constexpr int64_t FloatToInt64(double v) {
  return v >= -0x1p63 && v < 0x1p63 ? static_cast<int64_t>(v)
                                    : std::numeric_limits<int64_t>::min();
}
// FloatToInt32: the same through int32, as x86 converts a floating value to int32, int16
// and int8 (and torch with it): truncated when int32 holds it, else INT32_MIN; int16 and
// int8 then keep the low bits (300.0 -> int8 44). uint8 goes through int64 instead (torch
// 1.13's c10::convert: -1.0 -> 255, 4294967301.0 -> 5).
constexpr int32_t FloatToInt32(double v) {
  return v > -0x1p31 - 1 && v < 0x1p31 ? static_cast<int32_t>(v)
                                       : std::numeric_limits<int32_t>::min();
}

// kIsComplexElement / kIsReducedFloatElement / kIsFloatingElement: categories of the C++
// element types (std::complex of float or double; Half and BFloat16; those with float and
// double).
template <typename T>
inline constexpr bool kIsComplexElement = false;
template <typename T>
inline constexpr bool kIsComplexElement<std::complex<T>> = true;
template <typename T>
inline constexpr bool kIsReducedFloatElement =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsFloatingElement =
    std::is_floating_point_v<T> || kIsReducedFloatElement<T>;

// ConvertElement: one element converted between the element types of two dtypes, as every
// kernel converts (a casting copy, item<T>(), a scalar), with torch's results:
// - to bool: `!= 0`; NaN is true; a complex value is true when either part is nonzero
//   (torch since 2024; torch 1.13's casting copy looked at the real part alone, #120875);
// - complex to real: the real part, converted (torch warns that the imaginary part is
//   discarded; ft discards it silently); real to complex: the value with imaginary part 0;
// - floating to integer: FloatToInt64 for int64 and uint8, FloatToInt32 for int32, int16
//   and int8, then the low bits (defined for NaN and out-of-range values, unlike
//   static_cast);
// - integer to integer: the low bits (two's complement wrap);
// - to float16 and bfloat16: through float (a double or an int64 rounds twice, as torch's
//   casts do); from them: exact through float;
// - anything else static_cast (IEEE defines the floating conversions: out of float32's
//   range is an infinity).
template <typename To, typename From>
constexpr To ConvertElement(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (kIsComplexElement<From>) {
    if constexpr (std::is_same_v<To, bool>) {
      return v.real() != 0 || v.imag() != 0;
    } else if constexpr (kIsComplexElement<To>) {
      using Part = typename To::value_type;
      return To(static_cast<Part>(v.real()), static_cast<Part>(v.imag()));
    } else {
      return ConvertElement<To>(v.real());
    }
  } else if constexpr (kIsComplexElement<To>) {
    using Part = typename To::value_type;
    return To(ConvertElement<Part>(v), Part(0));
  } else if constexpr (kIsReducedFloatElement<From>) {
    return ConvertElement<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if constexpr (sizeof(To) == 8 || std::is_same_v<To, uint8_t>) {
      return static_cast<To>(FloatToInt64(static_cast<double>(v)));
    } else {
      return static_cast<To>(FloatToInt32(static_cast<double>(v)));
    }
  } else if constexpr (kIsReducedFloatElement<To>) {
    return To(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

// OpMathType<T>: the type elements of T are computed in. float16 and bfloat16 compute in
// float and round once at the end, as torch's CPU kernels do (a sum of bfloat16 accumulates
// in float); every other type computes in itself.
template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<Half> {
  using type = float;
};
template <>
struct OpMath<BFloat16> {
  using type = float;
};
template <typename T>
using OpMathType = typename OpMath<T>::type;

// PromoteTypes returns the dtype both operands are computed in (torch.promote_types).
DType PromoteTypes(DType a, DType b);

// CanCast: whether an op may write a result of dtype `from` into a tensor of dtype `to`
// (torch.can_cast): never to a lower category (complex -> real, floating -> integral,
// anything but bool -> bool); within a category always (int64 -> int8 wraps, as torch's).
bool CanCast(DType from, DType to);

// ScalarKind is the category of a C++ scalar argument (x * 2.0, x + 1, x & true, x * 1i).
enum class ScalarKind : uint8_t { kBool, kInt, kDouble, kComplex };

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
template <>
constexpr DType DTypeOf<std::complex<float>>() { return kComplex64; }
template <>
constexpr DType DTypeOf<std::complex<double>>() { return kComplex128; }
template <>
constexpr DType DTypeOf<BFloat16>() { return kBFloat16; }
template <>
constexpr DType DTypeOf<Half>() { return kFloat16; }
template <>
constexpr DType DTypeOf<int8_t>() { return kInt8; }
template <>
constexpr DType DTypeOf<int16_t>() { return kInt16; }
template <>
constexpr DType DTypeOf<int32_t>() { return kInt32; }
template <>
constexpr DType DTypeOf<uint8_t>() { return kUInt8; }

// DTypeSet: a set of dtypes, as one bit per dtype (an op's supported dtypes, a kernel's).
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> dtypes) {
    for (DType d : dtypes) bits_ |= Bit(d);
  }
  constexpr bool contains(DType dtype) const { return (bits_ & Bit(dtype)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DTypeSet operator|(DTypeSet other) const { return FromBits(bits_ | other.bits_); }
  constexpr DTypeSet operator-(DTypeSet other) const { return FromBits(bits_ & ~other.bits_); }
  constexpr bool operator==(const DTypeSet&) const = default;
  constexpr uint16_t bits() const { return bits_; }
  static constexpr DTypeSet FromBits(uint16_t bits) {
    DTypeSet s;
    s.bits_ = bits;
    return s;
  }
  // ToString: the names in the enum's order, "float32, float64, int64 and bool".
  std::string ToString() const;

 private:
  static constexpr uint16_t Bit(DType d) {
    return static_cast<uint16_t>(1u << static_cast<unsigned>(d));
  }
  uint16_t bits_ = 0;
};

// kOriginalDTypes: float32, float64, int64 and bool, ft's dtypes before issue 43, which
// every operation handles. The enum gives them the values 0..3, so membership is one
// comparison on hot paths (IsOriginalDType).
inline constexpr DTypeSet kOriginalDTypes = {kFloat32, kFloat64, kInt64, kBool};
inline constexpr DTypeSet kEveryDType = {kFloat32, kFloat64,  kInt64, kBool,
                                         kComplex64, kComplex128, kBFloat16, kFloat16,
                                         kInt8,   kInt16,   kInt32, kUInt8};
constexpr bool IsOriginalDType(DType dtype) { return static_cast<uint8_t>(dtype) < 4; }

// ThrowDTypeNotSupportedYet: the ft::Error of an operation reached with a dtype it has not
// been written for yet (issue 43 adds them op by op).
[[noreturn]] void ThrowDTypeNotSupportedYet(DType dtype);

// VisitDType calls f(TypeTag<T>{}) with the C++ type of `dtype`, for float32, float64, int64
// and bool (kOriginalDTypes): the dtypes every kernel handles. Others throw
// ThrowDTypeNotSupportedYet, so that a kernel generic over these four stays correct while
// the new dtypes arrive (the op table refuses them first, dispatch/operator.h).
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
      return f(TypeTag<bool>{});
    default:
      break;
  }
  ThrowDTypeNotSupportedYet(dtype);
}

// VisitEveryDType calls f(TypeTag<T>{}) with the C++ type of any of the twelve dtypes: for
// code written for all of them (the casting copy, element reads, printing, factories).
template <typename F>
decltype(auto) VisitEveryDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32:
      return f(TypeTag<float>{});
    case DType::kFloat64:
      return f(TypeTag<double>{});
    case DType::kInt64:
      return f(TypeTag<int64_t>{});
    case DType::kBool:
      return f(TypeTag<bool>{});
    case DType::kComplex64:
      return f(TypeTag<std::complex<float>>{});
    case DType::kComplex128:
      return f(TypeTag<std::complex<double>>{});
    case DType::kBFloat16:
      return f(TypeTag<BFloat16>{});
    case DType::kFloat16:
      return f(TypeTag<Half>{});
    case DType::kInt8:
      return f(TypeTag<int8_t>{});
    case DType::kInt16:
      return f(TypeTag<int16_t>{});
    case DType::kInt32:
      return f(TypeTag<int32_t>{});
    case DType::kUInt8:
      break;
  }
  return f(TypeTag<uint8_t>{});
}

}  // namespace ft

#endif  // FT_TENSOR_DTYPE_H_

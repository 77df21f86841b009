// ft/tensor/scalar.h
//
// Scalar: a C++ number passed to an op (x * 2.0, clamp(x, 0, 1), full({2}, 3)). It remembers
// its category (bool, integer, floating, complex) because type promotion depends on it: an
// int64 tensor times 2 stays int64, times 2.0 becomes float32, times 1i complex64.
//
// A complex Scalar converts to a real type only when its imaginary part is 0 (else to<T>
// throws, as torch's does); every Scalar converts to std::complex.
//
// Example:
//   Scalar s = 2.5;       // kind() == ScalarKind::kDouble
//   s.to<int64_t>() == 2
//   Scalar z = std::complex<double>(1, 2);   // kind() == ScalarKind::kComplex
#ifndef FT_TENSOR_SCALAR_H_
#define FT_TENSOR_SCALAR_H_

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "tensor/dtype.h"
#include "tensor/error.h"

namespace ft {

class Scalar {
 public:
  Scalar() : Scalar(int64_t{0}) {}
  // Implicit from any arithmetic type so that `x * 2` and `x * 2.0f` read naturally.
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  Scalar(T v) {  // NOLINT(google-explicit-constructor)
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = ScalarKind::kBool;
      i_ = v ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = ScalarKind::kInt;
      i_ = static_cast<int64_t>(v);
    } else {
      kind_ = ScalarKind::kDouble;
      d_ = static_cast<double>(v);
    }
  }
  // From a complex number of either precision (x * std::complex<double>(0, 1)).
  template <typename T>
  Scalar(std::complex<T> v)  // NOLINT(google-explicit-constructor)
      : kind_(ScalarKind::kComplex), d_(static_cast<double>(v.real())),
        imag_(static_cast<double>(v.imag())) {}

  ScalarKind kind() const { return kind_; }
  bool is_floating() const { return kind_ == ScalarKind::kDouble; }
  bool is_complex() const { return kind_ == ScalarKind::kComplex; }

  // to<T> converts to an element type (truncation toward zero for floating -> integer). To a
  // real T, a complex Scalar must have a zero imaginary part.
  template <typename T>
  T to() const {
    if constexpr (IsStdComplex<T>::value) {
      using Part = typename T::value_type;
      if (kind_ == ScalarKind::kComplex) return T(static_cast<Part>(d_), static_cast<Part>(imag_));
      return T(to<double>(), Part(0));
    } else {
      if (kind_ == ScalarKind::kComplex) {
        if (imag_ != 0) {
          ThrowError("Scalar: the complex value ", ToString(),
                     " has a nonzero imaginary part and cannot be converted to a real number");
        }
        return ConvertElement<T>(d_);
      }
      if (kind_ == ScalarKind::kDouble) return ConvertElement<T>(d_);
      if constexpr (std::is_same_v<T, bool>) return i_ != 0;
      return ConvertElement<T>(i_);
    }
  }

  // DefaultDType is the dtype a tensor made from this scalar alone gets.
  DType DefaultDType() const {
    switch (kind_) {
      case ScalarKind::kBool:
        return kBool;
      case ScalarKind::kInt:
        return kInt64;
      case ScalarKind::kDouble:
        break;
      case ScalarKind::kComplex:
        return ToComplexDType(kDefaultFloat);
    }
    return kDefaultFloat;
  }

  std::string ToString() const {
    switch (kind_) {
      case ScalarKind::kBool:
        return i_ ? "true" : "false";
      case ScalarKind::kInt:
        return absl::StrCat(i_);
      case ScalarKind::kDouble:
        break;
      case ScalarKind::kComplex:
        // Python's form: (1+2j), (1-2j).
        return absl::StrCat("(", d_, std::signbit(imag_) ? "-" : "+", std::fabs(imag_), "j)");
    }
    return absl::StrCat(d_);
  }

 private:
  template <typename T>
  struct IsStdComplex : std::false_type {};
  template <typename T>
  struct IsStdComplex<std::complex<T>> : std::true_type {};

  ScalarKind kind_;
  union {
    int64_t i_;
    double d_;  // the real part of a complex Scalar
  };
  double imag_ = 0.0;  // the imaginary part of a complex Scalar, else 0
};

}  // namespace ft

#endif  // FT_TENSOR_SCALAR_H_

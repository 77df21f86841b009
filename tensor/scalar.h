// ft/tensor/scalar.h
//
// Scalar: a C++ number passed to an op (x * 2.0, clamp(x, 0, 1), full({2}, 3)). It remembers
// its category (bool, integer, floating) because type promotion depends on it: an int64
// tensor times 2 stays int64, times 2.0 becomes float32.
//
// Example:
//   Scalar s = 2.5;       // kind() == ScalarKind::kDouble
//   s.to<int64_t>() == 2
#ifndef FT_TENSOR_SCALAR_H_
#define FT_TENSOR_SCALAR_H_

#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "tensor/dtype.h"

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

  ScalarKind kind() const { return kind_; }
  bool is_floating() const { return kind_ == ScalarKind::kDouble; }

  // to<T> converts to an element type (truncation toward zero for floating -> integer).
  template <typename T>
  T to() const {
    if (kind_ == ScalarKind::kDouble) return ConvertElement<T>(d_);
    if constexpr (std::is_same_v<T, bool>) return i_ != 0;
    return static_cast<T>(i_);
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
    }
    return absl::StrCat(d_);
  }

 private:
  ScalarKind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace ft

#endif  // FT_TENSOR_SCALAR_H_

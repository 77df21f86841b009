// ft/tensor/promotion.h
//
// torch's public type-promotion functions by their torch names, over ft's tensors and
// scalars: promote_types, result_type and can_cast. They are the algebra of tensor/dtype.h
// (PromoteTypes, ResultType, ResultTypeWithScalar, CanCast), which every op uses to pick its
// result dtype, so what they answer is what the ops do.
//
// Invariants (torch's): result_type(a, b) == result_type(b, a); a dimensioned tensor's dtype
// decides within its category over a zero-dim tensor's, which decides over a C++ scalar's;
// a lower-priority operand of a higher category decides the category: a zero-dim tensor
// with its own dtype (int32 with a zero-dim float64 is float64), a scalar with its
// category's default (int32 with 2.5 is float32).
//
// Example:
//   ft::promote_types(ft::kUInt8, ft::kInt8) == ft::kInt16
//   ft::Tensor i = ft::zeros({3}, ft::kInt32);
//   ft::result_type(i, 2) == ft::kInt32;            ft::result_type(i, 2.5) == ft::kFloat32
//   ft::result_type(i, ft::scalar_tensor(1.0, ft::kFloat64)) == ft::kFloat64   // zero-dim
//   ft::result_type(ft::zeros({3}), ft::scalar_tensor(1.0, ft::kFloat64)) == ft::kFloat32
//   ft::result_type(i, ft::zeros({3}, ft::kFloat64)) == ft::kFloat64
//   ft::can_cast(ft::kFloat32, ft::kInt64) == false  // i += 0.5 is refused
#ifndef FT_TENSOR_PROMOTION_H_
#define FT_TENSOR_PROMOTION_H_

#include "tensor/dtype.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ft {

// promote_types: torch.promote_types, the smallest dtype both a and b convert to within
// the higher category.
inline DType promote_types(DType a, DType b) { return PromoteTypes(a, b); }

// can_cast: torch.can_cast, whether an op may write a `from` result into a `to` tensor.
inline bool can_cast(DType from, DType to) { return CanCast(from, to); }

// result_type: torch.result_type, the dtype of an elementwise op over the two operands.
// Tensors must be defined (throws otherwise).
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& tensor, const Scalar& scalar);
DType result_type(const Scalar& scalar, const Tensor& tensor);

}  // namespace ft

#endif  // FT_TENSOR_PROMOTION_H_

#include "tensor/promotion.h"

#include "tensor/error.h"

namespace ft {
namespace {

void CheckDefined(const Tensor& t, const char* which) {
  if (!t.defined()) {
    ThrowError("result_type: ", which,
               " is an undefined tensor (a default-constructed ft::Tensor)");
  }
}

}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  CheckDefined(a, "the first operand");
  CheckDefined(b, "the second operand");
  return ResultType(a.dtype(), a.dim() == 0, b.dtype(), b.dim() == 0);
}

DType result_type(const Tensor& tensor, const Scalar& scalar) {
  CheckDefined(tensor, "the tensor operand");
  return ResultTypeWithScalar(tensor.dtype(), scalar.kind());
}

DType result_type(const Scalar& scalar, const Tensor& tensor) {
  return result_type(tensor, scalar);
}

}  // namespace ft

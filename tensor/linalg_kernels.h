// ft/tensor/linalg_kernels.h
//
// Base kernels of the linear algebra ops (dense tensors only; the public, dispatching
// versions are ft::matmul etc. in dispatch/linalg_ops.h, which documents the semantics).
//
// Dtype rules: the result dtype is PromoteTypes of the operands (float32, float64 or int64);
// a bool operand is rejected with an ft::Error. Results are new contiguous tensors.
//
// Implementation: every op lowers to one batched GEMM over Eigen maps of the operands. A
// matrix whose inner stride is 1 (row-major) or whose outer stride is 1 (a transposed view,
// mapped column-major) is used in place; only operands whose matrix dims are strided in
// both directions or broadcast (stride 0) are copied.
#ifndef FT_TENSOR_LINALG_KERNELS_H_
#define FT_TENSOR_LINALG_KERNELS_H_

#include <optional>

#include "tensor/tensor.h"

namespace ft::kernels {

Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor outer(const Tensor& a, const Tensor& b);
Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias);

}  // namespace ft::kernels

#endif  // FT_TENSOR_LINALG_KERNELS_H_

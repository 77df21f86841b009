// ft/kernels/linalg.h
//
// Base kernels of the linear algebra ops (dense tensors only; the public, dispatching
// versions are ft::matmul etc. in ops/linalg.h, which documents the semantics).
//
// Dtype rules: the result dtype is PromoteTypes of the operands (float32, float64 or int64);
// a bool operand is rejected with an ft::Error. Results are new contiguous tensors.
//
// Implementation: every op lowers to one batched GEMM over Eigen maps of the operands. A
// matrix whose inner stride is 1 (row-major) or whose outer stride is 1 (a transposed view,
// mapped column-major) is used in place; only operands whose matrix dims are strided in
// both directions or broadcast (stride 0) are copied.
//
// The factorization-based ops (linalg_solve, linalg_solve_triangular, cholesky, inverse,
// slogdet, logdet; in linalg_solve.cc) take float32 or float64 only (the result has
// PromoteTypes of the operands), loop over the broadcast batch of [n, n] matrices and run one
// Eigen decomposition per matrix (PartialPivLU, LLT, triangularView). Their Check* functions
// are shared with the batching rules, which pass logical (per-example) shapes so that an
// error under vmap reads like the op's for one example.
#ifndef FT_KERNELS_LINALG_H_
#define FT_KERNELS_LINALG_H_

#include <optional>
#include <tuple>

#include "tensor/tensor.h"

namespace ft::kernels {

Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor outer(const Tensor& a, const Tensor& b);
Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias);

Tensor linalg_solve(const Tensor& a, const Tensor& b);
Tensor linalg_solve_triangular(const Tensor& a, const Tensor& b, bool upper);
Tensor cholesky(const Tensor& a);
Tensor inverse(const Tensor& a);
std::tuple<Tensor, Tensor> slogdet(const Tensor& a);
Tensor logdet(const Tensor& a);

// CheckSquareMatrices throws unless `shape` is a batch of square matrices [..., n, n] of a
// float32 or float64 dtype (the argument checks of cholesky, inverse, slogdet and logdet).
void CheckSquareMatrices(const char* op, IntArrayRef shape, DType dtype);

// CheckSolveOperands throws unless a is [..., n, n] and b [..., n, k] (or [..., n] when
// allow_vector, torch.linalg.solve's rule: b is 1-D, or b's shape is a's without its last
// dim), both float32 or float64, with broadcastable batch dims. Returns whether b is a batch
// of vectors.
bool CheckSolveOperands(const char* op, IntArrayRef a, DType a_dtype, IntArrayRef b,
                        DType b_dtype, bool allow_vector);

}  // namespace ft::kernels

#endif  // FT_KERNELS_LINALG_H_

// ft/ops/linalg.h
//
// The public linear algebra ops: matmul (torch.matmul's rank rules and batch broadcasting),
// mm, bmm, dot, outer and linear (x @ W^T + bias); and, for second-order work, linalg_solve,
// linalg_solve_triangular, cholesky, inverse, slogdet and logdet (documented below). Each
// dispatches (dispatch.h): with no transform active it runs the base kernel in
// kernels/linalg.h directly.
//
// Dtype rules: the result dtype is PromoteTypes of the operands (float32, float64 or int64,
// so an int64 @ float32 product is float32); any bool operand throws an ft::Error. Results
// are new contiguous tensors that never alias an input.
//
// Invariants: an inner size of 0 gives zeros (an empty sum); other size-0 dims give empty
// results. Transposed views (outer stride 1) and row-major views with any row stride are
// multiplied in place without a copy, so `matmul(a, transpose(b))` costs one GEMM.
//
// Example:
//   Tensor a = ft::ones({4, 2, 3});          // a batch of four 2 x 3 matrices
//   Tensor b = ft::ones({3, 5});             // broadcast over the batch
//   Tensor c = ft::matmul(a, b);             // [4, 2, 5], every element 3
//   Tensor v = ft::matmul(b, ft::ones({5})); // matrix-vector: [3]
#ifndef FT_OPS_LINALG_H_
#define FT_OPS_LINALG_H_

#include <optional>
#include <tuple>

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// matmul is torch.matmul: 1-D . 1-D is a dot product (rank-0 result); 2-D . 2-D a matrix
// product; a 1-D first operand is treated as a [1, n] row and a 1-D second operand as a
// [n, 1] column, and the added dim is removed from the result; when either operand has
// rank >= 3 the leading (batch) dims broadcast, e.g. [4, 1, 2, 3] @ [5, 3, 6] -> [4, 5, 2, 6].
// Throws when an operand is rank 0, when dim -1 of `a` differs from dim -2 of `b` (dim -1
// for a 1-D `b`), when the batch dims do not broadcast, or for bool operands.
Tensor matmul(const Tensor& a, const Tensor& b);

// mm is the product of two 2-D tensors [n, k] @ [k, m] -> [n, m] (no broadcasting). Throws
// unless both are 2-D with matching inner sizes.
Tensor mm(const Tensor& a, const Tensor& b);

// bmm is the batched product of two 3-D tensors [B, n, k] @ [B, k, m] -> [B, n, m]. Throws
// unless both are 3-D with equal batch sizes and matching inner sizes.
Tensor bmm(const Tensor& a, const Tensor& b);

// dot is the inner product of two 1-D tensors of equal length (a rank-0 result).
Tensor dot(const Tensor& a, const Tensor& b);

// outer is the outer product of two 1-D tensors: [n] x [m] -> [n, m], out[i, j] = a[i] * b[j].
Tensor outer(const Tensor& a, const Tensor& b);

// linear is torch.nn.functional.linear: x @ weight^T (+ bias). x has rank >= 1 with its last
// dim of size in_features; weight is 2-D [out_features, in_features]; bias (optional) must
// broadcast to the result shape [..., out_features] (usually [out_features]). The dtype
// promotes over all three. Throws on rank-0 x, non-2-D weight, a feature-size mismatch, a
// bias that does not broadcast, or bool operands.
Tensor linear(const Tensor& x, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt);

// ---- Linear algebra for second-order work: solves, factorizations, determinants. ----
//
// These take float32 or float64 tensors only (an integer or bool operand throws; the result
// has PromoteTypes of the operands), treat the last two dims as the matrix and every leading
// dim as a batch (broadcast between two operands, as matmul's), and compute each matrix with
// one Eigen decomposition. Results are new contiguous tensors. All are differentiable (their
// vjp and jvp formulas are written with these ops, so hessian works) and batch under vmap.
// Errors name the op and the shapes: rank < 2, a non-square A, a B that does not fit A,
// batch dims that do not broadcast, non-float dtypes; a singular A (linalg_solve, inverse)
// or a non-positive-definite A (cholesky) names the matrix of the batch.
//
// Example (a 2 x 2 SPD system):
//   Tensor a = ft::tensor({4.0, 2.0, 2.0, 3.0}, {2, 2});
//   Tensor x = ft::linalg_solve(a, ft::tensor({2.0, 1.0}));   // [0.5, 0]
//   Tensor l = ft::cholesky(a);                               // [[2, 0], [1, sqrt(2)]]
//   Tensor y = ft::linalg_solve_triangular(l, ft::eye(2, ft::kFloat64), /*upper=*/false);
//   auto [sign, logabs] = ft::slogdet(a);                     // 1, log(8)

// linalg_solve is torch.linalg.solve: X with A X = B, for A [..., n, n] and B [..., n, k]
// (several right-hand sides) or a batch of vectors B [..., n] (B 1-D, or B's shape is A's
// without its last dim), giving X shaped like the broadcast B. Solved by LU with partial
// pivoting. Throws for a singular A (a zero pivot), besides the shape and dtype errors.
Tensor linalg_solve(const Tensor& a, const Tensor& b);

// linalg_solve_triangular is torch.linalg.solve_triangular with left=True: X with A X = B for
// a triangular A [..., n, n] (only its `upper` or lower triangle is read) and B [..., n, k]
// (at least 2-D). A zero on A's diagonal is not checked: the result then has infs or nans,
// as torch's does.
Tensor linalg_solve_triangular(const Tensor& a, const Tensor& b, bool upper);

// cholesky is torch.linalg.cholesky: the lower triangular L [..., n, n] with L L^T = A for a
// symmetric positive-definite A (only its lower triangle is read). Throws when a matrix is
// not positive-definite. Its gradient is the symmetric one (as torch's): use it on
// symmetric inputs.
Tensor cholesky(const Tensor& a);

// inverse is torch.linalg.inv: A^-1 for A [..., n, n]. Throws for a singular A.
Tensor inverse(const Tensor& a);

// slogdet is torch.linalg.slogdet: (sign, logabsdet) of det(A), each [...] (A's batch dims),
// with det = sign * exp(logabsdet). A singular A gives sign 0 and logabsdet -inf (no error).
// sign carries no gradient.
std::tuple<Tensor, Tensor> slogdet(const Tensor& a);

// logdet is torch.logdet: log(det(A)) [...]; -inf when det = 0, nan when det < 0.
Tensor logdet(const Tensor& a);

// RegisterLinalgOps adds this family to the op table (called by RegisterAllOps).
void RegisterLinalgOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_LINALG_H_

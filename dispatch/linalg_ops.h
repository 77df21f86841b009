// ft/dispatch/linalg_ops.h
//
// The public linear algebra ops: matmul (torch.matmul's rank rules and batch broadcasting),
// mm, bmm, dot, outer and linear (x @ W^T + bias). Each dispatches (dispatch.h): with no
// transform active it runs the base kernel in tensor/linalg_kernels.h directly.
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
#ifndef FT_DISPATCH_LINALG_OPS_H_
#define FT_DISPATCH_LINALG_OPS_H_

#include <optional>

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

// RegisterLinalgOps adds this family to the op table (called by RegisterAllOps).
void RegisterLinalgOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_LINALG_OPS_H_

// ft/kernels/reduction.h
//
// Base kernels of the reductions (sum, mean, prod, amax, amin, logsumexp, var, std, norm,
// argmax, argmin), the dim-wise normalizations (softmax, log_softmax), the scans (cumsum,
// cumprod, logcumsumexp, linear_recurrence) and sum_to_size (autograd's "undo a
// broadcast"). Dense tensors only; the public, dispatching versions are ft::sum etc. in
// ops/reduction.h, which documents the semantics.
//
// How they run: every kernel views a contiguous input (the input itself, or one copy that
// also converts the dtype) as [outer, reduced, inner]. When the reduced dims are trailing
// (inner == 1) each output element reduces one contiguous row with an Eigen reduction;
// otherwise whole contiguous rows of `inner` elements are accumulated with vectorized
// array ops, never permuting. Only reduced dims that are not adjacent (ignoring size-1
// dims) are permuted to the end and copied. Every reduction visits elements in a fixed
// order, so results are bitwise deterministic.
//
// Dtypes (torch 1.13's rules; how, NOTE: [Reductions over the new dtypes] in reduction.cc):
//   sum, prod, cumsum, cumprod, sum_to_size: bool, uint8, int8, int16, int32 and int64 give
//     int64 (wrapping on overflow); float16, bfloat16 and complex keep their dtype
//     (float16 and bfloat16 accumulate in float32 and round once; cumsum / cumprod round
//     each output of a float32 running value, complex64's of a complex128 one).
//   mean: floating and complex (float16 / bfloat16: the float32 sum divided in float32,
//     rounded once); integers and bool throw "could not infer the output dtype".
//   amax, amin: every real dtype, kept; argmax, argmin: every real dtype, int64 out. Both
//     throw for complex (not ordered).
//   logsumexp: integers and bool compute in float32; floating float32 / float64.
//   var, std, norm, softmax, log_softmax, logcumsumexp, linear_recurrence: float32 and
//     float64 (other dtypes throw).
#ifndef FT_KERNELS_REDUCTION_H_
#define FT_KERNELS_REDUCTION_H_

#include <cstdint>
#include <optional>

#include "tensor/tensor.h"

namespace ft::kernels {

Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim);
Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim);
Tensor prod(const Tensor& x, IntArrayRef dims, bool keepdim);
Tensor amax(const Tensor& x, IntArrayRef dims, bool keepdim);
Tensor amin(const Tensor& x, IntArrayRef dims, bool keepdim);
Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim);
Tensor var(const Tensor& x, IntArrayRef dims, int64_t correction, bool keepdim);
Tensor std(const Tensor& x, IntArrayRef dims, int64_t correction, bool keepdim);
Tensor norm(const Tensor& x, double p, IntArrayRef dims, bool keepdim);
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor cumsum(const Tensor& x, int64_t dim);
Tensor cumprod(const Tensor& x, int64_t dim);
Tensor logcumsumexp(const Tensor& x, int64_t dim);
Tensor linear_recurrence(const Tensor& a, const Tensor& b, int64_t dim);
Tensor sum_to_size(const Tensor& x, IntArrayRef size);

}  // namespace ft::kernels

#endif  // FT_KERNELS_REDUCTION_H_

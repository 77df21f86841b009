// ft/ops/reduction.h
//
// The public reductions and dim-wise ops. Each dispatches (dispatch.h): with no transform
// active it runs the base kernel in kernels/reduction.h directly; inside a transform
// the active interpreter processes it.
//
// Reductions over a list of dims: sum, mean, prod, amax, amin, logsumexp, var, std, norm.
//   - `dims` may hold negative dims; an empty list means every dim (so sum(x) reduces to a
//     rank-0 tensor); a repeated dim is an ft::Error. On a rank-0 tensor dims {}, {0} and
//     {-1} all reduce its single element.
//   - keepdim keeps each reduced dim with size 1 (so the result broadcasts against x).
//   - Reducing a size-0 dim gives the identity: sum 0, prod 1, logsumexp -inf, norm 0;
//     mean, var and std give nan (0 / 0). amax, amin, argmax, argmin and the p = inf or
//     p < 0 norms have no identity and throw.
// argmax / argmin reduce one dim (or the flattened tensor when dim is nullopt) to int64
// indices of the first extreme element; NaN counts as the extreme (PyTorch).
// softmax / log_softmax normalize along one dim; cumsum, cumprod, logcumsumexp and
// linear_recurrence scan one dim; sum_to_size undoes a broadcast (autograd's reduction of a gradient to an input's shape).
//
// Dtype rules (PyTorch's):
//   sum, cumsum, prod, cumprod, sum_to_size: int64 and bool -> int64 (integer overflow wraps);
//     floating keeps its dtype.
//   mean: floating only (int64 / bool throw: "could not infer the output dtype").
//   amax, amin: keep the dtype, bool included (max = any, min = all).
//   logsumexp: int64 / bool compute in float32.
//   var, std, norm, softmax, log_softmax, logcumsumexp, linear_recurrence: floating only.
//   argmax, argmin: any dtype in, int64 out.
// Results are new contiguous tensors (never aliases of x).
//
// Example:
//   Tensor x = ft::tensor({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2});
//   ft::sum(x)                     // 10 (rank 0)
//   ft::mean(x, {-1}, true)        // [[1.5], [3.5]]
//   ft::argmax(x, 0)               // [1, 1] (int64)
//   ft::softmax(x, 1)              // each row sums to 1
//   ft::sum_to_size(x, {1, 2})     // [[4, 6]]
#ifndef FT_OPS_REDUCTION_H_
#define FT_OPS_REDUCTION_H_

#include <cstdint>
#include <optional>

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// sum adds the elements over `dims` (all dims when empty). The sum of nothing is 0.
Tensor sum(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);

// mean averages over `dims` (all when empty). Floating x only; nan over zero elements.
Tensor mean(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);

// prod multiplies the elements over `dims` (all when empty). The product of nothing is 1.
Tensor prod(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);

// amax is the maximum over `dims` (all when empty); NaN propagates. Throws when a reduced
// dim has size 0.
Tensor amax(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);

// amin is the minimum over `dims` (all when empty); NaN propagates. Throws when a reduced
// dim has size 0.
Tensor amin(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);

// logsumexp is log(sum(exp(x))) over `dims`, computed stably by shifting with the max
// (inf inputs give inf, an all -inf slice gives -inf). -inf over zero elements.
Tensor logsumexp(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);

// var is sum((x - mean)^2) / max(0, N - correction) over the N elements of `dims`
// (correction 1: Bessel's unbiased estimate; 0: the population variance). When
// correction >= N the division by 0 gives inf (nan when every deviation is 0). Floating x.
Tensor var(const Tensor& x, IntArrayRef dims = {}, int64_t correction = 1, bool keepdim = false);

// std is sqrt(var(x, dims, correction, keepdim)). Floating x.
Tensor std(const Tensor& x, IntArrayRef dims = {}, int64_t correction = 1, bool keepdim = false);

// norm is the vector p-norm over `dims`: (sum |x|^p)^(1/p); p = inf is max |x|, p = -inf
// min |x|, p = 0 the number of nonzeros. Floating x. Throws for p = inf or p < 0 when a
// reduced dim has size 0 (no identity); otherwise the norm of nothing is 0.
Tensor norm(const Tensor& x, double p = 2, IntArrayRef dims = {}, bool keepdim = false);

// argmax returns the int64 index of the first maximum along `dim`, or into the flattened
// tensor when dim is nullopt (then keepdim gives shape [1, 1, ...] of x's rank). NaN is the
// maximum. Throws when the reduced dim (or the whole tensor) is empty.
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);

// argmin: as argmax, for the first minimum (NaN still wins, as in PyTorch).
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);

// softmax is exp(x) / sum(exp(x)) along `dim`, computed as exp(x - max). Floating x. A slice
// of all -inf gives nan.
Tensor softmax(const Tensor& x, int64_t dim);

// log_softmax is x - logsumexp(x) along `dim`, computed as (x - max) - log(sum(exp(x - max))).
// Floating x.
Tensor log_softmax(const Tensor& x, int64_t dim);

// cumsum is the running sum along `dim` (same shape as x). int64 / bool give int64.
Tensor cumsum(const Tensor& x, int64_t dim);

// cumprod is the running product along `dim` (same shape as x). int64 / bool give int64.
// Its derivatives divide by nothing, so they are exact at zeros and at every order (they are
// linear recurrences over the exclusive running products, see linear_recurrence).
Tensor cumprod(const Tensor& x, int64_t dim);

// logcumsumexp is log(cumsum(exp(x))) along `dim`, computed without overflow (each step is
// max + log1p(exp(min - max))). Floating x. A prefix of -inf gives -inf; its derivatives are
// NaN there (as the log of an empty sum has no slope).
Tensor logcumsumexp(const Tensor& x, int64_t dim);

// linear_recurrence(a, b, dim) is s with s[0] = b[0] and s[i] = a[i] * s[i - 1] + b[i] along
// `dim` (a[0] is not read): the first-order linear recurrence, i.e. a scan that cumsum (a = 1)
// and cumprod's derivatives are special cases of, and the core of linear state-space
// models. a and b broadcast; floating only. Its derivatives are again linear recurrences
// (forward: s' = rec(a, a' * s[i - 1] + b'); reverse: the same recurrence run backwards), so
// every order is exact and costs O(n).
//
// Example: linear_recurrence(tensor({0.0, 0.5, 0.5}), tensor({1.0, 1.0, 1.0}), 0) is
// [1, 1.5, 1.75].
Tensor linear_recurrence(const Tensor& a, const Tensor& b, int64_t dim);

// sum_to_size sums x down to `size`, which x's shape must be broadcastable from: leading
// extra dims are summed away and dims where size has 1 and x does not are summed with
// keepdim. Throws "sum_to_size: size [2, 3] is not expandable to size [4]" otherwise.
// Always returns a new tensor, with sum's dtype (bool -> int64), even when x already has
// shape `size`.
Tensor sum_to_size(const Tensor& x, IntArrayRef size);

// RegisterReductionOps adds this family to the op table (called by RegisterAllOps).
void RegisterReductionOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_REDUCTION_H_

// ft/ops/sort.h
//
// The public sorting ops: sort, argsort and topk along one dim (torch.sort / argsort /
// topk). Each dispatches (dispatch.h): with no transform active it runs the base kernel in
// kernels/sort.h directly.
//
// Order: keys compare with <; NaN counts as larger than every number, so it sorts last
// ascending and first descending (and topk(largest=true) picks NaNs first). Ordering is
// STABLE: equal keys (NaN with NaN, -0.0 with 0.0) keep their original relative order, the
// lower index first, in both directions and in topk. Results are deterministic.
//
// Dtypes: every dtype is accepted (bool sorts false < true); values keep the input dtype,
// indices are int64. Rank 0 is one element: sort returns (a copy of it, index 0). Outputs
// are new contiguous tensors; their shape is the input's (topk: with `dim` resized to k).
//
// Example:
//   Tensor x = ft::tensor({3.0f, NAN, 1.0f, 3.0f});
//   auto [v, i] = ft::sort(x);                 // v = [1, 3, 3, nan], i = [2, 0, 3, 1]
//   auto [tv, ti] = ft::topk(x, 2);            // tv = [nan, 3], ti = [1, 0]
//   Tensor order = ft::argsort(x, -1, true);   // [1, 0, 3, 2]
#ifndef FT_OPS_SORT_H_
#define FT_OPS_SORT_H_

#include <cstdint>
#include <tuple>

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// sort returns (values, indices) with x's slices along `dim` in ascending order (descending
// when `descending`); indices holds the position along `dim` each value came from (values at
// [.., j, ..] == x at [.., indices[.., j, ..], ..]). Throws when dim is out of range.
std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);

// argsort returns only the int64 indices of sort(x, dim, descending).
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);

// topk returns (values, indices) of the k largest (smallest when !largest) entries of each
// slice along `dim`. With `sorted` they come in order (largest first, or smallest first);
// without it they come in increasing order of their original index. Ties keep the lower
// index. Throws when dim is out of range or k is outside [0, size(dim)] (for rank 0, k must
// be 1).
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1,
                                bool largest = true, bool sorted = true);

// RegisterSortOps adds this family to the op table (called by RegisterAllOps).
void RegisterSortOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_SORT_H_

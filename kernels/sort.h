// ft/kernels/sort.h
//
// Base kernels of the sorting ops (dense tensors only; the public, dispatching versions are
// ft::sort etc. in ops/sort.h, which documents the semantics).
//
// Order: a strict total order on (key, index): keys compare with <, NaN is larger than every
// other value (last ascending, first descending) and equal keys (including NaN and NaN,
// -0.0 and 0.0) keep their original order, the lower index first. Every dtype is accepted
// (bool sorts false < true). Values keep the input dtype; indices are int64. Results are new
// contiguous tensors.
#ifndef FT_KERNELS_SORT_H_
#define FT_KERNELS_SORT_H_

#include <cstdint>
#include <tuple>

#include "tensor/tensor.h"

namespace ft::kernels {

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending);
Tensor argsort(const Tensor& x, int64_t dim, bool descending);
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                bool sorted);

}  // namespace ft::kernels

#endif  // FT_KERNELS_SORT_H_

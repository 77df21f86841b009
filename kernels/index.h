// ft/kernels/index.h
//
// Base kernels of the indexing, joining and conversion ops (dense tensors only; the public,
// dispatching versions are ft::gather, ft::cat, ... in ops/index.h, which documents
// each op).
//
// Families:
//   - Indexing with an int64 index tensor: index_select, gather, scatter_add, take_along_dim,
//     one_hot. Index values must lie in [0, size); negative values are errors (no Python-style
//     wrap-around, as in torch.gather). Every index value is validated before any output is
//     allocated, so a failing call has no effect.
//   - Joining and splitting: cat, stack (new contiguous tensors, dtype promoted over all
//     inputs), split, split_with_sizes, chunk (VIEWS of the input: they share its storage and
//     version counter).
//   - Layout: repeat, pad (constant padding, negative pads crop).
//
// Invariants: results of the copying kernels are new contiguous tensors (never aliasing an
// input); scatter_add accumulates in the row-major order of the index tensor, so its result
// is deterministic.
#ifndef FT_KERNELS_INDEX_H_
#define FT_KERNELS_INDEX_H_

#include <cstdint>
#include <optional>

#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ft::kernels {

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim);
Tensor cat(const TensorList& tensors, int64_t dim);
Tensor stack(const TensorList& tensors, int64_t dim);
TensorList split(const Tensor& x, int64_t split_size, int64_t dim);
TensorList split_with_sizes(const Tensor& x, IntArrayRef sizes, int64_t dim);
TensorList chunk(const Tensor& x, int64_t chunks, int64_t dim);
Tensor repeat(const Tensor& x, IntArrayRef repeats);
Tensor pad(const Tensor& x, IntArrayRef pads, Scalar value);
Tensor one_hot(const Tensor& indices, int64_t num_classes);

// The dtype conversion `to` is kernels::to in tensor/copy.h (registered as the op "to").

}  // namespace ft::kernels

#endif  // FT_KERNELS_INDEX_H_

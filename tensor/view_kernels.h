// ft/tensor/view_kernels.h
//
// Base kernels of the view and shape ops (dense tensors only; the public, dispatching versions
// are ft::reshape etc. in dispatch/view_ops.h).
//
// A view is a NEW TensorImpl over the SAME Storage with other sizes, strides and storage
// offset: it never copies elements and never bumps the version counter, and a write through a
// view is visible in its base (and vice versa). Every op here is a view, except:
//   - reshape and flatten, which return a view when the input's strides allow it and a
//     contiguous copy otherwise (PyTorch's computeStride rule: dims may be split or merged
//     only inside runs that are contiguous with respect to each other);
//   - contiguous, which returns its input itself (the same object) when it is already
//     contiguous and a copy otherwise; clone and flip, which always copy.
// (contiguous and clone are the base kernels of tensor/copy.h, included here.)
//
// Every dtype is accepted. Dims follow PyTorch: negative dims count from the end; rank-0
// tensors accept dim 0 and -1 where PyTorch does (transpose, squeeze_dim, flatten, ...);
// size-0 dims are fine everywhere. Views of views, non-contiguous, broadcast (stride 0) and
// offset inputs all work, because each kernel only rewrites (sizes, strides, offset).
//
// Example:
//   Tensor x = kernels::reshape(ft::arange(6.0), {2, 3});  // sizes [2, 3], strides [3, 1]
//   Tensor y = kernels::transpose(x, 0, 1);   // sizes [3, 2], strides [1, 3], same storage
//   Tensor z = kernels::reshape(y, {6});      // y is not viewable as [6]: a copy
//   Tensor w = kernels::reshape(y, {3, 2, 1}); // a view: strides [1, 3, 3]
#ifndef FT_TENSOR_VIEW_KERNELS_H_
#define FT_TENSOR_VIEW_KERNELS_H_

#include <optional>

#include "tensor/copy.h"
#include "tensor/tensor.h"

namespace ft::kernels {

// reshape: `shape` may hold one -1 (inferred from numel). A view when computeStride allows
// it, else a contiguous copy.
Tensor reshape(const Tensor& x, IntArrayRef shape);
// view: like reshape, but throws instead of copying.
Tensor view(const Tensor& x, IntArrayRef shape);
// flatten merges dims [start_dim, end_dim] into one (rank 0 -> [1]); reshape semantics.
Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim);
// unflatten splits dim `dim` into `sizes` (one -1 allowed); always a view.
Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes);
// expand broadcasts size-1 dims (stride 0) and adds leading dims; -1 keeps a size.
Tensor expand(const Tensor& x, IntArrayRef sizes);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor squeeze(const Tensor& x);
Tensor squeeze_dim(const Tensor& x, int64_t dim);
Tensor squeeze_dims(const Tensor& x, IntArrayRef dims);
Tensor movedim(const Tensor& x, IntArrayRef source, IntArrayRef destination);
Tensor permute(const Tensor& x, IntArrayRef dims);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& x);

// Argument checks on sizes alone, shared by select/narrow below and by their batching rules
// (vmap_rules/views.cc runs them on the per-example sizes, so errors under vmap read exactly
// like the op's). Each throws the op's ft::Error; on success it returns the wrapped dim and,
// for the index/start, the non-negative value.
struct DimAndIndex {
  int64_t dim;
  int64_t index;
};
DimAndIndex CheckSelectArgs(IntArrayRef sizes, int64_t dim, int64_t index);
DimAndIndex CheckNarrowArgs(IntArrayRef sizes, int64_t dim, int64_t start, int64_t length);

Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> end, int64_t step);
Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2);
// flip returns a new contiguous tensor with the elements reversed along `dims`.
Tensor flip(const Tensor& x, IntArrayRef dims);

}  // namespace ft::kernels

#endif  // FT_TENSOR_VIEW_KERNELS_H_

// ft/kernels/view.h
//
// Base kernels of the view and shape ops (dense tensors only; the public, dispatching versions
// are ft::reshape etc. in ops/view.h).
//
// A view is a NEW TensorImpl over the SAME Storage with other sizes, strides and storage
// offset: it never copies elements and never bumps the version counter, and a write through a
// view is visible in its base (and vice versa). Every op here is a view, except:
//   - reshape and flatten, which return a view when the input's strides allow it and a
//     contiguous copy otherwise (PyTorch's computeStride rule: dims may be split or merged
//     only inside runs that are contiguous with respect to each other);
//   - contiguous, which returns its input itself (the same object) when it is already
//     contiguous and a copy otherwise; clone and flip, which always copy;
//   - select_scatter, slice_scatter and diagonal_scatter, the out-of-place inverses of
//     select, slice and diagonal: a new contiguous copy of `self` with `src` written into the
//     region the view addresses (self is never written).
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
//   Tensor s = kernels::select_scatter(x, ft::zeros({3}), 0, 1);
//                                              // [[0, 1, 2], [0, 0, 0]]: a copy, x unchanged
#ifndef FT_KERNELS_VIEW_H_
#define FT_KERNELS_VIEW_H_

#include <optional>

#include "absl/strings/string_view.h"
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

// The scatter ops (torch.select_scatter, slice_scatter, diagonal_scatter): each returns a new
// contiguous tensor equal to `self` except that the region select(self, dim, index) (resp.
// slice(self, dim, start, end, step), diagonal(self, offset, dim1, dim2)) holds src's values.
// The region is the view kernel's, so its arguments follow the view exactly and throw the
// view's own errors ("select: index 5 out of range ..."); then CheckScatterSrc runs. Both
// come before anything is allocated. src may have any layout (it is read through its
// strides, and may even alias self).
Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index);
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim,
                     std::optional<int64_t> start, std::optional<int64_t> end, int64_t step);
Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset, int64_t dim1,
                        int64_t dim2);

// CheckScatterSrc is the scatter ops' check of src on sizes and dtypes alone, shared with
// their batching rules (vmap_rules/views.cc runs it on the per-example sizes). `op` names the
// scatter op; `region` is the sizes of the view of self that src replaces. Throws when src's
// sizes are not exactly `region` ("select_scatter: expected src to have a size equal to the
// slice of self. src size = [2], slice size = [4]"), then when the dtypes differ.
void CheckScatterSrc(absl::string_view op, IntArrayRef region, IntArrayRef src_sizes,
                     DType self_dtype, DType src_dtype);

}  // namespace ft::kernels

#endif  // FT_KERNELS_VIEW_H_

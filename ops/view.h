// ft/ops/view.h
//
// The public view and shape ops: reshape/view/flatten/unflatten, expand, (un)squeeze,
// movedim/permute/transpose/t, select/narrow/slice/diagonal, their out-of-place inverses
// select_scatter/slice_scatter/diagonal_scatter, and contiguous/clone/flip. Each dispatches
// (dispatch.h) to its base kernel in kernels/view.h.
//
// Views: the result is a new tensor object sharing x's Storage (result.storage().is_same(
// x.storage())) with other sizes/strides/offset. No element is copied and the version is not
// bumped, and writes through a view are visible in x (and the other way round). Only
// reshape/flatten (when the strides do not allow a view), contiguous (when x is not
// contiguous), clone, flip and the three scatter ops copy.
//
// Every dtype is accepted. Dims follow PyTorch: negative dims count from the end, rank-0
// tensors accept dim 0/-1 where PyTorch does, size-0 dims are fine. Errors are ft::Error
// messages that start with the op name and give the shapes, dims or indices involved.
//
// Example:
//   Tensor x = ft::arange(6.0);
//   Tensor m = ft::reshape(x, {2, -1});       // [2, 3], a view of x
//   Tensor c = ft::select(m, 1, -1);          // [2]: elements 2 and 5, a view
//   ft::exp_(c);                              // x[2] and x[5] change too
//   Tensor r = ft::slice(m, 1, std::nullopt, std::nullopt, 2);   // m[:, ::2]
//   Tensor s = ft::select_scatter(m, ft::zeros({2}), 1, -1);  // [[0, 1, 0], [3, 4, 0]]: a
//                                                             // copy, m and x unchanged
#ifndef FT_OPS_VIEW_H_
#define FT_OPS_VIEW_H_

#include <optional>

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// reshape returns x with shape `shape` (one entry may be -1: inferred from x.numel()). It is
// a view when x's strides allow one (dims may be merged or split only across dims that are
// contiguous with each other, PyTorch's rule; this includes many non-contiguous inputs), else
// a contiguous copy. Errors: more than one -1, a size below -1, or a shape whose numel is not
// x.numel() ("reshape: shape [4, -1] is invalid for input of size 6"; a -1 with a size-0 dim
// is ambiguous and rejected too).
Tensor reshape(const Tensor& x, IntArrayRef shape);

// view is reshape that never copies: it throws "view: size is not compatible with input
// tensor's size and stride ..." when no strides express the new shape.
Tensor view(const Tensor& x, IntArrayRef shape);

// flatten merges dims [start_dim, end_dim] (inclusive) into one, with reshape's view-or-copy
// rule. A rank-0 tensor becomes shape [1]. Error: start_dim after end_dim, dims out of range.
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);

// unflatten splits dim `dim` into `sizes` (product = x.size(dim), one -1 allowed). Always a
// view. Errors: rank-0 x, empty sizes, sizes that do not multiply up to the dim's size.
Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes);

// expand views x broadcast to `sizes`: new leading dims may be added (sizes >= 0), -1 keeps
// a dim's size, and only size-1 dims may change size (they get stride 0, so the result's
// elements overlap: in-place ops on it throw). Errors name the target and tensor shapes.
Tensor expand(const Tensor& x, IntArrayRef sizes);

// expand_as is expand(x, other.sizes()).
Tensor expand_as(const Tensor& x, const Tensor& other);

// unsqueeze inserts a size-1 dim at `dim`, in [-rank-1, rank] (so unsqueeze(scalar, 0) is
// shape [1]).
Tensor unsqueeze(const Tensor& x, int64_t dim);

// squeeze removes every size-1 dim.
Tensor squeeze(const Tensor& x);

// squeeze_dim removes dim `dim` if its size is 1 (otherwise returns an unchanged view).
Tensor squeeze_dim(const Tensor& x, int64_t dim);

// squeeze_dims removes the listed dims whose size is 1 (others are kept). Error: a dim out
// of range or listed twice.
Tensor squeeze_dims(const Tensor& x, IntArrayRef dims);

// movedim moves dims source[i] to position destination[i]; the other dims keep their
// relative order. Errors: lists of different lengths, dims out of range or repeated.
Tensor movedim(const Tensor& x, IntArrayRef source, IntArrayRef destination);
// movedim(x, s, d) is movedim(x, {s}, {d}).
Tensor movedim(const Tensor& x, int64_t source, int64_t destination);

// permute reorders the dims: result dim i is x's dim dims[i]. Error: dims is not a
// permutation of all of x's dims.
Tensor permute(const Tensor& x, IntArrayRef dims);

// transpose swaps dims dim0 and dim1 (rank 0 accepts 0/-1 and returns an unchanged view).
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);

// t transposes a matrix; rank 0 and 1 tensors come back unchanged (as views). Error: rank > 2
// ("t: expects a tensor with <= 2 dimensions, but self is 3D").
Tensor t(const Tensor& x);

// select views x at `index` (negative counts from the end) along `dim`, dropping that dim.
// Errors: rank-0 x; index out of range ("select: index 5 out of range for tensor of size
// [3, 4] at dimension 0").
Tensor select(const Tensor& x, int64_t dim, int64_t index);

// narrow views elements [start, start + length) of `dim` (start may be negative: counts from
// the end). Errors: rank-0 x, start out of [-size, size], negative length, or past the end.
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);

// slice is Python's x[..., start:end:step] along `dim`: missing bounds mean the whole dim,
// negative bounds count from the end, and both clamp to [0, size] (so out-of-range bounds
// give a shorter or empty slice, never an error). Errors: rank-0 x, step <= 0.
Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> end, int64_t step = 1);

// diagonal views the diagonal of the (dim1, dim2) matrices, which becomes the last dim. A
// positive offset selects a diagonal above the main one, a negative one below it; offsets
// beyond the matrix give a size-0 diagonal. Errors: rank < 2, dim1 == dim2.
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);

// The scatter ops write a view's worth of values back into a copy of its base, without any
// in-place write (torch.select_scatter & co.; functionalize replays a write through a view
// as base = op(base, new values of the view)). Each returns a NEW contiguous tensor equal to
// `self` except in the region the view with the same arguments addresses, which holds src's
// values; self is never written. The view's arguments behave exactly as the view's
// (negative dims and indices, slice's clamping) and throw the view's errors. src must have
// exactly the region's shape ("select_scatter: expected src to have a size equal to the slice
// of self. src size = [2], slice size = [4]") and self's dtype ("...: expected src to have
// the same dtype as self, got src dtype int64 and self dtype float32"); its layout is free.
// Every dtype is accepted. Linear in (self, src): differentiable in both.

// select_scatter: self with select(self, dim, index) replaced by src (rank(self) - 1 dims).
Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index);

// slice_scatter: self with slice(self, dim, start, end, step) replaced by src.
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim = 0,
                     std::optional<int64_t> start = std::nullopt,
                     std::optional<int64_t> end = std::nullopt, int64_t step = 1);

// diagonal_scatter: self with diagonal(self, offset, dim1, dim2) replaced by src (the
// diagonal is src's last dim, the other dims of self in order before it).
Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset = 0,
                        int64_t dim1 = 0, int64_t dim2 = 1);

// contiguous returns x itself (the same object) when x is contiguous, else a row-major copy.
Tensor contiguous(const Tensor& x);

// clone returns a new contiguous tensor with x's values (never shares x's storage).
Tensor clone(const Tensor& x);

// stop_gradient returns a copy of x's values that carries no derivative at any level (JAX's
// lax.stop_gradient, torch's detach() as a copy): its gradient is zero and its tangent
// zero under every grad and jvp around it; under vmap it keeps x's batch dims.
//   grad(x -> sum(x * stop_gradient(x)))(x) == x, not 2x.
Tensor stop_gradient(const Tensor& x);

// flip returns a new contiguous tensor with x's elements reversed along `dims` (a copy, as
// torch.flip makes). Error: a dim out of range or listed twice.
Tensor flip(const Tensor& x, IntArrayRef dims);

// RegisterViewOps adds this family to the op table (called by RegisterAllOps).
void RegisterViewOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_VIEW_H_

// ft/ops/index.h
//
// The public indexing, joining and conversion ops, with PyTorch semantics. Each dispatches
// (dispatch.h): with no transform active it runs the base kernel in kernels/index.h
// directly; inside a transform the active interpreter processes it.
//
// Index tensors are int64 (any other dtype is an ft::Error). Index values must lie in
// [0, size) of the indexed dim: negative values are errors, not Python-style wrap-around.
// All index values are checked before anything is allocated. Results keep the input's dtype,
// except cat/stack (promoted over all inputs, torch.result_type-style), one_hot (int64) and
// to (the requested dtype).
//
// Aliasing: split, split_with_sizes and chunk return VIEWS that share the input's storage
// (and version counter); `to` returns the input itself when the dtype already matches;
// every other op returns a new contiguous tensor.
//
// Example:
//   Tensor x = ft::tensor({0, 1, 2, 3, 4, 5}, {2, 3});   // int64 [[0, 1, 2], [3, 4, 5]]
//   ft::index_select(x, 1, ft::tensor({2, 0}))           // [[2, 0], [5, 3]]
//   ft::gather(x, 1, ft::tensor({0, 0, 2, 1}, {2, 2}))   // [[0, 0], [5, 4]]
//   ft::cat({x, x}, 0).sizes() == {4, 3}
//   TensorList parts = ft::split(x, 2, 1);              // views of sizes [2, 2], [2, 1]
//   ft::pad(x, {1, 1}).sizes() == {2, 5}                // zero column on each side
#ifndef FT_OPS_INDEX_H_
#define FT_OPS_INDEX_H_

#include <cstdint>
#include <optional>

#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// index_select picks the entries `index` (int64, rank 0 or 1) of x along `dim`: the result
// has x's shape with size(dim) = index.numel(). A rank-0 x takes exactly one index (0) and
// gives a rank-0 result. Errors: non-int64 or rank > 1 index, dim out of range, an index
// value outside [0, x.size(dim)) ("index 5 is out of bounds for dimension 0 with size 3").
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);

// gather: out[i][j][k] = x[i][index[i][j][k]][k] for dim 1 (and likewise for other dims);
// the result has index's shape. index is int64 with x's rank (rank 0 counts as rank 1) and
// index.size(d) <= x.size(d) for every d != dim. Errors name the offending dim, shapes or
// the out-of-bounds value with its dim and size.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);

// scatter_add returns a copy of x with src[i][j][k] added at [i][index[i][j][k]][k] (dim 1);
// out-of-place. Checks as gather, plus index.size(d) <= src.size(d) for every d, and src's
// dtype must equal x's. Repeated indices accumulate in the row-major order of index, so the
// result is deterministic. For bool tensors addition is logical or.
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);

// take_along_dim (torch.take_along_dim): with dim, x and indices (same rank) broadcast on
// every dim but `dim` and the result gathers along it; without dim, both are flattened and
// the result is 1-D with indices.numel() elements.
Tensor take_along_dim(const Tensor& x, const Tensor& indices,
                      std::optional<int64_t> dim = std::nullopt);

// cat concatenates a non-empty list along an existing dim. The dtype is the promotion of all
// inputs. Shapes must match except along dim (the error names the index of the offending
// tensor and both shapes). Like PyTorch, 1-D tensors of shape [0] are skipped whatever the
// other shapes; rank-0 tensors are an error.
Tensor cat(const TensorList& tensors, int64_t dim = 0);

// stack joins a non-empty list of equally shaped tensors along a new dim, which may be in
// [-rank - 1, rank]. The dtype is the promotion of all inputs.
Tensor stack(const TensorList& tensors, int64_t dim = 0);

// split cuts x along dim into views of split_size elements (the last may be smaller; at
// least one piece). split_size must be >= 0, and 0 only when the dim is empty. x must have
// rank >= 1.
TensorList split(const Tensor& x, int64_t split_size, int64_t dim = 0);

// split_with_sizes cuts x along dim into views of the given sizes, which must be
// non-negative and sum to x.size(dim).
TensorList split_with_sizes(const Tensor& x, IntArrayRef sizes, int64_t dim = 0);

// chunk cuts x along dim into views of ceil(n / chunks) elements (torch.chunk: may return
// fewer than `chunks` pieces; an empty dim gives `chunks` empty views). chunks must be > 0,
// and at most 2^31 - 1 for an empty dim.
TensorList chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);

// repeat tiles x: result size(i) = padded_x.size(i) * repeats[i], where x's shape is
// left-padded with 1s to len(repeats) dims (so new leading dims are allowed). Errors when
// repeats is shorter than x's rank or holds a negative value.
Tensor repeat(const Tensor& x, IntArrayRef repeats);

// pad adds constant padding like torch.nn.functional.pad(mode="constant"): `pads` lists
// (left, right) pairs starting from the LAST dim; its length must be even and <= 2 * rank.
// Negative pads crop. `value` is converted to x's dtype. Errors when a resulting size would
// be negative.
Tensor pad(const Tensor& x, IntArrayRef pads, Scalar value = 0);

// to returns x itself (the same object) when it already has `dtype`, else a contiguous copy
// converted like a C++ cast (float -> int64 truncates toward zero; nonzero -> true).
Tensor to(const Tensor& x, DType dtype);

// one_hot turns int64 class indices into an int64 tensor with a new last dim of
// num_classes, 1 at each index. num_classes = -1 infers max + 1 (an error for an empty
// input). Values must be in [0, num_classes).
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

// RegisterIndexOps adds this family to the op table (called by RegisterAllOps).
void RegisterIndexOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_INDEX_H_

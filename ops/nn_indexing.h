// ft/ops/nn_indexing.h
//
// Indexing and shape ops for models, with torch's names, argument order and defaults:
// embedding, masked_fill, index_add, tril, triu, roll, pixel_shuffle, pixel_unshuffle, and
// advanced indexing: index and index_put (torch's x[i, :, j] and x.index_put(...)), built on
// the primitives gather_nd and index_put_nd. Each op dispatches (dispatch.h) to its base kernel
// in kernels/nn_indexing.h.
//
// Every op returns a new tensor (never a view of an input) of the input's dtype (embedding:
// weight's), contiguous except for index / index_put, which may return a permuted layout.
// Index tensors are int64; index values must lie in [0, size) (no Python-style wrap-around),
// except in advanced indexing, which follows torch (negative values count from the end); all
// are checked before anything is allocated. Errors are
// ft::Error naming the op and the shapes, dims or values involved. Every op is
// differentiable in its floating tensor arguments (not in indices or masks), batchable with
// vmap (indices and masks may be batched too), and passes through functionalize.
//
// Example:
//   Tensor w = ft::tensor({0.0, 1.0, 2.0, 3.0, 4.0, 5.0}, {3, 2});
//   ft::embedding(ft::tensor<int64_t>({2, 0}), w)        // [[4, 5], [0, 1]]
//   ft::tril(ft::ones({2, 2}))                            // [[1, 0], [1, 1]]
//   ft::roll(ft::tensor({1.0, 2.0, 3.0}), {1}, {0})       // [3, 1, 2]
#ifndef FT_OPS_NN_INDEXING_H_
#define FT_OPS_NN_INDEXING_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// embedding (torch.nn.functional.embedding): out[i..., :] = weight[input[i...], :]. input is
// an int64 tensor of any shape, weight is [num_embeddings, embedding_dim]; the result is
// input.shape + [embedding_dim] with weight's dtype. padding_idx (negative counts from the
// end) leaves the forward unchanged, but the row at padding_idx is a constant to the
// derivatives: it gets no gradient, and output rows read from it get no tangent. Errors:
// non-int64 input, weight not 2-D, padding_idx outside [-num, num), an index outside
// [0, num) ("embedding: index 5 is out of range for an embedding table of 3 rows ...").
Tensor embedding(const Tensor& input, const Tensor& weight,
                 std::optional<int64_t> padding_idx = std::nullopt);

// masked_fill: x with `value` where `mask` (bool) is true. Like torch's out-of-place
// masked_fill, x and mask broadcast and the result has their broadcast shape and x's dtype
// (value is converted to it). The tensor overload takes a 0-dim value and is differentiable
// in it (its gradient is the sum of the gradient over the masked positions). Errors: a
// non-bool mask, a value tensor that is not 0-dim, shapes that do not broadcast.
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);

// index_add (torch.index_add): a copy of x with alpha * source[..., k, ...] added at
// x[..., index[k], ...] along `dim`; repeated indices accumulate. index is int64, rank 0 or
// 1; source has x's rank (rank 0 counts as [1]), source.size(dim) == index.numel() and
// source's other sizes equal x's; source's dtype must equal x's. alpha is converted to x's
// dtype. Example: index_add(zeros({3}), 0, tensor<int64_t>({0, 0}), tensor({1.0f, 2.0f}))
// is [3, 0, 0].
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha = 1);

// tril / triu (torch.tril, torch.triu): x (rank >= 2, a batch of matrices in the last two
// dims) with the elements above (tril) / below (triu) the `diagonal`-th diagonal set to 0:
// tril keeps (i, j) with j - i <= diagonal, triu keeps j - i >= diagonal.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);

// roll (torch.roll): x's elements shifted along each dims[k] by shifts[k] (cyclically,
// negative shifts roll back; a dim may repeat and the shifts add). With dims empty, shifts
// holds one value and the flattened tensor is rolled, then restored to x's shape. Errors:
// empty shifts, shifts and dims of different lengths, a dim out of range.
Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims = {});

// pixel_shuffle: [*, C * r^2, H, W] -> [*, C, H * r, W * r] with
// out[..., c, h * r + i, w * r + j] = x[..., c * r^2 + i * r + j, h, w]; pixel_unshuffle is
// its inverse, [*, C, H * r, W * r] -> [*, C * r^2, H, W]. Errors: rank < 3, r <= 0, a
// channel count not divisible by r^2 (shuffle), H or W not divisible by r (unshuffle).
Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor);

// ---- Advanced indexing ----
//
// TensorIndices: one entry per leading dim of x, as in torch's x[i, :, j]: an int64 tensor
// indexes that dim, std::nullopt keeps it whole (a `:`). Dims past the list are kept whole.
// The index tensors broadcast together to a shape B, and index values may be negative
// (counting from the end, as in torch); a value outside [-size, size) is an ft::Error.
using TensorIndices = std::vector<std::optional<Tensor>>;

// index (torch's x[indices], aten::index): selects x at the broadcast index tuples. The result
// is B followed by the kept dims, except that when the indexed dims are adjacent B takes their
// place (torch's rule): x [5, 6, 7] indexed by (nullopt, i [2, 3], j [3]) is [5, 2, 3];
// indexed by (i [2], nullopt, j [2]) it is [2, 6]. With no index tensor it is a copy of x.
// Boolean masks (whose result shape depends on their values) are not supported: use
// masked_fill or where. Differentiable in x; the gradient accumulates repeated indices.
Tensor index(const Tensor& x, const TensorIndices& indices);

// index_put (torch.index_put): a copy of x with `values` written at x[indices] (values
// broadcast to the shape index(x, indices) has, and have x's dtype). accumulate=true adds
// values instead, repeated index tuples adding up; accumulate=false writes, and where index
// tuples repeat the last one wins (torch leaves that undefined; ft fixes it, and its
// derivatives agree: the overwritten values get no gradient). Differentiable in x and values.
// Example:
//   index_put(zeros({3}), {tensor<int64_t>({0, 2, 0})}, tensor({1.0f, 2.0f, 3.0f}), true)
//   // [4, 0, 2]
Tensor index_put(const Tensor& x, const TensorIndices& indices, const Tensor& values,
                 bool accumulate = false);

// gather_nd / index_put_nd: the op-table primitives index and index_put lower to (and useful
// on their own, as in JAX / TF). index is int64 [*B, k]: each row holds coordinates into x's
// first k dims (negative counts from the end). gather_nd(x, index) has shape
// B + x.shape[k:], row b being x[index[b, 0], ..., index[b, k-1]]. index_put_nd writes (or,
// with accumulate, adds) values, broadcast to that shape, at those places of a copy of x, rows
// in order. Errors: a non-int64 or rank-0 index, k > x.dim(), a coordinate out of range,
// values of another dtype or not broadcastable.
Tensor gather_nd(const Tensor& x, const Tensor& index);
Tensor index_put_nd(const Tensor& x, const Tensor& index, const Tensor& values,
                    bool accumulate = false);

// RegisterNnIndexingOps adds this family to the op table (called by RegisterAllOps).
void RegisterNnIndexingOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_NN_INDEXING_H_

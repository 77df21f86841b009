// ft/kernels/nn_indexing.h
//
// Indexing and shape ops for models: the base kernels (embedding, masked_fill, index_add, tril,
// triu, roll, pixel_shuffle, pixel_unshuffle, and gather_nd / index_put_nd, the primitives of
// advanced indexing). Dense tensors only; //ops makes them
// public ops (ops/nn_indexing.h documents each).
//
// Every kernel validates all of its arguments (index values included) before it allocates,
// and returns a new contiguous tensor that never aliases an input.
#ifndef FT_KERNELS_NN_INDEXING_H_
#define FT_KERNELS_NN_INDEXING_H_

#include <cstdint>
#include <optional>

#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ft::kernels {

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha);
Tensor tril(const Tensor& x, int64_t diagonal);
Tensor triu(const Tensor& x, int64_t diagonal);
Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims);
Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor);
Tensor gather_nd(const Tensor& x, const Tensor& index);
Tensor index_put_nd(const Tensor& x, const Tensor& index, const Tensor& values, bool accumulate);

// Shape checks of the kernels above, on sizes and dtypes only: the batching rules call them
// with per-example (logical) shapes so that errors under vmap read like the op's own.
// EmbeddingCheck returns the result shape; MaskedFillCheck the broadcast shape;
// IndexAddCheck the wrapped dim; RollCheck the wrapped dims; the pixel checks the result
// shape.
Shape EmbeddingCheck(IntArrayRef input, DType input_dtype, IntArrayRef weight,
                     std::optional<int64_t> padding_idx);
Shape MaskedFillCheck(IntArrayRef x, IntArrayRef mask, DType mask_dtype, IntArrayRef value);
int64_t IndexAddCheck(IntArrayRef x, DType x_dtype, int64_t dim, IntArrayRef index,
                      DType index_dtype, IntArrayRef source, DType source_dtype);
void TriangleCheck(const char* op, IntArrayRef x);
Shape RollCheck(IntArrayRef x, IntArrayRef shifts, IntArrayRef dims);
Shape PixelShuffleCheck(IntArrayRef x, int64_t upscale_factor);
Shape PixelUnshuffleCheck(IntArrayRef x, int64_t downscale_factor);
// GatherNdCheck returns gather_nd's result shape, index.shape[:-1] + x.shape[k:] with
// k = index.size(-1); IndexPutNdCheck checks index_put_nd's arguments (values broadcast to that
// shape). `op` names the op in the messages.
Shape GatherNdCheck(const char* op, IntArrayRef x, IntArrayRef index, DType index_dtype);
void IndexPutNdCheck(IntArrayRef x, DType x_dtype, IntArrayRef index, DType index_dtype,
                     IntArrayRef values, DType values_dtype);

}  // namespace ft::kernels

#endif  // FT_KERNELS_NN_INDEXING_H_

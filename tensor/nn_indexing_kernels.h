// ft/tensor/nn_indexing_kernels.h
//
// Indexing and shape ops for models: the base kernels (embedding, masked_fill, index_add, index_put, tril, triu, roll, pixel_shuffle, interpolate).
// Dense tensors only; //dispatch makes them public ops (dispatch/nn_indexing_ops.h).
#ifndef FT_TENSOR_NN_INDEXING_KERNELS_H_
#define FT_TENSOR_NN_INDEXING_KERNELS_H_

#include "tensor/tensor.h"

namespace ft::kernels {}  // namespace ft::kernels

#endif  // FT_TENSOR_NN_INDEXING_KERNELS_H_

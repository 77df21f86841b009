// ft/tensor/conv_kernels.h
//
// Convolution and pooling: the base kernels (conv1d/2d/3d, conv_transpose1d/2d, unfold, fold, max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d, adaptive_max_pool2d).
// Dense tensors only; //dispatch makes them public ops (dispatch/conv_ops.h).
#ifndef FT_TENSOR_CONV_KERNELS_H_
#define FT_TENSOR_CONV_KERNELS_H_

#include "tensor/tensor.h"

namespace ft::kernels {}  // namespace ft::kernels

#endif  // FT_TENSOR_CONV_KERNELS_H_

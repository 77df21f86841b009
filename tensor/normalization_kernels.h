// ft/tensor/normalization_kernels.h
//
// Normalization: the base kernels (layer_norm, group_norm, batch_norm, instance_norm, rms_norm, normalize).
// Dense tensors only; //dispatch makes them public ops (dispatch/normalization_ops.h).
#ifndef FT_TENSOR_NORMALIZATION_KERNELS_H_
#define FT_TENSOR_NORMALIZATION_KERNELS_H_

#include "tensor/tensor.h"

namespace ft::kernels {}  // namespace ft::kernels

#endif  // FT_TENSOR_NORMALIZATION_KERNELS_H_

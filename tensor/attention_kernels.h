// ft/tensor/attention_kernels.h
//
// Attention and contractions: the base kernels (scaled_dot_product_attention, baddbmm, addmm, einsum).
// Dense tensors only; //dispatch makes them public ops (dispatch/attention_ops.h).
#ifndef FT_TENSOR_ATTENTION_KERNELS_H_
#define FT_TENSOR_ATTENTION_KERNELS_H_

#include "tensor/tensor.h"

namespace ft::kernels {}  // namespace ft::kernels

#endif  // FT_TENSOR_ATTENTION_KERNELS_H_

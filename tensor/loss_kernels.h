// ft/tensor/loss_kernels.h
//
// Losses: the base kernels (cross_entropy, nll_loss, mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy, binary_cross_entropy_with_logits, kl_div).
// Dense tensors only; //dispatch makes them public ops (dispatch/loss_ops.h).
#ifndef FT_TENSOR_LOSS_KERNELS_H_
#define FT_TENSOR_LOSS_KERNELS_H_

#include "tensor/tensor.h"

namespace ft::kernels {}  // namespace ft::kernels

#endif  // FT_TENSOR_LOSS_KERNELS_H_

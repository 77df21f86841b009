// ft/dispatch/loss_ops.h
//
// Losses: the public ops (cross_entropy, nll_loss, mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy, binary_cross_entropy_with_logits, kl_div), with torch.nn.functional's names, argument order and
// defaults. Each dispatches (dispatch.h) to its base kernel in tensor/loss_kernels.h.
#ifndef FT_DISPATCH_LOSS_OPS_H_
#define FT_DISPATCH_LOSS_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterLossOps adds this family to the op table (called by RegisterAllOps).
void RegisterLossOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_LOSS_OPS_H_

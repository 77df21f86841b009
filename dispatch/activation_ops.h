// ft/dispatch/activation_ops.h
//
// Activations: the public ops (gelu, silu, mish, softplus, elu, selu, celu, leaky_relu, hardtanh, hardswish, hardsigmoid, logsigmoid, softsign, erf, erfc, erfinv, lgamma, digamma), with torch.nn.functional's names, argument order and
// defaults. Each dispatches (dispatch.h) to its base kernel in tensor/activation_kernels.h.
#ifndef FT_DISPATCH_ACTIVATION_OPS_H_
#define FT_DISPATCH_ACTIVATION_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterActivationOps adds this family to the op table (called by RegisterAllOps).
void RegisterActivationOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_ACTIVATION_OPS_H_

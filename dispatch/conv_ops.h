// ft/dispatch/conv_ops.h
//
// Convolution and pooling: the public ops (conv1d/2d/3d, conv_transpose1d/2d, unfold, fold, max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d, adaptive_max_pool2d), with torch.nn.functional's names, argument order and
// defaults. Each dispatches (dispatch.h) to its base kernel in tensor/conv_kernels.h.
#ifndef FT_DISPATCH_CONV_OPS_H_
#define FT_DISPATCH_CONV_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterConvOps adds this family to the op table (called by RegisterAllOps).
void RegisterConvOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_CONV_OPS_H_

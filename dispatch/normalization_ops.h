// ft/dispatch/normalization_ops.h
//
// Normalization: the public ops (layer_norm, group_norm, batch_norm, instance_norm, rms_norm, normalize), with torch.nn.functional's names, argument order and
// defaults. Each dispatches (dispatch.h) to its base kernel in tensor/normalization_kernels.h.
#ifndef FT_DISPATCH_NORMALIZATION_OPS_H_
#define FT_DISPATCH_NORMALIZATION_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterNormalizationOps adds this family to the op table (called by RegisterAllOps).
void RegisterNormalizationOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_NORMALIZATION_OPS_H_

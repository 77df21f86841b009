// ft/dispatch/attention_ops.h
//
// Attention and contractions: the public ops (scaled_dot_product_attention, baddbmm, addmm, einsum), with torch.nn.functional's names, argument order and
// defaults. Each dispatches (dispatch.h) to its base kernel in tensor/attention_kernels.h.
#ifndef FT_DISPATCH_ATTENTION_OPS_H_
#define FT_DISPATCH_ATTENTION_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterAttentionOps adds this family to the op table (called by RegisterAllOps).
void RegisterAttentionOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_ATTENTION_OPS_H_

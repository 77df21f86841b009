// ft/dispatch/nn_indexing_ops.h
//
// Indexing and shape ops for models: the public ops (embedding, masked_fill, index_add, index_put, tril, triu, roll, pixel_shuffle, interpolate), with torch.nn.functional's names, argument order and
// defaults. Each dispatches (dispatch.h) to its base kernel in tensor/nn_indexing_kernels.h.
#ifndef FT_DISPATCH_NN_INDEXING_OPS_H_
#define FT_DISPATCH_NN_INDEXING_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterNnIndexingOps adds this family to the op table (called by RegisterAllOps).
void RegisterNnIndexingOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_NN_INDEXING_OPS_H_

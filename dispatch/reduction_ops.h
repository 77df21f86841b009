// ft/dispatch/reduction_ops.h  (being written)
#ifndef FT_DISPATCH_REDUCTION_OPS_H_
#define FT_DISPATCH_REDUCTION_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterReductionOps adds this family to the op table (called by RegisterAllOps).
void RegisterReductionOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_REDUCTION_OPS_H_

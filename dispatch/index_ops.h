// ft/dispatch/index_ops.h  (being written)
#ifndef FT_DISPATCH_INDEX_OPS_H_
#define FT_DISPATCH_INDEX_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterIndexOps adds this family to the op table (called by RegisterAllOps).
void RegisterIndexOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_INDEX_OPS_H_

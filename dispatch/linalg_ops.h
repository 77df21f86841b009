// ft/dispatch/linalg_ops.h  (being written)
#ifndef FT_DISPATCH_LINALG_OPS_H_
#define FT_DISPATCH_LINALG_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterLinalgOps adds this family to the op table (called by RegisterAllOps).
void RegisterLinalgOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_LINALG_OPS_H_

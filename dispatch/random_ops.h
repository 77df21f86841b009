// ft/dispatch/random_ops.h  (being written)
#ifndef FT_DISPATCH_RANDOM_OPS_H_
#define FT_DISPATCH_RANDOM_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterRandomOps adds this family to the op table (called by RegisterAllOps).
void RegisterRandomOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_RANDOM_OPS_H_

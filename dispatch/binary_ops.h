// ft/dispatch/binary_ops.h  (being written)
#ifndef FT_DISPATCH_BINARY_OPS_H_
#define FT_DISPATCH_BINARY_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterBinaryOps adds this family to the op table (called by RegisterAllOps).
void RegisterBinaryOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_BINARY_OPS_H_

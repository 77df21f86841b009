// ft/dispatch/sort_ops.h  (being written)
#ifndef FT_DISPATCH_SORT_OPS_H_
#define FT_DISPATCH_SORT_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterSortOps adds this family to the op table (called by RegisterAllOps).
void RegisterSortOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_SORT_OPS_H_

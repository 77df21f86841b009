// ft/dispatch/view_ops.h  (being written)
#ifndef FT_DISPATCH_VIEW_OPS_H_
#define FT_DISPATCH_VIEW_OPS_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// RegisterViewOps adds this family to the op table (called by RegisterAllOps).
void RegisterViewOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_DISPATCH_VIEW_OPS_H_

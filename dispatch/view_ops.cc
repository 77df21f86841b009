#include "dispatch/view_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/view_kernels.h"

namespace ft {

void RegisterViewOps(OpRegistry& r) { (void)r; }

}  // namespace ft

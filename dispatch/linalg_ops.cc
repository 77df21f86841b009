#include "dispatch/linalg_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/linalg_kernels.h"

namespace ft {

void RegisterLinalgOps(OpRegistry& r) { (void)r; }

}  // namespace ft

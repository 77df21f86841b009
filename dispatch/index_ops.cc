#include "dispatch/index_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/index_kernels.h"

namespace ft {

void RegisterIndexOps(OpRegistry& r) { (void)r; }

}  // namespace ft

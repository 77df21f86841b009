#include "dispatch/reduction_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/reduction_kernels.h"

namespace ft {

void RegisterReductionOps(OpRegistry& r) { (void)r; }

}  // namespace ft

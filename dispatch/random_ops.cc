#include "dispatch/random_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/random_kernels.h"

namespace ft {

void RegisterRandomOps(OpRegistry& r) { (void)r; }

}  // namespace ft

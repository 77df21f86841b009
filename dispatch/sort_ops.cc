#include "dispatch/sort_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/sort_kernels.h"

namespace ft {

void RegisterSortOps(OpRegistry& r) { (void)r; }

}  // namespace ft

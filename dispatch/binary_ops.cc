#include "dispatch/binary_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/binary_kernels.h"

namespace ft {

void RegisterBinaryOps(OpRegistry& r) { (void)r; }

}  // namespace ft

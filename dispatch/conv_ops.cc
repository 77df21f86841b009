#include "dispatch/conv_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/conv_kernels.h"

namespace ft {

void RegisterConvOps(OpRegistry&) {}

}  // namespace ft

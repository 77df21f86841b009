#include "dispatch/activation_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/activation_kernels.h"

namespace ft {

void RegisterActivationOps(OpRegistry&) {}

}  // namespace ft

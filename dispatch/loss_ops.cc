#include "dispatch/loss_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/loss_kernels.h"

namespace ft {

void RegisterLossOps(OpRegistry&) {}

}  // namespace ft

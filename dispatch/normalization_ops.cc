#include "dispatch/normalization_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/normalization_kernels.h"

namespace ft {

void RegisterNormalizationOps(OpRegistry&) {}

}  // namespace ft

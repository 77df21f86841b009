#include "dispatch/nn_indexing_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/nn_indexing_kernels.h"

namespace ft {

void RegisterNnIndexingOps(OpRegistry&) {}

}  // namespace ft

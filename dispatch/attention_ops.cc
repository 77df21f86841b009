#include "dispatch/attention_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/attention_kernels.h"

namespace ft {

void RegisterAttentionOps(OpRegistry&) {}

}  // namespace ft

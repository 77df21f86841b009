// Batching rules: normalization (layer_norm, group_norm, batch_norm, instance_norm, rms_norm, normalize).
#include "dispatch/dispatch.h"
#include "dispatch/ops.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {

void RegisterNormalizationRules() {}

}  // namespace ft::vmap_rules

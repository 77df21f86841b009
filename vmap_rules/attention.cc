// Batching rules: attention and contractions (scaled_dot_product_attention, baddbmm, addmm, einsum).
#include "dispatch/dispatch.h"
#include "dispatch/ops.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {

void RegisterAttentionRules() {}

}  // namespace ft::vmap_rules

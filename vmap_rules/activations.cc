// Batching rules: activations (gelu, silu, mish, softplus, elu, selu, celu, leaky_relu, hardtanh, hardswish, hardsigmoid, logsigmoid, softsign, erf, erfc, erfinv, lgamma, digamma).
#include "dispatch/dispatch.h"
#include "dispatch/ops.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {

void RegisterActivationRules() {}

}  // namespace ft::vmap_rules

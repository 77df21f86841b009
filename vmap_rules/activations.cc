// Batching rules: activations (gelu, silu, mish, softplus, elu, selu, celu, leaky_relu,
// hardtanh, hardswish, hardsigmoid, logsigmoid, softsign, erf, erfc, erfinv, lgamma, digamma,
// polygamma). All are elementwise in their one tensor argument, so each gets the pointwise
// rule: the batch dim moves to the front and the kernel runs once on the whole batch. Their
// non-tensor arguments (alpha, n, ...) pass through; the kernels' checks of them (celu's
// alpha, polygamma's n) name no shapes, so they read the same under vmap.
#include "dispatch/dispatch.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "ops/ops.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {

void RegisterActivationRules() {
  OpRegistry& r = OpRegistry::Global();
  for (const char* name : {"gelu", "silu", "mish", "softplus", "elu", "selu", "celu", "leaky_relu",
                           "hardtanh", "hardswish", "hardsigmoid", "logsigmoid", "softsign", "erf",
                           "erfc", "erfinv", "lgamma", "digamma", "polygamma"}) {
    SetPointwiseRule(r.Get(name));
  }
}

}  // namespace ft::vmap_rules

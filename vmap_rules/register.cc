#include "vmap_rules/register.h"

#include <mutex>

#include "dispatch/dispatch.h"
#include "vmap_rules/families.h"

namespace ft {

void RegisterVmapRules() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterAllOps();
    vmap_rules::RegisterElementwiseRules();
    vmap_rules::RegisterReductionRules();
    vmap_rules::RegisterViewRules();
    vmap_rules::RegisterIndexingRules();
    vmap_rules::RegisterLinalgRules();
    vmap_rules::RegisterSortingRules();
    vmap_rules::RegisterRandomRules();
    vmap_rules::RegisterActivationRules();
    vmap_rules::RegisterLossRules();
    vmap_rules::RegisterNormalizationRules();
    vmap_rules::RegisterNnIndexingRules();
    vmap_rules::RegisterConvRules();
    vmap_rules::RegisterAttentionRules();
  });
}

}  // namespace ft

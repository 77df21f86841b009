// ft/vmap_rules/families.h  (internal to //vmap_rules)
//
// One registration function per rule family, called by RegisterVmapRules (register.cc).
#ifndef FT_VMAP_RULES_FAMILIES_H_
#define FT_VMAP_RULES_FAMILIES_H_

namespace ft::vmap_rules {

void RegisterElementwiseRules();
void RegisterReductionRules();
void RegisterViewRules();
void RegisterIndexingRules();
void RegisterLinalgRules();
void RegisterSortingRules();
void RegisterRandomRules();

}  // namespace ft::vmap_rules

#endif  // FT_VMAP_RULES_FAMILIES_H_

// ft/vmap_rules/families.h  (internal to //vmap_rules)
//
// One registration function per rule family, called by RegisterVmapRules (register.cc).
#ifndef FT_VMAP_RULES_FAMILIES_H_
#define FT_VMAP_RULES_FAMILIES_H_

#include <cstdint>
#include <functional>

#include "interpreters/vmap/vmap_interpreter.h"
#include "tensor/generator.h"
#include "tensor/tensor.h"

namespace ft {
class Operator;
}  // namespace ft

namespace ft::vmap_rules {

// SetPointwiseRule installs the elementwise rule of elementwise.cc on `op`: batch dims to the
// front, ranks padded to the common logical rank, one call on the whole batch. For any op that
// is elementwise in its tensor arguments (broadcasting like add); non-tensor arguments
// (scalars, strings) pass through unchanged.
void SetPointwiseRule(const Operator& op);

// Draw (random.cc) runs draw(), a random op's call on the logical shape (randomness kSame) or
// on [batch] + logical shape (kDifferent), `per_example` being the logical count of numbers
// drawn, under the chunk protocol of NOTE: [Randomness and chunks], so that the rules of
// random ops of every family draw the same counters chunked or not. A draw that throws gives
// its counters back.
Tensor Draw(const VmapContext& ctx, Generator& gen, int64_t per_example,
            const std::function<Tensor()>& draw);


void RegisterElementwiseRules();
void RegisterReductionRules();
void RegisterViewRules();
void RegisterIndexingRules();
void RegisterLinalgRules();
void RegisterSortingRules();
void RegisterRandomRules();
void RegisterActivationRules();
void RegisterLossRules();
void RegisterNormalizationRules();
void RegisterNnIndexingRules();
void RegisterConvRules();
void RegisterAttentionRules();

}  // namespace ft::vmap_rules

#endif  // FT_VMAP_RULES_FAMILIES_H_

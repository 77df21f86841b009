// Transforms-sweep entries (tests/sweep_cases.h): attention and contractions.
#include <optional>

#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/sweep_cases.h"

namespace ft::sweep {

std::vector<OpCase> AttentionCases() {
  return {
      {"addmm", [](const TensorList& a) { return addmm(a[0], a[1], a[2], 0.5, -1.5); },
       {{{3}}, {{2, 4}}, {{4, 3}}}},
      {"baddbmm", [](const TensorList& a) { return baddbmm(a[0], a[1], a[2], 0.7, 1.3); },
       {{{2, 1, 3}}, {{2, 2, 2}}, {{2, 2, 3}}}},
      // Three operands contracted in the greedy order: a diagonal, an ellipsis that
      // broadcasts, a letter only one operand has.
      {"einsum",
       [](const TensorList& a) { return einsum("iij,...jk,l->...ik", {a[0], a[1], a[2]}); },
       {{{2, 2, 3}}, {{1, 3, 2}}, {{2}}}},
      // A float mask (differentiable) and a scale; the causal and bool-mask forms are in
      // ops/attention_test.cc (gradgradcheck) and the property catalog.
      {"scaled_dot_product_attention",
       [](const TensorList& a) {
         return scaled_dot_product_attention(a[0], a[1], a[2], a[3], 0.0, false, 0.8);
       },
       {{{2, 3}}, {{3, 3}}, {{3, 2}}, {{2, 3}}}},
      // A fresh generator per call: the same dropout factors every call (randomness kSame).
      {"scaled_dot_product_attention_dropout",
       [](const TensorList& a) {
         Generator g(7);
         return scaled_dot_product_attention(a[0], a[1], a[2], std::nullopt, 0.4, false,
                                             std::nullopt, &g);
       },
       {{{3, 2}}, {{4, 2}}, {{4, 2}}},
       Randomness::kSame},
  };
}

}  // namespace ft::sweep

// Transforms-sweep entries (tests/sweep_cases.h): losses. Arguments sit away from the kinks:
// l1's input and target ranges are disjoint, and smooth_l1 / huber terms lie wholly in their
// quadratic or wholly in their linear zone. Class indices are fixed (they get no
// gradient); every weight is a swept argument.
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/sweep_cases.h"

namespace ft::sweep {
namespace {

Tensor Classes3() { return tensor({0, 3, 1}, {3}); }         // N = 3 targets of C = 4
Tensor ClassesIgnored() { return tensor({2, -100, 3}, {3}); }

}  // namespace

// One entry per op (the sweep names its tests by op): each sums several argument modes.
std::vector<OpCase> LossCases() {
  return {
      {"mse_loss",
       [](const TensorList& a) {
         return mse_loss(a[0], a[1]) + sum(mse_loss(a[0], a[1], Reduction::kNone)) * 0.3;
       },
       {{{3, 4}}, {{4}}}},
      {"l1_loss", [](const TensorList& a) { return l1_loss(a[0], a[1], Reduction::kSum); },
       {{{3, 4}, 0.5, 1.0}, {{3, 4}, -1.0, -0.5}}},
      // Quadratic zone for beta = 4 (|d| <= 3), linear zone for beta = 0.5 (|d| >= 1.5) and
      // beta = 0 (l1).
      {"smooth_l1_loss",
       [](const TensorList& a) {
         return smooth_l1_loss(a[0], a[1], Reduction::kMean, 4.0) +
                sum(smooth_l1_loss(a[0], a[1], Reduction::kNone, 0.5)) * 0.3 +
                smooth_l1_loss(a[0], a[1], Reduction::kSum, 0.0) * 0.1;
       },
       {{{3, 4}, 1.0, 2.0}, {{4}, -1.0, -0.5}}},
      {"huber_loss",
       [](const TensorList& a) {
         return huber_loss(a[0], a[1], Reduction::kSum, 4.0) +
                huber_loss(a[0], a[1], Reduction::kMean, 0.5) * 0.3;
       },
       {{{3, 4}, -2.0, -1.0}, {{3, 1}, 0.5, 1.0}}},
      {"binary_cross_entropy",
       [](const TensorList& a) {
         return binary_cross_entropy(a[0], a[1], a[2]) +
                sum(binary_cross_entropy(a[0], a[1], std::nullopt, Reduction::kNone)) * 0.3;
       },
       {{{3, 4}, 0.1, 0.9}, {{3, 4}, 0.0, 1.0}, {{4}, 0.5, 1.5}}},
      {"binary_cross_entropy_with_logits",
       [](const TensorList& a) {
         return binary_cross_entropy_with_logits(a[0], a[1], a[2], Reduction::kMean, a[3]) +
                binary_cross_entropy_with_logits(a[0], a[1], std::nullopt, Reduction::kSum) *
                    0.3;
       },
       {{{3, 4}, -2.0, 2.0}, {{3, 4}, 0.0, 1.0}, {{3, 4}, 0.5, 1.5}, {{4}, 0.5, 2.0}}},
      {"kl_div",
       [](const TensorList& a) {
         return kl_div(a[0], a[1], Reduction::kBatchMean) +
                kl_div(a[0], log(a[1]), Reduction::kMean, true) * 0.3;
       },
       {{{3, 4}, -2.0, -0.5}, {{4}, 0.1, 1.0}}},
      {"nll_loss",
       [](const TensorList& a) {
         return nll_loss(a[0], Classes3()) +
                sum(nll_loss(a[0], ClassesIgnored(), a[1], -100, Reduction::kNone)) * 0.3 +
                nll_loss(a[0], ClassesIgnored(), a[1]) * 0.5;
       },
       {{{3, 4}, -2.0, 0.0}, {{4}, 0.5, 2.0}}},
      {"cross_entropy",
       [](const TensorList& a) {
         return cross_entropy(a[0], Classes3()) +
                cross_entropy(a[0], ClassesIgnored(), a[2], -100, Reduction::kMean, 0.2) * 0.5 +
                cross_entropy(unsqueeze(a[0], 2), reshape(Classes3(), {3, 1}), std::nullopt, 1,
                              Reduction::kSum, 0.1) * 0.3 +
                cross_entropy(a[0], a[1], a[2], -100, Reduction::kMean, 0.1) * 0.7 +
                sum(cross_entropy(select(a[0], 0, 1), select(a[1], 0, 2), std::nullopt, -100,
                                  Reduction::kNone)) * 0.2;
       },
       {{{3, 4}, -2.0, 2.0}, {{3, 4}, 0.1, 1.0}, {{4}, 0.5, 2.0}}},
  };
}

}  // namespace ft::sweep

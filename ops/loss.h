// ft/ops/loss.h
//
// Losses: the public ops, with torch.nn.functional's names, argument order, defaults, shapes
// and formulas: mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy,
// binary_cross_entropy_with_logits, kl_div, nll_loss, cross_entropy. Each dispatches
// (dispatch.h) to its base kernel in kernels/loss.h.
//
// Reduction: every loss takes torch's `reduction` as a Reduction::Mode: kMean (the default:
// the mean of the per-element losses), kSum, or kNone (the per-element losses themselves);
// kl_div also takes kBatchMean (the sum divided by input.size(0)). ParseReduction maps
// torch's strings ("none", "mean", "sum", "batchmean") to the enum.
//
// Dtypes: inputs and targets are floating (float32 / float64; nll_loss's and cross_entropy's
// class-index targets are int64); the result has their promoted dtype (torch.result_type).
// Weights must be floating; the class-index losses compute in the input's dtype.
//
// Shapes: the elementwise losses (mse, l1, smooth_l1, huber, kl_div) broadcast input against
// target (torch warns for mse and computes the broadcast; ft just broadcasts) and their kNone
// result has the broadcast shape; binary_cross_entropy[_with_logits] need target.sizes() ==
// input.sizes(), and weight / pos_weight broadcast to the input's shape. The class losses
// take input [C] with a 0-dim target, or [N, C, d1, ...] with target [N, d1, ...]; kNone
// gives the target's shape. A mean over zero elements is NaN, as in torch.
//
// Errors (ft::Error naming the op and the shapes, dims or values involved): an unknown
// reduction, integer or bool inputs, shapes that do not broadcast / match, a weight of the
// wrong shape, binary_cross_entropy inputs outside [0, 1], beta < 0, delta <= 0,
// label_smoothing outside [0, 1], class indices outside [0, C) (other than ignore_index).
//
// Derivatives: every loss is differentiable w.r.t. its input, and w.r.t. its target where
// torch differentiates it (mse, l1, smooth_l1, huber, binary_cross_entropy_with_logits,
// kl_div, cross_entropy with class probabilities), at any order; also binary_cross_entropy's
// target and every weight (torch has none for those; the class losses' kMean differentiates
// its denominator, the summed target weights, too). Integer targets get none.
//
// Example:
//   Tensor logits = ft::tensor({2.0, 0.5, -1.0, 0.1, 0.2, 3.0}, {2, 3});
//   Tensor labels = ft::tensor({0, 2});                    // int64 class indices
//   Tensor loss = ft::cross_entropy(logits, labels);      // 0-dim: mean over the 2 examples
//   Tensor each = ft::cross_entropy(logits, labels, std::nullopt, -100, ft::Reduction::kNone);
//   ft::mse_loss(ft::tensor({1.0, 2.0}), ft::tensor({1.0, 4.0}))   // 2.0 = (0 + 4) / 2
#ifndef FT_OPS_LOSS_H_
#define FT_OPS_LOSS_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// Reduction::Mode: how a loss combines its per-element values (torch's at::Reduction codes).
// An unscoped enum in a struct: written Reduction::kSum, and boxed as the int64 it is.
struct Reduction {
  enum Mode : int64_t { kNone = 0, kMean = 1, kSum = 2, kBatchMean = 3 };
};

// ParseReduction: torch's reduction string ("none", "mean", "sum", "batchmean") as a Mode.
// Throws ft::Error for any other string.
Reduction::Mode ParseReduction(std::string_view reduction);

// mse_loss: (input - target)^2, reduced.
Tensor mse_loss(const Tensor& input, const Tensor& target,
                Reduction::Mode reduction = Reduction::kMean);

// l1_loss: |input - target|, reduced.
Tensor l1_loss(const Tensor& input, const Tensor& target,
               Reduction::Mode reduction = Reduction::kMean);

// smooth_l1_loss: with z = |input - target|, 0.5 z^2 / beta where z < beta, else
// z - 0.5 beta (beta == 0 is l1_loss); reduced. Error: beta < 0.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      Reduction::Mode reduction = Reduction::kMean, double beta = 1.0);

// huber_loss: with z = |input - target|, 0.5 z^2 where z < delta, else
// delta (z - 0.5 delta); reduced. Error: delta <= 0.
Tensor huber_loss(const Tensor& input, const Tensor& target,
                  Reduction::Mode reduction = Reduction::kMean, double delta = 1.0);

// binary_cross_entropy: -weight (t log(x) + (1 - t) log(1 - x)) for probabilities x in
// [0, 1], each log clamped at -100 (torch), so x = 0 or 1 gives a finite loss. target has
// input's shape; weight broadcasts to it. Errors: input values outside [0, 1] (or NaN).
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const std::optional<Tensor>& weight = std::nullopt,
                            Reduction::Mode reduction = Reduction::kMean);

// binary_cross_entropy_with_logits: binary_cross_entropy(sigmoid(x), t) computed stably from
// the logits x: weight ((1 - t) x + (1 + (pos_weight - 1) t) softplus(-x)), with softplus(-x)
// = max(-x, 0) + log1p(exp(-|x|)). pos_weight (the weight of positive examples, e.g. one per
// class along the last dim) and weight broadcast to input's shape.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight = std::nullopt,
                                        Reduction::Mode reduction = Reduction::kMean,
                                        const std::optional<Tensor>& pos_weight = std::nullopt);

// kl_div: the pointwise KL divergence for input = log q: target (log(target) - input) with
// 0 log 0 = 0, or with log_target, exp(target) (target - input); reduced, kBatchMean
// dividing the sum by input.size(0) (torch's "batchmean"; 1 for a 0-dim input).
Tensor kl_div(const Tensor& input, const Tensor& target,
              Reduction::Mode reduction = Reduction::kMean, bool log_target = false);

// nll_loss: -weight[t] input[n, t, d...] for each target class t (0 where t == ignore_index).
// kMean divides the sum by the sum of weight[t] over the non-ignored targets (their count
// without weight), NaN when every target is ignored. Errors: input rank 0, target not int64
// or of the wrong shape, weight not of C values, a class outside [0, C).
Tensor nll_loss(const Tensor& input, const Tensor& target,
                const std::optional<Tensor>& weight = std::nullopt, int64_t ignore_index = -100,
                Reduction::Mode reduction = Reduction::kMean);

// cross_entropy: the loss of logits `input` (class dim 1, or 0 for an input [C]).
//   int64 target (class indices): nll_loss(log_softmax(input), target, weight, ...), and with
//     label_smoothing e: (1 - e) that + e / C * smooth, smooth = -sum_c weight[c] lsm[c]
//     (0 at ignored targets), reduced like nll_loss (kMean divides both terms by the same
//     sum of target weights).
//   floating target of input's shape (class probabilities): with t' = (1 - e) t + e / C,
//     -sum_c weight[c] t'[c] lsm[c]; kMean divides the sum by numel / C (the number of
//     positions). ignore_index must then be negative.
// Errors: as nll_loss, plus label_smoothing outside [0, 1].
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const std::optional<Tensor>& weight = std::nullopt,
                     int64_t ignore_index = -100, Reduction::Mode reduction = Reduction::kMean,
                     double label_smoothing = 0.0);

// RegisterLossOps adds this family to the op table (called by RegisterAllOps).
void RegisterLossOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_LOSS_H_

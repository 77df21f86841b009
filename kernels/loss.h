// ft/kernels/loss.h
//
// Losses: the base kernels (mse_loss, l1_loss, smooth_l1_loss, huber_loss,
// binary_cross_entropy, binary_cross_entropy_with_logits, kl_div, nll_loss, cross_entropy).
// Dense tensors only; //ops makes them public ops (ops/loss.h, which documents
// the semantics). `reduction` is torch's enum as an int64: 0 none, 1 mean, 2 sum, and 3
// batchmean (kl_div only).
//
// The Check* functions validate an op's arguments from their shapes and dtypes alone, with the
// op's own messages: the kernels call them, and so do the batching rules on the logical
// (per-example) shapes, so that an error under vmap reads like the op's error for one example.
#ifndef FT_KERNELS_LOSS_H_
#define FT_KERNELS_LOSS_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft::kernels {

// The reduction codes (torch's at::Reduction values, plus kl_div's batchmean).
inline constexpr int64_t kLossNone = 0;
inline constexpr int64_t kLossMean = 1;
inline constexpr int64_t kLossSum = 2;
inline constexpr int64_t kLossBatchMean = 3;

Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction);
Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction,
                      double beta);
Tensor huber_loss(const Tensor& input, const Tensor& target, int64_t reduction, double delta);
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const std::optional<Tensor>& weight, int64_t reduction);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight, int64_t reduction,
                                        const std::optional<Tensor>& pos_weight);
Tensor kl_div(const Tensor& input, const Tensor& target, int64_t reduction, bool log_target);
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                int64_t ignore_index, int64_t reduction);
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const std::optional<Tensor>& weight, int64_t ignore_index,
                     int64_t reduction, double label_smoothing);

// A tensor argument as one example sees it: sizes and dtype.
struct LossArg {
  IntArrayRef sizes;
  DType dtype;
};

// CheckLossReduction: reduction is 0, 1 or 2 (or 3 when batchmean is allowed).
void CheckLossReduction(absl::string_view op, int64_t reduction, bool allow_batchmean = false);
// CheckPointwiseLoss: floating input and target whose shapes broadcast (or are equal, when
// same_shape: binary_cross_entropy[_with_logits]); returns the shape of the "none" loss.
Shape CheckPointwiseLoss(absl::string_view op, LossArg input, LossArg target, bool same_shape);
// CheckLossWeight: a floating weight (`name`: "weight", "pos_weight") broadcasting to `shape`.
void CheckLossWeight(absl::string_view op, const char* name, LossArg weight, IntArrayRef shape);
// CheckLossScalars: smooth_l1_loss's beta >= 0, huber_loss's delta > 0, cross_entropy's
// label_smoothing in [0, 1] (each op checks its own; pass the op's name).
void CheckLossScalar(absl::string_view op, double value);
// CheckClassLoss: nll_loss / cross_entropy with class-index targets: input [C] with a 0-dim
// target, or [N, C, d1, ...] with target [N, d1, ...]; int64 target; weight of C values.
void CheckClassLoss(absl::string_view op, LossArg input, LossArg target,
                    const std::optional<LossArg>& weight);
// CheckProbLoss: cross_entropy with class-probability targets (floating target of input's
// shape, ignore_index < 0, weight of C values).
void CheckProbLoss(LossArg input, LossArg target, const std::optional<LossArg>& weight,
                   int64_t ignore_index);
// IsProbTarget: cross_entropy's target holds class probabilities (a floating dtype) rather
// than class indices (int64).
inline bool IsProbTarget(DType target) { return IsFloating(target); }
// LossClassDim: the class dim of nll_loss / cross_entropy's input of rank `rank`.
inline int64_t LossClassDim(int64_t rank) { return rank == 1 ? 0 : 1; }

}  // namespace ft::kernels

#endif  // FT_KERNELS_LOSS_H_

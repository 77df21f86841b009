#include "ops/loss.h"

#include <string>

#include "dispatch/dispatch.h"
#include "kernels/loss.h"
#include "tensor/error.h"

namespace ft {

Reduction::Mode ParseReduction(std::string_view reduction) {
  if (reduction == "none") return Reduction::kNone;
  if (reduction == "mean") return Reduction::kMean;
  if (reduction == "sum") return Reduction::kSum;
  if (reduction == "batchmean") return Reduction::kBatchMean;
  ThrowError("ParseReduction: reduction must be \"none\", \"mean\", \"sum\" or \"batchmean\", got \"",
             std::string(reduction), "\"");
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction::Mode reduction) {
  return Call<&kernels::mse_loss>(input, target, int64_t{reduction});
}
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction::Mode reduction) {
  return Call<&kernels::l1_loss>(input, target, int64_t{reduction});
}
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction::Mode reduction,
                      double beta) {
  return Call<&kernels::smooth_l1_loss>(input, target, int64_t{reduction}, beta);
}
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction::Mode reduction,
                  double delta) {
  return Call<&kernels::huber_loss>(input, target, int64_t{reduction}, delta);
}
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const std::optional<Tensor>& weight, Reduction::Mode reduction) {
  return Call<&kernels::binary_cross_entropy>(input, target, weight, int64_t{reduction});
}
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight,
                                        Reduction::Mode reduction,
                                        const std::optional<Tensor>& pos_weight) {
  return Call<&kernels::binary_cross_entropy_with_logits>(input, target, weight,
                                                          int64_t{reduction}, pos_weight);
}
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction::Mode reduction,
              bool log_target) {
  return Call<&kernels::kl_div>(input, target, int64_t{reduction}, log_target);
}
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                int64_t ignore_index, Reduction::Mode reduction) {
  return Call<&kernels::nll_loss>(input, target, weight, ignore_index, int64_t{reduction});
}
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const std::optional<Tensor>& weight, int64_t ignore_index,
                     Reduction::Mode reduction, double label_smoothing) {
  return Call<&kernels::cross_entropy>(input, target, weight, ignore_index, int64_t{reduction},
                                       label_smoothing);
}

void RegisterLossOps(OpRegistry& r) {
  RegisterOp<&kernels::mse_loss>(r, "mse_loss", {"self", "target", "reduction"});
  RegisterOp<&kernels::l1_loss>(r, "l1_loss", {"self", "target", "reduction"});
  RegisterOp<&kernels::smooth_l1_loss>(r, "smooth_l1_loss",
                                       {"self", "target", "reduction", "beta"});
  RegisterOp<&kernels::huber_loss>(r, "huber_loss", {"self", "target", "reduction", "delta"});
  RegisterOp<&kernels::binary_cross_entropy>(r, "binary_cross_entropy",
                                             {"self", "target", "weight", "reduction"});
  RegisterOp<&kernels::binary_cross_entropy_with_logits>(
      r, "binary_cross_entropy_with_logits",
      {"self", "target", "weight", "reduction", "pos_weight"});
  RegisterOp<&kernels::kl_div>(r, "kl_div", {"self", "target", "reduction", "log_target"});
  RegisterOp<&kernels::nll_loss>(r, "nll_loss",
                                 {"self", "target", "weight", "ignore_index", "reduction"});
  RegisterOp<&kernels::cross_entropy>(
      r, "cross_entropy",
      {"self", "target", "weight", "ignore_index", "reduction", "label_smoothing"});
}

}  // namespace ft

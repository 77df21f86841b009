// ft/ops/normalization.h
//
// Normalization: the public ops (layer_norm, rms_norm, normalize, group_norm, batch_norm,
// instance_norm), with torch.nn.functional's names, argument order and defaults. Each
// dispatches (dispatch.h) to its base kernel in kernels/normalization.h.
//
// Every op standardizes over some dims, then applies an optional affine map:
//   layer_norm:    over the trailing dims named by normalized_shape; weight / bias of
//                  shape normalized_shape.
//   rms_norm:      x / sqrt(mean(x^2) + eps) over the trailing dims (no centering).
//   normalize:     x / max(||x||_p, eps) along one dim.
//   group_norm:    input [N, C, *]; per example, over each group of C / num_groups channels
//                  (and all spatial dims); weight / bias per channel [C].
//   batch_norm:    input [N, C, *]; per channel over N and the spatial dims (training) or with
//                  the given running statistics (eval); weight / bias / stats [C].
//   instance_norm: input [N, C, *]; per (example, channel) over the spatial dims.
// Standardizing uses the biased variance: (x - mean) / sqrt(var + eps).
//
// batch_norm and instance_norm are FUNCTIONAL: they never write their arguments. They return
// the output and the running statistics the step would leave (NormResult): updated out of
// place, (1 - momentum) * running + momentum * statistic (the unbiased variance for
// running_var, as PyTorch), when they compute batch statistics, and the given ones unchanged
// (a copy) otherwise, or when the input has no elements (there is no statistic; as PyTorch,
// but for instance_norm over an empty batch, N = 0, whose average of no instances is NaN). A
// running statistic that was not given comes back as nullopt.
//
// Under vmap each example is normalized over its OWN batch (what functorch's
// replace_all_batch_norm_modules_ intends): no statistic is shared across the vmapped dim,
// and the returned running statistics are batched per example.
//
// Dtype rules: floating inputs only (float32 / float64); weight, bias and running stats must
// have the input's dtype; the result has the input's dtype.
//
// Errors (ft::Error naming the op and the shapes): non-floating input; a normalized_shape
// that is empty or is not the input's trailing shape; a parameter of the wrong shape or
// dtype; group_norm's num_groups <= 0 or not dividing C; an input of rank < 2 for the
// [N, C, *] ops; running stats missing where the op uses them; one value per statistic when
// computing batch statistics (the unbiased variance would divide by zero); normalize's dim
// out of range.
//
// Example:
//   Tensor x = ft::reshape(ft::arange(32.0), {4, 8});
//   Tensor y = ft::layer_norm(x, {8}, w, b);          // each row: mean 0, var 1, then w, b
//   NormResult r = ft::batch_norm(x, rm, rv, std::nullopt, std::nullopt, /*training=*/true);
//   // r.output normalized per column; r.running_mean = 0.9 * rm + 0.1 * mean(x, {0})
#ifndef FT_OPS_NORMALIZATION_H_
#define FT_OPS_NORMALIZATION_H_

#include <cstdint>
#include <optional>

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// layer_norm: (x - mean) / sqrt(var + eps) * weight + bias, the statistics over the last
// normalized_shape.size() dims, which must equal normalized_shape.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                  const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);

// rms_norm: x / sqrt(mean(x^2) + eps) * weight over the trailing normalized_shape dims
// (torch >= 2.4). eps nullopt is the machine epsilon of x's dtype.
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape,
                const std::optional<Tensor>& weight = std::nullopt,
                std::optional<double> eps = std::nullopt);

// normalize: x / max(norm(x, p, {dim}, keepdim), eps), so each slice along dim has p-norm 1
// (or is scaled by 1 / eps when its norm is below eps).
Tensor normalize(const Tensor& input, double p = 2.0, int64_t dim = 1, double eps = 1e-12);

// group_norm: input [N, C, *]; channels split into num_groups groups; each (example, group)
// standardized over its channels and spatial dims; then per-channel weight and bias.
Tensor group_norm(const Tensor& input, int64_t num_groups,
                  const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);

// NormResult: batch_norm / instance_norm's output and the running statistics after the step
// (nullopt when not given).
struct NormResult {
  Tensor output;
  std::optional<Tensor> running_mean;
  std::optional<Tensor> running_var;
};

// batch_norm: input [N, C, *]. training: standardized per channel with the batch's mean and
// biased variance, running stats updated (may be nullopt). Eval (training = false): uses the
// running stats (required), returned unchanged.
NormResult batch_norm(const Tensor& input, const std::optional<Tensor>& running_mean,
                      const std::optional<Tensor>& running_var,
                      const std::optional<Tensor>& weight = std::nullopt,
                      const std::optional<Tensor>& bias = std::nullopt, bool training = false,
                      double momentum = 0.1, double eps = 1e-5);

// instance_norm: input [N, C, *]. use_input_stats: each (example, channel) standardized over
// the spatial dims; the running stats (optional) updated with the batch average of the
// per-instance statistics. Otherwise the running stats (required) are used, as batch_norm's
// eval mode.
NormResult instance_norm(const Tensor& input,
                         const std::optional<Tensor>& running_mean = std::nullopt,
                         const std::optional<Tensor>& running_var = std::nullopt,
                         const std::optional<Tensor>& weight = std::nullopt,
                         const std::optional<Tensor>& bias = std::nullopt,
                         bool use_input_stats = true, double momentum = 0.1, double eps = 1e-5);

// RegisterNormalizationOps adds this family to the op table (called by RegisterAllOps).
void RegisterNormalizationOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_NORMALIZATION_H_

#include "ops/normalization.h"

#include <tuple>

#include "dispatch/dispatch.h"
#include "kernels/normalization.h"

namespace ft {
namespace {

NormResult ToResult(std::tuple<Tensor, Tensor, Tensor> r, bool has_mean, bool has_var) {
  NormResult out;
  out.output = std::move(std::get<0>(r));
  if (has_mean) out.running_mean = std::move(std::get<1>(r));
  if (has_var) out.running_var = std::move(std::get<2>(r));
  return out;
}

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps) {
  return Call<&kernels::layer_norm>(input, normalized_shape, weight, bias, eps);
}

Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape,
                const std::optional<Tensor>& weight, std::optional<double> eps) {
  const std::optional<Scalar> e = eps ? std::optional<Scalar>(*eps) : std::nullopt;
  return Call<&kernels::rms_norm>(input, normalized_shape, weight, e);
}

Tensor normalize(const Tensor& input, double p, int64_t dim, double eps) {
  return Call<&kernels::normalize>(input, p, dim, eps);
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  return Call<&kernels::group_norm>(input, num_groups, weight, bias, eps);
}

NormResult batch_norm(const Tensor& input, const std::optional<Tensor>& running_mean,
                      const std::optional<Tensor>& running_var,
                      const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                      bool training, double momentum, double eps) {
  return ToResult(Call<&kernels::batch_norm>(input, running_mean, running_var, weight, bias,
                                             training, momentum, eps),
                  running_mean.has_value(), running_var.has_value());
}

NormResult instance_norm(const Tensor& input, const std::optional<Tensor>& running_mean,
                         const std::optional<Tensor>& running_var,
                         const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                         bool use_input_stats, double momentum, double eps) {
  return ToResult(Call<&kernels::instance_norm>(input, running_mean, running_var, weight, bias,
                                                use_input_stats, momentum, eps),
                  running_mean.has_value(), running_var.has_value());
}

void RegisterNormalizationOps(OpRegistry& r) {
  RegisterOp<&kernels::layer_norm>(r, "layer_norm",
                                   {"input", "normalized_shape", "weight", "bias", "eps"});
  RegisterOp<&kernels::rms_norm>(r, "rms_norm", {"input", "normalized_shape", "weight", "eps"});
  RegisterOp<&kernels::normalize>(r, "normalize", {"input", "p", "dim", "eps"});
  RegisterOp<&kernels::group_norm>(r, "group_norm",
                                   {"input", "num_groups", "weight", "bias", "eps"});
  RegisterOp<&kernels::batch_norm>(r, "batch_norm",
                                   {"input", "running_mean", "running_var", "weight", "bias",
                                    "training", "momentum", "eps"});
  RegisterOp<&kernels::instance_norm>(r, "instance_norm",
                                      {"input", "running_mean", "running_var", "weight", "bias",
                                       "use_input_stats", "momentum", "eps"});
}

}  // namespace ft

// ft/kernels/normalization.h
//
// Normalization: the base kernels (layer_norm, group_norm, batch_norm, instance_norm,
// rms_norm, normalize). Dense tensors only; //ops makes them public ops
// (ops/normalization.h documents their semantics).
//
// The kernels are compositions of the other base kernels (mean, var, rsqrt, ...), computed in
// the input's dtype. The argument checks are public too: the batching rules call them on
// per-example shapes, so that an error under vmap reads like the op's error for one example.
#ifndef FT_KERNELS_NORMALIZATION_H_
#define FT_KERNELS_NORMALIZATION_H_

#include <optional>
#include <tuple>

#include "tensor/scalar.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft::kernels {

// ---- Argument checks (shapes are per-example shapes; dtypes as given). ----

// layer_norm / rms_norm: input floating; normalized_shape non-empty and equal to the
// trailing dims of `input`; weight / bias (when given) of shape normalized_shape and input's
// dtype.
void CheckNormalizedShape(const char* op, IntArrayRef input, DType input_dtype,
                          IntArrayRef normalized_shape, const std::optional<Shape>& weight,
                          std::optional<DType> weight_dtype, const std::optional<Shape>& bias,
                          std::optional<DType> bias_dtype);
// group_norm: input [N, C, *] floating, num_groups > 0 dividing C, weight / bias [C].
void CheckGroupNorm(IntArrayRef input, DType input_dtype, int64_t num_groups,
                    const std::optional<Shape>& weight, std::optional<DType> weight_dtype,
                    const std::optional<Shape>& bias, std::optional<DType> bias_dtype);
// batch_norm / instance_norm: input [N, C, *] floating; each given per-channel tensor
// (running_mean, running_var, weight, bias, in that order; nullopt = not given) of shape [C]
// and input's dtype; the running stats given when the op uses them (`uses_running`); more
// than one value per statistic when it computes batch statistics (`uses_batch_stats`).
void CheckChannelNorm(const char* op, IntArrayRef input, DType input_dtype,
                      const std::optional<Shape>* channel_shapes,
                      const std::optional<DType>* channel_dtypes, bool uses_running,
                      bool uses_batch_stats);
// normalize: input floating, dim valid for its rank.
void CheckNormalize(IntArrayRef input, DType input_dtype, int64_t dim);

// RmsNormEps: eps, or the machine epsilon of `dtype` when not given.
double RmsNormEps(std::optional<Scalar> eps, DType dtype);

// ---- Kernels. ----

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps);
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape,
                const std::optional<Tensor>& weight, std::optional<Scalar> eps);
Tensor normalize(const Tensor& input, double p, int64_t dim, double eps);
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps);
// batch_norm / instance_norm return (output, new running_mean, new running_var); a running
// stat that was not given comes back as an empty [0] tensor (the public op maps it to
// nullopt).
std::tuple<Tensor, Tensor, Tensor> batch_norm(const Tensor& input,
                                              const std::optional<Tensor>& running_mean,
                                              const std::optional<Tensor>& running_var,
                                              const std::optional<Tensor>& weight,
                                              const std::optional<Tensor>& bias, bool training,
                                              double momentum, double eps);
std::tuple<Tensor, Tensor, Tensor> instance_norm(const Tensor& input,
                                                 const std::optional<Tensor>& running_mean,
                                                 const std::optional<Tensor>& running_var,
                                                 const std::optional<Tensor>& weight,
                                                 const std::optional<Tensor>& bias,
                                                 bool use_input_stats, double momentum,
                                                 double eps);

}  // namespace ft::kernels

#endif  // FT_KERNELS_NORMALIZATION_H_

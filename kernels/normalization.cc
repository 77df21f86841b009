#include "kernels/normalization.h"

#include <limits>
#include <string>

#include "kernels/binary.h"
#include "kernels/checks.h"
#include "kernels/reduction.h"
#include "kernels/unary.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/error.h"

namespace ft::kernels {
namespace {

// Num: a rank-0 tensor of value v (floating dtype only: the kernels check their inputs).
Tensor Num(double v, DType dtype) {
  Tensor t = EmptyContiguous({}, dtype);
  if (dtype == kFloat32) {
    *t.data<float>() = static_cast<float>(v);
  } else {
    *t.data<double>() = v;
  }
  return t;
}

void CheckFloatingInput(const char* op, IntArrayRef input, DType dtype) {
  if (!IsFloating(dtype)) {
    ThrowError(op, ": expected a floating point input (float32 or float64), got ",
               DTypeName(dtype), " of shape ", ShapeToString(input));
  }
}

// A parameter tensor's dtype must be the input's: the ops compute in one dtype, as PyTorch.
void CheckParamDType(const char* op, const char* what, std::optional<DType> dtype,
                     DType input_dtype) {
  if (dtype && *dtype != input_dtype) {
    ThrowError(op, ": expected ", what, " to have the input's dtype ", DTypeName(input_dtype),
               ", got ", DTypeName(*dtype));
  }
}

std::optional<Shape> ShapeOf(const std::optional<Tensor>& t) {
  if (!t) return std::nullopt;
  return Shape(t->sizes().begin(), t->sizes().end());
}
std::optional<DType> DTypeOf(const std::optional<Tensor>& t) {
  if (!t) return std::nullopt;
  return t->dtype();
}

// Standardize: (x - mean) / sqrt(biased var + eps) over `dims` (kept as size 1).
Tensor Standardize(const Tensor& x, IntArrayRef dims, double eps) {
  const Tensor mu = mean(x, dims, true);
  const Tensor v = var(x, dims, 0, true);
  return mul(sub(x, mu), rsqrt(add(v, Num(eps, x.dtype()))));
}

// A per-channel [C] tensor viewed as [C, 1, ..., 1] so it broadcasts against [N, C, *].
Tensor ChannelView(const Tensor& t, int64_t input_rank) {
  Shape s(static_cast<size_t>(input_rank - 1), 1);
  s[0] = t.numel();
  return reshape(t, s);
}

Tensor Affine(Tensor out, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
              int64_t channel_rank) {
  if (weight) out = mul(out, channel_rank > 0 ? ChannelView(*weight, channel_rank) : *weight);
  if (bias) out = add(out, channel_rank > 0 ? ChannelView(*bias, channel_rank) : *bias);
  return out;
}

Shape Range(int64_t begin, int64_t end) {
  Shape r;
  for (int64_t d = begin; d < end; ++d) r.push_back(d);
  return r;
}

// (1 - momentum) * running + momentum * stat.
Tensor Blend(const Tensor& running, const Tensor& stat, double momentum) {
  const DType dt = running.dtype();
  return add(mul(running, Num(1.0 - momentum, dt)), mul(stat, Num(momentum, dt)));
}

Tensor NotGiven(DType dtype) { return EmptyContiguous({0}, dtype); }

void CheckChannelArgs(const char* op, const Tensor& input,
                      const std::optional<Tensor>& running_mean,
                      const std::optional<Tensor>& running_var,
                      const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                      bool uses_running, bool uses_batch_stats) {
  const std::optional<Shape> shapes[4] = {ShapeOf(running_mean), ShapeOf(running_var),
                                          ShapeOf(weight), ShapeOf(bias)};
  const std::optional<DType> dtypes[4] = {DTypeOf(running_mean), DTypeOf(running_var),
                                          DTypeOf(weight), DTypeOf(bias)};
  CheckChannelNorm(op, input.sizes(), input.dtype(), shapes, dtypes, uses_running,
                   uses_batch_stats);
}

}  // namespace

void CheckNormalizedShape(const char* op, IntArrayRef input, DType input_dtype,
                          IntArrayRef normalized_shape, const std::optional<Shape>& weight,
                          std::optional<DType> weight_dtype, const std::optional<Shape>& bias,
                          std::optional<DType> bias_dtype) {
  CheckFloatingInput(op, input, input_dtype);
  const size_t k = normalized_shape.size();
  if (k == 0) {
    ThrowError(op, ": expected normalized_shape to have at least one dim, got []");
  }
  bool ok = k <= input.size();
  for (size_t i = 0; ok && i < k; ++i) {
    ok = input[input.size() - k + i] == normalized_shape[i];
  }
  if (!ok) {
    ThrowError(op, ": given normalized_shape ", ShapeToString(normalized_shape),
               ", expected an input of shape [*, ", ShapeToString(normalized_shape).substr(1),
               ", got an input of shape ", ShapeToString(input));
  }
  const std::pair<const char*, const std::optional<Shape>*> params[2] = {{"weight", &weight},
                                                                         {"bias", &bias}};
  for (const auto& [what, shape] : params) {
    if (*shape && IntArrayRef(**shape) != normalized_shape) {
      ThrowError(op, ": expected ", what, " of shape normalized_shape ",
                 ShapeToString(normalized_shape), ", got ", what, " of shape ",
                 ShapeToString(**shape));
    }
  }
  CheckParamDType(op, "weight", weight_dtype, input_dtype);
  CheckParamDType(op, "bias", bias_dtype, input_dtype);
}

void CheckGroupNorm(IntArrayRef input, DType input_dtype, int64_t num_groups,
                    const std::optional<Shape>& weight, std::optional<DType> weight_dtype,
                    const std::optional<Shape>& bias, std::optional<DType> bias_dtype) {
  CheckFloatingInput("group_norm", input, input_dtype);
  if (input.size() < 2) {
    ThrowError("group_norm: expected an input of shape [N, C, *] (at least 2 dims), got shape ",
               ShapeToString(input));
  }
  const int64_t channels = input[1];
  if (num_groups <= 0) {
    ThrowError("group_norm: num_groups must be positive, got ", num_groups);
  }
  if (channels % num_groups != 0) {
    ThrowError("group_norm: expected the number of channels (", channels, ", dim 1 of input ",
               "shape ", ShapeToString(input), ") to be divisible by num_groups = ", num_groups);
  }
  const std::pair<const char*, const std::optional<Shape>*> params[2] = {{"weight", &weight},
                                                                         {"bias", &bias}};
  for (const auto& [what, shape] : params) {
    if (*shape && (shape->value().size() != 1 || (**shape)[0] != channels)) {
      ThrowError("group_norm: expected ", what, " of shape [", channels,
                 "] (one per channel of input shape ", ShapeToString(input), "), got ", what,
                 " of shape ", ShapeToString(**shape));
    }
  }
  CheckParamDType("group_norm", "weight", weight_dtype, input_dtype);
  CheckParamDType("group_norm", "bias", bias_dtype, input_dtype);
}

void CheckChannelNorm(const char* op, IntArrayRef input, DType input_dtype,
                      const std::optional<Shape>* channel_shapes,
                      const std::optional<DType>* channel_dtypes, bool uses_running,
                      bool uses_batch_stats) {
  static constexpr const char* kNames[4] = {"running_mean", "running_var", "weight", "bias"};
  CheckFloatingInput(op, input, input_dtype);
  if (input.size() < 2) {
    ThrowError(op, ": expected an input of shape [N, C, *] (at least 2 dims), got shape ",
               ShapeToString(input));
  }
  const int64_t channels = input[1];
  for (int i = 0; i < 4; ++i) {
    const std::optional<Shape>& s = channel_shapes[i];
    if (s && (s->size() != 1 || (*s)[0] != channels)) {
      ThrowError(op, ": expected ", kNames[i], " of shape [", channels,
                 "] (one per channel of input shape ", ShapeToString(input), "), got ",
                 kNames[i], " of shape ", ShapeToString(*s));
    }
    CheckParamDType(op, kNames[i], channel_dtypes[i], input_dtype);
  }
  if (uses_running && (!channel_shapes[0] || !channel_shapes[1])) {
    ThrowError(op, ": running_mean and running_var must be given when the op normalizes with ",
               "them (", std::string(op) == "batch_norm" ? "training = false"
                                                          : "use_input_stats = false",
               ")");
  }
  if (uses_batch_stats) {
    const bool batch = std::string(op) == "batch_norm";
    int64_t count = batch ? input[0] : 1;
    for (size_t d = 2; d < input.size(); ++d) count *= input[d];
    if (count == 1) {
      ThrowError(op, ": expected more than 1 value per ", batch ? "channel" : "instance",
                 " when computing ", batch ? "batch" : "instance", " statistics, got input shape ",
                 ShapeToString(input));
    }
  }
}

void CheckNormalize(IntArrayRef input, DType input_dtype, int64_t dim) {
  CheckFloatingInput("normalize", input, input_dtype);
  WrapDim("normalize", dim, static_cast<int64_t>(input.size()));
}

double RmsNormEps(std::optional<Scalar> eps, DType dtype) {
  if (eps) return eps->to<double>();
  return dtype == kFloat32 ? static_cast<double>(std::numeric_limits<float>::epsilon())
                           : std::numeric_limits<double>::epsilon();
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps) {
  CheckNormalizedShape("layer_norm", input.sizes(), input.dtype(), normalized_shape,
                       ShapeOf(weight), DTypeOf(weight), ShapeOf(bias), DTypeOf(bias));
  const int64_t rank = input.dim();
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  return Affine(Standardize(input, Range(rank - k, rank), eps), weight, bias, 0);
}

Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape,
                const std::optional<Tensor>& weight, std::optional<Scalar> eps) {
  CheckNormalizedShape("rms_norm", input.sizes(), input.dtype(), normalized_shape,
                       ShapeOf(weight), DTypeOf(weight), std::nullopt, std::nullopt);
  const int64_t rank = input.dim();
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  const double e = RmsNormEps(eps, input.dtype());
  const Tensor ms = mean(mul(input, input), Range(rank - k, rank), true);
  return Affine(mul(input, rsqrt(add(ms, Num(e, input.dtype())))), weight, std::nullopt, 0);
}

Tensor normalize(const Tensor& input, double p, int64_t dim, double eps) {
  CheckNormalize(input.sizes(), input.dtype(), dim);
  // norm reduces a rank-0 input's single element for dim 0 or -1.
  const Tensor n = norm(input, p, {dim}, true);
  return div(input, maximum(n, Num(eps, input.dtype())));
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  CheckGroupNorm(input.sizes(), input.dtype(), num_groups, ShapeOf(weight), DTypeOf(weight),
                 ShapeOf(bias), DTypeOf(bias));
  const int64_t n = input.size(0);
  const int64_t per_group = input.numel() == 0 ? 0 : input.numel() / (n * num_groups);
  Shape grouped = {n, num_groups, per_group};
  if (input.numel() == 0) {
    // Sizes of an empty input cannot be inferred from numel: count the group explicitly.
    grouped[2] = input.size(1) / num_groups;
    for (int64_t d = 2; d < input.dim(); ++d) grouped[2] *= input.size(d);
  }
  const Tensor xhat = reshape(Standardize(reshape(input, grouped), {2}, eps), input.sizes());
  return Affine(xhat, weight, bias, input.dim());
}

std::tuple<Tensor, Tensor, Tensor> batch_norm(const Tensor& input,
                                              const std::optional<Tensor>& running_mean,
                                              const std::optional<Tensor>& running_var,
                                              const std::optional<Tensor>& weight,
                                              const std::optional<Tensor>& bias, bool training,
                                              double momentum, double eps) {
  CheckChannelArgs("batch_norm", input, running_mean, running_var, weight, bias, !training,
                   training);
  const int64_t rank = input.dim();
  const DType dt = input.dtype();
  if (!training) {
    const Tensor xhat = mul(sub(input, ChannelView(*running_mean, rank)),
                            rsqrt(add(ChannelView(*running_var, rank), Num(eps, dt))));
    return {Affine(xhat, weight, bias, rank), clone(*running_mean), clone(*running_var)};
  }
  Shape dims = {0};
  for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
  const Tensor out = Affine(Standardize(input, dims, eps), weight, bias, rank);
  // An input without elements has no statistics (they would be NaN): PyTorch returns before
  // updating the running stats then, so they come back unchanged.
  if (input.numel() == 0) {
    return {out, running_mean ? clone(*running_mean) : NotGiven(dt),
            running_var ? clone(*running_var) : NotGiven(dt)};
  }
  Tensor new_mean = running_mean ? Blend(*running_mean, mean(input, dims, false), momentum)
                                 : NotGiven(dt);
  Tensor new_var = running_var ? Blend(*running_var, var(input, dims, 1, false), momentum)
                               : NotGiven(dt);
  return {out, std::move(new_mean), std::move(new_var)};
}

std::tuple<Tensor, Tensor, Tensor> instance_norm(const Tensor& input,
                                                 const std::optional<Tensor>& running_mean,
                                                 const std::optional<Tensor>& running_var,
                                                 const std::optional<Tensor>& weight,
                                                 const std::optional<Tensor>& bias,
                                                 bool use_input_stats, double momentum,
                                                 double eps) {
  CheckChannelArgs("instance_norm", input, running_mean, running_var, weight, bias,
                   !use_input_stats, use_input_stats);
  const int64_t rank = input.dim();
  const DType dt = input.dtype();
  if (!use_input_stats) {
    const Tensor xhat = mul(sub(input, ChannelView(*running_mean, rank)),
                            rsqrt(add(ChannelView(*running_var, rank), Num(eps, dt))));
    return {Affine(xhat, weight, bias, rank), clone(*running_mean), clone(*running_var)};
  }
  const Shape dims = Range(2, rank);
  const Tensor out = Affine(Standardize(input, dims, eps), weight, bias, rank);
  // PyTorch runs instance_norm as batch_norm over [1, N * C, *], which leaves the N copies of
  // the running stats unchanged when there are no elements, and then averages the copies:
  // the given stats when N > 0 (an empty N = 0 batch averages nothing: NaN, as below).
  if (input.numel() == 0 && input.size(0) > 0) {
    return {out, running_mean ? clone(*running_mean) : NotGiven(dt),
            running_var ? clone(*running_var) : NotGiven(dt)};
  }
  // The running stats average the per-instance statistics over the batch (PyTorch).
  Tensor new_mean =
      running_mean ? Blend(*running_mean, mean(mean(input, dims, false), {0}, false), momentum)
                   : NotGiven(dt);
  Tensor new_var =
      running_var ? Blend(*running_var, mean(var(input, dims, 1, false), {0}, false), momentum)
                  : NotGiven(dt);
  return {out, std::move(new_mean), std::move(new_var)};
}

}  // namespace ft::kernels

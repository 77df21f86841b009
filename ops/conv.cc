#include "ops/conv.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dispatch/dispatch.h"
#include "kernels/conv.h"
#include "kernels/pooling.h"
#include "kernels/upsample.h"
#include "ops/index.h"
#include "tensor/error.h"

namespace ft {

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return Call<&kernels::conv1d>(input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return Call<&kernels::conv2d>(input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return Call<&kernels::conv3d>(input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv_weight_grad(const Tensor& input, IntArrayRef weight_size, const Tensor& grad_output,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                        int64_t groups) {
  return Call<&kernels::conv_weight_grad>(input, weight_size, grad_output, stride, padding,
                                          dilation, groups);
}

namespace {

using ConvFn = Tensor (*)(const Tensor&, const Tensor&, const std::optional<Tensor>&,
                          IntArrayRef, IntArrayRef, IntArrayRef, int64_t);

// ConvWithMode: "valid" is padding 0; "same" pads dilation * (kernel - 1) per dim, half on
// each side and the odd one on the right, which conv's symmetric padding cannot say: that
// extra zero is added to the input first (with pad, so the result stays differentiable).
Tensor ConvWithMode(const char* op, int64_t n, ConvFn conv, const Tensor& input,
                    const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                    ConvPadding padding, IntArrayRef dilation, int64_t groups) {
  if (padding == ConvPadding::kValid) {
    return conv(input, weight, bias, stride, {0}, dilation, groups);
  }
  for (int64_t s : stride) {
    if (s != 1) {
      ThrowError(op, ": padding ConvPadding::kSame is not supported for strided convolutions, ",
                 "got stride ", ShapeToString(stride));
    }
  }
  const bool bad_dilation = std::any_of(dilation.begin(), dilation.end(),
                                        [](int64_t d) { return d <= 0; });
  if (weight.dim() != n + 2 || bad_dilation ||
      (dilation.size() != 1 && static_cast<int64_t>(dilation.size()) != n)) {
    // Let the op report the bad weight or dilation.
    return conv(input, weight, bias, stride, {0}, dilation, groups);
  }
  Shape left(static_cast<size_t>(n), 0);
  Shape extra;  // pad's (left, right) pairs, last dim first
  bool odd = false;
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t d = dilation.size() == 1 ? dilation[0] : dilation[static_cast<size_t>(i)];
    int64_t total = 0;
    // A dilation this large leaves no input that could be padded "same" (an int64 overflow).
    if (__builtin_mul_overflow(d, weight.size(2 + i) - 1, &total)) {
      ThrowError(op, ": padding ConvPadding::kSame with dilation ", ShapeToString(dilation),
                 " and weight ", ShapeToString(weight.sizes()),
                 " needs more padding than any tensor has elements");
    }
    left[static_cast<size_t>(i)] = total / 2;
    extra.push_back(0);
    extra.push_back(total % 2);
    odd = odd || total % 2 != 0;
  }
  const Tensor x = odd ? pad(input, extra) : input;
  return conv(x, weight, bias, stride, left, dilation, groups);
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, ConvPadding padding, IntArrayRef dilation, int64_t groups) {
  return ConvWithMode("conv1d", 1, &conv1d, input, weight, bias, stride, padding, dilation,
                      groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, ConvPadding padding, IntArrayRef dilation, int64_t groups) {
  return ConvWithMode("conv2d", 2, &conv2d, input, weight, bias, stride, padding, dilation,
                      groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, ConvPadding padding, IntArrayRef dilation, int64_t groups) {
  return ConvWithMode("conv3d", 3, &conv3d, input, weight, bias, stride, padding, dilation,
                      groups);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return Call<&kernels::conv_transpose1d>(input, weight, bias, stride, padding, output_padding,
                                          groups, dilation);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return Call<&kernels::conv_transpose2d>(input, weight, bias, stride, padding, output_padding,
                                          groups, dilation);
}
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return Call<&kernels::conv_transpose3d>(input, weight, bias, stride, padding, output_padding,
                                          groups, dilation);
}

Tensor unfold(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  return Call<&kernels::unfold>(input, kernel_size, dilation, padding, stride);
}
Tensor fold(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
            IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  return Call<&kernels::fold>(input, output_size, kernel_size, dilation, padding, stride);
}

Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return Call<&kernels::max_pool1d>(input, kernel_size, stride, padding, dilation, ceil_mode);
}
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return Call<&kernels::max_pool2d>(input, kernel_size, stride, padding, dilation, ceil_mode);
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  return Call<&kernels::max_pool1d_with_indices>(input, kernel_size, stride, padding, dilation,
                                                 ceil_mode);
}
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  return Call<&kernels::max_pool2d_with_indices>(input, kernel_size, stride, padding, dilation,
                                                 ceil_mode);
}

Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad) {
  return Call<&kernels::avg_pool1d>(input, kernel_size, stride, padding, ceil_mode,
                                    count_include_pad);
}
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  return Call<&kernels::avg_pool2d>(input, kernel_size, stride, padding, ceil_mode,
                                    count_include_pad, divisor_override);
}

Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size) {
  return Call<&kernels::adaptive_avg_pool1d>(input, output_size);
}
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  return Call<&kernels::adaptive_avg_pool2d>(input, output_size);
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  return Call<&kernels::adaptive_max_pool2d>(input, output_size);
}

Tensor upsample_nearest(const Tensor& input, IntArrayRef output_size,
                        std::optional<double> scales_d, std::optional<double> scales_h,
                        std::optional<double> scales_w, bool exact) {
  return Call<&kernels::upsample_nearest>(input, output_size, scales_d, scales_h, scales_w,
                                          exact);
}
Tensor upsample_nearest_backward(const Tensor& grad_output, IntArrayRef output_size,
                                 IntArrayRef input_size, std::optional<double> scales_d,
                                 std::optional<double> scales_h,
                                 std::optional<double> scales_w, bool exact) {
  return Call<&kernels::upsample_nearest_backward>(grad_output, output_size, input_size,
                                                   scales_d, scales_h, scales_w, exact);
}
Tensor upsample_linear(const Tensor& input, IntArrayRef output_size, bool align_corners,
                       std::optional<double> scales_d, std::optional<double> scales_h,
                       std::optional<double> scales_w) {
  return Call<&kernels::upsample_linear>(input, output_size, align_corners, scales_d, scales_h,
                                         scales_w);
}
Tensor upsample_linear_backward(const Tensor& grad_output, IntArrayRef output_size,
                                IntArrayRef input_size, bool align_corners,
                                std::optional<double> scales_d, std::optional<double> scales_h,
                                std::optional<double> scales_w) {
  return Call<&kernels::upsample_linear_backward>(grad_output, output_size, input_size,
                                                  align_corners, scales_d, scales_h, scales_w);
}

namespace {

std::string DoublesToString(absl::Span<const double> v) {
  return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
}

}  // namespace

Tensor interpolate(const Tensor& input, IntArrayRef size, absl::Span<const double> scale_factor,
                   absl::string_view mode, std::optional<bool> align_corners,
                   std::optional<bool> recompute_scale_factor, bool antialias) {
  const char* op = "interpolate";
  const int64_t r = input.dim();
  if (r < 3 || r > 5) {
    ThrowError(op, ": expected a 3-D, 4-D or 5-D input [N, C, *spatial], got shape ",
               ShapeToString(input.sizes()));
  }
  const int64_t n = r - 2;
  // The mode and its rank.
  const bool nearest = mode == "nearest", exact = mode == "nearest-exact";
  const bool linear = mode == "linear" || mode == "bilinear" || mode == "trilinear";
  if (mode == "bicubic" || mode == "area") {
    ThrowError(op, ": mode '", mode, "' is not supported by ft (supported: nearest, "
               "nearest-exact, linear, bilinear, trilinear)");
  }
  if (!nearest && !exact && !linear) {
    ThrowError(op, ": unknown mode '", mode, "' (expected one of nearest, nearest-exact, linear, "
               "bilinear, trilinear)");
  }
  if (antialias) {
    ThrowError(op, ": antialias is not supported by ft (mode '", mode, "')");
  }
  if ((nearest || exact) && align_corners) {
    ThrowError(op, ": align_corners can only be set with the interpolating modes linear, "
               "bilinear and trilinear, got mode '", mode, "'");
  }
  if (linear) {
    const int64_t want = mode == "linear" ? 1 : mode == "bilinear" ? 2 : 3;
    if (want != n) {
      ThrowError(op, ": mode '", mode, "' needs a ", want + 2, "-D input, got ", r,
                 "-D input ", ShapeToString(input.sizes()));
    }
  }
  // The output size.
  if (!size.empty() && !scale_factor.empty()) {
    ThrowError(op, ": only one of size and scale_factor may be given, got size ",
               ShapeToString(size), " and scale_factor ", DoublesToString(scale_factor));
  }
  if (size.empty() && scale_factor.empty()) {
    ThrowError(op, ": either size or scale_factor must be given");
  }
  const bool recompute = recompute_scale_factor.value_or(false);
  if (recompute && !size.empty()) {
    ThrowError(op, ": recompute_scale_factor is not meaningful with an explicit size");
  }
  const auto check_len = [&](const char* name, size_t len, const std::string& v) {
    if (len != 1 && static_cast<int64_t>(len) != n) {
      ThrowError(op, ": ", name, " must have 1 or ", n, " values (one per spatial dim of input ",
                 ShapeToString(input.sizes()), "), got ", v);
    }
  };
  Shape out;
  std::optional<double> scales[3];
  if (!size.empty()) {
    check_len("size", size.size(), ShapeToString(size));
    for (int64_t i = 0; i < n; ++i) out.push_back(size[size.size() == 1 ? 0 : i]);
  } else {
    check_len("scale_factor", scale_factor.size(), DoublesToString(scale_factor));
    for (int64_t i = 0; i < n; ++i) {
      const double s = scale_factor[scale_factor.size() == 1 ? 0 : i];
      const double o = std::floor(static_cast<double>(input.size(2 + i)) * s);
      if (!(std::abs(o) < 9.0e18)) {
        ThrowError(op, ": scale_factor ", DoublesToString(scale_factor), " gives an output size ",
                   "out of range for input ", ShapeToString(input.sizes()));
      }
      out.push_back(static_cast<int64_t>(o));
      if (!recompute) scales[3 - n + i] = s;
    }
  }
  // Positive input and output sizes, at least one channel: the primitives' own checks, under
  // this op's name.
  kernels::UpsampleShape(op, input.sizes(), out, scales[0], scales[1], scales[2]);
  if (!IsFloating(input.dtype())) {
    ThrowError(op, ": expected a floating point input, got ", DTypeName(input.dtype()));
  }
  if (linear) {
    return upsample_linear(input, out, align_corners.value_or(false), scales[0], scales[1],
                           scales[2]);
  }
  return upsample_nearest(input, out, scales[0], scales[1], scales[2], exact);
}

void RegisterConvOps(OpRegistry& r) {
  const std::initializer_list<const char*> conv_args = {"input",   "weight",   "bias", "stride",
                                                        "padding", "dilation", "groups"};
  RegisterOp<&kernels::conv1d>(r, "conv1d", conv_args);
  RegisterOp<&kernels::conv2d>(r, "conv2d", conv_args);
  RegisterOp<&kernels::conv3d>(r, "conv3d", conv_args);
  const std::initializer_list<const char*> convt_args = {
      "input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"};
  RegisterOp<&kernels::conv_transpose1d>(r, "conv_transpose1d", convt_args);
  RegisterOp<&kernels::conv_transpose2d>(r, "conv_transpose2d", convt_args);
  RegisterOp<&kernels::conv_transpose3d>(r, "conv_transpose3d", convt_args);
  RegisterOp<&kernels::conv_weight_grad>(
      r, "conv_weight_grad",
      {"input", "weight_size", "grad_output", "stride", "padding", "dilation", "groups"});
  const std::initializer_list<const char*> max_args = {"input",   "kernel_size", "stride",
                                                       "padding", "dilation",    "ceil_mode"};
  RegisterOp<&kernels::max_pool1d>(r, "max_pool1d", max_args);
  RegisterOp<&kernels::max_pool2d>(r, "max_pool2d", max_args);
  RegisterOp<&kernels::max_pool1d_with_indices>(r, "max_pool1d_with_indices", max_args);
  RegisterOp<&kernels::max_pool2d_with_indices>(r, "max_pool2d_with_indices", max_args);
  RegisterOp<&kernels::unfold>(r, "unfold",
                               {"input", "kernel_size", "dilation", "padding", "stride"});
  RegisterOp<&kernels::fold>(
      r, "fold", {"input", "output_size", "kernel_size", "dilation", "padding", "stride"});
  RegisterOp<&kernels::avg_pool1d>(
      r, "avg_pool1d",
      {"input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"});
  RegisterOp<&kernels::avg_pool2d>(r, "avg_pool2d",
                                   {"input", "kernel_size", "stride", "padding", "ceil_mode",
                                    "count_include_pad", "divisor_override"});
  RegisterOp<&kernels::adaptive_avg_pool1d>(r, "adaptive_avg_pool1d", {"input", "output_size"});
  RegisterOp<&kernels::adaptive_avg_pool2d>(r, "adaptive_avg_pool2d", {"input", "output_size"});
  RegisterOp<&kernels::adaptive_max_pool2d>(r, "adaptive_max_pool2d", {"input", "output_size"});
  RegisterOp<&kernels::upsample_nearest>(
      r, "upsample_nearest",
      {"input", "output_size", "scales_d", "scales_h", "scales_w", "exact"});
  RegisterOp<&kernels::upsample_nearest_backward>(
      r, "upsample_nearest_backward",
      {"grad_output", "output_size", "input_size", "scales_d", "scales_h", "scales_w", "exact"});
  RegisterOp<&kernels::upsample_linear>(
      r, "upsample_linear",
      {"input", "output_size", "align_corners", "scales_d", "scales_h", "scales_w"});
  RegisterOp<&kernels::upsample_linear_backward>(
      r, "upsample_linear_backward", {"grad_output", "output_size", "input_size", "align_corners",
                                      "scales_d", "scales_h", "scales_w"});
}

}  // namespace ft

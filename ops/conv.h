// ft/ops/conv.h
//
// Convolution, pooling and interpolation: the public ops, with torch.nn.functional's names,
// argument order, defaults and semantics. Each dispatches (dispatch.h) to its base kernel in
// kernels/conv.h or kernels/upsample.h (interpolate through the upsample
// primitives), so every transform (grad, vmap, jvp, jit, functionalize) applies.
//
// Layout is channels first: a batched input is [N, C, spatial...], an unbatched one (one
// example, as torch allows) is [C, spatial...] and gives an unbatched result. Per-dim
// arguments (kernel_size, stride, padding, dilation, output_padding, output_size) take one
// value for every spatial dim ({2}) or one value per spatial dim ({2, 3}).
//
// Dtypes: float32 or float64 inputs; the convolutions need input, weight and bias of one dtype
// (no promotion, like torch). Max-pool indices are int64 positions in the flattened spatial
// dims of the (unpadded) input plane, like torch's return_indices.
//
// Errors (ft::Error naming the op and the shapes): wrong ranks, channel counts not divisible
// by groups, weight/input channel mismatch, a bias not [out_channels], an input smaller than
// the (dilated) kernel after padding, non-positive stride / dilation / kernel_size, negative
// padding, padding ConvPadding::kSame with a stride > 1, pooling padding larger than half the
// kernel, an output_padding not smaller than stride or dilation, mixed dtypes, integer inputs.
//
// Example (a small CNN layer):
//   Tensor x = ones({8, 3, 28, 28}), w = ones({16, 3, 3, 3}), b = zeros({16});
//   Tensor y = relu(conv2d(x, w, b, /*stride=*/{1}, /*padding=*/{1}));   // [8, 16, 28, 28]
//   Tensor p = max_pool2d(y, {2});                                        // [8, 16, 14, 14]
#ifndef FT_OPS_CONV_H_
#define FT_OPS_CONV_H_

#include <cstdint>
#include <optional>
#include <tuple>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// ---- Convolutions. ----

// conv1d / conv2d / conv3d: out[n, o, p] = bias[o] + sum_{c in o's group, k}
// weight[o, c, k] * input_padded[n, g * C/groups + c, p * stride + k * dilation], i.e. a
// cross-correlation like torch. input [N, C, *in] (or [C, *in]); weight
// [O, C / groups, *kernel]; bias [O] or none; output [N, O, *out] with
// out = (in + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1.
Tensor conv1d(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);

// ConvPadding: torch's string paddings. kValid is no padding; kSame pads so the output has
// the input's spatial size (stride must be 1): dilation * (kernel - 1) zeros per dim, the odd
// one on the right (like torch).
//   conv2d(x, w, std::nullopt, {1}, ConvPadding::kSame)
enum class ConvPadding { kValid, kSame };
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, ConvPadding padding, IntArrayRef dilation = {1},
              int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, ConvPadding padding, IntArrayRef dilation = {1},
              int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, ConvPadding padding, IntArrayRef dilation = {1},
              int64_t groups = 1);

// conv_transpose1d / 2d / 3d: the adjoint of conv{n}d with respect to its input (the
// "deconvolution"): every input element scatters weight[c, o, k] * input[n, c, p] to output
// position p * stride - padding + k * dilation. input [N, C_in, *in]; weight
// [C_in, C_out / groups, *kernel]; output [N, C_out, *out] with
// out = (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1.
// output_padding (extra size on one side) must be smaller than stride or dilation.
// Note the argument order (torch's): groups before dilation.
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = {1}, IntArrayRef padding = {0},
                        IntArrayRef output_padding = {0}, int64_t groups = 1,
                        IntArrayRef dilation = {1});
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = {1}, IntArrayRef padding = {0},
                        IntArrayRef output_padding = {0}, int64_t groups = 1,
                        IntArrayRef dilation = {1});
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = {1}, IntArrayRef padding = {0},
                        IntArrayRef output_padding = {0}, int64_t groups = 1,
                        IntArrayRef dilation = {1});

// conv_weight_grad (torch.nn.grad.conv{n}d_weight, with ft's argument order): the gradient of
// <grad_output, conv{n}d(input, weight, ., stride, padding, dilation, groups)> with respect to
// a weight of shape weight_size [O, C / groups, *kernel] (n = weight_size.size() - 2):
// dw[o, c, k] = sum_{n, p} grad_output[n, o, p] * input_padded[n, g * C/groups + c,
// p * stride + k * dilation]. The weight gradient of conv{n}d and of conv_transpose{n}d (with
// input and grad_output exchanged) are both this op; as a primitive it runs one call of the
// kernel (oneDNN's backward-weights for float32) rather than a convolution of the transposed
// operands.
Tensor conv_weight_grad(const Tensor& input, IntArrayRef weight_size, const Tensor& grad_output,
                        IntArrayRef stride = {1}, IntArrayRef padding = {0},
                        IntArrayRef dilation = {1}, int64_t groups = 1);

// ---- im2col / col2im. ----

// unfold (torch.nn.functional.unfold, im2col): input [N, C, H, W] (or [C, H, W]) ->
// [N, C * kh * kw, L], column l holding the (padded, dilated) window of block l, channel-major
// then kernel row-major; L = number of blocks (row-major over the block grid).
Tensor unfold(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation = {1},
              IntArrayRef padding = {0}, IntArrayRef stride = {1});
// fold (col2im): the adjoint of unfold: [N, C * kh * kw, L] -> [N, C, *output_size], summing
// overlapping window elements. L must equal the block count of output_size.
Tensor fold(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
            IntArrayRef dilation = {1}, IntArrayRef padding = {0}, IntArrayRef stride = {1});

// ---- Pools. An empty stride ({}, torch's None) means stride = kernel_size. ----

// max_pool1d / 2d: the maximum over each (dilated) window; padding is -infinity (never
// chosen); a NaN in a window wins. ceil_mode rounds the window count up (a last, partial
// window that starts inside the input or its left padding). padding <= kernel_size / 2.
Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0}, IntArrayRef dilation = {1}, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0}, IntArrayRef dilation = {1}, bool ceil_mode = false);
// ..._with_indices: (values, indices) like torch's return_indices=True; indices are int64
// positions into the flattened spatial dims of the input plane (the first maximum wins).
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {},
                                                   IntArrayRef padding = {0},
                                                   IntArrayRef dilation = {1},
                                                   bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {},
                                                   IntArrayRef padding = {0},
                                                   IntArrayRef dilation = {1},
                                                   bool ceil_mode = false);

// avg_pool1d / 2d: each window's sum divided by its size: with count_include_pad the window
// clipped to the padded input, otherwise the number of input elements in it; avg_pool2d's
// divisor_override (nonzero) replaces the divisor. torch's avg_pool1d has no
// divisor_override, and neither does ours.
Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0}, bool ceil_mode = false,
                  bool count_include_pad = true);
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0}, bool ceil_mode = false,
                  bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

// adaptive_avg_pool1d / 2d: output_size windows per dim, window i covering
// [floor(i * in / out), ceil((i + 1) * in / out)); the mean of each.
Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size);
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);
// adaptive_max_pool2d: (values, indices) over the same windows (indices as max_pool2d's).
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size);

// ---- Resizing (torch.nn.functional.interpolate). ----

// interpolate: resizes the spatial dims of input [N, C, *spatial] (3-D, 4-D or 5-D: 1, 2 or 3
// spatial dims; there is no unbatched form, as in torch). Exactly one of `size` (the output's
// spatial sizes) and `scale_factor` (output = floor(in * scale_factor)) is given, each with
// one value for every spatial dim ({2}) or one per spatial dim ({2, 3}); empty means None.
// Modes:
//   "nearest"        out[o] = in[min(floor(o * s), in - 1)], s = in / out, or 1 / scale_factor
//                    when scale_factor is given and recompute_scale_factor is not true
//   "nearest-exact"  out[o] = in[min(floor((o + 0.5) * s), in - 1)] (rounds half up)
//   "linear" (3-D), "bilinear" (4-D), "trilinear" (5-D): separable linear interpolation
//                    between the two nearest input elements; source coordinate
//                    x = o * (in - 1) / (out - 1) with align_corners, otherwise
//                    max((o + 0.5) * s - 0.5, 0) (pixel centers; torch's default,
//                    align_corners = false)
// Index arithmetic is torch 1.13's (kernels/upsample.h). Floating inputs; the result
// is contiguous, of the input's dtype. Differentiable (the adjoint primitives
// upsample_*_backward below) and batchable in every mode.
// Throws ft::Error (naming interpolate and the shapes) for: an input that is not 3-D to 5-D,
// both or neither of size / scale_factor, a size or scale_factor of the wrong length,
// recompute_scale_factor = true with a size, align_corners given for the nearest modes, a
// linear mode for the wrong rank ("bilinear" needs 4-D input), modes "bicubic" and "area" and
// antialias (not supported by ft) and unknown modes, integer inputs, an output size <= 0.
//   Tensor x = ones({8, 3, 14, 14});
//   interpolate(x, {28});                                    // [8, 3, 28, 28], nearest
//   interpolate(x, {}, {1.5}, "bilinear", /*align_corners=*/true);  // [8, 3, 21, 21]
Tensor interpolate(const Tensor& input, IntArrayRef size = {},
                   absl::Span<const double> scale_factor = {},
                   absl::string_view mode = "nearest",
                   std::optional<bool> align_corners = std::nullopt,
                   std::optional<bool> recompute_scale_factor = std::nullopt,
                   bool antialias = false);

// The op-table primitives behind interpolate (kernels/upsample.h documents them): a
// linear map and its adjoint per mode family. input [N, C, *spatial] with
// n = output_size.size() spatial dims; the scales are torch's per-dim scale factors (the
// last n of d, h, w; nullopt: in / out is used); input_size is the full input shape.
Tensor upsample_nearest(const Tensor& input, IntArrayRef output_size,
                        std::optional<double> scales_d = std::nullopt,
                        std::optional<double> scales_h = std::nullopt,
                        std::optional<double> scales_w = std::nullopt, bool exact = false);
Tensor upsample_nearest_backward(const Tensor& grad_output, IntArrayRef output_size,
                                 IntArrayRef input_size,
                                 std::optional<double> scales_d = std::nullopt,
                                 std::optional<double> scales_h = std::nullopt,
                                 std::optional<double> scales_w = std::nullopt,
                                 bool exact = false);
Tensor upsample_linear(const Tensor& input, IntArrayRef output_size, bool align_corners = false,
                       std::optional<double> scales_d = std::nullopt,
                       std::optional<double> scales_h = std::nullopt,
                       std::optional<double> scales_w = std::nullopt);
Tensor upsample_linear_backward(const Tensor& grad_output, IntArrayRef output_size,
                                IntArrayRef input_size, bool align_corners = false,
                                std::optional<double> scales_d = std::nullopt,
                                std::optional<double> scales_h = std::nullopt,
                                std::optional<double> scales_w = std::nullopt);

// RegisterConvOps adds this family to the op table (called by RegisterAllOps).
void RegisterConvOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_CONV_H_

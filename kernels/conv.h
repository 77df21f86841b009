// ft/kernels/conv.h
//
// Convolution and pooling: the base kernels (conv1d/2d/3d, conv_transpose1d/2d/3d, unfold,
// fold, max_pool1d/2d (with indices), avg_pool1d/2d, adaptive_avg_pool1d/2d,
// adaptive_max_pool2d). Dense tensors only; //dispatch makes them public ops
// (dispatch/conv_ops.h documents the semantics).
//
// The *Shape functions validate one example's arguments exactly as the kernels do (same
// messages, naming the op and the shapes) and return the output shape without computing
// anything: the batching rules call them on LOGICAL shapes, so errors under vmap read like
// the op's errors for one example.
//
// Layout is NCHW (channels first); an input without the leading N dim is one unbatched
// example. Per-dim arguments (stride, padding, ...) hold one value for every spatial dim or
// one value per spatial dim.
#ifndef FT_KERNELS_CONV_H_
#define FT_KERNELS_CONV_H_

#include <cstdint>
#include <optional>
#include <tuple>

#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft::kernels {

// ConvShape: the output shape of conv{n}d (n = 1, 2, 3 spatial dims) for input, weight and
// (optional) bias shapes; throws ft::Error naming `op` on any invalid argument.
Shape ConvShape(const char* op, int64_t n, IntArrayRef input, IntArrayRef weight,
                const std::optional<Shape>& bias, IntArrayRef stride, IntArrayRef padding,
                IntArrayRef dilation, int64_t groups);
// ConvTransposeShape: the same for conv_transpose{n}d (weight [C_in, C_out / groups, k...]).
Shape ConvTransposeShape(const char* op, int64_t n, IntArrayRef input, IntArrayRef weight,
                         const std::optional<Shape>& bias, IntArrayRef stride,
                         IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                         IntArrayRef dilation);
// PoolShape: the output shape of max_pool{n}d / avg_pool{n}d (avg pools pass dilation {1}).
Shape PoolShape(const char* op, int64_t n, IntArrayRef input, IntArrayRef kernel_size,
                IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);
// AdaptivePoolShape: the output shape of adaptive_{avg,max}_pool{n}d.
Shape AdaptivePoolShape(const char* op, int64_t n, IntArrayRef input, IntArrayRef output_size);
// UnfoldShape / FoldShape: the output shapes of unfold (im2col) and fold (col2im).
Shape UnfoldShape(IntArrayRef input, IntArrayRef kernel_size, IntArrayRef dilation,
                  IntArrayRef padding, IntArrayRef stride);
Shape FoldShape(IntArrayRef input, IntArrayRef output_size, IntArrayRef kernel_size,
                IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups);
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups);
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups);

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation);
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation);

// conv_weight_grad: the gradient with respect to the weight (of shape weight_size, whose
// length gives the spatial dims) of <grad_output, conv{n}d(input, weight, stride, padding,
// dilation, groups)>; torch.nn.grad.conv{n}d_weight. ConvWeightGradShape validates.
Shape ConvWeightGradShape(IntArrayRef input, IntArrayRef weight_size, IntArrayRef grad_output,
                          IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                          int64_t groups);
Tensor conv_weight_grad(const Tensor& input, IntArrayRef weight_size, const Tensor& grad_output,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                        int64_t groups);

Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode);

Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad);
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override);
// AvgPoolDivisor: the [out_h, out_w] float64 tensor avg_pool{n}d divides each window's sum by
// (n = 1: [1, out_w]); the formulas use it.
Tensor AvgPoolDivisor(int64_t n, IntArrayRef input, IntArrayRef kernel_size, IntArrayRef stride,
                      IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override);

Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size);
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size);
// AdaptivePoolMatrix: the [out, in] float64 matrix whose row i averages adaptive window i of
// a dim of `in` elements (the adaptive average pools are P_h x P_w^T; the formulas use it).
Tensor AdaptivePoolMatrix(int64_t in, int64_t out);

Tensor unfold(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);
Tensor fold(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
            IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);

}  // namespace ft::kernels

#endif  // FT_KERNELS_CONV_H_

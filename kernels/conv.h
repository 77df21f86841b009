// ft/kernels/conv.h
//
// Convolution: the base kernels (conv1d/2d/3d, conv_transpose1d/2d/3d, the weight gradient,
// unfold, fold). Pooling is kernels/pooling.h. Dense tensors only; //ops makes them
// public ops (ops/conv.h documents the semantics).
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

Tensor unfold(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);
Tensor fold(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
            IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);

}  // namespace ft::kernels

#endif  // FT_KERNELS_CONV_H_

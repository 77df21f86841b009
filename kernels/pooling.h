// ft/kernels/pooling.h
//
// Pooling: the base kernels (max_pool1d/2d, with indices too, avg_pool1d/2d,
// adaptive_avg_pool1d/2d, adaptive_max_pool2d) and the matrices their formulas use. Dense
// tensors only; //ops makes them public ops (ops/conv.h documents the
// semantics).
//
// The *Shape functions validate one example's arguments exactly as the kernels do (same
// messages, naming the op and the shapes) and return the output shape without computing
// anything: the batching rules call them on LOGICAL shapes, so errors under vmap read like
// the op's errors for one example.
//
// Layout is NCHW (channels first); an input without the leading N dim is one unbatched
// example. Per-dim arguments (kernel_size, stride, ...) hold one value for every spatial dim
// or one value per spatial dim; an empty stride means the kernel size.
//
// Example:
//   // x: [N, C, 8, 8] -> y: [N, C, 4, 4], 2x2 windows, stride 2 (the kernel size)
//   Tensor y = kernels::max_pool2d(x, {2}, {}, {0}, {1}, /*ceil_mode=*/false);
#ifndef FT_KERNELS_POOLING_H_
#define FT_KERNELS_POOLING_H_

#include <cstdint>
#include <optional>
#include <tuple>

#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft::kernels {

// PoolShape: the output shape of max_pool{n}d / avg_pool{n}d (avg pools pass dilation {1}).
Shape PoolShape(const char* op, int64_t n, IntArrayRef input, IntArrayRef kernel_size,
                IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);
// AdaptivePoolShape: the output shape of adaptive_{avg,max}_pool{n}d.
Shape AdaptivePoolShape(const char* op, int64_t n, IntArrayRef input, IntArrayRef output_size);

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

}  // namespace ft::kernels

#endif  // FT_KERNELS_POOLING_H_

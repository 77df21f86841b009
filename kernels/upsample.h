// ft/kernels/upsample.h
//
// Upsampling (resizing) by interpolation: the base kernels behind interpolate
// (ops/conv.h documents the public op). Dense tensors only; //ops makes each a
// public op of the conv family.
//
// Four primitives, two linear maps and their adjoints:
//   upsample_nearest            out[p, o...] = in[p, src(o)...]     (a gather)
//   upsample_nearest_backward   its adjoint: grad_in[p, src(o)...] += grad_out[p, o...]
//   upsample_linear             out = sum over the 2^n corners of the product of the per-dim
//                               linear weights times the corner's input value
//   upsample_linear_backward    its adjoint: every output gradient scattered, weighted, to its
//                               corners (overlaps add up)
// Each forward's vjp is its backward and each backward's vjp is its forward; both are linear,
// so each jvp is the op itself applied to the tangent.
//
// Invariants: the input is [N, C, *spatial] with n = output_size.size() in {1, 2, 3} spatial
// dims (1-D: W; 2-D: H, W; 3-D: D, H, W); the planes N * C are independent (a caller may fold
// any leading dims into N). Results are contiguous. `scales_d/h/w` are the optional scale
// factors of torch's upsample ops (the last n of the three are read, the rest must be
// nullopt): given, and positive, the source coordinate of output index o uses 1 / scale
// instead of in / out, which differ when out = floor(in * scale) rounded (torch's
// recompute_scale_factor=False). Index arithmetic follows torch 1.13's CPU kernels exactly:
//   nearest:       src = min(floor(o * s), in - 1)          s = in / out or 1 / scale (float)
//   nearest-exact: src = min(floor((o + 0.5) * s), in - 1)
//   linear:        x = align_corners ? o * (in - 1) / (out - 1) : max((o + 0.5) * s - 0.5, 0),
//                  corners floor(x) and floor(x) + 1 (clamped to in - 1) weighted 1 - frac(x)
//                  and frac(x); a dim whose out == in is copied.
// (nearest with out == in or out == 2 * in uses o and o / 2, as torch does.)
//
// The Upsample*Shape functions validate one example's arguments exactly as the kernels do
// (same messages, naming the op and the shapes) and return the result's shape: the batching
// rules call them on LOGICAL shapes, so errors under vmap read like the op's own.
//
// Example (nearest doubling of [1, 1, 2] -> [1, 1, 4]):
//   upsample_nearest(tensor({1.0, 2.0}, {1, 1, 2}), {4}, nullopt, nullopt, nullopt, false)
//     == [[[1, 1, 2, 2]]]
#ifndef FT_KERNELS_UPSAMPLE_H_
#define FT_KERNELS_UPSAMPLE_H_

#include <optional>

#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft::kernels {

// UpsampleShape: [N, C, *output_size] for an input of shape `input`; throws ft::Error naming
// `op` unless output_size has 1 to 3 values, the input has output_size.size() + 2 dims, its
// spatial sizes and output_size are positive, it has at least one channel (N may be 0; torch's
// rule), and the scales beyond the spatial dims are absent.
Shape UpsampleShape(const char* op, IntArrayRef input, IntArrayRef output_size,
                    std::optional<double> scales_d, std::optional<double> scales_h,
                    std::optional<double> scales_w);
// UpsampleBackwardShape: input_size, after checking it as UpsampleShape checks an input and
// that grad_output is [input_size[0], input_size[1], *output_size].
Shape UpsampleBackwardShape(const char* op, IntArrayRef grad_output, IntArrayRef output_size,
                            IntArrayRef input_size, std::optional<double> scales_d,
                            std::optional<double> scales_h, std::optional<double> scales_w);

// upsample_nearest: torch's upsample_nearest{1,2,3}d (exact = false) and
// _upsample_nearest_exact{1,2,3}d (exact = true). Floating inputs.
Tensor upsample_nearest(const Tensor& input, IntArrayRef output_size,
                        std::optional<double> scales_d, std::optional<double> scales_h,
                        std::optional<double> scales_w, bool exact);
// upsample_nearest_backward: the adjoint of upsample_nearest from [N, C, *output_size] to
// input_size (the full input shape); every input position sums the outputs copied from it.
Tensor upsample_nearest_backward(const Tensor& grad_output, IntArrayRef output_size,
                                 IntArrayRef input_size, std::optional<double> scales_d,
                                 std::optional<double> scales_h,
                                 std::optional<double> scales_w, bool exact);
// upsample_linear: torch's upsample_linear1d, upsample_bilinear2d and upsample_trilinear3d.
// Floating inputs.
Tensor upsample_linear(const Tensor& input, IntArrayRef output_size, bool align_corners,
                       std::optional<double> scales_d, std::optional<double> scales_h,
                       std::optional<double> scales_w);
// upsample_linear_backward: the adjoint of upsample_linear (input_size is the full input
// shape).
Tensor upsample_linear_backward(const Tensor& grad_output, IntArrayRef output_size,
                                IntArrayRef input_size, bool align_corners,
                                std::optional<double> scales_d, std::optional<double> scales_h,
                                std::optional<double> scales_w);

}  // namespace ft::kernels

#endif  // FT_KERNELS_UPSAMPLE_H_

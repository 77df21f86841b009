#include "kernels/upsample.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "kernels/checks.h"
#include "tensor/copy.h"
#include "tensor/loops.h"

namespace ft::kernels {
namespace {

// ScaleOf: the scale factor of spatial dim i of n (the last n of d, h, w).
std::optional<double> ScaleOf(int64_t i, int64_t n, std::optional<double> d,
                              std::optional<double> h, std::optional<double> w) {
  const std::optional<double> all[3] = {d, h, w};
  return all[3 - n + i];
}

// CheckUpsample: the checks UpsampleShape documents, on an input shape.
void CheckUpsample(const char* op, IntArrayRef input, IntArrayRef output_size,
                   std::optional<double> sd, std::optional<double> sh, std::optional<double> sw) {
  const int64_t n = static_cast<int64_t>(output_size.size());
  if (n < 1 || n > 3) {
    ThrowError(op, ": output_size must have 1, 2 or 3 values (one per spatial dim), got ",
               ShapeToString(output_size));
  }
  if (static_cast<int64_t>(input.size()) != n + 2) {
    ThrowError(op, ": expected a ", n + 2, "-D input [N, C, ", n == 1 ? "W" : n == 2 ? "H, W"
               : "D, H, W", "] for output_size ", ShapeToString(output_size), ", got shape ",
               ShapeToString(input));
  }
  if ((n < 3 && sd) || (n < 2 && sh)) {
    ThrowError(op, ": a scale was given for a spatial dim that a ", n + 2,
               "-D input does not have");
  }
  for (int64_t i = 0; i < n; ++i) {
    if (input[static_cast<size_t>(2 + i)] <= 0 || output_size[static_cast<size_t>(i)] <= 0) {
      ThrowError(op, ": input and output sizes should be greater than 0, got input ",
                 ShapeToString(input), " and output_size ", ShapeToString(output_size));
    }
  }
  if (input[1] == 0) {  // like torch: an empty batch is fine, no channels is not
    ThrowError(op, ": expected at least one channel, got input ", ShapeToString(input));
  }
}

// Dim: one padded spatial dim's source positions. Output index o reads `taps` input indices
// idx[o * taps + t] with weights w[o * taps + t].
template <typename T>
struct Dim {
  int64_t in = 1;
  int64_t out = 1;
  int64_t taps = 1;
  std::vector<int64_t> idx = {0};
  std::vector<T> w = {T(1)};
};

// ScaleValue: torch's compute_scales_value<V>: 1 / scale when a positive scale is given,
// otherwise in / out.
template <typename V>
V ScaleValue(std::optional<double> scale, int64_t in, int64_t out) {
  return scale && *scale > 0.0 ? static_cast<V>(1.0 / *scale)
                               : static_cast<V>(in) / static_cast<V>(out);
}

template <typename T>
Dim<T> NearestDim(int64_t in, int64_t out, std::optional<double> scale, bool exact) {
  Dim<T> d;
  d.in = in;
  d.out = out;
  d.idx.resize(static_cast<size_t>(out));
  d.w.assign(static_cast<size_t>(out), T(1));
  // The source index is computed in float, as torch's CPU kernels do (so that rounding at
  // the boundaries picks the same element).
  const float s = ScaleValue<float>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t src;
    if (exact) {
      src = static_cast<int64_t>(
          std::floor(static_cast<float>((static_cast<double>(o) + 0.5) * s)));
    } else if (out == in) {
      src = o;
    } else if (out == 2 * in) {
      src = o >> 1;
    } else {
      src = static_cast<int64_t>(std::floor(static_cast<float>(o) * s));
    }
    d.idx[static_cast<size_t>(o)] = std::min(src, in - 1);
  }
  return d;
}

template <typename T>
Dim<T> LinearDim(int64_t in, int64_t out, std::optional<double> scale, bool align_corners) {
  Dim<T> d;
  d.in = in;
  d.out = out;
  if (out == in) {  // torch copies (the scale is not read)
    d.idx.resize(static_cast<size_t>(out));
    d.w.assign(static_cast<size_t>(out), T(1));
    for (int64_t o = 0; o < out; ++o) d.idx[static_cast<size_t>(o)] = o;
    return d;
  }
  d.taps = 2;
  d.idx.resize(static_cast<size_t>(2 * out));
  d.w.resize(static_cast<size_t>(2 * out));
  // torch's area_pixel_compute_scale and area_pixel_compute_source_index, in T.
  const T s = align_corners ? (out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0))
                            : ScaleValue<T>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    T x = align_corners ? s * static_cast<T>(o) : s * (static_cast<T>(o) + T(0.5)) - T(0.5);
    if (x < T(0)) x = T(0);
    const int64_t i0 = std::min(static_cast<int64_t>(x), in - 1);
    const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    const T l1 = std::min(std::max(x - static_cast<T>(i0), T(0)), T(1));
    d.idx[static_cast<size_t>(2 * o)] = i0;
    d.idx[static_cast<size_t>(2 * o + 1)] = i1;
    d.w[static_cast<size_t>(2 * o)] = T(1) - l1;
    d.w[static_cast<size_t>(2 * o + 1)] = l1;
  }
  return d;
}

// Resample runs the separable map between `small` ([planes, in...]) and `big`
// ([planes, out...]): kForward writes big = A small; otherwise small += A^T big (the adjoint:
// small must be zeroed first). Sums are taken in a fixed order, so results are reproducible.
template <typename T, bool kForward>
void Resample(std::conditional_t<kForward, const T*, T*> small,
              std::conditional_t<kForward, T*, const T*> big, int64_t planes,
              const Dim<T> (&dims)[3]) {
  const Dim<T>& a = dims[0];
  const Dim<T>& b = dims[1];
  const Dim<T>& c = dims[2];
  const int64_t in_plane = a.in * b.in * c.in, out_plane = a.out * b.out * c.out;
  for (int64_t p = 0; p < planes; ++p) {
    auto* src = small + p * in_plane;
    auto* dst = big + p * out_plane;
    for (int64_t o0 = 0; o0 < a.out; ++o0) {
      for (int64_t o1 = 0; o1 < b.out; ++o1) {
        for (int64_t o2 = 0; o2 < c.out; ++o2, ++dst) {
          T acc = T(0);
          const T g = kForward ? T(0) : *dst;
          for (int64_t t0 = 0; t0 < a.taps; ++t0) {
            const size_t k0 = static_cast<size_t>(o0 * a.taps + t0);
            const int64_t r0 = a.idx[k0] * b.in;
            for (int64_t t1 = 0; t1 < b.taps; ++t1) {
              const size_t k1 = static_cast<size_t>(o1 * b.taps + t1);
              const int64_t r1 = (r0 + b.idx[k1]) * c.in;
              const T w01 = a.w[k0] * b.w[k1];
              for (int64_t t2 = 0; t2 < c.taps; ++t2) {
                const size_t k2 = static_cast<size_t>(o2 * c.taps + t2);
                const T w = w01 * c.w[k2];
                if constexpr (kForward) {
                  acc += w * src[r1 + c.idx[k2]];
                } else {
                  src[r1 + c.idx[k2]] += w * g;
                }
              }
            }
          }
          if constexpr (kForward) *dst = acc;
        }
      }
    }
  }
}

// Upsample: the forward (kForward, from `x` of the input's shape) or backward (from `x` of
// the output's shape into a result of in_shape) of either mode.
template <bool kForward>
Tensor Upsample(const char* op, const Tensor& x, IntArrayRef in_shape, IntArrayRef output_size,
                bool linear, bool flag, std::optional<double> sd, std::optional<double> sh,
                std::optional<double> sw) {
  internal::CheckFloating(op, x);
  const int64_t n = static_cast<int64_t>(output_size.size());
  const int64_t planes = in_shape[0] * in_shape[1];
  Tensor result;
  if constexpr (kForward) {
    Shape out_shape = {in_shape[0], in_shape[1]};
    for (int64_t s : output_size) out_shape.push_back(s);
    result = EmptyContiguous(out_shape, x.dtype());
  } else {
    result = EmptyContiguous(in_shape, x.dtype());
  }
  const Tensor xc = contiguous(x);
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      Dim<T> dims[3];
      for (int64_t i = 0; i < n; ++i) {
        const int64_t in = in_shape[static_cast<size_t>(2 + i)];
        const int64_t out = output_size[static_cast<size_t>(i)];
        const std::optional<double> scale = ScaleOf(i, n, sd, sh, sw);
        dims[3 - n + i] =
            linear ? LinearDim<T>(in, out, scale, flag) : NearestDim<T>(in, out, scale, flag);
      }
      const T* px = static_cast<const T*>(xc.impl()->raw_data());
      T* pr = static_cast<T*>(result.impl()->raw_data());
      if constexpr (kForward) {
        Resample<T, true>(px, pr, planes, dims);
      } else {
        std::fill(pr, pr + result.numel(), T(0));
        Resample<T, false>(pr, px, planes, dims);
      }
    }
  });
  return result;
}

}  // namespace

Shape UpsampleShape(const char* op, IntArrayRef input, IntArrayRef output_size,
                    std::optional<double> scales_d, std::optional<double> scales_h,
                    std::optional<double> scales_w) {
  CheckUpsample(op, input, output_size, scales_d, scales_h, scales_w);
  Shape out(input.begin(), input.begin() + 2);
  out.insert(out.end(), output_size.begin(), output_size.end());
  return out;
}

Shape UpsampleBackwardShape(const char* op, IntArrayRef grad_output, IntArrayRef output_size,
                            IntArrayRef input_size, std::optional<double> scales_d,
                            std::optional<double> scales_h, std::optional<double> scales_w) {
  const Shape expected =
      UpsampleShape(op, input_size, output_size, scales_d, scales_h, scales_w);
  if (grad_output != IntArrayRef(expected)) {
    ThrowError(op, ": expected grad_output of shape ", ShapeToString(expected),
               " (input_size ", ShapeToString(input_size), ", output_size ",
               ShapeToString(output_size), "), got ", ShapeToString(grad_output));
  }
  return Shape(input_size.begin(), input_size.end());
}

Tensor upsample_nearest(const Tensor& input, IntArrayRef output_size,
                        std::optional<double> scales_d, std::optional<double> scales_h,
                        std::optional<double> scales_w, bool exact) {
  const char* op = "upsample_nearest";
  UpsampleShape(op, input.sizes(), output_size, scales_d, scales_h, scales_w);
  return Upsample<true>(op, input, input.sizes(), output_size, false, exact, scales_d,
                        scales_h, scales_w);
}

Tensor upsample_nearest_backward(const Tensor& grad_output, IntArrayRef output_size,
                                 IntArrayRef input_size, std::optional<double> scales_d,
                                 std::optional<double> scales_h,
                                 std::optional<double> scales_w, bool exact) {
  const char* op = "upsample_nearest_backward";
  UpsampleBackwardShape(op, grad_output.sizes(), output_size, input_size, scales_d, scales_h,
                        scales_w);
  return Upsample<false>(op, grad_output, input_size, output_size, false, exact, scales_d,
                         scales_h, scales_w);
}

Tensor upsample_linear(const Tensor& input, IntArrayRef output_size, bool align_corners,
                       std::optional<double> scales_d, std::optional<double> scales_h,
                       std::optional<double> scales_w) {
  const char* op = "upsample_linear";
  UpsampleShape(op, input.sizes(), output_size, scales_d, scales_h, scales_w);
  return Upsample<true>(op, input, input.sizes(), output_size, true, align_corners, scales_d,
                        scales_h, scales_w);
}

Tensor upsample_linear_backward(const Tensor& grad_output, IntArrayRef output_size,
                                IntArrayRef input_size, bool align_corners,
                                std::optional<double> scales_d, std::optional<double> scales_h,
                                std::optional<double> scales_w) {
  const char* op = "upsample_linear_backward";
  UpsampleBackwardShape(op, grad_output.sizes(), output_size, input_size, scales_d, scales_h,
                        scales_w);
  return Upsample<false>(op, grad_output, input_size, output_size, true, align_corners,
                         scales_d, scales_h, scales_w);
}

}  // namespace ft::kernels

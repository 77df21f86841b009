#include "kernels/pooling.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>

#include "kernels/checks.h"
#include "tensor/copy.h"
#include "tensor/loops.h"

namespace ft::kernels {
namespace {

using internal::CheckInputRank;
using internal::CheckNonNegative;
using internal::CheckPositive;
using internal::PerDim;
using internal::WindowRoom;

// PoolOut: the number of windows along one dim (0 when not even one fits): torch's
// floor(span / s) + 1, or with ceil_mode floor((span + s - 1) / s) + 1, which is one window
// even for a negative span above -s (a kernel longer than the padded input, read partially).
int64_t PoolOut(const char* op, int64_t in, int64_t k, int64_t s, int64_t p, int64_t d,
                bool ceil_mode) {
  const int64_t span = WindowRoom(op, in, k, p, d);
  if (span < 0 && !(ceil_mode && span > -s)) return 0;
  int64_t o = span < 0 ? 1 : span / s + (ceil_mode && span % s != 0 ? 1 : 0) + 1;
  // The last window must start inside the input or its left padding (in + p cannot overflow:
  // in + 2 * p did not).
  int64_t last_start = 0;
  if (ceil_mode && (__builtin_mul_overflow(o - 1, s, &last_start) || last_start >= in + p)) --o;
  return o;
}

// PoolArgs: a pool's per-dim arguments for a 2-D loop (a 1-D pool is a 2-D one with H = 1).
struct PoolArgs {
  int64_t planes = 0;  // N * C
  int64_t in[2] = {1, 1};
  int64_t out[2] = {1, 1};
  int64_t k[2] = {1, 1};
  int64_t s[2] = {1, 1};
  int64_t p[2] = {0, 0};
  int64_t d[2] = {1, 1};
};

PoolArgs MakePoolArgs(const char* op, int64_t n, IntArrayRef input, IntArrayRef out_shape,
                      IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      IntArrayRef dilation) {
  PoolArgs a;
  const int64_t r = static_cast<int64_t>(input.size());
  a.planes = Numel(input.subspan(0, static_cast<size_t>(r - n)));
  const Shape k = PerDim(op, "kernel_size", kernel_size, n);
  const Shape s = stride.empty() ? k : PerDim(op, "stride", stride, n);
  const Shape p = PerDim(op, "padding", padding, n);
  const Shape d = PerDim(op, "dilation", dilation, n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = 2 - n + i;
    a.in[j] = input[static_cast<size_t>(r - n + i)];
    a.out[j] = out_shape[static_cast<size_t>(r - n + i)];
    a.k[j] = k[i];
    a.s[j] = s[i];
    a.p[j] = p[i];
    a.d[j] = d[i];
  }
  return a;
}

std::tuple<Tensor, Tensor> MaxPoolNd(const char* op, int64_t n, const Tensor& input,
                                     IntArrayRef kernel_size, IntArrayRef stride,
                                     IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const Shape out_shape =
      PoolShape(op, n, input.sizes(), kernel_size, stride, padding, dilation, ceil_mode);
  internal::CheckFloating(op, input);
  const PoolArgs a =
      MakePoolArgs(op, n, input.sizes(), out_shape, kernel_size, stride, padding, dilation);
  Tensor out = EmptyContiguous(out_shape, input.dtype());
  Tensor idx = EmptyContiguous(out_shape, kInt64);
  const Tensor x = contiguous(input);
  VisitDType(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T* px = static_cast<const T*>(x.impl()->raw_data());
      T* po = static_cast<T*>(out.impl()->raw_data());
      int64_t* pi = static_cast<int64_t*>(idx.impl()->raw_data());
      const int64_t plane_in = a.in[0] * a.in[1];
      for (int64_t c = 0; c < a.planes; ++c) {
        const T* src = px + c * plane_in;
        for (int64_t oh = 0; oh < a.out[0]; ++oh) {
          for (int64_t ow = 0; ow < a.out[1]; ++ow) {
            T best = -std::numeric_limits<T>::infinity();
            int64_t arg = -1;
            for (int64_t kh = 0; kh < a.k[0]; ++kh) {
              const int64_t ih = oh * a.s[0] - a.p[0] + kh * a.d[0];
              if (ih < 0 || ih >= a.in[0]) continue;
              for (int64_t kw = 0; kw < a.k[1]; ++kw) {
                const int64_t iw = ow * a.s[1] - a.p[1] + kw * a.d[1];
                if (iw < 0 || iw >= a.in[1]) continue;
                const int64_t at = ih * a.in[1] + iw;
                const T v = src[at];
                // NaN wins, and a later NaN replaces an earlier one: torch's
                // `val > maxval || isnan(val)`, so the indices are torch's too.
                if (arg < 0 || v > best || std::isnan(v)) {
                  best = v;
                  arg = at;
                }
              }
            }
            *po++ = best;
            *pi++ = arg;
          }
        }
      }
    }
  });
  return {out, idx};
}

Tensor AvgPoolNd(const char* op, int64_t n, const Tensor& input, IntArrayRef kernel_size,
                 IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                 std::optional<int64_t> divisor_override) {
  const Shape one = {1};
  const Shape out_shape =
      PoolShape(op, n, input.sizes(), kernel_size, stride, padding, one, ceil_mode);
  internal::CheckFloating(op, input);
  if (divisor_override && *divisor_override == 0) {
    ThrowError(op, ": divisor_override must be nonzero");
  }
  const PoolArgs a =
      MakePoolArgs(op, n, input.sizes(), out_shape, kernel_size, stride, padding, one);
  const Tensor div = AvgPoolDivisor(n, input.sizes(), kernel_size, stride, padding, ceil_mode,
                                    count_include_pad, divisor_override);
  const double* pd = static_cast<const double*>(div.impl()->raw_data());
  Tensor out = EmptyContiguous(out_shape, input.dtype());
  const Tensor x = contiguous(input);
  VisitDType(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T* px = static_cast<const T*>(x.impl()->raw_data());
      T* po = static_cast<T*>(out.impl()->raw_data());
      const int64_t plane_in = a.in[0] * a.in[1];
      for (int64_t c = 0; c < a.planes; ++c) {
        const T* src = px + c * plane_in;
        for (int64_t oh = 0; oh < a.out[0]; ++oh) {
          const int64_t h0 = std::max<int64_t>(oh * a.s[0] - a.p[0], 0);
          const int64_t h1 = std::min(oh * a.s[0] - a.p[0] + a.k[0], a.in[0]);
          for (int64_t ow = 0; ow < a.out[1]; ++ow) {
            const int64_t w0 = std::max<int64_t>(ow * a.s[1] - a.p[1], 0);
            const int64_t w1 = std::min(ow * a.s[1] - a.p[1] + a.k[1], a.in[1]);
            T acc = 0;
            for (int64_t ih = h0; ih < h1; ++ih) {
              for (int64_t iw = w0; iw < w1; ++iw) acc += src[ih * a.in[1] + iw];
            }
            *po++ = acc / static_cast<T>(pd[oh * a.out[1] + ow]);
          }
        }
      }
    }
  });
  return out;
}

// AdaptiveStart / AdaptiveEnd: window i of `out` over `in` elements is [floor(i * in / out),
// ceil((i + 1) * in / out)).
int64_t AdaptiveStart(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
int64_t AdaptiveEnd(int64_t i, int64_t in, int64_t out) {
  return ((i + 1) * in + out - 1) / out;
}

std::tuple<Tensor, Tensor> AdaptivePoolNd(const char* op, int64_t n, const Tensor& input,
                                          IntArrayRef output_size, bool max) {
  const Shape out_shape = AdaptivePoolShape(op, n, input.sizes(), output_size);
  internal::CheckFloating(op, input);
  const int64_t r = input.dim();
  int64_t in[2] = {1, 1}, os[2] = {1, 1};
  for (int64_t i = 0; i < n; ++i) {
    in[2 - n + i] = input.size(r - n + i);
    os[2 - n + i] = out_shape[static_cast<size_t>(r - n + i)];
  }
  const int64_t planes = Numel(input.sizes().subspan(0, static_cast<size_t>(r - n)));
  Tensor out = EmptyContiguous(out_shape, input.dtype());
  Tensor idx = max ? EmptyContiguous(out_shape, kInt64) : Tensor();
  const Tensor x = contiguous(input);
  VisitDType(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T* px = static_cast<const T*>(x.impl()->raw_data());
      T* po = static_cast<T*>(out.impl()->raw_data());
      int64_t* pi = max ? static_cast<int64_t*>(idx.impl()->raw_data()) : nullptr;
      for (int64_t c = 0; c < planes; ++c) {
        const T* src = px + c * in[0] * in[1];
        for (int64_t oh = 0; oh < os[0]; ++oh) {
          const int64_t h0 = AdaptiveStart(oh, in[0], os[0]), h1 = AdaptiveEnd(oh, in[0], os[0]);
          for (int64_t ow = 0; ow < os[1]; ++ow) {
            const int64_t w0 = AdaptiveStart(ow, in[1], os[1]);
            const int64_t w1 = AdaptiveEnd(ow, in[1], os[1]);
            if (max) {
              T best = src[h0 * in[1] + w0];
              int64_t arg = h0 * in[1] + w0;
              for (int64_t ih = h0; ih < h1; ++ih) {
                for (int64_t iw = w0; iw < w1; ++iw) {
                  const T v = src[ih * in[1] + iw];
                  if (v > best || std::isnan(v)) {  // as max pooling, like torch
                    best = v;
                    arg = ih * in[1] + iw;
                  }
                }
              }
              *po++ = best;
              *pi++ = arg;
            } else {
              T acc = 0;
              for (int64_t ih = h0; ih < h1; ++ih) {
                for (int64_t iw = w0; iw < w1; ++iw) acc += src[ih * in[1] + iw];
              }
              *po++ = acc / static_cast<T>((h1 - h0) * (w1 - w0));
            }
          }
        }
      }
    }
  });
  return {out, idx};
}

}  // namespace

// ---- Shapes. ----

Shape PoolShape(const char* op, int64_t n, IntArrayRef input, IntArrayRef kernel_size,
                IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  CheckInputRank(op, n, input);
  const Shape k = PerDim(op, "kernel_size", kernel_size, n);
  const Shape s = stride.empty() ? k : PerDim(op, "stride", stride, n);
  const Shape p = PerDim(op, "padding", padding, n);
  const Shape d = PerDim(op, "dilation", dilation, n);
  CheckPositive(op, "kernel_size", k);
  CheckPositive(op, "stride", s);
  CheckNonNegative(op, "padding", p);
  CheckPositive(op, "dilation", d);
  Shape out(input.begin(), input.end() - n);
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] > k[i] / 2) {
      ThrowError(op, ": padding ", ShapeToString(p), " must be at most half of kernel_size ",
                 ShapeToString(k));
    }
    const int64_t in = input[input.size() - n + i];
    if (in <= 0) {  // torch's rule: padding alone is no window
      ThrowError(op, ": expected non-empty spatial dims, got input ", ShapeToString(input));
    }
    const int64_t o = PoolOut(op, in, k[i], s[i], p[i], d[i], ceil_mode);
    if (o <= 0) {
      ThrowError(op, ": input ", ShapeToString(input), " is too small for kernel_size ",
                 ShapeToString(k), " with padding ", ShapeToString(p), " and dilation ",
                 ShapeToString(d), " (no window fits in spatial dim ", i, ")");
    }
    out.push_back(o);
  }
  return out;
}

Shape AdaptivePoolShape(const char* op, int64_t n, IntArrayRef input, IntArrayRef output_size) {
  CheckInputRank(op, n, input);
  const Shape o = PerDim(op, "output_size", output_size, n);
  CheckNonNegative(op, "output_size", o);
  Shape out(input.begin(), input.end() - n);
  for (int64_t i = 0; i < n; ++i) {
    if (input[input.size() - n + i] <= 0) {
      ThrowError(op, ": expected non-empty spatial dims, got input ", ShapeToString(input));
    }
    out.push_back(o[i]);
  }
  return out;
}

// ---- Kernels. ----

Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(
      MaxPoolNd("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode));
}
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(
      MaxPoolNd("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode));
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  return MaxPoolNd("max_pool1d_with_indices", 1, input, kernel_size, stride, padding, dilation,
                   ceil_mode);
}
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  return MaxPoolNd("max_pool2d_with_indices", 2, input, kernel_size, stride, padding, dilation,
                   ceil_mode);
}

Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad) {
  return AvgPoolNd("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                   count_include_pad, std::nullopt);
}
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  return AvgPoolNd("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                   count_include_pad, divisor_override);
}

Tensor AvgPoolDivisor(int64_t n, IntArrayRef input, IntArrayRef kernel_size, IntArrayRef stride,
                      IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override) {
  const char* op = n == 1 ? "avg_pool1d" : "avg_pool2d";
  const Shape one = {1};
  const Shape out_shape =
      PoolShape(op, n, input, kernel_size, stride, padding, one, ceil_mode);
  const PoolArgs a = MakePoolArgs(op, n, input, out_shape, kernel_size, stride, padding, one);
  Tensor div = EmptyContiguous({a.out[0], a.out[1]}, kFloat64);
  double* pd = static_cast<double*>(div.impl()->raw_data());
  for (int64_t oh = 0; oh < a.out[0]; ++oh) {
    const int64_t hs = oh * a.s[0] - a.p[0];
    const int64_t he = std::min(hs + a.k[0], a.in[0] + a.p[0]);
    const int64_t h0 = std::max<int64_t>(hs, 0), h1 = std::min(he, a.in[0]);
    for (int64_t ow = 0; ow < a.out[1]; ++ow) {
      const int64_t ws = ow * a.s[1] - a.p[1];
      const int64_t we = std::min(ws + a.k[1], a.in[1] + a.p[1]);
      const int64_t w0 = std::max<int64_t>(ws, 0), w1 = std::min(we, a.in[1]);
      int64_t count = count_include_pad ? (he - hs) * (we - ws) : (h1 - h0) * (w1 - w0);
      if (divisor_override) count = *divisor_override;
      *pd++ = static_cast<double>(count == 0 ? 1 : count);  // an empty window sums to 0
    }
  }
  return div;
}

Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size) {
  return std::get<0>(AdaptivePoolNd("adaptive_avg_pool1d", 1, input, output_size, false));
}
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  return std::get<0>(AdaptivePoolNd("adaptive_avg_pool2d", 2, input, output_size, false));
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  return AdaptivePoolNd("adaptive_max_pool2d", 2, input, output_size, true);
}

Tensor AdaptivePoolMatrix(int64_t in, int64_t out) {
  Tensor m = EmptyContiguous({out, in}, kFloat64);
  double* p = static_cast<double*>(m.impl()->raw_data());
  std::fill(p, p + out * in, 0.0);
  for (int64_t i = 0; i < out; ++i) {
    const int64_t s = AdaptiveStart(i, in, out), e = AdaptiveEnd(i, in, out);
    for (int64_t j = s; j < e; ++j) p[i * in + j] = 1.0 / static_cast<double>(e - s);
  }
  return m;
}

}  // namespace ft::kernels

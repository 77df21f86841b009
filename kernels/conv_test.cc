// Tests of kernels/conv.h called directly on dense tensors: conv1d/2d/3d,
// conv_transpose1d/2d/3d, conv_weight_grad, unfold, fold and the *Shape checks (output sizes
// and every documented error). The oracle is a set of direct nested loops over each op's
// definition in double (ConvLoop, ConvTransposeLoop, WeightGradLoop, UnfoldLoop, FoldLoop),
// reading the inputs' to_vector<double>() values, plus small closed forms worked out by hand
// and the adjoint identities <conv(x), y> == <x, conv_transpose(y)> and
// <unfold(x), y> == <x, fold(y)> in float64. The float32 convolutions are checked on both
// backends of cpu/onednn_conv.h (im2col and oneDNN) against the same loops.
#include "kernels/conv.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cpu/onednn_conv.h"
#include "gtest/gtest.h"
#include "kernels/test_helpers.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::ForEachIndex;
using ::ft::testing::NumelOf;
using ::ft::testing::Rand;
using ::ft::testing::Ravel;
using internal::onednn::ConvBackend;
using Vec = std::vector<double>;

// ---- Helpers. ----

// ScopedConvBackend forces the float32 convolution backend for a scope and restores the
// previous one afterwards.
class ScopedConvBackend {
 public:
  explicit ScopedConvBackend(ConvBackend b) : previous_(internal::onednn::GetConvBackend()) {
    internal::onednn::SetConvBackend(b);
  }
  ~ScopedConvBackend() { internal::onednn::SetConvBackend(previous_); }
  ScopedConvBackend(const ScopedConvBackend&) = delete;
  ScopedConvBackend& operator=(const ScopedConvBackend&) = delete;

 private:
  ConvBackend previous_;
};

bool RanOnOneDnn() { return *internal::onednn::LastImplementation() != '\0'; }

const char* BackendName(ConvBackend b) {
  return b == ConvBackend::kOneDnn ? "onednn" : b == ConvBackend::kIm2Col ? "im2col" : "auto";
}

// Make: the oracle's float64 values as a tensor of `shape` and dtype `dt`.
Tensor Make(const Vec& v, const Shape& shape, DType dt) { return to(tensor(v, shape), dt); }

double Dot(const Tensor& a, const Tensor& b) {
  const Vec x = a.to_vector<double>(), y = b.to_vector<double>();
  EXPECT_EQ(x.size(), y.size());
  double s = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) s += x[i] * y[i];
  return s;
}

Shape Spatial(const Tensor& t, int64_t n) {
  return Shape(t.sizes().end() - n, t.sizes().end());
}

// ---- Oracles: the definitions as direct loops in double. ----

// ConvLoop: y[b, o, q] = bias[o] + sum_{c, k} w[o, c, k] * x[b, g * Cg + c, q * s - p + k * d]
// (g = o's group; positions outside the input are zero padding). x is batched ([N, C, sp])
// or unbatched ([C, sp]); the result has the same form and x's dtype.
Tensor ConvLoop(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias, int64_t n,
                const Shape& s, const Shape& p, const Shape& d, int64_t groups) {
  const bool batched = x.dim() == n + 2;
  const Vec xv = x.to_vector<double>(), wv = w.to_vector<double>();
  const Vec bv = bias ? bias->to_vector<double>() : Vec();
  const int64_t N = batched ? x.size(0) : 1, C = x.size(batched ? 1 : 0), O = w.size(0);
  const int64_t Cg = C / groups, Og = O / groups;
  const Shape in = Spatial(x, n), k = Spatial(w, n);
  Shape out(static_cast<size_t>(n));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = (in[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
  }
  const int64_t I = NumelOf(in), K = NumelOf(k), L = NumelOf(out);
  Vec y(static_cast<size_t>(N * O * L), 0.0);
  for (int64_t b = 0; b < N; ++b) {
    for (int64_t o = 0; o < O; ++o) {
      const int64_t g = o / Og;
      ForEachIndex(out, [&](const Shape& q) {
        double acc = bias ? bv[static_cast<size_t>(o)] : 0.0;
        for (int64_t c = 0; c < Cg; ++c) {
          ForEachIndex(k, [&](const Shape& kk) {
            int64_t at = 0;
            for (size_t i = 0; i < in.size(); ++i) {
              const int64_t pos = q[i] * s[i] - p[i] + kk[i] * d[i];
              if (pos < 0 || pos >= in[i]) return;
              at = at * in[i] + pos;
            }
            acc += wv[static_cast<size_t>((o * Cg + c) * K + Ravel(kk, k))] *
                   xv[static_cast<size_t>((b * C + g * Cg + c) * I + at)];
          });
        }
        y[static_cast<size_t>((b * O + o) * L + Ravel(q, out))] = acc;
      });
    }
  }
  Shape shape;
  if (batched) shape.push_back(N);
  shape.push_back(O);
  shape.insert(shape.end(), out.begin(), out.end());
  return Make(y, shape, x.dtype());
}

// ConvTransposeLoop: every input element x[b, ci, q] adds x * w[ci, oc, k] to
// y[b, g * Og + oc, q * s - p + k * d] (positions outside the output are dropped); the output
// has (in - 1) * s - 2 * p + d * (k - 1) + output_padding + 1 positions per dim.
Tensor ConvTransposeLoop(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                         int64_t n, const Shape& s, const Shape& p, const Shape& op,
                         const Shape& d, int64_t groups) {
  const bool batched = x.dim() == n + 2;
  const Vec xv = x.to_vector<double>(), wv = w.to_vector<double>();
  const Vec bv = bias ? bias->to_vector<double>() : Vec();
  const int64_t N = batched ? x.size(0) : 1, Cin = x.size(batched ? 1 : 0);
  const int64_t Og = w.size(1), O = Og * groups, Cg = Cin / groups;
  const Shape in = Spatial(x, n), k = Spatial(w, n);
  Shape out(static_cast<size_t>(n));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = (in[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1;
  }
  const int64_t I = NumelOf(in), K = NumelOf(k), L = NumelOf(out);
  Vec y(static_cast<size_t>(N * O * L), 0.0);
  for (int64_t b = 0; b < N; ++b) {
    for (int64_t o = 0; o < O; ++o) {
      for (int64_t l = 0; l < L; ++l) {
        y[static_cast<size_t>((b * O + o) * L + l)] = bias ? bv[static_cast<size_t>(o)] : 0.0;
      }
    }
    for (int64_t ci = 0; ci < Cin; ++ci) {
      const int64_t g = ci / Cg;
      ForEachIndex(in, [&](const Shape& q) {
        const double xval = xv[static_cast<size_t>((b * Cin + ci) * I + Ravel(q, in))];
        for (int64_t oc = 0; oc < Og; ++oc) {
          ForEachIndex(k, [&](const Shape& kk) {
            int64_t at = 0;
            for (size_t i = 0; i < in.size(); ++i) {
              const int64_t pos = q[i] * s[i] - p[i] + kk[i] * d[i];
              if (pos < 0 || pos >= out[i]) return;
              at = at * out[i] + pos;
            }
            y[static_cast<size_t>((b * O + g * Og + oc) * L + at)] +=
                xval * wv[static_cast<size_t>((ci * Og + oc) * K + Ravel(kk, k))];
          });
        }
      });
    }
  }
  Shape shape;
  if (batched) shape.push_back(N);
  shape.push_back(O);
  shape.insert(shape.end(), out.begin(), out.end());
  return Make(y, shape, x.dtype());
}

// WeightGradLoop: dw[o, c, k] = sum_{b, q} gy[b, o, q] * x[b, g * Cg + c, q * s - p + k * d].
Tensor WeightGradLoop(const Tensor& x, const Shape& weight_size, const Tensor& gy,
                      const Shape& s, const Shape& p, const Shape& d, int64_t groups) {
  const int64_t n = static_cast<int64_t>(weight_size.size()) - 2;
  const bool batched = x.dim() == n + 2;
  const Vec xv = x.to_vector<double>(), gv = gy.to_vector<double>();
  const int64_t N = batched ? x.size(0) : 1, C = x.size(batched ? 1 : 0);
  const int64_t O = weight_size[0], Cg = weight_size[1], Og = O / groups;
  const Shape in = Spatial(x, n), out = Spatial(gy, n);
  const Shape k(weight_size.begin() + 2, weight_size.end());
  const int64_t I = NumelOf(in), K = NumelOf(k), L = NumelOf(out);
  Vec dw(static_cast<size_t>(O * Cg * K), 0.0);
  for (int64_t o = 0; o < O; ++o) {
    const int64_t g = o / Og;
    for (int64_t c = 0; c < Cg; ++c) {
      ForEachIndex(k, [&](const Shape& kk) {
        double acc = 0;
        for (int64_t b = 0; b < N; ++b) {
          ForEachIndex(out, [&](const Shape& q) {
            int64_t at = 0;
            for (size_t i = 0; i < in.size(); ++i) {
              const int64_t pos = q[i] * s[i] - p[i] + kk[i] * d[i];
              if (pos < 0 || pos >= in[i]) return;
              at = at * in[i] + pos;
            }
            acc += gv[static_cast<size_t>((b * O + o) * L + Ravel(q, out))] *
                   xv[static_cast<size_t>((b * C + g * Cg + c) * I + at)];
          });
        }
        dw[static_cast<size_t>((o * Cg + c) * K + Ravel(kk, k))] = acc;
      });
    }
  }
  return Make(dw, weight_size, x.dtype());
}

// UnfoldLoop: cols[b, (c * k0 + a) * k1 + e, i * B1 + j] = x[b, c, i * s0 - p0 + a * d0,
// j * s1 - p1 + e * d1] (zero outside); B0 x B1 sliding blocks.
Tensor UnfoldLoop(const Tensor& x, const Shape& k, const Shape& d, const Shape& p,
                  const Shape& s) {
  const bool batched = x.dim() == 4;
  const Vec xv = x.to_vector<double>();
  const int64_t N = batched ? x.size(0) : 1, C = x.size(-3), H = x.size(-2), W = x.size(-1);
  const int64_t B0 = (H + 2 * p[0] - d[0] * (k[0] - 1) - 1) / s[0] + 1;
  const int64_t B1 = (W + 2 * p[1] - d[1] * (k[1] - 1) - 1) / s[1] + 1;
  const int64_t R = C * k[0] * k[1], L = B0 * B1;
  Vec cols(static_cast<size_t>(N * R * L), 0.0);
  for (int64_t b = 0; b < N; ++b) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t a = 0; a < k[0]; ++a) {
        for (int64_t e = 0; e < k[1]; ++e) {
          for (int64_t i = 0; i < B0; ++i) {
            for (int64_t j = 0; j < B1; ++j) {
              const int64_t h = i * s[0] - p[0] + a * d[0], w = j * s[1] - p[1] + e * d[1];
              if (h < 0 || h >= H || w < 0 || w >= W) continue;
              cols[static_cast<size_t>((b * R + (c * k[0] + a) * k[1] + e) * L + i * B1 + j)] =
                  xv[static_cast<size_t>(((b * C + c) * H + h) * W + w)];
            }
          }
        }
      }
    }
  }
  Shape shape;
  if (batched) shape.push_back(N);
  shape.push_back(R);
  shape.push_back(L);
  return Make(cols, shape, x.dtype());
}

// FoldLoop: the sum over blocks and kernel offsets of cols at the positions unfold reads.
Tensor FoldLoop(const Tensor& cols, const Shape& os, const Shape& k, const Shape& d,
                const Shape& p, const Shape& s) {
  const bool batched = cols.dim() == 3;
  const Vec cv = cols.to_vector<double>();
  const int64_t N = batched ? cols.size(0) : 1, R = cols.size(-2), L = cols.size(-1);
  const int64_t C = R / (k[0] * k[1]), H = os[0], W = os[1];
  const int64_t B0 = (H + 2 * p[0] - d[0] * (k[0] - 1) - 1) / s[0] + 1;
  const int64_t B1 = (W + 2 * p[1] - d[1] * (k[1] - 1) - 1) / s[1] + 1;
  EXPECT_EQ(B0 * B1, L);
  Vec img(static_cast<size_t>(N * C * H * W), 0.0);
  for (int64_t b = 0; b < N; ++b) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t a = 0; a < k[0]; ++a) {
        for (int64_t e = 0; e < k[1]; ++e) {
          for (int64_t i = 0; i < B0; ++i) {
            for (int64_t j = 0; j < B1; ++j) {
              const int64_t h = i * s[0] - p[0] + a * d[0], w = j * s[1] - p[1] + e * d[1];
              if (h < 0 || h >= H || w < 0 || w >= W) continue;
              img[static_cast<size_t>(((b * C + c) * H + h) * W + w)] +=
                  cv[static_cast<size_t>((b * R + (c * k[0] + a) * k[1] + e) * L + i * B1 + j)];
            }
          }
        }
      }
    }
  }
  Shape shape;
  if (batched) shape.push_back(N);
  shape.insert(shape.end(), {C, H, W});
  return Make(img, shape, cols.dtype());
}

// ---- Random problems. ----

struct ConvCase {
  int64_t n = 2, batch = 1, groups = 1, cg = 1, og = 1;
  bool batched = true, bias = false;
  Shape image, kernel, stride, padding, dilation, output_padding;

  Shape InputShape() const {  // conv's input, or conv_transpose's input when `transposed`
    Shape s;
    if (batched) s.push_back(batch);
    s.push_back(groups * cg);
    s.insert(s.end(), image.begin(), image.end());
    return s;
  }
  Shape WeightShape() const {  // conv: [O, C / groups, k...]
    Shape s = {groups * og, cg};
    s.insert(s.end(), kernel.begin(), kernel.end());
    return s;
  }
  Shape TransposeWeightShape() const {  // conv_transpose: [C_in, C_out / groups, k...]
    Shape s = {groups * cg, og};
    s.insert(s.end(), kernel.begin(), kernel.end());
    return s;
  }
  int64_t Terms() const { return cg * NumelOf(kernel) + 1; }
  std::string Describe() const {
    return "n=" + std::to_string(n) + " N=" + std::to_string(batch) +
           " groups=" + std::to_string(groups) + " C/g=" + std::to_string(cg) +
           " O/g=" + std::to_string(og) + " image=" + ShapeToString(image) +
           " k=" + ShapeToString(kernel) + " s=" + ShapeToString(stride) +
           " p=" + ShapeToString(padding) + " d=" + ShapeToString(dilation) +
           " op=" + ShapeToString(output_padding) + (batched ? "" : " unbatched") +
           (bias ? " bias" : "");
  }
};

// DrawConvCase: a valid problem of n spatial dims: strides, paddings and dilations that need
// not divide the input (so torch's floor may leave trailing input unread), groups and
// depthwise, unbatched inputs, output_padding below stride or dilation.
ConvCase DrawConvCase(int64_t n, std::mt19937& rng) {
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  ConvCase c;
  c.n = n;
  c.batch = pick(1, 2);
  c.batched = pick(0, 3) != 0;
  c.groups = pick(1, 3);
  c.cg = pick(1, 3);
  c.og = pick(1, 3);
  if (pick(0, 4) == 0) {  // depthwise
    c.groups = pick(2, 4);
    c.cg = 1;
  }
  c.bias = pick(0, 1) == 1;
  for (int64_t i = 0; i < n; ++i) {
    c.kernel.push_back(pick(1, n == 3 ? 2 : 3));
    c.stride.push_back(pick(1, 3));
    c.dilation.push_back(pick(1, 2));
    c.padding.push_back(pick(0, 2));
    const int64_t extent = c.dilation[i] * (c.kernel[i] - 1) + 1;
    c.image.push_back(std::max<int64_t>(1, extent - 2 * c.padding[i] + pick(0, n == 3 ? 2 : 4)));
    c.output_padding.push_back(pick(0, std::max(c.stride[i], c.dilation[i]) - 1));
  }
  return c;
}

Tensor Conv(int64_t n, const Tensor& x, const Tensor& w, const std::optional<Tensor>& b,
            IntArrayRef s, IntArrayRef p, IntArrayRef d, int64_t groups) {
  if (n == 1) return conv1d(x, w, b, s, p, d, groups);
  if (n == 2) return conv2d(x, w, b, s, p, d, groups);
  return conv3d(x, w, b, s, p, d, groups);
}

Tensor ConvT(int64_t n, const Tensor& x, const Tensor& w, const std::optional<Tensor>& b,
             IntArrayRef s, IntArrayRef p, IntArrayRef op, int64_t groups, IntArrayRef d) {
  if (n == 1) return conv_transpose1d(x, w, b, s, p, op, groups, d);
  if (n == 2) return conv_transpose2d(x, w, b, s, p, op, groups, d);
  return conv_transpose3d(x, w, b, s, p, op, groups, d);
}

// FloatTol: float32 rounding of sums of `terms` products of values in [-1, 1].
double FloatTol(int64_t terms) { return 4e-6 * static_cast<double>(terms) + 1e-6; }

constexpr ConvBackend kBackends[] = {ConvBackend::kIm2Col, ConvBackend::kOneDnn};

// ---- Shapes. ----

TEST(ConvShapeTest, GivesTheOutputSizesOfTheDefinition) {
  // H: (9 + 2 - 2 * 2 - 1) / 2 + 1 = 4; W: (9 + 0 - 1 * 1 - 1) / 3 + 1 = 3 (the floor
  // leaves the last column unread).
  EXPECT_EQ(ConvShape("conv2d", 2, {2, 4, 9, 9}, {6, 2, 3, 2}, Shape{6}, {2, 3}, {1, 0}, {2, 1},
                      2),
            (Shape{2, 6, 4, 3}));
  EXPECT_EQ(ConvShape("conv2d", 2, {4, 9, 9}, {6, 2, 3, 2}, std::nullopt, {2, 3}, {1, 0},
                      {2, 1}, 2),
            (Shape{6, 4, 3}));
  // One value repeats over the spatial dims; an empty batch stays empty.
  EXPECT_EQ(ConvShape("conv3d", 3, {0, 2, 5, 6, 7}, {3, 2, 3, 3, 3}, std::nullopt, {2}, {1},
                      {1}, 1),
            (Shape{0, 3, 3, 3, 4}));
  // conv1d: 7 - 2 = 5, stride 2: 3 windows (the last input element is never read).
  EXPECT_EQ(ConvShape("conv1d", 1, {1, 1, 7}, {1, 1, 2}, std::nullopt, {2}, {0}, {1}, 1),
            (Shape{1, 1, 3}));
  // A kernel exactly as large as the padded input: one window.
  EXPECT_EQ(ConvShape("conv1d", 1, {3, 1}, {5, 3, 3}, std::nullopt, {4}, {1}, {1}, 1),
            (Shape{5, 1}));
}

TEST(ConvShapeTest, Errors) {
  const Shape x = {2, 4, 6, 6}, w = {6, 2, 3, 3};
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, {4, 6}, w, std::nullopt, {1}, {0}, {1}, 2),
                  "conv2d: expected a 3-D (unbatched) or 4-D (batched) input, got shape [4, 6]");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, {6, 2, 3}, std::nullopt, {1}, {0}, {1}, 2),
                  "conv2d: expected a 4-D weight [out_channels, in_channels / groups, "
                  "kernel...], got shape [6, 2, 3]");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, w, std::nullopt, {1, 1, 1}, {0}, {1}, 2),
                  "conv2d: stride must have 1 or 2 values, got [1, 1, 1]");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, w, std::nullopt, {1}, {}, {1}, 2),
                  "conv2d: padding must have 1 or 2 values, got []");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, w, std::nullopt, {1}, {0}, {1, 1, 1}, 2),
                  "conv2d: dilation must have 1 or 2 values");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, w, std::nullopt, {1, 0}, {0}, {1}, 2),
                  "conv2d: stride must be positive, got [1, 0]");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, w, std::nullopt, {1}, {0, -1}, {1}, 2),
                  "conv2d: padding must be non-negative, got [0, -1]");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, w, std::nullopt, {1}, {0}, {0}, 2),
                  "conv2d: dilation must be positive, got [0, 0]");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, w, std::nullopt, {1}, {0}, {1}, 0),
                  "conv2d: groups must be positive, got 0");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, {5, 2, 3, 3}, std::nullopt, {1}, {0}, {1}, 2),
                  "conv2d: out channels 5 (weight [5, 2, 3, 3]) must be divisible by groups 2");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, w, std::nullopt, {1}, {0}, {1}, 1),
                  "conv2d: weight [6, 2, 3, 3] with groups 1 expects 2 input channels, but the "
                  "input [2, 4, 6, 6] has 4");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, w, Shape{5}, {1}, {0}, {1}, 2),
                  "conv2d: expected a bias of shape [6], got [5]");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, w, Shape{6, 1}, {1}, {0}, {1}, 2),
                  "conv2d: expected a bias of shape [6], got [6, 1]");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, {6, 2, 3, 0}, std::nullopt, {1}, {0}, {1}, 2),
                  "conv2d: kernel sizes must be positive, got weight [6, 2, 3, 0]");
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, w, std::nullopt, {1}, {0}, {1, 3}, 2),
                  "conv2d: input [2, 4, 6, 6] padded by [0, 0] is smaller than the dilated "
                  "kernel (dilation 3 in spatial dim 1");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_FT_ERROR(ConvShape("conv2d", 2, x, w, std::nullopt, {1}, {0}, {kMax}, 2),
                  "conv2d: kernel size 3 with dilation");
  EXPECT_FT_ERROR(ConvShape("conv3d", 3, {4, 6, 6}, {6, 2, 3, 3, 3}, std::nullopt, {1}, {0}, {1},
                            2),
                  "conv3d: expected a 4-D (unbatched) or 5-D (batched) input");
}

TEST(ConvShapeTest, TransposeGivesTheOutputSizesOfTheDefinition) {
  // (in - 1) * s - 2p + d (k - 1) + output_padding + 1: H (3 - 1) * 2 - 2 + 1 * 2 + 1 + 1 = 6;
  // W (4 - 1) * 1 - 0 + 2 * 1 + 0 + 1 = 6; out channels weight[1] * groups = 6.
  EXPECT_EQ(ConvTransposeShape("conv_transpose2d", 2, {2, 4, 3, 4}, {4, 3, 3, 2}, Shape{6},
                               {2, 1}, {1, 0}, {1, 0}, 2, {1, 2}),
            (Shape{2, 6, 6, 6}));
  EXPECT_EQ(ConvTransposeShape("conv_transpose1d", 1, {4, 3}, {4, 1, 3}, std::nullopt, {2},
                               {1}, {1}, 1, {1}),
            (Shape{1, 6}));
  EXPECT_EQ(ConvTransposeShape("conv_transpose3d", 3, {0, 2, 1, 2, 3}, {2, 2, 1, 2, 3},
                               std::nullopt, {1}, {0}, {0}, 1, {1}),
            (Shape{0, 2, 1, 3, 5}));
}

TEST(ConvShapeTest, TransposeErrors) {
  const Shape x = {2, 4, 6, 6};
  const char* op = "conv_transpose2d";
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, {4, 6}, {4, 2, 3, 3}, std::nullopt, {1}, {0}, {0},
                                     1, {1}),
                  "conv_transpose2d: expected a 3-D (unbatched) or 4-D (batched) input");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3}, std::nullopt, {1}, {0}, {0}, 1, {1}),
                  "conv_transpose2d: expected a 4-D weight [in_channels, out_channels / groups, "
                  "kernel...], got shape [4, 2, 3]");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, std::nullopt, {1}, {0}, {0, 0, 0},
                                     1, {1}),
                  "conv_transpose2d: output_padding must have 1 or 2 values, got [0, 0, 0]");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, std::nullopt, {0}, {0}, {0}, 1, {1}),
                  "conv_transpose2d: stride must be positive");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, std::nullopt, {1}, {-1}, {0}, 1,
                                     {1}),
                  "conv_transpose2d: padding must be non-negative");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, std::nullopt, {1}, {0}, {-1}, 1,
                                     {1}),
                  "conv_transpose2d: output_padding must be non-negative, got [-1, -1]");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, std::nullopt, {1}, {0}, {0}, 1,
                                     {0}),
                  "conv_transpose2d: dilation must be positive");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, std::nullopt, {1}, {0}, {0}, -1,
                                     {1}),
                  "conv_transpose2d: groups must be positive, got -1");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {3, 2, 3, 3}, std::nullopt, {1}, {0}, {0}, 1,
                                     {1}),
                  "conv_transpose2d: weight [3, 2, 3, 3] expects 3 input channels, but the "
                  "input [2, 4, 6, 6] has 4");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, std::nullopt, {1}, {0}, {0}, 3,
                                     {1}),
                  "conv_transpose2d: input channels 4 (input [2, 4, 6, 6]) must be divisible by "
                  "groups 3");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, Shape{2}, {1}, {0}, {0}, 2, {1}),
                  "conv_transpose2d: expected a bias of shape [4], got [2]");
  // output_padding must be below stride OR dilation: 1 < dilation 2 is fine, 2 is not.
  EXPECT_EQ(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, std::nullopt, {1}, {0}, {1}, 1, {2}),
            (Shape{2, 2, 11, 11}));
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, std::nullopt, {2}, {0}, {2}, 1,
                                     {2}),
                  "conv_transpose2d: output_padding [2, 2] must be smaller than either stride "
                  "[2, 2] or dilation [2, 2]");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 0, 3}, std::nullopt, {1}, {0}, {0}, 1,
                                     {1}),
                  "conv_transpose2d: kernel sizes must be positive, got weight [4, 2, 0, 3]");
  // (6 - 1) - 2 * 5 + 2 + 1 = -2.
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, std::nullopt, {1}, {5}, {0}, 1,
                                     {1}),
                  "conv_transpose2d: the output size -2 in spatial dim 0 of input [2, 4, 6, 6] "
                  "with weight [4, 2, 3, 3] and padding [5, 5] is too small");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, {2, 4, 0, 6}, {4, 2, 3, 3}, std::nullopt, {1}, {0},
                                     {0}, 1, {1}),
                  "is too small");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, std::nullopt, {kMax}, {0}, {0}, 1,
                                     {1}),
                  "conv_transpose2d: the output size in spatial dim 0 of input [2, 4, 6, 6] with "
                  "weight [4, 2, 3, 3]");
  EXPECT_FT_ERROR(ConvTransposeShape(op, 2, x, {4, 2, 3, 3}, std::nullopt, {1}, {0}, {0}, 1,
                                     {kMax}),
                  "overflows int64");
}

TEST(ConvShapeTest, WeightGradShapeIsTheWeightSize) {
  EXPECT_EQ(ConvWeightGradShape({2, 4, 6, 6}, {6, 2, 3, 3}, {2, 6, 4, 4}, {1}, {0}, {1}, 2),
            (Shape{6, 2, 3, 3}));
  EXPECT_EQ(ConvWeightGradShape({4, 7}, {3, 4, 2}, {3, 3}, {3}, {1}, {2}, 1), (Shape{3, 4, 2}));
}

TEST(ConvShapeTest, WeightGradErrors) {
  EXPECT_FT_ERROR(ConvWeightGradShape({1, 2, 5, 5}, {3, 2}, {1, 3, 5, 5}, {1}, {0}, {1}, 1),
                  "conv_weight_grad: weight_size must be [out_channels, in_channels / groups, "
                  "kernel...] with 1 to 3 kernel dims, got [3, 2]");
  EXPECT_FT_ERROR(ConvWeightGradShape({1, 2, 5, 5, 5, 5}, {3, 2, 1, 1, 1, 1}, {1, 3, 5, 5, 5, 5},
                                      {1}, {0}, {1}, 1),
                  "with 1 to 3 kernel dims, got [3, 2, 1, 1, 1, 1]");
  EXPECT_FT_ERROR(ConvWeightGradShape({1, 2, 5, 5}, {3, 2, 0, 3}, {1, 3, 5, 5}, {1}, {0}, {1}, 1),
                  "conv_weight_grad: weight_size must be positive, got [3, 2, 0, 3]");
  EXPECT_FT_ERROR(ConvWeightGradShape({1, 2, 5, 5}, {3, 1, 3, 3}, {1, 3, 3, 3}, {1}, {0}, {1}, 1),
                  "conv_weight_grad: weight [3, 1, 3, 3] with groups 1 expects 1 input "
                  "channels, but the input [1, 2, 5, 5] has 2");
  EXPECT_FT_ERROR(ConvWeightGradShape({1, 2, 5, 5}, {3, 2, 3, 3}, {1, 3, 2, 3}, {1}, {0}, {1}, 1),
                  "conv_weight_grad: expected grad_output of shape [1, 3, 3, 3] (input "
                  "[1, 2, 5, 5], weight_size [3, 2, 3, 3]), got [1, 3, 2, 3]");
  EXPECT_FT_ERROR(ConvWeightGradShape({1, 2, 5, 5}, {3, 2, 3, 3}, {1, 3, 3, 3}, {0}, {0}, {1}, 1),
                  "conv_weight_grad: stride must be positive");
}

TEST(ConvShapeTest, UnfoldAndFoldShapes) {
  // Blocks: H (5 + 2 - 1 * 1 - 1) / 2 + 1 = 3, W (6 + 2 - 2 * 2 - 1) / 1 + 1 = 4.
  EXPECT_EQ(UnfoldShape({2, 3, 5, 6}, {2, 3}, {1, 2}, {1}, {2, 1}), (Shape{2, 18, 12}));
  EXPECT_EQ(UnfoldShape({3, 5, 6}, {2, 3}, {1, 2}, {1}, {2, 1}), (Shape{18, 12}));
  EXPECT_EQ(FoldShape({2, 18, 12}, {5, 6}, {2, 3}, {1, 2}, {1}, {2, 1}), (Shape{2, 3, 5, 6}));
  EXPECT_EQ(FoldShape({18, 12}, {5, 6}, {2, 3}, {1, 2}, {1}, {2, 1}), (Shape{3, 5, 6}));
  EXPECT_EQ(UnfoldShape({0, 2, 4, 4}, {2}, {1}, {0}, {1}), (Shape{0, 8, 9}));
}

TEST(ConvShapeTest, UnfoldAndFoldErrors) {
  EXPECT_FT_ERROR(UnfoldShape({4, 6}, {2}, {1}, {0}, {1}),
                  "unfold: expected a 3-D (unbatched) or 4-D (batched) input, got shape [4, 6]");
  EXPECT_FT_ERROR(UnfoldShape({1, 4, 6, 6}, {2, 2, 2}, {1}, {0}, {1}),
                  "unfold: kernel_size must have 1 or 2 values, got [2, 2, 2]");
  EXPECT_FT_ERROR(UnfoldShape({1, 4, 6, 6}, {0}, {1}, {0}, {1}),
                  "unfold: kernel_size must be positive, got [0, 0]");
  EXPECT_FT_ERROR(UnfoldShape({1, 4, 6, 6}, {2}, {0}, {0}, {1}),
                  "unfold: dilation must be positive");
  EXPECT_FT_ERROR(UnfoldShape({1, 4, 6, 6}, {2}, {1}, {-1}, {1}),
                  "unfold: padding must be non-negative");
  EXPECT_FT_ERROR(UnfoldShape({1, 4, 6, 6}, {2}, {1}, {0}, {0}),
                  "unfold: stride must be positive");
  EXPECT_FT_ERROR(UnfoldShape({1, 4, 6, 6}, {7}, {1}, {0}, {1}),
                  "unfold: spatial size [6, 6] padded by [0, 0] is smaller than the dilated "
                  "kernel_size [7, 7] (dilation [1, 1])");
  constexpr int64_t k40 = int64_t{1} << 40;
  EXPECT_FT_ERROR(UnfoldShape({1, 4, 6, 6}, {k40}, {1}, {k40}, {1}), "unfold: sizes");
  EXPECT_FT_ERROR(UnfoldShape({1, 4, 6, 6}, {3}, {1}, {int64_t{1} << 62}, {1}),
                  "unfold: kernel size 3 with dilation 1 and padding 4611686018427387904");
  EXPECT_FT_ERROR(FoldShape({8}, {4}, {2}, {1}, {0}, {1}),
                  "fold: expected a 2-D (unbatched) or 3-D (batched) input [N, C * kernel, L], "
                  "got shape [8]");
  EXPECT_FT_ERROR(FoldShape({1, 8, 9}, {4, 4, 4}, {2}, {1}, {0}, {1}),
                  "fold: output_size must have 1 or 2 values");
  EXPECT_FT_ERROR(FoldShape({1, 8, 9}, {0, 4}, {2}, {1}, {0}, {1}),
                  "fold: output_size must be positive, got [0, 4]");
  EXPECT_FT_ERROR(FoldShape({1, 8, 9}, {4}, {5}, {1}, {0}, {1}),
                  "fold: spatial size [4, 4] padded by [0, 0] is smaller than the dilated "
                  "kernel_size [5, 5]");
  EXPECT_FT_ERROR(FoldShape({2, 7, 9}, {4}, {2}, {1}, {0}, {1}),
                  "fold: input [2, 7, 9] dim 1 (7) must be divisible by the kernel size 4 "
                  "(kernel_size [2, 2])");
  EXPECT_FT_ERROR(FoldShape({2, 8, 8}, {4}, {2}, {1}, {0}, {1}),
                  "fold: input [2, 8, 8] has 8 blocks, but output_size [4, 4] with kernel_size "
                  "[2, 2] gives 9");
  EXPECT_FT_ERROR(FoldShape({1, 4, 1}, {5}, {int64_t{1} << 40}, {1}, {int64_t{1} << 40}, {1}),
                  "fold: sizes");
}

// ---- Convolution. ----

// Convolution is cross-correlation (the kernel is not flipped), zero-padded, and the floor of
// the window count leaves trailing input unread: worked out by hand.
TEST(ConvTest, Conv1dByHand) {
  for (DType dt : {kFloat64, kFloat32}) {
    for (ConvBackend be : kBackends) {
      SCOPED_TRACE(std::string(DTypeName(dt)) + " " + BackendName(be));
      ScopedConvBackend backend(be);
      const Tensor x = to(tensor({1.0, 2.0, 3.0, 4.0}, {1, 1, 4}), dt);
      const Tensor w = to(tensor({1.0, 0.0, -1.0}, {1, 1, 3}), dt);
      // y[i] = x[i] - x[i + 2].
      EXPECT_TENSOR_EQ(conv1d(x, w, std::nullopt, {1}, {0}, {1}, 1),
                       to(tensor({-2.0, -2.0}, {1, 1, 2}), dt));
      // Zero padding: [0, 1, 2, 3, 4, 0].
      EXPECT_TENSOR_EQ(conv1d(x, w, std::nullopt, {1}, {1}, {1}, 1),
                       to(tensor({-2.0, -2.0, -2.0, 3.0}, {1, 1, 4}), dt));
      // Dilation 2 with padding 2: y[i] = x[i - 2] - x[i + 2] over [0, 0, 1, 2, 3, 4, 0, 0].
      EXPECT_TENSOR_EQ(conv1d(x, w, std::nullopt, {1}, {2}, {2}, 1),
                       to(tensor({-3.0, -4.0, 1.0, 2.0}, {1, 1, 4}), dt));
      // Bias, stride 2 on 7 elements with a kernel of 2: windows [0, 2), [2, 4), [4, 6); the
      // seventh element is never read (oneDNN's right padding is -1 here).
      const Tensor x7 = to(tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 100.0}, {1, 1, 7}), dt);
      EXPECT_TENSOR_EQ(conv1d(x7, to(tensor({1.0, 1.0}, {1, 1, 2}), dt),
                              to(tensor({0.5}, {1}), dt), {2}, {0}, {1}, 1),
                       to(tensor({3.5, 7.5, 11.5}, {1, 1, 3}), dt));
      // Unbatched.
      EXPECT_TENSOR_EQ(conv1d(to(tensor({1.0, 2.0, 3.0, 4.0}, {1, 4}), dt),
                              to(tensor({1.0, 0.0, -1.0}, {1, 1, 3}), dt), std::nullopt, {1},
                              {0}, {1}, 1),
                       to(tensor({-2.0, -2.0}, {1, 2}), dt));
    }
  }
}

TEST(ConvTest, MatchesLoopInFloat64) {
  std::mt19937 rng(101);
  for (int64_t n = 1; n <= 3; ++n) {
    for (int trial = 0; trial < 40; ++trial) {
      const ConvCase c = DrawConvCase(n, rng);
      SCOPED_TRACE(c.Describe());
      const Tensor x = Rand(c.InputShape(), kFloat64, rng);
      const Tensor w = Rand(c.WeightShape(), kFloat64, rng);
      const std::optional<Tensor> b =
          c.bias ? std::optional<Tensor>(Rand({c.groups * c.og}, kFloat64, rng)) : std::nullopt;
      EXPECT_TENSOR_NEAR(Conv(n, x, w, b, c.stride, c.padding, c.dilation, c.groups),
                         ConvLoop(x, w, b, n, c.stride, c.padding, c.dilation, c.groups), 1e-12);
    }
  }
}

TEST(ConvTest, MatchesLoopInFloat32OnBothBackends) {
  std::mt19937 rng(202);
  int on_onednn = 0;
  for (int64_t n = 1; n <= 3; ++n) {
    for (int trial = 0; trial < 25; ++trial) {
      const ConvCase c = DrawConvCase(n, rng);
      const Tensor x = Rand(c.InputShape(), kFloat32, rng);
      const Tensor w = Rand(c.WeightShape(), kFloat32, rng);
      const std::optional<Tensor> b =
          c.bias ? std::optional<Tensor>(Rand({c.groups * c.og}, kFloat32, rng)) : std::nullopt;
      const Tensor want = ConvLoop(x, w, b, n, c.stride, c.padding, c.dilation, c.groups);
      for (ConvBackend be : kBackends) {
        SCOPED_TRACE(c.Describe() + " " + BackendName(be));
        ScopedConvBackend backend(be);
        EXPECT_TENSOR_NEAR(Conv(n, x, w, b, c.stride, c.padding, c.dilation, c.groups), want,
                           FloatTol(c.Terms()));
        if (be == ConvBackend::kOneDnn) on_onednn += RanOnOneDnn();
        if (be == ConvBackend::kIm2Col) {
          EXPECT_FALSE(RanOnOneDnn());
        }
      }
    }
  }
  EXPECT_EQ(on_onednn, 3 * 25);  // oneDNN took every problem: none fell back on im2col
}

// Channel counts large enough for oneDNN's blocked layouts (>= 16 per group), a stride that
// leaves input unread, and a depthwise convolution, on both backends and in float64.
TEST(ConvTest, BlockedAndDepthwiseProblems) {
  std::mt19937 rng(303);
  struct Case {
    Shape x, w, s, p, d;
    int64_t groups;
  };
  const Case cases[] = {
      {{2, 16, 7, 8}, {16, 16, 3, 3}, {2}, {1}, {1}, 1},
      {{1, 17, 6, 5}, {18, 17, 2, 3}, {1, 2}, {0, 1}, {2, 1}, 1},
      {{2, 6, 9, 9}, {12, 1, 3, 3}, {2}, {1}, {1}, 6},        // depthwise, multiplier 2
      {{32, 5, 5}, {32, 1, 3, 3}, {1}, {1}, {1}, 32},         // unbatched depthwise
      {{1, 16, 3, 4, 5}, {16, 16, 2, 2, 2}, {1}, {0, 1, 0}, {1}, 1},  // 3-D blocked
  };
  for (const Case& c : cases) {
    const int64_t n = static_cast<int64_t>(c.w.size()) - 2;
    auto full = [n](const Shape& v) {
      return v.size() == 1 ? Shape(static_cast<size_t>(n), v[0]) : v;
    };
    const Tensor b64 = Rand({c.w[0]}, kFloat64, rng);
    const Tensor x64 = Rand(c.x, kFloat64, rng), w64 = Rand(c.w, kFloat64, rng);
    SCOPED_TRACE("x " + ShapeToString(c.x) + " w " + ShapeToString(c.w));
    EXPECT_TENSOR_NEAR(Conv(n, x64, w64, b64, c.s, c.p, c.d, c.groups),
                       ConvLoop(x64, w64, b64, n, full(c.s), full(c.p), full(c.d), c.groups),
                       1e-12);
    const Tensor x = to(x64, kFloat32), w = to(w64, kFloat32), b = to(b64, kFloat32);
    const Tensor want = ConvLoop(x, w, b, n, full(c.s), full(c.p), full(c.d), c.groups);
    for (ConvBackend be : kBackends) {
      SCOPED_TRACE(BackendName(be));
      ScopedConvBackend backend(be);
      EXPECT_TENSOR_NEAR(Conv(n, x, w, b, c.s, c.p, c.d, c.groups), want,
                         FloatTol(c.w[1] * NumelOf(Shape(c.w.begin() + 2, c.w.end()))));
      EXPECT_EQ(RanOnOneDnn(), be == ConvBackend::kOneDnn);
    }
  }
}

// Inputs in other layouts are read through their strides: a transposed input, one sliced with
// a step, a batch expanded with stride 0, a non-contiguous weight and a strided bias.
TEST(ConvTest, NonContiguousInputs) {
  std::mt19937 rng(404);
  for (DType dt : {kFloat64, kFloat32}) {
    const Tensor xt = transpose(Rand({2, 3, 6, 5}, dt, rng), 2, 3);  // [2, 3, 5, 6]
    const Tensor xs = slice(Rand({2, 3, 11, 6}, dt, rng), 2, 0, std::nullopt, 2);  // H 6
    const Tensor xe = expand(Rand({1, 3, 5, 6}, dt, rng), {3, 3, 5, 6});
    const Tensor w = testing::NonContiguousCopy(Rand({4, 3, 3, 2}, dt, rng));
    const Tensor b = slice(Rand({8}, dt, rng), 0, 1, std::nullopt, 2);
    ASSERT_FALSE(xt.is_contiguous() || xs.is_contiguous() || xe.is_contiguous() ||
                 w.is_contiguous() || b.is_contiguous());
    for (const Tensor& x : {xt, xs, xe}) {
      const Tensor want = ConvLoop(x, w, b, 2, {2, 1}, {1, 0}, {1, 2}, 1);
      for (ConvBackend be : kBackends) {
        SCOPED_TRACE(std::string(DTypeName(dt)) + " x " + ShapeToString(x.sizes()) + " " +
                     BackendName(be));
        ScopedConvBackend backend(be);
        EXPECT_TENSOR_NEAR(conv2d(x, w, b, {2, 1}, {1, 0}, {1, 2}, 1), want,
                           dt == kFloat64 ? 1e-12 : FloatTol(19));
      }
    }
  }
}

TEST(ConvTest, SizeZeroAndSizeOneDims) {
  std::mt19937 rng(505);
  for (DType dt : {kFloat64, kFloat32}) {
    for (ConvBackend be : kBackends) {
      SCOPED_TRACE(std::string(DTypeName(dt)) + " " + BackendName(be));
      ScopedConvBackend backend(be);
      // An empty batch.
      EXPECT_EQ(conv2d(zeros({0, 3, 5, 5}, dt), Rand({2, 3, 3, 3}, dt, rng), std::nullopt, {1},
                       {0}, {1}, 1)
                    .sizes(),
                IntArrayRef({0, 2, 3, 3}));
      // No output channels.
      EXPECT_EQ(conv1d(Rand({2, 3, 5}, dt, rng), zeros({0, 3, 2}, dt), std::nullopt, {1}, {0},
                       {1}, 1)
                    .sizes(),
                IntArrayRef({2, 0, 4}));
      // No input channels: the sum over nothing is 0, so the output is the bias.
      const Tensor bias = to(tensor({1.5, -2.0}, {2}), dt);
      EXPECT_TENSOR_EQ(conv2d(zeros({2, 0, 3, 3}, dt), zeros({2, 0, 2, 2}, dt), bias, {1}, {0},
                              {1}, 1),
                       to(tensor({1.5, 1.5, 1.5, 1.5, -2.0, -2.0, -2.0, -2.0, 1.5, 1.5, 1.5,
                                  1.5, -2.0, -2.0, -2.0, -2.0},
                                 {2, 2, 2, 2}),
                          dt));
      // Every size 1.
      EXPECT_TENSOR_EQ(conv3d(full({1, 1, 1, 1, 1}, 3.0, dt), full({1, 1, 1, 1, 1}, 2.0, dt),
                              std::nullopt, {1}, {0}, {1}, 1),
                       full({1, 1, 1, 1, 1}, 6.0, dt));
      // A 1x1 kernel (im2col's pointwise path: no column buffer) and one spatial dim of 1.
      const Tensor x = Rand({2, 4, 1, 5}, dt, rng), w = Rand({3, 4, 1, 1}, dt, rng);
      const Tensor b = Rand({3}, dt, rng);
      EXPECT_TENSOR_NEAR(conv2d(x, w, b, {1}, {0}, {1}, 1),
                         ConvLoop(x, w, b, 2, {1, 1}, {0, 0}, {1, 1}, 1),
                         dt == kFloat64 ? 1e-12 : FloatTol(5));
      // A 1x1 kernel with stride 2 is not pointwise.
      EXPECT_TENSOR_NEAR(conv2d(x, w, b, {2}, {0}, {1}, 1),
                         ConvLoop(x, w, b, 2, {2, 2}, {0, 0}, {1, 1}, 1),
                         dt == kFloat64 ? 1e-12 : FloatTol(5));
      // A window that sees only padding (input 1, padding 2, kernel 2): the bias alone.
      const Tensor y = conv1d(full({1, 1, 1}, 4.0, dt), full({1, 1, 2}, 1.0, dt),
                              to(tensor({0.25}, {1}), dt), {1}, {2}, {1}, 1);
      EXPECT_TENSOR_EQ(y, to(tensor({0.25, 4.25, 4.25, 0.25}, {1, 1, 4}), dt));
    }
  }
}

// ---- Transposed convolution. ----

TEST(ConvTransposeTest, Conv1dTransposeByHand) {
  for (DType dt : {kFloat64, kFloat32}) {
    for (ConvBackend be : kBackends) {
      SCOPED_TRACE(std::string(DTypeName(dt)) + " " + BackendName(be));
      ScopedConvBackend backend(be);
      const Tensor x = to(tensor({1.0, 2.0}, {1, 1, 2}), dt);
      const Tensor w = to(tensor({1.0, 10.0, 100.0}, {1, 1, 3}), dt);
      // Each input scatters x * w at stride 2: [1, 10, 100, 0, 0] + [0, 0, 2, 20, 200].
      EXPECT_TENSOR_EQ(conv_transpose1d(x, w, std::nullopt, {2}, {0}, {0}, 1, {1}),
                       to(tensor({1.0, 10.0, 102.0, 20.0, 200.0}, {1, 1, 5}), dt));
      // padding crops one element from each end; output_padding adds one back on the right.
      EXPECT_TENSOR_EQ(conv_transpose1d(x, w, std::nullopt, {2}, {1}, {0}, 1, {1}),
                       to(tensor({10.0, 102.0, 20.0}, {1, 1, 3}), dt));
      EXPECT_TENSOR_EQ(conv_transpose1d(x, w, to(tensor({0.5}, {1}), dt), {2}, {1}, {1}, 1, {1}),
                       to(tensor({10.5, 102.5, 20.5, 200.5}, {1, 1, 4}), dt));
      // Dilation 2, stride 1: x0 at 0, 2, 4; x1 at 1, 3, 5.
      EXPECT_TENSOR_EQ(conv_transpose1d(x, w, std::nullopt, {1}, {0}, {0}, 1, {2}),
                       to(tensor({1.0, 2.0, 10.0, 20.0, 100.0, 200.0}, {1, 1, 6}), dt));
      // Unbatched, two output channels: weight [1, 2, 3].
      EXPECT_TENSOR_EQ(conv_transpose1d(to(tensor({2.0}, {1, 1}), dt),
                                        to(tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {1, 2, 3}), dt),
                                        std::nullopt, {1}, {0}, {0}, 1, {1}),
                       to(tensor({2.0, 4.0, 6.0, 8.0, 10.0, 12.0}, {2, 3}), dt));
    }
  }
}

TEST(ConvTransposeTest, MatchesLoopInFloat64) {
  std::mt19937 rng(606);
  for (int64_t n = 1; n <= 3; ++n) {
    for (int trial = 0; trial < 40; ++trial) {
      const ConvCase c = DrawConvCase(n, rng);
      SCOPED_TRACE(c.Describe());
      const Tensor x = Rand(c.InputShape(), kFloat64, rng);
      const Tensor w = Rand(c.TransposeWeightShape(), kFloat64, rng);
      const std::optional<Tensor> b =
          c.bias ? std::optional<Tensor>(Rand({c.groups * c.og}, kFloat64, rng)) : std::nullopt;
      Shape out_shape;
      try {
        out_shape = ConvTransposeShape("conv_transpose", n, x.sizes(), w.sizes(), std::nullopt,
                                       c.stride, c.padding, c.output_padding, c.groups,
                                       c.dilation);
      } catch (const Error&) {
        continue;  // padding larger than the output: an error (ConvShapeTest covers it)
      }
      EXPECT_TENSOR_NEAR(
          ConvT(n, x, w, b, c.stride, c.padding, c.output_padding, c.groups, c.dilation),
          ConvTransposeLoop(x, w, b, n, c.stride, c.padding, c.output_padding, c.dilation,
                            c.groups),
          1e-12);
    }
  }
}

TEST(ConvTransposeTest, MatchesLoopInFloat32OnBothBackends) {
  std::mt19937 rng(707);
  int on_onednn = 0, tried = 0;
  for (int64_t n = 1; n <= 3; ++n) {
    for (int trial = 0; trial < 25; ++trial) {
      const ConvCase c = DrawConvCase(n, rng);
      const Tensor x = Rand(c.InputShape(), kFloat32, rng);
      const Tensor w = Rand(c.TransposeWeightShape(), kFloat32, rng);
      const std::optional<Tensor> b =
          c.bias ? std::optional<Tensor>(Rand({c.groups * c.og}, kFloat32, rng)) : std::nullopt;
      try {
        ConvTransposeShape("conv_transpose", n, x.sizes(), w.sizes(), std::nullopt, c.stride,
                           c.padding, c.output_padding, c.groups, c.dilation);
      } catch (const Error&) {
        continue;
      }
      const Tensor want = ConvTransposeLoop(x, w, b, n, c.stride, c.padding, c.output_padding,
                                            c.dilation, c.groups);
      for (ConvBackend be : kBackends) {
        SCOPED_TRACE(c.Describe() + " " + BackendName(be));
        ScopedConvBackend backend(be);
        EXPECT_TENSOR_NEAR(
            ConvT(n, x, w, b, c.stride, c.padding, c.output_padding, c.groups, c.dilation), want,
            FloatTol(c.cg * NumelOf(c.kernel) + 1));
        if (be == ConvBackend::kOneDnn) {
          ++tried;
          on_onednn += RanOnOneDnn();
        }
      }
    }
  }
  EXPECT_GT(tried, 30);
  EXPECT_EQ(on_onednn, tried);  // oneDNN took every problem: none fell back on im2col
}

// <conv(x, w), y> == <x, conv_transpose(y, w)>, with output_padding = the input conv's floor
// dropped (so conv_transpose's output has x's shape).
TEST(ConvTransposeTest, IsTheAdjointOfConvInFloat64) {
  std::mt19937 rng(808);
  for (int64_t n = 1; n <= 3; ++n) {
    for (int trial = 0; trial < 30; ++trial) {
      ConvCase c = DrawConvCase(n, rng);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t room =
            c.image[i] + 2 * c.padding[i] - c.dilation[i] * (c.kernel[i] - 1) - 1;
        c.output_padding[i] = room % c.stride[i];
      }
      SCOPED_TRACE(c.Describe());
      const Tensor x = Rand(c.InputShape(), kFloat64, rng);
      const Tensor w = Rand(c.WeightShape(), kFloat64, rng);
      const Tensor y = Conv(n, x, w, std::nullopt, c.stride, c.padding, c.dilation, c.groups);
      const Tensor gy = Rand(Shape(y.sizes().begin(), y.sizes().end()), kFloat64, rng);
      const Tensor xt =
          ConvT(n, gy, w, std::nullopt, c.stride, c.padding, c.output_padding, c.groups,
                c.dilation);
      ASSERT_EQ(xt.sizes(), x.sizes());
      EXPECT_NEAR(Dot(y, gy), Dot(x, xt), 1e-10);
    }
  }
}

TEST(ConvTransposeTest, NonContiguousAndSizeZeroInputs) {
  std::mt19937 rng(909);
  for (DType dt : {kFloat64, kFloat32}) {
    for (ConvBackend be : kBackends) {
      SCOPED_TRACE(std::string(DTypeName(dt)) + " " + BackendName(be));
      ScopedConvBackend backend(be);
      const double tol = dt == kFloat64 ? 1e-12 : FloatTol(13);
      const Tensor x = transpose(Rand({2, 4, 3, 5}, dt, rng), 2, 3);  // [2, 4, 5, 3]
      const Tensor w = testing::NonContiguousCopy(Rand({4, 3, 3, 2}, dt, rng));
      const Tensor b = slice(Rand({12}, dt, rng), 0, 0, std::nullopt, 2);  // 6 = 3 * groups 2
      EXPECT_TENSOR_NEAR(conv_transpose2d(x, w, b, {2, 1}, {1, 0}, {1, 0}, 2, {1, 2}),
                         ConvTransposeLoop(x, w, b, 2, {2, 1}, {1, 0}, {1, 0}, {1, 2}, 2), tol);
      const Tensor xe = expand(Rand({1, 4, 3}, dt, rng), {3, 4, 3});
      const Tensor w1 = Rand({4, 2, 3}, dt, rng);
      EXPECT_TENSOR_NEAR(conv_transpose1d(xe, w1, std::nullopt, {2}, {0}, {1}, 1, {1}),
                         ConvTransposeLoop(xe, w1, std::nullopt, 1, {2}, {0}, {1}, {1}, 1), tol);
      // An empty batch; no input channels (the bias alone); no output channels.
      EXPECT_EQ(conv_transpose2d(zeros({0, 3, 2, 2}, dt), Rand({3, 2, 3, 3}, dt, rng),
                                 std::nullopt, {1}, {0}, {0}, 1, {1})
                    .sizes(),
                IntArrayRef({0, 2, 4, 4}));
      EXPECT_TENSOR_EQ(conv_transpose1d(zeros({1, 0, 2}, dt), zeros({0, 2, 2}, dt),
                                        to(tensor({1.0, -1.0}, {2}), dt), {1}, {0}, {0}, 1, {1}),
                       to(tensor({1.0, 1.0, 1.0, -1.0, -1.0, -1.0}, {1, 2, 3}), dt));
      EXPECT_EQ(conv_transpose1d(Rand({1, 2, 2}, dt, rng), zeros({2, 0, 2}, dt), std::nullopt,
                                 {1}, {0}, {0}, 1, {1})
                    .sizes(),
                IntArrayRef({1, 0, 3}));
    }
  }
}

// ---- The weight gradient. ----

TEST(ConvWeightGradTest, MatchesLoopInFloat64) {
  std::mt19937 rng(1001);
  for (int64_t n = 1; n <= 3; ++n) {
    for (int trial = 0; trial < 40; ++trial) {
      const ConvCase c = DrawConvCase(n, rng);
      SCOPED_TRACE(c.Describe());
      const Tensor x = Rand(c.InputShape(), kFloat64, rng);
      const Shape ws = c.WeightShape();
      const Shape ys = ConvShape("conv", n, x.sizes(), ws, std::nullopt, c.stride, c.padding,
                                 c.dilation, c.groups);
      const Tensor gy = Rand(ys, kFloat64, rng);
      EXPECT_TENSOR_NEAR(conv_weight_grad(x, ws, gy, c.stride, c.padding, c.dilation, c.groups),
                         WeightGradLoop(x, ws, gy, c.stride, c.padding, c.dilation, c.groups),
                         1e-12);
    }
  }
}

TEST(ConvWeightGradTest, MatchesLoopInFloat32OnBothBackends) {
  std::mt19937 rng(1102);
  int on_onednn = 0;
  for (int64_t n = 1; n <= 3; ++n) {
    for (int trial = 0; trial < 25; ++trial) {
      const ConvCase c = DrawConvCase(n, rng);
      const Tensor x = Rand(c.InputShape(), kFloat32, rng);
      const Shape ws = c.WeightShape();
      const Shape ys = ConvShape("conv", n, x.sizes(), ws, std::nullopt, c.stride, c.padding,
                                 c.dilation, c.groups);
      const Tensor gy = Rand(ys, kFloat32, rng);
      const Tensor want = WeightGradLoop(x, ws, gy, c.stride, c.padding, c.dilation, c.groups);
      const int64_t terms = (c.batched ? c.batch : 1) * NumelOf(Shape(ys.end() - n, ys.end()));
      for (ConvBackend be : kBackends) {
        SCOPED_TRACE(c.Describe() + " " + BackendName(be));
        ScopedConvBackend backend(be);
        EXPECT_TENSOR_NEAR(conv_weight_grad(x, ws, gy, c.stride, c.padding, c.dilation,
                                            c.groups),
                           want, FloatTol(terms));
        if (be == ConvBackend::kOneDnn) on_onednn += RanOnOneDnn();
      }
    }
  }
  EXPECT_EQ(on_onednn, 3 * 25);
}

TEST(ConvWeightGradTest, NonContiguousEmptyBatchAndByHand) {
  std::mt19937 rng(1203);
  for (DType dt : {kFloat64, kFloat32}) {
    for (ConvBackend be : kBackends) {
      SCOPED_TRACE(std::string(DTypeName(dt)) + " " + BackendName(be));
      ScopedConvBackend backend(be);
      // dw[k] = sum_q gy[q] * x[q + k]: x = [1, 2, 3, 4], gy = [1, -1, 2] -> [5, 7].
      EXPECT_TENSOR_EQ(conv_weight_grad(to(tensor({1.0, 2.0, 3.0, 4.0}, {1, 1, 4}), dt),
                                        {1, 1, 2}, to(tensor({1.0, -1.0, 2.0}, {1, 1, 3}), dt),
                                        {1}, {0}, {1}, 1),
                       to(tensor({5.0, 7.0}, {1, 1, 2}), dt));
      const Tensor x = transpose(Rand({2, 4, 6, 7}, dt, rng), 2, 3);  // [2, 4, 7, 6]
      const Tensor gy = testing::NonContiguousCopy(Rand({2, 6, 4, 2}, dt, rng));
      EXPECT_TENSOR_NEAR(conv_weight_grad(x, {6, 2, 3, 2}, gy, {2}, {1, 0}, {1, 2}, 2),
                         WeightGradLoop(x, {6, 2, 3, 2}, gy, {2, 2}, {1, 0}, {1, 2}, 2),
                         dt == kFloat64 ? 1e-12 : FloatTol(17));
      // No examples: a zero gradient (not uninitialized memory).
      EXPECT_TENSOR_EQ(conv_weight_grad(zeros({0, 2, 5, 5}, dt), {3, 2, 3, 3},
                                        zeros({0, 3, 3, 3}, dt), {1}, {0}, {1}, 1),
                       zeros({3, 2, 3, 3}, dt));
    }
  }
}

// ---- unfold and fold. ----

TEST(UnfoldFoldTest, ByHand) {
  // The 2x2 blocks of a 3x3 image 0..8, one column per block, rows in (kh, kw) order.
  const Tensor x = tensor({0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}, {1, 1, 3, 3});
  EXPECT_TENSOR_EQ(unfold(x, {2}, {1}, {0}, {1}),
                   tensor({0.0, 1.0, 3.0, 4.0, 1.0, 2.0, 4.0, 5.0, 3.0, 4.0, 6.0, 7.0, 4.0, 5.0,
                           7.0, 8.0},
                          {1, 4, 4}));
  // fold of ones counts how many blocks cover each pixel.
  EXPECT_TENSOR_EQ(fold(ones({1, 4, 4}, kFloat64), {3}, {2}, {1}, {0}, {1}),
                   tensor({1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0}, {1, 1, 3, 3}));
  // Padding 1, stride 2, kernel 1: the blocks are the padded image's even positions.
  EXPECT_TENSOR_EQ(unfold(tensor({1.0, 2.0, 3.0, 4.0}, {1, 2, 2}), {1}, {1}, {1}, {2}),
                   tensor({0.0, 0.0, 0.0, 4.0}, {1, 4}));
}

TEST(UnfoldFoldTest, MatchLoopsAndAreAdjoint) {
  std::mt19937 rng(1304);
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 60; ++trial) {
    Shape k, d, p, s, image;
    for (int i = 0; i < 2; ++i) {
      k.push_back(pick(1, 3));
      d.push_back(pick(1, 2));
      p.push_back(pick(0, 2));
      s.push_back(pick(1, 3));
      image.push_back(std::max<int64_t>(1, d.back() * (k.back() - 1) + 1 - 2 * p.back() +
                                               pick(0, 4)));
    }
    const bool batched = pick(0, 2) != 0;
    Shape xs = {pick(1, 3)};
    xs.insert(xs.end(), image.begin(), image.end());
    if (batched) xs.insert(xs.begin(), pick(1, 2));
    SCOPED_TRACE("x " + ShapeToString(xs) + " k " + ShapeToString(k) + " d " +
                 ShapeToString(d) + " p " + ShapeToString(p) + " s " + ShapeToString(s));
    for (DType dt : {kFloat64, kFloat32}) {
      const Tensor x = Rand(xs, dt, rng);
      const Tensor cols = unfold(x, k, d, p, s);
      EXPECT_TENSOR_EQ(cols, UnfoldLoop(x, k, d, p, s));
      const Tensor y = Rand(Shape(cols.sizes().begin(), cols.sizes().end()), dt, rng);
      const Tensor img = fold(y, image, k, d, p, s);
      EXPECT_TENSOR_NEAR(img, FoldLoop(y, image, k, d, p, s), dt == kFloat64 ? 1e-15 : 1e-6);
      if (dt == kFloat64) {
        EXPECT_NEAR(Dot(cols, y), Dot(x, img), 1e-12);
      }
    }
  }
}

TEST(UnfoldFoldTest, NonContiguousAndEmptyInputs) {
  std::mt19937 rng(1405);
  const Tensor xt = transpose(Rand({2, 3, 5, 4}, kFloat64, rng), 2, 3);
  EXPECT_TENSOR_EQ(unfold(xt, {2, 3}, {1}, {1}, {2, 1}),
                   UnfoldLoop(xt, {2, 3}, {1, 1}, {1, 1}, {2, 1}));
  const Tensor xe = expand(Rand({1, 2, 4, 4}, kFloat32, rng), {3, 2, 4, 4});
  EXPECT_TENSOR_EQ(unfold(xe, {2}, {2}, {0}, {1}), UnfoldLoop(xe, {2, 2}, {2, 2}, {0, 0}, {1, 1}));
  const Tensor cols = testing::NonContiguousCopy(Rand({2, 8, 9}, kFloat64, rng));
  EXPECT_TENSOR_NEAR(fold(cols, {4}, {2}, {1}, {0}, {1}),
                     FoldLoop(cols, {4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}), 1e-15);
  const Tensor cs = slice(Rand({2, 8, 18}, kFloat64, rng), 2, 0, std::nullopt, 2);
  EXPECT_TENSOR_NEAR(fold(cs, {4}, {2}, {1}, {0}, {1}),
                     FoldLoop(cs, {4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}), 1e-15);
  EXPECT_EQ(unfold(zeros({0, 2, 4, 4}), {2}, {1}, {0}, {1}).sizes(), IntArrayRef({0, 8, 9}));
  EXPECT_EQ(fold(zeros({0, 8, 9}), {4}, {2}, {1}, {0}, {1}).sizes(), IntArrayRef({0, 2, 4, 4}));
  EXPECT_EQ(unfold(zeros({1, 0, 4, 4}), {2}, {1}, {0}, {1}).sizes(), IntArrayRef({1, 0, 9}));
}

// ---- The kernels' own errors (beyond the shape checks above). ----

TEST(ConvErrorsTest, EveryKernelNamesItself) {
  const Tensor x = zeros({2, 4, 6, 6}, kFloat64), w = zeros({6, 2, 3, 3}, kFloat64);
  const Tensor w32 = zeros({6, 2, 3, 3});
  EXPECT_FT_ERROR(conv2d(x, w32, std::nullopt, {1}, {0}, {1}, 2),
                  "conv2d: input, weight and bias must have the same dtype, got input float64, "
                  "weight float32");
  EXPECT_FT_ERROR(conv2d(x, w, zeros({6}), {1}, {0}, {1}, 2),
                  "conv2d: input, weight and bias must have the same dtype, got input float64, "
                  "weight float64, bias float32");
  EXPECT_FT_ERROR(conv2d(to(x, kInt64), to(w, kInt64), std::nullopt, {1}, {0}, {1}, 2),
                  "conv2d: expected a floating point tensor (float32 or float64), got int64 of "
                  "shape [2, 4, 6, 6]");
  EXPECT_FT_ERROR(conv2d(x, w, std::nullopt, {1}, {0}, {1}, 1), "conv2d: weight [6, 2, 3, 3]");
  EXPECT_FT_ERROR(conv1d(x, w, std::nullopt, {1}, {0}, {1}, 2),
                  "conv1d: expected a 2-D (unbatched) or 3-D (batched) input");
  EXPECT_FT_ERROR(conv1d(zeros({1, 2, 5}), zeros({1, 2, 2}, kFloat64), std::nullopt, {1}, {0},
                         {1}, 1),
                  "conv1d: input, weight and bias must have the same dtype");
  EXPECT_FT_ERROR(conv3d(x, w, std::nullopt, {1}, {0}, {1}, 2),
                  "conv3d: expected a 5-D weight");
  EXPECT_FT_ERROR(conv3d(zeros({1, 1, 2, 2, 2}, kInt64), zeros({1, 1, 1, 1, 1}, kInt64),
                         std::nullopt, {1}, {0}, {1}, 1),
                  "conv3d: expected a floating point tensor");
  const Tensor wt = zeros({4, 2, 3, 3}, kFloat64);
  EXPECT_FT_ERROR(conv_transpose2d(x, to(wt, kFloat32), std::nullopt, {1}, {0}, {0}, 1, {1}),
                  "conv_transpose2d: input, weight and bias must have the same dtype");
  EXPECT_FT_ERROR(conv_transpose2d(to(x, kInt64), to(wt, kInt64), std::nullopt, {1}, {0}, {0}, 1,
                                   {1}),
                  "conv_transpose2d: expected a floating point tensor");
  EXPECT_FT_ERROR(conv_transpose2d(x, wt, zeros({3}, kFloat64), {1}, {0}, {0}, 1, {1}),
                  "conv_transpose2d: expected a bias of shape [2], got [3]");
  EXPECT_FT_ERROR(conv_transpose1d(x, wt, std::nullopt, {1}, {0}, {0}, 1, {1}),
                  "conv_transpose1d: expected a 2-D (unbatched) or 3-D (batched) input");
  EXPECT_FT_ERROR(conv_transpose3d(zeros({4, 6, 6}, kFloat64), wt, std::nullopt, {1}, {0}, {0},
                                   1, {1}),
                  "conv_transpose3d: expected a 4-D (unbatched) or 5-D (batched) input");
  EXPECT_FT_ERROR(conv_transpose3d(x, wt, std::nullopt, {1}, {0}, {0}, 1, {1}),
                  "conv_transpose3d: expected a 5-D weight");
  EXPECT_FT_ERROR(conv_weight_grad(x, {6, 2, 3, 3}, zeros({2, 6, 4, 4}), {1}, {0}, {1}, 2),
                  "conv_weight_grad: input and grad_output must have the same dtype, got input "
                  "float64, grad_output float32");
  EXPECT_FT_ERROR(conv_weight_grad(to(x, kInt64), {6, 2, 3, 3}, zeros({2, 6, 4, 4}, kInt64), {1},
                                   {0}, {1}, 2),
                  "conv_weight_grad: expected a floating point tensor");
  EXPECT_FT_ERROR(conv_weight_grad(x, {6, 2, 3, 3}, zeros({2, 6, 4, 5}, kFloat64), {1}, {0}, {1},
                                   2),
                  "conv_weight_grad: expected grad_output of shape [2, 6, 4, 4]");
  EXPECT_FT_ERROR(unfold(to(x, kInt64), {2}, {1}, {0}, {1}),
                  "unfold: expected a floating point tensor");
  EXPECT_FT_ERROR(unfold(x, {7}, {1}, {0}, {1}), "unfold: spatial size [6, 6]");
  EXPECT_FT_ERROR(fold(zeros({2, 8, 9}, kInt64), {4}, {2}, {1}, {0}, {1}),
                  "fold: expected a floating point tensor");
  EXPECT_FT_ERROR(fold(zeros({2, 8, 8}), {4}, {2}, {1}, {0}, {1}), "fold: input [2, 8, 8] has 8");
}

}  // namespace
}  // namespace ft::kernels

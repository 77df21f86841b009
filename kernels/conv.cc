#include "kernels/conv.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/gemm.h"
#include "cpu/onednn_conv.h"
#include "kernels/checks.h"
#include "tensor/copy.h"
#include "tensor/loops.h"

namespace ft::kernels {
namespace {

namespace onednn = internal::onednn;
using internal::CheckInputRank;
using internal::CheckNonNegative;
using internal::CheckPositive;
using internal::PerDim;
using internal::WindowRoom;
using internal::RowMajorMatrix;
template <typename T>
using ConstMatMap = Eigen::Map<const RowMajorMatrix<T>, Eigen::Unaligned>;
template <typename T>
using MatMap = Eigen::Map<RowMajorMatrix<T>, Eigen::Unaligned>;

// Geom: one convolution-like problem with its spatial dims padded to 3 (leading dims of size
// 1, kernel 1, stride 1, no padding): an "image" of `image` sizes is read (im2col) or written
// (col2im) at `pos` window positions; position q, kernel offset k reads image index
// q * s - p + k * d (outside [0, image) is padding).
struct Geom {
  int64_t image[3] = {1, 1, 1};
  int64_t pos[3] = {1, 1, 1};
  int64_t k[3] = {1, 1, 1};
  int64_t s[3] = {1, 1, 1};
  int64_t p[3] = {0, 0, 0};
  int64_t d[3] = {1, 1, 1};
  // Saturating (shape.h): an empty batch or channel dim lets the other sizes be huge, and
  // their product is then never used; where there is work, the tensors' sizes bound it.
  int64_t ImageSize() const {
    return SaturatingMul(SaturatingMul(image[0], image[1]), image[2]);
  }
  int64_t Positions() const { return SaturatingMul(SaturatingMul(pos[0], pos[1]), pos[2]); }
  int64_t KernelSize() const { return SaturatingMul(SaturatingMul(k[0], k[1]), k[2]); }
  bool Pointwise() const {  // im2col is the image itself
    for (int i = 0; i < 3; ++i) {
      if (k[i] != 1 || s[i] != 1 || p[i] != 0 || image[i] != pos[i]) return false;
    }
    return true;
  }
};

// MakeGeom fills the last n dims of a Geom.
Geom MakeGeom(int64_t n, IntArrayRef image, IntArrayRef pos, IntArrayRef k, IntArrayRef s,
              IntArrayRef p, IntArrayRef d) {
  Geom g;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = 3 - n + i;
    g.image[j] = image[i];
    g.pos[j] = pos[i];
    g.k[j] = k[i];
    g.s[j] = s[i];
    g.p[j] = p[i];
    g.d[j] = d[i];
  }
  return g;
}

// Im2Col writes cols[c, k0, k1, k2, q0, q1, q2] = img[c, q * s - p + k * d] (0 outside).
// Col2Im is its adjoint: img[c, q * s - p + k * d] += cols[...] (img must be zeroed first).
template <typename T, bool kToImage>
void Im2ColImpl(std::conditional_t<kToImage, T*, const T*> img, int64_t channels, const Geom& g,
                std::conditional_t<kToImage, const T*, T*> cols) {
  const int64_t L = g.Positions();
  const int64_t I = g.ImageSize();
  int64_t row = 0;
  for (int64_t c = 0; c < channels; ++c) {
    auto* plane = img + c * I;
    for (int64_t a = 0; a < g.k[0]; ++a) {
      for (int64_t b = 0; b < g.k[1]; ++b) {
        for (int64_t e = 0; e < g.k[2]; ++e, ++row) {
          auto* r = cols + row * L;
          for (int64_t q0 = 0; q0 < g.pos[0]; ++q0) {
            const int64_t i0 = q0 * g.s[0] - g.p[0] + a * g.d[0];
            const bool in0 = i0 >= 0 && i0 < g.image[0];
            for (int64_t q1 = 0; q1 < g.pos[1]; ++q1) {
              const int64_t i1 = q1 * g.s[1] - g.p[1] + b * g.d[1];
              auto* rr = r + (q0 * g.pos[1] + q1) * g.pos[2];
              if (!in0 || i1 < 0 || i1 >= g.image[1]) {
                if constexpr (!kToImage) std::fill(rr, rr + g.pos[2], T(0));
                continue;
              }
              auto* src = plane + (i0 * g.image[1] + i1) * g.image[2];
              for (int64_t q2 = 0; q2 < g.pos[2]; ++q2) {
                const int64_t i2 = q2 * g.s[2] - g.p[2] + e * g.d[2];
                const bool in = i2 >= 0 && i2 < g.image[2];
                if constexpr (kToImage) {
                  if (in) src[i2] += rr[q2];
                } else {
                  rr[q2] = in ? src[i2] : T(0);
                }
              }
            }
          }
        }
      }
    }
  }
}

template <typename T>
void Im2Col(const T* img, int64_t channels, const Geom& g, T* cols) {
  Im2ColImpl<T, false>(img, channels, g, cols);
}
template <typename T>
void Col2Im(const T* cols, int64_t channels, const Geom& g, T* img) {
  Im2ColImpl<T, true>(img, channels, g, cols);
}

void CheckConvDTypes(const char* op, const Tensor& input, const Tensor& weight,
                     const std::optional<Tensor>& bias) {
  internal::CheckFloating(op, input);
  if (weight.dtype() != input.dtype() || (bias && bias->dtype() != input.dtype())) {
    ThrowError(op, ": input, weight and bias must have the same dtype, got input ",
               DTypeName(input.dtype()), ", weight ", DTypeName(weight.dtype()),
               bias ? std::string(", bias ") + DTypeName(bias->dtype()) : std::string());
  }
}

std::optional<Shape> ShapeOf(const std::optional<Tensor>& t) {
  if (!t) return std::nullopt;
  return Shape(t->sizes().begin(), t->sizes().end());
}

template <typename T>
void AddBias(T* out, const T* bias, int64_t n, int64_t channels, int64_t plane) {
  if (bias == nullptr) return;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < channels; ++c) {
      T* p = out + (i * channels + c) * plane;
      const T v = bias[c];
      for (int64_t j = 0; j < plane; ++j) p[j] += v;
    }
  }
}

// ColumnBuffer: the im2col matrix [rows, cols] of one (image, group), held in a tensor so
// that a size no machine holds (a long signal with a long dilated kernel has rows * cols far
// beyond its input and output) is an ft::AllocationError naming `op`, never std::bad_alloc.
// Callers ask for it only when there is work: with no images or no output channels the
// output is empty or all zeros whatever the kernel's extent.
template <typename T>
Tensor ColumnBuffer(const char* op, int64_t rows, int64_t cols) {
  try {
    return EmptyContiguous({rows, cols}, DTypeOf<T>());
  } catch (const AllocationError& e) {
    throw AllocationError(absl::StrCat(op, ": the im2col workspace: ", e.message()));
  }
}

// MakeProblem: the oneDNN description of a convolution from the image `src` [N, C, s...] to
// the windows `dst` [N, O, s...] (for a transposed convolution, its output and its input).
onednn::ConvProblem MakeProblem(const char* op, int64_t n, int64_t batch, int64_t src_channels,
                                IntArrayRef src_spatial, int64_t dst_channels,
                                IntArrayRef dst_spatial, IntArrayRef weight, IntArrayRef stride,
                                IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  onednn::ConvProblem p;
  p.src = {batch, src_channels};
  p.src.insert(p.src.end(), src_spatial.begin(), src_spatial.end());
  p.dst = {batch, dst_channels};
  p.dst.insert(p.dst.end(), dst_spatial.begin(), dst_spatial.end());
  p.weights.assign(weight.begin(), weight.end());
  p.stride = PerDim(op, "", stride, n);
  p.padding_l = PerDim(op, "", padding, n);
  p.dilation = PerDim(op, "", dilation, n);
  p.groups = groups;
  for (int64_t i = 0; i < n; ++i) {
    // Whatever makes dst = (src + pad_l + pad_r - extent) / stride + 1 exact; negative where
    // torch's floor leaves trailing input unread.
    const int64_t extent = p.dilation[i] * (weight[2 + i] - 1) + 1;
    p.padding_r.push_back((dst_spatial[i] - 1) * p.stride[i] + extent - src_spatial[i] -
                          p.padding_l[i]);
  }
  return p;
}

Tensor ConvNd(const char* op, int64_t n, const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  const Shape out_shape = ConvShape(op, n, input.sizes(), weight.sizes(), ShapeOf(bias), stride,
                                    padding, dilation, groups);
  CheckConvDTypes(op, input, weight, bias);
  const bool batched = input.dim() == n + 2;
  const int64_t N = batched ? input.size(0) : 1;
  const int64_t C = input.size(batched ? 1 : 0);
  const int64_t O = weight.size(0);
  const IntArrayRef in_sp = input.sizes().subspan(batched ? 2 : 1);
  const IntArrayRef out_sp = IntArrayRef(out_shape).subspan(batched ? 2 : 1);
  const Geom g = MakeGeom(n, in_sp, out_sp, weight.sizes().subspan(2), PerDim(op, "", stride, n),
                          PerDim(op, "", padding, n), PerDim(op, "", dilation, n));
  Tensor out = EmptyContiguous(out_shape, input.dtype());
  if (out.numel() == 0) return out;  // nothing to write (the other sizes may be huge)
  const Tensor x = contiguous(input);
  const Tensor w = contiguous(weight);
  const Tensor b = bias ? contiguous(*bias) : Tensor();
  VisitDType(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const int64_t Cg = C / groups, Og = O / groups, K = g.KernelSize(), L = g.Positions();
      const int64_t I = g.ImageSize();
      const T* px = static_cast<const T*>(x.impl()->raw_data());
      const T* pw = static_cast<const T*>(w.impl()->raw_data());
      T* po = static_cast<T*>(out.impl()->raw_data());
      if constexpr (std::is_same_v<T, float>) {
        const onednn::ConvProblem problem = MakeProblem(op, n, N, C, in_sp, O, out_sp,
                                                        weight.sizes(), stride, padding,
                                                        dilation, groups);
        if (onednn::ConvForward(problem, px, pw,
                                b.defined() ? static_cast<const T*>(b.impl()->raw_data())
                                            : nullptr,
                                po)) {
          return;
        }
      }
      const bool pointwise = g.Pointwise();
      const Tensor cols =
          pointwise || out.numel() == 0 ? Tensor() : ColumnBuffer<T>(op, Cg * K, L);
      for (int64_t i = 0; i < N && Og > 0; ++i) {
        for (int64_t grp = 0; grp < groups; ++grp) {
          const T* img = px + (i * C + grp * Cg) * I;
          const T* c = img;
          if (!pointwise) {
            Im2Col(img, Cg, g, cols.data<T>());
            c = cols.data<T>();
          }
          // o [Og, L] = w[group] [Og, Cg * K] x columns [Cg * K, L]
          internal::Gemm(Og, Cg * K, L, pw + grp * Og * Cg * K, Cg * K, 1, c, L, 1,
                         po + (i * O + grp * Og) * L, L);
        }
      }
      AddBias(po, b.defined() ? static_cast<const T*>(b.impl()->raw_data()) : nullptr, N, O, L);
    }
  });
  return out;
}

Tensor ConvTransposeNd(const char* op, int64_t n, const Tensor& input, const Tensor& weight,
                       const std::optional<Tensor>& bias, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                       IntArrayRef dilation) {
  const Shape out_shape = ConvTransposeShape(op, n, input.sizes(), weight.sizes(), ShapeOf(bias),
                                             stride, padding, output_padding, groups, dilation);
  CheckConvDTypes(op, input, weight, bias);
  const bool batched = input.dim() == n + 2;
  const int64_t N = batched ? input.size(0) : 1;
  const int64_t Cin = input.size(batched ? 1 : 0);
  const int64_t Cout = out_shape[batched ? 1 : 0];
  const IntArrayRef in_sp = input.sizes().subspan(batched ? 2 : 1);
  const IntArrayRef out_sp = IntArrayRef(out_shape).subspan(batched ? 2 : 1);
  // The output is the image col2im writes; the input's positions are the windows.
  const Geom g = MakeGeom(n, out_sp, in_sp, weight.sizes().subspan(2), PerDim(op, "", stride, n),
                          PerDim(op, "", padding, n), PerDim(op, "", dilation, n));
  Tensor out = EmptyContiguous(out_shape, input.dtype());
  if (out.numel() == 0) return out;  // nothing to write (the other sizes may be huge)
  const Tensor x = contiguous(input);
  const Tensor w = contiguous(weight);
  const Tensor b = bias ? contiguous(*bias) : Tensor();
  VisitDType(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const int64_t Cg = Cin / groups, Og = Cout / groups, K = g.KernelSize();
      const int64_t L = g.Positions(), I = g.ImageSize();
      const T* px = static_cast<const T*>(x.impl()->raw_data());
      const T* pw = static_cast<const T*>(w.impl()->raw_data());
      T* po = static_cast<T*>(out.impl()->raw_data());
      if constexpr (std::is_same_v<T, float>) {
        // The transposed convolution is the convolution's adjoint in its input: oneDNN's
        // backward-data primitive of the convolution from `out` (the image) to `input`.
        const onednn::ConvProblem problem = MakeProblem(op, n, N, Cout, out_sp, Cin, in_sp,
                                                        weight.sizes(), stride, padding,
                                                        dilation, groups);
        if (onednn::ConvBackwardData(problem, px, pw, po)) {
          AddBias(po, b.defined() ? static_cast<const T*>(b.impl()->raw_data()) : nullptr, N,
                  Cout, I);
          return;
        }
      }
      std::fill(po, po + out.numel(), T(0));
      const Tensor cols_buffer = out.numel() == 0 ? Tensor() : ColumnBuffer<T>(op, Og * K, L);
      for (int64_t i = 0; i < N && Og > 0; ++i) {
        for (int64_t grp = 0; grp < groups; ++grp) {
          // columns [Og * K, L] = w[group]^T (w[group] is [Cg, Og * K]) x x_i[group] [Cg, L]
          T* cols = cols_buffer.data<T>();
          internal::Gemm(Og * K, Cg, L, pw + grp * Cg * Og * K, 1, Og * K,
                         px + (i * Cin + grp * Cg) * L, L, 1, cols, L);
          Col2Im(cols, Og, g, po + (i * Cout + grp * Og) * I);
        }
      }
      AddBias(po, b.defined() ? static_cast<const T*>(b.impl()->raw_data()) : nullptr, N, Cout,
              I);
    }
  });
  return out;
}

}  // namespace

// ---- Shapes. ----

Shape ConvShape(const char* op, int64_t n, IntArrayRef input, IntArrayRef weight,
                const std::optional<Shape>& bias, IntArrayRef stride, IntArrayRef padding,
                IntArrayRef dilation, int64_t groups) {
  const bool batched = CheckInputRank(op, n, input);
  if (static_cast<int64_t>(weight.size()) != n + 2) {
    ThrowError(op, ": expected a ", n + 2,
               "-D weight [out_channels, in_channels / groups, kernel...], got shape ",
               ShapeToString(weight));
  }
  const Shape s = PerDim(op, "stride", stride, n);
  const Shape p = PerDim(op, "padding", padding, n);
  const Shape d = PerDim(op, "dilation", dilation, n);
  CheckPositive(op, "stride", s);
  CheckNonNegative(op, "padding", p);
  CheckPositive(op, "dilation", d);
  if (groups <= 0) ThrowError(op, ": groups must be positive, got ", groups);
  const int64_t C = input[batched ? 1 : 0];
  const int64_t O = weight[0];
  if (O % groups != 0) {
    ThrowError(op, ": out channels ", O, " (weight ", ShapeToString(weight),
               ") must be divisible by groups ", groups);
  }
  if (weight[1] * groups != C) {
    ThrowError(op, ": weight ", ShapeToString(weight), " with groups ", groups, " expects ",
               weight[1] * groups, " input channels, but the input ", ShapeToString(input),
               " has ", C);
  }
  if (bias && (bias->size() != 1 || (*bias)[0] != O)) {
    ThrowError(op, ": expected a bias of shape [", O, "], got ", ShapeToString(*bias));
  }
  Shape out;
  if (batched) out.push_back(input[0]);
  out.push_back(O);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t in = input[input.size() - n + i];
    const int64_t k = weight[2 + i];
    if (k <= 0) {
      ThrowError(op, ": kernel sizes must be positive, got weight ", ShapeToString(weight));
    }
    const int64_t room = WindowRoom(op, in, k, p[i], d[i]);
    if (room < 0) {
      ThrowError(op, ": input ", ShapeToString(input), " padded by ", ShapeToString(p),
                 " is smaller than the dilated kernel (dilation ", d[i], " in spatial dim ", i,
                 ", weight ", ShapeToString(weight), ")");
    }
    out.push_back(room / s[i] + 1);
  }
  return out;
}

Shape ConvWeightGradShape(IntArrayRef input, IntArrayRef weight_size, IntArrayRef grad_output,
                          IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                          int64_t groups) {
  const char* op = "conv_weight_grad";
  const int64_t n = static_cast<int64_t>(weight_size.size()) - 2;
  if (n < 1 || n > 3) {
    ThrowError(op, ": weight_size must be [out_channels, in_channels / groups, kernel...] with ",
               "1 to 3 kernel dims, got ", ShapeToString(weight_size));
  }
  for (int64_t v : weight_size) {
    if (v <= 0) ThrowError(op, ": weight_size must be positive, got ", ShapeToString(weight_size));
  }
  // The forward convolution the gradient belongs to must be valid, and give grad_output's
  // shape.
  const Shape out = ConvShape(op, n, input, weight_size, std::nullopt, stride, padding,
                              dilation, groups);
  if (Shape(grad_output.begin(), grad_output.end()) != out) {
    ThrowError(op, ": expected grad_output of shape ", ShapeToString(out), " (input ",
               ShapeToString(input), ", weight_size ", ShapeToString(weight_size),
               "), got ", ShapeToString(grad_output));
  }
  return Shape(weight_size.begin(), weight_size.end());
}

Shape ConvTransposeShape(const char* op, int64_t n, IntArrayRef input, IntArrayRef weight,
                         const std::optional<Shape>& bias, IntArrayRef stride,
                         IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                         IntArrayRef dilation) {
  const bool batched = CheckInputRank(op, n, input);
  if (static_cast<int64_t>(weight.size()) != n + 2) {
    ThrowError(op, ": expected a ", n + 2,
               "-D weight [in_channels, out_channels / groups, kernel...], got shape ",
               ShapeToString(weight));
  }
  const Shape s = PerDim(op, "stride", stride, n);
  const Shape p = PerDim(op, "padding", padding, n);
  const Shape op_ = PerDim(op, "output_padding", output_padding, n);
  const Shape d = PerDim(op, "dilation", dilation, n);
  CheckPositive(op, "stride", s);
  CheckNonNegative(op, "padding", p);
  CheckNonNegative(op, "output_padding", op_);
  CheckPositive(op, "dilation", d);
  if (groups <= 0) ThrowError(op, ": groups must be positive, got ", groups);
  const int64_t C = input[batched ? 1 : 0];
  if (weight[0] != C) {
    ThrowError(op, ": weight ", ShapeToString(weight), " expects ", weight[0],
               " input channels, but the input ", ShapeToString(input), " has ", C);
  }
  if (C % groups != 0) {
    ThrowError(op, ": input channels ", C, " (input ", ShapeToString(input),
               ") must be divisible by groups ", groups);
  }
  const int64_t O = weight[1] * groups;
  if (bias && (bias->size() != 1 || (*bias)[0] != O)) {
    ThrowError(op, ": expected a bias of shape [", O, "], got ", ShapeToString(*bias));
  }
  Shape out;
  if (batched) out.push_back(input[0]);
  out.push_back(O);
  for (int64_t i = 0; i < n; ++i) {
    if (op_[i] >= s[i] && op_[i] >= d[i]) {
      ThrowError(op, ": output_padding ", ShapeToString(op_),
                 " must be smaller than either stride ", ShapeToString(s), " or dilation ",
                 ShapeToString(d));
    }
    const int64_t k = weight[2 + i];
    if (k <= 0) {
      ThrowError(op, ": kernel sizes must be positive, got weight ", ShapeToString(weight));
    }
    const int64_t in = input[input.size() - n + i];
    // o = (in - 1) * s - 2 * p + d * (k - 1) + output_padding + 1, checked: huge strides,
    // paddings or dilations must not wrap into a plausible size.
    int64_t o = 0, term = 0;
    if (in > 0 && (__builtin_mul_overflow(in - 1, s[i], &o) ||
                   __builtin_mul_overflow(p[i], 2, &term) || __builtin_sub_overflow(o, term, &o) ||
                   __builtin_mul_overflow(d[i], k - 1, &term) || __builtin_add_overflow(o, term, &o) ||
                   __builtin_add_overflow(o, op_[i], &o) || __builtin_add_overflow(o, 1, &o))) {
      ThrowError(op, ": the output size in spatial dim ", i, " of input ", ShapeToString(input),
                 " with weight ", ShapeToString(weight), ", stride ", ShapeToString(s),
                 ", padding ", ShapeToString(p), ", output_padding ", ShapeToString(op_),
                 " and dilation ", ShapeToString(d), " overflows int64");
    }
    if (in <= 0 || o <= 0) {
      ThrowError(op, ": the output size ", o, " in spatial dim ", i, " of input ",
                 ShapeToString(input), " with weight ", ShapeToString(weight), " and padding ",
                 ShapeToString(p), " is too small");
    }
    out.push_back(o);
  }
  return out;
}

namespace {
// Product: a * b of unfold's and fold's sizes (kernel elements, blocks), which huge kernel
// sizes with huge paddings overflow: an ft::Error naming op instead.
int64_t Product(const char* op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) ThrowError(op, ": sizes ", a, " * ", b, " overflow int64");
  return r;
}

// UnfoldBlocks: the number of sliding blocks along each of the 2 spatial dims.
Shape UnfoldBlocks(const char* op, IntArrayRef spatial, const Shape& k, const Shape& d,
                   const Shape& p, const Shape& s) {
  CheckPositive(op, "kernel_size", k);
  CheckPositive(op, "dilation", d);
  CheckNonNegative(op, "padding", p);
  CheckPositive(op, "stride", s);
  Shape blocks;
  for (size_t i = 0; i < 2; ++i) {
    const int64_t span = WindowRoom(op, spatial[i], k[i], p[i], d[i]);
    if (span < 0) {
      ThrowError(op, ": spatial size ", ShapeToString(spatial), " padded by ",
                 ShapeToString(p), " is smaller than the dilated kernel_size ",
                 ShapeToString(k), " (dilation ", ShapeToString(d), ")");
    }
    blocks.push_back(span / s[i] + 1);
  }
  return blocks;
}
}  // namespace

Shape UnfoldShape(IntArrayRef input, IntArrayRef kernel_size, IntArrayRef dilation,
                  IntArrayRef padding, IntArrayRef stride) {
  const char* op = "unfold";
  const bool batched = CheckInputRank(op, 2, input);
  const Shape k = PerDim(op, "kernel_size", kernel_size, 2);
  const Shape blocks =
      UnfoldBlocks(op, input.subspan(input.size() - 2), k, PerDim(op, "dilation", dilation, 2),
                   PerDim(op, "padding", padding, 2), PerDim(op, "stride", stride, 2));
  Shape out;
  if (batched) out.push_back(input[0]);
  out.push_back(Product(op, Product(op, input[batched ? 1 : 0], k[0]), k[1]));
  out.push_back(Product(op, blocks[0], blocks[1]));
  return out;
}

Shape FoldShape(IntArrayRef input, IntArrayRef output_size, IntArrayRef kernel_size,
                IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  const char* op = "fold";
  const int64_t r = static_cast<int64_t>(input.size());
  if (r != 2 && r != 3) {
    ThrowError(op, ": expected a 2-D (unbatched) or 3-D (batched) input [N, C * kernel, L], "
               "got shape ", ShapeToString(input));
  }
  const Shape os = PerDim(op, "output_size", output_size, 2);
  CheckPositive(op, "output_size", os);
  const Shape k = PerDim(op, "kernel_size", kernel_size, 2);
  const Shape blocks = UnfoldBlocks(op, os, k, PerDim(op, "dilation", dilation, 2),
                                    PerDim(op, "padding", padding, 2),
                                    PerDim(op, "stride", stride, 2));
  const int64_t ck = input[static_cast<size_t>(r - 2)];
  const int64_t kernel = Product(op, k[0], k[1]);
  if (ck % kernel != 0) {
    ThrowError(op, ": input ", ShapeToString(input), " dim ", r - 2, " (", ck,
               ") must be divisible by the kernel size ", kernel, " (kernel_size ",
               ShapeToString(k), ")");
  }
  const int64_t num_blocks = Product(op, blocks[0], blocks[1]);
  if (input[static_cast<size_t>(r - 1)] != num_blocks) {
    ThrowError(op, ": input ", ShapeToString(input), " has ", input[static_cast<size_t>(r - 1)],
               " blocks, but output_size ", ShapeToString(os), " with kernel_size ",
               ShapeToString(k), " gives ", num_blocks);
  }
  Shape out;
  if (r == 3) out.push_back(input[0]);
  out.push_back(ck / kernel);
  out.push_back(os[0]);
  out.push_back(os[1]);
  return out;
}

// ---- Kernels. ----

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return ConvNd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return ConvNd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return ConvNd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return ConvTransposeNd("conv_transpose1d", 1, input, weight, bias, stride, padding,
                         output_padding, groups, dilation);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return ConvTransposeNd("conv_transpose2d", 2, input, weight, bias, stride, padding,
                         output_padding, groups, dilation);
}
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return ConvTransposeNd("conv_transpose3d", 3, input, weight, bias, stride, padding,
                         output_padding, groups, dilation);
}

Tensor conv_weight_grad(const Tensor& input, IntArrayRef weight_size, const Tensor& grad_output,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                        int64_t groups) {
  const char* op = "conv_weight_grad";
  const Shape w_shape = ConvWeightGradShape(input.sizes(), weight_size, grad_output.sizes(),
                                            stride, padding, dilation, groups);
  internal::CheckFloating(op, input);
  if (grad_output.dtype() != input.dtype()) {
    ThrowError(op, ": input and grad_output must have the same dtype, got input ",
               DTypeName(input.dtype()), ", grad_output ", DTypeName(grad_output.dtype()));
  }
  const int64_t n = static_cast<int64_t>(weight_size.size()) - 2;
  const bool batched = input.dim() == n + 2;
  const int64_t N = batched ? input.size(0) : 1;
  const int64_t C = input.size(batched ? 1 : 0);
  const int64_t O = w_shape[0];
  const IntArrayRef in_sp = input.sizes().subspan(batched ? 2 : 1);
  const IntArrayRef out_sp = grad_output.sizes().subspan(batched ? 2 : 1);
  const Geom g = MakeGeom(n, in_sp, out_sp, IntArrayRef(w_shape).subspan(2),
                          PerDim(op, "", stride, n), PerDim(op, "", padding, n),
                          PerDim(op, "", dilation, n));
  Tensor out = EmptyContiguous(w_shape, input.dtype());
  const Tensor x = contiguous(input);
  const Tensor dy = contiguous(grad_output);
  VisitDType(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T* px = static_cast<const T*>(x.impl()->raw_data());
      const T* pg = static_cast<const T*>(dy.impl()->raw_data());
      T* pw = static_cast<T*>(out.impl()->raw_data());
      if constexpr (std::is_same_v<T, float>) {
        const onednn::ConvProblem problem = MakeProblem(op, n, N, C, in_sp, O, out_sp, w_shape,
                                                        stride, padding, dilation, groups);
        if (onednn::ConvBackwardWeights(problem, px, pg, pw)) return;
      }
      // dw[group] = sum_n dy_n[group] [O/g, L] x im2col(x_n[group])^T [L, C/g * K].
      const int64_t Cg = C / groups, Og = O / groups, K = g.KernelSize(), L = g.Positions();
      const int64_t I = g.ImageSize();
      std::fill(pw, pw + out.numel(), T(0));
      const bool pointwise = g.Pointwise();
      const Tensor cols =
          pointwise || N == 0 || out.numel() == 0 ? Tensor() : ColumnBuffer<T>(op, Cg * K, L);
      // One image's product, added into dw afterwards (the GEMM writes, it does not add).
      std::vector<T> product(N == 0 ? 0 : static_cast<size_t>(Og * Cg * K));
      for (int64_t i = 0; i < N && out.numel() > 0; ++i) {
        for (int64_t grp = 0; grp < groups; ++grp) {
          const T* img = px + (i * C + grp * Cg) * I;
          const T* c = img;
          if (!pointwise) {
            Im2Col(img, Cg, g, cols.data<T>());
            c = cols.data<T>();
          }
          // dw[group] += dy_i[group] [Og, L] x columns^T [L, Cg * K]
          internal::Gemm(Og, L, Cg * K, pg + (i * O + grp * Og) * L, L, 1, c, 1, L,
                         product.data(), Cg * K);
          MatMap<T>(pw + grp * Og * Cg * K, Og, Cg * K) +=
              ConstMatMap<T>(product.data(), Og, Cg * K);
        }
      }
    }
  });
  return out;
}

Tensor unfold(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  const Shape out_shape = UnfoldShape(input.sizes(), kernel_size, dilation, padding, stride);
  internal::CheckFloating("unfold", input);
  const bool batched = input.dim() == 4;
  const int64_t N = batched ? input.size(0) : 1;
  const int64_t C = input.size(-3);
  const Shape k = PerDim("unfold", "", kernel_size, 2);
  const Shape blocks = UnfoldBlocks("unfold", input.sizes().subspan(input.dim() - 2), k,
                                    PerDim("unfold", "", dilation, 2),
                                    PerDim("unfold", "", padding, 2),
                                    PerDim("unfold", "", stride, 2));
  const Geom g = MakeGeom(2, input.sizes().subspan(input.dim() - 2), blocks, k,
                          PerDim("unfold", "", stride, 2), PerDim("unfold", "", padding, 2),
                          PerDim("unfold", "", dilation, 2));
  Tensor out = EmptyContiguous(out_shape, input.dtype());
  const Tensor x = contiguous(input);
  VisitDType(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T* px = static_cast<const T*>(x.impl()->raw_data());
      T* po = static_cast<T*>(out.impl()->raw_data());
      const int64_t per_in = SaturatingMul(C, g.ImageSize());
      const int64_t per_out = SaturatingMul(SaturatingMul(C, g.KernelSize()), g.Positions());
      for (int64_t i = 0; i < N; ++i) Im2Col(px + i * per_in, C, g, po + i * per_out);
    }
  });
  return out;
}

Tensor fold(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
            IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  const Shape out_shape =
      FoldShape(input.sizes(), output_size, kernel_size, dilation, padding, stride);
  internal::CheckFloating("fold", input);
  const bool batched = input.dim() == 3;
  const int64_t N = batched ? input.size(0) : 1;
  const int64_t C = out_shape[batched ? 1 : 0];
  const Shape k = PerDim("fold", "", kernel_size, 2);
  const Shape os = PerDim("fold", "", output_size, 2);
  const Shape blocks = UnfoldBlocks("fold", os, k, PerDim("fold", "", dilation, 2),
                                    PerDim("fold", "", padding, 2), PerDim("fold", "", stride, 2));
  const Geom g = MakeGeom(2, os, blocks, k, PerDim("fold", "", stride, 2),
                          PerDim("fold", "", padding, 2), PerDim("fold", "", dilation, 2));
  Tensor out = EmptyContiguous(out_shape, input.dtype());
  const Tensor x = contiguous(input);
  VisitDType(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T* px = static_cast<const T*>(x.impl()->raw_data());
      T* po = static_cast<T*>(out.impl()->raw_data());
      std::fill(po, po + out.numel(), T(0));
      const int64_t per_out = SaturatingMul(C, g.ImageSize());
      const int64_t per_in = SaturatingMul(SaturatingMul(C, g.KernelSize()), g.Positions());
      for (int64_t i = 0; i < N; ++i) Col2Im(px + i * per_in, C, g, po + i * per_out);
    }
  });
  return out;
}

}  // namespace ft::kernels

// vjp and jvp formulas: convolution and pooling (conv1d/2d/3d, conv_transpose1d/2d/3d, unfold,
// fold, max_pool1d/2d (with indices), avg_pool1d/2d, adaptive_avg_pool1d/2d,
// adaptive_max_pool2d, upsample_nearest/linear and their backwards).
//
// Every formula is written with public ops, so it is differentiable and batchable again:
//   - conv is bilinear in (input, weight): the input gradient is a transposed conv of the
//     output gradient, the weight gradient the primitive conv_weight_grad (itself bilinear:
//     its gradients are a transposed conv and a conv), the bias gradient a sum; a transposed
//     conv's gradients are the same three with the roles of conv and transposed conv swapped.
//   - unfold and fold are each other's adjoints; the average pools are linear maps whose
//     adjoints are written with fold (avg_pool) or two matmuls with constant pooling matrices
//     (adaptive_avg_pool); max pools scatter the gradient into the argmax positions through
//     their indices (scatter_add), and their tangents gather there.
//   - each upsample op is a linear map whose adjoint is its partner op (upsample_nearest and
//     upsample_nearest_backward, upsample_linear and upsample_linear_backward): the vjp calls
//     the partner, the jvp the op itself on the tangent.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <tuple>

#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "kernels/conv.h"
#include "kernels/pooling.h"
#include "ops/ops.h"

namespace ft::autograd {
namespace {

using internal::AddTangents;
using internal::Op;

// PerDim: a per-dim argument with one value per spatial dim.
Shape PerDim(IntArrayRef v, int64_t n) {
  if (static_cast<int64_t>(v.size()) == n) return Shape(v.begin(), v.end());
  return Shape(static_cast<size_t>(n), v.empty() ? 0 : v[0]);
}

template <int64_t kN>
Tensor Conv(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, IntArrayRef s,
            IntArrayRef p, IntArrayRef d, int64_t groups) {
  if constexpr (kN == 1) return conv1d(x, w, b, s, p, d, groups);
  if constexpr (kN == 2) return conv2d(x, w, b, s, p, d, groups);
  if constexpr (kN == 3) return conv3d(x, w, b, s, p, d, groups);
}

template <int64_t kN>
Tensor ConvT(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, IntArrayRef s,
             IntArrayRef p, IntArrayRef op, int64_t groups, IntArrayRef d) {
  if constexpr (kN == 1) return conv_transpose1d(x, w, b, s, p, op, groups, d);
  if constexpr (kN == 2) return conv_transpose2d(x, w, b, s, p, op, groups, d);
  if constexpr (kN == 3) return conv_transpose3d(x, w, b, s, p, op, groups, d);
}

// ConvInputGrad: the gradient of <g, conv(x, w)> with respect to x: the transposed conv of g,
// given back the input's size up to the rows the forward never read (in + 2p - effective
// kernel not a multiple of stride): output_padding.
template <int64_t kN>
Tensor ConvInputGrad(const Tensor& g, const Tensor& w, IntArrayRef xshape, IntArrayRef s,
                     IntArrayRef p, IntArrayRef d, int64_t groups) {
  const Shape ss = PerDim(s, kN), ps = PerDim(p, kN), ds = PerDim(d, kN);
  Shape op;
  for (int64_t i = 0; i < kN; ++i) {
    const int64_t in = xshape[xshape.size() - kN + i], o = g.size(g.dim() - kN + i);
    const int64_t k = w.size(2 + i);
    op.push_back(in + 2 * ps[i] - ((o - 1) * ss[i] + ds[i] * (k - 1) + 1));
  }
  return ConvT<kN>(g, w, std::nullopt, s, p, op, groups, d);
}

// BiasGrad: the output gradient summed over every dim but the channels.
Tensor BiasGrad(const Tensor& g, int64_t n) {
  Shape dims;
  const bool batched = g.dim() == n + 2;
  if (batched) dims.push_back(0);
  for (int64_t i = 0; i < n; ++i) dims.push_back((batched ? 2 : 1) + i);
  return sum(g, dims);
}

// BiasTangent: a bias tangent [O] shaped to broadcast along the output's channel dim.
Tensor BiasTangent(const Tensor& t, int64_t n) {
  Shape s = {t.size(0)};
  for (int64_t i = 0; i < n; ++i) s.push_back(1);
  return reshape(t, s);
}

// Conv args: (input, weight, bias, stride, padding, dilation, groups).
template <int64_t kN>
void SetConvFormulas(const char* name) {
  SetVjp(Op(name), [](const VjpContext& c, const TensorList& g) {
    const Tensor &x = c.input(0), &w = c.input(1);
    const IntArrayRef s = c.inputs[3].shape(), p = c.inputs[4].shape(), d = c.inputs[5].shape();
    const int64_t groups = c.inputs[6].to_int();
    TensorList out(c.inputs[2].is_none() ? 2 : 3);
    if (c.needs(0)) out[0] = ConvInputGrad<kN>(g[0], w, x.sizes(), s, p, d, groups);
    if (c.needs(1)) out[1] = conv_weight_grad(x, w.sizes(), g[0], s, p, d, groups);
    if (out.size() == 3 && c.needs(2)) out[2] = BiasGrad(g[0], kN);
    return out;
  });
  SetJvp(Op(name), [](const JvpContext& c, const TensorList& t) {
    const Tensor &x = c.input(0), &w = c.input(1);
    const IntArrayRef s = c.inputs[3].shape(), p = c.inputs[4].shape(), d = c.inputs[5].shape();
    const int64_t groups = c.inputs[6].to_int();
    Tensor out = AddTangents(
        t[0].defined() ? Conv<kN>(t[0], w, std::nullopt, s, p, d, groups) : Tensor(),
        t[1].defined() ? Conv<kN>(x, t[1], std::nullopt, s, p, d, groups) : Tensor());
    if (t.size() > 2 && t[2].defined()) out = AddTangents(out, BiasTangent(t[2], kN));
    return TensorList{out};
  });
}

// conv_weight_grad args: (input, weight_size, grad_output, stride, padding, dilation, groups).
// It is bilinear in (input, grad_output), and <V, conv_weight_grad(x, g)> = <g, conv(x, V)>:
// the cotangent V is a weight, so x's gradient is conv's input gradient of g with weight V and
// g's is conv(x, V).
template <int64_t kN>
Tensor ConvWeightGradVjpInput(const VjpContext& c, const Tensor& v) {
  const IntArrayRef s = c.inputs[3].shape(), p = c.inputs[4].shape(), d = c.inputs[5].shape();
  return ConvInputGrad<kN>(c.input(2), v, c.input(0).sizes(), s, p, d, c.inputs[6].to_int());
}

void SetConvWeightGradFormulas() {
  SetVjp(Op("conv_weight_grad"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const IntArrayRef s = c.inputs[3].shape(), p = c.inputs[4].shape(), d = c.inputs[5].shape();
    const int64_t groups = c.inputs[6].to_int();
    const int64_t n = static_cast<int64_t>(c.inputs[1].shape().size()) - 2;
    TensorList out(2);  // one per tensor input: input, grad_output
    if (!g[0].defined()) return out;
    if (c.needs(0)) {
      out[0] = n == 1   ? ConvWeightGradVjpInput<1>(c, g[0])
               : n == 2 ? ConvWeightGradVjpInput<2>(c, g[0])
                        : ConvWeightGradVjpInput<3>(c, g[0]);
    }
    if (c.needs(1)) {
      out[1] = n == 1   ? Conv<1>(x, g[0], std::nullopt, s, p, d, groups)
               : n == 2 ? Conv<2>(x, g[0], std::nullopt, s, p, d, groups)
                        : Conv<3>(x, g[0], std::nullopt, s, p, d, groups);
    }
    return out;
  });
  SetJvp(Op("conv_weight_grad"), [](const JvpContext& c, const TensorList& t) {
    const IntArrayRef ws = c.inputs[1].shape(), s = c.inputs[3].shape(),
                      p = c.inputs[4].shape(), d = c.inputs[5].shape();
    const int64_t groups = c.inputs[6].to_int();
    return TensorList{AddTangents(
        t[0].defined() ? conv_weight_grad(t[0], ws, c.input(2), s, p, d, groups) : Tensor(),
        t[1].defined() ? conv_weight_grad(c.input(0), ws, t[1], s, p, d, groups) : Tensor())};
  });
}

// Transposed conv args: (input, weight, bias, stride, padding, output_padding, groups,
// dilation). conv_transpose is conv's adjoint in the input, so its input gradient is a conv.
template <int64_t kN>
void SetConvTransposeFormulas(const char* name) {
  SetVjp(Op(name), [](const VjpContext& c, const TensorList& g) {
    const Tensor &x = c.input(0), &w = c.input(1);
    const IntArrayRef s = c.inputs[3].shape(), p = c.inputs[4].shape(), d = c.inputs[7].shape();
    const int64_t groups = c.inputs[6].to_int();
    TensorList out(c.inputs[2].is_none() ? 2 : 3);
    if (c.needs(0)) {
      Tensor gi = Conv<kN>(g[0], w, std::nullopt, s, p, d, groups);
      // An output_padding of at least the stride (allowed below the dilation) adds windows.
      for (int64_t i = 0; i < kN; ++i) {
        const int64_t dim = x.dim() - kN + i;
        if (gi.size(dim) != x.size(dim)) gi = narrow(gi, dim, 0, x.size(dim));
      }
      out[0] = gi;
    }
    // conv_transpose(x, w) is conv's adjoint: <g, conv_transpose(x, w)> = <conv(g, w), x>,
    // the weight gradient of the conv from g to x.
    if (c.needs(1)) out[1] = conv_weight_grad(g[0], w.sizes(), x, s, p, d, groups);
    if (out.size() == 3 && c.needs(2)) out[2] = BiasGrad(g[0], kN);
    return out;
  });
  SetJvp(Op(name), [](const JvpContext& c, const TensorList& t) {
    const Tensor &x = c.input(0), &w = c.input(1);
    const IntArrayRef s = c.inputs[3].shape(), p = c.inputs[4].shape(),
                      op = c.inputs[5].shape(), d = c.inputs[7].shape();
    const int64_t groups = c.inputs[6].to_int();
    Tensor out = AddTangents(
        t[0].defined() ? ConvT<kN>(t[0], w, std::nullopt, s, p, op, groups, d) : Tensor(),
        t[1].defined() ? ConvT<kN>(x, t[1], std::nullopt, s, p, op, groups, d) : Tensor());
    if (t.size() > 2 && t[2].defined()) out = AddTangents(out, BiasTangent(t[2], kN));
    return TensorList{out};
  });
}

// ---- Max pools: the gradient goes to each window's argmax (indices into the flattened
// spatial dims of the input plane). ----

Tensor FlattenSpatial(const Tensor& t, int64_t n) {
  return n == 1 ? t : flatten(t, t.dim() - n, t.dim() - 1);
}

Tensor MaxPoolGrad(const Tensor& g, const Tensor& x, const Tensor& indices, int64_t n) {
  const Tensor zero = FlattenSpatial(zeros_like(x), n);
  return reshape(scatter_add(zero, zero.dim() - 1, FlattenSpatial(indices, n),
                             FlattenSpatial(g, n)),
                 x.sizes());
}

Tensor MaxPoolTangent(const Tensor& t, const Tensor& indices, int64_t n) {
  const Tensor flat = FlattenSpatial(t, n);
  return reshape(gather(flat, flat.dim() - 1, FlattenSpatial(indices, n)), indices.sizes());
}

// Max-pool args: (input, kernel_size, stride, padding, dilation, ceil_mode).
std::tuple<Tensor, Tensor> MaxPoolWithIndices(int64_t n, const ValueList& in) {
  const Tensor& x = in[0].tensor();
  const IntArrayRef k = in[1].shape(), s = in[2].shape(), p = in[3].shape(), d = in[4].shape();
  const bool ceil = in[5].to_bool();
  return n == 1 ? max_pool1d_with_indices(x, k, s, p, d, ceil)
                : max_pool2d_with_indices(x, k, s, p, d, ceil);
}

void SetMaxPoolFormulas(const char* name, int64_t n) {
  SetVjp(Op(name), [n](const VjpContext& c, const TensorList& g) {
    if (!g[0].defined()) return TensorList{Tensor()};
    const Tensor indices = std::get<1>(MaxPoolWithIndices(n, c.inputs));
    return TensorList{MaxPoolGrad(g[0], c.input(0), indices, n)};
  });
  SetJvp(Op(name), [n](const JvpContext& c, const TensorList& t) {
    const Tensor indices = std::get<1>(MaxPoolWithIndices(n, c.inputs));
    return TensorList{MaxPoolTangent(t[0], indices, n)};
  });
}

// The ops returning (values, indices) read their own indices output.
void SetIndexedMaxFormulas(const char* name, int64_t n) {
  SetVjp(Op(name), [n](const VjpContext& c, const TensorList& g) {
    if (!g[0].defined()) return TensorList{Tensor()};
    return TensorList{MaxPoolGrad(g[0], c.input(0), c.output(1), n)};
  });
  SetJvp(Op(name), [n](const JvpContext& c, const TensorList& t) {
    return TensorList{MaxPoolTangent(t[0], c.output(1), n), Tensor()};
  });
  MarkOutputValuesRead(Op(name));
}

// ---- Average pools: linear maps. ----

// AvgPoolGrad: the adjoint of avg_pool{n}d: each output gradient divided by its window's
// divisor and spread over the window (fold sums the overlaps). With ceil_mode the last window
// may reach past the padded input: fold then gets an image `extra` rows longer, cut off after.
Tensor AvgPoolGrad(const Tensor& g, const Tensor& x, int64_t n, IntArrayRef kernel_size,
                   IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                   bool count_include_pad, std::optional<int64_t> divisor_override) {
  Tensor div = to(kernels::AvgPoolDivisor(n, x.sizes(), kernel_size, stride, padding, ceil_mode,
                                          count_include_pad, divisor_override),
                  g.dtype());
  if (n == 1) div = squeeze_dim(div, 0);
  const Shape k1 = PerDim(kernel_size, n);
  const Shape s1 = stride.empty() ? k1 : PerDim(stride, n);
  const Shape p1 = PerDim(padding, n);
  Shape k = {1, 1}, s = {1, 1}, p = {0, 0}, in = {1, 1}, out = {1, 1};
  for (int64_t i = 0; i < n; ++i) {
    const size_t j = static_cast<size_t>(2 - n + i);
    k[j] = k1[i];
    s[j] = s1[i];
    p[j] = p1[i];
    in[j] = x.size(x.dim() - n + i);
    out[j] = g.size(g.dim() - n + i);
  }
  const int64_t planes = x.numel() / (in[0] * in[1]);
  const Tensor cols = expand(reshape(g / div, {planes, 1, out[0] * out[1]}),
                             {planes, k[0] * k[1], out[0] * out[1]});
  Shape size = in;
  for (size_t j = 0; j < 2; ++j) {
    size[j] += std::max<int64_t>(0, (out[j] - 1) * s[j] + k[j] - (in[j] + 2 * p[j]));
  }
  Tensor img = fold(cols, size, k, {1}, p, s);
  for (size_t j = 0; j < 2; ++j) {
    if (size[j] != in[j]) img = narrow(img, 2 + static_cast<int64_t>(j), 0, in[j]);
  }
  return reshape(img, x.sizes());
}

// ---- Upsampling. ----

std::optional<double> OptDouble(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_double();
}

// Forward args: nearest (input, output_size, scales_d, scales_h, scales_w, exact); linear
// (input, output_size, align_corners, scales_d, scales_h, scales_w). A backward has
// input_size after output_size, then the same.
template <bool kLinear>
void SetUpsampleFormulas(const char* forward, const char* backward) {
  // read(in, k): the mode's arguments, `k` being the index of the first one after the sizes;
  // fwd and bwd call the forward and the backward with them.
  struct Args {
    IntArrayRef os;
    bool flag;
    std::optional<double> sd, sh, sw;
  };
  static constexpr auto read = [](const ValueList& in, size_t k) {
    const size_t sk = kLinear ? k + 1 : k;
    return Args{in[1].shape(), in[kLinear ? k : k + 3].to_bool(), OptDouble(in[sk]),
                OptDouble(in[sk + 1]), OptDouble(in[sk + 2])};
  };
  static constexpr auto fwd = [](const Tensor& x, const Args& a) {
    return kLinear ? upsample_linear(x, a.os, a.flag, a.sd, a.sh, a.sw)
                   : upsample_nearest(x, a.os, a.sd, a.sh, a.sw, a.flag);
  };
  static constexpr auto bwd = [](const Tensor& g, IntArrayRef input_size, const Args& a) {
    return kLinear ? upsample_linear_backward(g, a.os, input_size, a.flag, a.sd, a.sh, a.sw)
                   : upsample_nearest_backward(g, a.os, input_size, a.sd, a.sh, a.sw, a.flag);
  };
  SetVjp(Op(forward), [](const VjpContext& c, const TensorList& g) {
    return TensorList{bwd(g[0], c.input(0).sizes(), read(c.inputs, 2))};
  });
  SetJvp(Op(forward), [](const JvpContext& c, const TensorList& t) {
    return TensorList{fwd(t[0], read(c.inputs, 2))};
  });
  SetVjp(Op(backward), [](const VjpContext& c, const TensorList& g) {
    return TensorList{fwd(g[0], read(c.inputs, 3))};
  });
  SetJvp(Op(backward), [](const JvpContext& c, const TensorList& t) {
    return TensorList{bwd(t[0], c.inputs[2].shape(), read(c.inputs, 3))};
  });
  MarkInputValuesUnused(Op(forward));
  MarkInputValuesUnused(Op(backward));
}

}  // namespace

void RegisterConvFormulas() {
  SetConvFormulas<1>("conv1d");
  SetConvFormulas<2>("conv2d");
  SetConvFormulas<3>("conv3d");
  SetConvWeightGradFormulas();
  SetConvTransposeFormulas<1>("conv_transpose1d");
  SetConvTransposeFormulas<2>("conv_transpose2d");
  SetConvTransposeFormulas<3>("conv_transpose3d");

  SetMaxPoolFormulas("max_pool1d", 1);
  SetMaxPoolFormulas("max_pool2d", 2);
  SetIndexedMaxFormulas("max_pool1d_with_indices", 1);
  SetIndexedMaxFormulas("max_pool2d_with_indices", 2);
  SetIndexedMaxFormulas("adaptive_max_pool2d", 2);

  // unfold (input, kernel_size, dilation, padding, stride) and fold (input, output_size,
  // kernel_size, dilation, padding, stride) are adjoint linear maps.
  SetVjp(Op("unfold"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    return TensorList{fold(g[0], {x.size(-2), x.size(-1)}, c.inputs[1].shape(),
                           c.inputs[2].shape(), c.inputs[3].shape(), c.inputs[4].shape())};
  });
  SetJvp(Op("unfold"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{unfold(t[0], c.inputs[1].shape(), c.inputs[2].shape(),
                             c.inputs[3].shape(), c.inputs[4].shape())};
  });
  SetVjp(Op("fold"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{unfold(g[0], c.inputs[2].shape(), c.inputs[3].shape(),
                             c.inputs[4].shape(), c.inputs[5].shape())};
  });
  SetJvp(Op("fold"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{fold(t[0], c.inputs[1].shape(), c.inputs[2].shape(), c.inputs[3].shape(),
                           c.inputs[4].shape(), c.inputs[5].shape())};
  });

  // avg_pool1d (input, kernel_size, stride, padding, ceil_mode, count_include_pad) and
  // avg_pool2d (..., divisor_override).
  SetVjp(Op("avg_pool1d"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{AvgPoolGrad(g[0], c.input(0), 1, c.inputs[1].shape(), c.inputs[2].shape(),
                                  c.inputs[3].shape(), c.inputs[4].to_bool(),
                                  c.inputs[5].to_bool(), std::nullopt)};
  });
  SetJvp(Op("avg_pool1d"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{avg_pool1d(t[0], c.inputs[1].shape(), c.inputs[2].shape(),
                                 c.inputs[3].shape(), c.inputs[4].to_bool(),
                                 c.inputs[5].to_bool())};
  });
  SetVjp(Op("avg_pool2d"), [](const VjpContext& c, const TensorList& g) {
    std::optional<int64_t> div;
    if (!c.inputs[6].is_none()) div = c.inputs[6].to_int();
    return TensorList{AvgPoolGrad(g[0], c.input(0), 2, c.inputs[1].shape(), c.inputs[2].shape(),
                                  c.inputs[3].shape(), c.inputs[4].to_bool(),
                                  c.inputs[5].to_bool(), div)};
  });
  SetJvp(Op("avg_pool2d"), [](const JvpContext& c, const TensorList& t) {
    std::optional<int64_t> div;
    if (!c.inputs[6].is_none()) div = c.inputs[6].to_int();
    return TensorList{avg_pool2d(t[0], c.inputs[1].shape(), c.inputs[2].shape(),
                                 c.inputs[3].shape(), c.inputs[4].to_bool(),
                                 c.inputs[5].to_bool(), div)};
  });

  // Adaptive average pools: out = P_h x P_w^T (rows of P average one window), so the
  // gradient is P_h^T g P_w.
  SetVjp(Op("adaptive_avg_pool1d"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const Tensor pw = to(kernels::AdaptivePoolMatrix(x.size(-1), g[0].size(-1)), g[0].dtype());
    return TensorList{matmul(g[0], pw)};
  });
  SetJvp(Op("adaptive_avg_pool1d"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{adaptive_avg_pool1d(t[0], c.inputs[1].shape())};
  });
  SetVjp(Op("adaptive_avg_pool2d"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const Tensor ph = to(kernels::AdaptivePoolMatrix(x.size(-2), g[0].size(-2)), g[0].dtype());
    const Tensor pw = to(kernels::AdaptivePoolMatrix(x.size(-1), g[0].size(-1)), g[0].dtype());
    return TensorList{matmul(matmul(transpose(ph, 0, 1), g[0]), pw)};
  });
  SetJvp(Op("adaptive_avg_pool2d"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{adaptive_avg_pool2d(t[0], c.inputs[1].shape())};
  });

  SetUpsampleFormulas<false>("upsample_nearest", "upsample_nearest_backward");
  SetUpsampleFormulas<true>("upsample_linear", "upsample_linear_backward");

  for (const char* name : {"unfold", "fold", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
                           "adaptive_avg_pool2d"}) {
    MarkInputValuesUnused(Op(name));
  }
}

}  // namespace ft::autograd

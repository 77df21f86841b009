// vjp and jvp formulas: shape, view, indexing and joining ops. Every formula is written with
// public out-of-place ops (pad, narrow, scatter_add, gather, ...), never with an in-place write
// into a buffer, so it is itself differentiable and batchable.
// Every op here but outer is linear (pad: affine) in its tensor inputs, so its jvp is the op
// itself applied to the tangent with the same non-tensor arguments (pad pads the tangent with
// 0, not with the value; integer index tensors have no tangent).
// Non-differentiable: one_hot, argsort.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "absl/functional/function_ref.h"
#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "ops/ops.h"

namespace ft::autograd {
namespace {

using internal::AddTangents;
using internal::Op;

// PadDim pads (or, with negative amounts, crops) t along dim `dim` only: left / right.
Tensor PadDim(const Tensor& t, int64_t dim, int64_t left, int64_t right) {
  if (left == 0 && right == 0) return t;
  const int64_t rank = t.dim();
  Shape pads(static_cast<size_t>(2 * (rank - dim)), 0);
  pads[static_cast<size_t>(2 * (rank - 1 - dim))] = left;
  pads[static_cast<size_t>(2 * (rank - 1 - dim) + 1)] = right;
  return pad(t, pads);
}

// CastLike: g converted to ref's dtype (joining ops promote their inputs).
Tensor CastLike(const Tensor& g, const Tensor& ref) {
  return g.dtype() == ref.dtype() ? g : to(g, ref.dtype());
}

// IndexAlong: a rank-1 int64 index (or rank 0) laid along `dim` of a tensor of `sizes`
// (size 1 elsewhere) and expanded to `sizes`.
Tensor IndexAlong(const Tensor& index, int64_t dim, IntArrayRef sizes) {
  Shape view_shape(sizes.size(), 1);
  view_shape[static_cast<size_t>(dim)] = index.numel();
  return expand(reshape(index, view_shape), sizes);
}

// SplitBackward: the gradient of a list-output op (split, ...) is the concatenation of the
// pieces' gradients along dim; a piece without a gradient contributes zeros.
TensorList SplitBackward(const VjpContext& c, const TensorList& g, int64_t dim) {
  const Tensor& x = c.input(0);
  const TensorList& pieces = c.outputs[0].tensor_list();
  TensorList parts;
  parts.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i < g.size() && g[i].defined()) {
      parts.push_back(g[i]);
    } else {
      parts.push_back(zeros_like(pieces[i]));
    }
  }
  const int64_t d = WrapDim("split", dim, x.dim());
  Tensor r = cat(parts, d);
  // A 1-D empty x gives empty 1-D pieces, which cat skips; the shape still matches.
  return TensorList{reshape(r, x.sizes())};
}

// OptInt: an optional int argument (slice's bounds, take_along_dim's dim).
std::optional<int64_t> OptInt(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_int();
}

// JoinTangents: the tangents of a joining op's (cat, stack) inputs, each undefined one (a
// constant or integer piece) replaced by zeros like its primal, so the pieces still line up.
TensorList JoinTangents(const JvpContext& c, const TensorList& t) {
  const TensorList& ts = c.inputs[0].tensor_list();
  TensorList parts;
  parts.reserve(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    parts.push_back(i < t.size() && t[i].defined() ? t[i] : zeros_like(ts[i]));
  }
  return parts;
}

// The scatter ops (select_scatter, slice_scatter, diagonal_scatter) through two callables
// with the op's view arguments bound: `region` is the view (select, slice, diagonal) and
// `scatter` the op itself. The output's region comes from src and the rest from self, so
// self's gradient is g with the region zeroed (written out of place by the op), src's is g's
// region; neither reads an input. Both are linear: the tangent is the op on the tangents,
// an undefined one (a constant) read as zeros of its primal's shape.
using RegionFn = absl::FunctionRef<Tensor(const Tensor&)>;
using ScatterFn = absl::FunctionRef<Tensor(const Tensor&, const Tensor&)>;

TensorList ScatterVjp(const VjpContext& c, const Tensor& g, RegionFn region, ScatterFn scatter) {
  const Tensor g_region = region(g);
  return TensorList{c.needs(0) ? scatter(g, zeros_like(g_region)) : Tensor(),
                    c.needs(1) ? g_region : Tensor()};
}

TensorList ScatterJvp(const JvpContext& c, const TensorList& t, ScatterFn scatter) {
  const Tensor base = t[0].defined() ? t[0] : zeros_like(c.input(0));
  const Tensor src = t[1].defined() ? CastLike(t[1], base) : zeros_like(c.input(1), base.dtype());
  return TensorList{scatter(base, src)};
}

}  // namespace

void RegisterShapeFormulas() {
  SetVjp(Op("unflatten"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{reshape(g[0], c.input(0).sizes())};
  });
  SetJvp(Op("unflatten"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{unflatten(t[0], c.inputs[1].to_int(), c.inputs[2].shape())};
  });
  SetVjp(Op("movedim"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{movedim(g[0], c.inputs[2].shape(), c.inputs[1].shape())};
  });
  SetJvp(Op("movedim"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{movedim(t[0], c.inputs[1].shape(), c.inputs[2].shape())};
  });
  SetVjp(Op("flip"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{flip(g[0], c.inputs[1].shape())};
  });
  SetJvp(Op("flip"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{flip(t[0], c.inputs[1].shape())};
  });

  // select / narrow / slice / diagonal: the gradient is written back into zeros of the
  // input's shape at the view's position, built out-of-place by padding.
  SetVjp(Op("select"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const int64_t d = WrapDim("select", c.inputs[1].to_int(), x.dim());
    const int64_t size = x.size(d);
    int64_t index = c.inputs[2].to_int();
    if (index < 0) index += size;
    return TensorList{PadDim(unsqueeze(g[0], d), d, index, size - 1 - index)};
  });
  SetJvp(Op("select"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{select(t[0], c.inputs[1].to_int(), c.inputs[2].to_int())};
  });
  SetVjp(Op("narrow"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const int64_t d = WrapDim("narrow", c.inputs[1].to_int(), x.dim());
    const int64_t size = x.size(d);
    int64_t start = c.inputs[2].to_int();
    if (start < 0) start += size;
    const int64_t length = c.inputs[3].to_int();
    return TensorList{PadDim(g[0], d, start, size - start - length)};
  });
  SetJvp(Op("narrow"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{
        narrow(t[0], c.inputs[1].to_int(), c.inputs[2].to_int(), c.inputs[3].to_int())};
  });
  SetVjp(Op("slice"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const int64_t d = WrapDim("slice", c.inputs[1].to_int(), x.dim());
    const int64_t size = x.size(d);
    const int64_t step = c.inputs[4].to_int();
    // The kernel's Python-style normalization of the start bound.
    auto normalize = [size](int64_t v) {
      if (v < 0) v = v < -size ? 0 : v + size;
      return std::min(v, size);
    };
    const int64_t b = c.inputs[2].is_none() ? 0 : normalize(c.inputs[2].to_int());
    const int64_t n = g[0].size(d);
    if (n == 0) return TensorList{zeros_like(x)};
    Tensor r = g[0];
    int64_t span = n;  // elements of x covered from b: (n - 1) * step + 1
    if (step > 1) {
      // [.., n, ..] -> [.., n, step, ..] (zeros after each element) -> [.., n * step, ..],
      // then drop the trailing zeros after the last element.
      Shape merged(r.sizes().begin(), r.sizes().end());
      merged[static_cast<size_t>(d)] = n * step;
      r = reshape(PadDim(unsqueeze(r, d + 1), d + 1, 0, step - 1), merged);
      span = (n - 1) * step + 1;
      r = narrow(r, d, 0, span);
    }
    return TensorList{PadDim(r, d, b, size - b - span)};
  });
  SetJvp(Op("slice"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{slice(t[0], c.inputs[1].to_int(), OptInt(c.inputs[2]),
                            OptInt(c.inputs[3]), c.inputs[4].to_int())};
  });
  SetVjp(Op("diagonal"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const int64_t rank = x.dim();
    const int64_t offset = c.inputs[1].to_int();
    const int64_t d1 = WrapDim("diagonal", c.inputs[2].to_int(), rank);
    const int64_t d2 = WrapDim("diagonal", c.inputs[3].to_int(), rank);
    const int64_t rows = x.size(d1), cols = x.size(d2);
    const int64_t len = g[0].size(-1);
    if (len == 0) return TensorList{zeros_like(x)};
    // [..., L] -> [..., L, L] diagonal matrices -> padded to [..., rows, cols] so that
    // element i lands at (i, i + offset) -> the two matrix dims moved back to (d1, d2).
    // The diagonal matrices without eye(): [..., L, 1] padded to [..., L, L + 1], flattened,
    // cut to L * L and viewed as [..., L, L] puts g[..., i] at (i, i).
    Shape lead(g[0].sizes().begin(), g[0].sizes().end() - 1);
    Shape flat_shape = lead, square_shape = lead;
    flat_shape.push_back(len * (len + 1));
    square_shape.push_back(len);
    square_shape.push_back(len);
    Tensor m = reshape(PadDim(unsqueeze(g[0], -1), rank - 1, 0, len), flat_shape);
    m = reshape(narrow(m, rank - 2, 0, len * len), square_shape);
    const int64_t row0 = offset >= 0 ? 0 : -offset;
    const int64_t col0 = offset >= 0 ? offset : 0;
    m = PadDim(m, rank - 2, row0, rows - row0 - len);
    m = PadDim(m, rank - 1, col0, cols - col0 - len);
    const int64_t src[2] = {rank - 2, rank - 1};
    const int64_t dst[2] = {d1, d2};
    return TensorList{movedim(m, IntArrayRef(src, 2), IntArrayRef(dst, 2))};
  });
  SetJvp(Op("diagonal"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{diagonal(t[0], c.inputs[1].to_int(), c.inputs[2].to_int(),
                               c.inputs[3].to_int())};
  });

  // The scatter ops: see ScatterVjp.
  SetVjp(Op("select_scatter"), [](const VjpContext& c, const TensorList& g) {
    const int64_t dim = c.inputs[2].to_int(), index = c.inputs[3].to_int();
    return ScatterVjp(
        c, g[0], [&](const Tensor& x) { return select(x, dim, index); },
        [&](const Tensor& x, const Tensor& v) { return select_scatter(x, v, dim, index); });
  });
  SetJvp(Op("select_scatter"), [](const JvpContext& c, const TensorList& t) {
    const int64_t dim = c.inputs[2].to_int(), index = c.inputs[3].to_int();
    return ScatterJvp(c, t, [&](const Tensor& x, const Tensor& v) {
      return select_scatter(x, v, dim, index);
    });
  });
  SetVjp(Op("slice_scatter"), [](const VjpContext& c, const TensorList& g) {
    const int64_t dim = c.inputs[2].to_int(), step = c.inputs[5].to_int();
    const std::optional<int64_t> start = OptInt(c.inputs[3]), end = OptInt(c.inputs[4]);
    return ScatterVjp(
        c, g[0], [&](const Tensor& x) { return slice(x, dim, start, end, step); },
        [&](const Tensor& x, const Tensor& v) {
          return slice_scatter(x, v, dim, start, end, step);
        });
  });
  SetJvp(Op("slice_scatter"), [](const JvpContext& c, const TensorList& t) {
    const int64_t dim = c.inputs[2].to_int(), step = c.inputs[5].to_int();
    const std::optional<int64_t> start = OptInt(c.inputs[3]), end = OptInt(c.inputs[4]);
    return ScatterJvp(c, t, [&](const Tensor& x, const Tensor& v) {
      return slice_scatter(x, v, dim, start, end, step);
    });
  });
  SetVjp(Op("diagonal_scatter"), [](const VjpContext& c, const TensorList& g) {
    const int64_t offset = c.inputs[2].to_int();
    const int64_t dim1 = c.inputs[3].to_int(), dim2 = c.inputs[4].to_int();
    return ScatterVjp(
        c, g[0], [&](const Tensor& x) { return diagonal(x, offset, dim1, dim2); },
        [&](const Tensor& x, const Tensor& v) {
          return diagonal_scatter(x, v, offset, dim1, dim2);
        });
  });
  SetJvp(Op("diagonal_scatter"), [](const JvpContext& c, const TensorList& t) {
    const int64_t offset = c.inputs[2].to_int();
    const int64_t dim1 = c.inputs[3].to_int(), dim2 = c.inputs[4].to_int();
    return ScatterJvp(c, t, [&](const Tensor& x, const Tensor& v) {
      return diagonal_scatter(x, v, offset, dim1, dim2);
    });
  });

  // Indexing.
  SetVjp(Op("index_select"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const Tensor& index = c.input(2);
    if (x.dim() == 0) return TensorList{reshape(g[0], x.sizes()), Tensor()};
    const int64_t d = WrapDim("index_select", c.inputs[1].to_int(), x.dim());
    Tensor idx = IndexAlong(index, d, g[0].sizes());
    return TensorList{scatter_add(zeros_like(x), d, idx, g[0]), Tensor()};
  });
  // The index's tangent (t[1]) is always undefined: only x's tangent flows.
  SetJvp(Op("index_select"), [](const JvpContext& c, const TensorList& t) {
    if (!t[0].defined()) return TensorList{Tensor()};
    return TensorList{index_select(t[0], c.inputs[1].to_int(), c.input(2))};
  });
  SetVjp(Op("gather"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    return TensorList{
        scatter_add(zeros_like(x), c.inputs[1].to_int(), c.input(2), g[0]),
        Tensor()};
  });
  SetJvp(Op("gather"), [](const JvpContext& c, const TensorList& t) {
    if (!t[0].defined()) return TensorList{Tensor()};
    return TensorList{gather(t[0], c.inputs[1].to_int(), c.input(2))};
  });
  SetVjp(Op("scatter_add"), [](const VjpContext& c, const TensorList& g) {
    const int64_t dim = c.inputs[1].to_int();
    const Tensor& index = c.input(2);
    const Tensor& src = c.input(3);
    if (!c.needs(2)) return TensorList{g[0], Tensor(), Tensor()};
    // src elements outside index's extent are not used: zero gradient there.
    Tensor gs = gather(g[0], dim, index);
    if (gs.dim() == src.dim() && src.dim() > 0) {
      Shape pads;
      for (int64_t d = src.dim() - 1; d >= 0; --d) {
        pads.push_back(0);
        pads.push_back(src.size(d) - gs.size(d));
      }
      gs = pad(gs, pads);
    } else {
      gs = reshape(gs, src.sizes());
    }
    return TensorList{c.needs(0) ? g[0] : Tensor(), Tensor(), gs};
  });
  // scatter_add is linear in (x, src): its tangent scatters src's tangent into x's.
  SetJvp(Op("scatter_add"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& tx = t[0];
    const Tensor& tsrc = t[2];
    if (!tsrc.defined()) return TensorList{tx};
    const Tensor base = tx.defined() ? tx : zeros_like(c.input(0));
    return TensorList{scatter_add(base, c.inputs[1].to_int(), c.input(2), tsrc)};
  });
  SetVjp(Op("take_along_dim"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const Tensor& indices = c.input(1);
    if (c.inputs[2].is_none()) {
      Tensor flat = scatter_add(zeros_like(reshape(x, {-1})), 0, reshape(indices, {-1}),
                                reshape(g[0], {-1}));
      return TensorList{reshape(flat, x.sizes()), Tensor()};
    }
    const int64_t d = WrapDim("take_along_dim", c.inputs[2].to_int(), x.dim());
    // x broadcast to the output's shape on every dim but d.
    Shape xb(g[0].sizes().begin(), g[0].sizes().end());
    xb[static_cast<size_t>(d)] = x.size(d);
    Tensor idx = expand(indices, g[0].sizes());
    Tensor gx = scatter_add(expand(zeros_like(x), xb), d, idx, g[0]);
    return TensorList{sum_to_size(gx, x.sizes()), Tensor()};
  });
  SetJvp(Op("take_along_dim"), [](const JvpContext& c, const TensorList& t) {
    if (!t[0].defined()) return TensorList{Tensor()};
    return TensorList{take_along_dim(t[0], c.input(1), OptInt(c.inputs[2]))};
  });

  // Joining and splitting.
  SetVjp(Op("cat"), [](const VjpContext& c, const TensorList& g) {
    const TensorList& ts = c.inputs[0].tensor_list();
    const int64_t d = WrapDim("cat", c.inputs[1].to_int(), g[0].dim());
    TensorList out;
    out.reserve(ts.size());
    int64_t offset = 0;
    for (size_t k = 0; k < ts.size(); ++k) {
      const Tensor& t = ts[k];
      if (!IsFloating(t.dtype()) || !c.needs(k)) {
        out.emplace_back();
        if (!(t.dim() == 1 && t.size(0) == 0)) offset += t.size(d);
        continue;
      }
      if (t.dim() == 1 && t.size(0) == 0) {  // skipped by cat
        out.push_back(zeros_like(t));
        continue;
      }
      out.push_back(CastLike(narrow(g[0], d, offset, t.size(d)), t));
      offset += t.size(d);
    }
    return out;
  });
  SetJvp(Op("cat"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{cat(JoinTangents(c, t), c.inputs[1].to_int())};
  });
  SetVjp(Op("stack"), [](const VjpContext& c, const TensorList& g) {
    const TensorList& ts = c.inputs[0].tensor_list();
    const int64_t d = WrapDim("stack", c.inputs[1].to_int(), g[0].dim());
    TensorList out;
    out.reserve(ts.size());
    for (size_t i = 0; i < ts.size(); ++i) {
      if (!IsFloating(ts[i].dtype()) || !c.needs(i)) {
        out.emplace_back();
        continue;
      }
      out.push_back(CastLike(select(g[0], d, static_cast<int64_t>(i)), ts[i]));
    }
    return out;
  });
  SetJvp(Op("stack"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{stack(JoinTangents(c, t), c.inputs[1].to_int())};
  });
  SetVjp(Op("split"), [](const VjpContext& c, const TensorList& g) {
    return SplitBackward(c, g, c.inputs[2].to_int());
  });
  SetJvp(Op("split"), [](const JvpContext& c, const TensorList& t) {
    return split(t[0], c.inputs[1].to_int(), c.inputs[2].to_int());
  });
  SetVjp(Op("split_with_sizes"), [](const VjpContext& c, const TensorList& g) {
    return SplitBackward(c, g, c.inputs[2].to_int());
  });
  SetJvp(Op("split_with_sizes"), [](const JvpContext& c, const TensorList& t) {
    return split_with_sizes(t[0], c.inputs[1].shape(), c.inputs[2].to_int());
  });
  SetVjp(Op("chunk"), [](const VjpContext& c, const TensorList& g) {
    return SplitBackward(c, g, c.inputs[2].to_int());
  });
  SetJvp(Op("chunk"), [](const JvpContext& c, const TensorList& t) {
    return chunk(t[0], c.inputs[1].to_int(), c.inputs[2].to_int());
  });

  SetVjp(Op("repeat"), [](const VjpContext& c, const TensorList& g) {
    // The repeats are read off the shapes (g.size(i) = repeats[i] * padded x.size(i)), not
    // from the argument: a size-0 dim leaves g empty, where any repeat count gives zeros.
    const Tensor& x = c.input(0);
    const int64_t n = g[0].dim();
    const int64_t lead = n - x.dim();
    if (n == 0) return TensorList{reshape(g[0], x.sizes())};
    // g: [r0 * s0, r1 * s1, ...] -> [r0, s0, r1, s1, ...], summed over the r dims.
    Shape split_shape;
    Shape sum_dims;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t s = i < lead ? 1 : x.size(i - lead);
      const int64_t r = s == 0 ? 1 : g[0].size(i) / s;
      sum_dims.push_back(static_cast<int64_t>(split_shape.size()));
      split_shape.push_back(r);
      split_shape.push_back(s);
    }
    if (g[0].numel() == 0) return TensorList{zeros_like(x)};
    Tensor r = sum(reshape(g[0], split_shape), sum_dims);
    return TensorList{reshape(r, x.sizes())};
  });
  SetJvp(Op("repeat"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{repeat(t[0], c.inputs[1].shape())};
  });
  SetVjp(Op("pad"), [](const VjpContext& c, const TensorList& g) {
    // pad is a shift with crop along each dim: its adjoint is the opposite shift, i.e. pad by
    // the negated amounts with zeros (positive pads crop the gradient, negative ones re-pad).
    Shape pads = c.inputs[1].shape();
    for (int64_t& p : pads) p = -p;
    return TensorList{pad(g[0], pads)};
  });
  SetJvp(Op("pad"), [](const JvpContext& c, const TensorList& t) {
    // The padding value is a constant: the tangent is padded with zeros.
    return TensorList{pad(t[0], c.inputs[1].shape())};
  });
  SetVjp(Op("outer"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{c.needs(0) ? matmul(g[0], c.input(1)) : Tensor(),
                      c.needs(1) ? matmul(t(g[0]), c.input(0)) : Tensor()};
  });
  // Product rule; an undefined tangent contributes nothing.
  SetJvp(Op("outer"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{
        AddTangents(t[0].defined() ? outer(t[0], c.input(1)) : Tensor(),
                    t[1].defined() ? outer(c.input(0), t[1]) : Tensor())};
  });

  for (const char* name : {"one_hot", "argsort"}) MarkNonDifferentiable(Op(name));
}

}  // namespace ft::autograd

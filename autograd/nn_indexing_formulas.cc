// vjp and jvp formulas: indexing and shape ops for models (embedding, masked_fill, index_add,
// tril, triu, roll, pixel_shuffle, pixel_unshuffle, gather_nd, index_put_nd). Every op here is
// linear in its floating
// tensor inputs (indices and masks carry no gradient), so each jvp is the op applied to the
// tangents, and each vjp is the adjoint written with public ops: embedding accumulates rows
// with index_add, masked_fill zeroes the masked positions, index_add selects, tril / triu
// mask, roll rolls back, the pixel ops invert each other, and gather_nd and index_put_nd are
// each other's adjoint.
#include <cstdint>
#include <optional>

#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "ops/ops.h"
#include "tensor/factories.h"

namespace ft::autograd {
namespace {

using internal::Op;

std::optional<int64_t> OptInt(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_int();
}

// PaddingRow: embedding's padding_idx argument as a row in [0, num), if given.
std::optional<int64_t> PaddingRow(const Value& v, int64_t num) {
  const std::optional<int64_t> p = OptInt(v);
  if (!p) return std::nullopt;
  return *p < 0 ? *p + num : *p;
}

// LastWriters: bool [*B], true at the rows of index [*B, k] that index_put_nd (accumulate
// false) leaves in place, i.e. no later row has the same coordinates. Each place records its
// last row id (rows are written in order), and a row survives if it reads its own id back.
Tensor LastWriters(const Tensor& x, const Tensor& index) {
  const int64_t k = index.size(-1);
  const Shape b(index.sizes().begin(), index.sizes().end() - 1);
  const Shape lead(x.sizes().begin(), x.sizes().begin() + k);
  const Tensor ids = reshape(arange(0, Numel(b), 1, kInt64), b);
  const Tensor writer = index_put_nd(full(lead, -1, kInt64), index, ids, false);
  return eq(gather_nd(writer, index), ids);
}

}  // namespace

void RegisterNnIndexingFormulas() {
  // embedding(input, weight, padding_idx): the weight's gradient sums the output gradient's
  // rows into the rows they were read from. The padding row is a constant to both formulas
  // (torch's vjp rule, and the jvp torch's double-vjp gives): the output rows read from it get
  // no tangent and send no gradient, so jvp and vjp stay each other's transpose.
  SetVjp(Op("embedding"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& input = c.input(0);
    const Tensor& weight = c.input(1);
    const int64_t n = input.numel();
    const Tensor index = reshape(input, {n});
    Tensor rows = reshape(g[0], {n, weight.size(1)});
    if (const std::optional<int64_t> p = PaddingRow(c.inputs[2], weight.size(0))) {
      rows = masked_fill(rows, unsqueeze(eq(index, *p), 1), 0.0);
    }
    return TensorList{Tensor(), index_add(zeros_like(weight), 0, index, rows)};
  });
  SetJvp(Op("embedding"), [](const JvpContext& c, const TensorList& t) {
    if (!t[1].defined()) return TensorList{Tensor()};
    const Tensor& input = c.input(0);
    Tensor out = embedding(input, t[1], OptInt(c.inputs[2]));
    if (const std::optional<int64_t> p = PaddingRow(c.inputs[2], c.input(1).size(0))) {
      out = masked_fill(out, unsqueeze(eq(input, *p), -1), 0.0);
    }
    return TensorList{out};
  });

  // masked_fill(x, mask, value): x's gradient is zero where masked (summed back to x's shape
  // when the mask broadcast it); value's is the sum of the gradient over the masked positions.
  SetVjp(Op("masked_fill"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const Tensor& mask = c.input(1);
    const Tensor& value = c.input(2);
    Tensor gx, gv;
    if (c.needs(0)) gx = sum_to_size(masked_fill(g[0], mask, 0.0), x.sizes());
    if (c.needs(2) && IsFloating(value.dtype())) {
      gv = to(sum(masked_fill(g[0], logical_not(mask), 0.0)), value.dtype());
    }
    return TensorList{gx, Tensor(), gv};
  });
  SetJvp(Op("masked_fill"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& mask = c.input(1);
    if (!t[2].defined()) return TensorList{masked_fill(t[0], mask, 0.0)};
    const Tensor base = t[0].defined() ? t[0] : zeros_like(c.input(0));
    return TensorList{masked_fill(base, mask, t[2])};
  });

  // index_add(x, dim, index, source, alpha): the identity for x; alpha times the selected
  // gradient rows for source.
  SetVjp(Op("index_add"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& source = c.input(3);
    Tensor gs;
    if (c.needs(2)) {
      const Scalar alpha = c.inputs[4].scalar();
      gs = reshape(index_select(g[0], c.inputs[1].to_int(), c.input(2)) * alpha, source.sizes());
    }
    return TensorList{c.needs(0) ? g[0] : Tensor(), Tensor(), gs};
  });
  SetJvp(Op("index_add"), [](const JvpContext& c, const TensorList& t) {
    if (!t[2].defined()) return TensorList{t[0]};
    const Tensor base = t[0].defined() ? t[0] : zeros_like(c.input(0));
    return TensorList{
        index_add(base, c.inputs[1].to_int(), c.input(2), t[2], c.inputs[4].scalar())};
  });

  // tril / triu: the same mask.
  SetVjp(Op("tril"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{tril(g[0], c.inputs[1].to_int())};
  });
  SetJvp(Op("tril"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{tril(t[0], c.inputs[1].to_int())};
  });
  SetVjp(Op("triu"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{triu(g[0], c.inputs[1].to_int())};
  });
  SetJvp(Op("triu"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{triu(t[0], c.inputs[1].to_int())};
  });
  MarkInputValuesUnused(Op("tril"));
  MarkInputValuesUnused(Op("triu"));

  // roll: rolled back by the opposite shifts (reduced modulo each size first, so negating
  // never overflows).
  SetVjp(Op("roll"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const Shape& shifts = c.inputs[1].shape();
    const Shape& dims = c.inputs[2].shape();
    Shape back;
    for (size_t k = 0; k < shifts.size(); ++k) {
      const int64_t n = dims.empty() ? x.numel() : x.size(dims[k]);
      back.push_back(n == 0 ? 0 : -(shifts[k] % n));
    }
    return TensorList{roll(g[0], back, dims)};
  });
  SetJvp(Op("roll"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{roll(t[0], c.inputs[1].shape(), c.inputs[2].shape())};
  });
  MarkInputValuesUnused(Op("roll"));

  // pixel_shuffle and pixel_unshuffle are permutations, each the other's inverse.
  SetVjp(Op("pixel_shuffle"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{pixel_unshuffle(g[0], c.inputs[1].to_int())};
  });
  SetJvp(Op("pixel_shuffle"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{pixel_shuffle(t[0], c.inputs[1].to_int())};
  });
  SetVjp(Op("pixel_unshuffle"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{pixel_shuffle(g[0], c.inputs[1].to_int())};
  });
  SetJvp(Op("pixel_unshuffle"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{pixel_unshuffle(t[0], c.inputs[1].to_int())};
  });
  MarkInputValuesUnused(Op("pixel_shuffle"));
  MarkInputValuesUnused(Op("pixel_unshuffle"));

  // gather_nd(x, index): the gradient scatters back with accumulation (repeated rows add up).
  SetVjp(Op("gather_nd"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    return TensorList{index_put_nd(zeros_like(x), c.input(1), g[0], true), Tensor()};
  });
  SetJvp(Op("gather_nd"), [](const JvpContext& c, const TensorList& t) {
    if (!t[0].defined()) return TensorList{Tensor()};
    return TensorList{gather_nd(t[0], c.input(1))};
  });

  // index_put_nd(x, index, values, accumulate): with accumulate, x's gradient is the output's
  // and values' is gathered from it. Without, the written places of x get none, and of the
  // rows writing one place only the last (the one that stays) gets its gradient, so the vjp
  // is the transpose of the jvp even with repeated coordinates (torch hands every repeat the
  // gradient). values' gradient is summed back over its broadcast.
  SetVjp(Op("index_put_nd"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const Tensor& index = c.input(1);
    const Tensor& values = c.input(2);
    const bool accumulate = c.inputs[3].to_bool();
    Tensor gx, gv;
    if (c.needs(0)) {
      gx = accumulate ? g[0] : index_put_nd(g[0], index, zeros({}, g[0].dtype()), false);
    }
    if (c.needs(2) && IsFloating(values.dtype())) {
      Tensor rows = gather_nd(g[0], index);
      if (!accumulate) {
        Shape view(index.sizes().begin(), index.sizes().end() - 1);
        view.resize(static_cast<size_t>(rows.dim()), 1);
        rows = masked_fill(rows, reshape(logical_not(LastWriters(x, index)), view), 0.0);
      }
      gv = sum_to_size(rows, values.sizes());
    }
    return TensorList{gx, Tensor(), gv};
  });
  SetJvp(Op("index_put_nd"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& index = c.input(1);
    const bool accumulate = c.inputs[3].to_bool();
    if (!t[2].defined()) {
      if (!t[0].defined() || accumulate) return TensorList{t[0]};
      return TensorList{index_put_nd(t[0], index, zeros({}, t[0].dtype()), false)};
    }
    const Tensor base = t[0].defined() ? t[0] : zeros_like(c.input(0));
    return TensorList{index_put_nd(base, index, t[2], accumulate)};
  });
}

}  // namespace ft::autograd
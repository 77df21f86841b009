// Batching rules: indexing and shape ops for models (embedding, masked_fill, index_add, tril,
// triu, roll, pixel_shuffle, pixel_unshuffle, gather_nd, index_put_nd).
//
// Each rule first runs the kernel's own shape check (kernels/nn_indexing.h) on the
// per-example (logical) shapes, so errors under vmap read like the op's errors for one
// example; then it calls the op (or gather / scatter_add / where when an index, a table or a
// fill value differs per example) once on the whole batch, with the batch dim at the front.
// Value-dependent errors (an index out of range) come from that batched call and are
// restated for the logical table / dim by InBounds.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "dispatch/dispatch.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "kernels/nn_indexing.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

BatchedResult One(Tensor t, BDim bdim) { return BatchedResult{{Value(std::move(t))}, {bdim}}; }

Shape Prepend(int64_t first, IntArrayRef rest) {
  Shape s{first};
  s.insert(s.end(), rest.begin(), rest.end());
  return s;
}

std::optional<int64_t> OptInt(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_int();
}

// InBounds runs f, the batched call made after every shape check passed, so an error left
// is an index value out of range; its message names physical dims, so it is restated with
// the logical `what`, keeping the original message for the value.
template <typename F>
BatchedResult InBounds(const char* op, const std::string& what, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.message().find("out of") == std::string_view::npos) throw;
    ThrowError(op, ": an index is out of range for ", what, " (batched call: ", e.message(), ")");
  }
}

// embedding(input, weight, padding_idx). A shared table: one embedding of every example's
// indices. A batched table [B, num, dim]: index_select along dim 1 (shared indices) or a
// gather pairing example b's indices with table b (both batched).
BatchedResult EmbeddingRule(const VmapContext& ctx, BatchedArgs& args) {
  const char* op = "embedding";
  const Tensor& input = args.tensor(0);
  const BDim ib = args.bdim(0);
  const Tensor& weight = args.tensor(1);
  const BDim wb = args.bdim(1);
  const std::optional<int64_t> padding_idx = OptInt(args.values[2]);
  const Shape is = LogicalShape(input, ib), ws = LogicalShape(weight, wb);
  const Shape out = kernels::EmbeddingCheck(is, input.dtype(), ws, padding_idx);
  const int64_t batch = ctx.batch_size;
  if (!wb) return One(embedding(MoveBdimToFront(input, ib), weight, padding_idx), 0);
  const int64_t n = Numel(is), dim = ws[1];
  const std::string what = "an embedding table of " + std::to_string(ws[0]) + " rows";
  return InBounds(op, what, [&] {
    const Tensor wf = MoveBdimToFront(weight, wb);  // [B, num, dim]
    Tensor rows;
    if (!ib) {
      rows = index_select(wf, 1, reshape(input, {n}));
    } else {
      const Tensor idx = reshape(MoveBdimToFront(input, ib), {batch, n, 1});
      rows = gather(wf, 1, expand(idx, {batch, n, dim}));
    }
    return One(reshape(rows, Prepend(batch, out)), 0);
  });
}

// masked_fill(x, mask, value): x and mask broadcast like a pointwise op (batch dims to the
// front, ranks padded); a batched value [B] becomes [B, 1, ..., 1] and fills through where.
BatchedResult MaskedFillRule(const VmapContext& /*ctx*/, BatchedArgs& args) {
  const Tensor& x = args.tensor(0);
  const BDim xb = args.bdim(0);
  const Tensor& mask = args.tensor(1);
  const BDim mb = args.bdim(1);
  const Tensor& value = args.tensor(2);
  const BDim vb = args.bdim(2);
  const Shape xs = LogicalShape(x, xb), ms = LogicalShape(mask, mb);
  const Shape out =
      kernels::MaskedFillCheck(xs, ms, mask.dtype(), LogicalShape(value, vb));
  const int64_t rank = static_cast<int64_t>(out.size());
  const Tensor px = PadToLogicalRank(MoveBdimToFront(x, xb), xb, rank);
  const Tensor pm = PadToLogicalRank(MoveBdimToFront(mask, mb), mb, rank);
  if (!vb) return One(masked_fill(px, pm, value), 0);
  const Tensor pv = PadToLogicalRank(MoveBdimToFront(value, vb), vb, rank);
  return One(where(pm, to(pv, x.dtype()), px), 0);
}

// index_add(x, dim, index, source, alpha): x and source batch-front (expanded when shared;
// rank 0 viewed as [1]). A shared index: index_add along dim + 1. A batched index: the
// scatter_add index_add stands for, each example's indices spread over its source.
BatchedResult IndexAddRule(const VmapContext& ctx, BatchedArgs& args) {
  const char* op = "index_add";
  const Tensor& x = args.tensor(0);
  const BDim xb = args.bdim(0);
  const Tensor& index = args.tensor(2);
  const BDim ib = args.bdim(2);
  const Tensor& source = args.tensor(3);
  const BDim sb = args.bdim(3);
  const Scalar alpha = args.values[4].scalar();
  const Shape xs = LogicalShape(x, xb), is = LogicalShape(index, ib),
              ss = LogicalShape(source, sb);
  const int64_t d = kernels::IndexAddCheck(xs, x.dtype(), args.values[1].to_int(), is,
                                           index.dtype(), ss, source.dtype());
  const int64_t batch = ctx.batch_size;
  auto front = [batch](const Tensor& t, BDim b) {
    const Tensor f = EnsureBatchedFront(t, b, batch);
    return f.dim() == 1 ? unsqueeze(f, 1) : f;
  };
  const Tensor xf = front(x, xb);
  const Tensor sf = front(source, sb);
  const std::string what =
      "dimension " + std::to_string(d) + " with size " +
      std::to_string(xs.empty() ? int64_t{1} : xs[static_cast<size_t>(d)]);
  return InBounds(op, what, [&] {
    Tensor out;
    if (!ib) {
      out = index_add(xf, d + 1, index, sf, alpha);
    } else {
      const int64_t m = Numel(is);
      Shape view(static_cast<size_t>(sf.dim()), 1);
      view[0] = batch;
      view[static_cast<size_t>(d + 1)] = m;
      const Tensor idx = expand(reshape(MoveBdimToFront(index, ib), view), sf.sizes());
      // alpha as index_add applies it: converted to x's dtype first.
      const Scalar a = IsFloating(x.dtype()) ? alpha : Scalar(alpha.to<int64_t>());
      const bool unit = !a.is_floating() && a.to<int64_t>() == 1;
      out = scatter_add(xf, d + 1, idx, unit ? sf : to(sf * a, x.dtype()));
    }
    if (xs.empty()) out = reshape(out, {batch});
    return One(out, 0);
  });
}

// tril / triu act on the last two dims: the batch dim goes to the front.
template <Tensor (*Op)(const Tensor&, int64_t)>
BatchRule TriangleRule(const char* op) {
  return [op](const VmapContext& /*ctx*/, BatchedArgs& args) {
    kernels::TriangleCheck(op, LogicalShape(args.tensor(0), args.bdim(0)));
    return One(Op(MoveBdimToFront(args.tensor(0), args.bdim(0)), args.values[1].to_int()), 0);
  };
}

// roll(x, shifts, dims): dims shift by one behind the front batch dim; with no dims every
// example is flattened on its own ([B, numel]) and rolled along dim 1.
BatchedResult RollRule(const VmapContext& ctx, BatchedArgs& args) {
  const Tensor& x = args.tensor(0);
  const BDim xb = args.bdim(0);
  const Shape xs = LogicalShape(x, xb);
  const Shape& shifts = args.values[1].shape();
  const Shape wrapped = kernels::RollCheck(xs, shifts, args.values[2].shape());
  const Tensor xf = MoveBdimToFront(x, xb);
  if (wrapped.empty()) {
    const Tensor flat = reshape(xf, {ctx.batch_size, Numel(xs)});
    return One(reshape(roll(flat, shifts, {1}), xf.sizes()), 0);
  }
  Shape dims;
  for (int64_t d : wrapped) dims.push_back(d + 1);
  return One(roll(xf, shifts, dims), 0);
}

// pixel_shuffle / pixel_unshuffle take any leading dims: the batch dim joins them.
BatchedResult PixelShuffleRule(const VmapContext& /*ctx*/, BatchedArgs& args) {
  const int64_t r = args.values[1].to_int();
  kernels::PixelShuffleCheck(LogicalShape(args.tensor(0), args.bdim(0)), r);
  return One(pixel_shuffle(MoveBdimToFront(args.tensor(0), args.bdim(0)), r), 0);
}
BatchedResult PixelUnshuffleRule(const VmapContext& /*ctx*/, BatchedArgs& args) {
  const int64_t r = args.values[1].to_int();
  kernels::PixelUnshuffleCheck(LogicalShape(args.tensor(0), args.bdim(0)), r);
  return One(pixel_unshuffle(MoveBdimToFront(args.tensor(0), args.bdim(0)), r), 0);
}

// WithBatchColumn: index [B, *b, k] (batch dim in front) as [B, *b, k + 1], each row's example
// number first, so that the primitive on a batch-front x pairs example n's rows with x[n].
Tensor WithBatchColumn(const Tensor& index, int64_t batch) {
  Shape view(static_cast<size_t>(index.dim()), 1);
  view[0] = batch;
  Shape column(index.sizes().begin(), index.sizes().end());
  column.back() = 1;
  const Tensor ids = expand(reshape(arange(0, batch, 1, kInt64), view), column);
  return cat({ids, index}, -1);
}

// gather_nd(x, index). Shared rows: x's batch dim moves right behind the k indexed dims, where
// the primitive keeps whole dims, and comes out right behind B. Batched rows: gather_nd of the
// batch-front index from a shared x, or, when x is batched too, rows led by their example.
BatchedResult GatherNdRule(const VmapContext& ctx, BatchedArgs& args) {
  const char* op = "gather_nd";
  const Tensor& x = args.tensor(0);
  const BDim xb = args.bdim(0);
  const Tensor& index = args.tensor(1);
  const BDim ib = args.bdim(1);
  const Shape xs = LogicalShape(x, xb), is = LogicalShape(index, ib);
  kernels::GatherNdCheck(op, xs, is, index.dtype());
  const int64_t k = is.back();
  return InBounds(op, "x of shape " + ShapeToString(xs), [&] {
    if (!ib) {
      return One(gather_nd(movedim(x, *xb, k), index), static_cast<int64_t>(is.size()) - 1);
    }
    const Tensor idx = MoveBdimToFront(index, ib);
    if (!xb) return One(gather_nd(x, idx), 0);
    return One(gather_nd(MoveBdimToFront(x, xb), WithBatchColumn(idx, ctx.batch_size)), 0);
  });
}

// index_put_nd(x, index, values, accumulate). Shared rows: x's batch dim goes behind the k
// indexed dims (x expanded when shared) and values' behind B, so every example's rows write
// its own slice. Batched rows: x batch-front and rows led by their example number, which also
// keeps each example's rows in order (the last write wins per example, as for one example).
BatchedResult IndexPutNdRule(const VmapContext& ctx, BatchedArgs& args) {
  const char* op = "index_put_nd";
  const Tensor& x = args.tensor(0);
  const BDim xb = args.bdim(0);
  const Tensor& index = args.tensor(1);
  const BDim ib = args.bdim(1);
  const Tensor& values = args.tensor(2);
  const BDim vb = args.bdim(2);
  const bool accumulate = args.values[3].to_bool();
  const Shape xs = LogicalShape(x, xb), is = LogicalShape(index, ib);
  kernels::IndexPutNdCheck(xs, x.dtype(), is, index.dtype(), LogicalShape(values, vb),
                           values.dtype());
  const int64_t k = is.back();
  const int64_t b_rank = static_cast<int64_t>(is.size()) - 1;
  const int64_t target_rank = b_rank + static_cast<int64_t>(xs.size()) - k;
  const int64_t batch = ctx.batch_size;
  return InBounds(op, "x of shape " + ShapeToString(xs), [&] {
    const Tensor xf = EnsureBatchedFront(x, xb, batch);
    const Tensor vf = PadToLogicalRank(MoveBdimToFront(values, vb), vb, target_rank);
    if (!ib) {
      const Tensor v = vb ? movedim(vf, 0, b_rank) : unsqueeze(vf, b_rank);
      return One(index_put_nd(movedim(xf, 0, k), index, v, accumulate), k);
    }
    const Tensor idx = WithBatchColumn(MoveBdimToFront(index, ib), batch);
    return One(index_put_nd(xf, idx, vf, accumulate), 0);
  });
}

}  // namespace

void RegisterNnIndexingRules() {
  OpRegistry& r = OpRegistry::Global();
  SetBatchRule(r.Get("embedding"), &EmbeddingRule);
  SetBatchRule(r.Get("masked_fill"), &MaskedFillRule);
  SetBatchRule(r.Get("index_add"), &IndexAddRule);
  SetBatchRule(r.Get("tril"), TriangleRule<&tril>("tril"));
  SetBatchRule(r.Get("triu"), TriangleRule<&triu>("triu"));
  SetBatchRule(r.Get("roll"), &RollRule);
  SetBatchRule(r.Get("pixel_shuffle"), &PixelShuffleRule);
  SetBatchRule(r.Get("pixel_unshuffle"), &PixelUnshuffleRule);
  SetBatchRule(r.Get("gather_nd"), &GatherNdRule);
  SetBatchRule(r.Get("index_put_nd"), &IndexPutNdRule);
}

}  // namespace ft::vmap_rules

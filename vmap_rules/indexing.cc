// Batching rules: indexing, joining and conversion ops (index_select, gather, scatter_add,
// take_along_dim, cat, stack, split, split_with_sizes, chunk, repeat, pad, to, one_hot).
//
// Every tensor argument may be batched or not. The multi-tensor ops bring each argument to
// batch-front, expanding the unbatched ones to the batch (a stride-0 view, no copy), and run
// the op once with every logical dim shifted by one; gather / scatter_add / take_along_dim
// then pair example b of the data with example b of the index through the leading dim. The
// single-tensor view ops (split, chunk) and the shape-preserving ones (to, one_hot) leave the
// batch dim where it is, which saves a movedim and keeps the outputs views of the input.
//
// Errors: each rule first validates what the op would reject for ONE example (logical dims,
// ranks, shapes, dtypes, size lists) with the op's own message, naming logical shapes and
// dims. Only value-dependent errors (an index value out of bounds) come from the op run on
// the whole batch: InBounds restates them for the logical dim.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dispatch/dispatch.h"
#include "interpreters/vmap/batching_util.h"
#include "ops/ops.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

BatchedResult One(Tensor t, BDim bdim) { return BatchedResult{{Value(std::move(t))}, {bdim}}; }

// Nonempty: the index ops treat a rank-0 tensor as shape [1] (as the kernels do).
Shape Nonempty(Shape s) {
  if (s.empty()) s.push_back(1);
  return s;
}

Shape Prepend(int64_t first, IntArrayRef rest) {
  Shape s{first};
  s.insert(s.end(), rest.begin(), rest.end());
  return s;
}

// FrontAtLeast1: t batch-front with ctx's batch size (expanded when unbatched), and a
// logical rank-0 tensor viewed as [1], matching the index ops' rank-0 rule.
Tensor FrontAtLeast1(const Tensor& t, BDim bdim, int64_t batch_size) {
  Tensor f = EnsureBatchedFront(t, bdim, batch_size);
  return f.dim() == 1 ? unsqueeze(f, 1) : f;
}

// KeptBdimDim: the physical dim of the (wrapped, non-negative) logical dim d when the batch
// dim stays where it is.
int64_t KeptBdimDim(int64_t d, BDim bdim) { return bdim && d >= *bdim ? d + 1 : d; }

// ---- Validation with logical shapes (the kernels' messages) ----

void CheckInt64(const char* op, const Tensor& t, BDim bdim, const char* what) {
  if (t.dtype() != kInt64) {
    ThrowError(op, ": expected an int64 ", what, " tensor, got ", DTypeName(t.dtype()),
               " of shape ", ShapeToString(LogicalShape(t, bdim)));
  }
}

void CheckSameRank(const char* op, const Shape& xs, const Shape& other, const char* what) {
  if (std::max<size_t>(xs.size(), 1) != std::max<size_t>(other.size(), 1)) {
    ThrowError(op, ": ", what, " must have the same number of dims as the input, got ", what,
               " shape ", ShapeToString(other), " and input shape ", ShapeToString(xs));
  }
}

// CheckIndexFits: index.size(i) <= x.size(i) unless i == d (gather, scatter_add); ranks
// already checked equal.
void CheckIndexFits(const char* op, const Shape& xs, const Shape& is, int64_t d, size_t i) {
  const Shape xn = Nonempty(xs), in = Nonempty(is);
  if (static_cast<int64_t>(i) != d && in[i] > xn[i]) {
    ThrowError(op, ": index shape ", ShapeToString(is), " exceeds input shape ", ShapeToString(xs),
               " in dim ", i, " (", in[i], " > ", xn[i], "); only dim ", d, " may be larger");
  }
}

// InBounds runs f, the rule's batched op call after every shape check passed, so that an
// error left is an index value out of bounds. That error names the physical dim (and, for
// index_select with a batched index, gather), so it is restated for the logical dim `d` of
// size `size`, keeping the original message for the value.
template <typename F>
BatchedResult InBounds(const char* op, int64_t d, int64_t size, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.message().find("out of bounds") == std::string_view::npos) throw;
    ThrowError(op, ": an index is out of bounds for dimension ", d, " with size ", size,
               " (batched call: ", e.message(), ")");
  }
}

// ---- Indexing ----

// index_select(x, dim, index). Unbatched index: index_select on the physical dim. Batched
// index with unbatched x: one index_select with every example's indices, whose selected dim
// splits into (batch, m). Both batched: gather along the physical dim with the index
// broadcast over x's other dims.
BatchedResult IndexSelectRule(const VmapContext& ctx, BatchedArgs& args) {
  const char* op = "index_select";
  const Tensor& x = args.tensor(0);
  const BDim xb = args.bdim(0);
  const Tensor& index = args.tensor(2);
  const BDim ib = args.bdim(2);
  const int64_t batch = ctx.batch_size;
  CheckInt64(op, index, ib, "index");
  const Shape is = LogicalShape(index, ib);
  if (is.size() > 1) {
    ThrowError(op, ": index must be a rank-0 or 1-D tensor, got shape ", ShapeToString(is));
  }
  const int64_t xr = LogicalRank(x, xb);
  const int64_t d = WrapDim(op, args.values[1].to_int(), xr);
  const int64_t m = Numel(is);
  if (xr == 0 && m != 1) {
    ThrowError(op, ": selecting from a rank-0 tensor takes exactly one index, got ", m);
  }
  return InBounds(op, d, Nonempty(LogicalShape(x, xb))[d], [&]() -> BatchedResult {
    if (!ib) {
      if (xr > 0) return One(index_select(x, KeptBdimDim(d, xb), index), xb);
      // Logical rank 0: view each example as [1]; the result is [batch, 1] -> [batch].
      const Tensor xf = unsqueeze(MoveBdimToFront(x, xb), 1);
      return One(reshape(index_select(xf, 1, index), {batch}), 0);
    }
    const Tensor idx = reshape(MoveBdimToFront(index, ib), {batch, m});
    if (!xb) {
      // x is shared: select all batch * m rows at once; dim d becomes (batch, m).
      const Tensor x1 = xr == 0 ? reshape(x, {1}) : x;
      Tensor out = unflatten(index_select(x1, d, reshape(idx, {batch * m})), d, {batch, m});
      if (xr == 0) out = reshape(out, {batch});
      return One(out, d);
    }
    const Tensor xf = FrontAtLeast1(x, xb, batch);
    Shape view(static_cast<size_t>(xf.dim()), 1);
    view[0] = batch;
    view[d + 1] = m;
    Shape full(xf.sizes().begin(), xf.sizes().end());
    full[d + 1] = m;
    Tensor out = gather(xf, d + 1, expand(reshape(idx, view), full));
    if (xr == 0) out = reshape(out, {batch});
    return One(out, 0);
  });
}

// gather(x, dim, index): both batch-front (rank 0 viewed as [1]), gather along dim + 1.
BatchedResult GatherRule(const VmapContext& ctx, BatchedArgs& args) {
  const char* op = "gather";
  const Tensor& x = args.tensor(0);
  const Tensor& index = args.tensor(2);
  CheckInt64(op, index, args.bdim(2), "index");
  const Shape xs = LogicalShape(x, args.bdim(0)), is = LogicalShape(index, args.bdim(2));
  const int64_t d = WrapDim(op, args.values[1].to_int(), static_cast<int64_t>(xs.size()));
  CheckSameRank(op, xs, is, "index");
  for (size_t i = 0; i < std::max<size_t>(xs.size(), 1); ++i) CheckIndexFits(op, xs, is, d, i);
  return InBounds(op, d, Nonempty(xs)[d], [&] {
    Tensor out = gather(FrontAtLeast1(x, args.bdim(0), ctx.batch_size), d + 1,
                        FrontAtLeast1(index, args.bdim(2), ctx.batch_size));
    if (is.empty()) out = reshape(out, {ctx.batch_size});  // the result has index's shape
    return One(out, 0);
  });
}

// scatter_add(x, dim, index, src): all three batch-front (an unbatched x is expanded, and
// the op's copy of it gives every example its own buffer), scatter along dim + 1.
BatchedResult ScatterAddRule(const VmapContext& ctx, BatchedArgs& args) {
  const char* op = "scatter_add";
  const Tensor& x = args.tensor(0);
  const Tensor& index = args.tensor(2);
  const Tensor& src = args.tensor(3);
  CheckInt64(op, index, args.bdim(2), "index");
  if (src.dtype() != x.dtype()) {
    ThrowError(op, ": src dtype ", DTypeName(src.dtype()), " must match the input dtype ",
               DTypeName(x.dtype()));
  }
  const Shape xs = LogicalShape(x, args.bdim(0)), is = LogicalShape(index, args.bdim(2)),
              ss = LogicalShape(src, args.bdim(3));
  const int64_t d = WrapDim(op, args.values[1].to_int(), static_cast<int64_t>(xs.size()));
  CheckSameRank(op, xs, is, "index");
  CheckSameRank(op, xs, ss, "src");
  const Shape in = Nonempty(is), sn = Nonempty(ss);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] > sn[i]) {
      ThrowError(op, ": index shape ", ShapeToString(is), " exceeds src shape ", ShapeToString(ss),
                 " in dim ", i, " (", in[i], " > ", sn[i], ")");
    }
    CheckIndexFits(op, xs, is, d, i);
  }
  const int64_t batch = ctx.batch_size;
  return InBounds(op, d, Nonempty(xs)[d], [&] {
    Tensor out = scatter_add(FrontAtLeast1(x, args.bdim(0), batch), d + 1,
                             FrontAtLeast1(index, args.bdim(2), batch),
                             FrontAtLeast1(src, args.bdim(3), batch));
    if (xs.empty()) out = reshape(out, {batch});  // the result has x's shape
    return One(out, 0);
  });
}

// take_along_dim(x, indices, dim). With dim: both batch-front, gather along dim + 1 (the
// leading batch dims are equal, so the op's broadcasting of the other dims is unchanged).
// Without dim: each example flattens on its own, so both become [batch, numel] and the
// take runs along dim 1; a shared x needs no copy: one flat take with every example's
// indices.
BatchedResult TakeAlongDimRule(const VmapContext& ctx, BatchedArgs& args) {
  const char* op = "take_along_dim";
  const Tensor& x = args.tensor(0);
  const BDim xb = args.bdim(0);
  const Tensor& indices = args.tensor(1);
  const BDim ib = args.bdim(1);
  const int64_t batch = ctx.batch_size;
  CheckInt64(op, indices, ib, "indices");
  const Shape xs = LogicalShape(x, xb), is = LogicalShape(indices, ib);
  if (args.values[2].is_none()) {
    const int64_t n = Numel(is);
    return InBounds(op, 0, Numel(xs), [&] {
      if (!xb) {
        return One(reshape(take_along_dim(x, MoveBdimToFront(indices, ib)), {batch, n}), 0);
      }
      const Tensor xf = reshape(MoveBdimToFront(x, xb), {batch, Numel(xs)});
      const Tensor idf = ib ? reshape(MoveBdimToFront(indices, ib), {batch, n})
                            : EnsureBatchedFront(reshape(indices, {n}), std::nullopt, batch);
      return One(take_along_dim(xf, idf, 1), 0);
    });
  }
  if (xs.size() != is.size()) {
    ThrowError(op, ": input and indices must have the same number of dims, got input shape ",
               ShapeToString(xs), " and indices shape ", ShapeToString(is));
  }
  const int64_t d = WrapDim(op, args.values[2].to_int(), static_cast<int64_t>(xs.size()));
  Shape self_sizes = Nonempty(xs);
  const Shape in = Nonempty(is);
  self_sizes[d] = in[d];
  BroadcastShapes(op, self_sizes, in);  // throws with the logical shapes
  return InBounds(op, d, Nonempty(xs)[d], [&] {
    Tensor out =
        take_along_dim(FrontAtLeast1(x, xb, batch), FrontAtLeast1(indices, ib, batch), d + 1);
    if (xs.empty()) out = reshape(out, {batch});
    return One(out, 0);
  });
}

// one_hot(indices, num_classes): adds a last dim, so the batch dim stays put. num_classes
// = -1 would infer the size from the data of the whole batch, not of each example.
BatchedResult OneHotRule(const VmapContext& /*ctx*/, BatchedArgs& args) {
  const char* op = "one_hot";
  CheckInt64(op, args.tensor(0), args.bdim(0), "indices");
  const int64_t num_classes = args.values[1].to_int();
  if (num_classes == -1) {
    ThrowError(op,
               ": under vmap, num_classes must be given explicitly: -1 infers it from "
               "each example's values, so examples could get different sizes");
  }
  return One(one_hot(args.tensor(0), num_classes), args.bdim(0));
}

// ---- Joining ----

// JoinList: a TensorList argument's physical elements, their bdims and logical shapes.
struct JoinList {
  const TensorList& tensors;
  const std::vector<BDim>& bdims;
  std::vector<Shape> shapes;
};

JoinList LogicalList(const BatchedArgs& args) {
  JoinList list{args.values[0].tensor_list(), args.list_bdims.at(0), {}};
  for (size_t i = 0; i < list.tensors.size(); ++i) {
    list.shapes.push_back(LogicalShape(list.tensors[i], list.bdims[i]));
  }
  return list;
}

// cat(tensors, dim): validated on the logical shapes (including the rule that 1-D empty
// tensors are skipped, which no longer holds for their [batch, 0] physical values), then
// the kept elements are concatenated along dim + 1.
BatchedResult CatRule(const VmapContext& ctx, BatchedArgs& args) {
  const char* op = "cat";
  const JoinList list = LogicalList(args);
  const int64_t dim = args.values[1].to_int();
  const size_t n = list.tensors.size();
  if (n == 0) ThrowError(op, ": expected a non-empty list of tensors");
  DType dtype = list.tensors[0].dtype();
  for (size_t i = 0; i < n; ++i) {
    if (list.shapes[i].empty()) {
      ThrowError(op, ": tensor ", i, " is rank 0 and cannot be concatenated (use stack)");
    }
    dtype = PromoteTypes(dtype, list.tensors[i].dtype());
  }
  auto skipped = [&](size_t i) { return list.shapes[i].size() == 1 && list.shapes[i][0] == 0; };
  size_t ref = 0;
  while (ref < n && skipped(ref)) ++ref;
  TensorList fronts;
  if (ref == n) {
    // Every element is logically [0]: the result is [0]; physically [batch, 0] each.
    WrapDim(op, dim, 1);
    for (size_t i = 0; i < n; ++i) {
      fronts.push_back(EnsureBatchedFront(list.tensors[i], list.bdims[i], ctx.batch_size));
    }
    return One(cat(fronts, 1), 0);
  }
  const Shape& r = list.shapes[ref];
  const int64_t d = WrapDim(op, dim, static_cast<int64_t>(r.size()));
  bool any_skipped = false;
  for (size_t i = 0; i < n; ++i) {
    if (skipped(i)) {
      any_skipped = true;
      continue;
    }
    const Shape& s = list.shapes[i];
    bool match = s.size() == r.size();
    for (size_t j = 0; match && j < r.size(); ++j) {
      if (static_cast<int64_t>(j) != d && s[j] != r[j]) match = false;
    }
    if (!match) {
      ThrowError(op, ": shapes must match except in dim ", d, ", but tensor ", i, " has shape ",
                 ShapeToString(s), " and tensor ", ref, " has shape ", ShapeToString(r));
    }
    fronts.push_back(EnsureBatchedFront(list.tensors[i], list.bdims[i], ctx.batch_size));
  }
  // A skipped element still takes part in the dtype promotion: convert the kept ones to the
  // promotion over all (converting straight to it, as cat does, not via a narrower type).
  if (any_skipped) {
    for (Tensor& t : fronts) t = to(t, dtype);
  }
  return One(cat(fronts, d + 1), 0);
}

// stack(tensors, dim): equal logical shapes, new dim in [-rank - 1, rank] -> dim + 1.
BatchedResult StackRule(const VmapContext& ctx, BatchedArgs& args) {
  const char* op = "stack";
  const JoinList list = LogicalList(args);
  const int64_t dim = args.values[1].to_int();
  if (list.tensors.empty()) ThrowError(op, ": expected a non-empty list of tensors");
  const Shape& r = list.shapes[0];
  for (size_t i = 1; i < list.tensors.size(); ++i) {
    if (list.shapes[i] != r) {
      ThrowError(op, ": expected all tensors to have the same shape, but tensor ", i, " has shape ",
                 ShapeToString(list.shapes[i]), " and tensor 0 has shape ", ShapeToString(r));
    }
  }
  const int64_t rank = static_cast<int64_t>(r.size());
  if (dim < -rank - 1 || dim > rank) {
    ThrowError(op, ": dim ", dim, " is out of range for stacking tensors of rank ", rank,
               " (expected a dim in [", -rank - 1, ", ", rank, "])");
  }
  const int64_t d = dim < 0 ? dim + rank + 1 : dim;
  TensorList fronts;
  for (size_t i = 0; i < list.tensors.size(); ++i) {
    fronts.push_back(EnsureBatchedFront(list.tensors[i], list.bdims[i], ctx.batch_size));
  }
  return One(stack(fronts, d + 1), 0);
}

// ---- Splitting (views: the batch dim stays where it is, one bdim for all pieces) ----

// SplitDim validates x's logical rank and dim for the split ops; returns the logical dim.
int64_t SplitDim(const char* op, const Shape& xs, int64_t dim) {
  if (xs.empty()) {
    ThrowError(op, ": expected a tensor with at least one dim, got a rank-0 tensor");
  }
  return WrapDim(op, dim, static_cast<int64_t>(xs.size()));
}

BatchedResult SplitRule(const VmapContext& /*ctx*/, BatchedArgs& args) {
  const char* op = "split";
  const Tensor& x = args.tensor(0);
  const BDim xb = args.bdim(0);
  const Shape xs = LogicalShape(x, xb);
  const int64_t d = SplitDim(op, xs, args.values[2].to_int());
  const int64_t split_size = args.values[1].to_int();
  if (split_size < 0) ThrowError(op, ": split_size must be non-negative, got ", split_size);
  if (split_size == 0 && xs[d] != 0) {
    ThrowError(op, ": split_size 0 is only allowed when the split dim is empty, but dimension ", d,
               " has size ", xs[d]);
  }
  return BatchedResult{{Value(split(x, split_size, KeptBdimDim(d, xb)))}, {xb}};
}

BatchedResult SplitWithSizesRule(const VmapContext& /*ctx*/, BatchedArgs& args) {
  const char* op = "split_with_sizes";
  const Tensor& x = args.tensor(0);
  const BDim xb = args.bdim(0);
  const Shape xs = LogicalShape(x, xb);
  const int64_t d = SplitDim(op, xs, args.values[2].to_int());
  const Shape& sizes = args.values[1].shape();
  int64_t sum = 0;
  bool overflow = false;
  for (int64_t s : sizes) {
    if (s < 0) {
      ThrowError(op, ": sizes ", ShapeToString(sizes), " contain the negative size ", s);
    }
    overflow = overflow || __builtin_add_overflow(sum, s, &sum);
  }
  if (overflow || sum != xs[d]) {
    ThrowError(op, ": sizes ", ShapeToString(sizes), " sum to ",
               overflow ? std::string("more than 2^63") : std::to_string(sum), " but dimension ", d,
               " has size ", xs[d]);
  }
  return BatchedResult{{Value(split_with_sizes(x, sizes, KeptBdimDim(d, xb)))}, {xb}};
}

BatchedResult ChunkRule(const VmapContext& /*ctx*/, BatchedArgs& args) {
  const char* op = "chunk";
  const Tensor& x = args.tensor(0);
  const BDim xb = args.bdim(0);
  const int64_t d = SplitDim(op, LogicalShape(x, xb), args.values[2].to_int());
  const int64_t chunks = args.values[1].to_int();
  return BatchedResult{{Value(chunk(x, chunks, KeptBdimDim(d, xb)))}, {xb}};
}

// ---- Layout and conversion ----

// repeat(x, repeats): repeats is logical, and may be longer than x's logical rank (new
// leading dims). Pad x to len(repeats) logical dims after the batch dim, then repeat with 1
// for the batch dim.
BatchedResult RepeatRule(const VmapContext& /*ctx*/, BatchedArgs& args) {
  const char* op = "repeat";
  const Tensor& x = args.tensor(0);
  const BDim xb = args.bdim(0);
  const Shape xs = LogicalShape(x, xb);
  const Shape& repeats = args.values[1].shape();
  const int64_t k = static_cast<int64_t>(repeats.size());
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (k < rank) {
    ThrowError(op, ": got ", k, " repeats ", ShapeToString(repeats),
               " but need at least one per dim of the input (shape ", ShapeToString(xs), ", rank ",
               rank, ")");
  }
  for (int64_t i = 0; i < k; ++i) {
    if (repeats[i] < 0) {
      ThrowError(op, ": repeats ", ShapeToString(repeats), " contain the negative value ",
                 repeats[i]);
    }
    const int64_t s = i < k - rank ? 1 : xs[i - (k - rank)];
    int64_t product = 0;
    if (__builtin_mul_overflow(s, repeats[i], &product)) {
      ThrowError(op, ": repeating dim ", i, " of size ", s, " ", repeats[i],
                 " times overflows int64");
    }
  }
  const Tensor xf = PadToLogicalRank(MoveBdimToFront(x, xb), BDim(0), k);
  return One(repeat(xf, Prepend(1, repeats)), 0);
}

// pad(x, pads, value): pads address the last logical dims; with the batch dim in front they
// address the same physical dims (at most the logical rank is padded: checked first).
BatchedResult PadRule(const VmapContext& /*ctx*/, BatchedArgs& args) {
  const char* op = "pad";
  const Tensor& x = args.tensor(0);
  const BDim xb = args.bdim(0);
  const Shape xs = LogicalShape(x, xb);
  const Shape& pads = args.values[1].shape();
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t pairs = static_cast<int64_t>(pads.size()) / 2;
  if (pads.size() % 2 != 0) {
    ThrowError(op, ": padding ", ShapeToString(pads), " must have an even length, got ",
               pads.size(), " values");
  }
  if (pairs > rank) {
    ThrowError(op, ": padding ", ShapeToString(pads), " has ", pairs,
               " (left, right) pairs but the input has only ", rank, " dims (shape ",
               ShapeToString(xs), ")");
  }
  for (int64_t p = 0; p < pairs; ++p) {
    const int64_t d = rank - 1 - p;
    const int64_t left = pads[2 * p], right = pads[2 * p + 1], s = xs[d];
    int64_t size = 0;
    if (__builtin_add_overflow(s, left, &size) || __builtin_add_overflow(size, right, &size)) {
      ThrowError(op, ": padding (", left, ", ", right, ") of dim ", d, " overflows int64");
    }
    if (size < 0) {
      ThrowError(op, ": padding (", left, ", ", right, ") of dim ", d, " (size ", s,
                 ") gives the negative size ", size);
    }
  }
  return One(pad(MoveBdimToFront(x, xb), pads, args.values[2].scalar()), 0);
}

// to(x, dtype): elementwise; the batch dim stays put (and x itself comes back when the
// dtype already matches, so the result shares x's storage as the op promises).
BatchedResult ToRule(const VmapContext& /*ctx*/, BatchedArgs& args) {
  return One(to(args.tensor(0), args.values[1].dtype()), args.bdim(0));
}

}  // namespace

void RegisterIndexingRules() {
  OpRegistry& r = OpRegistry::Global();
  SetBatchRule(r.Get("index_select"), &IndexSelectRule);
  SetBatchRule(r.Get("gather"), &GatherRule);
  SetBatchRule(r.Get("scatter_add"), &ScatterAddRule);
  SetBatchRule(r.Get("take_along_dim"), &TakeAlongDimRule);
  SetBatchRule(r.Get("cat"), &CatRule);
  SetBatchRule(r.Get("stack"), &StackRule);
  SetBatchRule(r.Get("split"), &SplitRule);
  SetBatchRule(r.Get("split_with_sizes"), &SplitWithSizesRule);
  SetBatchRule(r.Get("chunk"), &ChunkRule);
  SetBatchRule(r.Get("repeat"), &RepeatRule);
  SetBatchRule(r.Get("pad"), &PadRule);
  SetBatchRule(r.Get("to"), &ToRule);
  SetBatchRule(r.Get("one_hot"), &OneHotRule);
}

}  // namespace ft::vmap_rules

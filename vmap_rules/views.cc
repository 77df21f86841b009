// Batching rules: view and shape ops (reshape, view, flatten, unflatten, expand, unsqueeze,
// squeeze*, movedim, permute, transpose, t, select, narrow, slice, diagonal), contiguous,
// clone, flip, and the scatter ops (select_scatter, slice_scatter, diagonal_scatter).
//
// Every op here but the scatter ops has one tensor argument, and the interpreter runs a rule
// only when an argument is batched, so that argument always is. A view rule moves the batch
// dim to the front (a view), validates the op's logical arguments (dims, indices, shape
// lists) against the per-example shape, so that errors name what the user's function sees,
// and calls the op once on the whole batch with dims shifted past the batch dim and shape
// lists prefixed with the batch size. The result stays batched at dim 0 and views the
// physical input (same storage), so in-place writes through a view under vmap reach the
// tensor it views. Only reshape (when no strides express the result), contiguous, clone and
// flip copy, as their eager versions do. The scatter ops (self, src) copy too, and take
// either argument or both batched: see their section below.
#include <optional>
#include <utility>

#include "dispatch/dispatch.h"
#include "interpreters/vmap/batching_util.h"
#include "kernels/view.h"
#include "ops/ops.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

// Batch: the op's tensor argument with its batch dim at 0.
struct Batch {
  Tensor x;  // physical value

  int64_t size() const { return x.sizes()[0]; }
  int64_t rank() const { return x.dim() - 1; }  // logical rank
  IntArrayRef logical() const { return x.sizes().subspan(1); }
};

// WithBatch is [batch] + sizes: a logical shape list made physical.
Shape WithBatch(int64_t batch, IntArrayRef sizes) {
  Shape out{batch};
  out.insert(out.end(), sizes.begin(), sizes.end());
  return out;
}

// Shifted maps wrapped logical dims to physical ones (the batch dim is at 0).
Shape Shifted(const Shape& dims) {
  Shape out = dims;
  for (int64_t& d : out) ++d;
  return out;
}

// SameView is a view of x with x's own geometry: what an eager op that changes nothing
// returns (t of a vector, transpose of a scalar). An empty movedim makes it.
Tensor SameView(const Tensor& x) { return movedim(x, IntArrayRef(), IntArrayRef()); }

std::optional<int64_t> OptionalInt(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_int();
}

// ReshapeTarget is the physical shape reshape/view produce: [B] + the resolved logical shape.
Shape ReshapeTarget(const char* op, const Batch& b, IntArrayRef shape) {
  const int64_t numel = Numel(b.logical());
  std::optional<Shape> sizes = TryInferSize(op, shape, numel);
  if (!sizes) {
    ThrowError(op, ": shape ", ShapeToString(shape), " is invalid for input of size ", numel);
  }
  return WithBatch(b.size(), *sizes);
}

void CheckNotScalar(const char* op, const Batch& b) {
  if (b.rank() == 0) ThrowError(op, ": cannot be applied to a 0-dim tensor");
}

// ---- The rules: each maps (batch-front input, the op's arguments) to the physical result,
// batched at 0.

// With the batch dim first, the batched view exists exactly when the per-example one does
// (the batch dim is its own stride chunk or the outermost dim of the first), so view throws
// view's own error for the moved layout when, and only when, one example's view would.
Tensor Reshape(const Batch& b, const ValueList& a) {
  return reshape(b.x, ReshapeTarget("reshape", b, a[1].shape()));
}

Tensor View(const Batch& b, const ValueList& a) {
  return view(b.x, ReshapeTarget("view", b, a[1].shape()));
}

Tensor Flatten(const Batch& b, const ValueList& a) {
  const int64_t start_dim = a[1].to_int();
  const int64_t end_dim = a[2].to_int();
  const int64_t start = WrapDim("flatten", start_dim, b.rank());
  const int64_t end = WrapDim("flatten", end_dim, b.rank());
  if (start > end) {
    ThrowError("flatten: start_dim ", start_dim, " cannot come after end_dim ", end_dim,
               " (tensor of shape ", ShapeToString(b.logical()), ")");
  }
  if (b.rank() == 0) return unsqueeze(b.x, 1);  // a scalar flattens to [1]
  return flatten(b.x, start + 1, end + 1);
}

Tensor Unflatten(const Batch& b, const ValueList& a) {
  const int64_t dim = a[1].to_int();
  const IntArrayRef sizes = a[2].shape();
  CheckNotScalar("unflatten", b);
  const int64_t d = WrapDim("unflatten", dim, b.rank());
  if (sizes.empty()) ThrowError("unflatten: sizes must be non-empty");
  const int64_t size = b.logical()[d];
  std::optional<Shape> inner = TryInferSize("unflatten", sizes, size);
  if (!inner) {
    ThrowError("unflatten: provided sizes ", ShapeToString(sizes), " don't multiply up to the ",
               "size of dim ", dim, " (", size, ") of the tensor of shape ",
               ShapeToString(b.logical()));
  }
  return unflatten(b.x, d + 1, *inner);
}

// CheckExpand validates expand(one example, sizes) as the eager op does (same messages, same
// order: from the last dim). The physical expand cannot: after padding, a new leading dim
// exists with size 1, so a -1 there would pass.
void CheckExpand(IntArrayRef have, IntArrayRef sizes) {
  const int64_t rank = static_cast<int64_t>(sizes.size());
  const int64_t dims = static_cast<int64_t>(have.size());
  if (rank < dims) {
    ThrowError("expand: the number of sizes provided (", rank,
               ") must be greater or equal to the number of dimensions in the tensor (", dims,
               "); target sizes ", ShapeToString(sizes), ", tensor sizes ", ShapeToString(have));
  }
  const int64_t lead = rank - dims;
  for (int64_t i = rank - 1; i >= 0; --i) {
    const int64_t target = sizes[i];
    if (i < lead) {
      if (target < 0) {
        ThrowError("expand: the expanded size ", target, " is not allowed in a leading, ",
                   "non-existing dimension ", i, "; target sizes ", ShapeToString(sizes),
                   ", tensor sizes ", ShapeToString(have));
      }
      continue;
    }
    const int64_t size = have[i - lead];
    if (target == -1 || target == size || (target >= 0 && size == 1)) continue;
    if (target < 0) {
      ThrowError("expand: invalid size ", target, " at dimension ", i, "; target sizes ",
                 ShapeToString(sizes), ", tensor sizes ", ShapeToString(have));
    }
    ThrowError("expand: the expanded size of the tensor (", target,
               ") must match the existing size (", size, ") at non-singleton dimension ", i,
               ". Target sizes: ", ShapeToString(sizes), ". Tensor sizes: ",
               ShapeToString(have));
  }
}

// expand's sizes are logical: the example's new leading dims become size-1 dims right after
// the batch dim, then the whole is expanded to [B] + sizes (-1 keeps a size).
Tensor Expand(const Batch& b, const ValueList& a) {
  const IntArrayRef sizes = a[1].shape();
  CheckExpand(b.logical(), sizes);
  const int64_t rank = static_cast<int64_t>(sizes.size());
  return expand(PadToLogicalRank(b.x, int64_t{0}, rank), WithBatch(b.size(), sizes));
}

Tensor Unsqueeze(const Batch& b, const ValueList& a) {
  return unsqueeze(b.x, PhysicalDim("unsqueeze", a[1].to_int(), b.rank() + 1));
}

// squeeze() removes the logical size-1 dims only: a batch of one example keeps its batch dim.
Tensor Squeeze(const Batch& b, const ValueList&) {
  Shape dims;
  for (int64_t d = 0; d < b.rank(); ++d) {
    if (b.logical()[d] == 1) dims.push_back(d + 1);
  }
  return squeeze_dims(b.x, dims);
}

Tensor SqueezeDim(const Batch& b, const ValueList& a) {
  const int64_t d = WrapDim("squeeze", a[1].to_int(), b.rank());
  if (b.rank() == 0) return SameView(b.x);  // dim 0/-1 of a scalar: nothing to remove
  return squeeze_dim(b.x, d + 1);
}

Tensor SqueezeDims(const Batch& b, const ValueList& a) {
  // WrapDims returns no dims for a scalar (its dim 0/-1 is absent), so no dim reaches the batch.
  return squeeze_dims(b.x, Shifted(WrapDims("squeeze", a[1].shape(), b.rank(), false)));
}

Tensor Movedim(const Batch& b, const ValueList& a) {
  const IntArrayRef source = a[1].shape();
  const IntArrayRef destination = a[2].shape();
  if (source.size() != destination.size()) {
    ThrowError("movedim: invalid source or destination dims: source ", ShapeToString(source),
               " and destination ", ShapeToString(destination),
               " must have the same number of elements");
  }
  const Shape src = WrapDims("movedim", source, b.rank(), false);
  const Shape dst = WrapDims("movedim", destination, b.rank(), false);
  return movedim(b.x, Shifted(src), Shifted(dst));
}

Tensor Permute(const Batch& b, const ValueList& a) {
  const IntArrayRef dims = a[1].shape();
  if (static_cast<int64_t>(dims.size()) != b.rank()) {
    ThrowError("permute: number of dims don't match: got ", ShapeToString(dims),
               " for a tensor of shape ", ShapeToString(b.logical()), " (rank ", b.rank(), ")");
  }
  Shape order = Shifted(WrapDims("permute", dims, b.rank(), false));
  order.insert(order.begin(), 0);  // the batch dim stays first
  return permute(b.x, order);
}

Tensor Transpose(const Batch& b, const ValueList& a) {
  const int64_t d0 = WrapDim("transpose", a[1].to_int(), b.rank());
  const int64_t d1 = WrapDim("transpose", a[2].to_int(), b.rank());
  if (b.rank() == 0) return SameView(b.x);
  return transpose(b.x, d0 + 1, d1 + 1);
}

Tensor T(const Batch& b, const ValueList&) {
  if (b.rank() > 2) {
    ThrowError("t: expects a tensor with <= 2 dimensions, but self is ", b.rank(), "D (shape ",
               ShapeToString(b.logical()), "); use transpose or mT");
  }
  return b.rank() == 2 ? transpose(b.x, 1, 2) : SameView(b.x);
}

// select / narrow: the kernels' own argument checks, on the per-example sizes.
// SelectDim: the physical dim of select(one example, dim, index) once checked.
int64_t SelectDim(const Batch& b, int64_t dim, int64_t index) {
  return kernels::CheckSelectArgs(b.logical(), dim, index).dim + 1;
}

Tensor Select(const Batch& b, const ValueList& a) {
  const int64_t index = a[2].to_int();
  return select(b.x, SelectDim(b, a[1].to_int(), index), index);
}

Tensor Narrow(const Batch& b, const ValueList& a) {
  const int64_t start = a[2].to_int();
  const int64_t length = a[3].to_int();
  const int64_t d = kernels::CheckNarrowArgs(b.logical(), a[1].to_int(), start, length).dim;
  return narrow(b.x, d + 1, start, length);
}

// slice's bounds clamp to the dim and its step error names no dim: only the dim is checked
// here. SliceDim: the physical dim of slice(one example, dim, ...) once checked.
int64_t SliceDim(const Batch& b, int64_t dim) {
  CheckNotScalar("slice", b);
  return WrapDim("slice", dim, b.rank()) + 1;
}

Tensor Slice(const Batch& b, const ValueList& a) {
  return slice(b.x, SliceDim(b, a[1].to_int()), OptionalInt(a[2]), OptionalInt(a[3]),
               a[4].to_int());
}

// DiagonalDims: the physical dims of diagonal(one example, offset, dim1, dim2) once checked.
struct DiagonalDims {
  int64_t dim1;
  int64_t dim2;
};

DiagonalDims CheckDiagonal(const Batch& b, int64_t dim1, int64_t dim2) {
  if (b.rank() < 2) {
    ThrowError("diagonal: expected a tensor with at least 2 dimensions, got shape ",
               ShapeToString(b.logical()));
  }
  const int64_t d1 = WrapDim("diagonal", dim1, b.rank());
  const int64_t d2 = WrapDim("diagonal", dim2, b.rank());
  if (d1 == d2) {
    ThrowError("diagonal: dim1 and dim2 cannot be the same dimension, got ", dim1, " and ",
               dim2, " for a tensor of shape ", ShapeToString(b.logical()));
  }
  return {d1 + 1, d2 + 1};
}

// The batch dim, first and neither dim1 nor dim2, stays first; the diagonal goes last.
Tensor Diagonal(const Batch& b, const ValueList& a) {
  const DiagonalDims d = CheckDiagonal(b, a[2].to_int(), a[3].to_int());
  return diagonal(b.x, a[1].to_int(), d.dim1, d.dim2);
}

Tensor Flip(const Batch& b, const ValueList& a) {
  return flip(b.x, Shifted(WrapDims("flip", a[1].shape(), b.rank(), false)));
}

using FrontFn = Tensor (*)(const Batch& b, const ValueList& args);

// FrontRule runs a rule above with the batch dim moved to the front.
template <FrontFn F>
BatchedResult FrontRule(const VmapContext&, BatchedArgs& args) {
  FT_CHECK(args.bdim(0).has_value());  // the only tensor argument: batched, or no rule runs
  const Batch b{MoveBdimToFront(args.tensor(0), args.bdim(0))};
  return BatchedResult{{Value(F(b, args.values))}, {0}};
}

// contiguous and clone make every example row-major, as they make a tensor eagerly: the op
// runs on the batch-front physical value, so a view of the result (view(contiguous(x), ...))
// sees each example's elements in order. A physical value that is row-major with its batch
// dim elsewhere is not enough: its examples are strided (the property test found
// vmap(view(contiguous(x))) failing that way). contiguous still copies nothing when the
// batch-front value is row-major already.
BatchedResult CopyRule(const VmapContext& ctx, BatchedArgs& args) {
  ValueList values = args.values;
  values[0] = Value(MoveBdimToFront(args.tensor(0), args.bdim(0)));
  return BatchedResult{{Value(DispatchBoxed(ctx.op, values)[0])}, {0}};
}

// ---- The scatter ops: op(self, src, view arguments...), either or both batched.
//
// Both arguments are brought to batch-front, the unbatched one expanded to the batch (a
// stride-0 view: the op's copy of self gives every example its own buffer, and src is only
// read), so an unbatched self with a batched src gives a batched result. The view's
// arguments are checked on the per-example shape by the view rules' checks above, src
// against the per-example region (the batched region of self without its batch dim) by the
// kernel's CheckScatterSrc, so every error reads as for one example. Then the op runs once,
// its dims shifted past the batch dim; the result is batched at 0.

struct ScatterOperands {
  Batch self;  // batch-front
  Tensor src;  // batch-front
};

ScatterOperands ScatterFront(const VmapContext& ctx, const BatchedArgs& args) {
  return {Batch{EnsureBatchedFront(args.tensor(0), args.bdim(0), ctx.batch_size)},
          EnsureBatchedFront(args.tensor(1), args.bdim(1), ctx.batch_size)};
}

// CheckSrc: the op's src check on one example; `region` is the batched view of o.self that
// the op overwrites.
void CheckSrc(const char* op, const ScatterOperands& o, const Tensor& region) {
  kernels::CheckScatterSrc(op, region.sizes().subspan(1), o.src.sizes().subspan(1),
                           o.self.x.dtype(), o.src.dtype());
}

BatchedResult OneAtFront(Tensor t) { return BatchedResult{{Value(std::move(t))}, {0}}; }

BatchedResult SelectScatterRule(const VmapContext& ctx, BatchedArgs& args) {
  const ScatterOperands o = ScatterFront(ctx, args);
  const int64_t index = args.values[3].to_int();
  const int64_t d = SelectDim(o.self, args.values[2].to_int(), index);
  CheckSrc("select_scatter", o, select(o.self.x, d, index));
  return OneAtFront(select_scatter(o.self.x, o.src, d, index));
}

BatchedResult SliceScatterRule(const VmapContext& ctx, BatchedArgs& args) {
  const ScatterOperands o = ScatterFront(ctx, args);
  const int64_t d = SliceDim(o.self, args.values[2].to_int());
  const std::optional<int64_t> start = OptionalInt(args.values[3]);
  const std::optional<int64_t> end = OptionalInt(args.values[4]);
  const int64_t step = args.values[5].to_int();
  CheckSrc("slice_scatter", o, slice(o.self.x, d, start, end, step));
  return OneAtFront(slice_scatter(o.self.x, o.src, d, start, end, step));
}

BatchedResult DiagonalScatterRule(const VmapContext& ctx, BatchedArgs& args) {
  const ScatterOperands o = ScatterFront(ctx, args);
  const int64_t offset = args.values[2].to_int();
  const DiagonalDims d = CheckDiagonal(o.self, args.values[3].to_int(), args.values[4].to_int());
  CheckSrc("diagonal_scatter", o, diagonal(o.self.x, offset, d.dim1, d.dim2));
  return OneAtFront(diagonal_scatter(o.self.x, o.src, offset, d.dim1, d.dim2));
}

}  // namespace

void RegisterViewRules() {
  OpRegistry& r = OpRegistry::Global();
  SetBatchRule(r.Get("reshape"), &FrontRule<&Reshape>);
  SetBatchRule(r.Get("view"), &FrontRule<&View>);
  SetBatchRule(r.Get("flatten"), &FrontRule<&Flatten>);
  SetBatchRule(r.Get("unflatten"), &FrontRule<&Unflatten>);
  SetBatchRule(r.Get("expand"), &FrontRule<&Expand>);
  SetBatchRule(r.Get("unsqueeze"), &FrontRule<&Unsqueeze>);
  SetBatchRule(r.Get("squeeze"), &FrontRule<&Squeeze>);
  SetBatchRule(r.Get("squeeze_dim"), &FrontRule<&SqueezeDim>);
  SetBatchRule(r.Get("squeeze_dims"), &FrontRule<&SqueezeDims>);
  SetBatchRule(r.Get("movedim"), &FrontRule<&Movedim>);
  SetBatchRule(r.Get("permute"), &FrontRule<&Permute>);
  SetBatchRule(r.Get("transpose"), &FrontRule<&Transpose>);
  SetBatchRule(r.Get("t"), &FrontRule<&T>);
  SetBatchRule(r.Get("select"), &FrontRule<&Select>);
  SetBatchRule(r.Get("narrow"), &FrontRule<&Narrow>);
  SetBatchRule(r.Get("slice"), &FrontRule<&Slice>);
  SetBatchRule(r.Get("diagonal"), &FrontRule<&Diagonal>);
  SetBatchRule(r.Get("select_scatter"), &SelectScatterRule);
  SetBatchRule(r.Get("slice_scatter"), &SliceScatterRule);
  SetBatchRule(r.Get("diagonal_scatter"), &DiagonalScatterRule);
  SetBatchRule(r.Get("flip"), &FrontRule<&Flip>);
  SetBatchRule(r.Get("contiguous"), &CopyRule);
  SetBatchRule(r.Get("clone"), &CopyRule);
  SetBatchRule(r.Get("stop_gradient"), &CopyRule);
}

}  // namespace ft::vmap_rules

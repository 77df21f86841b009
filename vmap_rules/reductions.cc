// Batching rules: reductions (sum, mean, prod, amax, amin, logsumexp, var, std, norm),
// argmax / argmin, the dim-wise ops (softmax, log_softmax, cumsum, cumprod, logcumsumexp,
// linear_recurrence) and sum_to_size.
//
// Every rule moves the batch dim to the front and translates the logical dims of the
// per-example tensor to physical ones (logical d -> d + 1), so the op runs once on the whole
// batch and its result is batched at dim 0. Two cases need more than the shift:
//   - An empty dim list means every LOGICAL dim: it becomes the explicit list 1..rank (the
//     op itself would also reduce the batch dim).
//   - A rank-0 example has no dim to name (dims {}, {0} and {-1} all mean its single
//     element), and the physical tensor [B] has no dim 1: the rules view it as [B, 1] and
//     reduce (or scan) dim 1, which is the per-example op on one element.
// Logical dims are validated against the logical rank and the logical shape first, so errors
// read as the op's own errors for the per-example tensor (never naming the batch dim).
#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

#include "dispatch/dispatch.h"
#include "interpreters/vmap/batching_util.h"
#include "ops/ops.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

// The one tensor argument (self, index 0) with its batch dim in front. The interpreter only
// calls a rule when some tensor argument is batched at this level, and these ops have one.
Tensor SelfFront(const BatchedArgs& args) {
  FT_CHECK(args.bdim(0).has_value());
  return MoveBdimToFront(args.tensor(0), args.bdim(0));
}

// The per-example shape of a batch-front tensor.
Shape LogicalShape(const Tensor& front) {
  return Shape(front.sizes().begin() + 1, front.sizes().end());
}

// CheckNonEmptyDims: the op's own error for a reduction without an identity over a
// zero-size dim, naming the logical dim and shape.
void CheckNonEmptyDims(const char* op, const Shape& logical_shape, const Shape& logical_dims,
                       const std::string& why) {
  for (int64_t d : logical_dims) {
    if (logical_shape[static_cast<size_t>(d)] == 0) {
      ThrowError(op, ": cannot reduce over a zero-size dimension (dim ", d, " of shape ",
                 ShapeToString(logical_shape), ")", why);
    }
  }
}

// CheckFloatingExample: the op's own dtype error for the floating-only ops, naming the
// logical shape (the kernel would name the physical one). Other ops accept every dtype.
void CheckFloatingExample(const std::string& name, const Tensor& front) {
  if (IsFloating(front.dtype())) return;
  const std::string shape = ShapeToString(LogicalShape(front));
  if (name == "mean") {
    ThrowError("mean: could not infer the output dtype; input dtype must be floating point, got ",
               DTypeName(front.dtype()), " (shape ", shape, ")");
  }
  if (name == "var" || name == "std" || name == "norm" || name == "softmax" ||
      name == "log_softmax" || name == "logcumsumexp") {
    ThrowError(name, ": expected a floating point tensor (float32 or float64), got ",
               DTypeName(front.dtype()), " of shape ", shape);
  }
}

// Reductions over a list of dims. args: (self, ..., dims at `dims_arg`, ..., keepdim last).
BatchedResult DimListRule(const VmapContext& ctx, BatchedArgs& args, size_t dims_arg) {
  const std::string& name = ctx.op.name();
  Tensor x = SelfFront(args);
  CheckFloatingExample(name, x);
  const Shape shape = LogicalShape(x);
  const int64_t rank = static_cast<int64_t>(shape.size());
  const Shape logical = WrapDims(name, args.values[dims_arg].shape(), rank, true);

  // Reductions without an identity: reject empty logical dims with the op's message.
  if (name == "amax" || name == "amin") {
    CheckNonEmptyDims(name.c_str(), shape, logical, ": max and min have no identity");
  } else if (name == "norm") {
    const double p = args.values[1].to_double();
    if (p < 0 || p == std::numeric_limits<double>::infinity()) {
      CheckNonEmptyDims(name.c_str(), shape, logical,
                        absl::StrCat(": the p = ", p, " norm has no identity"));
    }
  }

  ValueList values = args.values;
  Shape physical;
  if (rank == 0) {
    // [B] -> [B, 1], reduce dim 1 without keepdim: [B], the rank-0 result of every example.
    x = unsqueeze(x, 1);
    physical.push_back(1);
    values.back() = Value(false);
  } else {
    for (int64_t d : logical) physical.push_back(d + 1);
  }
  values[0] = Value(x);
  values[dims_arg] = Value(physical);
  BatchedResult result;
  result.values = DispatchBoxed(ctx.op, values);
  result.bdims.push_back(0);
  return result;
}

BatchedResult DimsAt1Rule(const VmapContext& ctx, BatchedArgs& args) {
  return DimListRule(ctx, args, 1);  // (self, dim, keepdim) and (self, dim, correction, keepdim)
}

BatchedResult NormRule(const VmapContext& ctx, BatchedArgs& args) {
  return DimListRule(ctx, args, 2);  // (self, p, dim, keepdim)
}

// argmax / argmin (self, dim, keepdim). With dim nullopt the op reduces the flattened
// example: the batch is flattened to [B, N] and dim 1 reduced, so indices are into the
// flattened example.
BatchedResult ArgRule(const VmapContext& ctx, BatchedArgs& args) {
  const std::string& name = ctx.op.name();
  const Tensor x = SelfFront(args);
  const Shape shape = LogicalShape(x);
  const int64_t rank = static_cast<int64_t>(shape.size());
  const bool keepdim = args.values[2].to_bool();
  const int64_t batch = x.sizes()[0];
  const bool flattened = args.values[1].is_none();

  Tensor input;
  if (!flattened) {
    const int64_t d = WrapDim(name, args.values[1].to_int(), rank);
    if (rank > 0) {
      if (shape[static_cast<size_t>(d)] == 0) {
        ThrowError(name, ": cannot reduce over a zero-size dimension (dim ", d, " of shape ",
                   ShapeToString(shape), "): an empty slice has no extreme element");
      }
      ValueList values = {Value(x), Value(d + 1), Value(keepdim)};
      return BatchedResult{DispatchBoxed(ctx.op, values), {0}};
    }
    input = unsqueeze(x, 1);  // rank 0: the single element is its own extreme (index 0)
  } else {
    if (Numel(shape) == 0) {
      ThrowError(name, ": cannot reduce over a zero-size dimension (the flattened input of ",
                 "shape ", ShapeToString(shape), " is empty); pass a dim of nonzero size");
    }
    input = reshape(x, {batch, -1});
  }
  ValueList values = {Value(input), Value(int64_t{1}), Value(false)};
  ValueList out = DispatchBoxed(ctx.op, values);
  if (flattened && keepdim && rank > 0) {
    // keepdim on the flattened example keeps every logical dim with size 1.
    Shape ones(static_cast<size_t>(rank) + 1, 1);
    ones[0] = batch;
    out[0] = Value(reshape(out[0].tensor(), ones));
  }
  return BatchedResult{std::move(out), {0}};
}

// softmax / log_softmax / cumsum / cumprod / logcumsumexp (self, dim): the same op along the
// physical dim. A rank-0 example is scanned as a [1] vector (viewed [B, 1], op along dim 1,
// dim 1 dropped).
BatchedResult AlongDimRule(const VmapContext& ctx, BatchedArgs& args) {
  const Tensor x = SelfFront(args);
  CheckFloatingExample(ctx.op.name(), x);
  const int64_t rank = LogicalRank(x, int64_t{0});
  const int64_t d = WrapDim(ctx.op.name(), args.values[1].to_int(), rank);
  if (rank == 0) {
    ValueList values = {Value(unsqueeze(x, 1)), Value(int64_t{1})};
    ValueList out = DispatchBoxed(ctx.op, values);
    out[0] = Value(squeeze_dim(out[0].tensor(), 1));
    return BatchedResult{std::move(out), {0}};
  }
  ValueList values = {Value(x), Value(d + 1)};
  return BatchedResult{DispatchBoxed(ctx.op, values), {0}};
}

// linear_recurrence (a, b, dim): a and b broadcast like add, so both batch dims go to the
// front and both are padded to the common logical rank; the op runs once along the physical
// dim. A rank-0 example is scanned as a [1] vector.
BatchedResult LinearRecurrenceRule(const VmapContext&, BatchedArgs& args) {
  // The op's own errors, naming the logical shapes.
  const Shape shape =
      BroadcastShapes("linear_recurrence", ::ft::LogicalShape(args.tensor(0), args.bdim(0)),
                      ::ft::LogicalShape(args.tensor(1), args.bdim(1)));
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t d = WrapDim("linear_recurrence", args.values[2].to_int(), rank);
  const int64_t padded = std::max<int64_t>(rank, 1);
  ValueList values(3);
  for (size_t i = 0; i < 2; ++i) {
    const Tensor& t = args.tensor(i);
    values[i] = args.bdim(i)
                    ? Value(PadToLogicalRank(MoveBdimToFront(t, args.bdim(i)), int64_t{0}, padded))
                    : Value(t);
  }
  values[2] = Value(d + 1);
  ValueList out = DispatchBoxed(OpRegistry::Global().Get("linear_recurrence"), values);
  if (rank == 0) out[0] = Value(squeeze_dim(out[0].tensor(), 1));
  return BatchedResult{std::move(out), {0}};
}

// sum_to_size (self, size): size is the logical target. The example's leading extra dims
// are summed away first (they sit after the batch dim, so the op cannot see them as
// leading), then the op reduces the remaining size-1 dims of [B] + size.
BatchedResult SumToSizeRule(const VmapContext& ctx, BatchedArgs& args) {
  Tensor x = SelfFront(args);
  const Shape shape = LogicalShape(x);
  const Shape& size = args.values[1].shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t n = static_cast<int64_t>(size.size());
  bool expandable = n <= rank;
  for (int64_t i = 0; expandable && i < n; ++i) {
    const int64_t have = shape[static_cast<size_t>(rank - n + i)];
    expandable = size[static_cast<size_t>(i)] == have || size[static_cast<size_t>(i)] == 1;
  }
  if (!expandable) {
    ThrowError("sum_to_size: size ", ShapeToString(size), " is not expandable to size ",
               ShapeToString(shape), " (the shape of the tensor being summed)");
  }
  Shape target = size;
  target.insert(target.begin(), x.sizes()[0]);
  const int64_t lead = rank - n;
  if (lead > 0) {
    Shape lead_dims;
    for (int64_t d = 1; d <= lead; ++d) lead_dims.push_back(d);
    x = sum(x, lead_dims, false);  // a new tensor, with sum's dtype
    if (x.sizes() == IntArrayRef(target)) return BatchedResult{{Value(x)}, {0}};
  }
  ValueList values = {Value(x), Value(target)};
  return BatchedResult{DispatchBoxed(ctx.op, values), {0}};
}

}  // namespace

void RegisterReductionRules() {
  OpRegistry& r = OpRegistry::Global();
  for (const char* name : {"sum", "mean", "prod", "amax", "amin", "logsumexp", "var", "std"}) {
    SetBatchRule(r.Get(name), &DimsAt1Rule);
  }
  SetBatchRule(r.Get("norm"), &NormRule);
  SetBatchRule(r.Get("argmax"), &ArgRule);
  SetBatchRule(r.Get("argmin"), &ArgRule);
  for (const char* name : {"softmax", "log_softmax", "cumsum", "cumprod", "logcumsumexp"}) {
    SetBatchRule(r.Get(name), &AlongDimRule);
  }
  SetBatchRule(r.Get("linear_recurrence"), &LinearRecurrenceRule);
  SetBatchRule(r.Get("sum_to_size"), &SumToSizeRule);
}

}  // namespace ft::vmap_rules

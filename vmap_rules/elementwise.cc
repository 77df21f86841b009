// Batching rules: elementwise ops (unary, binary, comparison, logical, where, clamp) and the
// in-place ops.
//
// Pointwise ops need no knowledge of the op: every batched tensor argument gets its batch
// dim moved to the front and is padded with size-1 dims to the largest logical rank, so that
// broadcasting lines up the examples; unbatched arguments broadcast as they are. Then the op
// runs once on the whole batch and the result is batched at dim 0.
#include <algorithm>

#include "dispatch/dispatch.h"
#include "dispatch/ops.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

// The pointwise rule is boxed (SetBoxedBatchRule): it is the most common rule by far, and
// the generic BatchedArgs / BatchedResult steps would cost more than the rule.
ValueList PointwiseRule(VmapInterpreter& vmap, const Operator& op, ValueList& args) {
  const int64_t level = vmap.level();
  int64_t rank = 0;
  bool any_batched = false;
  for (const Value& v : args) {
    FT_CHECK(!v.is_tensor_list());  // no pointwise op takes a list
    if (!v.is_tensor()) continue;
    const BatchedTensorImpl* b = MaybeBatchedAt(v.tensor(), level);
    rank = std::max(rank, b ? b->value().dim() - 1 : v.tensor().dim());
    any_batched = any_batched || b != nullptr;
  }
  // The physical arguments: a batched tensor's value with its batch dim moved to the front
  // and padded to the common logical rank (usually it already is: then the value as is).
  ValueList physical;
  for (const Value& v : args) {
    const BatchedTensorImpl* b = v.is_tensor() ? MaybeBatchedAt(v.tensor(), level) : nullptr;
    if (b == nullptr) {
      physical.push_back(v);
    } else if (b->bdim() == 0 && b->value().dim() - 1 == rank) {
      physical.emplace_back(b->value());
    } else {
      physical.emplace_back(
          PadToLogicalRank(MoveBdimToFront(b->value(), b->bdim()), int64_t{0}, rank));
    }
  }
  ValueList out = [&] {
    LowerGuard lower(&vmap);
    return DispatchBoxed(op, physical);
  }();
  if (!any_batched) return out;
  for (Value& v : out) {
    if (v.is_tensor()) {
      Tensor& t = v.mutable_tensor();
      t = MakeBatched(std::move(t), 0, level, vmap.alive_flag());
    } else if (v.is_tensor_list()) {
      for (Tensor& t : v.mutable_tensor_list()) {
        t = MakeBatched(std::move(t), 0, level, vmap.alive_flag());
      }
    }
  }
  return out;
}

// In-place: self must be batched at this level (or nothing is, and the op was lowered
// before reaching here). The op writes through a view of self with the batch dim in front.
BatchedResult InplaceRule(const VmapContext& ctx, BatchedArgs& args) {
  const int mutated = ctx.op.schema().mutated_arg.value_or(0);
  if (!args.bdim(mutated)) {
    ThrowError("vmap: ", ctx.op.name(), "(self, ...) would write values that vary over the ",
               "batch (vmap level ", ctx.level, ") into a tensor that does not: the in-place ",
               "arithmetic is not possible. Create the buffer inside the function, e.g. with ",
               "zeros_like of a batched input, instead of capturing it from outside, or vmap "
               "ft::functionalize(f), whose buffers take batched values");
  }
  ValueList values = args.values;
  const Tensor self = MoveBdimToFront(args.tensor(mutated), args.bdim(mutated));
  const int64_t rank = LogicalRank(self, int64_t{0});
  values[mutated] = Value(self);
  for (size_t i = 0; i < values.size(); ++i) {
    if (static_cast<int>(i) == mutated || !values[i].is_tensor() || !args.bdim(i)) continue;
    if (LogicalRank(args.tensor(i), args.bdim(i)) > rank) {
      ThrowError(ctx.op.name(), ": the source (logical shape rank ",
                 LogicalRank(args.tensor(i), args.bdim(i)),
                 ") cannot be broadcast to self (logical rank ", rank, ")");
    }
    values[i] = Value(PadToLogicalRank(MoveBdimToFront(args.tensor(i), args.bdim(i)),
                                       int64_t{0}, rank));
  }
  DispatchBoxed(ctx.op, values);
  BatchedResult result;
  result.values.push_back(args.values[mutated]);  // replaced by the original object
  result.bdims.push_back(args.bdim(mutated));
  return result;
}

}  // namespace

void SetPointwiseRule(const Operator& op) { SetBoxedBatchRule(op, &PointwiseRule); }

void RegisterElementwiseRules() {
  OpRegistry& r = OpRegistry::Global();
  for (const char* name :
       {"neg",  "abs",   "sign",   "exp",   "expm1", "log",        "log1p", "sin",
        "cos",  "tan",   "tanh",   "sigmoid", "relu", "sqrt",      "rsqrt", "square",
        "reciprocal", "floor", "round", "add", "sub", "mul", "div", "pow", "maximum",
        "minimum", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
        "logical_not", "where", "clamp"}) {
    SetBoxedBatchRule(r.Get(name), &PointwiseRule);
  }
  for (const char* name : {"exp_", "add_", "sub_", "mul_", "div_", "copy_", "fill_", "zero_",
                           "clamp_"}) {
    SetBatchRule(r.Get(name), &InplaceRule);
  }
}

}  // namespace ft::vmap_rules

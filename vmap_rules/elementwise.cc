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
#include "interpreters/vmap/batching_util.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

BatchedResult PointwiseRule(const VmapContext& ctx, BatchedArgs& args) {
  int64_t rank = 0;
  bool any_batched = false;
  for (size_t i = 0; i < args.values.size(); ++i) {
    if (!args.values[i].is_tensor()) continue;
    rank = std::max(rank, LogicalRank(args.tensor(i), args.bdim(i)));
    any_batched = any_batched || args.bdim(i).has_value();
  }
  // The arguments are ours to rewrite in place (no copy of the list).
  ValueList& values = args.values;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].is_tensor() || !args.bdim(i)) continue;
    if (*args.bdim(i) == 0 && LogicalRank(args.tensor(i), args.bdim(i)) == rank) continue;
    values[i] = Value(PadToLogicalRank(MoveBdimToFront(args.tensor(i), args.bdim(i)),
                                       int64_t{0}, rank));
  }
  BatchedResult result{DispatchBoxed(ctx.op, values), {}};
  result.bdims.assign(result.values.size(), any_batched ? BDim(0) : std::nullopt);
  return result;
}

// In-place: self must be batched at this level (or nothing is, and the op was lowered
// before reaching here). The op writes through a view of self with the batch dim in front.
BatchedResult InplaceRule(const VmapContext& ctx, BatchedArgs& args) {
  const int mutated = ctx.op.schema().mutated_arg.value_or(0);
  if (!args.bdim(mutated)) {
    ThrowError("vmap: ", ctx.op.name(), "(self, ...) would write values that vary over the ",
               "batch (vmap level ", ctx.level, ") into a tensor that does not: the in-place ",
               "arithmetic is not possible. Create the buffer inside the function, e.g. with ",
               "zeros_like of a batched input, instead of capturing it from outside");
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

void RegisterElementwiseRules() {
  OpRegistry& r = OpRegistry::Global();
  for (const char* name :
       {"neg",  "abs",   "sign",   "exp",   "expm1", "log",        "log1p", "sin",
        "cos",  "tan",   "tanh",   "sigmoid", "relu", "sqrt",      "rsqrt", "square",
        "reciprocal", "floor", "round", "add", "sub", "mul", "div", "pow", "maximum",
        "minimum", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
        "logical_not", "where", "clamp"}) {
    SetBatchRule(r.Get(name), &PointwiseRule);
  }
  for (const char* name : {"exp_", "add_", "sub_", "mul_", "div_", "copy_", "fill_", "zero_",
                           "clamp_"}) {
    SetBatchRule(r.Get(name), &InplaceRule);
  }
}

}  // namespace ft::vmap_rules

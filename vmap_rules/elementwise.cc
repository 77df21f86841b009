// Batching rules: elementwise ops (unary, binary, comparison, logical, where, clamp) and the
// in-place ops.
//
// Pointwise ops need no knowledge of the op: every batched tensor argument gets its batch
// dim moved to the front and is padded with size-1 dims to the largest logical rank, so that
// broadcasting lines up the examples; unbatched arguments broadcast as they are. Then the op
// runs once on the whole batch and the result is batched at dim 0.
#include <algorithm>
#include <array>

#include "dispatch/dispatch.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "ops/ops.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

// NOTE: [Consecutive vmap levels]
// Under nested vmaps (vmap(vmap(f))), every level would run the pointwise rule in turn: unwrap
// its level, lower, dispatch, wrap. When the top k interpreters are all vmaps and every
// batched argument has its batch dim at 0 at each of those levels, with one logical rank r
// that no unbatched argument exceeds, each level's rule would find nothing to move or pad:
// it would pass the values on as they are, and wrap the results at bdim 0. Then one call
// does the k levels' work: peel the k wrappers of each batched argument, lower the k levels
// at once, run the op once, wrap its results k times (innermost level first). The result is
// the same object graph the level-by-level walk builds, for 1/k of the dispatches. Unbatched
// arguments must be dense or batched below the k levels only (a wrapper of another
// transform, or batched at one of the k levels but not the top, takes the walk).
constexpr int kMaxCollapsedLevels = 8;

// LowerLevels pops the top `n` interpreters (expected[0] on top) for a scope and pushes them
// back afterwards, exceptions included: n LowerGuards in one.
class LowerLevels {
 public:
  LowerLevels(VmapInterpreter* const* expected, int n) : levels_(expected), n_(n) {
    for (int j = 0; j < n_; ++j) {
      Interpreter* popped = LayerStack::Pop();
      FT_CHECK(popped == levels_[j]);
    }
  }
  ~LowerLevels() {
    for (int j = n_ - 1; j >= 0; --j) LayerStack::Push(levels_[j]);
  }
  LowerLevels(const LowerLevels&) = delete;
  LowerLevels& operator=(const LowerLevels&) = delete;

 private:
  VmapInterpreter* const* levels_;
  int n_;
};

using CollapsedLevels = std::array<VmapInterpreter*, kMaxCollapsedLevels>;

// CollapsibleLevels: how many levels from the top (`top` first) the collapsed walk of NOTE:
// [Consecutive vmap levels] can take for `args`, stored in `levels`; 0 when fewer than two.
int CollapsibleLevels(VmapInterpreter& top, const ValueList& args, CollapsedLevels& levels) {
  int k = 0;
  for (int i = LayerStack::size() - 1; i >= 0 && k < kMaxCollapsedLevels; --i) {
    Interpreter* interpreter = LayerStack::At(i);
    if (interpreter->key() != TransformType::kVmap) break;
    levels[static_cast<size_t>(k++)] = static_cast<VmapInterpreter*>(interpreter);
  }
  if (k < 2 || levels[0] != &top) return 0;
  // Batched arguments: how many of the levels, from the top, have the batch dim at 0.
  int64_t rank = -1;
  for (const Value& v : args) {
    if (v.is_tensor_list()) return 0;  // no pointwise op takes one (PointwiseRule checks)
    if (!v.is_tensor()) continue;
    const BatchedTensorImpl* b = MaybeBatchedAt(v.tensor(), top.level());
    if (b == nullptr) continue;
    const int64_t r = b->value().dim() - 1;
    if (rank >= 0 && r != rank) return 0;
    rank = r;
    int depth = 0;
    for (const Tensor* t = &v.tensor(); depth < k; ++depth) {
      b = MaybeBatchedAt(*t, levels[static_cast<size_t>(depth)]->level());
      if (b == nullptr || b->bdim() != 0) break;
      t = &b->value();
    }
    k = depth;
    if (k < 2) return 0;
  }
  if (rank < 0) return 0;
  // Unbatched arguments: broadcastable as they are, and batched at none of the k levels.
  for (const Value& v : args) {
    if (!v.is_tensor()) continue;
    const Tensor& t = v.tensor();
    if (MaybeBatchedAt(t, top.level()) != nullptr) continue;
    if (t.dim() > rank) return 0;
    if (t.is_dense()) continue;
    if (t.kind() != TensorKind::kBatched) return 0;
    const int64_t inner = static_cast<const BatchedTensorImpl*>(t.impl())->level();
    while (k > 0 && levels[static_cast<size_t>(k - 1)]->level() <= inner) --k;
    if (k < 2) return 0;
  }
  return k;
}

// PointwiseAcrossLevels runs op over the top k levels at once (k from CollapsibleLevels).
ValueList PointwiseAcrossLevels(const Operator& op, const ValueList& args,
                                const CollapsedLevels& levels, int k) {
  const int64_t top_level = levels[0]->level();
  ValueList physical;
  for (const Value& v : args) {
    if (!v.is_tensor() || MaybeBatchedAt(v.tensor(), top_level) == nullptr) {
      physical.push_back(v);
      continue;
    }
    const Tensor* t = &v.tensor();
    for (int j = 0; j < k; ++j) t = &static_cast<const BatchedTensorImpl*>(t->impl())->value();
    physical.emplace_back(*t);
  }
  ValueList out = [&] {
    LowerLevels lower(levels.data(), k);
    return DispatchBoxed(op, physical);
  }();
  auto wrap = [&](Tensor& t) {
    for (int j = k - 1; j >= 0; --j) {
      const VmapInterpreter& level = *levels[static_cast<size_t>(j)];
      t = MakeBatched(std::move(t), 0, level.level(), level.alive_flag());
    }
  };
  for (Value& v : out) {
    if (v.is_tensor()) {
      wrap(v.mutable_tensor());
    } else if (v.is_tensor_list()) {
      for (Tensor& t : v.mutable_tensor_list()) wrap(t);
    }
  }
  return out;
}

// PointwiseOneLevel: the rule at one level (the walk).
ValueList PointwiseOneLevel(VmapInterpreter& vmap, const Operator& op, ValueList& args) {
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
  ValueList out = [&] {
    // Below this level: the views that align the values (a per-example predicate padded
    // to a row's rank) go straight to the levels under it.
    LowerGuard lower(&vmap);
    // The physical arguments: a batched tensor's value with its batch dim moved to the
    // front and padded to the common logical rank (usually it already is: then the value).
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

// The pointwise rule is boxed (SetBoxedBatchRule): it is the most common rule by far, and
// the generic BatchedArgs / BatchedResult steps would cost more than the rule. (Each path is
// a function of its own so that each keeps its return value optimization.)
ValueList PointwiseRule(VmapInterpreter& vmap, const Operator& op, ValueList& args) {
  // Only nested vmaps pay for the scan (one load and compare otherwise).
  if (const int depth = LayerStack::size();
      depth >= 2 && LayerStack::At(depth - 2)->key() == TransformType::kVmap) {
    CollapsedLevels levels;
    if (const int k = CollapsibleLevels(vmap, args, levels); k >= 2) {
      return PointwiseAcrossLevels(op, args, levels, k);
    }
  }
  return PointwiseOneLevel(vmap, op, args);
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

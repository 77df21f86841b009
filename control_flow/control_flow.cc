// cond, switch_case, while_loop, fori_loop and scan (NOTE: [Control flow by decomposition]
// in control_flow.h).
#include "control_flow/control_flow.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "dispatch/dispatch.h"
#include "dispatch/higher_order_operator.h"
#include "dispatch/interpreter.h"
#include "interpreters/grad/grad_interpreter.h"
#include "interpreters/jit/trace.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/factories.h"

namespace ft {
namespace {

// ---- Reading predicates ----

// ConcreteScalar: the value of a one-element predicate or index read through the grad and
// dual wrappers (the primal), or nullopt when a vmap level batches it (its value differs per
// example). A functionalize wrapper is read through a clone at the current level, whose
// value is up to date.
// Under a jit trace the read becomes a guard (NOTE: [Guards] in interpreters/jit/trace.h):
// `clamp_to` >= 0 guards the clamped index, -1 the truth of the value.
std::optional<int64_t> ConcreteScalar(const Tensor& t, int64_t clamp_to = -1) {
  Tensor read = t;
  for (const Tensor* p = &t; !p->is_dense(); p = p->impl()->wrapped_value()) {
    if (p->kind() == TensorKind::kBatched) return std::nullopt;
    if (p->kind() == TensorKind::kFunctional && read.is_same(t)) read = clone(t);
  }
  const Tensor* p = &read;
  while (!p->is_dense()) p = p->impl()->wrapped_value();
  if (TraceGuard(*p, clamp_to < 0, std::max<int64_t>(clamp_to, 0))) {
    // Guarded (one element): a read the trace does not count.
    return internal::ReadElement<int64_t>(*p->impl(), 0);
  }
  return p->item<int64_t>();
}

// AnyTrue: whether some example of a batched predicate is true (every vmap level's examples:
// the physical value under all wrappers).
// Under a jit trace the answer becomes a guard on a count the trace computes.
bool AnyTrue(const Tensor& t) {
  const Tensor* p = &t;
  while (!p->is_dense()) p = p->impl()->wrapped_value();
  if (CurrentBaseCallObserver() != nullptr) {
    Tensor count;
    {
      ExcludeAllGuard base;  // a kernel call the trace records, on the physical value
      count = sum(to(*p, kInt64));
    }
    if (TraceGuard(count, /*truth=*/true)) {
      return internal::ReadElement<int64_t>(*count.impl(), 0) != 0;
    }
  }
  if (p->dtype() == kBool && p->is_contiguous()) {  // the common case: scan the bytes
    const bool* data = p->data<const bool>();
    return std::any_of(data, data + p->numel(), [](bool b) { return b; });
  }
  for (bool b : p->to_vector<bool>()) {
    if (b) return true;
  }
  return false;
}

// OnStack: whether a level of `kind` is on the stack. Only under a grad level can the branch
// an example did not take send it a gradient, so only then are its operands masked; only
// under functionalize is an unbatched branch's write into a captured tensor refused.
bool OnStack(TransformType kind) {
  for (int i = 0; i < LayerStack::size(); ++i) {
    if (LayerStack::At(i)->key() == kind) return true;
  }
  return false;
}
bool GradActive() { return OnStack(TransformType::kGrad); }

// MaskedFor: the operands a branch (or body) sees, where `take` is false in an example, as
// constants there: where(take, x, stop_gradient(x)). The values are x's in every example,
// but the example's gradient through the branch it did not take is selected away (not
// multiplied by zero), so an infinite derivative there cannot make it NaN.
TensorList MaskedFor(const Tensor& take, const TensorList& xs) {
  if (!GradActive()) return xs;
  TensorList out;
  out.reserve(xs.size());
  for (const Tensor& x : xs) {
    out.push_back(IsFloating(x.dtype()) ? where(take, x, stop_gradient(x)) : x);
  }
  return out;
}

// Describe: "float64 [2, 3]", for messages.
std::string Describe(const Tensor& t) {
  return absl::StrCat(DTypeName(t.dtype()), " ", ShapeToString(t.sizes()));
}

// Who names the function (or value) a message is about: "true_fn", "branch 2", "body_fn at
// iteration 7". It is spelled out only when a message needs it: a loop names every
// iteration, and a string built per step would be per-step cost.
struct Who {
  const char* name;
  const char* before_number = nullptr;  // " at iteration ", " ", ...; null: no number
  int64_t number = 0;
  std::string str() const {
    return before_number == nullptr ? std::string(name)
                                    : absl::StrCat(name, before_number, number);
  }
};

// NOTE: [Masking captured tensors]
// A branch (or a while_loop body) also reads tensors it captured from outside, not only its
// operands: a weight, a rate constant. Under a batched predicate its gradient with respect
// to those is summed over every example, including the examples that did not take it, where
// 0 * inf may be NaN. So while a masked branch runs, a DispatchArgumentHook rewrites every
// op's wrapped floating-point argument that the branch did not make to
// where(take, c, stop_gradient(c)), once per tensor: each example's use of the capture is
// then selected, and the examples that did not take the branch send it exactly zero. Dense
// tensors are constants at every level and are left alone.
//
// "Made by the branch" is told by storage, with no per-op bookkeeping: a buffer this thread
// allocated after the region began (Storage::AllocationMark, as the jit tracer tells
// captured tensors from made ones), or an operand's buffer. So a view the branch takes of a
// captured tensor is captured too, as its storage is. Under functionalize a wrapper's
// buffer is replaced when it catches up with a write (Sync), so a captured tensor could
// look new: there the region records the tensors its ops return instead.
//
// The same hook keeps branches pure where it matters: an in-place op whose target the branch
// did not make (a captured tensor, or a view of one) is an ft::Error, as in torch, under a
// batched predicate (the write would reach every example, taken or not) and under
// functionalize (it would be a hidden effect of a branch). A branch that runs alone, a loop
// body or a scan step writes what it writes, as the same code unrolled would.
class BranchRegion final : public DispatchArgumentHook {
 public:
  // take: where the branch is taken, when its captures must be masked (else undefined).
  BranchRegion(const char* op, const Who& who, Tensor take, const TensorList& operands)
      : op_(op),
        who_(who),
        take_(std::move(take)),
        start_(Storage::Mark()),
        by_outputs_(OnStack(TransformType::kFunctionalize)) {
    for (const Tensor& x : operands) {
      if (!x.defined()) continue;
      if (by_outputs_) {
        made_.insert(x.impl());
      } else {
        operand_storages_.push_back(x.data_storage().id());
      }
    }
  }
  void BeforeOp(const Operator& op, ValueList& args) override {
    const int written = op.schema().mutated_arg.value_or(-1);
    if (written >= 0) {
      const Tensor& target = args[written].tensor();
      if (target.defined() && !Made(target)) {
        ThrowError(op_, ": ", who_.str(), " wrote a tensor it did not make (in-place op '",
                   op.name(), "' on ", Describe(target), "); branches and loop bodies must "
                   "not modify tensors captured from outside (return the new value instead)");
      }
    }
    if (!take_.defined()) return;
    for (size_t i = 0; i < args.size(); ++i) {
      if (static_cast<int>(i) == written) continue;
      if (args[i].is_tensor()) {
        Substitute(args[i].mutable_tensor());
      } else if (args[i].is_tensor_list()) {
        for (Tensor& t : args[i].mutable_tensor_list()) Substitute(t);
      }
    }
  }
  void AfterOp(const Operator&, const ValueList& outputs) override {
    if (!by_outputs_) return;
    for (const Value& v : outputs) {
      if (v.is_tensor()) {
        made_.insert(v.tensor().impl());
      } else if (v.is_tensor_list()) {
        for (const Tensor& t : v.tensor_list()) made_.insert(t.impl());
      }
    }
  }

 private:
  bool Made(const Tensor& t) const {
    if (by_outputs_) return made_.contains(t.impl());
    const Storage& storage = t.data_storage();
    if (!storage.defined() || storage.AllocatedAfter(start_)) return true;
    return absl::c_linear_search(operand_storages_, storage.id());
  }
  void Substitute(Tensor& t) {
    if (!t.defined() || t.is_dense() || !IsFloating(t.dtype()) || Made(t)) return;
    auto [it, inserted] = masked_.try_emplace(t.impl());
    if (inserted) {
      it->second = where(take_, t, stop_gradient(t));
      if (by_outputs_) made_.insert(it->second.impl());
    }
    t = it->second;
  }

  const char* op_;
  const Who& who_;
  Tensor take_;
  const Storage::AllocationMark start_;      // buffers allocated later are the branch's
  std::vector<const void*> operand_storages_;  // and so are the operands' buffers
  const bool by_outputs_;                      // under functionalize: made_ decides
  absl::flat_hash_set<const TensorImpl*> made_;  // operands and the branch's op outputs
  absl::flat_hash_map<const TensorImpl*, Tensor> masked_;  // capture -> its masked use
};

// ---- Checks ----

// CheckPredicate: a one-element tensor of the expected kind (bool for a predicate, an
// integer dtype for an index).
void CheckPredicate(const char* op, const Who& what, const Tensor& p, bool index) {
  if (!p.defined()) ThrowError(op, ": ", what.str(), " is an undefined tensor");
  const bool kind_ok = index ? IsIntegral(p.dtype(), /*include_bool=*/false) : p.dtype() == kBool;
  if (!kind_ok || p.numel() != 1) {
    ThrowError(op, ": ", what.str(), " must be ", index ? "an integer" : "a bool",
               " tensor with one element, got ", Describe(p),
               index ? "" : " (compare, e.g. ft::gt(x, 0), to get one)");
  }
}

// CheckSameOutputs: `outs` (what `who` returned) against `ref` (what `ref_who` returned or
// what init holds): same count, dtypes and shapes. `outs` may carry `batch_dims` leading
// dims of its own (a branch evaluated on an empty batch), which are not compared; `why`
// ends the message.
void CheckSameOutputs(const char* op, const Who& who, const TensorList& outs,
                      const Who& ref_who, const TensorList& ref, const char* noun,
                      size_t batch_dims = 0, const char* why = "") {
  if (outs.size() != ref.size()) {
    ThrowError(op, ": ", who.str(), " returned ", outs.size(), " ", noun, "s, but ",
               ref_who.str(), " has ", ref.size(), why);
  }
  for (size_t j = 0; j < outs.size(); ++j) {
    if (!outs[j].defined()) {
      ThrowError(op, ": ", who.str(), " returned an undefined tensor as ", noun, " ", j, why);
    }
    const IntArrayRef shape = IntArrayRef(outs[j].sizes()).subspan(batch_dims);
    if (outs[j].dtype() != ref[j].dtype() || shape != ref[j].sizes()) {
      ThrowError(op, ": ", noun, " ", j, " of ", who.str(), " is ", DTypeName(outs[j].dtype()),
                 " ", ShapeToString(shape), ", but ", ref_who.str(), "'s is ", Describe(ref[j]),
                 "; they must match", why);
    }
  }
}

void CheckDefinedOutputs(const char* op, const Who& who, const TensorList& outs) {
  for (size_t j = 0; j < outs.size(); ++j) {
    if (!outs[j].defined()) {
      ThrowError(op, ": ", who.str(), " returned an undefined tensor as output ", j);
    }
  }
}

// PurityGuard records the data versions of a branch's or body's operands and throws if the
// call wrote one in place: under a batched predicate every branch runs, so the write would
// reach every example, and a cond must not change its operands in any mode.
class PurityGuard {
 public:
  explicit PurityGuard(const TensorList& operands) : operands_(operands) {
    versions_.reserve(operands.size());
    for (const Tensor& x : operands) versions_.push_back(x.data_version());
  }
  void Check(const char* op, const Who& who) const {
    for (size_t j = 0; j < operands_.size(); ++j) {
      if (operands_[j].data_version() != versions_[j]) {
        ThrowError(op, ": ", who.str(), " wrote operand ", j, " (", Describe(operands_[j]),
                   ") in place; branches and loop bodies must not modify their operands "
                   "(clone it inside, or return the new value)");
      }
    }
  }

 private:
  const TensorList& operands_;
  std::vector<int64_t> versions_;
};

// CallChecked: fn on its operands, refusing writes into them; under functionalize also into
// the tensors fn captured (BranchRegion). Elsewhere a branch that runs alone, a loop body or
// a scan step writes what it writes, as the same code unrolled would, at no cost per op.
TensorList CallChecked(const char* op, const Who& who, const TensorListFn& fn,
                       const TensorList& operands) {
  PurityGuard purity(operands);
  TensorList out;
  if (!OnStack(TransformType::kFunctionalize)) {
    out = fn(operands);
  } else {
    BranchRegion region(op, who, Tensor(), operands);
    DispatchArgumentHookScope scope(&region);
    out = fn(operands);
  }
  purity.Check(op, who);
  return out;
}

// CallMasked: fn, a branch or body that runs for the examples where `take` is true, on its
// operands masked for them (MaskedFor), with its captured tensors masked the same way (NOTE:
// [Masking captured tensors]; without a grad level nothing can carry a gradient, and only
// writes into captured tensors are refused: they would reach every example).
TensorList CallMasked(const char* op, const Who& who, const TensorListFn& fn,
                      const Tensor& take, const TensorList& operands) {
  const bool grad = GradActive();
  const TensorList masked = grad ? MaskedFor(take, operands) : operands;
  // The masked operands are the branch's to read only, like the operands: a write into one
  // is refused in every mode, so a branch behaves the same batched or not.
  PurityGuard purity(operands), masked_purity(masked);
  BranchRegion region(op, who, grad ? take : Tensor(), masked);
  TensorList out;
  {
    DispatchArgumentHookScope scope(&region);
    out = fn(masked);
  }
  purity.Check(op, who);
  masked_purity.Check(op, who);
  return out;
}

// ---- The operators ----

// ControlFlowCall: one call of a control-flow operator, the op run at the level on top.
struct ControlFlowCall {
  std::function<TensorList(const TensorList& operands)> run;
};

TensorList Tensors(const ValueList& values) {
  TensorList out;
  out.reserve(values.size());
  for (const Value& v : values) out.push_back(v.tensor());
  return out;
}

ValueList Values(TensorList tensors) {
  ValueList out;
  out.reserve(tensors.size());
  for (Tensor& t : tensors) out.push_back(Value(std::move(t)));
  return out;
}

// MakeOperator: a control-flow operator whose default and every transform's rule run the op
// at the current level (NOTE: [Control flow by decomposition]): the levels below then see
// ordinary ops.
HigherOrderOperator<ControlFlowCall> MakeOperator(const char* name) {
  auto run = [](const ControlFlowCall& call, ValueList& operands) {
    return Values(call.run(Tensors(operands)));
  };
  HigherOrderOperator<ControlFlowCall> op(name, run);
  for (TransformType t : {TransformType::kVmap, TransformType::kGrad, TransformType::kJvp,
                          TransformType::kFunctionalize}) {
    op.SetRule(t, [run](Interpreter&, const ControlFlowCall& call, ValueList& operands) {
      return run(call, operands);
    });
  }
  return op;
}

const HigherOrderOperator<ControlFlowCall>& OperatorFor(int which) {
  static const HigherOrderOperator<ControlFlowCall>* ops[] = {
      new HigherOrderOperator<ControlFlowCall>(MakeOperator("cond")),
      new HigherOrderOperator<ControlFlowCall>(MakeOperator("switch_case")),
      new HigherOrderOperator<ControlFlowCall>(MakeOperator("while_loop")),
      new HigherOrderOperator<ControlFlowCall>(MakeOperator("fori_loop")),
      new HigherOrderOperator<ControlFlowCall>(MakeOperator("scan")),
      new HigherOrderOperator<ControlFlowCall>(MakeOperator("checkpoint")),
  };
  return *ops[which];
}
enum OperatorId { kCond, kSwitchCase, kWhileLoop, kForiLoop, kScan, kCheckpoint };

TensorList Dispatch(OperatorId id, std::function<TensorList(const TensorList&)> run,
                    const TensorList& operands) {
  ValueList values = Values(operands);
  return Tensors(OperatorFor(id)({std::move(run)}, values));
}

// ---- cond and switch_case ----

Who BranchName(const char* op, size_t k) {
  if (std::string_view(op) == "cond") return Who{k == 0 ? "true_fn" : "false_fn"};
  return Who{"branch", " ", static_cast<int64_t>(k)};
}

// NOTE: [Branches that do not run]
// Branches must agree on their outputs' count, dtypes and shapes whether or not they run, as
// in JAX and torch, which trace every branch. An unbatched predicate runs one branch; every
// other one is evaluated on a batch of zero examples: vmap of the branch over its operands,
// each an empty [0, ...] tensor of the operand's dtype and shape, so that each op computes
// its result's dtype and shape but no element. The branch's code runs (as a trace would
// run it); its ops touch no data, and a write into a tensor it captured is refused before
// it happens. When the evaluation cannot be done (the branch reads a value, draws random
// numbers, writes a captured tensor, or throws), that branch goes unchecked: a branch never
// raises an error it would not raise when taken. Under a jit trace the other paths are
// checked when a trace takes them. Cost: each untaken branch's ops are dispatched once more,
// on empty tensors.
void CheckUntakenBranches(const char* op, size_t taken, const std::vector<TensorListFn>& branches,
                          const TensorList& operands, const TensorList& taken_outputs) {
  if (branches.size() < 2 || CurrentBaseCallObserver() != nullptr) return;
  TensorList empties;
  empties.reserve(operands.size());
  for (const Tensor& x : operands) {
    Shape shape{0};
    shape.insert(shape.end(), x.sizes().begin(), x.sizes().end());
    empties.push_back(empty(shape, x.dtype()));
  }
  const Who ref = BranchName(op, taken);
  for (size_t k = 0; k < branches.size(); ++k) {
    if (k == taken) continue;
    const Who who = BranchName(op, k);
    TensorList outs;
    try {
      outs = vmap(TensorListFn([&](const TensorList& xs) {
        BranchRegion region(op, who, Tensor(), xs);
        DispatchArgumentHookScope scope(&region);
        return branches[k](xs);
      }))(empties);
    } catch (const std::exception&) {
      continue;  // not evaluable without data: unchecked (see the NOTE)
    }
    const std::string why =
        absl::StrCat(" (", who.str(), " did not run: its outputs were evaluated on an empty "
                     "batch)");
    CheckSameOutputs(op, who, outs, ref, taken_outputs, "output", /*batch_dims=*/1,
                     why.c_str());
  }
}

// Branches: the shared body of cond and switch_case. `taken` is the branch a concrete
// predicate or index names; without one (batched), `takes()` gives, per branch, the bool
// tensor saying in which examples it is taken.
TensorList Branches(const char* op, std::optional<int64_t> taken,
                    const std::function<std::vector<Tensor>()>& takes_fn,
                    const std::vector<TensorListFn>& branches, const TensorList& operands) {
  if (taken.has_value()) {
    TensorList out = CallChecked(op, BranchName(op, *taken), branches[*taken], operands);
    CheckDefinedOutputs(op, BranchName(op, *taken), out);
    CheckUntakenBranches(op, static_cast<size_t>(*taken), branches, operands, out);
    return out;
  }
  // Batched: every branch runs on operands masked to it; each output is selected per example.
  const std::vector<Tensor> takes = takes_fn();
  const size_t n = branches.size();
  std::vector<TensorList> outs(n);
  for (size_t k = 0; k < n; ++k) {
    outs[k] = CallMasked(op, BranchName(op, k), branches[k], takes[k], operands);
    if (k == 0) {
      CheckDefinedOutputs(op, BranchName(op, 0), outs[0]);
    } else {
      CheckSameOutputs(op, BranchName(op, k), outs[k], BranchName(op, 0), outs[0], "output");
    }
  }
  TensorList result = outs[n - 1];
  for (size_t k = n - 1; k-- > 0;) {
    for (size_t j = 0; j < result.size(); ++j) result[j] = where(takes[k], outs[k][j], result[j]);
  }
  return result;
}

// CheckedBranches: the branches as a traced cond runs them (NOTE: [Control flow in traces]
// in interpreters/jit/trace.h), with the checks of an eager call.
std::vector<std::function<TensorList(const TensorList&)>> CheckedBranches(
    const char* op, const std::vector<TensorListFn>& branches) {
  std::vector<std::function<TensorList(const TensorList&)>> checked;
  for (size_t k = 0; k < branches.size(); ++k) {
    checked.push_back([op, k, &branches](const TensorList& operands) {
      TensorList out = CallChecked(op, BranchName(op, k), branches[k], operands);
      CheckDefinedOutputs(op, BranchName(op, k), out);
      return out;
    });
  }
  return checked;
}

// ---- while_loop ----

TensorList WhileLoop(const CondFn& cond_fn, const TensorListFn& body_fn, const TensorList& init) {
  if (ControlFlowTraceable()) {
    // A jit trace records the loop as a step (NOTE: [Control flow in traces]).
    int64_t cond_it = 0, body_it = 0;
    return TraceWhile(
        [&](const TensorList& c) {
          Tensor p = cond_fn(c);
          CheckPredicate("while_loop", Who{"cond_fn's result", " at iteration ", cond_it++},
                         p, false);
          return p;
        },
        [&](const TensorList& c) {
          const Who who{"body_fn", " at iteration ", body_it++};
          TensorList next = CallChecked("while_loop", who, body_fn, c);
          CheckSameOutputs("while_loop", who, next, Who{"init"}, init, "carry");
          return next;
        },
        init);
  }
  TensorList carry = init;
  bool batched = false;
  for (int64_t it = 0;; ++it) {
    Tensor p = cond_fn(carry);
    CheckPredicate("while_loop", Who{"cond_fn's result", " at iteration ", it}, p, false);
    const Who body{"body_fn", " at iteration ", it};
    if (!batched) {
      std::optional<int64_t> go = ConcreteScalar(p);
      if (go.has_value()) {
        if (*go == 0) return carry;
        TensorList next = CallChecked("while_loop", body, body_fn, carry);
        CheckSameOutputs("while_loop", body, next, Who{"init"}, init, "carry");
        carry = std::move(next);
        continue;
      }
      batched = true;  // once batched (the carry depends on the example), always batched
    }
    if (!AnyTrue(p)) return carry;
    // Examples whose predicate is false are done: their carry stays, and the body's result
    // for them (computed on masked carries) is selected away.
    TensorList next = CallMasked("while_loop", body, body_fn, p, carry);
    CheckSameOutputs("while_loop", body, next, Who{"init"}, init, "carry");
    for (size_t j = 0; j < carry.size(); ++j) carry[j] = where(p, next[j], carry[j]);
  }
}

// ---- scan ----

ScanResult Scan(const ScanFn& f, const TensorList& init, const TensorList& xs,
                const ScanOptions& options) {
  int64_t length = -1;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].dim() == 0) {
      ThrowError("scan: xs[", i, "] is ", Describe(xs[i]),
                 "; every x is sliced along dim 0, so it needs at least one dim");
    }
    if (length >= 0 && xs[i].size(0) != length) {
      ThrowError("scan: xs[", i, "] has ", xs[i].size(0), " steps along dim 0 but xs[0] has ",
                 length, "; every x must have the same length");
    }
    length = xs[i].size(0);
  }
  if (options.length.has_value()) {
    if (*options.length < 0) ThrowError("scan: length must be >= 0, got ", *options.length);
    if (length >= 0 && *options.length != length) {
      ThrowError("scan: options.length is ", *options.length, " but xs have ", length,
                 " steps along dim 0");
    }
    length = *options.length;
  }
  if (length < 0) {
    ThrowError("scan: no xs and no options.length: give the number of steps in ScanOptions");
  }

  // The step, checkpointed if asked: one function of carry ++ x returning carry ++ y. It
  // holds f by value: a checkpointed step runs again in the backward pass, after scan
  // returned.
  const size_t num_carry = init.size();
  TensorListFn step = [f, num_carry](const TensorList& flat) {
    TensorList carry(flat.begin(), flat.begin() + num_carry);
    TensorList x(flat.begin() + num_carry, flat.end());
    auto [next, y] = f(carry, x);
    if (next.size() != num_carry) {
      ThrowError("scan: f returned ", next.size(), " carries, but init has ", num_carry);
    }
    next.insert(next.end(), y.begin(), y.end());
    return next;
  };
  if (options.checkpoint) step = checkpoint(step);

  ScanResult result;
  result.carry = init;
  // In the order the steps run (reversed at the end for a reverse scan): grown step by step,
  // so a huge `length` costs nothing before its steps do.
  std::vector<TensorList> ys;
  auto run_step = [&](int64_t t, const TensorList& x) {
    TensorList flat = result.carry;
    flat.insert(flat.end(), x.begin(), x.end());
    const Who who{"f", " at step ", t};
    TensorList out = CallChecked("scan", who, step, flat);
    TensorList next(out.begin(), out.begin() + num_carry);
    CheckSameOutputs("scan", who, next, Who{"init"}, init, "carry");
    TensorList y(out.begin() + num_carry, out.end());
    CheckDefinedOutputs("scan", who, y);
    return std::pair(std::move(next), std::move(y));
  };
  for (int64_t i = 0; i < length; ++i) {
    const int64_t t = options.reverse ? length - 1 - i : i;
    TensorList x;
    x.reserve(xs.size());
    for (const Tensor& xi : xs) x.push_back(select(xi, 0, t));
    auto [next, y] = run_step(t, x);
    if (i > 0) {
      CheckSameOutputs("scan", Who{"f", " at step ", t}, y, Who{"the previous step"}, ys.back(),
                       "output");
    }
    result.carry = std::move(next);
    ys.push_back(std::move(y));
  }
  if (options.reverse) std::reverse(ys.begin(), ys.end());  // ys[t] is step t's
  if (length == 0) {
    // No step ran: f runs once on zeros shaped like one step, only to learn the ys' dtypes
    // and shapes (JAX learns them by tracing); its results are dropped.
    TensorList x;
    for (const Tensor& xi : xs) {
      x.push_back(zeros(IntArrayRef(xi.sizes()).subspan(1), xi.dtype()));
    }
    TensorList y = f(init, x).second;
    for (const Tensor& yi : y) {
      Shape shape{0};
      shape.insert(shape.end(), yi.sizes().begin(), yi.sizes().end());
      result.ys.push_back(zeros(shape, yi.dtype()));
    }
    return result;
  }
  const size_t num_ys = ys[0].size();
  for (size_t j = 0; j < num_ys; ++j) {
    TensorList column;
    column.reserve(length);
    for (const TensorList& y : ys) column.push_back(y[j]);
    result.ys.push_back(stack(column, 0));
  }
  return result;
}

// SavesOutputs: the ops whose outputs a checkpoint policy keeps.
std::function<bool(const ft::Operator&)> SavesOutputs(CheckpointPolicy policy) {
  if (policy != CheckpointPolicy::kSaveMatmuls) return nullptr;
  return [](const ft::Operator& op) {
    static const absl::flat_hash_set<std::string>* products =
        new absl::flat_hash_set<std::string>{"matmul", "mm",    "bmm",    "linear",
                                             "dot",    "outer", "conv2d", "einsum"};
    return products->contains(op.name());
  };
}

}  // namespace

TensorList cond(const Tensor& pred, const TensorListFn& true_fn, const TensorListFn& false_fn,
                const TensorList& operands) {
  CheckPredicate("cond", Who{"pred"}, pred, false);
  CheckDefined("cond", "operand", operands);
  if (!true_fn || !false_fn) ThrowError("cond: true_fn and false_fn must be callable");
  std::vector<TensorListFn> branches{true_fn, false_fn};
  TensorList args{pred};
  args.insert(args.end(), operands.begin(), operands.end());
  return Dispatch(
      kCond,
      [&branches](const TensorList& a) {
        const Tensor& p = a[0];
        if (ControlFlowTraceable()) {
          return TraceSwitch(p, /*bool_index=*/true, CheckedBranches("cond", branches),
                             TensorList(a.begin() + 1, a.end()));
        }
        std::optional<int64_t> taken;
        if (std::optional<int64_t> v = ConcreteScalar(p)) taken = *v != 0 ? 0 : 1;
        auto takes = [&p] {
          const Tensor scalar = reshape(p, {});
          return std::vector<Tensor>{scalar, logical_not(scalar)};
        };
        return Branches("cond", taken, takes, branches, TensorList(a.begin() + 1, a.end()));
      },
      args);
}

TensorList switch_case(const Tensor& index, const std::vector<TensorListFn>& branches,
                       const TensorList& operands) {
  CheckPredicate("switch_case", Who{"index"}, index, true);
  CheckDefined("switch_case", "operand", operands);
  if (branches.empty()) ThrowError("switch_case: no branches");
  for (size_t k = 0; k < branches.size(); ++k) {
    if (!branches[k]) ThrowError("switch_case: branch ", k, " is not callable");
  }
  TensorList args{index};
  args.insert(args.end(), operands.begin(), operands.end());
  return Dispatch(
      kSwitchCase,
      [&branches](const TensorList& a) {
        const int64_t n = static_cast<int64_t>(branches.size());
        if (ControlFlowTraceable()) {
          return TraceSwitch(a[0], /*bool_index=*/false, CheckedBranches("switch_case", branches),
                             TensorList(a.begin() + 1, a.end()));
        }
        std::optional<int64_t> taken;
        if (n == 1) {
          taken = 0;  // one branch: taken in every example, whatever the index
        } else if (std::optional<int64_t> v = ConcreteScalar(a[0], n - 1)) {
          taken = std::clamp<int64_t>(*v, 0, n - 1);
        }
        auto takes = [&a, n] {
          // Out-of-range indices go to the nearest end (JAX's clamp).
          const Tensor index = reshape(a[0], {});
          std::vector<Tensor> t(n);
          for (int64_t k = 0; k < n; ++k) {
            t[k] = k == 0 ? le(index, 0) : k == n - 1 ? ge(index, n - 1) : eq(index, k);
          }
          return t;
        };
        return Branches("switch_case", taken, takes, branches,
                        TensorList(a.begin() + 1, a.end()));
      },
      args);
}

TensorList while_loop(const CondFn& cond_fn, const TensorListFn& body_fn, const TensorList& init) {
  CheckDefined("while_loop", "init", init);
  if (!cond_fn || !body_fn) ThrowError("while_loop: cond_fn and body_fn must be callable");
  return Dispatch(
      kWhileLoop, [&](const TensorList& carry) { return WhileLoop(cond_fn, body_fn, carry); },
      init);
}

TensorList fori_loop(int64_t lower, int64_t upper, const ForiBodyFn& body,
                     const TensorList& init) {
  CheckDefined("fori_loop", "init", init);
  if (!body) ThrowError("fori_loop: body must be callable");
  return Dispatch(
      kForiLoop,
      [&](const TensorList& start) {
        TensorList carry = start;
        for (int64_t i = lower; i < upper; ++i) {
          const Who who{"body", " at i = ", i};
          const Tensor index = scalar_tensor(i, kInt64);
          TensorList next = CallChecked(
              "fori_loop", who, [&](const TensorList& c) { return body(index, c); }, carry);
          CheckSameOutputs("fori_loop", who, next, Who{"init"}, start, "carry");
          carry = std::move(next);
        }
        return carry;
      },
      init);
}

TensorListFn checkpoint(TensorListFn f, CheckpointOptions options) {
  if (!f) ThrowError("checkpoint: f must be callable");
  return [f = std::move(f), options](const TensorList& inputs) {
    CheckDefined("checkpoint", "argument", inputs);
    return Dispatch(
        kCheckpoint,
        [&f, &options](const TensorList& xs) {
          // Every grad level on the stack records f's ops for a replay instead of keeping
          // their values (NOTE: [Rematerialization] in interpreters/grad/grad_interpreter.h).
          RematScope remat(SavesOutputs(options.policy),
                           options.policy == CheckpointPolicy::kSaveNamed
                               ? options.names
                               : std::vector<std::string>{});
          TensorList out = f(xs);
          CheckDefined("checkpoint", "output", out);
          return out;
        },
        inputs);
  };
}

Tensor checkpoint_name(const Tensor& x, const std::string& name) {
  if (x.defined() && !LayerStack::empty()) RematScope::KeepNamed(x, name);
  return x;
}

ScanResult scan(const ScanFn& f, const TensorList& init, const TensorList& xs,
                ScanOptions options) {
  CheckDefined("scan", "init", init);
  CheckDefined("scan", "xs", xs);
  if (!f) ThrowError("scan: f must be callable");
  const size_t num_carry = init.size();
  TensorList args = init;
  args.insert(args.end(), xs.begin(), xs.end());
  TensorList flat = Dispatch(
      kScan,
      [&](const TensorList& a) {
        ScanResult r = Scan(f, TensorList(a.begin(), a.begin() + num_carry),
                            TensorList(a.begin() + num_carry, a.end()), options);
        r.carry.insert(r.carry.end(), r.ys.begin(), r.ys.end());
        return r.carry;
      },
      args);
  ScanResult result;
  result.carry.assign(flat.begin(), flat.begin() + num_carry);
  result.ys.assign(flat.begin() + num_carry, flat.end());
  return result;
}

}  // namespace ft

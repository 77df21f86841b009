#include "interpreters/jit/trace.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "dispatch/dispatch.h"
#include "dispatch/interpreter.h"
#include "dispatch/operator.h"
#include "dispatch/value.h"
#include "interpreters/jit/tracer.h"
#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/shape.h"
#include "tensor/storage.h"
#include "tensor/tensor.h"

namespace ft {

namespace {

// ForEachTensor calls fn(value index, element index or -1, tensor) for every tensor in
// `values`, TensorList elements included.
template <typename Fn>
void ForEachTensor(ValueList& values, Fn&& fn) {
  for (int i = 0; i < static_cast<int>(values.size()); ++i) {
    if (values[i].is_tensor()) {
      fn(i, -1, values[i].mutable_tensor());
    } else if (values[i].is_tensor_list()) {
      TensorList& list = values[i].mutable_tensor_list();
      for (int e = 0; e < static_cast<int>(list.size()); ++e) fn(i, e, list[e]);
    }
  }
}

// The innermost trace recording on this thread (NOTE: [Control flow in traces]).
constinit thread_local Tracer* tls_tracer = nullptr;

}  // namespace

// ---- Recording ----

ValueList Tracer::RunBaseKernel(const Operator& op, ValueList& args) {
  ++num_calls_;
  if (!reason_.empty()) return RunKernel(op, args);
  if (op.schema().random) {
    Taint(op.name(), " draws random numbers: a replay would repeat or skip draws");
    return RunKernel(op, args);
  }
  Call call{&op, args, {}, {}, {}, {}};
  ForEachTensor(call.args, [&](int value, int element, Tensor& t) {
    if (!t.defined()) return;
    call.tensor_args.push_back(Program::TensorRef{value, element, Resolve(op.name(), t)});
    t = Tensor();
  });
  ValueList outputs = RunKernel(op, args);
  ForEachTensor(outputs, [&](int value, int element, Tensor& t) {
    if (!t.defined()) return;
    const int slot = NewSlot(t, SlotKind::kStep);
    step_storages_.insert(t.storage().id());
    call.outputs.push_back(Program::TensorRef{value, element, slot});
  });
  calls_.push_back(std::move(call));
  return outputs;
}

void Tracer::OnValueRead(const Tensor& t, const char* what) {
  if (in_kernel_ > 0 || !t.is_dense()) return;
  const Storage& storage = t.storage();
  if (storage.AllocatedAfter(start_) && !step_storages_.contains(storage.id())) {
    if (fresh_constants_.contains(storage.id())) {
      // The replay would see the buffer as it is at the end of the trace.
      Taint("f accessed the elements of a tensor it made (", what, "() of ",
            t.DebugString(), ") after an op had used it");
    }
    return;
  }
  Taint("f read tensor elements outside an op (", what, "() of ", t.DebugString(),
        "), so it may branch on them");
}

int Tracer::Resolve(absl::string_view user, const Tensor& t) {
  auto it = slot_of_impl_.find(t.impl());
  if (it != slot_of_impl_.end()) return it->second;
  if (parent_ != nullptr) {
    // A tensor of an enclosing trace that changes from replay to replay (an input or a
    // step's result there) is an input of this sub-program.
    const int ps = parent_->LookupForChild(t);
    if (ps >= 0) return AddExtraInput(t, ps);
  }
  if (step_storages_.contains(t.storage().id())) {
    Taint(user, ": an argument shares memory with a result of an earlier op but was "
          "not made by an op, so a replay could not rebuild it");
  }
  if (!t.storage().AllocatedAfter(start_)) return NewSlot(t, SlotKind::kCaptured);
  fresh_constants_.insert(t.storage().id());
  return NewSlot(t, SlotKind::kFresh);
}

TraceResult Trace(const std::function<TensorList(const TensorList&)>& f,
                  const TensorList& inputs, const TraceOptions& options) {
  if (!LayerStack::empty() || CurrentBaseCallObserver() != nullptr ||
      internal::tls_value_read_observer != nullptr) {
    ThrowError("jit: Trace must run with no transform active and no other trace recording "
               "(layer stack ", LayerStack::DebugString(), ")");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].is_dense()) {
      ThrowError("jit: input ", i, " must be a defined plain tensor, got ",
                 inputs[i].defined() ? inputs[i].DebugString() : "an undefined tensor");
    }
  }
  // f gets new handles on the input buffers: a tensor f also captures (the very object the
  // caller passed) then stays a captured constant instead of being mistaken for the input.
  TensorList handles;
  handles.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    handles.push_back(MakeDense(t.storage(), t.dtype(), Shape(t.sizes().begin(), t.sizes().end()),
                                Shape(t.strides().begin(), t.strides().end()),
                                t.storage_offset()));
  }
  Tracer tracer(handles, options);
  TraceResult result;
  {
    BaseCallObserverScope observe(&tracer);
    struct WatchReads {
      explicit WatchReads(Tracer* t) {
        internal::tls_value_read_observer = t;
        tls_tracer = t;
      }
      ~WatchReads() {
        internal::tls_value_read_observer = nullptr;
        tls_tracer = nullptr;
      }
    } watch(&tracer);
    result.outputs = f(handles);
  }
  CheckDefined("jit", "f's output", result.outputs);
  result.program = tracer.Finish(result.outputs);
  if (result.program == nullptr) result.reason = tracer.reason();
  return result;
}

// ---- Control flow (NOTE: [Control flow in traces]) ----

namespace {

// ObserveAs installs `tracer` as the thread's trace (base calls, element reads) for a scope;
// nullptr runs code as the eager program would, seen by no trace (the later iterations of a
// traced loop: the step replays them).
class ObserveAs {
 public:
  explicit ObserveAs(Tracer* tracer)
      : observe_(tracer), read_(internal::tls_value_read_observer), tracer_(tls_tracer) {
    internal::tls_value_read_observer = tracer;
    tls_tracer = tracer;
  }
  ~ObserveAs() {
    internal::tls_value_read_observer = read_;
    tls_tracer = tracer_;
  }
  ObserveAs(const ObserveAs&) = delete;
  ObserveAs& operator=(const ObserveAs&) = delete;

 private:
  BaseCallObserverScope observe_;
  ValueReadObserver* read_;
  Tracer* tracer_;
};

// SameLayouts: whether `a` and `b` hold tensors of the same dtypes, sizes and strides.
bool SameLayouts(const TensorList& a, const TensorList& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].defined() != b[i].defined()) return false;
    if (!a[i].defined()) continue;
    if (a[i].dtype() != b[i].dtype() || a[i].sizes() != b[i].sizes() ||
        a[i].strides() != b[i].strides()) {
      return false;
    }
  }
  return true;
}

// Extras: the union of the children's parent slots as step arguments after `args`, and each
// child's extra inputs as indices into them.
std::vector<std::vector<int>> BindExtras(const std::vector<const Tracer::ChildTrace*>& children,
                                         std::vector<int>& args) {
  std::vector<std::vector<int>> extras;
  for (const Tracer::ChildTrace* child : children) {
    std::vector<int> indices;
    for (int slot : child->parent_slots) {
      auto it = std::find(args.begin(), args.end(), slot);
      if (it == args.end()) {
        args.push_back(slot);
        it = args.end() - 1;
      }
      indices.push_back(static_cast<int>(it - args.begin()));
    }
    extras.push_back(std::move(indices));
  }
  return extras;
}

}  // namespace

void Tracer::RecordControl(std::shared_ptr<const Program::ControlFlow> control,
                           const std::vector<int>& args, const TensorList& outputs) {
  if (!reason_.empty()) return;
  Call call{nullptr, {}, {}, {}, {}, {}};
  call.control = std::move(control);
  for (size_t i = 0; i < args.size(); ++i) {
    call.tensor_args.push_back(Program::TensorRef{static_cast<int>(i), -1, args[i]});
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    const int slot = NewSlot(outputs[j], SlotKind::kStep);
    step_storages_.insert(outputs[j].storage().id());
    call.outputs.push_back(Program::TensorRef{static_cast<int>(j), -1, slot});
  }
  calls_.push_back(std::move(call));
}

bool Tracer::RecordGuard(const Tensor& value, bool truth, int64_t clamp_to) {
  if (!reason_.empty() || !value.is_dense() || value.numel() != 1) return false;
  Program::Guard guard;
  guard.truth = truth;
  guard.clamp_to = clamp_to;
  const int64_t v = ReadUntraced<int64_t>(value);
  guard.expected = truth ? (v != 0) : std::clamp<int64_t>(v, 0, clamp_to);
  Call call{nullptr, {}, {}, {}, {}, {}};
  call.guard = guard;
  call.tensor_args.push_back(Program::TensorRef{0, -1, SlotFor(value)});
  calls_.push_back(std::move(call));
  return true;
}

int Tracer::LookupForChild(const Tensor& t) {
  auto it = slot_of_impl_.find(t.impl());
  if (it != slot_of_impl_.end()) {
    const SlotKind kind = slots_[it->second].kind;
    return kind == SlotKind::kInput || kind == SlotKind::kStep ? it->second : -1;
  }
  if (parent_ == nullptr) return -1;
  const int ps = parent_->LookupForChild(t);
  return ps >= 0 ? AddExtraInput(t, ps) : -1;
}

int Tracer::AddExtraInput(const Tensor& t, int parent_slot) {
  const int slot = NewSlot(t, SlotKind::kInput);
  extra_slots_.push_back(slot);
  extra_parent_slots_.push_back(parent_slot);
  return slot;
}

Tracer::ChildTrace Tracer::TraceChild(const std::function<TensorList(const TensorList&)>& fn,
                                      const TensorList& inputs) {
  Tracer child(inputs, options_, this);
  ChildTrace result;
  {
    ObserveAs observe(&child);
    result.outputs = fn(inputs);
  }
  for (const Tensor& t : result.outputs) {
    if (t.defined() && !t.is_dense()) {
      result.reason = "a control-flow function returned a wrapper";
      return result;
    }
  }
  result.program = child.Finish(result.outputs);
  if (result.program == nullptr) result.reason = child.reason();
  result.parent_slots = child.extra_parent_slots_;
  return result;
}

bool TraceGuard(const Tensor& value, bool truth, int64_t clamp_to) {
  return tls_tracer != nullptr && tls_tracer->RecordGuard(value, truth, clamp_to);
}

bool ControlFlowTraceable() {
  return tls_tracer != nullptr && LayerStack::empty() &&
         static_cast<BaseCallObserver*>(tls_tracer) == CurrentBaseCallObserver();
}

TensorList TraceSwitch(const Tensor& index, bool bool_index,
                       const std::vector<std::function<TensorList(const TensorList&)>>& branches,
                       const TensorList& operands) {
  FT_CHECK(ControlFlowTraceable());
  Tracer* outer = tls_tracer;
  const int64_t n = static_cast<int64_t>(branches.size());
  const int64_t value = outer->ReadUntraced<int64_t>(index);
  const int64_t taken = bool_index ? (value != 0 ? 0 : 1) : std::clamp<int64_t>(value, 0, n - 1);
  std::vector<int> args{outer->SlotFor(index)};
  // The taken branch first: its results are the call's, and its errors are the call's.
  std::vector<Tracer::ChildTrace> children(n);
  const auto trace = [&](int64_t k) {
    return outer->TraceChild([&](const TensorList&) { return branches[k](operands); }, {});
  };
  children[taken] = trace(taken);
  for (int64_t k = 0; k < n; ++k) {
    if (k == taken) continue;
    try {
      children[k] = trace(k);
    } catch (const Error& e) {
      outer->TaintWith("branch ", k, " of a traced cond or switch_case, not taken at trace ",
                       "time, threw there: ", e.what());
      return children[taken].outputs;
    }
  }
  std::vector<const Tracer::ChildTrace*> traced;
  for (int64_t k = 0; k < n; ++k) {
    if (children[k].program == nullptr) {
      outer->TaintWith("branch ", k, " of a cond or switch_case: ", children[k].reason);
      return children[taken].outputs;
    }
    if (!SameLayouts(children[k].outputs, children[taken].outputs)) {
      outer->TaintWith("the branches of a cond or switch_case return tensors of different "
                       "layouts (strides), which later steps could not read alike");
      return children[taken].outputs;
    }
    traced.push_back(&children[k]);
  }
  auto control = std::make_shared<Program::ControlFlow>();
  control->bool_index = bool_index;
  control->extras = BindExtras(traced, args);
  for (const Tracer::ChildTrace& c : children) control->programs.push_back(c.program);
  outer->RecordControl(std::move(control), args, children[taken].outputs);
  return children[taken].outputs;
}

TensorList TraceWhile(const std::function<Tensor(const TensorList&)>& cond_fn,
                      const std::function<TensorList(const TensorList&)>& body_fn,
                      const TensorList& init) {
  FT_CHECK(ControlFlowTraceable());
  Tracer* outer = tls_tracer;
  // The carries in buffers of their own, contiguous, made by an op the trace records: the
  // body is traced on them (nothing else can hold them), and every iteration's carries are
  // brought to that layout.
  TensorList carries;
  for (const Tensor& t : init) carries.push_back(clone(t));
  std::vector<int> args;
  for (const Tensor& t : carries) args.push_back(outer->SlotFor(t));
  Tracer::ChildTrace cond = outer->TraceChild(
      [&](const TensorList& c) { return TensorList{cond_fn(c)}; }, carries);
  const bool go = outer->ReadUntraced<bool>(cond.outputs[0]);
  Tracer::ChildTrace body;
  if (go) {
    body = outer->TraceChild(body_fn, carries);
  } else {
    try {
      body = outer->TraceChild(body_fn, carries);  // traced only; the loop does not run
    } catch (const Error& e) {
      outer->TaintWith("the body of a traced while_loop, which did not run at trace time, "
                       "threw when traced on the initial carries: ", e.what());
      return carries;
    }
  }
  TensorList result = carries;
  if (go) {
    result = body.outputs;
    ObserveAs eager(nullptr);
    for (Tensor& c : result) c = contiguous(c);
    while (cond_fn(result).item<bool>()) {
      result = body_fn(result);
      for (Tensor& c : result) c = contiguous(c);
    }
  }
  for (const Tracer::ChildTrace* c : {&cond, &body}) {
    if (c->program == nullptr) {
      outer->TaintWith("a while_loop's ", c == &cond ? "cond_fn" : "body_fn", ": ", c->reason);
      return result;
    }
  }
  TensorList contiguous_body;
  for (const Tensor& t : body.outputs) contiguous_body.push_back(contiguous(t));
  if (!SameLayouts(contiguous_body, carries)) {
    outer->TaintWith("a while_loop's body returns carries whose layouts differ from init's");
    return result;
  }
  auto control = std::make_shared<Program::ControlFlow>();
  control->is_while = true;
  control->num_carries = static_cast<int>(carries.size());
  // The sub-programs' inputs are the carries and then their extras.
  std::vector<int> extra_args;
  std::vector<const Tracer::ChildTrace*> traced{&cond, &body};
  control->extras = BindExtras(traced, extra_args);
  for (std::vector<int>& e : control->extras) {
    for (int& i : e) i += static_cast<int>(args.size());
  }
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  control->programs = {cond.program, body.program};
  outer->RecordControl(std::move(control), args, result);
  return result;
}

}  // namespace ft

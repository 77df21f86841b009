// ft/interpreters/jit/tracer.h  (internal to //interpreters/jit)
//
// Tracer: the recorder under Trace (trace.h). While f runs it is the thread's
// BaseCallObserver (dispatch/dispatch.h) and ValueReadObserver (tensor/tensor.h): it runs
// every base-kernel call and records it as a Program::Step over slots, and it makes the trace
// untraceable (a taint, with the reason) when f reads element values outside an op or a call
// cannot be replayed. Finish then turns the record into a Program.
//
// Who uses it: trace.cc (the recording, Trace itself, and the sub-traces of control flow:
// NOTE: [Control flow in traces] in trace.h) and finish.cc (Finish: the passes from a
// recording to a Program). Nothing outside the package includes it; other packages go
// through trace.h.
//
// Invariants: a Tracer records on the thread that made it, for one run of f (or of one
// control-flow function, as the child of the enclosing trace); the first taint is the one
// reason() reports, and after it calls still run but are no longer recorded; every tensor a
// recorded call touches has one slot, found by its TensorImpl; Finish runs once, after f has
// returned.
//
// Use (as Trace does):
//   Tracer tracer(inputs, options);
//   {
//     BaseCallObserverScope observe(&tracer);   // and the element-read hook
//     outputs = f(inputs);
//   }
//   std::shared_ptr<const Program> program = tracer.Finish(outputs);  // null: reason()
#ifndef FT_INTERPRETERS_JIT_TRACER_H_
#define FT_INTERPRETERS_JIT_TRACER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "dispatch/dispatch.h"
#include "dispatch/operator.h"
#include "dispatch/value.h"
#include "interpreters/jit/trace.h"
#include "tensor/storage.h"
#include "tensor/tensor.h"

namespace ft {

// Tracer records base-kernel calls (as a BaseCallObserver) and watches element reads (as a
// ValueReadObserver) while f runs; Finish turns the record into a Program.
class Tracer final : public BaseCallObserver, public ValueReadObserver {
 public:
  // parent: the trace a sub-program is recorded for (NOTE: [Control flow in traces]).
  Tracer(const TensorList& inputs, const TraceOptions& options, Tracer* parent = nullptr)
      : options_(options), start_(Storage::Mark()), parent_(parent) {
    for (const Tensor& t : inputs) NewSlot(t, SlotKind::kInput);
    num_inputs_ = static_cast<int>(inputs.size());
  }

  // ---- Control flow (NOTE: [Control flow in traces]) ----
  // A sub-program's trace: the function's eager outputs, its program (null: untraceable,
  // `reason` says why), and the enclosing trace's slots its extra inputs are bound to.
  struct ChildTrace {
    TensorList outputs;
    std::shared_ptr<const Program> program;
    std::string reason;
    std::vector<int> parent_slots;
  };
  ChildTrace TraceChild(const std::function<TensorList(const TensorList&)>& fn,
                        const TensorList& inputs);
  // SlotFor: the slot of a tensor the enclosing function passes to a control-flow step.
  int SlotFor(const Tensor& t) {
    if (!t.is_dense()) {
      Taint("a control-flow operand is not a plain tensor (", t.impl()->WrapperRepr(), ")");
      return -1;
    }
    return Resolve("a control-flow step", t);
  }
  // ReadUntraced: an element read the trace does not count (a predicate the replay reads).
  template <typename T>
  T ReadUntraced(const Tensor& t) {
    ++in_kernel_;
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{in_kernel_};
    return t.item<T>();
  }
  // RecordControl appends a control-flow step reading `args` (slots) and producing
  // `outputs` (the eager results, which become new slots).
  void RecordControl(std::shared_ptr<const Program::ControlFlow> control,
                     const std::vector<int>& args, const TensorList& outputs);
  template <typename... Args>
  void TaintWith(const Args&... args) {
    Taint(args...);
  }
  // RecordGuard appends a guard on `value` (read now, untraced).
  bool RecordGuard(const Tensor& value, bool truth, int64_t clamp_to);

  ValueList RunBaseKernel(const Operator& op, ValueList& args) override;

  // Element access outside a kernel is fine on a tensor a factory made inside f (that is how
  // factories fill them); on anything else f may be branching on values it was given.
  void OnValueRead(const Tensor& t, const char* what) override;
  void OnValueDependentShape(const char* op) override {
    Taint(op, ": its output shape depends on element values");
  }

  // Finish builds the program for `outputs` (f's results), or returns null with reason().
  std::shared_ptr<const Program> Finish(const TensorList& outputs);
  const std::string& reason() const { return reason_; }

 private:
  // Where a slot's tensor comes from while tracing (see trace.h).
  enum class SlotKind : uint8_t { kInput, kStep, kCaptured, kFresh };

  struct Slot {
    SlotKind kind;
    Tensor value;  // the traced tensor: keeps TensorImpl addresses unique while tracing
  };
  using Call = Program::Step;

  template <typename... Args>
  void Taint(const Args&... args) {
    if (reason_.empty()) reason_ = absl::StrCat(args...);
  }

  ValueList RunKernel(const Operator& op, ValueList& args) {
    ++in_kernel_;
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{in_kernel_};
    return op.CallBaseKernel(args);
  }

  int NewSlot(const Tensor& t, SlotKind kind) {
    const int slot = static_cast<int>(slots_.size());
    slots_.push_back(Slot{kind, t});
    slot_of_impl_[t.impl()] = slot;
    return slot;
  }

  // Resolve names the slot of an argument tensor of `user` (an op, a control-flow step),
  // making an extra input for a tensor of an enclosing trace and a constant slot for a tensor
  // no trace has seen.
  int Resolve(absl::string_view user, const Tensor& t);

  // CallKey: the op and every argument of a kernel step, exactly (tensors by slot, numbers by
  // their bits), as bytes; equal keys mean equal calls.
  static std::string CallKey(const Program::Step& step);

  // RewriteAsViews appends view steps for `call` when every output shares a buffer with
  // an argument, and returns whether it did.
  bool RewriteAsViews(const Call& call, std::vector<int>& forward, std::vector<int>& view_base,
                      std::vector<Call>& steps);

  // LookupForChild: this trace's slot for `t` when it is an input or a step's result here
  // (made one of this trace's extra inputs when an enclosing trace has it), else -1.
  int LookupForChild(const Tensor& t);
  int AddExtraInput(const Tensor& t, int parent_slot);

  const TraceOptions options_;
  const Storage::AllocationMark start_;  // buffers this thread allocates later are fresh
  Tracer* parent_;
  std::vector<int> extra_slots_;         // inputs found while tracing (bound by the parent)
  std::vector<int> extra_parent_slots_;  // the parent's slot for each
  int num_inputs_ = 0;
  int num_calls_ = 0;
  int in_kernel_ = 0;
  std::string reason_;
  std::vector<Slot> slots_;
  std::vector<Call> calls_;
  absl::flat_hash_map<const TensorImpl*, int> slot_of_impl_;
  absl::flat_hash_set<const void*> step_storages_;
  absl::flat_hash_set<const void*> fresh_constants_;  // buffers of fresh constant slots
};

}  // namespace ft

#endif  // FT_INTERPRETERS_JIT_TRACER_H_

#include "interpreters/jit/trace.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "dispatch/dispatch.h"
#include "dispatch/interpreter.h"
#include "interpreters/jit/fuse.h"
#include "ops/ops.h"
#include "tensor/error.h"

namespace ft {

namespace {

// Where a slot's tensor comes from while tracing (see trace.h).
enum class SlotKind : uint8_t { kInput, kStep, kCaptured, kFresh };

Tensor& TensorAt(ValueList& values, int value, int element) {
  Value& v = values[value];
  return element < 0 ? v.mutable_tensor() : v.mutable_tensor_list()[element];
}

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
  template <typename... Args>
  void TaintWith(const Args&... args) {
    Taint(args...);
  }
  // RecordGuard appends a guard on `value` (read now, untraced).
  bool RecordGuard(const Tensor& value, bool truth, int64_t clamp_to) {
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

  ValueList RunBaseKernel(const Operator& op, ValueList& args) override {
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

  // Element access outside a kernel is fine on a tensor a factory made inside f (that is how
  // factories fill them); on anything else f may be branching on values it was given.
  void OnValueRead(const Tensor& t, const char* what) override {
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
  void OnValueDependentShape(const char* op) override {
    Taint(op, ": its output shape depends on element values");
  }

  // Finish builds the program for `outputs` (f's results), or returns null with reason().
  std::shared_ptr<const Program> Finish(const TensorList& outputs);
  const std::string& reason() const { return reason_; }

 private:
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
  int Resolve(absl::string_view user, const Tensor& t) {
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

  // CallKey: the op and every argument of a kernel step, exactly (tensors by slot, numbers by
  // their bits), as bytes; equal keys mean equal calls.
  static std::string CallKey(const Program::Step& step) {
    std::string key;
    const auto put = [&key](const auto& v) {
      key.append(reinterpret_cast<const char*>(&v), sizeof(v));
    };
    put(step.op->id());
    for (const Program::TensorRef& r : step.tensor_args) {
      put(r.value);
      put(r.element);
      put(r.slot);
    }
    for (const Value& v : step.args) {
      put(static_cast<uint8_t>(v.tag()));
      switch (v.tag()) {
        case Value::Tag::kTensorList:
          put(v.tensor_list().size());
          break;
        case Value::Tag::kScalar: {
          const Scalar sc = v.scalar();
          put(static_cast<uint8_t>(sc.kind()));
          if (sc.is_floating()) {
            put(sc.to<double>());
          } else {
            put(sc.to<int64_t>());
          }
          break;
        }
        case Value::Tag::kInt:
          put(v.to_int());
          break;
        case Value::Tag::kDouble:
          put(v.to_double());
          break;
        case Value::Tag::kBool:
          put(v.to_bool());
          break;
        case Value::Tag::kShape:
          put(v.shape().size());
          for (int64_t d : v.shape()) put(d);
          break;
        case Value::Tag::kDType:
          put(v.dtype());
          break;
        case Value::Tag::kGenerator:
          put(v.generator());
          break;
        case Value::Tag::kNone:
        case Value::Tag::kTensor:  // by slot, above
          break;
      }
    }
    return key;
  }

  // RewriteAsViews appends view steps for `call` when every output shares a buffer with
  // an argument, and returns whether it did.
  bool RewriteAsViews(const Call& call, std::vector<int>& forward, std::vector<int>& view_base,
                      std::vector<Call>& steps) {
    std::vector<std::pair<int, int>> bases;  // output slot, base slot
    for (const Program::TensorRef& out : call.outputs) {
      const Storage& storage = slots_[out.slot].value.storage();
      int base = -1;
      for (const Program::TensorRef& arg : call.tensor_args) {
        if (slots_[arg.slot].value.storage().is_same(storage)) {
          base = view_base[arg.slot] >= 0 ? view_base[arg.slot] : arg.slot;
          break;
        }
      }
      if (base < 0) return false;
      bases.emplace_back(out.slot, base);
    }
    for (const auto& [out, base] : bases) {
      const Tensor& v = slots_[out].value;
      const Tensor& b = slots_[base].value;
      if (v.dtype() == b.dtype() && v.sizes() == b.sizes() && v.strides() == b.strides() &&
          v.storage_offset() == b.storage_offset()) {
        forward[out] = base;
        continue;
      }
      Call view{nullptr, {}, {Program::TensorRef{0, -1, base}}, {Program::TensorRef{0, -1, out}},
                {}, Program::View{v.dtype(), Shape(v.sizes().begin(), v.sizes().end()),
                                  Shape(v.strides().begin(), v.strides().end()),
                                  v.storage_offset()}};
      view_base[out] = base;
      steps.push_back(std::move(view));
    }
    return true;
  }

  // LookupForChild: this trace's slot for `t` when it is an input or a step's result here
  // (made one of this trace's extra inputs when an enclosing trace has it), else -1.
  int LookupForChild(const Tensor& t) {
    auto it = slot_of_impl_.find(t.impl());
    if (it != slot_of_impl_.end()) {
      const SlotKind kind = slots_[it->second].kind;
      return kind == SlotKind::kInput || kind == SlotKind::kStep ? it->second : -1;
    }
    if (parent_ == nullptr) return -1;
    const int ps = parent_->LookupForChild(t);
    return ps >= 0 ? AddExtraInput(t, ps) : -1;
  }
  int AddExtraInput(const Tensor& t, int parent_slot) {
    const int slot = NewSlot(t, SlotKind::kInput);
    extra_slots_.push_back(slot);
    extra_parent_slots_.push_back(parent_slot);
    return slot;
  }

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

std::shared_ptr<const Program> Tracer::Finish(const TensorList& outputs) {
  // Outputs resolve like arguments (an output may be an input or a constant).
  std::vector<int> output_slots;
  for (const Tensor& t : outputs) {
    if (!t.defined()) {
      output_slots.push_back(-1);
      continue;
    }
    if (!t.is_dense()) {
      Taint("an output is not a plain tensor (", t.impl()->WrapperRepr(), ")");
      return nullptr;
    }
    auto it = slot_of_impl_.find(t.impl());
    if (it != slot_of_impl_.end()) {
      output_slots.push_back(it->second);
    } else if (step_storages_.contains(t.storage().id())) {
      Taint("an output shares memory with a result of an op but was not made by an op");
    } else {
      output_slots.push_back(NewSlot(t, t.storage().AllocatedAfter(start_)
                                            ? SlotKind::kFresh
                                            : SlotKind::kCaptured));
    }
  }
  if (!reason_.empty()) return nullptr;

  // A guard stops a replay that has not yet done anything visible (NOTE: [Guards]). A write
  // before the last guard into a buffer the replay does not make (an input's, a captured
  // tensor's, or a view of one) would be visible and could not be undone; a write into a
  // buffer the program makes goes away with the stopped replay, and a write after the last
  // guard happens only on a replay that holds.
  size_t last_guard = 0;
  for (size_t i = 0; i < calls_.size(); ++i) {
    if (calls_[i].guard.has_value()) last_guard = i + 1;
  }
  for (size_t i = 0; i + 1 < last_guard; ++i) {
    const Call& call = calls_[i];
    if (call.op == nullptr || !call.op->schema().mutated_arg.has_value()) continue;
    for (const Program::TensorRef& ref : call.tensor_args) {
      if (ref.value != *call.op->schema().mutated_arg) continue;
      if (!slots_[ref.slot].value.storage().AllocatedAfter(start_)) {
        Taint("f reads a control-flow predicate under a transform (a guard) after '",
              call.op->name(), "' wrote a buffer it did not make (an input's or a captured "
              "tensor's) in place: a replay stopped by the guard could not undo the write");
        return nullptr;
      }
    }
  }
  // Buffers some op writes. A fresh constant among them would carry one replay's writes into
  // the next; a result written later must be recomputed, not folded.
  absl::flat_hash_set<const void*> written;
  for (const Call& call : calls_) {
    if (call.op == nullptr) continue;  // a control-flow step writes nothing
    const std::optional<int> mutated = call.op->schema().mutated_arg;
    if (!mutated) continue;
    for (const Program::TensorRef& ref : call.tensor_args) {
      if (ref.value == *mutated) written.insert(slots_[ref.slot].value.storage().id());
    }
  }
  for (const Slot& slot : slots_) {
    if (slot.kind == SlotKind::kFresh && written.contains(slot.value.storage().id())) {
      Taint("an op wrote into a tensor made by a factory inside f (", slot.value.DebugString(),
            "): a replay would start from the previous call's values");
      return nullptr;
    }
  }

  // frozen: a captured tensor that fold_captured makes a constant (no op writes it). The
  // program folds over it, keeps a snapshot of it, and copies it when it returns it.
  const auto frozen = [&](const Slot& slot) {
    return options_.fold_captured && slot.kind == SlotKind::kCaptured &&
           !written.contains(slot.value.storage().id());
  };
  // Fold calls over fresh constants (their values cannot depend on the inputs) and frozen
  // captures.
  const auto constant = [&](const Program::TensorRef& r) {
    return slots_[r.slot].kind == SlotKind::kFresh || frozen(slots_[r.slot]);
  };
  std::vector<bool> folded(calls_.size(), false);
  for (size_t c = 0; c < calls_.size(); ++c) {
    const Call& call = calls_[c];
    // A collective (an ordered effect) communicates at every replay, constant or not.
    if (call.op == nullptr || call.op->schema().mutated_arg || call.op->schema().ordered_effect) {
      continue;
    }
    bool foldable = std::all_of(call.tensor_args.begin(), call.tensor_args.end(), constant);
    for (const Program::TensorRef& r : call.outputs) {
      foldable &= !written.contains(slots_[r.slot].value.storage().id());
    }
    if (!foldable) continue;
    folded[c] = true;
    for (const Program::TensorRef& r : call.outputs) slots_[r.slot].kind = SlotKind::kFresh;
  }

  // Views: a call that returned views of its arguments becomes view steps on the first
  // buffer's slot (or, when the geometry is the base's own, the base slot itself).
  std::vector<int> forward(slots_.size());
  for (size_t i = 0; i < forward.size(); ++i) forward[i] = static_cast<int>(i);
  std::vector<int> view_base(slots_.size(), -1);
  std::vector<Call> steps;
  for (size_t c = 0; c < calls_.size(); ++c) {
    if (folded[c]) continue;
    Call& call = calls_[c];
    for (Program::TensorRef& r : call.tensor_args) r.slot = forward[r.slot];
    if (call.op == nullptr || call.op->schema().mutated_arg ||
        !RewriteAsViews(call, forward, view_base, steps)) {
      steps.push_back(std::move(call));
    }
  }
  for (int& s : output_slots) {
    if (s >= 0) s = forward[s];
  }
  // A view of a captured tensor is captured too: the program keeps the traced view, which
  // shares the captured buffer, so a replay reads that buffer's current values (in-place
  // updates included) without rebuilding the view (W^T in a Jacobian program). A returned
  // view keeps its step, so that each call returns a tensor of its own, as the eager call
  // does.
  {
    const absl::flat_hash_set<int> returned(output_slots.begin(), output_slots.end());
    const auto captured_view = [&](const Call& step) {
      if (step.op != nullptr || step.control != nullptr || step.guard.has_value() ||
          returned.contains(step.outputs[0].slot)) {
        return false;
      }
      const Slot& base = slots_[step.tensor_args[0].slot];
      return base.kind == SlotKind::kCaptured && !frozen(base);
    };
    std::vector<Call> rest;
    for (Call& step : steps) {
      if (captured_view(step)) {
        slots_[step.outputs[0].slot].kind = SlotKind::kCaptured;
      } else {
        rest.push_back(std::move(step));
      }
    }
    steps = std::move(rest);
  }

  // Common subexpressions: a call repeating an earlier one (same op, same argument slots,
  // same non-tensor arguments) reuses its results. Only without writes, where a slot's values
  // cannot change between the two calls.
  const bool writes = std::any_of(steps.begin(), steps.end(), [](const Call& c) {
    return c.op != nullptr && c.op->schema().mutated_arg.has_value();
  });
  if (!writes) {
    // A returned buffer keeps its own call: merging it would make outputs that are
    // separate tensors eagerly share memory in the replay.
    absl::flat_hash_set<int> returned;
    for (int s : output_slots) returned.insert(s);
    for (const Call& step : steps) {
      if (step.op == nullptr && step.control == nullptr && !step.guard.has_value() &&
          returned.contains(step.outputs[0].slot)) {
        returned.insert(step.tensor_args[0].slot);
      }
    }
    absl::flat_hash_map<std::string, size_t> seen;
    std::vector<Call> unique;
    for (Call& step : steps) {
      for (Program::TensorRef& r : step.tensor_args) r.slot = forward[r.slot];
      const bool merge = step.op != nullptr && !step.op->schema().ordered_effect &&
                         std::none_of(step.outputs.begin(), step.outputs.end(),
                                      [&](const Program::TensorRef& r) {
                                        return returned.contains(r.slot);
                                      });
      if (merge) {
        auto [it, fresh] = seen.emplace(CallKey(step), unique.size());
        if (!fresh) {
          const Call& first = unique[it->second];
          for (size_t i = 0; i < step.outputs.size(); ++i) {
            forward[step.outputs[i].slot] = first.outputs[i].slot;
          }
          continue;
        }
      }
      unique.push_back(std::move(step));
    }
    steps = std::move(unique);
    for (int& s : output_slots) {
      if (s >= 0) s = forward[s];
    }
  }

  // Keep the steps that reach an output or write a buffer.
  std::vector<bool> live(slots_.size(), false);
  for (int s : output_slots) {
    if (s >= 0) live[s] = true;
  }
  std::vector<bool> kept(steps.size(), false);
  for (size_t c = steps.size(); c-- > 0;) {
    const Call& call = steps[c];
    bool keep = (call.op != nullptr && (call.op->schema().mutated_arg.has_value() ||
                                        call.op->schema().ordered_effect)) ||
                call.guard.has_value();
    for (const Program::TensorRef& r : call.outputs) keep |= live[r.slot];
    if (!keep) continue;
    kept[c] = true;
    for (const Program::TensorRef& r : call.tensor_args) live[r.slot] = true;
  }

  // Number the slots the program uses: inputs first, then constants, then step results.
  // Inputs found while tracing a sub-program follow the given ones.
  auto program = std::shared_ptr<Program>(new Program());
  program->num_inputs_ = num_inputs_ + static_cast<int>(extra_slots_.size());
  program->num_traced_calls_ = num_calls_;
  std::vector<int> renumbered(slots_.size(), -1);
  int next = program->num_inputs_;
  for (int s = 0; s < num_inputs_; ++s) renumbered[s] = s;
  for (size_t i = 0; i < extra_slots_.size(); ++i) {
    renumbered[extra_slots_[i]] = num_inputs_ + static_cast<int>(i);
  }
  for (size_t s = num_inputs_; s < slots_.size(); ++s) {
    const SlotKind kind = slots_[s].kind;
    if (live[s] && (kind == SlotKind::kCaptured || kind == SlotKind::kFresh)) {
      renumbered[s] = next++;
      // The traced call hands its outputs to the caller, who may write into them: the
      // program keeps its own copy of a fresh constant it returns.
      const bool returned =
          std::find(output_slots.begin(), output_slots.end(), s) != output_slots.end();
      const bool snapshot = (kind == SlotKind::kFresh && returned) || frozen(slots_[s]);
      program->constants_.emplace_back(renumbered[s],
                                       snapshot ? clone(slots_[s].value) : slots_[s].value);
    }
  }
  for (size_t c = 0; c < steps.size(); ++c) {
    if (!kept[c]) continue;
    Program::Step step = std::move(steps[c]);
    for (Program::TensorRef& r : step.tensor_args) r.slot = renumbered[r.slot];
    for (Program::TensorRef& r : step.outputs) {
      r.slot = live[r.slot] ? (renumbered[r.slot] = next++) : -1;
    }
    if (step.guard.has_value()) ++program->num_guards_;
    program->steps_.push_back(std::move(step));
  }
  program->num_slots_ = next;
  for (int s : output_slots) {
    // A constant the program owns (a fresh one, or a snapshot of a captured one) is copied
    // for each caller, who may write into it.
    const bool owned = s >= 0 && (slots_[s].kind == SlotKind::kFresh || frozen(slots_[s]));
    program->outputs_.push_back(Program::Output{s < 0 ? -1 : renumbered[s], owned});
  }

  if (options_.fuse_pointwise) {
    std::vector<const Tensor*> traced(next, nullptr);
    for (size_t s = 0; s < slots_.size(); ++s) {
      if (renumbered[s] >= 0) traced[renumbered[s]] = &slots_[s].value;
    }
    // The fused kernels read constants through the tensors the program keeps: a snapshot
    // is a contiguous clone, whose strides are not those of the traced view it copies.
    for (const auto& [slot, value] : program->constants_) traced[slot] = &value;
    FusePointwiseSteps(*program, traced);
  }

  // Kernel steps that fit run through their op's DirectKernel.
  for (Program::Step& step : program->steps_) {
    if (step.op == nullptr || step.op->direct_kernel() == nullptr) continue;
    const bool fits =
        static_cast<int>(step.args.size()) <= Program::kMaxDirectArgs &&
        static_cast<int>(step.op->schema().returns.size()) <= Program::kMaxDirectResults &&
        absl::c_all_of(step.tensor_args,
                       [](const Program::TensorRef& r) { return r.element < 0; });
    if (fits) step.direct = step.op->direct_kernel();
  }

  // Release each slot after its last reader (outputs never): a kernel step marks its last
  // reference (the boxed path moves the tensor into the call, the direct path drops it after
  // the call); a view or fused step drops it afterwards.
  std::vector<int> last_use(next, -1);
  for (int i = 0; i < program->num_steps(); ++i) {
    for (const Program::TensorRef& r : program->steps_[i].tensor_args) last_use[r.slot] = i;
  }
  for (const Program::Output& o : program->outputs_) {
    if (o.slot >= 0) last_use[o.slot] = program->num_steps();
  }
  for (int s = 0; s < next; ++s) {
    if (last_use[s] < 0 || last_use[s] >= program->num_steps()) continue;
    Program::Step& step = program->steps_[last_use[s]];
    if (step.op == nullptr) {
      step.release.push_back(s);
      if (step.fused != nullptr && step.fused->donor() >= 0 &&
          step.tensor_args[step.fused->donor()].slot == s) {
        step.donor_slot = s;
      }
      continue;
    }
    for (auto r = step.tensor_args.rbegin(); r != step.tensor_args.rend(); ++r) {
      if (r->slot == s) {
        r->last_use = true;  // earlier references in the same call copy
        break;
      }
    }
  }
  return program;
}

// RunDirect runs one step through its op's DirectKernel: the arguments are read in their
// slots, and the slots whose last use this is are released once the kernel returns (the
// boxed path releases them with its argument list, at the same point).
void Program::RunDirect(const Step& step, Tensor* slots) {
  std::array<const Tensor*, kMaxDirectArgs> tensors{};
  for (const TensorRef& r : step.tensor_args) tensors[r.value] = &slots[r.slot];
  std::array<Tensor, kMaxDirectResults> results;
  step.direct(step.args.data(), tensors.data(), results.data());
  for (const TensorRef& r : step.tensor_args) {
    if (r.last_use) slots[r.slot] = Tensor();
  }
  for (const TensorRef& r : step.outputs) {
    if (r.slot >= 0) slots[r.slot] = std::move(results[r.value]);
  }
  for (int s : step.release) slots[s] = Tensor();
}

// RunControl runs a control-flow step (NOTE: [Control flow in traces]): the predicate is
// read now, and the chosen sub-program (or the loop's) runs on the step's slots.
void Program::RunControl(const Step& step, Tensor* slots) {
  const ControlFlow& cf = *step.control;
  const auto inputs_for = [&](size_t k, TensorList carries) {
    for (int e : cf.extras[k]) carries.push_back(slots[step.tensor_args[e].slot]);
    return carries;
  };
  TensorList results;
  if (!cf.is_while) {
    const int64_t n = static_cast<int64_t>(cf.programs.size());
    const int64_t value = slots[step.tensor_args[0].slot].item<int64_t>();
    const int64_t k = cf.bool_index ? (value != 0 ? 0 : 1) : std::clamp<int64_t>(value, 0, n - 1);
    results = cf.programs[k]->Run(inputs_for(k, {}));
  } else {
    TensorList carries;
    for (int i = 0; i < cf.num_carries; ++i) carries.push_back(slots[step.tensor_args[i].slot]);
    for (;;) {
      if (!cf.programs[0]->Run(inputs_for(0, carries))[0].item<bool>()) break;
      carries = cf.programs[1]->Run(inputs_for(1, std::move(carries)));
      for (Tensor& c : carries) c = contiguous(c);  // the layout the body was traced in
    }
    results = std::move(carries);
  }
  for (const TensorRef& r : step.outputs) {
    if (r.slot >= 0) slots[r.slot] = std::move(results[r.value]);
  }
  for (int s : step.release) slots[s] = Tensor();
}

TensorList Program::Run(absl::Span<const Tensor> inputs) const {
  std::optional<TensorList> outputs = TryRun(inputs);
  if (!outputs.has_value()) {
    ThrowError("jit: a guard of the program does not hold for these inputs (it was traced for "
               "another branch or trip count of a control-flow op); call it through ft::jit, "
               "which traces that path");
  }
  return *std::move(outputs);
}

std::optional<TensorList> Program::TryRun(absl::Span<const Tensor> inputs) const {
  if (static_cast<int>(inputs.size()) != num_inputs_) {
    ThrowError("jit: the program was traced with ", num_inputs_, " inputs but got ",
               inputs.size());
  }
  absl::InlinedVector<Tensor, 32> slots(num_slots_);  // no allocation for small programs
  for (int i = 0; i < num_inputs_; ++i) slots[i] = inputs[i];
  for (const auto& [slot, value] : constants_) slots[slot] = value;
  for (const Step& step : steps_) {
    if (step.fused != nullptr) {
      absl::InlinedVector<const Tensor*, 16> in;
      for (const TensorRef& r : step.tensor_args) in.push_back(&slots[r.slot]);
      absl::InlinedVector<Tensor, 4> out(step.fused->num_outputs());
      // The donor's buffer takes the result when the slot is the only reference to it: the
      // slot is released right after, and nothing else (caller, constant, view) can see it.
      const bool reuse = step.donor_slot >= 0 &&
                         slots[step.donor_slot].impl_ptr().use_count() == 1 &&
                         slots[step.donor_slot].storage().use_count() == 1;
      step.fused->Run(in.data(), out.data(), reuse);
      for (const TensorRef& r : step.outputs) slots[r.slot] = std::move(out[r.value]);
      for (int s : step.release) slots[s] = Tensor();
      continue;
    }
    if (step.control != nullptr) {
      RunControl(step, slots.data());
      continue;
    }
    if (step.guard.has_value()) {
      const Guard& g = *step.guard;
      const int64_t v = slots[step.tensor_args[0].slot].item<int64_t>();
      const int64_t seen = g.truth ? (v != 0) : std::clamp<int64_t>(v, 0, g.clamp_to);
      if (seen != g.expected) return std::nullopt;
      for (int s : step.release) slots[s] = Tensor();
      continue;
    }
    if (step.op == nullptr) {
      const Tensor& base = slots[step.tensor_args[0].slot];
      slots[step.outputs[0].slot] = MakeDense(base.storage(), step.view.dtype, step.view.sizes,
                                              step.view.strides, step.view.offset);
      for (int s : step.release) slots[s] = Tensor();
      continue;
    }
    if (step.direct != nullptr) {
      RunDirect(step, slots.data());
      continue;
    }
    ValueList args = step.args;
    for (const TensorRef& r : step.tensor_args) {
      Tensor& slot = slots[r.slot];
      TensorAt(args, r.value, r.element) = r.last_use ? std::move(slot) : slot;
    }
    ValueList results = step.op->CallBaseKernel(args);
    for (const TensorRef& r : step.outputs) {
      if (r.slot >= 0) slots[r.slot] = std::move(TensorAt(results, r.value, r.element));
    }
    for (int s : step.release) slots[s] = Tensor();
  }
  TensorList outputs;
  outputs.reserve(outputs_.size());
  for (const Output& o : outputs_) {
    if (o.slot < 0) {
      outputs.emplace_back();
    } else {
      outputs.push_back(o.clone ? clone(slots[o.slot]) : slots[o.slot]);
    }
  }
  return outputs;
}

std::string Program::DebugString() const {
  std::string out;
  for (int i = 0; i < num_inputs_; ++i) absl::StrAppend(&out, "%", i, " = input ", i, "\n");
  for (const auto& [slot, value] : constants_) {
    absl::StrAppend(&out, "%", slot, " = constant ", value.DebugString(), "\n");
  }
  for (const Step& step : steps_) {
    if (step.fused != nullptr) {
      std::vector<std::string> ins, outs;
      for (const TensorRef& r : step.tensor_args) ins.push_back(absl::StrCat("%", r.slot));
      for (const TensorRef& r : step.outputs) outs.push_back(absl::StrCat("%", r.slot));
      absl::StrAppend(&out, absl::StrJoin(outs, ", "), " = fused",
                      ShapeToString(step.fused->sizes()), " ", DTypeName(step.fused->dtype()),
                      "(", absl::StrJoin(ins, ", "), ") ", step.fused->ToString());
      if (step.donor_slot >= 0) {
        absl::StrAppend(&out, " (in %", step.donor_slot, "'s buffer when unshared)");
      }
      absl::StrAppend(&out, "\n");
      continue;
    }
    if (step.guard.has_value()) {
      absl::StrAppend(&out, "guard(%", step.tensor_args[0].slot, step.guard->truth ? " != 0" : "",
                      " is ", step.guard->expected, ")\n");
      continue;
    }
    if (step.control != nullptr) {
      std::vector<std::string> ins, outs;
      for (const TensorRef& r : step.tensor_args) ins.push_back(absl::StrCat("%", r.slot));
      for (const TensorRef& r : step.outputs) {
        outs.push_back(r.slot < 0 ? std::string("_") : absl::StrCat("%", r.slot));
      }
      absl::StrAppend(&out, absl::StrJoin(outs, ", "), " = ",
                      step.control->is_while ? "while" : "switch", "(", absl::StrJoin(ins, ", "),
                      ") {");
      for (size_t k = 0; k < step.control->programs.size(); ++k) {
        absl::StrAppend(&out, "\n  program ", k, ":\n    ",
                        absl::StrJoin(absl::StrSplit(step.control->programs[k]->DebugString(),
                                                     '\n'),
                                      "\n    "));
      }
      absl::StrAppend(&out, "\n}\n");
      continue;
    }
    if (step.op == nullptr) {
      absl::StrAppend(&out, "%", step.outputs[0].slot, " = view(%", step.tensor_args[0].slot,
                      ", sizes=", ShapeToString(step.view.sizes), ", strides=",
                      ShapeToString(step.view.strides), ", offset=", step.view.offset, ")\n");
      continue;
    }
    std::vector<std::string> names;
    for (const Value& v : step.args) names.push_back(v.ToString());
    for (const TensorRef& r : step.tensor_args) {
      if (r.element < 0) {
        names[r.value] = absl::StrCat("%", r.slot);
      } else {
        absl::StrAppend(&names[r.value], " %", r.slot);
      }
    }
    std::string results;
    for (const TensorRef& r : step.outputs) {
      absl::StrAppend(&results, results.empty() ? "" : ", ",
                      r.slot < 0 ? std::string("_") : absl::StrCat("%", r.slot));
    }
    absl::StrAppend(&out, results, " = ", step.op->name(), "(", absl::StrJoin(names, ", "),
                    ")\n");
  }
  absl::StrAppend(&out, "return");
  for (const Output& o : outputs_) {
    absl::StrAppend(&out, " %", o.slot, o.clone ? " (copied)" : "");
  }
  return out;
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

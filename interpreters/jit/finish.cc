#include "interpreters/jit/tracer.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "dispatch/operator.h"
#include "dispatch/value.h"
#include "interpreters/jit/fuse.h"
#include "interpreters/jit/fused_kernel.h"
#include "interpreters/jit/trace.h"
#include "ops/ops.h"
#include "tensor/scalar.h"
#include "tensor/shape.h"
#include "tensor/storage.h"
#include "tensor/tensor.h"

namespace ft {

std::string Tracer::CallKey(const Program::Step& step) {
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

bool Tracer::RewriteAsViews(const Call& call, std::vector<int>& forward,
                            std::vector<int>& view_base, std::vector<Call>& steps) {
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

}  // namespace ft

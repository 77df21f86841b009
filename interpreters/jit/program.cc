#include "interpreters/jit/trace.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "dispatch/operator.h"
#include "dispatch/value.h"
#include "interpreters/jit/fused_kernel.h"
#include "ops/ops.h"
#include "tensor/dtype.h"
#include "tensor/error.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft {

namespace {

Tensor& TensorAt(ValueList& values, int value, int element) {
  Value& v = values[value];
  return element < 0 ? v.mutable_tensor() : v.mutable_tensor_list()[element];
}

}  // namespace

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

}  // namespace ft

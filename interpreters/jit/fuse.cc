#include "interpreters/jit/fuse.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "dispatch/operator.h"
#include "dispatch/value.h"
#include "interpreters/jit/fused_kernel.h"
#include "kernels/activation_math.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"

namespace ft {

namespace {

// ActivationCall: an activation step's function and constants, read from its traced scalar
// arguments as ops/activation.cc's schemas list them (polygamma's order n comes
// before its tensor, every other op's constants after it); nullopt when the arguments are
// not of those kinds.
struct ActivationCall {
  activation::Fn fn;
  activation::Params params;
};
std::optional<ActivationCall> ActivationCallOf(absl::string_view op, const ValueList& args) {
  const std::optional<activation::Fn> fn = FusedKernel::ActivationOf(op);
  if (!fn) return std::nullopt;
  using activation::Fn;
  using Tag = Value::Tag;
  ActivationCall call{*fn, {}};
  const auto is = [&args](std::initializer_list<Tag> tags) {
    if (args.size() != tags.size()) return false;
    size_t i = 0;
    for (Tag tag : tags) {
      if (args[i++].tag() != tag) return false;
    }
    return true;
  };
  switch (*fn) {
    case Fn::kGelu:
      if (!is({Tag::kTensor, Tag::kBool})) return std::nullopt;
      call.params.a = args[1].to_bool() ? 1.0 : 0.0;
      return call;
    case Fn::kSoftplus:
    case Fn::kHardtanh:
      if (!is({Tag::kTensor, Tag::kDouble, Tag::kDouble})) return std::nullopt;
      call.params.a = args[1].to_double();
      call.params.b = args[2].to_double();
      return call;
    case Fn::kElu:
    case Fn::kCelu:
    case Fn::kLeakyRelu:
      if (!is({Tag::kTensor, Tag::kDouble})) return std::nullopt;
      call.params.a = args[1].to_double();
      return call;
    case Fn::kPolygamma:
      if (!is({Tag::kInt, Tag::kTensor})) return std::nullopt;
      call.params.n = args[0].to_int();
      return call;
    case Fn::kClamp: {
      // clamp(self, min, max), each bound a Scalar or None (kernels::clamp's conversion).
      if (args.size() != 3 || args[0].tag() != Tag::kTensor) return std::nullopt;
      constexpr double kInf = std::numeric_limits<double>::infinity();
      double bounds[2] = {-kInf, kInf};
      for (int k = 0; k < 2; ++k) {
        const Value& bound = args[1 + k];
        if (bound.tag() == Tag::kScalar) {
          bounds[k] = bound.scalar().to<double>();
        } else if (bound.tag() != Tag::kNone) {
          return std::nullopt;
        }
      }
      call.params.a = bounds[0];
      call.params.b = bounds[1];
      return call;
    }
    case Fn::kSilu:
    case Fn::kMish:
    case Fn::kSelu:
    case Fn::kHardswish:
    case Fn::kHardsigmoid:
    case Fn::kLogsigmoid:
    case Fn::kSoftsign:
    case Fn::kErfinv:
    case Fn::kDigamma:
      if (!is({Tag::kTensor})) return std::nullopt;
      return call;
  }
  return std::nullopt;
}

}  // namespace

void FusePointwiseSteps(Program& program, const std::vector<const Tensor*>& traced) {
  std::vector<Program::Step>& steps = program.steps_;
  // The step's opcode and its run's dtype when it can join a run: a supported built-in op
  // on tensors only, one contiguous result, float32 or float64 values throughout (bool
  // for a comparison's result and where's condition).
  struct Fusible {
    FusedKernel::Opcode code;
    DType dtype;
    ActivationCall activation;  // kActivation's function and constants
  };
  const auto fusible = [&traced](const Program::Step& step) -> std::optional<Fusible> {
    if (step.op == nullptr || !OpRegistry::Global().is_builtin(*step.op) ||
        step.outputs.size() != 1 || step.outputs[0].slot < 0) {
      return std::nullopt;
    }
    const std::optional<FusedKernel::Opcode> code = FusedKernel::OpcodeOf(step.op->name());
    if (!code) return std::nullopt;
    std::optional<ActivationCall> activation;
    if (*code == FusedKernel::Opcode::kActivation) {
      // One tensor and the op's constants.
      activation = ActivationCallOf(step.op->name(), step.args);
      if (!activation || step.tensor_args.size() != 1) return std::nullopt;
    } else if (static_cast<int>(step.args.size()) != FusedKernel::Arity(*code) ||
               step.tensor_args.size() != step.args.size()) {
      return std::nullopt;
    }
    const Tensor& out = *traced[step.outputs[0].slot];
    if (FusedKernel::IsLogical(*code)) {
      // Masks in, a mask out; the run's dtype comes from the run computing its operands
      // (below), kBool until then.
      if (out.dtype() != kBool || !out.is_contiguous() || out.storage_offset() != 0) {
        return std::nullopt;
      }
      for (const Program::TensorRef& r : step.tensor_args) {
        if (r.element >= 0 || traced[r.slot]->dtype() != kBool) return std::nullopt;
      }
      return Fusible{*code, kBool, {}};
    }
    const bool comparison = FusedKernel::IsComparison(*code);
    const DType dtype = comparison ? traced[step.tensor_args[0].slot]->dtype() : out.dtype();
    if ((dtype != kFloat32 && dtype != kFloat64) || (comparison && out.dtype() != kBool) ||
        !out.is_contiguous() || out.storage_offset() != 0 ||
        !FusedKernel::Exact(*code, dtype)) {
      return std::nullopt;
    }
    for (const Program::TensorRef& r : step.tensor_args) {
      const bool condition = *code == FusedKernel::Opcode::kWhere && r.value == 0;
      if (r.element >= 0 || traced[r.slot]->dtype() != (condition ? kBool : dtype)) {
        return std::nullopt;
      }
    }
    return Fusible{*code, dtype, activation.value_or(ActivationCall{})};
  };
  // Steps from the first in-place write on keep their order and their kernels: a fused step
  // runs where its last member ran and reads its inputs then, which must come before any
  // write. Programs whose only writes come last (jit(functionalize(f)) writing f's inputs
  // back) fuse whole.
  size_t first_write = steps.size();
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].op != nullptr && steps[i].op->schema().mutated_arg) {
      first_write = i;
      break;
    }
  }
  struct Run {
    DType dtype;
    Shape sizes;
    std::vector<int> members;  // step indices
    bool open = true;
    int host = -1;             // the run whose prelude this run became
    int64_t prelude_size = 0;  // as host: the elements of its prelude runs' shape
  };
  std::vector<Run> runs;
  std::vector<int> run_of_step(steps.size(), -1);
  std::vector<int> run_of_slot(program.num_slots_, -1);  // the run that computes the slot
  std::vector<std::optional<Fusible>> codes(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const Program::Step& step = steps[i];
    if (i < first_write) codes[i] = fusible(step);
    if (codes[i] && FusedKernel::IsLogical(codes[i]->code)) {
      // A logical op joins the open run of its shape that computes one of its masks, in
      // that run's dtype; with none (masks made elsewhere) it stays a kernel.
      const Tensor& out = *traced[step.outputs[0].slot];
      std::optional<DType> dtype;
      for (const Program::TensorRef& r : step.tensor_args) {
        const int g = run_of_slot[r.slot];
        if (g >= 0 && runs[g].open && runs[g].sizes == out.sizes()) {
          dtype = runs[g].dtype;
          break;
        }
      }
      if (dtype) {
        codes[i]->dtype = *dtype;
      } else {
        codes[i].reset();
      }
    }
    int target = -1;
    if (codes[i]) {
      const Tensor& out = *traced[step.outputs[0].slot];
      for (size_t g = 0; g < runs.size(); ++g) {
        if (runs[g].open && runs[g].dtype == codes[i]->dtype && runs[g].sizes == out.sizes()) {
          target = static_cast<int>(g);
        }
      }
    }
    // Reading another run's result closes that run: it must run before this step.
    for (const Program::TensorRef& r : step.tensor_args) {
      const int g = run_of_slot[r.slot];
      if (g >= 0 && g != target) runs[g].open = false;
    }
    if (!codes[i]) continue;
    if (target < 0) {
      const Tensor& out = *traced[step.outputs[0].slot];
      runs.push_back(Run{codes[i]->dtype, Shape(out.sizes().begin(), out.sizes().end()), {}});
      target = static_cast<int>(runs.size()) - 1;
    }
    runs[target].members.push_back(static_cast<int>(i));
    run_of_step[i] = target;
    run_of_slot[step.outputs[0].slot] = target;
  }
  // A run of a smaller shape whose results only one other run reads, where that shape is
  // the other run's trailing dims (so it repeats down the other run with a period of its
  // size), becomes that run's prelude: computed once inside the other run's fused step,
  // with no tensors of its own (1 - t^2 on [16] for a [16, 16] run). Latest runs first, so
  // a prelude run read by a later prelude run of the same host finds that host.
  std::vector<bool> returned(program.num_slots_, false);
  for (const Program::Output& o : program.outputs_) {
    if (o.slot >= 0) returned[o.slot] = true;
  }
  std::vector<int> by_last(runs.size());
  for (size_t g = 0; g < runs.size(); ++g) by_last[g] = static_cast<int>(g);
  std::sort(by_last.begin(), by_last.end(),
            [&](int x, int y) { return runs[x].members.back() > runs[y].members.back(); });
  const auto final_run = [&runs](int g) {
    while (g >= 0 && runs[g].host >= 0) g = runs[g].host;
    return g;
  };
  for (int g : by_last) {
    int host = -1;
    bool ok = true;
    for (size_t i = 0; i < steps.size() && ok; ++i) {
      if (run_of_step[i] == g) {
        ok = !returned[steps[i].outputs[0].slot];
        continue;
      }
      for (const Program::TensorRef& r : steps[i].tensor_args) {
        if (run_of_slot[r.slot] != g) continue;
        const int reader = final_run(run_of_step[i]);
        if (reader < 0 || (host >= 0 && reader != host)) ok = false;
        host = reader;
      }
    }
    if (!ok || host < 0) continue;
    const Run& small = runs[g];
    Run& big = runs[host];
    const int64_t period = Numel(small.sizes);
    const int64_t total = Numel(big.sizes);
    const bool trailing =
        small.sizes.size() < big.sizes.size() &&
        std::equal(small.sizes.begin(), small.sizes.end(), big.sizes.end() - small.sizes.size());
    // period < total: every input of the prelude then repeats in the run (none is read
    // whole), with a period that divides the prelude's.
    if (small.dtype != big.dtype || !trailing || period == 0 || period >= total ||
        (total > FusedKernel::kChunk && FusedKernel::kChunk % period != 0) ||
        (big.prelude_size != 0 && big.prelude_size != period)) {
      continue;
    }
    runs[g].host = host;
    big.prelude_size = period;
  }
  std::vector<bool> in_prelude(steps.size(), false);
  for (size_t g = 0; g < runs.size(); ++g) {
    const int host = final_run(static_cast<int>(g));
    if (host == static_cast<int>(g)) continue;
    for (int m : runs[g].members) {
      in_prelude[m] = true;
      run_of_step[m] = host;
      run_of_slot[steps[m].outputs[0].slot] = host;
      runs[host].members.push_back(m);
    }
    runs[g].members.clear();
  }
  for (Run& run : runs) std::sort(run.members.begin(), run.members.end());
  // A run of one step stays that step.
  for (size_t i = 0; i < steps.size(); ++i) {
    const int g = run_of_step[i];
    if (g >= 0 && runs[g].members.size() < 2) {
      run_of_step[i] = -1;
      run_of_slot[steps[i].outputs[0].slot] = -1;
    }
  }
  // A run's result is an output of the fused step when something outside the run reads it.
  std::vector<bool> read_outside(program.num_slots_, false);
  for (size_t i = 0; i < steps.size(); ++i) {
    for (const Program::TensorRef& r : steps[i].tensor_args) {
      if (run_of_slot[r.slot] >= 0 && run_of_slot[r.slot] != run_of_step[i]) {
        read_outside[r.slot] = true;
      }
    }
  }
  for (const Program::Output& o : program.outputs_) {
    if (o.slot >= 0) read_outside[o.slot] = true;
  }

  std::vector<Program::Step> fused_steps;
  for (size_t i = 0; i < steps.size(); ++i) {
    const int g = run_of_step[i];
    if (g < 0) {
      fused_steps.push_back(std::move(steps[i]));
      continue;
    }
    const Run& run = runs[g];
    if (static_cast<int>(i) != run.members.back()) continue;  // the fused step goes last
    // Instructions: the prelude's members, then the run's own, each in program order.
    // Registers: inputs in order of first use, then one per member.
    std::vector<int> members;
    for (int m : run.members) {
      if (in_prelude[m]) members.push_back(m);
    }
    for (int m : run.members) {
      if (!in_prelude[m]) members.push_back(m);
    }
    absl::flat_hash_map<int, int> register_of_slot;
    Program::Step fused{};
    for (int m : members) {
      for (const Program::TensorRef& r : steps[m].tensor_args) {
        if (run_of_slot[r.slot] == g) continue;
        if (register_of_slot.emplace(r.slot, static_cast<int>(fused.tensor_args.size())).second) {
          fused.tensor_args.push_back(
              Program::TensorRef{static_cast<int>(fused.tensor_args.size()), -1, r.slot});
        }
      }
    }
    const int num_inputs = static_cast<int>(fused.tensor_args.size());
    std::vector<FusedKernel::Input> inputs;
    for (const Program::TensorRef& r : fused.tensor_args) {
      inputs.push_back(FusedKernel::InputFor(*traced[r.slot], run.sizes));
    }
    std::vector<FusedKernel::Instr> instrs;
    std::vector<int> outputs;
    for (int m : members) {
      const Program::Step& step = steps[m];
      const int reg = num_inputs + static_cast<int>(instrs.size());
      FusedKernel::Instr instr{codes[m]->code, -1, -1, in_prelude[m]};
      if (instr.code == FusedKernel::Opcode::kActivation) {
        // Its one tensor, wherever the schema puts it, and its constants.
        instr.a = register_of_slot.at(step.tensor_args[0].slot);
        instr.activation = codes[m]->activation.fn;
        instr.params = codes[m]->activation.params;
      } else {
        for (const Program::TensorRef& r : step.tensor_args) {
          (r.value == 0 ? instr.a : r.value == 1 ? instr.b : instr.c) =
              register_of_slot.at(r.slot);
        }
      }
      instrs.push_back(instr);
      const int slot = step.outputs[0].slot;
      register_of_slot[slot] = reg;
      if (read_outside[slot]) {
        fused.outputs.push_back(
            Program::TensorRef{static_cast<int>(outputs.size()), -1, slot});
        outputs.push_back(reg);
      }
    }
    fused.fused = std::make_shared<const FusedKernel>(run.dtype, run.sizes, std::move(inputs),
                                                      std::move(instrs), std::move(outputs),
                                                      run.prelude_size);
    fused_steps.push_back(std::move(fused));
  }
  steps = std::move(fused_steps);
}

}  // namespace ft

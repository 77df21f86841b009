// checkpoint(f): a custom Function (custom_function_call) whose backward and jvp run f again.
//
// Why a Function: custom_function_call already has a rule per transform that runs forward
// one level down (so the levels around it record nothing of f's inside) and routes backward
// and jvp through the user's rules with ops the outer levels see. checkpoint's backward is
// vjp of f at the saved inputs, its jvp is jvp of f, and its vmap rule is the generated one
// (vmap of forward, backward and jvp), so grad, vjp, jvp, hessian, vmap and functionalize
// compose around it in any order, exactly as for a user's Function.
#include <memory>
#include <utility>
#include <vector>

#include "control_flow/control_flow.h"
#include "custom_function/custom_function_call.h"
#include "dispatch/ops.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jvp/jvp.h"
#include "tensor/error.h"

namespace ft {
namespace {

// RngState: the offset of every generator f may draw from, when f first ran.
struct RngState {
  std::vector<std::pair<Generator*, uint64_t>> offsets;
};

// RngReplay sets the generators back to where they were when f first ran and, when it dies,
// forward again to where the program had taken them: a rerun draws what the first run drew
// and the caller's later draws are unchanged.
class RngReplay {
 public:
  explicit RngReplay(const RngState& state) {
    for (const auto& [gen, offset] : state.offsets) {
      restore_.emplace_back(gen, gen->offset());
      gen->set_offset(offset);
    }
  }
  ~RngReplay() {
    for (const auto& [gen, offset] : restore_) gen->set_offset(offset);
  }
  RngReplay(const RngReplay&) = delete;
  RngReplay& operator=(const RngReplay&) = delete;

 private:
  std::vector<std::pair<Generator*, uint64_t>> restore_;
};

// What one checkpointed call shares between its forward, backward and jvp.
struct CallState {
  TensorListFn f;
  RngState rng;
  std::vector<bool> floating_outputs;  // which outputs carry derivatives
};

TensorList ToTensors(const ValueList& values) {
  TensorList out;
  out.reserve(values.size());
  for (const Value& v : values) out.push_back(v.tensor());
  return out;
}

// Differentiable: the indices of the floating-point tensors among `xs` (those vjp and jvp
// take derivatives for).
std::vector<size_t> Differentiable(const TensorList& xs) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (IsFloating(xs[i].dtype())) idx.push_back(i);
  }
  return idx;
}

// OfInputs: f as a function of the inputs at `idx` only, the others fixed, returning only its
// floating outputs.
TensorListFn OfInputs(const std::shared_ptr<CallState>& state, const TensorList& inputs,
                      const std::vector<size_t>& idx) {
  return [state, inputs, idx](const TensorList& sub) {
    TensorList all = inputs;
    for (size_t k = 0; k < idx.size(); ++k) all[idx[k]] = sub[k];
    TensorList out = state->f(all);
    TensorList floating;
    for (size_t j = 0; j < out.size(); ++j) {
      if (state->floating_outputs[j]) floating.push_back(out[j]);
    }
    return floating;
  };
}

TensorList Pick(const TensorList& xs, const std::vector<size_t>& idx) {
  TensorList out;
  out.reserve(idx.size());
  for (size_t i : idx) out.push_back(xs[i]);
  return out;
}

FunctionSpecPtr MakeSpec(std::shared_ptr<CallState> state, size_t num_args,
                         const CheckpointOptions& options) {
  auto spec = std::make_shared<FunctionSpec>();
  spec->name = "checkpoint";
  spec->num_args = num_args;
  spec->generate_vmap_rule = true;
  spec->forward = [state, generators = options.generators](const ValueList& args) {
    state->rng.offsets.clear();
    state->rng.offsets.emplace_back(&DefaultGenerator(), DefaultGenerator().offset());
    for (Generator* g : generators) state->rng.offsets.emplace_back(g, g->offset());
    TensorList out = state->f(ToTensors(args));
    CheckDefined("checkpoint", "output", out);
    state->floating_outputs.clear();
    for (const Tensor& t : out) state->floating_outputs.push_back(IsFloating(t.dtype()));
    return ValueList(out.begin(), out.end());
  };
  spec->setup_context = [](FunctionCtx& ctx, const ValueList& inputs, const ValueList& outputs) {
    TensorList xs = ToTensors(inputs);
    ctx.save_for_backward(xs);
    ctx.save_for_forward(xs);
    TensorList integer_outputs;
    for (const Value& v : outputs) {
      if (!IsFloating(v.tensor().dtype())) integer_outputs.push_back(v.tensor());
    }
    ctx.mark_non_differentiable(std::move(integer_outputs));
  };
  // Backward: f runs again under a fresh vjp, with the first run's random draws.
  spec->backward = [state](FunctionCtx& ctx, const TensorList& grads) {
    const TensorList inputs(ctx.saved_tensors().begin(), ctx.saved_tensors().end());
    const std::vector<size_t> idx = Differentiable(inputs);
    TensorList cotangents;
    for (size_t j = 0; j < grads.size(); ++j) {
      if (state->floating_outputs[j]) cotangents.push_back(grads[j]);
    }
    TensorList sub_grads;
    {
      RngReplay replay(state->rng);
      VjpResult r = vjp(OfInputs(state, inputs, idx), Pick(inputs, idx));
      for (size_t j = 0; j < cotangents.size(); ++j) {
        if (!cotangents[j].defined()) cotangents[j] = zeros_like(r.outputs[j]);
      }
      sub_grads = r.vjp_fn(cotangents);
    }
    TensorList out(inputs.size());
    for (size_t k = 0; k < idx.size(); ++k) out[idx[k]] = sub_grads[k];
    return out;
  };
  // jvp: forward mode through a rerun of f (forward mode keeps no intermediates anyway).
  spec->jvp = [state](FunctionCtx& ctx, const TensorList& tangents) {
    const TensorList inputs(ctx.saved_tensors().begin(), ctx.saved_tensors().end());
    const std::vector<size_t> idx = Differentiable(inputs);
    TensorList sub_tangents = Pick(tangents, idx);
    for (size_t k = 0; k < idx.size(); ++k) {
      if (!sub_tangents[k].defined()) sub_tangents[k] = zeros_like(inputs[idx[k]]);
    }
    TensorList floating;
    {
      RngReplay replay(state->rng);
      floating = jvp(OfInputs(state, inputs, idx), Pick(inputs, idx), sub_tangents).tangents;
    }
    TensorList out(state->floating_outputs.size());
    for (size_t j = 0, k = 0; j < out.size(); ++j) {
      if (state->floating_outputs[j]) out[j] = floating[k++];
    }
    return out;
  };
  return spec;
}

}  // namespace

TensorListFn checkpoint(TensorListFn f, CheckpointOptions options) {
  if (!f) ThrowError("checkpoint: f must be callable");
  return [f = std::move(f), options = std::move(options)](const TensorList& inputs) {
    CheckDefined("checkpoint", "argument", inputs);
    auto state = std::make_shared<CallState>();
    state->f = f;
    FunctionSpecPtr spec = MakeSpec(state, inputs.size(), options);
    ValueList args(inputs.begin(), inputs.end());
    return ToTensors(CallCustomFunction(spec, args));
  };
}

}  // namespace ft

// The vmap rule of custom_function_call: the seed's decision table.
//   generate_vmap_rule and a vmap rule both defined -> error (ambiguous);
//   neither -> error (no vmap support);
//   a user vmap rule: called one level down with VmapInfo and the in_dims of the arguments
//     (nullopt for non-tensors and tensors not batched at this level), unless nothing is
//     batched at this level: then the level is skipped without calling it. It returns
//     (outputs, out_dims), checked against the outputs, and each output is wrapped at its
//     out_dim (nullopt: returned unbatched), keeping identity for outputs that are arguments.
//   generate_vmap_rule: the Function vmapped by ft itself (Vmapped<Name>, NOTE: [Generated
//     vmap rule] below).
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/grad_mode.h"
#include "custom_function/rules.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/vmap.h"
#include "interpreters/vmap/vmap_interpreter.h"
#include "ops/ops.h"

namespace ft::custom_function {

Tensor ReductifyLeaf(Tensor g, std::optional<int64_t> g_bdim, std::optional<int64_t> in_bdim,
                     int64_t batch_size, const std::optional<Shape>& target) {
  if (!g.defined()) return g;
  if (!g_bdim && !in_bdim) return g;
  if (g_bdim && !in_bdim) return sum(g, {*g_bdim});
  // The input is batched at in_bdim. A gradient that is the same for every example gets the
  // batch dim by broadcasting.
  if (!g_bdim) {
    g = unsqueeze(g, *in_bdim);
    Shape sizes(g.sizes().begin(), g.sizes().end());
    sizes[static_cast<size_t>(*in_bdim)] = batch_size;
    g = expand(g, sizes);
    g_bdim = in_bdim;
  }
  // NOTE: [Reducing per example] A gradient of a broadcast shape (e.g. [3, 4] for an input
  // whose examples are [4]) cannot be reduced by the caller across the batch dim: reduce it
  // per example, here, to the example's shape.
  if (target) {
    const Shape shape = *target;
    return vmap(TensorFn([&shape](const Tensor& t) { return sum_to_size(t, shape); }),
                *g_bdim, *in_bdim)(g);
  }
  if (*g_bdim != *in_bdim) g = movedim(g, *g_bdim, *in_bdim);
  return g;
}

namespace {

std::string DimsString(const OutDims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ", ";
    s += dims[i] ? std::to_string(*dims[i]) : "nullopt";
  }
  return s + "]";
}

// RestoreVmap runs fn under a fresh vmap level of `batch_size` examples with `randomness`,
// args[i] batched at in_dims[i] (nullopt: passed as is), and returns its outputs unwrapped
// with the batch dim each ended up at (nullopt: not batched). Unlike the user's vmap it
// neither moves batch dims nor requires batched outputs (torch's restore_vmap). The level is
// a whole batch of its own: random ops in a generated rule draw like an unchunked vmap.
std::pair<ValueList, OutDims> RestoreVmap(int64_t batch_size, Randomness randomness,
                                          const std::function<ValueList(const ValueList&)>& fn,
                                          const ValueList& args, const InDims& in_dims) {
  VmapInterpreter interp(batch_size, randomness);
  ValueList outputs;
  OutDims out_dims;
  InterpreterScope scope(&interp);
  auto batch = [&interp](const Tensor& t, const std::optional<int64_t>& dim) {
    return dim && t.defined() ? MakeBatched(t, *dim, interp.level(), interp.alive_flag()) : t;
  };
  ValueList wrapped = args;
  for (size_t i = 0; i < args.size() && i < in_dims.size(); ++i) {
    if (args[i].is_tensor()) {
      wrapped[i] = Value(batch(args[i].tensor(), in_dims[i].dim));
    } else if (args[i].is_tensor_list() && in_dims[i].is_list) {
      TensorList elements = args[i].tensor_list();
      for (size_t j = 0; j < elements.size() && j < in_dims[i].elements.size(); ++j) {
        elements[j] = batch(elements[j], in_dims[i].elements[j]);
      }
      wrapped[i] = Value(std::move(elements));
    }
  }
  ValueList raw = fn(wrapped);
  for (Value& v : raw) {
    if (v.is_tensor() && v.tensor().defined()) {
      auto [value, bdim] = UnwrapBatched(v.tensor(), interp.level());
      outputs.push_back(Value(value));
      out_dims.push_back(bdim);
    } else {
      outputs.push_back(std::move(v));
      out_dims.push_back(std::nullopt);
    }
  }
  return {outputs, out_dims};
}

// UnwrapLevel: the arguments with this vmap level's batched tensors unwrapped (TensorList
// elements too), and where each was batched.
std::pair<ValueList, InDims> UnwrapLevel(const ValueList& args, int64_t level) {
  ValueList inner = args;
  InDims in_dims(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_tensor()) {
      auto [value, bdim] = UnwrapBatched(args[i].tensor(), level);
      inner[i] = Value(value);
      in_dims[i] = bdim;
    } else if (args[i].is_tensor_list()) {
      TensorList values;
      std::vector<std::optional<int64_t>> dims;
      for (const Tensor& t : args[i].tensor_list()) {
        auto [value, bdim] = t.defined() ? UnwrapBatched(t, level)
                                         : std::pair<Tensor, std::optional<int64_t>>{};
        values.push_back(value);
        dims.push_back(bdim);
      }
      inner[i] = Value(std::move(values));
      in_dims[i] = InDim::List(std::move(dims));
    }
  }
  return {inner, in_dims};
}

// SavedOverride makes ctx.saved_tensors() return `saved` for a scope (restored on exit,
// exceptions included): the user's backward / jvp then reads its saved tensors re-batched.
class SavedOverride {
 public:
  SavedOverride(FunctionCtx& ctx, const SavedTensors* saved)
      : ctx_(ctx), previous_(ctx.saved_override()) {
    ctx_.set_saved_override(saved);
  }
  ~SavedOverride() { ctx_.set_saved_override(previous_); }
  SavedOverride(const SavedOverride&) = delete;
  SavedOverride& operator=(const SavedOverride&) = delete;

 private:
  FunctionCtx& ctx_;
  const SavedTensors* previous_;
};

// RunVmappedRule: the user's backward or jvp under a fresh vmap level, its saved tensors
// (what ctx.saved_tensors() gives now: the saved ones, or an outer Vmapped level's re-batched
// view of them) re-batched at saved_dims and its incoming grads or tangents at
// incoming_dims; returns its results and where their batch dims ended up.
std::pair<ValueList, OutDims> RunVmappedRule(
    int64_t batch_size, Randomness randomness, FunctionCtx& ctx, const InDims& saved_dims,
    const TensorList& incoming, const InDims& incoming_dims,
    const std::function<TensorList(FunctionCtx&, const TensorList&)>& rule) {
  const SavedTensors saved = ctx.saved_tensors();
  ValueList args;
  InDims dims;
  for (size_t i = 0; i < saved.size(); ++i) {
    args.push_back(Value(saved[i]));
    dims.push_back(i < saved_dims.size() ? saved_dims[i] : std::nullopt);
  }
  for (size_t k = 0; k < incoming.size(); ++k) {
    args.push_back(Value(incoming[k]));
    dims.push_back(incoming_dims[k]);
  }
  return RestoreVmap(
      batch_size, randomness,
      [&](const ValueList& batched) {
        SavedTensors rebatched;
        TensorList in;
        for (size_t i = 0; i < saved.size(); ++i) rebatched.push_back(batched[i].tensor());
        for (size_t k = saved.size(); k < batched.size(); ++k) in.push_back(batched[k].tensor());
        SavedOverride override(ctx, &rebatched);
        ValueList out;
        for (Tensor& t : rule(ctx, in)) out.push_back(Value(std::move(t)));
        return out;
      },
      args, dims);
}

// NOTE: [Generated vmap rule]
// With generate_vmap_rule, a vmap level turns the call into a call of a Function of its own,
// Vmapped<Name>, on the unwrapped arguments, one level down (so grad levels below record it
// like any Function, and a vmap below vmaps it again: VmappedVmapped<Name>):
//   forward: the user's forward under a fresh vmap with the arguments' batch dims; it runs
//     exactly once per call, and records where each output's batch dim ended up (out_dims,
//     state of this call).
//   setup_context: the user's setup_context under a fresh vmap too, so it sees per-example
//     tensors and shapes (a shape saved for backward is an example's, not the batch's); what
//     it saves is unwrapped, its batch dims recorded on the ctx (separately for backward and
//     for forward), with the per-example shapes of the inputs.
//   backward / jvp: the user's rule under a fresh vmap over (saved tensors at their recorded
//     batch dims, incoming grads / tangents at the outputs' / inputs' batch dims; nullopt for
//     undefined ones), the results brought to the inputs' / outputs' batch dims by
//     ReductifyLeaf (gradients also reduced per example to the input's shape).
// State that belongs to one setup_context call lives on its ctx, keyed by the Vmapped spec,
// not on the spec itself: a Function used at several levels keeps each level's record, and
// VmappedVmapped<Name>, whose setup_context runs Vmapped<Name>'s on the same ctx, keeps both
// (the fix of pytorch#144639).
struct VmappedCtxState {
  std::vector<std::optional<Shape>> input_shapes;  // per argument, per example
  InDims saved_for_backward_dims;
  InDims saved_for_forward_dims;
};

FunctionSpecPtr Vmapify(const FunctionSpecPtr& original, const InDims& in_dims,
                        const VmapInterpreter& vmap_level) {
  auto spec = std::make_shared<FunctionSpec>();
  // This spec's records on a ctx are keyed by its address (NOTE above).
  const FunctionSpec* self = spec.get();
  spec->name = absl::StrCat("Vmapped", original->name);
  spec->num_args = original->num_args;
  spec->generate_vmap_rule = true;
  spec->once_differentiable = original->once_differentiable;
  // Where forward's outputs ended up (set by the one forward call, read by the vmap rule and
  // by setup_context, backward and jvp).
  auto out_dims = std::make_shared<OutDims>();
  // The level's batch parameters, copied (the level itself may be gone by backward).
  struct Batch {
    int64_t batch_size;
    Randomness randomness;
  };
  auto batch = std::make_shared<Batch>(Batch{vmap_level.batch_size(), vmap_level.randomness()});
  auto restore = [batch](const std::function<ValueList(const ValueList&)>& fn,
                         const ValueList& args, const InDims& dims) {
    return RestoreVmap(batch->batch_size, batch->randomness, fn, args, dims);
  };
  spec->forward = [original, in_dims, out_dims, restore](const ValueList& args) {
    auto [outputs, dims] = restore([&](const ValueList& a) { return original->forward(a); },
                                   args, in_dims);
    *out_dims = dims;
    return outputs;
  };
  // At the bottom (no transform below) nobody reads the ctx afterwards: run the user's
  // forward and setup_context under one vmap level (setup_context still runs once there, as
  // the call counts of functorch_semantics 2.1 say).
  spec->plain_apply = [original, in_dims, out_dims, restore](const ValueList& args) {
    auto [outputs, dims] = restore(
        [&](const ValueList& batched) {
          FunctionCtx ctx;
          return ForwardWithContext(*original, ctx, batched);
        },
        args, in_dims);
    *out_dims = dims;
    return outputs;
  };
  spec->setup_context = [original, in_dims, out_dims, restore, self](
                            FunctionCtx& ctx, const ValueList& inputs, const ValueList& outputs) {
    ValueList both = inputs;
    both.insert(both.end(), outputs.begin(), outputs.end());
    InDims dims = in_dims;
    dims.insert(dims.end(), out_dims->begin(), out_dims->end());
    const size_t n = inputs.size();
    restore(
        [&](const ValueList& batched) {
          const ValueList in(batched.begin(), batched.begin() + static_cast<int64_t>(n));
          const ValueList out(batched.begin() + static_cast<int64_t>(n), batched.end());
          original->setup_context(ctx, in, out);
          // Unwrap what was saved (it is batched at this temporary level) and record where.
          VmappedCtxState& state = ctx.keyed_state<VmappedCtxState>(self);
          const int64_t level = LayerStack::Top()->level();
          auto unwrap = [level](const SavedTensors& saved, InDims& saved_dims) {
            SavedTensors values;
            saved_dims.clear();
            for (const Tensor& t : saved) {
              auto [value, bdim] = t.defined() ? UnwrapBatched(t, level)
                                               : std::pair<Tensor, std::optional<int64_t>>{};
              values.push_back(value);
              saved_dims.push_back(bdim);
            }
            return values;
          };
          ctx.save_for_backward(unwrap(ctx.saved_for_backward(), state.saved_for_backward_dims));
          ctx.save_for_forward(unwrap(ctx.saved_for_forward(), state.saved_for_forward_dims));
          state.input_shapes.clear();
          for (const Value& v : in) {
            state.input_shapes.push_back(
                v.is_tensor() && v.tensor().defined()
                    ? std::optional<Shape>(Shape(v.tensor().sizes().begin(),
                                                 v.tensor().sizes().end()))
                    : std::nullopt);
          }
          // Marks name this level's temporary wrappers: map them back to the objects the
          // caller holds (the unwrapped arguments and outputs).
          auto map_back = [&](const TensorList& marked, const ValueList& batched_side,
                              const ValueList& real_side) {
            TensorList mapped;
            for (const Tensor& t : marked) {
              for (size_t i = 0; i < batched_side.size(); ++i) {
                if (batched_side[i].is_tensor() && batched_side[i].tensor().is_same(t)) {
                  mapped.push_back(real_side[i].tensor());
                }
              }
            }
            return mapped;
          };
          ctx.mark_dirty(map_back(ctx.dirty(), in, inputs));
          ctx.mark_non_differentiable(map_back(ctx.non_differentiable(), out, outputs));
          return ValueList{};
        },
        both, dims);
  };
  if (original->backward) {
    spec->backward = [original, in_dims, out_dims, batch, self](FunctionCtx& ctx,
                                                                   const TensorList& grads) {
      const VmappedCtxState& state = ctx.keyed_state<VmappedCtxState>(self);
      // Grads arrive at the outputs' batch dims (none for an undefined one).
      InDims grad_dims;
      for (size_t k = 0; k < grads.size(); ++k) {
        grad_dims.push_back(grads[k].defined() && k < out_dims->size() ? (*out_dims)[k]
                                                                       : std::nullopt);
      }
      auto [grads_in, grads_in_dims] =
          RunVmappedRule(batch->batch_size, batch->randomness, ctx,
                         state.saved_for_backward_dims, grads, grad_dims, original->backward);
      TensorList result;
      for (size_t i = 0; i < grads_in.size(); ++i) {
        const Tensor g = grads_in[i].is_tensor() ? grads_in[i].tensor() : Tensor();
        const std::optional<int64_t> in_bdim = i < in_dims.size() ? in_dims[i] : std::nullopt;
        const std::optional<Shape> target =
            i < state.input_shapes.size() ? state.input_shapes[i] : std::nullopt;
        result.push_back(ReductifyLeaf(g, grads_in_dims[i], in_bdim, batch->batch_size, target));
      }
      return result;
    };
  }
  if (original->jvp) {
    spec->jvp = [original, in_dims, out_dims, batch, self](FunctionCtx& ctx,
                                                              const TensorList& tangents) {
      const VmappedCtxState& state = ctx.keyed_state<VmappedCtxState>(self);
      // Tangents arrive at the inputs' batch dims (none for an undefined one).
      InDims tangent_dims;
      for (size_t i = 0; i < tangents.size(); ++i) {
        tangent_dims.push_back(tangents[i].defined() && i < in_dims.size() ? in_dims[i]
                                                                           : std::nullopt);
      }
      auto [out_t, out_t_dims] =
          RunVmappedRule(batch->batch_size, batch->randomness, ctx,
                         state.saved_for_forward_dims, tangents, tangent_dims, original->jvp);
      TensorList result;
      for (size_t k = 0; k < out_t.size(); ++k) {
        const Tensor t = out_t[k].is_tensor() ? out_t[k].tensor() : Tensor();
        const std::optional<int64_t> out_dim = k < out_dims->size() ? (*out_dims)[k]
                                                                     : std::nullopt;
        result.push_back(ReductifyLeaf(t, out_t_dims[k], out_dim, batch->batch_size,
                                       std::nullopt));
      }
      return result;
    };
  }
  spec->setup_context_out_dims = out_dims;
  return spec;
}

ValueList GeneratedVmapRule(VmapInterpreter& vmap, const FunctionSpecPtr& spec,
                            ValueList& args) {
  const int64_t level = vmap.level();
  if (LayerStack::size() == 1) {
    // The bottom level: no transform below needs a Function to record, so running the
    // user's forward and setup_context right here, on the batched arguments, is what
    // Vmapped<Name> would do under a level of its own (same batch, same randomness), without
    // building it. Modes as in the plain apply (custom_function_call.cc).
    NoGradGuard no_grad;
    NoFwdGradGuard no_fwd_grad;
    FunctionCtx ctx;
    return ForwardWithContext(*spec, ctx, args);
  }
  auto [inner, in_dims] = UnwrapLevel(args, level);
  FunctionSpecPtr vmapped = Vmapify(spec, in_dims, vmap);
  ValueList outputs;
  {
    LowerGuard lower(&vmap);
    outputs = CallCustomFunction(vmapped, inner);
  }
  const OutDims& out_dims = *vmapped->setup_context_out_dims;
  const std::vector<int> sources = OutputSources(inner, outputs);
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (sources[k] >= 0) {
      outputs[k] = args[static_cast<size_t>(sources[k])];
    } else if (outputs[k].is_tensor() && k < out_dims.size() && out_dims[k]) {
      outputs[k] = Value(MakeBatched(outputs[k].tensor(), *out_dims[k], level, vmap.alive_flag()));
    }
  }
  return outputs;
}

ValueList VmapRule(Interpreter& interpreter, const FunctionSpecPtr& spec, ValueList& args) {
  auto& vmap = static_cast<VmapInterpreter&>(interpreter);
  const int64_t level = vmap.level();
  if (spec->generate_vmap_rule && spec->vmap) {
    ThrowError("vmap: You tried to vmap over ", spec->name, ", but it has both generate_vmap_rule=true ",
               "and a vmap rule. Set generate_vmap_rule=false or delete the vmap rule to avoid ",
               "ambiguity (vmap level ", level, ")");
  }
  if (spec->generate_vmap_rule) return GeneratedVmapRule(vmap, spec, args);
  if (!spec->vmap) {
    ThrowError("vmap: You tried to vmap over ", spec->name, ", but it does not have vmap support. ",
               "Define a static vmap(info, in_dims, args...) rule or set generate_vmap_rule = ",
               "true (vmap level ", level, ")");
  }
  auto [inner, in_dims] = UnwrapLevel(args, level);
  bool any_batched = false;
  for (const InDim& d : in_dims) {
    any_batched = any_batched || d.dim.has_value();
    for (const std::optional<int64_t>& e : d.elements) any_batched = any_batched || e.has_value();
  }
  if (!any_batched) {  // nothing to do at this level: the levels below see the call
    LowerGuard lower(&vmap);
    return CallCustomFunction(spec, args);
  }
  std::pair<ValueList, OutDims> result;
  {
    LowerGuard lower(&vmap);
    result = spec->vmap(VmapInfo{vmap.batch_size(), vmap.randomness()}, in_dims, inner);
  }
  ValueList& outputs = result.first;
  OutDims out_dims = result.second;
  if (out_dims.size() == 1 && outputs.size() > 1) out_dims.resize(outputs.size(), out_dims[0]);
  if (out_dims.size() != outputs.size()) {
    ThrowError(spec->name, ": the vmap rule returned an incompatible (outputs, out_dims) pair: ",
               outputs.size(), " outputs but out_dims ", DimsString(result.second),
               " (give one out_dim per output, or a single one for all)");
  }
  CheckDefined(spec->name, "the vmap rule's output", outputs);
  const std::vector<int> sources = OutputSources(inner, outputs);
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (sources[k] >= 0) {
      outputs[k] = args[static_cast<size_t>(sources[k])];
      continue;
    }
    if (!outputs[k].is_tensor()) {
      if (out_dims[k]) {
        ThrowError(spec->name, ": the vmap rule gave out_dim ", *out_dims[k], " to output ", k,
                   ", which is not a tensor (use nullopt)");
      }
      continue;
    }
    if (!out_dims[k]) continue;  // unbatched: the same for every example
    const Tensor& t = outputs[k].tensor();
    const int64_t d = *out_dims[k];
    if (d < -t.dim() || d >= t.dim()) {
      ThrowError(spec->name, ": the vmap rule gave out_dim ", d, " to output ", k, " of shape ",
                 ShapeToString(t.sizes()), ", out of range");
    }
    if (t.size(d) != vmap.batch_size()) {
      ThrowError(spec->name, ": the vmap rule's output ", k, " has size ", t.size(d),
                 " at its out_dim ", d, " but the batch size is ", vmap.batch_size());
    }
    outputs[k] = Value(MakeBatched(t, d, level, vmap.alive_flag()));
  }
  return outputs;
}

}  // namespace

void RegisterGradAndJvpRules(HigherOrderOperator<FunctionSpecPtr>& op);

void RegisterRules(HigherOrderOperator<FunctionSpecPtr>& op) {
  RegisterGradAndJvpRules(op);
  op.SetRule(TransformType::kVmap, &VmapRule);
  op.SetRule(TransformType::kFunctionalize, &FunctionalizeRule);
}

}  // namespace ft::custom_function

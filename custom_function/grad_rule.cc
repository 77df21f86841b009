// The grad and jvp rules of custom_function_call: the seed's single-level Function
// (NOTE: [custom_function_call]).
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "autograd/grad_mode.h"
#include "autograd/graph.h"
#include "custom_function/rules.h"
#include "interpreters/grad/grad_interpreter.h"
#include "interpreters/jvp/jvp_interpreter.h"
#include "ops/ops.h"
#include "tensor/factories.h"

namespace ft::custom_function {

std::vector<int> OutputSources(const ValueList& args, const ValueList& outputs) {
  std::vector<int> sources(outputs.size(), -1);
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k].is_tensor() || !outputs[k].tensor().defined()) continue;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].is_tensor() && args[i].tensor().defined() &&
          args[i].tensor().is_same(outputs[k].tensor())) {
        sources[k] = static_cast<int>(i);
        break;
      }
    }
  }
  return sources;
}

ValueList ForwardWithContext(const FunctionSpec& spec, FunctionCtx& ctx, const ValueList& args) {
  // One initialization (no move-assignment): a ValueList's elements live inline, so every
  // move walks and destroys them.
  ValueList outputs =
      spec.forward_with_context ? spec.forward_with_context(ctx, args) : spec.forward(args);
  CheckDefined(spec.name, "forward's output", outputs);
  if (!spec.forward_with_context) spec.setup_context(ctx, args, outputs);
  CheckReturnedInputsNotSaved(spec, ctx, args, outputs);
  return outputs;
}

void CheckReturnedInputsNotSaved(const FunctionSpec& spec, const FunctionCtx& ctx,
                                 const ValueList& args, const ValueList& outputs) {
  if (ctx.saved_for_backward().empty() && ctx.saved_for_forward().empty()) return;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k].is_tensor() || !outputs[k].tensor().defined()) continue;
    const Tensor& t = outputs[k].tensor();
    bool is_input = false;
    for (const Value& a : args) is_input = is_input || (a.is_tensor() && a.tensor().is_same(t));
    if (!is_input) continue;
    if (Contains(ctx.dirty(), t)) continue;
    if (Contains(ctx.saved_for_backward(), t) || Contains(ctx.saved_for_forward(), t)) {
      ThrowError(spec.name, ": an input that has been returned as-is as output ", k,
                 " is being saved for backward. This is not supported; return and save a ",
                 "view of the input instead (e.g. reshape(x, x.sizes())), or mark it dirty ",
                 "if forward modified it in place");
    }
  }
}

namespace {

// TensorMeta: what backward needs to know about a tensor argument or output without holding
// on to it: its shape and dtype (to materialize zero gradients and check results).
struct TensorMeta {
  bool is_tensor = false;
  Shape sizes;
  DType dtype = kFloat32;
};

TensorMeta MetaOf(const Value& v) {
  TensorMeta m;
  if (v.is_tensor() && v.tensor().defined()) {
    m.is_tensor = true;
    m.sizes.assign(v.tensor().sizes().begin(), v.tensor().sizes().end());
    m.dtype = v.tensor().dtype();
  }
  return m;
}

// FitResult: a gradient (backward) or tangent (jvp) the user returned for a tensor of shape
// `meta`: equal shapes pass; a gradient of a broadcast shape is summed back (as autograd
// does); anything else is an error naming the Function.
Tensor FitResult(const FunctionSpec& spec, const char* what, size_t index, Tensor t,
                 const TensorMeta& meta, bool allow_reduce) {
  const IntArrayRef want = meta.sizes;
  if (!std::equal(t.sizes().begin(), t.sizes().end(), want.begin(), want.end())) {
    if (!allow_reduce || !IsExpandableTo(want, t.sizes())) {
      ThrowError(spec.name, ": ", what, " returned a result of shape ", ShapeToString(t.sizes()),
                 " for ", allow_reduce ? "argument " : "output ", index, " of shape ",
                 ShapeToString(want));
    }
    t = sum_to_size(t, want);
  }
  if (IsFloating(meta.dtype) && t.dtype() != meta.dtype) t = to(t, meta.dtype);
  return t;
}

// FunctionNode: the backward of one Function call at one grad level, named
// "<Name>GeneratedBackward" (the seed's single-level Function): it runs the user's backward.
class FunctionNode : public autograd::Node {
 public:
  FunctionNode(FunctionSpecPtr spec, std::shared_ptr<FunctionCtx> ctx, autograd::EdgeList edges,
               std::vector<TensorMeta> inputs, std::vector<TensorMeta> outputs)
      : Node(std::move(edges), static_cast<int>(outputs.size())),
        spec_(std::move(spec)),
        ctx_(std::move(ctx)),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)) {}

  std::string name() const override { return absl::StrCat(spec_->name, "GeneratedBackward"); }

  // NOTE: [Freeing saved values] in autograd/graph.h: grad drops the ctx (the tensors the
  // Function saved) once the backward ran.
  void ReleaseSaved() override { ctx_.reset(); }

  TensorList Apply(TensorList grads) override {
    if (ctx_ == nullptr) ThrowReleased();
    if (!spec_->backward) {
      ThrowError(spec_->name, ": You must implement either the backward or vjp method for ",
                 "your custom Function to use it with backward mode AD (grad, vjp, jacrev)");
    }
    grads.resize(outputs_.size());
    for (size_t k = 0; k < outputs_.size(); ++k) {
      if (!grads[k].defined() && outputs_[k].is_tensor && ctx_->materialize_grads()) {
        grads[k] = zeros(outputs_[k].sizes, outputs_[k].dtype);
      }
    }
    std::vector<bool> needs(inputs_.size());
    for (size_t i = 0; i < inputs_.size(); ++i) needs[i] = next_edges()[i].valid();
    ctx_->set_needs_input_grad(std::move(needs));
    ctx_->set_phase(FunctionCtx::Phase::kBackward);
    TensorList result;
    if (spec_->once_differentiable) {
      CheckNotDifferentiatedTwice(grads);
      NoGradGuard no_grad;
      result = spec_->backward(*ctx_, grads);
    } else {
      result = spec_->backward(*ctx_, grads);
    }
    if (result.size() != inputs_.size()) {
      ThrowError(spec_->name, ": backward returned ", result.size(), " gradients, expected ",
                 inputs_.size(), " (one per forward argument; undefined for non-tensors)");
    }
    for (size_t i = 0; i < result.size(); ++i) {
      if (!result[i].defined()) continue;
      if (!inputs_[i].is_tensor) {
        ThrowError(spec_->name, ": backward returned a gradient for argument ", i,
                   ", which is not a tensor (return an undefined Tensor() there)");
      }
      if (!next_edges()[i].valid()) {
        result[i] = Tensor();  // nobody wants it
        continue;
      }
      result[i] = FitResult(*spec_, "backward", i, result[i], inputs_[i], /*allow_reduce=*/true);
    }
    return result;
  }

 private:
  // once_differentiable: the backward runs without recording; if a live grad level would
  // differentiate it (a gradient or a saved tensor still carries one), the result would be
  // silently wrong, so that is an error (PyTorch's "differentiate twice").
  void CheckNotDifferentiatedTwice(const TensorList& grads) const {
    if (!GradMode::is_enabled()) return;
    auto carries = [](const Tensor& t) {
      for (const TensorImpl* impl = t.defined() ? t.impl() : nullptr;
           impl != nullptr && !impl->is_dense();
           impl = impl->wrapped_value() != nullptr ? impl->wrapped_value()->impl() : nullptr) {
        if (impl->kind() == TensorKind::kGradWrapper && impl->is_alive_wrapper() &&
            static_cast<const GradWrapperImpl*>(impl)->requires_grad()) {
          return true;
        }
      }
      return false;
    };
    bool any = false;
    for (const Tensor& g : grads) any = any || carries(g);
    for (const Tensor& t : ctx_->saved_for_backward()) any = any || carries(t);
    if (any) {
      ThrowError(spec_->name, ": trying to differentiate twice a function that was marked ",
                 "once_differentiable (its backward is not differentiable)");
    }
  }

  FunctionSpecPtr spec_;
  std::shared_ptr<FunctionCtx> ctx_;
  std::vector<TensorMeta> inputs_;
  std::vector<TensorMeta> outputs_;
};

// ConstantList: a TensorList argument with this level's wrappers unwrapped. Like torch's
// autograd.Function, a Function differentiates only its tensor arguments: the tensors of a
// list argument are constants for it at every level (its backward returns no gradient for
// them).
template <typename Unwrap>
Value ConstantList(const TensorList& list, Unwrap&& unwrap) {
  TensorList values;
  for (const Tensor& t : list) values.push_back(unwrap(t));
  return Value(std::move(values));
}

ValueList GradRule(Interpreter& interpreter, const FunctionSpecPtr& spec, ValueList& args) {
  auto& grad = static_cast<GradInterpreter&>(interpreter);
  const int64_t level = grad.level();
  // Unwrap this level: values one level down and where each argument's gradient goes.
  ValueList inner = args;
  autograd::EdgeList edges(args.size());
  bool tracked = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_tensor_list()) {
      inner[i] = ConstantList(args[i].tensor_list(), [level](const Tensor& t) {
        const GradWrapperImpl* w = MaybeGradWrapperAt(t, level);
        return w != nullptr ? w->value() : t;
      });
      continue;
    }
    if (!args[i].is_tensor()) continue;
    if (const GradWrapperImpl* w = MaybeGradWrapperAt(args[i].tensor(), level)) {
      CheckHistoryCurrent(*w, spec->name);
      inner[i] = Value(w->value());
      edges[i] = w->grad_edge();
      tracked = tracked || w->requires_grad();
    }
  }
  tracked = tracked && GradMode::is_enabled();
  // Across named axes the call is one op: its outputs vary where any argument does, and a
  // shared argument's gradient is summed where needed (NOTE: [Gradients across named axes]
  // in interpreters/grad/grad_interpreter.h).
  uint64_t varying = 0;
  if (tracked && grad.objective() != nullptr) {
    static const Tensor* const kNoTensor = new Tensor();
    absl::InlinedVector<const Tensor*, 4> passed;
    for (const Value& a : args) passed.push_back(a.is_tensor() ? &a.tensor() : kNoTensor);
    for (const Value& a : args) {
      if (!a.is_tensor_list()) continue;
      for (const Tensor& t : a.tensor_list()) passed.push_back(&t);
    }
    varying = RouteAcrossNamedAxes(level, grad.objective(), passed, edges, -1, false);
  }
  ValueList inner_out;
  {
    LowerGuard lower(&grad);
    std::optional<NoGradGuard> no_grad;
    if (!grad.prev_grad_mode()) no_grad.emplace();
    inner_out = CallCustomFunction(spec, inner);
  }
  auto ctx = std::make_shared<FunctionCtx>();
  std::vector<TensorMeta> in_meta, out_meta;
  for (const Value& v : inner) in_meta.push_back(MetaOf(v));
  for (const Value& v : inner_out) out_meta.push_back(MetaOf(v));
  std::shared_ptr<FunctionNode> node;
  if (tracked) {
    node = std::make_shared<FunctionNode>(spec, ctx, edges, std::move(in_meta),
                                          std::move(out_meta));
  }
  // Wrap the outputs, keeping identity: an output that is an argument comes back as the
  // argument object itself (NOTE: [custom_function_call], mark_dirty).
  const std::vector<int> sources = OutputSources(inner, inner_out);
  ValueList outputs = inner_out;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (sources[k] >= 0) {
      outputs[k] = args[static_cast<size_t>(sources[k])];
    } else if (node && outputs[k].is_tensor() && IsFloating(outputs[k].tensor().dtype())) {
      outputs[k] = Value(MakeGradWrapper(outputs[k].tensor(), level, grad.alive_flag(),
                                         autograd::Edge{node, static_cast<int>(k)}, varying));
    }
  }
  spec->setup_context(*ctx, args, outputs);
  CheckReturnedInputsNotSaved(*spec, *ctx, args, outputs);
  // The node runs backward only after this level is gone, when a wrapper of the level
  // behaves exactly like its value (NOTE: [Dead wrappers]): keep the values. Keeping the
  // wrappers would also make a cycle (node -> ctx -> saved output -> its edge -> node), which
  // PyTorch's SavedVariable avoids the same way.
  auto unwrap_level = [level](const SavedTensors& saved) {
    SavedTensors values;
    for (const Tensor& t : saved) {
      const GradWrapperImpl* w = MaybeGradWrapperAt(t, level);
      values.push_back(w != nullptr ? w->value() : t);
    }
    return values;
  };
  ctx->save_for_backward(unwrap_level(ctx->saved_for_backward()));
  ctx->save_for_forward(unwrap_level(ctx->saved_for_forward()));
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k].is_tensor()) continue;
    if (sources[k] < 0 && Contains(ctx->non_differentiable(), outputs[k].tensor())) {
      outputs[k] = inner_out[k];  // no gradient flows through it
      continue;
    }
    if (sources[k] < 0 || !node) continue;
    if (!Contains(ctx->dirty(), outputs[k].tensor())) {
      // An argument returned as is, not modified: the output is a new tensor of this level
      // with the same value whose gradient goes through the user's backward (an identity
      // forward with a custom backward, e.g. gradient reversal), as PyTorch makes it a view.
      if (IsFloating(inner_out[k].tensor().dtype())) {
        outputs[k] = Value(MakeGradWrapper(inner_out[k].tensor(), level, grad.alive_flag(),
                                           autograd::Edge{node, static_cast<int>(k)},
                                           varying));
      }
      continue;
    }
    // A dirty argument: forward wrote it in place; its history now goes through this call.
    GradWrapperImpl* w = MaybeGradWrapperAt(outputs[k].tensor(), level);
    if (w == nullptr) {
      ThrowError(spec->name, ": forward modified argument ", sources[k], " in place (mark_dirty) ",
                 "but it is not tracked at grad level ", level, " (a captured tensor); pass ",
                 "it to the transformed function as an input");
    }
    if (grad.AliasesInput(w->value())) {
      ThrowError(spec->name, ": forward modified argument ", sources[k], " in place, an input ",
                 "being differentiated at level ", level, " (the caller's tensor); clone it first");
    }
    w->set_history(autograd::Edge{node, static_cast<int>(k)});
    w->set_varying(varying);
  }
  // The marks name this level's outputs (edges into the node): done with, drop them too.
  ctx->mark_dirty({});
  ctx->mark_non_differentiable({});
  return outputs;
}

ValueList JvpRule(Interpreter& interpreter, const FunctionSpecPtr& spec, ValueList& args) {
  auto& jvp = static_cast<JvpInterpreter&>(interpreter);
  const int64_t level = jvp.level();
  ValueList inner = args;
  TensorList tangents(args.size());
  bool any_tangent = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_tensor_list()) {
      inner[i] = ConstantList(args[i].tensor_list(), [level](const Tensor& t) {
        const DualImpl* d = MaybeDualAt(t, level);
        return d != nullptr ? d->primal() : t;
      });
      continue;
    }
    if (!args[i].is_tensor()) continue;
    if (DualImpl* d = MaybeDualAt(args[i].tensor(), level)) {
      CheckTangentCurrent(*d, spec->name);
      inner[i] = Value(d->primal());
      tangents[i] = d->tangent();
      any_tangent = true;
    }
  }
  any_tangent = any_tangent && FwdGradMode::is_enabled();
  auto lowered = [&](auto&& fn) {
    LowerGuard lower(&jvp);
    std::optional<NoFwdGradGuard> no_fwd_grad;
    if (!jvp.prev_fwd_grad_mode()) no_fwd_grad.emplace();
    return fn();
  };
  ValueList inner_out = lowered([&] { return CallCustomFunction(spec, inner); });
  const std::vector<int> sources = OutputSources(inner, inner_out);
  ValueList outputs = inner_out;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (sources[k] >= 0) outputs[k] = args[static_cast<size_t>(sources[k])];
  }
  FunctionCtx ctx;
  spec->setup_context(ctx, args, outputs);
  CheckReturnedInputsNotSaved(*spec, ctx, args, outputs);
  if (!any_tangent) return outputs;
  if (!spec->jvp) {
    ThrowError(spec->name, ": You must implement the jvp function for your custom Function to ",
               "use it with forward mode AD (jvp, jacfwd)");
  }
  // jvp runs one level down, on primals and tangents, so that its ops are seen (and
  // differentiated) by the levels outside (pytorch#197867 gets this wrong): the tensors saved
  // for forward are this level's duals; hand it their primals.
  SavedTensors saved;
  for (const Tensor& t : ctx.saved_for_forward()) {
    const DualImpl* d = t.defined() ? MaybeDualAt(t, level) : nullptr;
    saved.push_back(d != nullptr ? d->primal() : t);
  }
  ctx.set_phase(FunctionCtx::Phase::kForward);
  ctx.set_saved_override(&saved);
  TensorList out_tangents = lowered([&] {
    // Arguments without a tangent at this level get zeros, unless setup_context asked for
    // undefined ones (set_materialize_tangents(false)).
    for (size_t i = 0; ctx.materialize_tangents() && i < args.size(); ++i) {
      if (inner[i].is_tensor() && !tangents[i].defined() && inner[i].tensor().defined() &&
          IsFloating(inner[i].tensor().dtype())) {
        tangents[i] = zeros_like(inner[i].tensor());
      }
    }
    return spec->jvp(ctx, tangents);
  });
  if (out_tangents.size() != outputs.size()) {
    ThrowError(spec->name, ": jvp returned ", out_tangents.size(), " tangents, expected ",
               outputs.size(), " (one per output; undefined for non-tensors)");
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k].is_tensor() || !out_tangents[k].defined()) continue;
    const Tensor& primal = inner_out[k].tensor();
    if (!IsFloating(primal.dtype()) || Contains(ctx.non_differentiable(), outputs[k].tensor())) {
      continue;
    }
    Tensor t = lowered([&] {
      return FitResult(*spec, "jvp", k, out_tangents[k], MetaOf(inner_out[k]),
                       /*allow_reduce=*/false);
    });
    if (sources[k] >= 0 && Contains(ctx.dirty(), outputs[k].tensor())) {
      // A dirty argument keeps its identity and takes the new tangent.
      DualImpl* d = MaybeDualAt(outputs[k].tensor(), level);
      if (d == nullptr) {
        ThrowError(spec->name, ": forward modified argument ", sources[k], " in place ",
                   "(mark_dirty) but it carries no tangent at jvp level ", level, " (a captured ",
                   "tensor); pass it to the transformed function as an input");
      }
      d->set_tangent(std::move(t));
      continue;
    }
    // A new output, or an argument returned as is: a new dual with the user's tangent.
    outputs[k] = Value(MakeDual(primal, std::move(t), level, jvp.alive_flag()));
  }
  return outputs;
}

}  // namespace

void RegisterGradAndJvpRules(HigherOrderOperator<FunctionSpecPtr>& op) {
  op.SetRule(TransformType::kGrad, &GradRule);
  op.SetRule(TransformType::kJvp, &JvpRule);
}

}  // namespace ft::custom_function

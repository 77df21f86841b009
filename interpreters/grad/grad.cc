#include "interpreters/grad/grad.h"

#include <algorithm>
#include <memory>

#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "autograd/graph.h"
#include "dispatch/named_axes.h"
#include "interpreters/grad/argnums.h"
#include "interpreters/grad/grad_interpreter.h"
#include "ops/ops.h"
#include "tensor/factories.h"

namespace ft {
namespace {

// Runs f with the primals at `wrap` wrapped at a fresh grad level; returns the outputs one
// level down and where their gradients go.
struct Traced {
  TensorList outputs;
  std::vector<autograd::Edge> output_edges;
  std::vector<autograd::Edge> input_edges;  // one per wrapped primal
  const char* api = nullptr;                // the public transform, for messages
  int64_t level = 0;                        // the grad level f ran at
};

// Backward runs the engine from `roots` to t's inputs; an error raised inside names this
// transform's backward (its level is popped by now) in its transform stack.
// `once`: the graph is not run again (grad), so each node frees its saved values after it
// ran (NOTE: [Freeing saved values] in autograd/graph.h); a vjp_fn may be called again.
TensorList Backward(const Traced& t, const std::vector<std::pair<autograd::Edge, Tensor>>& roots,
                    bool once = false) {
  ErrorContextScope context(t.api, t.level, ErrorContextScope::Phase::kBackward);
  return autograd::RunBackward(roots, t.input_edges, once);
}

// SetObjective records over which named axes f's outputs are invariant, which decides
// whether gradients are summed across the axis (NOTE: [Gradients across named axes]).
void SetObjective(const GradInterpreter& interp, const TensorList& outputs, const char* api) {
  AxisObjective& objective = *interp.objective();
  uint64_t varying = 0;
  for (const Tensor& o : outputs) {
    const GradWrapperImpl* w = MaybeGradWrapperAt(o, interp.level());
    varying |= w != nullptr ? w->varying() : NamedAxisVarying(o, objective, false);
  }
  const uint64_t all = objective.count == 64 ? ~uint64_t{0}
                                              : (uint64_t{1} << objective.count) - 1;
  objective.invariant = all & ~varying;
  const uint64_t refused = varying & objective.collectives & objective.broadcasts;
  for (int i = 0; i < objective.count; ++i) {
    if ((refused & (uint64_t{1} << i)) == 0) continue;
    const std::string& name = AxisNameString(objective.name_ids[i]);
    ThrowError(api, ": f's output varies over axis '", name, "' (each member of the axis ",
               "has its own), but it was computed through a collective over '", name,
               "' from a value shared by every member (an input being differentiated): its ",
               "gradient would need the other members' shares. Reduce the output over '", name,
               "' first (psum or pmean), or differentiate a function whose output is each ",
               "member's own without the collective (level ", interp.level(), ")");
  }
}

Traced Trace(const TensorListFn& f, const TensorList& primals, const std::vector<bool>& wrap,
             const char* api) {
  autograd::RegisterDerivatives();
  CheckDefined(api, "argument", primals);
  GradInterpreter interp(LayerStack::NewLevel(), GradMode::is_enabled());
  interp.set_name(api);
  for (size_t i = 0; i < primals.size(); ++i) {
    if (wrap[i] && !IsFloating(primals[i].dtype())) {
      ThrowError(api, ": only floating point inputs can be differentiated, got argument ", i,
                 " of dtype ", DTypeName(primals[i].dtype()), " (level ", interp.level(), ")");
    }
  }
  Traced t;
  t.api = api;
  t.level = interp.level();
  TensorList raw;
  {
    InterpreterScope scope(&interp);
    TensorList wrapped;
    for (size_t i = 0; i < primals.size(); ++i) {
      if (!wrap[i]) {
        wrapped.push_back(primals[i]);
        continue;
      }
      autograd::Edge leaf{std::make_shared<autograd::LeafNode>(), 0};
      interp.AddInputStorage(primals[i].data_storage());
      t.input_edges.push_back(leaf);
      const uint64_t varying =
          interp.objective() != nullptr
              ? NamedAxisVarying(primals[i], *interp.objective(), /*differentiated=*/true)
              : 0;
      wrapped.push_back(
          MakeGradWrapper(primals[i], interp.level(), interp.alive_flag(), leaf, varying));
    }
    EnableGradGuard enable_grad;  // inside the transform grad mode is on
    raw = f(wrapped);
  }
  CheckDefined(api, "f's output", raw);
  for (size_t i = 0; i < raw.size(); ++i) {
    const Tensor& o = raw[i];
    if (const GradWrapperImpl* w = MaybeGradWrapperAt(o, interp.level())) {
      if (w->requires_grad() && w->is_stale()) {
        ThrowError(api, ": output ", i, " (shape ", ShapeToString(o.sizes()), ") was modified ",
                   "in place through a view or another alias after its gradient history was ",
                   "recorded at level ", interp.level(), "; in-place ops on views of tensors ",
                   "that carry a gradient are not supported, clone the view first");
      }
      t.outputs.push_back(w->value());
      t.output_edges.push_back(w->grad_edge());
    } else {
      t.outputs.push_back(o);
      t.output_edges.emplace_back();
    }
  }
  if (interp.objective() != nullptr) SetObjective(interp, raw, api);
  return t;
}

}  // namespace

namespace {

// PullbackFor: the vjp_fn of a traced call (all primals wrapped).
std::function<TensorList(const TensorList&)> PullbackFor(Traced t, TensorList primals) {
  return [t = std::move(t), primals = std::move(primals)](const TensorList& cotangents) {
    if (cotangents.size() != t.outputs.size()) {
      ThrowError("vjp: vjp_fn expected ", t.outputs.size(), " cotangents (one per output), got ",
                 cotangents.size());
    }
    CheckDefined("vjp_fn", "cotangent", cotangents);
    std::vector<std::pair<autograd::Edge, Tensor>> roots;
    for (size_t i = 0; i < cotangents.size(); ++i) {
      const Tensor& c = cotangents[i];
      const Tensor& o = t.outputs[i];
      if (!std::equal(c.sizes().begin(), c.sizes().end(), o.sizes().begin(), o.sizes().end())) {
        ThrowError("vjp: Mismatch in shape: grad_output[", i, "] has a shape of ",
                   ShapeToString(c.sizes()), " and output[", i, "] has a shape of ",
                   ShapeToString(o.sizes()), ".");
      }
      roots.push_back({t.output_edges[i], c});
    }
    TensorList grads = Backward(t, roots);
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].defined()) grads[i] = zeros_like(primals[i]);
    }
    return grads;
  };
}

}  // namespace

VjpResult vjp(const TensorListFn& f, const TensorList& primals) {
  Traced t = Trace(f, primals, std::vector<bool>(primals.size(), true), "vjp");
  VjpResult r;
  r.outputs = t.outputs;
  r.vjp_fn = PullbackFor(std::move(t), primals);
  return r;
}

VjpWithAux vjp_with_aux(const OutputsWithAuxFn& f, const TensorList& primals) {
  size_t num_outputs = 0;
  TensorListFn flat = [&](const TensorList& a) {
    auto [outs, aux] = f(a);
    num_outputs = outs.size();
    outs.insert(outs.end(), aux.begin(), aux.end());
    return outs;
  };
  Traced t = Trace(flat, primals, std::vector<bool>(primals.size(), true), "vjp");
  VjpWithAux r;
  r.aux.assign(t.outputs.begin() + static_cast<int64_t>(num_outputs), t.outputs.end());
  t.outputs.resize(num_outputs);
  t.output_edges.resize(num_outputs);
  r.outputs = t.outputs;
  r.vjp_fn = PullbackFor(std::move(t), primals);
  return r;
}

namespace {

GradWithAux GradImpl(const AuxFn& f, const std::vector<int64_t>& argnums,
                     const TensorList& args) {
  auto [wrap, order] = internal::ArgMask("grad", argnums, args.size());
  TensorListFn as_list = [&f](const TensorList& a) {
    auto [out, aux] = f(a);
    TensorList all = {out};
    all.insert(all.end(), aux.begin(), aux.end());
    return all;
  };
  Traced t = Trace(as_list, args, wrap, "grad");
  const Tensor& out = t.outputs[0];
  if (out.dim() != 0) {
    ThrowError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
               "tensor with ", out.dim(), " dims. Maybe you wanted to use the vjp or jacrev "
               "APIs instead?");
  }
  TensorList grads = Backward(t, {{t.output_edges[0], ones_like(out)}}, /*once=*/true);
  TensorList aux(t.outputs.begin() + 1, t.outputs.end());
  return {internal::InArgnumsOrder(grads, wrap, order, args), out, aux};
}

AuxFn NoAux(const ScalarFn& f) {
  return [f](const TensorList& a) { return std::pair<Tensor, TensorList>{f(a), {}}; };
}

}  // namespace

TensorListFn grad(ScalarFn f, std::vector<int64_t> argnums) {
  return [f = NoAux(f), argnums](const TensorList& args) {
    return GradImpl(f, argnums, args).grads;
  };
}

std::function<GradWithAux(const TensorList&)> grad_with_aux(AuxFn f,
                                                           std::vector<int64_t> argnums) {
  return [f = std::move(f), argnums](const TensorList& args) {
    return GradImpl(f, argnums, args);
  };
}

std::function<GradAndValue(const TensorList&)> grad_and_value(ScalarFn f,
                                                             std::vector<int64_t> argnums) {
  return [f = NoAux(f), argnums](const TensorList& args) {
    GradWithAux r = GradImpl(f, argnums, args);
    return GradAndValue{std::move(r.grads), std::move(r.value)};
  };
}

namespace {

JacobianWithAux JacrevImpl(const AuxFn& f, const std::vector<int64_t>& argnums,
                           std::optional<int64_t> chunk_size, const TensorList& args) {
  // Named variables, not a structured binding: a lambda below captures `wrap`, and
  // capturing a structured binding is C++20 that clang 14 does not implement yet.
  const auto mask = internal::ArgMask("jacrev", argnums, args.size());
  const std::vector<bool>& wrap = mask.first;
  const std::vector<int64_t>& order = mask.second;
  TensorListFn as_list = [&f](const TensorList& a) {
    auto [out, aux] = f(a);
    TensorList all = {out};
    all.insert(all.end(), aux.begin(), aux.end());
    return all;
  };
  Traced t = Trace(as_list, args, wrap, "jacrev");
  const Tensor& out = t.outputs[0];
  const int64_t n = out.numel();
  // One cotangent per output element: the rows of an identity, shaped like the output.
  Shape basis_shape = {n};
  basis_shape.insert(basis_shape.end(), out.sizes().begin(), out.sizes().end());
  const Tensor basis = reshape(eye(n, IsFloating(out.dtype()) ? out.dtype() : kDefaultFloat),
                               basis_shape);
  // One backward call (a single output element, or every row in one batched call): the
  // graph is run once, and frees its saved values as it goes (NOTE: [Freeing saved values]
  // in autograd/graph.h); chunks run it once per chunk, so it keeps them.
  const bool once = n == 1 || !chunk_size.has_value() || *chunk_size >= n;
  TensorListFn pullback = [&](const TensorList& c) {
    TensorList grads = Backward(t, {{t.output_edges[0], c[0]}}, once);
    TensorList result;
    size_t k = 0;
    for (size_t i = 0; i < args.size(); ++i) {
      if (!wrap[i]) continue;
      result.push_back(grads[k].defined() ? grads[k] : zeros_like(args[i]));
      ++k;
    }
    return result;
  };
  // A single output element needs one backward: no vmap level to set up (the inner jacrev
  // of hessian always takes this path).
  TensorList rows = n == 1 ? pullback({reshape(basis, out.sizes())})
                           : vmap(pullback, 0, 0, Randomness::kError, chunk_size)({basis});
  // rows[k]: [n, *arg.shape] -> out.shape + arg.shape, in argnums order.
  TensorList by_arg(args.size());
  size_t k = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!wrap[i]) continue;
    Shape shape(out.sizes().begin(), out.sizes().end());
    shape.insert(shape.end(), args[i].sizes().begin(), args[i].sizes().end());
    by_arg[i] = reshape(rows[k], shape);
    ++k;
  }
  JacobianWithAux result;
  for (int64_t w : order) result.jacobians.push_back(by_arg[static_cast<size_t>(w)]);
  result.aux.assign(t.outputs.begin() + 1, t.outputs.end());
  return result;
}

}  // namespace

TensorListFn jacrev(TensorFnOfList f, std::vector<int64_t> argnums,
                    std::optional<int64_t> chunk_size) {
  return [f = NoAux(std::move(f)), argnums, chunk_size](const TensorList& args) {
    return JacrevImpl(f, argnums, chunk_size, args).jacobians;
  };
}

std::function<JacobianWithAux(const TensorList&)> jacrev_with_aux(
    AuxFn f, std::vector<int64_t> argnums, std::optional<int64_t> chunk_size) {
  return [f = std::move(f), argnums, chunk_size](const TensorList& args) {
    return JacrevImpl(f, argnums, chunk_size, args);
  };
}

TensorFn grad(TensorFn f) {
  TensorListFn g = grad(ScalarFn([f = std::move(f)](const TensorList& a) { return f(a[0]); }));
  return [g](const Tensor& x) { return g({x})[0]; };
}

}  // namespace ft

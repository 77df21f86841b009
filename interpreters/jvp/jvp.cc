#include "interpreters/jvp/jvp.h"

#include <algorithm>
#include <memory>

#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "interpreters/grad/argnums.h"
#include "interpreters/jit/jit.h"
#include "interpreters/jvp/jvp_interpreter.h"
#include "ops/ops.h"
#include "tensor/factories.h"

namespace ft {
namespace {

// PushForward runs f at a fresh jvp level with primals[i] paired with tangents[i] (an
// undefined tangent leaves that primal a constant) and returns the outputs one level down
// and their tangents (zeros for an output that does not depend on a tangent). `api` is the
// public transform (jvp, jacfwd, linearize) errors name the level by.
JvpResult PushForward(const TensorListFn& f, const TensorList& primals,
                      const TensorList& tangents, const char* api) {
  autograd::RegisterDerivatives();
  JvpInterpreter interp(LayerStack::NewLevel(), FwdGradMode::is_enabled());
  interp.set_name(api);
  TensorList raw;
  {
    InterpreterScope scope(&interp);
    TensorList duals;
    for (size_t i = 0; i < primals.size(); ++i) {
      if (tangents[i].defined()) interp.AddInputStorage(primals[i].data_storage());
      duals.push_back(tangents[i].defined()
                          ? MakeDual(primals[i], tangents[i], interp.level(), interp.alive_flag())
                          : primals[i]);
    }
    EnableFwdGradGuard enable_fwd_grad;  // inside the transform forward grad mode is on
    raw = f(duals);
  }
  CheckDefined(api, "f's output", raw);
  JvpResult r;
  for (size_t i = 0; i < raw.size(); ++i) {
    const Tensor& o = raw[i];
    if (const DualImpl* d = MaybeDualAt(o, interp.level())) {
      if (d->is_stale()) {
        ThrowError("jvp: output ", i, " (shape ", ShapeToString(o.sizes()), ") was modified in ",
                   "place through a view or another alias after its tangent was computed at ",
                   "level ", interp.level(), "; in-place ops on views of tensors that carry a ",
                   "tangent are not supported, clone the view first");
      }
      r.outputs.push_back(d->primal());
      r.tangents.push_back(d->tangent());
    } else {
      r.outputs.push_back(o);
      r.tangents.push_back(zeros_like(o));
    }
  }
  return r;
}

void CheckPrimalsAndTangents(const char* api, const TensorList& primals,
                             const TensorList& tangents) {
  if (primals.size() != tangents.size()) {
    ThrowError(api, ": Expected primals and tangents to have the same length, got ",
               primals.size(), " primals and ", tangents.size(), " tangents");
  }
  for (size_t i = 0; i < primals.size(); ++i) {
    const Tensor& p = primals[i];
    const Tensor& t = tangents[i];
    if (!p.defined() || !t.defined()) {
      ThrowError(api, ": primal and tangent ", i, " must both be defined tensors");
    }
    if (!IsFloating(p.dtype())) {
      ThrowError(api, ": only floating point primals can carry a tangent, got primal ", i,
                 " of dtype ", DTypeName(p.dtype()));
    }
    if (!std::equal(p.sizes().begin(), p.sizes().end(), t.sizes().begin(), t.sizes().end())) {
      ThrowError(api, ": tangent ", i, " has shape ", ShapeToString(t.sizes()),
                 " but its primal has shape ", ShapeToString(p.sizes()),
                 "; a tangent must have its primal's shape");
    }
    if (t.dtype() != p.dtype()) {
      ThrowError(api, ": tangent ", i, " has dtype ", DTypeName(t.dtype()),
                 " but its primal has dtype ", DTypeName(p.dtype()),
                 "; a tangent must have its primal's dtype");
    }
  }
}

}  // namespace

JvpResult jvp(const TensorListFn& f, const TensorList& primals, const TensorList& tangents) {
  CheckPrimalsAndTangents("jvp", primals, tangents);
  return PushForward(f, primals, tangents, "jvp");
}

JvpWithAux jvp_with_aux(const OutputsWithAuxFn& f, const TensorList& primals,
                        const TensorList& tangents) {
  CheckPrimalsAndTangents("jvp", primals, tangents);
  size_t num_outputs = 0;
  TensorListFn flat = [&](const TensorList& a) {
    auto [outs, aux] = f(a);
    num_outputs = outs.size();
    outs.insert(outs.end(), aux.begin(), aux.end());
    return outs;
  };
  JvpResult r = PushForward(flat, primals, tangents, "jvp");
  JvpWithAux result;
  const auto split = static_cast<int64_t>(num_outputs);
  result.outputs.assign(r.outputs.begin(), r.outputs.begin() + split);
  result.tangents.assign(r.tangents.begin(), r.tangents.begin() + split);
  result.aux.assign(r.outputs.begin() + split, r.outputs.end());
  return result;
}

Linearized linearize(const TensorListFn& f, const TensorList& primals) {
  CheckDefined("linearize", "argument", primals);
  for (size_t i = 0; i < primals.size(); ++i) {
    if (!IsFloating(primals[i].dtype())) {
      ThrowError("linearize: only floating point primals can be linearized, got primal ", i,
                 " of dtype ", DTypeName(primals[i].dtype()));
    }
  }
  // t -> J t as a jit of jvp at these primals, tracing f's primals and captured tensors as
  // constants: the trace (run right here, with zero tangents) evaluates f once and the
  // program keeps only the tangent's arithmetic, with everything else folded (JAX's
  // partial evaluation). Inside a transform, or for an untraceable f, each call replays jvp.
  auto outputs = std::make_shared<TensorList>();
  JitFunction tangents_at_primals = jit(
      [f, primals, outputs](const TensorList& tangents) {
        JvpResult r = PushForward(f, primals, tangents, "linearize");
        *outputs = std::move(r.outputs);
        return r.tangents;
      },
      TraceOptions{.fold_captured = true});
  TensorList zero_tangents;
  for (const Tensor& p : primals) zero_tangents.push_back(zeros_like(p));
  tangents_at_primals(zero_tangents);
  Linearized r;
  r.outputs = std::move(*outputs);
  r.jvp_fn = [tangents_at_primals, primals](const TensorList& tangents) {
    CheckPrimalsAndTangents("linearize", primals, tangents);
    return tangents_at_primals(tangents);
  };
  r.program = tangents_at_primals.program(zero_tangents);
  return r;
}

namespace {

JacobianWithAux JacfwdImpl(const AuxFn& f, const std::vector<int64_t>& argnums,
                           Randomness randomness, std::optional<int64_t> chunk_size,
                           const TensorList& args) {
  CheckDefined("jacfwd", "argument", args);
  // Named variables, not a structured binding: the lambda below captures `wrap`, and
  // capturing a structured binding is C++20 that clang 14 does not implement yet.
  const auto mask = internal::ArgMask("jacfwd", argnums, args.size());
  const std::vector<bool>& wrap = mask.first;
  const std::vector<int64_t>& order = mask.second;
  // One basis of N = sum of the differentiated arguments' sizes columns: column j is a unit
  // tangent for exactly one element of one argument, so one vmapped jvp gives every column.
  int64_t total = 0;
  std::vector<int64_t> offset(args.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    if (!wrap[i]) continue;
    if (!IsFloating(args[i].dtype())) {
      ThrowError("jacfwd: only floating point inputs can be differentiated, got argument ", i,
                 " of dtype ", DTypeName(args[i].dtype()));
    }
    offset[i] = total;
    total += args[i].numel();
  }
  TensorList bases;  // bases[k]: [N, *args[i].shape] for the k-th differentiated argument
  for (size_t i = 0; i < args.size(); ++i) {
    if (!wrap[i]) continue;
    Shape shape = {total};
    shape.insert(shape.end(), args[i].sizes().begin(), args[i].sizes().end());
    bases.push_back(reshape(narrow(eye(total, args[i].dtype()), 1, offset[i], args[i].numel()),
                            shape));
  }
  TensorListFn column = [&](const TensorList& basis_rows) {
    TensorList tangents(args.size());
    size_t k = 0;
    for (size_t i = 0; i < args.size(); ++i) {
      if (wrap[i]) tangents[i] = basis_rows[k++];
    }
    JvpResult r = PushForward(
        [&f](const TensorList& a) {
          auto [out, aux] = f(a);
          TensorList all = {out};
          all.insert(all.end(), aux.begin(), aux.end());
          return all;
        },
        args, tangents, "jacfwd");
    TensorList result = {r.tangents[0]};
    result.insert(result.end(), r.outputs.begin() + 1, r.outputs.end());
    return result;
  };
  // Every output comes back with the batch first. The aux comes from the primals alone, so
  // it is unbatched inside and its batch dim is a broadcast view: any row of it is the aux.
  TensorList outs;
  if (total == 1) {
    // One column: a single jvp, no vmap level to set up.
    TensorList rows;
    for (const Tensor& b : bases) rows.push_back(select(b, 0, 0));
    for (const Tensor& o : column(rows)) outs.push_back(unsqueeze(o, 0));
  } else {
    outs = vmap(column, 0, 0, randomness, chunk_size)(bases);
  }
  const Tensor& columns = outs[0];  // [N, *out.shape]
  const int64_t out_dims_count = columns.dim() - 1;
  TensorList by_arg(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!wrap[i]) continue;
    // [n_i, *out] -> [*out, n_i] -> out.shape + args[i].shape.
    Tensor block = movedim(narrow(columns, 0, offset[i], args[i].numel()), 0, out_dims_count);
    Shape shape(columns.sizes().begin() + 1, columns.sizes().end());
    shape.insert(shape.end(), args[i].sizes().begin(), args[i].sizes().end());
    by_arg[i] = reshape(block, shape);
  }
  JacobianWithAux result;
  for (int64_t w : order) result.jacobians.push_back(by_arg[static_cast<size_t>(w)]);
  for (size_t i = 1; i < outs.size(); ++i) result.aux.push_back(select(outs[i], 0, 0));
  return result;
}

}  // namespace

TensorListFn jacfwd(TensorFnOfList f, std::vector<int64_t> argnums, Randomness randomness,
                    std::optional<int64_t> chunk_size) {
  AuxFn no_aux = [f = std::move(f)](const TensorList& a) {
    return std::pair<Tensor, TensorList>{f(a), {}};
  };
  return [f = std::move(no_aux), argnums, randomness, chunk_size](const TensorList& args) {
    return JacfwdImpl(f, argnums, randomness, chunk_size, args).jacobians;
  };
}

std::function<JacobianWithAux(const TensorList&)> jacfwd_with_aux(
    AuxFn f, std::vector<int64_t> argnums, Randomness randomness,
    std::optional<int64_t> chunk_size) {
  return [f = std::move(f), argnums, randomness, chunk_size](const TensorList& args) {
    return JacfwdImpl(f, argnums, randomness, chunk_size, args);
  };
}

TensorListFn hessian(TensorFnOfList f, std::vector<int64_t> argnums) {
  return [f = std::move(f), argnums](const TensorList& args) {
    // Errors about the user's tensors name hessian, not the jacrev and jacfwd it is made of.
    CheckDefined("hessian", "argument", args);
    const TensorFnOfList checked = [&f](const TensorList& x) {
      Tensor out = f(x);
      CheckDefined("hessian", "f's output", absl::Span<const Tensor>(&out, 1));
      return out;
    };
    TensorList blocks;
    for (size_t a = 0; a < argnums.size(); ++a) {
      // Row a: the forward-mode Jacobian of d f / d args[argnums[a]] (reverse mode).
      TensorFnOfList first = [&checked, &argnums, a](const TensorList& x) {
        return jacrev(checked, {argnums[a]})(x)[0];
      };
      TensorList row = jacfwd(first, argnums)(args);
      blocks.insert(blocks.end(), row.begin(), row.end());
    }
    return blocks;
  };
}

}  // namespace ft

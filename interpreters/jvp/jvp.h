// ft/interpreters/jvp/jvp.h
//
// Forward-mode transforms: torch.func.jvp, linearize and jacfwd for C++, and hessian as
// forward-over-reverse.
//
//   jvp(f, primals, tangents) -> {outputs, tangents}: runs f once at a fresh jvp level on
//       dual tensors (primal, tangent) and returns f's outputs and their tangents, the
//       Jacobian-vector product J(primals) . tangents. No graph is kept: memory is that of
//       one forward pass.
//   linearize(f, primals) -> {outputs, jvp_fn}: f's outputs and a function t -> J t that can be
//       called any number of times (JAX's linearize). f runs once, traced by ft::jit with the
//       primals and captured tensors as constants, so jvp_fn replays only the tangent's
//       arithmetic (everything that depends on the primals alone is folded). As in JAX,
//       jvp_fn is J at the primals and captured tensors as they were when linearize ran.
//       Inside a transform, or when f cannot be traced (interpreters/jit/trace.h), jvp_fn
//       runs jvp on each call instead.
//   jacfwd(f, argnums, randomness, chunk_size): the Jacobian by forward mode: vmap of jvp over
//       the columns of an identity basis (one batched pass). Preferable to jacrev when f has
//       fewer inputs than outputs.
//   hessian(f, argnums): jacfwd of jacrev (forward-over-reverse, as torch.func.hessian).
//
// All of them compose with vmap, grad and each other in any order: jvp(grad(f)) is a
// Hessian-vector product, jacfwd(jacfwd(f)) a second derivative by forward mode only.
//
// Errors (ft::Error, naming the transform and level): primals/tangents count mismatch, a
// tangent whose shape or dtype differs from its primal, non-floating primals, argnums out of
// range or repeated. The layer stack is balanced after any exception.
//
// Example:
//   auto f = [](const ft::TensorList& a) { return ft::TensorList{ft::sin(a[0]) * a[1]}; };
//   ft::JvpResult r = ft::jvp(f, {x, w}, {ones_like(x), zeros_like(w)});
//   // r.outputs[0] == sin(x) * w, r.tangents[0] == cos(x) * w
//   ft::Tensor J = ft::jacfwd([](const ft::TensorList& a) { return ft::sin(a[0]); })({x})[0];
//   // J == diag(cos(x))
#ifndef FT_INTERPRETERS_JVP_JVP_H_
#define FT_INTERPRETERS_JVP_JVP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "interpreters/grad/grad.h"
#include "interpreters/jit/trace.h"
#include "interpreters/vmap/vmap.h"
#include "tensor/tensor.h"

namespace ft {

struct JvpResult {
  TensorList outputs;
  TensorList tangents;  // one per output, shaped like it
};

// jvp: see the header comment. tangents[i] must have primals[i]'s shape and dtype.
JvpResult jvp(const TensorListFn& f, const TensorList& primals, const TensorList& tangents);

// jvp_with_aux: f returns (outputs, aux); aux comes back one level down, without tangents.
struct JvpWithAux {
  TensorList outputs;
  TensorList tangents;
  TensorList aux;
};
JvpWithAux jvp_with_aux(const OutputsWithAuxFn& f, const TensorList& primals,
                        const TensorList& tangents);

// linearize: see the header comment.
struct Linearized {
  TensorList outputs;
  std::function<TensorList(const TensorList& tangents)> jvp_fn;
  // program: what jvp_fn replays for contiguous tangents (only the tangent's arithmetic);
  // null when jvp_fn runs jvp each call (linearize inside a transform, an untraceable f).
  std::shared_ptr<const Program> program;
};
Linearized linearize(const TensorListFn& f, const TensorList& primals);

// jacfwd: Jacobian k has shape out.shape + args[argnums[k]].shape, like jacrev.
TensorListFn jacfwd(TensorFnOfList f, std::vector<int64_t> argnums = {0},
                    Randomness randomness = Randomness::kError,
                    std::optional<int64_t> chunk_size = std::nullopt);

// jacfwd_with_aux: f returns (output, aux); aux comes back one level down beside the
// Jacobians (torch.func.jacfwd's has_aux).
std::function<JacobianWithAux(const TensorList&)> jacfwd_with_aux(
    AuxFn f, std::vector<int64_t> argnums = {0}, Randomness randomness = Randomness::kError,
    std::optional<int64_t> chunk_size = std::nullopt);

// hessian: blocks H[a][b] = d2f / d args[a] d args[b] in row-major order (argnums.size()^2
// tensors, block shape args[a].shape + args[b].shape), by jacfwd(jacrev(f)).
TensorListFn hessian(TensorFnOfList f, std::vector<int64_t> argnums = {0});

}  // namespace ft

#endif  // FT_INTERPRETERS_JVP_JVP_H_

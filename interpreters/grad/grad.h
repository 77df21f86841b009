// ft/interpreters/grad/grad.h
//
// Reverse-mode transforms: torch.func.vjp and torch.func.grad for C++.
//
//   vjp(f, primals) -> {outputs, vjp_fn}: runs f on the primals at a fresh grad level and
//       returns its outputs and a function that maps cotangents (one per output, same
//       shapes) to the gradients w.r.t. each primal (zeros for a primal f does not use).
//       vjp_fn may be called any number of times, also after vjp returned.
//   grad(f, argnums) -> a function returning the gradient of f's scalar output w.r.t. the
//       arguments at `argnums` (in that order); grad_and_value also returns f's value.
//   jacrev(f, argnums, chunk_size): Jacobians by reverse mode (vmap of vjp over an identity
//       basis). Forward mode, jacfwd and hessian are in interpreters/jvp/jvp.h.
// They compose with each other and with vmap in any order: vmap(grad(f)) gives per-example
// gradients in one batched computation; grad(grad(f)) higher derivatives.
//
// Errors (ft::Error): grad of a non-scalar output (suggests vjp/jacrev), argnums out of range
// or repeated, differentiating an integer or bool input, cotangents of the wrong count or
// shape. The layer stack is balanced after any exception.
//
// Example:
//   auto f = [](const ft::TensorList& a) { return ft::sum(ft::sin(a[0]) * a[1]); };
//   ft::TensorList g = ft::grad(f, {0, 1})({x, w});   // {cos(x) * w, sin(x)}
//   auto x4 = ft::TensorFn([](const ft::Tensor& t) { return t * t * t * t; });
//   ft::grad(ft::grad(x4))(ft::scalar_tensor(2.0));   // 12 * 2^2 = 48
#ifndef FT_INTERPRETERS_GRAD_GRAD_H_
#define FT_INTERPRETERS_GRAD_GRAD_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "interpreters/vmap/vmap.h"
#include "tensor/tensor.h"

namespace ft {

struct VjpResult {
  TensorList outputs;
  std::function<TensorList(const TensorList& cotangents)> vjp_fn;
};

// vjp: see the header comment.
VjpResult vjp(const TensorListFn& f, const TensorList& primals);

// grad over several arguments (f returns a scalar tensor).
using ScalarFn = std::function<Tensor(const TensorList&)>;
TensorListFn grad(ScalarFn f, std::vector<int64_t> argnums = {0});
// grad of a function of one tensor.
TensorFn grad(TensorFn f);

// grad_and_value: the gradients (argnums order) and f's value, from one forward pass.
struct GradAndValue {
  TensorList grads;
  Tensor value;
};
std::function<GradAndValue(const TensorList&)> grad_and_value(ScalarFn f,
                                                             std::vector<int64_t> argnums = {0});

// has_aux: f returns (output, aux); the aux tensors come back one level down (not
// differentiated), beside the gradients. The C++ type makes "has_aux without a pair"
// impossible.
using AuxFn = std::function<std::pair<Tensor, TensorList>(const TensorList&)>;
struct GradWithAux {
  TensorList grads;
  Tensor value;
  TensorList aux;
};
std::function<GradWithAux(const TensorList&)> grad_with_aux(AuxFn f,
                                                           std::vector<int64_t> argnums = {0});
struct VjpWithAux {
  TensorList outputs;
  std::function<TensorList(const TensorList& cotangents)> vjp_fn;
  TensorList aux;
};
// vjp_with_aux: f returns (outputs, aux).
using OutputsWithAuxFn = std::function<std::pair<TensorList, TensorList>(const TensorList&)>;
VjpWithAux vjp_with_aux(const OutputsWithAuxFn& f, const TensorList& primals);

// jacrev: the Jacobian of f's (single, any-shape) output w.r.t. each argument at `argnums`,
// by reverse mode: one vjp, then vmap of its vjp_fn over the rows of an identity basis
// (one batched backward, not a loop). Jacobian k has shape out.shape + args[argnums[k]].shape.
// chunk_size bounds the basis rows processed at once (vmap's chunk_size).
using TensorFnOfList = std::function<Tensor(const TensorList&)>;
TensorListFn jacrev(TensorFnOfList f, std::vector<int64_t> argnums = {0},
                    std::optional<int64_t> chunk_size = std::nullopt);

// jacrev_with_aux: f returns (output, aux); the aux tensors come back one level down, beside
// the Jacobians (torch.func.jacrev's has_aux).
struct JacobianWithAux {
  TensorList jacobians;
  TensorList aux;
};
std::function<JacobianWithAux(const TensorList&)> jacrev_with_aux(
    AuxFn f, std::vector<int64_t> argnums = {0},
    std::optional<int64_t> chunk_size = std::nullopt);

}  // namespace ft

#endif  // FT_INTERPRETERS_GRAD_GRAD_H_

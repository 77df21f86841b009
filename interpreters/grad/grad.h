// ft/interpreters/grad/grad.h
//
// Reverse-mode transforms: torch.func.vjp and torch.func.grad for C++.
//
//   vjp(f, primals) -> {outputs, vjp_fn}: runs f on the primals at a fresh grad level and
//       returns its outputs and a function that maps cotangents (one per output, same
//       shapes) to the gradients w.r.t. each primal (zeros for a primal f does not use).
//       vjp_fn may be called any number of times, also after vjp returned.
//   grad(f, argnums) -> a function returning the gradient of f's scalar output w.r.t. the
//       arguments at `argnums` (in that order).
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

}  // namespace ft

#endif  // FT_INTERPRETERS_GRAD_GRAD_H_

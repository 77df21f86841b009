// ft/ops/unary.h
//
// The public elementwise unary ops. Each dispatches (dispatch.h): with no transform active it
// runs the base kernel in kernels/unary.h directly; inside a transform the active
// interpreter processes it. Dtype rules and errors: kernels/unary.h.
//
// Example:
//   Tensor y = ft::sin(x) * ft::exp(-x);
#ifndef FT_OPS_UNARY_H_
#define FT_OPS_UNARY_H_

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor square(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor round(const Tensor& x);

// exp_ writes exp(self) into self (in place; bumps the version) and returns self.
Tensor exp_(const Tensor& self);

// Unary minus: neg(x).
Tensor operator-(const Tensor& x);

// RegisterUnaryOps adds this family to the op table (called by RegisterAllOps).
void RegisterUnaryOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_UNARY_H_

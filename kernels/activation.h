// ft/kernels/activation.h
//
// Activations: the base kernels (gelu, silu, mish, softplus, elu, selu, celu, leaky_relu,
// hardtanh, hardswish, hardsigmoid, logsigmoid, softsign) and the special functions (erf, erfc,
// erfinv, lgamma, digamma, polygamma). Dense tensors only; //ops makes them public ops
// (ops/activation.h, which documents each function). Their arithmetic (erf, erfc
// and lgamma aside, which are cpu/vecmath.h's) is kernels/activation_math.h's strip
// functions, which jit's fused steps call too.
//
// Dtype rules: every kernel is elementwise and returns a new contiguous tensor of x's shape.
// float32 and float64 keep their dtype; int64 computes in float32 (like the "floating" unary
// ops, e.g. exp); bool throws an ft::Error naming the op.
#ifndef FT_KERNELS_ACTIVATION_H_
#define FT_KERNELS_ACTIVATION_H_

#include <cstdint>

#include "tensor/tensor.h"

namespace ft::kernels {

// gelu: x * Phi(x); with `tanh_approximation` the tanh form of torch's approximate="tanh".
Tensor gelu(const Tensor& x, bool tanh_approximation);
Tensor silu(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor softplus(const Tensor& x, double beta, double threshold);
Tensor elu(const Tensor& x, double alpha);
Tensor selu(const Tensor& x);
// celu throws when alpha == 0.
Tensor celu(const Tensor& x, double alpha);
Tensor leaky_relu(const Tensor& x, double negative_slope);
Tensor hardtanh(const Tensor& x, double min_val, double max_val);
Tensor hardswish(const Tensor& x);
Tensor hardsigmoid(const Tensor& x);
Tensor logsigmoid(const Tensor& x);
Tensor softsign(const Tensor& x);

Tensor erf(const Tensor& x);
Tensor erfc(const Tensor& x);
Tensor erfinv(const Tensor& x);
Tensor lgamma(const Tensor& x);
Tensor digamma(const Tensor& x);
// polygamma throws when n < 0.
Tensor polygamma(int64_t n, const Tensor& x);

}  // namespace ft::kernels

#endif  // FT_KERNELS_ACTIVATION_H_

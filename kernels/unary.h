// ft/kernels/unary.h
//
// Base kernels of the elementwise unary ops (dense tensors only; the public, dispatching
// versions are ft::sin etc. in ops/unary.h).
//
// Dtype rules (PyTorch's): the "floating" functions (exp, log, sin, tanh, sigmoid, sqrt, ...)
// compute int64 inputs in float32; the sign-preserving ones (neg, abs, sign, square, relu,
// floor, round) keep int64. Every unary op rejects bool inputs with an ft::Error, except
// sign (which returns a bool copy), as torch.neg(bool) does. Results are new contiguous
// tensors; the in-place variants write into `self`, bump its version and return it.
#ifndef FT_KERNELS_UNARY_H_
#define FT_KERNELS_UNARY_H_

#include <cstdint>
#include <optional>

#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ft::vecmath {
enum class Fn : uint8_t;  // cpu/vecmath.h
}  // namespace ft::vecmath

namespace ft::kernels {

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

// exp_ writes exp(self) into self (floating self only) and returns self.
Tensor exp_(const Tensor& self);

namespace internal {
// VecMathUnary: `fn` of cpu/vecmath.h over x (int64 computes in float32, bool is an error
// naming `op`); the kernel behind every floating function that SLEEF provides.
Tensor VecMathUnary(const char* op, const Tensor& x, vecmath::Fn fn);
}  // namespace internal

}  // namespace ft::kernels

#endif  // FT_KERNELS_UNARY_H_

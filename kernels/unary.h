// ft/kernels/unary.h
//
// Base kernels of the elementwise unary ops (dense tensors only; the public, dispatching
// versions are ft::sin etc. in ops/unary.h).
//
// Dtype rules (PyTorch 1.13's on CPU, for all twelve dtypes; NOTE: [Unary kernels of the new
// dtypes] in unary.cc):
// - the "floating" functions (exp, log, sin, tanh, sigmoid, sqrt, ...) compute integer
//   inputs (uint8, int8, int16, int32, int64) in float32 and return float32;
// - the sign-preserving ones (neg, abs, sign, square, relu, floor, round) keep an integer
//   dtype and wrap around as torch's do (neg(int8 -128) is -128);
// - float16 and bfloat16 compute in float and round once to 16 bits;
// - complex64 and complex128: exp, log, sqrt, rsqrt, sin, cos, tan, tanh, sigmoid, neg,
//   square and reciprocal keep the dtype; abs returns the real dtype (complex64 -> float32);
//   sign, relu, floor, round, expm1 and log1p throw an ft::Error, as torch 1.13 refuses them.
// Every unary op rejects bool inputs with an ft::Error, except sign (which returns a bool
// copy), as torch.neg(bool) does. Results are new contiguous tensors; the in-place variants
// write into `self`, bump its version and return it.
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

// exp_ writes exp(self) into self (floating or complex self only) and returns self.
Tensor exp_(const Tensor& self);

namespace internal {
// VecMathUnary: `fn` of cpu/vecmath.h over x (integers compute in float32, float16 and
// bfloat16 in float rounded once; bool and complex are errors naming `op`); the kernel
// behind every floating function that SLEEF provides.
Tensor VecMathUnary(const char* op, const Tensor& x, vecmath::Fn fn);
}  // namespace internal

}  // namespace ft::kernels

#endif  // FT_KERNELS_UNARY_H_

// ft/kernels/binary.h
//
// Base kernels of the elementwise binary, comparison, logical, selection and in-place write
// ops (dense tensors only; the public, dispatching versions are ft::add etc. in
// ops/binary.h, which also documents the semantics in full).
//
// Every binary kernel broadcasts its operands (numpy rules) and computes in the PyTorch
// result type ResultType(a.dtype, a.dim() == 0, b.dtype, b.dim() == 0): operands that
// already have that dtype are used as they are (no copy), others are converted once.
// Results are new contiguous tensors. The in-place kernels (add_, copy_, fill_, ...) validate
// everything first, write into `self`, bump its version once and return `self`.
//
// Dtypes: every kernel here takes all twelve dtypes (the dtypes beyond float32, float64,
// int64 and bool run plain loops of their own, NOTE: [Binary kernels of the new dtypes] in
// binary.cc), with torch 1.13's rules: integers wrap; float16 and bfloat16 compute in float
// and round once; complex * and / use torch's unscaled formulas and complex + and - torch's
// a + alpha * b; maximum, minimum, lt, le, gt, ge and clamp throw for complex; sub throws for
// bool; div of integers is float32. pow and atan2 take the original four only (they throw
// for the others).
#ifndef FT_KERNELS_BINARY_H_
#define FT_KERNELS_BINARY_H_

#include <optional>

#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ft::kernels {

// Arithmetic (promoted dtype; div and atan2 always floating).
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor atan2(const Tensor& a, const Tensor& b);

// Comparisons (bool result, computed in the promoted dtype).
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);

// Logical (any dtype, nonzero is true; bool result).
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& x);

// where picks a where condition is true, else b (three-way broadcast).
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);

// clamp limits x to [min, max] (either may be absent, not both).
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max);

// In place: write into self, bump its version once, return self.
Tensor add_(const Tensor& self, const Tensor& other);
Tensor sub_(const Tensor& self, const Tensor& other);
Tensor mul_(const Tensor& self, const Tensor& other);
Tensor div_(const Tensor& self, const Tensor& other);
Tensor clamp_(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max);
Tensor copy_(const Tensor& self, const Tensor& src);
Tensor fill_(const Tensor& self, Scalar value);
Tensor zero_(const Tensor& self);

}  // namespace ft::kernels

#endif  // FT_KERNELS_BINARY_H_

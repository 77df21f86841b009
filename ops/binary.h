// ft/ops/binary.h
//
// The public elementwise binary ops: arithmetic (add, sub, mul, div, pow, maximum, minimum,
// atan2), comparisons (eq, ne, lt, le, gt, ge), logical ops, where, clamp, and the in-place
// writes (add_, sub_, mul_, div_, clamp_, copy_, fill_, zero_). Each dispatches (dispatch.h):
// with no transform active it runs the base kernel in kernels/binary.h directly.
//
// Broadcasting: numpy rules (BroadcastShapes); the result has the broadcast shape.
//
// Type promotion (torch.result_type): the compute dtype is
//   ResultType(a.dtype, a.dim() == 0, b.dtype, b.dim() == 0)
// so a dimensioned tensor wins over a 0-dim one of the same category (float32 [3] + float64
// 0-dim -> float32) but a 0-dim tensor of a higher category decides (int64 [3] + float64
// 0-dim -> float64). C++ scalars (x * 2.5) follow the python-scalar rule: they become a 0-dim
// tensor of dtype ResultTypeWithScalar(x.dtype, kind), so int64 * 2.5 -> float32,
// float32 * 2 -> float32, int64 * 2 -> int64, bool + 1 -> int64.
// Per-op rules (PyTorch's):
//   add / mul of two bools is logical or / and; sub with a bool operand throws (use
//   logical_not); div is true division (int / int -> float32); pow keeps int64 for int64 ^
//   int64 and throws on a negative integer exponent; pow of two bools throws; maximum /
//   minimum propagate NaN; atan2 is floating (int inputs compute in float32). int64
//   arithmetic wraps around on overflow.
//   Comparisons promote both operands to the common dtype and return bool.
//   logical_and / logical_or / logical_not accept every dtype (nonzero is true), return bool.
// In-place ops (add_ ...): `other` broadcasts to self's shape (it may not grow self), the
// promoted result type must be castable to self's dtype (torch.can_cast: no floating ->
// int64/bool, no int64 -> bool), they bump self's version once and return self itself.
// A source that partially overlaps self is read completely before self is written.
//
// Example:
//   Tensor y = (x * 2.0 + 1) / ft::maximum(x, 1e-3);   // float32 for float32 x
//   Tensor m = ft::where(ft::gt(x, 0), x, 0.0);         // relu, keeps x's dtype
//   ft::add_(acc, grad);                                 // acc += grad, in place
#ifndef FT_OPS_BINARY_H_
#define FT_OPS_BINARY_H_

#include <optional>

#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// ---- Arithmetic: broadcast, promote, compute. ----

// add returns a + b (logical or for two bools).
Tensor add(const Tensor& a, const Tensor& b);
// sub returns a - b. Throws when an operand is bool.
Tensor sub(const Tensor& a, const Tensor& b);
// mul returns a * b (logical and for two bools).
Tensor mul(const Tensor& a, const Tensor& b);
// div returns a / b in a floating dtype (true division; int and bool compute in float32).
Tensor div(const Tensor& a, const Tensor& b);
// pow returns a ^ b. int64 ^ int64 stays int64 and throws if an exponent is negative; two
// bool operands throw.
Tensor pow(const Tensor& a, const Tensor& b);
// maximum / minimum: elementwise max / min; NaN in either operand gives NaN.
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
// atan2 returns atan2(a, b) (angle of the point (b, a)) in a floating dtype.
Tensor atan2(const Tensor& a, const Tensor& b);

// ---- Comparisons: promote to the common dtype, return bool. ----
// (Deliberately no ==, < operators: on tensors they would read as identity tests.)

// eq / ne / lt / le / gt / ge compare elementwise (a == b, a != b, a < b, ...).
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);

// ---- Logical: any dtype, nonzero (and NaN) is true, bool result. ----

// logical_and / logical_or combine truth values elementwise.
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
// logical_not returns x == 0 as bool.
Tensor logical_not(const Tensor& x);

// where returns a where `condition` is true, else b. condition must be bool (throws
// otherwise); the three shapes broadcast together; a and b are promoted like add's operands.
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);

// clamp returns min(max(x, min), max). Either bound may be absent, not both (throws). If
// min > max every element becomes max. The dtype follows the scalar rule (int64 x with a
// floating bound -> float32); bool results throw. NaN propagates.
Tensor clamp(const Tensor& x, std::optional<Scalar> min = std::nullopt,
             std::optional<Scalar> max = std::nullopt);

// ---- In place (see the header comment for the broadcast and cast rules). ----

// add_ / sub_ / mul_ / div_ write self (op) other into self and return self.
Tensor add_(const Tensor& self, const Tensor& other);
Tensor sub_(const Tensor& self, const Tensor& other);
Tensor mul_(const Tensor& self, const Tensor& other);
Tensor div_(const Tensor& self, const Tensor& other);
// clamp_ clamps self in place (its result type must be self's dtype: an int64 self with a
// floating bound throws).
Tensor clamp_(const Tensor& self, std::optional<Scalar> min = std::nullopt,
              std::optional<Scalar> max = std::nullopt);
// copy_ writes src (broadcast to self's shape, cast to self's dtype with truncation) into
// self. src may alias or overlap self.
Tensor copy_(const Tensor& self, const Tensor& src);
// fill_ sets every element of self to value (cast to self's dtype; throws if the value
// overflows it, e.g. 1e30 into int64).
Tensor fill_(const Tensor& self, Scalar value);
// zero_ sets every element of self to 0.
Tensor zero_(const Tensor& self);

// ---- Scalar convenience overloads (not ops of their own: they call the tensor op with a
// 0-dim tensor of dtype ResultTypeWithScalar(x.dtype, s.kind())). ----

Tensor add(const Tensor& a, Scalar b);
Tensor sub(const Tensor& a, Scalar b);
Tensor mul(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, Scalar b);
Tensor pow(const Tensor& a, Scalar b);
Tensor maximum(const Tensor& a, Scalar b);
Tensor minimum(const Tensor& a, Scalar b);
Tensor atan2(const Tensor& a, Scalar b);
Tensor add(Scalar a, const Tensor& b);
Tensor sub(Scalar a, const Tensor& b);
Tensor mul(Scalar a, const Tensor& b);
Tensor div(Scalar a, const Tensor& b);
Tensor pow(Scalar a, const Tensor& b);
Tensor eq(const Tensor& a, Scalar b);
Tensor ne(const Tensor& a, Scalar b);
Tensor lt(const Tensor& a, Scalar b);
Tensor le(const Tensor& a, Scalar b);
Tensor gt(const Tensor& a, Scalar b);
Tensor ge(const Tensor& a, Scalar b);
// where with one scalar branch: where(mask, x, 0.0) keeps x's dtype (python-scalar rule).
Tensor where(const Tensor& condition, const Tensor& a, Scalar b);
Tensor where(const Tensor& condition, Scalar a, const Tensor& b);
// In place with a scalar: x.mul_(0.5). An int64 self with a floating scalar throws (the
// result type float32 cannot be cast back to int64).
Tensor add_(const Tensor& self, Scalar other);
Tensor sub_(const Tensor& self, Scalar other);
Tensor mul_(const Tensor& self, Scalar other);
Tensor div_(const Tensor& self, Scalar other);

// ---- Operators: + - * / on tensors and scalars; compound forms are the in-place ops. ----
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
// x += y writes into x's storage (add_), like torch's `x += y`.
Tensor& operator+=(Tensor& self, const Tensor& other);
Tensor& operator-=(Tensor& self, const Tensor& other);
Tensor& operator*=(Tensor& self, const Tensor& other);
Tensor& operator/=(Tensor& self, const Tensor& other);
Tensor& operator+=(Tensor& self, Scalar other);
Tensor& operator-=(Tensor& self, Scalar other);
Tensor& operator*=(Tensor& self, Scalar other);
Tensor& operator/=(Tensor& self, Scalar other);

// RegisterBinaryOps adds this family to the op table (called by RegisterAllOps).
void RegisterBinaryOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_BINARY_H_

// ft/ops/random.h
//
// The public random ops (rand_like, randn_like, bernoulli, dropout, randint) and the `*_like`
// factories (zeros_like, ones_like, full_like). Each dispatches like every op (dispatch.h);
// the base kernels are in kernels/random.h.
//
// Why the *_like factories are ops and not plain factories: under vmap, zeros_like(x) must
// follow x's batch (a batched x gives a batched result), so they go through the dispatcher.
// The random ops are registered with OpSchema::random set, so vmap's `randomness` setting
// ("error", "same", "different") applies to them.
//
// Randomness (NOTE: [Random counters] in kernels/random.h): an op that samples draws
// exactly numel() counters of its Generator, element i of the output (row-major) using
// counter offset + i. So the same seed and offset reproduce the same values, and drawing
// [6, 5] at once equals drawing [2, 5] then [4, 5]. A null Generator* means the calling
// thread's DefaultGenerator() (reseed it with ft::manual_seed). Invalid arguments throw
// before any counter is consumed.
//
// Dtypes: *_like keep x's dtype unless one is given; rand_like, randn_like, bernoulli and
// dropout require float32/float64 inputs and keep their dtype; randint returns int64.
//
// Example:
//   ft::Generator g(42);
//   Tensor noise = ft::randn_like(x, &g);               // x's shape and dtype
//   Tensor h = ft::dropout(x, 0.1, /*train=*/true, &g);  // zeros 10%, scales by 1/0.9
//   Tensor idx = ft::randint(0, 10, {3, 4}, &g);         // int64 in [0, 10)
#ifndef FT_OPS_RANDOM_H_
#define FT_OPS_RANDOM_H_

#include <cstdint>

#include "tensor/generator.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// zeros_like returns a new contiguous tensor of x's shape and dtype filled with 0 (false
// for bool), whatever x's strides.
Tensor zeros_like(const Tensor& x);
// zeros_like(x, dtype): the same with `dtype`.
Tensor zeros_like(const Tensor& x, DType dtype);

// ones_like returns a new contiguous tensor of x's shape and dtype filled with 1 (true).
Tensor ones_like(const Tensor& x);
// ones_like(x, dtype): the same with `dtype`.
Tensor ones_like(const Tensor& x, DType dtype);

// full_like returns a new contiguous tensor of x's shape and dtype filled with `value`,
// converted like PyTorch: a float into int64 truncates toward zero (2.7 -> 2, -2.7 -> -2),
// a nonzero into bool is true. Throws when the value does not fit: NaN, infinite or
// out-of-range floats into int64, finite floats beyond float32's range into float32.
Tensor full_like(const Tensor& x, Scalar value);
// full_like(x, value, dtype): the same with `dtype` (same conversion rules and errors).
Tensor full_like(const Tensor& x, Scalar value, DType dtype);

// rand_like returns uniform samples in [0, 1) with x's shape and floating dtype (float32
// samples have 24 random bits, float64 53; a float32 draw is the float64 draw of the same
// counters truncated). Throws for int64/bool x.
Tensor rand_like(const Tensor& x, Generator* gen = nullptr);

// randn_like returns standard normal samples with x's shape and floating dtype (Box-Muller
// over one Philox block per element). Throws for int64/bool x.
Tensor randn_like(const Tensor& x, Generator* gen = nullptr);

// bernoulli returns, for a floating tensor of probabilities p (any layout), a new tensor of
// p's shape and dtype whose element i is 1 with probability p[i] and 0 otherwise (1 exactly
// when uniform counter i < p[i]). Throws for non-floating p and for any p[i] outside
// [0, 1] (NaN included).
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);

// dropout zeroes each element of x with probability p and scales the survivors by
// 1 / (1 - p), in training mode. Returns x itself (same object, nothing drawn) when
// train is false or p == 0, and new zeros when p == 1 (nothing drawn). Otherwise it draws
// numel() counters and equals x * bernoulli(full_like(x, 1 - p)) * (1 / (1 - p)) on the
// same counters, element for element. Throws for non-floating x or p outside [0, 1]
// (checked in every mode).
Tensor dropout(const Tensor& x, double p, bool train = true, Generator* gen = nullptr);

// randint returns an int64 tensor of `shape` with values uniform in [low, high) (any
// int64 range, including the full one). Throws when high <= low or a size is negative.
Tensor randint(int64_t low, int64_t high, IntArrayRef shape, Generator* gen = nullptr);
// randint(high, shape): randint(0, high, shape).
Tensor randint(int64_t high, IntArrayRef shape, Generator* gen = nullptr);

// RegisterRandomOps adds this family to the op table (called by RegisterAllOps).
void RegisterRandomOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_RANDOM_H_

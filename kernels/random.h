// ft/kernels/random.h
//
// Base kernels of the random ops (rand_like, randn_like, bernoulli, dropout, randint) and of
// the `*_like` factories (zeros_like, ones_like, full_like). Dense tensors only; the public,
// dispatching versions are in ops/random.h.
//
// NOTE: [Random counters]
// Every random kernel that samples reserves exactly numel() counters of its Generator
// (`first = gen->Reserve(numel)`) and element i of the OUTPUT, in row-major logical order,
// is a pure function of counter `first + i` (Generator::Uniform / Normal / Philox). The
// layout of the input does not matter, only the output's logical index. Hence drawing a
// [B, N] tensor equals drawing [b1, N] then [b2, N] (b1 + b2 = B) from the same offset,
// which vmap(randomness="different", chunk_size=...) relies on. Validation happens before
// Reserve, so a call that throws leaves the generator untouched. A null Generator* means
// DefaultGenerator() (one per thread; ft::manual_seed reseeds it).
//
// Dtype rules: the *_like factories keep x's dtype (or take one); rand_like, randn_like,
// bernoulli and dropout need a floating input and keep its dtype; randint returns int64.
// Results are new contiguous tensors, except dropout in eval mode or with p == 0, which
// returns x itself (like PyTorch).
#ifndef FT_KERNELS_RANDOM_H_
#define FT_KERNELS_RANDOM_H_

#include <cstdint>

#include "tensor/generator.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ft::kernels {

// ---- *_like factories (not random) ----
Tensor zeros_like(const Tensor& x);
Tensor ones_like(const Tensor& x);
// full_like throws when `value` cannot be represented in the dtype (a NaN, infinite or
// out-of-range float into int64, a finite float beyond float32's range into float32).
Tensor full_like(const Tensor& x, Scalar value);
Tensor full_like_dtype(const Tensor& x, Scalar value, DType dtype);

// ---- random ops (registered with .random = true) ----
Tensor rand_like(const Tensor& x, Generator* gen);
Tensor randn_like(const Tensor& x, Generator* gen);
Tensor bernoulli(const Tensor& p, Generator* gen);
Tensor dropout(const Tensor& x, double p, bool train, Generator* gen);
Tensor randint(int64_t low, int64_t high, IntArrayRef shape, Generator* gen);

}  // namespace ft::kernels

#endif  // FT_KERNELS_RANDOM_H_

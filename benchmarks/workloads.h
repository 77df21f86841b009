// ft/benchmarks/workloads.h  (testonly)
//
// The functions several benchmark suites time, defined once so that their figures measure the
// same work: the 100-op chain of the per-op cost figures (the peer benchmark's
// chain(x) = 25 x (sin, *0.9, +0.1, *x), ../shared/bench), a 10-op chain, and random inputs.
// benchmarks/functorch_peer.py defines the same functions in PyTorch.
#ifndef FT_BENCHMARKS_WORKLOADS_H_
#define FT_BENCHMARKS_WORKLOADS_H_

#include <cstdint>

#include "ft.h"

namespace ft::bench {

// Chain100: 100 elementwise ops on x.
inline Tensor Chain100(const Tensor& x) {
  Tensor y = x;
  for (int i = 0; i < 25; ++i) {
    y = sin(y);
    y = y * 0.9;
    y = y + 0.1;
    y = y * x;
  }
  return y;
}

// Chain10: ten elementwise ops on x (the elementwise and jvp figures on 1e6 elements).
inline Tensor Chain10(const Tensor& x) {
  Tensor y = sin(x);
  y = y * 0.9;
  y = y + 0.1;
  y = tanh(y);
  y = y * x;
  y = exp(y);
  y = y - 1.0;
  y = abs(y);
  y = sqrt(y);
  return neg(y);
}

// RandomTensor: float32 uniform in [offset, offset + 1) from a fixed seed.
inline Tensor RandomTensor(IntArrayRef shape, uint64_t seed, double offset = 0.0) {
  Generator g(seed);
  return rand_like(zeros(shape), &g) + offset;
}

}  // namespace ft::bench

#endif  // FT_BENCHMARKS_WORKLOADS_H_

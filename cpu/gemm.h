// ft/cpu/gemm.h  (internal: //kernels' products call it)
//
// GEMM on the vector unit ActiveCpuCapability() names: c = a b for float and double
// matrices, one thread. Eigen 3.4's GEMM and cpu/small_gemm.h are compiled once per
// capability (gemm_sse2.cc, gemm_avx2.cc, gemm_avx512.cc, each with Eigen's namespace renamed
// so its instantiations are symbols of their own) and gemm.cc, baseline code, picks the table
// on every call, as //cpu:vecmath does. The default build's Eigen is SSE2 code; at AVX-512
// the same source runs 4.9x faster on 1024 x 1024 float32 (docs/performance.md, "GEMM").
//
// Which kernel runs: products into a contiguous C of at most kSmallGemmMaxWork multiply-adds,
// or whose B has at most kSmallGemmMaxPanel elements (tall, narrow products), go to SmallGemm
// (AVX2's copy on AVX-512 machines: 256-bit packets fit the small widths), the rest to
// Eigen's blocked GEMM (with FMA at AVX2 and AVX-512).
//
// Results: deterministic for a given capability and shape; they differ between capabilities
// by rounding (FMA, block sizes), except SmallGemm's, which are the same k-ordered sums of
// rounded products at every capability.
//
// Invariants: a is m x k with element (i, kk) at a[i * ars + kk * acs], b is k x n with
// element (kk, j) at b[kk * brs + j * bcs] (any strides; one of each pair equal to 1 is the
// fast case, others are copied first), c is m x n row-major with row stride ldc >= n and
// aliases neither operand. m, k, n >= 0; k == 0 gives zeros.
//
// Example:
//   ft::kernels::internal::Gemm(2, 3, 2, a, 3, 1, b, 2, 1, c, 2);  // row-major 2x3 times 3x2
#ifndef FT_CPU_GEMM_H_
#define FT_CPU_GEMM_H_

#include <cstdint>

#include "cpu/cpu_capability.h"

namespace ft::kernels::internal {

void Gemm(int64_t m, int64_t k, int64_t n, const float* a, int64_t ars, int64_t acs,
          const float* b, int64_t brs, int64_t bcs, float* c, int64_t ldc);
void Gemm(int64_t m, int64_t k, int64_t n, const double* a, int64_t ars, int64_t acs,
          const double* b, int64_t brs, int64_t bcs, double* c, int64_t ldc);

// How many Gemm calls ran on each capability since the process began: tests use it to prove
// that products took the vector unit they set, not the baseline code.
int64_t GemmCallCount(CpuCapability capability);

}  // namespace ft::kernels::internal

#endif  // FT_CPU_GEMM_H_

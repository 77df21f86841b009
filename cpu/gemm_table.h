// ft/cpu/gemm_table.h  (internal to //cpu:gemm)
//
// One table of GEMM functions per capability, each in a translation unit compiled for its
// vector unit (gemm_sse2.cc, gemm_avx2.cc, gemm_avx512.cc); gemm.cc, baseline code, picks a
// table at run time. Only the tables cross the boundary, so no AVX instruction can reach a
// machine without AVX. The arguments are gemm.h's Gemm's.
#ifndef FT_CPU_GEMM_TABLE_H_
#define FT_CPU_GEMM_TABLE_H_

#include <cstdint>

namespace ft::kernels::internal {

template <typename T>
using GemmFn = void (*)(int64_t m, int64_t k, int64_t n, const T* a, int64_t ars, int64_t acs,
                        const T* b, int64_t brs, int64_t bcs, T* c, int64_t ldc);

struct GemmTable {
  GemmFn<float> f32;
  GemmFn<double> f64;
};

extern const GemmTable kSse2GemmTable;
extern const GemmTable kAvx2GemmTable;
extern const GemmTable kAvx512GemmTable;

// The AVX2 file's small-product kernels, which the AVX-512 table reuses.
void SmallGemmAvx2(int64_t m, int64_t k, int64_t n, const float* a, int64_t ars, int64_t acs,
                   const float* b, int64_t brs, int64_t bcs, float* c);
void SmallGemmAvx2(int64_t m, int64_t k, int64_t n, const double* a, int64_t ars,
                   int64_t acs, const double* b, int64_t brs, int64_t bcs, double* c);

}  // namespace ft::kernels::internal

#endif  // FT_CPU_GEMM_TABLE_H_

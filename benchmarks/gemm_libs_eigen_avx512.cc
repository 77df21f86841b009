// Eigen's GEMM for AVX-512 (-mavx512f -mavx512dq -mfma, benchmarks/BUILD); runs only where
// the CPU has them (gemm_libs.cc checks). The rename keeps these instantiations apart.
// GCC 12's AVX-512 intrinsics pass an undefined merge source (_mm512_undefined_ps) to the
// masked forms Eigen's packet ops use, which -O2 reports as (maybe-)uninitialized. Clang
// does not, and does not know the maybe- option.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#define Eigen FtEigenAvx512
#define FtEigenNamespace FtEigenAvx512
#define FT_GEMM_LIBS_NAME(dtype) EigenGemmAvx512##dtype
#include "benchmarks/gemm_libs_eigen-inl.h"

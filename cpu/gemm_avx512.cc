// The avx512 GEMM table, compiled with -mavx512f -mavx512dq -mfma (tensor/BUILD); nothing
// here runs unless ActiveCpuCapability() is avx512 (gemm.cc). Small products with narrow or
// odd widths use the avx2 file's SmallGemm: 256-bit packets fill them where 512-bit ones
// would leave most columns to the scalar tail; wide ones (16, 24, 32, ... floats) use this
// file's, with half the tiles (SmallProduct in gemm_isa-inl.h). The bits are the same.
// GCC 12's AVX-512 intrinsics pass an undefined merge source (_mm512_undefined_ps) to the
// masked forms Eigen's packet ops use, which -O2 reports as (maybe-)uninitialized. Clang
// does not, and does not know the maybe- option.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#define Eigen FtEigenAvx512
#define FT_GEMM_ISA avx512
#define FT_GEMM_TABLE kAvx512GemmTable
#define FT_GEMM_OWN_SMALL 0
#include "cpu/gemm_isa-inl.h"

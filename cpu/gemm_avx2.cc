// The avx2 GEMM table, compiled with -mavx2 -mfma (tensor/BUILD); nothing here runs unless
// ActiveCpuCapability() is avx2 or avx512 (gemm.cc). It also exports its SmallGemm, which
// the avx512 table uses.
#define Eigen FtEigenAvx2
#define FT_GEMM_ISA avx2
#define FT_GEMM_TABLE kAvx2GemmTable
#define FT_GEMM_OWN_SMALL 1
#define FT_GEMM_EXPORT_SMALL
#include "cpu/gemm_isa-inl.h"

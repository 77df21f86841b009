// Eigen's GEMM for AVX2 + FMA (-mavx2 -mfma, benchmarks/BUILD); runs only where the CPU has
// them (gemm_libs.cc checks). The rename keeps these instantiations apart from the SSE2 ones.
#define Eigen FtEigenAvx2
#define FtEigenNamespace FtEigenAvx2
#define FT_GEMM_LIBS_NAME(dtype) EigenGemmAvx2##dtype
#include "benchmarks/gemm_libs_eigen-inl.h"

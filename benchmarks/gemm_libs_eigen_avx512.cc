// Eigen's GEMM for AVX-512 (-mavx512f -mavx512dq -mfma, benchmarks/BUILD); runs only where
// the CPU has them (gemm_libs.cc checks). The rename keeps these instantiations apart.
#define Eigen FtEigenAvx512
#define FtEigenNamespace FtEigenAvx512
#define FT_GEMM_LIBS_NAME(dtype) EigenGemmAvx512##dtype
#include "benchmarks/gemm_libs_eigen-inl.h"

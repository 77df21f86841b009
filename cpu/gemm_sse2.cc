// The sse2 GEMM table, compiled for baseline x86-64 (tensor/BUILD). Eigen keeps its own
// namespace here: these instantiations are the same code as every other baseline file's.
#define FT_GEMM_ISA sse2
#define FT_GEMM_TABLE kSse2GemmTable
#define FT_GEMM_OWN_SMALL 1
#include "cpu/gemm_isa-inl.h"

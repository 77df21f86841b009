// The avx2 table of vecmath functions, compiled with -mavx2 -mfma (tensor/BUILD).
// Nothing here runs unless ActiveCpuCapability() is avx2 (vecmath.cc).
#include <immintrin.h>
#include <sleef.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "tensor/vecmath_table.h"

namespace ft::vecmath::internal {
namespace {

#define FT_VM_VF __m256
#define FT_VM_VD __m256d
#define FT_SLEEF_F(fn, ulp) Sleef_##fn##f8_##ulp##avx2
#define FT_SLEEF_D(fn, ulp) Sleef_##fn##d4_##ulp##avx2
#define FT_VM_SQRT_F(v) _mm256_sqrt_ps(v)
#define FT_VM_SQRT_D(v) _mm256_sqrt_pd(v)
#include "tensor/vecmath_isa-inl.h"

}  // namespace

const Table kAvx2Table = kIsaTable;

}  // namespace ft::vecmath::internal

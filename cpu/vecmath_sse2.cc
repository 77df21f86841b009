// The sse2 table of vecmath functions, compiled with baseline x86-64 (no extra flags).
// Nothing here runs unless ActiveCpuCapability() is sse2 (vecmath.cc).
#include <immintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "cpu/vecmath_table.h"

namespace ft::vecmath::internal {
namespace {

#define FT_VM_VF __m128
#define FT_VM_VD __m128d
#define FT_SLEEF_F(fn, ulp) Sleef_##fn##f4_##ulp##sse2
#define FT_SLEEF_D(fn, ulp) Sleef_##fn##d2_##ulp##sse2
#define FT_VM_SQRT_F(v) _mm_sqrt_ps(v)
#define FT_VM_SQRT_D(v) _mm_sqrt_pd(v)
#include "cpu/vecmath_isa-inl.h"

}  // namespace

const Table kSse2Table = kIsaTable;

}  // namespace ft::vecmath::internal

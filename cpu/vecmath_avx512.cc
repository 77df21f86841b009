// The avx512 table of vecmath functions, compiled with -mavx512f -mavx512dq (tensor/BUILD).
// Nothing here runs unless ActiveCpuCapability() is avx512 (vecmath.cc).
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

#define FT_VM_VF __m512
#define FT_VM_VD __m512d
#define FT_SLEEF_F(fn, ulp) Sleef_##fn##f16_##ulp##avx512f
#define FT_SLEEF_D(fn, ulp) Sleef_##fn##d8_##ulp##avx512f
// The zero-masked forms with every lane selected: GCC 12's _mm512_sqrt_ps passes
// _mm512_undefined_ps() as the unused merge source, which -O2 reports as maybe-uninitialized.
#define FT_VM_SQRT_F(v) _mm512_maskz_sqrt_ps(static_cast<__mmask16>(0xFFFF), v)
#define FT_VM_SQRT_D(v) _mm512_maskz_sqrt_pd(static_cast<__mmask8>(0xFF), v)
// The first k < lanes elements (LoadHead / StoreHead in vecmath_isa-inl.h).
#define FT_VM_HEAD_MASK(type, k) static_cast<type>((1u << static_cast<unsigned>(k)) - 1u)
#define FT_VM_LOAD_HEAD_F(p, k) _mm512_maskz_loadu_ps(FT_VM_HEAD_MASK(__mmask16, k), p)
#define FT_VM_LOAD_HEAD_D(p, k) _mm512_maskz_loadu_pd(FT_VM_HEAD_MASK(__mmask8, k), p)
#define FT_VM_STORE_HEAD_F(p, k, v) _mm512_mask_storeu_ps(p, FT_VM_HEAD_MASK(__mmask16, k), v)
#define FT_VM_STORE_HEAD_D(p, k, v) _mm512_mask_storeu_pd(p, FT_VM_HEAD_MASK(__mmask8, k), v)
#include "cpu/vecmath_isa-inl.h"

}  // namespace

const Table kAvx512Table = kIsaTable;

}  // namespace ft::vecmath::internal

// The avx2 table of vecmath functions, compiled with -mavx2 -mfma (tensor/BUILD).
// Nothing here runs unless ActiveCpuCapability() is avx2 (vecmath.cc).
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

#define FT_VM_VF __m256
#define FT_VM_VD __m256d
#define FT_SLEEF_F(fn, ulp) Sleef_##fn##f8_##ulp##avx2
#define FT_SLEEF_D(fn, ulp) Sleef_##fn##d4_##ulp##avx2
#define FT_VM_SQRT_F(v) _mm256_sqrt_ps(v)
#define FT_VM_SQRT_D(v) _mm256_sqrt_pd(v)
// The first k < lanes elements (LoadHead / StoreHead in vecmath_isa-inl.h): lanes below k
// selected by a comparison with the lane numbers.
inline __m256i HeadMask32(int64_t k) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(k)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline __m256i HeadMask64(int64_t k) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(k), _mm256_setr_epi64x(0, 1, 2, 3));
}
#define FT_VM_LOAD_HEAD_F(p, k) _mm256_maskload_ps(p, HeadMask32(k))
#define FT_VM_LOAD_HEAD_D(p, k) _mm256_maskload_pd(p, HeadMask64(k))
#define FT_VM_STORE_HEAD_F(p, k, v) _mm256_maskstore_ps(p, HeadMask32(k), v)
#define FT_VM_STORE_HEAD_D(p, k, v) _mm256_maskstore_pd(p, HeadMask64(k), v)
#include "cpu/vecmath_isa-inl.h"

}  // namespace

const Table kAvx2Table = kIsaTable;

}  // namespace ft::vecmath::internal

#include "cpu/gemm.h"

#include <cstdint>

#include "cpu/capability_counter.h"
#include "cpu/gemm_table.h"

namespace ft::kernels::internal {
namespace {

struct GemmCalls {};  // CapabilityCounter's tag for this family
using Counter = ::ft::internal::CapabilityCounter<GemmCalls>;

// The table of the active capability, counting the call.
const GemmTable& Active() {
  const CpuCapability capability = ActiveCpuCapability();
  Counter::Count(capability);
  switch (capability) {
    case CpuCapability::kAvx512:
      return kAvx512GemmTable;
    case CpuCapability::kAvx2:
      return kAvx2GemmTable;
    case CpuCapability::kSse2:
      break;
  }
  return kSse2GemmTable;
}

}  // namespace

void Gemm(int64_t m, int64_t k, int64_t n, const float* a, int64_t ars, int64_t acs,
          const float* b, int64_t brs, int64_t bcs, float* c, int64_t ldc) {
  Active().f32(m, k, n, a, ars, acs, b, brs, bcs, c, ldc);
}

void Gemm(int64_t m, int64_t k, int64_t n, const double* a, int64_t ars, int64_t acs,
          const double* b, int64_t brs, int64_t bcs, double* c, int64_t ldc) {
  Active().f64(m, k, n, a, ars, acs, b, brs, bcs, c, ldc);
}

int64_t GemmCallCount(CpuCapability capability) { return Counter::Total(capability); }

}  // namespace ft::kernels::internal

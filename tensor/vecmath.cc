#include "tensor/vecmath.h"

#include <atomic>

#include "tensor/vecmath_table.h"

namespace ft::vecmath {
namespace {

std::atomic<int64_t> g_calls[3];

// The table of the active capability, counting the call.
const internal::Table& Active() {
  const CpuCapability capability = ActiveCpuCapability();
  g_calls[static_cast<int>(capability)].fetch_add(1, std::memory_order_relaxed);
  switch (capability) {
    case CpuCapability::kAvx512:
      return internal::kAvx512Table;
    case CpuCapability::kAvx2:
      return internal::kAvx2Table;
    case CpuCapability::kSse2:
      break;
  }
  return internal::kSse2Table;
}

}  // namespace

absl::string_view FnName(Fn fn) {
  static constexpr absl::string_view kNames[kNumFns] = {
      "exp", "expm1", "log",     "log1p", "sin", "cos",  "tan",
      "tanh", "sigmoid", "sqrt", "rsqrt", "erf", "erfc", "lgamma"};
  return kNames[static_cast<int>(fn)];
}

void Apply(Fn fn, const float* in, float* out, int64_t n) {
  if (n > 0) Active().f32[static_cast<int>(fn)](in, out, n);
}
void Apply(Fn fn, const double* in, double* out, int64_t n) {
  if (n > 0) Active().f64[static_cast<int>(fn)](in, out, n);
}
void Pow(const float* a, const float* b, float* out, int64_t n) {
  if (n > 0) Active().pow_f32(a, b, out, n);
}
void Pow(const double* a, const double* b, double* out, int64_t n) {
  if (n > 0) Active().pow_f64(a, b, out, n);
}

float Sum(const float* x, int64_t n) { return n > 0 ? Active().sum_f32(x, n) : 0.0f; }
double Sum(const double* x, int64_t n) { return n > 0 ? Active().sum_f64(x, n) : 0.0; }

int64_t CallCount(CpuCapability capability) {
  return g_calls[static_cast<int>(capability)].load(std::memory_order_relaxed);
}

}  // namespace ft::vecmath

#include "tensor/vecmath.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <vector>

#include "tensor/vecmath_table.h"

namespace ft::vecmath {
namespace {

// The call counters are per thread: ft::jit's fused steps call Apply once per 256-element
// chunk on every intra-op thread, and one shared counter would bounce its cache line between
// the cores on each call. Each thread's counters are written only by that thread (a plain
// load and store, no locked instruction) and read by CallCount under the registry's lock; a
// thread that exits folds its counts into `retired`.
struct Counters {
  std::atomic<int64_t> calls[3] = {};
};

struct Registry {
  std::mutex mu;
  std::vector<Counters*> live;  // guarded by mu
  int64_t retired[3] = {};      // guarded by mu
};

Registry& GlobalRegistry() {
  static auto* registry = new Registry();  // never destroyed: threads may exit after main
  return *registry;
}

class ThreadCounters {
 public:
  ThreadCounters() {
    std::lock_guard<std::mutex> lock(GlobalRegistry().mu);
    GlobalRegistry().live.push_back(&counters_);
  }
  ~ThreadCounters() {
    Registry& r = GlobalRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (int i = 0; i < 3; ++i) r.retired[i] += counters_.calls[i].load(std::memory_order_relaxed);
    r.live.erase(std::find(r.live.begin(), r.live.end(), &counters_));
  }
  ThreadCounters(const ThreadCounters&) = delete;
  ThreadCounters& operator=(const ThreadCounters&) = delete;

  void Count(CpuCapability c) {
    std::atomic<int64_t>& n = counters_.calls[static_cast<int>(c)];
    n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

 private:
  Counters counters_;
};

// The table of the active capability, counting the call.
const internal::Table& Active() {
  const CpuCapability capability = ActiveCpuCapability();
  thread_local ThreadCounters counters;
  counters.Count(capability);
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

void SumRows(const float* x, int64_t rows, int64_t n, float* out) {
  if (rows <= 0) return;
  if (n <= 0) {
    std::fill_n(out, rows, 0.0f);
    return;
  }
  Active().sum_rows_f32(x, rows, n, out);
}
void SumRows(const double* x, int64_t rows, int64_t n, double* out) {
  if (rows <= 0) return;
  if (n <= 0) {
    std::fill_n(out, rows, 0.0);
    return;
  }
  Active().sum_rows_f64(x, rows, n, out);
}

// n < 1 has no extreme: NaN rather than a read of x[0].
float Max(const float* x, int64_t n) {
  return n > 0 ? Active().extreme_f32[0](x, n) : std::numeric_limits<float>::quiet_NaN();
}
double Max(const double* x, int64_t n) {
  return n > 0 ? Active().extreme_f64[0](x, n) : std::numeric_limits<double>::quiet_NaN();
}
float Min(const float* x, int64_t n) {
  return n > 0 ? Active().extreme_f32[1](x, n) : std::numeric_limits<float>::quiet_NaN();
}
double Min(const double* x, int64_t n) {
  return n > 0 ? Active().extreme_f64[1](x, n) : std::numeric_limits<double>::quiet_NaN();
}

int64_t CallCount(CpuCapability capability) {
  const int i = static_cast<int>(capability);
  Registry& r = GlobalRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  int64_t total = r.retired[i];
  for (const Counters* c : r.live) total += c->calls[i].load(std::memory_order_relaxed);
  return total;
}

}  // namespace ft::vecmath

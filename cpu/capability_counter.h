// ft/cpu/capability_counter.h  (internal: //cpu:vecmath and //cpu:gemm)
//
// CapabilityCounter<Family> counts a kernel family's calls per CPU capability, so tests can
// prove that a kernel took the vector path of the level they set and not a fallback.
//
// The counts are per thread: ft::jit's fused steps call vecmath once per 256-element chunk on
// every intra-op thread, and one shared counter would bounce its cache line between the cores
// on each call. Each thread's counts are written only by that thread (a plain load and store,
// no locked instruction) and read by Total under the registry's lock; a thread that exits
// folds its counts into `retired`. Family is a tag type: each family has its own registry.
//
// Example:
//   struct GemmCalls {};
//   CapabilityCounter<GemmCalls>::Count(ActiveCpuCapability());
//   int64_t n = CapabilityCounter<GemmCalls>::Total(CpuCapability::kAvx2);
#ifndef FT_CPU_CAPABILITY_COUNTER_H_
#define FT_CPU_CAPABILITY_COUNTER_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "cpu/cpu_capability.h"

namespace ft::internal {

template <typename Family>
class CapabilityCounter {
 public:
  static void Count(CpuCapability capability) {
    thread_local ThreadCounts counts;
    std::atomic<int64_t>& n = counts.calls[static_cast<int>(capability)];
    n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  static int64_t Total(CpuCapability capability) {
    const int i = static_cast<int>(capability);
    Registry& r = GlobalRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    int64_t total = r.retired[i];
    for (const ThreadCounts* c : r.live) total += c->calls[i].load(std::memory_order_relaxed);
    return total;
  }

 private:
  static constexpr int kLevels = static_cast<int>(CpuCapability::kAvx512) + 1;

  struct ThreadCounts;
  struct Registry {
    std::mutex mu;
    std::vector<ThreadCounts*> live;  // guarded by mu
    int64_t retired[kLevels] = {};    // guarded by mu
  };

  static Registry& GlobalRegistry() {
    static auto* registry = new Registry();  // never destroyed: threads may exit after main
    return *registry;
  }

  struct ThreadCounts {
    std::atomic<int64_t> calls[kLevels] = {};
    ThreadCounts() {
      std::lock_guard<std::mutex> lock(GlobalRegistry().mu);
      GlobalRegistry().live.push_back(this);
    }
    ~ThreadCounts() {
      Registry& r = GlobalRegistry();
      std::lock_guard<std::mutex> lock(r.mu);
      for (int i = 0; i < kLevels; ++i) r.retired[i] += calls[i].load(std::memory_order_relaxed);
      r.live.erase(std::find(r.live.begin(), r.live.end(), this));
    }
    ThreadCounts(const ThreadCounts&) = delete;
    ThreadCounts& operator=(const ThreadCounts&) = delete;
  };
};

}  // namespace ft::internal

#endif  // FT_CPU_CAPABILITY_COUNTER_H_

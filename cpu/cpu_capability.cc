#include "cpu/cpu_capability.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "tensor/error.h"

namespace ft {
namespace {

// -1: not chosen yet (the environment is read on first use).
std::atomic<int> g_active{-1};

CpuCapability DetectMachine() {
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's CPU model checks CPUID and XGETBV (the OS saves the wider registers).
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
    return CpuCapability::kAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return CpuCapability::kAvx2;
  }
#endif
  return CpuCapability::kSse2;
}

CpuCapability FromEnvironment() {
  const CpuCapability machine = MachineCpuCapability();
  const char* value = std::getenv("FT_CPU_CAPABILITY");
  if (value == nullptr || *value == '\0') return machine;
  const std::string name(value);
  for (CpuCapability c : {CpuCapability::kSse2, CpuCapability::kAvx2, CpuCapability::kAvx512}) {
    if (name != CpuCapabilityName(c)) continue;
    if (c > machine) {
      ThrowError("FT_CPU_CAPABILITY=", name, ": this CPU supports at most ",
                 CpuCapabilityName(machine));
    }
    return c;
  }
  ThrowError("FT_CPU_CAPABILITY=", name, ": unknown capability; expected sse2, avx2 or avx512");
}

}  // namespace

CpuCapability MachineCpuCapability() {
  static const CpuCapability machine = DetectMachine();
  return machine;
}

std::vector<CpuCapability> SupportedCpuCapabilities() {
  std::vector<CpuCapability> out;
  for (int c = 0; c <= static_cast<int>(MachineCpuCapability()); ++c) {
    out.push_back(static_cast<CpuCapability>(c));
  }
  return out;
}

CpuCapability ActiveCpuCapability() {
  int active = g_active.load(std::memory_order_relaxed);
  if (active < 0) {
    // Two threads may both read the environment; they store the same value.
    active = static_cast<int>(FromEnvironment());
    int expected = -1;
    if (!g_active.compare_exchange_strong(expected, active, std::memory_order_relaxed)) {
      active = expected;  // SetCpuCapability won the race
    }
  }
  return static_cast<CpuCapability>(active);
}

void SetCpuCapability(CpuCapability capability) {
  if (capability > MachineCpuCapability()) {
    ThrowError("SetCpuCapability(", CpuCapabilityName(capability),
               "): this CPU supports at most ", CpuCapabilityName(MachineCpuCapability()));
  }
  g_active.store(static_cast<int>(capability), std::memory_order_relaxed);
}

absl::string_view CpuCapabilityName(CpuCapability capability) {
  switch (capability) {
    case CpuCapability::kSse2:
      return "sse2";
    case CpuCapability::kAvx2:
      return "avx2";
    case CpuCapability::kAvx512:
      return "avx512";
  }
  return "unknown";
}

}  // namespace ft

// ft/cpu/cpu_capability.h
//
// Which x86 vector unit ft's vectorized kernels run on, chosen at run time, once per
// process, like PyTorch's ATEN_CPU_CAPABILITY. The library is built for baseline x86-64
// (SSE2) and also carries AVX2 (+FMA) and AVX-512 (F + DQ) code for its vector math
// (cpu/vecmath.h); the active capability picks which of them runs, so one binary uses the
// widest unit of whatever machine it lands on.
//
// Choice, in order:
//   1. SetCpuCapability(c), if called (tests run every level the machine has);
//   2. the environment: FT_CPU_CAPABILITY=sse2|avx2|avx512 lowers the level (reproducing
//      another machine's results, or measuring the gain of a wider unit);
//   3. the machine's widest: MachineCpuCapability() (CPUID and the OS's saved-state bits,
//      so a kernel that does not save AVX-512 registers reports avx2).
// A level the machine lacks, or an unknown name, is an ft::Error: silently running another
// level would change results without saying so.
//
// Invariant: results are deterministic for a given capability (and thread count where a
// kernel reduces). Different capabilities may differ in the last bits of transcendental
// functions (FMA or not); every level meets the accuracy docs/api.md states.
//
// Example:
//   ft::SetCpuCapability(ft::CpuCapability::kAvx2);   // or FT_CPU_CAPABILITY=avx2
//   ft::Tensor y = ft::exp(x);                        // runs SLEEF's AVX2 exp
//   std::string name(ft::CpuCapabilityName(ft::ActiveCpuCapability()));  // "avx2"
#ifndef FT_CPU_CPU_CAPABILITY_H_
#define FT_CPU_CPU_CAPABILITY_H_

#include <vector>

#include "absl/strings/string_view.h"

namespace ft {

// Ordered: a higher value is a wider unit that implies the lower ones.
enum class CpuCapability : int {
  kSse2 = 0,    // baseline x86-64: 128-bit vectors, no FMA
  kAvx2 = 1,    // 256-bit vectors with FMA (Haswell, Zen)
  kAvx512 = 2,  // 512-bit vectors, AVX-512 F and DQ (Skylake-SP, Zen 4)
};

// The widest capability this CPU and OS support.
CpuCapability MachineCpuCapability();

// Every capability this machine can run, lowest first (what tests iterate over).
std::vector<CpuCapability> SupportedCpuCapabilities();

// The capability kernels use now (see the order above). Throws an ft::Error naming the
// variable when FT_CPU_CAPABILITY is unknown or above the machine's.
CpuCapability ActiveCpuCapability();

// Overrides the environment for the whole process. Throws an ft::Error if the machine lacks
// `capability`. Kernels running on other threads at the time finish on the level they began.
void SetCpuCapability(CpuCapability capability);

// "sse2", "avx2" or "avx512".
absl::string_view CpuCapabilityName(CpuCapability capability);

}  // namespace ft

#endif  // FT_CPU_CPU_CAPABILITY_H_

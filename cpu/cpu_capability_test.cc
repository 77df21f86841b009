#include "cpu/cpu_capability.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "tensor/error.h"

namespace ft {
namespace {

template <typename F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// First in this binary: nothing has chosen a capability yet, so the environment is read on
// the call below (and re-read while it is invalid).
TEST(CpuCapability, TheEnvironmentChoosesOnFirstUse) {
  const CpuCapability machine = MachineCpuCapability();
  setenv("FT_CPU_CAPABILITY", "avx9", 1);
  EXPECT_NE(ErrorOf([] { ActiveCpuCapability(); }).find(
                "FT_CPU_CAPABILITY=avx9: unknown capability; expected sse2, avx2 or avx512"),
            std::string::npos);
  if (machine < CpuCapability::kAvx512) {
    setenv("FT_CPU_CAPABILITY", "avx512", 1);
    EXPECT_NE(ErrorOf([] { ActiveCpuCapability(); }).find("this CPU supports at most"),
              std::string::npos);
  }
  setenv("FT_CPU_CAPABILITY", "sse2", 1);
  EXPECT_EQ(ActiveCpuCapability(), CpuCapability::kSse2);
  setenv("FT_CPU_CAPABILITY", "avx2", 1);  // read once: no effect now
  EXPECT_EQ(ActiveCpuCapability(), CpuCapability::kSse2);
  unsetenv("FT_CPU_CAPABILITY");
  SetCpuCapability(machine);
  EXPECT_EQ(ActiveCpuCapability(), machine);
}

TEST(CpuCapability, LevelsAreOrderedAndNamed) {
  const std::vector<CpuCapability> levels = SupportedCpuCapabilities();
  ASSERT_FALSE(levels.empty());
  EXPECT_EQ(levels.front(), CpuCapability::kSse2);
  EXPECT_EQ(levels.back(), MachineCpuCapability());
  EXPECT_EQ(CpuCapabilityName(CpuCapability::kSse2), "sse2");
  EXPECT_EQ(CpuCapabilityName(CpuCapability::kAvx2), "avx2");
  EXPECT_EQ(CpuCapabilityName(CpuCapability::kAvx512), "avx512");
#if defined(__x86_64__)
  // Every x86-64 CPU has SSE2; the machines this project runs on have AVX2 at least.
  EXPECT_GE(MachineCpuCapability(), CpuCapability::kSse2);
#endif
}

TEST(CpuCapability, SettingALevelTheMachineLacksIsAnError) {
  if (MachineCpuCapability() == CpuCapability::kAvx512) GTEST_SKIP() << "no level above";
  EXPECT_NE(ErrorOf([] { SetCpuCapability(CpuCapability::kAvx512); })
                .find("SetCpuCapability(avx512): this CPU supports at most"),
            std::string::npos);
  EXPECT_EQ(ActiveCpuCapability(), MachineCpuCapability());
}

}  // namespace
}  // namespace ft

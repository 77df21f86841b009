#include "tensor/generator.h"

#include <cmath>

namespace ft {

std::array<uint32_t, 4> Generator::Philox(uint64_t key, uint64_t counter) {
  constexpr uint32_t kMul0 = 0xD2511F53u;
  constexpr uint32_t kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u;
  constexpr uint32_t kWeyl1 = 0xBB67AE85u;
  uint32_t c[4] = {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0u,
                   0u};
  uint32_t k[2] = {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kMul1) * c[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c[0] = hi1 ^ c[1] ^ k[0];
    c[1] = lo1;
    c[2] = hi0 ^ c[3] ^ k[1];
    c[3] = lo0;
    k[0] += kWeyl0;
    k[1] += kWeyl1;
  }
  return {c[0], c[1], c[2], c[3]};
}

double Generator::Uniform(uint64_t seed, uint64_t index) {
  const std::array<uint32_t, 4> r = Philox(seed, index);
  const uint64_t bits = (static_cast<uint64_t>(r[0]) << 21) ^ r[1];
  return static_cast<double>(bits & ((uint64_t{1} << 53) - 1)) * 0x1.0p-53;
}

double Generator::Normal(uint64_t seed, uint64_t index) {
  const std::array<uint32_t, 4> r = Philox(seed, index);
  const uint64_t b0 = (static_cast<uint64_t>(r[0]) << 21) ^ r[1];
  const uint64_t b1 = (static_cast<uint64_t>(r[2]) << 21) ^ r[3];
  // u1 in (0, 1] so the log is finite.
  const double u1 = (static_cast<double>(b0 & ((uint64_t{1} << 53) - 1)) + 1.0) * 0x1.0p-53;
  const double u2 = static_cast<double>(b1 & ((uint64_t{1} << 53) - 1)) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

Generator& DefaultGenerator() {
  thread_local Generator generator(0);
  return generator;
}

void manual_seed(uint64_t seed) { DefaultGenerator().manual_seed(seed); }

}  // namespace ft

// Tests for tensor/generator.h: Philox4x32-10 against the Random123 known-answer vectors,
// the uniform and normal transforms (exact bits and moments), offset bookkeeping, and the
// per-thread default generator.
#include "tensor/generator.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace ft {
namespace {

using Words = std::array<uint32_t, 4>;

// RefPhilox is an independent, textbook Philox4x32-10 over a full 128-bit counter, written
// from the Random123 paper: 10 rounds of (two 32x32->64 multiplies, a Feistel-like
// permutation, key xor), with the Weyl key schedule applied before every round but the
// first.
Words RefPhilox(Words ctr, std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += 0x9E3779B9u;
      key[1] += 0xBB67AE85u;
    }
    const uint64_t prod0 = uint64_t{0xD2511F53u} * ctr[0];
    const uint64_t prod1 = uint64_t{0xCD9E8D57u} * ctr[2];
    ctr = {static_cast<uint32_t>(prod1 >> 32) ^ ctr[1] ^ key[0], static_cast<uint32_t>(prod1),
           static_cast<uint32_t>(prod0 >> 32) ^ ctr[3] ^ key[1], static_cast<uint32_t>(prod0)};
  }
  return ctr;
}

// Ours packs the 64-bit counter into words 0 (low) and 1 (high), words 2 and 3 are zero; the
// 64-bit key into key words 0 (low) and 1 (high).
Words RefOurs(uint64_t key, uint64_t counter) {
  return RefPhilox({static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0, 0},
                   {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)});
}

TEST(Philox, ReferenceMatchesRandom123KnownAnswers) {
  // kat_vectors from Random123 (philox4x32, 10 rounds): counter, key -> output.
  EXPECT_EQ(RefPhilox({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(
      RefPhilox({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
      (Words{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(
      RefPhilox({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
      (Words{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Philox, KnownAnswerAllZeros) {
  EXPECT_EQ(Generator::Philox(0, 0), (Words{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
}

TEST(Philox, MatchesTheReferenceForManyKeysAndCounters) {
  const uint64_t keys[] = {0,           1, 42, 0xffffffffu, uint64_t{1} << 32, 0xa4093822299f31d0u,
                           ~uint64_t{0}};
  const uint64_t counters[] = {
      0, 1, 2, 3, 1000, 0xffffffffu, uint64_t{1} << 32, 0x85a308d3243f6a88u, ~uint64_t{0}};
  for (uint64_t k : keys) {
    for (uint64_t c : counters) {
      EXPECT_EQ(Generator::Philox(k, c), RefOurs(k, c)) << "key " << k << " counter " << c;
    }
  }
}

TEST(Philox, IsAPureFunction) {
  EXPECT_EQ(Generator::Philox(7, 9), Generator::Philox(7, 9));
  EXPECT_NE(Generator::Philox(7, 9), Generator::Philox(7, 10));
  EXPECT_NE(Generator::Philox(7, 9), Generator::Philox(8, 9));
  // The high halves of key and counter matter too.
  EXPECT_NE(Generator::Philox(uint64_t{1} << 40, 0), Generator::Philox(0, 0));
  EXPECT_NE(Generator::Philox(0, uint64_t{1} << 40), Generator::Philox(0, 0));
}

TEST(Uniform, UsesFiftyThreeBitsOfTheFirstTwoWords) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{42}, ~uint64_t{0}}) {
    for (uint64_t i = 0; i < 100; ++i) {
      const Words r = RefOurs(seed, i);
      const uint64_t bits = ((uint64_t{r[0]} << 21) ^ r[1]) & ((uint64_t{1} << 53) - 1);
      const double u = Generator::Uniform(seed, i);
      ASSERT_EQ(u, std::ldexp(static_cast<double>(bits), -53)) << seed << " " << i;
      // An exact multiple of 2^-53.
      const double scaled = std::ldexp(u, 53);
      ASSERT_EQ(scaled, std::floor(scaled));
    }
  }
}

TEST(Uniform, InUnitIntervalWithUniformMoments) {
  constexpr int kN = 100000;
  double sum = 0, sum_sq = 0;
  double lo = 1, hi = 0;
  std::vector<int> buckets(10, 0);
  for (int i = 0; i < kN; ++i) {
    const double u = Generator::Uniform(1234, i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    sum += u;
    sum_sq += u * u;
    ++buckets[static_cast<int>(u * 10)];
  }
  const double mean = sum / kN;
  const double var = sum_sq / kN - mean * mean;
  // Standard errors: mean 0.29/sqrt(N) ~ 0.0009, variance ~ 0.0003; bounds are ~5 sigma.
  EXPECT_NEAR(mean, 0.5, 0.005);
  EXPECT_NEAR(var, 1.0 / 12.0, 0.0015);
  EXPECT_LT(lo, 1e-3);
  EXPECT_GT(hi, 1 - 1e-3);
  for (int b = 0; b < 10; ++b) EXPECT_NEAR(buckets[b], kN / 10, 500) << "bucket " << b;
}

TEST(Uniform, DependsOnSeedAndIndex) {
  EXPECT_EQ(Generator::Uniform(5, 17), Generator::Uniform(5, 17));
  EXPECT_NE(Generator::Uniform(5, 17), Generator::Uniform(5, 18));
  EXPECT_NE(Generator::Uniform(5, 17), Generator::Uniform(6, 17));
}

TEST(Normal, StandardNormalMoments) {
  constexpr int kN = 100000;
  double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  int within_one = 0;
  for (int i = 0; i < kN; ++i) {
    const double x = Generator::Normal(99, i);
    ASSERT_TRUE(std::isfinite(x)) << i;
    s1 += x;
    s2 += x * x;
    s3 += x * x * x;
    s4 += x * x * x * x;
    if (std::fabs(x) < 1) ++within_one;
  }
  const double mean = s1 / kN;
  const double var = s2 / kN - mean * mean;
  // Standard errors at N = 1e5: mean 0.0032, variance 0.0045, skewness 0.008, kurtosis 0.015.
  EXPECT_NEAR(mean, 0.0, 0.016);
  EXPECT_NEAR(var, 1.0, 0.025);
  EXPECT_NEAR(s3 / kN, 0.0, 0.05);
  EXPECT_NEAR(s4 / kN, 3.0, 0.1);
  EXPECT_NEAR(static_cast<double>(within_one) / kN, 0.682689, 0.01);
}

TEST(Normal, IsBoxMullerOfTheCounterWords) {
  // Box-Muller from the four words: u1 in (0, 1] from words 0-1, u2 in [0, 1) from 2-3.
  for (uint64_t i = 0; i < 50; ++i) {
    const Words r = RefOurs(3, i);
    const uint64_t mask = (uint64_t{1} << 53) - 1;
    const double u1 =
        std::ldexp(static_cast<double>(((uint64_t{r[0]} << 21) ^ r[1]) & mask) + 1, -53);
    const double u2 = std::ldexp(static_cast<double>(((uint64_t{r[2]} << 21) ^ r[3]) & mask), -53);
    const double expected =
        std::sqrt(-2 * std::log(u1)) * std::cos(2 * 3.14159265358979323846 * u2);
    EXPECT_NEAR(Generator::Normal(3, i), expected, 1e-12) << i;
  }
  EXPECT_EQ(Generator::Normal(3, 5), Generator::Normal(3, 5));
  EXPECT_NE(Generator::Normal(3, 5), Generator::Normal(4, 5));
}

TEST(Generator, SeedOffsetAndReserve) {
  Generator d;
  EXPECT_EQ(d.seed(), 0u);
  EXPECT_EQ(d.offset(), 0u);
  Generator g(42);
  EXPECT_EQ(g.seed(), 42u);
  EXPECT_EQ(g.Reserve(10), 0u);
  EXPECT_EQ(g.offset(), 10u);
  EXPECT_EQ(g.Reserve(5), 10u);
  EXPECT_EQ(g.offset(), 15u);
  EXPECT_EQ(g.Reserve(0), 15u);
  EXPECT_EQ(g.offset(), 15u);
  g.set_offset(3);
  EXPECT_EQ(g.offset(), 3u);
  EXPECT_EQ(g.Reserve(2), 3u);
  EXPECT_EQ(g.offset(), 5u);
  EXPECT_EQ(g.seed(), 42u);  // offsets never touch the seed
  g.manual_seed(7);
  EXPECT_EQ(g.seed(), 7u);
  EXPECT_EQ(g.offset(), 0u);
  // Offsets near the top of the range wrap like any uint64.
  g.set_offset(~uint64_t{0} - 1);
  EXPECT_EQ(g.Reserve(1), ~uint64_t{0} - 1);
  EXPECT_EQ(g.offset(), ~uint64_t{0});
}

TEST(Generator, ChunkedDrawsEqualOneDraw) {
  // The property vmap's chunking relies on: reserving 6 then 4 counters covers exactly the
  // counters of one reservation of 10, so the values agree.
  Generator a(11), b(11);
  std::vector<double> whole, chunked;
  const uint64_t first = a.Reserve(10);
  for (uint64_t i = 0; i < 10; ++i) whole.push_back(Generator::Uniform(a.seed(), first + i));
  for (uint64_t n : {6u, 4u}) {
    const uint64_t f = b.Reserve(n);
    for (uint64_t i = 0; i < n; ++i) chunked.push_back(Generator::Uniform(b.seed(), f + i));
  }
  EXPECT_EQ(whole, chunked);
  EXPECT_EQ(a.offset(), b.offset());
}

TEST(DefaultGenerator, OnePerThread) {
  Generator& main_gen = DefaultGenerator();
  EXPECT_EQ(&main_gen, &DefaultGenerator());  // the same object on every call
  manual_seed(123);
  EXPECT_EQ(DefaultGenerator().seed(), 123u);
  EXPECT_EQ(DefaultGenerator().offset(), 0u);
  DefaultGenerator().Reserve(8);
  EXPECT_EQ(DefaultGenerator().offset(), 8u);

  const Generator* other_address = nullptr;
  uint64_t other_seed = 1, other_offset = 1, other_seed_after = 0;
  std::thread t([&] {
    Generator& g = DefaultGenerator();
    other_address = &g;
    other_seed = g.seed();  // fresh: unaffected by the main thread's manual_seed
    other_offset = g.offset();
    manual_seed(999);
    other_seed_after = DefaultGenerator().seed();
  });
  t.join();
  EXPECT_NE(other_address, &main_gen);
  EXPECT_EQ(other_seed, 0u);
  EXPECT_EQ(other_offset, 0u);
  EXPECT_EQ(other_seed_after, 999u);
  // The other thread's manual_seed did not touch this thread's generator.
  EXPECT_EQ(DefaultGenerator().seed(), 123u);
  EXPECT_EQ(DefaultGenerator().offset(), 8u);
  manual_seed(0);
  EXPECT_EQ(DefaultGenerator().seed(), 0u);
  EXPECT_EQ(DefaultGenerator().offset(), 0u);
}

}  // namespace
}  // namespace ft

// Tests for tensor/memory.h, the large-block cache (NOTE: [Large-block cache]): size classes,
// reuse of a freed block by the next request of its class (also across threads), the limit
// and its eviction order, ReleaseCachedMemory, the counters, and that a reused block's tensor
// computes exactly what a fresh one does.
#include "tensor/memory.h"

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/block_pool.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tensor/storage.h"
#include "tests/test_util.h"

namespace ft {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Each test starts from an empty cache with the default limit.
class LargeBlockCache : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!internal::kRecycleMemory) GTEST_SKIP() << "AddressSanitizer builds cache nothing";
    SetCachedMemoryLimit(int64_t{2} << 30);
    ReleaseCachedMemory();
  }
  void TearDown() override {
    SetCachedMemoryLimit(int64_t{2} << 30);
    ReleaseCachedMemory();
  }
};

TEST(LargeBlockSizeClass, FourClassesPerPowerOfTwo) {
  using internal::LargeBlockSizeClass;
  EXPECT_EQ(LargeBlockSizeClass(65600), 81920u);  // 65536 + 16384
  EXPECT_EQ(LargeBlockSizeClass(1 * kMiB), 1 * kMiB);
  EXPECT_EQ(LargeBlockSizeClass(1 * kMiB + 1), 1 * kMiB + kMiB / 4);
  EXPECT_EQ(LargeBlockSizeClass(1 * kMiB + kMiB / 4), 1 * kMiB + kMiB / 4);
  EXPECT_EQ(LargeBlockSizeClass(1 * kMiB + kMiB / 4 + 64), 1 * kMiB + kMiB / 2);
  EXPECT_EQ(LargeBlockSizeClass(2 * kMiB - 1), 2 * kMiB);
  EXPECT_EQ(LargeBlockSizeClass(400 * kMiB), 448 * kMiB);  // 256 MiB * 1.75
  for (size_t n = 65600; n < 64 * kMiB; n = n * 5 / 3 + 7) {
    const size_t c = LargeBlockSizeClass(n);
    EXPECT_GE(c, n);
    EXPECT_LE(c, n + n / 4 + 64) << n;
    EXPECT_EQ(c % 64, 0u);
  }
}

TEST_F(LargeBlockCache, AFreedBlockServesTheNextRequestOfItsClass) {
  void* first;
  {
    Storage a = Storage::Allocate(3 * kMiB);
    first = a.data();
    std::memset(a.data(), 1, a.nbytes());
  }
  EXPECT_EQ(GetCachedMemoryStats().held_bytes, int64_t{3 * kMiB});
  const CachedMemoryStats before = GetCachedMemoryStats();
  Storage same_class = Storage::Allocate(3 * kMiB - 4096);  // class 3 MiB as well
  EXPECT_EQ(same_class.data(), first);
  EXPECT_EQ(GetCachedMemoryStats().hits, before.hits + 1);
  EXPECT_EQ(GetCachedMemoryStats().held_bytes, 0);
  Storage other_class = Storage::Allocate(5 * kMiB);  // nothing cached of its class
  EXPECT_NE(other_class.data(), first);
  EXPECT_EQ(GetCachedMemoryStats().misses, before.misses + 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(other_class.data()) % 64, 0u);
}

TEST_F(LargeBlockCache, ReleaseFreesEverythingHeld) {
  { Storage a = Storage::Allocate(2 * kMiB), b = Storage::Allocate(6 * kMiB); }
  EXPECT_EQ(GetCachedMemoryStats().held_bytes, int64_t{8 * kMiB});
  EXPECT_GE(GetCachedMemoryStats().peak_held_bytes, int64_t{8 * kMiB});
  ReleaseCachedMemory();
  EXPECT_EQ(GetCachedMemoryStats().held_bytes, 0);
  const int64_t misses = GetCachedMemoryStats().misses;
  Storage c = Storage::Allocate(2 * kMiB);
  EXPECT_EQ(GetCachedMemoryStats().misses, misses + 1);
}

TEST_F(LargeBlockCache, TheLimitEvictsTheLeastRecentlyCached) {
  SetCachedMemoryLimit(int64_t{10 * kMiB});
  void *oldest, *newer;
  {
    Storage a = Storage::Allocate(4 * kMiB);
    Storage b = Storage::Allocate(4 * kMiB);
    oldest = a.data();
    newer = b.data();
    a = Storage();  // cached first
  }
  EXPECT_EQ(GetCachedMemoryStats().held_bytes, int64_t{8 * kMiB});
  const int64_t evictions = GetCachedMemoryStats().evictions;
  { Storage c = Storage::Allocate(3 * kMiB); }  // 8 + 3 > 10: the oldest 4 MiB goes
  EXPECT_EQ(GetCachedMemoryStats().held_bytes, int64_t{7 * kMiB});
  EXPECT_EQ(GetCachedMemoryStats().evictions, evictions + 1);
  Storage d = Storage::Allocate(4 * kMiB);
  EXPECT_EQ(d.data(), newer);
  (void)oldest;
  // A block larger than the limit is never kept; a lower limit frees at once; 0 turns the
  // cache off.
  { Storage huge = Storage::Allocate(11 * kMiB); }
  EXPECT_EQ(GetCachedMemoryStats().held_bytes, int64_t{3 * kMiB});
  SetCachedMemoryLimit(int64_t{2 * kMiB});
  EXPECT_EQ(GetCachedMemoryStats().held_bytes, 0);
  SetCachedMemoryLimit(0);
  { Storage e = Storage::Allocate(kMiB); }
  EXPECT_EQ(GetCachedMemoryStats().held_bytes, 0);
  EXPECT_EQ(GetCachedMemoryStats().limit_bytes, 0);
  EXPECT_FT_ERROR(SetCachedMemoryLimit(-1), "SetCachedMemoryLimit: the limit must be >= 0");
}

TEST_F(LargeBlockCache, BlocksFreedOnOneThreadServeAnother) {
  void* freed_there = nullptr;
  std::thread([&] {
    Storage a = Storage::Allocate(7 * kMiB);
    freed_there = a.data();
  }).join();
  Storage here = Storage::Allocate(7 * kMiB);
  EXPECT_EQ(here.data(), freed_there);
  // Several threads allocating and freeing at once (TSan checks the hand-overs).
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) {
        Storage s = Storage::Allocate((1 + (i + t) % 3) * kMiB);
        static_cast<unsigned char*>(s.data())[s.nbytes() - 1] = static_cast<unsigned char>(i);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_LE(GetCachedMemoryStats().held_bytes, int64_t{2} << 30);
}

TEST_F(LargeBlockCache, AReusedBlockComputesWhatAFreshOneDoes) {
  // Results never depend on where a buffer came from: a dirty reused block is overwritten.
  const Tensor x = arange(0.0, 100000.0, 1.0);  // 400 KB: a large block
  const std::vector<double> fresh = kernels::to(x, kFloat64).to_vector<double>();
  { Tensor junk = full({100000}, 7.0, kFloat64); }
  EXPECT_GT(GetCachedMemoryStats().held_bytes, 0);
  const int64_t hits = GetCachedMemoryStats().hits;
  EXPECT_EQ(kernels::to(x, kFloat64).to_vector<double>(), fresh);  // into junk's block
  EXPECT_EQ(GetCachedMemoryStats().hits, hits + 1);
  { Tensor junk = full({100000}, 7.0f); }
  EXPECT_EQ(zeros({100000}).to_vector<float>(), std::vector<float>(100000, 0.0f));
}

}  // namespace
}  // namespace ft

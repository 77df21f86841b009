// Tests for cpu/parallel.h (NOTE: [Intra-op threads]): the split (every item once, in
// order, boundaries aligned to the output, small work inline), exceptions, nesting, several
// callers at once, and the thread-count setting.
#include "cpu/parallel.h"

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace ft {
namespace {

// Restores the thread count a test changes.
class Threads : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = GetNumThreads(); }
  void TearDown() override { SetNumThreads(saved_); }
  int saved_ = 1;
};

TEST_F(Threads, TheSplitCoversEveryItemOnceWithAlignedBoundaries) {
  for (int threads : {1, 2, 3, 4, 7}) {
    SetNumThreads(threads);
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{100}, int64_t{4095}, int64_t{4096},
                      int64_t{100000}, int64_t{1000003}}) {
      for (int64_t phase : {int64_t{0}, int64_t{5}, int64_t{15}}) {
        const int64_t grain = 1024, align = 16;
        const int64_t chunks = internal::ParallelChunks(n, grain);
        EXPECT_GE(chunks, 1);
        EXPECT_LE(chunks, threads);
        if (n < 2 * grain) {
          EXPECT_EQ(chunks, 1) << n;  // small work stays inline
        }
        std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
        std::vector<int64_t> begins(static_cast<size_t>(chunks), -1);
        internal::ParallelForChunks(n, chunks, align, phase,
                                    [&](int64_t i, int64_t begin, int64_t end) {
                                      begins[static_cast<size_t>(i)] = begin;
                                      for (int64_t k = begin; k < end; ++k) {
                                        seen[static_cast<size_t>(k)].fetch_add(1);
                                      }
                                    });
        for (int64_t k = 0; k < n; ++k) ASSERT_EQ(seen[static_cast<size_t>(k)].load(), 1) << k;
        for (int64_t i = 1; i < chunks && n > 0; ++i) {
          const int64_t b = begins[static_cast<size_t>(i)];
          EXPECT_EQ((b + phase) % align, 0) << "chunk " << i << " of n " << n;
          EXPECT_GT(b, begins[static_cast<size_t>(i - 1)]);
          EXPECT_EQ(b, internal::ChunkBegin(n, chunks, align, phase, i));
        }
      }
    }
  }
}

TEST_F(Threads, WorkRunsOnSeveralThreadsAndNestedCallsRunInline) {
  SetNumThreads(2);
  std::atomic<int> nested_chunks{0};
  std::vector<std::thread::id> ids(2);
  internal::ParallelForChunks(1 << 20, 2, 16, 0, [&](int64_t i, int64_t, int64_t) {
    ids[static_cast<size_t>(i)] = std::this_thread::get_id();
    EXPECT_TRUE(internal::InParallelRegion());
    EXPECT_EQ(internal::ParallelChunks(1 << 20, 1024), 1);  // a nested call: inline
    internal::ParallelFor(1 << 20, 1024, 16, 0, [&](int64_t, int64_t) { ++nested_chunks; });
  });
  EXPECT_EQ(nested_chunks.load(), 2);
  EXPECT_FALSE(internal::InParallelRegion());
  // Both chunks may land on one thread (the caller can take both), but a worker exists and
  // takes part when the caller is slow.
  std::atomic<bool> other_thread{false};
  const std::thread::id caller = std::this_thread::get_id();
  for (int attempt = 0; attempt < 50 && !other_thread; ++attempt) {
    internal::ParallelForChunks(1 << 20, 2, 16, 0, [&](int64_t, int64_t, int64_t) {
      if (std::this_thread::get_id() != caller) other_thread = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  }
  EXPECT_TRUE(other_thread.load());
}

TEST_F(Threads, AChunksExceptionReachesTheCallerAfterEveryChunkRan) {
  SetNumThreads(3);
  std::atomic<int> ran{0};
  EXPECT_THROW(internal::ParallelForChunks(3000, 3, 16, 0,
                                           [&](int64_t i, int64_t, int64_t) {
                                             ++ran;
                                             if (i == 1) throw std::runtime_error("chunk 1");
                                           }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 3);
  // The pool still works.
  std::atomic<int64_t> total{0};
  internal::ParallelFor(1 << 16, 1024, 16, 0, [&](int64_t b, int64_t e) { total += e - b; });
  EXPECT_EQ(total.load(), 1 << 16);
}

TEST_F(Threads, SeveralCallersAtOnceEachGetTheirWholeRange) {
  SetNumThreads(2);
  std::vector<std::thread> callers;
  std::vector<int64_t> sums(4, 0);
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([c, &sums] {
      for (int rep = 0; rep < 50; ++rep) {
        std::atomic<int64_t> s{0};
        internal::ParallelFor(100000, 1024, 16, 0, [&](int64_t b, int64_t e) {
          int64_t local = 0;
          for (int64_t k = b; k < e; ++k) local += k;
          s += local;
        });
        sums[static_cast<size_t>(c)] = s.load();
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int64_t s : sums) EXPECT_EQ(s, int64_t{100000} * 99999 / 2);
}

TEST_F(Threads, TheThreadCountSetting) {
  SetNumThreads(3);
  EXPECT_EQ(GetNumThreads(), 3);
  EXPECT_EQ(internal::ParallelChunks(1 << 20, 1024), 3);
  SetNumThreads(1);
  EXPECT_EQ(internal::ParallelChunks(1 << 20, 1024), 1);
  EXPECT_FT_ERROR(SetNumThreads(0), "SetNumThreads: the thread count must be >= 1, got 0");
  EXPECT_EQ(GetNumThreads(), 1);
}

}  // namespace
}  // namespace ft

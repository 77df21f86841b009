// Tests for tensor/storage.h: allocation (inline and heap), alignment, sharing and the
// shared version counter, serials, the buffer cache and the block pool, and external
// (borrowed or adopted) buffers.
#include "tensor/storage.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/block_pool.h"
#include "tensor/tensor.h"
#include "tests/test_util.h"

namespace ft {
namespace {

bool Aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }
bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }
// The documented alignment: 64 bytes for heap buffers, 16 for inline (small) ones.
bool AlignedAsDocumented(const Storage& s) {
  return s.nbytes() > Storage::kInlineBytes ? Aligned64(s.data()) : Aligned16(s.data());
}

TEST(Storage, DefaultIsUndefined) {
  Storage s;
  EXPECT_FALSE(s.defined());
  Storage t;
  EXPECT_TRUE(s.is_same(t));  // both share "no buffer"
}

TEST(Storage, InlineAndHeapBuffersAreAlignedAndWritable) {
  // Sizes around the inline limit (kInlineBytes) exercise both paths; sizes that are not a
  // multiple of 64 exercise the heap path's rounding. ASan flags any out-of-bounds write.
  static_assert(Storage::kInlineBytes == 64);
  for (size_t n : {size_t{0}, size_t{1}, size_t{8}, size_t{63}, size_t{64}, size_t{65}, size_t{100},
                   size_t{128}, size_t{4097}, size_t{1} << 20}) {
    SCOPED_TRACE(n);
    Storage s = Storage::Allocate(n);
    EXPECT_TRUE(s.defined());
    EXPECT_EQ(s.nbytes(), n);
    ASSERT_NE(s.data(), nullptr);
    EXPECT_TRUE(AlignedAsDocumented(s));
    std::memset(s.data(), 0xAB, n);
    const unsigned char* p = static_cast<const unsigned char*>(s.data());
    for (size_t i = 0; i < n; i += 7) ASSERT_EQ(p[i], 0xAB);
    EXPECT_EQ(s.version(), 0);
  }
}

TEST(Storage, InlineBuffersOfManyStoragesAreDistinctAndAligned) {
  // Many small storages alive at once: each gets its own aligned inline buffer.
  std::vector<Storage> all;
  for (int i = 0; i < 50; ++i) {
    all.push_back(Storage::Allocate(8));
    *static_cast<int64_t*>(all.back().data()) = i;
  }
  for (int i = 0; i < 50; ++i) {
    EXPECT_TRUE(AlignedAsDocumented(all[i]));
    EXPECT_EQ(*static_cast<int64_t*>(all[i].data()), i);
    if (i > 0) {
      EXPECT_NE(all[i].data(), all[i - 1].data());
      EXPECT_FALSE(all[i].is_same(all[i - 1]));
    }
  }
}

TEST(Storage, CopiesShareTheBuffer) {
  for (size_t n : {size_t{16}, size_t{1000}}) {  // inline and heap
    Storage a = Storage::Allocate(n);
    Storage b = a;
    EXPECT_TRUE(a.is_same(b));
    EXPECT_EQ(a.data(), b.data());
    EXPECT_EQ(b.nbytes(), n);
    static_cast<char*>(a.data())[n - 1] = 'x';
    EXPECT_EQ(static_cast<char*>(b.data())[n - 1], 'x');
    Storage c = Storage::Allocate(n);
    EXPECT_FALSE(a.is_same(c));
    EXPECT_NE(a.data(), c.data());
  }
}

TEST(Storage, UseCountCountsTheHandles) {
  Storage a = Storage::Allocate(1000);
  EXPECT_EQ(a.use_count(), 1);
  {
    Storage b = a;
    EXPECT_EQ(a.use_count(), 2);
    EXPECT_EQ(b.use_count(), 2);
  }
  EXPECT_EQ(a.use_count(), 1);
}

TEST(Storage, BufferOutlivesTheOriginalHandle) {
  Storage b;
  {
    Storage a = Storage::Allocate(256);
    std::memset(a.data(), 7, 256);
    b = a;
  }
  EXPECT_TRUE(b.defined());
  EXPECT_EQ(static_cast<char*>(b.data())[255], 7);
}

TEST(Storage, VersionCounterIsSharedByCopies) {
  Storage a = Storage::Allocate(4);
  Storage b = a;
  EXPECT_EQ(a.version(), 0);
  a.BumpVersion();
  EXPECT_EQ(a.version(), 1);
  EXPECT_EQ(b.version(), 1);
  b.BumpVersion();
  b.BumpVersion();
  EXPECT_EQ(a.version(), 3);
  // A separate allocation has its own counter.
  Storage c = Storage::Allocate(4);
  EXPECT_EQ(c.version(), 0);
}

TEST(Storage, VersionCounterIsAtomic) {
  Storage a = Storage::Allocate(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([copy = a] {
      for (int i = 0; i < 1000; ++i) copy.BumpVersion();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(a.version(), 4000);
}

TEST(Storage, AllocationMarksOrderThisThreadsAllocations) {
  Storage before = Storage::Allocate(8);
  const Storage::AllocationMark mark = Storage::Mark();
  Storage a = Storage::Allocate(8);
  Storage b = Storage::Allocate(1024);
  EXPECT_FALSE(before.AllocatedAfter(mark));
  EXPECT_TRUE(a.AllocatedAfter(mark));
  EXPECT_TRUE(b.AllocatedAfter(mark));
  EXPECT_FALSE(a.AllocatedAfter(Storage::Mark()));
  // Another thread's allocation is never after this thread's mark.
  Storage other;
  std::thread([&other] { other = Storage::Allocate(8); }).join();
  EXPECT_FALSE(other.AllocatedAfter(mark));
  Storage view = a;
  EXPECT_EQ(view.id(), a.id());
  EXPECT_NE(a.id(), b.id());
}

TEST(Storage, FreedSmallBuffersAreReusedOnTheSameThread) {
  if (!internal::kRecycleMemory) GTEST_SKIP() << "sanitizer builds do not cache buffers";
  void* first;
  {
    Storage a = Storage::Allocate(1000);  // rounded to 1024 bytes
    first = a.data();
  }
  Storage b = Storage::Allocate(1010);    // same size class: the cached buffer
  EXPECT_EQ(b.data(), first);
  Storage c = Storage::Allocate(1000);    // the cache is empty again: a new buffer
  EXPECT_NE(c.data(), first);
  // Large buffers (over 64 KiB) go to the process-wide large-block cache (memory_test.cc).
  Storage big = Storage::Allocate(1 << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data()) % 64, 0u);
}

TEST(BlockPool, ReusesBlocksOfItsSizeOnTheSameThread) {
  struct Obj {
    int64_t a, b, c;
  };
  internal::PoolAllocator<Obj> alloc;
  Obj* first = alloc.allocate(1);
  alloc.deallocate(first, 1);
  Obj* second = alloc.allocate(1);
  if (internal::kRecycleMemory) {
    EXPECT_EQ(second, first);  // the freed block, not a new one
  }
  Obj* many = alloc.allocate(3);  // arrays bypass the pool
  many[2].c = 7;
  EXPECT_EQ(many[2].c, 7);
  alloc.deallocate(many, 3);
  // A block freed on another thread joins that thread's list; this thread keeps working.
  std::thread([&alloc, second] { alloc.deallocate(second, 1); }).join();
  Obj* third = alloc.allocate(1);
  third->a = 1;
  alloc.deallocate(third, 1);
  auto shared = std::allocate_shared<Obj>(alloc, Obj{1, 2, 3});
  EXPECT_EQ(shared->c, 3);
}

TEST(Storage, BuffersFreedOnAnotherThreadStayUsable) {
  Storage a = Storage::Allocate(4096);
  std::thread([moved = std::move(a)]() mutable { moved = Storage(); }).join();
  Storage b = Storage::Allocate(4096);
  static_cast<char*>(b.data())[4095] = 1;  // a valid, writable buffer
  EXPECT_EQ(static_cast<char*>(b.data())[4095], 1);
}

TEST(Storage, FromExternalBorrowsTheCallersMemory) {
  std::vector<float> v = {1, 2, 3, 4, 5, 6};
  {
    Storage s = Storage::FromExternal(v.data(), v.size() * sizeof(float));
    EXPECT_TRUE(s.defined());
    EXPECT_TRUE(s.is_external());
    EXPECT_EQ(s.data(), v.data());
    EXPECT_EQ(s.nbytes(), 24u);
    EXPECT_EQ(s.version(), 0);
    // A tensor over it aliases v both ways.
    Tensor t = MakeDense(s, kFloat32, {2, 3}, {3, 1}, 0);
    t.data<float>()[4] = 50;
    EXPECT_EQ(v[4], 50);
    v[0] = 10;
    EXPECT_EQ(t.to_vector<float>()[0], 10);
    Storage copy = s;
    EXPECT_TRUE(copy.is_same(s));
    EXPECT_EQ(s.use_count(), 3);  // s, copy and t's
  }
  EXPECT_EQ(v[4], 50);  // nothing freed v's buffer (ASan would see a double free)
  EXPECT_FALSE(Storage::Allocate(8).is_external());
}

TEST(Storage, FromExternalCallsTheReleaseOnceWhenTheLastHandleGoes) {
  int calls = 0;
  void* released = nullptr;
  float* buffer = new float[4]{1, 2, 3, 4};
  Storage views;
  {
    Storage s = Storage::FromExternal(buffer, 4 * sizeof(float), [&](void* p) {
      ++calls;
      released = p;
      delete[] static_cast<float*>(p);
    });
    views = s;
  }
  EXPECT_EQ(calls, 0);  // `views` still holds it
  EXPECT_EQ(static_cast<float*>(views.data())[3], 4);
  views = Storage();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(released, static_cast<void*>(buffer));
}

TEST(Storage, FromExternalIsNeverAllocatedAfterAMark) {
  std::vector<double> v(2);
  const Storage::AllocationMark mark = Storage::Mark();
  Storage s = Storage::FromExternal(v.data(), 16);
  EXPECT_FALSE(s.AllocatedAfter(mark));
  EXPECT_TRUE(Storage::Allocate(16).AllocatedAfter(mark));
}

TEST(Storage, FromExternalEmptyAndNull) {
  Storage empty = Storage::FromExternal(nullptr, 0);
  EXPECT_TRUE(empty.defined());
  EXPECT_EQ(empty.nbytes(), 0u);
  EXPECT_FT_ERROR(Storage::FromExternal(nullptr, 8),
                  "Storage::FromExternal: data is null but nbytes is 8");
}

}  // namespace
}  // namespace ft

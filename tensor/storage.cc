#include "tensor/storage.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tensor/block_pool.h"
#include "tensor/error.h"
#include "tensor/memory.h"

namespace ft {

namespace {

// NOTE: [Buffer cache]
// Small tensors come and go by the thousand (a replayed Jacobian allocates a result per
// kernel), and glibc's path for a 1 KiB block is slow: it consolidates its fastbins first,
// which cost a tenth of a 16x16 Jacobian. Each thread therefore keeps freed heap buffers of
// up to kCacheMaxBytes in LIFO buckets by exact (64-byte rounded) size, a few per size and
// kCacheBudget bytes in all, and hands them out again before asking malloc. A buffer freed on
// another thread goes to that thread's cache. Sanitizer builds skip the cache, so that a use
// after free stays visible to them.
constexpr size_t kCacheMaxBytes = internal::kSmallBufferMaxBytes;
constexpr size_t kCacheBuckets = kCacheMaxBytes / 64;
constexpr int kCachePerBucket = 4;
constexpr size_t kCacheBudget = 2 * 1024 * 1024;

struct BufferCache {
  struct Bucket {
    int count = 0;
    void* buffers[kCachePerBucket];
  };
  Bucket buckets[kCacheBuckets];
  size_t held = 0;

  ~BufferCache() {
    for (Bucket& b : buckets) {
      for (int i = 0; i < b.count; ++i) std::free(b.buffers[i]);
    }
  }
};

constinit thread_local BufferCache* tls_cache = nullptr;
constinit thread_local bool tls_cache_closed = false;

// CacheOwner frees the thread's cache at thread exit; buffers freed after that (static
// tensors at process exit) go straight to free().
struct CacheOwner {
  ~CacheOwner() {
    delete tls_cache;
    tls_cache = nullptr;
    tls_cache_closed = true;
  }
};
thread_local CacheOwner tls_cache_owner;

BufferCache* ThreadCache() {
  if (tls_cache == nullptr && !tls_cache_closed) [[unlikely]] {
    static_cast<void>(&tls_cache_owner);  // constructs it, so its destructor runs
    tls_cache = new BufferCache();
  }
  return tls_cache;
}

void* TakeCached(size_t capacity) {
  if (!internal::kRecycleMemory || capacity > kCacheMaxBytes) return nullptr;
  BufferCache* cache = ThreadCache();
  if (cache == nullptr) return nullptr;
  BufferCache::Bucket& b = cache->buckets[capacity / 64 - 1];
  if (b.count == 0) return nullptr;
  cache->held -= capacity;
  return b.buffers[--b.count];
}

bool GiveToCache(void* data, size_t capacity) {
  if (!internal::kRecycleMemory || capacity > kCacheMaxBytes) return false;
  BufferCache* cache = ThreadCache();
  if (cache == nullptr || cache->held + capacity > kCacheBudget) return false;
  BufferCache::Bucket& b = cache->buckets[capacity / 64 - 1];
  if (b.count == kCachePerBucket) return false;
  b.buffers[b.count++] = data;
  cache->held += capacity;
  return true;
}

}  // namespace

Storage::Impl::~Impl() {
  if (!heap) return;
  if (capacity > kCacheMaxBytes) {
    internal::GiveLargeBlock(data, capacity);  // NOTE: [Large-block cache] in memory.h
  } else if (!GiveToCache(data, capacity)) {
    std::free(data);
  }
}

void ReleaseCachedMemory() {
  internal::ReleaseLargeBlocks();
  if (tls_cache != nullptr) {
    for (BufferCache::Bucket& b : tls_cache->buckets) {
      for (int i = 0; i < b.count; ++i) std::free(b.buffers[i]);
      b.count = 0;
    }
    tls_cache->held = 0;
  }
}

namespace {

// NOTE: [Allocator settings]
// By default glibc serves large blocks with mmap and returns freed memory to the OS, so a
// loop that allocates a fresh 256x256 result every call pays page faults on every call (we
// measured up to 1.8x on a 256^2 matmul). Tensor code allocates and frees same-sized
// buffers over and over: keep them in the heap instead. Set once, on the first allocation.
void ConfigureAllocatorOnce() {
  static const bool configured = [] {
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);  // glibc's maximum on 64-bit
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
    return true;
  }();
  (void)configured;
}

// Allocation marks (storage.h): per-thread counters, so an allocation pays no atomic.
std::atomic<uint32_t> next_thread_index{1};
constinit thread_local uint32_t tls_thread_index = 0;
constinit thread_local uint64_t tls_serial = 0;

uint32_t ThreadIndex() {
  if (tls_thread_index == 0) [[unlikely]] {
    tls_thread_index = next_thread_index.fetch_add(1, std::memory_order_relaxed);
  }
  return tls_thread_index;
}

}  // namespace

Storage::AllocationMark Storage::Mark() { return AllocationMark{ThreadIndex(), tls_serial}; }

Storage Storage::Allocate(size_t nbytes) {
  ConfigureAllocatorOnce();
  Storage s;
  s.impl_ = std::allocate_shared<Impl>(internal::PoolAllocator<Impl>());
  s.impl_->nbytes = nbytes;
  s.impl_->thread = ThreadIndex();
  s.impl_->serial = ++tls_serial;
  if (nbytes <= kInlineBytes) {
    s.impl_->data = s.impl_->inline_buffer;
  } else {
    // aligned_alloc wants a multiple of the alignment; large blocks go by size class.
    const size_t small = (nbytes + 63) / 64 * 64;
    const bool large = small > kCacheMaxBytes;
    const size_t rounded = large ? internal::LargeBlockSizeClass(small) : small;
    s.impl_->data = large ? internal::TakeLargeBlock(rounded) : TakeCached(rounded);
    if (s.impl_->data == nullptr) s.impl_->data = std::aligned_alloc(64, rounded);
    if (s.impl_->data == nullptr) {
      // What the caches hold may be what the C library is missing: give it back, try again.
      ReleaseCachedMemory();
      s.impl_->data = std::aligned_alloc(64, rounded);
    }
    if (s.impl_->data == nullptr) {
      throw AllocationError(absl::StrCat("cannot allocate ", nbytes, " bytes (out of memory)"));
    }
    s.impl_->heap = true;
    s.impl_->capacity = rounded;
  }
  return s;
}

Storage Storage::FromExternal(void* data, size_t nbytes, std::function<void(void*)> release) {
  if (data == nullptr && nbytes != 0) {
    ThrowError("Storage::FromExternal: data is null but nbytes is ", nbytes,
               " (only an empty buffer may be null)");
  }
  Storage s;
  // A plain new, not the block pool: the deleter below runs `release` after the Impl is
  // gone. thread 0 is no thread's index (ThreadIndex starts at 1): never AllocatedAfter.
  auto impl = std::make_unique<Impl>();
  impl->data = data;
  impl->nbytes = nbytes;
  impl->external = true;
  s.impl_ = std::shared_ptr<Impl>(impl.release(), [release = std::move(release)](Impl* p) {
    void* const buffer = p->data;
    delete p;
    if (release) release(buffer);
  });
  return s;
}

}  // namespace ft

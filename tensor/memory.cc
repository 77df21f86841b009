#include "tensor/memory.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <cstdlib>
#include <list>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "tensor/block_pool.h"
#include "tensor/error.h"

namespace ft {
namespace {

constexpr int64_t kDefaultLimitBytes = int64_t{2} << 30;

int64_t LimitFromEnvironment() {
  const char* mb = std::getenv("FT_CACHE_LIMIT_MB");
  if (mb == nullptr || *mb == '\0') return kDefaultLimitBytes;
  char* end = nullptr;
  const long long v = std::strtoll(mb, &end, 10);
  if (*end != '\0' || v < 0) return kDefaultLimitBytes;  // unreadable: the default
  return static_cast<int64_t>(v) << 20;
}

// The cache (NOTE: [Large-block cache] in memory.h). `order` is every held block, least
// recently cached first (eviction takes the front); `by_class` the same blocks by size
// class, the most recently cached last (a request takes the warmest block of its class).
class LargeBlockCache {
 public:
  void* Take(size_t capacity) {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = by_class_.find(capacity);
    if (found == by_class_.end() || found->second.empty()) {
      ++stats_.misses;
      return nullptr;
    }
    const std::list<Block>::iterator it = found->second.back();
    found->second.pop_back();
    void* data = it->data;
    order_.erase(it);
    stats_.held_bytes -= static_cast<int64_t>(capacity);
    ++stats_.hits;
    return data;
  }

  void Give(void* data, size_t capacity) {
    std::vector<void*> evicted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const int64_t size = static_cast<int64_t>(capacity);
      if (size > stats_.limit_bytes) {
        evicted.push_back(data);
      } else {
        while (stats_.held_bytes + size > stats_.limit_bytes) evicted.push_back(EvictOldest());
        order_.push_back(Block{data, capacity});
        by_class_[capacity].push_back(std::prev(order_.end()));
        stats_.held_bytes += size;
        stats_.peak_held_bytes = std::max(stats_.peak_held_bytes, stats_.held_bytes);
      }
    }
    for (void* p : evicted) std::free(p);  // outside the lock: free may unmap
  }

  size_t Release() { return Shrink(0, /*set_limit=*/false); }

  void SetLimit(int64_t bytes) { Shrink(bytes, /*set_limit=*/true); }

  CachedMemoryStats Stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  struct Block {
    void* data;
    size_t capacity;
  };

  // EvictOldest removes the least recently cached block and returns it (mu_ held).
  void* EvictOldest() {
    const Block b = order_.front();
    std::vector<std::list<Block>::iterator>& same = by_class_[b.capacity];
    same.erase(std::find(same.begin(), same.end(), order_.begin()));
    order_.pop_front();
    stats_.held_bytes -= static_cast<int64_t>(b.capacity);
    ++stats_.evictions;
    return b.data;
  }

  // Shrink frees blocks until at most `bytes` are held (and makes it the limit when asked);
  // returns the bytes freed.
  size_t Shrink(int64_t bytes, bool set_limit) {
    std::vector<void*> freed;
    size_t freed_bytes = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (set_limit) stats_.limit_bytes = bytes;
      const int64_t before = stats_.held_bytes;
      while (stats_.held_bytes > bytes) freed.push_back(EvictOldest());
      if (!set_limit) stats_.evictions -= static_cast<int64_t>(freed.size());  // a release
      freed_bytes = static_cast<size_t>(before - stats_.held_bytes);
    }
    for (void* p : freed) std::free(p);
    return freed_bytes;
  }

  std::mutex mu_;
  std::list<Block> order_;
  std::unordered_map<size_t, std::vector<std::list<Block>::iterator>> by_class_;
  CachedMemoryStats stats_{0, 0, LimitFromEnvironment(), 0, 0, 0};
};

// Never destroyed: tensors freed during static destruction still give their blocks back.
LargeBlockCache& Cache() {
  static auto* cache = new LargeBlockCache();
  return *cache;
}

}  // namespace

CachedMemoryStats GetCachedMemoryStats() { return Cache().Stats(); }

void SetCachedMemoryLimit(int64_t bytes) {
  if (bytes < 0) ThrowError("SetCachedMemoryLimit: the limit must be >= 0 bytes, got ", bytes);
  Cache().SetLimit(bytes);
}

namespace internal {

size_t LargeBlockSizeClass(size_t nbytes) {
  // The largest power of two <= nbytes, and a quarter of it as the class step.
  const size_t top = size_t{1} << (63 - __builtin_clzll(nbytes));
  const size_t step = std::max<size_t>(top / 4, 64);
  return (nbytes + step - 1) / step * step;
}

void* TakeLargeBlock(size_t capacity) {
  if (!kRecycleMemory) return nullptr;
  return Cache().Take(capacity);
}

void GiveLargeBlock(void* data, size_t capacity) {
  if (!kRecycleMemory) {
    std::free(data);
    return;
  }
  Cache().Give(data, capacity);
}

size_t ReleaseLargeBlocks() { return Cache().Release(); }

}  // namespace internal
}  // namespace ft

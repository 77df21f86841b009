// ft/tensor/memory.h
//
// What ft keeps of freed tensor memory, and the calls that read and release it.
//
// NOTE: [Large-block cache]
// A buffer larger than 64 KiB (a tensor of more than 16384 float32) is not returned to the C
// library when its last tensor dies: it goes to a process-wide cache, by size class, and the
// next request of that class takes it back. Without it, a loop that computes a large result
// per call (per-sample gradients of a 784-128-10 MLP at B = 1024 return ~400 MB) faults every
// page of every buffer in on every call: glibc serves such blocks with mmap and unmaps them
// on free, and the page faults cost several times the arithmetic. Blocks already touched keep
// their pages, so a repeated call runs on warm memory, as a hand-written loop that reuses its
// buffers does.
//
// Invariants:
// - Size classes: each power of two is split into four (2^k, 1.25 * 2^k, 1.5 * 2^k,
//   1.75 * 2^k); a request takes a block of exactly its class, so at most a quarter of a
//   block's address space goes unused, and pages never touched are never resident.
// - The cache holds at most limit_bytes (default 2 GiB, or FT_CACHE_LIMIT_MB from the
//   environment, read once; SetCachedMemoryLimit changes it). A block that would go over it
//   first evicts the least recently cached blocks; a block larger than the limit is freed.
// - When the C library cannot satisfy a request, the cache is emptied and the request tried
//   once more before ft reports an ft::AllocationError.
// - Thread safe: one mutex, taken once per large allocation or free (small buffers use the
//   per-thread caches of storage.cc and never take it). Blocks freed on any thread serve
//   requests on every thread.
// - AddressSanitizer builds keep nothing (every free is real, so a use after it is caught).
//
// Small buffers (64 KiB and less) are recycled per thread (NOTE: [Buffer cache] in
// storage.cc), at most 2 MiB per thread; ReleaseCachedMemory frees the calling thread's too.
//
// Example:
//   ft::Tensor g = per_sample_grads(args)[0];   // fresh pages: faulted in
//   g = ft::Tensor();                            // the blocks go to the cache
//   g = per_sample_grads(args)[0];               // the same blocks, already resident
//   ft::CachedMemoryStats s = ft::GetCachedMemoryStats();  // s.hits > 0
//   ft::ReleaseCachedMemory();                   // back to the C library (and the OS)
#ifndef FT_TENSOR_MEMORY_H_
#define FT_TENSOR_MEMORY_H_

#include <cstddef>
#include <cstdint>

namespace ft {

struct CachedMemoryStats {
  int64_t held_bytes = 0;       // in the large-block cache now
  int64_t peak_held_bytes = 0;  // the most it held at once
  int64_t limit_bytes = 0;      // its bound
  int64_t hits = 0;             // large requests served from the cache
  int64_t misses = 0;           // large requests that went to the C library
  int64_t evictions = 0;        // blocks freed to stay within the limit
};

// GetCachedMemoryStats: the large-block cache's counters (process-wide).
CachedMemoryStats GetCachedMemoryStats();

// ReleaseCachedMemory frees every block the large-block cache holds and the calling thread's
// small-buffer cache. Tensors alive are not affected. Counters other than held_bytes stay.
void ReleaseCachedMemory();

// SetCachedMemoryLimit bounds what the large-block cache holds (0 turns it off); blocks over
// the new bound are freed at once. Throws ft::Error for a negative limit.
void SetCachedMemoryLimit(int64_t bytes);

namespace internal {

// LargeBlockSizeClass: the bytes a request of `nbytes` (> kSmallBufferMaxBytes) allocates.
size_t LargeBlockSizeClass(size_t nbytes);

// TakeLargeBlock returns a cached block of exactly `capacity` bytes (a size class), or null.
void* TakeLargeBlock(size_t capacity);
// GiveLargeBlock keeps `data` (of `capacity` bytes) for reuse, or frees it.
void GiveLargeBlock(void* data, size_t capacity);
// ReleaseLargeBlocks frees every cached block; returns how many bytes it freed.
size_t ReleaseLargeBlocks();

// The largest buffer the per-thread small-buffer cache handles (storage.cc).
inline constexpr size_t kSmallBufferMaxBytes = 64 * 1024;

}  // namespace internal
}  // namespace ft

#endif  // FT_TENSOR_MEMORY_H_

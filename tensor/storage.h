// ft/tensor/storage.h
//
// Storage: a reference-counted byte buffer shared by a tensor and all of its views. It also
// owns the version counter: an in-place write through any view bumps it, so autograd can
// detect that a tensor it saved was modified (see NOTE: [Version counter]).
//
// Small heap buffers are recycled per thread (NOTE: [Buffer cache] in storage.cc).
// Invariants: the buffer is never reallocated; heap buffers (over kInlineBytes) are 64-byte
// aligned, small ones live inside the Storage's own allocation (16-byte aligned), so a
// 1-element tensor's data costs no allocation of its own. Copying a Storage shares the buffer.
//
// Example:
//   Storage s = Storage::Allocate(16);
//   Storage view = s;                  // same buffer, same version counter
//   s.BumpVersion();  view.version() == 1
#ifndef FT_TENSOR_STORAGE_H_
#define FT_TENSOR_STORAGE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace ft {

// NOTE: [Version counter]
// Every in-place op (add_, copy_, ...) bumps the counter of the storage it writes. Views
// share the storage and therefore the counter, exactly like PyTorch's shared version
// counter. The grad transform records the version of each tensor it saves for backward
// and throws if it changed by the time backward reads it.
class Storage {
 public:
  static constexpr size_t kInlineBytes = 64;

  Storage() = default;

  // Allocate returns a new buffer of `nbytes` bytes (uninitialized).
  static Storage Allocate(size_t nbytes);

  void* data() const { return impl_->data; }
  size_t nbytes() const { return impl_->nbytes; }
  bool defined() const { return impl_ != nullptr; }

  int64_t version() const { return impl_->version.load(std::memory_order_relaxed); }
  void BumpVersion() const { impl_->version.fetch_add(1, std::memory_order_relaxed); }

  // is_same reports whether two handles share one buffer.
  bool is_same(const Storage& other) const { return impl_ == other.impl_; }
  // id identifies the buffer (equal ids <=> is_same) while some handle keeps it alive.
  const void* id() const { return impl_.get(); }
  // use_count: the handles sharing the buffer (the tensors and views over it, and Storage
  // copies). One handle, held by a tensor that is itself held once, means nothing else can
  // read the buffer: a replay may then write a result into it (jit's fused steps).
  long use_count() const { return impl_.use_count(); }

  // AllocationMark: a point in the calling thread's sequence of allocations. A buffer is
  // AllocatedAfter(mark) when the same thread allocated it after Mark() returned. The jit
  // tracer tells tensors made while tracing (factories inside f) from captured ones this way.
  // Per thread, with no shared counter: a buffer another thread allocates is never "after".
  struct AllocationMark {
    uint32_t thread;
    uint64_t serial;
  };
  static AllocationMark Mark();
  bool AllocatedAfter(const AllocationMark& mark) const {
    return impl_->thread == mark.thread && impl_->serial > mark.serial;
  }

 private:
  struct Impl {
    Impl() {}  // user-provided: allocation does not zero the inline buffer
    ~Impl();
    void* data = nullptr;
    size_t nbytes = 0;
    bool heap = false;
    size_t capacity = 0;  // heap buffers: the bytes actually allocated (a 64-byte multiple)
    std::atomic<int64_t> version{0};
    uint32_t thread = 0;  // the allocating thread's index (ThreadIndex in storage.cc)
    uint64_t serial = 0;  // its position in that thread's allocations
    // 16-byte alignment keeps Impl an ordinary malloc (over-aligned types go through the
    // slower aligned operator new); kernels use unaligned Eigen maps anyway.
    alignas(16) unsigned char inline_buffer[kInlineBytes];
  };
  std::shared_ptr<Impl> impl_;
};

}  // namespace ft

#endif  // FT_TENSOR_STORAGE_H_

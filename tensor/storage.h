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
// An external Storage (FromExternal) views memory ft did not allocate: ft never frees it,
// and its alignment is whatever the owner's is (NOTE: [External storage]).
//
// Example:
//   Storage s = Storage::Allocate(16);
//   Storage view = s;                  // same buffer, same version counter
//   s.BumpVersion();  view.version() == 1
//
//   std::vector<float> v(6);
//   Storage b = Storage::FromExternal(v.data(), 6 * sizeof(float));  // borrows: v must outlive b
#ifndef FT_TENSOR_STORAGE_H_
#define FT_TENSOR_STORAGE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
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

  // NOTE: [External storage]
  // FromExternal returns a Storage over the `nbytes` bytes at `data`, memory ft did not
  // allocate and never frees (an Eigen matrix's buffer, a memory-mapped file, another
  // library's array). Ownership stays with the caller:
  // - `release`, when given, is called exactly once with `data` when the last handle (every
  //   tensor and view over the buffer, every Storage copy) goes away; it must not throw. It is
  //   how a caller hands ft the job of freeing ("adopt"), e.g. `[](void* p) { std::free(p); }`.
  // - Without `release` the Storage borrows: the caller must keep the memory alive, and must
  //   not free it, for as long as any handle exists. Nothing checks this (ASan does).
  // The Storage has its own version counter, starting at 0; writes that do not go through ft
  // (through the owner's own pointer) do not bump it. `data` must be aligned for the element
  // type the tensors over it use; ft's kernels need nothing more (they use unaligned loads).
  // An external buffer is never "allocated after" any AllocationMark, so jit treats tensors
  // over it as captured inputs and never writes a result into it. `data` may be null only
  // when `nbytes` is 0; otherwise FromExternal throws ft::Error.
  static Storage FromExternal(void* data, size_t nbytes,
                              std::function<void(void*)> release = nullptr);

  void* data() const { return impl_->data; }
  size_t nbytes() const { return impl_->nbytes; }
  bool defined() const { return impl_ != nullptr; }
  // is_external: made by FromExternal (ft does not own the memory; NOTE: [External storage]).
  bool is_external() const { return impl_->external; }

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
    bool external = false;  // FromExternal: the shared_ptr's deleter calls the release
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

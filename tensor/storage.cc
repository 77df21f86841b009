#include "tensor/storage.h"

#include <malloc.h>

#include <cstdlib>
#include <new>

namespace ft {

Storage::Impl::~Impl() {
  if (heap) std::free(data);
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

}  // namespace

Storage Storage::Allocate(size_t nbytes) {
  ConfigureAllocatorOnce();
  Storage s;
  s.impl_ = std::make_shared<Impl>();
  s.impl_->nbytes = nbytes;
  if (nbytes <= kInlineBytes) {
    s.impl_->data = s.impl_->inline_buffer;
  } else {
    // aligned_alloc wants a multiple of the alignment.
    const size_t rounded = (nbytes + 63) / 64 * 64;
    s.impl_->data = std::aligned_alloc(64, rounded);
    if (s.impl_->data == nullptr) throw std::bad_alloc();
    s.impl_->heap = true;
  }
  return s;
}

}  // namespace ft

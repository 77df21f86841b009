#include "tensor/storage.h"

#include <cstdlib>
#include <new>

namespace ft {

Storage::Impl::~Impl() {
  if (heap) std::free(data);
}

Storage Storage::Allocate(size_t nbytes) {
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

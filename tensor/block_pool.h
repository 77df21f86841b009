// ft/tensor/block_pool.h  (internal: //tensor:core and the transforms' wrapper tensors)
//
// PoolAllocator<T>: a standard allocator whose one-object allocations come from a per-thread
// free list of blocks of that exact size, for the objects every op creates and destroys:
// a tensor's TensorImpl and a buffer's Storage::Impl (each in one block with its shared_ptr
// control block, via std::allocate_shared), and the transforms' wrappers (batched, grad and
// dual tensors, grad's graph nodes), one per op per level. A replayed Jacobian makes two of
// them per kernel; malloc and free were a tenth of its time.
//
// Invariants: a block freed on one thread goes to that thread's list (any thread may free
// what another allocated: blocks come from and go back to ::operator new/delete); each list
// holds at most kMaxBlocks blocks and is emptied at thread exit; AddressSanitizer builds
// bypass the lists, so use-after-free stays visible to it.
//
// Example:
//   auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>(), ...);
#ifndef FT_TENSOR_BLOCK_POOL_H_
#define FT_TENSOR_BLOCK_POOL_H_

#include <cstddef>
#include <memory>
#include <new>

namespace ft::internal {

// kRecycleMemory: whether freed memory is kept for reuse (this pool, and the buffer cache in
// storage.cc). Off under AddressSanitizer, which must see every free to catch a use after it.
// On under ThreadSanitizer: a block freed on one thread and reused on another is exactly the
// hand-over TSan must see synchronized (tests/threads_test.cc, --config=tsan in CI).
// GCC defines __SANITIZE_ADDRESS__; clang answers __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define FT_INTERNAL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FT_INTERNAL_ASAN 1
#endif
#endif
#ifdef FT_INTERNAL_ASAN
inline constexpr bool kRecycleMemory = false;
#else
inline constexpr bool kRecycleMemory = true;
#endif

template <size_t Size>
class BlockPool {
 public:
  static void* Take() {
    if (kRecycleMemory && head_ != nullptr) {
      FreeBlock* b = head_;
      head_ = b->next;
      --count_;
      return b;
    }
    return ::operator new(Size);
  }

  static void Give(void* p) {
    if (kRecycleMemory && !closed_ && count_ < kMaxBlocks) {
      static_cast<void>(&owner_);  // constructs it on this thread, so the list is freed at exit
      auto* b = static_cast<FreeBlock*>(p);
      b->next = head_;
      head_ = b;
      ++count_;
      return;
    }
    ::operator delete(p);
  }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  static_assert(Size >= sizeof(FreeBlock));
  static constexpr int kMaxBlocks = 1024;

  struct Owner {
    ~Owner() {
      while (head_ != nullptr) {
        FreeBlock* b = head_;
        head_ = b->next;
        ::operator delete(b);
      }
      count_ = 0;
      closed_ = true;  // blocks freed later on this thread (static tensors) go to delete
    }
  };

  static inline constinit thread_local FreeBlock* head_ = nullptr;
  static inline constinit thread_local int count_ = 0;
  static inline constinit thread_local bool closed_ = false;
  static inline thread_local Owner owner_;
};

template <typename T>
struct PoolAllocator {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  using value_type = T;

  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    if (n != 1) return std::allocator<T>().allocate(n);
    return static_cast<T*>(BlockPool<sizeof(T)>::Take());
  }
  void deallocate(T* p, size_t n) {
    if (n != 1) {
      std::allocator<T>().deallocate(p, n);
      return;
    }
    BlockPool<sizeof(T)>::Give(p);
  }

  template <typename U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
};

}  // namespace ft::internal

#endif  // FT_TENSOR_BLOCK_POOL_H_

#include "tensor/tensor.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "tensor/block_pool.h"

namespace ft {

const char* TensorKindName(TensorKind kind) {
  switch (kind) {
    case TensorKind::kDense:
      return "dense";
    case TensorKind::kBatched:
      return "batched";
    case TensorKind::kGradWrapper:
      return "grad wrapper";
    case TensorKind::kDual:
      return "dual";
    case TensorKind::kFunctional:
      return "functional";
  }
  return "?";
}

TensorImpl::TensorImpl(Storage storage, DType dtype, Shape sizes, Shape strides,
                       int64_t offset)
    : kind_(TensorKind::kDense),
      dtype_(dtype),
      contiguous_(IsContiguous(sizes, strides)),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      offset_(offset),
      numel_(Numel(sizes_)),
      storage_(std::move(storage)) {
  FT_CHECK(sizes_.size() == strides_.size());
}

TensorImpl::TensorImpl(Storage storage, DType dtype, IntArrayRef sizes, ContiguousTag)
    : kind_(TensorKind::kDense),
      dtype_(dtype),
      contiguous_(true),
      sizes_(sizes.begin(), sizes.end()),
      strides_(sizes_),  // the right length at the cost of a copy; overwritten below
      offset_(0),
      numel_(WriteContiguousStrides(sizes_, strides_.data())),
      storage_(std::move(storage)) {
}

TensorImpl::TensorImpl(TensorKind kind, DType dtype, Shape sizes)
    : kind_(kind),
      dtype_(dtype),
      contiguous_(true),
      sizes_(std::move(sizes)),
      strides_(sizes_),  // the right length at the cost of a copy; overwritten below
      offset_(0),
      numel_(WriteContiguousStrides(sizes_, strides_.data())) {}

namespace {
// SkipOneIterator walks a span of sizes leaving out one index, so that a Shape can be built
// from it in one pass (no erase, no zero fill).
class SkipOneIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = int64_t;
  using difference_type = std::ptrdiff_t;
  using pointer = const int64_t*;
  using reference = const int64_t&;

  SkipOneIterator(const int64_t* p, const int64_t* skip) : p_(p == skip ? p + 1 : p), skip_(skip) {}
  reference operator*() const { return *p_; }
  SkipOneIterator& operator++() {
    ++p_;
    if (p_ == skip_) ++p_;
    return *this;
  }
  SkipOneIterator operator++(int) {
    SkipOneIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const SkipOneIterator& o) const { return p_ == o.p_; }
  bool operator!=(const SkipOneIterator& o) const { return p_ != o.p_; }

 private:
  const int64_t* p_;
  const int64_t* skip_;
};
}  // namespace

TensorImpl::TensorImpl(TensorKind kind, DType dtype, IntArrayRef value_sizes, int64_t dropped_dim)
    : kind_(kind),
      dtype_(dtype),
      contiguous_(true),
      sizes_(SkipOneIterator(value_sizes.data(),
                             dropped_dim >= 0 && dropped_dim < static_cast<int64_t>(
                                                                   value_sizes.size())
                                 ? value_sizes.data() + dropped_dim
                                 : nullptr),
             SkipOneIterator(value_sizes.data() + value_sizes.size(), nullptr)),
      strides_(sizes_),  // the right length at the cost of a copy; overwritten below
      offset_(0),
      numel_(WriteContiguousStrides(sizes_, strides_.data())) {}

std::string TensorImpl::WrapperRepr() const {
  return absl::StrCat(TensorKindName(kind_), " tensor of shape ", ShapeToString(sizes_));
}

Tensor TensorImpl::UnwrapDead(const std::string& op) const {
  ThrowError(op, ": met a ", TensorKindName(kind_), " tensor whose transform has already ",
             "returned (", WrapperRepr(), ")");
}

void Tensor::ThrowUndefined(const char* what) {
  ThrowError(what, ": the tensor is undefined (a default-constructed ft::Tensor)");
}

const Storage& Tensor::data_storage() const {
  const TensorImpl* impl = &Checked("data_storage");
  while (!impl->is_dense()) impl = impl->wrapped_value()->impl();
  return impl->storage();
}

int64_t TensorImpl::data_version() const {
  return is_dense() ? storage_.version() : wrapped_value()->data_version();
}

namespace {
// DimIndex wraps `d` for size()/stride(). Unlike reductions, these read a dim, so a rank-0
// tensor (which has none) accepts no dim at all, as in PyTorch.
int64_t DimIndex(const char* what, int64_t d, int64_t rank) {
  if (rank == 0) {
    ThrowError(what, ": dim ", d, " is out of range for a tensor of rank 0 (it has no dims)");
  }
  return WrapDim(what, d, rank);
}
}  // namespace

int64_t Tensor::size(int64_t d) const { return sizes()[DimIndex("size", d, dim())]; }

int64_t Tensor::stride(int64_t d) const { return strides()[DimIndex("stride", d, dim())]; }

namespace internal {
constinit thread_local ValueReadObserver* tls_value_read_observer = nullptr;
}  // namespace internal

const TensorImpl& Tensor::ReadableImpl(const char* what) const {
  if (!defined()) ThrowError(what, ": the tensor is undefined");
  const Tensor* t = this;
  while (!t->is_dense()) {
    const TensorImpl* impl = t->impl();
    if (impl->kind() == TensorKind::kBatched) {
      ThrowError(what, ": cannot read the elements of a batched tensor inside vmap (",
                 impl->WrapperRepr(), "): its value differs per example. Branch with "
                 "ft::where, ft::cond or ft::while_loop, or return it from the transformed "
                 "function instead");
    }
    const bool primal_readable =
        (impl->kind() == TensorKind::kGradWrapper || impl->kind() == TensorKind::kDual) &&
        impl->wrapped_value() != nullptr;
    if (!primal_readable) {
      ThrowError(what, ": cannot read the elements of a ", TensorKindName(impl->kind()),
                 " tensor inside a transform (", impl->WrapperRepr(),
                 "); return it from the transformed function instead");
    }
    t = impl->wrapped_value();
  }
  // The primal under the wrappers is what is read: a trace must see it (jit(grad(f))).
  if (internal::tls_value_read_observer != nullptr) [[unlikely]] {
    internal::tls_value_read_observer->OnValueRead(*t, what);
  }
  return *t->impl();
}

void Tensor::CheckReadable(const char* what) const {
  if (!defined()) ThrowError(what, ": the tensor is undefined");
  if (!is_dense()) {
    ThrowError(what, ": cannot read the elements of a ", TensorKindName(kind()),
               " tensor inside a transform (", impl_->WrapperRepr(),
               "); return it from the transformed function instead");
  }
  if (internal::tls_value_read_observer != nullptr) [[unlikely]] {
    internal::tls_value_read_observer->OnValueRead(*this, what);
  }
}

std::string Tensor::DebugString() const {
  if (!defined()) return "Tensor(undefined)";
  return absl::StrCat("Tensor(shape=", ShapeToString(sizes()), ", dtype=", DTypeName(dtype()),
                      ", strides=", ShapeToString(strides()), ", offset=", storage_offset(),
                      ", ", TensorKindName(kind()), ")");
}

Tensor MakeDense(Storage storage, DType dtype, Shape sizes, Shape strides, int64_t offset) {
  return Tensor(std::allocate_shared<TensorImpl>(internal::PoolAllocator<TensorImpl>(),
                                                std::move(storage), dtype, std::move(sizes),
                                                std::move(strides), offset));
}

namespace {
// ThrowTooLarge: a tensor of `sizes` and `dtype` cannot be represented in memory.
[[noreturn, gnu::noinline]] void ThrowTooLarge(IntArrayRef sizes, DType dtype, const char* why) {
  throw AllocationError(absl::StrCat("a tensor of shape ", ShapeToString(sizes), " and dtype ",
                                     DTypeName(dtype), " ", why));
}
}  // namespace

Tensor EmptyContiguous(IntArrayRef sizes, DType dtype) {
  // The counts of sizes a kernel computed from user input (repeat, pad, an expanded matmul)
  // may overflow: checked, before anything is allocated.
  int64_t numel = 1, nbytes = 0;
  for (int64_t s : sizes) {
    if (__builtin_mul_overflow(numel, s, &numel)) [[unlikely]] {
      ThrowTooLarge(sizes, dtype, "has more elements than int64 can count");
    }
  }
  if (__builtin_mul_overflow(numel, ItemSize(dtype), &nbytes)) [[unlikely]] {
    ThrowTooLarge(sizes, dtype, "needs more bytes than int64 can count");
  }
  Storage storage;
  try {
    storage = Storage::Allocate(static_cast<size_t>(nbytes));
  } catch (const AllocationError&) {
    ThrowTooLarge(sizes, dtype,
                  absl::StrCat("needs ", nbytes, " bytes, more than this machine can allocate")
                      .c_str());
  }
  return Tensor(std::allocate_shared<TensorImpl>(internal::PoolAllocator<TensorImpl>(),
                                                std::move(storage), dtype, sizes,
                                                TensorImpl::ContiguousTag{}));
}

}  // namespace ft

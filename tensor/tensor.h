// ft/tensor/tensor.h
//
// Tensor: ft's tensor handle, and TensorImpl, what it points to.
//
// A Tensor is a cheap, shared handle (like torch.Tensor): copying it copies a reference, and
// `a.is_same(b)` tells whether two handles are the same tensor object. The object is a
// TensorImpl. A dense TensorImpl describes a strided view of a Storage:
//   element [i0, i1, ...] lives at data + (offset + i0*stride0 + i1*stride1 + ...) * itemsize.
// Invariants: strides are in elements, 0 means broadcast; sizes >= 0; views share Storage
// (and with it the version counter, see NOTE: [Version counter] in storage.h).
//
// Transforms add wrapper kinds (batched, grad, dual, ...) by subclassing TensorImpl in their
// own packages; this package only knows the TensorKind tag. Wrappers carry logical sizes and
// dtype but no storage; base kernels only ever receive dense tensors (see
// NOTE: [Wrappers never reach kernels] in dispatch/dispatch.h).
//
// This header holds metadata only. The ops (ft::sin, ft::reshape, ...) are free functions in
// //dispatch; the factories are in tensor/factories.h.
//
// Example:
//   Tensor t = ft::reshape(ft::arange(6), {2, 3});   // ops are free functions in //ops
//   t.sizes() == {2, 3}; t.strides() == {3, 1}; t.item<float>() throws (6 elements)
#ifndef FT_TENSOR_TENSOR_H_
#define FT_TENSOR_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/error.h"
#include "tensor/shape.h"
#include "tensor/storage.h"

namespace ft {

class Tensor;

// TensorKind tags what a TensorImpl is. Only kDense has storage.
enum class TensorKind : uint8_t { kDense, kBatched, kGradWrapper, kDual, kFunctional };

const char* TensorKindName(TensorKind kind);

class TensorImpl {
 public:
  // A dense tensor viewing `storage`.
  TensorImpl(Storage storage, DType dtype, Shape sizes, Shape strides, int64_t offset);
  // A dense, contiguous tensor of `sizes` at offset 0 of `storage` (EmptyContiguous): the
  // strides and element count are computed in one pass, nothing is checked.
  struct ContiguousTag {};
  TensorImpl(Storage storage, DType dtype, IntArrayRef sizes, ContiguousTag);
  virtual ~TensorImpl() = default;

  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;

  TensorKind kind() const { return kind_; }
  bool is_dense() const { return kind_ == TensorKind::kDense; }
  DType dtype() const { return dtype_; }
  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t storage_offset() const { return offset_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  bool is_contiguous() const { return contiguous_; }
  const Storage& storage() const { return storage_; }

  // raw_data points at element [0, 0, ...] (storage data + offset). Dense only. A tensor
  // without elements gets the storage's start: nothing is read through it, and its offset
  // may lie far past the storage (a split's empty pieces saturate theirs near INT64_MAX).
  void* raw_data() const {
    char* base = static_cast<char*>(storage_.data());
    return numel_ == 0 ? base : base + offset_ * ItemSize(dtype_);
  }

  // WrapperRepr prints a wrapper (e.g. "BatchedTensor(lvl=1, bdim=0, value=...)"). Wrapper
  // kinds override it; dense tensors are printed by tensor/print.h.
  virtual std::string WrapperRepr() const;

  // NOTE: [Dead wrappers]
  // A wrapper belongs to one transform level. When that transform returns, its level dies,
  // but a wrapper can escape (a tensor saved inside a vjp_fn, a batched tensor stored in a
  // global). The dispatcher asks every wrapper it meets whether its level is alive; a dead
  // one is replaced by UnwrapDead(op): a grad wrapper returns its value (so vjp_fn works
  // after vjp returned), a batched tensor throws an ft::Error naming the dead level.
  virtual bool is_alive_wrapper() const { return true; }
  virtual Tensor UnwrapDead(const std::string& op) const;

  // wrapped_value: the value one level down a wrapper holds (a batched tensor's value, a
  // grad wrapper's value, a dual's primal, a functional tensor's current value); nullptr for
  // dense tensors.
  virtual const Tensor* wrapped_value() const { return nullptr; }

  // data_version: what Tensor::data_version reports: the version counter of the storage
  // under every wrapper layer. A wrapper whose in-place writes replace its value instead of
  // writing a storage (functionalize's) overrides it with a counter of its own writes, so the
  // transforms around it still see every write.
  virtual int64_t data_version() const;

 protected:
  // For wrapper subclasses: logical dtype and sizes, no storage. Strides are the contiguous
  // strides of the logical shape.
  TensorImpl(TensorKind kind, DType dtype, Shape sizes);
  // For wrappers over a value of sizes `value_sizes`: the logical sizes are those without
  // dim `dropped_dim` (a batch dim; -1 keeps them all), written in place: wrappers are made
  // once per op per level.
  TensorImpl(TensorKind kind, DType dtype, IntArrayRef value_sizes, int64_t dropped_dim);

 private:
  TensorKind kind_;
  DType dtype_;
  bool contiguous_;
  Shape sizes_;
  Shape strides_;
  int64_t offset_;
  int64_t numel_;
  Storage storage_;
};

class Tensor {
 public:
  // An undefined tensor (defined() is false), used for "no gradient" and optional arguments.
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  // Metadata. On an undefined tensor each throws ft::Error naming the accessor ("sizes: the
  // tensor is undefined (a default-constructed ft::Tensor)"); is_dense() is false for it, so
  // an op given one reaches the dispatcher, which names the op and the argument.
  DType dtype() const { return Checked("dtype").dtype(); }
  TensorKind kind() const { return Checked("kind").kind(); }
  bool is_dense() const { return impl_ != nullptr && impl_->is_dense(); }
  IntArrayRef sizes() const { return Checked("sizes").sizes(); }
  IntArrayRef shape() const { return Checked("shape").sizes(); }
  IntArrayRef strides() const { return Checked("strides").strides(); }
  int64_t storage_offset() const { return Checked("storage_offset").storage_offset(); }
  int64_t dim() const { return Checked("dim").dim(); }
  int64_t numel() const { return Checked("numel").numel(); }
  bool is_contiguous() const { return Checked("is_contiguous").is_contiguous(); }
  bool is_floating_point() const { return IsFloating(dtype()); }

  // size(d) and stride(d) accept negative dims; they throw ft::Error when d is out of range.
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;

  // is_same reports whether both handles point to the same tensor object (identity, not
  // equality). Views of one storage are different objects.
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  // storage is the buffer a dense tensor views (undefined Storage for wrappers).
  const Storage& storage() const { return Checked("storage").storage(); }
  // version is the storage's version counter (bumped by in-place ops). Dense only.
  int64_t version() const { return Checked("version").storage().version(); }
  // data_version: the version of the storage under every wrapper layer (a wrapper's
  // innermost dense value; TensorImpl::data_version). The transforms compare it to tell that a
  // value was written in place behind their back (e.g. through a view).
  int64_t data_version() const { return Checked("data_version").data_version(); }
  // data_storage: the storage under every wrapper layer (aliasing checks of the transforms).
  const Storage& data_storage() const;
  // bump_version records an in-place write (in-place kernels call it once per write).
  void bump_version() const { Checked("bump_version").storage().BumpVersion(); }

  // data<T>() points at the first element; T must match dtype() (throws otherwise) and the
  // tensor must be dense (throws otherwise). Element i of dim d is `stride(d) * i` away.
  template <typename T>
  T* data() const;

  // item<T>() returns the single element converted to T. Throws ft::Error when numel() != 1.
  // to_vector<T>() returns all elements in row-major order, converted to T. T is any
  // element type of tensor/dtype.h, converted as ConvertElement does (a complex tensor read
  // as float gives the real parts; read it as std::complex<float> for both).
  // NOTE: [Host reads inside transforms]
  // Inside grad, vjp, jvp, jacrev, jacfwd or hessian both return the primal value (through
  // every grad and dual wrapper), as functorch and JAX allow: C++ `if` and `while` on a value
  // work there, and the derivative is that of the path taken. Inside vmap a value differs
  // per example, so a batched tensor still throws, naming ft::where, ft::cond and
  // ft::while_loop; so does a functionalize wrapper (its value may be stale). data<T>()
  // hands out a writable pointer and stays dense-only.
  template <typename T>
  T item() const;
  template <typename T>
  std::vector<T> to_vector() const;

  // DebugString: shape, dtype, strides, storage offset and kind, e.g.
  // "Tensor(shape=[2, 3], dtype=float32, strides=[1, 2], offset=0, dense)".
  std::string DebugString() const;

 private:
  void CheckReadable(const char* what) const;
  // ReadableImpl: the dense impl item() and to_vector() read (NOTE: [Host reads inside
  // transforms]), after the same checks as CheckReadable.
  const TensorImpl& ReadableImpl(const char* what) const;
  // Checked: the impl, or an ft::Error naming `what` for an undefined tensor (one compare on
  // the metadata accessors' path; the throw is out of line).
  const TensorImpl& Checked(const char* what) const {
    if (impl_ == nullptr) [[unlikely]] ThrowUndefined(what);
    return *impl_;
  }
  [[noreturn]] static void ThrowUndefined(const char* what);
  std::shared_ptr<TensorImpl> impl_;
};

using TensorList = std::vector<Tensor>;

// ValueReadObserver hears, on this thread while it is installed, every access to a tensor's
// elements through data(), item() and to_vector(), and every kernel whose output shape
// depends on element values (NoteValueDependentShape). The jit tracer (//interpreters/jit)
// uses it: a function that looks at values outside a kernel may branch on them, and a
// value-dependent shape changes with the input, so neither trace can be replayed.
class ValueReadObserver {
 public:
  virtual void OnValueRead(const Tensor& t, const char* what) = 0;
  virtual void OnValueDependentShape(const char* op) = 0;

 protected:
  ~ValueReadObserver() = default;
};

namespace internal {
extern constinit thread_local ValueReadObserver* tls_value_read_observer;
}  // namespace internal

// NoteValueDependentShape: a kernel calls it when its output shape was computed from element
// values (one_hot inferring num_classes).
inline void NoteValueDependentShape(const char* op) {
  if (internal::tls_value_read_observer != nullptr) [[unlikely]] {
    internal::tls_value_read_observer->OnValueDependentShape(op);
  }
}

// MakeDense wraps (storage, dtype, sizes, strides, offset) in a new dense Tensor.
Tensor MakeDense(Storage storage, DType dtype, Shape sizes, Shape strides, int64_t offset);

// EmptyContiguous returns an uninitialized contiguous tensor.
Tensor EmptyContiguous(IntArrayRef sizes, DType dtype);

// ---- template definitions ----

template <typename T>
T* Tensor::data() const {
  CheckReadable("data");
  if (DTypeOf<std::remove_const_t<T>>() != dtype()) {
    ThrowError("data: requested element type ", DTypeName(DTypeOf<std::remove_const_t<T>>()),
               " but the tensor is ", DTypeName(dtype()));
  }
  return static_cast<T*>(impl_->raw_data());
}

namespace internal {
// ReadElement reads the element at `linear` (row-major logical index) converted to T.
template <typename T>
T ReadElement(const TensorImpl& impl, int64_t linear) {
  int64_t offset = 0;
  const IntArrayRef sizes = impl.sizes();
  const IntArrayRef strides = impl.strides();
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    offset += (linear % sizes[d]) * strides[d];
    linear /= sizes[d];
  }
  return VisitEveryDType(impl.dtype(), [&](auto tag) -> T {
    using S = typename decltype(tag)::type;
    return ConvertElement<T>(static_cast<const S*>(impl.raw_data())[offset]);
  });
}
}  // namespace internal

template <typename T>
T Tensor::item() const {
  const TensorImpl& impl = ReadableImpl("item");
  if (impl.numel() != 1) {
    ThrowError("item: a tensor with ", impl.numel(), " elements (shape ",
               ShapeToString(impl.sizes()),
               ") cannot be converted to a scalar; item() needs exactly one element");
  }
  return internal::ReadElement<T>(impl, 0);
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  const TensorImpl& impl = ReadableImpl("to_vector");
  std::vector<T> out(static_cast<size_t>(impl.numel()));
  for (int64_t i = 0; i < impl.numel(); ++i) out[i] = internal::ReadElement<T>(impl, i);
  return out;
}

}  // namespace ft

#endif  // FT_TENSOR_TENSOR_H_

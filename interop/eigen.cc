#include "interop/eigen.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tensor/copy.h"
#include "tensor/error.h"
#include "tensor/shape.h"
#include "tensor/storage.h"

namespace ft::interop_internal {

namespace {

// Describe: "float32 tensor of sizes [3, 2] and strides [1, 3]".
std::string Describe(const Tensor& t) {
  return absl::StrCat(DTypeName(t.dtype()), " tensor of sizes ", ShapeToString(t.sizes()),
                      " and strides ", ShapeToString(t.strides()));
}

// CheckDense: t is defined and dense, else ft::Error naming `fn`.
void CheckDense(const char* fn, const Tensor& t) {
  if (!t.defined()) ThrowError(fn, ": the tensor is undefined (a default-constructed ft::Tensor)");
  if (!t.is_dense()) {
    ThrowError(fn, ": cannot reach the memory of a ", TensorKindName(t.kind()),
               " tensor (a transform's wrapper, of logical sizes ", ShapeToString(t.sizes()),
               "): only dense tensors have storage; convert outside the transform");
  }
}

}  // namespace

void CheckMappable(const char* fn, const Tensor& t, int64_t rank, DType dtype) {
  CheckDense(fn, t);
  if (t.dim() != rank || t.dtype() != dtype) {
    ThrowError(fn, ": expected a ", rank, "-D ", DTypeName(dtype), " tensor, got a ", t.dim(),
               "-D ", Describe(t),
               t.dtype() != dtype ? " (views never convert dtypes; ToEigen copies)" : "");
  }
}

void ThrowLayout(const char* fn, const Tensor& t, const char* why) {
  ThrowError(fn, ": cannot map a ", Describe(t), " ", why);
}

void RefuseBroadcast(const char* fn, const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) == 0 && t.size(d) > 1) {
      ThrowError(fn, ": cannot map a ", Describe(t), " as a writable Eigen object: dim ", d,
                 " is broadcast (stride 0), so one element stands for ", t.size(d),
                 " coefficients and a write would change them all; map it read-only (", fn,
                 "<const T>) or clone it first");
    }
  }
}

Tensor ContiguousAs(const char* fn, const Tensor& t, DType dtype, int64_t rank) {
  CheckDense(fn, t);
  if (t.dim() != rank) {
    ThrowError(fn, ": expected a ", rank, "-D tensor for ",
               rank == 1 ? "an Eigen vector type" : "an Eigen matrix type", ", got a ", t.dim(),
               "-D ", Describe(t));
  }
  return kernels::contiguous(kernels::to(t, dtype));
}

Tensor NewContiguous(IntArrayRef sizes, DType dtype) { return EmptyContiguous(sizes, dtype); }

Tensor External(void* data, DType dtype, IntArrayRef sizes, IntArrayRef strides) {
  // The elements span [lowest, highest] element offsets from `data`; a negative stride
  // (a reversed Eigen Map) puts the storage's start before element [0, 0].
  int64_t lowest = 0, highest = 0;
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) empty = true;
    const int64_t reach = (sizes[d] - 1) * strides[d];
    (reach < 0 ? lowest : highest) += reach;
  }
  const int64_t itemsize = ItemSize(dtype);
  Shape shape(sizes.begin(), sizes.end()), steps(strides.begin(), strides.end());
  if (empty) {  // no element is ever read: an empty buffer at `data`
    return MakeDense(Storage::FromExternal(data, 0), dtype, std::move(shape), std::move(steps), 0);
  }
  char* const start = static_cast<char*>(data) + lowest * itemsize;
  const size_t nbytes = static_cast<size_t>(highest - lowest + 1) * itemsize;
  return MakeDense(Storage::FromExternal(start, nbytes), dtype, std::move(shape), std::move(steps),
                   -lowest);
}

}  // namespace ft::interop_internal

#include "tensor/kernel_util.h"

#include <algorithm>

namespace ft::kernels::internal {

Operand MakeOperand(const Tensor& t, IntArrayRef shape) {
  FT_CHECK(t.is_dense());
  Operand op;
  op.data = static_cast<char*>(t.impl()->raw_data());
  op.byte_strides.assign(shape.size(), 0);
  const int64_t item = ItemSize(t.dtype());
  const size_t lead = shape.size() - static_cast<size_t>(t.dim());
  FT_CHECK(static_cast<size_t>(t.dim()) <= shape.size());
  // An empty tensor's strides are never used, and may be anything (a view of an empty
  // tensor can carry a stride near INT64_MAX, which times the item size overflows): its
  // byte strides stay 0.
  const bool empty = t.numel() == 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t size = t.sizes()[d];
    FT_CHECK(size == shape[lead + d] || size == 1);
    op.byte_strides[lead + d] = size == 1 || empty ? 0 : t.strides()[d] * item;
  }
  return op;
}

bool IsTrailingBlock(const Tensor& x, IntArrayRef sizes) {
  IntArrayRef own = x.sizes();
  while (!own.empty() && own.front() == 1) own.remove_prefix(1);
  if (own.size() > sizes.size()) return false;
  return std::equal(own.begin(), own.end(), sizes.end() - own.size());
}

void CheckFloating(absl::string_view op, const Tensor& t) {
  if (!IsFloating(t.dtype())) {
    ThrowError(op, ": expected a floating point tensor (float32 or float64), got ",
               DTypeName(t.dtype()), " of shape ", ShapeToString(t.sizes()));
  }
}

void CheckWritable(absl::string_view op, const Tensor& self) {
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.strides()[d] == 0 && self.sizes()[d] > 1) {
      ThrowError(op, ": cannot write in place into a tensor whose elements overlap (shape ",
                 ShapeToString(self.sizes()), ", strides ", ShapeToString(self.strides()),
                 ": dim ", d, " is broadcast); clone() it first");
    }
  }
}

void CheckNotBool(absl::string_view op, const Tensor& t) {
  if (t.dtype() == kBool) {
    ThrowError(op, ": not supported for bool tensors (shape ", ShapeToString(t.sizes()), ")");
  }
}

}  // namespace ft::kernels::internal

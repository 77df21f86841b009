#include "kernels/checks.h"

#include "tensor/error.h"
#include "tensor/shape.h"

namespace ft::kernels::internal {

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

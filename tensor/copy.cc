#include "tensor/copy.h"

#include <algorithm>
#include <type_traits>

#include "tensor/loops.h"

namespace ft::kernels {

void copy_into(const Tensor& dst, const Tensor& src) {
  // Validates that src broadcasts to dst (throws with both shapes otherwise), also when dst
  // has no elements: copying 3 values into a size-0 tensor is an error, as in PyTorch.
  Shape b = BroadcastShapes("copy_", dst.sizes(), src.sizes());
  if (!std::equal(b.begin(), b.end(), dst.sizes().begin(), dst.sizes().end())) {
    ThrowError("copy_: source of shape ", ShapeToString(src.sizes()),
               " cannot be broadcast to the destination shape ", ShapeToString(dst.sizes()));
  }
  if (Numel(dst.sizes()) == 0) return;
  VisitDType(dst.dtype(), [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    VisitDType(src.dtype(), [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      internal::UnaryLoop<In, Out>(dst, src, [](const auto& a) {
        if constexpr (std::is_same_v<Out, bool> && !std::is_same_v<In, bool>) {
          return a != In(0);
        } else if constexpr (std::is_integral_v<Out> && std::is_floating_point_v<In>) {
          // NaN, infinities and out-of-range values: defined (ConvertElement), not UB.
          return a.unaryExpr([](In v) { return ConvertElement<Out>(v); });
        } else {
          return a.template cast<Out>();
        }
      });
    });
  });
}

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = EmptyContiguous(t.sizes(), t.dtype());
  copy_into(out, t);
  return out;
}

Tensor clone(const Tensor& t) {
  Tensor out = EmptyContiguous(t.sizes(), t.dtype());
  copy_into(out, t);
  return out;
}

Tensor stop_gradient(const Tensor& t) { return clone(t); }

Tensor to(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = EmptyContiguous(t.sizes(), dtype);
  copy_into(out, t);
  return out;
}

}  // namespace ft::kernels

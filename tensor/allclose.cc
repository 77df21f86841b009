#include "tensor/allclose.h"

#include <cmath>
#include <vector>

namespace ft {
namespace {

// Broadcast view of a dense tensor to `shape` (stride 0 on new and size-1 dims).
Tensor BroadcastView(const Tensor& t, IntArrayRef shape) {
  Shape strides(shape.size(), 0);
  const size_t lead = shape.size() - static_cast<size_t>(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) {
    strides[lead + d] = t.sizes()[d] == 1 ? 0 : t.strides()[d];
  }
  return MakeDense(t.storage(), t.dtype(), Shape(shape.begin(), shape.end()), strides,
                   t.storage_offset());
}

}  // namespace

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  if (!a.defined() || !b.defined()) ThrowError("allclose: undefined tensor");
  if (rtol < 0 || atol < 0) {
    ThrowError("allclose: tolerances must be non-negative, got rtol=", rtol, ", atol=", atol);
  }
  const Shape shape = BroadcastShapes("allclose", a.sizes(), b.sizes());
  if (!a.is_dense() || !b.is_dense()) {
    ThrowError("allclose: cannot read the elements of a transform wrapper; compare outside ",
               "the transformed function");
  }
  const std::vector<double> va = BroadcastView(a, shape).to_vector<double>();
  const std::vector<double> vb = BroadcastView(b, shape).to_vector<double>();
  for (size_t i = 0; i < va.size(); ++i) {
    const double x = va[i], y = vb[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (equal_nan && std::isnan(x) && std::isnan(y)) continue;
      return false;
    }
    if (x == y) continue;  // also equal infinities
    if (std::isinf(x) || std::isinf(y)) return false;
    if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y))) return false;
  }
  return true;
}

}  // namespace ft

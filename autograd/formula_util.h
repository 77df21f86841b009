// ft/autograd/formula_util.h  (internal to //autograd)
//
// Helpers the vjp formula files share, written with the public ops.
#ifndef FT_AUTOGRAD_FORMULA_UTIL_H_
#define FT_AUTOGRAD_FORMULA_UTIL_H_

#include <algorithm>
#include <cstdint>

#include "ops/ops.h"

namespace ft::autograd::internal {

// Op: the registered operator named `name` (formulas are installed by name).
inline const Operator& Op(const char* name) { return OpRegistry::Global().Get(name); }

// ExpandReduced: a reduction's gradient (or output) broadcast back to the input's shape:
// with keepdim false the reduced dims are re-inserted as size 1 first.
inline Tensor ExpandReduced(const Tensor& g, const Tensor& x, IntArrayRef dims, bool keepdim) {
  Tensor r = g;
  if (!keepdim && x.dim() > 0) {
    Shape wrapped = WrapDims("sum", dims, x.dim(), /*empty_means_all=*/true);
    std::sort(wrapped.begin(), wrapped.end());
    for (int64_t d : wrapped) r = unsqueeze(r, d);
  }
  return expand(r, x.sizes());
}

// ReducedCount: how many elements of x one reduction over `dims` combines.
inline int64_t ReducedCount(const Tensor& x, IntArrayRef dims) {
  if (x.dim() == 0) return 1;
  int64_t n = 1;
  for (int64_t d : WrapDims("mean", dims, x.dim(), true)) n *= x.size(d);
  return n;
}

// AddTangents: a + b where an undefined tangent is zero (jvp formulas sum per-input parts).
inline Tensor AddTangents(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return a + b;
}

}  // namespace ft::autograd::internal

#endif  // FT_AUTOGRAD_FORMULA_UTIL_H_

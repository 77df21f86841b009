// vjp formulas: prod, amax/amin, var/std, norm, cumsum, sum_to_size, sort, topk, dropout.
// Non-differentiable: bernoulli.
//
// Like the other formula files, every formula is written with the public ops only, so it is
// itself differentiable (grad of grad) and batchable (vmap of grad).
//
// Choices (documented here, tested in more_reduction_formulas_test.cc):
//   prod: exact with zeros and negatives, no logs. Per reduced slice, with nz = x where
//     x != 0 else 1 and z = the number of zeros in the slice:
//       x != 0             -> out / x        (computed as out / nz: never divides by 0)
//       x == 0 and z == 1  -> prod(nz)       (the product of the others)
//       x == 0 and z >= 2  -> 0              (another zero remains among the others)
//   amax / amin: the gradient is split evenly among the tied extremes
//     (g * mask / count, mask = x == expanded out). A NaN extreme gives zero gradient.
//   var: g * 2 (x - mean) / max(0, N - correction) (a zero denominator gives inf/nan, as the
//     forward does). std: var's gradient with g / (2 out), zero where out == 0 (PyTorch).
//   norm: p = 0 -> zeros; p = 1 -> g sign(x); p = 2 -> g x / out; p = +-inf -> the gradient
//     of max / min |x| split evenly among ties, times sign(x); any other p ->
//     g sign(x) |x|^(p-1) / out^(p-1). A zero norm gives a zero gradient, and x == 0 gives
//     zero for the general p (PyTorch's masked_fill for p < 1).
//   cumsum: the reverse cumulative sum flip(cumsum(flip(g))).
//   sum_to_size: g expanded back to the input's shape.
//   sort / topk: the values' gradient scattered back by the returned indices (the indices
//     output has no gradient).
//   dropout: identity when it returned x unchanged (train false or p == 0); zeros for
//     p == 1; otherwise g * (out != 0) / (1 - p). The mask is recovered from the output, so
//     an element of x that is exactly 0 counts as dropped (its gradient is 0 instead of
//     g / (1 - p)): only exact zeros of x are affected.
//   In-place ops (exp_, add_, ...) deliberately get nothing here: the grad transform rejects
//   in-place ops on tracked tensors before formulas are consulted.
#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "dispatch/ops.h"

namespace ft::autograd {
namespace {

using internal::ExpandReduced;
using internal::Op;
using internal::ReducedCount;


// AsFloat converts a bool mask to x's dtype.
Tensor AsFloat(const Tensor& mask, const Tensor& x) { return to(mask, x.dtype()); }

// EvenSplit: the gradient of an extreme (max / min) reduction of `values` whose result is
// `out`: g spread evenly over the elements equal to the extreme of their slice.
Tensor EvenSplit(const Tensor& g, const Tensor& values, const Tensor& out, IntArrayRef dims,
                 bool keepdim) {
  Tensor mask = AsFloat(eq(values, ExpandReduced(out, values, dims, keepdim)), values);
  Tensor count = sum(mask, dims, /*keepdim=*/true);
  return ExpandReduced(g, values, dims, keepdim) * mask / count;
}

// SortLikeGrad: values' gradient g scattered back into x's shape along dim by indices.
Tensor SortLikeGrad(const Tensor& x, int64_t dim, const Tensor& indices, const Tensor& g) {
  if (x.dim() == 0) return reshape(g, x.sizes());
  return scatter_add(zeros_like(x), dim, indices, g);
}

}  // namespace

void RegisterMoreReductionFormulas() {
  SetVjp(Op("prod"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const Shape& dims = c.inputs[1].shape();
    const bool keepdim = c.inputs[2].to_bool();
    const Tensor is_zero = eq(x, 0.0);
    const Tensor nz = where(is_zero, 1.0, x);
    const Tensor zeros_in_slice = sum(AsFloat(is_zero, x), dims, /*keepdim=*/true);
    const Tensor others_at_zero =
        where(eq(zeros_in_slice, 1.0), prod(nz, dims, /*keepdim=*/true), 0.0);
    const Tensor out = ExpandReduced(c.output(0), x, dims, keepdim);
    const Tensor others = where(is_zero, expand(others_at_zero, x.sizes()), out / nz);
    return TensorList{ExpandReduced(g[0], x, dims, keepdim) * others};
  });

  for (const char* name : {"amax", "amin"}) {
    SetVjp(Op(name), [](const VjpContext& c, const TensorList& g) {
      return TensorList{EvenSplit(g[0], c.input(0), c.output(0), c.inputs[1].shape(),
                                  c.inputs[2].to_bool())};
    });
  }

  // var / std: inputs (self, dim, correction, keepdim).
  auto var_grad = [](const Tensor& g_expanded, const VjpContext& c) {
    const Tensor& x = c.input(0);
    const Shape& dims = c.inputs[1].shape();
    const int64_t correction = c.inputs[2].to_int();
    const double denom =
        static_cast<double>(std::max<int64_t>(0, ReducedCount(x, dims) - correction));
    return g_expanded * (x - mean(x, dims, /*keepdim=*/true)) * (2.0 / denom);
  };
  SetVjp(Op("var"), [var_grad](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    return TensorList{
        var_grad(ExpandReduced(g[0], x, c.inputs[1].shape(), c.inputs[3].to_bool()), c)};
  });
  SetVjp(Op("std"), [var_grad](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const Tensor& out = c.output(0);
    const Tensor out_zero = eq(out, 0.0);
    const Tensor safe_out = where(out_zero, 1.0, out);
    const Tensor g_var = where(out_zero, 0.0, g[0] / (safe_out * 2.0));
    return TensorList{
        var_grad(ExpandReduced(g_var, x, c.inputs[1].shape(), c.inputs[3].to_bool()), c)};
  });

  // norm: inputs (self, p, dim, keepdim).
  SetVjp(Op("norm"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const double p = c.inputs[1].to_double();
    const Shape& dims = c.inputs[2].shape();
    const bool keepdim = c.inputs[3].to_bool();
    const Tensor& out = c.output(0);
    if (p == 0.0) return TensorList{zeros_like(x)};
    if (p == 1.0) return TensorList{ExpandReduced(g[0], x, dims, keepdim) * sign(x)};
    if (std::isinf(p)) {
      return TensorList{EvenSplit(g[0], abs(x), out, dims, keepdim) * sign(x)};
    }
    const Tensor out_zero = eq(out, 0.0);
    const Tensor safe_out = where(out_zero, 1.0, out);
    if (p == 2.0) {
      const Tensor scale = where(out_zero, 0.0, g[0] / safe_out);
      return TensorList{ExpandReduced(scale, x, dims, keepdim) * x};
    }
    const Tensor scale = where(out_zero, 0.0, g[0] / pow(safe_out, p - 1.0));
    const Tensor x_zero = eq(x, 0.0);
    const Tensor safe_abs = where(x_zero, 1.0, abs(x));
    const Tensor term = where(x_zero, 0.0, sign(x) * pow(safe_abs, p - 1.0));
    return TensorList{ExpandReduced(scale, x, dims, keepdim) * term};
  });

  SetVjp(Op("cumsum"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    if (x.dim() == 0) return TensorList{reshape(g[0], x.sizes())};
    const int64_t dim = WrapDim("cumsum", c.inputs[1].to_int(), x.dim());
    return TensorList{flip(cumsum(flip(g[0], {dim}), dim), {dim})};
  });

  SetVjp(Op("sum_to_size"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{expand(g[0], c.input(0).sizes())};
  });

  // sort: inputs (self, dim, descending); topk: (self, k, dim, largest, sorted). Outputs
  // (values, indices).
  SetVjp(Op("sort"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{SortLikeGrad(c.input(0), c.inputs[1].to_int(), c.output(1), g[0])};
  });
  SetVjp(Op("topk"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{SortLikeGrad(c.input(0), c.inputs[2].to_int(), c.output(1), g[0])};
  });

  // dropout: inputs (self, p, train, generator).
  SetVjp(Op("dropout"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const double p = c.inputs[1].to_double();
    const bool train = c.inputs[2].to_bool();
    if (!train || p == 0.0) return TensorList{g[0]};
    if (p == 1.0) return TensorList{zeros_like(x)};
    return TensorList{g[0] * AsFloat(ne(c.output(0), 0.0), x) * (1.0 / (1.0 - p))};
  });

  MarkNonDifferentiable(Op("bernoulli"));
}

}  // namespace ft::autograd

// vjp and jvp formulas: prod, amax/amin, var/std, norm, cumsum, sum_to_size, sort, topk,
// dropout. Non-differentiable: bernoulli.
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
//   jvp: each jvp formula is the transpose of its vjp (jvpcheck checks <J v, w> = <v, J^T w>):
//     a reduction's tangent is sum(t * d, dims, keepdim) for the vjp's per-element factor d
//     (prod: the product of the others; var: 2 (x - mean) / denom; norm: the factor of its
//     vjp above); amax / amin and norm(+-inf) give the mean of the tangents at the tied
//     extremes (the transpose of the even split); cumsum / sum_to_size are linear (their own
//     jvp); sort / topk gather t by the returned indices (the indices get no tangent);
//     dropout multiplies t by the same mask / (1 - p).
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

// EvenSplitJvp: the transpose of EvenSplit, for forward mode: the mean of the tangents t at
// the elements of `values` equal to the extreme of their slice.
Tensor EvenSplitJvp(const Tensor& t, const Tensor& values, const Tensor& out, IntArrayRef dims,
                    bool keepdim) {
  Tensor mask = eq(values, ExpandReduced(out, values, dims, keepdim));
  return sum(where(mask, t, 0.0), dims, keepdim) / sum(AsFloat(mask, values), dims, keepdim);
}

// ProdOthers: d prod(x, dims) / dx elementwise (shaped like x): the product of the other
// elements of each element's slice, exact with zeros (see "prod" above).
Tensor ProdOthers(const Tensor& x, const Tensor& out, IntArrayRef dims, bool keepdim) {
  const Tensor is_zero = eq(x, 0.0);
  const Tensor nz = where(is_zero, 1.0, x);
  const Tensor zeros_in_slice = sum(AsFloat(is_zero, x), dims, /*keepdim=*/true);
  const Tensor others_at_zero =
      where(eq(zeros_in_slice, 1.0), prod(nz, dims, /*keepdim=*/true), 0.0);
  return where(is_zero, expand(others_at_zero, x.sizes()),
               ExpandReduced(out, x, dims, keepdim) / nz);
}

// NormTerm: the per-element factor sign(x) |x|^(p-1) of a general p-norm's derivative, 0
// where x == 0.
Tensor NormTerm(const Tensor& x, double p) {
  const Tensor x_zero = eq(x, 0.0);
  const Tensor safe_abs = where(x_zero, 1.0, abs(x));
  return where(x_zero, 0.0, sign(x) * pow(safe_abs, p - 1.0));
}

// SortLikeJvp: the values' tangent of sort / topk: t gathered along dim by the indices.
Tensor SortLikeJvp(const Tensor& t, int64_t dim, const Tensor& indices) {
  if (t.dim() == 0) return t;
  return gather(t, dim, indices);
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
    return TensorList{ExpandReduced(g[0], x, dims, keepdim) *
                      ProdOthers(x, c.output(0), dims, keepdim)};
  });
  SetJvp(Op("prod"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& x = c.input(0);
    const Shape& dims = c.inputs[1].shape();
    const bool keepdim = c.inputs[2].to_bool();
    return TensorList{sum(t[0] * ProdOthers(x, c.output(0), dims, keepdim), dims, keepdim)};
  });

  for (const char* name : {"amax", "amin"}) {
    SetVjp(Op(name), [](const VjpContext& c, const TensorList& g) {
      return TensorList{
          EvenSplit(g[0], c.input(0), c.output(0), c.inputs[1].shape(), c.inputs[2].to_bool())};
    });
    SetJvp(Op(name), [](const JvpContext& c, const TensorList& t) {
      return TensorList{
          EvenSplitJvp(t[0], c.input(0), c.output(0), c.inputs[1].shape(), c.inputs[2].to_bool())};
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
  // var_jvp: the transpose of var_grad (the mean's own tangent drops out: the deviations
  // sum to zero).
  auto var_jvp = [](const Tensor& t, const JvpContext& c) {
    const Tensor& x = c.input(0);
    const Shape& dims = c.inputs[1].shape();
    const int64_t correction = c.inputs[2].to_int();
    const double denom =
        static_cast<double>(std::max<int64_t>(0, ReducedCount(x, dims) - correction));
    return sum(t * (x - mean(x, dims, /*keepdim=*/true)), dims, c.inputs[3].to_bool()) *
           (2.0 / denom);
  };
  SetJvp(Op("var"), [var_jvp](const JvpContext& c, const TensorList& t) {
    return TensorList{var_jvp(t[0], c)};
  });
  SetJvp(Op("std"), [var_jvp](const JvpContext& c, const TensorList& t) {
    const Tensor& out = c.output(0);
    const Tensor out_zero = eq(out, 0.0);
    const Tensor safe_out = where(out_zero, 1.0, out);
    return TensorList{where(out_zero, 0.0, var_jvp(t[0], c) / (safe_out * 2.0))};
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
    return TensorList{ExpandReduced(scale, x, dims, keepdim) * NormTerm(x, p)};
  });
  SetJvp(Op("norm"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& x = c.input(0);
    const double p = c.inputs[1].to_double();
    const Shape& dims = c.inputs[2].shape();
    const bool keepdim = c.inputs[3].to_bool();
    const Tensor& out = c.output(0);
    if (p == 0.0) return TensorList{Tensor()};
    if (p == 1.0) return TensorList{sum(t[0] * sign(x), dims, keepdim)};
    if (std::isinf(p)) return TensorList{EvenSplitJvp(t[0] * sign(x), abs(x), out, dims, keepdim)};
    const Tensor out_zero = eq(out, 0.0);
    const Tensor safe_out = where(out_zero, 1.0, out);
    if (p == 2.0) return TensorList{where(out_zero, 0.0, sum(t[0] * x, dims, keepdim) / safe_out)};
    return TensorList{
        where(out_zero, 0.0, sum(t[0] * NormTerm(x, p), dims, keepdim) / pow(safe_out, p - 1.0))};
  });

  SetVjp(Op("cumsum"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    if (x.dim() == 0) return TensorList{reshape(g[0], x.sizes())};
    const int64_t dim = WrapDim("cumsum", c.inputs[1].to_int(), x.dim());
    return TensorList{flip(cumsum(flip(g[0], {dim}), dim), {dim})};
  });
  SetJvp(Op("cumsum"), [](const JvpContext& c, const TensorList& t) {
    if (c.input(0).dim() == 0) return TensorList{t[0]};
    return TensorList{cumsum(t[0], c.inputs[1].to_int())};
  });

  SetVjp(Op("sum_to_size"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{expand(g[0], c.input(0).sizes())};
  });
  SetJvp(Op("sum_to_size"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{sum_to_size(t[0], c.inputs[1].shape())};
  });

  // sort: inputs (self, dim, descending); topk: (self, k, dim, largest, sorted). Outputs
  // (values, indices).
  SetVjp(Op("sort"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{SortLikeGrad(c.input(0), c.inputs[1].to_int(), c.output(1), g[0])};
  });
  SetVjp(Op("topk"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{SortLikeGrad(c.input(0), c.inputs[2].to_int(), c.output(1), g[0])};
  });
  SetJvp(Op("sort"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{SortLikeJvp(t[0], c.inputs[1].to_int(), c.output(1)), Tensor()};
  });
  SetJvp(Op("topk"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{SortLikeJvp(t[0], c.inputs[2].to_int(), c.output(1)), Tensor()};
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
  SetJvp(Op("dropout"), [](const JvpContext& c, const TensorList& t) {
    const double p = c.inputs[1].to_double();
    if (!c.inputs[2].to_bool() || p == 0.0) return TensorList{t[0]};
    if (p == 1.0) return TensorList{Tensor()};
    return TensorList{t[0] * AsFloat(ne(c.output(0), 0.0), c.input(0)) * (1.0 / (1.0 - p))};
  });

  MarkNonDifferentiable(Op("bernoulli"));
}

}  // namespace ft::autograd

// vjp and jvp formulas: prod, amax/amin, var/std, norm, the scans (cumsum, cumprod,
// logcumsumexp, linear_recurrence), sum_to_size, sort, topk, dropout. Non-differentiable: bernoulli.
//
// Like the other formula files, every formula is written with the public ops only, so it is
// itself differentiable (grad of grad) and batchable (vmap of grad).
//
// Choices (documented here, tested in more_reduction_formulas_test.cc):
//   prod: the product of the others, exclusive prefix products times exclusive suffix
//     products of each reduced slice (two cumprods): no division and no branch on zeros, so
//     every order is exact at zeros (a division or a where() on the zero count is exact at
//     first order only: the fourth derivative of a product through a zero came out 0.37).
//   cumprod: y[i] = E[i] x[i] with E the exclusive prefix product (y shifted by one, 1
//     first). Forward: y' is the linear recurrence s[i] = x[i] s[i - 1] + t[i] E[i]; reverse:
//     E times the backward recurrence l[j] = g[j] + x[j + 1] l[j + 1]. No division.
//   logcumsumexp: with w = exp(x - y) <= 1 and the steps exp(y[i - 1] - y[i]) <= 1 (y never
//     decreases), forward is s[i] = exp(y[i - 1] - y[i]) s[i - 1] + w[i] t[i] and reverse
//     w times the backward recurrence of g: bounded factors, never exp(x) alone.
//   linear_recurrence (s[i] = a[i] s[i - 1] + b[i]): forward s' = rec(a, a' s[i - 1] + b');
//     reverse l = the backward recurrence of g with a shifted, grad b = l, grad a = l s[i - 1].
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
#include <vector>

#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "ops/ops.h"

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

// ShiftRight: x[i - 1] along dim, with `first` (a slice of size 1 along dim) at i = 0.
// ShiftLeft: x[i + 1], with `last` at the end. x.size(dim) > 0.
Tensor ShiftRight(const Tensor& x, int64_t dim, const Tensor& first) {
  return cat({first, narrow(x, dim, 0, x.size(dim) - 1)}, dim);
}
Tensor ShiftLeft(const Tensor& x, int64_t dim, const Tensor& last) {
  return cat({narrow(x, dim, 1, x.size(dim) - 1), last}, dim);
}
Tensor FirstSlice(const Tensor& x, int64_t dim) { return narrow(x, dim, 0, 1); }
Tensor LastSlice(const Tensor& x, int64_t dim) { return narrow(x, dim, x.size(dim) - 1, 1); }

// BackwardRecurrence: l[j] = g[j] + a_next[j] l[j + 1] (l[n - 1] = g[n - 1]): the
// transpose of linear_recurrence, as the same recurrence run over the flipped dim (a_next[j]
// holds a[j + 1]; its last element is not read).
Tensor BackwardRecurrence(const Tensor& a_next, const Tensor& g, int64_t dim) {
  return flip(linear_recurrence(flip(a_next, {dim}), flip(g, {dim}), dim), {dim});
}

// ReduceToInput: a gradient of the broadcast shape summed back to an operand's shape.
Tensor ReduceToInput(const Tensor& g, const Tensor& like) {
  if (g.sizes() == like.sizes()) return g;
  return sum_to_size(g, like.sizes());
}

// ProdOthers: d prod(x, dims) / dx elementwise (shaped like x): the product of the other
// elements of each element's slice, as exclusive prefix times exclusive suffix products of
// the slice flattened (see "prod" above).
Tensor ProdOthers(const Tensor& x, IntArrayRef dims) {
  if (x.dim() == 0) return ones_like(x);
  Shape wrapped = WrapDims("prod", dims, x.dim(), /*empty_means_all=*/true);
  std::sort(wrapped.begin(), wrapped.end());
  std::vector<int64_t> perm;
  Shape flat;
  int64_t n = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (std::binary_search(wrapped.begin(), wrapped.end(), d)) continue;
    perm.push_back(d);
    flat.push_back(x.size(d));
  }
  for (int64_t d : wrapped) {
    perm.push_back(d);
    n *= x.size(d);
  }
  if (n == 0) return zeros_like(x);
  flat.push_back(n);
  const Tensor permuted = permute(x, perm);
  const Tensor y = reshape(permuted, flat);
  const int64_t last = static_cast<int64_t>(flat.size()) - 1;
  const Tensor one = ones_like(FirstSlice(y, last));
  const Tensor prefix = cumprod(ShiftRight(y, last, one), last);
  const Tensor suffix = flip(cumprod(flip(ShiftLeft(y, last, one), {last}), last), {last});
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return permute(reshape(prefix * suffix, permuted.sizes()), inverse);
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
    return TensorList{ExpandReduced(g[0], x, dims, keepdim) * ProdOthers(x, dims)};
  });
  SetJvp(Op("prod"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& x = c.input(0);
    const Shape& dims = c.inputs[1].shape();
    const bool keepdim = c.inputs[2].to_bool();
    return TensorList{sum(t[0] * ProdOthers(x, dims), dims, keepdim)};
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

  // cumprod: see "cumprod" above. A rank-0 x is its own running product.
  SetVjp(Op("cumprod"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    if (x.dim() == 0) return TensorList{reshape(g[0], x.sizes())};
    const int64_t dim = WrapDim("cumprod", c.inputs[1].to_int(), x.dim());
    if (x.size(dim) == 0) return TensorList{zeros_like(x)};
    const Tensor& y = c.output(0);
    const Tensor exclusive = ShiftRight(y, dim, ones_like(FirstSlice(y, dim)));
    const Tensor x_next = ShiftLeft(x, dim, zeros_like(LastSlice(x, dim)));
    return TensorList{exclusive * BackwardRecurrence(x_next, g[0], dim)};
  });
  SetJvp(Op("cumprod"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& x = c.input(0);
    if (x.dim() == 0) return TensorList{t[0]};
    const int64_t dim = WrapDim("cumprod", c.inputs[1].to_int(), x.dim());
    if (x.size(dim) == 0) return TensorList{t[0]};
    const Tensor& y = c.output(0);
    const Tensor exclusive = ShiftRight(y, dim, ones_like(FirstSlice(y, dim)));
    return TensorList{linear_recurrence(x, t[0] * exclusive, dim)};
  });

  // logcumsumexp: see "logcumsumexp" above.
  SetVjp(Op("logcumsumexp"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    if (x.dim() == 0) return TensorList{reshape(g[0], x.sizes())};
    const int64_t dim = WrapDim("logcumsumexp", c.inputs[1].to_int(), x.dim());
    if (x.size(dim) == 0) return TensorList{zeros_like(x)};
    const Tensor& y = c.output(0);
    const Tensor step_next = exp(y - ShiftLeft(y, dim, LastSlice(y, dim)));
    return TensorList{exp(x - y) * BackwardRecurrence(step_next, g[0], dim)};
  });
  SetJvp(Op("logcumsumexp"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& x = c.input(0);
    if (x.dim() == 0) return TensorList{t[0]};
    const int64_t dim = WrapDim("logcumsumexp", c.inputs[1].to_int(), x.dim());
    if (x.size(dim) == 0) return TensorList{t[0]};
    const Tensor& y = c.output(0);
    const Tensor step = exp(ShiftRight(y, dim, FirstSlice(y, dim)) - y);
    return TensorList{linear_recurrence(step, t[0] * exp(x - y), dim)};
  });

  // linear_recurrence: see "linear_recurrence" above. a and b broadcast to s's shape.
  SetVjp(Op("linear_recurrence"), [](const VjpContext& c, const TensorList& g) {
    const Tensor &a = c.input(0), &b = c.input(1), &s = c.output(0);
    if (s.dim() == 0) {  // s = b: a is never read
      return TensorList{c.needs(0) ? zeros_like(a) : Tensor(), c.needs(1) ? g[0] : Tensor()};
    }
    const int64_t dim = WrapDim("linear_recurrence", c.inputs[2].to_int(), s.dim());
    if (s.size(dim) == 0) {
      return TensorList{c.needs(0) ? zeros_like(a) : Tensor(), c.needs(1) ? zeros_like(b) : Tensor()};
    }
    const Tensor a_full = expand(a, s.sizes());
    const Tensor l =
        BackwardRecurrence(ShiftLeft(a_full, dim, zeros_like(LastSlice(a_full, dim))), g[0], dim);
    TensorList r(2);
    if (c.needs(0)) {
      r[0] = ReduceToInput(l * ShiftRight(s, dim, zeros_like(FirstSlice(s, dim))), a);
    }
    if (c.needs(1)) r[1] = ReduceToInput(l, b);
    return r;
  });
  SetJvp(Op("linear_recurrence"), [](const JvpContext& c, const TensorList& t) {
    const Tensor &a = c.input(0), &s = c.output(0);
    const Tensor &ta = t[0], &tb = t[1];
    if (s.dim() == 0) return TensorList{tb.defined() ? tb : zeros_like(s)};
    const int64_t dim = WrapDim("linear_recurrence", c.inputs[2].to_int(), s.dim());
    if (s.size(dim) == 0) return TensorList{zeros_like(s)};
    Tensor drive = tb;
    if (ta.defined()) {
      const Tensor from_a = ta * ShiftRight(s, dim, zeros_like(FirstSlice(s, dim)));
      drive = drive.defined() ? from_a + drive : from_a;
    }
    return TensorList{linear_recurrence(a, drive, dim)};
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

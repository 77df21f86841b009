// vjp and jvp formulas: reductions, softmax-like ops, matmul-like ops and the common view
// ops. Non-differentiable: argmax, argmin.
//
// Linear ops (sum, mean, views, copies) are their own jvp: the same op applied to the
// tangent. Products follow the product rule, each part skipped when its tangent is undefined
// (zero).
#include <algorithm>

#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "ops/ops.h"

namespace ft::autograd {
namespace {

using internal::AddTangents;
using internal::ExpandReduced;
using internal::Op;
using internal::ReducedCount;

// MatmulGrads: gradients of matmul(a, b) with torch.matmul's 1-D rules: a 1-D operand is a
// row (left) or column (right) vector whose added dim is removed again.
// Only the gradients asked for are computed (for a constant weight, the other one can be
// an n^3-sized product under jacrev's batched backward).
std::pair<Tensor, Tensor> MatmulGrads(const Tensor& g, const Tensor& a, const Tensor& b,
                                      bool need_a, bool need_b) {
  const bool a1 = a.dim() == 1, b1 = b.dim() == 1;
  Tensor ga, gb;
  if (a.dim() <= 2 && b.dim() <= 2) {
    // No batch dims, so nothing to sum: plain products, with a 1-D operand's gradient
    // computed as a matrix times a vector (under vmap, jacrev's basis through W is then one
    // GEMM with no unit dims added and removed).
    const auto t = [](const Tensor& m) { return transpose(m, 0, 1); };
    if (need_a) ga = a1 && b1 ? g * b : a1 ? matmul(b, g) : b1 ? outer(g, b) : matmul(g, t(b));
    if (need_b) gb = a1 && b1 ? g * a : b1 ? matmul(t(a), g) : a1 ? outer(a, g) : matmul(t(a), g);
    return {ga, gb};
  }
  const Tensor a2 = a1 ? unsqueeze(a, 0) : a;
  const Tensor b2 = b1 ? unsqueeze(b, 1) : b;
  Tensor g2 = g;
  if (a1 && b1) {
    g2 = reshape(g, {1, 1});
  } else if (a1) {
    g2 = unsqueeze(g, -2);
  } else if (b1) {
    g2 = unsqueeze(g, -1);
  }
  if (need_a) {
    ga = sum_to_size(matmul(g2, transpose(b2, -1, -2)), a2.sizes());
    if (a1) ga = squeeze_dim(ga, 0);
  }
  if (need_b) {
    gb = sum_to_size(matmul(transpose(a2, -1, -2), g2), b2.sizes());
    if (b1) gb = squeeze_dim(gb, 1);
  }
  return {ga, gb};
}

// ReshapeTangent: the jvp of a view that only changes the shape (reshape, squeeze, ...).
TensorList ReshapeTangent(const JvpContext& c, const TensorList& t) {
  return TensorList{reshape(t[0], c.output(0).sizes())};
}

}  // namespace

void RegisterReductionAndLinalgFormulas() {
  SetVjp(Op("sum"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{ExpandReduced(g[0], c.input(0), c.inputs[1].shape(), c.inputs[2].to_bool())};
  });
  SetJvp(Op("sum"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{sum(t[0], c.inputs[1].shape(), c.inputs[2].to_bool())};
  });
  SetVjp(Op("mean"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const Shape& dims = c.inputs[1].shape();
    return TensorList{ExpandReduced(g[0], x, dims, c.inputs[2].to_bool()) /
                      static_cast<double>(ReducedCount(x, dims))};
  });
  SetJvp(Op("mean"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{mean(t[0], c.inputs[1].shape(), c.inputs[2].to_bool())};
  });
  SetVjp(Op("logsumexp"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const Shape& dims = c.inputs[1].shape();
    const bool keepdim = c.inputs[2].to_bool();
    return TensorList{ExpandReduced(g[0], x, dims, keepdim) *
                      exp(x - ExpandReduced(c.output(0), x, dims, keepdim))};
  });
  // d logsumexp = sum(t * softmax(x)) over the reduced dims.
  SetJvp(Op("logsumexp"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& x = c.input(0);
    const Shape& dims = c.inputs[1].shape();
    const bool keepdim = c.inputs[2].to_bool();
    return TensorList{
        sum(t[0] * exp(x - ExpandReduced(c.output(0), x, dims, keepdim)), dims, keepdim)};
  });
  SetVjp(Op("softmax"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& y = c.output(0);
    const int64_t dim = c.inputs[1].to_int();
    return TensorList{y * (g[0] - sum(g[0] * y, {dim}, true))};
  });
  // softmax's Jacobian diag(y) - y y^T is symmetric: the jvp is the vjp's formula.
  SetJvp(Op("softmax"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& y = c.output(0);
    const int64_t dim = c.inputs[1].to_int();
    return TensorList{y * (t[0] - sum(t[0] * y, {dim}, true))};
  });
  SetVjp(Op("log_softmax"), [](const VjpContext& c, const TensorList& g) {
    const int64_t dim = c.inputs[1].to_int();
    return TensorList{g[0] - exp(c.output(0)) * sum(g[0], {dim}, true)};
  });
  SetJvp(Op("log_softmax"), [](const JvpContext& c, const TensorList& t) {
    const int64_t dim = c.inputs[1].to_int();
    return TensorList{t[0] - sum(t[0] * exp(c.output(0)), {dim}, true)};
  });
  for (const char* name : {"argmax", "argmin"}) MarkNonDifferentiable(Op(name));

  for (const char* name : {"matmul", "mm", "bmm"}) {
    SetVjp(Op(name), [](const VjpContext& c, const TensorList& g) {
      auto [ga, gb] = MatmulGrads(g[0], c.input(0), c.input(1), c.needs(0), c.needs(1));
      return TensorList{ga, gb};
    });
  }
  // Product rule, with the op itself (its shape rules hold for tangents shaped like inputs).
  using Product = Tensor (*)(const Tensor&, const Tensor&);
  for (auto [name, product] : {std::pair<const char*, Product>{"matmul", &matmul},
                               {"mm", &mm}, {"bmm", &bmm}, {"dot", &dot}}) {
    SetJvp(Op(name), [product = product](const JvpContext& c, const TensorList& t) {
      return TensorList{AddTangents(t[0].defined() ? product(t[0], c.input(1)) : Tensor(),
                                    t[1].defined() ? product(c.input(0), t[1]) : Tensor())};
    });
  }
  SetVjp(Op("dot"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{c.needs(0) ? g[0] * c.input(1) : Tensor(),
                      c.needs(1) ? g[0] * c.input(0) : Tensor()};
  });
  SetVjp(Op("linear"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& x = c.input(0);
    const Tensor& w = c.input(1);
    // The rows of x and g as matrices. flatten, not reshape(-1, n): with zero features a
    // -1 would be ambiguous (the property test found linear's vjp failing on [2, 0] inputs).
    const auto rows = [](const Tensor& t) {
      return t.dim() == 1 ? unsqueeze(t, 0) : flatten(t, 0, -2);
    };
    const Tensor x2 = rows(x);
    const Tensor g2 = rows(g[0]);
    TensorList out = {c.needs(0) ? matmul(g[0], w) : Tensor(),
                      c.needs(1) ? matmul(transpose(g2, 0, 1), x2) : Tensor()};
    if (!c.inputs[2].is_none()) {
      out.push_back(c.needs(2) ? sum_to_size(g[0], c.input(2).sizes()) : Tensor());
    }
    return out;
  });
  // linear(x, w, b) = x w^T + b: tangent tx w^T + x tw^T + tb (no bias slot when b is None).
  SetJvp(Op("linear"), [](const JvpContext& c, const TensorList& t) {
    const Tensor &x = c.input(0), &w = c.input(1);
    Tensor out = AddTangents(t[0].defined() ? linear(t[0], w) : Tensor(),
                             t[1].defined() ? linear(x, t[1]) : Tensor());
    if (t.size() > 2) out = AddTangents(out, t[2]);
    return TensorList{out};
  });

  // Views and copies: the gradient takes the input's layout back; the tangent takes the
  // output's. Shape-only views get their tangent by reshape (which also accepts a
  // non-contiguous tangent, where view would throw); copies copy the tangent, so that
  // writing the output in place cannot touch the input's tangent.
  for (const char* name : {"reshape", "view", "flatten", "contiguous", "clone"}) {
    SetVjp(Op(name), [](const VjpContext& c, const TensorList& g) {
      return TensorList{reshape(g[0], c.input(0).sizes())};
    });
  }
  for (const char* name : {"reshape", "view", "flatten"}) SetJvp(Op(name), ReshapeTangent);
  SetJvp(Op("contiguous"), [](const JvpContext&, const TensorList& t) {
    return TensorList{contiguous(t[0])};
  });
  SetJvp(Op("clone"), [](const JvpContext&, const TensorList& t) {
    return TensorList{clone(t[0])};
  });
  SetVjp(Op("expand"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{sum_to_size(g[0], c.input(0).sizes())};
  });
  SetJvp(Op("expand"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{expand(t[0], c.output(0).sizes())};
  });
  SetVjp(Op("transpose"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{transpose(g[0], c.inputs[1].to_int(), c.inputs[2].to_int())};
  });
  SetJvp(Op("transpose"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{transpose(t[0], c.inputs[1].to_int(), c.inputs[2].to_int())};
  });
  SetVjp(Op("t"), [](const VjpContext&, const TensorList& g) { return TensorList{t(g[0])}; });
  SetJvp(Op("t"), [](const JvpContext&, const TensorList& tangents) {
    return TensorList{t(tangents[0])};
  });
  SetVjp(Op("unsqueeze"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{squeeze_dim(g[0], c.inputs[1].to_int())};
  });
  SetJvp(Op("unsqueeze"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{unsqueeze(t[0], c.inputs[1].to_int())};
  });
  for (const char* name : {"squeeze", "squeeze_dim", "squeeze_dims"}) {
    SetVjp(Op(name), [](const VjpContext& c, const TensorList& g) {
      return TensorList{reshape(g[0], c.input(0).sizes())};
    });
    SetJvp(Op(name), ReshapeTangent);
  }
  SetVjp(Op("permute"), [](const VjpContext& c, const TensorList& g) {
    const Shape& dims = c.inputs[1].shape();
    Shape inverse(dims.size());
    const int64_t rank = static_cast<int64_t>(dims.size());
    for (int64_t i = 0; i < rank; ++i) inverse[WrapDim("permute", dims[i], rank)] = i;
    return TensorList{permute(g[0], inverse)};
  });
  SetJvp(Op("permute"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{permute(t[0], c.inputs[1].shape())};
  });
}

}  // namespace ft::autograd

// vjp and jvp formulas of the factorization-based linear algebra ops:
// linalg_solve, linalg_solve_triangular, cholesky, inverse, slogdet and logdet.
// Written with the public ops (solves instead of explicit inverses where a
// solve will do), so they are differentiable again: hessian of a log-likelihood
// with a logdet and a solve needs nothing more.
//
// mT(x) is the transpose of the last two dims. With X = A^-1 B and a cotangent
// G of X:
//   linalg_solve:   gB = A^-T G, gA = -gB X^T;           dX = A^-1 (dB - dA X)
//   solve_triang.:  the same restricted to A's triangle (A^-T is again
//   triangular) inverse:        gA = -Y^T G Y^T;                      dY = -Y
//   dA Y logdet, slogdet's logabsdet: gA = g A^-T;              d = tr(A^-1 dA)
//   cholesky (L L^T = A): dL = L Phi(L^-1 sym(dA) L^-T) with Phi the lower
//   triangle with half
//     its diagonal and sym(X) = (X + X^T) / 2; its adjoint gA = sym(L^-T
//     Phi(L^T gL) L^-1). This derivative treats A as symmetric (sym(dA)), as
//     torch's does: for symmetric perturbations it is the exact derivative, and
//     <J t, c> == <t, J^T c> holds for all.
// Broadcast batch dims are summed back to each operand's shape (sum_to_size).
#include <cstdint>
#include <vector>

#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "ops/ops.h"
#include "tensor/factories.h"

namespace ft::autograd {
namespace {

using internal::AddTangents;
using internal::Op;

Tensor mT(const Tensor& x) { return transpose(x, -2, -1); }

// IsVectorRhs: linalg_solve's rule for a B that is a batch of vectors (its
// kernel's check).
bool IsVectorRhs(const Tensor& a, const Tensor& b) {
  if (b.dim() == 1) return true;
  if (b.dim() + 1 != a.dim()) return false;
  for (int64_t d = 0; d < b.dim(); ++d) {
    if (b.size(d) != a.size(d)) return false;
  }
  return true;
}

// TriangleMask: an [n, n] constant of `like`'s dtype: 1 in the strict `upper`
// or lower triangle, `diag` on the diagonal, 0 elsewhere.
Tensor TriangleMask(const Tensor& like, bool upper, double diag) {
  const int64_t n = like.size(-1);
  std::vector<double> m(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (i == j) {
        m[static_cast<size_t>(i * n + j)] = diag;
      } else if (upper ? j > i : j < i) {
        m[static_cast<size_t>(i * n + j)] = 1.0;
      }
    }
  }
  return to(tensor(m, {n, n}), like.dtype());
}

// Phi: the lower triangle of x with its diagonal halved.
Tensor Phi(const Tensor& x) { return x * TriangleMask(x, /*upper=*/false, 0.5); }

Tensor Sym(const Tensor& x) { return (x + mT(x)) * 0.5; }

// MatTimesX: dA X for the solve's X (a batch of vectors when `vector`).
Tensor MatTimesX(const Tensor& da, const Tensor& x, bool vector) {
  return vector ? squeeze_dim(matmul(da, unsqueeze(x, -1)), -1) : matmul(da, x);
}

// OuterGX: gB X^T (a batch of outer products when `vector`), the shape of A's
// gradient.
Tensor OuterGX(const Tensor& gb, const Tensor& x, bool vector) {
  return vector ? unsqueeze(gb, -1) * unsqueeze(x, -2) : matmul(gb, mT(x));
}

// LogdetGrad: g * A^-T with g of A's batch shape.
Tensor LogdetGrad(const Tensor& g, const Tensor& a) {
  return unsqueeze(unsqueeze(g, -1), -1) * mT(inverse(a));
}

// LogdetJvp: tr(A^-1 dA) per matrix.
Tensor LogdetJvp(const Tensor& a, const Tensor& da) {
  return sum(mT(inverse(a)) * da, {-2, -1}, /*keepdim=*/false);
}

}  // namespace

void RegisterLinalgSolveFormulas() {
  // linalg_solve: inputs (A, B), output X.
  SetVjp(Op("linalg_solve"), [](const VjpContext& c, const TensorList& g) {
    const Tensor &a = c.input(0), &b = c.input(1), &x = c.output(0);
    const bool vector = IsVectorRhs(a, b);
    const Tensor gb = linalg_solve(mT(a), g[0]);
    return TensorList{c.needs(0) ? sum_to_size(neg(OuterGX(gb, x, vector)), a.sizes()) : Tensor(),
                      c.needs(1) ? sum_to_size(gb, b.sizes()) : Tensor()};
  });
  SetJvp(Op("linalg_solve"), [](const JvpContext& c, const TensorList& t) {
    const Tensor &a = c.input(0), &b = c.input(1), &x = c.output(0);
    const bool vector = IsVectorRhs(a, b);
    const Tensor rhs =
        AddTangents(t[1], t[0].defined() ? neg(MatTimesX(t[0], x, vector)) : Tensor());
    return TensorList{linalg_solve(a, rhs)};
  });

  // linalg_solve_triangular: inputs (A, B, upper), output X. Only A's triangle
  // is read, so its gradient (and the part of dA that matters) is that
  // triangle.
  SetVjp(Op("linalg_solve_triangular"), [](const VjpContext& c, const TensorList& g) {
    const Tensor &a = c.input(0), &b = c.input(1), &x = c.output(0);
    const bool upper = c.inputs[2].to_bool();
    const Tensor gb = linalg_solve_triangular(mT(a), g[0], !upper);
    Tensor ga;
    if (c.needs(0)) {
      ga = sum_to_size(neg(matmul(gb, mT(x))) * TriangleMask(a, upper, 1.0), a.sizes());
    }
    return TensorList{ga, c.needs(1) ? sum_to_size(gb, b.sizes()) : Tensor()};
  });
  SetJvp(Op("linalg_solve_triangular"), [](const JvpContext& c, const TensorList& t) {
    const Tensor &a = c.input(0), &x = c.output(0);
    const bool upper = c.inputs[2].to_bool();
    const Tensor rhs = AddTangents(
        t[1], t[0].defined() ? neg(matmul(t[0] * TriangleMask(a, upper, 1.0), x)) : Tensor());
    return TensorList{linalg_solve_triangular(a, rhs, upper)};
  });

  // cholesky: input A, output L (see the file comment).
  SetVjp(Op("cholesky"), [](const VjpContext& c, const TensorList& g) {
    const Tensor& l = c.output(0);
    const Tensor p = Phi(matmul(mT(l), g[0]));
    const Tensor z = linalg_solve_triangular(mT(l), p, /*upper=*/true);  // L^-T P
    const Tensor w = linalg_solve_triangular(mT(l), mT(z),
                                             /*upper=*/true);  // (L^-T P L^-1)^T
    return TensorList{Sym(w)};
  });
  SetJvp(Op("cholesky"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& l = c.output(0);
    const Tensor z = linalg_solve_triangular(l, Sym(t[0]), /*upper=*/false);  // L^-1 S
    const Tensor w = linalg_solve_triangular(l, mT(z), /*upper=*/false);      // L^-1 S L^-T
    return TensorList{matmul(l, Phi(w))};
  });

  // inverse: input A, output Y = A^-1.
  SetVjp(Op("inverse"), [](const VjpContext& c, const TensorList& g) {
    const Tensor yt = mT(c.output(0));
    return TensorList{neg(matmul(yt, matmul(g[0], yt)))};
  });
  SetJvp(Op("inverse"), [](const JvpContext& c, const TensorList& t) {
    const Tensor& y = c.output(0);
    return TensorList{neg(matmul(y, matmul(t[0], y)))};
  });

  // slogdet: input A, outputs (sign, logabsdet); sign is locally constant (no
  // gradient).
  SetVjp(Op("slogdet"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{LogdetGrad(g[1], c.input(0))};
  });
  SetJvp(Op("slogdet"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{Tensor(), LogdetJvp(c.input(0), t[0])};
  });
  SetVjp(Op("logdet"), [](const VjpContext& c, const TensorList& g) {
    return TensorList{LogdetGrad(g[0], c.input(0))};
  });
  SetJvp(Op("logdet"), [](const JvpContext& c, const TensorList& t) {
    return TensorList{LogdetJvp(c.input(0), t[0])};
  });
}

}  // namespace ft::autograd

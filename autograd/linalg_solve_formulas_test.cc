// The vjp and jvp formulas of linalg_solve, linalg_solve_triangular, cholesky,
// inverse, slogdet and logdet (linalg_solve_formulas.cc) against float64
// central differences (gradcheck, jvpcheck with <J t, c> == <t, J^T c>), their
// second derivatives (gradgradcheck) and closed forms: grad logdet(A) = A^-T
// and hessian of logdet.
#include <cstdint>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::GradCheck;
using testing::GradGradCheck;
using testing::JvpCheck;
using testing::Rand;

// Shifted: a + s I (diagonally dominant for |entries| < 1 and s > n).
Tensor Shifted(const Tensor &a, double s) {
  return a + eye(a.size(-1), kFloat64) * s;
}
// Spd: a a^T + s I, symmetric positive-definite.
Tensor Spd(const Tensor &a, double s) {
  return Shifted(matmul(a, transpose(a, -2, -1)), s);
}

struct Case {
  const char *name;
  testing::CheckedFn f;
  TensorList args;
};

std::vector<Case> Cases() {
  const auto solve = [](const TensorList &a) {
    return linalg_solve(Shifted(a[0], 4.0), a[1]);
  };
  const auto lower = [](const TensorList &a) {
    return linalg_solve_triangular(Shifted(a[0], 4.0), a[1], false);
  };
  const auto upper = [](const TensorList &a) {
    return linalg_solve_triangular(Shifted(a[0], 4.0), a[1], true);
  };
  return {
      {"solve matrix", solve, {Rand({3, 3}, 1), Rand({3, 2}, 2)}},
      {"solve vector", solve, {Rand({3, 3}, 3), Rand({3}, 4)}},
      {"solve batch of vectors", solve, {Rand({2, 3, 3}, 5), Rand({2, 3}, 6)}},
      {"solve vector broadcast", solve, {Rand({2, 3, 3}, 7), Rand({3}, 8)}},
      {"solve B broadcast", solve, {Rand({2, 3, 3}, 9), Rand({3, 2}, 10)}},
      {"solve A broadcast", solve, {Rand({3, 3}, 11), Rand({2, 3, 1}, 12)}},
      {"solve_triangular lower", lower, {Rand({3, 3}, 13), Rand({3, 2}, 14)}},
      {"solve_triangular upper",
       upper,
       {Rand({2, 3, 3}, 15), Rand({3, 1}, 16)}},
      {"cholesky",
       [](const TensorList &a) { return cholesky(Spd(a[0], 3.0)); },
       {Rand({3, 3}, 17)}},
      {"cholesky batch",
       [](const TensorList &a) { return cholesky(Spd(a[0], 2.0)); },
       {Rand({2, 2, 2}, 18)}},
      {"inverse",
       [](const TensorList &a) { return inverse(Shifted(a[0], 4.0)); },
       {Rand({2, 3, 3}, 19)}},
      {"slogdet",
       [](const TensorList &a) {
         return std::get<1>(slogdet(Shifted(a[0], -4.0)));
       },
       {Rand({2, 3, 3}, 20)}},
      {"logdet",
       [](const TensorList &a) { return logdet(Shifted(a[0], 4.0)); },
       {Rand({3, 3}, 21)}},
  };
}

TEST(LinalgSolveFormulas, VjpMatchesFiniteDifferences) {
  for (const Case &c : Cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(GradCheck(c.f, c.args));
  }
}

TEST(LinalgSolveFormulas, JvpMatchesFiniteDifferencesAndTheVjp) {
  for (const Case &c : Cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(JvpCheck(c.f, c.args));
  }
}

TEST(LinalgSolveFormulas, SecondDerivatives) {
  for (const Case &c : Cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(GradGradCheck(c.f, c.args));
  }
}

TEST(LinalgSolveFormulas, OnlyOneOperandDifferentiated) {
  // A constant A (or B) takes the formulas' undefined-tangent and
  // unneeded-gradient paths.
  const Tensor a = Shifted(Rand({3, 3}, 22), 4.0);
  const Tensor b = Rand({3, 2}, 23);
  EXPECT_TRUE(GradCheck(
      [a](const TensorList &x) { return linalg_solve(a, x[0]); }, {b}));
  EXPECT_TRUE(JvpCheck(
      [a](const TensorList &x) { return linalg_solve(a, x[0]); }, {b}));
  EXPECT_TRUE(GradCheck(
      [b](const TensorList &x) { return linalg_solve(x[0], b); }, {a}));
  EXPECT_TRUE(JvpCheck(
      [b](const TensorList &x) { return linalg_solve(x[0], b); }, {a}));
  EXPECT_TRUE(JvpCheck(
      [a](const TensorList &x) {
        return linalg_solve_triangular(a, x[0], true);
      },
      {b}));
  EXPECT_TRUE(JvpCheck(
      [b](const TensorList &x) {
        return linalg_solve_triangular(x[0], b, true);
      },
      {a}));
}

TEST(LinalgSolveFormulas, ClosedForms) {
  // d logdet(A) / dA = A^-T.
  const Tensor a = Shifted(Rand({3, 3}, 24), 4.0);
  const Tensor g =
      grad([](const TensorList &x) { return logdet(x[0]); })({a})[0];
  EXPECT_TENSOR_NEAR(g, transpose(inverse(a), 0, 1), 1e-12);
  // hessian of logdet: H[i, j, k, l] = -(A^-1)[l, i] (A^-1)[j, k].
  const Tensor h =
      hessian([](const TensorList &x) { return logdet(x[0]); })({a})[0];
  const Tensor y = inverse(a);
  const Tensor want =
      neg(reshape(transpose(y, 0, 1), {3, 1, 1, 3}) * reshape(y, {1, 3, 3, 1}));
  EXPECT_TENSOR_NEAR(h, want, 1e-10);
  // slogdet's sign carries no gradient; the gradient of logabsdet is A^-T also
  // for det < 0.
  const Tensor n = Shifted(Rand({3, 3}, 25), -4.0);
  const Tensor gn = grad(
      [](const TensorList &x) { return std::get<1>(slogdet(x[0])); })({n})[0];
  EXPECT_TENSOR_NEAR(gn, transpose(inverse(n), 0, 1), 1e-12);
  // d/dB sum(solve(A, B)) = A^-T 1.
  const Tensor b = Rand({3, 2}, 26);
  const Tensor gb = grad(
      [a](const TensorList &x) { return sum(linalg_solve(a, x[0])); })({b})[0];
  EXPECT_TENSOR_NEAR(
      gb, matmul(transpose(inverse(a), 0, 1), ones({3, 2}, kFloat64)), 1e-12);
}

TEST(LinalgSolveFormulas, PerExampleGradientsUnderVmap) {
  // vmap(grad(logdet)) over a batch == the batch of A^-T.
  const Tensor as = Shifted(Rand({4, 3, 3}, 27), 4.0);
  auto g = grad([](const TensorList &x) { return logdet(x[0]); });
  const Tensor got = vmap(g, {0})({as})[0];
  EXPECT_TENSOR_NEAR(got, transpose(inverse(as), -2, -1), 1e-12);
}

} // namespace
} // namespace ft

// linalg_solve, linalg_solve_triangular, cholesky, inverse, slogdet and logdet
// (linalg_ops.h) against closed forms: A X == B, L L^T == A, A inv(A) == I, the
// determinant of diagonal and triangular matrices; batch broadcasting, layouts,
// sizes 0 and 1, float32 and float64, and every documented error. (Split from
// ops/linalg_test, which covers the matrix products.)
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "ops/linalg.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"

namespace ft {
namespace {

Tensor Uniform(IntArrayRef shape, uint64_t seed, DType dtype = kFloat64) {
  Generator g(seed);
  return rand_like(zeros(shape, dtype), &g) * 2.0 - 1.0;
}

// Dominant: a batch of diagonally dominant (so well-conditioned, invertible)
// matrices.
Tensor Dominant(IntArrayRef shape, uint64_t seed, DType dtype = kFloat64) {
  const int64_t n = shape[shape.size() - 1];
  return Uniform(shape, seed, dtype) + eye(n, dtype) * static_cast<double>(n + 1);
}

// Spd: M M^T + n I, symmetric positive-definite.
Tensor Spd(IntArrayRef shape, uint64_t seed, DType dtype = kFloat64) {
  const int64_t n = shape[shape.size() - 1];
  const Tensor m = Uniform(shape, seed, dtype);
  return matmul(m, transpose(m, -2, -1)) + eye(n, dtype) * static_cast<double>(n);
}

Tensor Lower(const Tensor& a) {
  const int64_t n = a.size(-1);
  std::vector<double> m(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= i; ++j) m[static_cast<size_t>(i * n + j)] = 1.0;
  }
  return a * to(tensor(m, {n, n}), a.dtype());
}

Tensor Upper(const Tensor& a) { return transpose(Lower(transpose(a, -2, -1)), -2, -1); }

TEST(LinalgSolveOps, SolveSatisfiesTheSystem) {
  struct Case {
    Shape a, b;
  };
  const std::vector<Case> cases = {
      {{3, 3}, {3, 2}},           // several right-hand sides
      {{3, 3}, {3, 1}},           // one, as a matrix
      {{1, 1}, {1, 4}},           // size-1 matrices
      {{2, 3, 3}, {3, 2}},        // A batched, B broadcast
      {{3, 3}, {2, 3, 1}},        // B batched, A broadcast
      {{2, 1, 3, 3}, {4, 3, 2}},  // both batch dims broadcast
  };
  for (DType dtype : {kFloat32, kFloat64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message()
                   << DTypeName(dtype) << " " << ShapeToString(c.a) << " " << ShapeToString(c.b));
      const Tensor a = Dominant(c.a, 1, dtype);
      const Tensor b = Uniform(c.b, 2, dtype);
      const Tensor x = linalg_solve(a, b);
      EXPECT_EQ(x.dtype(), dtype);
      const Tensor ax = matmul(a, x);
      EXPECT_TENSOR_NEAR(ax, expand(b, ax.sizes()), dtype == kFloat32 ? 1e-5 : 1e-12);
    }
  }
}

TEST(LinalgSolveOps, SolveVectorRightHandSides) {
  // B 1-D, and B shaped like A without its last dim: vectors; the result is
  // shaped like B.
  const Tensor a = Dominant({3, 3}, 3);
  const Tensor b = Uniform({3}, 4);
  const Tensor x = linalg_solve(a, b);
  ASSERT_EQ(x.sizes(), IntArrayRef(Shape{3}));
  EXPECT_TENSOR_NEAR(matmul(a, x), b, 1e-12);
  const Tensor ab = Dominant({2, 3, 3}, 5);
  const Tensor bb = Uniform({2, 3}, 6);
  const Tensor xb = linalg_solve(ab, bb);
  ASSERT_EQ(xb.sizes(), IntArrayRef(Shape{2, 3}));
  EXPECT_TENSOR_NEAR(squeeze_dim(matmul(ab, unsqueeze(xb, -1)), -1), bb, 1e-12);
  // A 1-D B broadcasts over A's batch.
  EXPECT_TENSOR_NEAR(
      linalg_solve(ab, b),
      stack({linalg_solve(select(ab, 0, 0), b), linalg_solve(select(ab, 0, 1), b)}, 0), 1e-12);
}

TEST(LinalgSolveOps, LayoutsSizeZeroAndPromotion) {
  const Tensor a = Dominant({3, 3}, 7);
  const Tensor b = Uniform({3, 2}, 8);
  const Tensor want = linalg_solve(a, b);
  EXPECT_TENSOR_NEAR(linalg_solve(testing::NonContiguousCopy(a), testing::NonContiguousCopy(b)),
                     want, 1e-12);
  const Tensor at = contiguous(transpose(a, 0, 1));
  EXPECT_TENSOR_NEAR(linalg_solve(transpose(at, 0, 1), b), want, 1e-12);
  EXPECT_TENSOR_NEAR(linalg_solve(a, expand(unsqueeze(select(b, 1, 0), 1), {3, 2})),
                     linalg_solve(a, contiguous(expand(unsqueeze(select(b, 1, 0), 1), {3, 2}))),
                     1e-12);
  EXPECT_EQ(linalg_solve(to(a, kFloat32), b).dtype(), kFloat64);
  EXPECT_EQ(linalg_solve(zeros({0, 0}), zeros({0, 2})).sizes(), IntArrayRef(Shape{0, 2}));
  EXPECT_EQ(linalg_solve(zeros({0, 3, 3}), zeros({3, 1})).sizes(), IntArrayRef(Shape{0, 3, 1}));
  EXPECT_EQ(inverse(zeros({2, 0, 0})).sizes(), IntArrayRef(Shape{2, 0, 0}));
  EXPECT_EQ(cholesky(zeros({0, 0})).sizes(), IntArrayRef(Shape{0, 0}));
  auto [sign, logabs] = slogdet(zeros({2, 0, 0}));
  EXPECT_TENSOR_EQ(sign, ones({2}));
  EXPECT_TENSOR_EQ(logabs, zeros({2}));
  // A result never aliases an input.
  const Tensor one = ones({1, 1});
  const Tensor x1 = linalg_solve(one, one);
  EXPECT_NE(x1.impl()->raw_data(), one.impl()->raw_data());
}

TEST(LinalgSolveOps, SolveTriangularReadsOnlyItsTriangle) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const double tol = dtype == kFloat32 ? 1e-5 : 1e-12;
    const Tensor a = Dominant({2, 3, 3}, 9, dtype);  // both triangles hold values
    const Tensor b = Uniform({3, 2}, 10, dtype);
    const Tensor xl = linalg_solve_triangular(a, b, /*upper=*/false);
    EXPECT_TENSOR_NEAR(matmul(Lower(a), xl), expand(b, {2, 3, 2}), tol);
    const Tensor xu = linalg_solve_triangular(a, b, /*upper=*/true);
    EXPECT_TENSOR_NEAR(matmul(Upper(a), xu), expand(b, {2, 3, 2}), tol);
    EXPECT_TENSOR_NEAR(xl, linalg_solve(Lower(a), b), tol);
  }
}

TEST(LinalgSolveOps, CholeskyFactorsSpdMatrices) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const double tol = dtype == kFloat32 ? 1e-4 : 1e-12;
    for (const Shape& shape : {Shape{1, 1}, Shape{4, 4}, Shape{2, 3, 3}}) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " " << ShapeToString(shape));
      const Tensor a = Spd(shape, 11, dtype);
      const Tensor l = cholesky(a);
      EXPECT_TENSOR_NEAR(matmul(l, transpose(l, -2, -1)), a, tol);
      EXPECT_TENSOR_EQ(l, Lower(l));  // zeros above the diagonal
    }
  }
  const Tensor a = tensor({4.0, 2.0, 2.0, 3.0}, {2, 2});
  EXPECT_TENSOR_NEAR(cholesky(a), tensor({2.0, 0.0, 1.0, std::sqrt(2.0)}, {2, 2}), 1e-12);
  // Only the lower triangle is read.
  EXPECT_TENSOR_NEAR(cholesky(tensor({4.0, 99.0, 2.0, 3.0}, {2, 2})), cholesky(a), 1e-12);
}

TEST(LinalgSolveOps, InverseTimesAIsTheIdentity) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const double tol = dtype == kFloat32 ? 1e-5 : 1e-12;
    const Tensor a = Dominant({2, 4, 4}, 12, dtype);
    const Tensor y = inverse(a);
    EXPECT_TENSOR_NEAR(matmul(a, y), expand(eye(4, dtype), {2, 4, 4}), tol);
    EXPECT_TENSOR_NEAR(inverse(testing::NonContiguousCopy(a)), y, tol);
  }
  EXPECT_TENSOR_NEAR(inverse(tensor({2.0, 0.0, 0.0, 4.0}, {2, 2})),
                     tensor({0.5, 0.0, 0.0, 0.25}, {2, 2}), 1e-15);
}

TEST(LinalgSolveOps, SlogdetAndLogdetOfDiagonalAndTriangularMatrices) {
  // diag(2, -3, 0.5): det -3.
  const Tensor d = tensor({2.0, 0.0, 0.0, 0.0, -3.0, 0.0, 0.0, 0.0, 0.5}, {3, 3});
  auto [sign, logabs] = slogdet(d);
  EXPECT_TENSOR_NEAR(sign, tensor({-1.0}, {}), 0.0);
  EXPECT_TENSOR_NEAR(logabs, tensor({std::log(3.0)}, {}), 1e-12);
  EXPECT_TRUE(std::isnan(logdet(d).item<double>()));
  // A triangular matrix: det is the product of its diagonal (2 * 5 * 0.25
  // = 2.5).
  const Tensor tri = tensor({2.0, 7.0, -1.0, 0.0, 5.0, 3.0, 0.0, 0.0, 0.25}, {3, 3});
  EXPECT_NEAR(logdet(tri).item<double>(), std::log(2.5), 1e-12);
  EXPECT_NEAR(logdet(transpose(tri, 0, 1)).item<double>(), std::log(2.5), 1e-12);
  // Pivoting: a permutation matrix has det -1.
  auto [ps, pl] = slogdet(tensor({0.0, 1.0, 1.0, 0.0}, {2, 2}));
  EXPECT_EQ(ps.item<double>(), -1.0);
  EXPECT_NEAR(pl.item<double>(), 0.0, 1e-15);
  // Singular: sign 0, logabsdet -inf (no error); logdet -inf.
  const Tensor s = tensor({1.0, 2.0, 2.0, 4.0}, {2, 2});
  auto [ss, sl] = slogdet(s);
  EXPECT_EQ(ss.item<double>(), 0.0);
  EXPECT_EQ(sl.item<double>(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(logdet(s).item<double>(), -std::numeric_limits<double>::infinity());
  // A batch, float32: logdet of SPD matrices is 2 sum log diag(L).
  const Tensor spd = Spd({3, 3, 3}, 13, kFloat32);
  const Tensor want = sum(log(diagonal(cholesky(spd), 0, -2, -1)), {-1}, false) * 2.0;
  EXPECT_TENSOR_NEAR(logdet(spd), want, 1e-5);
  auto [bs, bl] = slogdet(spd);
  EXPECT_TENSOR_EQ(bs, ones({3}));
  EXPECT_TENSOR_NEAR(bl, want, 1e-5);
}

TEST(LinalgSolveOps, Errors) {
  EXPECT_FT_ERROR(inverse(ones({3})),
                  "inverse: expected A of rank >= 2 (a "
                  "batch of square matrices [..., n, n]), "
                  "got [3]");
  EXPECT_FT_ERROR(cholesky(ones({2, 3})),
                  "cholesky: expected square matrices [..., n, n] for A, got "
                  "[2, 3] (dims -2 "
                  "and -1 are 2 and 3)");
  EXPECT_FT_ERROR(slogdet(ones({2, 2}, kInt64)),
                  "slogdet: expected a float32 or float64 A, got int64 [2, 2]");
  EXPECT_FT_ERROR(logdet(ones({2, 2}, kBool)),
                  "logdet: expected a float32 or float64 A, got bool [2, 2]");
  EXPECT_FT_ERROR(linalg_solve(eye(2), ones({2}, kInt64)),
                  "linalg_solve: expected a float32 or float64 B, got int64 [2]");
  EXPECT_FT_ERROR(linalg_solve(eye(3), ones({4, 2})),
                  "linalg_solve: size mismatch, got A [3, 3] and B [4, 2]: dim -2 of B (4) "
                  "must equal n (3)");
  EXPECT_FT_ERROR(linalg_solve(eye(3), ones({4})),
                  "linalg_solve: size mismatch, B [4] is a vector of length 4 "
                  "but A [3, 3] is "
                  "3 x 3");
  EXPECT_FT_ERROR(linalg_solve(ones({2, 3, 3}), ones({4, 3, 1})),
                  "linalg_solve: batch dims [2] of A [2, 3, 3] and [4] of B "
                  "[4, 3, 1] cannot "
                  "be broadcast together (2 vs 4)");
  EXPECT_FT_ERROR(linalg_solve_triangular(eye(3), ones({3}), false),
                  "linalg_solve_triangular: expected B of rank >= 2 ([..., n, k]), got [3] "
                  "(A [3, 3])");
  EXPECT_FT_ERROR(linalg_solve(tensor({1.0, 2.0, 2.0, 4.0}, {2, 2}), ones({2, 1})),
                  "linalg_solve: A is singular: pivot 1 of its LU factorization is zero (A "
                  "[2, 2]); the system has no unique solution");
  EXPECT_FT_ERROR(inverse(stack({eye(2), zeros({2, 2})}, 0)),
                  "inverse: A is singular: pivot 0 of its LU factorization is "
                  "zero (matrix 1 "
                  "of the batch of A [2, 2, 2]); it has no inverse");
  EXPECT_FT_ERROR(cholesky(tensor({1.0, 2.0, 2.0, 1.0}, {2, 2})),
                  "cholesky: A is not positive-definite (A [2, 2]); the "
                  "factorization needs a "
                  "symmetric positive-definite matrix");
}

}  // namespace
}  // namespace ft

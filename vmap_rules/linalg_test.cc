// vmap of matmul, mm, bmm, dot, outer and linear against the loop-and-stack oracle (every
// rank combination of matmul, batched and unbatched operands, per-example weights and
// biases), and their errors under vmap (same messages as the op on one example); and the
// solves, factorizations and determinants (linalg_solve, cholesky, inverse, slogdet, ...).
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"
#include "tests/vmap_check.h"

namespace ft {
namespace {

using testing::ArgSpec;
using testing::CheckVmap;
using testing::IndexMaker;
using testing::UniformMaker;

// The message of the ft::Error fn throws ("<no error>" when it does not throw), without the
// transform stack a vmap call appends (NOTE: [Transform stack in errors]): the op's words.
std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return std::string(e.message());
  }
  return "<no error>";
}

using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;

testing::LoopFn Wrap(Binary op) {
  return [op](const TensorList& a) { return TensorList{op(a[0], a[1])}; };
}

// The eager error of op on the per-example tensors a, b must be what vmap reports for a
// batch of them (a mapped at its last dim, b at dim 0; or only one of them mapped).
void ExpectSameError(const Binary& op, const Tensor& a, const Tensor& b) {
  const std::string want = ErrorOf([&] { op(a, b); });
  ASSERT_NE(want, "<no error>");
  auto f = [op](const TensorList& x) { return TensorList{op(x[0], x[1])}; };
  const Tensor ab = stack({a, a}, a.dim());
  const Tensor bb = stack({b, b}, 0);
  EXPECT_EQ(ErrorOf([&] { vmap(TensorListFn(f), {a.dim(), 0})({ab, bb}); }), want);
  EXPECT_EQ(ErrorOf([&] { vmap(TensorListFn(f), {std::nullopt, 0})({a, bb}); }), want);
  EXPECT_EQ(ErrorOf([&] { vmap(TensorListFn(f), {-1, std::nullopt})({ab, b}); }), want);
}

TEST(LinalgRules, MatmulEveryRankCombination) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3}, {3}},             // 1-1: dot
      {{3}, {3, 4}},          // 1-2: row vector times matrix
      {{2, 3}, {3}},          // 2-1: matrix times vector
      {{2, 3}, {3, 4}},       // 2-2
      {{2, 2, 3}, {3, 4}},    // 3-2
      {{2, 3}, {2, 3, 4}},    // 2-3
      {{3}, {2, 3, 4}},       // 1-3
      {{2, 2, 3}, {3}},       // 3-1
      {{2, 2, 3}, {2, 3, 4}}, // 3-3
      {{2, 1, 2, 3}, {3, 3, 1}},  // 4-3 with broadcast batch dims
      {{2, 2, 2, 3}, {3, 4}},     // 4-2: an unbatched high-rank operand
      {{2, 3}, {2, 1, 3, 4}},     // 2-4
      {{1, 3}, {3, 1}},           // size-1 matrix dims (not to be squeezed)
  };
  for (const auto& [sa, sb] : cases) {
    SCOPED_TRACE(::testing::Message() << ShapeToString(sa) << " @ " << ShapeToString(sb));
    EXPECT_TRUE(CheckVmap(Wrap([](const Tensor& a, const Tensor& b) { return matmul(a, b); }),
                          {ArgSpec{sa}, ArgSpec{sb}}));
  }
}

TEST(LinalgRules, MatmulDtypePromotionAndComposition) {
  // int64 @ float64 -> float64; int64 @ int64 stays int64 (compared exactly).
  EXPECT_TRUE(CheckVmap(Wrap([](const Tensor& a, const Tensor& b) { return matmul(a, b); }),
                        {ArgSpec{{2, 3}, IndexMaker(5)}, ArgSpec{{3, 2}}}));
  EXPECT_TRUE(CheckVmap(Wrap([](const Tensor& a, const Tensor& b) { return matmul(a, b); }),
                        {ArgSpec{{3}, IndexMaker(5)}, ArgSpec{{3, 2}, IndexMaker(7)}}));
  // A transposed per-example operand and a chain of products.
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) {
        return TensorList{matmul(matmul(a[0], transpose(a[1], 0, 1)), a[1])};
      },
      {ArgSpec{{2, 3}}, ArgSpec{{4, 3}}}));
}

TEST(LinalgRules, MmAndBmm) {
  EXPECT_TRUE(CheckVmap(Wrap([](const Tensor& a, const Tensor& b) { return mm(a, b); }),
                        {ArgSpec{{2, 3}}, ArgSpec{{3, 4}}}));
  EXPECT_TRUE(CheckVmap(Wrap([](const Tensor& a, const Tensor& b) { return mm(a, b); }),
                        {ArgSpec{{1, 3}}, ArgSpec{{3, 1}}}));
  EXPECT_TRUE(CheckVmap(Wrap([](const Tensor& a, const Tensor& b) { return bmm(a, b); }),
                        {ArgSpec{{2, 2, 3}}, ArgSpec{{2, 3, 4}}}));
  EXPECT_TRUE(CheckVmap(Wrap([](const Tensor& a, const Tensor& b) { return bmm(a, b); }),
                        {ArgSpec{{1, 3, 1}}, ArgSpec{{1, 1, 2}}}));
}

TEST(LinalgRules, DotAndOuter) {
  EXPECT_TRUE(CheckVmap(Wrap([](const Tensor& a, const Tensor& b) { return dot(a, b); }),
                        {ArgSpec{{4}}, ArgSpec{{4}}}));
  EXPECT_TRUE(CheckVmap(Wrap([](const Tensor& a, const Tensor& b) { return dot(a, b); }),
                        {ArgSpec{{1}}, ArgSpec{{1}}}));
  EXPECT_TRUE(CheckVmap(Wrap([](const Tensor& a, const Tensor& b) { return dot(a, b); }),
                        {ArgSpec{{3}, IndexMaker(9)}, ArgSpec{{3}, IndexMaker(9)}}));
  EXPECT_TRUE(CheckVmap(Wrap([](const Tensor& a, const Tensor& b) { return outer(a, b); }),
                        {ArgSpec{{3}}, ArgSpec{{4}}}));
  EXPECT_TRUE(CheckVmap(Wrap([](const Tensor& a, const Tensor& b) { return outer(a, b); }),
                        {ArgSpec{{1}}, ArgSpec{{2}, IndexMaker(9)}}));
}

TEST(LinalgRules, Linear) {
  const std::vector<Shape> xs = {{3}, {2, 3}, {2, 2, 3}};
  for (const Shape& x : xs) {
    SCOPED_TRACE(ShapeToString(x));
    // No bias: x and/or W batched (per-example weights).
    EXPECT_TRUE(CheckVmap(
        [](const TensorList& a) { return TensorList{linear(a[0], a[1])}; },
        {ArgSpec{x}, ArgSpec{{4, 3}}}));
    // A bias of [out], [1], and one of the output's full shape (any of the three batched).
    Shape out_shape(x.begin(), x.end() - 1);
    out_shape.push_back(4);
    for (const Shape& bias : std::vector<Shape>{{4}, {1}, out_shape}) {
      SCOPED_TRACE(ShapeToString(bias));
      EXPECT_TRUE(CheckVmap(
          [](const TensorList& a) { return TensorList{linear(a[0], a[1], a[2])}; },
          {ArgSpec{x}, ArgSpec{{4, 3}}, ArgSpec{bias}}));
    }
  }
  // Mixed dtypes promote over all three operands.
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) { return TensorList{linear(a[0], a[1], a[2])}; },
      {ArgSpec{{2, 3}, IndexMaker(5)}, ArgSpec{{4, 3}, IndexMaker(5)}, ArgSpec{{4}}}));
}

TEST(LinalgRules, ErrorsNameLogicalShapes) {
  auto mmf = [](const Tensor& a, const Tensor& b) { return mm(a, b); };
  auto bmmf = [](const Tensor& a, const Tensor& b) { return bmm(a, b); };
  auto dotf = [](const Tensor& a, const Tensor& b) { return dot(a, b); };
  auto outerf = [](const Tensor& a, const Tensor& b) { return outer(a, b); };
  auto matmulf = [](const Tensor& a, const Tensor& b) { return matmul(a, b); };
  auto linearf = [](const Tensor& a, const Tensor& b) { return linear(a, b); };
  // matmul: inner size, batch broadcast, rank 0, bool.
  ExpectSameError(matmulf, ones({2, 3}), ones({4, 5}));
  ExpectSameError(matmulf, ones({3}), ones({4}));
  ExpectSameError(matmulf, ones({2, 3}), ones({2}));
  ExpectSameError(matmulf, ones({2, 2, 3}), ones({3, 3, 4}));
  ExpectSameError(matmulf, scalar_tensor(1.0), ones({3}));
  ExpectSameError(matmulf, ones({2, 3}, kBool), ones({3, 2}));
  // mm / bmm: ranks are per example (a batched [2, 3] is not a 3-D mm operand).
  ExpectSameError(mmf, ones({2, 2, 3}), ones({3, 2}));
  ExpectSameError(mmf, ones({3}), ones({3, 2}));
  ExpectSameError(mmf, ones({2, 3}), ones({2, 3}));
  ExpectSameError(mmf, ones({2, 3}), ones({3, 2}, kBool));
  ExpectSameError(bmmf, ones({2, 3}), ones({2, 3, 4}));
  ExpectSameError(bmmf, ones({2, 2, 3}), ones({3, 3, 4}));
  ExpectSameError(bmmf, ones({2, 2, 3}), ones({2, 2, 4}));
  // dot / outer: 1-D only, equal lengths.
  ExpectSameError(dotf, ones({2, 3}), ones({3}));
  ExpectSameError(dotf, ones({3}), ones({4}));
  ExpectSameError(dotf, ones({3}, kBool), ones({3}));
  ExpectSameError(outerf, ones({3}), ones({2, 2}));
  ExpectSameError(outerf, ones({3}), ones({2}, kBool));
  // linear: rank-0 input, non-2-D weight, feature mismatch.
  ExpectSameError(linearf, scalar_tensor(1.0), ones({4, 1}));
  ExpectSameError(linearf, ones({3}), ones({2, 4, 3}));
  ExpectSameError(linearf, ones({2, 3}), ones({4, 2}));
  EXPECT_FT_ERROR(vmap(TensorListFn([](const TensorList& a) {
                         return TensorList{mm(a[0], a[1])};
                       }))({ones({5, 2, 3}), ones({5, 4, 2})}),
                  "mm: size mismatch, got [2, 3] @ [4, 2]: dim 1 of the first (3) must equal "
                  "dim 0 of the second (4)");
  EXPECT_FT_ERROR(vmap(TensorListFn([](const TensorList& a) {
                         return TensorList{mm(a[0], a[1])};
                       }))({ones({5, 2, 3}), ones({5, 3, 2, 2})}),
                  "mm: expected 2-D tensors, got [2, 3] and [3, 2, 2]");

  // linear's bias: bool, and a bias that does not broadcast to the output.
  auto linear_bias = [](const TensorList& a) { return TensorList{linear(a[0], a[1], a[2])}; };
  for (const Shape& bias : std::vector<Shape>{{5}, {3, 4}, {1, 2, 4}}) {
    SCOPED_TRACE(ShapeToString(bias));
    const Tensor x = ones({2, 3});
    const Tensor w = ones({4, 3});
    const Tensor b = ones(bias);
    const std::string want = ErrorOf([&] { linear(x, w, b); });
    ASSERT_NE(want, "<no error>");
    EXPECT_EQ(ErrorOf([&] {
                vmap(TensorListFn(linear_bias), {std::nullopt, std::nullopt, 0})(
                    {x, w, stack({b, b}, 0)});
              }),
              want);
    EXPECT_EQ(ErrorOf([&] {
                vmap(TensorListFn(linear_bias), {0, 0, std::nullopt})(
                    {stack({x, x}, 0), stack({w, w}, 0), b});
              }),
              want);
  }
  const std::string want_bool = ErrorOf([] { linear(ones({3}), ones({4, 3}), ones({4}, kBool)); });
  EXPECT_EQ(ErrorOf([&] {
              vmap(TensorListFn(linear_bias), {0, std::nullopt, std::nullopt})(
                  {ones({2, 3}), ones({4, 3}), ones({4}, kBool)});
            }),
            want_bool);
}

// ---- Solves, factorizations, determinants: the batch dim is one more leading
// batch dim. ----

// Shifted: a + s I for square matrices a (keeps the loop's random matrices
// well-conditioned).
Tensor Shifted(const Tensor &a, double s) {
  return a + eye(a.size(-1), a.dtype()) * s;
}

TEST(LinalgRules, LinalgSolveMatchesTheLoop) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 3}, {3, 2}}, // several right-hand sides
      {{3, 3}, {3}},    // a vector
      {{2, 3, 3},
       {2, 3}}, // a batch of vectors (B is A's shape without its last dim)
      {{2, 3, 3}, {3}},    // a vector broadcast over A's batch
      {{2, 3, 3}, {3, 1}}, // B broadcast over A's batch
      {{3, 3},
       {2, 3, 2}}, // A broadcast over B's batch (B's logical rank is larger)
      {{2, 1, 3, 3}, {4, 3, 2}}, // both batch dims broadcast
      {{1, 1}, {1, 1}},          // size 1
  };
  const auto f = [](const TensorList &a) {
    return TensorList{linalg_solve(Shifted(a[0], 4.0), a[1])};
  };
  for (const auto &[sa, sb] : cases) {
    SCOPED_TRACE(::testing::Message()
                 << ShapeToString(sa) << " \\ " << ShapeToString(sb));
    EXPECT_TRUE(CheckVmap(f, {{sa}, {sb}}));
  }
}

TEST(LinalgRules, LinalgSolveVectorRuleFollowsTheLogicalShapes) {
  // A batched [B, 3, 3] with an unbatched B [3, 3]: physically B would look
  // like A's shape without its last dim (a batch of vectors); logically it is a
  // matrix.
  const Tensor as = Shifted(UniformMaker()({3, 3, 3}, 5), 4.0);
  const Tensor b = UniformMaker()({3, 3}, 6);
  auto f = [](const TensorList &x) {
    return TensorList{linalg_solve(x[0], x[1])};
  };
  const Tensor got = vmap(TensorListFn(f), {0, std::nullopt})({as, b})[0];
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_TENSOR_NEAR(select(got, 0, i), linalg_solve(select(as, 0, i), b),
                       1e-12);
  }
}

TEST(LinalgRules, SolveTriangularMatchesTheLoop) {
  for (bool upper : {false, true}) {
    const auto f = [upper](const TensorList &a) {
      return TensorList{
          linalg_solve_triangular(Shifted(a[0], 4.0), a[1], upper)};
    };
    EXPECT_TRUE(CheckVmap(f, {{{3, 3}}, {{3, 2}}}));
    EXPECT_TRUE(CheckVmap(f, {{{2, 3, 3}}, {{3, 1}}}));
    EXPECT_TRUE(CheckVmap(f, {{{3, 3}}, {{2, 3, 2}}}));
  }
}

TEST(LinalgRules, FactorizationsAndDeterminantsMatchTheLoop) {
  const std::vector<std::pair<std::string, testing::LoopFn>> ops = {
      {"cholesky",
       [](const TensorList &a) {
         return TensorList{
             cholesky(Shifted(matmul(a[0], transpose(a[0], -2, -1)), 3.0))};
       }},
      {"inverse",
       [](const TensorList &a) {
         return TensorList{inverse(Shifted(a[0], 4.0))};
       }},
      {"slogdet",
       [](const TensorList &a) {
         auto [sign, logabs] = slogdet(Shifted(a[0], -4.0));
         return TensorList{sign, logabs};
       }},
      {"logdet",
       [](const TensorList &a) {
         return TensorList{logdet(Shifted(a[0], 4.0))};
       }},
  };
  for (const auto &[name, f] : ops) {
    for (const Shape &shape : {Shape{1, 1}, Shape{3, 3}, Shape{2, 3, 3}}) {
      SCOPED_TRACE(::testing::Message() << name << " " << ShapeToString(shape));
      EXPECT_TRUE(CheckVmap(f, {{shape}}));
    }
  }
}

TEST(LinalgRules, FactorizationErrorsAreTheOnesOfOneExample) {
  ExpectSameError(
      [](const Tensor &a, const Tensor &b) { return linalg_solve(a, b); },
      ones({3, 3}), ones({4, 2}));
  ExpectSameError(
      [](const Tensor &a, const Tensor &b) { return linalg_solve(a, b); },
      ones({2, 3}), ones({2, 2}));
  ExpectSameError(
      [](const Tensor &a, const Tensor &b) { return linalg_solve(a, b); },
      ones({3}), ones({3}));
  ExpectSameError(
      [](const Tensor &a, const Tensor &b) {
        return linalg_solve_triangular(a, b, false);
      },
      ones({3, 3}), ones({3}));
  ExpectSameError(
      [](const Tensor &a, const Tensor &b) { return linalg_solve(a, b); },
      ones({2, 3, 3}), ones({4, 3, 1}));
  ExpectSameError(
      [](const Tensor &a, const Tensor &b) { return linalg_solve(a, b); },
      ones({3, 3}, kInt64), ones({3, 1}));
  for (const auto &unary : std::vector<std::function<Tensor(const Tensor &)>>{
           [](const Tensor &a) { return cholesky(a); },
           [](const Tensor &a) { return inverse(a); },
           [](const Tensor &a) { return logdet(a); },
           [](const Tensor &a) { return std::get<1>(slogdet(a)); }}) {
    for (const Tensor &bad : {ones({3}), ones({2, 3}), ones({2, 2}, kInt64)}) {
      const std::string want = ErrorOf([&] { unary(bad); });
      ASSERT_NE(want, "<no error>");
      auto f = [&](const TensorList &x) { return TensorList{unary(x[0])}; };
      EXPECT_EQ(ErrorOf([&] {
                  vmap(TensorListFn(f), {0})({stack({bad, bad}, 0)});
                }),
                want);
      EXPECT_EQ(ErrorOf([&] {
                  vmap(TensorListFn(f), {-1})({stack({bad, bad}, -1)});
                }),
                want);
    }
  }
  // A singular or non-positive-definite example fails the whole batch, naming
  // the op.
  auto inv = [](const TensorList &x) { return TensorList{inverse(x[0])}; };
  EXPECT_FT_ERROR(
      vmap(TensorListFn(inv), {0})({stack({eye(2), zeros({2, 2})}, 0)}),
      "inverse: A is singular");
  auto chol = [](const TensorList &x) { return TensorList{cholesky(x[0])}; };
  EXPECT_FT_ERROR(
      vmap(TensorListFn(chol), {0})({stack({eye(2), eye(2) * -1.0}, 0)}),
      "cholesky: A is not positive-definite");
}

} // namespace
} // namespace ft

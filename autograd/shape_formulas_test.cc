// vjp and jvp formulas of the shape, view, indexing and joining ops against float64 central
// differences (gradcheck; jvpcheck, which also ties jvp to vjp by <J v, w> = <v, J^T w>;
// gradgradcheck for second derivatives), closed forms, jacfwd vs jacrev, and loops of grad /
// jvp for vmap(grad) / vmap(jvp). Every single-input case runs on a contiguous, a
// non-contiguous and a broadcast (stride-0) input.
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "autograd/formulas.h"
#include "gtest/gtest.h"
#include "interpreters/grad/grad.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::Rand;
using testing::GradCheck;
using testing::JvpCheck;
using testing::Layouts;
using testing::GradGradCheck;

// GradAndJvpCheck: GradCheck and JvpCheck of one case (reverse and forward formulas).
::testing::AssertionResult GradAndJvpCheck(const std::function<Tensor(const TensorList&)>& op,
                                           const TensorList& args, double tol = 1e-6,
                                           std::vector<int64_t> argnums = {}) {
  ::testing::AssertionResult g = GradCheck(op, args, tol, argnums);
  if (!g) return ::testing::AssertionFailure() << "vjp: " << g.message();
  ::testing::AssertionResult j = JvpCheck(op, args, tol, std::move(argnums));
  if (!j) return ::testing::AssertionFailure() << "jvp: " << j.message();
  return ::testing::AssertionSuccess();
}

using Fn = std::function<Tensor(const TensorList&)>;

TEST(ShapeFormulas, ReshapeLikeViews) {
  for (const auto& [layout, x] : Layouts(Rand({2, 6, 3}, 1))) {
    SCOPED_TRACE(layout);
    EXPECT_TRUE(
        GradAndJvpCheck([](const TensorList& a) { return unflatten(a[0], 1, {2, 3}); }, {x}));
    EXPECT_TRUE(
        GradAndJvpCheck([](const TensorList& a) { return unflatten(a[0], -2, {-1, 2}); }, {x}));
    EXPECT_TRUE(GradAndJvpCheck([](const TensorList& a) { return movedim(a[0], 0, -1); }, {x}));
    EXPECT_TRUE(GradAndJvpCheck(
        [](const TensorList& a) { return movedim(a[0], {0, 2}, {2, 1}); }, {x}));
    EXPECT_TRUE(GradAndJvpCheck([](const TensorList& a) { return flip(a[0], {0, -1}); }, {x}));
    EXPECT_TRUE(GradAndJvpCheck([](const TensorList& a) { return flip(a[0], {}); }, {x}));
  }
}

TEST(ShapeFormulas, SelectNarrowSlice) {
  EXPECT_TRUE(
      GradAndJvpCheck([](const TensorList& a) { return select(a[0], 0, 1); }, {Rand({3}, 3)}));
  for (const auto& [layout, x] : Layouts(Rand({3, 4, 5}, 2))) {
    SCOPED_TRACE(layout);
    for (auto [dim, index] : std::vector<std::pair<int64_t, int64_t>>{
             {0, 0}, {0, 2}, {1, -1}, {-1, 3}, {2, 0}, {-2, 1}}) {
      SCOPED_TRACE(std::to_string(dim) + "," + std::to_string(index));
      EXPECT_TRUE(GradAndJvpCheck(
          [dim = dim, index = index](const TensorList& a) { return select(a[0], dim, index); },
          {x}));
    }
    for (auto [dim, start, len] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {0, 0, 3}, {0, 1, 1}, {1, -3, 2}, {-1, 2, 3}, {2, 0, 0}, {1, 4, 0}}) {
      SCOPED_TRACE(std::to_string(dim) + "," + std::to_string(start) + "," +
                   std::to_string(len));
      EXPECT_TRUE(GradAndJvpCheck([dim = dim, start = start, len = len](const TensorList& a) {
        return narrow(a[0], dim, start, len);
      }, {x}));
    }
    struct S {
      int64_t dim;
      std::optional<int64_t> start, end;
      int64_t step;
    };
    for (const S& s : std::vector<S>{{0, std::nullopt, std::nullopt, 1},
                                     {1, 1, 3, 1},
                                     {2, std::nullopt, std::nullopt, 2},
                                     {-1, 1, std::nullopt, 3},
                                     {-1, -4, -1, 2},
                                     {1, -100, 100, 3},
                                     {2, 3, 1, 1},
                                     {2, 0, 5, 7},
                                     {0, 5, std::nullopt, 1},
                                     {-3, 1, 2, 4}}) {
      SCOPED_TRACE(std::to_string(s.dim) + " step " + std::to_string(s.step));
      EXPECT_TRUE(GradAndJvpCheck(
          [s](const TensorList& a) { return slice(a[0], s.dim, s.start, s.end, s.step); },
          {x}));
    }
  }
}

TEST(ShapeFormulas, Diagonal) {
  for (const auto& [layout, m] : Layouts(Rand({3, 4}, 4))) {
    SCOPED_TRACE(layout);
    for (int64_t offset : {0, 1, 2, 3, 4, -1, -2, -3, 7}) {
      SCOPED_TRACE(offset);
      EXPECT_TRUE(GradAndJvpCheck(
          [offset](const TensorList& a) { return diagonal(a[0], offset, 0, 1); }, {m}));
      EXPECT_TRUE(GradAndJvpCheck(
          [offset](const TensorList& a) { return diagonal(a[0], offset, 1, 0); }, {m}));
    }
  }
  for (const auto& [layout, x] : Layouts(Rand({3, 2, 4}, 5))) {
    SCOPED_TRACE(layout);
    for (int64_t offset : {0, 1, 2, 3, 4, -1, -2, -3, 7}) {
      SCOPED_TRACE(offset);
      EXPECT_TRUE(GradAndJvpCheck(
          [offset](const TensorList& a) { return diagonal(a[0], offset, -1, 0); }, {x}));
      EXPECT_TRUE(GradAndJvpCheck(
          [offset](const TensorList& a) { return diagonal(a[0], offset, 1, 2); }, {x}));
    }
  }
}

TEST(ShapeFormulas, IndexSelectGatherScatterAdd) {
  Tensor idx = tensor(std::vector<int64_t>{2, 0, 2, 1, 2});
  Tensor one = scalar_tensor(int64_t{1});
  Tensor gidx = tensor(std::vector<int64_t>{0, 0, 3, 1, 2, 2}, {3, 2});
  Tensor gidx0 = tensor(std::vector<int64_t>{2, 2, 0, 1, 1, 1, 0, 2}, {2, 4});
  EXPECT_TRUE(GradAndJvpCheck(
      [&](const TensorList& a) { return index_select(a[0], 0, scalar_tensor(int64_t{0})); },
      {Rand({}, 7)}));
  for (const auto& [layout, x] : Layouts(Rand({3, 4}, 6))) {
    SCOPED_TRACE(layout);
    EXPECT_TRUE(
        GradAndJvpCheck([&](const TensorList& a) { return index_select(a[0], 0, idx); }, {x}));
    EXPECT_TRUE(
        GradAndJvpCheck([&](const TensorList& a) { return index_select(a[0], -1, idx); }, {x}));
    EXPECT_TRUE(
        GradAndJvpCheck([&](const TensorList& a) { return index_select(a[0], 1, one); }, {x}));

    EXPECT_TRUE(GradAndJvpCheck([&](const TensorList& a) { return gather(a[0], 1, gidx); }, {x}));
    EXPECT_TRUE(
        GradAndJvpCheck([&](const TensorList& a) { return gather(a[0], 0, gidx0); }, {x}));
    EXPECT_TRUE(
        GradAndJvpCheck([&](const TensorList& a) { return gather(a[0], -2, gidx0); }, {x}));

    // scatter_add: src larger than index (its extra elements get zero gradient).
    for (const auto& [src_layout, src] : Layouts(Rand({3, 3}, 8))) {
      SCOPED_TRACE("src " + src_layout);
      EXPECT_TRUE(GradAndJvpCheck(
          [&](const TensorList& a) { return scatter_add(a[0], 1, gidx, a[1]); }, {x, src}));
      // Non-linear in src so that a wrong src gradient cannot hide behind the sum.
      EXPECT_TRUE(GradAndJvpCheck(
          [&](const TensorList& a) {
            return square(scatter_add(a[0] * a[0], 1, gidx, sin(a[1])));
          },
          {x, src}));
      // One operand only (vjp: needs_grad false for the other).
      for (int64_t arg : {0, 1}) {
        SCOPED_TRACE(arg);
        EXPECT_TRUE(GradAndJvpCheck(
            [&](const TensorList& a) { return scatter_add(a[0], 1, gidx, a[1]); }, {x, src},
            1e-6, {arg}));
      }
      // A captured constant operand: its tangent is undefined in the jvp formula.
      EXPECT_TRUE(JvpCheck(
          [&, x = x](const TensorList& a) { return scatter_add(x, 1, gidx, sin(a[0])); },
          {src}));
      EXPECT_TRUE(JvpCheck(
          [&, src = src](const TensorList& a) {
            return scatter_add(square(a[0]), 1, gidx, src);
          },
          {x}));
    }
    EXPECT_TRUE(GradAndJvpCheck(
        [&](const TensorList& a) { return scatter_add(a[0], 0, gidx0, a[1]); },
        {x, Rand({2, 4}, 9)}));
  }
}

TEST(ShapeFormulas, TakeAlongDim) {
  Tensor idx = tensor(std::vector<int64_t>{0, 3, 3, 1, 2, 0}, {3, 2});
  // Broadcasting: indices [1, 2] against x [3, 4] along dim 1; x [3, 1] against [3, 2] along 0.
  Tensor bidx = tensor(std::vector<int64_t>{3, 3}, {1, 2});
  Tensor bidx0 = tensor(std::vector<int64_t>{0, 2, 2, 1}, {2, 2});
  Tensor fidx = tensor(std::vector<int64_t>{11, 0, 5, 5, 7, 11}, {2, 3});
  for (const auto& [layout, x] : Layouts(Rand({3, 4}, 10))) {
    SCOPED_TRACE(layout);
    EXPECT_TRUE(
        GradAndJvpCheck([&](const TensorList& a) { return take_along_dim(a[0], idx, 1); }, {x}));
    EXPECT_TRUE(GradAndJvpCheck(
        [&](const TensorList& a) { return take_along_dim(a[0], idx, -1); }, {x}));
    EXPECT_TRUE(GradAndJvpCheck(
        [&](const TensorList& a) { return take_along_dim(a[0], bidx, 1); }, {x}));
    // No dim: flattened.
    EXPECT_TRUE(
        GradAndJvpCheck([&](const TensorList& a) { return take_along_dim(a[0], fidx); }, {x}));
  }
  for (const auto& [layout, x] : Layouts(Rand({3, 1}, 11))) {
    SCOPED_TRACE(layout);
    EXPECT_TRUE(GradAndJvpCheck(
        [&](const TensorList& a) { return take_along_dim(a[0], bidx0, 0); }, {x}));
  }
}

TEST(ShapeFormulas, CatAndStack) {
  Tensor a = Rand({2, 3}, 12), b = Rand({4, 3}, 13), c = Rand({1, 3}, 14);
  EXPECT_TRUE(GradAndJvpCheck([](const TensorList& t) { return cat(t, 0); }, {a, b, c}));
  // Non-contiguous and broadcast pieces.
  EXPECT_TRUE(GradAndJvpCheck([](const TensorList& t) { return cat(t, 0); },
                              {testing::NonContiguousCopy(a), expand(c, {4, 3}), c}));
  // Only some inputs tracked (vjp: needs_grad false for the others).
  EXPECT_TRUE(
      GradAndJvpCheck([](const TensorList& t) { return cat(t, 0); }, {a, b, c}, 1e-6, {1}));
  EXPECT_TRUE(
      GradAndJvpCheck([](const TensorList& t) { return cat(t, 0); }, {a, b, c}, 1e-6, {0, 2}));
  EXPECT_TRUE(GradAndJvpCheck([](const TensorList& t) { return stack(t, 1); }, {a, a * 2.0},
                              1e-6, {0}));
  EXPECT_TRUE(GradAndJvpCheck([](const TensorList& t) { return stack(t, 1); }, {a, a * 2.0},
                              1e-6, {1}));
  // Captured constant pieces: undefined tangents in the jvp formula (zeros in their place).
  EXPECT_TRUE(JvpCheck([&](const TensorList& t) { return cat({a, t[0], c}, 0); }, {b}));
  EXPECT_TRUE(
      JvpCheck([&](const TensorList& t) { return cat({t[0], b, sin(t[1])}, 0); }, {a, c}));
  EXPECT_TRUE(JvpCheck([&](const TensorList& t) { return stack({a, t[0]}, 1); }, {a * 2.0}));
  Tensor d = Rand({2, 1}, 15), e = Rand({2, 5}, 16);
  EXPECT_TRUE(GradAndJvpCheck([](const TensorList& t) { return cat(t, -1); }, {a, d, e}));
  // A skipped empty 1-D input gets a [0] gradient.
  Tensor empty = zeros({0}, kFloat64);
  EXPECT_TRUE(GradAndJvpCheck([](const TensorList& t) { return cat(t, 1); }, {a, empty, e}));
  EXPECT_TRUE(
      GradAndJvpCheck([](const TensorList& t) { return cat(t, 1); }, {a, empty, e}, 1e-6, {1}));
  TensorList g = grad(ScalarFn([](const TensorList& t) { return sum(cat(t, 1)); }), {1})(
      {a, empty, e});
  EXPECT_EQ(g[0].sizes(), Shape({0}));
  // Mixed dtypes: the float32 input's gradient is float32.
  Tensor f32 = to(Rand({2, 3}, 17), kFloat32);
  TensorList gm = grad(ScalarFn([](const TensorList& t) { return sum(cat(t, 0) * 2.0); }),
                       {0, 1})({a, f32});
  EXPECT_EQ(gm[1].dtype(), kFloat32);
  EXPECT_TENSOR_NEAR(gm[1], full({2, 3}, 2.0, kFloat32), 1e-6);
  EXPECT_TENSOR_NEAR(gm[0], full({2, 3}, 2.0, kFloat64), 1e-12);
  // ... and the output's tangent has the (promoted) output dtype.
  JvpResult jm = jvp([](const TensorList& t) { return TensorList{cat(t, 0) * 2.0}; }, {a, f32},
                     {ones_like(a), ones_like(f32)});
  EXPECT_TENSOR_NEAR(jm.tangents[0], full({4, 3}, 2.0, kFloat64), 1e-12);

  Tensor s1 = Rand({2, 3}, 18), s2 = Rand({2, 3}, 19), s3 = Rand({2, 3}, 20);
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(dim);
    EXPECT_TRUE(
        GradAndJvpCheck([dim](const TensorList& t) { return stack(t, dim); }, {s1, s2, s3}));
    EXPECT_TRUE(GradAndJvpCheck([dim](const TensorList& t) { return stack(t, dim); },
                                {testing::NonContiguousCopy(s1), expand(select(s2, 0, 0), {2, 3}),
                                 s3}));
  }
}

// split, split_with_sizes and chunk return TensorLists: the grad interpreter gives each piece
// its own gradient slot (a piece that gets no gradient contributes zeros), the jvp formula one
// tangent per piece.
TEST(ShapeFormulas, SplitChunk) {
  // Use the pieces unequally so every piece's gradient matters; skip a piece sometimes.
  auto combine = [](const TensorList& pieces) {
    Tensor acc = sum(square(pieces[0]));
    for (size_t i = 1; i < pieces.size(); ++i) {
      if (i == 2) continue;  // a piece that gets no gradient
      acc = acc + sum(sin(pieces[i])) * static_cast<double>(i + 1);
    }
    return reshape(acc, {1});
  };
  for (const auto& [layout, x] : Layouts(Rand({5, 4}, 21))) {
    SCOPED_TRACE(layout);
    EXPECT_TRUE(
        GradAndJvpCheck([&](const TensorList& a) { return combine(split(a[0], 2, 0)); }, {x}));
    EXPECT_TRUE(
        GradAndJvpCheck([&](const TensorList& a) { return combine(split(a[0], 3, -1)); }, {x}));
    EXPECT_TRUE(GradAndJvpCheck(
        [&](const TensorList& a) { return combine(split_with_sizes(a[0], {1, 0, 3, 1}, 0)); },
        {x}));
    EXPECT_TRUE(GradAndJvpCheck(
        [&](const TensorList& a) { return combine(split_with_sizes(a[0], {2, 2}, 1)); }, {x}));
    EXPECT_TRUE(
        GradAndJvpCheck([&](const TensorList& a) { return combine(chunk(a[0], 3, 0)); }, {x}));
    EXPECT_TRUE(
        GradAndJvpCheck([&](const TensorList& a) { return combine(chunk(a[0], 4, -1)); }, {x}));
    // Cat of the pieces back: identity; every piece's tangent reaches the output.
    EXPECT_TRUE(
        GradAndJvpCheck([&](const TensorList& a) { return cat(chunk(a[0], 2, 1), 1); }, {x}));
    EXPECT_TRUE(GradAndJvpCheck(
        [&](const TensorList& a) { return stack(split_with_sizes(a[0], {2, 2}, 0), 1); },
        {narrow(x, 0, 1, 4)}));
  }
}

TEST(ShapeFormulas, SplitFormulaDirectly) {
  // The formula itself, called with one gradient per piece (undefined: zeros).
  autograd::RegisterDerivatives();
  Tensor x = Rand({5, 2}, 22);
  const Operator& op = OpRegistry::Global().Get("split");
  const autograd::VjpFormula* f = autograd::GetVjp(op);
  ASSERT_NE(f, nullptr);
  ValueList inputs = {Value(x), Value(int64_t{2}), Value(int64_t{0})};
  TensorList pieces = split(x, 2, 0);
  ValueList outputs = {Value(pieces)};
  Tensor g0 = Rand({2, 2}, 23), g2 = Rand({1, 2}, 24);
  TensorList r = (*f)(autograd::VjpContext{op, inputs, outputs}, {g0, Tensor(), g2});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TENSOR_NEAR(r[0], cat({g0, zeros({2, 2}, kFloat64), g2}, 0), 0.0);
}

// CallJvp runs op `name`'s jvp formula directly on the given inputs, outputs and tangents.
TensorList CallJvp(const char* name, const ValueList& inputs, const ValueList& outputs,
                   const TensorList& tangents) {
  autograd::RegisterDerivatives();
  const Operator& op = OpRegistry::Global().Get(name);
  const autograd::JvpFormula* f = autograd::GetJvp(op);
  if (f == nullptr) {
    ADD_FAILURE() << name << " has no jvp formula";
    return {};
  }
  return (*f)(autograd::JvpContext{op, inputs, outputs}, tangents);
}

// The jvp formulas called directly with undefined tangents (what the interpreter passes for
// constants and integer index arguments), against values assembled by hand.
TEST(ShapeFormulas, JvpFormulasDirectly) {
  // split: one tangent per piece.
  Tensor x = Rand({5, 2}, 22), tx = Rand({5, 2}, 23);
  TensorList r = CallJvp("split", {Value(x), Value(int64_t{2}), Value(int64_t{0})},
                         {Value(split(x, 2, 0))}, {tx});
  ASSERT_EQ(r.size(), 3u);
  const std::vector<double> tv = tx.to_vector<double>();
  EXPECT_TENSOR_EQ(r[0], tensor(std::vector<double>(tv.begin(), tv.begin() + 4), {2, 2}));
  EXPECT_TENSOR_EQ(r[1], tensor(std::vector<double>(tv.begin() + 4, tv.begin() + 8), {2, 2}));
  EXPECT_TENSOR_EQ(r[2], tensor(std::vector<double>(tv.begin() + 8, tv.end()), {1, 2}));

  // cat / stack with an undefined tangent in the middle: zeros in its place.
  Tensor a = Rand({2, 3}, 24), b = Rand({1, 3}, 25), c = Rand({2, 3}, 26);
  Tensor ta = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  Tensor tc = tensor({7.0, 8.0, 9.0, 10.0, 11.0, 12.0}, {2, 3});
  r = CallJvp("cat", {Value(TensorList{a, b, c}), Value(int64_t{0})},
              {Value(cat({a, b, c}, 0))}, {ta, Tensor(), tc});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TENSOR_EQ(r[0], tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 0.0, 0.0, 7.0, 8.0, 9.0,
                                 10.0, 11.0, 12.0},
                                {5, 3}));
  r = CallJvp("stack", {Value(TensorList{a, c}), Value(int64_t{-1})},
              {Value(stack({a, c}, -1))}, {Tensor(), tc});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TENSOR_EQ(r[0], tensor({0.0, 7.0, 0.0, 8.0, 0.0, 9.0, 0.0, 10.0, 0.0, 11.0, 0.0, 12.0},
                                {2, 3, 2}));

  // scatter_add(self, 1, index, src): every defined/undefined combination.
  Tensor self = Rand({2, 3}, 27), src = Rand({2, 2}, 28);
  Tensor index = tensor(std::vector<int64_t>{2, 2, 0, 1}, {2, 2});
  Tensor tsrc = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  ValueList sa_in = {Value(self), Value(int64_t{1}), Value(index), Value(src)};
  ValueList sa_out = {Value(scatter_add(self, 1, index, src))};
  r = CallJvp("scatter_add", sa_in, sa_out, {Tensor(), Tensor(), tsrc});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TENSOR_EQ(r[0], tensor({0.0, 0.0, 3.0, 3.0, 4.0, 0.0}, {2, 3}));
  r = CallJvp("scatter_add", sa_in, sa_out, {ta, Tensor(), tsrc});
  EXPECT_TENSOR_EQ(r[0], tensor({1.0, 2.0, 6.0, 7.0, 9.0, 6.0}, {2, 3}));
  r = CallJvp("scatter_add", sa_in, sa_out, {ta, Tensor(), Tensor()});
  EXPECT_TENSOR_EQ(r[0], ta);

  // The index's tangent is always undefined.
  r = CallJvp("gather", {Value(self), Value(int64_t{1}), Value(index)},
              {Value(gather(self, 1, index))}, {ta, Tensor()});
  EXPECT_TENSOR_EQ(r[0], tensor({3.0, 3.0, 4.0, 5.0}, {2, 2}));
  Tensor iidx = tensor(std::vector<int64_t>{2, 0});
  r = CallJvp("index_select", {Value(self), Value(int64_t{1}), Value(iidx)},
              {Value(index_select(self, 1, iidx))}, {ta, Tensor()});
  EXPECT_TENSOR_EQ(r[0], tensor({3.0, 1.0, 6.0, 4.0}, {2, 2}));

  // outer: the product rule, each half alone.
  Tensor u = tensor({1.0, 2.0}), v = tensor({3.0, 4.0, 5.0});
  Tensor tu = tensor({10.0, 20.0}), tw = tensor({100.0, 200.0, 300.0});
  ValueList o_in = {Value(u), Value(v)};
  ValueList o_out = {Value(outer(u, v))};
  EXPECT_TENSOR_EQ(CallJvp("outer", o_in, o_out, {tu, Tensor()})[0],
                   tensor({30.0, 40.0, 50.0, 60.0, 80.0, 100.0}, {2, 3}));
  EXPECT_TENSOR_EQ(CallJvp("outer", o_in, o_out, {Tensor(), tw})[0],
                   tensor({100.0, 200.0, 300.0, 200.0, 400.0, 600.0}, {2, 3}));
  EXPECT_TENSOR_EQ(CallJvp("outer", o_in, o_out, {tu, tw})[0],
                   tensor({130.0, 240.0, 350.0, 260.0, 480.0, 700.0}, {2, 3}));
}

TEST(ShapeFormulas, Repeat) {
  for (const auto& [layout, x] : Layouts(Rand({2, 3}, 25))) {
    SCOPED_TRACE(layout);
    EXPECT_TRUE(GradAndJvpCheck([](const TensorList& a) { return repeat(a[0], {2, 3}); }, {x}));
    EXPECT_TRUE(GradAndJvpCheck([](const TensorList& a) { return repeat(a[0], {1, 1}); }, {x}));
    EXPECT_TRUE(
        GradAndJvpCheck([](const TensorList& a) { return repeat(a[0], {3, 2, 1}); }, {x}));
    EXPECT_TRUE(
        GradAndJvpCheck([](const TensorList& a) { return repeat(a[0], {2, 1, 2, 2}); }, {x}));
    EXPECT_TRUE(
        GradAndJvpCheck([](const TensorList& a) { return repeat(a[0], {0, 2}) + 0.0; }, {x}));
  }
  EXPECT_TRUE(
      GradAndJvpCheck([](const TensorList& a) { return repeat(a[0], {3}); }, {Rand({}, 26)}));
  Tensor x = Rand({2, 3}, 25);
  TensorList g = grad(ScalarFn([](const TensorList& a) { return sum(repeat(a[0], {0, 2})); }))(
      {x});
  EXPECT_TENSOR_NEAR(g[0], zeros({2, 3}, kFloat64), 0.0);
  JvpResult j = jvp([](const TensorList& a) { return TensorList{repeat(a[0], {0, 2})}; }, {x},
                    {ones_like(x)});
  EXPECT_EQ(j.tangents[0].sizes(), Shape({0, 6}));
}

TEST(ShapeFormulas, Pad) {
  for (const auto& [layout, x] : Layouts(Rand({3, 4, 5}, 27))) {
    SCOPED_TRACE(layout);
    for (const Shape& pads : std::vector<Shape>{{1, 2},
                                                {0, 0},
                                                {2, 0, 1, 3},
                                                {1, 1, 0, 2, 3, 0},
                                                {-1, -2},
                                                {-2, 3, 1, -1},
                                                {2, -4, -1, -1, 0, 1},
                                                {-7, 3}}) {
      SCOPED_TRACE(::testing::PrintToString(std::vector<int64_t>(pads.begin(), pads.end())));
      EXPECT_TRUE(
          GradAndJvpCheck([pads](const TensorList& a) { return pad(a[0], pads, 0.5); }, {x}));
    }
  }
}

TEST(ShapeFormulas, Outer) {
  Tensor a = Rand({3}, 28), b = Rand({4}, 29);
  EXPECT_TRUE(GradAndJvpCheck([](const TensorList& t) { return outer(t[0], t[1]); }, {a, b}));
  EXPECT_TRUE(GradAndJvpCheck([](const TensorList& t) { return square(outer(t[0], t[1])); },
                              {Rand({3}, 30), Rand({1}, 31)}));
  for (int64_t arg : {0, 1}) {
    SCOPED_TRACE(arg);
    EXPECT_TRUE(GradAndJvpCheck([](const TensorList& t) { return outer(t[0], t[1]); }, {a, b},
                                1e-6, {arg}));
    EXPECT_TRUE(GradGradCheck([](const TensorList& t) { return sin(outer(t[0], t[1])); },
                              {a, b}, 1e-5, {arg}));
  }
  // A captured constant operand: its tangent is undefined in the jvp formula.
  EXPECT_TRUE(JvpCheck([&](const TensorList& t) { return outer(t[0], b); }, {a}));
  EXPECT_TRUE(JvpCheck([&](const TensorList& t) { return outer(a, t[0]); }, {b}));
  // Non-contiguous and broadcast operands.
  EXPECT_TRUE(GradAndJvpCheck([](const TensorList& t) { return outer(t[0], t[1]); },
                              {testing::NonContiguousCopy(a), expand(Rand({1}, 32), {4})}));
  // Second derivatives: outer is bilinear (its Hessian couples a and b).
  EXPECT_TRUE(GradGradCheck([](const TensorList& t) { return outer(t[0], t[1]); }, {a, b}));
  EXPECT_TRUE(
      GradGradCheck([](const TensorList& t) { return square(outer(t[0], t[1])); }, {a, b}));
  EXPECT_TRUE(GradGradCheck([](const TensorList& t) { return outer(t[0], t[0]); }, {a}));
}

TEST(ShapeFormulas, NonDifferentiableOneHotAndArgsort) {
  // argsort picks an order; gather by it is differentiable w.r.t. x: d/dx sum(sorted * w).
  Tensor x = tensor({0.3, -1.2, 2.5, 0.9});
  Tensor w = tensor({1.0, 2.0, 3.0, 4.0});
  Tensor v = tensor({1.0, 10.0, 100.0, 1000.0});
  auto f = ScalarFn([&](const TensorList& a) {
    Tensor order = argsort(a[0], -1, false);  // [1, 0, 3, 2]
    return sum(gather(a[0], 0, order) * w);
  });
  EXPECT_TENSOR_NEAR(grad(f)({x})[0], tensor({2.0, 1.0, 4.0, 3.0}), 0.0);
  // Forward mode: v[1] * 1 + v[0] * 2 + v[3] * 3 + v[2] * 4.
  EXPECT_TENSOR_NEAR(jvp([&](const TensorList& a) { return TensorList{f(a)}; }, {x}, {v})
                         .tangents[0],
                     scalar_tensor(3412.0, kFloat64), 0.0);
  // one_hot of argsort, used as a float mask: a constant.
  auto h = ScalarFn([&](const TensorList& a) {
    Tensor mask = to(one_hot(argsort(a[0], -1, true), 4), kFloat64);  // rows: one-hot order
    return sum(matmul(mask, a[0]) * w);  // sum_i w[i] * x[order[i]]
  });
  // descending order of x: [2, 3, 0, 1] -> x[2] gets w[0], x[3] w[1], x[0] w[2], x[1] w[3].
  EXPECT_TENSOR_NEAR(grad(h)({x})[0], tensor({3.0, 4.0, 1.0, 2.0}), 0.0);
  EXPECT_TENSOR_NEAR(jvp([&](const TensorList& a) { return TensorList{h(a)}; }, {x}, {v})
                         .tangents[0],
                     scalar_tensor(2143.0, kFloat64), 0.0);
}

TEST(ShapeFormulas, HigherOrder) {
  // Second derivatives through formulas that use pad/scatter_add/gather themselves.
  Tensor x = Rand({3, 4}, 32);
  Tensor gidx = tensor(std::vector<int64_t>{0, 0, 3, 1, 2, 2}, {3, 2});
  auto inner = [&](const Tensor& t) {
    return sum(square(select(t, 1, 2))) + sum(pow(gather(t, 1, gidx), 3.0)) +
           sum(square(slice(diagonal(t, 1), 0, std::nullopt, std::nullopt, 2))) +
           sum(square(pad(narrow(t, 0, 1, 2), {1, -1})));
  };
  auto gfn = TensorFn([&](const Tensor& t) { return grad(TensorFn(inner))(t); });
  // grad of sum(gfn(x) * w) and jvp of gfn (forward-over-reverse: the jvp formulas of the ops
  // the vjp formulas use) vs central differences of it.
  EXPECT_TRUE(GradAndJvpCheck([&](const TensorList& a) { return gfn(a[0]); }, {x}, 1e-5));
  EXPECT_TRUE(GradGradCheck([&](const TensorList& a) { return inner(a[0]); }, {x}));
}

TEST(ShapeFormulas, VmapOfGrad) {
  // Per-example gradients against a loop of grad, one op per loss.
  Tensor xs = Rand({4, 3, 5}, 33);
  Tensor gidx = tensor(std::vector<int64_t>{4, 0, 0, 2, 1, 3}, {3, 2});
  Tensor iidx = tensor(std::vector<int64_t>{4, 0, 4});
  Tensor tidx = tensor(std::vector<int64_t>{2, 0}, {2, 1});
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> losses = {
      {"select", [](const Tensor& t) { return sum(square(select(t, 1, -2))); }},
      {"narrow", [](const Tensor& t) { return sum(square(narrow(t, 1, 1, 3))); }},
      {"slice", [](const Tensor& t) { return sum(square(slice(t, 1, 1, std::nullopt, 3))); }},
      {"diagonal", [](const Tensor& t) { return sum(square(diagonal(t, 1))); }},
      {"flip", [](const Tensor& t) { return sum(square(flip(t, {0})) * t); }},
      {"movedim", [](const Tensor& t) { return sum(square(select(movedim(t, 0, 1), 0, 0))); }},
      {"unflatten",
       [](const Tensor& t) { return sum(square(select(unflatten(t, 0, {1, 3}), 0, 0))); }},
      {"index_select", [&](const Tensor& t) { return sum(square(index_select(t, 1, iidx))); }},
      {"gather", [&](const Tensor& t) { return sum(sin(gather(t, 1, gidx))); }},
      {"scatter_add", [&](const Tensor& t) {
         return sum(square(scatter_add(t, 1, gidx, narrow(t, 1, 0, 2))));
       }},
      {"take_along_dim", [&](const Tensor& t) { return sum(square(take_along_dim(t, tidx, 0))); }},
      {"pad", [](const Tensor& t) { return sum(exp(pad(t, {2, -1}))); }},
      {"repeat", [](const Tensor& t) { return sum(square(repeat(t, {2, 1, 2}))); }},
      {"stack", [](const Tensor& t) { return sum(square(select(stack({t, t * t}, 1), 1, 1))); }},
      {"cat", [](const Tensor& t) { return sum(cos(cat({narrow(t, 1, 0, 2), t * t}, 1))); }},
      {"outer",
       [](const Tensor& t) { return sum(square(outer(select(t, 0, 0), select(t, 1, 1)))); }},
  };
  for (const auto& [name, fn] : losses) {
    SCOPED_TRACE(name);
    auto loss = ScalarFn([fn = fn](const TensorList& a) { return fn(a[0]); });
    Tensor batched = vmap(grad(loss, {0}))({xs})[0];
    TensorList per;
    for (int64_t i = 0; i < xs.size(0); ++i) {
      per.push_back(grad(loss, {0})({select(xs, 0, i)})[0]);
    }
    EXPECT_TENSOR_NEAR(batched, stack(per, 0), 1e-12);
  }
}


// Second derivatives (grad of grad, jvp of grad) through each op composed with smooth ops:
// they run the vjp formulas' own vjp and jvp formulas (pad, scatter_add, cat, ...).
TEST(ShapeFormulas, SecondOrderThroughEachOp) {
  Tensor x = Rand({3, 4}, 40), y = Rand({3, 3}, 41);
  Tensor gidx = tensor(std::vector<int64_t>{0, 0, 3, 1, 2, 2}, {3, 2});
  Tensor iidx = tensor(std::vector<int64_t>{3, 0, 3});
  Tensor tidx = tensor(std::vector<int64_t>{2, 0, 1, 1}, {1, 4});
  struct Case {
    const char* name;
    Fn fn;
    TensorList args;
  };
  const std::vector<Case> cases = {
      {"unflatten", [](const TensorList& a) { return sin(unflatten(a[0], 1, {2, 2})); }, {x}},
      {"movedim", [](const TensorList& a) { return sin(movedim(a[0], 0, 1)) * t(a[0]); }, {x}},
      {"flip", [](const TensorList& a) { return flip(a[0], {1}) * a[0]; }, {x}},
      {"select", [](const TensorList& a) { return square(select(a[0], 1, 2)); }, {x}},
      {"narrow", [](const TensorList& a) { return sin(narrow(a[0], 1, 1, 2)); }, {x}},
      {"slice",
       [](const TensorList& a) { return exp(slice(a[0], 1, 1, std::nullopt, 2)); }, {x}},
      {"diagonal", [](const TensorList& a) { return sin(diagonal(a[0], 1)); }, {x}},
      {"index_select",
       [&](const TensorList& a) { return sin(index_select(a[0], 1, iidx)); }, {x}},
      {"gather", [&](const TensorList& a) { return pow(gather(a[0], 1, gidx), 3.0); }, {x}},
      {"scatter_add",
       [&](const TensorList& a) { return square(scatter_add(a[0], 1, gidx, sin(a[1]))); },
       {x, y}},
      {"take_along_dim",
       [&](const TensorList& a) { return sin(take_along_dim(a[0], tidx, 0)); }, {x}},
      {"cat", [](const TensorList& a) { return cos(cat({a[0], a[1] * a[1]}, 1)); }, {x, y}},
      {"stack", [](const TensorList& a) { return stack({a[0], square(a[0])}, 0); }, {x}},
      {"split",
       [](const TensorList& a) {
         TensorList p = split(a[0], 3, 1);
         return p[0] * p[1];
       },
       {x}},
      {"split_with_sizes",
       [](const TensorList& a) {
         TensorList p = split_with_sizes(a[0], {1, 2}, 0);
         return sin(p[0]) * p[1];
       },
       {x}},
      {"chunk",
       [](const TensorList& a) {
         TensorList p = chunk(a[0], 2, 1);
         return p[0] * p[1];
       },
       {x}},
      {"repeat", [](const TensorList& a) { return sin(repeat(a[0], {2, 1})); }, {x}},
      {"pad", [](const TensorList& a) { return exp(pad(a[0], {1, -1}, 0.5)); }, {x}},
      {"outer",
       [](const TensorList& a) { return outer(select(a[0], 0, 0), select(a[0], 1, 1)); },
       {x}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(GradGradCheck(c.fn, c.args));
  }
}

// ft::jvp with captured constants (their tangents are undefined in the formulas) against
// closed forms computed element by element.
TEST(ShapeFormulas, JvpClosedForms) {
  // outer: d(a b^T) = da b^T + a db^T.
  Tensor a = Rand({3}, 42), b = Rand({4}, 43), ta = Rand({3}, 44), tb = Rand({4}, 45);
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  const std::vector<double> tav = ta.to_vector<double>(), tbv = tb.to_vector<double>();
  std::vector<double> both, only_a;
  for (size_t i = 0; i < 3; ++i) {
    for (size_t j = 0; j < 4; ++j) {
      both.push_back(tav[i] * bv[j] + av[i] * tbv[j]);
      only_a.push_back(tav[i] * bv[j]);
    }
  }
  JvpResult r = jvp([](const TensorList& p) { return TensorList{outer(p[0], p[1])}; }, {a, b},
                    {ta, tb});
  EXPECT_TENSOR_NEAR(r.tangents[0], tensor(both, {3, 4}), 1e-15);
  r = jvp([&](const TensorList& p) { return TensorList{outer(p[0], b)}; }, {a}, {ta});
  EXPECT_TENSOR_NEAR(r.tangents[0], tensor(only_a, {3, 4}), 1e-15);

  // pad with a value: the padding is constant, so the tangent is 0 there.
  Tensor x = Rand({2, 3}, 46), tx = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  r = jvp([](const TensorList& p) { return TensorList{pad(p[0], {1, 2}, 0.5)}; }, {x}, {tx});
  EXPECT_TENSOR_EQ(r.tangents[0], tensor({0.0, 1.0, 2.0, 3.0, 0.0, 0.0,  //
                                          0.0, 4.0, 5.0, 6.0, 0.0, 0.0},
                                         {2, 6}));

  // scatter_add with a constant self, then with a constant src.
  Tensor self = Rand({2, 3}, 47), src = Rand({2, 2}, 48);
  Tensor index = tensor(std::vector<int64_t>{2, 2, 0, 1}, {2, 2});
  Tensor tsrc = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  r = jvp([&](const TensorList& p) { return TensorList{scatter_add(self, 1, index, p[0])}; },
          {src}, {tsrc});
  EXPECT_TENSOR_EQ(r.tangents[0], tensor({0.0, 0.0, 3.0, 3.0, 4.0, 0.0}, {2, 3}));
  r = jvp([&](const TensorList& p) { return TensorList{scatter_add(p[0], 1, index, src)}; },
          {self}, {tx});
  EXPECT_TENSOR_EQ(r.tangents[0], tx);

  // cat / stack with a constant piece: zeros in its place.
  Tensor c = Rand({1, 3}, 49);
  r = jvp([&](const TensorList& p) { return TensorList{cat({p[0], c, p[0]}, 0)}; }, {x}, {tx});
  EXPECT_TENSOR_EQ(r.tangents[0],
                   tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0,
                           5.0, 6.0},
                          {5, 3}));
  r = jvp([&](const TensorList& p) { return TensorList{stack({x, p[0]}, 0)}; }, {x}, {tx});
  EXPECT_TENSOR_EQ(r.tangents[0], tensor({0.0, 0.0, 0.0, 0.0, 0.0, 0.0,  //
                                          1.0, 2.0, 3.0, 4.0, 5.0, 6.0},
                                         {2, 2, 3}));

  // slice with a step, and diagonal: the same view of the tangent.
  r = jvp([](const TensorList& p) { return TensorList{slice(p[0], 1, std::nullopt, 5, 2)}; },
          {x}, {tx});
  EXPECT_TENSOR_EQ(r.tangents[0], tensor({1.0, 3.0, 4.0, 6.0}, {2, 2}));
  r = jvp([](const TensorList& p) { return TensorList{diagonal(p[0], 1)}; }, {x}, {tx});
  EXPECT_TENSOR_EQ(r.tangents[0], tensor({2.0, 6.0}));
}

// jacfwd (vmap of jvp) and jacrev (vmap of vjp) must give the same Jacobians; for gather it is
// also checked against its 0/1 closed form.
TEST(ShapeFormulas, JacfwdMatchesJacrev) {
  Tensor x = Rand({3, 4}, 50), y = Rand({3, 3}, 51);
  Tensor gidx = tensor(std::vector<int64_t>{0, 0, 3, 1, 2, 2}, {3, 2});
  Fn gather_fn = [&](const TensorList& a) { return gather(a[0], 1, gidx); };
  Tensor jf = jacfwd(gather_fn)({x})[0];
  std::vector<double> expected(3 * 2 * 3 * 4, 0.0);
  const std::vector<int64_t> gv = gidx.to_vector<int64_t>();
  for (size_t i = 0; i < 3; ++i) {
    for (size_t j = 0; j < 2; ++j) {
      const size_t col = static_cast<size_t>(gv[i * 2 + j]);
      expected[((i * 2 + j) * 3 + i) * 4 + col] = 1.0;
    }
  }
  EXPECT_TENSOR_EQ(jf, tensor(expected, {3, 2, 3, 4}));

  struct Case {
    const char* name;
    Fn fn;
    TensorList args;
    std::vector<int64_t> argnums;
  };
  const std::vector<Case> cases = {
      {"gather", gather_fn, {x}, {0}},
      {"outer", [](const TensorList& a) { return outer(a[0], a[1]); },
       {Rand({3}, 52), Rand({4}, 53)}, {0, 1}},
      {"scatter_add",
       [&](const TensorList& a) { return scatter_add(a[0], 1, gidx, a[1] * a[1]); }, {x, y},
       {0, 1}},
      {"cat", [](const TensorList& a) { return cat({a[0], sin(a[1])}, 1); }, {x, y}, {0, 1}},
      {"stack", [](const TensorList& a) { return stack({a[0], a[1]}, 2); }, {y, y * 2.0},
       {1}},
      {"slice",
       [](const TensorList& a) { return slice(a[0], 1, -3, std::nullopt, 2); }, {x}, {0}},
      {"diagonal", [](const TensorList& a) { return diagonal(a[0], -1, 1, 0); }, {x}, {0}},
      {"pad", [](const TensorList& a) { return pad(a[0], {2, -1, 0, 1}, 3.0); }, {x}, {0}},
      {"repeat", [](const TensorList& a) { return repeat(a[0], {2, 1, 2}); }, {x}, {0}},
      {"take_along_dim",
       [](const TensorList& a) {
         return take_along_dim(a[0], tensor(std::vector<int64_t>{11, 0, 4}));
       },
       {x}, {0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TensorList fwd = jacfwd(c.fn, c.argnums)(c.args);
    TensorList rev = jacrev(c.fn, c.argnums)(c.args);
    ASSERT_EQ(fwd.size(), rev.size());
    for (size_t k = 0; k < fwd.size(); ++k) EXPECT_TENSOR_NEAR(fwd[k], rev[k], 1e-12);
  }
}

// vmap of jvp against a loop of jvp: primals and tangents batched (dim 0 and last), and a
// shared primal with batched tangents (jacfwd's pattern).
TEST(ShapeFormulas, VmapOfJvp) {
  Tensor xs = Rand({4, 3, 5}, 54), ts = Rand({4, 3, 5}, 55);
  Tensor gidx = tensor(std::vector<int64_t>{4, 0, 0, 2, 1, 3}, {3, 2});
  Tensor iidx = tensor(std::vector<int64_t>{4, 0, 4});
  Tensor tidx = tensor(std::vector<int64_t>{2, 0}, {2, 1});
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> fns = {
      {"unflatten", [](const Tensor& t) { return unflatten(t, 1, {5, 1}); }},
      {"movedim", [](const Tensor& t) { return movedim(t, 0, 1); }},
      {"flip", [](const Tensor& t) { return flip(t, {0, 1}) * t; }},
      {"select", [](const Tensor& t) { return select(t, 1, -2); }},
      {"narrow", [](const Tensor& t) { return narrow(t, 1, 1, 3); }},
      {"slice", [](const Tensor& t) { return slice(t, 1, 1, std::nullopt, 3); }},
      {"diagonal", [](const Tensor& t) { return diagonal(t, 1); }},
      {"index_select", [&](const Tensor& t) { return index_select(t, 1, iidx); }},
      {"gather", [&](const Tensor& t) { return sin(gather(t, 1, gidx)); }},
      {"scatter_add", [&](const Tensor& t) { return scatter_add(t, 1, gidx, square(t)); }},
      {"take_along_dim", [&](const Tensor& t) { return take_along_dim(t, tidx, 0); }},
      {"take_along_dim flat", [&](const Tensor& t) { return take_along_dim(t, gidx); }},
      {"cat", [](const Tensor& t) { return cat({narrow(t, 1, 0, 2), t * t}, 1); }},
      {"stack", [](const Tensor& t) { return stack({t, t * t}, 1); }},
      {"split", [](const Tensor& t) {
         TensorList p = split(t, 2, 1);
         return cat({p[2], p[0] * 3.0}, 1);
       }},
      {"split_with_sizes", [](const Tensor& t) {
         TensorList p = split_with_sizes(t, {1, 2}, 0);
         return p[0] * p[1];
       }},
      {"chunk", [](const Tensor& t) { return stack(chunk(square(t), 3, 0), 0); }},
      {"repeat", [](const Tensor& t) { return repeat(t, {2, 1, 2}); }},
      {"pad", [](const Tensor& t) { return pad(t, {2, -1}, 0.5); }},
      {"outer", [](const Tensor& t) { return outer(select(t, 0, 0), select(t, 1, 1)); }},
  };
  for (const auto& [name, fn] : fns) {
    SCOPED_TRACE(name);
    TensorListFn tangent_of = [fn = fn](const TensorList& a) {
      return jvp([fn](const TensorList& p) { return TensorList{fn(p[0])}; }, {a[0]}, {a[1]})
          .tangents;
    };
    TensorList per, per_shared;
    for (int64_t i = 0; i < xs.size(0); ++i) {
      per.push_back(tangent_of({select(xs, 0, i), select(ts, 0, i)})[0]);
      per_shared.push_back(tangent_of({select(xs, 0, 0), select(ts, 0, i)})[0]);
    }
    EXPECT_TENSOR_NEAR(vmap(tangent_of)({xs, ts})[0], stack(per, 0), 1e-12);
    EXPECT_TENSOR_NEAR(vmap(tangent_of, -1)({movedim(xs, 0, -1), movedim(ts, 0, -1)})[0],
                       stack(per, 0), 1e-12);
    EXPECT_TENSOR_NEAR(
        vmap(tangent_of, Dims({std::nullopt, 0}))({select(xs, 0, 0), ts})[0],
        stack(per_shared, 0), 1e-12);
    // Batch of one.
    EXPECT_TENSOR_NEAR(vmap(tangent_of)({narrow(xs, 0, 1, 1), narrow(ts, 0, 1, 1)})[0],
                       unsqueeze(per[1], 0), 1e-12);
  }
}

}  // namespace
}  // namespace ft

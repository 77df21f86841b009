// vjp formulas of the shape, view, indexing and joining ops against float64 central
// differences, closed forms, and a loop of grad for vmap(grad).
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/formulas.h"
#include "dispatch/ops.h"
#include "gtest/gtest.h"
#include "interpreters/grad/gradcheck.h"
#include "interpreters/grad/grad.h"
#include "interpreters/vmap/vmap.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"

namespace ft {
namespace {

Tensor Rand(IntArrayRef shape, uint64_t seed, double low = -1.0, double high = 1.0) {
  Generator g(seed);
  return rand_like(zeros(shape, kFloat64), &g) * (high - low) + low;
}

// GradCheck: ft::gradcheck (interpreters/grad/gradcheck.h) as a gtest assertion.
::testing::AssertionResult GradCheck(const std::function<Tensor(const TensorList&)>& op,
                                     const TensorList& args, double tol = 1e-6,
                                     std::vector<int64_t> argnums = {}) {
  const GradcheckResult r = gradcheck(op, args, std::move(argnums), tol, tol);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

using Fn = std::function<Tensor(const TensorList&)>;

TEST(ShapeFormulas, ReshapeLikeViews) {
  Tensor x = Rand({2, 6, 3}, 1);
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return unflatten(a[0], 1, {2, 3}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return unflatten(a[0], -2, {-1, 2}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return movedim(a[0], 0, -1); }, {x}));
  EXPECT_TRUE(
      GradCheck([](const TensorList& a) { return movedim(a[0], {0, 2}, {2, 1}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return flip(a[0], {0, -1}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return flip(a[0], {}); }, {x}));
}

TEST(ShapeFormulas, SelectNarrowSlice) {
  Tensor x = Rand({3, 4, 5}, 2);
  for (auto [dim, index] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 0}, {0, 2}, {1, -1}, {-1, 3}, {2, 0}, {-2, 1}}) {
    SCOPED_TRACE(std::to_string(dim) + "," + std::to_string(index));
    EXPECT_TRUE(GradCheck(
        [dim = dim, index = index](const TensorList& a) { return select(a[0], dim, index); },
        {x}));
  }
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return select(a[0], 0, 1); }, {Rand({3}, 3)}));
  for (auto [dim, start, len] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {0, 0, 3}, {0, 1, 1}, {1, -3, 2}, {-1, 2, 3}, {2, 0, 0}, {1, 4, 0}}) {
    SCOPED_TRACE(std::to_string(dim) + "," + std::to_string(start) + "," + std::to_string(len));
    EXPECT_TRUE(GradCheck([dim = dim, start = start, len = len](const TensorList& a) {
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
    EXPECT_TRUE(GradCheck(
        [s](const TensorList& a) { return slice(a[0], s.dim, s.start, s.end, s.step); }, {x}));
  }
}

TEST(ShapeFormulas, Diagonal) {
  Tensor m = Rand({3, 4}, 4);
  Tensor x = Rand({3, 2, 4}, 5);
  for (int64_t offset : {0, 1, 2, 3, 4, -1, -2, -3, 7}) {
    SCOPED_TRACE(offset);
    EXPECT_TRUE(GradCheck(
        [offset](const TensorList& a) { return diagonal(a[0], offset, 0, 1); }, {m}));
    EXPECT_TRUE(GradCheck(
        [offset](const TensorList& a) { return diagonal(a[0], offset, 1, 0); }, {m}));
    EXPECT_TRUE(GradCheck(
        [offset](const TensorList& a) { return diagonal(a[0], offset, -1, 0); }, {x}));
    EXPECT_TRUE(GradCheck(
        [offset](const TensorList& a) { return diagonal(a[0], offset, 1, 2); }, {x}));
  }
}

TEST(ShapeFormulas, IndexSelectGatherScatterAdd) {
  Tensor x = Rand({3, 4}, 6);
  Tensor idx = tensor(std::vector<int64_t>{2, 0, 2, 1, 2});
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return index_select(a[0], 0, idx); }, {x}));
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return index_select(a[0], -1, idx); }, {x}));
  Tensor one = scalar_tensor(int64_t{1});
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return index_select(a[0], 1, one); }, {x}));
  EXPECT_TRUE(GradCheck(
      [&](const TensorList& a) { return index_select(a[0], 0, scalar_tensor(int64_t{0})); },
      {Rand({}, 7)}));

  Tensor gidx = tensor(std::vector<int64_t>{0, 0, 3, 1, 2, 2}, {3, 2});
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return gather(a[0], 1, gidx); }, {x}));
  Tensor gidx0 = tensor(std::vector<int64_t>{2, 2, 0, 1, 1, 1, 0, 2}, {2, 4});
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return gather(a[0], 0, gidx0); }, {x}));
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return gather(a[0], -2, gidx0); }, {x}));

  // scatter_add: src larger than index (its extra elements get zero gradient).
  Tensor src = Rand({3, 3}, 8);
  EXPECT_TRUE(GradCheck(
      [&](const TensorList& a) { return scatter_add(a[0], 1, gidx, a[1]); }, {x, src}));
  EXPECT_TRUE(GradCheck(
      [&](const TensorList& a) { return scatter_add(a[0], 0, gidx0, a[1]); },
      {x, Rand({2, 4}, 9)}));
  // Non-linear in src so that a wrong src gradient cannot hide behind the sum.
  EXPECT_TRUE(GradCheck(
      [&](const TensorList& a) { return square(scatter_add(a[0] * a[0], 1, gidx, sin(a[1]))); },
      {x, src}));
  EXPECT_TRUE(GradCheck(
      [&](const TensorList& a) { return scatter_add(a[0], 1, gidx, a[1]); }, {x, src}, 1e-6, {0}));
  EXPECT_TRUE(GradCheck(
      [&](const TensorList& a) { return scatter_add(a[0], 1, gidx, a[1]); }, {x, src}, 1e-6, {1}));
}

TEST(ShapeFormulas, TakeAlongDim) {
  Tensor x = Rand({3, 4}, 10);
  Tensor idx = tensor(std::vector<int64_t>{0, 3, 3, 1, 2, 0}, {3, 2});
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return take_along_dim(a[0], idx, 1); }, {x}));
  EXPECT_TRUE(
      GradCheck([&](const TensorList& a) { return take_along_dim(a[0], idx, -1); }, {x}));
  // Broadcasting: indices [1, 2] against x [3, 4] along dim 1; x [3, 1] against [3, 2] along 0.
  Tensor bidx = tensor(std::vector<int64_t>{3, 3}, {1, 2});
  EXPECT_TRUE(
      GradCheck([&](const TensorList& a) { return take_along_dim(a[0], bidx, 1); }, {x}));
  Tensor bidx0 = tensor(std::vector<int64_t>{0, 2, 2, 1}, {2, 2});
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return take_along_dim(a[0], bidx0, 0); },
                        {Rand({3, 1}, 11)}));
  // No dim: flattened.
  Tensor fidx = tensor(std::vector<int64_t>{11, 0, 5, 5, 7, 11}, {2, 3});
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return take_along_dim(a[0], fidx); }, {x}));
}

TEST(ShapeFormulas, CatAndStack) {
  Tensor a = Rand({2, 3}, 12), b = Rand({4, 3}, 13), c = Rand({1, 3}, 14);
  EXPECT_TRUE(GradCheck([](const TensorList& t) { return cat(t, 0); }, {a, b, c}));
  // Only some inputs tracked (the others are constants: needs_grad false).
  EXPECT_TRUE(GradCheck([](const TensorList& t) { return cat(t, 0); }, {a, b, c}, 1e-6, {1}));
  EXPECT_TRUE(GradCheck([](const TensorList& t) { return stack(t, 1); }, {a, a * 2.0}, 1e-6, {0}));
  Tensor d = Rand({2, 1}, 15), e = Rand({2, 5}, 16);
  EXPECT_TRUE(GradCheck([](const TensorList& t) { return cat(t, -1); }, {a, d, e}));
  // A skipped empty 1-D input gets a [0] gradient.
  Tensor empty = zeros({0}, kFloat64);
  EXPECT_TRUE(GradCheck([](const TensorList& t) { return cat(t, 1); }, {a, empty, e}));
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

  Tensor s1 = Rand({2, 3}, 18), s2 = Rand({2, 3}, 19), s3 = Rand({2, 3}, 20);
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(dim);
    EXPECT_TRUE(
        GradCheck([dim](const TensorList& t) { return stack(t, dim); }, {s1, s2, s3}));
  }
}

// split, split_with_sizes and chunk return TensorLists: the grad interpreter gives each piece
// its own gradient slot (a piece that gets no gradient contributes zeros).
TEST(ShapeFormulas, SplitChunk) {
  Tensor x = Rand({5, 4}, 21);
  // Use the pieces unequally so every piece's gradient matters; skip a piece sometimes.
  auto combine = [](const TensorList& pieces) {
    Tensor acc = sum(square(pieces[0]));
    for (size_t i = 1; i < pieces.size(); ++i) {
      if (i == 2) continue;  // a piece that gets no gradient
      acc = acc + sum(sin(pieces[i])) * static_cast<double>(i + 1);
    }
    return reshape(acc, {1});
  };
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return combine(split(a[0], 2, 0)); }, {x}));
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return combine(split(a[0], 3, -1)); }, {x}));
  EXPECT_TRUE(GradCheck(
      [&](const TensorList& a) { return combine(split_with_sizes(a[0], {1, 0, 3, 1}, 0)); },
      {x}));
  EXPECT_TRUE(GradCheck(
      [&](const TensorList& a) { return combine(split_with_sizes(a[0], {2, 2}, 1)); }, {x}));
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return combine(chunk(a[0], 3, 0)); }, {x}));
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return combine(chunk(a[0], 4, -1)); }, {x}));
  // Cat of the pieces back: identity.
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return cat(chunk(a[0], 2, 1), 1); }, {x}));
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

TEST(ShapeFormulas, Repeat) {
  Tensor x = Rand({2, 3}, 25);
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return repeat(a[0], {2, 3}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return repeat(a[0], {1, 1}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return repeat(a[0], {3, 2, 1}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return repeat(a[0], {2, 1, 2, 2}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return repeat(a[0], {0, 2}) + 0.0; }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return repeat(a[0], {3}); }, {Rand({}, 26)}));
  TensorList g = grad(ScalarFn([](const TensorList& a) { return sum(repeat(a[0], {0, 2})); }))(
      {x});
  EXPECT_TENSOR_NEAR(g[0], zeros({2, 3}, kFloat64), 0.0);
}

TEST(ShapeFormulas, Pad) {
  Tensor x = Rand({3, 4, 5}, 27);
  for (const Shape& pads : std::vector<Shape>{{1, 2},
                                              {0, 0},
                                              {2, 0, 1, 3},
                                              {1, 1, 0, 2, 3, 0},
                                              {-1, -2},
                                              {-2, 3, 1, -1},
                                              {2, -4, -1, -1, 0, 1},
                                              {-7, 3}}) {
    SCOPED_TRACE(::testing::PrintToString(std::vector<int64_t>(pads.begin(), pads.end())));
    EXPECT_TRUE(GradCheck([pads](const TensorList& a) { return pad(a[0], pads, 0.5); }, {x}));
  }
}

TEST(ShapeFormulas, Outer) {
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return outer(a[0], a[1]); },
                        {Rand({3}, 28), Rand({4}, 29)}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return square(outer(a[0], a[1])); },
                        {Rand({3}, 30), Rand({1}, 31)}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return outer(a[0], a[1]); },
                        {Rand({3}, 28), Rand({4}, 29)}, 1e-6, {1}));
}

TEST(ShapeFormulas, NonDifferentiableOneHotAndArgsort) {
  // argsort picks an order; gather by it is differentiable w.r.t. x: d/dx sum(sorted * w).
  Tensor x = tensor({0.3, -1.2, 2.5, 0.9});
  Tensor w = tensor({1.0, 2.0, 3.0, 4.0});
  auto f = ScalarFn([&](const TensorList& a) {
    Tensor order = argsort(a[0], -1, false);  // [1, 0, 3, 2]
    return sum(gather(a[0], 0, order) * w);
  });
  EXPECT_TENSOR_NEAR(grad(f)({x})[0], tensor({2.0, 1.0, 4.0, 3.0}), 0.0);
  // one_hot of argsort, used as a float mask: a constant.
  auto h = ScalarFn([&](const TensorList& a) {
    Tensor mask = to(one_hot(argsort(a[0], -1, true), 4), kFloat64);  // rows: one-hot order
    return sum(matmul(mask, a[0]) * w);  // sum_i w[i] * x[order[i]]
  });
  // descending order of x: [2, 3, 0, 1] -> x[2] gets w[0], x[3] w[1], x[0] w[2], x[1] w[3].
  EXPECT_TENSOR_NEAR(grad(h)({x})[0], tensor({3.0, 4.0, 1.0, 2.0}), 0.0);
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
  // grad of sum(gfn(x) * w) vs central differences of it.
  EXPECT_TRUE(GradCheck([&](const TensorList& a) { return gfn(a[0]); }, {x}, 1e-5));
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
      {"unflatten", [](const Tensor& t) { return sum(square(select(unflatten(t, 0, {1, 3}), 0, 0))); }},
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
      {"outer", [](const Tensor& t) { return sum(square(outer(select(t, 0, 0), select(t, 1, 1)))); }},
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

}  // namespace
}  // namespace ft

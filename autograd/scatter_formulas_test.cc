// vjp and jvp formulas of select_scatter, slice_scatter and diagonal_scatter (in
// shape_formulas.cc; split from shape_formulas_test.cc for size) against float64 central
// differences (gradcheck; jvpcheck, which also ties jvp to vjp by <J v, w> = <v, J^T w>;
// gradgradcheck for grad of grad and jvp of grad), with both inputs differentiated, only one
// of them, and the other one a captured constant (the formulas' undefined-tangent and
// needs-no-gradient paths); the formulas called directly; and vmap(grad) against a loop of
// grad with self, src or both batched.
#include <cstdint>
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
#include "tests/derivative_checks.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::GradCheck;
using testing::GradGradCheck;
using testing::JvpCheck;
using testing::Layouts;
using testing::Rand;

using ScatterFn = std::function<Tensor(const Tensor&, const Tensor&)>;

// One scatter call with its self and src shapes.
struct Case {
  std::string name;
  ScatterFn op;
  Shape self, src;
};

std::vector<Case> Cases() {
  const std::optional<int64_t> none;
  return {
      {"select dim 0", [](const Tensor& x, const Tensor& v) { return select_scatter(x, v, 0, 1); },
       {3, 4}, {4}},
      {"select dim -1",
       [](const Tensor& x, const Tensor& v) { return select_scatter(x, v, -1, -2); }, {2, 3, 4},
       {2, 3}},
      {"select rank 1", [](const Tensor& x, const Tensor& v) { return select_scatter(x, v, 0, 2); },
       {3}, {}},
      {"slice step 2",
       [=](const Tensor& x, const Tensor& v) { return slice_scatter(x, v, 1, 1, none, 2); },
       {3, 5}, {3, 2}},
      {"slice negative bounds",
       [](const Tensor& x, const Tensor& v) { return slice_scatter(x, v, -2, -3, -1); }, {4, 2},
       {2, 2}},
      {"slice clamped",
       [](const Tensor& x, const Tensor& v) { return slice_scatter(x, v, 0, 2, 99); }, {4, 3},
       {2, 3}},
      {"slice empty", [](const Tensor& x, const Tensor& v) { return slice_scatter(x, v, 0, 3, 1); },
       {4, 3}, {0, 3}},
      {"diagonal", [](const Tensor& x, const Tensor& v) { return diagonal_scatter(x, v); }, {3, 4},
       {3}},
      {"diagonal offset -1",
       [](const Tensor& x, const Tensor& v) { return diagonal_scatter(x, v, -1); }, {3, 4}, {2}},
      {"diagonal rank 3",
       [](const Tensor& x, const Tensor& v) { return diagonal_scatter(x, v, 1, 2, 0); }, {3, 2, 4},
       {2, 2}},
  };
}

TEST(ScatterFormulas, GradAndJvpAgainstCentralDifferences) {
  uint64_t seed = 1;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const Tensor self = Rand(c.self, seed++), src = Rand(c.src, seed++);
    const ScatterFn op = c.op;
    const testing::CheckedFn both = [op](const TensorList& a) { return op(a[0], a[1]); };
    for (const auto& [layout, s] : Layouts(self)) {
      SCOPED_TRACE(layout);
      EXPECT_TRUE(GradCheck(both, {s, src}));
      EXPECT_TRUE(JvpCheck(both, {s, src}));
      EXPECT_TRUE(GradCheck(both, {s, testing::NonContiguousCopy(src)}));
      // Only one of the two differentiated.
      EXPECT_TRUE(GradCheck(both, {s, src}, 1e-6, {0}));
      EXPECT_TRUE(GradCheck(both, {s, src}, 1e-6, {1}));
      EXPECT_TRUE(JvpCheck(both, {s, src}, 1e-6, {0}));
      EXPECT_TRUE(JvpCheck(both, {s, src}, 1e-6, {1}));
    }
    // The other one a constant of the transform: its tangent is undefined and it needs no
    // gradient.
    EXPECT_TRUE(GradCheck([&](const TensorList& a) { return op(a[0], src); }, {self}));
    EXPECT_TRUE(JvpCheck([&](const TensorList& a) { return op(a[0], src); }, {self}));
    EXPECT_TRUE(GradCheck([&](const TensorList& a) { return op(self, a[0]); }, {src}));
    EXPECT_TRUE(JvpCheck([&](const TensorList& a) { return op(self, a[0]); }, {src}));
  }
}

// grad of grad and jvp of grad (the formulas' own formulas: the scatter ops and the views),
// through smooth ops on both sides so the second derivatives are not all zero.
TEST(ScatterFormulas, SecondOrder) {
  uint64_t seed = 100;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const ScatterFn op = c.op;
    const testing::CheckedFn f = [op](const TensorList& a) {
      return sin(op(a[0] * a[0], exp(a[1])));
    };
    const Tensor self = Rand(c.self, seed++), src = Rand(c.src, seed++);
    EXPECT_TRUE(GradGradCheck(f, {self, src}));
    EXPECT_TRUE(GradGradCheck(f, {self, src}, 1e-5, {1}));
    // A grad whose backward reads the scatter's own gradient (forward over reverse).
    const ScalarFn loss = [op](const TensorList& a) { return sum(square(op(a[0], a[1]))); };
    const TensorListFn g = grad(loss, {0, 1});
    EXPECT_TRUE(JvpCheck([g](const TensorList& a) { return g(a)[1]; }, {self, src}, 1e-5));
    EXPECT_TRUE(GradCheck([g](const TensorList& a) { return g(a)[0]; }, {self, src}, 1e-5));
  }
}

// vmap(grad) with self, src or both batched, against a loop of grad.
TEST(ScatterFormulas, VmapOfGrad) {
  constexpr int64_t kBatch = 3;
  uint64_t seed = 200;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const ScatterFn op = c.op;
    const ScalarFn loss = [op](const TensorList& a) { return sum(sin(op(a[0], a[1] * a[1]))); };
    Shape bself = c.self, bsrc = c.src;
    bself.insert(bself.begin(), kBatch);
    bsrc.insert(bsrc.begin(), kBatch);
    const Tensor selfs = Rand(bself, seed++), srcs = Rand(bsrc, seed++);
    for (const auto& [which, self_batched, src_batched] :
         std::vector<std::tuple<const char*, bool, bool>>{
             {"both", true, true}, {"self", true, false}, {"src", false, true}}) {
      SCOPED_TRACE(which);
      const Tensor self = self_batched ? selfs : select(selfs, 0, 0);
      const Tensor src = src_batched ? srcs : select(srcs, 0, 0);
      const std::optional<int64_t> sd = self_batched ? std::optional<int64_t>(0) : std::nullopt;
      const std::optional<int64_t> vd = src_batched ? std::optional<int64_t>(0) : std::nullopt;
      const TensorList got = vmap(grad(loss, {0, 1}), Dims({sd, vd}))({self, src});
      ASSERT_EQ(got.size(), 2u);
      for (int64_t b = 0; b < kBatch; ++b) {
        const TensorList want = grad(loss, {0, 1})(
            {self_batched ? select(self, 0, b) : self, src_batched ? select(src, 0, b) : src});
        EXPECT_TENSOR_NEAR(select(got[0], 0, b), want[0], 1e-12);
        EXPECT_TENSOR_NEAR(select(got[1], 0, b), want[1], 1e-12);
      }
    }
  }
}

// The formulas called directly: the gradient split between self (g with the region zeroed)
// and src (g's region), each skipped when not needed; the tangent with either one undefined.
TEST(ScatterFormulas, FormulasDirectly) {
  autograd::RegisterDerivatives();
  const Operator& op = OpRegistry::Global().Get("select_scatter");
  const autograd::VjpFormula* vjp = autograd::GetVjp(op);
  const autograd::JvpFormula* jvp = autograd::GetJvp(op);
  ASSERT_NE(vjp, nullptr);
  ASSERT_NE(jvp, nullptr);
  const Tensor self = Rand({2, 3}, 300), src = Rand({3}, 301);
  const ValueList inputs = {Value(self), Value(src), Value(int64_t{0}), Value(int64_t{-1})};
  const ValueList outputs = {Value(select_scatter(self, src, 0, -1))};
  const Tensor g = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  TensorList r = (*vjp)(autograd::VjpContext{op, inputs, outputs}, {g});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TENSOR_EQ(r[0], tensor({1.0, 2.0, 3.0, 0.0, 0.0, 0.0}, {2, 3}));
  EXPECT_TENSOR_EQ(r[1], tensor({4.0, 5.0, 6.0}));
  r = (*vjp)(autograd::VjpContext{op, inputs, outputs, {true, false}}, {g});
  EXPECT_TENSOR_EQ(r[0], tensor({1.0, 2.0, 3.0, 0.0, 0.0, 0.0}, {2, 3}));
  EXPECT_FALSE(r[1].defined());
  r = (*vjp)(autograd::VjpContext{op, inputs, outputs, {false, true}}, {g});
  EXPECT_FALSE(r[0].defined());
  EXPECT_TENSOR_EQ(r[1], tensor({4.0, 5.0, 6.0}));

  const Tensor ts = tensor({10.0, 20.0, 30.0});
  const autograd::JvpContext jc{op, inputs, outputs};
  r = (*jvp)(jc, {g, ts});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TENSOR_EQ(r[0], tensor({1.0, 2.0, 3.0, 10.0, 20.0, 30.0}, {2, 3}));
  EXPECT_TENSOR_EQ((*jvp)(jc, {Tensor(), ts})[0],
                   tensor({0.0, 0.0, 0.0, 10.0, 20.0, 30.0}, {2, 3}));
  EXPECT_TENSOR_EQ((*jvp)(jc, {g, Tensor()})[0], tensor({1.0, 2.0, 3.0, 0.0, 0.0, 0.0}, {2, 3}));

  // slice_scatter's and diagonal_scatter's vjp on one example each.
  const Operator& sl = OpRegistry::Global().Get("slice_scatter");
  const ValueList slice_in = {Value(Rand({5}, 302)), Value(Rand({2}, 303)), Value(int64_t{0}),
                              Value(int64_t{1}), Value(), Value(int64_t{2})};
  const Tensor g5 = tensor({1.0, 2.0, 3.0, 4.0, 5.0});
  r = (*autograd::GetVjp(sl))(autograd::VjpContext{sl, slice_in, {}}, {g5});
  EXPECT_TENSOR_EQ(r[0], tensor({1.0, 0.0, 3.0, 0.0, 5.0}));
  EXPECT_TENSOR_EQ(r[1], tensor({2.0, 4.0}));
  const Operator& dg = OpRegistry::Global().Get("diagonal_scatter");
  const ValueList din = {Value(Rand({2, 2}, 304)), Value(Rand({1}, 305)), Value(int64_t{1}),
                         Value(int64_t{0}), Value(int64_t{1})};
  r = (*autograd::GetVjp(dg))(autograd::VjpContext{dg, din, {}},
                              {tensor({1.0, 2.0, 3.0, 4.0}, {2, 2})});
  EXPECT_TENSOR_EQ(r[0], tensor({1.0, 0.0, 3.0, 4.0}, {2, 2}));
  EXPECT_TENSOR_EQ(r[1], tensor({2.0}));
}

TEST(ScatterFormulas, ReadNoInputValues) {
  autograd::RegisterDerivatives();
  for (const auto& [name, backward] : std::vector<std::pair<const char*, const char*>>{
           {"select_scatter", "SelectScatterBackward"},
           {"slice_scatter", "SliceScatterBackward"},
           {"diagonal_scatter", "DiagonalScatterBackward"}}) {
    SCOPED_TRACE(name);
    const Operator& op = OpRegistry::Global().Get(name);
    EXPECT_FALSE(autograd::ReadsInputValues(op));
    EXPECT_FALSE(autograd::ReadsOutputValues(op));
    EXPECT_FALSE(autograd::IsNonDifferentiable(op));
    EXPECT_EQ(autograd::BackwardName(op), backward);
  }
}

// Writing self in place after the op does not break its backward (the formula reads no
// input), the pattern functionalize relies on when it replays writes.
TEST(ScatterFormulas, SelfWrittenAfterTheOp) {
  const ScalarFn loss = [](const TensorList& a) {
    Tensor base = a[0] * 1.0;
    Tensor out = select_scatter(base, a[1] * 2.0, 0, 0);
    mul_(base, 3.0);
    return sum(out * out) + sum(base);
  };
  const Tensor self = Rand({2, 2}, 400), src = Rand({2}, 401);
  const TensorList g = grad(loss, {0, 1})({self, src});
  // d/dself: 3 everywhere (from sum(base)) plus 2 self off row 0, which src replaced;
  // d/dsrc: 2 * 2 * (2 src).
  EXPECT_TENSOR_NEAR(g[0], cat({full({1, 2}, 3.0, kFloat64), narrow(self, 0, 1, 1) * 2.0 + 3.0}, 0),
                     1e-12);
  EXPECT_TENSOR_NEAR(g[1], src * 8.0, 1e-12);
}

}  // namespace
}  // namespace ft

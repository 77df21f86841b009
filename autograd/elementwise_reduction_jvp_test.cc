// jvp formulas of elementwise_formulas.cc and reduction_linalg_formulas.cc against
// independent oracles: float64 central differences and the vjp transposition identity
// (jvpcheck), second derivatives (gradgradcheck), closed forms, jacfwd == jacrev, and a loop
// of jvp for vmap(jvp). The cases mirror the vjp tests of interpreters/grad/grad_test.cc,
// plus constant operands (an undefined tangent at the formula), ties and kinks.
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "interpreters/grad/grad.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tensor/shape.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::Rand;
using testing::JvpCheck;
using testing::GradGradCheck;

using Fn = std::function<Tensor(const TensorList&)>;

// Tangent: the output tangent of the one-output f at primals along tangents.
Tensor Tangent(const Fn& f, const TensorList& primals, const TensorList& tangents) {
  auto as_list = [&f](const TensorList& a) { return TensorList{f(a)}; };
  return jvp(as_list, primals, tangents).tangents[0];
}

// ----------------------------------------------------------------------------------------
// Elementwise ops.

using UnaryFn = Tensor (*)(const Tensor&);
const std::vector<std::pair<const char*, UnaryFn>>& SmoothUnaryOps() {
  static const auto* ops = new std::vector<std::pair<const char*, UnaryFn>>{
      {"neg", &neg},   {"abs", &abs},     {"exp", &exp},         {"expm1", &expm1},
      {"log", &log},   {"log1p", &log1p}, {"sin", &sin},         {"cos", &cos},
      {"tan", &tan},   {"tanh", &tanh},   {"sigmoid", &sigmoid}, {"relu", &relu},
      {"sqrt", &sqrt}, {"rsqrt", &rsqrt}, {"square", &square},   {"reciprocal", &reciprocal}};
  return *ops;
}

TEST(ElementwiseJvp, UnaryOps) {
  Tensor x = Rand({2, 3}, 3, 0.2, 1.2);
  for (const auto& [name, op] : SmoothUnaryOps()) {
    SCOPED_TRACE(name);
    Fn f = [op = op](const TensorList& a) { return op(a[0]); };
    EXPECT_TRUE(JvpCheck(f, {x}));
    EXPECT_TRUE(JvpCheck(f, {testing::NonContiguousCopy(x)}));
    EXPECT_TRUE(JvpCheck(f, {scalar_tensor(0.7, kFloat64)}));
    EXPECT_TRUE(GradGradCheck(f, {x}));
  }
  // abs and relu on negative inputs too (away from the kink at 0).
  Tensor neg_x = Rand({2, 3}, 4, -1.2, -0.2);
  EXPECT_TRUE(JvpCheck([](const TensorList& a) { return abs(a[0]); }, {neg_x}));
  EXPECT_TRUE(JvpCheck([](const TensorList& a) { return relu(a[0]); }, {neg_x}));
}

TEST(ElementwiseJvp, PiecewiseConstantOpsHaveZeroTangent) {
  Tensor x = tensor({0.2, 0.3, -0.7, 1.3, 2.6, -2.2}, {2, 3});  // away from the jumps
  for (UnaryFn op : {UnaryFn(&sign), UnaryFn(&floor), UnaryFn(&round)}) {
    Fn f = [op](const TensorList& a) { return op(a[0]); };
    EXPECT_TRUE(JvpCheck(f, {x}));
    EXPECT_TENSOR_EQ(Tangent(f, {x}, {ones_like(x)}), zeros({2, 3}, kFloat64));
  }
}

TEST(ElementwiseJvp, UnaryClosedForms) {
  // tanh' = 1 - tanh^2, exp' = exp, log' = 1/x, from std:: math.
  const std::vector<double> xs = {0.5, -1.0, 2.0}, ts = {1.0, 2.0, -3.0};
  Tensor x = tensor(xs), t = tensor(ts);
  std::vector<double> dtanh, dexp, dlog;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double th = std::tanh(xs[i]);
    dtanh.push_back((1 - th * th) * ts[i]);
    dexp.push_back(std::exp(xs[i]) * ts[i]);
    dlog.push_back(ts[i] / std::abs(xs[i]));
  }
  EXPECT_TENSOR_NEAR(Tangent([](const TensorList& a) { return tanh(a[0]); }, {x}, {t}),
                     tensor(dtanh), 1e-15);
  EXPECT_TENSOR_NEAR(Tangent([](const TensorList& a) { return exp(a[0]); }, {x}, {t}),
                     tensor(dexp), 1e-14);
  EXPECT_TENSOR_NEAR(Tangent([](const TensorList& a) { return log(a[0]); }, {abs(x)}, {t}),
                     tensor(dlog), 1e-15);
}

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
const std::vector<std::pair<const char*, BinaryFn>>& BinaryOps() {
  static const auto* ops = new std::vector<std::pair<const char*, BinaryFn>>{
      {"add", &add}, {"sub", &sub}, {"mul", &mul}, {"div", &div}, {"pow", &pow},
      {"maximum", &maximum}, {"minimum", &minimum}, {"atan2", &atan2}};
  return *ops;
}

TEST(ElementwiseJvp, BinaryOpsWithBroadcasting) {
  Tensor a = Rand({2, 3}, 4, 0.2, 1.2), b = Rand({3}, 5, 0.2, 1.2);
  Tensor col = Rand({2, 1}, 6, 0.2, 1.2), row = Rand({1, 3}, 7, 0.2, 1.2);
  for (const auto& [name, op] : BinaryOps()) {
    SCOPED_TRACE(name);
    Fn f = [op = op](const TensorList& t) { return op(t[0], t[1]); };
    EXPECT_TRUE(JvpCheck(f, {a, b}));
    EXPECT_TRUE(JvpCheck(f, {b, a}));
    EXPECT_TRUE(JvpCheck(f, {col, row}));  // both broadcast
    EXPECT_TRUE(JvpCheck(f, {testing::NonContiguousCopy(a), b}));
    EXPECT_TRUE(JvpCheck(f, {scalar_tensor(0.6, kFloat64), b}));
    // One operand constant: its tangent is undefined at the formula.
    EXPECT_TRUE(JvpCheck([op = op, b](const TensorList& t) { return op(t[0], b); }, {a}));
    EXPECT_TRUE(JvpCheck([op = op, a](const TensorList& t) { return op(a, t[0]); }, {b}));
    EXPECT_TRUE(GradGradCheck(f, {a, b}));
  }
}

TEST(ElementwiseJvp, PowConventions) {
  // A constant exponent: no log(a) is taken, so a negative base has a finite tangent 2 x t.
  Tensor x = tensor({-1.5, -0.5, 2.0}), t = tensor({1.0, 2.0, 3.0});
  Tensor two = full({3}, 2.0, kFloat64);
  Fn sq = [two](const TensorList& a) { return pow(a[0], two); };
  EXPECT_TENSOR_NEAR(Tangent(sq, {x}, {t}), tensor({-3.0, -2.0, 12.0}), 1e-15);
  EXPECT_TENSOR_NEAR(Tangent([](const TensorList& a) { return pow(a[0], 2.0); }, {x}, {t}),
                     tensor({-3.0, -2.0, 12.0}), 1e-15);
  // d/db a^b = a^b log a, and 0 where a == 0 and b >= 0 (PyTorch's convention).
  Tensor base = tensor({0.0, 2.0, 0.5, 0.0});
  Fn of_exponent = [base](const TensorList& a) { return pow(base, a[0]); };
  EXPECT_TENSOR_NEAR(Tangent(of_exponent, {tensor({2.0, 3.0, 0.0, 0.0})}, {ones({4}, kFloat64)}),
                     tensor({0.0, 8.0 * std::log(2.0), std::log(0.5), 0.0}), 1e-15);
}

TEST(ElementwiseJvp, MaximumAndMinimumSplitTiesEvenly) {
  Tensor a = tensor({1.0, 2.0, 3.0}), b = tensor({1.0, 0.0, 5.0});
  Tensor ta = tensor({1.0, 10.0, 100.0}), tb = tensor({3.0, 30.0, 300.0});
  Fn mx = [](const TensorList& t) { return maximum(t[0], t[1]); };
  Fn mn = [](const TensorList& t) { return minimum(t[0], t[1]); };
  EXPECT_TENSOR_EQ(Tangent(mx, {a, b}, {ta, tb}), tensor({2.0, 10.0, 300.0}));
  EXPECT_TENSOR_EQ(Tangent(mn, {a, b}, {ta, tb}), tensor({2.0, 30.0, 100.0}));
  // A constant operand at a tie: half the other's tangent, as the vjp.
  EXPECT_TENSOR_EQ(Tangent([b](const TensorList& t) { return maximum(t[0], b); }, {a}, {ta}),
                   tensor({0.5, 10.0, 0.0}));
}

TEST(ElementwiseJvp, WhereClampTo) {
  Fn w = [](const TensorList& t) { return where(gt(t[0], 0.5), t[0] * 2.0, t[1]); };
  const TensorList wargs = {Rand({4}, 6, 0.0, 1.0), Rand({4}, 7)};
  EXPECT_TRUE(JvpCheck(w, wargs));
  EXPECT_TRUE(GradGradCheck(w, wargs));
  // Broadcast branches, a constant branch, a scalar branch.
  Tensor cond = tensor(std::vector<bool>{true, false, true}, {3});
  Tensor a = Rand({2, 3}, 8), b = Rand({3}, 9);
  EXPECT_TRUE(JvpCheck([cond](const TensorList& t) { return where(cond, t[0], t[1]); }, {a, b}));
  EXPECT_TRUE(JvpCheck([cond, b](const TensorList& t) { return where(cond, b, t[0]); }, {a}));
  EXPECT_TRUE(JvpCheck([cond, a](const TensorList& t) { return where(cond, t[0], a); }, {b}));
  EXPECT_TRUE(JvpCheck([cond](const TensorList& t) { return where(cond, t[0], 0.5); }, {a}));
  EXPECT_TENSOR_EQ(
      Tangent([cond](const TensorList& t) { return where(cond, t[0], t[1]); }, {b, b},
              {ones({3}, kFloat64), full({3}, 2.0, kFloat64)}),
      tensor({1.0, 2.0, 1.0}));

  Tensor x = Rand({5}, 8);
  for (auto [lo, hi] : std::vector<std::pair<std::optional<Scalar>, std::optional<Scalar>>>{
           {-0.3, 0.4}, {-0.3, std::nullopt}, {std::nullopt, 0.4}}) {
    Fn f = [lo = lo, hi = hi](const TensorList& t) { return clamp(t[0], lo, hi); };
    EXPECT_TRUE(JvpCheck(f, {x}));
    EXPECT_TRUE(JvpCheck(f, {testing::NonContiguousCopy(Rand({2, 3}, 10))}));
    EXPECT_TRUE(GradGradCheck(f, {x}));
  }
  // The bounds themselves pass the tangent (as the vjp).
  EXPECT_TENSOR_EQ(Tangent([](const TensorList& t) { return clamp(t[0], -0.5, 0.5); },
                           {tensor({-0.5, 0.0, 0.5, 0.9, -1.0})}, {ones({5}, kFloat64)}),
                   tensor({1.0, 1.0, 1.0, 0.0, 0.0}));

  // to: float64 -> float64, float32 -> float64 (the tangent converts), float -> int64 (none).
  Fn to64 = [](const TensorList& t) { return to(t[0], kFloat64); };
  EXPECT_TRUE(JvpCheck(to64, {x}));
  EXPECT_TRUE(GradGradCheck([](const TensorList& t) { return square(to(t[0], kFloat64)); }, {x}));
  Tensor x32 = tensor({0.5f, -1.0f}), t32 = tensor({2.0f, 3.0f});
  Tensor t64 = Tangent(to64, {x32}, {t32});
  EXPECT_EQ(t64.dtype(), kFloat64);
  EXPECT_TENSOR_EQ(t64, tensor({2.0, 3.0}));
  Tensor t32back = Tangent([](const TensorList& t) { return to(t[0], kFloat32); }, {x}, {x});
  EXPECT_EQ(t32back.dtype(), kFloat32);
  EXPECT_TENSOR_NEAR(t32back, to(x, kFloat32), 0.0);
  // x * float(int(3 x)): the integer path carries no tangent, so the tangent is t * int(3 x).
  Fn stepped = [](const TensorList& t) { return t[0] * to(to(t[0] * 3.0, kInt64), kFloat64); };
  Tensor xs = tensor({0.5, 1.2, -0.9});
  EXPECT_TENSOR_EQ(Tangent(stepped, {xs}, {ones({3}, kFloat64)}), tensor({1.0, 3.0, -2.0}));
}

// ----------------------------------------------------------------------------------------
// Reductions and softmax-like ops.

struct DimsCase {
  Shape dims;
  bool keepdim;
};
const std::vector<DimsCase>& Cases() {
  static const auto* cases = new std::vector<DimsCase>{
      {{}, false}, {{}, true},     {{0}, false},  {{1}, true},
      {{-1}, false}, {{-1}, true}, {{0, 2}, false}, {{-3, -2}, true}};
  return *cases;
}

std::string Describe(const DimsCase& c) {
  std::string s = "dims [";
  for (int64_t d : c.dims) s += std::to_string(d) + " ";
  return s + "] keepdim " + (c.keepdim ? "true" : "false");
}

using ReductionFn = Tensor (*)(const Tensor&, IntArrayRef, bool);
TEST(ReductionJvp, SumMeanLogsumexpOverEveryDimsCase) {
  Tensor x = Rand({2, 3, 4}, 9);
  Tensor strided = testing::NonContiguousCopy(x);
  for (auto [name, op] : std::vector<std::pair<const char*, ReductionFn>>{
           {"sum", &sum}, {"mean", &mean}, {"logsumexp", &logsumexp}}) {
    SCOPED_TRACE(name);
    for (const DimsCase& c : Cases()) {
      SCOPED_TRACE(Describe(c));
      Fn f = [op = op, c](const TensorList& a) { return op(a[0], c.dims, c.keepdim); };
      EXPECT_TRUE(JvpCheck(f, {x}));
      EXPECT_TRUE(JvpCheck(f, {strided}));
      EXPECT_TRUE(GradGradCheck(f, {x}));
    }
    Fn all = [op = op](const TensorList& a) { return op(a[0], {}, false); };
    EXPECT_TRUE(JvpCheck(all, {scalar_tensor(0.3, kFloat64)}));
    EXPECT_TRUE(JvpCheck(all, {permute(x, {2, 0, 1})}));
  }
}

TEST(ReductionJvp, SoftmaxAndLogSoftmax) {
  Tensor x = Rand({2, 3, 4}, 10);
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(dim);
    Fn sm = [dim](const TensorList& a) { return softmax(a[0], dim); };
    Fn lsm = [dim](const TensorList& a) { return log_softmax(a[0], dim); };
    for (const Fn& f : {sm, lsm}) {
      EXPECT_TRUE(JvpCheck(f, {x}));
      EXPECT_TRUE(JvpCheck(f, {testing::NonContiguousCopy(x)}));
      EXPECT_TRUE(GradGradCheck(f, {x}));
    }
  }
  EXPECT_TRUE(JvpCheck([](const TensorList& a) { return softmax(a[0], 0); }, {Rand({5}, 11)}));
}

TEST(ReductionJvp, ShiftInvarianceClosedForms) {
  // Moving every logit of a row by the same amount: softmax and log_softmax do not change,
  // logsumexp moves by that amount.
  Tensor x = Rand({3, 4}, 12);
  Tensor shift = expand(Rand({3, 1}, 13), {3, 4});
  EXPECT_TENSOR_NEAR(Tangent([](const TensorList& a) { return softmax(a[0], 1); }, {x}, {shift}),
                     zeros({3, 4}, kFloat64), 1e-15);
  EXPECT_TENSOR_NEAR(
      Tangent([](const TensorList& a) { return log_softmax(a[0], -1); }, {x}, {shift}),
      zeros({3, 4}, kFloat64), 1e-15);
  EXPECT_TENSOR_NEAR(
      Tangent([](const TensorList& a) { return logsumexp(a[0], {1}); }, {x}, {shift}),
      select(shift, 1, 0), 1e-15);
  // mean of a constant tangent is that constant; sum over n elements multiplies it by n.
  EXPECT_TENSOR_NEAR(Tangent([](const TensorList& a) { return mean(a[0], {1}); }, {x},
                             {full({3, 4}, 2.0, kFloat64)}),
                     full({3}, 2.0, kFloat64), 1e-15);
  EXPECT_TENSOR_NEAR(Tangent([](const TensorList& a) { return sum(a[0], {0}, true); }, {x},
                             {full({3, 4}, 2.0, kFloat64)}),
                     full({1, 4}, 6.0, kFloat64), 1e-15);
}

TEST(ReductionJvp, SizeZeroDims) {
  Tensor empty_rows = zeros({0, 3}, kFloat64);
  EXPECT_TENSOR_EQ(Tangent([](const TensorList& a) { return sum(a[0], {0}); }, {empty_rows},
                           {empty_rows}),
                   zeros({3}, kFloat64));
  EXPECT_EQ(Tangent([](const TensorList& a) { return softmax(a[0], 1); }, {empty_rows},
                    {empty_rows}).sizes(),
            (IntArrayRef{0, 3}));
  EXPECT_TENSOR_EQ(Tangent([](const TensorList& a) { return matmul(a[0], a[1]); },
                           {zeros({2, 0}, kFloat64), zeros({0, 3}, kFloat64)},
                           {zeros({2, 0}, kFloat64), zeros({0, 3}, kFloat64)}),
                   zeros({2, 3}, kFloat64));
}

// ----------------------------------------------------------------------------------------
// Matrix products.

TEST(LinalgJvp, MatmulFamily) {
  Fn mat = [](const TensorList& a) { return matmul(a[0], a[1]); };
  for (auto [sa, sb] : std::vector<std::pair<Shape, Shape>>{
           {{3}, {3}}, {{2, 3}, {3}}, {{3}, {3, 4}}, {{2, 3}, {3, 4}}, {{5, 2, 3}, {3, 4}},
           {{2, 3}, {5, 3, 4}}, {{4, 1, 2, 3}, {5, 3, 2}}}) {
    SCOPED_TRACE(ShapeToString(sa) + " @ " + ShapeToString(sb));
    Tensor a = Rand(sa, 10), b = Rand(sb, 11);
    EXPECT_TRUE(JvpCheck(mat, {a, b}));
    EXPECT_TRUE(JvpCheck(mat, {testing::NonContiguousCopy(a), testing::NonContiguousCopy(b)}));
    EXPECT_TRUE(JvpCheck([b](const TensorList& t) { return matmul(t[0], b); }, {a}));
    EXPECT_TRUE(JvpCheck([a](const TensorList& t) { return matmul(a, t[0]); }, {b}));
    EXPECT_TRUE(GradGradCheck(mat, {a, b}));
  }
  const TensorList mm_args = {Rand({2, 3}, 12), Rand({3, 4}, 13)};
  const TensorList bmm_args = {Rand({2, 3, 4}, 14), Rand({2, 4, 5}, 15)};
  const TensorList dot_args = {Rand({4}, 16), Rand({4}, 17)};
  for (auto [name, op, args] : std::vector<std::tuple<const char*, BinaryFn, TensorList>>{
           {"mm", &mm, mm_args}, {"bmm", &bmm, bmm_args}, {"dot", &dot, dot_args}}) {
    SCOPED_TRACE(name);
    Fn f = [op = op](const TensorList& t) { return op(t[0], t[1]); };
    EXPECT_TRUE(JvpCheck(f, args));
    EXPECT_TRUE(JvpCheck(f, {testing::NonContiguousCopy(args[0]), args[1]}));
    const Tensor a = args[0], b = args[1];
    EXPECT_TRUE(JvpCheck([op = op, b](const TensorList& t) { return op(t[0], b); }, {a}));
    EXPECT_TRUE(JvpCheck([op = op, a](const TensorList& t) { return op(a, t[0]); }, {b}));
    EXPECT_TRUE(GradGradCheck(f, args));
  }
  EXPECT_TRUE(
      JvpCheck(mat, {transpose(Rand({4, 3}, 18), 0, 1), transpose(Rand({2, 4}, 19), 0, 1)}));
}

TEST(LinalgJvp, MatmulClosedForm) {
  // d(A B) = dA B + A dB: with dA = I only, B; with dB = I only, A.
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}), b = tensor({5.0, 6.0, 7.0, 8.0}, {2, 2});
  Tensor id = eye(2, kFloat64), zero = zeros({2, 2}, kFloat64);
  Fn f = [](const TensorList& t) { return matmul(t[0], t[1]); };
  EXPECT_TENSOR_EQ(Tangent(f, {a, b}, {id, zero}), b);
  EXPECT_TENSOR_EQ(Tangent(f, {a, b}, {zero, id}), a);
  EXPECT_TENSOR_EQ(Tangent(f, {a, b}, {id, id}), a + b);
  // dot: d<a, b> = <da, b> + <a, db>.
  Fn d = [](const TensorList& t) { return dot(t[0], t[1]); };
  EXPECT_TENSOR_EQ(Tangent(d, {tensor({1.0, 2.0}), tensor({3.0, 4.0})},
                           {tensor({1.0, 0.0}), tensor({0.0, 1.0})}),
                   scalar_tensor(3.0 + 2.0, kFloat64));
}

TEST(LinalgJvp, Linear) {
  Fn with_bias = [](const TensorList& a) { return linear(a[0], a[1], a[2]); };
  Fn no_bias = [](const TensorList& a) { return linear(a[0], a[1]); };
  Tensor x = Rand({4, 3}, 12), w = Rand({2, 3}, 13), b = Rand({2}, 14);
  EXPECT_TRUE(JvpCheck(with_bias, {x, w, b}));
  EXPECT_TRUE(JvpCheck(no_bias, {x, w}));
  EXPECT_TRUE(JvpCheck(with_bias, {Rand({5, 4, 3}, 15), w, b}));
  EXPECT_TRUE(JvpCheck(with_bias, {Rand({3}, 16), w, b}));
  EXPECT_TRUE(JvpCheck(with_bias, {testing::NonContiguousCopy(x), transpose(Rand({3, 2}, 17), 0, 1),
                                   Rand({4, 2}, 18)}));
  // Constant weight and bias (the usual layer under jvp w.r.t. its input), and constant input.
  EXPECT_TRUE(JvpCheck([w, b](const TensorList& a) { return linear(a[0], w, b); }, {x}));
  EXPECT_TRUE(JvpCheck([x](const TensorList& a) { return linear(x, a[0], a[1]); }, {w, b}));
  EXPECT_TRUE(JvpCheck([x, w](const TensorList& a) { return linear(x, w, a[0]); }, {b}));
  EXPECT_TRUE(GradGradCheck(with_bias, {x, w, b}));
  EXPECT_TRUE(GradGradCheck(no_bias, {x, w}));
}

// Found by the property test: with zero input features, linear's vjp reshaped x to [-1, 0],
// which is ambiguous, and threw. The gradients are then empty, and the bias's is the row
// count (closed form: d sum(x w^T + b) / db = number of rows).
TEST(LinalgJvp, LinearWithZeroFeatures) {
  const Tensor x = zeros({2, 0}, kFloat64), w = zeros({3, 0}, kFloat64), b = Rand({3}, 19);
  const TensorList g = grad([](const TensorList& a) { return sum(linear(a[0], a[1], a[2])); },
                            {0, 1, 2})({x, w, b});
  EXPECT_EQ(g[0].sizes(), x.sizes());
  EXPECT_EQ(g[1].sizes(), w.sizes());
  EXPECT_TENSOR_EQ(g[2], full({3}, 2.0, kFloat64));
  const TensorList g3 = grad([&](const TensorList& a) { return sum(linear(a[0], w, b)); })(
      {zeros({4, 2, 0}, kFloat64)});
  EXPECT_EQ(g3[0].sizes(), (Shape{4, 2, 0}));
}

// ----------------------------------------------------------------------------------------
// Views and copies.

TEST(ViewJvp, EveryViewOp) {
  Tensor x = Rand({2, 3, 4}, 9);
  Tensor strided = testing::NonContiguousCopy(x);
  const std::vector<std::pair<const char*, Fn>> views = {
      {"reshape", [](const TensorList& a) { return reshape(a[0], {4, -1}); }},
      {"flatten", [](const TensorList& a) { return flatten(a[0]); }},
      {"flatten 1..2", [](const TensorList& a) { return flatten(a[0], 1, 2); }},
      {"flatten 0..-2", [](const TensorList& a) { return flatten(a[0], 0, -2); }},
      {"contiguous", [](const TensorList& a) { return contiguous(transpose(a[0], 0, 2)); }},
      {"clone", [](const TensorList& a) { return clone(a[0]); }},
      {"transpose", [](const TensorList& a) { return transpose(a[0], 0, -1); }},
      {"t", [](const TensorList& a) { return t(select(a[0], 0, 1)); }},
      {"unsqueeze 0", [](const TensorList& a) { return unsqueeze(a[0], 0); }},
      {"unsqueeze -1", [](const TensorList& a) { return unsqueeze(a[0], -1); }},
      {"squeeze", [](const TensorList& a) { return squeeze(unsqueeze(a[0], 1)); }},
      {"squeeze_dim", [](const TensorList& a) { return squeeze_dim(unsqueeze(a[0], 2), 2); }},
      {"squeeze_dims",
       [](const TensorList& a) {
         return squeeze_dims(unsqueeze(unsqueeze(a[0], 0), -1), {0, -1});
       }},
      {"permute", [](const TensorList& a) { return permute(a[0], {2, 0, 1}); }},
      {"permute negative", [](const TensorList& a) { return permute(a[0], {-1, -3, -2}); }},
      {"expand", [](const TensorList& a) { return expand(unsqueeze(a[0], 0), {5, -1, -1, -1}); }},
      {"chain", [](const TensorList& a) {
         return permute(reshape(transpose(unsqueeze(a[0], 0), 1, 2), {3, 2, 4}), {2, 0, 1});
       }}};
  for (const auto& [name, f] : views) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(JvpCheck(f, {x}));
    EXPECT_TRUE(JvpCheck(f, {strided}));
    EXPECT_TRUE(GradGradCheck([f = f](const TensorList& a) { return square(f(a)); }, {x}));
  }
  // view needs a contiguous primal; its tangent may still be strided (reshape copies it).
  Fn v = [](const TensorList& a) { return view(a[0], {6, 4}); };
  EXPECT_TRUE(JvpCheck(v, {x}));
  EXPECT_TENSOR_EQ(Tangent(v, {x}, {strided}), reshape(x, {6, 4}));
  // t of a 1-D tensor; expand with broadcasting in the middle; rank-0 unsqueeze.
  EXPECT_TRUE(JvpCheck([](const TensorList& a) { return t(a[0]); }, {Rand({3}, 20)}));
  EXPECT_TRUE(JvpCheck([](const TensorList& a) { return expand(a[0], {3, 2, 4}); },
                       {Rand({2, 1}, 15)}));
  EXPECT_TRUE(JvpCheck([](const TensorList& a) { return unsqueeze(a[0], 0); },
                       {scalar_tensor(0.5, kFloat64)}));
  // A linear op's tangent is the op applied to the tangent.
  Tensor tx = Rand({2, 3, 4}, 21);
  EXPECT_TENSOR_EQ(Tangent(views[13].second, {x}, {tx}), permute(tx, {2, 0, 1}));
}

// ----------------------------------------------------------------------------------------
// Transforms built on the formulas.

TEST(JvpTransforms, JacfwdEqualsJacrev) {
  Tensor a = Rand({2, 3}, 30), b = Rand({3, 4}, 31);
  TensorFnOfList mat = [](const TensorList& t) { return matmul(t[0], t[1]); };
  TensorList fwd = jacfwd(mat, {0, 1})({a, b});
  TensorList rev = jacrev(mat, {0, 1})({a, b});
  ASSERT_EQ(fwd.size(), 2u);
  EXPECT_TENSOR_NEAR(fwd[0], rev[0], 1e-14);
  EXPECT_TENSOR_NEAR(fwd[1], rev[1], 1e-14);
  for (TensorFnOfList f : {TensorFnOfList([](const TensorList& t) { return log_softmax(t[0], 1); }),
                           TensorFnOfList([](const TensorList& t) { return logsumexp(t[0], {0}); }),
                           TensorFnOfList([](const TensorList& t) { return pow(t[0], t[1]); })}) {
    TensorList args = {Rand({2, 3}, 32, 0.2, 1.2), Rand({3}, 33, 0.2, 1.2)};
    TensorList jf = jacfwd(f, {0})(args), jr = jacrev(f, {0})(args);
    EXPECT_TENSOR_NEAR(jf[0], jr[0], 1e-14);
  }
  // Forward over forward: jacfwd(jacfwd(f)) is hessian(f) (forward over reverse).
  TensorFnOfList s = [](const TensorList& t) { return logsumexp(sigmoid(t[0]) * t[0], {0}); };
  TensorFnOfList ds = [s](const TensorList& t) { return jacfwd(s)(t)[0]; };
  Tensor x = Rand({4}, 34);
  EXPECT_TENSOR_NEAR(jacfwd(ds)({x})[0], hessian(s)({x})[0], 1e-13);
}

// LoopJvp stacks jvp(f)(primals[i], tangents[i]) over dim 0 of every argument (the
// vmap(jvp) oracle): one output and one tangent per example.
std::pair<Tensor, Tensor> LoopJvp(const Fn& f, const TensorList& primals,
                                  const TensorList& tangents) {
  TensorList outs, tans;
  for (int64_t i = 0; i < primals[0].size(0); ++i) {
    TensorList p, t;
    for (const Tensor& x : primals) p.push_back(select(x, 0, i));
    for (const Tensor& x : tangents) t.push_back(select(x, 0, i));
    const JvpResult r = jvp([&f](const TensorList& a) { return TensorList{f(a)}; }, p, t);
    outs.push_back(r.outputs[0]);
    tans.push_back(r.tangents[0]);
  }
  return {stack(outs, 0), stack(tans, 0)};
}

TEST(JvpTransforms, VmapOfJvpMatchesLoop) {
  Fn f = [](const TensorList& a) { return log_softmax(matmul(a[0], a[1]), -1) * a[0]; };
  TensorListFn jvp_fn = [&f](const TensorList& a) {
    const JvpResult r = jvp([&f](const TensorList& x) { return TensorList{f(x)}; },
                            {a[0], a[1]}, {a[2], a[3]});
    return TensorList{r.outputs[0], r.tangents[0]};
  };
  for (int64_t batch : {1, 4}) {
    SCOPED_TRACE(batch);
    Tensor x = Rand({batch, 3, 3}, 40), w = Rand({batch, 3, 3}, 41);
    Tensor tx = Rand({batch, 3, 3}, 42), tw = Rand({batch, 3, 3}, 43);
    TensorList got = vmap(jvp_fn)({x, w, tx, tw});
    auto [want_out, want_tan] = LoopJvp(f, {x, w}, {tx, tw});
    EXPECT_TENSOR_NEAR(got[0], want_out, 1e-14);
    EXPECT_TENSOR_NEAR(got[1], want_tan, 1e-14);
    // Batched tangents only (one primal, many directions: the columns of a Jacobian), and
    // the batch dim last.
    Tensor x0 = select(x, 0, 0), w0 = select(w, 0, 0);
    TensorList tangents_only = vmap(jvp_fn, {std::nullopt, std::nullopt, 0, 0})({x0, w0, tx, tw});
    const Tensor want_dirs = LoopJvp(f, {expand(unsqueeze(x0, 0), {batch, 3, 3}),
                                         expand(unsqueeze(w0, 0), {batch, 3, 3})},
                                     {tx, tw})
                                 .second;
    EXPECT_TENSOR_NEAR(tangents_only[1], want_dirs, 1e-14);
    TensorList last = vmap(jvp_fn, -1)({movedim(x, 0, -1), movedim(w, 0, -1), movedim(tx, 0, -1),
                                        movedim(tw, 0, -1)});
    EXPECT_TENSOR_NEAR(last[1], want_tan, 1e-14);
  }
}

}  // namespace
}  // namespace ft

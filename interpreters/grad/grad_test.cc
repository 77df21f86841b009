// ft::grad / ft::vjp against independent oracles: float64 central differences, closed forms,
// and loops of grad for vmap(grad).
#include "interpreters/grad/grad.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "autograd/graph.h"
#include "dispatch/dispatch.h"
#include "gtest/gtest.h"
#include "interpreters/grad/grad_interpreter.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "interpreters/vmap/vmap.h"
#include "kernels/unary.h"
#include "ops/ops.h"
#include "tensor/allclose.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tensor/print.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"
#include "tests/vmap_oracle.h"

namespace ft {
namespace {

using testing::Rand;
using testing::GradCheck;

TEST(Grad, ClosedFormSinTimesW) {
  Tensor x = Rand({3}, 1), w = Rand({3}, 2);
  auto f = [](const TensorList& a) { return sum(sin(a[0]) * a[1]); };
  TensorList g = grad(ScalarFn(f), {0, 1})({x, w});
  EXPECT_TENSOR_NEAR(g[0], cos(x) * w, 1e-14);
  EXPECT_TENSOR_NEAR(g[1], sin(x), 1e-14);
  // argnums order is respected, negative argnums allowed.
  TensorList g2 = grad(ScalarFn(f), {-1, 0})({x, w});
  EXPECT_TENSOR_NEAR(g2[0], sin(x), 1e-14);
}

TEST(Grad, UnaryOpsAgainstFiniteDifferences) {
  using Unary = Tensor (*)(const Tensor&);
  const std::vector<std::pair<const char*, Unary>> ops = {
      {"neg", &neg},   {"abs", &abs},       {"exp", &exp},        {"expm1", &expm1},
      {"log", &log},   {"log1p", &log1p},   {"sin", &sin},        {"cos", &cos},
      {"tan", &tan},   {"tanh", &tanh},     {"sigmoid", &sigmoid}, {"relu", &relu},
      {"sqrt", &sqrt}, {"rsqrt", &rsqrt},   {"square", &square},  {"reciprocal", &reciprocal}};
  for (const auto& [name, op] : ops) {
    SCOPED_TRACE(name);
    Tensor x = Rand({2, 3}, 3, 0.2, 1.2);
    EXPECT_TRUE(GradCheck([op = op](const TensorList& a) { return op(a[0]); }, {x}));
  }
}

TEST(Grad, BinaryOpsWithBroadcastingAgainstFiniteDifferences) {
  using Binary = Tensor (*)(const Tensor&, const Tensor&);
  const std::vector<std::pair<const char*, Binary>> ops = {
      {"add", &add}, {"sub", &sub}, {"mul", &mul}, {"div", &div}, {"pow", &pow},
      {"maximum", &maximum}, {"minimum", &minimum}, {"atan2", &atan2}};
  for (const auto& [name, op] : ops) {
    SCOPED_TRACE(name);
    Tensor a = Rand({2, 3}, 4, 0.2, 1.2), b = Rand({3}, 5, 0.2, 1.2);
    EXPECT_TRUE(GradCheck([op = op](const TensorList& t) { return op(t[0], t[1]); }, {a, b}));
  }
  EXPECT_TRUE(GradCheck(
      [](const TensorList& t) { return where(gt(t[0], 0.5), t[0] * 2.0, t[1]); },
      {Rand({4}, 6, 0.0, 1.0), Rand({4}, 7)}));
  EXPECT_TRUE(GradCheck([](const TensorList& t) { return clamp(t[0], -0.3, 0.4); },
                        {Rand({5}, 8)}));
}

TEST(Grad, ReductionsLinalgAndViewsAgainstFiniteDifferences) {
  Tensor x = Rand({2, 3, 4}, 9);
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return sum(a[0], {1}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return sum(a[0], {0, 2}, true); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return mean(a[0], {-1}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return logsumexp(a[0], {1}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return softmax(a[0], 1); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return log_softmax(a[0], -1); }, {x}));
  for (auto [sa, sb] : std::vector<std::pair<Shape, Shape>>{
           {{3}, {3}}, {{2, 3}, {3}}, {{3}, {3, 4}}, {{2, 3}, {3, 4}}, {{5, 2, 3}, {3, 4}},
           {{2, 3}, {5, 3, 4}}}) {
    EXPECT_TRUE(GradCheck([](const TensorList& a) { return matmul(a[0], a[1]); },
                          {Rand(sa, 10), Rand(sb, 11)}));
  }
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return linear(a[0], a[1], a[2]); },
                        {Rand({4, 3}, 12), Rand({2, 3}, 13), Rand({2}, 14)}));
  EXPECT_TRUE(GradCheck(
      [](const TensorList& a) {
        return permute(reshape(transpose(unsqueeze(a[0], 0), 1, 2), {3, 2, 4}), {2, 0, 1});
      },
      {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return expand(a[0], {3, 2, 4}); },
                        {Rand({2, 1}, 15)}));
}

TEST(Grad, HigherOrderClosedForms) {
  // x^4 -> 4x^3 -> 12x^2 -> 24x.
  auto x4 = TensorFn([](const Tensor& t) { return t * t * t * t; });
  Tensor x = scalar_tensor(1.5, kFloat64);
  EXPECT_NEAR(grad(x4)(x).item<double>(), 4 * 1.5 * 1.5 * 1.5, 1e-12);
  EXPECT_NEAR(grad(grad(x4))(x).item<double>(), 12 * 1.5 * 1.5, 1e-12);
  EXPECT_NEAR(grad(grad(grad(x4)))(x).item<double>(), 24 * 1.5, 1e-12);
  // grad(grad(x^3))(2) = 12; second derivative of sin is -sin.
  auto x3 = TensorFn([](const Tensor& t) { return t * t * t; });
  EXPECT_NEAR(grad(grad(x3))(scalar_tensor(2.0, kFloat64)).item<double>(), 12.0, 1e-12);
  auto s = TensorFn([](const Tensor& t) { return sin(t); });
  EXPECT_NEAR(grad(grad(s))(scalar_tensor(0.7, kFloat64)).item<double>(), -std::sin(0.7), 1e-12);
}

TEST(Grad, PerSampleGradientsWithVmap) {
  // ((x . w) - t)^2 with w = [1, 2]: per-example gradients w.r.t. w.
  auto loss = ScalarFn([](const TensorList& a) {
    return square(sum(a[1] * a[0]) - a[2]);
  });
  Tensor w = tensor({1.0, 2.0});
  Tensor xs = tensor({1.0, 0.0, 0.0, 1.0, 1.0, 1.0}, {3, 2});
  Tensor ts = tensor({0.0, 1.0, 2.0});
  TensorListFn per_example = vmap(grad(loss, {0}), {std::nullopt, 0, 0});
  Tensor g = per_example({w, xs, ts})[0];
  EXPECT_TENSOR_NEAR(g, tensor({2.0, 0.0, 0.0, 2.0, 2.0, 2.0}, {3, 2}), 1e-14);
  // And against a loop of grad over random data.
  Tensor x = Rand({5, 4}, 16), t = Rand({5}, 17), w2 = Rand({4}, 18);
  Tensor batched = vmap(grad(loss, {0}), {std::nullopt, 0, 0})({w2, x, t})[0];
  TensorList want = testing::LoopVmap(
      [&](const TensorList& a) { return grad(loss, {0})({a[0], a[1], a[2]}); }, {w2, x, t},
      {std::nullopt, 0, 0}, {0});
  EXPECT_TENSOR_NEAR(batched, want[0], 1e-14);
}

TEST(Grad, PerSampleGradientsOfAnMlpWithCrossEntropy) {
  // The per-sample-gradient benchmark's workload, small and in float64: loss of a tanh MLP
  // with softmax cross-entropy, gradients of every parameter, per example.
  auto loss = ScalarFn([](const TensorList& a) {
    Tensor h = tanh(linear(a[4], a[0], a[1]));
    Tensor z = linear(h, a[2], a[3]);
    return neg(sum(a[5] * log_softmax(z, -1)));
  });
  TensorList params = {Rand({4, 3}, 60), Rand({4}, 61), Rand({2, 4}, 62), Rand({2}, 63)};
  Tensor xs = Rand({5, 3}, 64);
  Tensor ys = to(one_hot(tensor(std::vector<int64_t>{0, 1, 1, 0, 1}), 2), kFloat64);
  TensorList args = params;
  args.push_back(xs);
  args.push_back(ys);
  const std::vector<int64_t> argnums = {0, 1, 2, 3};
  const std::vector<std::optional<int64_t>> in_dims = {std::nullopt, std::nullopt, std::nullopt,
                                                       std::nullopt, 0, 0};
  TensorList batched = vmap(grad(loss, argnums), Dims(in_dims))(args);
  TensorList want = testing::LoopVmap(
      [&](const TensorList& a) { return grad(loss, argnums)(a); }, args, in_dims, {0, 0, 0, 0});
  for (size_t i = 0; i < 4; ++i) EXPECT_TENSOR_NEAR(batched[i], want[i], 1e-14);
  // And the loss's gradients against central differences for one example.
  TensorList one = params;
  one.push_back(select(xs, 0, 0));
  one.push_back(select(ys, 0, 0));
  EXPECT_TRUE(gradcheck([&](const TensorList& a) { return loss(a); }, one, argnums).ok);
}

TEST(Vjp, TranspositionIdentityAndDeadWrappers) {
  Tensor x = Rand({3, 2}, 19), v = Rand({2, 4}, 20);
  auto f = TensorListFn([](const TensorList& a) { return TensorList{tanh(matmul(a[0], a[1]))}; });
  VjpResult r = vjp(f, {x, v});
  EXPECT_TENSOR_NEAR(r.outputs[0], tanh(matmul(x, v)), 1e-15);
  // vjp_fn works after vjp returned, any number of times.
  Tensor c = Rand({3, 4}, 21);
  TensorList g1 = r.vjp_fn({c});
  TensorList g2 = r.vjp_fn({c});
  EXPECT_TENSOR_EQ(g1[0], g2[0]);
  // <J t, c> == <t, J^T c>, with J t from central differences along a random direction.
  Tensor tx = Rand({3, 2}, 22), tv = Rand({2, 4}, 23);
  const double eps = 1e-6;
  Tensor jt = (f({x + tx * eps, v + tv * eps})[0] - f({x - tx * eps, v - tv * eps})[0]) /
              (2 * eps);
  const double lhs = sum(jt * c).item<double>();
  const double rhs = (sum(tx * g1[0]) + sum(tv * g1[1])).item<double>();
  EXPECT_NEAR(lhs, rhs, 1e-7);
  // vjp(sin, [0, 1]) then vjp_fn(ones) -> cos.
  VjpResult rs = vjp(TensorListFn([](const TensorList& a) { return TensorList{sin(a[0])}; }),
                     {tensor({0.0, 1.0})});
  EXPECT_TENSOR_NEAR(rs.vjp_fn({ones({2}, kFloat64)})[0], tensor({1.0, std::cos(1.0)}), 1e-15);
}

// functorch_semantics §1.7: wrappers whose level died behave like their values.
TEST(DeadWrappers, OfOuterLevelsInsideASavedVjpFn) {
  Tensor x = Rand({3}, 45);
  // An inner vjp_fn saved while an outer grad level was alive: its graph holds wrappers of
  // the outer level, which is dead when the vjp_fn is called afterwards.
  std::function<TensorList(const TensorList&)> saved;
  grad(TensorFn([&saved](const Tensor& t) {
    VjpResult r = vjp([](const TensorList& a) { return TensorList{sin(a[0] * a[0])}; }, {t});
    saved = r.vjp_fn;
    return sum(r.outputs[0]);
  }))(x);
  Tensor g = saved({ones_like(x)})[0];
  EXPECT_TRUE(g.is_dense());
  EXPECT_TENSOR_NEAR(g, cos(x * x) * x * 2.0, 1e-15);
  // An escaped wrapper of a dead level in new arithmetic, and captured by a new transform
  // (a constant there): functorch's [3, 5] and [3, 6] example.
  Tensor escaped;
  grad(TensorFn([&escaped](const Tensor& t) {
    escaped = t * 2.0;
    return sum(t * 3.0);
  }))(tensor({1.0, 2.0}));
  EXPECT_TENSOR_EQ(escaped + 1.0, tensor({3.0, 5.0}));
  Tensor inner = tensor({1.0, 2.0}) * 3.0;
  EXPECT_TENSOR_EQ(grad(TensorFn([&inner](const Tensor& y) { return sum(y * inner); }))(
                       tensor({1.0, 1.0})),
                   tensor({3.0, 6.0}));
  EXPECT_NE(ToString(escaped).find("tensor"), std::string::npos);
  // A dead batched tensor is an error naming its level, not a wrong value.
  Tensor batched_escape;
  vmap(TensorFn([&batched_escape](const Tensor& t) {
    batched_escape = t * 1.0;
    return t;
  }))(ones({2, 3}, kFloat64));
  EXPECT_FT_ERROR(sin(batched_escape), "but that vmap has already returned");
}

TEST(Compositions, VmapOfVjpOfVmapAndGradOfVmap) {
  // Inner: vmap over rows of f(x, w) = sin(x) * w; vjp of that; outer vmap over a batch of
  // (x, cotangent) pairs. Oracle: the gradient is cos(x) * w * c, elementwise.
  Tensor xs = Rand({2, 3, 4}, 46), cs = Rand({2, 3, 4}, 47), w = Rand({4}, 48);
  auto inner = vmap(TensorListFn([&w](const TensorList& a) { return TensorList{sin(a[0]) * w}; }),
                    0, 0);
  auto pulled = [&inner](const TensorList& a) {
    VjpResult r = vjp(inner, {a[0]});
    return r.vjp_fn({a[1]});
  };
  TensorList got = vmap(TensorListFn(pulled), 0, 0)({xs, cs});
  EXPECT_TENSOR_NEAR(got[0], cos(xs) * w * cs, 1e-15);
  // grad of a function that vmaps inside: the sum over rows of a per-row loss.
  auto loss = ScalarFn([](const TensorList& a) {
    Tensor per_row = vmap(TensorFn([](const Tensor& r) { return sum(square(sin(r))); }))(a[0]);
    return sum(per_row);
  });
  Tensor x = Rand({3, 4}, 49);
  EXPECT_TENSOR_NEAR(grad(loss)({x})[0], sin(x) * cos(x) * 2.0, 1e-15);
  // grad of grad of grad: x^4 -> 24x, with a vmap in the middle.
  auto x4 = TensorFn([](const Tensor& t) { return sum(t * t * t * t); });
  auto d3 = grad(TensorFn([x4](const Tensor& t) {
    return sum(vmap(grad(TensorFn([x4](const Tensor& u) { return sum(grad(x4)(u)); })))(t));
  }));
  Tensor batch = Rand({2, 3}, 50);
  EXPECT_TENSOR_NEAR(d3(batch), batch * 24.0, 1e-13);
}

TEST(Grad, UnusedInputGetsZerosAndConstantsAreNotTracked) {
  auto f = ScalarFn([](const TensorList& a) { return sum(a[0] * 3.0); });
  TensorList g = grad(f, {0, 1})({tensor({1.0, 2.0}), tensor({5.0})});
  EXPECT_TENSOR_EQ(g[0], tensor({3.0, 3.0}));
  EXPECT_TENSOR_EQ(g[1], tensor({0.0}));
  // Non-differentiable ops (argmax, comparisons) inside do not break the graph.
  auto h = ScalarFn([](const TensorList& a) {
    Tensor mask = to(gt(a[0], 0.0), kFloat64);
    return sum(a[0] * mask) + to(argmax(a[0]), kFloat64) * 0.0;
  });
  EXPECT_TENSOR_EQ(grad(h)({tensor({-1.0, 2.0})})[0], tensor({0.0, 1.0}));
}

// float16 and bfloat16 differentiate through the same formulas as float32, each op rounding
// once to the 16-bit format: d/dx sum(sin(x) * x) = cos(x) x + sin(x), within a few ulp of
// the format (2^-10 and 2^-7 relative) of the closed form in double.
TEST(Grad, SixteenBitFloatsThroughTheSameRules) {
  auto f = ScalarFn([](const TensorList& a) { return sum(sin(a[0]) * a[0]); });
  const std::vector<double> xs = {0.5, 1.0, 2.0, -3.0};
  for (const auto& [dtype, eps] : {std::pair{kFloat16, 0x1p-10}, std::pair{kBFloat16, 0x1p-7}}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor g = grad(f)({to(tensor(xs), dtype)})[0];
    ASSERT_EQ(g.dtype(), dtype);
    const std::vector<double> got = g.to_vector<double>();
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = std::cos(xs[i]) * xs[i] + std::sin(xs[i]);
      EXPECT_NEAR(got[i], want, 8 * eps * (std::fabs(want) + 1)) << "x = " << xs[i];
    }
  }
}

TEST(Grad, Errors) {
  auto vec = ScalarFn([](const TensorList& a) { return a[0] * 2.0; });
  EXPECT_FT_ERROR(grad(vec)({tensor({1.0, 2.0})}),
                  "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                  "tensor with 1 dims. Maybe you wanted to use the vjp or jacrev APIs instead?");
  auto f = ScalarFn([](const TensorList& a) { return sum(a[0]); });
  EXPECT_FT_ERROR(grad(f, {1})({tensor({1.0})}), "grad: argnums 1 is out of range");
  EXPECT_FT_ERROR(grad(f, {0, 0})({tensor({1.0})}), "grad: argnums contains 0 twice");
  EXPECT_FT_ERROR(grad(f)({tensor(std::vector<int64_t>{1})}),
                  "grad: only floating point inputs can be differentiated, got argument 0 of "
                  "dtype int64");
  VjpResult r = vjp(TensorListFn([](const TensorList& a) { return TensorList{a[0] * 2.0}; }),
                    {tensor({1.0, 2.0})});
  EXPECT_FT_ERROR(r.vjp_fn({ones({3}, kFloat64)}),
                  "vjp: Mismatch in shape: grad_output[0] has a shape of [3] and output[0] has "
                  "a shape of [2].");
  EXPECT_FT_ERROR(r.vjp_fn({}), "vjp: vjp_fn expected 1 cotangents (one per output), got 0");
  auto throws = ScalarFn([](const TensorList& a) { return sum(sin(to(a[0], kBool))); });
  EXPECT_FT_ERROR(grad(throws)({tensor({1.0})}), "sin: not supported for bool");
  EXPECT_TRUE(LayerStack::empty());
  // A complex value inside: refused by name until the complex derivative rules exist.
  auto via_complex =
      ScalarFn([](const TensorList& a) { return sum(to(to(a[0], kComplex128), kFloat64)); });
  EXPECT_FT_ERROR(grad(via_complex)({tensor({1.0, 2.0})}),
                  "grad: a complex128 value of shape [2] reached a grad or vjp level (");
  EXPECT_TRUE(LayerStack::empty());
}

// A user op with a deliberately wrong formula: gradcheck must catch it.
Tensor BadSquareKernel(const Tensor& x) { return kernels::square(x); }

TEST(Grad, BackwardNodesAreNamedAfterTheirOps) {
  autograd::RegisterDerivatives();
  EXPECT_EQ(autograd::BackwardName(OpRegistry::Global().Get("log_softmax")),
            "LogSoftmaxBackward");
  EXPECT_EQ(autograd::BackwardName(OpRegistry::Global().Get("mul")), "MulBackward");
}

TEST(Gradcheck, CatchesAWrongFormula) {
  RegisterAllOps();
  autograd::RegisterDerivatives();
  static const bool registered = [] {
    const Operator& op = RegisterOp<&BadSquareKernel>(OpRegistry::Global(), "test_bad_square",
                                                      {"self"});
    autograd::SetVjp(op, [](const autograd::VjpContext& c, const TensorList& g) {
      return TensorList{g[0] * c.input(0)};  // wrong: d/dx x^2 = 2x
    });
    return true;
  }();
  (void)registered;
  auto bad = [](const TensorList& a) { return Call<&BadSquareKernel>(a[0]); };
  GradcheckResult r = gradcheck(bad, {Rand({3}, 50)});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("gradcheck: argument 0, element"), std::string::npos);
  EXPECT_TRUE(gradcheck([](const TensorList& a) { return square(a[0]); }, {Rand({3}, 50)}).ok);
}

TEST(GradAndValue, ReturnsBothFromOnePass) {
  auto f = ScalarFn([](const TensorList& a) { return sum(square(a[0])); });
  GradAndValue r = grad_and_value(f)({tensor({1.0, -2.0})});
  EXPECT_TENSOR_EQ(r.grads[0], tensor({2.0, -4.0}));
  EXPECT_NEAR(r.value.item<double>(), 5.0, 0.0);
}

TEST(Grad, ModifyingASavedTensorIsAnErrorAtBackward) {
  // c is a constant at the grad level (made inside f, not tracked), saved by mul for the
  // backward of x * c; writing it afterwards would silently change the gradient.
  auto f = ScalarFn([](const TensorList& a) {
    Tensor c = ones_like(a[0]);
    Tensor y = a[0] * c;
    add_(c, 1.0);
    return sum(y);
  });
  EXPECT_FT_ERROR(grad(f)({tensor({1.0, 2.0})}),
                  "grad: argument 'other' of 'mul', which its backward needs, was modified by an "
                  "in-place operation after 'mul' ran (its version went from 0 to 1)");
  // An op whose backward reads no input values (add) does not care.
  auto h = ScalarFn([](const TensorList& a) {
    Tensor c = ones_like(a[0]);
    Tensor y = a[0] + c;
    add_(c, 1.0);
    return sum(y * 3.0);
  });
  EXPECT_TENSOR_EQ(grad(h)({tensor({1.0, 2.0})})[0], tensor({3.0, 3.0}));
  // Writing it before the op is fine.
  auto g = ScalarFn([](const TensorList& a) {
    Tensor c = ones_like(a[0]);
    add_(c, 1.0);
    return sum(a[0] * c);
  });
  EXPECT_TENSOR_EQ(grad(g)({tensor({1.0, 2.0})})[0], tensor({2.0, 2.0}));
  EXPECT_TRUE(LayerStack::empty());
}

// functorch's NOTE "grad and vjp interaction with no_grad" (semantics section 1.6): the
// cases that apply to C++ (forward mode's are issue 4's next step). Where PyTorch says
// "x.requires_grad", an outer grad level plays that part.
Tensor Scalar1(double v) { return scalar_tensor(v, kFloat64); }
double At(const TensorFn& f, double x) { return f(Scalar1(x)).item<double>(); }

// In-place ops on tensors created inside f rebase their history (NOTE: [In-place under
// grad]); oracles are closed forms and finite differences of the out-of-place function.
TEST(InPlace, OnTensorsCreatedInsideMatchesClosedForms) {
  Tensor x = Rand({4}, 40, 0.2, 1.2), w = Rand({4}, 41, 0.2, 1.2);
  // sum((2x + 1) * x - 3) / w: d/dx = (4x + 1) / w.
  auto f = [](const TensorList& a) {
    Tensor y = a[0] * 2.0;
    add_(y, 1.0);
    mul_(y, a[0]);
    sub_(y, 3.0);
    div_(y, a[1]);
    return sum(y);
  };
  TensorList g = grad(ScalarFn(f), {0, 1})({x, w});
  EXPECT_TENSOR_NEAR(g[0], (x * 4.0 + 1.0) / w, 1e-14);
  EXPECT_TENSOR_NEAR(g[1], neg(((x * 2.0 + 1.0) * x - 3.0) / square(w)), 1e-14);
  EXPECT_TRUE(GradCheck(
      [](const TensorList& a) {
        Tensor y = a[0] * a[1];
        clamp_(y, 0.1, 0.9);  // before exp_: exp_'s backward reads the value exp_ wrote
        exp_(y);
        Tensor z = a[1] + 0.0;
        copy_(z, y);
        mul_(z, a[0]);
        return z;
      },
      {x, w}));
  // fill_ and zero_ make the value a constant: no gradient flows to what it was.
  TensorList constant = grad(ScalarFn([](const TensorList& a) {
                               Tensor y = a[0] * 3.0;
                               fill_(y, 2.0);
                               Tensor z = a[0] * 1.0;
                               zero_(z);
                               return sum(y * a[0] + z);
                             }))({x});
  EXPECT_TENSOR_NEAR(constant[0], full_like(x, 2.0), 0);
}

TEST(InPlace, ComposesWithVmapAndHigherOrder) {
  // f(x) = sum(x^3) built in place: grad 3x^2, second derivative 6x.
  auto cube = TensorFn([](const Tensor& t) {
    Tensor y = t * t;
    mul_(y, t);
    return sum(y);
  });
  Tensor x = Rand({3}, 42);
  EXPECT_TENSOR_NEAR(grad(cube)(x), x * x * 3.0, 1e-14);
  auto first_sum = TensorFn([cube](const Tensor& t) { return sum(grad(cube)(t)); });
  EXPECT_TENSOR_NEAR(grad(first_sum)(x), x * 6.0, 1e-14);
  // Per-example gradients of an in-place function against a loop.
  Tensor xs = Rand({5, 3}, 43);
  auto per_example = [cube](const TensorList& a) { return TensorList{grad(cube)(a[0])}; };
  TensorList batched = vmap(TensorListFn(per_example), 0, 0)({xs});
  TensorList loop = testing::LoopVmap(per_example, {xs}, {0}, {0});
  EXPECT_TENSOR_NEAR(batched[0], loop[0], 1e-14);
  // Under no_grad an in-place change is a constant shift: sum((2x + 1) x) -> 4x + 1.
  TensorFn shifted = grad(TensorFn([](const Tensor& t) {
    Tensor y = t * 2.0;
    {
      NoGradGuard no_grad;
      add_(y, 1.0);
    }
    return sum(y * t);
  }));
  EXPECT_TENSOR_NEAR(shifted(x), x * 4.0 + 1.0, 1e-14);
}

TEST(InPlace, Errors) {
  Tensor x = Rand({3}, 44);
  Tensor captured = zeros({3}, kFloat64);
  auto mutate_captured = ScalarFn([&captured](const TensorList& a) {
    add_(captured, a[0]);
    return sum(a[0]);
  });
  EXPECT_FT_ERROR(grad(mutate_captured)({x}),
                  "grad: in-place op 'add_' would write a value that carries a gradient at level");
  EXPECT_FT_ERROR(grad(mutate_captured)({x}), "so it would mutate a captured Tensor");
  EXPECT_TENSOR_EQ(captured, zeros({3}, kFloat64));  // nothing was written
  // Views of captured tensors are captured too.
  auto mutate_view = ScalarFn([&captured](const TensorList& a) {
    Tensor v = select(captured, 0, 0);
    copy_(v, sum(a[0]));
    return sum(a[0]);
  });
  EXPECT_FT_ERROR(grad(mutate_view)({x}), "grad: in-place op 'copy_'");
  auto mutate_input = ScalarFn([](const TensorList& a) {
    mul_(a[0], 2.0);
    return sum(a[0]);
  });
  EXPECT_FT_ERROR(grad(mutate_input)({x}),
                  "grad: in-place op 'mul_' on an input being differentiated or a view of one "
                  "(shape [3]");
  auto mutate_input_view = ScalarFn([](const TensorList& a) {
    Tensor v = narrow(a[0], 0, 1, 2);
    add_(v, 1.0);
    return sum(a[0]);
  });
  const Tensor before = clone(x);
  EXPECT_FT_ERROR(grad(mutate_input_view)({x}), "would modify the caller's tensor");
  EXPECT_TENSOR_EQ(x, before);
  // Writing through a view leaves the base's history stale.
  auto through_view = ScalarFn([](const TensorList& a) {
    Tensor y = a[0] * 1.0;
    Tensor v = select(y, 0, 0);
    mul_(v, 2.0);
    return sum(y);
  });
  EXPECT_FT_ERROR(grad(through_view)({x}),
                  "grad: 'sum' got a tensor of shape [3] whose value was modified in place "
                  "through a view");
  EXPECT_FT_ERROR(vjp(
                      [](const TensorList& a) {
                        Tensor y = a[0] * 1.0;
                        mul_(select(y, 0, 0), 2.0);
                        return TensorList{y};
                      },
                      {x}),
                  "vjp: output 0 (shape [3]) was modified in place through a view");
  // An output a backward formula reads, modified after the op ran.
  auto saved_output = ScalarFn([](const TensorList& a) {
    Tensor y = exp(a[0]);
    add_(y, 1.0);
    return sum(y);
  });
  EXPECT_FT_ERROR(grad(saved_output)({x}),
                  "grad: output 0 of 'exp', which its backward needs, was modified by an "
                  "in-place operation");
  EXPECT_TRUE(LayerStack::empty());
}

TEST(GradMode, GuardsNestAndRestore) {
  EXPECT_TRUE(GradMode::is_enabled());
  {
    NoGradGuard off;
    EXPECT_FALSE(GradMode::is_enabled());
    {
      EnableGradGuard on;
      EXPECT_TRUE(GradMode::is_enabled());
    }
    EXPECT_FALSE(GradMode::is_enabled());
  }
  EXPECT_TRUE(GradMode::is_enabled());
}

TEST(GradMode, Case1GradUnderNoGradStillDifferentiatesButIsConstantOutside) {
  auto s = TensorFn([](const Tensor& t) { return sin(t); });
  {
    NoGradGuard no_grad;
    EXPECT_NEAR(At(grad(s), 0.7), std::cos(0.7), 1e-15);
  }
  // Seen from an outer grad level, a grad taken under no_grad is a constant.
  auto outer = TensorFn([&](const Tensor& t) {
    NoGradGuard no_grad;
    return grad(s)(t);
  });
  EXPECT_NEAR(At(grad(outer), 0.7), 0.0, 0.0);
}

TEST(GradMode, Cases2And3NoGradBlockIsAConstant) {
  auto f = TensorFn([](const Tensor& x) {
    Tensor c;
    {
      NoGradGuard no_grad;
      c = x * x;
    }
    return x * x - c;
  });
  EXPECT_NEAR(At(grad(f), 1.5), 3.0, 1e-15);        // 2x
  EXPECT_NEAR(At(grad(grad(f)), 1.5), 2.0, 1e-15);  // 2
  NoGradGuard no_grad;
  EXPECT_NEAR(At(grad(f), 1.5), 3.0, 1e-15);        // case 3: the same under no_grad
}

TEST(GradMode, Case4InnerTransformUnderNoGradIsInvisibleOutside) {
  auto quartic = TensorFn([](const Tensor& t) { return t * t * t * t * 0.25; });
  auto h = TensorFn([&](const Tensor& x) {
    Tensor inner;
    {
      NoGradGuard no_grad;
      inner = grad(quartic)(x);  // x^3, but a constant for outer levels
    }
    return x * x * x - inner;
  });
  EXPECT_NEAR(At(grad(h), 1.5), 6.75, 1e-12);       // 3x^2
  EXPECT_NEAR(At(grad(grad(h)), 1.5), 9.0, 1e-12);  // 6x
}

TEST(GradMode, Case5GradOfAFunctionUsingNoGradTwice) {
  auto f = TensorFn([](const Tensor& x) {
    Tensor c;
    {
      NoGradGuard no_grad;
      c = x * x * x;
    }
    return x * x * x - c;
  });
  auto g = TensorFn([&](const Tensor& x) {
    Tensor c;
    {
      NoGradGuard no_grad;
      c = grad(f)(x);
    }
    return grad(f)(x) - c;
  });
  EXPECT_NEAR(At(grad(g), 1.5), 9.0, 1e-12);  // 6x
}

TEST(GradMode, Case6GradAndValueUnderNoGrad) {
  auto cube = ScalarFn([](const TensorList& a) { return a[0] * a[0] * a[0]; });
  auto h = TensorFn([&](const Tensor& x) {
    Tensor value;
    {
      NoGradGuard no_grad;
      value = grad_and_value(cube)({x}).value;
    }
    return x * x * x - value;
  });
  EXPECT_NEAR(At(grad(h), 1.6), 7.68, 1e-12);       // 3x^2
  EXPECT_NEAR(At(grad(grad(h)), 1.6), 9.6, 1e-12);  // 6x
}

TEST(GradMode, Case7VjpAndVjpFnInsideAndOutsideNoGrad) {
  auto sq = TensorListFn([](const TensorList& a) { return TensorList{a[0] * a[0]}; });
  {
    NoGradGuard no_grad;
    VjpResult r = vjp(sq, {Scalar1(2.0)});
    EXPECT_NEAR(r.vjp_fn({Scalar1(1.0)})[0].item<double>(), 4.0, 1e-15);
  }
  VjpResult outside = vjp(sq, {Scalar1(3.14)});
  {
    NoGradGuard no_grad;
    EXPECT_NEAR(outside.vjp_fn({Scalar1(1.0)})[0].item<double>(), 6.28, 1e-12);
  }
  // vjp_fn called under an outer grad level with grad mode on is recorded there: the
  // derivative of the pullback 2x is 2 (case 7's last line).
  auto pullback_at = TensorFn([&](const Tensor& x) {
    VjpResult r = [&] {
      NoGradGuard no_grad;  // vjp itself under no_grad ...
      return vjp(sq, {x});
    }();
    return r.vjp_fn({ones_like(x)})[0];  // ... its vjp_fn outside: 2x, seen by the outer level
  });
  EXPECT_NEAR(At(grad(pullback_at), 1.3), 2.0, 1e-12);
}

TEST(HasAux, AuxComesBackUndifferentiatedAndUnwrapped) {
  auto f = AuxFn([](const TensorList& a) {
    Tensor y = sin(a[0]);
    return std::pair<Tensor, TensorList>{sum(y), {y * 2.0}};
  });
  Tensor x = tensor({0.5, 1.0});
  GradWithAux r = grad_with_aux(f)({x});
  EXPECT_TENSOR_NEAR(r.grads[0], cos(x), 1e-15);
  EXPECT_NEAR(r.value.item<double>(), std::sin(0.5) + std::sin(1.0), 1e-15);
  ASSERT_EQ(r.aux.size(), 1u);
  EXPECT_TRUE(r.aux[0].is_dense());  // unwrapped from the grad level
  EXPECT_TENSOR_NEAR(r.aux[0], sin(x) * 2.0, 1e-15);
  VjpWithAux v = vjp_with_aux(
      [](const TensorList& a) {
        return std::pair<TensorList, TensorList>{{square(a[0])}, {a[0] + 1.0}};
      },
      {x});
  EXPECT_TENSOR_NEAR(v.vjp_fn({ones_like(x)})[0], x * 2.0, 1e-15);
  EXPECT_TENSOR_NEAR(v.aux[0], x + 1.0, 1e-15);
  // Under vmap, aux is batched like any output.
  auto per_example = vmap(TensorListFn([&](const TensorList& a) {
    GradWithAux g = grad_with_aux(f)(a);
    return TensorList{g.grads[0], g.aux[0]};
  }));
  Tensor xs = Rand({3, 2}, 40);
  TensorList out = per_example({xs});
  EXPECT_TENSOR_NEAR(out[0], cos(xs), 1e-15);
  EXPECT_TENSOR_NEAR(out[1], sin(xs) * 2.0, 1e-15);
}

TEST(Jacrev, ClosedForms) {
  // jacrev(x^3)([1, 2]) = diag(3, 12).
  auto cube = TensorFnOfList([](const TensorList& a) { return a[0] * a[0] * a[0]; });
  EXPECT_TENSOR_NEAR(jacrev(cube)({tensor({1.0, 2.0})})[0],
                     tensor({3.0, 0.0, 0.0, 12.0}, {2, 2}), 1e-14);
  // f(x) = sin(W x) + x: J = diag(cos(W x)) W + I.
  Tensor w = Rand({4, 4}, 30), x = Rand({4}, 31);
  auto f = TensorFnOfList([](const TensorList& a) { return sin(matmul(a[1], a[0])) + a[0]; });
  Tensor j = jacrev(f)({x, w})[0];
  Tensor want = unsqueeze(cos(matmul(w, x)), 1) * w + eye(4, kFloat64);
  EXPECT_TENSOR_NEAR(j, want, 1e-14);
  // Same with chunking, and the Jacobian w.r.t. W (shape [4, 4, 4]) against differences.
  EXPECT_TENSOR_NEAR(jacrev(f, {0}, 3)({x, w})[0], want, 1e-14);
  TensorList both = jacrev(f, {1, 0})({x, w});
  EXPECT_EQ(both[0].sizes(), (IntArrayRef{4, 4, 4}));
  EXPECT_TENSOR_NEAR(both[1], want, 1e-14);
  for (int64_t i = 0; i < 4; ++i) {
    ScalarFn fi = [&](const TensorList& a) { return select(f(a), 0, i); };
    EXPECT_TRUE(testing::TensorNear(select(both[0], 0, i), numerical_grad(fi, {x, w}, 1), 1e-6,
                                    1e-6));
  }
}

TEST(Jacrev, UnderVmapMatchesLoop) {
  auto f = TensorFnOfList([](const TensorList& a) { return tanh(a[0]) * a[0]; });
  Tensor xs = Rand({3, 4}, 34);
  TensorListFn per_example = vmap(jacrev(f));
  Tensor batched = per_example({xs})[0];
  TensorList want = testing::LoopVmap([&](const TensorList& a) { return jacrev(f)(a); }, {xs},
                                      {0}, {0});
  EXPECT_TENSOR_NEAR(batched, want[0], 1e-14);
}

}  // namespace
}  // namespace ft

namespace ft {
namespace {

// A graph as long as a long loop (an RNN unrolled over many steps): recording, the backward
// walk and freeing the graph must not recurse once per node (a stack overflow, not an
// error). d/dx of x * c^n is c^n.
TEST(Grad, AVeryLongChainOfOps) {
  constexpr int kSteps = 200000;
  const double c = 1.000001;
  TensorFn f = [&](const Tensor& x) {
    Tensor y = x;
    for (int i = 0; i < kSteps; ++i) y = y * c;
    return sum(y);
  };
  const Tensor g = grad(f)(tensor({2.0}));
  EXPECT_NEAR(g.item<double>(), std::pow(c, kSteps), 1e-6);
}

// stop_gradient: x's values, no derivative at the level (closed forms), batched by vmap.
TEST(Grad, StopGradientCarriesNoDerivative) {
  const Tensor x = Rand({4}, 31);
  EXPECT_TENSOR_EQ(stop_gradient(x), x);
  EXPECT_FALSE(stop_gradient(x).storage().is_same(x.storage()));  // a copy
  // d/dx sum(x * stop_gradient(x)) = x, not 2x.
  EXPECT_TENSOR_NEAR(grad(TensorFn([](const Tensor& t) { return sum(t * stop_gradient(t)); }))(x),
                     x, 1e-15);
  // Every level: the inner gradient is stop_gradient(x) itself, so the outer grad of its sum
  // is 0 (JAX's jax.grad(jax.grad(...)) gives the same).
  EXPECT_TENSOR_NEAR(grad(TensorFn([](const Tensor& t) {
    return sum(grad(TensorFn([](const Tensor& u) { return sum(u * stop_gradient(u)); }))(t));
  }))(x), zeros_like(x), 0);
  const Tensor xs = Rand({3, 4}, 32);
  EXPECT_TENSOR_EQ(vmap(TensorFn([](const Tensor& t) { return stop_gradient(t); }))(xs), xs);
}

// NOTE: [Rematerialization]: in a RematScope the level keeps no values; the backward pass
// replays the ops (the forward's kernels run again) and gets the same gradient.
TEST(Grad, RematScopeReplaysTheForwardForTheBackward) {
  struct Count final : BaseCallObserver {
    ValueList RunBaseKernel(const Operator& op, ValueList& args) override {
      if (op.name() == "sin") ++sin_calls;
      return op.CallBaseKernel(args);
    }
    int sin_calls = 0;
  };
  const Tensor x = Rand({5}, 33);
  for (bool remat : {false, true}) {
    Count count;
    Tensor g;
    {
      BaseCallObserverScope scope(&count);
      g = grad(TensorFn([remat](const Tensor& t) {
        std::optional<RematScope> scope;
        if (remat) scope.emplace();
        return sum(sin(t) * t);
      }))(x);
    }
    EXPECT_TENSOR_NEAR(g, cos(x) * x + sin(x), 1e-15);
    EXPECT_EQ(count.sin_calls, remat ? 2 : 1);
  }
}

}  // namespace
}  // namespace ft

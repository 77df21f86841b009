// ft::jvp, linearize, jacfwd and hessian against independent oracles: closed forms, float64
// central differences, jacrev (a reverse-mode computation of the same Jacobian), and loops of
// jvp for vmap(jvp). Also the forward-grad-mode cases of functorch_semantics §1.6, dead duals,
// in-place ops on duals, and every API error.
#include "interpreters/jvp/jvp.h"

#include <cmath>
#include <string>

#include "autograd/grad_mode.h"
#include "dispatch/interpreter.h"
#include "gtest/gtest.h"
#include "interpreters/grad/grad.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "interpreters/jvp/jvp_interpreter.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tensor/print.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"
#include "tests/vmap_oracle.h"

namespace ft {
namespace {

using testing::Rand;

TEST(Jvp, ClosedFormSinTimesW) {
  Tensor x = Rand({3}, 1), w = Rand({3}, 2), tx = Rand({3}, 3), tw = Rand({3}, 4);
  auto f = [](const TensorList& a) { return TensorList{sin(a[0]) * a[1]}; };
  JvpResult r = jvp(f, {x, w}, {tx, tw});
  EXPECT_TENSOR_NEAR(r.outputs[0], sin(x) * w, 1e-15);
  EXPECT_TENSOR_NEAR(r.tangents[0], cos(x) * w * tx + sin(x) * tw, 1e-15);
  // Only one input moving.
  r = jvp(f, {x, w}, {zeros_like(x), tw});
  EXPECT_TENSOR_NEAR(r.tangents[0], sin(x) * tw, 1e-15);
  EXPECT_TRUE(LayerStack::empty());
}

TEST(Jvp, OutputsNotDependingOnTheInputsGetZeroTangents) {
  Tensor x = Rand({2}, 5), c = Rand({3}, 6);
  JvpResult r = jvp([&c](const TensorList& a) { return TensorList{a[0] * 2.0, exp(c), a[0]}; },
                    {x}, {ones_like(x)});
  EXPECT_TENSOR_NEAR(r.tangents[0], full_like(x, 2.0), 0);
  EXPECT_TENSOR_EQ(r.tangents[1], zeros_like(c));
  EXPECT_TENSOR_EQ(r.tangents[2], ones_like(x));  // the input itself
  EXPECT_TENSOR_EQ(r.outputs[2], x);
}

TEST(Jvp, Errors) {
  Tensor x = Rand({3}, 7);
  TensorListFn f = [](const TensorList& a) { return TensorList{sin(a[0])}; };
  EXPECT_FT_ERROR(jvp(f, {x}, {}), "jvp: Expected primals and tangents to have the same length");
  EXPECT_FT_ERROR(jvp(f, {x}, {ones({2}, kFloat64)}),
                  "jvp: tangent 0 has shape [2] but its primal has shape [3]");
  EXPECT_FT_ERROR(jvp(f, {x}, {ones({3}, kFloat32)}),
                  "jvp: tangent 0 has dtype float32 but its primal has dtype float64");
  EXPECT_FT_ERROR(jvp(f, {arange(3)}, {arange(3)}),
                  "jvp: only floating point primals can carry a tangent, got primal 0 of dtype "
                  "int64");
  EXPECT_FT_ERROR(jvp(f, {x}, {Tensor()}),
                  "jvp: primal and tangent 0 must both be defined tensors");
  EXPECT_FT_ERROR(linearize(f, {arange(3)}),
                  "linearize: only floating point primals can be linearized, got primal 0 of "
                  "dtype int64");
  EXPECT_FT_ERROR(jvp([](const TensorList& a) { return TensorList{to(a[0], kComplex64)}; },
                      {x}, {ones({3}, kFloat64)}),
                  "jvp: to made a complex64 value of shape [3] at a jvp level (");
  EXPECT_TRUE(LayerStack::empty());
  // An error inside f leaves the stack balanced.
  EXPECT_FT_ERROR(jvp([](const TensorList& a) { return TensorList{matmul(a[0], a[0])}; },
                      {ones({2, 3}, kFloat64)}, {ones({2, 3}, kFloat64)}),
                  "matmul");
  EXPECT_TRUE(LayerStack::empty());
  EXPECT_FT_ERROR(jacfwd([](const TensorList& a) { return a[0]; }, {1})({x}),
                  "jacfwd: argnums 1 is out of range for a function of 1 arguments");
  EXPECT_FT_ERROR(jacfwd([](const TensorList& a) { return a[0]; }, {0, 0})({x}),
                  "jacfwd: argnums contains 0 twice");
  EXPECT_FT_ERROR(jacfwd([](const TensorList& a) { return a[0]; })({arange(3)}),
                  "jacfwd: only floating point inputs can be differentiated");
  Linearized lin = linearize(f, {x});
  EXPECT_FT_ERROR(lin.jvp_fn({ones({4}, kFloat64)}), "linearize: tangent 0 has shape [4]");
  EXPECT_TRUE(LayerStack::empty());
}

// x^4 at several depths and by every mix of modes: 4x^3, 12x^2, 24x.
TEST(Jvp, HigherOrderClosedFormsByEveryMixOfModes) {
  auto x4 = [](const TensorList& a) { return a[0] * a[0] * a[0] * a[0]; };
  const double v = 1.5;
  Tensor x = full({}, v, kFloat64);
  TensorFnOfList d1 = [x4](const TensorList& a) { return jacfwd(x4)(a)[0]; };
  TensorFnOfList d1r = [x4](const TensorList& a) { return jacrev(x4)(a)[0]; };
  EXPECT_NEAR(d1({x}).item<double>(), 4 * v * v * v, 1e-12);
  TensorFnOfList d2ff = [d1](const TensorList& a) { return jacfwd(d1)(a)[0]; };
  TensorFnOfList d2fr = [d1r](const TensorList& a) { return jacfwd(d1r)(a)[0]; };
  TensorFnOfList d2rf = [d1](const TensorList& a) { return jacrev(d1)(a)[0]; };
  for (const TensorFnOfList& d2 : {d2ff, d2fr, d2rf}) {
    EXPECT_NEAR(d2({x}).item<double>(), 12 * v * v, 1e-12);
  }
  EXPECT_NEAR(jacfwd(d2ff)({x})[0].item<double>(), 24 * v, 1e-12);
  EXPECT_NEAR(jacrev(d2fr)({x})[0].item<double>(), 24 * v, 1e-12);
  EXPECT_NEAR(jacfwd(d2rf)({x})[0].item<double>(), 24 * v, 1e-12);
  // jvp of grad (forward over reverse) and grad of jvp (reverse over forward).
  TensorFn g = grad(TensorFn([](const Tensor& t) { return t * t * t * t; }));
  JvpResult hv = jvp([g](const TensorList& a) { return TensorList{g(a[0])}; }, {x},
                     {full({}, 2.0, kFloat64)});
  EXPECT_NEAR(hv.tangents[0].item<double>(), 2 * 12 * v * v, 1e-12);
  TensorFn tangent_of_x4 = [](const Tensor& t) {
    return jvp([](const TensorList& a) { return TensorList{a[0] * a[0] * a[0] * a[0]}; }, {t},
               {ones_like(t)})
        .tangents[0];
  };
  EXPECT_NEAR(grad(tangent_of_x4)(x).item<double>(), 12 * v * v, 1e-12);
  EXPECT_NEAR(grad(grad(tangent_of_x4))(x).item<double>(), 24 * v, 1e-12);
}

TEST(Jacfwd, MatchesTheClosedFormAndJacrev) {
  // f(x) = sin(W x) + x: J = diag(cos(W x)) W + I.
  const int64_t n = 5;
  Tensor w = Rand({n, n}, 8), x = Rand({n}, 9);
  auto f = [&w](const TensorList& a) { return sin(matmul(w, a[0])) + a[0]; };
  Tensor expected = unsqueeze(cos(matmul(w, x)), 1) * w + eye(n, kFloat64);
  EXPECT_TENSOR_NEAR(jacfwd(f)({x})[0], expected, 1e-14);
  EXPECT_TENSOR_NEAR(jacfwd(f, {0}, Randomness::kError, 2)({x})[0], expected, 1e-14);
  EXPECT_TENSOR_NEAR(jacrev(f)({x})[0], expected, 1e-14);
  // Several argnums, in the caller's order, with shapes out.shape + arg.shape.
  auto g = [](const TensorList& a) { return matmul(a[0], a[1]); };
  Tensor a = Rand({2, 3}, 10), b = Rand({3}, 11);
  TensorList fwd = jacfwd(g, {1, 0})({a, b});
  TensorList rev = jacrev(g, {1, 0})({a, b});
  ASSERT_EQ(fwd.size(), 2u);
  EXPECT_EQ(ShapeToString(fwd[0].sizes()), "[2, 3]");
  EXPECT_EQ(ShapeToString(fwd[1].sizes()), "[2, 2, 3]");
  EXPECT_TENSOR_NEAR(fwd[0], a, 1e-15);  // d(a b)/db = a
  EXPECT_TENSOR_NEAR(fwd[1], rev[1], 1e-15);
}

TEST(Jacobians, HasAuxReturnsTheAuxOneLevelDown) {
  Tensor w = Rand({3, 2}, 32), x = Rand({2}, 33);
  AuxFn f = [&w](const TensorList& a) {
    Tensor y = matmul(w, a[0]);
    return std::pair<Tensor, TensorList>{tanh(y), {y, sum(y)}};
  };
  Tensor expected = unsqueeze(1.0 - square(tanh(matmul(w, x))), 1) * w;
  for (const JacobianWithAux& r :
       {jacrev_with_aux(f)({x}), jacfwd_with_aux(f)({x}),
        jacfwd_with_aux(f, {0}, Randomness::kError, 1)({x})}) {
    EXPECT_TENSOR_NEAR(r.jacobians[0], expected, 1e-14);
    ASSERT_EQ(r.aux.size(), 2u);
    EXPECT_TENSOR_NEAR(r.aux[0], matmul(w, x), 1e-15);
    EXPECT_TENSOR_NEAR(r.aux[1], sum(matmul(w, x)), 1e-15);
    EXPECT_TRUE(r.aux[0].is_dense());
  }
  // Under vmap, the aux is per example.
  Tensor xs = Rand({4, 2}, 34);
  TensorList per = vmap(TensorListFn([&f](const TensorList& a) {
                          return jacfwd_with_aux(f)(a).aux;
                        }),
                        0, 0)({xs});
  EXPECT_TENSOR_NEAR(per[0], matmul(xs, transpose(w, 0, 1)), 1e-15);
}

TEST(Hessian, QuadraticFormsAndMixedBlocks) {
  // f(x) = x^T A x: H = A + A^T.
  Tensor a = Rand({4, 4}, 12), x = Rand({4}, 13), y = Rand({3}, 14);
  auto quad = [&a](const TensorList& t) { return dot(t[0], matmul(a, t[0])); };
  EXPECT_TENSOR_NEAR(hessian(quad)({x})[0], a + transpose(a, 0, 1), 1e-13);
  // f(x, y) = sum(x)^2 * sum(y^3): blocks by closed form.
  auto f = [](const TensorList& t) { return square(sum(t[0])) * sum(t[1] * t[1] * t[1]); };
  TensorList h = hessian(f, {0, 1})({x, y});
  const double sx = sum(x).item<double>(), sy3 = sum(y * y * y).item<double>();
  EXPECT_TENSOR_NEAR(h[0], full({4, 4}, 2 * sy3, kFloat64), 1e-12);
  EXPECT_TENSOR_NEAR(h[1], expand(unsqueeze(y * y * (6 * sx), 0), {4, 3}), 1e-12);
  EXPECT_TENSOR_NEAR(h[2], expand(unsqueeze(y * y * (6 * sx), 1), {3, 4}), 1e-12);
  EXPECT_TENSOR_NEAR(h[3], eye(3, kFloat64) * (y * (6 * sx * sx)), 1e-12);
}

TEST(Hessian, ClosedForms) {
  // hessian(sum x^3)([0.5, 1, 2]) = diag(3, 6, 12).
  auto f = TensorFnOfList([](const TensorList& a) { return sum(a[0] * a[0] * a[0]); });
  EXPECT_TENSOR_NEAR(hessian(f)({tensor({0.5, 1.0, 2.0})})[0],
                     tensor({3.0, 0.0, 0.0, 0.0, 6.0, 0.0, 0.0, 0.0, 12.0}, {3, 3}), 1e-13);
  // Quadratic form x^T A x: H = A + A^T; mixed blocks of f(x, y) = sum(x * y^2).
  Tensor a = Rand({3, 3}, 32);
  auto quad = TensorFnOfList([&a](const TensorList& t) {
    return sum(t[0] * matmul(a, t[0]));
  });
  EXPECT_TENSOR_NEAR(hessian(quad)({Rand({3}, 33)})[0], a + transpose(a, 0, 1), 1e-13);
  auto mixed = TensorFnOfList([](const TensorList& t) { return sum(t[0] * square(t[1])); });
  Tensor x = tensor({1.0, 2.0}), y = tensor({3.0, -1.0});
  TensorList h = hessian(mixed, {0, 1})({x, y});
  ASSERT_EQ(h.size(), 4u);
  EXPECT_TENSOR_NEAR(h[0], zeros({2, 2}, kFloat64), 0.0);                       // d2/dx2
  EXPECT_TENSOR_NEAR(h[1], tensor({6.0, 0.0, 0.0, -2.0}, {2, 2}), 1e-14);        // d2/dxdy = 2y
  EXPECT_TENSOR_NEAR(h[2], tensor({6.0, 0.0, 0.0, -2.0}, {2, 2}), 1e-14);
  EXPECT_TENSOR_NEAR(h[3], tensor({2.0, 0.0, 0.0, 4.0}, {2, 2}), 1e-14);         // 2x
  EXPECT_TRUE(LayerStack::empty());
}

TEST(Jvp, UnderVmapMatchesALoopAndVmapUnderJvpToo) {
  Tensor xs = Rand({4, 3}, 15), ts = Rand({4, 3}, 16), w = Rand({3}, 17);
  auto f = [&w](const TensorList& a) { return TensorList{tanh(a[0] * w) * sum(a[0])}; };
  auto tangent = [f](const TensorList& a) { return TensorList{jvp(f, {a[0]}, {a[1]}).tangents[0]}; };
  TensorList batched = vmap(TensorListFn(tangent), {0, 0}, 0)({xs, ts});
  TensorList loop = testing::LoopVmap(tangent, {xs, ts}, {0, 0}, {0});
  EXPECT_TENSOR_NEAR(batched[0], loop[0], 1e-14);
  // Tangent batched, primal shared (jacfwd's pattern), with in_dims on the last dim.
  Tensor x = select(xs, 0, 0);
  TensorList shared = vmap(TensorListFn([&](const TensorList& a) {
                             return TensorList{jvp(f, {x}, {a[0]}).tangents[0]};
                           }),
                           1, 0)({transpose(ts, 0, 1)});
  TensorList shared_loop;
  for (int64_t i = 0; i < 4; ++i) shared_loop.push_back(jvp(f, {x}, {select(ts, 0, i)}).tangents[0]);
  EXPECT_TENSOR_NEAR(shared[0], stack(shared_loop, 0), 1e-14);
  // jvp of a vmapped function: the tangent of the batch is the batch of tangents.
  TensorListFn vf = vmap(TensorListFn(f), 0, 0);
  JvpResult outer = jvp(vf, {xs}, {ts});
  EXPECT_TENSOR_NEAR(outer.tangents[0], loop[0], 1e-14);
  // vmap over vjp of jvp, three levels: per-example gradients of a tangent.
  auto grad_of_tangent = [&w](const TensorList& a) {
    TensorFn t_of = [&w](const Tensor& x) {
      return sum(jvp([&w](const TensorList& b) { return TensorList{sin(b[0] * w)}; }, {x},
                     {ones_like(x)})
                     .tangents[0]);
    };
    return TensorList{grad(t_of)(a[0])};
  };
  TensorList per = vmap(TensorListFn(grad_of_tangent), 0, 0)({xs});
  // d/dx sum(cos(x w) w) = -sin(x w) w^2.
  EXPECT_TENSOR_NEAR(per[0], neg(sin(xs * w)) * w * w, 1e-14);
}

TEST(FwdGradMode, Case8JvpUnderDisabledForwardGradAndConstantBlocks) {
  Tensor x = full({}, 0.7, kFloat64);
  {
    NoFwdGradGuard off;
    JvpResult r = jvp([](const TensorList& a) { return TensorList{sin(a[0])}; }, {x},
                      {ones_like(x)});
    EXPECT_NEAR(r.tangents[0].item<double>(), std::cos(0.7), 1e-15);
    EXPECT_FALSE(FwdGradMode::is_enabled());
  }
  EXPECT_TRUE(FwdGradMode::is_enabled());
  // f(x) = x^2 - [fwd-grad disabled: x^2]: the tangent is 2x, its derivative 2.
  TensorFn f = [](const Tensor& t) {
    Tensor c;
    {
      NoFwdGradGuard off;
      c = t * t;
    }
    return t * t - c;
  };
  auto tangent = [f](const Tensor& t) {
    return jvp([f](const TensorList& a) { return TensorList{f(a[0])}; }, {t}, {ones_like(t)})
        .tangents[0];
  };
  EXPECT_NEAR(tangent(x).item<double>(), 1.4, 1e-15);
  JvpResult nested = jvp([tangent](const TensorList& a) { return TensorList{tangent(a[0])}; },
                         {x}, {ones_like(x)});
  EXPECT_NEAR(nested.tangents[0].item<double>(), 2.0, 1e-15);
  // A jvp entered with forward grad off is invisible to an outer jvp: its ops carry no
  // outer tangent (the analogue of §1.6 case 4).
  auto inner_off = [](const TensorList& a) {
    NoFwdGradGuard off;
    return TensorList{jvp([](const TensorList& b) { return TensorList{b[0] * b[0] * b[0]}; },
                          {a[0]}, {ones_like(a[0])})
                          .tangents[0]};
  };
  JvpResult outer = jvp(inner_off, {x}, {ones_like(x)});
  EXPECT_NEAR(outer.outputs[0].item<double>(), 3 * 0.49, 1e-15);
  EXPECT_NEAR(outer.tangents[0].item<double>(), 0.0, 0);
}

TEST(Jvp, DeadDualsBehaveLikeTheirPrimal) {
  Tensor x = Rand({2}, 18);
  Tensor escaped;
  jvp([&escaped](const TensorList& a) {
        escaped = a[0] * 3.0;
        EXPECT_NE(ToString(escaped).find("DualTensor(lvl="), std::string::npos);
        return TensorList{escaped};
      },
      {x}, {ones_like(x)});
  EXPECT_TENSOR_NEAR(escaped + 1.0, x * 3.0 + 1.0, 1e-15);
  // Captured inside a new jvp, the dead dual is a constant there.
  JvpResult r = jvp([&escaped](const TensorList& a) { return TensorList{a[0] * escaped}; },
                    {x}, {ones_like(x)});
  EXPECT_TENSOR_NEAR(r.tangents[0], x * 3.0, 1e-15);
}

TEST(Linearize, JvpFnMatchesTheJacobianTimesTheTangent) {
  Tensor w = Rand({3, 2}, 19), x = Rand({2}, 20);
  TensorListFn f = [&w](const TensorList& a) { return TensorList{exp(matmul(w, a[0]))}; };
  Linearized lin = linearize(f, {x});
  EXPECT_TENSOR_NEAR(lin.outputs[0], exp(matmul(w, x)), 1e-15);
  Tensor j = jacrev([&w](const TensorList& a) { return exp(matmul(w, a[0])); })({x})[0];
  for (uint64_t seed : {21, 22, 23}) {
    Tensor t = Rand({2}, seed);
    EXPECT_TENSOR_NEAR(lin.jvp_fn({t})[0], matmul(j, t), 1e-14);
  }
}

TEST(Linearize, JvpFnReplaysOnlyTheTangentArithmetic) {
  // f(x) = sin(W x) + x: J t = cos(W x) * (W t) + t. The forward (W x, its cosine) is folded.
  Tensor w = Rand({4, 4}, 25), x = Rand({4}, 26);
  Linearized lin = linearize(
      [&w](const TensorList& a) { return TensorList{sin(matmul(w, a[0])) + a[0]}; }, {x});
  ASSERT_NE(lin.program, nullptr);
  EXPECT_LE(lin.program->num_steps(), 3) << lin.program->DebugString();  // W t, *, +
  EXPECT_EQ(lin.program->DebugString().find("cos("), std::string::npos)
      << lin.program->DebugString();
  EXPECT_TENSOR_NEAR(lin.outputs[0], sin(matmul(w, x)) + x, 1e-15);
  const Tensor c = cos(matmul(w, x));
  for (uint64_t seed : {27, 28}) {
    const Tensor t = Rand({4}, seed);
    EXPECT_TENSOR_NEAR(lin.jvp_fn({t})[0], c * matmul(w, t) + t, 1e-14);
  }
  // A strided tangent is a new signature: traced again, same answer.
  const Tensor strided = select(Rand({4, 2}, 29), 1, 0);
  EXPECT_TENSOR_NEAR(lin.jvp_fn({strided})[0], c * matmul(w, strided) + strided, 1e-14);
  // As in JAX, jvp_fn is J at the primals as they were: a later write to W is not seen.
  const Tensor w_then = clone(w);
  mul_(w, 2.0);
  const Tensor t = Rand({4}, 30);
  EXPECT_TENSOR_NEAR(lin.jvp_fn({t})[0], c * matmul(w_then, t) + t, 1e-14);
}

TEST(Linearize, AnUntraceableFunctionReplaysJvp) {
  // A random op makes f untraceable (its noise term has a zero derivative here).
  Tensor x = Rand({3}, 31);
  Generator gen(1);
  TensorListFn f = [&gen](const TensorList& a) {
    return TensorList{exp(a[0]) + rand_like(a[0], &gen) * 0.0};
  };
  Linearized lin = linearize(f, {x});
  EXPECT_EQ(lin.program, nullptr);
  EXPECT_TENSOR_NEAR(lin.outputs[0], exp(x), 1e-15);
  const Tensor t = Rand({3}, 32);
  EXPECT_TENSOR_NEAR(lin.jvp_fn({t})[0], exp(x) * t, 1e-15);
}

TEST(JvpWithAux, AuxComesBackWithoutTangent) {
  Tensor x = Rand({3}, 24);
  JvpWithAux r = jvp_with_aux(
      [](const TensorList& a) {
        Tensor y = sin(a[0]);
        return std::pair<TensorList, TensorList>{{y}, {y * 2.0}};
      },
      {x}, {ones_like(x)});
  EXPECT_TENSOR_NEAR(r.tangents[0], cos(x), 1e-15);
  EXPECT_TENSOR_NEAR(r.aux[0], sin(x) * 2.0, 1e-15);
  EXPECT_TRUE(r.aux[0].is_dense());
}

TEST(Jvp, InPlaceOpsOnDualsMatchTheOutOfPlaceFunction) {
  Tensor x = Rand({4}, 27, 0.2, 1.2), w = Rand({4}, 28, 0.2, 1.2);
  Tensor tx = Rand({4}, 29), tw = Rand({4}, 30);
  auto inplace = [](const TensorList& a) {
    Tensor y = a[0] * 2.0;
    add_(y, a[1]);
    mul_(y, a[0]);
    div_(y, a[1]);
    clamp_(y, 0.5, 3.0);
    exp_(y);
    Tensor z = a[1] * 1.0;
    copy_(z, y);
    sub_(z, 1.0);
    return TensorList{z};
  };
  auto out_of_place = [](const TensorList& a) {
    return TensorList{exp(clamp((a[0] * 2.0 + a[1]) * a[0] / a[1], 0.5, 3.0)) - 1.0};
  };
  JvpResult got = jvp(inplace, {x, w}, {tx, tw});
  JvpResult want = jvp(out_of_place, {x, w}, {tx, tw});
  EXPECT_TENSOR_NEAR(got.outputs[0], want.outputs[0], 1e-15);
  EXPECT_TENSOR_NEAR(got.tangents[0], want.tangents[0], 1e-14);
  // fill_ / zero_ make a constant; the dual keeps its identity.
  JvpResult filled = jvp(
      [](const TensorList& a) {
        Tensor y = a[0] * 3.0;
        Tensor same = fill_(y, 2.0);
        EXPECT_TRUE(same.is_same(y));
        return TensorList{y * a[0]};
      },
      {x}, {tx});
  EXPECT_TENSOR_NEAR(filled.tangents[0], tx * 2.0, 1e-15);
}

TEST(Jvp, InPlaceErrors) {
  Tensor x = Rand({3}, 31);
  Tensor captured = zeros({3}, kFloat64);
  const Tensor before = clone(x);
  EXPECT_FT_ERROR(jvp([&captured](const TensorList& a) { return TensorList{add_(captured, a[0])}; },
                      {x}, {ones_like(x)}),
                  "jvp: in-place op 'add_' would write a value carrying a tangent at level");
  EXPECT_FT_ERROR(jvp([](const TensorList& a) { return TensorList{mul_(a[0], 2.0)}; }, {x},
                      {ones_like(x)}),
                  "jvp: in-place op 'mul_' on an input of the transform or a view of one");
  EXPECT_FT_ERROR(jvp([](const TensorList& a) { return TensorList{mul_(select(a[0], 0, 1), 2.0)}; },
                      {x}, {ones_like(x)}),
                  "would modify the caller's tensor");
  EXPECT_TENSOR_EQ(x, before);
  EXPECT_TENSOR_EQ(captured, zeros({3}, kFloat64));
  EXPECT_FT_ERROR(jvp(
                      [](const TensorList& a) {
                        Tensor y = a[0] * 1.0;
                        mul_(select(y, 0, 0), 2.0);
                        return TensorList{y};
                      },
                      {x}, {ones_like(x)}),
                  "jvp: output 0 (shape [3]) was modified in place through a view");
  EXPECT_FT_ERROR(jvp(
                      [](const TensorList& a) {
                        Tensor y = a[0] * 1.0;
                        mul_(select(y, 0, 0), 2.0);
                        return TensorList{y * 2.0};
                      },
                      {x}, {ones_like(x)}),
                  "jvp: 'mul' got a tensor of shape [3] whose value was modified in place "
                  "through a view");
  EXPECT_TRUE(LayerStack::empty());
}

TEST(Jvp, GradcheckHelpersAgreeOnACompositeFunction) {
  auto f = [](const TensorList& a) { return log_softmax(matmul(a[0], tanh(a[1])), -1); };
  TensorList args = {Rand({2, 3}, 25), Rand({3, 4}, 26)};
  GradcheckResult r = jvpcheck(f, args);
  EXPECT_TRUE(r.ok) << r.message;
  r = gradgradcheck(f, args);
  EXPECT_TRUE(r.ok) << r.message;
}

}  // namespace
}  // namespace ft

// checkpoint(f) against closed forms and float64 central differences, under every transform
// and in several orders; the rerun in the backward pass and the replayed random draws.
#include <cmath>
#include <vector>

#include "control_flow/control_flow.h"
#include "dispatch/interpreter.h"
#include "dispatch/ops.h"
#include "gtest/gtest.h"
#include "interpreters/functionalize/functionalize.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::GradCheck;
using testing::GradGradCheck;
using testing::JvpCheck;
using testing::Rand;

// f(x, w) = {sin(x) * w, sum(x * x)}.
TensorList SinTimesW(const TensorList& a) { return {sin(a[0]) * a[1], sum(a[0] * a[0])}; }

Tensor Loss(const TensorListFn& f, const TensorList& a) {
  TensorList o = f(a);
  return sum(o[0]) + o[1] * 0.5;
}

TEST(Checkpoint, SameValuesAndGradientsAndRunsFAgainInBackward) {
  int calls = 0;
  TensorListFn counted = [&calls](const TensorList& a) {
    ++calls;
    return SinTimesW(a);
  };
  TensorListFn ckpt = checkpoint(counted);
  const Tensor x = Rand({3}, 1), w = Rand({3}, 2);
  TensorList out = ckpt({x, w});
  EXPECT_EQ(calls, 1);
  EXPECT_TENSOR_NEAR(out[0], sin(x) * w, 0);
  calls = 0;
  TensorList g = grad(ScalarFn([&](const TensorList& a) { return Loss(ckpt, a); }), {0, 1})(
      {x, w});
  EXPECT_EQ(calls, 2);  // the forward, and the rerun in the backward pass
  EXPECT_TENSOR_NEAR(g[0], cos(x) * w + x, 1e-15);
  EXPECT_TENSOR_NEAR(g[1], sin(x), 1e-15);
}

TEST(Checkpoint, DerivativesOfEveryOrderAgainstFiniteDifferences) {
  TensorListFn ckpt = checkpoint(SinTimesW);
  auto loss = [&ckpt](const TensorList& a) { return Loss(ckpt, a); };
  const TensorList args{Rand({3}, 3), Rand({3}, 4)};
  EXPECT_TRUE(GradCheck(loss, args));
  EXPECT_TRUE(JvpCheck(loss, args));
  EXPECT_TRUE(GradGradCheck(loss, args));
  // hessian and jacfwd(jacrev) against the closed form: d2/dx2 = diag(-sin(x) w + 1).
  const Tensor x = args[0], w = args[1];
  auto of_x = [&ckpt, &w](const TensorList& a) { return Loss(ckpt, {a[0], w}); };
  const Tensor expected = eye(3, kFloat64) * (neg(sin(x)) * w + 1.0);
  EXPECT_TENSOR_NEAR(hessian(of_x)({x})[0], expected, 1e-14);
  EXPECT_TENSOR_NEAR(jacrev([&](const TensorList& a) { return grad(ScalarFn(of_x))(a)[0]; })(
                         {x})[0],
                     expected, 1e-14);
}

TEST(Checkpoint, ComposesWithVmapInBothOrders) {
  TensorListFn ckpt = checkpoint(SinTimesW);
  const Tensor xs = Rand({4, 3}, 5), w = Rand({3}, 6);
  auto loss = [&ckpt, &w](const TensorList& a) { return Loss(ckpt, {a[0], w}); };
  Tensor per_example = vmap(grad(ScalarFn(loss)))({xs})[0];
  Tensor summed = grad(ScalarFn([&](const TensorList& a) {
    return sum(vmap(TensorFn([&](const Tensor& x) { return loss({x}); }))(a[0]));
  }))({xs})[0];
  // d/dx (sum(sin(x) w) + 0.5 sum(x^2)) = cos(x) w + x, per row.
  const Tensor expected = cos(xs) * w + xs;
  EXPECT_TENSOR_NEAR(per_example, expected, 1e-15);
  EXPECT_TENSOR_NEAR(summed, expected, 1e-15);
  // Per-example jvp.
  Tensor t = vmap(TensorListFn([&](const TensorList& a) {
    return jvp(ckpt, {a[0], w}, {a[1], zeros_like(w)}).tangents;
  }))({xs, ones_like(xs)})[0];
  EXPECT_TENSOR_NEAR(t, cos(xs) * w, 1e-15);
}

TEST(Checkpoint, FunctionalizeInsideAndAround) {
  // f writes a local in place; checkpoint of it under functionalize and grad.
  TensorListFn ckpt = checkpoint([](const TensorList& a) {
    Tensor y = clone(a[0]);
    mul_(y, a[0]);
    return TensorList{y};
  });
  const Tensor x = Rand({3}, 7);
  EXPECT_TENSOR_NEAR(functionalize(ckpt)({x})[0], x * x, 0);
  Tensor g = grad(ScalarFn([&](const TensorList& a) {
    return sum(functionalize(ckpt)(a)[0]);
  }))({x})[0];
  EXPECT_TENSOR_NEAR(g, x * 2.0, 1e-15);
}

TEST(Checkpoint, RandomOpsReplayTheSameDraws) {
  // f(x) = dropout(x) * x: the gradient is 2 * mask * x / (1 - p) with the forward's mask.
  Generator gen(123);
  const double p = 0.5;
  TensorListFn f = [&gen, p](const TensorList& a) {
    return TensorList{dropout(a[0], p, true, &gen) * a[0], dropout(a[0], p)};
  };
  TensorListFn ckpt = checkpoint(f, {.generators = {&gen}});
  const Tensor x = Rand({64}, 8, 0.5, 1.5);
  TensorList out;
  Tensor g = grad(ScalarFn([&](const TensorList& a) {
    out = ckpt(a);
    return sum(out[0]) + sum(out[1]);
  }))({x})[0];
  const uint64_t after = gen.offset();
  const Tensor kept = ne(out[0], 0.0), kept_default = ne(out[1], 0.0);
  EXPECT_TENSOR_NEAR(g, where(kept, x * (2.0 / (1 - p)), 0.0) +
                            where(kept_default, scalar_tensor(1.0 / (1 - p), kFloat64), 0.0),
                     1e-14);
  // The rerun did not move the generators on: the next draw is the one without checkpoint.
  Generator fresh(123);
  (void)dropout(x, p, true, &fresh);
  EXPECT_EQ(after, fresh.offset());
}

TEST(Checkpoint, IntegerOutputsPassThrough) {
  TensorListFn ckpt = checkpoint([](const TensorList& a) {
    return TensorList{argmax(a[0]), exp(a[0])};
  });
  const Tensor x = tensor({0.1, 0.9, 0.3});
  Tensor g = grad(ScalarFn([&](const TensorList& a) {
    TensorList o = ckpt(a);
    EXPECT_EQ(o[0].dtype(), kInt64);
    return sum(o[1]);
  }))({x})[0];
  EXPECT_TENSOR_NEAR(g, exp(x), 1e-15);
  EXPECT_FT_ERROR(checkpoint(TensorListFn())({x}), "checkpoint: f must be callable");
  EXPECT_FT_ERROR(ckpt({Tensor()}), "checkpoint: argument 0 is an undefined tensor");
  EXPECT_EQ(LayerStack::size(), 0);
}

}  // namespace
}  // namespace ft

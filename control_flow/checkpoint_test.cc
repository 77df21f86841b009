// checkpoint(f) against closed forms and float64 central differences, under every transform
// and in several orders; the replay in the backward pass (counted at the kernels), captured
// tensors, replayed random draws, the save-matmuls and save-named policies, and its errors.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "control_flow/control_flow.h"
#include "dispatch/dispatch.h"
#include "dispatch/interpreter.h"
#include "gtest/gtest.h"
#include "interpreters/functionalize/functionalize.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
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

// KernelCount counts the base-kernel calls per op while it is installed.
class KernelCount final : public BaseCallObserver {
 public:
  ValueList RunBaseKernel(const Operator& op, ValueList& args) override {
    ++calls[op.name()];
    return op.CallBaseKernel(args);
  }
  std::map<std::string, int> calls;
};

TEST(Checkpoint, SameValuesAndGradientsAndTheBackwardReplaysTheForward) {
  const Tensor x = Rand({3}, 1), w = Rand({3}, 2);
  for (bool use : {false, true}) {
    SCOPED_TRACE(use ? "checkpoint" : "plain");
    TensorListFn f = use ? checkpoint(SinTimesW) : TensorListFn(SinTimesW);
    EXPECT_TENSOR_NEAR(f({x, w})[0], sin(x) * w, 0);
    KernelCount count;
    TensorList g;
    {
      BaseCallObserverScope scope(&count);
      g = grad(ScalarFn([&](const TensorList& a) { return Loss(f, a); }), {0, 1})({x, w});
    }
    EXPECT_TENSOR_NEAR(g[0], cos(x) * w + x, 1e-15);
    EXPECT_TENSOR_NEAR(g[1], sin(x), 1e-15);
    // sin runs in the forward, and again in the backward when the values were not kept.
    EXPECT_EQ(count.calls["sin"], use ? 2 : 1);
  }
}

TEST(Checkpoint, CapturedTensorsGetTheirGradients) {
  const Tensor x = Rand({3}, 1), w0 = Rand({3}, 2);
  Tensor g = grad(TensorFn([&](const Tensor& w) {
    TensorListFn f = checkpoint([&w](const TensorList& a) { return TensorList{sin(a[0]) * w}; });
    return sum(f({x})[0]);
  }))(w0);
  EXPECT_TENSOR_NEAR(g, sin(x), 1e-15);
}

TEST(Checkpoint, DerivativesOfEveryOrderAgainstFiniteDifferences) {
  TensorListFn ckpt = checkpoint(SinTimesW);
  auto loss = [&ckpt](const TensorList& a) { return Loss(ckpt, a); };
  const TensorList args{Rand({3}, 3), Rand({3}, 4)};
  EXPECT_TRUE(GradCheck(loss, args));
  EXPECT_TRUE(JvpCheck(loss, args));
  EXPECT_TRUE(GradGradCheck(loss, args));
  // hessian and jacrev(grad) against the closed form: d2/dx2 = diag(-sin(x) w + 1).
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

TEST(Checkpoint, FunctionalizeAndInPlaceWritesInside) {
  // f writes a tensor it made, in place: the replay writes its own copy again, and the ops
  // that read the tensor before the write get its value from before.
  TensorListFn ckpt = checkpoint([](const TensorList& a) {
    Tensor y = a[0] * 1.0;
    Tensor before = sin(y);
    mul_(y, a[0]);  // y = x^2
    return TensorList{y + before};
  });
  const Tensor x = Rand({3}, 7);
  EXPECT_TENSOR_NEAR(functionalize(ckpt)({x})[0], x * x + sin(x), 1e-15);
  for (bool functional : {false, true}) {
    SCOPED_TRACE(functional ? "grad(functionalize(checkpoint))" : "grad(checkpoint)");
    Tensor g = grad(ScalarFn([&](const TensorList& a) {
      return sum((functional ? functionalize(ckpt) : ckpt)(a)[0]);
    }))({x})[0];
    EXPECT_TENSOR_NEAR(g, x * 2.0 + cos(x), 1e-15);
  }
  // Writing a tensor f did not make would be replayed twice: refused.
  Tensor buffer = zeros({3}, kFloat64);
  EXPECT_FT_ERROR(grad(ScalarFn([&](const TensorList& a) {
                    return sum(checkpoint([&](const TensorList& b) {
                      add_(buffer, 1.0);
                      return TensorList{b[0] * buffer};
                    })(a)[0]);
                  }))({x}),
                  "checkpoint: in-place op 'add_' writes a tensor the checkpointed function did "
                  "not make");
  EXPECT_EQ(LayerStack::size(), 0);
}

TEST(Checkpoint, AnInputModifiedAfterTheCallIsAnErrorAtBackward) {
  const Tensor x = Rand({3}, 8);
  Tensor held = Rand({3}, 9);
  EXPECT_FT_ERROR(grad(ScalarFn([&](const TensorList& a) {
                    Tensor out = checkpoint([&](const TensorList& b) {
                      return TensorList{sin(b[0]) * held};
                    })(a)[0];
                    add_(held, 1.0);  // after the region: the replay would see new values
                    return sum(out);
                  }))({x}),
                  "was modified in place after the function ran");
}

TEST(Checkpoint, RandomOpsReplayTheSameDraws) {
  // f(x) = dropout(x) * x: the gradient is 2 * mask * x / (1 - p) with the forward's mask,
  // for an explicit generator and for the thread's default one.
  Generator gen(123);
  const double p = 0.5;
  TensorListFn ckpt = checkpoint([&gen, p](const TensorList& a) {
    return TensorList{dropout(a[0], p, true, &gen) * a[0], dropout(a[0], p)};
  });
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
  // The replay did not move the generator on: the next draw is the one without checkpoint.
  Generator fresh(123);
  (void)dropout(x, p, true, &fresh);
  EXPECT_EQ(after, fresh.offset());
}

TEST(Checkpoint, SaveMatmulsPolicyRunsEachProductOnce) {
  const Tensor x = Rand({4, 3}, 10), w = Rand({3, 3}, 11);
  auto block = [](const TensorList& a) { return TensorList{tanh(matmul(a[0], a[1]))}; };
  std::map<CheckpointPolicy, TensorList> grads;
  for (CheckpointPolicy policy : {CheckpointPolicy::kSaveNothing, CheckpointPolicy::kSaveMatmuls}) {
    TensorListFn f = checkpoint(block, {.policy = policy});
    KernelCount count;
    {
      BaseCallObserverScope scope(&count);
      grads[policy] = grad(ScalarFn([&](const TensorList& a) { return sum(f(a)[0]); }), {0, 1})(
          {x, w});
    }
    // The forward's product; the replay's (only without the policy); the backward's two.
    EXPECT_EQ(count.calls["mm"] + count.calls["matmul"],
              policy == CheckpointPolicy::kSaveMatmuls ? 3 : 4);
    EXPECT_EQ(count.calls["tanh"], 2);
  }
  for (int k = 0; k < 2; ++k) {
    EXPECT_TENSOR_EQ(grads[CheckpointPolicy::kSaveMatmuls][k],
                     grads[CheckpointPolicy::kSaveNothing][k]);
  }
}

TEST(Checkpoint, SaveNamedPolicyKeepsTheTaggedValues) {
  const Tensor x = Rand({5}, 12);
  auto block = [](const TensorList& a) {
    Tensor s = checkpoint_name(sin(a[0]), "s");
    Tensor c = checkpoint_name(cos(a[0]), "c");
    return TensorList{exp(s * c)};
  };
  for (const std::vector<std::string>& names :
       {std::vector<std::string>{}, {"s"}, {"s", "c"}, {"other"}}) {
    SCOPED_TRACE(absl::StrJoin(names, ","));
    TensorListFn f = checkpoint(block, {.policy = CheckpointPolicy::kSaveNamed, .names = names});
    KernelCount count;
    Tensor g;
    {
      BaseCallObserverScope scope(&count);
      g = grad(ScalarFn([&](const TensorList& a) { return sum(f(a)[0]); }))({x})[0];
    }
    // d/dx exp(sin x cos x) = exp(...) * cos(2x).
    EXPECT_TENSOR_NEAR(g, exp(sin(x) * cos(x)) * cos(x * 2.0), 1e-14);
    const bool keeps_s = std::count(names.begin(), names.end(), "s") > 0;
    const bool keeps_c = std::count(names.begin(), names.end(), "c") > 0;
    // The forward's call, the replay's unless kept; the backward reads cos(x) and sin(x)
    // for the formulas of sin and cos (one each).
    EXPECT_EQ(count.calls["sin"], (keeps_s ? 1 : 2) + 1);
    EXPECT_EQ(count.calls["cos"], (keeps_c ? 1 : 2) + 1);
    EXPECT_EQ(count.calls["exp"], 2);  // never tagged: recomputed
  }
  // Outside a checkpoint, or without a grad level, it returns its argument.
  EXPECT_TRUE(checkpoint_name(x, "s").is_same(x));
}

TEST(Checkpoint, IntegerOutputsPassThroughAndErrors) {
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

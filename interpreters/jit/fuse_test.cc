// Tests of pointwise fusion, the pass (fuse.h): which steps of a program form a run, what a
// run returns, preludes, ordering around writes, and whole programs (a Hessian, relu and
// activation gradients, ft::jit) fused. Two oracles: the same function run eagerly, op by op,
// on the replay's inputs (the separate kernels fusion replaces; fused results must match
// them bit for bit), and closed forms computed with loops over the elements.
#include "interpreters/jit/fuse.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cpu/cpu_capability.h"
#include "dispatch/value.h"
#include "gtest/gtest.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jit/fuse_test_util.h"
#include "interpreters/jit/jit.h"
#include "interpreters/jit/trace.h"
#include "interpreters/jvp/jvp.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::At;
using testing::Chain;
using testing::CountFused;
using testing::ExpectReplayKeepsTheKernelsBits;
using testing::ExpectSameBits;
using testing::Rand;
using testing::ScopedCpuCapability;

// ExpectOnlyInFusedSteps: no step of `program` (its DebugString) outside a fused step
// computes one of `ops` ("= mul(" and the like).
void ExpectOnlyInFusedSteps(const std::string& program, std::initializer_list<const char*> ops) {
  for (absl::string_view line : absl::StrSplit(program, '\n')) {
    if (absl::StrContains(line, "fused[")) continue;
    for (const char* op : ops) {
      EXPECT_FALSE(absl::StrContains(line, op)) << line << " outside a fused step\n" << program;
    }
  }
}

// TraceUnfused traces f as Trace does, with pointwise fusion off: the program fusion
// rewrites, for comparing against.
TraceResult TraceUnfused(const TensorListFn& f, const TensorList& args) {
  TraceOptions off;
  off.fuse_pointwise = false;
  return Trace(f, args, off);
}

TEST(FuseTest, ResultsReadOutsideARunAreItsOutputs) {
  // u is returned and read by cumsum (not pointwise), whose result feeds more arithmetic:
  // the first run ends before cumsum and keeps u and v; the second run comes after.
  const auto f = [](const TensorList& a) {
    const Tensor u = a[0] * a[1];
    const Tensor v = u + a[1];
    const Tensor w = cumsum(u, 1) * v - a[0];
    return TensorList{u, w * w};
  };
  const TensorList traced_args = {Rand({4, 5}, 1), Rand({4, 5}, 2)};
  TraceResult t = Trace(f, traced_args);
  ASSERT_NE(t.program, nullptr) << t.reason;
  EXPECT_EQ(CountFused(*t.program), 2) << t.program->DebugString();
  EXPECT_EQ(t.program->num_steps(), 3) << t.program->DebugString();
  const TensorList args = {Rand({4, 5}, 3), Rand({4, 5}, 4)};
  const TensorList replayed = t.program->Run(args), eager = f(args);
  ExpectSameBits(replayed[0], eager[0]);
  ExpectSameBits(replayed[1], eager[1]);
  const std::vector<double> x = args[0].to_vector<double>(), y = args[1].to_vector<double>();
  std::vector<double> expected;
  double running = 0;  // cumsum(u, 1): restarts at every row of 5
  for (size_t i = 0; i < x.size(); ++i) {
    running = (i % 5 == 0 ? 0.0 : running) + x[i] * y[i];
    const double w = running * (x[i] * y[i] + y[i]) - x[i];
    expected.push_back(w * w);
  }
  EXPECT_TENSOR_NEAR(replayed[1], tensor(expected, {4, 5}), 1e-12);
}

TEST(FuseTest, ASmallerShapeReadOnlyByOneRunBecomesItsPrelude) {
  // Arithmetic on [5] and on [3, 5] interleaved: one run per shape; the [3, 5] run reads
  // the [5] run's result, which closes the [5] run first. Both [5] runs are read only by
  // the [3, 5] run: they become its prelude, computed once per call.
  const auto f = [](const TensorList& a) {
    const Tensor r = square(a[1]) - a[1];  // [5]
    const Tensor m = a[0] * r;             // [3, 5]
    const Tensor r2 = r * a[1];            // [5], after m: a new [5] run
    return TensorList{(m + a[0]) * r2};
  };
  ExpectReplayKeepsTheKernelsBits(
      f, [](uint64_t seed) { return TensorList{Rand({3, 5}, seed), Rand({5}, seed + 1)}; }, 1,
      [](const TensorList& a, int64_t i) {
        const double x = At(a[0], i), y = At(a[1], i % 5), r = y * y - y;
        return (x * r + x) * (r * y);
      });
  TraceResult t = Trace(f, {Rand({3, 5}, 1), Rand({5}, 2)});
  ASSERT_NE(t.program, nullptr) << t.reason;
  EXPECT_NE(t.program->DebugString().find("prelude[5]"), std::string::npos)
      << t.program->DebugString();
  // g also subtracts from square(a[1]), which the replay shares with r's run: that run's
  // results are read outside the [3, 5] run, so it stays a step of its own; r2's run is
  // still the prelude. Three fused steps: r's run, the [3, 5] run, g's second output.
  const auto g = [&f](const TensorList& a) {
    return TensorList{f(a)[0], square(a[1]) - 2.0 * a[1]};
  };
  t = Trace(g, {Rand({3, 5}, 1), Rand({5}, 2)});
  ASSERT_NE(t.program, nullptr) << t.reason;
  EXPECT_EQ(CountFused(*t.program), 3) << t.program->DebugString();
  EXPECT_NE(t.program->DebugString().find("prelude[5] { r3 = mul(r0, r1) }"),
            std::string::npos);
  const TensorList args = {Rand({3, 5}, 3), Rand({5}, 4)};
  const TensorList replayed = t.program->Run(args), eager = g(args);
  ExpectSameBits(replayed[0], eager[0]);
  ExpectSameBits(replayed[1], eager[1]);
}

TEST(FuseTest, PromotionIntegersAndWritesAreNotFused) {
  // float32 * float64 promotes: the kernels convert, so those steps stay kernels.
  const auto mixed = [](const TensorList& a) { return TensorList{(a[0] * a[1]) * a[1]}; };
  TraceResult t = Trace(mixed, {to(Rand({4}, 1), kFloat32), Rand({4}, 2)});
  ASSERT_NE(t.program, nullptr);
  EXPECT_EQ(CountFused(*t.program), 0) << t.program->DebugString();
  // int64 arithmetic wraps in the kernels: never fused.
  const auto ints = [](const TensorList& a) { return TensorList{(a[0] * a[0]) + a[0]}; };
  t = Trace(ints, {tensor(std::vector<int64_t>{1, 2, 3})});
  ASSERT_NE(t.program, nullptr);
  EXPECT_EQ(CountFused(*t.program), 0) << t.program->DebugString();
  EXPECT_EQ(t.program->Run({tensor(std::vector<int64_t>{4, 5, 6})})[0].to_vector<int64_t>(),
            (std::vector<int64_t>{20, 30, 42}));
  // A program with an in-place write keeps its order: nothing fuses.
  const auto writes = [](const TensorList& a) {
    Tensor y = a[0] * a[0];
    add_(y, a[0]);
    return TensorList{y * a[0] + a[0]};
  };
  t = Trace(writes, {Rand({4}, 3)});
  ASSERT_NE(t.program, nullptr) << t.reason;
  EXPECT_EQ(CountFused(*t.program), 0) << t.program->DebugString();
  const Tensor x = Rand({4}, 4);
  ExpectSameBits(t.program->Run({x})[0], writes({x})[0]);
}

TEST(FuseTest, StepsBeforeTheFirstWriteFuse) {
  // Writes only at the end (jit(functionalize(f)) writing an input back): the run before
  // them fuses, the write stays a kernel after it and sees the run's result.
  const auto trailing = [](const TensorList& a) {
    Tensor y = (a[0] * 2.0 + 1.0) * a[0];
    copy_(a[0], y);
    return TensorList{y - a[1]};
  };
  TraceResult t = Trace(trailing, {Rand({300}, 1), Rand({300}, 2)});
  ASSERT_NE(t.program, nullptr) << t.reason;
  EXPECT_EQ(CountFused(*t.program), 1) << t.program->DebugString();
  EXPECT_NE(t.program->DebugString().find("copy_"), std::string::npos);
  const Tensor x = Rand({300}, 3), w = Rand({300}, 4);
  Tensor x_replay = clone(x), x_eager = clone(x);
  const Tensor replayed = t.program->Run({x_replay, w})[0];
  const Tensor eager = trailing({x_eager, w})[0];
  ExpectSameBits(replayed, eager);
  ExpectSameBits(x_replay, x_eager);
  // A write in the middle: only the steps before it fuse; after it, one kernel per op, in
  // order, reading the written buffer.
  const auto middle = [](const TensorList& a) {
    Tensor y = a[0] * 2.0 + 1.0;
    add_(y, a[0]);
    return TensorList{(y * 3.0 - a[0]) * y};
  };
  t = Trace(middle, {Rand({300}, 5)});
  ASSERT_NE(t.program, nullptr) << t.reason;
  EXPECT_EQ(CountFused(*t.program), 1) << t.program->DebugString();
  EXPECT_EQ(t.program->num_steps(), 5) << t.program->DebugString();
  const Tensor z = Rand({300}, 6);
  ExpectSameBits(t.program->Run({z})[0], middle({z})[0]);
}

TEST(FuseTest, TheHessianProgramIsTheUnfusedProgramBitForBit) {
  // float32 Hessian of sum(tanh(W x)^2), n = 16: the benchmark's program. Fused and unfused
  // replays of one trace's calls on a new input agree exactly, and with the closed form.
  const Tensor w = to(Rand({16, 16}, 1), kFloat32);
  const TensorListFn h =
      hessian([w](const TensorList& a) { return sum(square(tanh(matmul(w, a[0])))); });
  const Tensor x0 = to(Rand({16}, 2), kFloat32);
  TraceResult fused = Trace(h, {x0});
  TraceResult unfused = TraceUnfused(h, {x0});
  ASSERT_NE(fused.program, nullptr) << fused.reason;
  ASSERT_NE(unfused.program, nullptr) << unfused.reason;
  EXPECT_LT(fused.program->num_steps(), unfused.program->num_steps() - 8)
      << fused.program->DebugString();
  // tanh(W x) is computed inside the fused step's prelude, not by a kernel of its own.
  EXPECT_NE(fused.program->DebugString().find("prelude[16] { r5 = tanh(r0)"), std::string::npos)
      << fused.program->DebugString();
  const Tensor x = to(Rand({16}, 3), kFloat32);
  const Tensor got = fused.program->Run({x})[0];
  ExpectSameBits(got, unfused.program->Run({x})[0]);
  ExpectSameBits(got, h({x})[0]);
}

TEST(FuseTest, ReluGradientsFuseIntoOnePass) {
  // The vjp of relu is where(gt(y, 0), g, 0): with it, the gradient of a relu chain and the
  // jvp through it have no kernel step left between the matmuls. Fused, unfused and eager
  // agree bit for bit; the gradient matches finite differences.
  const Tensor w = Rand({32, 32}, 1);
  const auto loss = [w](const TensorList& a) {
    const Tensor h = relu(matmul(a[0], w));
    return sum(square(relu(h * 0.5 - 0.1) + abs(h)));
  };
  const TensorListFn g = grad(loss);
  const Tensor x0 = Rand({8, 32}, 2);
  TraceResult fused = Trace(g, {x0});
  TraceResult unfused = TraceUnfused(g, {x0});
  ASSERT_NE(fused.program, nullptr) << fused.reason;
  ASSERT_NE(unfused.program, nullptr) << unfused.reason;
  // Forward: one pass between the matmul and the sum; backward: one between ones_like's
  // broadcast and the last matmul. No pointwise step of the unfused program is left alone.
  const std::string program = fused.program->DebugString();
  EXPECT_EQ(CountFused(*fused.program), 2) << program;
  ExpectOnlyInFusedSteps(program,
                         {"= where(", "= gt(", "= relu(", "= abs(", "= sign(", "= mul("});
  const Tensor x = Rand({8, 32}, 3);
  const Tensor got = fused.program->Run({x})[0];
  ExpectSameBits(got, unfused.program->Run({x})[0]);
  ExpectSameBits(got, g({x})[0]);
  EXPECT_TRUE(testing::GradCheck(loss, {x}));
}

TEST(FuseTest, ActivationsAndTheirGradientsFuseWithTheirConstants) {
  // Activations with constants (softplus's beta and threshold, leaky_relu's slope, gelu's tanh
  // form, elu's alpha, clamp's bounds) fuse with the arithmetic around them, and so do their vjp
  // formulas (sigmoid, tanh, erf, where, elu's exp(clamp(x, None, 0)), ...): no activation or
  // pointwise step is left alone between the matmul and the sum, forward or backward. Fused,
  // unfused and eager agree bit for bit at every capability; the gradient matches finite
  // differences.
  const Tensor w = Rand({32, 32}, 1);
  const auto loss = [w](const TensorList& a) {
    const Tensor h = matmul(a[0], w);
    const Tensor u = softplus(gelu(h, "tanh"), 1.5, 2.0) + leaky_relu(silu(h), 0.2) +
                     mish(h * 0.5) - gelu(h) * logsigmoid(h) + elu(h, 0.7) +
                     clamp(h, std::nullopt, 0.5) + hardtanh(h, -0.5, 0.5) * clamp(h, -1.0, 1.0);
    return sum(square(u));
  };
  const TensorListFn g = grad(loss);
  const Tensor x0 = Rand({8, 32}, 2);
  TraceResult fused = Trace(g, {x0});
  TraceResult unfused = TraceUnfused(g, {x0});
  ASSERT_NE(fused.program, nullptr) << fused.reason;
  ASSERT_NE(unfused.program, nullptr) << unfused.reason;
  const std::string program = fused.program->DebugString();
  EXPECT_TRUE(absl::StrContains(program, "softplus(r")) << program;
  // One pass between the matmul and the sum, one between ones_like's broadcast and the
  // last matmul.
  EXPECT_EQ(CountFused(*fused.program), 2) << program;
  ExpectOnlyInFusedSteps(program, {"= gelu(", "= softplus(", "= leaky_relu(", "= silu(",
                                   "= mish(", "= logsigmoid(", "= sigmoid(", "= where(", "= mul(",
                                   "= add(", "= elu(", "= clamp(", "= exp(", "= le(",
                                   "= hardtanh(", "= logical_and(", "= gt(", "= lt(", "= ge("});
  for (CpuCapability level : SupportedCpuCapabilities()) {
    ScopedCpuCapability scoped(level);
    const Tensor x = Rand({8, 32}, 3);
    const Tensor got = fused.program->Run({x})[0];
    ExpectSameBits(got, unfused.program->Run({x})[0]);
    ExpectSameBits(got, g({x})[0]);
  }
  EXPECT_TRUE(testing::GradCheck(loss, {to(Rand({8, 32}, 4), kFloat64)}));
}

TEST(FuseTest, JitFusesByDefault) {
  JitFunction j = jit(&Chain);
  const TensorList args = {Rand({3, 9}, 1) + 2.0, Rand({9}, 2) + 2.0, Rand({}, 3)};
  j(args);
  EXPECT_EQ(CountFused(*j.program(args)), 1);
  const TensorList next = {Rand({3, 9}, 4) + 2.0, Rand({9}, 5) + 2.0, Rand({}, 6)};
  ExpectSameBits(j(next)[0], Chain(next)[0]);
}

}  // namespace
}  // namespace ft

// Tests of ft::jit and Trace/Program. The oracles are closed forms computed with loops over
// the elements (Jacobians, Hessians, per-sample gradients), and the eager function run on
// the same new inputs: a replay runs only recorded kernels, the eager call runs the whole
// transform machinery, so agreement on inputs the trace never saw is a real check.
#include "interpreters/jit/jit.h"

#include <cmath>
#include <thread>
#include <vector>

#include "autograd/grad_mode.h"
#include "custom_function/function.h"
#include "dispatch/interpreter.h"
#include "gtest/gtest.h"
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

using testing::Rand;

// J of f(x) = sin(W x) + x: J[i][j] = cos((W x)_i) W[i][j] + [i == j].
Tensor SinJacobian(const Tensor& w, const Tensor& x) {
  const int64_t n = x.size(0);
  std::vector<double> wv = w.to_vector<double>(), xv = x.to_vector<double>(), j(n * n);
  for (int64_t i = 0; i < n; ++i) {
    double wx = 0;
    for (int64_t k = 0; k < n; ++k) wx += wv[i * n + k] * xv[k];
    for (int64_t c = 0; c < n; ++c) j[i * n + c] = std::cos(wx) * wv[i * n + c] + (i == c);
  }
  return tensor(j, {n, n});
}

// H of g(x) = sum(tanh(W x)^2): H = W^T diag(2 (1 - t^2)(1 - 3 t^2)) W with t = tanh(W x).
Tensor Tanh2Hessian(const Tensor& w, const Tensor& x) {
  const int64_t n = x.size(0);
  std::vector<double> wv = w.to_vector<double>(), xv = x.to_vector<double>(), d(n), h(n * n);
  for (int64_t i = 0; i < n; ++i) {
    double wx = 0;
    for (int64_t k = 0; k < n; ++k) wx += wv[i * n + k] * xv[k];
    const double t = std::tanh(wx);
    d[i] = 2 * (1 - t * t) * (1 - 3 * t * t);
  }
  for (int64_t a = 0; a < n; ++a) {
    for (int64_t b = 0; b < n; ++b) {
      double s = 0;
      for (int64_t i = 0; i < n; ++i) s += wv[i * n + a] * d[i] * wv[i * n + b];
      h[a * n + b] = s;
    }
  }
  return tensor(h, {n, n});
}

TensorFnOfList SinTarget(const Tensor& w) {
  return [w](const TensorList& a) { return sin(matmul(w, a[0])) + a[0]; };
}

TEST(JitTest, JacrevReplaysMatchTheClosedFormOnNewInputs) {
  const Tensor w = Rand({6, 6}, 1);
  JitFunction j = jit(jacrev(SinTarget(w)));
  for (uint64_t seed = 2; seed < 6; ++seed) {
    const Tensor x = Rand({6}, seed);
    EXPECT_TENSOR_NEAR(j({x})[0], SinJacobian(w, x), 1e-12);
  }
  const JitStats s = j.stats();
  EXPECT_EQ(s.traces, 1);
  EXPECT_EQ(s.replays, 3);
  EXPECT_EQ(s.programs, 1);
  EXPECT_EQ(s.eager_calls, 0);
}

TEST(JitTest, JacfwdAndHessianReplaysMatchTheClosedForm) {
  const Tensor w = Rand({5, 5}, 7);
  JitFunction jf = jit(jacfwd(SinTarget(w)));
  JitFunction h =
      jit(hessian([w](const TensorList& a) { return sum(square(tanh(matmul(w, a[0])))); }));
  for (uint64_t seed = 8; seed < 11; ++seed) {
    const Tensor x = Rand({5}, seed);
    EXPECT_TENSOR_NEAR(jf({x})[0], SinJacobian(w, x), 1e-12);
    EXPECT_TENSOR_NEAR(h({x})[0], Tanh2Hessian(w, x), 1e-10);
  }
  EXPECT_EQ(jf.stats().replays, 2);
  EXPECT_EQ(h.stats().replays, 2);
}

TEST(JitTest, FoldsTheBasisAndDropsTheForwardValue) {
  const Tensor w = Rand({4, 4}, 1), x = Rand({4}, 2);
  JitFunction j = jit(jacrev(SinTarget(w)));
  j({x});
  std::shared_ptr<const Program> p = j.program({x});
  ASSERT_NE(p, nullptr) << j.untraceable_reason({x});
  // The traced run built the basis, the vjp and the forward sin; the replay keeps W x, its
  // cosine, the scaled basis, one product with W and the identity term.
  EXPECT_GT(p->num_traced_calls(), p->num_steps());
  EXPECT_LE(p->num_steps(), 6) << p->DebugString();
  EXPECT_EQ(p->DebugString().find("sin("), std::string::npos) << p->DebugString();
}

TEST(JitTest, PerSampleGradientsMatchALoopOfClosedForms) {
  // loss(w; x) = sum(tanh(w . x)), so d/dw = (1 - tanh(w . x)^2) x per example.
  const Tensor w = Rand({3}, 1), xs = Rand({8, 3}, 2);
  auto loss = [](const TensorList& a) { return sum(tanh(sum(a[0] * a[1]))); };
  JitFunction per_sample = jit([&](const TensorList& a) {
    return vmap(grad(loss, {0}), {std::nullopt, 0})(a);
  });
  for (uint64_t seed = 2; seed < 5; ++seed) {
    const Tensor batch = Rand({8, 3}, seed);
    const Tensor g = per_sample({w, batch})[0];
    const std::vector<double> wv = w.to_vector<double>(), xv = batch.to_vector<double>();
    std::vector<double> expected(24);
    for (int b = 0; b < 8; ++b) {
      double dot = 0;
      for (int i = 0; i < 3; ++i) dot += wv[i] * xv[b * 3 + i];
      const double t = std::tanh(dot);
      for (int i = 0; i < 3; ++i) expected[b * 3 + i] = (1 - t * t) * xv[b * 3 + i];
    }
    EXPECT_TENSOR_NEAR(g, tensor(expected, {8, 3}), 1e-12);
  }
  EXPECT_EQ(per_sample.stats().replays, 2);
}

TEST(JitTest, EachSignatureGetsItsOwnTrace) {
  JitFunction j = jit([](const TensorList& a) { return TensorList{exp(a[0]) * a[0]}; });
  const Tensor x = Rand({2, 3}, 1);
  j({x});
  j({Rand({2, 3}, 2)});                       // same signature: replay
  const Tensor y = Rand({4}, 3);
  EXPECT_TENSOR_NEAR(j({y})[0], exp(y) * y, 0);   // new size
  const Tensor f = to(x, kFloat32);
  EXPECT_TENSOR_NEAR(j({f})[0], exp(f) * f, 0);   // new dtype
  const Tensor t = transpose(Rand({3, 2}, 4), 0, 1);
  EXPECT_TENSOR_NEAR(j({t})[0], exp(t) * t, 0);   // new strides
  const Tensor t2 = transpose(Rand({3, 2}, 5), 0, 1);
  EXPECT_TENSOR_NEAR(j({t2})[0], exp(t2) * t2, 0);
  {
    NoGradGuard no_grad;  // the modes are part of the signature
    j({x});
  }
  const JitStats s = j.stats();
  EXPECT_EQ(s.traces, 5);
  EXPECT_EQ(s.replays, 2);
}

TEST(JitTest, InputsThatShareABufferAreTheirOwnSignature) {
  JitFunction j = jit([](const TensorList& a) {
    mul_(a[0], 2.0);  // when a[1] is a[0], it sees the write
    return TensorList{a[0] + a[1]};
  });
  const Tensor x = Rand({3}, 1), y = Rand({3}, 2);
  const Tensor x_expected = x * 2.0 + y;
  EXPECT_TENSOR_NEAR(j({clone(x), y})[0], x_expected, 0);
  const Tensor s = Rand({3}, 3);
  const Tensor s_expected = s * 4.0;
  const Tensor shared = clone(s);
  EXPECT_TENSOR_NEAR(j({shared, shared})[0], s_expected, 0);
  const Tensor shared2 = clone(s);
  EXPECT_TENSOR_NEAR(j({shared2, shared2})[0], s_expected, 0);  // replayed, still aliased
  EXPECT_EQ(j.stats().traces, 2);
  EXPECT_EQ(j.stats().replays, 1);
}

TEST(JitTest, ReplaysReadCapturedTensorsAsTheyAreThen) {
  Tensor w = Rand({4, 4}, 1);
  const Tensor x = Rand({4}, 2);
  JitFunction j = jit(jacrev(SinTarget(w)));
  j({x});
  mul_(w, 0.5);  // an optimizer step on a captured weight, in place
  EXPECT_TENSOR_NEAR(j({x})[0], SinJacobian(w, x), 1e-12);
  EXPECT_EQ(j.stats().replays, 1);
}

TEST(JitTest, AViewOfACapturedTensorIsACapturedConstant) {
  // f reads w^T: the program keeps that view of w's buffer as a constant (no view step
  // rebuilds it each call), and a replay still sees an in-place update of w. The returned
  // view of w stays a step: each call returns a tensor of its own over w's buffer.
  Tensor w = Rand({3, 3}, 1);
  JitFunction j = jit([&w](const TensorList& a) {
    return TensorList{matmul(transpose(w, 0, 1), a[0]), transpose(w, 0, 1)};
  });
  const Tensor x = Rand({3}, 2);
  const TensorList first = j({x});
  const std::string listing = j.program({x})->DebugString();
  size_t views = 0;
  for (size_t at = listing.find("view("); at != std::string::npos;
       at = listing.find("view(", at + 1)) {
    ++views;
  }
  EXPECT_EQ(views, 1u) << listing;
  mul_(w, 0.5);  // in place, between calls
  const TensorList second = j({x});
  const std::vector<double> wv = w.to_vector<double>(), xv = x.to_vector<double>();
  std::vector<double> expected(3, 0.0);
  for (int i = 0; i < 3; ++i) {
    for (int k = 0; k < 3; ++k) expected[i] += wv[k * 3 + i] * xv[k];
  }
  const std::vector<double> got = second[0].to_vector<double>();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], expected[i], 1e-15) << i;
  EXPECT_TRUE(second[1].storage().is_same(w.storage()));
  EXPECT_NE(second[1].impl(), first[1].impl());
  EXPECT_TENSOR_EQ(second[1], transpose(w, 0, 1));
  EXPECT_EQ(j.stats().replays, 1);
}

TEST(JitTest, ATensorPassedAndCapturedIsBothAnInputAndAConstant) {
  const Tensor w = Rand({3}, 1);
  JitFunction j = jit([&w](const TensorList& a) { return TensorList{a[0] * w}; });
  j({w});  // traced with the captured tensor itself as the input
  const Tensor v = Rand({3}, 2);
  EXPECT_TENSOR_NEAR(j({v})[0], v * w, 0);  // not v * v
  EXPECT_EQ(j.stats().replays, 1);
}

TEST(JitTest, FoldCapturedMakesCapturedTensorsConstants) {
  Tensor w = Rand({3}, 1), total = zeros({3}, kFloat64);
  JitFunction j = jit(
      [&](const TensorList& a) {
        add_(total, a[0]);                    // written: stays the caller's tensor
        return TensorList{a[0] * exp(w)};     // exp(w) is folded, w snapshot
      },
      TraceOptions{.fold_captured = true});
  const Tensor x = Rand({3}, 2), ew = exp(w);
  j({x});
  const std::string listing = j.program({x})->DebugString();
  EXPECT_EQ(listing.find("exp("), std::string::npos) << listing;
  mul_(w, 2.0);  // not seen: the program uses w as traced
  const Tensor y = Rand({3}, 3);
  EXPECT_TENSOR_NEAR(j({y})[0], y * ew, 0);
  EXPECT_TENSOR_NEAR(total, x + y, 1e-15);  // the writes reached it on both calls
  // A returned snapshot is the caller's own copy.
  JitFunction ret = jit([&w](const TensorList& a) { return TensorList{a[0] + 1.0, w}; },
                        TraceOptions{.fold_captured = true});
  const Tensor w_then = clone(w);
  ret({x});
  add_(ret({x})[1], 5.0);
  EXPECT_TENSOR_EQ(ret({x})[1], w_then);
}

TEST(JitTest, FusedStepsReadASnapshotWithItsOwnLayout) {
  // A frozen capture is kept as a contiguous clone; a fused run reading it used to plan its
  // loads with the strides of the traced view (transposed, expanded) and read past the
  // clone's buffer or read the wrong elements (found by transforms_fuzzer under linearize).
  const Tensor base = Rand({4, 8}, 1);
  const Tensor transposed = transpose(base, 0, 1);      // [8, 4], strides {1, 8}
  const Tensor every_other = slice(Rand({8, 8}, 2), 1, 0, 8, 2);  // strides {8, 2}
  for (const Tensor& w : {transposed, every_other}) {
    JitFunction j = jit([&w](const TensorList& a) { return TensorList{neg(a[0] * w) + w}; },
                        TraceOptions{.fold_captured = true});
    const Tensor x = Rand({8, 4}, 3);
    const Tensor expected = neg(x * w) + w;
    EXPECT_TENSOR_NEAR(j({x})[0], expected, 0);
    EXPECT_TENSOR_NEAR(j({x})[0], expected, 0);  // the replay
    EXPECT_EQ(j.stats().replays, 1);
  }
}

TEST(JitTest, AWeightMadeOnAnotherThreadIsCaptured) {
  // Allocation marks are per thread: a buffer from another thread is never "made inside f",
  // even when that thread has allocated more than this one.
  Tensor w;
  std::thread([&w] {
    for (int i = 0; i < 1000; ++i) w = Rand({4}, 1);
  }).join();
  JitFunction j = jit([&w](const TensorList& a) { return TensorList{a[0] * exp(w)}; });
  const Tensor x = Rand({4}, 2);
  j({x});
  mul_(w, 0.5);
  EXPECT_TENSOR_NEAR(j({x})[0], x * exp(w), 0);  // not folded with the old w
  EXPECT_EQ(j.stats().replays, 1);
}

TEST(JitTest, InPlaceWritesReplayLikeEagerCalls) {
  Tensor total = zeros({3}, kFloat64);  // made before the trace: captured, written each call
  JitFunction j = jit([&total](const TensorList& a) {
    Tensor scratch = a[0] * 3.0;  // made inside from an input: recomputed by the replay
    add_(scratch, 1.0);
    add_(total, scratch);
    zero_(a[0]);                 // the caller's input, as an eager call would
    return TensorList{scratch};
  });
  const Tensor x1 = Rand({3}, 1), x2 = Rand({3}, 2);
  const Tensor e1 = x1 * 3.0 + 1.0, e2 = x2 * 3.0 + 1.0;
  Tensor in1 = clone(x1), in2 = clone(x2);
  EXPECT_TENSOR_NEAR(j({in1})[0], e1, 1e-15);
  EXPECT_TENSOR_NEAR(j({in2})[0], e2, 1e-15);
  EXPECT_TENSOR_NEAR(total, e1 + e2, 1e-15);
  EXPECT_TENSOR_EQ(in2, zeros({3}, kFloat64));
  EXPECT_EQ(j.stats().replays, 1);
}

TEST(JitTest, OutputsMadeByFactoriesAreFreshEachCall) {
  JitFunction j = jit([](const TensorList& a) { return TensorList{a[0] * 2.0, ones({2})}; });
  const Tensor x = Rand({2}, 1);
  TensorList first = j({x});
  add_(first[1], 5.0);
  TensorList second = j({x});
  EXPECT_TENSOR_EQ(second[1], ones({2}));
  EXPECT_EQ(j.stats().replays, 1);
}

TEST(JitTest, OutputsKeepTheirAliasing) {
  JitFunction j = jit([](const TensorList& a) {
    return TensorList{a[0], transpose(a[0], 0, 1), reshape(a[0], {-1})};
  });
  j({Rand({2, 3}, 1)});
  const Tensor y = Rand({2, 3}, 2);
  TensorList out = j({y});
  EXPECT_TRUE(out[0].storage().is_same(y.storage()));
  EXPECT_TRUE(out[1].storage().is_same(y.storage()));
  EXPECT_TENSOR_EQ(out[1], transpose(y, 0, 1));
  EXPECT_TENSOR_EQ(out[2], reshape(y, {-1}));
  EXPECT_EQ(j.stats().replays, 1);
}

TEST(JitTest, RepeatedCallsAreMergedButReturnedTensorsStaySeparate) {
  JitFunction j = jit([](const TensorList& a) {
    const Tensor twice = exp(a[0]) + exp(a[0]);  // the second exp is the first one's result
    return TensorList{twice, exp(a[0] * 2.0), exp(a[0] * 2.0)};
  });
  j({Rand({3}, 1)});
  const Tensor y = Rand({3}, 2);
  TensorList out = j({y});
  EXPECT_TENSOR_NEAR(out[0], exp(y) * 2.0, 1e-15);
  EXPECT_FALSE(out[1].storage().is_same(out[2].storage()));  // two results eagerly
  add_(out[1], 1.0);
  EXPECT_TENSOR_NEAR(out[2], exp(y * 2.0), 1e-15);
  const std::string listing = j.program(TensorList{y})->DebugString();
  size_t exps = 0;
  for (size_t at = listing.find("exp("); at != std::string::npos; at = listing.find("exp(", at + 1)) {
    ++exps;
  }
  EXPECT_EQ(exps, 3u) << listing;  // exp(a), and the two returned exp(2a)
}

// Each untraceable function gives the eager answer on every call, and says why.
void ExpectUntraceable(JitFunction j, const std::function<TensorList(const TensorList&)>& f,
                       const std::vector<TensorList>& calls, const std::string& why) {
  for (const TensorList& args : calls) {
    const TensorList got = j(args);
    const TensorList want = f(args);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_TENSOR_EQ(got[i], want[i]);
  }
  EXPECT_EQ(j.stats().untraceable, 1);
  EXPECT_EQ(j.stats().programs, 0);
  EXPECT_EQ(j.program(calls[0]), nullptr);
  EXPECT_NE(j.untraceable_reason(calls[0]).find(why), std::string::npos)
      << j.untraceable_reason(calls[0]);
}

TEST(JitTest, BranchingOnValuesIsNotReplayed) {
  auto f = [](const TensorList& a) {
    return TensorList{sum(a[0]).item<double>() > 0 ? a[0] * 2.0 : -a[0]};
  };
  ExpectUntraceable(jit(f), f, {{Rand({3}, 1, 0.1, 1.0)}, {Rand({3}, 2, -1.0, -0.1)}},
                    "item()");
}

TEST(JitTest, RandomOpsAreNotReplayed) {
  Generator gen(3);
  auto f = [&gen](const TensorList& a) { return TensorList{a[0] + rand_like(a[0], &gen)}; };
  JitFunction j = jit(f);
  const Tensor x = Rand({3}, 1);
  Generator check(3);
  EXPECT_TENSOR_EQ(j({x})[0], x + rand_like(x, &check));
  EXPECT_TENSOR_EQ(j({x})[0], x + rand_like(x, &check));  // a new draw, as eagerly
  EXPECT_EQ(j.stats().untraceable, 1);
  EXPECT_NE(j.untraceable_reason({x}).find("rand_like draws random numbers"), std::string::npos)
      << j.untraceable_reason({x});
}

TEST(JitTest, RandomOpsUnderVmapAreNotReplayed) {
  // vmap's random rule runs the kernel with every transform excluded; the tracer still sees it.
  Generator gen(4);
  JitFunction j = jit([&gen](const TensorList& a) {
    return vmap(TensorListFn([&gen](const TensorList& b) {
                  return TensorList{b[0] + rand_like(b[0], &gen)};
                }),
                0, 0, Randomness::kDifferent)(a);
  });
  const Tensor xs = Rand({2, 3}, 1);
  const Tensor first = j({xs})[0];
  const Tensor second = j({xs})[0];
  EXPECT_FALSE(static_cast<bool>(testing::TensorEqual(first, second)));  // fresh draws
  EXPECT_EQ(j.stats().untraceable, 1);
  EXPECT_NE(j.untraceable_reason({xs}).find("random"), std::string::npos)
      << j.untraceable_reason({xs});
}

TEST(JitTest, WritingIntoAFactoryTensorIsNotReplayed) {
  auto f = [](const TensorList& a) {
    Tensor acc = zeros({3}, kFloat64);
    add_(acc, a[0]);
    return TensorList{acc * 2.0};
  };
  ExpectUntraceable(jit(f), f, {{Rand({3}, 1)}, {Rand({3}, 2)}, {Rand({3}, 3)}},
                    "made by a factory");
}

TEST(JitTest, HostWritesIntoAFactoryTensorAfterUseAreNotReplayed) {
  auto f = [](const TensorList& a) {
    Tensor offsets = zeros({3}, kFloat64);
    Tensor y = a[0] + offsets;       // sees zeros
    offsets.data<double>()[0] = 5;   // a replay would see 5 in the add above
    return TensorList{y * offsets};
  };
  ExpectUntraceable(jit(f), f, {{Rand({3}, 1)}, {Rand({3}, 2)}}, "after an op had used it");
}

TEST(JitTest, AnEscapedWrapperOutputIsNotReplayed) {
  JitFunction j = jit([](const TensorList& a) {
    Tensor leaked;
    vmap([&leaked](const TensorList& b) {
      leaked = b[0];
      return TensorList{b[0] * 2.0};
    })(a);
    return TensorList{leaked};
  });
  const Tensor x = Rand({2, 3}, 1);
  EXPECT_FALSE(j({x})[0].is_dense());
  EXPECT_NE(j.untraceable_reason({x}).find("not a plain tensor"), std::string::npos)
      << j.untraceable_reason({x});
}

TEST(JitTest, ValueDependentShapesAreNotReplayed) {
  auto f = [](const TensorList& a) { return TensorList{one_hot(a[0], -1)}; };
  ExpectUntraceable(jit(f), f,
                    {{tensor(std::vector<int64_t>{0, 2}, {2})},
                     {tensor(std::vector<int64_t>{3, 1}, {2})}},
                    "one_hot: its output shape depends on element values");
}

TEST(JitTest, InsideATransformTheFunctionRunsEagerly) {
  JitFunction j = jit([](const TensorList& a) { return TensorList{sin(a[0]) * a[0]}; });
  const Tensor xs = Rand({4, 3}, 1);
  const Tensor out = vmap([&j](const TensorList& a) { return j(a); })({xs})[0];
  EXPECT_TENSOR_NEAR(out, sin(xs) * xs, 0);
  const Tensor x = select(xs, 0, 0);
  const Tensor g = grad([&j](const TensorList& a) { return sum(j(a)[0]); })(TensorList{x})[0];
  EXPECT_TENSOR_NEAR(g, cos(x) * x + sin(x), 1e-15);
  EXPECT_EQ(j.stats().eager_calls, 2);
  EXPECT_EQ(j.stats().traces, 0);
}

TEST(JitTest, ANestedJitIsRecordedByTheOuterTrace) {
  JitFunction inner = jit([](const TensorList& a) { return TensorList{exp(a[0])}; });
  JitFunction outer = jit([&inner](const TensorList& a) { return TensorList{inner(a)[0] + 1.0}; });
  outer({Rand({2}, 1)});
  const Tensor y = Rand({2}, 2);
  EXPECT_TENSOR_NEAR(outer({y})[0], exp(y) + 1.0, 0);
  EXPECT_EQ(outer.stats().replays, 1);
  EXPECT_EQ(inner.stats().eager_calls, 1);  // only the traced call reached it
}

struct ScaledSin : Function<ScaledSin> {
  static constexpr const char* name = "ScaledSin";
  static Tensor forward(const Tensor& x) { return sin(x) * 3.0; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * cos(ctx.saved_tensors()[0]) * 3.0};
  }
};

TEST(JitTest, CustomFunctionsReplayTheirOwnBackward) {
  JitFunction g = jit(grad([](const TensorList& a) { return sum(ScaledSin::apply(a[0])); }));
  g({Rand({4}, 1)});
  const Tensor y = Rand({4}, 2);
  EXPECT_TENSOR_NEAR(g({y})[0], cos(y) * 3.0, 1e-15);
  EXPECT_EQ(g.stats().replays, 1);
}

TEST(JitTest, ErrorsLeaveNothingBehind) {
  int calls = 0;
  JitFunction j = jit([&calls](const TensorList& a) {
    if (++calls == 1) ThrowError("first call fails");
    return TensorList{a[0] * 2.0};
  });
  const Tensor x = Rand({2}, 1);
  EXPECT_FT_ERROR(j({x}), "first call fails");
  EXPECT_EQ(LayerStack::size(), 0);
  EXPECT_EQ(CurrentBaseCallObserver(), nullptr);
  EXPECT_TENSOR_NEAR(j({x})[0], x * 2.0, 0);  // traced now
  EXPECT_TENSOR_NEAR(j({x})[0], x * 2.0, 0);  // replayed
  EXPECT_EQ(j.stats().traces, 1);
  EXPECT_EQ(j.stats().replays, 1);
  // A kernel error in a replay is the eager error.
  JitFunction pick = jit([](const TensorList& a) { return TensorList{index_select(a[0], 0, a[1])}; });
  pick({Rand({3}, 1), tensor(std::vector<int64_t>{0, 2}, {2})});
  EXPECT_FT_ERROR(pick({Rand({3}, 1), tensor(std::vector<int64_t>{0, 7}, {2})}), "index_select");
}

TEST(JitTest, TheHeaderExample) {
  const Tensor x = Rand({3}, 1), y = Rand({3}, 2);
  TraceResult t = Trace([](const TensorList& a) { return TensorList{sin(a[0]) * 2.0}; }, {x});
  ASSERT_NE(t.program, nullptr) << t.reason;
  // sin and the multiply fuse into one step.
  EXPECT_EQ(t.program->num_steps(), 1) << t.program->DebugString();
  EXPECT_TENSOR_NEAR(t.program->Run({y})[0], sin(y) * 2.0, 0);
  EXPECT_TENSOR_NEAR(t.outputs[0], sin(x) * 2.0, 0);
}

TEST(JitTest, TraceAndRunCheckTheirPreconditions) {
  auto f = [](const TensorList& a) { return TensorList{a[0] + 1.0}; };
  TraceResult t = Trace(f, {Rand({2}, 1)});
  ASSERT_NE(t.program, nullptr) << t.reason;
  EXPECT_FT_ERROR(t.program->Run({}), "traced with 1 inputs but got 0");
  EXPECT_FT_ERROR(Trace(f, {Tensor()}), "input 0 must be a defined plain tensor");
  EXPECT_FT_ERROR(vmap([&f](const TensorList& a) { return Trace(f, a).outputs; })({Rand({2, 2}, 1)}),
                  "no transform active");
  EXPECT_EQ(LayerStack::size(), 0);
}

TEST(JitTest, ConcurrentCallersShareOneCache) {
  const Tensor w = Rand({5, 5}, 1);
  JitFunction j = jit(jacrev(SinTarget(w)));
  j({Rand({5}, 2)});
  std::vector<std::thread> threads;
  std::vector<char> ok(4, 0);  // not vector<bool>: its bits share words across threads
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      bool all = true;
      for (int i = 0; i < 20; ++i) {
        const Tensor x = Rand({5}, 10 + t * 100 + i);
        all &= static_cast<bool>(testing::TensorNear(j({x})[0], SinJacobian(w, x), 1e-12));
      }
      ok[t] = all ? 1 : 0;
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(ok[t]) << "thread " << t;
  EXPECT_EQ(j.stats().replays, 80);
}

// NOTE: [Guards]: a guard records a read; the replay stops where it does not hold, and
// ft::jit traces that path too.
TEST(JitTest, GuardsKeepOneProgramPerPath) {
  EXPECT_FALSE(TraceGuard(ones({}), true));  // no trace recording
  Tensor buffer = zeros({2}, kFloat64);
  auto f = [&buffer](const TensorList& a) {
    const Tensor p = gt(sum(a[0]), 0.0);
    const bool guarded = TraceGuard(p, /*truth=*/true);
    // Once guarded, a read the trace does not count (what //control_flow does).
    const bool positive = guarded ? internal::ReadElement<bool>(*p.impl(), 0) : p.item<bool>();
    if (a.size() > 1) add_(buffer, a[1]);  // a write: guards are refused with it
    return TensorList{positive ? a[0] * 2.0 : a[0] * -3.0};
  };
  JitFunction j = jit(f);
  const Tensor pos = tensor({1.0, 2.0}), neg = tensor({-1.0, -2.0});
  for (const Tensor& x : {pos, neg, pos * 3.0, neg * 3.0}) {
    EXPECT_TENSOR_NEAR(j({x})[0], sum(x).item<double>() > 0 ? x * 2.0 : x * -3.0, 0);
  }
  EXPECT_EQ(j.stats().traces, 2);
  EXPECT_EQ(j.stats().replays, 2);
  EXPECT_EQ(j.num_paths({pos}), 2);
  EXPECT_NE(j.program({pos})->DebugString().find("guard(%"), std::string::npos);
  EXPECT_FT_ERROR(j.program({pos})->Run({neg}), "a guard of the program does not hold");
  // A write after the last guard happens only on a replay that holds: once per call, on
  // every path, also on calls whose first replay stopped at a guard.
  JitFunction w = jit(f);
  const Tensor one = ones({2}, kFloat64);
  for (const Tensor& x : {pos, neg, pos, neg, neg}) {
    EXPECT_TENSOR_NEAR(w({x, one})[0], sum(x).item<double>() > 0 ? x * 2.0 : x * -3.0, 0);
  }
  EXPECT_TENSOR_EQ(buffer, full({2}, 5.0, kFloat64));
  EXPECT_EQ(w.num_paths({pos, one}), 2);
  EXPECT_EQ(w.stats().replays, 3);
}

// A write before a guard: into the program's own buffer it is undone with a stopped replay;
// into a captured (or input) buffer it could not be, so that trace is refused.
TEST(JitTest, WritesBeforeAGuardOnlyIntoBuffersTheProgramMakes) {
  Tensor captured = zeros({2}, kFloat64);
  auto f = [&captured](const TensorList& a) {
    Tensor local = a[0] * 1.0;
    add_(local, 1.0);  // the program's own buffer
    if (a.size() > 1) add_(captured, a[1]);
    const Tensor p = gt(sum(local), 0.0);
    const bool positive = TraceGuard(p, /*truth=*/true) ? internal::ReadElement<bool>(*p.impl(), 0)
                                                        : p.item<bool>();
    return TensorList{positive ? local * 2.0 : local * -3.0};
  };
  const Tensor pos = tensor({1.0, 2.0}), neg = tensor({-3.0, -4.0});
  JitFunction local_only = jit(f);
  for (const Tensor& x : {pos, neg, pos, neg}) {
    const Tensor l = x + 1.0;
    EXPECT_TENSOR_NEAR(local_only({x})[0], sum(l).item<double>() > 0 ? l * 2.0 : l * -3.0, 0);
  }
  EXPECT_EQ(local_only.num_paths({pos}), 2);
  EXPECT_EQ(local_only.stats().replays, 2);
  JitFunction writes_captured = jit(f);
  const Tensor one = ones({2}, kFloat64);
  for (const Tensor& x : {pos, neg, pos}) (void)writes_captured({x, one});
  EXPECT_TENSOR_EQ(captured, full({2}, 3.0, kFloat64));  // once per call, eagerly
  EXPECT_NE(writes_captured.untraceable_reason({pos, one}).find("wrote a buffer it did not make"),
            std::string::npos)
      << writes_captured.untraceable_reason({pos, one});
}

// NOTE: [Control flow in traces]: the hooks //control_flow calls, used directly.
TEST(JitTest, ControlFlowStepsEvaluateThePredicateAtReplay) {
  EXPECT_FALSE(ControlFlowTraceable());  // no trace recording
  int traced_branch_runs = 0;
  const Tensor w = tensor({3.0, 4.0});
  auto f = [&](const TensorList& a) {
    EXPECT_TRUE(ControlFlowTraceable());
    const Tensor shifted = a[0] + 1.0;  // read by branch 0: an extra input of its program
    TensorList r = TraceSwitch(
        gt(sum(a[0]), 0.0), /*bool_index=*/true,
        {[&](const TensorList& b) {
           ++traced_branch_runs;
           return TensorList{b[0] * w + shifted};
         },
         [&](const TensorList& b) {
           ++traced_branch_runs;
           return TensorList{b[0] - w};
         }},
        {a[0]});
    // Halve until the sum drops under 1.
    TensorList l = TraceWhile([](const TensorList& c) { return ge(sum(c[0]), 1.0); },
                              [](const TensorList& c) { return TensorList{c[0] * 0.5}; }, {r[0]});
    return TensorList{l[0]};
  };
  auto eager = [&w](const Tensor& x) {
    Tensor r = sum(x).item<double>() > 0 ? x * w + (x + 1.0) : x - w;
    while (sum(r).item<double>() >= 1.0) r = r * 0.5;
    return r;
  };
  JitFunction j = jit(f);
  const Tensor x = tensor({0.5, 1.0});
  EXPECT_TENSOR_NEAR(j({x})[0], eager(x), 1e-15);
  EXPECT_EQ(traced_branch_runs, 2);  // both branches traced
  ASSERT_NE(j.program({x}), nullptr) << j.untraceable_reason({x});
  const std::string program = j.program({x})->DebugString();
  EXPECT_NE(program.find("switch("), std::string::npos) << program;
  EXPECT_NE(program.find("while("), std::string::npos) << program;
  for (const Tensor& y : {tensor({-0.5, -1.0}), tensor({4.0, 8.0}), tensor({0.1, 0.1})}) {
    EXPECT_TENSOR_NEAR(j({y})[0], eager(y), 1e-15);
  }
  EXPECT_EQ(traced_branch_runs, 2);  // replays run no branch function
  EXPECT_EQ(j.stats().replays, 3);
}

}  // namespace
}  // namespace ft

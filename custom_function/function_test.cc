// ft::Function under the transforms, against oracles that do not use the Function (closed
// forms, loops, finite differences). The Functions are those of functorch_semantics §3.1
// that the landed rules cover (grad, jvp, user vmap rules).
#include "custom_function/function.h"

#include "custom_function/rules.h"

#include <cmath>
#include <memory>
#include <string>
#include <tuple>

#include "autograd/grad_mode.h"
#include "autograd/graph.h"
#include "dispatch/dispatch.h"
#include "dispatch/interpreter.h"
#include "gtest/gtest.h"
#include "interpreters/grad/grad.h"
#include "interpreters/grad/grad_interpreter.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"
#include "tests/vmap_oracle.h"

namespace ft {
namespace {

using testing::Rand;

// Call counts of forward and setup_context, per Function (reset by each test).
struct Counts {
  int forward = 0;
  int setup = 0;
  int vmap = 0;
};
Counts g_counts;

// sin with its own backward, jvp and vmap rule.
struct MySin : Function<MySin> {
  static constexpr const char* name = "MySin";
  static Tensor forward(const Tensor& x) {
    ++g_counts.forward;
    return sin(x);
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ++g_counts.setup;
    ctx.save_for_backward({std::get<0>(in)});
    ctx.save_for_forward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * cos(ctx.saved_tensors()[0])};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {t[0] * cos(ctx.saved_tensors()[0])};
  }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims,
                                         const Tensor& x) {
    ++g_counts.vmap;
    return {MySin::apply(x), {in_dims[0]}};  // elementwise: the batch dim stays put
  }
};

// Cube with two outputs (x^3, 3x^2) and a user vmap rule (§3.1 NumpyCube, intended math:
// backward(g0, g1) = g0 * 3x^2 + g1 * 6x).
struct Cube : Function<Cube> {
  static constexpr const char* name = "Cube";
  static std::tuple<Tensor, Tensor> forward(const Tensor& x) {
    ++g_counts.forward;
    return {x * x * x, x * x * 3.0};
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in,
                            const std::tuple<Tensor, Tensor>& out) {
    ++g_counts.setup;
    ctx.save_for_backward({std::get<0>(in), std::get<1>(out)});
    ctx.save_for_forward({std::get<0>(in), std::get<1>(out)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& dx = ctx.saved_tensors()[1];
    return {g[0] * dx + g[1] * 6.0 * x};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& dx = ctx.saved_tensors()[1];
    return {t[0] * dx, t[0] * 6.0 * x};
  }
  static std::pair<std::tuple<Tensor, Tensor>, OutDims> vmap(const VmapInfo&,
                                                             const InDims& in_dims,
                                                             const Tensor& x) {
    ++g_counts.vmap;
    return {Cube::apply(x), {in_dims[0], in_dims[0]}};
  }
};

// Square (x^2) with a jvp written in ft ops: nested forward mode must stay right
// (pytorch#197867 returns zeros for the higher derivatives).
struct Square : Function<Square> {
  static constexpr const char* name = "Square";
  static Tensor forward(const Tensor& x) { return x * x; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
    ctx.save_for_forward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * 2.0 * ctx.saved_tensors()[0]};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {t[0] * 2.0 * ctx.saved_tensors()[0]};
  }
};

// ScaleGradient: identity forward, backward scales the gradient: a result only the user's
// backward can produce (the ops' own derivative would give 1).
struct ScaleGradient : Function<ScaleGradient> {
  static constexpr const char* name = "ScaleGradient";
  static constexpr auto defaults = std::tuple{2.0};
  static Tensor forward(const Tensor& x, double scale) { return x * 1.0 + scale * 0.0; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, double>& in,
                            const Tensor&) {
    ctx.state<double>() = std::get<1>(in);
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * ctx.state<double>(), Tensor()};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {t[0] * ctx.state<double>()};
  }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims, const Tensor& x,
                                         double scale) {
    return {ScaleGradient::apply(x, scale), {in_dims[0]}};
  }
};

// In-place exp with mark_dirty: returns its (modified) input.
struct ExpInplace : Function<ExpInplace> {
  static constexpr const char* name = "ExpInplace";
  static Tensor forward(const Tensor& x) { return exp_(x); }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor& out) {
    ctx.mark_dirty({std::get<0>(in)});
    ctx.save_for_backward({out});
    ctx.save_for_forward({out});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * ctx.saved_tensors()[0]};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {t[0] * ctx.saved_tensors()[0]};
  }
};

TEST(Function, PlainApplyRunsForwardAndSetupContextOnce) {
  g_counts = {};
  Tensor x = Rand({3}, 1);
  EXPECT_TENSOR_NEAR(MySin::apply(x), sin(x), 0);
  EXPECT_EQ(g_counts.forward, 1);
  EXPECT_EQ(g_counts.setup, 1);
  auto [y, dy] = Cube::apply(x);
  EXPECT_TENSOR_NEAR(y, x * x * x, 1e-15);
  EXPECT_TENSOR_NEAR(dy, x * x * 3.0, 1e-15);
  // A default argument is filled in (and setup_context sees it).
  EXPECT_TENSOR_NEAR(ScaleGradient::apply(x), x, 0);
}

TEST(Function, GradUsesTheUsersBackwardAtEveryLevel) {
  Tensor x = Rand({4}, 2);
  g_counts = {};
  TensorFn f = [](const Tensor& t) { return sum(MySin::apply(t)); };
  EXPECT_TENSOR_NEAR(grad(f)(x), cos(x), 1e-15);
  EXPECT_EQ(g_counts.forward, 1);  // once, at the bottom
  EXPECT_EQ(g_counts.setup, 2);    // once per grad level, plus once at the bottom
  g_counts = {};
  TensorFn second = grad(TensorFn([f](const Tensor& t) { return sum(grad(f)(t)); }));
  EXPECT_TENSOR_NEAR(second(x), neg(sin(x)), 1e-15);
  EXPECT_EQ(g_counts.forward, 1);
  EXPECT_EQ(g_counts.setup, 3);
  // Only the user's backward can scale the gradient.
  EXPECT_TENSOR_NEAR(grad(TensorFn([](const Tensor& t) {
                       return sum(ScaleGradient::apply(t, 3.0) * t);
                     }))(x),
                     x * 3.0 + x, 1e-15);
  // Cube's two outputs: d/dx sum(x^3 + 3x^2) = 3x^2 + 6x.
  EXPECT_TENSOR_NEAR(grad(TensorFn([](const Tensor& t) {
                       auto [y, dy] = Cube::apply(t);
                       return sum(y + dy);
                     }))(x),
                     x * x * 3.0 + x * 6.0, 1e-14);
  // Against finite differences, through vjp and jacrev.
  GradcheckResult r = gradcheck(
      [](const TensorList& a) {
        auto [y, dy] = Cube::apply(a[0]);
        return y * dy;
      },
      {x});
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_TENSOR_NEAR(jacrev([](const TensorList& a) { return MySin::apply(a[0]); })({x})[0],
                     eye(4, kFloat64) * cos(x), 1e-15);
}

// NOTE: [Freeing saved values]: grad drops what a Function saved once its backward ran, so a
// Function earlier in the forward pass already finds it gone; vjp keeps it for its vjp_fn.
std::weak_ptr<TensorImpl> g_probe;       // a tensor only ProbeSaver's ctx holds
bool g_probe_alive_in_backward = false;  // what ProbeReader's backward saw

struct ProbeSaver : Function<ProbeSaver> {
  static constexpr const char* name = "ProbeSaver";
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>&, const Tensor&) {
    Tensor probe = zeros({4}, kFloat64);
    g_probe = probe.impl_ptr();
    ctx.save_for_backward({probe});
  }
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {g[0] * 2.0}; }
};

struct ProbeReader : Function<ProbeReader> {
  static constexpr const char* name = "ProbeReader";
  static Tensor forward(const Tensor& x) { return x * 3.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) {
    g_probe_alive_in_backward = !g_probe.expired();
    return {g[0] * 3.0};
  }
};

TEST(Function, GradFreesWhatAFunctionSavedOnceItsBackwardRan) {
  auto f = [](const TensorList& a) { return ProbeSaver::apply(ProbeReader::apply(a[0])); };
  const Tensor x = tensor({1.0, -2.0});
  EXPECT_TENSOR_NEAR(grad(ScalarFn([&](const TensorList& a) { return sum(f(a)); }))({x})[0],
                     full({2}, 6.0, kFloat64), 0);
  EXPECT_FALSE(g_probe_alive_in_backward);
  // jacrev runs its graph once (one batched backward), unless it goes in chunks.
  const TensorFnOfList as_fn = [&](const TensorList& a) { return f(a); };
  const Tensor sixes = tensor({6.0, 0.0, 0.0, 6.0}, {2, 2});
  EXPECT_TENSOR_NEAR(jacrev(as_fn)({x})[0], sixes, 0);
  EXPECT_FALSE(g_probe_alive_in_backward);
  EXPECT_TENSOR_NEAR(jacrev(as_fn, {0}, /*chunk_size=*/1)({x})[0], sixes, 0);
  EXPECT_TRUE(g_probe_alive_in_backward);
  VjpResult r = vjp(TensorListFn([&](const TensorList& a) { return TensorList{f(a)}; }), {x});
  EXPECT_TENSOR_NEAR(r.vjp_fn({ones({2}, kFloat64)})[0], full({2}, 6.0, kFloat64), 0);
  EXPECT_TRUE(g_probe_alive_in_backward);
  EXPECT_TENSOR_NEAR(r.vjp_fn({ones({2}, kFloat64)})[0], full({2}, 6.0, kFloat64), 0);
}

TEST(Function, BackwardNodeIsNamedAfterTheFunction) {
  Tensor x = Rand({2}, 3);
  std::string graph;
  vjp(
      [&graph](const TensorList& a) {
        Tensor y = MySin::apply(a[0]);
        const GradWrapperImpl* w = MaybeGradWrapperAt(y, LayerStack::Top()->level());
        EXPECT_NE(w, nullptr);
        if (w != nullptr) graph = autograd::GraphString(w->grad_edge());
        return TensorList{y};
      },
      {x});
  EXPECT_NE(graph.find("MySinGeneratedBackward"), std::string::npos) << graph;
}

TEST(Function, VjpFnWorksAfterVjpReturnedAndAnAlienInterpreterIsAnError) {
  Tensor x = Rand({3}, 13);
  VjpResult r = vjp([](const TensorList& a) { return TensorList{MySin::apply(a[0]) * a[0]}; },
                    {x});
  // The graph holds MySin's node and wrappers of the finished level; any number of calls.
  for (int i = 0; i < 2; ++i) {
    EXPECT_TENSOR_NEAR(r.vjp_fn({ones_like(x)})[0], cos(x) * x + sin(x), 1e-15);
  }
  // An interpreter of the Functionalize kind that is not ft::functionalize's (whose rule
  // is tested with ft::functionalize in interpreters/functionalize): a clear error, stack
  // balanced.
  class Functionalize : public Interpreter {
   public:
    Functionalize() : Interpreter(TransformType::kFunctionalize, LayerStack::NewLevel()) {}
    ValueList Process(const Operator& op, ValueList& args) override {
      LowerGuard lower(this);
      return DispatchBoxed(op, args);
    }
  };
  Functionalize functionalize;
  {
    InterpreterScope scope(&functionalize);
    EXPECT_FT_ERROR(MySin::apply(x), "MySin: a Function call met a Functionalize "
                                     "interpreter");
  }
  EXPECT_TRUE(LayerStack::empty());
}

// Records the grad modes its forward runs with.
struct ModeProbe : Function<ModeProbe> {
  static constexpr const char* name = "ModeProbe";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) {
    grad_mode = GradMode::is_enabled();
    fwd_grad_mode = FwdGradMode::is_enabled();
    // A transform started inside forward still works (functorch_semantics §3.5).
    inner_tangent = ft::jvp([](const TensorList& a) { return TensorList{sin(a[0])}; }, {x},
                        {ones_like(x)})
                        .tangents[0];
    return x * 2.0;
  }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {g[0] * 2.0}; }
  static TensorList jvp(FunctionCtx&, const TensorList& t) { return {t[0] * 2.0}; }
  static inline bool grad_mode = true;
  static inline bool fwd_grad_mode = true;
  static inline Tensor inner_tangent;
};

TEST(Function, ForwardRunsWithGradModesOffCase9) {
  Tensor x = Rand({3}, 14);
  auto check = [&x](const char* where) {
    SCOPED_TRACE(where);
    EXPECT_FALSE(ModeProbe::grad_mode);
    EXPECT_FALSE(ModeProbe::fwd_grad_mode);
    EXPECT_TENSOR_NEAR(ModeProbe::inner_tangent, cos(x), 1e-15);
  };
  ModeProbe::apply(x);
  check("plain");
  jvp([](const TensorList& a) { return TensorList{ModeProbe::apply(a[0])}; }, {x},
      {ones_like(x)});
  check("jvp");
  grad(TensorFn([](const Tensor& t) { return sum(ModeProbe::apply(t)); }))(x);
  check("grad");
  EXPECT_TRUE(GradMode::is_enabled());
  EXPECT_TRUE(FwdGradMode::is_enabled());
}

TEST(Function, JvpUsesTheUsersJvpAndNestsCorrectly) {
  Tensor x = Rand({3}, 4), t = Rand({3}, 5);
  JvpResult r = jvp([](const TensorList& a) { return TensorList{MySin::apply(a[0])}; }, {x}, {t});
  EXPECT_TENSOR_NEAR(r.outputs[0], sin(x), 0);
  EXPECT_TENSOR_NEAR(r.tangents[0], cos(x) * t, 1e-15);
  JvpResult scaled = jvp(
      [](const TensorList& a) { return TensorList{ScaleGradient::apply(a[0], 5.0)}; }, {x}, {t});
  EXPECT_TENSOR_NEAR(scaled.tangents[0], t * 5.0, 1e-15);
  // x^4 = Square(Square(x)) at 3: 108, 108, 72 by forward mode alone (pytorch#197867).
  TensorFnOfList x4 = [](const TensorList& a) { return Square::apply(Square::apply(a[0])); };
  TensorFnOfList d1 = [x4](const TensorList& a) { return jacfwd(x4)(a)[0]; };
  TensorFnOfList d2 = [d1](const TensorList& a) { return jacfwd(d1)(a)[0]; };
  Tensor three = full({}, 3.0, kFloat64);
  EXPECT_NEAR(d1({three}).item<double>(), 108.0, 1e-12);
  EXPECT_NEAR(d2({three}).item<double>(), 108.0, 1e-12);
  EXPECT_NEAR(jacfwd(d2)({three})[0].item<double>(), 72.0, 1e-12);
  // Mixed: jvp of grad, grad of jvp, hessian.
  TensorFn g = grad(TensorFn([](const Tensor& u) { return sum(MySin::apply(u)); }));
  JvpResult hv = jvp([g](const TensorList& a) { return TensorList{g(a[0])}; }, {x}, {t});
  EXPECT_TENSOR_NEAR(hv.tangents[0], neg(sin(x)) * t, 1e-15);
  EXPECT_TENSOR_NEAR(hessian([](const TensorList& a) { return sum(MySin::apply(a[0])); })({x})[0],
                     eye(3, kFloat64) * neg(sin(x)), 1e-15);
  GradcheckResult check = jvpcheck(
      [](const TensorList& a) {
        auto [y, dy] = Cube::apply(a[0]);
        return y - dy;
      },
      {x});
  EXPECT_TRUE(check.ok) << check.message;
}

TEST(Function, UserVmapRuleAgainstALoop) {
  Tensor xs = Rand({4, 3}, 6);
  g_counts = {};
  TensorList batched = vmap(TensorListFn([](const TensorList& a) {
                              auto [y, dy] = Cube::apply(a[0]);
                              return TensorList{y, dy};
                            }),
                            0, 0)({xs});
  EXPECT_GE(g_counts.vmap, 1);
  EXPECT_TENSOR_NEAR(batched[0], xs * xs * xs, 1e-15);
  EXPECT_TENSOR_NEAR(batched[1], xs * xs * 3.0, 1e-15);
  // Batch dim last, and one argument unbatched.
  TensorFn f = [](const Tensor& x) { return MySin::apply(x); };
  EXPECT_TENSOR_NEAR(vmap(f, -1, 0)(transpose(xs, 0, 1)), sin(xs), 0);
  TensorList mixed = vmap(TensorListFn([](const TensorList& a) {
                            return TensorList{ScaleGradient::apply(a[0]) * MySin::apply(a[1])};
                          }),
                          {0, std::nullopt}, 0)({xs, select(xs, 0, 0)});
  EXPECT_TENSOR_NEAR(mixed[0], xs * sin(select(xs, 0, 0)), 1e-15);
  // A level where nothing is batched is skipped: the rule is not called.
  g_counts = {};
  Tensor w = Rand({3}, 7);
  vmap(TensorListFn([&w](const TensorList& a) { return TensorList{a[0] + MySin::apply(w)}; }),
       0, 0)({xs});
  EXPECT_EQ(g_counts.vmap, 0);
  EXPECT_EQ(g_counts.forward, 1);
}

TEST(Function, PerSampleGradientsAndGradOfVmapUseTheUsersRules) {
  Tensor xs = Rand({5, 3}, 8);
  TensorFn g = grad(TensorFn([](const Tensor& t) { return sum(MySin::apply(t) * t); }));
  TensorList loop = testing::LoopVmap([g](const TensorList& a) { return TensorList{g(a[0])}; },
                                      {xs}, {0}, {0});
  EXPECT_TENSOR_NEAR(vmap(g)(xs), loop[0], 1e-15);
  // grad of a vmapped Function: the user's backward scales (MLX drops custom rules here).
  TensorFn vf = vmap(TensorFn([](const Tensor& t) { return ScaleGradient::apply(t, 4.0); }));
  EXPECT_TENSOR_NEAR(grad(TensorFn([vf](const Tensor& t) { return sum(vf(t)); }))(xs),
                     full_like(xs, 4.0), 0);
  // vmap of jvp of a Function.
  Tensor ts = Rand({5, 3}, 9);
  TensorList tangents = vmap(TensorListFn([](const TensorList& a) {
                               return jvp([](const TensorList& b) {
                                        return TensorList{MySin::apply(b[0])};
                                      },
                                      {a[0]}, {a[1]})
                                   .tangents;
                             }),
                             0, 0)({xs, ts});
  EXPECT_TENSOR_NEAR(tangents[0], cos(xs) * ts, 1e-15);
}

// Gradient reversal: forward returns its input itself; the derivative is the user's (-1).
struct ReverseGradient : Function<ReverseGradient> {
  static constexpr const char* name = "ReverseGradient";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return x; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {neg(g[0])}; }
  static TensorList jvp(FunctionCtx&, const TensorList& t) { return {neg(t[0])}; }
};

TEST(Function, AnInputReturnedAsIsStillGoesThroughTheUsersRules) {
  Tensor x = Rand({3}, 15);
  EXPECT_TRUE(ReverseGradient::apply(x).is_same(x));  // plain apply: the very object
  TensorFn f = [](const Tensor& t) { return sum(ReverseGradient::apply(t) * t); };
  EXPECT_TENSOR_NEAR(grad(f)(x), zeros_like(x), 1e-15);  // -t + t
  JvpResult r = jvp([](const TensorList& a) { return TensorList{ReverseGradient::apply(a[0])}; },
                    {x}, {ones_like(x)});
  EXPECT_TENSOR_NEAR(r.tangents[0], full_like(x, -1.0), 0);
  Tensor xs = Rand({2, 3}, 16);
  EXPECT_TENSOR_NEAR(vmap(grad(TensorFn([](const Tensor& t) {
                       return sum(ReverseGradient::apply(t));
                     })))(xs),
                     full_like(xs, -1.0), 0);
  TensorFn batched = vmap(TensorFn([](const Tensor& t) { return ReverseGradient::apply(t); }));
  EXPECT_TENSOR_NEAR(grad(TensorFn([batched](const Tensor& t) { return sum(batched(t)); }))(xs),
                     full_like(xs, -1.0), 0);
}

TEST(Function, MarkDirtyKeepsIdentityUnderEveryTransform) {
  Tensor x = Rand({3}, 10);
  Tensor y = clone(x);
  Tensor out = ExpInplace::apply(y);
  EXPECT_TRUE(out.is_same(y));
  EXPECT_TENSOR_NEAR(y, exp(x), 1e-15);
  // Under grad: the gradient of sum(exp(2x)) through the in-place Function is 2 exp(2x).
  TensorFn f = [](const Tensor& t) {
    Tensor u = t * 2.0;
    Tensor v = ExpInplace::apply(u);
    EXPECT_TRUE(v.is_same(u));
    return sum(v);
  };
  EXPECT_TENSOR_NEAR(grad(f)(x), exp(x * 2.0) * 2.0, 1e-14);
  JvpResult r = jvp([f](const TensorList& a) { return TensorList{f(a[0])}; }, {x},
                    {ones_like(x)});
  EXPECT_NEAR(r.tangents[0].item<double>(), sum(exp(x * 2.0) * 2.0).item<double>(), 1e-13);
}

// Two outputs that are its inputs' copies; backward records what it saw.
struct Pair : Function<Pair> {
  static constexpr const char* name = "Pair";
  static std::tuple<Tensor, Tensor> forward(const Tensor& x, const Tensor& y) {
    return {x * 1.0, y * 1.0};
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, Tensor>&,
                            const std::tuple<Tensor, Tensor>&) {
    ctx.set_materialize_grads(false);
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    seen_defined = {g[0].defined(), g[1].defined()};
    seen_needs = {ctx.needs_input_grad(0), ctx.needs_input_grad(1)};
    return {g[0].defined() ? g[0] : Tensor(), g[1].defined() ? g[1] : Tensor()};
  }
  static inline std::vector<bool> seen_defined;
  static inline std::vector<bool> seen_needs;
};

TEST(FunctionCtx, MaterializeGradsAndNeedsInputGrad) {
  Tensor x = full({}, 2.0, kFloat64), y = full({}, 3.0, kFloat64);
  // f uses only the first output: with materialize_grads off, backward sees no gradient for
  // the second; argnums {0}: only x needs one.
  ScalarFn f = [](const TensorList& a) {
    auto [px, py] = Pair::apply(a[0], a[1]);
    return px * px;
  };
  TensorList g = grad(f, {0})({x, y});
  EXPECT_NEAR(g[0].item<double>(), 4.0, 1e-15);
  EXPECT_EQ(Pair::seen_defined, (std::vector<bool>{true, false}));
  EXPECT_EQ(Pair::seen_needs, (std::vector<bool>{true, false}));
  // Also at both levels of grad of grad.
  TensorFn second = grad(TensorFn([f, y](const Tensor& t) { return grad(f, {0})({t, y})[0]; }));
  EXPECT_NEAR(second(x).item<double>(), 2.0, 1e-15);
  EXPECT_EQ(Pair::seen_needs, (std::vector<bool>{true, false}));
}

// Sorts along a dim: the indices are integer outputs, marked non-differentiable.
struct SortWithIndices : Function<SortWithIndices> {
  static constexpr const char* name = "SortWithIndices";
  static std::tuple<Tensor, Tensor> forward(const Tensor& x, int64_t dim) {
    Tensor ind = argsort(x, dim);
    return {take_along_dim(x, ind, dim), ind};
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, int64_t>& in,
                            const std::tuple<Tensor, Tensor>& out) {
    ctx.mark_non_differentiable({std::get<1>(out)});
    ctx.save_for_backward({std::get<1>(out)});
    ctx.state<int64_t>() = std::get<1>(in);
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& ind = ctx.saved_tensors()[0];
    const int64_t dim = ctx.state<int64_t>();
    return {scatter_add(zeros_like(g[0]), dim, ind, g[0]), Tensor()};
  }
};

// Once-differentiable: its backward is not differentiable, and saying so must stop a second
// derivative instead of silently returning a wrong one.
struct OnceCube : Function<OnceCube> {
  static constexpr const char* name = "OnceCube";
  static constexpr bool once_differentiable = true;
  static Tensor forward(const Tensor& x) { return x * x * x; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& x = ctx.saved_tensors()[0];
    return {g[0] * 3.0 * x * x};
  }
};

TEST(FunctionCtx, NonDifferentiableOutputsAndOnceDifferentiable) {
  Tensor x = tensor({3.0, 1.0, 2.0, 0.0, 5.0, 4.0}, {2, 3});
  Tensor w = tensor({10.0, 20.0, 30.0, 1.0, 2.0, 3.0}, {2, 3});
  ScalarFn f = [&w](const TensorList& a) {
    auto [values, ind] = SortWithIndices::apply(a[0], int64_t{1});
    EXPECT_EQ(ind.dtype(), kInt64);
    EXPECT_TRUE(ind.is_dense());  // no gradient machinery on the indices
    return sum(values * w);
  };
  // The sorted position of each element gets its weight back: [[30,10,20],[1,3,2]].
  EXPECT_TENSOR_EQ(grad(f)({x})[0], tensor({30.0, 10.0, 20.0, 1.0, 3.0, 2.0}, {2, 3}));
  Tensor v = tensor({2.0});
  EXPECT_TENSOR_NEAR(grad(TensorFn([](const Tensor& t) { return sum(OnceCube::apply(t)); }))(v),
                     tensor({12.0}), 1e-15);
  TensorFn first = grad(TensorFn([](const Tensor& t) { return sum(OnceCube::apply(t)); }));
  EXPECT_FT_ERROR(grad(TensorFn([first](const Tensor& t) { return sum(first(t)); }))(v),
                  "OnceCube: trying to differentiate twice a function that was marked "
                  "once_differentiable");
  EXPECT_TRUE(LayerStack::empty());
}

// ---- Generated vmap rules (generate_vmap_rule = true) ----

// Cube with two outputs and the generated rule.
struct CubeGenerated : Function<CubeGenerated> {
  static constexpr const char* name = "CubeGenerated";
  static constexpr bool generate_vmap_rule = true;
  static std::tuple<Tensor, Tensor> forward(const Tensor& x) {
    ++g_counts.forward;
    return {x * x * x, x * x * 3.0};
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in,
                            const std::tuple<Tensor, Tensor>& out) {
    ++g_counts.setup;
    ctx.save_for_backward({std::get<0>(in), std::get<1>(out)});
    ctx.save_for_forward({std::get<0>(in), std::get<1>(out)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * ctx.saved_tensors()[1] + g[1] * 6.0 * ctx.saved_tensors()[0]};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {t[0] * ctx.saved_tensors()[1], t[0] * 6.0 * ctx.saved_tensors()[0]};
  }
};

// The seed's Sum NOTE: setup_context records the input's shape, backward expands to it. Under
// a generated vmap the recorded shape must be an example's ([4]), not the batch's.
struct SumToShape : Function<SumToShape> {
  static constexpr const char* name = "SumToShape";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return sum(x); }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    const Tensor& x = std::get<0>(in);
    ctx.state<Shape>() = Shape(x.sizes().begin(), x.sizes().end());
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {expand(g[0], ctx.state<Shape>())};
  }
  static TensorList jvp(FunctionCtx&, const TensorList& t) { return {sum(t[0])}; }
};

// mul with broadcasting: backward returns unreduced gradients (g * y has x's broadcast
// shape), which the generated rule must reduce per example (reductify with a target).
struct MulGenerated : Function<MulGenerated> {
  static constexpr const char* name = "MulGenerated";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x, const Tensor& y) { return x * y; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, Tensor>& in,
                            const Tensor&) {
    ctx.save_for_backward({std::get<0>(in), std::get<1>(in)});
    ctx.save_for_forward({std::get<0>(in), std::get<1>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& y = ctx.saved_tensors()[1];
    return {g[0] * y, g[0] * x};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& y = ctx.saved_tensors()[1];
    return {t[0] * y + x * t[1]};
  }
};

TEST(GeneratedVmap, MatchesLoopsAndCallsForwardOnce) {
  Tensor xs = Rand({4, 3}, 20);
  g_counts = {};
  TensorListFn cube = [](const TensorList& a) {
    auto [y, dy] = CubeGenerated::apply(a[0]);
    return TensorList{y, dy};
  };
  TensorList batched = vmap(cube, 0, 0)({xs});
  EXPECT_EQ(g_counts.forward, 1);
  EXPECT_EQ(g_counts.setup, 1);  // a generated level adds no setup_context call
  EXPECT_TENSOR_NEAR(batched[0], xs * xs * xs, 1e-15);
  EXPECT_TENSOR_NEAR(batched[1], xs * xs * 3.0, 1e-15);
  // in_dims -1 and out_dims 1.
  TensorList last = vmap(cube, -1, 1)({transpose(xs, 0, 1)});
  EXPECT_TENSOR_NEAR(last[0], transpose(xs * xs * xs, 0, 1), 1e-15);
  // vmap of vmap: a Function of a Function (VmappedVmappedCubeGenerated).
  Tensor xss = Rand({2, 4, 3}, 21);
  EXPECT_TENSOR_NEAR(vmap(vmap(cube, 0, 0), 0, 0)({xss})[0], xss * xss * xss, 1e-15);
  // Every in_dims combination of a two-argument Function against a loop.
  Tensor ys = Rand({4, 3}, 22), y = Rand({3}, 23);
  TensorListFn mul = [](const TensorList& a) { return TensorList{MulGenerated::apply(a[0], a[1])}; };
  for (const auto& [args, dims] : std::vector<std::pair<TensorList, std::vector<std::optional<int64_t>>>>{
           {{xs, ys}, {0, 0}}, {{xs, y}, {0, std::nullopt}}, {{y, ys}, {std::nullopt, 0}},
           {{transpose(xs, 0, 1), ys}, {-1, 0}}}) {
    TensorList want = testing::LoopVmap(mul, args, dims, {0});
    EXPECT_TENSOR_NEAR(vmap(mul, Dims(dims), 0)(args)[0], want[0], 1e-15);
  }
}

TEST(GeneratedVmap, GradientsThroughTheGeneratedRuleAreTheUsersAndPerExample) {
  Tensor xs = Rand({4, 3}, 24);
  // vmap(grad(F)) and grad(vmap(F)) against loops and closed forms.
  TensorFn g = grad(TensorFn([](const Tensor& t) {
    auto [y, dy] = CubeGenerated::apply(t);
    return sum(y + dy);
  }));
  g_counts = {};
  EXPECT_TENSOR_NEAR(vmap(g)(xs), xs * xs * 3.0 + xs * 6.0, 1e-14);
  EXPECT_EQ(g_counts.forward, 1);
  EXPECT_EQ(g_counts.setup, 2);  // the grad level's, and the bottom one's
  TensorFn batched_cube = vmap(TensorFn([](const Tensor& t) {
    return std::get<0>(CubeGenerated::apply(t));
  }));
  EXPECT_TENSOR_NEAR(grad(TensorFn([batched_cube](const Tensor& t) {
                       return sum(batched_cube(t));
                     }))(xs),
                     xs * xs * 3.0, 1e-14);
  // The Sum NOTE: per-example shapes, under grad of vmap and vmap of grad.
  TensorFn sum_fn = [](const Tensor& t) { return SumToShape::apply(t); };
  EXPECT_TENSOR_NEAR(grad(TensorFn([sum_fn](const Tensor& t) {
                       return sum(vmap(sum_fn)(t) * 2.0);
                     }))(xs),
                     full_like(xs, 2.0), 0);
  EXPECT_TENSOR_NEAR(vmap(grad(sum_fn))(xs), ones_like(xs), 0);
  // Broadcasting gradients reduced per example: x [4, 3] batched, y [3] shared.
  Tensor y = Rand({3}, 25);
  TensorList gm = grad(ScalarFn([](const TensorList& a) {
                         return sum(vmap(TensorListFn([](const TensorList& b) {
                                           return TensorList{MulGenerated::apply(b[0], b[1])};
                                         }),
                                         {0, std::nullopt}, 0)({a[0], a[1]})[0]);
                       }),
                       {0, 1})({xs, y});
  EXPECT_TENSOR_NEAR(gm[0], expand(y, {4, 3}), 1e-15);
  EXPECT_TENSOR_NEAR(gm[1], sum(xs, {0}), 1e-14);
  // jvp through the generated rule, and jacrev / jacfwd / hessian of a vmapped Function.
  Tensor ts = Rand({4, 3}, 26);
  JvpResult r = jvp([](const TensorList& a) {
                      return vmap(TensorListFn([](const TensorList& b) {
                               return TensorList{std::get<0>(CubeGenerated::apply(b[0]))};
                             }),
                             0, 0)(a);
                    },
                    {xs}, {ts});
  EXPECT_TENSOR_NEAR(r.tangents[0], xs * xs * 3.0 * ts, 1e-14);
  Tensor x = Rand({3}, 27);
  TensorFnOfList cube_sum = [](const TensorList& a) {
    return sum(vmap(TensorFn([](const Tensor& t) { return std::get<0>(CubeGenerated::apply(t)); }))(
        unsqueeze(a[0], 0)));
  };
  EXPECT_TENSOR_NEAR(hessian(cube_sum)({x})[0], eye(3, kFloat64) * x * 6.0, 1e-13);
}

TEST(GeneratedVmap, ReductifyTable) {
  // functorch_semantics §2.6, row by row.
  const int64_t B = 2;
  using custom_function::ReductifyLeaf;
  Tensor g34 = reshape(to(arange(12), kFloat64), {3, 4});
  EXPECT_FALSE(ReductifyLeaf(Tensor(), 0, 0, B, std::nullopt).defined());
  EXPECT_TENSOR_EQ(ReductifyLeaf(g34, std::nullopt, std::nullopt, B, std::nullopt), g34);
  Tensor gb = Rand({B, 3, 4}, 28);
  EXPECT_TENSOR_NEAR(ReductifyLeaf(gb, 0, std::nullopt, B, std::nullopt), sum(gb, {0}), 1e-15);
  Tensor g3b4 = Rand({3, B, 4}, 29);
  EXPECT_TENSOR_NEAR(ReductifyLeaf(g3b4, 1, std::nullopt, B, Shape{3}), sum(g3b4, {1}), 1e-15);
  EXPECT_TENSOR_EQ(ReductifyLeaf(g34, std::nullopt, 1, B, std::nullopt),
                   expand(unsqueeze(g34, 1), {3, B, 4}));
  EXPECT_TENSOR_EQ(ReductifyLeaf(g34, std::nullopt, 1, B, Shape{4}),
                   tensor({12.0, 12.0, 15.0, 15.0, 18.0, 18.0, 21.0, 21.0}, {4, 2}));
  EXPECT_TENSOR_EQ(ReductifyLeaf(gb, 0, 1, B, std::nullopt), movedim(gb, 0, 1));
  Tensor g345b = Rand({3, 4, 5, B}, 30);
  EXPECT_TENSOR_NEAR(ReductifyLeaf(g345b, 3, 0, B, Shape{5}),
                     transpose(sum(g345b, {0, 1}), 0, 1), 1e-14);
}

// ---- TensorList arguments ----

// x * (sum of the list's tensors): the list is a constant for the Function (torch's rule).
struct ScaleBySum : Function<ScaleBySum> {
  static constexpr const char* name = "ScaleBySum";
  static Tensor forward(const Tensor& x, const TensorList& ws) {
    Tensor total = ws[0];
    for (size_t i = 1; i < ws.size(); ++i) total = total + ws[i];
    return x * total;
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, TensorList>& in,
                            const Tensor&) {
    const TensorList& ws = std::get<1>(in);
    Tensor total = ws[0];
    for (size_t i = 1; i < ws.size(); ++i) total = total + ws[i];
    ctx.save_for_backward({total});
    ctx.save_for_forward({total});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * ctx.saved_tensors()[0], Tensor()};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {t[0] * ctx.saved_tensors()[0]};
  }
  // torch's in_dims keep the structure of the arguments: (0, [0, 0]) for (x, [x, x]).
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims, const Tensor& x,
                                         const TensorList& ws) {
    seen = in_dims;
    Tensor xb = in_dims[0] ? movedim(x, *in_dims[0], 0) : x;
    TensorList wb;
    for (size_t i = 0; i < ws.size(); ++i) {
      const std::optional<int64_t> d = in_dims[1].elements[i];
      wb.push_back(d ? movedim(ws[i], *d, 0) : ws[i]);
    }
    return {ScaleBySum::apply(xb, wb), {0}};
  }
  static inline InDims seen;
};

struct ScaleBySumGenerated : Function<ScaleBySumGenerated> {
  static constexpr const char* name = "ScaleBySumGenerated";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x, const TensorList& ws) {
    return ScaleBySum::forward(x, ws);
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, TensorList>& in,
                            const Tensor& out) {
    ScaleBySum::setup_context(ctx, in, out);
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return ScaleBySum::backward(ctx, g);
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) { return ScaleBySum::jvp(ctx, t); }
};

TEST(Function, TensorListArgumentsAreConstantsWithStructuredInDims) {
  Tensor x = Rand({3}, 40), w1 = Rand({3}, 41), w2 = Rand({3}, 42);
  EXPECT_TENSOR_NEAR(ScaleBySum::apply(x, TensorList{w1, w2}), x * (w1 + w2), 1e-15);
  // grad and jvp w.r.t. x; the list is a constant for the Function.
  for (int generated = 0; generated < 2; ++generated) {
    SCOPED_TRACE(generated ? "generated vmap rule" : "user vmap rule");
    auto apply = [generated](const Tensor& t, const TensorList& ws) {
      return generated ? ScaleBySumGenerated::apply(t, ws) : ScaleBySum::apply(t, ws);
    };
    EXPECT_TENSOR_NEAR(grad(TensorFn([&](const Tensor& t) {
                         return sum(apply(t, TensorList{w1, w2}));
                       }))(x),
                       w1 + w2, 1e-15);
    JvpResult r = jvp([&](const TensorList& a) { return TensorList{apply(a[0], {w1, w2})}; },
                      {x}, {ones_like(x)});
    EXPECT_TENSOR_NEAR(r.tangents[0], w1 + w2, 1e-15);
    // vmap with the list batched, partly batched, and not: against a loop.
    Tensor xs = Rand({4, 3}, 43), ws1 = Rand({4, 3}, 44);
    TensorListFn f = [&](const TensorList& a) { return TensorList{apply(a[0], {a[1], w2})}; };
    TensorList got = vmap(f, {0, 0}, 0)({xs, ws1});
    TensorList want = testing::LoopVmap(f, {xs, ws1}, {0, 0}, {0});
    EXPECT_TENSOR_NEAR(got[0], want[0], 1e-15);
    // Per-example gradients through the list (grad of vmap and vmap of grad).
    TensorFn per = vmap(grad(TensorFn([&](const Tensor& t) {
      return sum(apply(t, TensorList{t * 0.0 + 1.0, w2}));
    })));
    EXPECT_TENSOR_NEAR(per(xs), expand(w2 + 1.0, {4, 3}), 1e-15);
  }
  // §3.4 #5: vmap(F)(x, [x, x]) shows the rule in_dims (0, [0, 0]).
  Tensor xs = Rand({2, 3}, 45);
  vmap(TensorListFn([](const TensorList& a) {
         return TensorList{ScaleBySum::apply(a[0], TensorList{a[0], a[0]})};
       }),
       0, 0)({xs});
  ASSERT_EQ(ScaleBySum::seen.size(), 2u);
  EXPECT_EQ(ScaleBySum::seen[0], InDim(0));
  EXPECT_TRUE(ScaleBySum::seen[1].is_list);
  EXPECT_EQ(ScaleBySum::seen[1].elements, (std::vector<std::optional<int64_t>>{0, 0}));
}

// Functions with broken rules, for the errors.
struct WrongCount : Function<WrongCount> {
  static constexpr const char* name = "WrongCount";
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {g[0], g[0]}; }
  static TensorList jvp(FunctionCtx&, const TensorList& t) { return {t[0], t[0]}; }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims&, const Tensor& x) {
    return {x * 2.0, {0, 0}};
  }
};
struct WrongShape : Function<WrongShape> {
  static constexpr const char* name = "WrongShape";
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {sum(g[0], {}, true)}; }
  static TensorList jvp(FunctionCtx&, const TensorList& t) { return {sum(t[0])}; }
};
struct NoRules : Function<NoRules> {
  static constexpr const char* name = "NoRules";
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
};
struct BothVmaps : Function<BothVmaps> {
  static constexpr const char* name = "BothVmaps";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims&, const Tensor& x) {
    return {x * 2.0, {0}};
  }
};
struct SavesReturnedInput : Function<SavesReturnedInput> {
  static constexpr const char* name = "SavesReturnedInput";
  static Tensor forward(const Tensor& x) { return x; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {g[0]}; }
};

// y += x in place, returning y (marked dirty).
struct AddInplace : Function<AddInplace> {
  static constexpr const char* name = "AddInplace";
  static Tensor forward(const Tensor& y, const Tensor& x) { return add_(y, x); }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, Tensor>& in,
                            const Tensor&) {
    ctx.mark_dirty({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {g[0], g[0]}; }
  static TensorList jvp(FunctionCtx&, const TensorList& t) { return {t[0] + t[1]}; }
};

TEST(Function, DirtyInputsMustBeTrackedAndNotTheCallers) {
  Tensor x = Rand({3}, 17);
  // Writing into a tensor made inside f is fine: d/dx sum((2x) + x) = 3.
  EXPECT_TENSOR_NEAR(grad(TensorFn([](const Tensor& t) {
                       Tensor y = t * 2.0;
                       return sum(AddInplace::apply(y, t));
                     }))(x),
                     full_like(x, 3.0), 1e-15);
  Tensor captured = zeros({3}, kFloat64);
  EXPECT_FT_ERROR(grad(TensorFn([&captured](const Tensor& t) {
                    return sum(AddInplace::apply(captured, t));
                  }))(x),
                  "AddInplace: forward modified argument 0 in place (mark_dirty) but it is not "
                  "tracked at grad level");
  EXPECT_FT_ERROR(jvp([&captured](const TensorList& a) {
                        return TensorList{AddInplace::apply(captured, a[0])};
                      },
                      {x}, {ones_like(x)}),
                  "AddInplace: forward modified argument 0 in place (mark_dirty) but it carries "
                  "no tangent at jvp level");
  // Like PyTorch's leaf check, this runs after forward: the caller's tensor was written.
  Tensor caller = Rand({3}, 18);
  EXPECT_FT_ERROR(grad(TensorFn([](const Tensor& t) { return sum(ExpInplace::apply(t)); }))(caller),
                  "ExpInplace: forward modified argument 0 in place, an input being "
                  "differentiated at level");
  EXPECT_TRUE(LayerStack::empty());
}

// Found by the property test: a Function's argument written through a view after its
// history (or tangent) was recorded got the Function's rules applied to the stale history, a
// silently wrong derivative (the write's factor 2.5 was lost). It is the ops' error now.
TEST(Function, AnArgumentWrittenThroughAViewIsAnErrorUnderGradAndJvp) {
  const Tensor x = Rand({3}, 40);
  const auto written = [](const Tensor& e) {
    Tensor c = clone(e);
    mul_(narrow(c, 0, 0, 1), 2.5);
    return c;
  };
  const TensorFn f = [&](const Tensor& e) { return sum(MySin::apply(written(e))); };
  EXPECT_FT_ERROR(grad(f)(x), "grad: 'MySin' got a tensor of shape [3] whose value was "
                              "modified in place through a view");
  EXPECT_FT_ERROR(jvp([&](const TensorList& a) { return TensorList{MySin::apply(written(a[0]))}; },
                      {x}, {ones({3}, kFloat64)}),
                  "jvp: 'MySin' got a tensor of shape [3] whose value was modified in place "
                  "through a view");
  EXPECT_TRUE(LayerStack::empty());
}

TEST(Function, ErrorsNameTheFunction) {
  Tensor x = Rand({3}, 11);
  auto grad_of = [](auto apply) {
    return grad(TensorFn([apply](const Tensor& t) { return sum(apply(t)); }));
  };
  EXPECT_FT_ERROR(grad_of([](const Tensor& t) { return WrongCount::apply(t); })(x),
                  "WrongCount: backward returned 2 gradients, expected 1");
  EXPECT_FT_ERROR(grad_of([](const Tensor& t) { return WrongShape::apply(t); })(x * 1.0 +
                                                                                 ones({2, 3}, kFloat64)),
                  "WrongShape: backward returned a result of shape [1, 1] for argument 0 of "
                  "shape [2, 3]");
  EXPECT_FT_ERROR(grad_of([](const Tensor& t) { return NoRules::apply(t); })(x),
                  "NoRules: You must implement either the backward or vjp method");
  auto jvp_of = [&x](auto apply) {
    return jvp([apply](const TensorList& a) { return TensorList{apply(a[0])}; }, {x},
               {ones_like(x)});
  };
  EXPECT_FT_ERROR(jvp_of([](const Tensor& t) { return WrongCount::apply(t); }),
                  "WrongCount: jvp returned 2 tangents, expected 1");
  EXPECT_FT_ERROR(jvp_of([](const Tensor& t) { return WrongShape::apply(t); }),
                  "WrongShape: jvp returned a result of shape [] for output 0 of shape [3]");
  EXPECT_FT_ERROR(jvp_of([](const Tensor& t) { return NoRules::apply(t); }),
                  "NoRules: You must implement the jvp function");
  Tensor xs = Rand({2, 3}, 12);
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& t) { return NoRules::apply(t); }))(xs),
                  "vmap: You tried to vmap over NoRules, but it does not have vmap support");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& t) { return BothVmaps::apply(t); }))(xs),
                  "vmap: You tried to vmap over BothVmaps, but it has both generate_vmap_rule=true "
                  "and a vmap rule");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& t) { return WrongCount::apply(t); }))(xs),
                  "WrongCount: the vmap rule returned an incompatible (outputs, out_dims) pair: "
                  "1 outputs but out_dims [0, 0]");
  EXPECT_FT_ERROR(SavesReturnedInput::apply(x),
                  "SavesReturnedInput: an input that has been returned as-is as output 0 is "
                  "being saved for backward");
  EXPECT_FT_ERROR(grad_of([](const Tensor& t) { return SavesReturnedInput::apply(t); })(x),
                  "is being saved for backward");
  EXPECT_TRUE(LayerStack::empty());
}

// JvpReadsBackwardsSaves: setup_context saves for backward only, and jvp reads a saved tensor.
struct JvpReadsBackwardsSaves : Function<JvpReadsBackwardsSaves> {
  static constexpr const char* name = "JvpReadsBackwardsSaves";
  static Tensor forward(const Tensor& x) { return x * x; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * 2.0 * ctx.saved_tensors()[0]};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {t[0] * 2.0 * ctx.saved_tensors()[0]};
  }
};

TEST(FunctionCtx, ReadingATensorThatWasNotSavedIsAnError) {
  Tensor x = Rand({3}, 13);
  EXPECT_FT_ERROR(jvp([](const TensorList& a) { return TensorList{JvpReadsBackwardsSaves::apply(a[0])}; },
                      {x}, {ones_like(x)}),
                  "saved_tensors: index 0 is out of range, 0 tensors were saved (backward reads "
                  "what setup_context passed to save_for_backward, jvp what it passed to "
                  "save_for_forward)");
  EXPECT_FT_ERROR(jacfwd([](const TensorList& a) { return JvpReadsBackwardsSaves::apply(a[0]); })(
                      {ones({1})}),
                  "saved_tensors: index 0 is out of range");
  EXPECT_TRUE(LayerStack::empty());
  // backward reads what it saved.
  EXPECT_TENSOR_NEAR(
      grad(TensorFn([](const Tensor& t) { return sum(JvpReadsBackwardsSaves::apply(t)); }))(x),
      x * 2.0, 1e-12);
  FunctionCtx ctx;
  ctx.save_for_forward({x});
  ctx.set_phase(FunctionCtx::Phase::kForward);
  EXPECT_TRUE(ctx.saved_tensors()[0].is_same(x));
  EXPECT_FT_ERROR(ctx.saved_tensors()[1], "saved_tensors: index 1 is out of range, 1 tensors");
}

}  // namespace
}  // namespace ft

// The edges of ft::Function's API (issue 24): rules written as templates are found, rules
// with the wrong signature do not compile, jvp can opt out of materialized zero tangents, and
// ctx.state has a named form. Oracles: closed forms and loops over examples.
#include <cmath>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "custom_function/function.h"
#include "dispatch/interpreter.h"
#include "gtest/gtest.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::Rand;

// ---- Rules found, rules refused ----

// Scale by a constant with its vmap rule written as a template over the trailing arguments.
struct TemplateVmapScale : Function<TemplateVmapScale> {
  static inline int vmap_calls = 0;
  static Tensor forward(const Tensor& x, double c) { return x * c; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor, double>&, const Tensor&) {}
  template <typename... Rest>
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims, const Tensor& x,
                                         const Rest&... rest) {
    ++vmap_calls;
    return {forward(x, rest...), {in_dims[0].dim}};
  }
};

// The same rule as a template, and generate_vmap_rule set: ambiguous (before, the template was
// not seen and the generated rule ran silently).
struct TemplateVmapAndGenerated : Function<TemplateVmapAndGenerated> {
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return x * 2.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  template <typename T>
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims, const T& x) {
    return {x * 2.0, {in_dims[0].dim}};
  }
};

// Rules with wrong signatures: each would be ignored if only callability were checked.
struct BackwardTakesATensor : Function<BackwardTakesATensor> {
  static Tensor forward(const Tensor& x) { return x; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const Tensor& g) { return {g}; }
};
struct JvpWithoutCtx : Function<JvpWithoutCtx> {
  static Tensor forward(const Tensor& x) { return x; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList jvp(const TensorList& t) { return t; }
};
struct VmapMissingInDims : Function<VmapMissingInDims> {
  static Tensor forward(const Tensor& x) { return x; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const Tensor& x) { return {x, {0}}; }
};
struct VmapReturnsOnlyTheTensor : Function<VmapReturnsOnlyTheTensor> {
  static Tensor forward(const Tensor& x) { return x; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static Tensor vmap(const VmapInfo&, const InDims&, const Tensor& x) { return x; }
};
struct FinalWithWrongVmap final : Function<FinalWithWrongVmap> {
  static Tensor forward(const Tensor& x) { return x; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static Tensor vmap(const Tensor& x) { return x; }
};
struct NoRulesAtAll : Function<NoRulesAtAll> {
  static Tensor forward(const Tensor& x) { return x; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
};

// The conditions of function.h's static_asserts: "declared but not usable" is what stops the
// build. (Calling apply on any of the Functions above whose condition is false does not
// compile; these checks are what that rests on.)
template <typename F>
constexpr bool BackwardOk() {
  return internal::HasBackward<F> || !internal::DeclaresBackward<F>;
}
template <typename F>
constexpr bool JvpOk() {
  return internal::HasJvp<F> || !internal::DeclaresJvp<F>;
}
template <typename F, typename R, typename... Args>
constexpr bool VmapOk() {
  return internal::HasVmap<F, R, std::tuple<Args...>> || !internal::DeclaresVmap<F>;
}
static_assert(internal::DeclaresVmap<TemplateVmapScale>);
static_assert(internal::HasVmap<TemplateVmapScale, Tensor, std::tuple<Tensor, double>>);
static_assert(!BackwardOk<BackwardTakesATensor>());
static_assert(!JvpOk<JvpWithoutCtx>());
static_assert(!VmapOk<VmapMissingInDims, Tensor, Tensor>());
static_assert(!VmapOk<VmapReturnsOnlyTheTensor, Tensor, Tensor>());
static_assert(!VmapOk<FinalWithWrongVmap, Tensor, Tensor>());
static_assert(!internal::DeclaresBackward<NoRulesAtAll> && !internal::DeclaresJvp<NoRulesAtAll> &&
              !internal::DeclaresVmap<NoRulesAtAll>);
static_assert(BackwardOk<NoRulesAtAll>() && JvpOk<NoRulesAtAll>() &&
              VmapOk<NoRulesAtAll, Tensor, Tensor>());

TEST(FunctionRules, ATemplateVmapRuleIsUsedAgainstALoop) {
  Tensor xs = Rand({4, 3}, 1);
  TemplateVmapScale::vmap_calls = 0;
  Tensor out = vmap(TensorFn([](const Tensor& x) { return TemplateVmapScale::apply(x, 3.0); }),
                    1, 1)(transpose(xs, 0, 1));
  EXPECT_EQ(TemplateVmapScale::vmap_calls, 1);
  for (int64_t b = 0; b < 4; ++b) {
    EXPECT_TENSOR_NEAR(select(out, 1, b), select(xs, 0, b) * 3.0, 0);
  }
}

TEST(FunctionRules, ATemplateVmapRuleBesideGenerateVmapRuleIsAmbiguous) {
  EXPECT_FT_ERROR(
      vmap(TensorFn([](const Tensor& x) { return TemplateVmapAndGenerated::apply(x); }))(
          Rand({2, 3}, 2)),
      "You tried to vmap over TemplateVmapAndGenerated, but it has both "
      "generate_vmap_rule=true and a vmap rule");
  EXPECT_TRUE(LayerStack::empty());
}

// ---- set_materialize_tangents ----

// x * y with the product rule; records which tangents jvp received defined.
template <bool kMaterialize>
struct Product : Function<Product<kMaterialize>> {
  static constexpr const char* name = "Product";
  static constexpr bool generate_vmap_rule = true;
  static inline std::vector<bool> seen_defined;
  static Tensor forward(const Tensor& x, const Tensor& y) { return x * y; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, Tensor>& in,
                            const Tensor&) {
    ctx.save_for_forward({std::get<0>(in), std::get<1>(in)});
    ctx.set_materialize_tangents(kMaterialize);
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    seen_defined = {t[0].defined(), t[1].defined()};
    const Tensor& x = ctx.saved_tensors()[0];
    const Tensor& y = ctx.saved_tensors()[1];
    Tensor out;
    if (t[0].defined()) out = t[0] * y;
    if (t[1].defined()) out = out.defined() ? out + x * t[1] : x * t[1];
    if (!out.defined()) out = zeros_like(x * y);
    return {out};
  }
};

TEST(FunctionCtx, MaterializeTangentsFalseHandsJvpUndefinedTangents) {
  Tensor x = Rand({3}, 3), y = Rand({3}, 4), tx = Rand({3}, 5);
  // Only x varies: y is a constant captured by the function.
  auto run = [&](auto apply) {
    return jvp([&](const TensorList& a) { return TensorList{apply(a[0], y)}; }, {x}, {tx});
  };
  JvpResult lazy = run([](const Tensor& a, const Tensor& b) { return Product<false>::apply(a, b); });
  EXPECT_EQ(Product<false>::seen_defined, (std::vector<bool>{true, false}));
  EXPECT_TENSOR_NEAR(lazy.tangents[0], tx * y, 1e-15);
  // The default materializes the zero tangent of y; the result is the same.
  JvpResult eager = run([](const Tensor& a, const Tensor& b) { return Product<true>::apply(a, b); });
  EXPECT_EQ(Product<true>::seen_defined, (std::vector<bool>{true, true}));
  EXPECT_TENSOR_NEAR(eager.tangents[0], tx * y, 1e-15);
  // Through the generated vmap rule, per example (oracle: the same product rule by rows).
  Tensor xs = Rand({2, 3}, 6), txs = Rand({2, 3}, 7);
  TensorListFn f = [&y](const TensorList& a) { return TensorList{Product<false>::apply(a[0], y)}; };
  JvpResult batched = jvp([&f](const TensorList& a) { return vmap(f, 0, 0)(a); }, {xs}, {txs});
  EXPECT_EQ(Product<false>::seen_defined, (std::vector<bool>{true, false}));
  EXPECT_TENSOR_NEAR(batched.tangents[0], txs * y, 1e-15);
  // And inside vmap, jvp per example.
  Tensor per_example = vmap(TensorListFn([&f](const TensorList& a) {
                              return jvp(f, {a[0]}, {a[1]}).tangents;
                            }),
                            0, 0)({xs, txs})[0];
  EXPECT_TENSOR_NEAR(per_example, txs * y, 1e-15);
}

// ---- Named state ----

// Sums a [m, n] tensor to a scalar and back: backward needs both shapes, of one type.
struct SumAndExpand : Function<SumAndExpand> {
  static constexpr const char* name = "SumAndExpand";
  static Tensor forward(const Tensor& x, const Tensor& like) {
    return expand(sum(x), like.sizes());
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, Tensor>& in,
                            const Tensor& out) {
    ctx.state<Shape>("in_shape") = Shape(std::get<0>(in).sizes().begin(),
                                         std::get<0>(in).sizes().end());
    ctx.state<Shape>("out_shape") = Shape(out.sizes().begin(), out.sizes().end());
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    EXPECT_EQ(ctx.state<Shape>("out_shape"), Shape(g[0].sizes().begin(), g[0].sizes().end()));
    return {expand(sum(g[0]), ctx.state<Shape>("in_shape")), Tensor()};
  }
};

TEST(FunctionCtx, NamedStateKeepsTwoValuesOfOneType) {
  Tensor x = Rand({2, 3}, 8), like = zeros({4}, kFloat64);
  // d/dx sum(expand(sum(x), [4]) * w) = sum(w) everywhere.
  Tensor w = Rand({4}, 9);
  Tensor g = grad(TensorFn([&](const Tensor& t) { return sum(SumAndExpand::apply(t, like) * w); }))(
      x);
  EXPECT_TENSOR_NEAR(g, full({2, 3}, sum(w).item<double>(), kFloat64), 1e-14);
}

TEST(FunctionCtx, NamedStateOfAnotherTypeIsAnError) {
  FunctionCtx ctx;
  ctx.state<int64_t>("k") = 3;
  ctx.state<int64_t>() = 5;  // the unnamed slot is separate
  EXPECT_EQ(ctx.state<int64_t>("k"), 3);
  EXPECT_EQ(ctx.state<int64_t>(), 5);
  EXPECT_EQ(ctx.state<double>("fresh"), 0.0);
  EXPECT_FT_ERROR(ctx.state<double>("k"),
                  "state: \"k\" holds a long, asked for a double (a named state keeps the type "
                  "of its first use)");
}

}  // namespace
}  // namespace ft

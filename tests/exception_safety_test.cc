// Exceptions thrown at every depth of a transform: user code, a batching rule, a derivative
// formula's inputs, a custom Function's forward, backward, jvp and vmap rule, a vjp_fn call
// after its transform returned, a jit replay, functionalize's write-back. Afterwards the layer
// stack is as it was (checked after each case), the same calls work again, and nothing leaks
// (LeakSanitizer checks the last, in CI's --config=asan run).
#include <functional>
#include <string>
#include <tuple>
#include <utility>

#include "ft.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace ft {
namespace {

// A user op whose batching rule throws while g_rule_throws is set.
bool g_rule_throws = false;
Tensor TestScaleKernel(const Tensor& x) { return x * 2.0; }

void RegisterTestScale() {
  static const bool done = [] {
    RegisterAllOps();
    Operator& op = RegisterOp<&TestScaleKernel>(OpRegistry::Global(), "test_scale", {"self"});
    SetBatchRule(op, [](const VmapContext& ctx, BatchedArgs& args) -> BatchedResult {
      if (g_rule_throws) {
        ThrowError("test_scale: thrown by its batching rule (vmap level ", ctx.level, ")");
      }
      return BatchedResult{{Value(args.tensor(0) * 2.0)}, {args.bdim(0)}};
    });
    return true;
  }();
  (void)done;
}

Tensor TestScale(const Tensor& x) { return Call<&TestScaleKernel>(x); }

struct Throws {
  bool forward = false, backward = false, jvp = false, vmap = false;
};
Throws g_throws;

struct Fragile : Function<Fragile> {
  static constexpr const char* name = "Fragile";
  static Tensor forward(const Tensor& x) {
    if (g_throws.forward) ThrowError("Fragile: forward threw");
    return sin(x);
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
    ctx.save_for_forward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    if (g_throws.backward) ThrowError("Fragile: backward threw");
    return {g[0] * cos(ctx.saved_tensors()[0])};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    if (g_throws.jvp) ThrowError("Fragile: jvp threw");
    return {t[0] * cos(ctx.saved_tensors()[0])};
  }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims, const Tensor& x) {
    if (g_throws.vmap) ThrowError("Fragile: vmap rule threw");
    return {Fragile::apply(x), {in_dims[0]}};
  }
};

// Checks: `f` throws an ft::Error with `fragment`, the stack is empty after, and `f` runs
// again when nothing makes it throw.
void ExpectThrowsCleanly(const std::function<void()>& f, const std::string& fragment,
                         bool* make_throw) {
  *make_throw = true;
  EXPECT_FT_ERROR(f(), fragment);
  EXPECT_TRUE(LayerStack::empty()) << LayerStack::DebugString();
  *make_throw = false;
  f();
  EXPECT_TRUE(LayerStack::empty());
}

TEST(ExceptionSafety, UserCodeAndBatchingRulesAtEveryDepth) {
  RegisterTestScale();
  const Tensor xs = ones({2, 3});
  bool& rule_throws = g_rule_throws;
  auto f = TensorFn([](const Tensor& x) { return TestScale(x); });
  ExpectThrowsCleanly([&] { vmap(f)(xs); }, "test_scale: thrown by its batching rule", &rule_throws);
  ExpectThrowsCleanly([&] { vmap(vmap(f))(ones({2, 2, 3})); }, "thrown by its batching rule",
                      &rule_throws);
  ExpectThrowsCleanly([&] { vmap(functionalize(f))(xs); }, "thrown by its batching rule",
                      &rule_throws);
  ExpectThrowsCleanly([&] { jit([&](const TensorList& a) { return TensorList{vmap(f)(a[0])}; })({xs}); },
                      "thrown by its batching rule", &rule_throws);
  bool user_throws = false;
  auto user = TensorFn([&user_throws](const Tensor& x) {
    if (user_throws) ThrowError("user code threw");
    return sum(sin(x));
  });
  ExpectThrowsCleanly([&] { hessian([&](const TensorList& a) { return user(a[0]); })({ones({3})}); },
                      "user code threw", &user_throws);
  ExpectThrowsCleanly([&] { jacfwd([&](const TensorList& a) { return user(a[0]); })({ones({3})}); },
                      "user code threw", &user_throws);
}

TEST(ExceptionSafety, CustomFunctionRules) {
  const Tensor x = ones({3}), xs = ones({2, 3});
  auto total = ScalarFn([](const TensorList& a) { return sum(Fragile::apply(a[0])); });
  ExpectThrowsCleanly([&] { Fragile::apply(x); }, "Fragile: forward threw", &g_throws.forward);
  ExpectThrowsCleanly([&] { grad(total)({x}); }, "Fragile: forward threw", &g_throws.forward);
  ExpectThrowsCleanly([&] { grad(total)({x}); }, "Fragile: backward threw", &g_throws.backward);
  ExpectThrowsCleanly([&] { vmap(grad(total))({xs}); }, "Fragile: backward threw",
                      &g_throws.backward);
  auto second = ScalarFn([total](const TensorList& a) { return sum(grad(total)(a)[0]); });
  ExpectThrowsCleanly([&] { grad(second)({x}); }, "Fragile: backward threw", &g_throws.backward);
  ExpectThrowsCleanly(
      [&] { jvp(TensorListFn([](const TensorList& a) { return TensorList{Fragile::apply(a[0])}; }),
                {x}, {x}); },
      "Fragile: jvp threw", &g_throws.jvp);
  ExpectThrowsCleanly([&] { vmap(TensorFn([](const Tensor& t) { return Fragile::apply(t); }))(xs); },
                      "Fragile: vmap rule threw", &g_throws.vmap);
  ExpectThrowsCleanly([&] { grad(functionalize(total))({x}); }, "Fragile: backward threw",
                      &g_throws.backward);
}

TEST(ExceptionSafety, VjpFnJitReplayAndWriteBack) {
  const Tensor x = ones({3});
  VjpResult r = vjp(TensorListFn([](const TensorList& a) { return TensorList{sin(a[0])}; }), {x});
  EXPECT_FT_ERROR(r.vjp_fn({ones({4})}), "vjp: Mismatch in shape");
  EXPECT_TRUE(LayerStack::empty());
  EXPECT_TENSOR_NEAR(r.vjp_fn({ones({3})})[0], cos(x), 1e-6);
  // A replay whose kernel throws on the new inputs (an index out of range).
  JitFunction pick = jit([](const TensorList& a) { return TensorList{index_select(a[0], 0, a[1])}; });
  const Tensor data = arange(0.0, 4.0, 1.0);
  pick({data, tensor(std::vector<int64_t>{1, 2})});
  EXPECT_FT_ERROR(pick({data, tensor(std::vector<int64_t>{1, 9})}), "index_select");
  EXPECT_TENSOR_EQ(pick({data, tensor(std::vector<int64_t>{3, 0})})[0], tensor({3.0f, 0.0f}));
  // functionalize's write-back into a caller tensor that refuses writes: no partial state.
  Tensor overlapping = expand(ones({1, 3}), {2, 3});
  EXPECT_FT_ERROR(functionalize(TensorFn([](const Tensor& t) { return mul_(t, 2.0); }))(overlapping),
                  "elements overlap");
  EXPECT_TRUE(LayerStack::empty());
}

TEST(ExceptionSafety, CaughtInsideAnOuterTransformTheStackIsTheOuterOnes) {
  // The user catches inside grad(vmap(...)): the stack must be back to those two levels,
  // not empty and not deeper, and the outer transforms finish with the right answer.
  const Tensor xs = tensor({0.5, 1.0, 2.0});
  int depth_inside = 0, depth_after_catch = 0;
  int caught = 0;
  auto f = ScalarFn([&](const TensorList& a) {
    Tensor per_row = vmap(TensorFn([&](const Tensor& x) {
                       depth_inside = LayerStack::size();
                       try {
                         // Throws two levels further in, in a Function's backward inside
                         // vmap(grad) and in user code inside jvp.
                         g_throws.backward = true;
                         vmap(grad(ScalarFn([](const TensorList& b) {
                           return sum(Fragile::apply(b[0]));
                         })))({expand(unsqueeze(x, 0), {2})});
                       } catch (const Error&) {
                         ++caught;
                       }
                       g_throws.backward = false;
                       try {
                         jvp(TensorListFn([](const TensorList&) -> TensorList {
                               ThrowError("user code threw");
                             }),
                             {x}, {x});
                       } catch (const Error&) {
                         ++caught;
                       }
                       depth_after_catch = LayerStack::size();
                       return x * x;
                     }))(a[0]);
    return sum(per_row);
  });
  const Tensor g = grad(f)({xs})[0];
  EXPECT_EQ(caught, 2);
  EXPECT_EQ(depth_inside, 2);
  EXPECT_EQ(depth_after_catch, 2);
  EXPECT_TRUE(LayerStack::empty());
  EXPECT_TENSOR_NEAR(g, xs * 2.0, 1e-12);
}

TEST(ExceptionSafety, AVjpFnWhoseBackwardThrows) {
  // vjp_fn runs the backward pass after vjp returned: a Function's backward throws there.
  const Tensor x = tensor({0.25, 0.5});
  VjpResult r = vjp(TensorListFn([](const TensorList& a) { return TensorList{Fragile::apply(a[0])}; }),
                    {x});
  g_throws.backward = true;
  EXPECT_FT_ERROR(r.vjp_fn({ones({2}, kFloat64)}), "Fragile: backward threw");
  g_throws.backward = false;
  EXPECT_TRUE(LayerStack::empty());
  EXPECT_TENSOR_NEAR(r.vjp_fn({ones({2}, kFloat64)})[0], cos(x), 1e-15);
}

}  // namespace
}  // namespace ft

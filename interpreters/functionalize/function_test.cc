// Custom Functions (ft::Function) under functionalize, alone and inside grad, jvp and vmap:
// the Function's own backward, jvp and vmap rules run (their calls are counted), a Function
// that writes its input in place (mark_dirty) updates the functional wrapper so the write
// reaches the caller's tensor, and saved tensors keep their values at save time. Oracles:
// closed forms and the same program run eagerly.
#include <cmath>
#include <functional>
#include <tuple>
#include <utility>

#include "custom_function/function.h"
#include "gtest/gtest.h"
#include "interpreters/functionalize/functionalize.h"
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
using Fn = std::function<Tensor(const Tensor&)>;
using ListFn = std::function<Tensor(const TensorList&)>;

struct Calls {
  int forward = 0;
  int backward = 0;
  int jvp = 0;
  int vmap = 0;
};
Calls g_calls;

// sin with its own backward, jvp and vmap rule, each counted.
struct CountingSin : Function<CountingSin> {
  static constexpr const char* name = "CountingSin";
  static Tensor forward(const Tensor& x) {
    ++g_calls.forward;
    return sin(x);
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
    ctx.save_for_forward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    ++g_calls.backward;
    return {g[0] * cos(ctx.saved_tensors()[0])};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    ++g_calls.jvp;
    return {t[0] * cos(ctx.saved_tensors()[0])};
  }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims,
                                         const Tensor& x) {
    ++g_calls.vmap;
    return {CountingSin::apply(x), {in_dims[0]}};
  }
};

// exp in place: forward writes its input and returns it (mark_dirty).
struct ExpInPlace : Function<ExpInPlace> {
  static constexpr const char* name = "ExpInPlace";
  static Tensor forward(const Tensor& x) {
    ++g_calls.forward;
    return exp_(x);
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor& out) {
    ctx.mark_dirty({std::get<0>(in)});
    ctx.save_for_backward({out});
    ctx.save_for_forward({out});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    ++g_calls.backward;
    return {g[0] * ctx.saved_tensors()[0]};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    ++g_calls.jvp;
    return {t[0] * ctx.saved_tensors()[0]};
  }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims,
                                         const Tensor& x) {
    ++g_calls.vmap;
    return {ExpInPlace::apply(x), {in_dims[0]}};
  }
};

TEST(FunctionUnderFunctionalize, OutputsAreWrappedAndForwardRunsOnce) {
  g_calls = {};
  const Tensor x = Rand({4}, 1);
  Tensor got = functionalize(Fn([](const Tensor& x) {
    Tensor y = CountingSin::apply(x);
    EXPECT_EQ(y.kind(), TensorKind::kFunctional);
    add_(y, 1.0);  // an output of the Function is functionalize's like any other tensor
    return y;
  }))(x);
  EXPECT_EQ(g_calls.forward, 1);
  EXPECT_TENSOR_NEAR(got, sin(x) + 1.0, 1e-15);
}

TEST(FunctionUnderFunctionalize, AnInPlaceFunctionWritesReachTheCallersTensor) {
  for (FunctionalizeRemove mode :
       {FunctionalizeRemove::kMutations, FunctionalizeRemove::kMutationsAndViews}) {
    SCOPED_TRACE(FunctionalizeRemoveName(mode));
    const Tensor x0 = Rand({2, 3}, 2);
    // The whole input.
    Tensor x = clone(x0);
    Tensor s = functionalize(Fn([](const Tensor& x) {
                               Tensor out = ExpInPlace::apply(x);
                               EXPECT_TRUE(out.is_same(x));  // mark_dirty's identity
                               return sum(x);
                             }),
                             mode)(x);
    EXPECT_TENSOR_NEAR(x, exp(x0), 1e-15);
    EXPECT_TENSOR_NEAR(s, sum(exp(x0)), 1e-12);
    // Through a view of the input: the base sees it, and so does the caller.
    Tensor y = clone(x0);
    Tensor seen = functionalize(Fn([](const Tensor& x) {
                                  ExpInPlace::apply(select(x, 0, 1));
                                  return x * 1.0;
                                }),
                                mode)(y);
    const Tensor expected = cat({narrow(x0, 0, 0, 1), exp(narrow(x0, 0, 1, 1))}, 0);
    EXPECT_TENSOR_NEAR(seen, expected, 1e-15);
    EXPECT_TENSOR_NEAR(y, expected, 1e-15);
    // A buffer made inside: the caller's tensor is untouched.
    Tensor z = clone(x0);
    Tensor r = functionalize(Fn([](const Tensor& x) {
                               Tensor buf = x * 1.0;
                               ExpInPlace::apply(buf);
                               return buf;
                             }),
                             mode)(z);
    EXPECT_TENSOR_EQ(z, x0);
    EXPECT_TENSOR_NEAR(r, exp(x0), 1e-15);
  }
}

// a += b in place: forward writes its first input and returns it (mark_dirty).
struct AddInPlace : Function<AddInPlace> {
  static constexpr const char* name = "AddInPlace";
  static Tensor forward(const Tensor& a, const Tensor& b) {
    ++g_calls.forward;
    return add_(a, b);
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, Tensor>& in,
                            const Tensor&) {
    ctx.mark_dirty({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx&, const TensorList& g) {
    ++g_calls.backward;
    return {g[0], g[0]};
  }
};

// Adds 1 to both inputs in place (both marked dirty), returns the first.
struct BumpBoth : Function<BumpBoth> {
  static constexpr const char* name = "BumpBoth";
  static Tensor forward(const Tensor& a, const Tensor& b) {
    add_(b, 1.0);
    return add_(a, 1.0);
  }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor, Tensor>& in,
                            const Tensor&) {
    ctx.mark_dirty({std::get<0>(in), std::get<1>(in)});
  }
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {g[0], g[0]}; }
};

TEST(FunctionUnderFunctionalize, AnInPlaceFunctionWritesNothingWhenFThrows) {
  // The write reaches the caller's tensor at exit, like every other write under functionalize:
  // forward writes a private copy of the value, which is the caller's tensor itself.
  for (FunctionalizeRemove mode :
       {FunctionalizeRemove::kMutations, FunctionalizeRemove::kMutationsAndViews}) {
    SCOPED_TRACE(FunctionalizeRemoveName(mode));
    const Tensor x0 = Rand({2, 3}, 11);
    Tensor x = clone(x0);
    EXPECT_FT_ERROR(functionalize(Fn([](const Tensor& x) -> Tensor {
                                    ExpInPlace::apply(x);
                                    ExpInPlace::apply(select(x, 0, 1));
                                    ThrowError("user: stop");
                                  }),
                                  mode)(x),
                    "user: stop");
    EXPECT_TENSOR_EQ(x, x0);
  }
}

TEST(FunctionUnderFunctionalize, AFunctionWritingAViewBesideItsBase) {
  // v is a view of x, passed beside x; only v is written. Out-of-place twin: the same
  // arithmetic by hand.
  for (FunctionalizeRemove mode :
       {FunctionalizeRemove::kMutations, FunctionalizeRemove::kMutationsAndViews}) {
    SCOPED_TRACE(FunctionalizeRemoveName(mode));
    const Tensor x0 = Rand({3, 2}, 12);
    Tensor x = clone(x0);
    g_calls = {};
    const Tensor got = functionalize(Fn([](const Tensor& x) {
                                       Tensor v = select(x, 0, 2);
                                       AddInPlace::apply(v, select(x, 0, 0));
                                       return x * 1.0;
                                     }),
                                     mode)(x);
    EXPECT_EQ(g_calls.forward, 1);
    const Tensor expected = cat({narrow(x0, 0, 0, 2), narrow(x0, 0, 2, 1) + narrow(x0, 0, 0, 1)}, 0);
    EXPECT_TENSOR_NEAR(got, expected, 1e-15);
    EXPECT_TENSOR_NEAR(x, expected, 1e-15);
  }
  // Its gradient, through the Function's own backward: d/dx sum(x after) = 1 + [row 2 -> row 0].
  auto f = [](const TensorList& a) {
    Tensor y = a[0] * 1.0;
    AddInPlace::apply(select(y, 0, 2), select(y, 0, 0));
    return sum(y * y);
  };
  const TensorList args = {Rand({3, 2}, 13)};
  g_calls = {};
  const Tensor g = grad(functionalize(ListFn(f)))(args)[0];
  EXPECT_EQ(g_calls.backward, 1);
  const Tensor x = args[0];
  const Tensor row2 = select(x, 0, 2) + select(x, 0, 0);
  const Tensor expected = stack({2.0 * select(x, 0, 0) + 2.0 * row2, 2.0 * select(x, 0, 1),
                                 2.0 * row2},
                                0);
  EXPECT_TENSOR_NEAR(g, expected, 1e-12);
}

TEST(FunctionUnderFunctionalize, WritesItCannotExpressAreErrorsNamingTheFunction) {
  // Two arguments that share memory, both written: the order of their writes is lost.
  Tensor x = Rand({4}, 14);
  const Tensor x0 = clone(x);
  EXPECT_FT_ERROR(functionalize(Fn([](const Tensor& x) {
                    return BumpBoth::apply(narrow(x, 0, 0, 2), narrow(x, 0, 1, 2));
                  }))(x),
                  "BumpBoth: forward wrote arguments that share memory (argument 1 and an "
                  "earlier one) under functionalize (level ");
  EXPECT_TENSOR_EQ(x, x0);
  // A broadcasting view has no inverse to write through.
  EXPECT_FT_ERROR(functionalize(Fn([](const Tensor& x) {
                    return ExpInPlace::apply(expand(narrow(x, 0, 0, 1), {3}));
                  }))(x),
                  "ExpInPlace: forward wrote argument 0 in place, a view of shape [3] that "
                  "functionalize (level ");
  EXPECT_TENSOR_EQ(x, x0);
  // The same tensor passed twice is one tensor to forward, written once.
  Tensor y = clone(x0);
  functionalize(Fn([](const Tensor& y) { return AddInPlace::apply(y, y); }))(y);
  EXPECT_TENSOR_NEAR(y, x0 * 2.0, 1e-15);
}

TEST(FunctionUnderFunctionalize, GradRunsTheFunctionsBackward) {
  // A write through a view before the Function (plain grad refuses the next use of y).
  auto f = [](const TensorList& a) {
    Tensor y = a[0] * 1.0;
    mul_(select(y, 0, 0), 2.0);
    return sum(CountingSin::apply(y));
  };
  const TensorList args = {Rand({3}, 3)};
  const Tensor x = args[0];
  g_calls = {};
  const Tensor g = grad(functionalize(ListFn(f)))(args)[0];
  EXPECT_EQ(g_calls.backward, 1);
  const Tensor scale = tensor({2.0, 1.0, 1.0});
  EXPECT_TENSOR_NEAR(g, cos(x * scale) * scale, 1e-12);
  EXPECT_TRUE(testing::GradCheck(functionalize(ListFn(f)), args));
}

TEST(FunctionUnderFunctionalize, JvpRunsTheFunctionsJvp) {
  auto f = [](const TensorList& a) {
    Tensor buf = zeros({3}, kFloat64);
    copy_(buf, a[0]);
    return TensorList{CountingSin::apply(buf)};
  };
  const Tensor x = Rand({3}, 4), t = Rand({3}, 5);
  g_calls = {};
  JvpResult r = jvp(functionalize(std::function<TensorList(const TensorList&)>(f)), {x}, {t});
  EXPECT_EQ(g_calls.jvp, 1);
  EXPECT_TENSOR_NEAR(r.outputs[0], sin(x), 1e-15);
  EXPECT_TENSOR_NEAR(r.tangents[0], t * cos(x), 1e-15);
}

TEST(FunctionUnderFunctionalize, VmapRunsTheFunctionsVmapRule) {
  auto f = [](const Tensor& x) {
    Tensor buf = zeros({3}, kFloat64);
    add_(buf, x);  // batched values into a buffer made inside
    return CountingSin::apply(buf) * 2.0;
  };
  const Tensor xs = Rand({4, 3}, 6);
  g_calls = {};
  const Tensor got = vmap(functionalize(Fn(f)))(xs);
  EXPECT_EQ(g_calls.vmap, 1);
  EXPECT_TENSOR_NEAR(got, sin(xs) * 2.0, 1e-15);
  // A Function writing a buffer made inside, under vmap: the write is the buffer's.
  auto h = [](const Tensor& x) {
    Tensor buf = zeros({3}, kFloat64);
    copy_(buf, x);
    ExpInPlace::apply(buf);
    return buf;
  };
  g_calls = {};
  EXPECT_TENSOR_NEAR(vmap(functionalize(Fn(h)))(xs), exp(xs), 1e-15);
  EXPECT_EQ(g_calls.vmap, 1);
}

TEST(FunctionUnderFunctionalize, SavedTensorsKeepTheirValuesAtSaveTime) {
  // y is saved by the Function and then written: the backward must use its old value.
  auto f = [](const TensorList& a) {
    Tensor y = a[0] * 1.0;
    Tensor z = CountingSin::apply(y);
    mul_(y, 5.0);
    return sum(z * y);
  };
  const TensorList args = {Rand({4}, 7)};
  const Tensor x = args[0];
  g_calls = {};
  const Tensor g = grad(functionalize(ListFn(f)))(args)[0];
  EXPECT_EQ(g_calls.backward, 1);
  EXPECT_TENSOR_NEAR(g, sin(x) * 5.0 + x * cos(x) * 5.0, 1e-12);
}

TEST(FunctionUnderFunctionalize, GradThroughAnInPlaceFunctionOnAnIntermediate) {
  auto f = [](const TensorList& a) {
    Tensor y = a[0] * 2.0;
    ExpInPlace::apply(y);
    return sum(y);
  };
  const TensorList args = {Rand({3}, 8)};
  g_calls = {};
  const Tensor g = grad(functionalize(ListFn(f)))(args)[0];
  EXPECT_EQ(g_calls.backward, 1);
  EXPECT_TENSOR_NEAR(g, exp(args[0] * 2.0) * 2.0, 1e-12);
}

}  // namespace
}  // namespace ft

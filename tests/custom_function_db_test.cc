// The §3.1 Functions (tests/custom_function_db.h): their numbers in plain calls and under
// grad / vjp / jvp, the §3.4 vmap-API cases that apply in C++, and regressions of bugs the
// matrix found.
//
// Not covered: TensorList arguments to Functions (not supported yet, §3.4 #5); kwarg-only
// tensors (§3.4 #10) and "vmap must return two values" (§3.4 #8) cannot be written in C++
// (the types rule them out); §3.4 #1/#2 are in custom_function/function_test.cc.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/custom_function_db.h"
#include "tests/test_util.h"
#include "tests/vmap_oracle.h"

namespace ft::function_db {
namespace {

// ---------------------------------------------------------------------------------------
// §3.1 numbers: plain calls and grad / vjp / jvp.
// ---------------------------------------------------------------------------------------

#define EXPECT_CLOSE(actual, expected) \
  EXPECT_TRUE(::ft::testing::TensorNear((actual), (expected), kTol, kTol))

using Fn = std::function<TensorList(const TensorList&)>;

TEST(FunctionDb, NumpyCubeAndCubeGenVmapNumbers) {
  const Tensor x = F64({1, 2}, {2});
  auto check = [&x](auto apply, bool second_order) {
    auto [y, dy] = apply(x);
    EXPECT_CLOSE(y, F64({1, 8}, {2}));
    EXPECT_CLOSE(dy, F64({3, 12}, {2}));
    TensorFn out0 = [apply](const Tensor& t) { return std::get<0>(apply(t)); };
    EXPECT_CLOSE(grad(TensorFn([out0](const Tensor& t) { return sum(out0(t)); }))(x),
                 F64({3, 12}, {2}));
    Fn both = [apply](const TensorList& a) {
      auto [o0, o1] = apply(a[0]);
      return TensorList{o0, o1};
    };
    EXPECT_CLOSE(vjp(both, {x}).vjp_fn({ones_like(x), ones_like(x)})[0], F64({9, 24}, {2}));
    JvpResult r = jvp(both, {x}, {ones_like(x)});
    EXPECT_CLOSE(r.tangents[0], F64({3, 12}, {2}));
    EXPECT_CLOSE(r.tangents[1], F64({6, 12}, {2}));
    TensorList v = vmap(TensorListFn(both))({F64({1, 2, 3, 4}, {2, 2})});
    EXPECT_CLOSE(v[0], F64({1, 8, 27, 64}, {2, 2}));
    EXPECT_CLOSE(v[1], F64({3, 12, 27, 48}, {2, 2}));
    TensorFnOfList j = [out0](const TensorList& a) { return out0(a[0]); };
    EXPECT_CLOSE(jacrev(j)({x})[0], F64({3, 0, 0, 12}, {2, 2}));
    EXPECT_CLOSE(jacfwd(j)({x})[0], F64({3, 0, 0, 12}, {2, 2}));
    if (second_order) {
      EXPECT_CLOSE(hessian([out0](const TensorList& a) { return sum(out0(a[0])); })({x})[0],
                   F64({6, 0, 0, 12}, {2, 2}));
      EXPECT_CLOSE(grad(grad(out0))(scalar_tensor(2.0, kFloat64)), scalar_tensor(12.0, kFloat64));
    }
    // Intended backward (not the db's quirk): vjp at 2 with (c0, c1) is 12 c0 + 12 c1.
    const Tensor two = F64({2}, {1});
    EXPECT_CLOSE(vjp(both, {two}).vjp_fn({F64({0.5}, {1}), F64({-2}, {1})})[0],
                 F64({12 * 0.5 - 12 * 2}, {1}));
  };
  // NumpyCube's second order: see MatrixBugs.DeadWrappersReachFunctionsCalledInsideRules.
  check([](const Tensor& t) { return NumpyCube::apply(t); }, false);
  check([](const Tensor& t) { return CubeGenVmap::apply(t); }, true);
  EXPECT_TRUE(LayerStack::empty());
}

TEST(FunctionDb, NumpyCubeNotComposableIsFirstOrderOnly) {
  const Tensor two = scalar_tensor(2.0, kFloat64);
  auto [y, copy] = NumpyCubeNotComposable::apply(two);
  EXPECT_CLOSE(y, scalar_tensor(8.0, kFloat64));
  EXPECT_EQ(copy, 2.0);  // the non-tensor output passes through
  TensorFn f = [](const Tensor& t) { return std::get<0>(NumpyCubeNotComposable::apply(t)); };
  EXPECT_CLOSE(grad(f)(two), scalar_tensor(12.0, kFloat64));
  EXPECT_CLOSE(vjp([f](const TensorList& a) { return TensorList{f(a[0])}; }, {two})
                   .vjp_fn({scalar_tensor(0.5, kFloat64)})[0],
               scalar_tensor(6.0, kFloat64));
  // Non-tensor output under grad: passes through too.
  double seen = 0;
  grad(TensorFn([&seen](const Tensor& t) {
    auto [out, value] = NumpyCubeNotComposable::apply(t);
    seen = value;
    return out;
  }))(two);
  EXPECT_EQ(seen, 2.0);
  // Second order is refused (the backward is not differentiable), not silently wrong.
  EXPECT_FT_ERROR(grad(grad(f))(two), "trying to differentiate twice");
  EXPECT_TRUE(LayerStack::empty());
}

TEST(FunctionDb, NumpyMulAndMulGenVmapNumbers) {
  const Tensor x = F64({1, 2}, {2});
  const Tensor y = F64({1, 2, 3, 4, 5, 6}, {3, 2});
  auto check = [&](auto apply) {
    EXPECT_CLOSE(apply(x, y), F64({1, 4, 3, 8, 5, 12}, {3, 2}));
    TensorList g = grad(ScalarFn([apply](const TensorList& a) { return sum(apply(a[0], a[1])); }),
                        {0, 1})({x, y});
    EXPECT_CLOSE(g[0], F64({9, 12}, {2}));
    EXPECT_CLOSE(g[1], F64({1, 2, 1, 2, 1, 2}, {3, 2}));
    Fn f = [apply](const TensorList& a) { return TensorList{apply(a[0], a[1])}; };
    EXPECT_CLOSE(jvp(f, {x, y}, {F64({1, 0}, {2}), zeros_like(y)}).tangents[0],
                 F64({1, 0, 3, 0, 5, 0}, {3, 2}));
    TensorList v = vmap(TensorListFn(f), {0, std::nullopt})({F64({1, 2, 3, 4}, {2, 2}), y});
    EXPECT_CLOSE(select(v[0], 0, 1), F64({3, 8, 9, 16, 15, 24}, {3, 2}));
  };
  check([](const Tensor& a, const Tensor& b) { return NumpyMul::apply(a, b); });
  check([](const Tensor& a, const Tensor& b) { return MulGenVmap::apply(a, b); });
  EXPECT_TRUE(LayerStack::empty());
}

TEST(FunctionDb, NumpyExpInplaceNumbers) {
  const Tensor x = F64({0, 1}, {2});
  Tensor y = clone(x);
  Tensor out = NumpyExp_::apply(y);
  EXPECT_TRUE(out.is_same(y));
  EXPECT_CLOSE(out, F64({1, std::exp(1.0)}, {2}));
  EXPECT_CLOSE(grad(TensorFn([](const Tensor& t) { return sum(NumpyExp_::apply(clone(t))); }))(x),
               F64({1, std::exp(1.0)}, {2}));
  // Under vmap the rule returns its input: the caller gets its own batched tensor back.
  vmap(TensorFn([](const Tensor& t) {
    Tensor c = clone(t);
    EXPECT_TRUE(NumpyExp_::apply(c).is_same(c));
    return c;
  }))(F64({0, 1, 2, 3}, {2, 2}));
  EXPECT_TRUE(LayerStack::empty());
}

TEST(FunctionDb, SortAndTakeNumbers) {
  const Tensor x = F64({3, 1, 2, 0, 5, 4}, {2, 3});
  const Tensor g = F64({10, 20, 30, 1, 2, 3}, {2, 3});
  auto check = [&](auto apply) {
    auto [values, ind, ind_inv] = apply(x, int64_t{1});
    EXPECT_CLOSE(values, F64({1, 2, 3, 0, 4, 5}, {2, 3}));
    EXPECT_TENSOR_EQ(ind, I64({1, 2, 0, 0, 2, 1}, {2, 3}));
    EXPECT_TENSOR_EQ(ind_inv, I64({2, 0, 1, 0, 2, 1}, {2, 3}));
    Fn f = [apply](const TensorList& a) { return TensorList{std::get<0>(apply(a[0], 1))}; };
    EXPECT_CLOSE(vjp(f, {x}).vjp_fn({g})[0], F64({30, 10, 20, 1, 3, 2}, {2, 3}));
    // Indices carry no gradient: grad of a function of them alone is zero.
    EXPECT_CLOSE(grad(TensorFn([apply](const Tensor& t) {
                   auto [v, i, ii] = apply(t, -1);
                   return sum(v * 0.0 + to(i, kFloat64) + to(ii, kFloat64));
                 }))(x),
                 zeros_like(x));
  };
  check([](const Tensor& t, int64_t dim) { return NumpySort::apply(t, dim); });
  check([](const Tensor& t, int64_t dim) { return SortGenVmap::apply(t, dim); });
  // SortGenVmap supports forward mode (NumpySort is not tested there, §3.2).
  EXPECT_CLOSE(jvp([](const TensorList& a) { return TensorList{std::get<0>(SortGenVmap::apply(a[0], 1))}; },
                   {x}, {g})
                   .tangents[0],
               F64({20, 30, 10, 1, 3, 2}, {2, 3}));
  const Tensor row = F64({3, 1, 2}, {1, 3});
  const Tensor ind = I64({1, 2, 0}, {1, 3}), ind_inv = I64({2, 0, 1}, {1, 3});
  EXPECT_CLOSE(NumpyTake::apply(row, ind, ind_inv, 1), F64({1, 2, 3}, {1, 3}));
  EXPECT_CLOSE(TakeGenVmap::apply(row, ind, ind_inv, 1), F64({1, 2, 3}, {1, 3}));
  EXPECT_CLOSE(grad(TensorFn([&](const Tensor& t) {
                 return sum(NumpyTake::apply(t, ind, ind_inv, 1) * F64({1, 2, 3}, {1, 3}));
               }))(row),
               F64({3, 1, 2}, {1, 3}));
  EXPECT_TRUE(LayerStack::empty());
}

TEST(FunctionDb, SelectAndDefaultArgsNumbers) {
  const Tensor x = F64({1, 2, 3, 4, 5, 6}, {3, 2});
  auto check = [&](auto apply) {
    EXPECT_CLOSE(apply(x), F64({5, 6}, {2}));
    EXPECT_CLOSE(grad(TensorFn([apply](const Tensor& t) { return sum(apply(t)); }))(x),
                 F64({0, 0, 0, 0, 1, 1}, {3, 2}));
    EXPECT_CLOSE(jvp([apply](const TensorList& a) { return TensorList{apply(a[0])}; }, {x},
                     {x * 10.0})
                     .tangents[0],
                 F64({50, 60}, {2}));
    const Tensor xs = stack({x, x * 2.0});
    EXPECT_CLOSE(vmap(TensorFn(apply))(xs), F64({5, 6, 10, 12}, {2, 2}));
    EXPECT_CLOSE(vmap(grad(TensorFn([apply](const Tensor& t) { return sum(apply(t)); })))(xs),
                 stack({F64({0, 0, 0, 0, 1, 1}, {3, 2}), F64({0, 0, 0, 0, 1, 1}, {3, 2})}));
  };
  check([](const Tensor& t) { return Select::apply(t, 2); });
  check([](const Tensor& t) { return SelectGenVmap::apply(t, 2); });
  check([](const Tensor& t) { return ForwardHasDefaultArgs::apply(t); });
  // The default is filled in and seen by the vmap rule as an unbatched argument.
  g_default_args_in_dims.clear();
  vmap(TensorFn([](const Tensor& t) { return ForwardHasDefaultArgs::apply(t); }))(
      Rand({2, 3, 5}, 1));
  EXPECT_EQ(g_default_args_in_dims, (InDims{0, std::nullopt}));
  EXPECT_TRUE(LayerStack::empty());
}

TEST(FunctionDb, ScaleGradAndZeroGradientsNumbers) {
  const Tensor two = F64({2}, {1});
  TensorFn scaled = [](const Tensor& t) { return sum(ScaleGradGenVmap::apply(t)); };
  EXPECT_CLOSE(ScaleGradGenVmap::apply(two), two);
  EXPECT_CLOSE(grad(scaled)(two), F64({kScale}, {1}));
  EXPECT_CLOSE(vmap(grad(scaled))(F64({1, 2}, {2, 1})), F64({kScale, kScale}, {2, 1}));
  EXPECT_CLOSE(jvp([](const TensorList& a) { return TensorList{ScaleGradGenVmap::apply(a[0])}; },
                   {two}, {F64({2}, {1})})
                   .tangents[0],
               F64({2 * kScale}, {1}));
  const Tensor x = Rand({4}, 2), y = Rand({3}, 3);
  auto [cx, cy] = ZeroGradientsGenVmap::apply(x, y);
  EXPECT_CLOSE(cx, x);
  EXPECT_CLOSE(cy, y);
  // Plain autograd reduces the oversized [3, 4, 4] gradient to x's shape.
  TensorList g = grad(ScalarFn([](const TensorList& a) {
                        auto [u, v] = ZeroGradientsGenVmap::apply(a[0], a[1]);
                        return sum(u) + sum(v);
                      }),
                      {0, 1})({x, y});
  EXPECT_CLOSE(g[0], zeros_like(x));
  EXPECT_CLOSE(g[1], zeros_like(y));
  EXPECT_TRUE(LayerStack::empty());
}

// ---------------------------------------------------------------------------------------
// Regressions: bugs the matrix found, each reduced to its smallest case.
// ---------------------------------------------------------------------------------------

// Fixed: custom_function_call's transform rules did not unwrap wrappers of finished (dead)
// levels (built-in ops get that from the dispatcher, functorch from dispatch_functorch). A
// backward runs after its grad level is gone, with the level's wrappers saved on the ctx; a
// Function it calls (NumpyCube's backward calls NumpyMul) reached an outer rule with them
// still wrapped, and an op at the bottom threw "... but no transform is active".
TEST(Regressions, DeadWrappersReachingFunctionsCalledInsideABackward) {
  TensorFn cube = [](const Tensor& t) { return std::get<0>(NumpyCube::apply(t)); };
  // 12 (threw "mul: argument 'other' is a grad wrapper tensor (...) but no transform is
  // active"), and [3, 12] under vmap (threw for a batched tensor likewise).
  EXPECT_CLOSE(grad(grad(cube))(scalar_tensor(2.0, kFloat64)), scalar_tensor(12.0, kFloat64));
  EXPECT_CLOSE(vmap(grad(cube))(F64({1, 2}, {2})), F64({3, 12}, {2}));
}

// Fixed: a Function vmapped twice by generated rules (VmappedVmapped<Name>) kept both
// levels' records in one ctx slot, and the inner level's backward read the raw saved tensors
// instead of the outer level's re-batched view: wrong shapes, or silently wrong gradients
// ([[[30], [60]], [[30], [60]]] for the first case below).
TEST(Regressions, NestedGeneratedRulesKeepTheirOwnRecords) {
  TensorFn cube = [](const Tensor& t) { return std::get<0>(CubeGenVmap::apply(t)); };
  const Tensor x = F64({1, 2, 3, 4}, {2, 2, 1});
  EXPECT_CLOSE(grad(TensorFn([cube](const Tensor& t) { return sum(vmap(vmap(cube))(t)); }))(x),
               x * x * 3.0);
  // 3.14 everywhere (threw "sum_to_size: size [2, 3] is not expandable to size [3]").
  TensorFn scale = [](const Tensor& t) { return ScaleGradGenVmap::apply(t); };
  const Tensor y = Rand({2, 2, 3}, 80);
  EXPECT_CLOSE(grad(TensorFn([scale](const Tensor& t) { return sum(vmap(vmap(scale))(t)); }))(y),
               full_like(y, kScale));
}

// ---------------------------------------------------------------------------------------
// §3.4 vmap-API cases.
// ---------------------------------------------------------------------------------------

struct Seen {
  int calls = 0;
  VmapInfo info{0, Randomness::kError};
  InDims in_dims;
};
Seen g_seen;

// Id: identity with a user vmap rule that records what it sees.
struct Id : Function<Id> {
  static constexpr const char* name = "Id";
  static Tensor forward(const Tensor& x) { return x * 1.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static TensorList backward(FunctionCtx&, const TensorList& g) { return {g[0]}; }
  static std::pair<Tensor, OutDims> vmap(const VmapInfo& info, const InDims& in_dims,
                                         const Tensor& x) {
    ++g_seen.calls;
    g_seen.info = info;
    g_seen.in_dims = in_dims;
    return {Id::apply(x), {in_dims[0]}};
  }
};

TEST(VmapApi, InfoCarriesBatchSizeAndRandomness) {  // §3.4 #3
  const Tensor x = Rand({10, 3}, 70);
  for (Randomness r : {Randomness::kError, Randomness::kDifferent, Randomness::kSame}) {
    g_seen = {};
    EXPECT_CLOSE(vmap(TensorFn([](const Tensor& t) { return Id::apply(t); }), 0, 0, r)(x), x);
    EXPECT_EQ(g_seen.calls, 1);
    EXPECT_EQ(g_seen.info.batch_size, 10);
    EXPECT_EQ(g_seen.info.randomness, r);
  }
}

TEST(VmapApi, InDimsSeenByTheRule) {  // §3.4 #4
  const Tensor x = Rand({3, 10}, 71);
  g_seen = {};
  EXPECT_CLOSE(vmap(TensorFn([](const Tensor& t) { return Id::apply(t); }), 1, 0)(x),
               transpose(x, 0, 1));
  EXPECT_EQ(g_seen.in_dims, (InDims{1}));
  EXPECT_EQ(g_seen.info.batch_size, 10);
  g_seen = {};
  vmap(TensorListFn([](const TensorList& a) { return TensorList{Id::apply(a[0])}; }), {1}, 0)(
      {x});
  EXPECT_EQ(g_seen.in_dims, (InDims{1}));
}

// Never: a vmap rule that must not be called.
struct Never : Function<Never> {
  static constexpr const char* name = "Never";
  static Tensor forward(const Tensor& x) { return x * 1.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims&, const Tensor&) {
    ThrowError("Never: the vmap rule was called");
  }
};

TEST(VmapApi, SkipsALevelWhereNothingIsBatched) {  // §3.4 #6
  const Tensor xs = Rand({2, 3}, 72);
  const Tensor y = vmap(TensorFn([](const Tensor& x) {
    return x * Never::apply(scalar_tensor(1.0, kFloat64));
  }))(xs);
  EXPECT_CLOSE(y, xs);
  // Two levels, only the outer one batched: the inner rule call is skipped, the outer runs.
  g_seen = {};
  const Tensor xss = Rand({2, 3}, 73);
  vmap(TensorFn([](const Tensor& x) {
    return vmap(TensorFn([&x](const Tensor& z) { return z + Id::apply(x); }))(
        zeros({4}, kFloat64));
  }))(xss);
  EXPECT_EQ(g_seen.calls, 1);
  EXPECT_EQ(g_seen.info.batch_size, 2);
  EXPECT_TRUE(LayerStack::empty());
}

// Zeros / TwoZeros: outputs the same for every example, out_dims nullopt.
struct ZerosFn : Function<ZerosFn> {
  static constexpr const char* name = "Zeros";
  static Tensor forward(const Tensor& x) { return zeros_like(x); }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims& in_dims,
                                         const Tensor& x) {
    Shape example(x.sizes().begin(), x.sizes().end());
    example.erase(example.begin() + *in_dims[0]);
    return {zeros(example, x.dtype()), {std::nullopt}};
  }
};
struct TwoZeros : Function<TwoZeros> {
  static constexpr const char* name = "TwoZeros";
  static std::tuple<Tensor, Tensor> forward(const Tensor& x) {
    return {zeros_like(x), zeros_like(x)};
  }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&,
                            const std::tuple<Tensor, Tensor>&) {}
  static std::pair<std::tuple<Tensor, Tensor>, OutDims> vmap(const VmapInfo&,
                                                             const InDims& in_dims,
                                                             const Tensor& x) {
    Shape example(x.sizes().begin(), x.sizes().end());
    example.erase(example.begin() + *in_dims[0]);
    Tensor r = zeros(example, x.dtype());
    return {{r, r}, {std::nullopt}};
  }
};

TEST(VmapApi, NoneOutDimsReturnUnbatchedOutputs) {  // §3.4 #7
  const Tensor x = Rand({2, 3}, 74);
  EXPECT_CLOSE(vmap(TensorFn([](const Tensor& t) { return ZerosFn::apply(t); }))(x),
               zeros_like(x));
  TensorList two = vmap(TensorListFn([](const TensorList& a) {
    auto [u, v] = TwoZeros::apply(a[0]);
    return TensorList{u, v};
  }))({x});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_CLOSE(two[0], zeros_like(x));
  EXPECT_CLOSE(two[1], zeros_like(x));
}

// BadOutDims: one output, two out_dims.
struct BadOutDims : Function<BadOutDims> {
  static constexpr const char* name = "BadOutDims";
  static Tensor forward(const Tensor& x) { return x * 1.0; }
  static void setup_context(FunctionCtx&, const std::tuple<Tensor>&, const Tensor&) {}
  static std::pair<Tensor, OutDims> vmap(const VmapInfo&, const InDims&, const Tensor& x) {
    return {x * 1.0, {std::nullopt, std::nullopt}};
  }
};

TEST(VmapApi, IncompatibleOutDims) {  // §3.4 #9
  const Tensor x = Rand({2, 3}, 75);
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& t) { return BadOutDims::apply(t); }))(x),
                  "BadOutDims: the vmap rule returned an incompatible (outputs, out_dims) pair");
  EXPECT_TRUE(LayerStack::empty());
}

}  // namespace
}  // namespace ft::function_db

// ft::vmap: the API, nesting, chunking, errors and the stack invariants, checked against the
// loop-and-stack oracle (tests/vmap_oracle.h) and closed forms.
#include "interpreters/vmap/vmap.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "interpreters/vmap/batched_tensor.h"
#include "ops/ops.h"
#include "tensor/allclose.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"
#include "tests/vmap_oracle.h"

namespace ft {
namespace {

Tensor Rand(IntArrayRef shape, uint64_t seed) {
  Generator g(seed);
  return rand_like(zeros(shape, kFloat64), &g);
}

TEST(Vmap, ElementwiseChainMatchesLoop) {
  auto f = [](const TensorList& a) { return TensorList{sin(a[0]) * a[1] + 0.5}; };
  Tensor x = Rand({3, 4}, 1), w = Rand({4}, 2);
  for (auto [xd, od] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 1}, {-1, 0}}) {
    Tensor xin = xd == 0 ? x : transpose(x, 0, 1);
    TensorList got = vmap(TensorListFn(f), {xd, std::nullopt}, od)({xin, w});
    TensorList want = testing::LoopVmap(f, {xin, w}, {xd, std::nullopt}, {od});
    EXPECT_TRUE(testing::TensorNear(got[0], want[0], 1e-12));
  }
}

TEST(Vmap, SingleTensorOverloadAndUnbatchedOutputIsExpanded) {
  Tensor x = Rand({5, 2}, 3);
  Tensor y = vmap(TensorFn([](const Tensor& t) { return exp(t); }))(x);
  EXPECT_TENSOR_NEAR(y, exp(x), 1e-15);
  Tensor z = vmap(TensorFn([](const Tensor&) { return zeros({3}); }))(x);
  EXPECT_EQ(z.sizes(), (IntArrayRef{5, 3}));
  EXPECT_TENSOR_EQ(z, zeros({5, 3}));
}

TEST(Vmap, NestedWithDifferentInDims) {
  // vmap(vmap(mul, in_dims=(0, None)), in_dims=(None, 0))([1,2,3], [10,20])
  //   -> [[10,20,30],[20,40,60]]
  auto mul2 = [](const TensorList& a) { return TensorList{a[0] * a[1]}; };
  auto inner = vmap(TensorListFn(mul2), {0, std::nullopt});
  auto outer = vmap(TensorListFn(inner), {std::nullopt, 0});
  Tensor r = outer({tensor({1.0, 2.0, 3.0}), tensor({10.0, 20.0})})[0];
  EXPECT_TENSOR_EQ(r, tensor({10.0, 20.0, 30.0, 20.0, 40.0, 60.0}, {2, 3}));
}

TEST(Vmap, TripleNestingMatchesDirect) {
  Tensor x = Rand({2, 3, 4, 5}, 4);
  auto f = TensorFn([](const Tensor& t) { return tanh(t) * t - 1.0; });
  Tensor y = vmap(vmap(vmap(f)))(x);
  EXPECT_TENSOR_NEAR(y, tanh(x) * x - 1.0, 1e-15);
  // Batch dims at different positions per level: the outer level maps x's last dim (5),
  // the middle one dim 2 of [2, 3, 4] (4), the inner one dim 1 of [2, 3] (3); each level
  // puts its batch dim first: [5, 4, 3, 2].
  Tensor y2 = vmap(vmap(vmap(f, 1), 2), -1)(x);
  EXPECT_EQ(y2.sizes(), (IntArrayRef{5, 4, 3, 2}));
  EXPECT_TENSOR_NEAR(y2, permute(tanh(x) * x - 1.0, {3, 2, 1, 0}), 1e-15);
}

TEST(Vmap, BatchSizesOneAndZero) {
  auto f = TensorFn([](const Tensor& t) { return sqrt(t) + t; });
  Tensor one = Rand({1, 3}, 5);
  EXPECT_TENSOR_NEAR(vmap(f)(one), sqrt(one) + one, 1e-15);
  Tensor none = zeros({0, 3}, kFloat64);
  EXPECT_EQ(vmap(f)(none).sizes(), (IntArrayRef{0, 3}));
}

TEST(Vmap, ChunkedEqualsUnchunked) {
  Tensor x = Rand({7, 3}, 6);
  auto f = TensorFn([](const Tensor& t) { return cos(t) * t; });
  Tensor full = vmap(f)(x);
  for (int64_t chunk : {1, 2, 3, 7, 100}) {
    EXPECT_TENSOR_EQ(vmap(f, 0, 0, Randomness::kError, chunk)(x), full);
  }
  Tensor x1 = transpose(x, 0, 1);
  EXPECT_TENSOR_EQ(vmap(f, 1, 1, Randomness::kError, 3)(x1), transpose(full, 0, 1));
}

TEST(Vmap, NonTensorArgumentsPassThrough) {
  auto f = [](const ValueList& a) {
    ValueList out;
    out.emplace_back(a[0].tensor() * a[1].scalar());
    return out;
  };
  ValueList args;
  args.emplace_back(tensor({1.0, 2.0}));
  args.emplace_back(Scalar(3.0));
  ValueList out = vmap(ValueFn(f), {0, std::nullopt})(args);
  EXPECT_TENSOR_EQ(out[0].tensor(), tensor({3.0, 6.0}));
}

TEST(Vmap, InPlaceOnBatchedTensorAndItsError) {
  Tensor x = Rand({4, 3}, 7);
  auto ok = TensorFn([](const Tensor& t) {
    Tensor buf = zeros_like(t);
    Tensor r = add_(buf, t);
    EXPECT_TRUE(r.is_same(buf));
    return buf * 2.0;
  });
  EXPECT_TENSOR_NEAR(vmap(ok)(x), x * 2.0, 1e-15);
  Tensor captured = zeros({3}, kFloat64);
  auto bad = TensorFn([&](const Tensor& t) { return add_(captured, t); });
  EXPECT_FT_ERROR(vmap(bad)(x), "vmap: add_(self, ...) would write values that vary over the batch");
  EXPECT_TRUE(LayerStack::empty());
}

TEST(Vmap, RandomOpInErrorMode) {
  auto f = TensorFn([](const Tensor& t) { return rand_like(t); });
  EXPECT_FT_ERROR(vmap(f)(zeros({2, 3})),
                  "vmap: called random operation 'rand_like' while in randomness error mode");
  EXPECT_FT_ERROR(ParseRandomness("foo"),
                  "vmap: only allowed values for randomness are 'error', 'different', or 'same'. Got 'foo'");
}

TEST(Vmap, ApiErrors) {
  Tensor x = zeros({2, 3});
  auto id = TensorListFn([](const TensorList& a) { return a; });
  EXPECT_FT_ERROR(vmap(id)({}), "vmap(f)(*args): got no inputs");
  EXPECT_FT_ERROR(vmap(id, std::nullopt)({x}), "vmap: Expected at least one Tensor to vmap over");
  EXPECT_FT_ERROR(vmap(id, {0, 0})({x}), "vmap: in_dims has 2 entries but there are 1 arguments");
  EXPECT_FT_ERROR(vmap(id, 2)({x}),
                  "vmap: Got in_dim=2 for argument 0, but that input is a Tensor of "
                  "dimensionality 2 so expected in_dim to satisfy -2 <= in_dim < 2.");
  EXPECT_FT_ERROR(vmap(id, 0)({x, zeros({3, 3})}),
                  "vmap: Expected all tensors to have the same size in the mapped dimension, "
                  "got argument 0: size 2 at in_dim 0; argument 1: size 3 at in_dim 0");
  EXPECT_FT_ERROR(vmap(id, 0, {0, 0})({x}), "vmap: out_dims has 2 entries but there are 1 outputs");
  EXPECT_FT_ERROR(vmap(id, 0, std::nullopt)({x}),
                  "vmap: can not return a BatchedTensor when out_dim is None");
  EXPECT_FT_ERROR(vmap(id, 0, 0, Randomness::kError, 0)({x}),
                  "vmap: chunk_size should be None or greater than 0. (got 0; vmap level");
  ValueList args;
  args.emplace_back(int64_t{3});
  EXPECT_FT_ERROR(vmap(ValueFn([](const ValueList& a) { return a; }))(args),
                  "vmap: Got in_dim=0 for argument 0 but the input is of type int. We cannot "
                  "vmap over non-Tensor arguments");
  args[0] = Value(x);
  args.emplace_back(int64_t{3});
  EXPECT_FT_ERROR(vmap(ValueFn([](const ValueList& a) { return a; }), {0, std::nullopt})(args),
                  "vmap: must only return Tensors, got type int for output 1");
  EXPECT_TRUE(LayerStack::empty());
}

TEST(Vmap, ApiErrorsNameTheLevel) {
  auto id = TensorListFn([](const TensorList& a) { return a; });
  EXPECT_FT_ERROR(vmap(id)({}), "(vmap level ");
  EXPECT_FT_ERROR(vmap(id, std::nullopt)({zeros({2})}), "vmap level ");
  EXPECT_FT_ERROR(vmap(id, 1)({zeros({2})}), "(vmap level ");
  EXPECT_FT_ERROR(vmap(id, 0)({zeros({2}), zeros({3})}), "(vmap level ");
  EXPECT_FT_ERROR(vmap(id, {0, 0})({zeros({2})}), "(vmap level ");
  EXPECT_FT_ERROR(vmap(id, 0, std::nullopt)({zeros({2})}), "vmap level ");
  // Nested: the inner vmap's level is the higher one.
  int64_t inner_level = -1;
  auto inner = TensorFn([&](const Tensor& t) {
    inner_level = LayerStack::Top()->level();
    return t;
  });
  vmap(vmap(inner))(zeros({2, 2}));
  EXPECT_GT(inner_level, 0);
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& t) { return rand_like(t); }))(zeros({2})),
                  "while in randomness error mode (level ");
}

TEST(Vmap, StackBalancedAfterExceptionInNestedFunction) {
  auto throws = TensorFn([](const Tensor& t) -> Tensor {
    EXPECT_EQ(LayerStack::size(), 2);
    return sin(to(t, kBool));  // sin of bool throws below both levels
  });
  EXPECT_FT_ERROR(vmap(vmap(throws))(zeros({2, 2})), "sin: not supported for bool tensors");
  EXPECT_TRUE(LayerStack::empty());
}

TEST(Vmap, EscapedBatchedTensorNamesTheDeadLevel) {
  Tensor escaped;
  auto f = TensorFn([&](const Tensor& t) {
    escaped = t;
    return t;
  });
  vmap(f)(zeros({2, 3}));
  ASSERT_EQ(escaped.kind(), TensorKind::kBatched);
  EXPECT_FT_ERROR(sin(escaped), "sin: met a BatchedTensor of vmap level");
  EXPECT_FT_ERROR(sin(escaped), "but that vmap has already returned");
}

TEST(Vmap, PrintsBatchedTensors) {
  std::string seen;
  auto f = TensorFn([&](const Tensor& t) {
    seen = t.impl()->WrapperRepr();
    return t;
  });
  vmap(f)(tensor({1.0f, 2.0f}));
  EXPECT_NE(seen.find("BatchedTensor(lvl="), std::string::npos);
  EXPECT_NE(seen.find(", bdim=0, value=tensor([1., 2.]))"), std::string::npos);
}

// A user-registered op without a batching rule: vmap runs it through the loop fallback.
Tensor UserRowSum(const Tensor& x) {
  // Sums each row with a plain loop: works on one example at a time only.
  Tensor c = kernels::contiguous(x);
  const int64_t rows = x.dim() == 0 ? 1 : x.size(0);
  const int64_t cols = x.numel() / std::max<int64_t>(rows, 1);
  std::vector<double> out(rows, 0.0);
  std::vector<double> v = c.to_vector<double>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < cols; ++k) out[r] += v[r * cols + k];
  }
  return tensor(out);
}

TEST(Vmap, UserOpsUseTheLoopFallbackAndItCanBeAnError) {
  RegisterAllOps();
  static const bool registered = [] {
    RegisterOp<&UserRowSum>(OpRegistry::Global(), "test_user_row_sum", {"self"});
    return true;
  }();
  (void)registered;
  EXPECT_FALSE(OpRegistry::Global().is_builtin(OpFor<&UserRowSum>()));
  EXPECT_TRUE(OpRegistry::Global().is_builtin(OpRegistry::Global().Get("sin")));
  auto row_sum = [](const Tensor& x) { return Call<&UserRowSum>(x); };
  Tensor x = Rand({3, 2, 4}, 9);
  Tensor got = vmap(TensorFn(row_sum), 1)(x);  // batch dim 1, examples [3, 4]
  TensorList want = testing::LoopVmap(
      [&](const TensorList& a) { return TensorList{row_sum(a[0])}; }, {x}, {1}, {0});
  EXPECT_TENSOR_NEAR(got, want[0], 1e-12);
  SetVmapFallbackMode(VmapFallbackMode::kError);
  EXPECT_FT_ERROR(vmap(TensorFn(row_sum))(x),
                  "vmap: no batching rule for 'test_user_row_sum'");
  SetVmapFallbackMode(VmapFallbackMode::kWarn);
  EXPECT_TRUE(LayerStack::empty());
}

}  // namespace
}  // namespace ft

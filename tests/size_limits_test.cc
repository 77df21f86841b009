// Shapes whose element or byte count overflows int64, and allocations this machine cannot
// satisfy: an ft::Error naming the op (or factory) and the shape, raised before anything is
// allocated or written, never a wrapped count (a tensor whose buffer is smaller than its
// shape), a bare std::bad_alloc, or a crash. Also under a transform.
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "ft.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

// Under AddressSanitizer or ThreadSanitizer a request the allocator cannot satisfy aborts the
// process unless it may return null, which is what malloc does without them.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
extern "C" const char* __tsan_default_options() { return "allocator_may_return_null=1"; }

namespace ft {
namespace {

constexpr int64_t kBig = int64_t{1} << 40;     // kBig * kBig overflows int64
constexpr int64_t kTooMuch = int64_t{1} << 45;  // 128 TiB of float32: no machine has it

TEST(SizeLimits, FactoriesNameThemselvesAndTheShape) {
  EXPECT_FT_ERROR(zeros({kBig, kBig}),
                  "zeros: shape [1099511627776, 1099511627776] has too many elements (int64 "
                  "overflow)");
  EXPECT_FT_ERROR(ones({kBig, kBig}), "ones: shape [1099511627776, 1099511627776] has too many");
  EXPECT_FT_ERROR(full({kBig, kBig}, 1.0), "full: shape [1099511627776, 1099511627776]");
  EXPECT_FT_ERROR(empty({int64_t{1} << 62}, kFloat64),
                  "empty: a tensor of shape [4611686018427387904] and dtype float64 needs more "
                  "bytes than int64 can count");
  EXPECT_FT_ERROR(empty({kTooMuch}),
                  "empty: a tensor of shape [35184372088832] and dtype float32 needs "
                  "140737488355328 bytes, more than this machine can allocate");
  EXPECT_FT_ERROR(full({kTooMuch}, 2.0), "full: a tensor of shape [35184372088832]");
  EXPECT_FT_ERROR(eye(int64_t{1} << 32),
                  "eye: a tensor of shape [4294967296, 4294967296] and dtype float32 has more "
                  "elements than int64 can count");
  EXPECT_FT_ERROR(arange(0.0, 1e18, 1.0), "arange: a tensor of shape [1000000000000000000]");
  EXPECT_FT_ERROR(linspace(0, 1, kTooMuch), "linspace: a tensor of shape [35184372088832]");
  EXPECT_FT_ERROR(tensor(std::vector<float>{1.0f}, {kBig, kBig}), "tensor: shape");
}

TEST(SizeLimits, OpsNameThemselvesAndTheShape) {
  const Tensor x = ones({2});
  EXPECT_FT_ERROR(expand(ones({1, 1}), {kBig, kBig}), "expand: shape [1099511627776, ");
  EXPECT_FT_ERROR(reshape(ones({1}), {kBig, kBig, 0}), "reshape: shape [1099511627776, ");
  EXPECT_FT_ERROR(repeat(x, {kBig, kBig}),
                  "repeat: a tensor of shape [1099511627776, 2199023255552] and dtype float32 "
                  "has more elements than int64 can count");
  EXPECT_FT_ERROR(pad(x, {kTooMuch, 0}, 0.0),
                  "pad: a tensor of shape [35184372088834] and dtype float32 needs");
  // ops_fuzzer: a padding of INT64_MIN with a right padding that brings the size back to >= 0
  // negated INT64_MIN while cropping (UBSan). Neither side's padding may be INT64_MIN.
  constexpr int64_t kMinPad = std::numeric_limits<int64_t>::min();
  EXPECT_FT_ERROR(pad(x, {kMinPad, std::numeric_limits<int64_t>::max()}, 0.0),
                  "pad: padding (-9223372036854775808, 9223372036854775807) of dim 0 overflows "
                  "int64");
  EXPECT_FT_ERROR(pad(x, {3, kMinPad}, 0.0), "pad: padding (3, -9223372036854775808) of dim 0");
  EXPECT_FT_ERROR(one_hot(tensor(std::vector<int64_t>{0, 1}), int64_t{1} << 62),
                  "one_hot: a tensor of shape [2, 4611686018427387904] and dtype int64 has more "
                  "elements");
  // Expanded operands describe huge products in a few bytes; the product cannot be held.
  const Tensor tall = expand(ones({1, 1}), {int64_t{1} << 31, 1});
  const Tensor wide = expand(ones({1, 1}), {1, int64_t{1} << 31});
  EXPECT_FT_ERROR(matmul(tall, wide),
                  "matmul: a tensor of shape [2147483648, 2147483648] and dtype float32 needs "
                  "more bytes than int64 can count");
  const Tensor long_row = expand(ones({1}), {kTooMuch});
  EXPECT_FT_ERROR(sin(long_row), "sin: a tensor of shape [35184372088832] and dtype float32 "
                                 "needs 140737488355328 bytes, more than this machine can allocate");
  EXPECT_FT_ERROR(long_row + 1.0, "add: a tensor of shape [35184372088832]");
  EXPECT_FT_ERROR(clone(long_row), "clone: a tensor of shape [35184372088832]");
}

// An empty tensor may have huge sizes beside its zero ([0, 2^40, 2^40]); products of those
// sizes overflow int64. Every op on it gives a value or an ft::Error, never undefined
// behaviour (--config=ubsan runs this). ops_fuzzer found the first such case in sort.
TEST(SizeLimits, EmptyTensorsWithHugeSizes) {
  auto value_or_error = [](const std::string& what, const std::function<Tensor()>& op) {
    try {
      const Tensor r = op();
      EXPECT_EQ(r.numel(), 0) << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(':'), std::string::npos) << what;
    }
  };
  for (const Shape& shape : {Shape{0, kBig, kBig}, Shape{kBig, kBig, 0}, Shape{kBig, 0, kBig}}) {
    // empty() itself refuses [2^40, 2^40, 0] (its sizes overflow before the zero).
    Tensor x;
    try {
      x = empty(shape, kFloat32);
    } catch (const Error&) {
      continue;
    }
    const std::string s = ShapeToString(shape);
    for (int64_t d = 0; d < 3; ++d) {
      const std::string at = s + " dim " + std::to_string(d);
      value_or_error("sum " + at, [&] { return sum(x, {d}); });
      value_or_error("mean " + at, [&] { return mean(x, {d}, true); });
      value_or_error("amax " + at, [&] { return amax(x, {d}); });
      value_or_error("prod " + at, [&] { return prod(x, {d}); });
      value_or_error("logsumexp " + at, [&] { return logsumexp(x, {d}); });
      value_or_error("var " + at, [&] { return var(x, {d}); });
      value_or_error("norm " + at, [&] { return norm(x, 2, {d}); });
      value_or_error("softmax " + at, [&] { return softmax(x, d); });
      value_or_error("log_softmax " + at, [&] { return log_softmax(x, d); });
      value_or_error("cumsum " + at, [&] { return cumsum(x, d); });
      value_or_error("cumprod " + at, [&] { return cumprod(x, d); });
      value_or_error("logcumsumexp " + at, [&] { return logcumsumexp(x, d); });
      value_or_error("linear_recurrence " + at, [&] { return linear_recurrence(x, x, d); });
      value_or_error("sort " + at, [&] { return std::get<0>(sort(x, d)); });
      value_or_error("argsort " + at, [&] { return argsort(x, d, true); });
      value_or_error("flatten " + at, [&] { return flatten(x, 0, d); });
      value_or_error("flatten to end " + at, [&] { return flatten(x, d, -1); });
    }
    value_or_error("sum all " + s, [&] { return sum(x, {0, 1}); });
    value_or_error("sum 0,2 " + s, [&] { return sum(x, {0, 2}); });
  }
}

TEST(SizeLimits, UnderTransformsTheOpIsNamedAndTheStackBalanced) {
  const Tensor xs = ones({2, 3});
  auto grows = TensorFn([](const Tensor& t) { return repeat(t, {kBig, kBig}); });
  EXPECT_FT_ERROR(vmap(grows)(xs), "repeat: ");
  EXPECT_TRUE(LayerStack::empty());
  auto huge = ScalarFn([](const TensorList& a) { return sum(a[0] * expand(ones({1}), {kTooMuch})); });
  EXPECT_FT_ERROR(grad(huge)({ones({1})}), "mul: a tensor of shape [35184372088832]");
  EXPECT_TRUE(LayerStack::empty());
  JitFunction j = jit([](const TensorList& a) { return TensorList{repeat(a[0], {kBig, kBig})}; });
  EXPECT_FT_ERROR(j({ones({2})}), "repeat: ");
  // The same calls still work at sizes that fit.
  EXPECT_EQ(vmap(TensorFn([](const Tensor& t) { return repeat(t, {2}); }))(xs).numel(), 12);
}

TEST(SizeLimits, AHugeVmapBatch) {
  // The batch itself is huge (an expanded input, a few bytes): each op whose batched result
  // would hold batch x example elements names itself and that shape, and nothing is
  // allocated; ops that keep the result expanded or reduce over nothing big still work.
  const Tensor many = expand(ones({1, 2}), {kBig, 2});
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& t) { return sin(t); }))(many),
                  "sin: a tensor of shape [1099511627776, 2] and dtype float32 needs");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& t) { return expand(t, {kBig, 2}) * 2.0; }))(many),
                  "expand: shape [1099511627776, 1099511627776, 2] has too many elements "
                  "(int64 overflow) (in vmap (level ");
  EXPECT_TRUE(LayerStack::empty());
  const Tensor viewed = vmap(TensorFn([](const Tensor& t) { return select(t, 0, 1); }))(many);
  EXPECT_EQ(viewed.sizes(), IntArrayRef({kBig}));
  // in_dims over a dim of the huge batch, and vmap over vmap of it.
  EXPECT_FT_ERROR(vmap(vmap(TensorFn([](const Tensor& t) { return exp(t); })), 1, 1)(many),
                  "exp: a tensor of shape [2, 1099511627776] and dtype float32 needs");
  EXPECT_TRUE(LayerStack::empty());
}

}  // namespace
}  // namespace ft

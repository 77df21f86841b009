// vmap of the convolution, pooling and upsampling ops against the loop-and-stack oracle
// (every in_dims mix of batched and shared input / weight / bias, batch sizes 1 and 3, nested
// levels), an empty batch, and the ops' own errors under vmap (naming one example's shapes).
#include <optional>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"
#include "tests/vmap_check.h"

namespace ft {
namespace {

using testing::ArgSpec;
using testing::CheckVmap;

TEST(ConvRules, Convolutions) {
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) {
        return TensorList{conv2d(a[0], a[1], a[2], {2, 1}, {1, 0}, {1, 2}, 2)};
      },
      {ArgSpec{{2, 4, 5, 6}}, ArgSpec{{6, 2, 3, 2}}, ArgSpec{{6}}}));
  // Unbatched examples ([C, H, W]) and no bias.
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) { return TensorList{conv2d(a[0], a[1], std::nullopt, {1}, {1})}; },
      {ArgSpec{{3, 4, 4}}, ArgSpec{{2, 3, 3, 3}}}));
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) {
        return TensorList{conv2d(a[0], a[1], std::nullopt, {1}, ConvPadding::kSame)};
      },
      {ArgSpec{{1, 2, 4, 5}}, ArgSpec{{2, 2, 2, 3}}}));
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) { return TensorList{conv1d(a[0], a[1], a[2], {2}, {1}, {2}, 2)}; },
      {ArgSpec{{2, 4, 9}}, ArgSpec{{4, 2, 3}}, ArgSpec{{4}}}));
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) { return TensorList{conv1d(a[0], a[1], a[2])}; },
      {ArgSpec{{3, 6}}, ArgSpec{{2, 3, 2}}, ArgSpec{{2}}}));
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) { return TensorList{conv3d(a[0], a[1], a[2], {1, 2, 1}, {1})}; },
      {ArgSpec{{1, 2, 3, 4, 3}}, ArgSpec{{2, 2, 2, 2, 2}}, ArgSpec{{2}}}));
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) {
        return TensorList{conv_transpose2d(a[0], a[1], a[2], {2, 1}, {1, 0}, {1, 0}, 2, {1, 2})};
      },
      {ArgSpec{{2, 4, 3, 3}}, ArgSpec{{4, 3, 3, 2}}, ArgSpec{{6}}}));
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) {
        return TensorList{conv_transpose1d(a[0], a[1], a[2], {2}, {1}, {1})};
      },
      {ArgSpec{{3, 5}}, ArgSpec{{3, 2, 3}}, ArgSpec{{2}}}));
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) {
        return TensorList{conv_transpose3d(a[0], a[1], std::nullopt, {1, 2, 1})};
      },
      {ArgSpec{{1, 2, 2, 2, 3}}, ArgSpec{{2, 1, 2, 1, 2}}}));
}

TEST(ConvRules, PoolsUnfoldFold) {
  const auto check1 = [](const std::function<TensorList(const Tensor&)>& f, Shape shape) {
    return CheckVmap([f](const TensorList& a) { return f(a[0]); }, {ArgSpec{shape}});
  };
  for (const Shape& s : {Shape{2, 3, 5, 6}, Shape{3, 5, 6}}) {
    SCOPED_TRACE(ShapeToString(s));
    EXPECT_TRUE(check1([](const Tensor& x) { return TensorList{max_pool2d(x, {3}, {2}, {1})}; },
                       s));
    EXPECT_TRUE(check1(
        [](const Tensor& x) {
          auto [v, i] = max_pool2d_with_indices(x, {2, 3}, {1, 2}, {1}, {2, 1}, true);
          return TensorList{v, i};
        },
        s));
    EXPECT_TRUE(check1(
        [](const Tensor& x) { return TensorList{avg_pool2d(x, {3, 2}, {2}, {1}, true, false)}; },
        s));
    EXPECT_TRUE(check1(
        [](const Tensor& x) { return TensorList{avg_pool2d(x, {2}, {}, {0}, false, true, 3)}; },
        s));
    EXPECT_TRUE(check1([](const Tensor& x) { return TensorList{adaptive_avg_pool2d(x, {4, 3})}; },
                       s));
    EXPECT_TRUE(check1(
        [](const Tensor& x) {
          auto [v, i] = adaptive_max_pool2d(x, {2, 4});
          return TensorList{v, i};
        },
        s));
    EXPECT_TRUE(check1(
        [](const Tensor& x) { return TensorList{unfold(x, {2, 3}, {1, 2}, {1}, {2, 1})}; }, s));
  }
  for (const Shape& s : {Shape{2, 3, 7}, Shape{3, 7}}) {
    SCOPED_TRACE(ShapeToString(s));
    EXPECT_TRUE(check1(
        [](const Tensor& x) { return TensorList{max_pool1d(x, {3}, {2}, {1}, {1}, true)}; }, s));
    EXPECT_TRUE(check1(
        [](const Tensor& x) {
          auto [v, i] = max_pool1d_with_indices(x, {2}, {1}, {0}, {2});
          return TensorList{v, i};
        },
        s));
    EXPECT_TRUE(check1(
        [](const Tensor& x) { return TensorList{avg_pool1d(x, {3}, {2}, {1}, true, false)}; },
        s));
    EXPECT_TRUE(check1([](const Tensor& x) { return TensorList{adaptive_avg_pool1d(x, {4})}; },
                       s));
  }
  for (const Shape& s : {Shape{2, 12, 9}, Shape{12, 9}}) {
    EXPECT_TRUE(check1(
        [](const Tensor& x) { return TensorList{fold(x, {4, 5}, {2, 3}, {1}, {1}, {2})}; }, s));
  }
}

TEST(ConvRules, Interpolate) {
  const auto check1 = [](const std::function<Tensor(const Tensor&)>& f, Shape shape) {
    return CheckVmap([f](const TensorList& a) { return TensorList{f(a[0])}; }, {ArgSpec{shape}});
  };
  EXPECT_TRUE(check1([](const Tensor& x) { return interpolate(x, {7}); }, {2, 3, 5}));
  EXPECT_TRUE(check1([](const Tensor& x) { return interpolate(x, {}, {1.7}, "nearest-exact"); },
                     {1, 2, 5}));
  EXPECT_TRUE(
      check1([](const Tensor& x) { return interpolate(x, {}, {1.5, 0.7}); }, {2, 1, 4, 5}));
  EXPECT_TRUE(check1([](const Tensor& x) { return interpolate(x, {3, 2, 4}); }, {1, 2, 2, 3, 2}));
  EXPECT_TRUE(check1([](const Tensor& x) { return interpolate(x, {9}, {}, "linear"); }, {2, 1, 4}));
  EXPECT_TRUE(check1(
      [](const Tensor& x) { return interpolate(x, {}, {1.7, 0.6}, "bilinear", true); },
      {1, 2, 3, 5}));
  EXPECT_TRUE(check1([](const Tensor& x) { return interpolate(x, {}, {1.5}, "trilinear"); },
                     {1, 1, 2, 2, 3}));
  // The adjoints, whose input_size names one example's N.
  EXPECT_TRUE(check1(
      [](const Tensor& g) { return upsample_nearest_backward(g, {7, 3}, {2, 1, 3, 4}); },
      {2, 1, 7, 3}));
  EXPECT_TRUE(check1(
      [](const Tensor& g) {
        return upsample_linear_backward(g, {5}, {2, 3, 4}, false, std::nullopt, std::nullopt,
                                        1.3);
      },
      {2, 3, 5}));
  // An empty batch.
  const Tensor y = vmap([](const TensorList& a) { return TensorList{interpolate(a[0], {5})}; },
                        {0})({zeros({0, 2, 3, 4}, kFloat64)})[0];
  EXPECT_EQ(y.sizes(), IntArrayRef({0, 2, 3, 5}));
  // Errors name one example's shapes and the op.
  const auto up = [](const TensorList& a) { return TensorList{interpolate(a[0], {2})}; };
  EXPECT_FT_ERROR(vmap(up, {0})({ones({3, 2, 1, 0}, kFloat64)}),
                  "interpolate: input and output sizes should be greater than 0, got input "
                  "[2, 1, 0]");
  const auto lin = [](const TensorList& a) {
    return TensorList{upsample_linear(a[0], {2, 2})};
  };
  EXPECT_FT_ERROR(vmap(lin, {1})({ones({2, 3, 4}, kFloat64)}),
                  "upsample_linear: expected a 4-D input [N, C, H, W] for output_size [2, 2], "
                  "got shape [2, 4]");
  const auto bwd = [](const TensorList& a) {
    return TensorList{upsample_nearest_backward(a[0], {4}, {2, 3, 2})};
  };
  EXPECT_FT_ERROR(vmap(bwd, {0})({ones({5, 2, 3, 3}, kFloat64)}),
                  "upsample_nearest_backward: expected grad_output of shape [2, 3, 4] "
                  "(input_size [2, 3, 2], output_size [4]), got [2, 3, 3]");
}

TEST(ConvRules, EmptyBatch) {
  const Tensor x = zeros({0, 2, 3, 5, 5}, kFloat64), w = zeros({0, 4, 3, 3, 3}, kFloat64);
  const Tensor w1 = ones({4, 3, 3, 3}, kFloat64), b = zeros({0, 4}, kFloat64);
  const auto conv = [](const TensorList& a) {
    std::optional<Tensor> b;
    if (a.size() > 2) b = a[2];
    return TensorList{conv2d(a[0], a[1], b)};
  };
  EXPECT_EQ(vmap(conv, {0, std::nullopt})({x, w1})[0].sizes(), IntArrayRef({0, 2, 4, 3, 3}));
  EXPECT_EQ(vmap(conv, {0, 0})({x, w})[0].sizes(), IntArrayRef({0, 2, 4, 3, 3}));
  // Only the bias batched (the groups fold), with no example.
  EXPECT_EQ(vmap(conv, {std::nullopt, std::nullopt, 0})({ones({2, 3, 5, 5}, kFloat64), w1, b})[0]
                .sizes(),
            IntArrayRef({0, 2, 4, 3, 3}));
  const auto pool = [](const TensorList& a) {
    auto [v, i] = max_pool2d_with_indices(a[0], {2});
    return TensorList{v, i, avg_pool2d(a[0], {2}), unfold(a[0], {2})};
  };
  const TensorList r = vmap(pool, {0})({x});
  EXPECT_EQ(r[0].sizes(), IntArrayRef({0, 2, 3, 2, 2}));
  EXPECT_EQ(r[1].sizes(), IntArrayRef({0, 2, 3, 2, 2}));
  EXPECT_EQ(r[3].sizes(), IntArrayRef({0, 2, 12, 16}));
}

TEST(ConvRules, ErrorsNameOneExample) {
  const Tensor x = ones({3, 2, 4, 6, 6}, kFloat64), w = ones({3, 6, 2, 3, 3}, kFloat64);
  const auto conv = [](const TensorList& a) { return TensorList{conv2d(a[0], a[1])}; };
  EXPECT_FT_ERROR(vmap(conv, {0, 0})({x, w}),
                  "expects 2 input channels, but the input [2, 4, 6, 6] has 4");
  EXPECT_FT_ERROR(vmap(conv, {0, std::nullopt})({x, ones({6, 4, 7, 3}, kFloat64)}),
                  "input [2, 4, 6, 6] padded by [0, 0] is smaller than the dilated kernel");
  EXPECT_FT_ERROR(vmap(conv, {0, std::nullopt})(
                      {ones({3, 4, 6}, kFloat64), ones({6, 4, 3, 3}, kFloat64)}),
                  "conv2d: expected a 3-D (unbatched) or 4-D (batched) input, got shape [4, 6]");
  const auto pool = [](const TensorList& a) { return TensorList{max_pool2d(a[0], {7})}; };
  EXPECT_FT_ERROR(vmap(pool, {0})({x}), "input [2, 4, 6, 6] is too small for kernel_size");
  const auto pool5 = [](const TensorList& a) { return TensorList{avg_pool2d(a[0], {2})}; };
  EXPECT_FT_ERROR(vmap(pool5, {0})({ones({2, 1, 2, 4, 6, 6}, kFloat64)}),
                  "avg_pool2d: expected a 3-D (unbatched) or 4-D (batched) input, got shape "
                  "[1, 2, 4, 6, 6]");
  const auto f = [](const TensorList& a) { return TensorList{fold(a[0], {4}, {2})}; };
  EXPECT_FT_ERROR(vmap(f, {0})({ones({3, 2, 8, 8}, kFloat64)}),
                  "fold: input [2, 8, 8] has 8 blocks");
}

}  // namespace
}  // namespace ft

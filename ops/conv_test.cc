// Convolution, pooling and interpolate: values, vjps and jvps against PyTorch fixtures
// (tests/fixtures/torch/conv, written by tools/torch_fixtures/conv.py), a direct-loop
// convolution, hand-computed interpolations, float32, size-0 and size-1 dims, non-contiguous
// inputs, every error, and the second derivatives of a small CNN against finite differences.
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interop/npy.h"
#include "interpreters/grad/grad.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "interpreters/jvp/jvp.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using Fn = std::function<Tensor(const TensorList&)>;

Tensor Fx(const std::string& c, const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  const std::string root =
      srcdir != nullptr ? std::string(srcdir) + "/" + (ws != nullptr ? ws : "ft") + "/" : "";
  return LoadNpy(root + "tests/fixtures/torch/conv/" + c + "." + name + ".npy");
}

// Seq: a deterministic float64 tensor of `shape` with values in (-1, 1).
Tensor Seq(const Shape& shape, double phase = 0.0) {
  std::vector<double> v(static_cast<size_t>(Numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(1.7 * static_cast<double>(i) + phase);
  return tensor(v, shape);
}

// CheckCase: f on the fixture's inputs a0.. against out; the vjp along g against v0..; the
// jvp along t0.. against jvp; then float32 and non-contiguous inputs against out.
void CheckCase(const std::string& c, int n, const Fn& f) {
  SCOPED_TRACE(c);
  TensorList in, tangents;
  for (int i = 0; i < n; ++i) {
    in.push_back(Fx(c, "a" + std::to_string(i)));
    tangents.push_back(Fx(c, "t" + std::to_string(i)));
  }
  const Tensor out = Fx(c, "out");
  EXPECT_TENSOR_NEAR(f(in), out, 1e-12);
  const auto lf = [&](const TensorList& a) { return TensorList{f(a)}; };
  const VjpResult r = vjp(lf, in);
  const TensorList grads = r.vjp_fn({Fx(c, "g")});
  for (int i = 0; i < n; ++i) EXPECT_TENSOR_NEAR(grads[i], Fx(c, "v" + std::to_string(i)), 1e-12);
  EXPECT_TENSOR_NEAR(jvp(lf, in, tangents).tangents[0], Fx(c, "jvp"), 1e-12);
  TensorList in32, strided;
  for (const Tensor& t : in) {
    in32.push_back(to(t, kFloat32));
    strided.push_back(testing::NonContiguousCopy(t));
  }
  EXPECT_TENSOR_NEAR(f(in32), to(out, kFloat32), 1e-5);
  EXPECT_TENSOR_NEAR(f(strided), out, 1e-12);
}

TEST(ConvOps, Conv2dFixtures) {
  CheckCase("conv2d_basic", 3, [](const TensorList& a) { return conv2d(a[0], a[1], a[2]); });
  CheckCase("conv2d_args", 3, [](const TensorList& a) {
    return conv2d(a[0], a[1], a[2], {2, 1}, {1, 2}, {2, 1}, 2);
  });
  CheckCase("conv2d_same", 2, [](const TensorList& a) {
    return conv2d(a[0], a[1], std::nullopt, {1}, ConvPadding::kSame, {1, 2});
  });
  CheckCase("conv2d_unbatched", 2, [](const TensorList& a) {
    return conv2d(a[0], a[1], std::nullopt, {2}, {1});
  });
}

TEST(ConvOps, Conv1d3dTransposeFixtures) {
  CheckCase("conv1d", 3,
            [](const TensorList& a) { return conv1d(a[0], a[1], a[2], {2}, {1}, {2}, 2); });
  CheckCase("conv3d", 3, [](const TensorList& a) {
    return conv3d(a[0], a[1], a[2], {1, 2, 1}, {1, 0, 1});
  });
  CheckCase("conv_transpose2d", 3, [](const TensorList& a) {
    return conv_transpose2d(a[0], a[1], a[2], {2, 1}, {1, 0}, {1, 0}, 2, {1, 2});
  });
  CheckCase("conv_transpose1d", 3, [](const TensorList& a) {
    return conv_transpose1d(a[0], a[1], a[2], {2}, {1}, {1});
  });
}

TEST(ConvOps, PoolFixtures) {
  CheckCase("max_pool2d", 1, [](const TensorList& a) { return max_pool2d(a[0], {3}, {2}, {1}); });
  EXPECT_TENSOR_EQ(std::get<1>(max_pool2d_with_indices(Fx("max_pool2d", "a0"), {3}, {2}, {1})),
                   Fx("max_pool2d", "indices"));
  CheckCase("max_pool2d_ceil", 1, [](const TensorList& a) {
    return std::get<0>(max_pool2d_with_indices(a[0], {3, 2}, {2, 3}, {1, 1}, {2, 1}, true));
  });
  EXPECT_TENSOR_EQ(std::get<1>(max_pool2d_with_indices(Fx("max_pool2d_ceil", "a0"), {3, 2},
                                                       {2, 3}, {1, 1}, {2, 1}, true)),
                   Fx("max_pool2d_ceil", "indices"));
  CheckCase("max_pool1d", 1,
            [](const TensorList& a) { return max_pool1d(a[0], {3}, {2}, {1}, {1}, true); });
  CheckCase("max_pool1d", 1, [](const TensorList& a) {
    return std::get<0>(max_pool1d_with_indices(a[0], {3}, {2}, {1}, {1}, true));
  });
  EXPECT_TENSOR_EQ(
      std::get<1>(max_pool1d_with_indices(Fx("max_pool1d", "a0"), {3}, {2}, {1}, {1}, true)),
      Fx("max_pool1d", "indices"));
  CheckCase("avg_pool2d", 1, [](const TensorList& a) { return avg_pool2d(a[0], {2}); });
  CheckCase("avg_pool2d_args", 1, [](const TensorList& a) {
    return avg_pool2d(a[0], {3, 2}, {2}, {1}, true, false);
  });
  CheckCase("avg_pool2d_pad", 1,
            [](const TensorList& a) { return avg_pool2d(a[0], {3}, {2}, {1}, true); });
  CheckCase("avg_pool2d_divisor", 1,
            [](const TensorList& a) { return avg_pool2d(a[0], {3}, {2}, {1}, false, true, 5); });
  CheckCase("avg_pool1d", 1,
            [](const TensorList& a) { return avg_pool1d(a[0], {3}, {2}, {1}, true); });
  CheckCase("avg_pool1d_nopad", 1,
            [](const TensorList& a) { return avg_pool1d(a[0], {4}, {3}, {2}, false, false); });
  CheckCase("adaptive_avg_pool2d", 1,
            [](const TensorList& a) { return adaptive_avg_pool2d(a[0], {3, 4}); });
  CheckCase("adaptive_avg_pool1d", 1,
            [](const TensorList& a) { return adaptive_avg_pool1d(a[0], {4}); });
  CheckCase("adaptive_max_pool2d", 1,
            [](const TensorList& a) { return std::get<0>(adaptive_max_pool2d(a[0], {3, 2})); });
  EXPECT_TENSOR_EQ(std::get<1>(adaptive_max_pool2d(Fx("adaptive_max_pool2d", "a0"), {3, 2})),
                   Fx("adaptive_max_pool2d", "indices"));
}

TEST(ConvOps, UnfoldFoldFixtures) {
  CheckCase("unfold", 1,
            [](const TensorList& a) { return unfold(a[0], {2, 3}, {1, 2}, {1}, {2, 1}); });
  CheckCase("fold", 1,
            [](const TensorList& a) { return fold(a[0], {5, 6}, {2, 3}, {1, 2}, {1}, {2, 1}); });
}

TEST(ConvOps, InterpolateFixtures) {
  CheckCase("interpolate_nearest1d", 1, [](const TensorList& a) { return interpolate(a[0], {7}); });
  CheckCase("interpolate_nearest2d_scale", 1,
            [](const TensorList& a) { return interpolate(a[0], {}, {1.5, 2.3}); });
  CheckCase("interpolate_nearest3d", 1,
            [](const TensorList& a) { return interpolate(a[0], {3, 5, 2}); });
  CheckCase("interpolate_nearest2d_keep_double", 1,
            [](const TensorList& a) { return interpolate(a[0], {4, 3}); });
  CheckCase("interpolate_exact2d", 1,
            [](const TensorList& a) { return interpolate(a[0], {5, 3}, {}, "nearest-exact"); });
  CheckCase("interpolate_exact1d_scale", 1,
            [](const TensorList& a) { return interpolate(a[0], {}, {1.7}, "nearest-exact"); });
  CheckCase("interpolate_linear1d", 1,
            [](const TensorList& a) { return interpolate(a[0], {9}, {}, "linear"); });
  CheckCase("interpolate_linear1d_scale", 1,
            [](const TensorList& a) { return interpolate(a[0], {}, {1.7}, "linear"); });
  CheckCase("interpolate_linear1d_to1", 1,
            [](const TensorList& a) { return interpolate(a[0], {1}, {}, "linear", true); });
  CheckCase("interpolate_bilinear_align", 1,
            [](const TensorList& a) { return interpolate(a[0], {5, 7}, {}, "bilinear", true); });
  CheckCase("interpolate_bilinear_scale", 1,
            [](const TensorList& a) { return interpolate(a[0], {}, {0.6, 1.5}, "bilinear"); });
  CheckCase("interpolate_bilinear_recompute", 1, [](const TensorList& a) {
    return interpolate(a[0], {}, {1.7}, "bilinear", std::nullopt, true);
  });
  CheckCase("interpolate_bilinear_keep_w", 1,
            [](const TensorList& a) { return interpolate(a[0], {6, 4}, {}, "bilinear"); });
  CheckCase("interpolate_trilinear", 1,
            [](const TensorList& a) { return interpolate(a[0], {3, 4, 5}, {}, "trilinear"); });
  CheckCase("interpolate_trilinear_align", 1,
            [](const TensorList& a) { return interpolate(a[0], {}, {2}, "trilinear", true); });
}

// Hand-computed values: each output's source index or coordinate worked out on paper from the
// formulas in ops/conv.h.
TEST(ConvOps, InterpolateByHand) {
  const auto v = [](const Tensor& t) { return t.to_vector<double>(); };
  using V = std::vector<double>;
  const Tensor abc = tensor(V{1, 2, 3}, {1, 1, 3});
  // The primitive's header example: doubling reads o / 2.
  EXPECT_EQ(v(upsample_nearest(tensor(V{1, 2}, {1, 1, 2}), {4})), (V{1, 1, 2, 2}));
  // nearest, 3 -> 2: s = 1.5, sources floor(0) = 0, floor(1.5) = 1.
  EXPECT_EQ(v(interpolate(abc, {2})), (V{1, 2}));
  // nearest-exact, 3 -> 2: floor(0.75) = 0, floor(2.25) = 2.
  EXPECT_EQ(v(interpolate(abc, {2}, {}, "nearest-exact")), (V{1, 3}));
  // nearest, 3 -> 7: s = 3/7, sources 0 0 0 1 1 2 2.
  EXPECT_EQ(v(interpolate(abc, {7})), (V{1, 1, 1, 2, 2, 3, 3}));
  // nearest-exact, 3 -> 7: floor((o + 0.5) * 3/7) = 0 0 1 1 2 2 2.
  EXPECT_EQ(v(interpolate(abc, {7}, {}, "nearest-exact")), (V{1, 1, 2, 2, 2, 3, 3}));
  // scale_factor 1.5 on 3 elements: out floor(4.5) = 4, sources floor(o / 1.5) = 0 0 1 2.
  EXPECT_EQ(v(interpolate(abc, {}, {1.5})), (V{1, 1, 2, 3}));
  // linear, scale_factor 1.7 on 0..5: out floor(10.2) = 10; output 1 sits at
  // x = 1.5 / 1.7 - 0.5 = 0.38235..., or with recompute_scale_factor (s = 6 / 10) at 0.4.
  const Tensor ramp = tensor(V{0, 1, 2, 3, 4, 5}, {1, 1, 6});
  EXPECT_NEAR(v(interpolate(ramp, {}, {1.7}, "linear"))[1], 1.5 / 1.7 - 0.5, 1e-15);
  EXPECT_NEAR(v(interpolate(ramp, {}, {1.7}, "linear", std::nullopt, true))[1], 0.4, 1e-15);
  // linear with align_corners: [0, 10] -> 5 is evenly spaced.
  const Tensor ends = tensor(V{0, 10}, {1, 1, 2});
  EXPECT_EQ(v(interpolate(ends, {5}, {}, "linear", true)), (V{0, 2.5, 5, 7.5, 10}));
  // linear, pixel centers: s = 0.5, x = 0 (clamped from -0.25), 0.25, 0.75, 1 (1.25 past the
  // last element: both corners are element 1).
  EXPECT_EQ(v(interpolate(ends, {4}, {}, "linear")), (V{0, 2.5, 7.5, 10}));
  // bilinear with align_corners, 2x2 -> 3x3: the midpoints average their neighbours.
  const Tensor sq = tensor(V{0, 1, 2, 3}, {1, 1, 2, 2});
  EXPECT_EQ(v(interpolate(sq, {3}, {}, "bilinear", true)),
            (V{0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}));
  // trilinear with align_corners, 2x1x1 -> 3x1x1.
  EXPECT_EQ(v(interpolate(tensor(V{4, 8}, {1, 1, 2, 1, 1}), {3, 1, 1}, {}, "trilinear", true)),
            (V{4, 6, 8}));
  // The adjoints, summed over unit gradients: how often each input is read (nearest) and its
  // total weight (linear, the four outputs above: 1 + 0.75 + 0.25 = 2 per input).
  EXPECT_EQ(v(upsample_nearest_backward(ones({1, 1, 7}, kFloat64), {7}, {1, 1, 3})),
            (V{3, 2, 2}));
  EXPECT_EQ(v(upsample_linear_backward(ones({1, 1, 4}, kFloat64), {4}, {1, 1, 2})), (V{2, 2}));
  // 1x2 -> 2x3: rows 0 0; columns floor(o * 2/3) = 0 0 1; so column 0 is read 4 times.
  EXPECT_EQ(v(grad([](const TensorList& a) { return sum(interpolate(a[0], {2, 3})); })(
                {ones({1, 1, 1, 2}, kFloat64)})[0]),
            (V{4, 2}));
}

TEST(ConvOps, InterpolateShapesDtypesAndAdjoints) {
  // An empty batch, size-1 dims, float32.
  EXPECT_EQ(interpolate(Seq({0, 2, 3}), {5}, {}, "linear").sizes(), IntArrayRef({0, 2, 5}));
  EXPECT_EQ(interpolate(Seq({0, 2, 3, 3}), {1}).sizes(), IntArrayRef({0, 2, 1, 1}));
  EXPECT_TENSOR_NEAR(interpolate(full({1, 1, 1}, 3.0, kFloat64), {4}, {}, "linear"),
                     full({1, 1, 4}, 3.0, kFloat64), 0.0);
  const Tensor x32 = to(Seq({2, 3, 4, 5}), kFloat32);
  const Tensor y32 = interpolate(x32, {7, 3}, {}, "bilinear");
  EXPECT_EQ(y32.dtype(), kFloat32);
  EXPECT_TENSOR_NEAR(y32, to(interpolate(Seq({2, 3, 4, 5}), {7, 3}, {}, "bilinear"), kFloat32),
                     1e-6);
  // Each backward primitive is the transpose of its forward: <A x, y> == <x, A^T y>.
  const Tensor x = Seq({2, 2, 3, 4, 5});
  const Tensor y = Seq({2, 2, 5, 3, 7}, 1.0);
  const Shape xs = {2, 2, 3, 4, 5};
  for (bool flag : {false, true}) {
    EXPECT_NEAR(sum(upsample_nearest(x, {5, 3, 7}, 1.9, std::nullopt, 1.3, flag) * y)
                    .item<double>(),
                sum(x * upsample_nearest_backward(y, {5, 3, 7}, xs, 1.9, std::nullopt, 1.3, flag))
                    .item<double>(),
                1e-12);
    EXPECT_NEAR(sum(upsample_linear(x, {5, 3, 7}, flag, std::nullopt, 0.8) * y).item<double>(),
                sum(x * upsample_linear_backward(y, {5, 3, 7}, xs, flag, std::nullopt, 0.8))
                    .item<double>(),
                1e-12);
  }
}

TEST(ConvOps, InterpolateErrors) {
  const Tensor x = Seq({2, 3, 4, 5});
  EXPECT_FT_ERROR(interpolate(Seq({3, 4}), {2}),
                  "interpolate: expected a 3-D, 4-D or 5-D input [N, C, *spatial], got shape "
                  "[3, 4]");
  EXPECT_FT_ERROR(interpolate(Seq({1, 1, 1, 1, 1, 1}), {2}), "got shape [1, 1, 1, 1, 1, 1]");
  EXPECT_FT_ERROR(interpolate(x, {2}, {2.0}),
                  "interpolate: only one of size and scale_factor may be given, got size [2] "
                  "and scale_factor [2]");
  EXPECT_FT_ERROR(interpolate(x), "interpolate: either size or scale_factor must be given");
  EXPECT_FT_ERROR(interpolate(x, {2, 3, 4}),
                  "interpolate: size must have 1 or 2 values (one per spatial dim of input "
                  "[2, 3, 4, 5]), got [2, 3, 4]");
  EXPECT_FT_ERROR(interpolate(x, {}, {2, 3, 4}), "scale_factor must have 1 or 2 values");
  EXPECT_FT_ERROR(interpolate(x, {2}, {}, "nearest", std::nullopt, true),
                  "recompute_scale_factor is not meaningful with an explicit size");
  EXPECT_FT_ERROR(interpolate(x, {2}, {}, "nearest", false),
                  "interpolate: align_corners can only be set with the interpolating modes "
                  "linear, bilinear and trilinear, got mode 'nearest'");
  EXPECT_FT_ERROR(interpolate(x, {2}, {}, "nearest-exact", true), "got mode 'nearest-exact'");
  EXPECT_FT_ERROR(interpolate(x, {2}, {}, "linear"),
                  "interpolate: mode 'linear' needs a 3-D input, got 4-D input [2, 3, 4, 5]");
  EXPECT_FT_ERROR(interpolate(Seq({2, 3, 4}), {2}, {}, "bilinear"),
                  "mode 'bilinear' needs a 4-D input, got 3-D input [2, 3, 4]");
  EXPECT_FT_ERROR(interpolate(x, {2}, {}, "trilinear"), "mode 'trilinear' needs a 5-D input");
  EXPECT_FT_ERROR(interpolate(x, {2}, {}, "bicubic"),
                  "interpolate: mode 'bicubic' is not supported by ft");
  EXPECT_FT_ERROR(interpolate(x, {2}, {}, "area"), "mode 'area' is not supported by ft");
  EXPECT_FT_ERROR(interpolate(x, {2}, {}, "bilinear", std::nullopt, std::nullopt, true),
                  "interpolate: antialias is not supported by ft");
  EXPECT_FT_ERROR(interpolate(x, {2}, {}, "cubic"), "interpolate: unknown mode 'cubic'");
  EXPECT_FT_ERROR(interpolate(to(x, kInt64), {2}),
                  "interpolate: expected a floating point input, got int64");
  EXPECT_FT_ERROR(interpolate(to(x, kInt64), {2}, {}, "bilinear"), "got int64");
  EXPECT_FT_ERROR(interpolate(x, {0, 2}),
                  "interpolate: input and output sizes should be greater than 0, got input "
                  "[2, 3, 4, 5] and output_size [0, 2]");
  EXPECT_FT_ERROR(interpolate(x, {}, {0.2}), "output_size [0, 1]");
  EXPECT_FT_ERROR(interpolate(x, {}, {-1.0}), "should be greater than 0");
  EXPECT_FT_ERROR(interpolate(Seq({2, 3, 0}), {2}), "should be greater than 0");
  EXPECT_FT_ERROR(interpolate(Seq({2, 0, 3}), {2}),
                  "interpolate: expected at least one channel, got input [2, 0, 3]");
  // The primitives check their own arguments.
  EXPECT_FT_ERROR(upsample_nearest(x, {2}),
                  "upsample_nearest: expected a 3-D input [N, C, W] for output_size [2], got "
                  "shape [2, 3, 4, 5]");
  EXPECT_FT_ERROR(upsample_linear(Seq({2, 3, 4}), {2, 2, 2, 2}),
                  "upsample_linear: output_size must have 1, 2 or 3 values");
  EXPECT_FT_ERROR(upsample_linear(Seq({2, 3, 4}), {2}, false, 2.0),
                  "upsample_linear: a scale was given for a spatial dim that a 3-D input does "
                  "not have");
  EXPECT_FT_ERROR(upsample_nearest_backward(Seq({2, 3, 5}), {4}, {2, 3, 4}),
                  "upsample_nearest_backward: expected grad_output of shape [2, 3, 4] (input_size "
                  "[2, 3, 4], output_size [4]), got [2, 3, 5]");
  EXPECT_FT_ERROR(upsample_linear_backward(Seq({2, 3, 4}), {4}, {2, 3, 4, 4}),
                  "upsample_linear_backward: expected a 3-D input [N, C, W]");
}

// A direct loop of the conv2d definition (the oracle the im2col + GEMM kernel must match).
Tensor Conv2dLoop(const Tensor& x, const Tensor& w, const Tensor& b, int64_t s, int64_t p,
                  int64_t d, int64_t g) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t O = w.size(0), Cg = w.size(1), K0 = w.size(2), K1 = w.size(3);
  const int64_t OH = (H + 2 * p - d * (K0 - 1) - 1) / s + 1;
  const int64_t OW = (W + 2 * p - d * (K1 - 1) - 1) / s + 1;
  const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>(),
                            bv = b.to_vector<double>();
  std::vector<double> out(static_cast<size_t>(N * O * OH * OW));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t o = 0; o < O; ++o) {
      const int64_t grp = o / (O / g);
      for (int64_t i = 0; i < OH; ++i) {
        for (int64_t j = 0; j < OW; ++j) {
          double acc = bv[static_cast<size_t>(o)];
          for (int64_t c = 0; c < Cg; ++c) {
            for (int64_t a = 0; a < K0; ++a) {
              for (int64_t e = 0; e < K1; ++e) {
                const int64_t ih = i * s - p + a * d, iw = j * s - p + e * d;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += wv[static_cast<size_t>(((o * Cg + c) * K0 + a) * K1 + e)] *
                       xv[static_cast<size_t>(((n * C + grp * Cg + c) * H + ih) * W + iw)];
              }
            }
          }
          out[static_cast<size_t>(((n * O + o) * OH + i) * OW + j)] = acc;
        }
      }
    }
  }
  return tensor(out, {N, O, OH, OW});
}

TEST(ConvOps, Conv2dMatchesDirectLoop) {
  for (int64_t s : {1, 2, 3}) {
    for (int64_t p : {0, 1, 2}) {
      for (int64_t d : {1, 2}) {
        for (int64_t g : {1, 3}) {
          const Tensor x = Seq({2, 6, 7, 8}), w = Seq({3 * g, 6 / g, 3, 2}, 1.0),
                       b = Seq({3 * g}, 2.0);
          SCOPED_TRACE(::testing::Message() << s << " " << p << " " << d << " " << g);
          EXPECT_TENSOR_NEAR(conv2d(x, w, b, {s}, {p}, {d}, g), Conv2dLoop(x, w, b, s, p, d, g),
                             1e-12);
        }
      }
    }
  }
  // 1x1 kernels take the no-im2col path.
  const Tensor x = Seq({2, 4, 3, 5}), w = Seq({3, 4, 1, 1}, 1.0), b = Seq({3}, 2.0);
  EXPECT_TENSOR_NEAR(conv2d(x, w, b), Conv2dLoop(x, w, b, 1, 0, 1, 1), 1e-12);
}

TEST(ConvOps, SameAndValidPadding) {
  const Tensor x = Seq({2, 3, 6, 5}), w = Seq({4, 3, 3, 2}, 1.0);
  const Tensor same = conv2d(x, w, std::nullopt, {1}, ConvPadding::kSame);
  EXPECT_EQ(same.sizes(), IntArrayRef({2, 4, 6, 5}));
  // Kernel 3: one zero each side; kernel 2: the one zero goes on the right.
  EXPECT_TENSOR_NEAR(same, conv2d(pad(x, {0, 1, 1, 1}), w), 1e-12);
  EXPECT_TENSOR_NEAR(conv2d(x, w, std::nullopt, {1}, ConvPadding::kValid), conv2d(x, w), 0.0);
  EXPECT_EQ(conv1d(Seq({1, 2, 7}), Seq({3, 2, 4}), std::nullopt, {1}, ConvPadding::kSame, {2})
                .sizes(),
            IntArrayRef({1, 3, 7}));
  EXPECT_EQ(conv3d(Seq({1, 1, 3, 4, 5}), Seq({2, 1, 2, 3, 2}), std::nullopt, {1},
                   ConvPadding::kSame)
                .sizes(),
            IntArrayRef({1, 2, 3, 4, 5}));
}

TEST(ConvOps, TransposeIsAdjointOfConv) {
  // <conv(x, w), y> == <x, conv_transpose(y, w)> for every argument mode.
  const Tensor x = Seq({2, 4, 9, 8}), w = Seq({6, 2, 3, 2}, 1.0);
  const Tensor y = conv2d(x, w, std::nullopt, {2, 3}, {1, 0}, {1, 2}, 2);
  const Tensor gy = Seq(Shape(y.sizes().begin(), y.sizes().end()), 3.0);
  const Tensor xt = conv_transpose2d(gy, w, std::nullopt, {2, 3}, {1, 0}, {0, 0}, 2, {1, 2});
  // 9 + 2 - 5 = 6 = 3 * 2 rows used exactly; 8 - 3 = 5 cols, stride 3: one col unused.
  const Tensor xt_full =
      conv_transpose2d(gy, w, std::nullopt, {2, 3}, {1, 0}, {0, 2}, 2, {1, 2});
  EXPECT_EQ(xt_full.sizes(), x.sizes());
  EXPECT_NEAR(sum(y * gy).item<double>(), sum(x * xt_full).item<double>(), 1e-10);
  EXPECT_EQ(xt.size(3), 6);
}

TEST(ConvOps, WeightGradIsTheAdjointInTheWeight) {
  // <conv(x, v), g> == <v, conv_weight_grad(x, v's shape, g)> for every argument mode, 1-3
  // spatial dims, batched and unbatched inputs (conv2d itself is checked against a loop).
  for (int64_t s : {1, 2}) {
    for (int64_t p : {0, 1}) {
      for (int64_t d : {1, 2}) {
        for (int64_t g : {1, 2}) {
          SCOPED_TRACE(::testing::Message() << s << " " << p << " " << d << " " << g);
          const Tensor x = Seq({2, 4, 7, 6}), v = Seq({2 * g, 4 / g, 3, 2}, 1.0);
          const Tensor y = conv2d(x, v, std::nullopt, {s}, {p}, {d}, g);
          const Tensor gy = cos(Seq(Shape(y.sizes().begin(), y.sizes().end()), 3.0));
          const Tensor dw = conv_weight_grad(x, v.sizes(), gy, {s}, {p}, {d}, g);
          EXPECT_EQ(dw.sizes(), v.sizes());
          EXPECT_NEAR(sum(y * gy).item<double>(), sum(v * dw).item<double>(), 1e-9);
          // The same for one unbatched example.
          const Tensor x0 = select(x, 0, 1), gy0 = select(gy, 0, 1);
          EXPECT_NEAR(sum(conv2d(x0, v, std::nullopt, {s}, {p}, {d}, g) * gy0).item<double>(),
                      sum(v * conv_weight_grad(x0, v.sizes(), gy0, {s}, {p}, {d}, g))
                          .item<double>(),
                      1e-9);
        }
      }
    }
  }
  const Tensor x1 = Seq({2, 3, 9}), v1 = Seq({4, 3, 3}, 1.0);
  const Tensor y1 = conv1d(x1, v1, std::nullopt, {2}, {1});
  EXPECT_NEAR(sum(y1 * y1).item<double>(),
              sum(v1 * conv_weight_grad(x1, v1.sizes(), y1, {2}, {1})).item<double>(), 1e-8);
  const Tensor x3 = Seq({1, 2, 4, 3, 5}), v3 = Seq({3, 2, 2, 1, 3}, 1.0);
  const Tensor y3 = conv3d(x3, v3, std::nullopt, {1}, {0, 1, 1}, {1, 1, 2});
  EXPECT_NEAR(sum(y3 * y3).item<double>(),
              sum(v3 * conv_weight_grad(x3, v3.sizes(), y3, {1}, {0, 1, 1}, {1, 1, 2}))
                  .item<double>(),
              1e-8);
  // grad of conv2d's weight is this op.
  const Tensor x = Seq({2, 4, 7, 6}), w = Seq({2, 4, 3, 2}, 1.0);
  const Tensor gw = grad([](const TensorList& a) { return sum(sin(conv2d(a[0], a[1]))); },
                         {1})({x, w})[0];
  EXPECT_TENSOR_NEAR(gw, conv_weight_grad(x, w.sizes(), cos(conv2d(x, w))), 1e-12);
}

TEST(ConvOps, WeightGradErrors) {
  EXPECT_FT_ERROR(conv_weight_grad(Seq({1, 2, 5, 5}), {3, 2, 3, 3}, Seq({1, 3, 2, 3})),
                  "conv_weight_grad: expected grad_output of shape [1, 3, 3, 3] (input "
                  "[1, 2, 5, 5], weight_size [3, 2, 3, 3]), got [1, 3, 2, 3]");
  EXPECT_FT_ERROR(conv_weight_grad(Seq({1, 2, 5, 5}), {3, 2}, Seq({1, 3, 5, 5})),
                  "conv_weight_grad: weight_size must be [out_channels, in_channels / groups, "
                  "kernel...] with 1 to 3 kernel dims, got [3, 2]");
  EXPECT_FT_ERROR(conv_weight_grad(Seq({1, 2, 5, 5}), {3, 1, 3, 3}, Seq({1, 3, 3, 3})),
                  "conv_weight_grad: weight [3, 1, 3, 3] with groups 1 expects 1 input "
                  "channels, but the input [1, 2, 5, 5] has 2");
  EXPECT_FT_ERROR(
      conv_weight_grad(Seq({1, 2, 5, 5}), {3, 2, 3, 3}, to(Seq({1, 3, 3, 3}), kFloat32)),
      "conv_weight_grad: input and grad_output must have the same dtype, got input float64, "
      "grad_output float32");
}

TEST(ConvOps, SizeZeroAndSizeOne) {
  // Empty batch.
  EXPECT_EQ(conv2d(Seq({0, 3, 5, 5}), Seq({2, 3, 3, 3})).sizes(), IntArrayRef({0, 2, 3, 3}));
  EXPECT_EQ(conv_transpose2d(Seq({0, 3, 2, 2}), Seq({3, 2, 3, 3})).sizes(),
            IntArrayRef({0, 2, 4, 4}));
  EXPECT_EQ(max_pool2d(Seq({0, 2, 4, 4}), {2}).sizes(), IntArrayRef({0, 2, 2, 2}));
  EXPECT_EQ(avg_pool1d(Seq({0, 2, 4}), {2}).sizes(), IntArrayRef({0, 2, 2}));
  EXPECT_EQ(adaptive_avg_pool2d(Seq({0, 2, 4, 4}), {3}).sizes(), IntArrayRef({0, 2, 3, 3}));
  EXPECT_EQ(unfold(Seq({0, 2, 4, 4}), {2}).sizes(), IntArrayRef({0, 8, 9}));
  EXPECT_EQ(fold(Seq({0, 8, 9}), {4}, {2}).sizes(), IntArrayRef({0, 2, 4, 4}));
  // Zero channels: a conv of nothing is its bias.
  EXPECT_TENSOR_NEAR(conv2d(Seq({2, 0, 3, 3}), Seq({2, 0, 2, 2}), Seq({2})),
                     expand(reshape(Seq({2}), {1, 2, 1, 1}), {2, 2, 2, 2}), 0.0);
  // Gradients of an empty batch are empty; the weight's is zero.
  const Tensor gw = grad([](const TensorList& a) { return sum(conv2d(a[0], a[1])); }, {1})(
      {Seq({0, 3, 5, 5}), Seq({2, 3, 3, 3})})[0];
  EXPECT_TENSOR_NEAR(gw, zeros({2, 3, 3, 3}, kFloat64), 0.0);
  // All-ones sizes.
  const Tensor one = full({1, 1, 1, 1}, 3.0, kFloat64);
  EXPECT_TENSOR_NEAR(conv2d(one, full({1, 1, 1, 1}, 2.0, kFloat64)),
                     full({1, 1, 1, 1}, 6.0, kFloat64), 0.0);
  EXPECT_TENSOR_NEAR(max_pool2d(one, {1}), one, 0.0);
  EXPECT_TENSOR_NEAR(avg_pool2d(one, {1}), one, 0.0);
  EXPECT_TENSOR_NEAR(std::get<0>(adaptive_max_pool2d(one, {1})), one, 0.0);
}

TEST(ConvOps, PoolSemantics) {
  // NaN wins a max window; -inf padding never does.
  const Tensor x = tensor(std::vector<double>{1.0, NAN, -5.0, 2.0}, {1, 1, 4});
  const auto [v, i] = max_pool1d_with_indices(x, {2}, {2});
  EXPECT_TRUE(std::isnan(v.to_vector<double>()[0]));
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 3}));
  const Tensor neg = full({1, 1, 3}, -7.0, kFloat64);
  EXPECT_TENSOR_NEAR(max_pool1d(neg, {3}, {1}, {1}), full({1, 1, 3}, -7.0, kFloat64), 0.0);
  // Ties: the first maximum wins, and the gradient goes to it alone.
  const Tensor ties = full({1, 1, 2, 2}, 1.0, kFloat64);
  EXPECT_EQ(std::get<1>(max_pool2d_with_indices(ties, {2})).to_vector<int64_t>(),
            (std::vector<int64_t>{0}));
  const Tensor g = grad([](const TensorList& a) { return sum(max_pool2d(a[0], {2})); })({ties})[0];
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{1, 0, 0, 0}));
  // Empty stride means kernel_size.
  EXPECT_TENSOR_NEAR(avg_pool2d(Seq({1, 2, 6, 6}), {3}), avg_pool2d(Seq({1, 2, 6, 6}), {3}, {3}),
                     0.0);
  // Adaptive windows overlap when out does not divide in: [0, 2), [1, 3) over 3 elements.
  EXPECT_EQ(adaptive_avg_pool1d(tensor(std::vector<double>{1, 2, 4}, {1, 3}), {2})
                .to_vector<double>(),
            (std::vector<double>{1.5, 3.0}));
}

TEST(ConvOps, Errors) {
  const Tensor x = Seq({2, 4, 6, 6}), w = Seq({6, 2, 3, 3});
  EXPECT_FT_ERROR(conv2d(Seq({4, 6}), w), "conv2d: expected a 3-D (unbatched) or 4-D");
  EXPECT_FT_ERROR(conv2d(x, Seq({6, 4, 3})), "conv2d: expected a 4-D weight");
  EXPECT_FT_ERROR(conv2d(x, w), "expects 2 input channels, but the input [2, 4, 6, 6] has 4");
  EXPECT_FT_ERROR(conv2d(x, Seq({5, 2, 3, 3}), std::nullopt, {1}, {0}, {1}, 2),
                  "out channels 5 (weight [5, 2, 3, 3]) must be divisible by groups 2");
  EXPECT_FT_ERROR(conv2d(x, w, std::nullopt, {1}, {0}, {1}, 0), "groups must be positive");
  EXPECT_FT_ERROR(conv2d(x, w, std::nullopt, {0}, {0}, {1}, 2), "stride must be positive");
  EXPECT_FT_ERROR(conv2d(x, w, std::nullopt, {1}, {0}, {-1}, 2), "dilation must be positive");
  EXPECT_FT_ERROR(conv2d(x, w, std::nullopt, {1}, {-1}, {1}, 2), "padding must be non-negative");
  EXPECT_FT_ERROR(conv2d(x, w, std::nullopt, {1, 1, 1}, {0}, {1}, 2),
                  "stride must have 1 or 2 values");
  EXPECT_FT_ERROR(conv2d(x, w, Seq({5}), {1}, {0}, {1}, 2), "expected a bias of shape [6]");
  EXPECT_FT_ERROR(conv2d(x, w, std::nullopt, {1}, {0}, {3}, 2),
                  "is smaller than the dilated kernel");
  EXPECT_FT_ERROR(conv2d(x, to(w, kFloat32), std::nullopt, {1}, {0}, {1}, 2),
                  "must have the same dtype");
  EXPECT_FT_ERROR(conv2d(to(x, kInt64), to(w, kInt64), std::nullopt, {1}, {0}, {1}, 2),
                  "expected a floating point tensor");
  EXPECT_FT_ERROR(conv2d(x, w, std::nullopt, {2}, ConvPadding::kSame, {1}, 2),
                  "not supported for strided convolutions");
  EXPECT_FT_ERROR(conv1d(x, w), "conv1d: expected a 2-D (unbatched) or 3-D");
  EXPECT_FT_ERROR(conv3d(Seq({2, 4, 6}), w), "conv3d: expected a 4-D (unbatched) or 5-D");
  // Transposed.
  EXPECT_FT_ERROR(conv_transpose2d(x, Seq({3, 2, 3, 3})),
                  "weight [3, 2, 3, 3] expects 3 input channels, but the input");
  EXPECT_FT_ERROR(conv_transpose2d(x, Seq({4, 2, 3, 3}), std::nullopt, {1}, {0}, {0}, 3),
                  "input channels 4 (input [2, 4, 6, 6]) must be divisible by groups 3");
  EXPECT_FT_ERROR(conv_transpose2d(x, Seq({4, 2, 3, 3}), std::nullopt, {2}, {0}, {2}),
                  "output_padding [2, 2] must be smaller than either stride");
  EXPECT_FT_ERROR(conv_transpose2d(x, Seq({4, 2, 3, 3}), std::nullopt, {1}, {5}),
                  "is too small");
  EXPECT_FT_ERROR(conv_transpose1d(Seq({2, 4, 6}), Seq({4, 2, 3}), Seq({3})),
                  "expected a bias of shape [2]");
  // Pools.
  EXPECT_FT_ERROR(max_pool2d(x, {3}, {1}, {2}), "padding [2, 2] must be at most half");
  EXPECT_FT_ERROR(max_pool2d(x, {0}), "kernel_size must be positive");
  EXPECT_FT_ERROR(max_pool2d(x, {2}, {0}), "stride must be positive");
  EXPECT_FT_ERROR(max_pool2d(x, {7}), "is too small for kernel_size");
  EXPECT_FT_ERROR(max_pool2d(Seq({6, 6}), {2}), "max_pool2d: expected a 3-D (unbatched)");
  EXPECT_FT_ERROR(max_pool1d(x, {2}), "max_pool1d: expected a 2-D (unbatched)");
  EXPECT_FT_ERROR(avg_pool2d(x, {2}, {}, {0}, false, true, 0), "divisor_override");
  EXPECT_FT_ERROR(avg_pool1d(Seq({2, 5}), {3}, {1}, {2}), "must be at most half");
  EXPECT_FT_ERROR(adaptive_avg_pool2d(x, {-1}), "output_size must be non-negative");
  EXPECT_FT_ERROR(adaptive_max_pool2d(Seq({2, 0, 4}), {2}), "expected non-empty spatial dims");
  EXPECT_FT_ERROR(max_pool2d(to(x, kInt64), {2}), "expected a floating point tensor");
  // im2col / col2im.
  EXPECT_FT_ERROR(unfold(Seq({4, 6}), {2}), "unfold: expected a 3-D (unbatched) or 4-D");
  EXPECT_FT_ERROR(unfold(x, {7}), "is smaller than the dilated kernel_size");
  EXPECT_FT_ERROR(fold(Seq({2, 7, 9}), {4}, {2}), "must be divisible by the kernel size 4");
  EXPECT_FT_ERROR(fold(Seq({2, 8, 8}), {4}, {2}), "has 8 blocks, but output_size [4, 4]");
  EXPECT_FT_ERROR(fold(Seq({8}), {4}, {2}), "fold: expected a 2-D (unbatched) or 3-D");
}

// A small CNN's second derivatives (conv2d -> tanh -> max_pool2d -> conv1d -> avg_pool1d)
// against finite differences, in every argument.
// Found by nn_fuzzer (tests/fuzz/corpus/nn_fuzzer/regression-conv-same-huge-dilation): "same"
// padding computed dilation * (kernel - 1) without an overflow check.
TEST(ConvOps, SamePaddingHugeDilationThrows) {
  const Tensor x = Seq({1, 2, 5, 5});
  const Tensor w = Seq({3, 2, 3, 3});
  constexpr int64_t kBig = int64_t{1} << 62;
  EXPECT_FT_ERROR(conv2d(x, w, std::nullopt, {1}, ConvPadding::kSame, {kBig}),
                  "conv2d: padding ConvPadding::kSame with dilation [4611686018427387904]");
  // A non-positive dilation is the convolution's own error, not a negative padding.
  EXPECT_FT_ERROR(conv2d(x, w, std::nullopt, {1}, ConvPadding::kSame, {-2}),
                  "dilation must be positive");
}

// The shape checks of convolutions, pools and unfold / fold computed their output sizes in
// plain int64: a huge stride, padding, dilation or kernel size wrapped into a plausible size.
TEST(ConvOps, HugeParametersThrowInsteadOfOverflowing) {
  const Tensor x = Seq({1, 2, 5, 5});
  const Tensor w = Seq({3, 2, 3, 3});
  constexpr int64_t kBig = int64_t{1} << 62;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_FT_ERROR(conv2d(x, w, std::nullopt, {1}, {0}, {kMax}), "conv2d: kernel size 3 with dilation");
  EXPECT_FT_ERROR(conv2d(x, w, std::nullopt, {1}, {kBig}), "overflows int64");
  EXPECT_FT_ERROR(conv_transpose2d(x, Seq({2, 3, 3, 3}), std::nullopt, {kMax}),
                  "conv_transpose2d: the output size in spatial dim 0");
  EXPECT_FT_ERROR(conv_transpose2d(x, Seq({2, 3, 3, 3}), std::nullopt, {1}, {0}, {0}, 1, {kMax}),
                  "overflows int64");
  // (A pool's padding is at most half its kernel size.)
  EXPECT_FT_ERROR(max_pool2d(x, {kMax}, {1}, {kBig - 1}), "max_pool2d: kernel size");
  EXPECT_FT_ERROR(avg_pool1d(Seq({2, 5}), {kMax}, {1}, {kBig - 1}), "overflows int64");
  EXPECT_FT_ERROR(unfold(x, {3}, {1}, {kBig}), "unfold: kernel size 3");
  constexpr int64_t k40 = int64_t{1} << 40;
  EXPECT_FT_ERROR(unfold(x, {k40}, {1}, {k40}), "overflow int64");
  EXPECT_FT_ERROR(fold(Seq({1, 4, 1}), {5}, {k40}, {1}, {k40}), "overflow int64");
  // A huge stride with ceil_mode is one window, not an overflowed count.
  EXPECT_EQ(max_pool2d(x, {2}, {kMax}, {0}, {1}, /*ceil_mode=*/true).sizes(),
            (Shape{1, 2, 1, 1}));
}

// Found by nn_fuzzer in CI (corpus/nn_fuzzer/regression-conv1d-empty-batch-huge-workspace):
// an empty batch with a huge padding has an empty output, but the im2col workspace
// (channels * kernel * output positions) was allocated anyway, 2^45 bytes: std::bad_alloc.
TEST(ConvOps, EmptyBatchHugePaddingAllocatesNoWorkspace) {
  constexpr int64_t k40 = int64_t{1} << 40;
  for (const DType dt : {kFloat32, kFloat64}) {
    const Tensor x = zeros({0, 2, 3}, dt);
    const Tensor w = to(Seq({4, 2, 3}), dt);
    EXPECT_EQ(conv1d(x, w, std::nullopt, {1}, {k40}).sizes(), (Shape{0, 4, 2 * k40 + 1}));
    EXPECT_EQ(conv_transpose1d(zeros({0, 4, 3}, dt), w, std::nullopt, {1}).sizes(),
              (Shape{0, 2, 5}));
    // The weight's gradient over no examples is zero, whatever the output's extent.
    const Tensor gw = conv_weight_grad(x, {4, 2, 3}, zeros({0, 4, 2 * k40 + 1}, dt), {1}, {k40});
    EXPECT_TENSOR_NEAR(gw, zeros({4, 2, 3}, dt), 0.0);
  }
}

// Found by nn_fuzzer in CI (corpus/nn_fuzzer/regression-conv2d-empty-batch-huge-image-
// positions-overflow): with an empty batch, huge paddings make output sizes whose product
// (the im2col positions, 2^43 * 2^42) overflowed int64 before anything checked that there
// was no work: undefined behaviour (UBSan). Empty outputs return at once, and the products
// saturate.
TEST(ConvOps, EmptyBatchWithPositionsBeyondInt64) {
  constexpr int64_t k42 = int64_t{1} << 42, k41 = int64_t{1} << 41;
  for (const DType dt : {kFloat32, kFloat64}) {
    const Tensor x = zeros({0, 2, 3, 3}, dt);
    const Tensor w = to(Seq({4, 2, 3, 3}), dt);
    const Shape out = {0, 4, 2 * k42 + 1, 2 * k41 + 1};
    EXPECT_EQ(conv2d(x, w, std::nullopt, {1}, {k42, k41}).sizes(), out);
    const Tensor gw = conv_weight_grad(x, {4, 2, 3, 3}, zeros(out, dt), {1}, {k42, k41});
    EXPECT_TENSOR_NEAR(gw, zeros({4, 2, 3, 3}, dt), 0.0);
  }
}

TEST(ConvOps, SmallCnnSecondOrder) {
  const Fn net = [](const TensorList& a) {
    const Tensor h = max_pool2d(tanh(conv2d(a[0], a[1], a[2], {1}, {1})), {2});
    const Tensor f = flatten(h, 2, 3);  // [N, C, L]
    return avg_pool1d(tanh(conv1d(f, a[3], std::nullopt, {1}, {1})), {2});
  };
  const TensorList args = {Seq({2, 2, 4, 4}, 0.3), Seq({3, 2, 3, 3}, 1.1) * 0.5,
                           Seq({3}, 2.0), Seq({2, 3, 2}, 0.7)};
  const GradcheckResult g1 = gradcheck(net, args);
  EXPECT_TRUE(g1.ok) << g1.message;
  const GradcheckResult g2 = gradgradcheck(net, args);
  EXPECT_TRUE(g2.ok) << g2.message;
  const GradcheckResult j = jvpcheck(net, args);
  EXPECT_TRUE(j.ok) << j.message;
  // And each transposed conv, unfold/fold, pool on its own.
  const std::vector<std::pair<Fn, TensorList>> ops = {
      {[](const TensorList& a) {
         return tanh(conv_transpose2d(a[0], a[1], a[2], {2}, {1}, {1}, 1, {1}));
       },
       {Seq({1, 2, 3, 2}), Seq({2, 2, 2, 3}, 1.0), Seq({2}, 2.0)}},
      {[](const TensorList& a) { return tanh(conv3d(a[0], a[1], std::nullopt, {2, 1, 1})); },
       {Seq({1, 2, 3, 3, 2}), Seq({2, 2, 2, 2, 1}, 1.0)}},
      {[](const TensorList& a) {
         return square(fold(unfold(a[0], {2}, {1}, {1}), {3}, {2}, {1}, {1}));
       },
       {Seq({1, 2, 3, 3})}},
      {[](const TensorList& a) { return square(adaptive_avg_pool2d(a[0], {2, 3})); },
       {Seq({1, 2, 3, 4})}},
      {[](const TensorList& a) {
         return square(avg_pool2d(a[0], {2}, {2}, {1}, true, false));
       },
       {Seq({1, 2, 5, 4})}},
      {[](const TensorList& a) { return square(std::get<0>(adaptive_max_pool2d(a[0], {2}))); },
       {Seq({1, 2, 3, 4})}},
      {[](const TensorList& a) {
         return square(interpolate(a[0], {}, {1.7, 0.6}, "bilinear"));
       },
       {Seq({1, 2, 3, 4})}},
      {[](const TensorList& a) {
         return square(interpolate(a[0], {3, 2, 4}, {}, "trilinear", true));
       },
       {Seq({1, 1, 2, 3, 3})}},
      {[](const TensorList& a) { return square(interpolate(a[0], {5}, {}, "nearest-exact")); },
       {Seq({2, 1, 3})}},
  };
  for (const auto& [f, a] : ops) {
    const GradcheckResult r2 = gradgradcheck(f, a);
    EXPECT_TRUE(r2.ok) << r2.message;
    const GradcheckResult rj = jvpcheck(f, a);
    EXPECT_TRUE(rj.ok) << rj.message;
  }
}

}  // namespace
}  // namespace ft

// The normalization kernels (kernels/normalization.h): layer_norm, rms_norm, normalize,
// group_norm, batch_norm and instance_norm (output, and the running statistics they return:
// updated in training / use_input_stats mode, copied in eval mode, [0] when not given), with
// and without weight and bias, several eps and momentum values, every input rank they take,
// rank-0 / size-0 / size-1 dims, non-contiguous arguments, float32 and float64; and the
// argument checks (CheckNormalizedShape, CheckGroupNorm, CheckChannelNorm, CheckNormalize,
// RmsNormEps) with every documented error. Oracle: the definitions (torch.nn.functional's)
// evaluated by hand-written double-precision loops over to_vector<double>() values: mean and
// biased variance for standardizing, the unbiased variance for running_var, and
// (1 - momentum) * running + momentum * statistic for the running statistics.
#include "kernels/normalization.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/test_helpers.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tensor/tensor.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::Uniform;

const std::vector<DType> kFloatDTypes = {kFloat32, kFloat64};
const double kInf = std::numeric_limits<double>::infinity();

// The same values with the storage order of dims 0 and last swapped (non-contiguous).
Tensor Transposed(const Tensor& t) {
  const int64_t last = t.dim() - 1;
  return transpose(clone(transpose(t, 0, last)), 0, last);
}

std::vector<double> ValuesOr(const std::optional<Tensor>& t, size_t n, double fill) {
  return t ? t->to_vector<double>() : std::vector<double>(n, fill);
}

// Mean and biased / unbiased variance of v, two-pass.
struct Stats {
  double mean, var, unbiased;
};
Stats StatsOf(const std::vector<double>& v) {
  const double n = static_cast<double>(v.size());
  double s = 0;
  for (double x : v) s += x;
  const double mean = s / n;
  double sq = 0;
  for (double x : v) sq += (x - mean) * (x - mean);
  return {mean, sq / n, sq / (n - 1)};
}

::testing::AssertionResult Near(const Tensor& actual, const Tensor& expected) {
  const bool f32 = expected.dtype() == kFloat32;
  return testing::TensorNear(actual, expected, f32 ? 3e-5 : 1e-12, f32 ? 3e-5 : 1e-12);
}

Tensor AsTensor(const std::vector<double>& v, IntArrayRef shape, DType dtype) {
  return to(tensor(v, shape), dtype);
}

// ---------------------------------------------------------------------------------------
// layer_norm

// Standardizes each row of the trailing `inner` elements, then weight / bias (of `inner`).
Tensor LayerNormOracle(const Tensor& x, int64_t inner, const std::optional<Tensor>& weight,
                       const std::optional<Tensor>& bias, double eps) {
  const std::vector<double> xv = x.to_vector<double>();
  const size_t k = static_cast<size_t>(inner);
  const std::vector<double> w = ValuesOr(weight, k, 1.0), b = ValuesOr(bias, k, 0.0);
  std::vector<double> out(xv.size());
  for (size_t r = 0; k > 0 && r < xv.size() / k; ++r) {
    const std::vector<double> row(xv.begin() + r * k, xv.begin() + (r + 1) * k);
    const Stats s = StatsOf(row);
    for (size_t j = 0; j < k; ++j) {
      out[r * k + j] = (row[j] - s.mean) / std::sqrt(s.var + eps) * w[j] + b[j];
    }
  }
  return AsTensor(out, x.sizes(), x.dtype());
}

TEST(LayerNormTest, MatchesTheDefinitionOverOneOrMoreTrailingDims) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Uniform({2, 3, 4}, dtype, 1);
    for (const Shape& ns : {Shape{4}, Shape{3, 4}, Shape{2, 3, 4}}) {
      SCOPED_TRACE(ShapeToString(ns));
      const Tensor w = Uniform(ns, dtype, 2, 0.5, 1.5);
      const Tensor b = Uniform(ns, dtype, 3);
      const int64_t inner = Numel(ns);
      for (double eps : {1e-5, 0.5}) {
        EXPECT_TRUE(Near(layer_norm(x, ns, std::nullopt, std::nullopt, eps),
                         LayerNormOracle(x, inner, std::nullopt, std::nullopt, eps)));
        EXPECT_TRUE(Near(layer_norm(x, ns, w, b, eps), LayerNormOracle(x, inner, w, b, eps)));
        EXPECT_TRUE(Near(layer_norm(x, ns, w, std::nullopt, eps),
                         LayerNormOracle(x, inner, w, std::nullopt, eps)));
        EXPECT_TRUE(Near(layer_norm(x, ns, std::nullopt, b, eps),
                         LayerNormOracle(x, inner, std::nullopt, b, eps)));
      }
    }
  }
}

TEST(LayerNormTest, NonContiguousArguments) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Uniform({5, 4}, dtype, 4);
    const Tensor w = Uniform({4}, dtype, 5, 0.5, 1.5);
    const Tensor b = Uniform({4}, dtype, 6);
    const Tensor wn = testing::NonContiguousCopy(w), bn = testing::NonContiguousCopy(b);
    EXPECT_TRUE(
        Near(layer_norm(Transposed(x), {4}, wn, bn, 1e-5), LayerNormOracle(x, 4, w, b, 1e-5)));
    EXPECT_TRUE(Near(layer_norm(testing::NonContiguousCopy(x), {4}, wn, bn, 1e-5),
                     LayerNormOracle(x, 4, w, b, 1e-5)));
    // Rows expanded from one (stride 0): every row normalizes the same way.
    const Tensor row = Uniform({1, 4}, dtype, 7);
    EXPECT_TRUE(Near(layer_norm(expand(row, {3, 4}), {4}, w, b, 1e-5),
                     LayerNormOracle(expand(row, {3, 4}), 4, w, b, 1e-5)));
    // A contiguous view at a storage offset.
    const Tensor rows = narrow(Uniform({6, 4}, dtype, 8), 0, 2, 3);
    EXPECT_TRUE(Near(layer_norm(rows, {4}, w, b, 1e-5), LayerNormOracle(rows, 4, w, b, 1e-5)));
  }
}

TEST(LayerNormTest, RankOneSizeOneAndSizeZero) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor v = Uniform({6}, dtype, 9);
    EXPECT_TRUE(Near(layer_norm(v, {6}, std::nullopt, std::nullopt, 1e-5),
                     LayerNormOracle(v, 6, std::nullopt, std::nullopt, 1e-5)));
    // A normalized dim of size 1: x - mean = 0, so the output is the bias.
    const Tensor col = Uniform({3, 1}, dtype, 10);
    const Tensor b = to(tensor({0.25}), dtype);
    EXPECT_TRUE(Near(layer_norm(col, {1}, std::nullopt, b, 1e-5),
                     to(tensor({0.25, 0.25, 0.25}, {3, 1}), dtype)));
    // No rows, or rows of no elements: an empty result of the input's shape.
    const Tensor e = layer_norm(zeros({0, 4}, dtype), {4}, std::nullopt, std::nullopt, 1e-5);
    EXPECT_EQ(e.sizes(), (Shape{0, 4}));
    EXPECT_EQ(e.dtype(), dtype);
    EXPECT_EQ(
        layer_norm(zeros({3, 0}, dtype), {0}, zeros({0}, dtype), zeros({0}, dtype), 1e-5).sizes(),
        (Shape{3, 0}));
  }
}

TEST(LayerNormTest, HandWorkedRow) {
  // [1, 2, 3, 4]: mean 2.5, biased var 1.25.
  const Tensor y = layer_norm(tensor({1.0, 2.0, 3.0, 4.0}), {4}, std::nullopt, std::nullopt, 0.0);
  const double s = std::sqrt(1.25);
  EXPECT_TENSOR_NEAR(y, tensor({-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}), 1e-15);
}

TEST(LayerNormTest, Errors) {
  const Tensor x = zeros({2, 4});
  EXPECT_FT_ERROR(layer_norm(zeros({2, 4}, kInt64), {4}, std::nullopt, std::nullopt, 1e-5),
                  "layer_norm: expected a floating point input (float32 or float64), got int64 "
                  "of shape [2, 4]");
  EXPECT_FT_ERROR(layer_norm(x, {}, std::nullopt, std::nullopt, 1e-5),
                  "layer_norm: expected normalized_shape to have at least one dim, got []");
  EXPECT_FT_ERROR(layer_norm(x, {3}, std::nullopt, std::nullopt, 1e-5),
                  "layer_norm: given normalized_shape [3], expected an input of shape [*, 3], got "
                  "an input of shape [2, 4]");
  EXPECT_FT_ERROR(layer_norm(x, {1, 2, 4}, std::nullopt, std::nullopt, 1e-5),
                  "layer_norm: given normalized_shape [1, 2, 4], expected an input of shape "
                  "[*, 1, 2, 4], got an input of shape [2, 4]");
  EXPECT_FT_ERROR(layer_norm(x, {4}, zeros({2, 4}), std::nullopt, 1e-5),
                  "layer_norm: expected weight of shape normalized_shape [4], got weight of "
                  "shape [2, 4]");
  EXPECT_FT_ERROR(layer_norm(x, {4}, std::nullopt, zeros({3}), 1e-5),
                  "layer_norm: expected bias of shape normalized_shape [4], got bias of shape [3]");
  EXPECT_FT_ERROR(layer_norm(x, {4}, zeros({4}, kFloat64), std::nullopt, 1e-5),
                  "layer_norm: expected weight to have the input's dtype float32, got float64");
  EXPECT_FT_ERROR(layer_norm(x, {4}, std::nullopt, zeros({4}, kInt64), 1e-5),
                  "layer_norm: expected bias to have the input's dtype float32, got int64");
}

// ---------------------------------------------------------------------------------------
// rms_norm

Tensor RmsNormOracle(const Tensor& x, int64_t inner, const std::optional<Tensor>& weight,
                     double eps) {
  const std::vector<double> xv = x.to_vector<double>();
  const size_t k = static_cast<size_t>(inner);
  const std::vector<double> w = ValuesOr(weight, k, 1.0);
  std::vector<double> out(xv.size());
  for (size_t r = 0; k > 0 && r < xv.size() / k; ++r) {
    double ms = 0;
    for (size_t j = 0; j < k; ++j) ms += xv[r * k + j] * xv[r * k + j];
    ms /= static_cast<double>(k);
    for (size_t j = 0; j < k; ++j) out[r * k + j] = xv[r * k + j] / std::sqrt(ms + eps) * w[j];
  }
  return AsTensor(out, x.sizes(), x.dtype());
}

TEST(RmsNormTest, MatchesTheDefinitionWithAndWithoutWeight) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Uniform({3, 2, 5}, dtype, 20);
    for (const Shape& ns : {Shape{5}, Shape{2, 5}}) {
      SCOPED_TRACE(ShapeToString(ns));
      const Tensor w = Uniform(ns, dtype, 21, 0.5, 1.5);
      for (double eps : {1e-6, 0.75}) {
        EXPECT_TRUE(Near(rms_norm(x, ns, std::nullopt, Scalar(eps)),
                         RmsNormOracle(x, Numel(ns), std::nullopt, eps)));
        EXPECT_TRUE(Near(rms_norm(x, ns, w, Scalar(eps)), RmsNormOracle(x, Numel(ns), w, eps)));
      }
    }
    const Tensor w = Uniform({5}, dtype, 22, 0.5, 1.5);
    EXPECT_TRUE(Near(rms_norm(Transposed(x), {5}, testing::NonContiguousCopy(w), Scalar(1e-6)),
                     RmsNormOracle(x, 5, w, 1e-6)));
    // An integral eps is a number like any other.
    EXPECT_TRUE(Near(rms_norm(x, {5}, std::nullopt, Scalar(int64_t{1})),
                     RmsNormOracle(x, 5, std::nullopt, 1.0)));
  }
}

TEST(RmsNormTest, DefaultEpsIsTheMachineEpsilonOfTheDtype) {
  // Values so small that mean(x^2) is comparable to eps: the default eps shows in the result.
  const double feps = std::numeric_limits<float>::epsilon();
  const double deps = std::numeric_limits<double>::epsilon();
  const Tensor xf = Uniform({2, 4}, kFloat32, 23, 1e-4, 5e-4);
  EXPECT_TRUE(Near(rms_norm(xf, {4}, std::nullopt, std::nullopt),
                   RmsNormOracle(xf, 4, std::nullopt, feps)));
  EXPECT_FALSE(Near(rms_norm(xf, {4}, std::nullopt, std::nullopt),
                    RmsNormOracle(xf, 4, std::nullopt, deps)));
  const Tensor xd = Uniform({2, 4}, kFloat64, 24, 5e-9, 2e-8);
  EXPECT_TRUE(Near(rms_norm(xd, {4}, std::nullopt, std::nullopt),
                   RmsNormOracle(xd, 4, std::nullopt, deps)));
  EXPECT_FALSE(
      Near(rms_norm(xd, {4}, std::nullopt, std::nullopt), RmsNormOracle(xd, 4, std::nullopt, 0.0)));
  EXPECT_EQ(RmsNormEps(std::nullopt, kFloat32), feps);
  EXPECT_EQ(RmsNormEps(std::nullopt, kFloat64), deps);
  EXPECT_EQ(RmsNormEps(Scalar(0.25), kFloat32), 0.25);
  EXPECT_EQ(RmsNormEps(Scalar(int64_t{2}), kFloat64), 2.0);
  EXPECT_EQ(RmsNormEps(Scalar(0.0), kFloat64), 0.0);
}

TEST(RmsNormTest, ZeroRowsSizeOneAndSizeZero) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    // An all-zero row stays 0 (0 / sqrt(eps)); a size-1 row is x / sqrt(x^2 + eps).
    EXPECT_TENSOR_EQ(rms_norm(zeros({2, 3}, dtype), {3}, std::nullopt, std::nullopt),
                     zeros({2, 3}, dtype));
    const Tensor col = to(tensor({3.0, -4.0}, {2, 1}), dtype);
    EXPECT_TRUE(Near(rms_norm(col, {1}, std::nullopt, Scalar(0.0)),
                     to(tensor({1.0, -1.0}, {2, 1}), dtype)));
    EXPECT_EQ(rms_norm(zeros({0, 3}, dtype), {3}, std::nullopt, std::nullopt).sizes(),
              (Shape{0, 3}));
  }
}

TEST(RmsNormTest, Errors) {
  const Tensor x = zeros({2, 4});
  EXPECT_FT_ERROR(rms_norm(zeros({2, 4}, kBool), {4}, std::nullopt, std::nullopt),
                  "rms_norm: expected a floating point input (float32 or float64), got bool of "
                  "shape [2, 4]");
  EXPECT_FT_ERROR(rms_norm(x, {}, std::nullopt, std::nullopt),
                  "rms_norm: expected normalized_shape to have at least one dim, got []");
  EXPECT_FT_ERROR(rms_norm(x, {2}, std::nullopt, std::nullopt),
                  "rms_norm: given normalized_shape [2], expected an input of shape [*, 2], got "
                  "an input of shape [2, 4]");
  EXPECT_FT_ERROR(rms_norm(x, {4}, zeros({1}), std::nullopt),
                  "rms_norm: expected weight of shape normalized_shape [4], got weight of shape "
                  "[1]");
  EXPECT_FT_ERROR(rms_norm(x, {4}, zeros({4}, kFloat64), std::nullopt),
                  "rms_norm: expected weight to have the input's dtype float32, got float64");
}

// ---------------------------------------------------------------------------------------
// normalize

// x / max(||slice||_p, eps) along `dim` (wrapped); p = inf is max |x|, p = 0 counts nonzeros.
Tensor NormalizeOracle(const Tensor& x, double p, int64_t dim, double eps) {
  const std::vector<double> xv = x.to_vector<double>();
  if (x.dim() == 0) {
    const double n = p == 0 ? (xv[0] != 0) : std::fabs(xv[0]);
    return AsTensor({xv[0] / std::max(n, eps)}, {}, x.dtype());
  }
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= x.size(i);
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
  const int64_t len = x.size(d);
  std::vector<double> out(xv.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const auto at = [&](int64_t j) { return static_cast<size_t>((o * len + j) * inner + i); };
      double n = 0;
      for (int64_t j = 0; j < len; ++j) {
        const double a = std::fabs(xv[at(j)]);
        if (p == kInf) {
          n = std::max(n, a);
        } else if (p == 0) {
          n += a != 0;
        } else {
          n += std::pow(a, p);
        }
      }
      if (p != kInf && p != 0) n = std::pow(n, 1 / p);
      for (int64_t j = 0; j < len; ++j) out[at(j)] = xv[at(j)] / std::max(n, eps);
    }
  }
  return AsTensor(out, x.sizes(), x.dtype());
}

TEST(NormalizeTest, MatchesTheDefinitionForSeveralPAndDims) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Uniform({3, 4, 2}, dtype, 30);
    for (double p : {1.0, 2.0, 3.0, 0.5, kInf, 0.0}) {
      for (int64_t dim : {0, 1, 2, -1, -3}) {
        SCOPED_TRACE(::testing::Message() << "p=" << p << " dim=" << dim);
        EXPECT_TRUE(Near(normalize(x, p, dim, 1e-12), NormalizeOracle(x, p, dim, 1e-12)));
        EXPECT_TRUE(
            Near(normalize(Transposed(x), p, dim, 1e-12), NormalizeOracle(x, p, dim, 1e-12)));
      }
    }
  }
}

TEST(NormalizeTest, EpsBoundsTheDivisor) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    // Columns with norms 5, 0 and 0.05: eps = 1 clamps the last two.
    const Tensor x = to(tensor({3.0, 0.0, 0.03, 4.0, 0.0, 0.04}, {2, 3}), dtype);
    EXPECT_TRUE(
        Near(normalize(x, 2, 0, 1.0), to(tensor({0.6, 0.0, 0.03, 0.8, 0.0, 0.04}, {2, 3}), dtype)));
    EXPECT_TRUE(
        Near(normalize(x, 2, 0, 1e-12), to(tensor({0.6, 0.0, 0.6, 0.8, 0.0, 0.8}, {2, 3}), dtype)));
    const Tensor y = Uniform({4, 3}, dtype, 31, -0.1, 0.1);
    EXPECT_TRUE(Near(normalize(y, 1, 1, 0.2), NormalizeOracle(y, 1, 1, 0.2)));
  }
}

TEST(NormalizeTest, RankZeroSizeOneExpandedAndSizeZero) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    // Rank 0 takes dim 0 and -1: x / max(|x|, eps).
    const Tensor s = scalar_tensor(-3.0, dtype);
    EXPECT_TRUE(Near(normalize(s, 2, 0, 1e-12), scalar_tensor(-1.0, dtype)));
    EXPECT_TRUE(Near(normalize(s, 1, -1, 10.0), scalar_tensor(-0.3, dtype)));
    // A dim of size 1: x / |x|.
    const Tensor col = Uniform({3, 1}, dtype, 32);
    EXPECT_TRUE(Near(normalize(col, 2, 1, 1e-12), NormalizeOracle(col, 2, 1, 1e-12)));
    const Tensor ex = expand(Uniform({1, 3}, dtype, 33), {4, 3});
    EXPECT_TRUE(Near(normalize(ex, 2, 1, 1e-12), NormalizeOracle(ex, 2, 1, 1e-12)));
    EXPECT_TRUE(Near(normalize(ex, 3, 0, 1e-12), NormalizeOracle(ex, 3, 0, 1e-12)));
    // Size 0 elsewhere than dim; and along dim (the norm of nothing is 0 for p = 2).
    EXPECT_EQ(normalize(zeros({0, 3}, dtype), 2, 1, 1e-12).sizes(), (Shape{0, 3}));
    EXPECT_EQ(normalize(zeros({3, 0}, dtype), 2, 1, 1e-12).sizes(), (Shape{3, 0}));
  }
}

TEST(NormalizeTest, Errors) {
  EXPECT_FT_ERROR(normalize(zeros({2, 3}, kInt64), 2, 1, 1e-12),
                  "normalize: expected a floating point input (float32 or float64), got int64 of "
                  "shape [2, 3]");
  EXPECT_FT_ERROR(normalize(zeros({2, 3}), 2, 2, 1e-12),
                  "normalize: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(normalize(zeros({2, 3}), 2, -3, 1e-12),
                  "normalize: dim -3 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(normalize(zeros({}), 2, 1, 1e-12), "normalize: dim 1 is out of range");
  // The max-norm of an empty slice does not exist (torch raises too). The error comes from
  // the norm kernel inside (its message starts with "norm:"), so only its reason is pinned.
  EXPECT_FT_ERROR(normalize(zeros({3, 0}), kInf, 1, 1e-12),
                  "cannot reduce over a zero-size dimension (dim 1 of shape [3, 0]): the p = inf "
                  "norm has no identity");
}

// ---------------------------------------------------------------------------------------
// group_norm

// [N, C, *]: each (example, group of C / G channels) standardized over its channels and
// spatial positions, then weight[c] and bias[c].
Tensor GroupNormOracle(const Tensor& x, int64_t groups, const std::optional<Tensor>& weight,
                       const std::optional<Tensor>& bias, double eps) {
  const std::vector<double> xv = x.to_vector<double>();
  const int64_t n = x.size(0), c = x.size(1), cg = c / groups;
  int64_t s = 1;
  for (int64_t d = 2; d < x.dim(); ++d) s *= x.size(d);
  const std::vector<double> w = ValuesOr(weight, static_cast<size_t>(c), 1.0);
  const std::vector<double> b = ValuesOr(bias, static_cast<size_t>(c), 0.0);
  std::vector<double> out(xv.size());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t g = 0; g < groups; ++g) {
      // The group's elements are contiguous in row-major order: channels g*cg .. (g+1)*cg-1.
      const size_t begin = static_cast<size_t>((i * c + g * cg) * s);
      const size_t len = static_cast<size_t>(cg * s);
      if (len == 0) continue;
      const Stats st = StatsOf(std::vector<double>(xv.begin() + begin, xv.begin() + begin + len));
      for (size_t e = 0; e < len; ++e) {
        const size_t ch = static_cast<size_t>(g * cg) + e / static_cast<size_t>(s);
        out[begin + e] = (xv[begin + e] - st.mean) / std::sqrt(st.var + eps) * w[ch] + b[ch];
      }
    }
  }
  return AsTensor(out, x.sizes(), x.dtype());
}

TEST(GroupNormTest, MatchesTheDefinitionForEveryGroupCount) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Uniform({2, 6, 3, 2}, dtype, 40);
    const Tensor w = Uniform({6}, dtype, 41, 0.5, 1.5);
    const Tensor b = Uniform({6}, dtype, 42);
    for (int64_t g : {1, 2, 3, 6}) {
      SCOPED_TRACE(::testing::Message() << "groups " << g);
      EXPECT_TRUE(Near(group_norm(x, g, w, b, 1e-5), GroupNormOracle(x, g, w, b, 1e-5)));
      EXPECT_TRUE(Near(group_norm(x, g, std::nullopt, std::nullopt, 0.3),
                       GroupNormOracle(x, g, std::nullopt, std::nullopt, 0.3)));
      EXPECT_TRUE(Near(group_norm(x, g, w, std::nullopt, 1e-5),
                       GroupNormOracle(x, g, w, std::nullopt, 1e-5)));
      EXPECT_TRUE(Near(group_norm(x, g, std::nullopt, b, 1e-5),
                       GroupNormOracle(x, g, std::nullopt, b, 1e-5)));
    }
  }
}

TEST(GroupNormTest, RankTwoRankThreeAndNonContiguous) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor w = Uniform({4}, dtype, 43, 0.5, 1.5);
    const Tensor b = Uniform({4}, dtype, 44);
    const Tensor x2 = Uniform({3, 4}, dtype, 45);
    EXPECT_TRUE(Near(group_norm(x2, 2, w, b, 1e-5), GroupNormOracle(x2, 2, w, b, 1e-5)));
    const Tensor x3 = Uniform({2, 4, 5}, dtype, 46);
    EXPECT_TRUE(Near(group_norm(x3, 2, w, b, 1e-5), GroupNormOracle(x3, 2, w, b, 1e-5)));
    const Tensor wn = testing::NonContiguousCopy(w), bn = testing::NonContiguousCopy(b);
    EXPECT_TRUE(
        Near(group_norm(Transposed(x3), 4, wn, bn, 1e-5), GroupNormOracle(x3, 4, w, b, 1e-5)));
    EXPECT_TRUE(Near(group_norm(testing::NonContiguousCopy(x3), 1, wn, bn, 1e-5),
                     GroupNormOracle(x3, 1, w, b, 1e-5)));
    const Tensor ex = expand(Uniform({1, 4, 5}, dtype, 47), {3, 4, 5});
    EXPECT_TRUE(Near(group_norm(ex, 2, w, b, 1e-5), GroupNormOracle(ex, 2, w, b, 1e-5)));
  }
}

TEST(GroupNormTest, SizeZeroBatchAndSpatialDims) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    for (const Shape& shape : {Shape{0, 4, 3}, Shape{2, 4, 0}, Shape{0, 4}}) {
      const Tensor y = group_norm(zeros(shape, dtype), 2, ones({4}, dtype), std::nullopt, 1e-5);
      EXPECT_EQ(y.sizes(), shape);
      EXPECT_EQ(y.dtype(), dtype);
    }
  }
}

TEST(GroupNormTest, Errors) {
  const Tensor x = zeros({2, 6, 3});
  EXPECT_FT_ERROR(group_norm(zeros({2, 6}, kInt64), 2, std::nullopt, std::nullopt, 1e-5),
                  "group_norm: expected a floating point input (float32 or float64), got int64 "
                  "of shape [2, 6]");
  EXPECT_FT_ERROR(group_norm(zeros({4}), 2, std::nullopt, std::nullopt, 1e-5),
                  "group_norm: expected an input of shape [N, C, *] (at least 2 dims), got shape "
                  "[4]");
  EXPECT_FT_ERROR(group_norm(x, 0, std::nullopt, std::nullopt, 1e-5),
                  "group_norm: num_groups must be positive, got 0");
  EXPECT_FT_ERROR(group_norm(x, -2, std::nullopt, std::nullopt, 1e-5),
                  "group_norm: num_groups must be positive, got -2");
  EXPECT_FT_ERROR(group_norm(x, 4, std::nullopt, std::nullopt, 1e-5),
                  "group_norm: expected the number of channels (6, dim 1 of input shape "
                  "[2, 6, 3]) to be divisible by num_groups = 4");
  EXPECT_FT_ERROR(group_norm(x, 2, zeros({3}), std::nullopt, 1e-5),
                  "group_norm: expected weight of shape [6] (one per channel of input shape "
                  "[2, 6, 3]), got weight of shape [3]");
  EXPECT_FT_ERROR(group_norm(x, 2, std::nullopt, zeros({6, 1}), 1e-5),
                  "group_norm: expected bias of shape [6] (one per channel of input shape "
                  "[2, 6, 3]), got bias of shape [6, 1]");
  EXPECT_FT_ERROR(group_norm(x, 2, zeros({6}, kFloat64), std::nullopt, 1e-5),
                  "group_norm: expected weight to have the input's dtype float32, got float64");
  EXPECT_FT_ERROR(group_norm(x, 2, std::nullopt, zeros({6}, kFloat64), 1e-5),
                  "group_norm: expected bias to have the input's dtype float32, got float64");
}

// ---------------------------------------------------------------------------------------
// batch_norm / instance_norm

// Output and new running statistics of batch_norm (per channel, over N and the spatial dims)
// or instance_norm (per example and channel, over the spatial dims; the running statistics
// take the batch average of the per-instance ones).
struct ChannelNormExpected {
  Tensor out, mean, var;
};
ChannelNormExpected ChannelNormOracle(bool per_instance, const Tensor& x,
                                      const std::optional<Tensor>& running_mean,
                                      const std::optional<Tensor>& running_var,
                                      const std::optional<Tensor>& weight,
                                      const std::optional<Tensor>& bias, bool batch_stats,
                                      double momentum, double eps) {
  const std::vector<double> xv = x.to_vector<double>();
  const int64_t n = x.size(0), c = x.size(1);
  int64_t s = 1;
  for (int64_t d = 2; d < x.dim(); ++d) s *= x.size(d);
  const size_t cs = static_cast<size_t>(c);
  const std::vector<double> w = ValuesOr(weight, cs, 1.0), b = ValuesOr(bias, cs, 0.0);
  const std::vector<double> rm = ValuesOr(running_mean, cs, 0.0);
  const std::vector<double> rv = ValuesOr(running_var, cs, 1.0);
  const auto at = [&](int64_t i, int64_t ch, int64_t j) {
    return static_cast<size_t>((i * c + ch) * s + j);
  };
  std::vector<double> out(xv.size()), new_mean = rm, new_var = rv;
  for (int64_t ch = 0; ch < c; ++ch) {
    const size_t k = static_cast<size_t>(ch);
    if (!batch_stats) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < s; ++j) {
          out[at(i, ch, j)] = (xv[at(i, ch, j)] - rm[k]) / std::sqrt(rv[k] + eps) * w[k] + b[k];
        }
      }
      continue;
    }
    // The groups of elements that share statistics: one per channel, or one per instance.
    double mean_sum = 0, var_sum = 0;
    const int64_t instances = per_instance ? n : 1;
    for (int64_t g = 0; g < instances; ++g) {
      std::vector<double> v;
      for (int64_t i = per_instance ? g : 0; i < (per_instance ? g + 1 : n); ++i) {
        for (int64_t j = 0; j < s; ++j) v.push_back(xv[at(i, ch, j)]);
      }
      const Stats st = StatsOf(v);
      mean_sum += st.mean;
      var_sum += st.unbiased;
      for (int64_t i = per_instance ? g : 0; i < (per_instance ? g + 1 : n); ++i) {
        for (int64_t j = 0; j < s; ++j) {
          out[at(i, ch, j)] = (xv[at(i, ch, j)] - st.mean) / std::sqrt(st.var + eps) * w[k] + b[k];
        }
      }
    }
    const double inst = static_cast<double>(instances);
    new_mean[k] = (1 - momentum) * rm[k] + momentum * mean_sum / inst;
    new_var[k] = (1 - momentum) * rv[k] + momentum * var_sum / inst;
  }
  const DType dt = x.dtype();
  return {AsTensor(out, x.sizes(), dt), running_mean ? AsTensor(new_mean, {c}, dt) : zeros({0}, dt),
          running_var ? AsTensor(new_var, {c}, dt) : zeros({0}, dt)};
}

void ExpectChannelNorm(bool per_instance, const Tensor& x, const std::optional<Tensor>& rm,
                       const std::optional<Tensor>& rv, const std::optional<Tensor>& w,
                       const std::optional<Tensor>& b, bool batch_stats, double momentum,
                       double eps) {
  const auto [out, mean, var] = per_instance
                                    ? instance_norm(x, rm, rv, w, b, batch_stats, momentum, eps)
                                    : batch_norm(x, rm, rv, w, b, batch_stats, momentum, eps);
  const ChannelNormExpected want =
      ChannelNormOracle(per_instance, x, rm, rv, w, b, batch_stats, momentum, eps);
  EXPECT_TRUE(Near(out, want.out));
  EXPECT_TRUE(Near(mean, want.mean));
  EXPECT_TRUE(Near(var, want.var));
}

TEST(BatchNormTest, TrainingUsesBatchStatisticsAndUpdatesTheRunningOnes) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor rm = Uniform({3}, dtype, 50), rv = Uniform({3}, dtype, 51, 0.5, 2);
    const Tensor w = Uniform({3}, dtype, 52, 0.5, 1.5), b = Uniform({3}, dtype, 53);
    for (const Shape& shape : {Shape{4, 3}, Shape{2, 3, 5}, Shape{2, 3, 2, 2}, Shape{1, 3, 2}}) {
      SCOPED_TRACE(ShapeToString(shape));
      const Tensor x = Uniform(shape, dtype, 54);
      ExpectChannelNorm(false, x, rm, rv, w, b, true, 0.1, 1e-5);
      ExpectChannelNorm(false, x, rm, rv, std::nullopt, std::nullopt, true, 0.3, 0.5);
      ExpectChannelNorm(false, x, std::nullopt, std::nullopt, w, b, true, 0.1, 1e-5);
      ExpectChannelNorm(false, x, rm, std::nullopt, std::nullopt, b, true, 1.0, 1e-5);
      ExpectChannelNorm(false, x, std::nullopt, rv, w, std::nullopt, true, 0.0, 1e-5);
    }
  }
}

TEST(BatchNormTest, HandWorkedRunningStatistics) {
  // One channel with values 1, 2, 3, 6: mean 3, unbiased var 14 / 3; momentum 0.5 blends
  // them half and half with running stats 1 and 2.
  const Tensor x = tensor({1.0, 2.0, 3.0, 6.0}, {4, 1});
  const auto [out, mean, var] =
      batch_norm(x, tensor({1.0}), tensor({2.0}), std::nullopt, std::nullopt, true, 0.5, 0.0);
  EXPECT_TENSOR_NEAR(mean, tensor({2.0}), 1e-15);
  EXPECT_TENSOR_NEAR(var, tensor({(2.0 + 14.0 / 3) / 2}), 1e-15);
  const double sd = std::sqrt(3.5);  // biased var 14 / 4
  EXPECT_TENSOR_NEAR(out, tensor({-2 / sd, -1 / sd, 0.0, 3 / sd}, {4, 1}), 1e-15);
}

TEST(BatchNormTest, EvalUsesAndReturnsCopiesOfTheRunningStatistics) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor rm = Uniform({3}, dtype, 55), rv = Uniform({3}, dtype, 56, 0.5, 2);
    const Tensor w = Uniform({3}, dtype, 57, 0.5, 1.5), b = Uniform({3}, dtype, 58);
    // Eval mode needs no batch: N = 1 and a single value per channel are fine.
    for (const Shape& shape : {Shape{5, 3}, Shape{1, 3}, Shape{2, 3, 4}, Shape{1, 3, 1, 1}}) {
      SCOPED_TRACE(ShapeToString(shape));
      const Tensor x = Uniform(shape, dtype, 59);
      ExpectChannelNorm(false, x, rm, rv, w, b, false, 0.1, 1e-5);
      ExpectChannelNorm(false, x, rm, rv, std::nullopt, std::nullopt, false, 0.1, 0.25);
    }
    const auto [out, mean, var] =
        batch_norm(Uniform({2, 3}, dtype, 60), rm, rv, w, b, false, 0.1, 1e-5);
    EXPECT_FALSE(mean.is_same(rm));
    EXPECT_NE(mean.impl()->raw_data(), rm.impl()->raw_data());
    EXPECT_NE(var.impl()->raw_data(), rv.impl()->raw_data());
  }
}

TEST(BatchNormTest, NeverWritesItsArguments) {
  const Tensor x = Uniform({4, 2}, kFloat64, 61);
  const Tensor rm = Uniform({2}, kFloat64, 62), rv = Uniform({2}, kFloat64, 63, 0.5, 2);
  const std::vector<double> x0 = x.to_vector<double>(), rm0 = rm.to_vector<double>(),
                            rv0 = rv.to_vector<double>();
  (void)batch_norm(x, rm, rv, std::nullopt, std::nullopt, true, 0.5, 1e-5);
  (void)instance_norm(reshape(x, {2, 2, 2}), rm, rv, std::nullopt, std::nullopt, true, 0.5, 1e-5);
  EXPECT_EQ(x.to_vector<double>(), x0);
  EXPECT_EQ(rm.to_vector<double>(), rm0);
  EXPECT_EQ(rv.to_vector<double>(), rv0);
}

TEST(BatchNormTest, NonContiguousArguments) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Uniform({3, 4, 5}, dtype, 64);
    const Tensor rm = Uniform({4}, dtype, 65), rv = Uniform({4}, dtype, 66, 0.5, 2);
    const Tensor w = Uniform({4}, dtype, 67, 0.5, 1.5), b = Uniform({4}, dtype, 68);
    const auto nc = [](const Tensor& t) { return testing::NonContiguousCopy(t); };
    for (bool training : {true, false}) {
      const auto [out, mean, var] =
          batch_norm(Transposed(x), nc(rm), nc(rv), nc(w), nc(b), training, 0.2, 1e-5);
      const ChannelNormExpected want =
          ChannelNormOracle(false, x, rm, rv, w, b, training, 0.2, 1e-5);
      EXPECT_TRUE(Near(out, want.out));
      EXPECT_TRUE(Near(mean, want.mean));
      EXPECT_TRUE(Near(var, want.var));
    }
    const Tensor ex = expand(Uniform({1, 4, 1}, dtype, 69), {3, 4, 2});
    ExpectChannelNorm(false, ex, rm, rv, w, b, true, 0.1, 1e-5);  // batch variance 0
  }
}

TEST(BatchNormTest, AnEmptyInputLeavesTheRunningStatisticsAlone) {
  // PyTorch's batch_norm returns before updating the running stats when the input has no
  // elements; the statistics of nothing (NaN) must not leak into them.
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor rm = Uniform({3}, dtype, 70), rv = Uniform({3}, dtype, 71, 0.5, 2);
    for (const Shape& shape : {Shape{0, 3}, Shape{0, 3, 4}, Shape{2, 3, 0}}) {
      SCOPED_TRACE(ShapeToString(shape));
      const auto [out, mean, var] =
          batch_norm(zeros(shape, dtype), rm, rv, ones({3}, dtype), std::nullopt, true, 0.1, 1e-5);
      EXPECT_EQ(out.sizes(), shape);
      EXPECT_TENSOR_EQ(mean, rm);
      EXPECT_TENSOR_EQ(var, rv);
      const auto [out2, none_mean, none_var] =
          batch_norm(zeros(shape, dtype), std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                     true, 0.1, 1e-5);
      EXPECT_EQ(none_mean.sizes(), (Shape{0}));
      EXPECT_EQ(none_var.sizes(), (Shape{0}));
    }
  }
}

TEST(BatchNormTest, Errors) {
  const Tensor x = zeros({2, 3});
  const Tensor s3 = zeros({3});
  EXPECT_FT_ERROR(batch_norm(zeros({1, 3}), s3, s3, std::nullopt, std::nullopt, true, 0.1, 1e-5),
                  "batch_norm: expected more than 1 value per channel when computing batch "
                  "statistics, got input shape [1, 3]");
  EXPECT_FT_ERROR(batch_norm(zeros({1, 3, 1, 1}), std::nullopt, std::nullopt, std::nullopt,
                             std::nullopt, true, 0.1, 1e-5),
                  "batch_norm: expected more than 1 value per channel");
  EXPECT_FT_ERROR(batch_norm(x, std::nullopt, s3, std::nullopt, std::nullopt, false, 0.1, 1e-5),
                  "batch_norm: running_mean and running_var must be given when the op "
                  "normalizes with them (training = false)");
  EXPECT_FT_ERROR(batch_norm(x, s3, std::nullopt, std::nullopt, std::nullopt, false, 0.1, 1e-5),
                  "batch_norm: running_mean and running_var must be given");
  EXPECT_FT_ERROR(
      batch_norm(x, zeros({4}), s3, std::nullopt, std::nullopt, true, 0.1, 1e-5),
      "batch_norm: expected running_mean of shape [3] (one per channel of input shape [2, 3]), "
      "got running_mean of shape [4]");
  EXPECT_FT_ERROR(batch_norm(x, s3, zeros({1, 3}), std::nullopt, std::nullopt, true, 0.1, 1e-5),
                  "batch_norm: expected running_var of shape [3]");
  EXPECT_FT_ERROR(batch_norm(x, s3, s3, zeros({2}), std::nullopt, true, 0.1, 1e-5),
                  "batch_norm: expected weight of shape [3]");
  EXPECT_FT_ERROR(batch_norm(x, s3, s3, std::nullopt, zeros({}), true, 0.1, 1e-5),
                  "batch_norm: expected bias of shape [3] (one per channel of input shape "
                  "[2, 3]), got bias of shape []");
  EXPECT_FT_ERROR(
      batch_norm(x, zeros({3}, kFloat64), s3, std::nullopt, std::nullopt, true, 0.1, 1e-5),
      "batch_norm: expected running_mean to have the input's dtype float32, got float64");
  EXPECT_FT_ERROR(batch_norm(x, s3, s3, zeros({3}, kInt64), std::nullopt, true, 0.1, 1e-5),
                  "batch_norm: expected weight to have the input's dtype float32, got int64");
  EXPECT_FT_ERROR(batch_norm(zeros({3}), std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                             true, 0.1, 1e-5),
                  "batch_norm: expected an input of shape [N, C, *] (at least 2 dims), got shape "
                  "[3]");
  EXPECT_FT_ERROR(batch_norm(zeros({2, 3}, kInt64), std::nullopt, std::nullopt, std::nullopt,
                             std::nullopt, true, 0.1, 1e-5),
                  "batch_norm: expected a floating point input (float32 or float64), got int64 of "
                  "shape [2, 3]");
}

TEST(InstanceNormTest, InputStatsPerInstanceAndBatchAveragedRunningStats) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor rm = Uniform({3}, dtype, 80), rv = Uniform({3}, dtype, 81, 0.5, 2);
    const Tensor w = Uniform({3}, dtype, 82, 0.5, 1.5), b = Uniform({3}, dtype, 83);
    for (const Shape& shape : {Shape{2, 3, 5}, Shape{4, 3, 2, 3}, Shape{1, 3, 4}}) {
      SCOPED_TRACE(ShapeToString(shape));
      const Tensor x = Uniform(shape, dtype, 84);
      ExpectChannelNorm(true, x, rm, rv, w, b, true, 0.1, 1e-5);
      ExpectChannelNorm(true, x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true, 0.1,
                        0.5);
      ExpectChannelNorm(true, x, rm, rv, std::nullopt, b, true, 0.4, 1e-5);
      ExpectChannelNorm(true, Transposed(x), testing::NonContiguousCopy(rm), rv,
                        testing::NonContiguousCopy(w), b, true, 0.1, 1e-5);
    }
  }
}

TEST(InstanceNormTest, WithoutInputStatsUsesTheRunningStatistics) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor rm = Uniform({3}, dtype, 85), rv = Uniform({3}, dtype, 86, 0.5, 2);
    const Tensor w = Uniform({3}, dtype, 87, 0.5, 1.5), b = Uniform({3}, dtype, 88);
    for (const Shape& shape : {Shape{2, 3, 5}, Shape{1, 3, 1}, Shape{2, 3}}) {
      SCOPED_TRACE(ShapeToString(shape));
      ExpectChannelNorm(true, Uniform(shape, dtype, 89), rm, rv, w, b, false, 0.1, 1e-5);
    }
    const auto [out, mean, var] =
        instance_norm(Uniform({2, 3, 2}, dtype, 90), rm, rv, w, b, false, 0.1, 1e-5);
    EXPECT_NE(mean.impl()->raw_data(), rm.impl()->raw_data());
  }
}

TEST(InstanceNormTest, EmptyInputsUpdateTheRunningStatisticsLikePyTorch) {
  // PyTorch runs instance_norm as batch_norm on [1, N * C, *], which leaves the N copies of
  // the running stats untouched when there are no elements; their average is the original.
  const Tensor rm = tensor({0.5, -1.0}), rv = tensor({2.0, 3.0});
  for (const Shape& shape : {Shape{3, 2, 0}, Shape{1, 2, 4, 0}}) {
    SCOPED_TRACE(ShapeToString(shape));
    const auto [out, mean, var] =
        instance_norm(zeros(shape, kFloat64), rm, rv, std::nullopt, std::nullopt, true, 0.1, 1e-5);
    EXPECT_EQ(out.sizes(), shape);
    EXPECT_TENSOR_EQ(mean, rm);
    EXPECT_TENSOR_EQ(var, rv);
  }
  // With N = 0 there are no copies to average: the mean of nothing, NaN (as PyTorch).
  const auto [out, mean, var] = instance_norm(zeros({0, 2, 3}, kFloat64), rm, rv, std::nullopt,
                                              std::nullopt, true, 0.1, 1e-5);
  EXPECT_EQ(out.sizes(), (Shape{0, 2, 3}));
  EXPECT_TRUE(std::isnan(mean.to_vector<double>()[0]));
  EXPECT_TRUE(std::isnan(var.to_vector<double>()[1]));
}

TEST(InstanceNormTest, Errors) {
  const Tensor s3 = zeros({3});
  EXPECT_FT_ERROR(instance_norm(zeros({2, 3, 1}), std::nullopt, std::nullopt, std::nullopt,
                                std::nullopt, true, 0.1, 1e-5),
                  "instance_norm: expected more than 1 value per instance when computing "
                  "instance statistics, got input shape [2, 3, 1]");
  EXPECT_FT_ERROR(instance_norm(zeros({4, 3}), std::nullopt, std::nullopt, std::nullopt,
                                std::nullopt, true, 0.1, 1e-5),
                  "instance_norm: expected more than 1 value per instance");
  EXPECT_FT_ERROR(instance_norm(zeros({2, 3, 4}), s3, std::nullopt, std::nullopt, std::nullopt,
                                false, 0.1, 1e-5),
                  "instance_norm: running_mean and running_var must be given when the op "
                  "normalizes with them (use_input_stats = false)");
  EXPECT_FT_ERROR(instance_norm(zeros({2, 3, 4}), zeros({2}), std::nullopt, std::nullopt,
                                std::nullopt, true, 0.1, 1e-5),
                  "instance_norm: expected running_mean of shape [3] (one per channel of input "
                  "shape [2, 3, 4]), got running_mean of shape [2]");
  EXPECT_FT_ERROR(instance_norm(zeros({2, 3, 4}), std::nullopt, std::nullopt, std::nullopt,
                                zeros({3}, kFloat64), true, 0.1, 1e-5),
                  "instance_norm: expected bias to have the input's dtype float32, got float64");
  EXPECT_FT_ERROR(instance_norm(zeros({3}), std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                                true, 0.1, 1e-5),
                  "instance_norm: expected an input of shape [N, C, *] (at least 2 dims)");
  EXPECT_FT_ERROR(instance_norm(zeros({2, 3, 4}, kBool), std::nullopt, std::nullopt, std::nullopt,
                                std::nullopt, true, 0.1, 1e-5),
                  "instance_norm: expected a floating point input (float32 or float64), got bool");
}

// ---------------------------------------------------------------------------------------
// The argument checks on shapes and dtypes alone

TEST(CheckNormalizedShapeTest, NamesTheOpAndChecksEachArgument) {
  const Shape in = {2, 3, 4}, ns = {3, 4}, bad = {4, 3};
  EXPECT_NO_THROW(CheckNormalizedShape("layer_norm", in, kFloat64, ns, ns, kFloat64, ns, kFloat64));
  EXPECT_NO_THROW(CheckNormalizedShape("rms_norm", in, kFloat32, in, std::nullopt, std::nullopt,
                                       std::nullopt, std::nullopt));
  EXPECT_FT_ERROR(CheckNormalizedShape("rms_norm", in, kFloat32, bad, std::nullopt, std::nullopt,
                                       std::nullopt, std::nullopt),
                  "rms_norm: given normalized_shape [4, 3], expected an input of shape [*, 4, 3], "
                  "got an input of shape [2, 3, 4]");
  EXPECT_FT_ERROR(CheckNormalizedShape("layer_norm", in, kFloat32, ns, bad, kFloat32, std::nullopt,
                                       std::nullopt),
                  "layer_norm: expected weight of shape normalized_shape [3, 4], got weight of "
                  "shape [4, 3]");
  EXPECT_FT_ERROR(CheckNormalizedShape("layer_norm", in, kFloat32, ns, ns, kFloat32, ns, kFloat64),
                  "layer_norm: expected bias to have the input's dtype float32, got float64");
  EXPECT_FT_ERROR(CheckNormalizedShape("layer_norm", {}, kFloat32, ns, std::nullopt, std::nullopt,
                                       std::nullopt, std::nullopt),
                  "layer_norm: given normalized_shape [3, 4], expected an input of shape "
                  "[*, 3, 4], got an input of shape []");
  EXPECT_FT_ERROR(CheckNormalizedShape("layer_norm", in, kInt64, ns, std::nullopt, std::nullopt,
                                       std::nullopt, std::nullopt),
                  "layer_norm: expected a floating point input");
}

TEST(CheckGroupNormTest, ShapesGroupsAndDtypes) {
  const Shape in = {2, 6, 5}, c6 = {6}, c3 = {3};
  EXPECT_NO_THROW(CheckGroupNorm(in, kFloat32, 3, c6, kFloat32, c6, kFloat32));
  EXPECT_NO_THROW(
      CheckGroupNorm(in, kFloat64, 6, std::nullopt, std::nullopt, std::nullopt, std::nullopt));
  EXPECT_FT_ERROR(
      CheckGroupNorm(in, kFloat32, 5, std::nullopt, std::nullopt, std::nullopt, std::nullopt),
      "group_norm: expected the number of channels (6, dim 1 of input shape "
      "[2, 6, 5]) to be divisible by num_groups = 5");
  EXPECT_FT_ERROR(CheckGroupNorm(in, kFloat32, 3, c3, kFloat32, std::nullopt, std::nullopt),
                  "group_norm: expected weight of shape [6]");
  EXPECT_FT_ERROR(CheckGroupNorm(in, kFloat32, 3, std::nullopt, std::nullopt, c6, kInt64),
                  "group_norm: expected bias to have the input's dtype float32, got int64");
  const Shape rank1 = {6};
  EXPECT_FT_ERROR(
      CheckGroupNorm(rank1, kFloat32, 3, std::nullopt, std::nullopt, std::nullopt, std::nullopt),
      "group_norm: expected an input of shape [N, C, *] (at least 2 dims), got shape "
      "[6]");
}

TEST(CheckChannelNormTest, PerChannelArgumentsRunningStatsAndBatchStatistics) {
  const Shape in = {2, 3, 4}, c3 = {3}, c2 = {2};
  const std::optional<Shape> all[4] = {c3, c3, c3, c3};
  const std::optional<DType> f32[4] = {kFloat32, kFloat32, kFloat32, kFloat32};
  const std::optional<Shape> none[4] = {};
  const std::optional<DType> no_dtype[4] = {};
  EXPECT_NO_THROW(CheckChannelNorm("batch_norm", in, kFloat32, all, f32, true, false));
  EXPECT_NO_THROW(CheckChannelNorm("batch_norm", in, kFloat32, none, no_dtype, false, true));
  EXPECT_FT_ERROR(CheckChannelNorm("batch_norm", in, kFloat32, none, no_dtype, true, false),
                  "batch_norm: running_mean and running_var must be given when the op "
                  "normalizes with them (training = false)");
  EXPECT_FT_ERROR(CheckChannelNorm("instance_norm", in, kFloat32, none, no_dtype, true, false),
                  "instance_norm: running_mean and running_var must be given when the op "
                  "normalizes with them (use_input_stats = false)");
  // Each position names its own argument.
  const char* names[4] = {"running_mean", "running_var", "weight", "bias"};
  for (int i = 0; i < 4; ++i) {
    std::optional<Shape> shapes[4] = {c3, c3, c3, c3};
    shapes[i] = c2;
    EXPECT_FT_ERROR(CheckChannelNorm("batch_norm", in, kFloat32, shapes, f32, false, true),
                    std::string("batch_norm: expected ") + names[i] + " of shape [3]");
    std::optional<DType> dtypes[4] = {kFloat32, kFloat32, kFloat32, kFloat32};
    dtypes[i] = kFloat64;
    EXPECT_FT_ERROR(CheckChannelNorm("batch_norm", in, kFloat32, all, dtypes, false, true),
                    std::string("batch_norm: expected ") + names[i] +
                        " to have the input's dtype float32, got float64");
  }
  // More than one value per statistic: batch_norm counts N * spatial, instance_norm spatial.
  const Shape one_per_channel = {1, 3, 1}, one_per_instance = {5, 3, 1};
  EXPECT_FT_ERROR(
      CheckChannelNorm("batch_norm", one_per_channel, kFloat32, none, no_dtype, false, true),
      "batch_norm: expected more than 1 value per channel when computing batch statistics, "
      "got input shape [1, 3, 1]");
  EXPECT_NO_THROW(
      CheckChannelNorm("batch_norm", one_per_instance, kFloat32, none, no_dtype, false, true));
  EXPECT_FT_ERROR(
      CheckChannelNorm("instance_norm", one_per_instance, kFloat32, none, no_dtype, false, true),
      "instance_norm: expected more than 1 value per instance when computing instance "
      "statistics, got input shape [5, 3, 1]");
  EXPECT_NO_THROW(
      CheckChannelNorm("instance_norm", one_per_channel, kFloat32, all, f32, true, false));
}

TEST(CheckNormalizeTest, FloatingInputAndAValidDim) {
  const Shape in = {2, 3};
  EXPECT_NO_THROW(CheckNormalize(in, kFloat32, -2));
  EXPECT_NO_THROW(CheckNormalize({}, kFloat64, 0));
  EXPECT_NO_THROW(CheckNormalize({}, kFloat64, -1));
  EXPECT_FT_ERROR(CheckNormalize(in, kFloat32, 2),
                  "normalize: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(CheckNormalize(in, kBool, 0),
                  "normalize: expected a floating point input "
                  "(float32 or float64), got bool of shape [2, 3]");
}

}  // namespace
}  // namespace ft::kernels

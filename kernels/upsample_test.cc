// Tests of kernels/upsample.h called directly on dense tensors: upsample_nearest (nearest and
// nearest-exact), upsample_linear (linear, bilinear, trilinear; align_corners), their
// backwards, UpsampleShape and UpsampleBackwardShape (sizes and every documented error). The
// oracle is a direct loop over torch 1.13's index arithmetic as the header states it
// (NearestSource, LinearTaps: source indices in float for nearest, weights in double for
// linear) reading the inputs' to_vector<double>() values; the backwards are checked against
// the scatter of the same weights and the adjoint identity <A x, y> == <x, A^T y> in float64,
// and small cases are worked out by hand.
#include "kernels/upsample.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/test_helpers.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::ForEachIndex;
using ::ft::testing::NumelOf;
using ::ft::testing::Rand;
using ::ft::testing::Ravel;
using Vec = std::vector<double>;
using Scale = std::optional<double>;
constexpr auto kNone = std::nullopt;

// ---- Helpers. ----

Tensor Make(const Vec& v, const Shape& shape, DType dt) { return to(tensor(v, shape), dt); }

double Dot(const Tensor& a, const Tensor& b) {
  const Vec x = a.to_vector<double>(), y = b.to_vector<double>();
  EXPECT_EQ(x.size(), y.size());
  double s = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) s += x[i] * y[i];
  return s;
}

// ---- Oracles: torch 1.13's CPU index arithmetic. ----

// Taps: the input indices one output index reads and their weights.
struct Taps {
  std::vector<int64_t> index;
  Vec weight;
};

// NearestSource: upsample_nearest's source index, computed in float as torch does: the scale
// is 1 / scale when a positive scale is given, else in / out; plain nearest copies when
// out == in and halves when out == 2 * in whatever the scale.
int64_t NearestSource(int64_t o, int64_t in, int64_t out, Scale scale, bool exact) {
  if (!exact && out == in) return o;
  if (!exact && out == 2 * in) return o / 2;
  const float s = scale && *scale > 0 ? static_cast<float>(1.0 / *scale)
                                      : static_cast<float>(in) / static_cast<float>(out);
  const float src = exact ? static_cast<float>((static_cast<double>(o) + 0.5) * s)
                          : static_cast<float>(o) * s;
  return std::min(static_cast<int64_t>(std::floor(src)), in - 1);
}

// LinearTaps: output o of a linear dim reads floor(x) and the next index (clamped) weighted
// 1 - frac and frac, x = o (in - 1) / (out - 1) with align_corners, else
// max((o + 1/2) s - 1/2, 0) with s = 1 / scale or in / out; a dim with out == in is a copy.
Taps LinearTaps(int64_t o, int64_t in, int64_t out, Scale scale, bool align_corners) {
  if (out == in) return {{o}, {1.0}};
  double x;
  if (align_corners) {
    x = out > 1 ? static_cast<double>(o) * static_cast<double>(in - 1) /
                      static_cast<double>(out - 1)
                : 0.0;
  } else {
    const double s = scale && *scale > 0 ? 1.0 / *scale
                                         : static_cast<double>(in) / static_cast<double>(out);
    x = std::max((static_cast<double>(o) + 0.5) * s - 0.5, 0.0);
  }
  const int64_t i0 = std::min(static_cast<int64_t>(std::floor(x)), in - 1);
  const int64_t i1 = std::min(i0 + 1, in - 1);
  const double l1 = std::clamp(x - static_cast<double>(i0), 0.0, 1.0);
  return {{i0, i1}, {1.0 - l1, l1}};
}

struct Problem {
  Shape input;        // [N, C, spatial...]
  Shape output_size;  // n values
  Scale sd, sh, sw;
  bool flag = false;  // exact (nearest) or align_corners (linear)
  int64_t n() const { return static_cast<int64_t>(output_size.size()); }
  Scale ScaleOf(int64_t i) const {
    const Scale all[3] = {sd, sh, sw};
    return all[3 - n() + i];
  }
  Shape OutputShape() const {
    Shape s = {input[0], input[1]};
    s.insert(s.end(), output_size.begin(), output_size.end());
    return s;
  }
  std::string Describe() const {
    auto str = [](Scale v) { return v ? std::to_string(*v) : std::string("none"); };
    return "input " + ShapeToString(input) + " out " + ShapeToString(output_size) + " scales " +
           str(sd) + " " + str(sh) + " " + str(sw) + (flag ? " flag" : "");
  }
};

// Per-dim taps of every output index.
std::vector<std::vector<Taps>> AllTaps(const Problem& p, bool linear) {
  std::vector<std::vector<Taps>> taps(static_cast<size_t>(p.n()));
  for (int64_t i = 0; i < p.n(); ++i) {
    const int64_t in = p.input[static_cast<size_t>(2 + i)];
    const int64_t out = p.output_size[static_cast<size_t>(i)];
    for (int64_t o = 0; o < out; ++o) {
      taps[static_cast<size_t>(i)].push_back(
          linear ? LinearTaps(o, in, out, p.ScaleOf(i), p.flag)
                 : Taps{{NearestSource(o, in, out, p.ScaleOf(i), p.flag)}, {1.0}});
    }
  }
  return taps;
}

// Resample: the forward (big = A small) or, with `adjoint`, the backward (small = A^T big),
// as explicit sums over every output index and every combination of its per-dim taps.
Tensor Resample(const Problem& p, bool linear, const Tensor& src, bool adjoint) {
  const auto taps = AllTaps(p, linear);
  const Shape in_sp(p.input.begin() + 2, p.input.end());
  const Shape& out_sp = p.output_size;
  const int64_t planes = p.input[0] * p.input[1], I = NumelOf(in_sp), O = NumelOf(out_sp);
  const Vec v = src.to_vector<double>();
  Vec r(static_cast<size_t>(planes * (adjoint ? I : O)), 0.0);
  for (int64_t c = 0; c < planes; ++c) {
    ForEachIndex(out_sp, [&](const Shape& o) {
      Shape ntaps;
      for (size_t i = 0; i < o.size(); ++i) {
        ntaps.push_back(static_cast<int64_t>(taps[i][static_cast<size_t>(o[i])].index.size()));
      }
      const int64_t at_out = c * O + Ravel(o, out_sp);
      ForEachIndex(ntaps, [&](const Shape& t) {
        Shape pos(o.size());
        double w = 1.0;
        for (size_t i = 0; i < o.size(); ++i) {
          const Taps& d = taps[i][static_cast<size_t>(o[i])];
          pos[i] = d.index[static_cast<size_t>(t[i])];
          w *= d.weight[static_cast<size_t>(t[i])];
        }
        const int64_t at_in = c * I + Ravel(pos, in_sp);
        if (adjoint) {
          r[static_cast<size_t>(at_in)] += w * v[static_cast<size_t>(at_out)];
        } else {
          r[static_cast<size_t>(at_out)] += w * v[static_cast<size_t>(at_in)];
        }
      });
    });
  }
  return Make(r, adjoint ? p.input : p.OutputShape(), src.dtype());
}

// DrawProblem: n spatial dims of 1 to 6, outputs from 1 to 9 (up, down, equal), a scale given
// for some dims (one consistent with the sizes, an arbitrary one, or a non-positive one that
// torch ignores).
Problem DrawProblem(int64_t n, std::mt19937& rng) {
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::uniform_real_distribution<double> u(0.3, 3.0);
  Problem p;
  p.input = {pick(1, 2), pick(1, 2)};
  Scale scales[3];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t in = pick(1, n == 3 ? 4 : 6);
    p.input.push_back(in);
    const int64_t kind = pick(0, 5);
    if (kind == 0) {
      p.output_size.push_back(in);
    } else if (kind == 1) {
      p.output_size.push_back(2 * in);
    } else {
      p.output_size.push_back(pick(1, n == 3 ? 6 : 9));
    }
    const int64_t out = p.output_size.back();
    const int64_t scale_kind = pick(0, 5);
    Scale s;
    if (scale_kind == 1) s = static_cast<double>(out) / static_cast<double>(in) + 0.07;
    if (scale_kind == 2) s = u(rng);
    if (scale_kind == 3) s = 0.0;
    scales[3 - n + i] = s;
  }
  p.sd = scales[0];
  p.sh = scales[1];
  p.sw = scales[2];
  p.flag = pick(0, 1) == 1;
  return p;
}

Tensor Nearest(const Problem& p, const Tensor& x) {
  return upsample_nearest(x, p.output_size, p.sd, p.sh, p.sw, p.flag);
}
Tensor NearestBackward(const Problem& p, const Tensor& g) {
  return upsample_nearest_backward(g, p.output_size, p.input, p.sd, p.sh, p.sw, p.flag);
}
Tensor Linear(const Problem& p, const Tensor& x) {
  return upsample_linear(x, p.output_size, p.flag, p.sd, p.sh, p.sw);
}
Tensor LinearBackward(const Problem& p, const Tensor& g) {
  return upsample_linear_backward(g, p.output_size, p.input, p.flag, p.sd, p.sh, p.sw);
}

// ---- Shapes. ----

TEST(UpsampleShapeTest, SizesAndBackwardSizes) {
  EXPECT_EQ(UpsampleShape("upsample_nearest", {2, 3, 4}, {7}, kNone, kNone, kNone),
            (Shape{2, 3, 7}));
  EXPECT_EQ(UpsampleShape("upsample_linear", {0, 3, 4, 5}, {1, 9}, kNone, 2.0, 0.5),
            (Shape{0, 3, 1, 9}));
  EXPECT_EQ(UpsampleShape("upsample_linear", {1, 1, 2, 3, 4}, {3, 4, 5}, 1.5, kNone, 1.0),
            (Shape{1, 1, 3, 4, 5}));
  EXPECT_EQ(UpsampleBackwardShape("upsample_nearest_backward", {2, 3, 7}, {7}, {2, 3, 4}, kNone,
                                  kNone, 1.75),
            (Shape{2, 3, 4}));
  EXPECT_EQ(UpsampleBackwardShape("upsample_linear_backward", {0, 1, 2, 2}, {2, 2}, {0, 1, 5, 1},
                                  kNone, kNone, kNone),
            (Shape{0, 1, 5, 1}));
}

TEST(UpsampleShapeTest, Errors) {
  const char* op = "upsample_nearest";
  EXPECT_FT_ERROR(UpsampleShape(op, {2, 3}, {}, kNone, kNone, kNone),
                  "upsample_nearest: output_size must have 1, 2 or 3 values (one per spatial "
                  "dim), got []");
  EXPECT_FT_ERROR(UpsampleShape(op, {2, 3, 1, 1, 1, 1}, {1, 1, 1, 1}, kNone, kNone, kNone),
                  "output_size must have 1, 2 or 3 values (one per spatial dim), got "
                  "[1, 1, 1, 1]");
  EXPECT_FT_ERROR(UpsampleShape(op, {2, 3, 4, 5}, {2}, kNone, kNone, kNone),
                  "upsample_nearest: expected a 3-D input [N, C, W] for output_size [2], got "
                  "shape [2, 3, 4, 5]");
  EXPECT_FT_ERROR(UpsampleShape(op, {2, 3, 4}, {2, 2}, kNone, kNone, kNone),
                  "upsample_nearest: expected a 4-D input [N, C, H, W] for output_size [2, 2], "
                  "got shape [2, 3, 4]");
  EXPECT_FT_ERROR(UpsampleShape(op, {3, 4}, {2, 2, 2}, kNone, kNone, kNone),
                  "expected a 5-D input [N, C, D, H, W] for output_size [2, 2, 2], got shape "
                  "[3, 4]");
  EXPECT_FT_ERROR(UpsampleShape(op, {2, 3, 4, 5}, {2, 2}, 2.0, kNone, kNone),
                  "upsample_nearest: a scale was given for a spatial dim that a 4-D input does "
                  "not have");
  EXPECT_FT_ERROR(UpsampleShape(op, {2, 3, 4}, {2}, kNone, 2.0, kNone),
                  "a scale was given for a spatial dim that a 3-D input does not have");
  EXPECT_FT_ERROR(UpsampleShape(op, {2, 3, 4}, {2}, 2.0, kNone, kNone),
                  "a scale was given for a spatial dim that a 3-D input does not have");
  EXPECT_FT_ERROR(UpsampleShape(op, {2, 3, 0}, {4}, kNone, kNone, kNone),
                  "upsample_nearest: input and output sizes should be greater than 0, got input "
                  "[2, 3, 0] and output_size [4]");
  EXPECT_FT_ERROR(UpsampleShape(op, {2, 3, 4, 4}, {4, 0}, kNone, kNone, kNone),
                  "got input [2, 3, 4, 4] and output_size [4, 0]");
  EXPECT_FT_ERROR(UpsampleShape(op, {2, 3, 4, 4}, {4, -2}, kNone, kNone, kNone),
                  "input and output sizes should be greater than 0");
  EXPECT_FT_ERROR(UpsampleShape(op, {2, 0, 4}, {4}, kNone, kNone, kNone),
                  "upsample_nearest: expected at least one channel, got input [2, 0, 4]");
  EXPECT_FT_ERROR(UpsampleBackwardShape("upsample_linear_backward", {2, 3, 5}, {4}, {2, 3, 4},
                                        kNone, kNone, kNone),
                  "upsample_linear_backward: expected grad_output of shape [2, 3, 4] "
                  "(input_size [2, 3, 4], output_size [4]), got [2, 3, 5]");
  EXPECT_FT_ERROR(UpsampleBackwardShape("upsample_linear_backward", {2, 3, 4, 4}, {4},
                                        {2, 3, 4, 4}, kNone, kNone, kNone),
                  "upsample_linear_backward: expected a 3-D input [N, C, W] for output_size [4]");
  EXPECT_FT_ERROR(UpsampleBackwardShape("upsample_nearest_backward", {2, 0, 4}, {4}, {2, 0, 3},
                                        kNone, kNone, kNone),
                  "upsample_nearest_backward: expected at least one channel");
}

// ---- Nearest. ----

TEST(UpsampleNearestTest, ByHand) {
  for (DType dt : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dt));
    const Tensor abc = Make({1, 2, 3}, {1, 1, 3}, dt);
    auto v = [](const Tensor& t) { return t.to_vector<double>(); };
    // The header's example: doubling reads o / 2.
    EXPECT_EQ(v(upsample_nearest(Make({1, 2}, {1, 1, 2}, dt), {4}, kNone, kNone, kNone, false)),
              (Vec{1, 1, 2, 2}));
    // 3 -> 2: s = 1.5, sources floor(0) = 0, floor(1.5) = 1; exact: floor(0.75), floor(2.25).
    EXPECT_EQ(v(upsample_nearest(abc, {2}, kNone, kNone, kNone, false)), (Vec{1, 2}));
    EXPECT_EQ(v(upsample_nearest(abc, {2}, kNone, kNone, kNone, true)), (Vec{1, 3}));
    // 3 -> 7: floor(o * 3/7) = 0 0 0 1 1 2 2; exact floor((o + 0.5) * 3/7) = 0 0 1 1 2 2 2.
    EXPECT_EQ(v(upsample_nearest(abc, {7}, kNone, kNone, kNone, false)),
              (Vec{1, 1, 1, 2, 2, 3, 3}));
    EXPECT_EQ(v(upsample_nearest(abc, {7}, kNone, kNone, kNone, true)),
              (Vec{1, 1, 2, 2, 2, 3, 3}));
    // A scale of 1.5 for 5 outputs reads floor(o / 1.5) = 0 0 1 2 2; without it, in / out =
    // 3/5 reads 0 0 1 1 2.
    EXPECT_EQ(v(upsample_nearest(abc, {5}, kNone, kNone, 1.5, false)), (Vec{1, 1, 2, 3, 3}));
    EXPECT_EQ(v(upsample_nearest(abc, {5}, kNone, kNone, kNone, false)), (Vec{1, 1, 2, 2, 3}));
    // A non-positive scale is ignored (in / out).
    EXPECT_EQ(v(upsample_nearest(abc, {5}, kNone, kNone, 0.0, false)), (Vec{1, 1, 2, 2, 3}));
    // Plain nearest copies when out == in and halves when out == 2 in, whatever the scale;
    // nearest-exact always uses it: floor((o + 0.5) / 2.9) = 0 0 0 1 1 1.
    EXPECT_EQ(v(upsample_nearest(abc, {6}, kNone, kNone, 2.9, false)), (Vec{1, 1, 2, 2, 3, 3}));
    EXPECT_EQ(v(upsample_nearest(abc, {6}, kNone, kNone, 2.9, true)), (Vec{1, 1, 1, 2, 2, 2}));
    EXPECT_EQ(v(upsample_nearest(abc, {3}, kNone, kNone, 0.4, false)), (Vec{1, 2, 3}));
    // nearest-exact with out == in and a scale: floor((o + 0.5) / 1.4) = 0 1 1.
    EXPECT_EQ(v(upsample_nearest(abc, {3}, kNone, kNone, 1.4, true)), (Vec{1, 2, 2}));
    // 2-D: rows 2 -> 3 (0 0 1), columns 2 -> 1 (0).
    EXPECT_EQ(v(upsample_nearest(Make({1, 2, 3, 4}, {1, 1, 2, 2}, dt), {3, 1}, kNone, kNone,
                                 kNone, false)),
              (Vec{1, 1, 3}));
    // The backward counts how often each input is read: 3 -> 7 reads 3, 2, 2 times.
    EXPECT_EQ(v(upsample_nearest_backward(ones({1, 1, 7}, dt), {7}, {1, 1, 3}, kNone, kNone,
                                          kNone, false)),
              (Vec{3, 2, 2}));
    EXPECT_EQ(v(upsample_nearest_backward(Make({1, 2, 3, 4, 5, 6}, {1, 1, 6}, dt), {6},
                                          {1, 1, 3}, kNone, kNone, 2.9, true)),
              (Vec{6, 15, 0}));
  }
}

TEST(UpsampleNearestTest, MatchesLoop) {
  std::mt19937 rng(51);
  for (int64_t n = 1; n <= 3; ++n) {
    for (int trial = 0; trial < 60; ++trial) {
      const Problem p = DrawProblem(n, rng);
      for (DType dt : {kFloat64, kFloat32}) {
        SCOPED_TRACE(p.Describe() + " " + DTypeName(dt));
        const Tensor x = Rand(p.input, dt, rng);
        EXPECT_TENSOR_EQ(Nearest(p, x), Resample(p, false, x, false));
        const Tensor g = Rand(p.OutputShape(), dt, rng);
        EXPECT_TENSOR_NEAR(NearestBackward(p, g), Resample(p, false, g, true),
                           dt == kFloat64 ? 1e-13 : 1e-5);
        if (dt == kFloat64) {
          EXPECT_NEAR(Dot(Nearest(p, x), g), Dot(x, NearestBackward(p, g)), 1e-12);
        }
      }
    }
  }
}

// ---- Linear. ----

TEST(UpsampleLinearTest, ByHand) {
  for (DType dt : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dt));
    const double tol = dt == kFloat64 ? 1e-15 : 1e-6;
    auto v = [](const Tensor& t) { return t.to_vector<double>(); };
    // Scale 1.7 on 0..5 for 10 outputs: output 1 sits at x = 1.5 / 1.7 - 0.5; without the
    // scale (s = 6 / 10) at 0.4.
    const Tensor ramp = Make({0, 1, 2, 3, 4, 5}, {1, 1, 6}, dt);
    EXPECT_NEAR(v(upsample_linear(ramp, {10}, false, kNone, kNone, 1.7))[1], 1.5 / 1.7 - 0.5,
                tol);
    EXPECT_NEAR(v(upsample_linear(ramp, {10}, false, kNone, kNone, kNone))[1], 0.4, tol);
    // align_corners: [0, 10] -> 5 evenly spaced; pixel centers: s = 0.5, x = 0 (clamped from
    // -0.25), 0.25, 0.75, 1 (both corners the last element).
    const Tensor ends = Make({0, 10}, {1, 1, 2}, dt);
    EXPECT_EQ(v(upsample_linear(ends, {5}, true, kNone, kNone, kNone)), (Vec{0, 2.5, 5, 7.5, 10}));
    EXPECT_EQ(v(upsample_linear(ends, {4}, false, kNone, kNone, kNone)), (Vec{0, 2.5, 7.5, 10}));
    // One output with align_corners reads the first element; without, the center x = 0.5.
    EXPECT_EQ(v(upsample_linear(ends, {1}, true, kNone, kNone, kNone)), (Vec{0}));
    EXPECT_EQ(v(upsample_linear(ends, {1}, false, kNone, kNone, kNone)), (Vec{5}));
    // Downsampling 4 -> 2 (s = 2): x = 0.5 and 2.5, the means of neighbours.
    EXPECT_EQ(v(upsample_linear(Make({1, 3, 5, 9}, {1, 1, 4}, dt), {2}, false, kNone, kNone,
                                kNone)),
              (Vec{2, 7}));
    // out == in copies even with a scale that would move the samples.
    EXPECT_EQ(v(upsample_linear(ramp, {6}, false, kNone, kNone, 1.3)), (Vec{0, 1, 2, 3, 4, 5}));
    // Bilinear with align_corners, 2x2 -> 3x3: the midpoints average their neighbours.
    EXPECT_EQ(v(upsample_linear(Make({0, 1, 2, 3}, {1, 1, 2, 2}, dt), {3, 3}, true, kNone, kNone,
                                kNone)),
              (Vec{0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}));
    // Trilinear with align_corners, 2x1x1 -> 3x1x1.
    EXPECT_EQ(v(upsample_linear(Make({4, 8}, {1, 1, 2, 1, 1}, dt), {3, 1, 1}, true, kNone, kNone,
                                kNone)),
              (Vec{4, 6, 8}));
    // The backward of [0, 10] -> 4: each input's total weight, 1 + 0.75 + 0.25 = 2.
    EXPECT_EQ(v(upsample_linear_backward(ones({1, 1, 4}, dt), {4}, {1, 1, 2}, false, kNone, kNone,
                                         kNone)),
              (Vec{2, 2}));
    // align_corners 2 -> 5: weights (1, 0), (.75, .25), (.5, .5), (.25, .75), (0, 1).
    EXPECT_EQ(v(upsample_linear_backward(Make({1, 2, 3, 4, 5}, {1, 1, 5}, dt), {5}, {1, 1, 2},
                                         true, kNone, kNone, kNone)),
              (Vec{1 + 1.5 + 1.5 + 1, 0.5 + 1.5 + 3 + 5}));
  }
}

TEST(UpsampleLinearTest, MatchesLoop) {
  std::mt19937 rng(52);
  for (int64_t n = 1; n <= 3; ++n) {
    for (int trial = 0; trial < 60; ++trial) {
      const Problem p = DrawProblem(n, rng);
      for (DType dt : {kFloat64, kFloat32}) {
        SCOPED_TRACE(p.Describe() + " " + DTypeName(dt));
        const double tol = dt == kFloat64 ? 1e-14 : 2e-6 * static_cast<double>(1 << n);
        // Each input gathers up to 2 * ceil(out / in) + 2 weighted gradients per dim.
        const double backward_tol = dt == kFloat64 ? 1e-13 : 20 * tol;
        const Tensor x = Rand(p.input, dt, rng);
        EXPECT_TENSOR_NEAR(Linear(p, x), Resample(p, true, x, false), tol);
        const Tensor g = Rand(p.OutputShape(), dt, rng);
        EXPECT_TENSOR_NEAR(LinearBackward(p, g), Resample(p, true, g, true), backward_tol);
        if (dt == kFloat64) {
          EXPECT_NEAR(Dot(Linear(p, x), g), Dot(x, LinearBackward(p, g)), 1e-12);
        }
      }
    }
  }
}

// ---- Layouts and sizes shared by both modes. ----

TEST(UpsampleTest, NonContiguousAndSizeOneInputs) {
  std::mt19937 rng(53);
  for (DType dt : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dt));
    const double tol = dt == kFloat64 ? 1e-14 : 1e-5;
    const Tensor xt = transpose(Rand({2, 3, 5, 4}, dt, rng), 2, 3);  // [2, 3, 4, 5]
    const Tensor xs = slice(Rand({2, 3, 4, 10}, dt, rng), 3, 1, std::nullopt, 2);
    const Tensor xe = expand(Rand({1, 3, 4, 5}, dt, rng), {2, 3, 4, 5});
    const Tensor xn = testing::NonContiguousCopy(Rand({2, 3, 4, 5}, dt, rng));
    Problem p;
    p.input = {2, 3, 4, 5};
    p.output_size = {7, 3};
    p.sw = 0.7;
    for (const Tensor& x : {xt, xs, xe, xn}) {
      ASSERT_FALSE(x.is_contiguous());
      for (bool flag : {false, true}) {
        p.flag = flag;
        EXPECT_TENSOR_EQ(Nearest(p, x), Resample(p, false, x, false));
        EXPECT_TENSOR_NEAR(Linear(p, x), Resample(p, true, x, false), tol);
        const Tensor g = testing::NonContiguousCopy(Rand(p.OutputShape(), dt, rng));
        EXPECT_TENSOR_NEAR(NearestBackward(p, g), Resample(p, false, g, true), tol);
        EXPECT_TENSOR_NEAR(LinearBackward(p, g), Resample(p, true, g, true), tol);
      }
    }
    // An empty batch; size-1 spatial dims broadcast their one value.
    EXPECT_EQ(upsample_linear(zeros({0, 2, 3}, dt), {5}, false, kNone, kNone, kNone).sizes(),
              IntArrayRef({0, 2, 5}));
    EXPECT_EQ(upsample_nearest_backward(zeros({0, 2, 1, 1}, dt), {1, 1}, {0, 2, 3, 3}, kNone,
                                        kNone, kNone, false)
                  .sizes(),
              IntArrayRef({0, 2, 3, 3}));
    EXPECT_TENSOR_EQ(upsample_linear(full({1, 1, 1, 1}, 3.0, dt), {2, 3}, false, kNone, kNone,
                                     kNone),
                     full({1, 1, 2, 3}, 3.0, dt));
    EXPECT_TENSOR_EQ(upsample_nearest(full({1, 2, 1, 1, 1}, -1.0, dt), {2, 1, 3}, kNone, kNone,
                                      kNone, true),
                     full({1, 2, 2, 1, 3}, -1.0, dt));
    // Results are new contiguous tensors of the input's dtype.
    const Tensor y = upsample_nearest(xt, {4, 5}, kNone, kNone, kNone, false);
    EXPECT_TRUE(y.is_contiguous());
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_TENSOR_EQ(y, to(contiguous(xt), dt));
  }
}

TEST(UpsampleTest, EveryKernelNamesItselfInErrors) {
  const Tensor xi = zeros({2, 3, 4}, kInt64);
  EXPECT_FT_ERROR(upsample_nearest(xi, {2}, kNone, kNone, kNone, false),
                  "upsample_nearest: expected a floating point tensor (float32 or float64), got "
                  "int64 of shape [2, 3, 4]");
  EXPECT_FT_ERROR(upsample_linear(xi, {2}, false, kNone, kNone, kNone),
                  "upsample_linear: expected a floating point tensor");
  EXPECT_FT_ERROR(upsample_nearest_backward(zeros({2, 3, 2}, kInt64), {2}, {2, 3, 4}, kNone,
                                            kNone, kNone, false),
                  "upsample_nearest_backward: expected a floating point tensor");
  EXPECT_FT_ERROR(upsample_linear_backward(zeros({2, 3, 2}, kBool), {2}, {2, 3, 4}, false, kNone,
                                           kNone, kNone),
                  "upsample_linear_backward: expected a floating point tensor");
  const Tensor x = zeros({2, 3, 4});
  EXPECT_FT_ERROR(upsample_nearest(x, {2, 2}, kNone, kNone, kNone, true),
                  "upsample_nearest: expected a 4-D input [N, C, H, W]");
  EXPECT_FT_ERROR(upsample_linear(x, {0}, false, kNone, kNone, kNone),
                  "upsample_linear: input and output sizes should be greater than 0");
  EXPECT_FT_ERROR(upsample_linear(x, {2}, true, kNone, 1.0, kNone),
                  "upsample_linear: a scale was given for a spatial dim");
  EXPECT_FT_ERROR(upsample_nearest(zeros({2, 0, 4}), {2}, kNone, kNone, kNone, false),
                  "upsample_nearest: expected at least one channel");
  EXPECT_FT_ERROR(upsample_nearest_backward(zeros({2, 3, 5}), {4}, {2, 3, 4}, kNone, kNone, kNone,
                                            false),
                  "upsample_nearest_backward: expected grad_output of shape [2, 3, 4]");
  EXPECT_FT_ERROR(upsample_linear_backward(zeros({2, 3, 4}), {4}, {2, 3, 4, 4}, false, kNone,
                                           kNone, kNone),
                  "upsample_linear_backward: expected a 3-D input [N, C, W]");
  EXPECT_FT_ERROR(upsample_linear_backward(zeros({2, 3, 4}), {}, {2, 3, 4}, false, kNone, kNone,
                                           kNone),
                  "upsample_linear_backward: output_size must have 1, 2 or 3 values");
}

}  // namespace
}  // namespace ft::kernels

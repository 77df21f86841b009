// Tests of kernels/pooling.h called directly on dense tensors: max_pool1d/2d (with and
// without indices), avg_pool1d/2d, adaptive_avg_pool1d/2d, adaptive_max_pool2d, PoolShape,
// AdaptivePoolShape, AvgPoolDivisor and AdaptivePoolMatrix. The oracle is a direct loop in
// double over each op's definition (MaxPoolLoop, AvgPoolLoop, AdaptiveLoop) reading the
// inputs' to_vector<double>() values, torch's pooling_output_shape formula for the window
// counts, and closed forms worked out by hand. PyTorch's CPU kernels are the reference for
// ties (the first maximum), NaN (a NaN wins; a later NaN replaces an earlier one, as in
// torch's `val > maxval || isnan(val)`), padding (never chosen, -infinity) and the divisors.
#include "kernels/pooling.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
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
using IVec = std::vector<int64_t>;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- Helpers. ----

Tensor Make(const Vec& v, const Shape& shape, DType dt) { return to(tensor(v, shape), dt); }

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// PoolOutRef: torch's pooling_output_shape: floor (or ceil) of the window count, and with
// ceil_mode no last window that starts past the input and its left padding.
int64_t PoolOutRef(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  int64_t out = FloorDiv(in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0), s) + 1;
  if (ceil && (out - 1) * s >= in + p) --out;
  return out;
}

// Layout: the leading (plane) dims of x and its n spatial dims.
struct Layout {
  Shape lead, in;
  int64_t planes;
};
Layout Split(const Tensor& x, int64_t n) {
  Layout l;
  l.lead.assign(x.sizes().begin(), x.sizes().end() - n);
  l.in.assign(x.sizes().end() - n, x.sizes().end());
  l.planes = NumelOf(l.lead);
  return l;
}

// As1d: a 2-D pool's input seen by a 1-D pool (its last example when batched; still a view).
Tensor As1d(const Tensor& x) { return x.dim() == 4 ? select(x, 0, x.size(0) - 1) : x; }

Shape Concat(const Shape& a, const Shape& b) {
  Shape r = a;
  r.insert(r.end(), b.begin(), b.end());
  return r;
}

// ---- Oracles. ----

// MaxPoolLoop: (values, indices) of torch's max pool: over the in-range positions
// q * s - p + k * d of each window, starting from -infinity at the first one, a value replaces
// the maximum when it is larger or NaN.
std::tuple<Tensor, Tensor> MaxPoolLoop(const Tensor& x, int64_t n, const Shape& k,
                                       const Shape& s, const Shape& p, const Shape& d,
                                       bool ceil) {
  const Layout l = Split(x, n);
  Shape out;
  for (int64_t i = 0; i < n; ++i) {
    const size_t j = static_cast<size_t>(i);
    out.push_back(PoolOutRef(l.in[j], k[j], s[j], p[j], d[j], ceil));
  }
  const Vec xv = x.to_vector<double>();
  const int64_t I = NumelOf(l.in);
  Vec vals;
  IVec idx;
  for (int64_t c = 0; c < l.planes; ++c) {
    ForEachIndex(out, [&](const Shape& q) {
      double best = -kInf;
      int64_t arg = -1;
      ForEachIndex(k, [&](const Shape& kk) {
        Shape pos(q.size());
        for (size_t i = 0; i < q.size(); ++i) {
          pos[i] = q[i] * s[i] - p[i] + kk[i] * d[i];
          if (pos[i] < 0 || pos[i] >= l.in[i]) return;
        }
        const int64_t at = Ravel(pos, l.in);
        const double v = xv[static_cast<size_t>(c * I + at)];
        if (arg < 0) arg = at;
        if (v > best || std::isnan(v)) {
          best = v;
          arg = at;
        }
      });
      vals.push_back(best);
      idx.push_back(arg);
    });
  }
  const Shape shape = Concat(l.lead, out);
  return {Make(vals, shape, x.dtype()), tensor(idx, shape)};
}

// AvgPoolLoop: each window's sum over the input divided by divisor_override, or by the number
// of its positions inside the padded input (count_include_pad), or inside the input.
Tensor AvgPoolLoop(const Tensor& x, int64_t n, const Shape& k, const Shape& s, const Shape& p,
                   bool ceil, bool count_include_pad, std::optional<int64_t> divisor_override) {
  const Layout l = Split(x, n);
  Shape out;
  for (int64_t i = 0; i < n; ++i) {
    const size_t j = static_cast<size_t>(i);
    out.push_back(PoolOutRef(l.in[j], k[j], s[j], p[j], 1, ceil));
  }
  const Vec xv = x.to_vector<double>();
  const int64_t I = NumelOf(l.in);
  Vec vals;
  for (int64_t c = 0; c < l.planes; ++c) {
    ForEachIndex(out, [&](const Shape& q) {
      double sum = 0;
      int64_t inside = 0, padded = 0;
      ForEachIndex(k, [&](const Shape& kk) {
        Shape pos(q.size());
        bool in_input = true, in_padded = true;
        for (size_t i = 0; i < q.size(); ++i) {
          pos[i] = q[i] * s[i] - p[i] + kk[i];
          in_input = in_input && pos[i] >= 0 && pos[i] < l.in[i];
          in_padded = in_padded && pos[i] >= -p[i] && pos[i] < l.in[i] + p[i];
        }
        padded += in_padded;
        if (!in_input) return;
        ++inside;
        sum += xv[static_cast<size_t>(c * I + Ravel(pos, l.in))];
      });
      const double divisor = divisor_override ? static_cast<double>(*divisor_override)
                             : count_include_pad ? static_cast<double>(padded)
                                                 : static_cast<double>(inside);
      vals.push_back(sum / divisor);
    });
  }
  return Make(vals, Concat(l.lead, out), x.dtype());
}

// AdaptiveWindow: window i of `out` over `in` elements, [floor(i in / out), ceil((i+1) in / out)).
std::pair<int64_t, int64_t> AdaptiveWindow(int64_t i, int64_t in, int64_t out) {
  const double a = static_cast<double>(i * in) / static_cast<double>(out);
  const double b = static_cast<double>((i + 1) * in) / static_cast<double>(out);
  return {static_cast<int64_t>(std::floor(a)), static_cast<int64_t>(std::ceil(b))};
}

// AdaptiveLoop: the mean (or torch's max and its index) of each adaptive window.
std::tuple<Tensor, Tensor> AdaptiveLoop(const Tensor& x, int64_t n, const Shape& os, bool max) {
  const Layout l = Split(x, n);
  const Vec xv = x.to_vector<double>();
  const int64_t I = NumelOf(l.in);
  Vec vals;
  IVec idx;
  for (int64_t c = 0; c < l.planes; ++c) {
    ForEachIndex(os, [&](const Shape& q) {
      Shape lo, size;
      for (size_t i = 0; i < q.size(); ++i) {
        const auto [a, b] = AdaptiveWindow(q[i], l.in[i], os[i]);
        lo.push_back(a);
        size.push_back(b - a);
      }
      double sum = 0, best = -kInf;
      int64_t arg = -1;
      ForEachIndex(size, [&](const Shape& kk) {
        Shape pos(q.size());
        for (size_t i = 0; i < q.size(); ++i) pos[i] = lo[i] + kk[i];
        const int64_t at = Ravel(pos, l.in);
        const double v = xv[static_cast<size_t>(c * I + at)];
        sum += v;
        if (arg < 0) arg = at;
        if (v > best || std::isnan(v)) {
          best = v;
          arg = at;
        }
      });
      vals.push_back(max ? best : sum / static_cast<double>(NumelOf(size)));
      idx.push_back(arg);
    });
  }
  const Shape shape = Concat(l.lead, os);
  return {Make(vals, shape, x.dtype()), tensor(idx, shape)};
}

// ---- Random problems. ----

struct PoolCase {
  int64_t n = 2;
  Shape x, k, s, p, d;  // s empty: the kernel size
  bool ceil = false;
  std::string Describe() const {
    return "x=" + ShapeToString(x) + " k=" + ShapeToString(k) + " s=" + ShapeToString(s) +
           " p=" + ShapeToString(p) + " d=" + ShapeToString(d) + (ceil ? " ceil" : "");
  }
};

PoolCase DrawPoolCase(int64_t n, bool dilated, std::mt19937& rng) {
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  PoolCase c;
  c.n = n;
  c.ceil = pick(0, 1) == 1;
  const bool default_stride = pick(0, 4) == 0;
  if (pick(0, 3) != 0) c.x.push_back(pick(1, 2));  // batched
  c.x.push_back(pick(1, 3));
  for (int64_t i = 0; i < n; ++i) {
    c.k.push_back(pick(1, 4));
    if (!default_stride) c.s.push_back(pick(1, 3));
    c.p.push_back(pick(0, c.k.back() / 2));
    c.d.push_back(dilated ? pick(1, 2) : 1);
    // The smallest input with a window: with ceil_mode, a kernel up to s - 1 longer than the
    // padded input still has one (partial) window.
    const int64_t extent = c.d.back() * (c.k.back() - 1) + 1;
    const int64_t s = default_stride ? c.k.back() : c.s.back();
    c.x.push_back(std::max<int64_t>(1, extent - 2 * c.p.back() - (c.ceil ? s - 1 : 0)) +
                  pick(0, 4));
  }
  return c;
}

// Values from a small set (many ties), now and then NaN or -infinity.
Tensor DrawValues(const Shape& shape, DType dt, std::mt19937& rng) {
  std::uniform_int_distribution<int> u(0, 40);
  Vec v(static_cast<size_t>(NumelOf(shape)));
  for (double& e : v) {
    const int r = u(rng);
    e = r == 0 ? kNaN : r == 1 ? -kInf : static_cast<double>(r % 5) - 2.0;
  }
  return Make(v, shape, dt);
}

std::tuple<Tensor, Tensor> MaxPoolWithIndices(int64_t n, const Tensor& x, const PoolCase& c) {
  return n == 1 ? max_pool1d_with_indices(x, c.k, c.s, c.p, c.d, c.ceil)
                : max_pool2d_with_indices(x, c.k, c.s, c.p, c.d, c.ceil);
}

// ---- PoolShape and AdaptivePoolShape. ----

// Every small combination against torch's formula: a shape where at least one window fits,
// an error where none does.
TEST(PoolShapeTest, MatchesTorchsOutputSizeFormula) {
  int checked = 0;
  for (int64_t in = 1; in <= 9; ++in) {
    for (int64_t k = 1; k <= 4; ++k) {
      for (int64_t s = 1; s <= 3; ++s) {
        for (int64_t p = 0; p <= k / 2; ++p) {
          for (int64_t d = 1; d <= 2; ++d) {
            for (bool ceil : {false, true}) {
              SCOPED_TRACE(::testing::Message() << "in " << in << " k " << k << " s " << s
                                                << " p " << p << " d " << d << " ceil " << ceil);
              const int64_t want = PoolOutRef(in, k, s, p, d, ceil);
              if (want >= 1) {
                EXPECT_EQ(PoolShape("max_pool1d", 1, {2, 3, in}, {k}, {s}, {p}, {d}, ceil),
                          (Shape{2, 3, want}));
                EXPECT_EQ(PoolShape("max_pool2d", 2, {3, 5, in}, {2, k}, {1, s}, {0, p},
                                    {1, d}, ceil),
                          (Shape{3, 4, want}));
                ++checked;
              } else {
                EXPECT_FT_ERROR(PoolShape("max_pool1d", 1, {2, 3, in}, {k}, {s}, {p}, {d}, ceil),
                                "max_pool1d: input [2, 3, " + std::to_string(in) +
                                    "] is too small for kernel_size [" + std::to_string(k) +
                                    "]");
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(PoolShapeTest, CeilModeByHand) {
  // in 5, k 2, s 2, p 1: windows start at -1, 1, 3; ceil would add one at 5 = in + p, which
  // starts in the right padding, so it is dropped.
  EXPECT_EQ(PoolShape("avg_pool1d", 1, {1, 5}, {2}, {2}, {1}, {1}, true), (Shape{1, 3}));
  // in 6, k 3, s 2: floor gives windows at 0, 2; ceil adds the partial window at 4.
  EXPECT_EQ(PoolShape("avg_pool1d", 1, {1, 6}, {3}, {2}, {0}, {1}, false), (Shape{1, 2}));
  EXPECT_EQ(PoolShape("avg_pool1d", 1, {1, 6}, {3}, {2}, {0}, {1}, true), (Shape{1, 3}));
  // An empty stride is the kernel size; an empty batch and no channels stay empty.
  EXPECT_EQ(PoolShape("max_pool2d", 2, {0, 0, 8, 6}, {2, 3}, {}, {0}, {1}, false),
            (Shape{0, 0, 4, 2}));
  // A kernel longer than the (padded) input: no window, unless ceil_mode rounds the negative
  // span up to one (torch: floor((1 - 2 + 1) / 2) + 1 = 1 for in 1, k 2, s 2).
  EXPECT_EQ(PoolShape("max_pool2d", 2, {1, 1, 1}, {2}, {}, {0}, {1}, true), (Shape{1, 1, 1}));
  EXPECT_EQ(PoolShape("max_pool1d", 1, {1, 3}, {5}, {3}, {0}, {1}, true), (Shape{1, 1}));
  EXPECT_FT_ERROR(PoolShape("max_pool1d", 1, {1, 3}, {5}, {2}, {0}, {1}, true),
                  "max_pool1d: input [1, 3] is too small for kernel_size [5]");
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, {1, 1, 1}, {2}, {}, {0}, {1}, false),
                  "max_pool2d: input [1, 1, 1] is too small for kernel_size [2, 2]");
  // A huge stride with ceil_mode is one window, not an overflowed count.
  EXPECT_EQ(PoolShape("max_pool1d", 1, {1, 5}, {2}, {std::numeric_limits<int64_t>::max()}, {0},
                      {1}, true),
            (Shape{1, 1}));
}

TEST(PoolShapeTest, Errors) {
  const Shape x = {2, 4, 6, 6};
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, {6, 6}, {2}, {}, {0}, {1}, false),
                  "max_pool2d: expected a 3-D (unbatched) or 4-D (batched) input, got shape "
                  "[6, 6]");
  EXPECT_FT_ERROR(PoolShape("max_pool1d", 1, x, {2}, {}, {0}, {1}, false),
                  "max_pool1d: expected a 2-D (unbatched) or 3-D (batched) input");
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, x, {2, 2, 2}, {}, {0}, {1}, false),
                  "max_pool2d: kernel_size must have 1 or 2 values, got [2, 2, 2]");
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, x, {2}, {1, 1, 1}, {0}, {1}, false),
                  "max_pool2d: stride must have 1 or 2 values");
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, x, {2}, {}, {}, {1}, false),
                  "max_pool2d: padding must have 1 or 2 values, got []");
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, x, {2}, {}, {0}, {1, 1, 1}, false),
                  "max_pool2d: dilation must have 1 or 2 values");
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, x, {2, 0}, {}, {0}, {1}, false),
                  "max_pool2d: kernel_size must be positive, got [2, 0]");
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, x, {2}, {0}, {0}, {1}, false),
                  "max_pool2d: stride must be positive, got [0, 0]");
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, x, {2}, {}, {-1}, {1}, false),
                  "max_pool2d: padding must be non-negative, got [-1, -1]");
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, x, {2}, {}, {0}, {0}, false),
                  "max_pool2d: dilation must be positive, got [0, 0]");
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, x, {3}, {1}, {0, 2}, {1}, false),
                  "max_pool2d: padding [0, 2] must be at most half of kernel_size [3, 3]");
  EXPECT_FT_ERROR(PoolShape("avg_pool2d", 2, x, {7}, {}, {0}, {1}, false),
                  "avg_pool2d: input [2, 4, 6, 6] is too small for kernel_size [7, 7] with "
                  "padding [0, 0] and dilation [1, 1] (no window fits in spatial dim 0)");
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, x, {2}, {}, {0}, {1, 6}, false),
                  "(no window fits in spatial dim 1)");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, x, {kMax}, {1}, {kMax / 2}, {1}, false),
                  "max_pool2d: kernel size 9223372036854775807 with dilation 1");
}

// torch refuses pools over empty spatial dims; with padding they would be windows of padding
// alone (max -infinity at no index).
TEST(PoolShapeTest, EmptySpatialDimsAreErrors) {
  EXPECT_FT_ERROR(PoolShape("max_pool2d", 2, {1, 1, 0, 4}, {2}, {1}, {1}, {1}, false),
                  "max_pool2d: expected non-empty spatial dims, got input [1, 1, 0, 4]");
  EXPECT_FT_ERROR(PoolShape("avg_pool1d", 1, {1, 0}, {2}, {1}, {1}, {1}, false),
                  "avg_pool1d: expected non-empty spatial dims, got input [1, 0]");
  EXPECT_FT_ERROR(max_pool2d_with_indices(zeros({1, 1, 0, 4}), {2}, {1}, {1}, {1}, false),
                  "max_pool2d_with_indices: expected non-empty spatial dims");
  EXPECT_FT_ERROR(avg_pool2d(zeros({1, 1, 4, 0}), {2}, {1}, {1}, false, true, std::nullopt),
                  "avg_pool2d: expected non-empty spatial dims");
}

TEST(PoolShapeTest, AdaptiveShapesAndErrors) {
  EXPECT_EQ(AdaptivePoolShape("adaptive_avg_pool2d", 2, {2, 3, 7, 5}, {3}), (Shape{2, 3, 3, 3}));
  EXPECT_EQ(AdaptivePoolShape("adaptive_avg_pool2d", 2, {3, 7, 5}, {9, 0}), (Shape{3, 9, 0}));
  EXPECT_EQ(AdaptivePoolShape("adaptive_avg_pool1d", 1, {0, 3, 7}, {2}), (Shape{0, 3, 2}));
  EXPECT_FT_ERROR(AdaptivePoolShape("adaptive_avg_pool1d", 1, {7}, {2}),
                  "adaptive_avg_pool1d: expected a 2-D (unbatched) or 3-D (batched) input, got "
                  "shape [7]");
  EXPECT_FT_ERROR(AdaptivePoolShape("adaptive_max_pool2d", 2, {1, 2, 3, 4}, {1, 2, 3}),
                  "adaptive_max_pool2d: output_size must have 1 or 2 values, got [1, 2, 3]");
  EXPECT_FT_ERROR(AdaptivePoolShape("adaptive_avg_pool2d", 2, {1, 2, 3, 4}, {2, -1}),
                  "adaptive_avg_pool2d: output_size must be non-negative, got [2, -1]");
  EXPECT_FT_ERROR(AdaptivePoolShape("adaptive_max_pool2d", 2, {2, 0, 4}, {2}),
                  "adaptive_max_pool2d: expected non-empty spatial dims, got input [2, 0, 4]");
}

// ---- Max pools. ----

TEST(MaxPoolTest, ByHand) {
  for (DType dt : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dt));
    const Tensor x = Make({1, 3, 2, 5, 4}, {1, 5}, dt);
    auto check = [&](IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil,
                     const Vec& v, const IVec& i) {
      const auto [values, indices] = max_pool1d_with_indices(x, k, s, p, d, ceil);
      const Shape shape = {1, static_cast<int64_t>(v.size())};
      EXPECT_TENSOR_EQ(values, Make(v, shape, dt));
      EXPECT_TENSOR_EQ(indices, tensor(i, shape));
      EXPECT_TENSOR_EQ(max_pool1d(x, k, s, p, d, ceil), Make(v, shape, dt));
    };
    check({2}, {}, {0}, {1}, false, {3, 5}, {1, 3});
    check({2}, {}, {0}, {1}, true, {3, 5, 4}, {1, 3, 4});  // a last partial window
    check({3}, {2}, {1}, {1}, false, {3, 5, 5}, {1, 3, 3});  // padding is never chosen
    check({2}, {1}, {0}, {2}, false, {2, 5, 4}, {2, 3, 4});  // windows {0, 2}, {1, 3}, {2, 4}
    check({8}, {4}, {1}, {1}, true, {5}, {3});  // ceil_mode's one window [-1, 7), partial
    // 2-D: indices are positions in the flattened plane.
    const Tensor y = Make({0, 1, 2, 3, 9, 5, 6, 7, 8, 10, 11, 4}, {1, 1, 3, 4}, dt);
    const auto [values, indices] = max_pool2d_with_indices(y, {2}, {1, 2}, {0}, {1}, false);
    EXPECT_TENSOR_EQ(values, Make({9, 7, 10, 11}, {1, 1, 2, 2}, dt));
    EXPECT_TENSOR_EQ(indices, tensor(IVec{4, 7, 9, 10}, {1, 1, 2, 2}));
    EXPECT_TENSOR_EQ(max_pool2d(y, {2}, {1, 2}, {0}, {1}, false),
                     Make({9, 7, 10, 11}, {1, 1, 2, 2}, dt));
  }
}

// Ties go to the first maximum; a NaN wins, and a later NaN replaces an earlier one (torch's
// `val > maxval || isnan(val)`); a window of -infinity reports its first element.
TEST(MaxPoolTest, TiesNaNAndInfinity) {
  for (DType dt : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dt));
    const Tensor x = Make({1, 1, 2, kNaN, 0, kNaN, -kInf, -kInf, kNaN, 7}, {1, 10}, dt);
    const auto [values, indices] = max_pool1d_with_indices(x, {3}, {3}, {0}, {1}, true);
    const Vec v = values.to_vector<double>();
    ASSERT_EQ(v.size(), 4u);
    EXPECT_EQ(v[0], 2.0);
    EXPECT_TRUE(std::isnan(v[1]) && std::isnan(v[2]));
    EXPECT_EQ(v[3], 7.0);
    EXPECT_EQ(indices.to_vector<int64_t>(), (IVec{2, 5, 8, 9}));
    EXPECT_EQ(std::get<1>(max_pool1d_with_indices(x, {2}, {1}, {0}, {1}, false))
                  .to_vector<int64_t>(),
              (IVec{0, 2, 3, 3, 5, 5, 6, 8, 8}));
    const Tensor neg = Make({-kInf, -kInf, -kInf, -kInf}, {1, 1, 2, 2}, dt);
    const auto [nv, ni] = max_pool2d_with_indices(neg, {2}, {1}, {1}, {1}, false);
    EXPECT_TENSOR_EQ(nv, Make(Vec(9, -kInf), {1, 1, 3, 3}, dt));
    EXPECT_EQ(ni.to_vector<int64_t>(), (IVec{0, 0, 1, 0, 0, 1, 2, 2, 3}));
    // adaptive_max_pool2d follows the same rules.
    // Windows [0, 2) x [0, 2) and [0, 2) x [1, 3) of [[NaN, 1, 5], [NaN, 5, 2]].
    const Tensor a = Make({kNaN, 1, 5, kNaN, 5, 2}, {1, 2, 3}, dt);
    const auto [av, ai] = adaptive_max_pool2d(a, {1, 2});
    EXPECT_EQ(ai.to_vector<int64_t>(), (IVec{3, 2}));
    EXPECT_TRUE(std::isnan(av.to_vector<double>()[0]));
    EXPECT_EQ(av.to_vector<double>()[1], 5.0);
    EXPECT_EQ(std::get<1>(adaptive_max_pool2d(Make({3, 5, 5, 1}, {1, 1, 4}, dt), {1}))
                  .to_vector<int64_t>(),
              (IVec{1}));
  }
}

TEST(MaxPoolTest, MatchesLoop) {
  std::mt19937 rng(11);
  for (int64_t n = 1; n <= 2; ++n) {
    for (int trial = 0; trial < 80; ++trial) {
      const PoolCase c = DrawPoolCase(n, /*dilated=*/true, rng);
      const Shape s = c.s.empty() ? c.k : c.s;
      for (DType dt : {kFloat64, kFloat32}) {
        SCOPED_TRACE(c.Describe() + " " + DTypeName(dt));
        const Tensor x = DrawValues(c.x, dt, rng);
        const auto [want_v, want_i] = MaxPoolLoop(x, n, c.k, s, c.p, c.d, c.ceil);
        const auto [v, i] = MaxPoolWithIndices(n, x, c);
        EXPECT_TENSOR_EQ(v, want_v);
        EXPECT_TENSOR_EQ(i, want_i);
        const Tensor plain = n == 1 ? max_pool1d(x, c.k, c.s, c.p, c.d, c.ceil)
                                    : max_pool2d(x, c.k, c.s, c.p, c.d, c.ceil);
        EXPECT_TENSOR_EQ(plain, want_v);
      }
    }
  }
}

TEST(MaxPoolTest, NonContiguousAndEmptyInputs) {
  std::mt19937 rng(12);
  for (DType dt : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dt));
    const Tensor xt = transpose(DrawValues({2, 3, 6, 5}, dt, rng), 2, 3);
    const Tensor xs = slice(DrawValues({2, 3, 5, 12}, dt, rng), 3, 1, std::nullopt, 2);
    const Tensor xe = expand(DrawValues({1, 5, 7}, dt, rng), {4, 5, 7});
    const Tensor xn = testing::NonContiguousCopy(DrawValues({3, 5, 7}, dt, rng));
    for (const Tensor& x : {xt, xs, xe, xn}) {
      ASSERT_FALSE(x.is_contiguous());
      const auto [want_v, want_i] = MaxPoolLoop(x, 2, {3, 2}, {2, 1}, {1, 0}, {1, 2}, true);
      const auto [v, i] = max_pool2d_with_indices(x, {3, 2}, {2, 1}, {1, 0}, {1, 2}, true);
      EXPECT_TENSOR_EQ(v, want_v);
      EXPECT_TENSOR_EQ(i, want_i);
      const auto [want_v1, want_i1] = MaxPoolLoop(As1d(x), 1, {2}, {2}, {1}, {1}, false);
      const auto [v1, i1] = max_pool1d_with_indices(As1d(x), {2}, {2}, {1}, {1}, false);
      EXPECT_TENSOR_EQ(v1, want_v1);
      EXPECT_TENSOR_EQ(i1, want_i1);
    }
    const auto [ev, ei] = max_pool2d_with_indices(zeros({0, 2, 4, 4}, dt), {2}, {}, {0}, {1},
                                                  false);
    EXPECT_EQ(ev.sizes(), IntArrayRef({0, 2, 2, 2}));
    EXPECT_EQ(ei.dtype(), kInt64);
    EXPECT_EQ(max_pool1d(zeros({2, 0, 4}, dt), {2}, {}, {0}, {1}, false).sizes(),
              IntArrayRef({2, 0, 2}));
    EXPECT_TENSOR_EQ(max_pool2d(full({1, 1, 1}, 3.0, dt), {1}, {}, {0}, {1}, false),
                     full({1, 1, 1}, 3.0, dt));
  }
}

// ---- Average pools. ----

TEST(AvgPoolTest, ByHand) {
  for (DType dt : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dt));
    const Tensor x = Make({1, 2, 3, 4, 5, 6}, {1, 6}, dt);
    // Windows [0, 3), [2, 5) and, with ceil_mode, [4, 7) clipped to [4, 6): torch divides the
    // last by 2 (the window clipped to the padded input) either way.
    EXPECT_TENSOR_EQ(avg_pool1d(x, {3}, {2}, {0}, false, true), Make({2, 4}, {1, 2}, dt));
    EXPECT_TENSOR_EQ(avg_pool1d(x, {3}, {2}, {0}, true, true), Make({2, 4, 5.5}, {1, 3}, dt));
    EXPECT_TENSOR_EQ(avg_pool1d(x, {3}, {2}, {0}, true, false), Make({2, 4, 5.5}, {1, 3}, dt));
    // Padding 1: windows [-1, 2), [1, 4), [3, 6): the first counts its padding or not.
    EXPECT_TENSOR_EQ(avg_pool1d(x, {3}, {2}, {1}, false, true),
                     Make({1, 3, 5}, {1, 3}, dt));
    EXPECT_TENSOR_EQ(avg_pool1d(x, {3}, {2}, {1}, false, false),
                     Make({1.5, 3, 5}, {1, 3}, dt));
    // ceil_mode with padding: a fourth window [5, 8) clipped to the padded input [5, 7): sum 6,
    // divided by 2 with its padding, by 1 without.
    EXPECT_TENSOR_EQ(avg_pool1d(x, {3}, {2}, {1}, true, true), Make({1, 3, 5, 3}, {1, 4}, dt));
    EXPECT_TENSOR_EQ(avg_pool1d(x, {3}, {2}, {1}, true, false),
                     Make({1.5, 3, 5, 6}, {1, 4}, dt));
    // A kernel of 9 over 6 elements padded by 1, rounded up to one window by ceil_mode: the
    // window [-1, 8) clipped to the padded input [-1, 7) holds 8 positions, 6 of them input.
    EXPECT_TENSOR_EQ(avg_pool1d(x, {9}, {3}, {1}, true, true), Make({21.0 / 8}, {1, 1}, dt));
    EXPECT_TENSOR_EQ(avg_pool1d(x, {9}, {3}, {1}, true, false), Make({3.5}, {1, 1}, dt));
    // divisor_override replaces every divisor (negative ones too).
    const Tensor y = Make({1, 2, 3, 4}, {1, 1, 2, 2}, dt);
    EXPECT_TENSOR_EQ(avg_pool2d(y, {2}, {}, {0}, false, true, 5), Make({2}, {1, 1, 1, 1}, dt));
    EXPECT_TENSOR_EQ(avg_pool2d(y, {2}, {}, {0}, false, true, -2),
                     Make({-5}, {1, 1, 1, 1}, dt));
    EXPECT_TENSOR_EQ(avg_pool2d(y, {2}, {1}, {1}, false, false, std::nullopt),
                     Make({1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}, {1, 1, 3, 3}, dt));
  }
}

TEST(AvgPoolTest, MatchesLoop) {
  std::mt19937 rng(21);
  for (int64_t n = 1; n <= 2; ++n) {
    for (int trial = 0; trial < 80; ++trial) {
      const PoolCase c = DrawPoolCase(n, /*dilated=*/false, rng);
      const Shape s = c.s.empty() ? c.k : c.s;
      const bool cip = trial % 2 == 0;
      std::optional<int64_t> div;
      if (n == 2 && trial % 3 == 0) div = trial % 6 == 0 ? 3 : -7;
      for (DType dt : {kFloat64, kFloat32}) {
        SCOPED_TRACE(c.Describe() + " " + DTypeName(dt) + (cip ? " count_include_pad" : "") +
                     (div ? " divisor " + std::to_string(*div) : ""));
        const Tensor x = Rand(c.x, dt, rng);
        const Tensor got = n == 1 ? avg_pool1d(x, c.k, c.s, c.p, c.ceil, cip)
                                  : avg_pool2d(x, c.k, c.s, c.p, c.ceil, cip, div);
        EXPECT_TENSOR_NEAR(got, AvgPoolLoop(x, n, c.k, s, c.p, c.ceil, cip, div),
                           dt == kFloat64 ? 1e-15 : 1e-6);
      }
    }
  }
}

TEST(AvgPoolTest, NonContiguousAndEmptyInputs) {
  std::mt19937 rng(22);
  for (DType dt : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dt));
    const double tol = dt == kFloat64 ? 1e-15 : 1e-6;
    const Tensor xt = transpose(Rand({2, 3, 6, 5}, dt, rng), 2, 3);
    const Tensor xs = slice(Rand({2, 3, 10, 5}, dt, rng), 2, 0, std::nullopt, 2);
    const Tensor xe = expand(Rand({1, 5, 7}, dt, rng), {4, 5, 7});
    for (const Tensor& x : {xt, xs, xe}) {
      EXPECT_TENSOR_NEAR(avg_pool2d(x, {3, 2}, {2, 1}, {1, 0}, true, false, std::nullopt),
                         AvgPoolLoop(x, 2, {3, 2}, {2, 1}, {1, 0}, true, false, std::nullopt),
                         tol);
      EXPECT_TENSOR_NEAR(avg_pool1d(As1d(x), {2}, {3}, {1}, true, true),
                         AvgPoolLoop(As1d(x), 1, {2}, {3}, {1}, true, true, std::nullopt), tol);
    }
    EXPECT_EQ(avg_pool1d(zeros({0, 2, 4}, dt), {2}, {}, {0}, false, true).sizes(),
              IntArrayRef({0, 2, 2}));
    EXPECT_EQ(avg_pool2d(zeros({2, 0, 4, 4}, dt), {2}, {}, {0}, false, true, std::nullopt)
                  .sizes(),
              IntArrayRef({2, 0, 2, 2}));
  }
}

TEST(AvgPoolTest, DivisorIsTheWindowCount) {
  // 1-D: [1, out]; windows of avg_pool1d's ByHand case with padding and ceil_mode.
  EXPECT_TENSOR_EQ(AvgPoolDivisor(1, {1, 6}, {3}, {2}, {1}, true, true, std::nullopt),
                   tensor(Vec{3, 3, 3, 2}, {1, 4}));
  EXPECT_TENSOR_EQ(AvgPoolDivisor(1, {1, 6}, {3}, {2}, {1}, true, false, std::nullopt),
                   tensor(Vec{2, 3, 3, 1}, {1, 4}));
  // 2-D: the product of the per-dim counts (rows 2, 3; columns 1, 2, 1 without padding).
  EXPECT_TENSOR_EQ(AvgPoolDivisor(2, {2, 3, 4, 4}, {3, 2}, {2}, {1}, false, false, std::nullopt),
                   tensor(Vec{2, 4, 2, 3, 6, 3}, {2, 3}));
  EXPECT_TENSOR_EQ(AvgPoolDivisor(2, {2, 3, 4, 4}, {3, 2}, {2}, {1}, false, true, std::nullopt),
                   full({2, 3}, 6.0, kFloat64));
  EXPECT_TENSOR_EQ(AvgPoolDivisor(2, {3, 4, 4}, {2}, {}, {0}, false, true, 7),
                   full({2, 2}, 7.0, kFloat64));
  EXPECT_FT_ERROR(AvgPoolDivisor(2, {1, 1, 2, 2}, {3}, {}, {0}, false, true, std::nullopt),
                  "avg_pool2d: input [1, 1, 2, 2] is too small for kernel_size [3, 3]");
  EXPECT_FT_ERROR(AvgPoolDivisor(1, {1, 2, 2}, {3}, {}, {0}, false, true, std::nullopt),
                  "avg_pool1d: input [1, 2, 2] is too small for kernel_size [3]");
}

// ---- Adaptive pools. ----

TEST(AdaptivePoolTest, ByHand) {
  for (DType dt : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dt));
    // 5 -> 3: windows [0, 2), [1, 4), [3, 5).
    const Tensor x = Make({1, 2, 6, 4, 8}, {1, 5}, dt);
    EXPECT_TENSOR_EQ(adaptive_avg_pool1d(x, {3}), Make({1.5, 4, 6}, {1, 3}, dt));
    // 3 -> 5: windows [0, 1), [0, 2), [1, 2), [1, 3), [2, 3) overlap and repeat.
    const Tensor y = Make({2, 4, 9}, {1, 1, 3}, dt);
    EXPECT_TENSOR_EQ(adaptive_avg_pool1d(y, {5}), Make({2, 3, 4, 6.5, 9}, {1, 1, 5}, dt));
    // 2-D max over 2 x 3 -> 1 x 2: windows [0, 2) x [0, 2), [0, 2) x [1, 3).
    const Tensor z = Make({1, 7, 3, 4, 5, 9}, {1, 2, 3}, dt);
    const auto [v, i] = adaptive_max_pool2d(z, {1, 2});
    EXPECT_TENSOR_EQ(v, Make({7, 9}, {1, 1, 2}, dt));
    EXPECT_TENSOR_EQ(i, tensor(IVec{1, 5}, {1, 1, 2}));
    EXPECT_TENSOR_EQ(adaptive_avg_pool2d(z, {1, 2}), Make({4.25, 6}, {1, 1, 2}, dt));
    // Output size 0 is an empty result; output == input is the identity.
    EXPECT_EQ(adaptive_avg_pool2d(z, {0, 2}).sizes(), IntArrayRef({1, 0, 2}));
    EXPECT_EQ(std::get<1>(adaptive_max_pool2d(z, {2, 0})).sizes(), IntArrayRef({1, 2, 0}));
    EXPECT_TENSOR_EQ(adaptive_avg_pool2d(z, {2, 3}), z);
  }
}

TEST(AdaptivePoolTest, MatchesLoop) {
  std::mt19937 rng(31);
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 60; ++trial) {
    Shape x;
    if (pick(0, 3) != 0) x.push_back(pick(1, 2));
    x.push_back(pick(1, 3));
    const Shape in = {pick(1, 9), pick(1, 9)};
    const Shape os = {pick(1, 10), pick(1, 10)};
    x.insert(x.end(), in.begin(), in.end());
    for (DType dt : {kFloat64, kFloat32}) {
      SCOPED_TRACE("x " + ShapeToString(x) + " out " + ShapeToString(os) + " " + DTypeName(dt));
      const double tol = dt == kFloat64 ? 1e-15 : 1e-6;
      const Tensor r = Rand(x, dt, rng);
      EXPECT_TENSOR_NEAR(adaptive_avg_pool2d(r, os), std::get<0>(AdaptiveLoop(r, 2, os, false)),
                         tol);
      EXPECT_TENSOR_NEAR(adaptive_avg_pool1d(As1d(r), {os[1]}),
                         std::get<0>(AdaptiveLoop(As1d(r), 1, {os[1]}, false)), tol);
      const Tensor m = DrawValues(x, dt, rng);
      const auto [want_v, want_i] = AdaptiveLoop(m, 2, os, true);
      const auto [v, i] = adaptive_max_pool2d(m, os);
      EXPECT_TENSOR_EQ(v, want_v);
      EXPECT_TENSOR_EQ(i, want_i);
    }
  }
}

TEST(AdaptivePoolTest, NonContiguousAndEmptyInputs) {
  std::mt19937 rng(32);
  for (DType dt : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dt));
    const double tol = dt == kFloat64 ? 1e-15 : 1e-6;
    const Tensor xt = transpose(DrawValues({2, 3, 6, 5}, dt, rng), 2, 3);
    const Tensor xs = slice(DrawValues({2, 3, 5, 14}, dt, rng), 3, 0, std::nullopt, 2);
    const Tensor xe = expand(DrawValues({1, 5, 7}, dt, rng), {4, 5, 7});
    for (const Tensor& x : {xt, xs, xe}) {
      EXPECT_TENSOR_NEAR(adaptive_avg_pool2d(x, {3, 4}),
                         std::get<0>(AdaptiveLoop(x, 2, {3, 4}, false)), tol);
      EXPECT_TENSOR_NEAR(adaptive_avg_pool1d(As1d(x), {4}),
                         std::get<0>(AdaptiveLoop(As1d(x), 1, {4}, false)), tol);
      const auto [want_v, want_i] = AdaptiveLoop(x, 2, {2, 3}, true);
      const auto [v, i] = adaptive_max_pool2d(x, {2, 3});
      EXPECT_TENSOR_EQ(v, want_v);
      EXPECT_TENSOR_EQ(i, want_i);
    }
    EXPECT_EQ(adaptive_avg_pool2d(zeros({0, 2, 4, 4}, dt), {3}).sizes(),
              IntArrayRef({0, 2, 3, 3}));
    EXPECT_EQ(adaptive_avg_pool1d(zeros({2, 0, 4}, dt), {3}).sizes(), IntArrayRef({2, 0, 3}));
  }
}

TEST(AdaptivePoolTest, MatrixAveragesEachWindow) {
  EXPECT_TENSOR_NEAR(AdaptivePoolMatrix(5, 3),
                     tensor(Vec{0.5, 0.5, 0, 0, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0, 0, 0, 0, 0.5,
                                0.5},
                            {3, 5}),
                     1e-16);
  EXPECT_TENSOR_EQ(AdaptivePoolMatrix(2, 4), tensor(Vec{1, 0, 1, 0, 0, 1, 0, 1}, {4, 2}));
  EXPECT_TENSOR_EQ(AdaptivePoolMatrix(3, 3), tensor(Vec{1, 0, 0, 0, 1, 0, 0, 0, 1}, {3, 3}));
  EXPECT_EQ(AdaptivePoolMatrix(4, 0).sizes(), IntArrayRef({0, 4}));
  // Row i of every size is window i's mean: the loop's weights.
  for (int64_t in = 1; in <= 9; ++in) {
    for (int64_t out = 1; out <= 9; ++out) {
      Vec want(static_cast<size_t>(in * out), 0.0);
      for (int64_t i = 0; i < out; ++i) {
        const auto [a, b] = AdaptiveWindow(i, in, out);
        for (int64_t j = a; j < b; ++j) {
          want[static_cast<size_t>(i * in + j)] = 1.0 / static_cast<double>(b - a);
        }
      }
      EXPECT_TENSOR_EQ(AdaptivePoolMatrix(in, out), tensor(want, {out, in}));
    }
  }
}

// ---- The kernels' own errors. ----

TEST(PoolErrorsTest, EveryKernelNamesItself) {
  const Tensor x = zeros({2, 4, 6, 6}, kFloat64), xi = zeros({2, 4, 6, 6}, kInt64);
  const Tensor x1 = zeros({2, 4, 6}, kFloat64);
  EXPECT_FT_ERROR(max_pool1d(x, {2}, {}, {0}, {1}, false), "max_pool1d: expected a 2-D");
  EXPECT_FT_ERROR(max_pool2d(zeros({6, 6}), {2}, {}, {0}, {1}, false),
                  "max_pool2d: expected a 3-D (unbatched) or 4-D (batched) input");
  EXPECT_FT_ERROR(max_pool1d_with_indices(x1, {3}, {1}, {2}, {1}, false),
                  "max_pool1d_with_indices: padding [2] must be at most half of kernel_size [3]");
  EXPECT_FT_ERROR(max_pool2d_with_indices(x, {7}, {}, {0}, {1}, false),
                  "max_pool2d_with_indices: input [2, 4, 6, 6] is too small");
  EXPECT_FT_ERROR(max_pool2d(xi, {2}, {}, {0}, {1}, false),
                  "max_pool2d: expected a floating point tensor (float32 or float64), got int64 "
                  "of shape [2, 4, 6, 6]");
  EXPECT_FT_ERROR(max_pool1d(zeros({2, 4}, kInt64), {2}, {}, {0}, {1}, false),
                  "max_pool1d: expected a floating point tensor");
  EXPECT_FT_ERROR(max_pool1d_with_indices(zeros({2, 4}, kBool), {2}, {}, {0}, {1}, false),
                  "max_pool1d_with_indices: expected a floating point tensor");
  EXPECT_FT_ERROR(avg_pool1d(x1, {0}, {}, {0}, false, true),
                  "avg_pool1d: kernel_size must be positive");
  EXPECT_FT_ERROR(avg_pool1d(zeros({2, 4}, kInt64), {2}, {}, {0}, false, true),
                  "avg_pool1d: expected a floating point tensor");
  EXPECT_FT_ERROR(avg_pool2d(x, {2}, {}, {0}, false, true, 0),
                  "avg_pool2d: divisor_override must be nonzero");
  EXPECT_FT_ERROR(avg_pool2d(xi, {2}, {}, {0}, false, true, std::nullopt),
                  "avg_pool2d: expected a floating point tensor");
  EXPECT_FT_ERROR(avg_pool2d(x, {2}, {}, {0, 0, 0}, false, true, std::nullopt),
                  "avg_pool2d: padding must have 1 or 2 values");
  EXPECT_FT_ERROR(adaptive_avg_pool1d(x, {2}), "adaptive_avg_pool1d: expected a 2-D");
  EXPECT_FT_ERROR(adaptive_avg_pool1d(zeros({2, 3}, kInt64), {2}),
                  "adaptive_avg_pool1d: expected a floating point tensor");
  EXPECT_FT_ERROR(adaptive_avg_pool2d(x, {-1}),
                  "adaptive_avg_pool2d: output_size must be non-negative");
  EXPECT_FT_ERROR(adaptive_avg_pool2d(xi, {2}), "adaptive_avg_pool2d: expected a floating point");
  EXPECT_FT_ERROR(adaptive_max_pool2d(zeros({2, 0, 4}), {2}),
                  "adaptive_max_pool2d: expected non-empty spatial dims");
  EXPECT_FT_ERROR(adaptive_max_pool2d(xi, {2}), "adaptive_max_pool2d: expected a floating point");
}

}  // namespace
}  // namespace ft::kernels

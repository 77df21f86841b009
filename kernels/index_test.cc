// Tests of the indexing, joining and layout kernels (kernels/index.h) on dense tensors:
// index_select, gather, scatter_add, take_along_dim, cat, stack, split, split_with_sizes,
// chunk, repeat, pad and one_hot, in every layout (contiguous, stride-2, transposed, expanded
// with stride 0, offset), for rank 0, size-0 dims, every dtype they accept, and every
// documented error.
//
// Oracles: hand-written index loops in double precision over to_vector<double>() values
// (the row-major multi-index of each output element mapped to the input element PyTorch
// reads); scatter_add's row-major accumulation order replayed in float32; the views of
// split / chunk checked by their hand-computed storage offsets.
#include "kernels/index.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/test_helpers.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::FromDoubles;
using ::ft::testing::IsNewContiguous;
using ::ft::testing::Layouts;
using ::ft::testing::NumelOf;
using ::ft::testing::RandomInts;
using ::ft::testing::RandomValues;
using ::ft::testing::Ravel;
using ::ft::testing::Strided;
using ::ft::testing::TransposedLayout;
using ::ft::testing::Unravel;

using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Ints Vec(IntArrayRef s) { return Ints(s.begin(), s.end()); }

// ---------------------------------------------------------------------------------------
// index_select

// IndexSelectOracle: out[p] = x[p with p[d] -> idx[p[d]]].
Doubles IndexSelectOracle(const Doubles& x, const Ints& xs, int64_t d, const Ints& idx,
                          const Ints& out_shape) {
  Doubles out(static_cast<size_t>(NumelOf(out_shape)));
  for (size_t i = 0; i < out.size(); ++i) {
    Ints p = Unravel(static_cast<int64_t>(i), out_shape);
    p[d] = idx[p[d]];
    out[i] = x[Ravel(p, xs)];
  }
  return out;
}

TEST(IndexKernelIndexSelectTest, EveryDimDTypeAndLayoutAgainstLoop) {
  const Ints xs = {4, 5, 3};
  for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    const Doubles xv = RandomValues(60, dtype, 1);
    const Tensor x = FromDoubles(xv, xs, dtype);
    for (int64_t dim : {0, 1, 2, -1, -3}) {
      const int64_t d = dim < 0 ? dim + 3 : dim;
      const Ints idx = RandomInts(7, 0, xs[d], 10 + static_cast<uint32_t>(d));  // with repeats
      Ints out_shape = xs;
      out_shape[d] = 7;
      const Tensor expected =
          FromDoubles(IndexSelectOracle(xv, xs, d, idx, out_shape), out_shape, dtype);
      for (const auto& [name, xl] : Layouts(x)) {
        for (const auto& [iname, il] : Layouts(tensor(idx, {7}))) {
          SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " dim " << dim << " x " << name
                                            << " index " << iname);
          const Tensor out = index_select(xl, dim, il);
          EXPECT_TENSOR_EQ(out, expected);
          EXPECT_TRUE(IsNewContiguous(out, xl));
        }
      }
    }
  }
}

TEST(IndexKernelIndexSelectTest, ExpandedRankZeroAndEmpty) {
  // Expanded x (stride 0 rows) and an expanded index (stride 0: one value repeated).
  const Tensor row = tensor({1.0, 2.0, 3.0}, {3});
  const Tensor xe = Strided(row, {4, 3}, {0, 1}, 0);
  const Tensor ie = Strided(tensor(Ints{2}, {1}), {5}, {0}, 0);
  EXPECT_TENSOR_EQ(index_select(xe, 1, ie), FromDoubles(Doubles(20, 3.0), {4, 5}, kFloat64));
  EXPECT_TENSOR_EQ(index_select(xe, 0, tensor(Ints{3, 0}, {2})),
                   tensor({1.0, 2.0, 3.0, 1.0, 2.0, 3.0}, {2, 3}));
  // A rank-0 index keeps the dim, with size 1.
  const Tensor x = FromDoubles({0, 1, 2, 3, 4, 5}, {2, 3}, kFloat64);
  EXPECT_TENSOR_EQ(index_select(x, 1, scalar_tensor(int64_t{2})), tensor({2.0, 5.0}, {2, 1}));
  // Rank-0 x: one index (rank 0 or [1]) gives a rank-0 result.
  const Tensor s = scalar_tensor(7.5, kFloat64);
  EXPECT_TENSOR_EQ(index_select(s, 0, tensor(Ints{0}, {1})), scalar_tensor(7.5, kFloat64));
  EXPECT_TENSOR_EQ(index_select(s, -1, scalar_tensor(int64_t{0})), scalar_tensor(7.5, kFloat64));
  // Empty index: the dim becomes 0; empty x with an empty index.
  EXPECT_EQ(Vec(index_select(x, 0, tensor(Ints{}, {0})).sizes()), (Ints{0, 3}));
  EXPECT_EQ(Vec(index_select(zeros({0, 3}), 0, tensor(Ints{}, {0})).sizes()), (Ints{0, 3}));
  EXPECT_EQ(Vec(index_select(zeros({2, 0}), 0, tensor(Ints{1, 1, 0}, {3})).sizes()), (Ints{3, 0}));
}

TEST(IndexKernelIndexSelectTest, LargeInput) {
  const Ints xs = {400, 200};
  const Doubles xv = RandomValues(80000, kFloat32, 2);
  const Ints idx = RandomInts(350, 0, 400, 3);
  const Tensor out = index_select(FromDoubles(xv, xs, kFloat32), 0, tensor(idx, {350}));
  EXPECT_TENSOR_EQ(
      out, FromDoubles(IndexSelectOracle(xv, xs, 0, idx, {350, 200}), {350, 200}, kFloat32));
}

TEST(IndexKernelIndexSelectTest, Errors) {
  const Tensor x = zeros({3, 4});
  EXPECT_FT_ERROR(index_select(x, 0, zeros({2})),
                  "index_select: expected an int64 index tensor, got float32 of shape [2]");
  EXPECT_FT_ERROR(index_select(x, 0, tensor(Ints{0, 1}, {1, 2})),
                  "index_select: index must be a rank-0 or 1-D tensor, got shape [1, 2]");
  EXPECT_FT_ERROR(index_select(x, 0, tensor(Ints{0, 3}, {2})),
                  "index_select: index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_FT_ERROR(index_select(x, -1, tensor(Ints{0, -1}, {2})),
                  "index_select: index -1 is out of bounds for dimension 1 with size 4 "
                  "(negative indices are not supported)");
  EXPECT_FT_ERROR(index_select(zeros({0, 4}), 0, tensor(Ints{0}, {1})),
                  "index_select: index 0 is out of bounds for dimension 0 with size 0");
  EXPECT_FT_ERROR(index_select(scalar_tensor(1.0), 0, tensor(Ints{0, 0}, {2})),
                  "index_select: selecting from a rank-0 tensor takes exactly one index, got 2");
  EXPECT_FT_ERROR(index_select(x, 2, tensor(Ints{0}, {1})),
                  "index_select: dim 2 is out of range for a tensor of rank 2");
}

// ---------------------------------------------------------------------------------------
// gather

// GatherOracle: out[p] = x[p with p[d] -> index[p]] over the index's shape.
Doubles GatherOracle(const Doubles& x, const Ints& xs, int64_t d, const Ints& index,
                     const Ints& is) {
  Doubles out(index.size());
  for (size_t i = 0; i < out.size(); ++i) {
    Ints p = Unravel(static_cast<int64_t>(i), is);
    p[d] = index[i];
    out[i] = x[Ravel(p, xs)];
  }
  return out;
}

TEST(IndexKernelGatherTest, EveryDimDTypeAndLayoutAgainstLoop) {
  const Ints xs = {3, 4, 5};
  for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    const Doubles xv = RandomValues(60, dtype, 4);
    const Tensor x = FromDoubles(xv, xs, dtype);
    for (int64_t dim : {0, 1, 2, -2}) {
      const int64_t d = dim < 0 ? dim + 3 : dim;
      // Smaller than x in the other dims, larger along d.
      Ints is = {2, 3, 4};
      is[d] = 6;
      const Ints index = RandomInts(NumelOf(is), 0, xs[d], 20 + static_cast<uint32_t>(d));
      const Tensor expected = FromDoubles(GatherOracle(xv, xs, d, index, is), is, dtype);
      for (const auto& [name, xl] : Layouts(x)) {
        for (const auto& [iname, il] : Layouts(tensor(index, is))) {
          SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " dim " << dim << " x " << name
                                            << " index " << iname);
          const Tensor out = gather(xl, dim, il);
          EXPECT_TENSOR_EQ(out, expected);
          EXPECT_TRUE(IsNewContiguous(out, xl));
        }
      }
    }
  }
}

TEST(IndexKernelGatherTest, ExpandedRankZeroAndEmpty) {
  const Tensor x = FromDoubles({0, 1, 2, 3, 4, 5}, {2, 3}, kFloat64);
  // An expanded index: every row reads columns [2, 0].
  const Tensor ie = Strided(tensor(Ints{2, 0}, {2}), {2, 2}, {0, 1}, 0);
  EXPECT_TENSOR_EQ(gather(x, 1, ie), tensor({2.0, 0.0, 5.0, 3.0}, {2, 2}));
  // Index stride 0 along the gathered dim.
  const Tensor col = Strided(tensor(Ints{1, 0}, {2}), {2, 3}, {1, 0}, 0);  // rows [1 1 1], [0..]
  EXPECT_TENSOR_EQ(gather(x, 0, col), tensor({3.0, 4.0, 5.0, 0.0, 1.0, 2.0}, {2, 3}));
  // Rank 0 counts as [1].
  const Tensor s = scalar_tensor(4.0, kFloat64);
  EXPECT_TENSOR_EQ(gather(s, 0, scalar_tensor(int64_t{0})), s);
  EXPECT_TENSOR_EQ(gather(s, 0, tensor(Ints{0, 0}, {2})), tensor({4.0, 4.0}, {2}));
  EXPECT_TENSOR_EQ(gather(tensor({1.0, 2.0}, {2}), 0, scalar_tensor(int64_t{1})),
                   scalar_tensor(2.0, kFloat64));
  // Empty index.
  EXPECT_EQ(Vec(gather(x, 1, tensor(Ints{}, {2, 0})).sizes()), (Ints{2, 0}));
  EXPECT_EQ(Vec(gather(zeros({0, 3}), 1, tensor(Ints{}, {0, 5})).sizes()), (Ints{0, 5}));
}

TEST(IndexKernelGatherTest, Errors) {
  const Tensor x = zeros({2, 3});
  EXPECT_FT_ERROR(gather(x, 1, zeros({2, 3})),
                  "gather: expected an int64 index tensor, got float32 of shape [2, 3]");
  EXPECT_FT_ERROR(gather(x, 1, tensor(Ints{0, 1}, {2})),
                  "gather: index must have the same number of dims as the input, got index "
                  "shape [2] and input shape [2, 3]");
  EXPECT_FT_ERROR(gather(x, 1, tensor(Ints(6, 0), {3, 2})),
                  "gather: index shape [3, 2] exceeds input shape [2, 3] in dim 0 (3 > 2); "
                  "only dim 1 may be larger");
  EXPECT_FT_ERROR(gather(x, 1, tensor(Ints{0, 3}, {1, 2})),
                  "gather: index 3 is out of bounds for dimension 1 with size 3");
  EXPECT_FT_ERROR(gather(x, 0, tensor(Ints{-1}, {1, 1})),
                  "gather: index -1 is out of bounds for dimension 0 with size 2 (negative "
                  "indices are not supported)");
  EXPECT_FT_ERROR(gather(x, -3, tensor(Ints{0}, {1, 1})), "gather: dim -3 is out of range");
}

// ---------------------------------------------------------------------------------------
// scatter_add

// ScatterAddOracle: out = x; for p in index (row-major): out[p with p[d] -> index[p]] +=
// src[p]; bool adds as logical or.
Doubles ScatterAddOracle(Doubles out, const Ints& xs, int64_t d, const Ints& index, const Ints& is,
                         const Doubles& src, const Ints& ss, bool logical) {
  for (size_t i = 0; i < index.size(); ++i) {
    const Ints p = Unravel(static_cast<int64_t>(i), is);
    Ints q = p;
    q[d] = index[i];
    double& dst = out[Ravel(q, xs)];
    const double v = src[Ravel(p, ss)];
    dst = logical ? (dst != 0 || v != 0) : dst + v;
  }
  return out;
}

TEST(IndexKernelScatterAddTest, EveryDimDTypeAndLayoutAgainstLoop) {
  const Ints xs = {3, 4, 5};
  const Ints ss = {4, 5, 6};  // src is larger than the index: only its leading block is read
  for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    const Doubles xv = RandomValues(60, dtype, 5);
    const Doubles sv = RandomValues(120, dtype, 6);
    const Tensor x = FromDoubles(xv, xs, dtype);
    const Tensor src = FromDoubles(sv, ss, dtype);
    for (int64_t dim : {0, 1, 2, -1}) {
      const int64_t d = dim < 0 ? dim + 3 : dim;
      Ints is = {2, 3, 4};
      is[d] = 4;  // index may be longer than x along d (repeats accumulate)
      const Ints index = RandomInts(NumelOf(is), 0, xs[d], 30 + static_cast<uint32_t>(d));
      const Tensor expected =
          FromDoubles(ScatterAddOracle(xv, xs, d, index, is, sv, ss, dtype == kBool), xs, dtype);
      for (const auto& [name, xl] : Layouts(x)) {
        for (const auto& [iname, il] : Layouts(tensor(index, is))) {
          for (const auto& [sname, sl] : Layouts(src)) {
            SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " dim " << dim << " x " << name
                                              << " index " << iname << " src " << sname);
            const Tensor out = scatter_add(xl, dim, il, sl);
            if (dtype == kFloat32) {
              EXPECT_TENSOR_NEAR(out, expected, 1e-5);
            } else {
              EXPECT_TENSOR_EQ(out, expected);
            }
            EXPECT_TRUE(IsNewContiguous(out, xl));
          }
        }
      }
      EXPECT_TENSOR_EQ(x, FromDoubles(xv, xs, dtype));  // the input is not written
    }
  }
}

TEST(IndexKernelScatterAddTest, AccumulatesInRowMajorOrderOfTheIndex) {
  // Three float32 values into one slot: (0 + 1e8) + 1 rounds back to 1e8, then - 1e8 gives
  // 0. Any other order (e.g. 1e8 - 1e8 first) would give 1.
  const Tensor x = zeros({1}, kFloat32);
  const Tensor src = tensor({1e8f, 1.0f, -1e8f}, {3});
  const Tensor out = scatter_add(x, 0, tensor(Ints{0, 0, 0}, {3}), src);
  float expected = 0.0f;
  for (float v : {1e8f, 1.0f, -1e8f}) expected += v;
  EXPECT_TENSOR_EQ(out, tensor({expected}, {1}));
  EXPECT_EQ(out.item<float>(), 0.0f);
  // Row-major order in 2-D too: index [[0, 0], [0, 0]] along dim 0 reads src[0][j] then
  // src[1][j] for each column j.
  const Tensor src2 = tensor({1e8f, -1e8f, 1.0f, 1.0f, -1e8f, 1e8f}, {3, 2});
  const Tensor out2 = scatter_add(zeros({1, 2}), 0, tensor(Ints(6, 0), {3, 2}), src2);
  const float c0 = (1e8f + 1.0f) + -1e8f;
  const float c1 = (-1e8f + 1.0f) + 1e8f;
  EXPECT_TENSOR_EQ(out2, tensor({c0, c1}, {1, 2}));
}

TEST(IndexKernelScatterAddTest, IntegerWrapsBoolSaturatesRankZeroAndEmpty) {
  const Tensor xi = tensor(Ints{kMax, 5}, {2});
  EXPECT_TENSOR_EQ(scatter_add(xi, 0, tensor(Ints{0, 1}, {2}), tensor(Ints{1, -7}, {2})),
                   tensor(Ints{kMin, -2}, {2}));
  const Tensor xb = tensor(std::vector<bool>{false, true, false}, {3});
  const Tensor sb = tensor(std::vector<bool>{true, true, false, false}, {4});
  EXPECT_TENSOR_EQ(scatter_add(xb, 0, tensor(Ints{0, 0, 2, 1}, {4}), sb),
                   tensor(std::vector<bool>{true, true, false}, {3}));
  // Rank 0 counts as [1].
  const Tensor s = scalar_tensor(1.5, kFloat64);
  EXPECT_TENSOR_EQ(scatter_add(s, 0, scalar_tensor(int64_t{0}), scalar_tensor(2.0, kFloat64)),
                   scalar_tensor(3.5, kFloat64));
  EXPECT_TENSOR_EQ(scatter_add(s, 0, tensor(Ints{0, 0}, {2}), tensor({1.0, 1.0}, {2})),
                   scalar_tensor(3.5, kFloat64));
  // Empty index: a copy of x.
  const Tensor x = tensor({1.0, 2.0}, {2});
  const Tensor out = scatter_add(x, 0, tensor(Ints{}, {0}), tensor({3.0}, {1}));
  EXPECT_TENSOR_EQ(out, x);
  EXPECT_TRUE(IsNewContiguous(out, x));
  // Expanded src (stride 0).
  const Tensor se = Strided(tensor({1.0, 10.0}, {2}), {3, 2}, {0, 1}, 0);
  EXPECT_TENSOR_EQ(
      scatter_add(zeros({2, 2}, kFloat64), 0, tensor(Ints{0, 1, 0, 1, 1, 1}, {3, 2}), se),
      tensor({2.0, 0.0, 1.0, 30.0}, {2, 2}));
}

TEST(IndexKernelScatterAddTest, Errors) {
  const Tensor x = zeros({2, 3}, kFloat64);
  const Tensor src = zeros({2, 3}, kFloat64);
  const Tensor index = tensor(Ints(6, 0), {2, 3});
  EXPECT_FT_ERROR(scatter_add(x, 1, zeros({2, 3}), src),
                  "scatter_add: expected an int64 index tensor, got float32");
  EXPECT_FT_ERROR(scatter_add(x, 1, index, zeros({2, 3})),
                  "scatter_add: src dtype float32 must match the input dtype float64");
  EXPECT_FT_ERROR(scatter_add(x, 1, tensor(Ints{0}, {1}), src),
                  "scatter_add: index must have the same number of dims as the input");
  EXPECT_FT_ERROR(scatter_add(x, 1, index, zeros({6}, kFloat64)),
                  "scatter_add: src must have the same number of dims as the input, got src "
                  "shape [6] and input shape [2, 3]");
  EXPECT_FT_ERROR(scatter_add(x, 1, tensor(Ints(8, 0), {2, 4}), src),
                  "scatter_add: index shape [2, 4] exceeds src shape [2, 3] in dim 1 (4 > 3)");
  EXPECT_FT_ERROR(scatter_add(x, 1, tensor(Ints(6, 0), {3, 2}), zeros({3, 3}, kFloat64)),
                  "scatter_add: index shape [3, 2] exceeds input shape [2, 3] in dim 0 (3 > 2); "
                  "only dim 1 may be larger");
  EXPECT_FT_ERROR(scatter_add(x, 0, tensor(Ints{0, 2}, {1, 2}), src),
                  "scatter_add: index 2 is out of bounds for dimension 0 with size 2");
  EXPECT_FT_ERROR(scatter_add(x, 0, tensor(Ints{-2}, {1, 1}), src),
                  "scatter_add: index -2 is out of bounds for dimension 0 with size 2 (negative "
                  "indices are not supported)");
  EXPECT_FT_ERROR(scatter_add(x, 2, index, src), "scatter_add: dim 2 is out of range");
}

// ---------------------------------------------------------------------------------------
// take_along_dim

// TakeAlongDimOracle: out (shape b) at p reads x at p, with p[d] -> indices[p'] where each
// size-1 dim of x (except d) and of indices reads index 0 (broadcasting).
Doubles TakeAlongDimOracle(const Doubles& x, const Ints& xs, int64_t d, const Ints& idx,
                           const Ints& is, const Ints& b) {
  Doubles out(static_cast<size_t>(NumelOf(b)));
  for (size_t i = 0; i < out.size(); ++i) {
    const Ints p = Unravel(static_cast<int64_t>(i), b);
    Ints pi = p, px = p;
    for (size_t k = 0; k < b.size(); ++k) {
      if (is[k] == 1) pi[k] = 0;
      if (xs[k] == 1) px[k] = 0;
    }
    px[d] = idx[Ravel(pi, is)];
    out[i] = x[Ravel(px, xs)];
  }
  return out;
}

TEST(IndexKernelTakeAlongDimTest, BroadcastsEveryDimButTheTakenOne) {
  struct Case {
    Ints xs, is, b;
    int64_t dim;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {2, 5, 4}, {2, 5, 4}, 1},   // same shape but along d
      {{2, 3, 4}, {1, 5, 1}, {2, 5, 4}, 1},   // indices broadcast
      {{1, 3, 4}, {2, 2, 4}, {2, 2, 4}, 1},   // x broadcast
      {{2, 3, 1}, {1, 2, 5}, {2, 2, 5}, -2},  // both broadcast, negative dim
      {{2, 3, 4}, {2, 3, 2}, {2, 3, 2}, 2},  {{2, 3, 4}, {1, 1, 1}, {1, 3, 4}, 0},
  };
  for (DType dtype : {kFloat32, kInt64, kBool}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " x " << ShapeToString(c.xs)
                                        << " indices " << ShapeToString(c.is));
      const int64_t d = c.dim < 0 ? c.dim + 3 : c.dim;
      const Doubles xv = RandomValues(NumelOf(c.xs), dtype, 8);
      const Ints idx = RandomInts(NumelOf(c.is), 0, c.xs[d], 9);
      const Tensor expected =
          FromDoubles(TakeAlongDimOracle(xv, c.xs, d, idx, c.is, c.b), c.b, dtype);
      for (const auto& [name, xl] : Layouts(FromDoubles(xv, c.xs, dtype))) {
        for (const auto& [iname, il] : Layouts(tensor(idx, c.is))) {
          SCOPED_TRACE(name + " / " + iname);
          EXPECT_TENSOR_EQ(take_along_dim(xl, il, c.dim), expected);
        }
      }
    }
  }
}

TEST(IndexKernelTakeAlongDimTest, WithoutDimTakesFromTheFlattenedInput) {
  // x is a transposed [3, 4]; its row-major values are read, whatever the layout.
  const Doubles xv = RandomValues(12, kFloat64, 12);
  const Tensor x = FromDoubles(xv, {3, 4}, kFloat64);
  const Ints idx = {11, 0, 5, 5, 7, 2};
  const Doubles expected = {xv[11], xv[0], xv[5], xv[5], xv[7], xv[2]};
  for (const auto& [name, xl] : Layouts(x)) {
    for (const auto& [iname, il] : Layouts(tensor(idx, {2, 3}))) {
      SCOPED_TRACE(name + " / " + iname);
      const Tensor out = take_along_dim(xl, il, std::nullopt);
      EXPECT_TENSOR_EQ(out, tensor(expected, {6}));
    }
  }
  // Rank-0 indices give [1]; empty indices give [0].
  EXPECT_TENSOR_EQ(take_along_dim(x, scalar_tensor(int64_t{4}), std::nullopt),
                   tensor({xv[4]}, {1}));
  EXPECT_EQ(Vec(take_along_dim(x, tensor(Ints{}, {0, 2}), std::nullopt).sizes()), (Ints{0}));
  EXPECT_EQ(Vec(take_along_dim(zeros({0}), tensor(Ints{}, {0}), std::nullopt).sizes()), (Ints{0}));
}

TEST(IndexKernelTakeAlongDimTest, RankZeroAndEmpty) {
  const Tensor s = scalar_tensor(2.5, kFloat64);
  EXPECT_TENSOR_EQ(take_along_dim(s, scalar_tensor(int64_t{0}), 0), s);
  EXPECT_TENSOR_EQ(take_along_dim(s, scalar_tensor(int64_t{0}), -1), s);
  // An empty broadcast shape: no value is read, so none is checked.
  EXPECT_EQ(Vec(take_along_dim(zeros({0, 3}), tensor(Ints{9}, {1, 1}), 1).sizes()), (Ints{0, 1}));
  EXPECT_EQ(Vec(take_along_dim(zeros({2, 3}), tensor(Ints{}, {2, 0}), 1).sizes()), (Ints{2, 0}));
}

TEST(IndexKernelTakeAlongDimTest, Errors) {
  const Tensor x = zeros({2, 3});
  EXPECT_FT_ERROR(take_along_dim(x, zeros({2, 3}), 1),
                  "take_along_dim: expected an int64 indices tensor, got float32");
  EXPECT_FT_ERROR(take_along_dim(x, tensor(Ints{0}, {1}), 1),
                  "take_along_dim: input and indices must have the same number of dims, got "
                  "input shape [2, 3] and indices shape [1]");
  EXPECT_FT_ERROR(take_along_dim(x, tensor(Ints{0, 0, 0}, {3, 1}), 1),
                  "take_along_dim: shapes [2, 1] and [3, 1] cannot be broadcast together");
  EXPECT_FT_ERROR(take_along_dim(x, tensor(Ints{0, 3}, {1, 2}), 1),
                  "take_along_dim: index 3 is out of bounds for dimension 1 with size 3");
  EXPECT_FT_ERROR(take_along_dim(x, tensor(Ints{-1}, {1, 1}), 0),
                  "take_along_dim: index -1 is out of bounds for dimension 0 with size 2 "
                  "(negative indices are not supported)");
  EXPECT_FT_ERROR(take_along_dim(x, tensor(Ints{6}, {1}), std::nullopt),
                  "take_along_dim: index 6 is out of bounds for dimension 0 with size 6");
  EXPECT_FT_ERROR(take_along_dim(x, tensor(Ints{0}, {1, 1}), 2),
                  "take_along_dim: dim 2 is out of range");
}

// ---------------------------------------------------------------------------------------
// cat / stack

// CatOracle: the tensors (all of rank r, shapes in `shapes`) joined along d.
Doubles CatOracle(const std::vector<Doubles>& vals, const std::vector<Ints>& shapes, int64_t d,
                  const Ints& out_shape) {
  Doubles out(static_cast<size_t>(NumelOf(out_shape)));
  for (size_t i = 0; i < out.size(); ++i) {
    Ints p = Unravel(static_cast<int64_t>(i), out_shape);
    size_t k = 0;
    while (p[d] >= shapes[k][d]) p[d] -= shapes[k++][d];
    out[i] = vals[k][Ravel(p, shapes[k])];
  }
  return out;
}

TEST(IndexKernelCatTest, JoinsAlongEveryDimInEveryLayout) {
  for (int64_t dim : {0, 1, 2, -1}) {
    const int64_t d = dim < 0 ? dim + 3 : dim;
    std::vector<Ints> shapes;
    std::vector<Doubles> vals;
    for (int64_t k = 0; k < 3; ++k) {
      Ints s = {2, 3, 4};
      s[d] = k + 1;
      shapes.push_back(s);
      vals.push_back(RandomValues(NumelOf(s), kFloat64, 40 + static_cast<uint32_t>(k)));
    }
    Ints out_shape = {2, 3, 4};
    out_shape[d] = 6;
    const Tensor expected = tensor(CatOracle(vals, shapes, d, out_shape), out_shape);
    const Tensor a = tensor(vals[0], shapes[0]);
    const Tensor b = TransposedLayout(tensor(vals[1], shapes[1]));
    const Tensor c = ft::testing::NonContiguousCopy(tensor(vals[2], shapes[2]));
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    const Tensor out = cat({a, b, c}, dim);
    EXPECT_TENSOR_EQ(out, expected);
    EXPECT_TRUE(IsNewContiguous(out, a));
    // One tensor: a copy.
    const Tensor one = cat({a}, dim);
    EXPECT_TENSOR_EQ(one, a);
    EXPECT_TRUE(IsNewContiguous(one, a));
  }
}

TEST(IndexKernelCatTest, PromotesDTypes) {
  const Tensor i = tensor(Ints{1, 2}, {2});
  const Tensor f = tensor({0.5f}, {1});
  const Tensor d = tensor({0.25}, {1});
  const Tensor b = tensor(std::vector<bool>{true, false}, {2});
  EXPECT_TENSOR_EQ(cat({i, f}, 0), tensor({1.0f, 2.0f, 0.5f}, {3}));
  EXPECT_TENSOR_EQ(cat({f, d}, 0), tensor({0.5, 0.25}, {2}));
  EXPECT_TENSOR_EQ(cat({b, i}, 0), tensor(Ints{1, 0, 1, 2}, {4}));
  EXPECT_TENSOR_EQ(cat({b, b}, 0), tensor(std::vector<bool>{true, false, true, false}, {4}));
  EXPECT_TENSOR_EQ(cat({b, i, d}, 0), tensor({1.0, 0.0, 1.0, 2.0, 0.25}, {5}));
}

TEST(IndexKernelCatTest, SkipsLegacyEmptyVectorsAndJoinsEmptyTensors) {
  const Tensor m = tensor({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {2, 3});
  const Tensor e = zeros({0});
  // A 1-D [0] tensor is skipped whatever the others' shapes, and whatever the dim.
  EXPECT_TENSOR_EQ(cat({e, m, e}, 1), m);
  EXPECT_TENSOR_EQ(
      cat({m, e, m}, 0),
      tensor({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {4, 3}));
  // ... but still takes part in the dtype promotion.
  EXPECT_EQ(cat({m, zeros({0}, kFloat64)}, 0).dtype(), kFloat64);
  // Only skipped tensors: an empty [0].
  EXPECT_EQ(Vec(cat({e, e}, 0).sizes()), (Ints{0}));
  EXPECT_EQ(Vec(cat({e, e}, -1).sizes()), (Ints{0}));
  // Empty tensors of the right rank count (size 0 along the dim).
  EXPECT_TENSOR_EQ(cat({zeros({2, 0}), m}, 1), m);
  EXPECT_TENSOR_EQ(cat({zeros({0, 3}), m, zeros({0, 3})}, 0), m);
  EXPECT_EQ(Vec(cat({zeros({0, 3}), zeros({0, 3})}, 0).sizes()), (Ints{0, 3}));
}

TEST(IndexKernelCatTest, LargeInput) {
  const Ints s = {300, 256};
  const Doubles a = RandomValues(NumelOf(s), kFloat32, 50);
  const Doubles b = RandomValues(NumelOf(s), kFloat32, 51);
  const Tensor out =
      cat({FromDoubles(a, s, kFloat32), TransposedLayout(FromDoubles(b, s, kFloat32))}, 1);
  EXPECT_TENSOR_EQ(out,
                   FromDoubles(CatOracle({a, b}, {s, s}, 1, {300, 512}), {300, 512}, kFloat32));
}

TEST(IndexKernelCatTest, Errors) {
  EXPECT_FT_ERROR(cat({}, 0), "cat: expected a non-empty list of tensors");
  EXPECT_FT_ERROR(cat({zeros({2}), scalar_tensor(1.0f)}, 0),
                  "cat: tensor 1 is rank 0 and cannot be concatenated (use stack)");
  EXPECT_FT_ERROR(cat({zeros({1, 3}), zeros({2, 4})}, 0),
                  "cat: shapes must match except in dim 0, but tensor 1 has shape [2, 4] and "
                  "tensor 0 has shape [1, 3]");
  EXPECT_FT_ERROR(cat({zeros({0}), zeros({1, 3}), zeros({3})}, 0),
                  "cat: shapes must match except in dim 0, but tensor 2 has shape [3] and "
                  "tensor 1 has shape [1, 3]");
  EXPECT_FT_ERROR(cat({zeros({1, 3}), zeros({1, 3})}, 2),
                  "cat: dim 2 is out of range for a tensor of rank 2");
  // ft's rule when every tensor is skipped: the dim is checked against their rank 1.
  EXPECT_FT_ERROR(cat({zeros({0}), zeros({0})}, 1),
                  "cat: dim 1 is out of range for a tensor of rank 1");
}

TEST(IndexKernelStackTest, InsertsANewDimAtEveryPosition) {
  const Ints s = {2, 3};
  std::vector<Doubles> vals;
  for (uint32_t k = 0; k < 3; ++k) vals.push_back(RandomValues(6, kFloat64, 60 + k));
  const TensorList inputs = {tensor(vals[0], s), TransposedLayout(tensor(vals[1], s)),
                             ft::testing::NonContiguousCopy(tensor(vals[2], s))};
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    const int64_t d = dim < 0 ? dim + 3 : dim;
    Ints out_shape = s;
    out_shape.insert(out_shape.begin() + d, 3);
    Doubles expected(18);
    for (size_t i = 0; i < expected.size(); ++i) {
      Ints p = Unravel(static_cast<int64_t>(i), out_shape);
      const int64_t k = p[d];
      p.erase(p.begin() + d);
      expected[i] = vals[k][Ravel(p, s)];
    }
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    const Tensor out = stack(inputs, dim);
    EXPECT_TENSOR_EQ(out, tensor(expected, out_shape));
    EXPECT_TRUE(IsNewContiguous(out, inputs[0]));
  }
  // Rank-0 inputs give a vector; promotion; size-0 inputs.
  EXPECT_TENSOR_EQ(stack({scalar_tensor(int64_t{3}), scalar_tensor(0.5f)}, 0),
                   tensor({3.0f, 0.5f}, {2}));
  EXPECT_TENSOR_EQ(stack({scalar_tensor(true), scalar_tensor(int64_t{4})}, -1),
                   tensor(Ints{1, 4}, {2}));
  EXPECT_EQ(Vec(stack({zeros({0, 2}), zeros({0, 2})}, 1).sizes()), (Ints{0, 2, 2}));
}

TEST(IndexKernelStackTest, Errors) {
  EXPECT_FT_ERROR(stack({}, 0), "stack: expected a non-empty list of tensors");
  EXPECT_FT_ERROR(stack({zeros({2, 3}), zeros({3, 2})}, 0),
                  "stack: expected all tensors to have the same shape, but tensor 1 has shape "
                  "[3, 2] and tensor 0 has shape [2, 3]");
  EXPECT_FT_ERROR(stack({zeros({2, 3})}, 3),
                  "stack: dim 3 is out of range for stacking tensors of rank 2 (expected a dim "
                  "in [-3, 2])");
  EXPECT_FT_ERROR(stack({zeros({2, 3})}, -4), "stack: dim -4 is out of range");
  EXPECT_FT_ERROR(stack({scalar_tensor(1.0f)}, 1),
                  "stack: dim 1 is out of range for stacking tensors of rank 0");
}

// ---------------------------------------------------------------------------------------
// split / split_with_sizes / chunk

// ExpectPieces: each piece is a view of x's storage with x's strides, the hand-computed
// size along `d` and storage offset.
void ExpectPieces(const TensorList& pieces, const Tensor& x, int64_t d, const Ints& sizes,
                  const Ints& offsets) {
  ASSERT_EQ(pieces.size(), sizes.size());
  for (size_t k = 0; k < pieces.size(); ++k) {
    SCOPED_TRACE(::testing::Message() << "piece " << k);
    EXPECT_TRUE(pieces[k].storage().is_same(x.storage()));
    Ints expected = Vec(x.sizes());
    expected[d] = sizes[k];
    EXPECT_EQ(Vec(pieces[k].sizes()), expected);
    EXPECT_EQ(Vec(pieces[k].strides()), Vec(x.strides()));
    if (pieces[k].numel() > 0) {
      EXPECT_EQ(pieces[k].storage_offset(), offsets[k]);
    }
  }
}

TEST(IndexKernelSplitTest, PiecesAreViewsAtTheRightOffsets) {
  const Tensor x = FromDoubles(RandomValues(20, kFloat64, 70), {5, 4}, kFloat64);
  const TensorList rows = split(x, 2, 0);
  ExpectPieces(rows, x, 0, {2, 2, 1}, {0, 8, 16});
  const Doubles xv = x.to_vector<double>();
  EXPECT_TENSOR_EQ(rows[2], tensor(Doubles(xv.begin() + 16, xv.end()), {1, 4}));
  ExpectPieces(split(x, 3, -1), x, 1, {3, 1}, {0, 3});
  ExpectPieces(split(x, 7, 0), x, 0, {5}, {0});
  ExpectPieces(split(x, 1, 1), x, 1, {1, 1, 1, 1}, {0, 1, 2, 3});
  // Writes through a piece reach x; the pieces share x's version counter.
  const int64_t version = x.version();
  rows[1].data<double>()[0] = -1.0;
  EXPECT_EQ(x.to_vector<double>()[8], -1.0);
  rows[1].bump_version();
  EXPECT_EQ(x.version(), version + 1);
  EXPECT_EQ(rows[0].version(), version + 1);
  // A transposed input: the pieces keep its strides.
  const Tensor base = FromDoubles(RandomValues(12, kFloat64, 71), {4, 3}, kFloat64);
  const Tensor tr = Strided(base, {3, 4}, {1, 3}, 0);
  ExpectPieces(split(tr, 3, 1), tr, 1, {3, 1}, {0, 9});
  // Empty dims: one empty piece (also for split_size 0).
  const Tensor z = zeros({0, 3});
  EXPECT_EQ(split(z, 2, 0).size(), 1u);
  EXPECT_EQ(Vec(split(z, 0, 0)[0].sizes()), (Ints{0, 3}));
}

TEST(IndexKernelSplitTest, SplitWithSizesAndChunk) {
  const Tensor x = FromDoubles(RandomValues(15, kInt64, 72), {3, 5}, kInt64);
  ExpectPieces(split_with_sizes(x, {1, 0, 4}, 1), x, 1, {1, 0, 4}, {0, 1, 1});
  ExpectPieces(split_with_sizes(x, {3}, 0), x, 0, {3}, {0});
  ExpectPieces(split_with_sizes(x, {2, 1}, -2), x, 0, {2, 1}, {0, 10});
  // chunk: ceil(n / chunks) per piece; fewer pieces than chunks when they run out.
  ExpectPieces(chunk(x, 4, 1), x, 1, {2, 2, 1}, {0, 2, 4});
  ExpectPieces(chunk(x, 5, 1), x, 1, {1, 1, 1, 1, 1}, {0, 1, 2, 3, 4});
  ExpectPieces(chunk(x, 8, 0), x, 0, {1, 1, 1}, {0, 5, 10});
  ExpectPieces(chunk(x, 1, 0), x, 0, {3}, {0});
  ExpectPieces(chunk(x, 2, -1), x, 1, {3, 2}, {0, 3});
  // An empty dim splits into `chunks` empty pieces.
  const Tensor z = zeros({2, 0});
  ExpectPieces(chunk(z, 3, 1), z, 1, {0, 0, 0}, {0, 0, 0});
  // Bool and values.
  const Tensor b = tensor(std::vector<bool>{true, false, false, true}, {4});
  const TensorList bp = chunk(b, 2, 0);
  EXPECT_TENSOR_EQ(bp[1], tensor(std::vector<bool>{false, true}, {2}));
}

TEST(IndexKernelSplitTest, Errors) {
  const Tensor x = zeros({5, 2});
  const Tensor s = scalar_tensor(1.0f);
  EXPECT_FT_ERROR(split(s, 1, 0), "split: expected a tensor with at least one dim, got a rank-0");
  EXPECT_FT_ERROR(split(x, -1, 0), "split: split_size must be non-negative, got -1");
  EXPECT_FT_ERROR(split(x, 0, 0),
                  "split: split_size 0 is only allowed when the split dim is empty, but "
                  "dimension 0 has size 5");
  EXPECT_FT_ERROR(split(x, 1, 2), "split: dim 2 is out of range");
  EXPECT_FT_ERROR(split_with_sizes(s, {1}, 0),
                  "split_with_sizes: expected a tensor with at least one dim");
  EXPECT_FT_ERROR(split_with_sizes(x, {2, -1, 4}, 0),
                  "split_with_sizes: sizes [2, -1, 4] contain the negative size -1");
  EXPECT_FT_ERROR(split_with_sizes(x, {1, 2}, 0),
                  "split_with_sizes: sizes [1, 2] sum to 3 but dimension 0 has size 5");
  EXPECT_FT_ERROR(split_with_sizes(x, {kMax, kMax}, 0),
                  "split_with_sizes: sizes [9223372036854775807, 9223372036854775807] sum to "
                  "more than 2^63 but dimension 0 has size 5");
  EXPECT_FT_ERROR(split_with_sizes(x, {5}, -3), "split_with_sizes: dim -3 is out of range");
  EXPECT_FT_ERROR(chunk(s, 1, 0), "chunk: expected a tensor with at least one dim");
  EXPECT_FT_ERROR(chunk(x, 0, 0), "chunk: chunks must be positive, got 0");
  EXPECT_FT_ERROR(chunk(x, -2, 0), "chunk: chunks must be positive, got -2");
  EXPECT_FT_ERROR(chunk(x, 2, 2), "chunk: dim 2 is out of range");
  // More than 2^31 - 1 pieces is refused before the list is made (an empty dim for chunk; a
  // stride-0 dim that long for split).
  constexpr int64_t kPieces = int64_t{1} << 31;
  EXPECT_FT_ERROR(chunk(zeros({2, 0}), kPieces, 1),
                  "chunk: cannot split dimension 1 of shape [2, 0] into 2147483648 pieces (at "
                  "most 2147483647)");
  const Tensor long_dim = Strided(zeros({1}), {kPieces}, {0}, 0);
  EXPECT_FT_ERROR(split(long_dim, 1, 0),
                  "split: cannot split dimension 0 of shape [2147483648] into 2147483648 pieces");
}

// ---------------------------------------------------------------------------------------
// repeat

// RepeatOracle: out[p] = x[p[lead + i] mod xs[i]] with lead = rank(out) - rank(x).
Doubles RepeatOracle(const Doubles& x, const Ints& xs, const Ints& out_shape) {
  const size_t lead = out_shape.size() - xs.size();
  Doubles out(static_cast<size_t>(NumelOf(out_shape)));
  for (size_t i = 0; i < out.size(); ++i) {
    const Ints p = Unravel(static_cast<int64_t>(i), out_shape);
    Ints q(xs.size());
    for (size_t k = 0; k < xs.size(); ++k) q[k] = p[lead + k] % xs[k];
    out[i] = x[Ravel(q, xs)];
  }
  return out;
}

TEST(IndexKernelRepeatTest, TilesEveryDimInEveryLayoutAndDType) {
  const Ints xs = {2, 3};
  for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    const Doubles xv = RandomValues(6, dtype, 80);
    for (const Ints& repeats : std::vector<Ints>{{1, 1}, {2, 3}, {3, 1, 2}, {2, 1, 1, 4}}) {
      Ints out_shape = repeats;
      const size_t lead = repeats.size() - 2;
      out_shape[lead] *= 2;
      out_shape[lead + 1] *= 3;
      const Tensor expected = FromDoubles(RepeatOracle(xv, xs, out_shape), out_shape, dtype);
      for (const auto& [name, xl] : Layouts(FromDoubles(xv, xs, dtype))) {
        SCOPED_TRACE(::testing::Message()
                     << DTypeName(dtype) << " " << name << " repeats " << ShapeToString(repeats));
        const Tensor out = repeat(xl, repeats);
        EXPECT_TENSOR_EQ(out, expected);
        EXPECT_TRUE(IsNewContiguous(out, xl));
      }
    }
  }
  // Expanded input.
  const Tensor xe = Strided(tensor({1.0, 2.0}, {2}), {2, 2}, {0, 1}, 0);
  EXPECT_TENSOR_EQ(repeat(xe, {1, 2}), tensor({1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0}, {2, 4}));
}

TEST(IndexKernelRepeatTest, RankZeroZeroRepeatsAndLarge) {
  const Tensor s = scalar_tensor(4.0, kFloat64);
  const Tensor s0 = repeat(s, {});
  EXPECT_TENSOR_EQ(s0, s);
  EXPECT_TRUE(IsNewContiguous(s0, s));
  EXPECT_TENSOR_EQ(repeat(s, {3}), tensor({4.0, 4.0, 4.0}, {3}));
  EXPECT_TENSOR_EQ(repeat(s, {2, 1}), tensor({4.0, 4.0}, {2, 1}));
  EXPECT_EQ(Vec(repeat(tensor({1.0, 2.0}, {2}), {3, 0}).sizes()), (Ints{3, 0}));
  EXPECT_EQ(Vec(repeat(zeros({0, 2}), {2, 2}).sizes()), (Ints{0, 4}));
  // Past the threading threshold.
  const Doubles xv = RandomValues(600, kFloat32, 81);
  const Tensor out = repeat(FromDoubles(xv, {20, 30}, kFloat32), {4, 30});
  EXPECT_TENSOR_EQ(out, FromDoubles(RepeatOracle(xv, {20, 30}, {80, 900}), {80, 900}, kFloat32));
}

TEST(IndexKernelRepeatTest, Errors) {
  EXPECT_FT_ERROR(repeat(zeros({2, 3}), {2}),
                  "repeat: got 1 repeats [2] but need at least one per dim of the input (shape "
                  "[2, 3], rank 2)");
  EXPECT_FT_ERROR(repeat(zeros({2, 3}), {2, -1}),
                  "repeat: repeats [2, -1] contain the negative value -1");
  EXPECT_FT_ERROR(repeat(zeros({2}), {kMax}),
                  "repeat: repeating dim 0 of size 2 9223372036854775807 times overflows int64");
}

// ---------------------------------------------------------------------------------------
// pad

// PadOracle: out[p] = x[p[d] - left_d ...] when every such index is inside x, else value.
// pads pair up from the last dim backwards.
Doubles PadOracle(const Doubles& x, const Ints& xs, const Ints& pads, double value,
                  Ints* out_shape) {
  const size_t r = xs.size();
  Ints lefts(r, 0);
  *out_shape = xs;
  for (size_t p = 0; p < pads.size() / 2; ++p) {
    const size_t d = r - 1 - p;
    lefts[d] = pads[2 * p];
    (*out_shape)[d] = xs[d] + pads[2 * p] + pads[2 * p + 1];
  }
  Doubles out(static_cast<size_t>(NumelOf(*out_shape)));
  for (size_t i = 0; i < out.size(); ++i) {
    Ints q = Unravel(static_cast<int64_t>(i), *out_shape);
    bool inside = true;
    for (size_t d = 0; d < r; ++d) {
      q[d] -= lefts[d];
      inside = inside && q[d] >= 0 && q[d] < xs[d];
    }
    out[i] = inside ? x[Ravel(q, xs)] : value;
  }
  return out;
}

TEST(IndexKernelPadTest, PadsAndCropsAgainstLoop) {
  const Ints xs = {3, 4};
  const std::vector<Ints> pad_cases = {
      {},      {1, 2},  {0, 0, 2, 1},  {-1, 2}, {2, -1},          {-1, -2, 1, 0}, {-4, 1},
      {3, -4}, {3, -2}, {1, 1, -3, 0}, {0, -4}, {-2, -2, -1, -2}, {5, 0, 0, 5},
  };
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    const Doubles xv = RandomValues(12, dtype, 90);
    for (const Ints& pads : pad_cases) {
      Ints out_shape;
      const Tensor expected =
          FromDoubles(PadOracle(xv, xs, pads, 7.0, &out_shape), out_shape, dtype);
      for (const auto& [name, xl] : Layouts(FromDoubles(xv, xs, dtype))) {
        SCOPED_TRACE(::testing::Message()
                     << DTypeName(dtype) << " " << name << " pads " << ShapeToString(pads));
        const Tensor out = pad(xl, pads, 7);
        EXPECT_TENSOR_EQ(out, expected);
        EXPECT_TRUE(IsNewContiguous(out, xl));
      }
    }
  }
}

TEST(IndexKernelPadTest, ValueConversionRankZeroEmptyAndLarge) {
  // The value converts to x's dtype (truncated for int64, != 0 for bool).
  EXPECT_TENSOR_EQ(pad(tensor(Ints{1, 2}, {2}), {1, 1}, 2.9), tensor(Ints{2, 1, 2, 2}, {4}));
  EXPECT_TENSOR_EQ(pad(tensor(std::vector<bool>{false}, {1}), {1, 0}, true),
                   tensor(std::vector<bool>{true, false}, {2}));
  EXPECT_TENSOR_EQ(pad(tensor({1.0f}, {1}), {0, 1}, 0.1), tensor({1.0f, 0.1f}, {2}));
  // Rank 0 with no pads: a copy.
  const Tensor s = scalar_tensor(3.0, kFloat64);
  EXPECT_TENSOR_EQ(pad(s, {}, 0), s);
  // Empty input padded; padding to an empty output.
  EXPECT_TENSOR_EQ(pad(zeros({0}, kFloat64), {1, 1}, -1.5), tensor({-1.5, -1.5}, {2}));
  EXPECT_TENSOR_EQ(pad(zeros({2, 0}, kFloat64), {1, 0}, 5), tensor({5.0, 5.0}, {2, 1}));
  EXPECT_EQ(Vec(pad(zeros({3}), {-1, -2}, 0).sizes()), (Ints{0}));
  EXPECT_EQ(Vec(pad(zeros({0, 3}), {1, 1}, 0).sizes()), (Ints{0, 5}));
  // Past the threading threshold.
  const Doubles xv = RandomValues(70000, kFloat32, 91);
  Ints out_shape;
  const Doubles expected = PadOracle(xv, {280, 250}, {3, -2, -1, 4}, 0.5, &out_shape);
  EXPECT_TENSOR_EQ(pad(FromDoubles(xv, {280, 250}, kFloat32), {3, -2, -1, 4}, 0.5),
                   FromDoubles(expected, out_shape, kFloat32));
}

TEST(IndexKernelPadTest, Errors) {
  EXPECT_FT_ERROR(pad(zeros({3}), {1, 2, 3}, 0),
                  "pad: padding [1, 2, 3] must have an even length, got 3 values");
  EXPECT_FT_ERROR(pad(zeros({3}), {1, 1, 1, 1}, 0),
                  "pad: padding [1, 1, 1, 1] has 2 (left, right) pairs but the input has only 1 "
                  "dims (shape [3])");
  EXPECT_FT_ERROR(pad(scalar_tensor(1.0f), {0, 0}, 0), "pad: padding [0, 0] has 1 (left, right)");
  EXPECT_FT_ERROR(pad(zeros({3}), {-2, -2}, 0),
                  "pad: padding (-2, -2) of dim 0 (size 3) gives the negative size -1");
  EXPECT_FT_ERROR(pad(zeros({3}), {kMax, 1}, 0),
                  "pad: padding (9223372036854775807, 1) of dim 0 overflows int64");
  EXPECT_FT_ERROR(pad(zeros({3}), {kMin, 1}, 0),
                  "pad: padding (-9223372036854775808, 1) of dim 0 overflows int64");
}

// ---------------------------------------------------------------------------------------
// one_hot

Tensor OneHotOracle(const Ints& idx, const Ints& shape, int64_t classes) {
  Ints out;
  for (int64_t v : idx) {
    for (int64_t c = 0; c < classes; ++c) out.push_back(v == c ? 1 : 0);
  }
  Ints out_shape = shape;
  out_shape.push_back(classes);
  return tensor(out, out_shape);
}

TEST(IndexKernelOneHotTest, ExplicitAndInferredClassesInEveryLayout) {
  const Ints idx = {2, 0, 3, 3, 1, 0};
  for (const auto& [name, il] : Layouts(tensor(idx, {2, 3}))) {
    SCOPED_TRACE(name);
    EXPECT_TENSOR_EQ(one_hot(il, 5), OneHotOracle(idx, {2, 3}, 5));
    EXPECT_TENSOR_EQ(one_hot(il, -1), OneHotOracle(idx, {2, 3}, 4));
    EXPECT_TENSOR_EQ(one_hot(il, 4), OneHotOracle(idx, {2, 3}, 4));
  }
  // Expanded indices (stride 0).
  const Tensor ie = Strided(tensor(Ints{1}, {1}), {3}, {0}, 0);
  EXPECT_TENSOR_EQ(one_hot(ie, 2), OneHotOracle({1, 1, 1}, {3}, 2));
  // Rank 0 and empty.
  EXPECT_TENSOR_EQ(one_hot(scalar_tensor(int64_t{2}), 3), tensor(Ints{0, 0, 1}, {3}));
  EXPECT_TENSOR_EQ(one_hot(scalar_tensor(int64_t{0}), -1), tensor(Ints{1}, {1}));
  EXPECT_EQ(Vec(one_hot(tensor(Ints{}, {0}), 3).sizes()), (Ints{0, 3}));
  EXPECT_EQ(Vec(one_hot(tensor(Ints{}, {2, 0}), 0).sizes()), (Ints{2, 0, 0}));
}

TEST(IndexKernelOneHotTest, Errors) {
  EXPECT_FT_ERROR(one_hot(zeros({2}), 3), "one_hot: expected an int64 indices tensor, got float32");
  EXPECT_FT_ERROR(one_hot(tensor(Ints{0}, {1}), -2),
                  "one_hot: num_classes must be -1 (infer) or non-negative, got -2");
  EXPECT_FT_ERROR(one_hot(tensor(Ints{}, {0}), -1),
                  "one_hot: cannot infer num_classes from an empty tensor (shape [0])");
  EXPECT_FT_ERROR(one_hot(tensor(Ints{1, -1}, {2}), -1),
                  "one_hot: class values must be non-negative, got -1");
  EXPECT_FT_ERROR(one_hot(tensor(Ints{kMax}, {1}), -1),
                  "one_hot: class value 9223372036854775807 is too large to infer num_classes");
  EXPECT_FT_ERROR(one_hot(tensor(Ints{0, 3}, {2}), 3),
                  "one_hot: class value 3 is out of range [0, 3) for num_classes 3");
  EXPECT_FT_ERROR(one_hot(tensor(Ints{-1}, {1}), 3), "one_hot: class value -1 is out of range");
  EXPECT_FT_ERROR(one_hot(tensor(Ints{0}, {1}), 0),
                  "one_hot: class value 0 is out of range [0, 0)");
}

}  // namespace
}  // namespace ft::kernels

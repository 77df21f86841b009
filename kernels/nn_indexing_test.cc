// Tests of the model indexing kernels (kernels/nn_indexing.h) on dense tensors: embedding,
// masked_fill, index_add, tril, triu, roll, pixel_shuffle, pixel_unshuffle, gather_nd and
// index_put_nd, and their shape checks (EmbeddingCheck, MaskedFillCheck, IndexAddCheck,
// TriangleCheck, RollCheck, PixelShuffleCheck, PixelUnshuffleCheck, GatherNdCheck,
// IndexPutNdCheck): every dtype, contiguous / stride-2 / transposed / expanded inputs, rank 0,
// size-0 dims, broadcasting, inputs past the threading threshold, and every documented error.
//
// Oracles: hand-written index loops in double precision over to_vector<double>() values,
// following the formulas of ops/nn_indexing.h (e.g. pixel_shuffle's
// out[c, h r + i, w r + j] = x[c r^2 + i r + j, h, w]), and hand-worked small examples.
#include "kernels/nn_indexing.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
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

// Converted: v as an element of `dtype` (truncation for int64, != 0 for bool), back in double.
double Converted(double v, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return static_cast<float>(v);
    case DType::kFloat64:
      return v;
    case DType::kInt64:
      return std::trunc(v);
    case DType::kBool:
      return v != 0;
    default:
      break;  // the dtypes these tests do not draw
  }
  return v;
}

const DType kAllDTypes[] = {kFloat32, kFloat64, kInt64, kBool};

// ---------------------------------------------------------------------------------------
// embedding

TEST(NnIndexingKernelEmbeddingTest, LooksUpRowsInEveryLayoutAndDType) {
  const Ints ws = {5, 4};
  const Ints is = {2, 3};
  const Ints idx = {4, 0, 2, 2, 1, 4};
  for (DType dtype : kAllDTypes) {
    const Doubles wv = RandomValues(20, dtype, 1);
    Doubles expected;
    for (int64_t i : idx) {
      for (int64_t j = 0; j < 4; ++j) expected.push_back(wv[i * 4 + j]);
    }
    const Tensor want = FromDoubles(expected, {2, 3, 4}, dtype);
    for (const auto& [wname, wl] : Layouts(FromDoubles(wv, ws, dtype))) {
      for (const auto& [iname, il] : Layouts(tensor(idx, is))) {
        for (std::optional<int64_t> padding_idx :
             std::vector<std::optional<int64_t>>{std::nullopt, 2, -1}) {
          SCOPED_TRACE(::testing::Message()
                       << DTypeName(dtype) << " weight " << wname << " input " << iname
                       << " padding_idx " << padding_idx.value_or(-99));
          const Tensor out = embedding(il, wl, padding_idx);
          EXPECT_TENSOR_EQ(out, want);
          EXPECT_TRUE(IsNewContiguous(out, wl));
        }
      }
    }
  }
}

TEST(NnIndexingKernelEmbeddingTest, HeaderExampleRankZeroAndEmpty) {
  const Tensor w = tensor({0.0, 1.0, 2.0, 3.0, 4.0, 5.0}, {3, 2});
  EXPECT_TENSOR_EQ(embedding(tensor(Ints{2, 0}, {2}), w, std::nullopt),
                   tensor({4.0, 5.0, 0.0, 1.0}, {2, 2}));
  EXPECT_TENSOR_EQ(embedding(scalar_tensor(int64_t{1}), w, std::nullopt), tensor({2.0, 3.0}, {2}));
  // Expanded input (one index repeated with stride 0).
  const Tensor ie = Strided(tensor(Ints{2}, {1}), {2, 2}, {0, 0}, 0);
  EXPECT_TENSOR_EQ(embedding(ie, w, std::nullopt),
                   tensor({4.0, 5.0, 4.0, 5.0, 4.0, 5.0, 4.0, 5.0}, {2, 2, 2}));
  EXPECT_EQ(Vec(embedding(tensor(Ints{}, {0}), w, std::nullopt).sizes()), (Ints{0, 2}));
  EXPECT_EQ(Vec(embedding(tensor(Ints{}, {2, 0}), w, std::nullopt).sizes()), (Ints{2, 0, 2}));
  EXPECT_EQ(Vec(embedding(tensor(Ints{1, 2}, {2}), zeros({3, 0}), std::nullopt).sizes()),
            (Ints{2, 0}));
  EXPECT_EQ(Vec(embedding(tensor(Ints{}, {0}), zeros({0, 3}), std::nullopt).sizes()), (Ints{0, 3}));
}

TEST(NnIndexingKernelEmbeddingTest, EmbeddingCheckAndErrors) {
  EXPECT_EQ(Vec(EmbeddingCheck({2, 3}, kInt64, {5, 4}, std::nullopt)), (Ints{2, 3, 4}));
  EXPECT_EQ(Vec(EmbeddingCheck({}, kInt64, {5, 4}, -5)), (Ints{4}));
  EXPECT_EQ(Vec(EmbeddingCheck({0}, kInt64, {5, 4}, 4)), (Ints{0, 4}));
  EXPECT_FT_ERROR(EmbeddingCheck({2}, kFloat32, {5, 4}, std::nullopt),
                  "embedding: expected an int64 input (indices) tensor, got float32 of shape [2]");
  EXPECT_FT_ERROR(EmbeddingCheck({2}, kInt64, {5}, std::nullopt),
                  "embedding: weight must be 2-D [num_embeddings, embedding_dim], got shape [5]");
  EXPECT_FT_ERROR(EmbeddingCheck({2}, kInt64, {5, 4}, 5),
                  "embedding: padding_idx 5 must be within num_embeddings 5 (in [-5, 5))");
  EXPECT_FT_ERROR(EmbeddingCheck({2}, kInt64, {5, 4}, -6),
                  "embedding: padding_idx -6 must be within num_embeddings 5");
  const Tensor w = zeros({5, 4});
  EXPECT_FT_ERROR(embedding(zeros({2}), w, std::nullopt),
                  "embedding: expected an int64 input (indices) tensor");
  EXPECT_FT_ERROR(embedding(tensor(Ints{0}, {1}), zeros({5, 4, 1}), std::nullopt),
                  "embedding: weight must be 2-D");
  EXPECT_FT_ERROR(embedding(tensor(Ints{0}, {1}), w, 7), "embedding: padding_idx 7 must be");
  EXPECT_FT_ERROR(embedding(tensor(Ints{0, 5}, {2}), w, std::nullopt),
                  "embedding: index 5 is out of range for an embedding table of 5 rows (weight "
                  "shape [5, 4])");
  EXPECT_FT_ERROR(embedding(tensor(Ints{-1}, {1}), w, std::nullopt),
                  "embedding: index -1 is out of range for an embedding table of 5 rows");
}

// ---------------------------------------------------------------------------------------
// masked_fill

// MaskedFillOracle: out (broadcast shape b) = mask ? value : x, both read with broadcasting.
Doubles MaskedFillOracle(const Doubles& x, const Ints& xs, const Doubles& mask, const Ints& ms,
                         double value, const Ints& b) {
  auto read = [&b](const Doubles& v, const Ints& s, const Ints& p) {
    Ints q(s.size());
    const size_t lead = b.size() - s.size();
    for (size_t k = 0; k < s.size(); ++k) q[k] = s[k] == 1 ? 0 : p[lead + k];
    return v[Ravel(q, s)];
  };
  Doubles out(static_cast<size_t>(NumelOf(b)));
  for (size_t i = 0; i < out.size(); ++i) {
    const Ints p = Unravel(static_cast<int64_t>(i), b);
    out[i] = read(mask, ms, p) != 0 ? value : read(x, xs, p);
  }
  return out;
}

TEST(NnIndexingKernelMaskedFillTest, BroadcastsAndConvertsTheValue) {
  struct Case {
    Ints xs, ms, b;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {2, 3}, {2, 3}},       {{2, 3}, {3}, {2, 3}}, {{3}, {2, 3}, {2, 3}},
      {{2, 1, 3}, {4, 1}, {2, 4, 3}}, {{}, {2}, {2}},        {{2, 2}, {}, {2, 2}},
      {{0, 3}, {3}, {0, 3}},
  };
  for (DType dtype : kAllDTypes) {
    for (const Case& c : cases) {
      const Doubles xv = RandomValues(NumelOf(c.xs), dtype, 10);
      const Doubles mv = RandomValues(NumelOf(c.ms), kBool, 11);
      // A float64 value 2.7 (truncated to 2 for int64, true for bool).
      const Tensor value = scalar_tensor(2.7, kFloat64);
      const Tensor want =
          FromDoubles(MaskedFillOracle(xv, c.xs, mv, c.ms, Converted(2.7, dtype), c.b), c.b, dtype);
      for (const auto& [xname, xl] : Layouts(FromDoubles(xv, c.xs, dtype))) {
        for (const auto& [mname, ml] : Layouts(FromDoubles(mv, c.ms, kBool))) {
          SCOPED_TRACE(::testing::Message()
                       << DTypeName(dtype) << " x " << ShapeToString(c.xs) << " " << xname
                       << " mask " << ShapeToString(c.ms) << " " << mname);
          const Tensor out = masked_fill(xl, ml, value);
          EXPECT_TENSOR_EQ(out, want);
          EXPECT_TRUE(IsNewContiguous(out, xl));
        }
      }
    }
  }
  // Value dtypes other than x's: int64 and bool into float32, float32 into float64.
  const Tensor x = tensor({5.0f, 2.0f}, {2});
  const Tensor m = tensor(std::vector<bool>{true, false}, {2});
  EXPECT_TENSOR_EQ(masked_fill(x, m, scalar_tensor(int64_t{-3})), tensor({-3.0f, 2.0f}, {2}));
  EXPECT_TENSOR_EQ(masked_fill(x, m, scalar_tensor(true)), tensor({1.0f, 2.0f}, {2}));
  EXPECT_TENSOR_EQ(masked_fill(tensor({1.0, 2.0}, {2}), m, scalar_tensor(0.1f)),
                   tensor({static_cast<double>(0.1f), 2.0}, {2}));
  // Nothing masked: still a new tensor.
  const Tensor none = tensor(std::vector<bool>{false, false}, {2});
  const Tensor same = masked_fill(x, none, scalar_tensor(9.0f));
  EXPECT_TENSOR_EQ(same, x);
  EXPECT_TRUE(IsNewContiguous(same, x));
}

TEST(NnIndexingKernelMaskedFillTest, LargeInput) {
  const Ints s = {300, 250};
  const Doubles xv = RandomValues(75000, kFloat32, 12);
  const Doubles mv = RandomValues(75000, kBool, 13);
  const Tensor out =
      masked_fill(FromDoubles(xv, s, kFloat32), FromDoubles(mv, s, kBool), scalar_tensor(0.5f));
  EXPECT_TENSOR_EQ(out, FromDoubles(MaskedFillOracle(xv, s, mv, s, 0.5, s), s, kFloat32));
  // Broadcast mask row over a transposed x.
  const Doubles rv = RandomValues(250, kBool, 14);
  const Tensor out2 = masked_fill(TransposedLayout(FromDoubles(xv, s, kFloat32)),
                                  FromDoubles(rv, {250}, kBool), scalar_tensor(-1.0f));
  EXPECT_TENSOR_EQ(out2, FromDoubles(MaskedFillOracle(xv, s, rv, {250}, -1.0, s), s, kFloat32));
}

TEST(NnIndexingKernelMaskedFillTest, MaskedFillCheckAndErrors) {
  EXPECT_EQ(Vec(MaskedFillCheck({2, 3}, {3}, kBool, {})), (Ints{2, 3}));
  EXPECT_EQ(Vec(MaskedFillCheck({3}, {2, 1}, kBool, {})), (Ints{2, 3}));
  EXPECT_EQ(Vec(MaskedFillCheck({}, {}, kBool, {})), (Ints{}));
  EXPECT_FT_ERROR(MaskedFillCheck({3}, {3}, kInt64, {}),
                  "masked_fill: expected a bool mask, got int64 of shape [3]");
  EXPECT_FT_ERROR(MaskedFillCheck({3}, {3}, kBool, {1}),
                  "masked_fill: value must be a 0-dim tensor, got shape [1]");
  EXPECT_FT_ERROR(MaskedFillCheck({2, 3}, {2}, kBool, {}),
                  "masked_fill: shapes [2, 3] and [2] cannot be broadcast together");
  const Tensor x = zeros({2, 3});
  EXPECT_FT_ERROR(masked_fill(x, zeros({2, 3}), scalar_tensor(1.0f)),
                  "masked_fill: expected a bool mask, got float32");
  EXPECT_FT_ERROR(masked_fill(x, tensor(std::vector<bool>{true}, {1}), zeros({1})),
                  "masked_fill: value must be a 0-dim tensor, got shape [1]");
  EXPECT_FT_ERROR(masked_fill(x, tensor(std::vector<bool>{true, true}, {2}), scalar_tensor(1.0f)),
                  "masked_fill: shapes [2, 3] and [2] cannot be broadcast together");
}

// ---------------------------------------------------------------------------------------
// index_add

// IndexAddOracle: out = x; for every position q of source (row-major), out[q with
// q[d] -> index[q[d]]] += alpha * source[q]; for bool, alpha * source is a logical and and
// the addition a logical or.
Doubles IndexAddOracle(Doubles out, const Ints& xs, int64_t d, const Ints& index,
                       const Doubles& src, const Ints& ss, double alpha, bool logical) {
  for (size_t i = 0; i < src.size(); ++i) {
    Ints q = Unravel(static_cast<int64_t>(i), ss);
    q[d] = index[q[d]];
    double& dst = out[Ravel(q, xs)];
    dst = logical ? (dst != 0 || (alpha != 0 && src[i] != 0)) : dst + alpha * src[i];
  }
  return out;
}

TEST(NnIndexingKernelIndexAddTest, EveryDimDTypeAlphaAndLayoutAgainstLoop) {
  const Ints xs = {3, 4, 5};
  struct Alpha {
    DType dtype;
    Scalar alpha;
    double converted;  // alpha converted to the dtype (ops/nn_indexing.h)
  };
  const std::vector<Alpha> alphas = {
      {kFloat64, 2.5, 2.5}, {kFloat64, 1, 1.0},   {kFloat32, 1, 1.0}, {kFloat32, -0.5, -0.5},
      {kFloat32, 1.0, 1.0}, {kInt64, 3, 3.0},     {kInt64, 2.9, 2.0}, {kInt64, 1, 1.0},
      {kBool, 1, 1.0},      {kBool, true, 1.0},   {kBool, 2, 1.0},    {kBool, 0, 0.0},
      {kInt64, 0, 0.0},     {kFloat64, -1, -1.0},
  };
  for (const Alpha& a : alphas) {
    const Doubles xv = RandomValues(60, a.dtype, 20);
    for (int64_t dim : {0, 1, 2, -1}) {
      const int64_t d = dim < 0 ? dim + 3 : dim;
      const Ints index = RandomInts(6, 0, xs[d], 21 + static_cast<uint32_t>(d));  // repeats
      Ints ss = xs;
      ss[d] = 6;
      const Doubles sv = RandomValues(NumelOf(ss), a.dtype, 22);
      const Doubles expected =
          IndexAddOracle(xv, xs, d, index, sv, ss, a.converted, a.dtype == kBool);
      const Tensor want = FromDoubles(expected, xs, a.dtype);
      for (const auto& [xname, xl] : Layouts(FromDoubles(xv, xs, a.dtype))) {
        for (const auto& [iname, il] : Layouts(tensor(index, {6}))) {
          for (const auto& [sname, sl] : Layouts(FromDoubles(sv, ss, a.dtype))) {
            SCOPED_TRACE(::testing::Message()
                         << DTypeName(a.dtype) << " alpha " << a.alpha.ToString() << " dim " << dim
                         << " x " << xname << " index " << iname << " source " << sname);
            const Tensor out = index_add(xl, dim, il, sl, a.alpha);
            if (a.dtype == kFloat32) {
              EXPECT_TENSOR_NEAR(out, want, 1e-5);
            } else {
              EXPECT_TENSOR_EQ(out, want);
            }
            EXPECT_TRUE(IsNewContiguous(out, xl));
          }
        }
      }
    }
  }
}

TEST(NnIndexingKernelIndexAddTest, RankZeroEmptyWrapAndLarge) {
  // Repeated indices accumulate (a hand-worked case).
  EXPECT_TENSOR_EQ(index_add(zeros({3}, kFloat64), 0, tensor(Ints{0, 0, 2}, {3}),
                             tensor({1.0, 2.0, 4.0}, {3}), 1),
                   tensor({3.0, 0.0, 4.0}, {3}));
  // Rank 0 counts as [1]: x, source and index may each be rank 0.
  const Tensor s = scalar_tensor(1.5, kFloat64);
  EXPECT_TENSOR_EQ(index_add(s, 0, scalar_tensor(int64_t{0}), scalar_tensor(2.0, kFloat64), 2),
                   scalar_tensor(5.5, kFloat64));
  EXPECT_TENSOR_EQ(index_add(s, -1, tensor(Ints{0}, {1}), tensor({2.0}, {1}), 1),
                   scalar_tensor(3.5, kFloat64));
  EXPECT_TENSOR_EQ(
      index_add(tensor({1.0, 2.0}, {2}), 0, scalar_tensor(int64_t{1}), tensor({5.0}, {1}), 1),
      tensor({1.0, 7.0}, {2}));
  // Empty index: a copy of x.
  const Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  const Tensor same = index_add(x, 0, tensor(Ints{}, {0}), zeros({0, 2}, kFloat64), 2.0);
  EXPECT_TENSOR_EQ(same, x);
  EXPECT_TRUE(IsNewContiguous(same, x));
  // int64 wraps around like PyTorch.
  EXPECT_TENSOR_EQ(
      index_add(tensor(Ints{kMax, 0}, {2}), 0, tensor(Ints{0}, {1}), tensor(Ints{1}, {1}), 1),
      tensor(Ints{kMin, 0}, {2}));
  // Expanded source.
  const Tensor se = Strided(tensor({1.0, 10.0}, {2}), {3, 2}, {0, 1}, 0);
  EXPECT_TENSOR_EQ(index_add(zeros({2, 2}, kFloat64), 0, tensor(Ints{1, 1, 0}, {3}), se, 1),
                   tensor({1.0, 10.0, 2.0, 20.0}, {2, 2}));
  // Past the threading threshold (alpha != 1 multiplies the source first).
  const Ints xs = {300, 250};
  const Ints ss = {280, 250};
  const Doubles xv = RandomValues(NumelOf(xs), kFloat32, 23);
  const Doubles sv = RandomValues(NumelOf(ss), kFloat32, 24);
  const Ints index = RandomInts(280, 0, 300, 25);
  const Tensor out = index_add(FromDoubles(xv, xs, kFloat32), 0, tensor(index, {280}),
                               FromDoubles(sv, ss, kFloat32), 2.5);
  EXPECT_TENSOR_NEAR(
      out, FromDoubles(IndexAddOracle(xv, xs, 0, index, sv, ss, 2.5, false), xs, kFloat32), 1e-4);
}

TEST(NnIndexingKernelIndexAddTest, IndexAddCheckAndErrors) {
  EXPECT_EQ(IndexAddCheck({3, 4}, kFloat32, 0, {2}, kInt64, {2, 4}, kFloat32), 0);
  EXPECT_EQ(IndexAddCheck({3, 4}, kFloat32, -1, {}, kInt64, {3, 1}, kFloat32), 1);
  EXPECT_EQ(IndexAddCheck({}, kFloat64, 0, {1}, kInt64, {}, kFloat64), 0);
  EXPECT_EQ(IndexAddCheck({}, kFloat64, -1, {}, kInt64, {1}, kFloat64), 0);
  EXPECT_FT_ERROR(IndexAddCheck({3}, kFloat32, 0, {1}, kFloat32, {1}, kFloat32),
                  "index_add: expected an int64 index tensor, got float32 of shape [1]");
  EXPECT_FT_ERROR(IndexAddCheck({3}, kFloat32, 0, {1, 2}, kInt64, {2}, kFloat32),
                  "index_add: index must be a rank-0 or 1-D tensor, got shape [1, 2]");
  EXPECT_FT_ERROR(IndexAddCheck({3}, kFloat32, 0, {1}, kInt64, {1}, kFloat64),
                  "index_add: source dtype float64 must match the input dtype float32");
  EXPECT_FT_ERROR(IndexAddCheck({3, 4}, kFloat32, 2, {1}, kInt64, {1, 4}, kFloat32),
                  "index_add: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(IndexAddCheck({3, 4}, kFloat32, 0, {1}, kInt64, {4}, kFloat32),
                  "index_add: source must have the input's number of dims, got source shape [4] "
                  "and input shape [3, 4]");
  EXPECT_FT_ERROR(IndexAddCheck({3, 4}, kFloat32, 0, {2}, kInt64, {3, 4}, kFloat32),
                  "index_add: the number of indices (2) must equal source.size(0) (3), source "
                  "shape [3, 4]");
  EXPECT_FT_ERROR(IndexAddCheck({3, 4}, kFloat32, 0, {2}, kInt64, {2, 5}, kFloat32),
                  "index_add: source shape [2, 5] must match input shape [3, 4] in every dim but "
                  "0 (dim 1: 5 != 4)");
  const Tensor x = zeros({3, 4});
  EXPECT_FT_ERROR(index_add(x, 0, tensor(Ints{0, 3}, {2}), zeros({2, 4}), 1),
                  "index_add: index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_FT_ERROR(index_add(x, -1, tensor(Ints{-1}, {1}), zeros({3, 1}), 1),
                  "index_add: index -1 is out of bounds for dimension 1 with size 4");
  EXPECT_FT_ERROR(index_add(x, 0, tensor(Ints{0}, {1}), zeros({1, 4}, kFloat64), 1),
                  "index_add: source dtype float64 must match the input dtype float32");
}

// ---------------------------------------------------------------------------------------
// tril / triu

TEST(NnIndexingKernelTriangleTest, KeepsTheTriangleInEveryLayoutAndDType) {
  const Ints xs = {2, 3, 4};
  const std::vector<int64_t> diagonals = {-4, -3, -1, 0, 1, 2, 3, 4, 100, kMax, kMin};
  for (DType dtype : kAllDTypes) {
    const Doubles xv = RandomValues(24, dtype, 30);
    for (int64_t k : diagonals) {
      Doubles lower(24), upper(24);
      for (size_t i = 0; i < 24; ++i) {
        const Ints p = Unravel(static_cast<int64_t>(i), xs);
        const int64_t off = p[2] - p[1];
        lower[i] = off <= k ? xv[i] : 0.0;
        upper[i] = off >= k ? xv[i] : 0.0;
      }
      for (const auto& [name, xl] : Layouts(FromDoubles(xv, xs, dtype))) {
        SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " " << name << " diagonal " << k);
        const Tensor lo = tril(xl, k);
        const Tensor up = triu(xl, k);
        EXPECT_TENSOR_EQ(lo, FromDoubles(lower, xs, dtype));
        EXPECT_TENSOR_EQ(up, FromDoubles(upper, xs, dtype));
        EXPECT_TRUE(IsNewContiguous(lo, xl));
        EXPECT_TRUE(IsNewContiguous(up, xl));
      }
    }
  }
}

TEST(NnIndexingKernelTriangleTest, HandWorkedExpandedAndEmpty) {
  EXPECT_TENSOR_EQ(tril(ones({2, 2}), 0), tensor({1.0f, 0.0f, 1.0f, 1.0f}, {2, 2}));
  EXPECT_TENSOR_EQ(triu(ones({2, 3}), 1), tensor({0.0f, 1.0f, 1.0f, 0.0f, 0.0f, 1.0f}, {2, 3}));
  EXPECT_TENSOR_EQ(tril(ones({3, 2}), -1), tensor({0.0f, 0.0f, 1.0f, 0.0f, 1.0f, 1.0f}, {3, 2}));
  // An expanded (stride 0) input.
  const Tensor e = Strided(tensor({1.0, 2.0, 3.0}, {3}), {3, 3}, {0, 1}, 0);
  EXPECT_TENSOR_EQ(tril(e, 0), tensor({1.0, 0.0, 0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 3.0}, {3, 3}));
  EXPECT_TENSOR_EQ(triu(e, 0), tensor({1.0, 2.0, 3.0, 0.0, 2.0, 3.0, 0.0, 0.0, 3.0}, {3, 3}));
  // Size-0 and size-1 dims.
  EXPECT_EQ(Vec(tril(zeros({3, 0}), 0).sizes()), (Ints{3, 0}));
  EXPECT_EQ(Vec(triu(zeros({2, 0, 3}), 0).sizes()), (Ints{2, 0, 3}));
  EXPECT_TENSOR_EQ(triu(tensor({5.0}, {1, 1}), 1), tensor({0.0}, {1, 1}));
}

TEST(NnIndexingKernelTriangleTest, TriangleCheckAndErrors) {
  TriangleCheck("tril", {2, 3});
  TriangleCheck("triu", {0, 0});
  EXPECT_FT_ERROR(TriangleCheck("tril", {3}),
                  "tril: expected a tensor of at least 2 dims (a batch of matrices), got shape "
                  "[3]");
  EXPECT_FT_ERROR(TriangleCheck("triu", {}), "triu: expected a tensor of at least 2 dims");
  EXPECT_FT_ERROR(tril(zeros({3}), 0), "tril: expected a tensor of at least 2 dims");
  EXPECT_FT_ERROR(triu(scalar_tensor(1.0f), 0), "triu: expected a tensor of at least 2 dims");
}

// ---------------------------------------------------------------------------------------
// roll

TEST(NnIndexingKernelRollTest, ShiftsCyclicallyInEveryLayoutAndDType) {
  const Ints xs = {3, 4};
  struct Case {
    Ints shifts, dims;
  };
  const std::vector<Case> cases = {
      {{1}, {0}},       {{-1}, {1}},        {{5}, {1}},  {{-7}, {0}}, {{1, 2}, {0, 1}},
      {{2, 3}, {1, 1}}, {{2, -1}, {-1, 0}}, {{0}, {0}},  {{4}, {1}},  {{kMax}, {1}},
      {{kMin}, {0}},    {{1}, {}},          {{-13}, {}}, {{12}, {}},
  };
  for (DType dtype : kAllDTypes) {
    const Doubles xv = RandomValues(12, dtype, 40);
    for (const Case& c : cases) {
      Doubles expected(12);
      if (c.dims.empty()) {
        // The flattened tensor rolls: out[i] = x[(i - s) mod 12].
        const int64_t s = ((c.shifts[0] % 12) + 12) % 12;
        for (int64_t i = 0; i < 12; ++i) expected[i] = xv[(i - s + 12) % 12];
      } else {
        Ints total(2, 0);  // the shifts of a repeated dim add up
        for (size_t k = 0; k < c.dims.size(); ++k) {
          const int64_t d = c.dims[k] < 0 ? c.dims[k] + 2 : c.dims[k];
          total[d] = (total[d] + c.shifts[k] % xs[d]) % xs[d];
        }
        for (int64_t i = 0; i < 12; ++i) {
          Ints p = Unravel(i, xs);
          for (size_t d = 0; d < 2; ++d) p[d] = ((p[d] - total[d]) % xs[d] + xs[d]) % xs[d];
          expected[i] = xv[Ravel(p, xs)];
        }
      }
      for (const auto& [name, xl] : Layouts(FromDoubles(xv, xs, dtype))) {
        SCOPED_TRACE(::testing::Message()
                     << DTypeName(dtype) << " " << name << " shifts " << ShapeToString(c.shifts)
                     << " dims " << ShapeToString(c.dims));
        const Tensor out = roll(xl, c.shifts, c.dims);
        EXPECT_TENSOR_EQ(out, FromDoubles(expected, xs, dtype));
        EXPECT_TRUE(IsNewContiguous(out, xl));
      }
    }
  }
}

TEST(NnIndexingKernelRollTest, HeaderExampleRankZeroAndEmpty) {
  EXPECT_TENSOR_EQ(roll(tensor({1.0, 2.0, 3.0}, {3}), {1}, {0}), tensor({3.0, 1.0, 2.0}, {3}));
  const Tensor s = scalar_tensor(2.0, kFloat64);
  const Tensor rs = roll(s, {3}, {});
  EXPECT_TENSOR_EQ(rs, s);
  EXPECT_TRUE(IsNewContiguous(rs, s));
  EXPECT_EQ(Vec(roll(zeros({0, 3}), {1}, {0}).sizes()), (Ints{0, 3}));
  EXPECT_EQ(Vec(roll(zeros({0, 3}), {1}, {1}).sizes()), (Ints{0, 3}));
  EXPECT_EQ(Vec(roll(zeros({2, 0}), {1}, {}).sizes()), (Ints{2, 0}));
  // An expanded input.
  const Tensor e = Strided(tensor({1.0, 2.0, 3.0}, {3}), {2, 3}, {0, 1}, 0);
  EXPECT_TENSOR_EQ(roll(e, {1}, {1}), tensor({3.0, 1.0, 2.0, 3.0, 1.0, 2.0}, {2, 3}));
  EXPECT_TENSOR_EQ(roll(e, {2}, {}), tensor({2.0, 3.0, 1.0, 2.0, 3.0, 1.0}, {2, 3}));
}

TEST(NnIndexingKernelRollTest, RollCheckAndErrors) {
  EXPECT_EQ(Vec(RollCheck({2, 3}, {1}, {})), (Ints{}));
  EXPECT_EQ(Vec(RollCheck({2, 3}, {1, 2}, {0, -1})), (Ints{0, 1}));
  EXPECT_EQ(Vec(RollCheck({2, 3}, {1, 2}, {-2, -2})), (Ints{0, 0}));
  EXPECT_EQ(Vec(RollCheck({}, {1}, {})), (Ints{}));
  EXPECT_FT_ERROR(RollCheck({2, 3}, {}, {}), "roll: shifts must not be empty");
  EXPECT_FT_ERROR(RollCheck({2, 3}, {1, 2}, {}),
                  "roll: with no dims the flattened tensor is rolled, so shifts must hold one "
                  "value, got 2 shifts");
  EXPECT_FT_ERROR(RollCheck({2, 3}, {1}, {0, 1}),
                  "roll: shifts and dims must have the same length, got 1 shifts and 2 dims");
  EXPECT_FT_ERROR(RollCheck({}, {1}, {0}), "roll: dim 0 is out of range for a rank-0 tensor");
  EXPECT_FT_ERROR(RollCheck({2, 3}, {1}, {2}),
                  "roll: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(roll(zeros({2, 3}), {1}, {-3}), "roll: dim -3 is out of range");
  EXPECT_FT_ERROR(roll(zeros({2, 3}), {}, {}), "roll: shifts must not be empty");
}

// ---------------------------------------------------------------------------------------
// pixel_shuffle / pixel_unshuffle

// PixelShuffleOracle: x [*, C r^2, H, W] -> out [*, C, H r, W r] with
// out[..., c, h r + i, w r + j] = x[..., c r^2 + i r + j, h, w].
Doubles PixelShuffleOracle(const Doubles& x, const Ints& xs, int64_t r, Ints* out_shape) {
  const size_t n = xs.size();
  *out_shape = xs;
  (*out_shape)[n - 3] = xs[n - 3] / (r * r);
  (*out_shape)[n - 2] = xs[n - 2] * r;
  (*out_shape)[n - 1] = xs[n - 1] * r;
  Doubles out(x.size());
  for (size_t k = 0; k < out.size(); ++k) {
    const Ints p = Unravel(static_cast<int64_t>(k), *out_shape);
    Ints q = p;
    const int64_t c = p[n - 3], hh = p[n - 2], ww = p[n - 1];
    q[n - 3] = c * r * r + (hh % r) * r + ww % r;
    q[n - 2] = hh / r;
    q[n - 1] = ww / r;
    out[k] = x[Ravel(q, xs)];
  }
  return out;
}

// PixelUnshuffleOracle: x [*, C, H r, W r] -> out [*, C r^2, H, W] with
// out[..., c r^2 + i r + j, h, w] = x[..., c, h r + i, w r + j].
Doubles PixelUnshuffleOracle(const Doubles& x, const Ints& xs, int64_t r, Ints* out_shape) {
  const size_t n = xs.size();
  *out_shape = xs;
  (*out_shape)[n - 3] = xs[n - 3] * r * r;
  (*out_shape)[n - 2] = xs[n - 2] / r;
  (*out_shape)[n - 1] = xs[n - 1] / r;
  Doubles out(x.size());
  for (size_t k = 0; k < out.size(); ++k) {
    const Ints p = Unravel(static_cast<int64_t>(k), *out_shape);
    Ints q = p;
    const int64_t ch = p[n - 3];
    const int64_t c = ch / (r * r), i = (ch % (r * r)) / r, j = ch % r;
    q[n - 3] = c;
    q[n - 2] = p[n - 2] * r + i;
    q[n - 1] = p[n - 1] * r + j;
    out[k] = x[Ravel(q, xs)];
  }
  return out;
}

TEST(NnIndexingKernelPixelShuffleTest, ShuffleAndUnshuffleAgainstIndexFormulas) {
  struct Case {
    Ints xs;
    int64_t r;
  };
  const std::vector<Case> shuffle = {
      {{8, 2, 3}, 2}, {{2, 8, 2, 3}, 2}, {{9, 2, 2}, 3},    {{2, 1, 4, 1, 2}, 2},
      {{3, 2, 2}, 1}, {{0, 4, 2, 2}, 2}, {{1, 0, 2, 2}, 2}, {{4, 0, 3}, 2},
  };
  const std::vector<Case> unshuffle = {
      {{2, 4, 6}, 2}, {{2, 1, 4, 6}, 2}, {{1, 6, 3}, 3},    {{2, 1, 3, 2, 4}, 2},
      {{3, 2, 2}, 1}, {{0, 1, 4, 4}, 2}, {{1, 0, 4, 4}, 2}, {{2, 0, 4}, 2},
  };
  for (DType dtype : kAllDTypes) {
    for (const Case& c : shuffle) {
      const Doubles xv = RandomValues(NumelOf(c.xs), dtype, 50);
      Ints out_shape;
      const Tensor want =
          FromDoubles(PixelShuffleOracle(xv, c.xs, c.r, &out_shape), out_shape, dtype);
      for (const auto& [name, xl] : Layouts(FromDoubles(xv, c.xs, dtype))) {
        SCOPED_TRACE(::testing::Message() << "pixel_shuffle " << DTypeName(dtype) << " "
                                          << ShapeToString(c.xs) << " r " << c.r << " " << name);
        const Tensor out = pixel_shuffle(xl, c.r);
        EXPECT_TENSOR_EQ(out, want);
        EXPECT_TRUE(IsNewContiguous(out, xl));
        EXPECT_EQ(Vec(PixelShuffleCheck(c.xs, c.r)), out_shape);
      }
    }
    for (const Case& c : unshuffle) {
      const Doubles xv = RandomValues(NumelOf(c.xs), dtype, 51);
      Ints out_shape;
      const Tensor want =
          FromDoubles(PixelUnshuffleOracle(xv, c.xs, c.r, &out_shape), out_shape, dtype);
      for (const auto& [name, xl] : Layouts(FromDoubles(xv, c.xs, dtype))) {
        SCOPED_TRACE(::testing::Message() << "pixel_unshuffle " << DTypeName(dtype) << " "
                                          << ShapeToString(c.xs) << " r " << c.r << " " << name);
        const Tensor out = pixel_unshuffle(xl, c.r);
        EXPECT_TENSOR_EQ(out, want);
        EXPECT_TRUE(IsNewContiguous(out, xl));
        EXPECT_EQ(Vec(PixelUnshuffleCheck(c.xs, c.r)), out_shape);
      }
    }
  }
  // A hand-worked case: 4 channels of one pixel become one 2x2 channel.
  EXPECT_TENSOR_EQ(pixel_shuffle(tensor({1.0, 2.0, 3.0, 4.0}, {4, 1, 1}), 2),
                   tensor({1.0, 2.0, 3.0, 4.0}, {1, 2, 2}));
  EXPECT_TENSOR_EQ(pixel_unshuffle(tensor({1.0, 2.0, 3.0, 4.0}, {1, 2, 2}), 2),
                   tensor({1.0, 2.0, 3.0, 4.0}, {4, 1, 1}));
}

TEST(NnIndexingKernelPixelShuffleTest, ChecksAndErrors) {
  constexpr int64_t kBig = int64_t{1} << 62;
  EXPECT_FT_ERROR(PixelShuffleCheck({4, 4}, 2),
                  "pixel_shuffle: expected an input of at least 3 dims [*, C * r^2, H, W], got "
                  "shape [4, 4]");
  EXPECT_FT_ERROR(PixelShuffleCheck({4, 2, 2}, 0),
                  "pixel_shuffle: upscale_factor must be positive, got 0");
  EXPECT_FT_ERROR(PixelShuffleCheck({5, 2, 2}, 2),
                  "pixel_shuffle: the channel dim (size(-3) = 5) must be divisible by "
                  "upscale_factor^2 (upscale_factor 2), input shape [5, 2, 2]");
  EXPECT_FT_ERROR(PixelShuffleCheck({4, 2, 2}, int64_t{1} << 32),
                  "pixel_shuffle: the channel dim (size(-3) = 4) must be divisible by "
                  "upscale_factor^2");
  EXPECT_FT_ERROR(PixelShuffleCheck({4, kBig, 1}, 2),
                  "pixel_shuffle: the output size overflows for input shape [4, "
                  "4611686018427387904, 1] and upscale_factor 2");
  EXPECT_FT_ERROR(PixelUnshuffleCheck({4}, 2),
                  "pixel_unshuffle: expected an input of at least 3 dims [*, C, H * r, W * r], "
                  "got shape [4]");
  EXPECT_FT_ERROR(PixelUnshuffleCheck({1, 2, 2}, -1),
                  "pixel_unshuffle: downscale_factor must be positive, got -1");
  EXPECT_FT_ERROR(PixelUnshuffleCheck({1, 3, 4}, 2),
                  "pixel_unshuffle: height and width (size(-2) = 3, size(-1) = 4) must be "
                  "divisible by downscale_factor 2, input shape [1, 3, 4]");
  EXPECT_FT_ERROR(PixelUnshuffleCheck({1, 4, 3}, 2), "pixel_unshuffle: height and width");
  EXPECT_FT_ERROR(PixelUnshuffleCheck({kBig, 2, 2}, 2),
                  "pixel_unshuffle: the output size overflows for input shape "
                  "[4611686018427387904, 2, 2] and downscale_factor 2");
  EXPECT_FT_ERROR(pixel_shuffle(zeros({3, 2, 2}), 2), "pixel_shuffle: the channel dim");
  EXPECT_FT_ERROR(pixel_unshuffle(zeros({2, 2}), 2),
                  "pixel_unshuffle: expected an input of at least 3 dims");
}

// ---------------------------------------------------------------------------------------
// gather_nd / index_put_nd

// RowBases: for each row of `coords` (rows x k, negative counting from the end), the
// row-major offset of x[coords...] in x (the first element of its trailing block).
Ints RowBases(const Ints& coords, int64_t k, const Ints& xs) {
  Ints bases;
  int64_t block = 1;
  for (size_t d = static_cast<size_t>(k); d < xs.size(); ++d) block *= xs[d];
  const size_t rows = k == 0 ? 0 : coords.size() / static_cast<size_t>(k);
  for (size_t r = 0; r < rows; ++r) {
    int64_t lead = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = coords[r * k + j];
      if (v < 0) v += xs[j];
      lead = lead * xs[j] + v;
    }
    bases.push_back(lead * block);
  }
  return bases;
}

TEST(NnIndexingKernelGatherNdTest, GathersRowsOfCoordinatesAgainstLoop) {
  const Ints xs = {4, 5, 6};
  struct Case {
    Ints is;  // index shape [*B, k]
  };
  const std::vector<Case> cases = {{{3, 3}}, {{2, 2, 1}}, {{2, 2}}, {{2}}, {{1, 3}}, {{0, 2}}};
  for (DType dtype : kAllDTypes) {
    const Doubles xv = RandomValues(120, dtype, 60);
    for (const Case& c : cases) {
      const int64_t k = c.is.back();
      const int64_t rows = NumelOf(c.is) / k;
      // Coordinates of both signs, in [-size, size).
      std::mt19937 rng(61);
      Ints coords;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < k; ++j) {
          coords.push_back(std::uniform_int_distribution<int64_t>(-xs[j], xs[j] - 1)(rng));
        }
      }
      const Ints bases = RowBases(coords, k, xs);
      int64_t block = 1;
      for (size_t d = static_cast<size_t>(k); d < 3; ++d) block *= xs[d];
      Doubles expected;
      for (int64_t base : bases) {
        for (int64_t e = 0; e < block; ++e) expected.push_back(xv[base + e]);
      }
      Ints out_shape(c.is.begin(), c.is.end() - 1);
      out_shape.insert(out_shape.end(), xs.begin() + k, xs.end());
      const Tensor want = FromDoubles(expected, out_shape, dtype);
      EXPECT_EQ(Vec(GatherNdCheck("gather_nd", xs, c.is, kInt64)), out_shape);
      for (const auto& [xname, xl] : Layouts(FromDoubles(xv, xs, dtype))) {
        for (const auto& [iname, il] : Layouts(tensor(coords, c.is))) {
          SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " index " << ShapeToString(c.is)
                                            << " x " << xname << " index " << iname);
          const Tensor out = gather_nd(xl, il);
          EXPECT_TENSOR_EQ(out, want);
          EXPECT_TRUE(IsNewContiguous(out, xl));
        }
      }
    }
  }
}

TEST(NnIndexingKernelGatherNdTest, NoCoordinatesRankZeroAndHandWorked) {
  const Tensor x = tensor({0.0, 1.0, 2.0, 3.0, 4.0, 5.0}, {2, 3});
  // k = 0: each row is the whole of x.
  EXPECT_TENSOR_EQ(gather_nd(x, tensor(Ints{}, {2, 0})),
                   tensor({0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0}, {2, 2, 3}));
  EXPECT_TENSOR_EQ(gather_nd(x, tensor(Ints{}, {0})), x);
  // Rank-0 x with k = 0.
  EXPECT_TENSOR_EQ(gather_nd(scalar_tensor(7.0, kFloat64), tensor(Ints{}, {3, 0})),
                   tensor({7.0, 7.0, 7.0}, {3}));
  // Negative coordinates count from the end.
  EXPECT_TENSOR_EQ(gather_nd(x, tensor(Ints{-1, -3, 0, 2}, {2, 2})), tensor({3.0, 2.0}, {2}));
  EXPECT_TENSOR_EQ(gather_nd(x, tensor(Ints{-2}, {1, 1})), tensor({0.0, 1.0, 2.0}, {1, 3}));
  // Expanded x and index.
  const Tensor xe = Strided(tensor({1.0, 2.0, 3.0}, {3}), {4, 3}, {0, 1}, 0);
  const Tensor ie = Strided(tensor(Ints{3, 1}, {2}), {2, 2}, {0, 1}, 0);
  EXPECT_TENSOR_EQ(gather_nd(xe, ie), tensor({2.0, 2.0}, {2}));
  // Empty x rows.
  EXPECT_EQ(Vec(gather_nd(zeros({2, 0}), tensor(Ints{1, 0}, {2, 1})).sizes()), (Ints{2, 0}));
}

TEST(NnIndexingKernelGatherNdTest, GatherNdCheckAndErrors) {
  EXPECT_EQ(Vec(GatherNdCheck("gather_nd", {4, 5, 6}, {2, 3, 2}, kInt64)), (Ints{2, 3, 6}));
  EXPECT_EQ(Vec(GatherNdCheck("gather_nd", {4, 5}, {3, 0}, kInt64)), (Ints{3, 4, 5}));
  EXPECT_EQ(Vec(GatherNdCheck("gather_nd", {4, 5}, {2}, kInt64)), (Ints{}));
  EXPECT_EQ(Vec(GatherNdCheck("gather_nd", {}, {0}, kInt64)), (Ints{}));
  EXPECT_FT_ERROR(GatherNdCheck("gather_nd", {4}, {1}, kFloat32),
                  "gather_nd: expected an int64 index tensor, got float32 of shape [1]");
  EXPECT_FT_ERROR(GatherNdCheck("gather_nd", {4}, {}, kInt64),
                  "gather_nd: index must have at least one dim (its last holds the coordinates), "
                  "got a rank-0 index");
  EXPECT_FT_ERROR(GatherNdCheck("gather_nd", {4, 5}, {2, 3}, kInt64),
                  "gather_nd: index of shape [2, 3] has 3 coordinates per row, but x of shape "
                  "[4, 5] has only 2 dims");
  EXPECT_FT_ERROR(GatherNdCheck("my_op", {4}, {}, kInt64), "my_op: index must have at least");
  const Tensor x = zeros({4, 5});
  EXPECT_FT_ERROR(gather_nd(x, tensor(Ints{0, 0, 4, 0}, {2, 2})),
                  "gather_nd: index 4 is out of bounds for dimension 0 with size 4");
  EXPECT_FT_ERROR(gather_nd(x, tensor(Ints{0, -6}, {1, 2})),
                  "gather_nd: index -6 is out of bounds for dimension 1 with size 5");
  EXPECT_FT_ERROR(gather_nd(x, scalar_tensor(int64_t{0})), "gather_nd: index must have at least");
  EXPECT_FT_ERROR(gather_nd(x, zeros({1, 2})), "gather_nd: expected an int64 index tensor");
  EXPECT_FT_ERROR(gather_nd(zeros({0, 5}), tensor(Ints{0}, {1, 1})),
                  "gather_nd: index 0 is out of bounds for dimension 0 with size 0");
}

// IndexPutNdOracle: out = x; rows in order write (or add) the values, broadcast to the
// indexed shape [rows, block...], at x[coords...].
Doubles IndexPutNdOracle(Doubles out, const Ints& xs, const Ints& coords, int64_t k,
                         const Doubles& values, const Ints& vs, const Ints& target, bool accumulate,
                         DType dtype) {
  const Ints bases = RowBases(coords, k, xs);
  const int64_t rows = static_cast<int64_t>(bases.size());
  const int64_t block = rows == 0 ? 0 : NumelOf(target) / rows;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t e = 0; e < block; ++e) {
      const Ints t = Unravel(r * block + e, target);
      Ints vi(vs.size());
      const size_t lead = target.size() - vs.size();
      for (size_t j = 0; j < vs.size(); ++j) vi[j] = vs[j] == 1 ? 0 : t[lead + j];
      const double v = values[Ravel(vi, vs)];
      double& dst = out[bases[r] + e];
      if (!accumulate) {
        dst = v;
      } else if (dtype == kBool) {
        dst = (dst != 0 || v != 0);
      } else {
        dst += v;
      }
    }
  }
  return out;
}

TEST(NnIndexingKernelIndexPutNdTest, WritesAndAccumulatesAgainstLoop) {
  const Ints xs = {4, 5};
  struct Case {
    Ints coords, is, vs;  // index values and shape, values shape
  };
  const std::vector<Case> cases = {
      {{0, 1, 3, -1, 0, 1}, {3, 2}, {3}},    // elements; (0, 1) repeats: last wins / adds
      {{0, 1, 3, -1, 0, 1}, {3, 2}, {}},     // a rank-0 value
      {{2, -4, 2}, {3, 1}, {3, 5}},          // rows; row 2 repeats
      {{2, -4, 2}, {3, 1}, {5}},             // one row broadcast to every indexed row
      {{2, -4, 2}, {3, 1}, {3, 1}},          // one value per row
      {{1, 2, 3, 0}, {2, 2, 1}, {2, 1, 5}},  // batched rows
      {{}, {0, 2}, {1}},                     // nothing indexed
  };
  for (DType dtype : kAllDTypes) {
    const Doubles xv = RandomValues(20, dtype, 70);
    const Tensor x = FromDoubles(xv, xs, dtype);
    for (const Case& c : cases) {
      const int64_t k = c.is.back();
      Ints target(c.is.begin(), c.is.end() - 1);
      target.insert(target.end(), xs.begin() + k, xs.end());
      const Doubles vv = RandomValues(NumelOf(c.vs), dtype, 71);
      for (bool accumulate : {false, true}) {
        const Tensor want = FromDoubles(
            IndexPutNdOracle(xv, xs, c.coords, k, vv, c.vs, target, accumulate, dtype), xs, dtype);
        for (const auto& [xname, xl] : Layouts(x)) {
          for (const auto& [iname, il] : Layouts(tensor(c.coords, c.is))) {
            for (const auto& [vname, vl] : Layouts(FromDoubles(vv, c.vs, dtype))) {
              SCOPED_TRACE(::testing::Message()
                           << DTypeName(dtype) << " index " << ShapeToString(c.is) << " values "
                           << ShapeToString(c.vs) << " accumulate " << accumulate << " x " << xname
                           << " index " << iname << " values " << vname);
              const Tensor out = index_put_nd(xl, il, vl, accumulate);
              if (dtype == kFloat32) {
                EXPECT_TENSOR_NEAR(out, want, 1e-5);
              } else {
                EXPECT_TENSOR_EQ(out, want);
              }
              EXPECT_TRUE(IsNewContiguous(out, xl));
            }
          }
        }
      }
    }
    EXPECT_TENSOR_EQ(x, FromDoubles(xv, xs, dtype));  // the input is not written
  }
}

TEST(NnIndexingKernelIndexPutNdTest, HandWorkedWrapAndInputUntouched) {
  // The example of ops/nn_indexing.h (index_put lowers to index_put_nd with k = 1).
  const Tensor x = zeros({3});
  EXPECT_TENSOR_EQ(
      index_put_nd(x, tensor(Ints{0, 2, 0}, {3, 1}), tensor({1.0f, 2.0f, 3.0f}, {3}), true),
      tensor({4.0f, 0.0f, 2.0f}, {3}));
  // Without accumulate the last of the repeated rows wins.
  EXPECT_TENSOR_EQ(
      index_put_nd(x, tensor(Ints{0, 2, 0}, {3, 1}), tensor({1.0f, 2.0f, 3.0f}, {3}), false),
      tensor({3.0f, 0.0f, 2.0f}, {3}));
  EXPECT_TENSOR_EQ(x, zeros({3}));
  // int64 accumulation wraps; bool accumulation is logical or.
  EXPECT_TENSOR_EQ(
      index_put_nd(tensor(Ints{kMax, 1}, {2}), tensor(Ints{0}, {1, 1}), tensor(Ints{1}, {1}), true),
      tensor(Ints{kMin, 1}, {2}));
  EXPECT_TENSOR_EQ(
      index_put_nd(tensor(std::vector<bool>{true, false}, {2}), tensor(Ints{0, 1, 1}, {3, 1}),
                   tensor(std::vector<bool>{false, false, true}, {3}), true),
      tensor(std::vector<bool>{true, true}, {2}));
  // Rank-0 x with k = 0 rows.
  EXPECT_TENSOR_EQ(index_put_nd(scalar_tensor(1.0, kFloat64), tensor(Ints{}, {2, 0}),
                                tensor({2.0, 5.0}, {2}), true),
                   scalar_tensor(8.0, kFloat64));
}

TEST(NnIndexingKernelIndexPutNdTest, IndexPutNdCheckAndErrors) {
  IndexPutNdCheck({4, 5}, kFloat32, {3, 2}, kInt64, {3}, kFloat32);
  IndexPutNdCheck({4, 5}, kFloat32, {3, 1}, kInt64, {1, 5}, kFloat32);
  EXPECT_FT_ERROR(IndexPutNdCheck({4, 5}, kFloat32, {3, 2}, kInt64, {3}, kFloat64),
                  "index_put_nd: values must have x's dtype float32, got float64");
  EXPECT_FT_ERROR(IndexPutNdCheck({4, 5}, kFloat32, {2, 1}, kInt64, {3}, kFloat32),
                  "index_put_nd: values of shape [3] cannot be broadcast to the indexed shape "
                  "[2, 5]");
  EXPECT_FT_ERROR(IndexPutNdCheck({4, 5}, kFloat32, {2, 2}, kInt64, {1, 2, 1}, kFloat32),
                  "index_put_nd: values of shape [1, 2, 1] cannot be broadcast to the indexed "
                  "shape [2]");
  EXPECT_FT_ERROR(IndexPutNdCheck({4, 5}, kFloat32, {2, 2}, kBool, {2}, kFloat32),
                  "index_put_nd: expected an int64 index tensor, got bool");
  EXPECT_FT_ERROR(IndexPutNdCheck({4, 5}, kFloat32, {}, kInt64, {}, kFloat32),
                  "index_put_nd: index must have at least one dim");
  EXPECT_FT_ERROR(IndexPutNdCheck({4}, kFloat32, {1, 2}, kInt64, {}, kFloat32),
                  "index_put_nd: index of shape [1, 2] has 2 coordinates per row, but x of "
                  "shape [4] has only 1 dims");
  const Tensor x = zeros({4, 5});
  EXPECT_FT_ERROR(index_put_nd(x, tensor(Ints{0, 5}, {1, 2}), zeros({1}), false),
                  "index_put_nd: index 5 is out of bounds for dimension 1 with size 5");
  EXPECT_FT_ERROR(index_put_nd(x, tensor(Ints{-5}, {1, 1}), zeros({5}), true),
                  "index_put_nd: index -5 is out of bounds for dimension 0 with size 4");
  EXPECT_FT_ERROR(index_put_nd(x, tensor(Ints{0}, {1, 1}), zeros({5}, kFloat64), false),
                  "index_put_nd: values must have x's dtype float32, got float64");
}

}  // namespace
}  // namespace ft::kernels

// vmap of the indexing, joining and conversion ops against the loop-and-stack oracle
// (CheckVmap tries every combination of mapped / unmapped arguments, so batched indices meet
// unbatched data and vice versa), their per-example errors under vmap, and view aliasing.
#include <cstdint>
#include <optional>
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
using testing::IndexMaker;
using testing::UniformMaker;

// Vmapped runs f over dim 0 of x (shape [batch, ...]); for the error tests.
Tensor Vmapped(const TensorFn& f, const Tensor& x) { return vmap(f)(x); }

// ---- index_select ----

TEST(IndexingRules, IndexSelect) {
  for (int64_t dim : {0, 1, -1, -2}) {
    SCOPED_TRACE(dim);
    const int64_t size = (dim == 0 || dim == -2) ? 4 : 3;
    auto f = [dim](const TensorList& a) { return TensorList{index_select(a[0], dim, a[1])}; };
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{4, 3}}, ArgSpec{{5}, IndexMaker(size)}}));
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{4, 3}}, ArgSpec{{}, IndexMaker(size)}}));
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{4, 3}}, ArgSpec{{0}, IndexMaker(size)}}));
  }
  auto f3 = [](const TensorList& a) { return TensorList{index_select(a[0], 1, a[1])}; };
  EXPECT_TRUE(CheckVmap(f3, {ArgSpec{{2, 3, 4}, UniformMaker(-5, 5, kInt64)},
                             ArgSpec{{2}, IndexMaker(3)}}));
}

TEST(IndexingRules, IndexSelectRankZeroInput) {
  for (int64_t dim : {0, -1}) {
    auto f = [dim](const TensorList& a) { return TensorList{index_select(a[0], dim, a[1])}; };
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{}}, ArgSpec{{}, IndexMaker(1)}}));
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{}}, ArgSpec{{1}, IndexMaker(1)}}));
  }
}

TEST(IndexingRules, IndexSelectErrors) {
  const Tensor x = ones({2, 4, 3});  // logical [4, 3]
  EXPECT_FT_ERROR(
      Vmapped([](const Tensor& v) { return index_select(v, 2, tensor<int64_t>({0})); }, x),
      "index_select: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(
      Vmapped([](const Tensor& v) { return index_select(v, 0, tensor({0.0})); }, x),
      "index_select: expected an int64 index tensor, got float64 of shape [1]");
  // A batched index of logical shape [2, 2].
  EXPECT_FT_ERROR(Vmapped([](const Tensor& i) { return index_select(ones({3}), 0, i); },
                          zeros({2, 2, 2}, kInt64)),
                  "index_select: index must be a rank-0 or 1-D tensor, got shape [2, 2]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return index_select(v, 0, zeros({2}, kInt64)); },
                          ones({3})),
                  "index_select: selecting from a rank-0 tensor takes exactly one index, got 2");
  // Out-of-bounds values: shared x with batched indices, batched x with shared indices, both.
  const Tensor bad = tensor<int64_t>({0, 4}, {2, 1});
  EXPECT_FT_ERROR(Vmapped([](const Tensor& i) { return index_select(ones({4, 3}), 0, i); }, bad),
                  "index_select: an index is out of bounds for dimension 0 with size 4 "
                  "(batched call: index_select: index 4 is out of bounds");
  EXPECT_FT_ERROR(
      Vmapped([](const Tensor& v) { return index_select(v, 1, tensor<int64_t>({3})); }, x),
      "index_select: an index is out of bounds for dimension 1 with size 3 (batched call: "
      "index_select: index 3 is out of bounds");
  auto both = vmap(TensorListFn([](const TensorList& a) {
    return TensorList{index_select(a[0], 0, a[1])};
  }));
  EXPECT_FT_ERROR(both({ones({2, 4, 3}), bad}),
                  "index_select: an index is out of bounds for dimension 0 with size 4 "
                  "(batched call: gather: index 4 is out of bounds");
}

// ---- gather / scatter_add / take_along_dim ----

TEST(IndexingRules, Gather) {
  auto f = [](int64_t dim) {
    return [dim](const TensorList& a) { return TensorList{gather(a[0], dim, a[1])}; };
  };
  EXPECT_TRUE(CheckVmap(f(0), {ArgSpec{{3, 4}}, ArgSpec{{5, 4}, IndexMaker(3)}}));
  EXPECT_TRUE(CheckVmap(f(1), {ArgSpec{{3, 4}}, ArgSpec{{2, 6}, IndexMaker(4)}}));
  EXPECT_TRUE(CheckVmap(f(-1), {ArgSpec{{3, 4}}, ArgSpec{{3, 2}, IndexMaker(4)}}));
  EXPECT_TRUE(CheckVmap(f(-2), {ArgSpec{{2, 3, 4}}, ArgSpec{{2, 2, 1}, IndexMaker(3)}}));
  // Rank 0 counts as rank 1.
  EXPECT_TRUE(CheckVmap(f(0), {ArgSpec{{}}, ArgSpec{{}, IndexMaker(1)}}));
  EXPECT_TRUE(CheckVmap(f(0), {ArgSpec{{5}}, ArgSpec{{}, IndexMaker(5)}}));
  EXPECT_TRUE(CheckVmap(f(-1), {ArgSpec{{}}, ArgSpec{{3}, IndexMaker(1)}}));
}

TEST(IndexingRules, GatherErrors) {
  const Tensor x = ones({2, 3, 4});  // logical [3, 4]
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return gather(v, -3, zeros({3, 4}, kInt64)); }, x),
                  "gather: dim -3 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return gather(v, 0, zeros({4}, kInt64)); }, x),
                  "gather: index must have the same number of dims as the input, got index "
                  "shape [4] and input shape [3, 4]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& i) { return gather(ones({3, 4}), 0, i); },
                          zeros({2, 1, 5}, kInt64)),
                  "gather: index shape [1, 5] exceeds input shape [3, 4] in dim 1 (5 > 4); only "
                  "dim 0 may be larger");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& i) { return gather(ones({3, 4}), 0, i); },
                          full({2, 1, 1}, Scalar(int64_t{3}), kInt64)),
                  "gather: an index is out of bounds for dimension 0 with size 3 (batched call: "
                  "gather: index 3 is out of bounds");
}

TEST(IndexingRules, ScatterAdd) {
  auto f = [](int64_t dim) {
    return [dim](const TensorList& a) { return TensorList{scatter_add(a[0], dim, a[1], a[2])}; };
  };
  EXPECT_TRUE(CheckVmap(f(0), {ArgSpec{{3, 4}}, ArgSpec{{5, 4}, IndexMaker(3)},
                               ArgSpec{{5, 4}}}));
  EXPECT_TRUE(CheckVmap(f(1), {ArgSpec{{3, 4}}, ArgSpec{{2, 6}, IndexMaker(4)},
                               ArgSpec{{3, 7}}}));
  EXPECT_TRUE(CheckVmap(f(-1), {ArgSpec{{3, 4}}, ArgSpec{{3, 2}, IndexMaker(4)},
                                ArgSpec{{3, 2}}}));
  EXPECT_TRUE(CheckVmap(f(0), {ArgSpec{{}}, ArgSpec{{}, IndexMaker(1)}, ArgSpec{{}}}));
  EXPECT_TRUE(CheckVmap(f(0), {ArgSpec{{4}}, ArgSpec{{}, IndexMaker(4)}, ArgSpec{{}}}));
  EXPECT_TRUE(CheckVmap(f(0), {ArgSpec{{4}, UniformMaker(-9, 9, kInt64)},
                               ArgSpec{{6}, IndexMaker(4)},
                               ArgSpec{{6}, UniformMaker(-9, 9, kInt64)}}));
}

TEST(IndexingRules, ScatterAddErrors) {
  const Tensor x = ones({2, 3, 4});  // logical [3, 4]
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) {
                    return scatter_add(v, 0, zeros({1, 4}, kInt64), ones({1, 4}, kFloat64));
                  }, x),
                  "scatter_add: src dtype float64 must match the input dtype float32");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) {
                    return scatter_add(v, 2, zeros({1, 4}, kInt64), ones({1, 4}));
                  }, x),
                  "scatter_add: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& s) {
                    return scatter_add(ones({3, 4}), 0, zeros({2, 4}, kInt64), s);
                  }, ones({2, 1, 4})),
                  "scatter_add: index shape [2, 4] exceeds src shape [1, 4] in dim 0 (2 > 1)");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& s) {
                    return scatter_add(ones({3, 4}), 0, zeros({2}, kInt64), s);
                  }, ones({2, 3, 4})),
                  "scatter_add: index must have the same number of dims as the input, got "
                  "index shape [2] and input shape [3, 4]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& i) {
                    return scatter_add(ones({3, 4}), 1, i, ones({3, 4}));
                  }, full({2, 1, 1}, Scalar(int64_t{4}), kInt64)),
                  "scatter_add: an index is out of bounds for dimension 1 with size 4");
}

TEST(IndexingRules, TakeAlongDim) {
  auto f = [](std::optional<int64_t> dim) {
    return [dim](const TensorList& a) { return TensorList{take_along_dim(a[0], a[1], dim)}; };
  };
  EXPECT_TRUE(CheckVmap(f(1), {ArgSpec{{3, 4}}, ArgSpec{{3, 2}, IndexMaker(4)}}));
  EXPECT_TRUE(CheckVmap(f(-2), {ArgSpec{{3, 4}}, ArgSpec{{5, 4}, IndexMaker(3)}}));
  // Broadcasting on the other dims, either way.
  EXPECT_TRUE(CheckVmap(f(1), {ArgSpec{{3, 4}}, ArgSpec{{1, 5}, IndexMaker(4)}}));
  EXPECT_TRUE(CheckVmap(f(-1), {ArgSpec{{1, 4}}, ArgSpec{{3, 2}, IndexMaker(4)}}));
  EXPECT_TRUE(CheckVmap(f(0), {ArgSpec{{}}, ArgSpec{{}, IndexMaker(1)}}));
  // Without dim: both flattened per example.
  EXPECT_TRUE(CheckVmap(f(std::nullopt), {ArgSpec{{3, 4}}, ArgSpec{{5}, IndexMaker(12)}}));
  EXPECT_TRUE(CheckVmap(f(std::nullopt), {ArgSpec{{3, 4}}, ArgSpec{{2, 2}, IndexMaker(12)}}));
  EXPECT_TRUE(CheckVmap(f(std::nullopt), {ArgSpec{{}}, ArgSpec{{3}, IndexMaker(1)}}));
  EXPECT_TRUE(CheckVmap(f(std::nullopt), {ArgSpec{{4}}, ArgSpec{{}, IndexMaker(4)}}));
}

TEST(IndexingRules, TakeAlongDimErrors) {
  const Tensor x = ones({2, 3, 4});  // logical [3, 4]
  EXPECT_FT_ERROR(
      Vmapped([](const Tensor& v) { return take_along_dim(v, zeros({2}, kInt64), 0); }, x),
      "take_along_dim: input and indices must have the same number of dims, got input shape "
      "[3, 4] and indices shape [2]");
  EXPECT_FT_ERROR(
      Vmapped([](const Tensor& v) { return take_along_dim(v, zeros({2, 2}, kInt64), 2); }, x),
      "take_along_dim: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(
      Vmapped([](const Tensor& v) { return take_along_dim(v, zeros({2, 2}, kInt64), 1); }, x),
      "take_along_dim: shapes [3, 2] and [2, 2] cannot be broadcast together");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& i) { return take_along_dim(ones({3, 4}), i); },
                          full({2, 1}, Scalar(int64_t{12}), kInt64)),
                  "take_along_dim: an index is out of bounds for dimension 0 with size 12 "
                  "(batched call: take_along_dim: index 12 is out of bounds");
  EXPECT_FT_ERROR(
      Vmapped([](const Tensor& v) {
        return take_along_dim(v, full({1}, Scalar(int64_t{-1}), kInt64));
      }, x),
      "take_along_dim: an index is out of bounds for dimension 0 with size 12 (batched call: "
      "take_along_dim: index -1 is out of bounds");
  EXPECT_FT_ERROR(
      Vmapped([](const Tensor& v) {
        return take_along_dim(v, full({1, 1}, Scalar(int64_t{4}), kInt64), -1);
      }, x),
      "take_along_dim: an index is out of bounds for dimension 1 with size 4 (batched call: "
      "take_along_dim: index 4 is out of bounds");
  EXPECT_FT_ERROR(
      Vmapped([](const Tensor& i) { return take_along_dim(ones({3, 4}), i, 1); }, ones({2, 3, 1})),
      "take_along_dim: expected an int64 indices tensor, got float32 of shape [3, 1]");
}

TEST(IndexingRules, OneHot) {
  auto f = [](int64_t n) {
    return [n](const TensorList& a) { return TensorList{one_hot(a[0], n)}; };
  };
  EXPECT_TRUE(CheckVmap(f(5), {ArgSpec{{4}, IndexMaker(5)}}));
  EXPECT_TRUE(CheckVmap(f(4), {ArgSpec{{2, 3}, IndexMaker(3)}}));
  EXPECT_TRUE(CheckVmap(f(3), {ArgSpec{{}, IndexMaker(3)}}));
  EXPECT_TRUE(CheckVmap(f(0), {ArgSpec{{0}, IndexMaker(1)}}));
}

TEST(IndexingRules, OneHotErrors) {
  const Tensor i = zeros({2, 3}, kInt64);
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return one_hot(v); }, i),
                  "one_hot: under vmap, num_classes must be given explicitly");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return one_hot(v, 2); }, ones({2, 3})),
                  "one_hot: expected an int64 indices tensor, got float32 of shape [3]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return one_hot(v, -2); }, i),
                  "one_hot: num_classes must be -1 (infer) or non-negative, got -2");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return one_hot(v, 3); },
                          full({2, 3}, Scalar(int64_t{3}), kInt64)),
                  "one_hot: class value 3 is out of range [0, 3)");
}

// ---- cat / stack ----

TEST(IndexingRules, Cat) {
  auto f = [](int64_t dim) {
    return [dim](const TensorList& a) { return TensorList{cat({a[0], a[1], a[2]}, dim)}; };
  };
  EXPECT_TRUE(CheckVmap(f(0), {ArgSpec{{2, 3}}, ArgSpec{{4, 3}}, ArgSpec{{1, 3}}}));
  EXPECT_TRUE(CheckVmap(f(1), {ArgSpec{{2, 3}}, ArgSpec{{2, 1}}, ArgSpec{{2, 2}}}));
  EXPECT_TRUE(CheckVmap(f(-1), {ArgSpec{{2, 3}}, ArgSpec{{2, 0}}, ArgSpec{{2, 2}}}));
  EXPECT_TRUE(CheckVmap(f(-1), {ArgSpec{{3}}, ArgSpec{{1}}, ArgSpec{{2}}}));
  // Promotion over mixed dtypes.
  EXPECT_TRUE(CheckVmap(f(0), {ArgSpec{{2, 3}, IndexMaker(100)},
                               ArgSpec{{1, 3}, UniformMaker(-1, 1, kFloat32)},
                               ArgSpec{{1, 3}, UniformMaker(-1, 1, kBool)}}));
}

TEST(IndexingRules, CatSkipsOneDimEmptyTensors) {
  auto f = [](int64_t dim) {
    return [dim](const TensorList& a) { return TensorList{cat({a[0], a[1], a[2]}, dim)}; };
  };
  EXPECT_TRUE(CheckVmap(f(1), {ArgSpec{{2, 3}}, ArgSpec{{0}}, ArgSpec{{2, 2}}}));
  // The skipped float64 element still sets the dtype: int64 values beyond float32's precision
  // must convert straight to float64.
  EXPECT_TRUE(CheckVmap(f(0), {ArgSpec{{2, 3}, IndexMaker(int64_t{1} << 40)},
                               ArgSpec{{1, 3}, UniformMaker(-1, 1, kFloat32)},
                               ArgSpec{{0}, UniformMaker(-1, 1, kFloat64)}}));
  // Every element skipped: [0] of the promoted dtype.
  EXPECT_TRUE(CheckVmap(f(-1), {ArgSpec{{0}, IndexMaker(3)}, ArgSpec{{0}},
                                ArgSpec{{0}, UniformMaker(-1, 1, kFloat32)}}));
}

TEST(IndexingRules, CatErrors) {
  const Tensor x = ones({2, 3, 4});  // logical [3, 4]
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return cat({v, ones({3, 5})}, 0); }, x),
                  "cat: shapes must match except in dim 0, but tensor 1 has shape [3, 5] and "
                  "tensor 0 has shape [3, 4]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return cat({ones({0}), v}, 2); }, x),
                  "cat: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return cat({ones({3}), v}, 0); }, ones({2})),
                  "cat: tensor 1 is rank 0 and cannot be concatenated (use stack)");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return cat({v, ones({0})}, 1); }, ones({2, 0})),
                  "cat: dim 1 is out of range for a tensor of rank 1");
}

TEST(IndexingRules, Stack) {
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(dim);
    auto f = [dim](const TensorList& a) { return TensorList{stack({a[0], a[1], a[2]}, dim)}; };
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{2, 3}}, ArgSpec{{2, 3}, IndexMaker(5)}, ArgSpec{{2, 3}}}));
  }
  for (int64_t dim : {0, -1}) {
    auto f = [dim](const TensorList& a) { return TensorList{stack({a[0], a[1]}, dim)}; };
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{}}, ArgSpec{{}}}));
  }
}

TEST(IndexingRules, StackErrors) {
  const Tensor x = ones({2, 3, 4});  // logical [3, 4]
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return stack({v, ones({4, 3})}, 0); }, x),
                  "stack: expected all tensors to have the same shape, but tensor 1 has shape "
                  "[4, 3] and tensor 0 has shape [3, 4]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return stack({v, v}, 3); }, x),
                  "stack: dim 3 is out of range for stacking tensors of rank 2 (expected a dim in "
                  "[-3, 2])");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return stack({v, v}, -4); }, x),
                  "stack: dim -4 is out of range for stacking tensors of rank 2");
}

// ---- split / split_with_sizes / chunk ----

// Pieces: a split's views are the function's outputs (one bdim for all).
TensorList Pieces(const TensorList& parts) { return parts; }

TEST(IndexingRules, Split) {
  auto f = [](int64_t size, int64_t dim) {
    return [size, dim](const TensorList& a) { return Pieces(split(a[0], size, dim)); };
  };
  EXPECT_TRUE(CheckVmap(f(2, 0), {ArgSpec{{5, 3}}}));
  EXPECT_TRUE(CheckVmap(f(1, -1), {ArgSpec{{5, 3}}}));
  EXPECT_TRUE(CheckVmap(f(2, 1), {ArgSpec{{2, 3, 4}}}));
  EXPECT_TRUE(CheckVmap(f(7, -2), {ArgSpec{{5, 3}}}));
  EXPECT_TRUE(CheckVmap(f(0, 0), {ArgSpec{{0, 3}}}));
}

TEST(IndexingRules, SplitWithSizes) {
  auto f = [](Shape sizes, int64_t dim) {
    return [sizes, dim](const TensorList& a) {
      return Pieces(split_with_sizes(a[0], sizes, dim));
    };
  };
  EXPECT_TRUE(CheckVmap(f({2, 0, 3}, 0), {ArgSpec{{5, 3}}}));
  EXPECT_TRUE(CheckVmap(f({1, 2}, -1), {ArgSpec{{5, 3}}}));
  EXPECT_TRUE(CheckVmap(f({3}, 1), {ArgSpec{{2, 3, 4}}}));
}

TEST(IndexingRules, Chunk) {
  auto f = [](int64_t chunks, int64_t dim) {
    return [chunks, dim](const TensorList& a) { return Pieces(chunk(a[0], chunks, dim)); };
  };
  EXPECT_TRUE(CheckVmap(f(2, 0), {ArgSpec{{5, 3}}}));
  EXPECT_TRUE(CheckVmap(f(3, -1), {ArgSpec{{5, 3}}}));
  EXPECT_TRUE(CheckVmap(f(6, 0), {ArgSpec{{5, 3}}}));
  EXPECT_TRUE(CheckVmap(f(3, 0), {ArgSpec{{0, 3}}}));
  EXPECT_TRUE(CheckVmap(f(2, 1), {ArgSpec{{2, 4, 1}}}));
}

TEST(IndexingRules, SplitPiecesAreViewsOfTheInput) {
  // Writing through a piece must change the buffer it was cut from, for every example.
  auto f = [](int kind) {
    return [kind](const TensorList& a) {
      Tensor buf = a[0] * 1.0;  // a batched buffer made inside
      TensorList parts = kind == 0   ? split(buf, 2, -1)
                         : kind == 1 ? split_with_sizes(buf, {1, 3}, 1)
                                     : chunk(buf, 2, 0);
      fill_(parts[1], 7.0);
      mul_(parts[0], parts[0]);
      return TensorList{buf};
    };
  };
  for (int kind : {0, 1, 2}) {
    SCOPED_TRACE(kind);
    EXPECT_TRUE(CheckVmap(f(kind), {ArgSpec{{3, 4}}}));
  }
  // The pieces alias the physical input: an in-place write shows in the caller's tensor.
  Tensor x = zeros({3, 4}, kFloat64);
  vmap(TensorFn([](const Tensor& v) {  // v: a column of x, logical [3]
    TensorList parts = split(v, 1, 0);
    fill_(parts[2], 5.0);
    return v;
  }), 1)(x);
  EXPECT_TENSOR_EQ(x, tensor(std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 5, 5, 5, 5}, {3, 4}));
}

TEST(IndexingRules, SplitErrors) {
  const Tensor x = ones({2, 5, 3});  // logical [5, 3]
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return split(v, 1, 0)[0]; }, ones({2})),
                  "split: expected a tensor with at least one dim, got a rank-0 tensor");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return split(v, 1, 2)[0]; }, x),
                  "split: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return split(v, 0, 1)[0]; }, x),
                  "split: split_size 0 is only allowed when the split dim is empty, but "
                  "dimension 1 has size 3");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return split(v, -1, 1)[0]; }, x),
                  "split: split_size must be non-negative, got -1");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return split_with_sizes(v, {2, 2}, 0)[0]; }, x),
                  "split_with_sizes: sizes [2, 2] sum to 4 but dimension 0 has size 5");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return split_with_sizes(v, {4, -1}, 1)[0]; }, x),
                  "split_with_sizes: sizes [4, -1] contain the negative size -1");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return chunk(v, 2, -3)[0]; }, x),
                  "chunk: dim -3 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return chunk(v, 0, 0)[0]; }, x),
                  "chunk: chunks must be positive, got 0");
}

// ---- repeat / pad / to ----

TEST(IndexingRules, Repeat) {
  auto f = [](Shape repeats) {
    return [repeats](const TensorList& a) { return TensorList{repeat(a[0], repeats)}; };
  };
  EXPECT_TRUE(CheckVmap(f({2, 1}), {ArgSpec{{2, 3}}}));
  EXPECT_TRUE(CheckVmap(f({1, 2, 3}), {ArgSpec{{2, 3}}}));  // a new leading dim
  EXPECT_TRUE(CheckVmap(f({2, 0, 1, 2}), {ArgSpec{{2, 3}}}));
  EXPECT_TRUE(CheckVmap(f({}), {ArgSpec{{}}}));
  EXPECT_TRUE(CheckVmap(f({3}), {ArgSpec{{}}}));
  EXPECT_TRUE(CheckVmap(f({2, 2}), {ArgSpec{{4}, IndexMaker(9)}}));
}

TEST(IndexingRules, RepeatErrors) {
  const Tensor x = ones({4, 2, 3});  // logical [2, 3]
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return repeat(v, {2}); }, x),
                  "repeat: got 1 repeats [2] but need at least one per dim of the input (shape "
                  "[2, 3], rank 2)");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return repeat(v, {1, -2}); }, x),
                  "repeat: repeats [1, -2] contain the negative value -2");
}

TEST(IndexingRules, Pad) {
  auto f = [](Shape pads, double value) {
    return [pads, value](const TensorList& a) { return TensorList{pad(a[0], pads, value)}; };
  };
  EXPECT_TRUE(CheckVmap(f({1, 2}, 0.0), {ArgSpec{{2, 3}}}));
  EXPECT_TRUE(CheckVmap(f({1, 0, 0, 2}, 2.5), {ArgSpec{{2, 3}}}));
  EXPECT_TRUE(CheckVmap(f({-1, 1}, -1.0), {ArgSpec{{2, 3}}}));  // crops on the left
  EXPECT_TRUE(CheckVmap(f({}, 1.0), {ArgSpec{{4}}}));
  EXPECT_TRUE(CheckVmap(f({}, 1.0), {ArgSpec{{}}}));
  EXPECT_TRUE(CheckVmap(f({2, -3}, 3.0), {ArgSpec{{2}, IndexMaker(5)}}));
}

TEST(IndexingRules, PadErrors) {
  const Tensor x = ones({4, 2, 3});  // logical [2, 3]
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return pad(v, {1, 1, 1, 1, 1, 1}); }, x),
                  "pad: padding [1, 1, 1, 1, 1, 1] has 3 (left, right) pairs but the input has "
                  "only 2 dims (shape [2, 3])");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return pad(v, {1}); }, x),
                  "pad: padding [1] must have an even length, got 1 values");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return pad(v, {0, 0, -2, -1}); }, x),
                  "pad: padding (-2, -1) of dim 0 (size 2) gives the negative size -1");
}

TEST(IndexingRules, To) {
  for (DType dtype : {kFloat64, kFloat32, kInt64, kBool}) {
    SCOPED_TRACE(DTypeName(dtype));
    auto f = [dtype](const TensorList& a) { return TensorList{to(a[0], dtype)}; };
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{2, 3}, UniformMaker(-3, 3)}}));
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{}, IndexMaker(3)}}));
  }
}

TEST(IndexingRules, ToSameDtypeSharesStorage) {
  auto f = [](const TensorList& a) {
    Tensor buf = a[0] * 1.0;
    Tensor same = to(buf, kFloat64);
    Tensor other = to(buf, kFloat32);
    fill_(same, 2.0);   // writes buf too
    fill_(other, 3.0);  // a copy: buf keeps 2
    return TensorList{buf, other};
  };
  EXPECT_TRUE(CheckVmap(f, {ArgSpec{{2, 3}}}));
}

}  // namespace
}  // namespace ft

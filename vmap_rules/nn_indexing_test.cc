// vmap of the indexing and shape ops for models against the loop-and-stack oracle (CheckVmap
// tries every mix of mapped and unmapped arguments, so batched indices, masks and fill values
// meet shared data and the other way round), empty batches, and per-example errors.
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
using testing::ValueMaker;

// BoolMaker: a bool mask, true about half the time.
ValueMaker BoolMaker() {
  return [](IntArrayRef shape, uint64_t seed) { return gt(UniformMaker()(shape, seed), 0.0); };
}

Tensor Vmapped(const TensorFn& f, const Tensor& x) { return vmap(f)(x); }

TEST(NnIndexingRules, Embedding) {
  auto f = [](const TensorList& a) { return TensorList{embedding(a[0], a[1])}; };
  EXPECT_TRUE(CheckVmap(f, {ArgSpec{{2, 3}, IndexMaker(4)}, ArgSpec{{4, 3}}}));
  EXPECT_TRUE(CheckVmap(f, {ArgSpec{{}, IndexMaker(4)}, ArgSpec{{4, 2}}}));
  EXPECT_TRUE(CheckVmap(f, {ArgSpec{{0}, IndexMaker(4)}, ArgSpec{{4, 2}}}));
  EXPECT_TRUE(CheckVmap(f, {ArgSpec{{5}, IndexMaker(1)}, ArgSpec{{1, 1}}}));
  auto fp = [](const TensorList& a) { return TensorList{embedding(a[0], a[1], -1)}; };
  EXPECT_TRUE(CheckVmap(fp, {ArgSpec{{3}, IndexMaker(3)}, ArgSpec{{3, 2}}}));
}

TEST(NnIndexingRules, MaskedFill) {
  auto f = [](const TensorList& a) { return TensorList{masked_fill(a[0], a[1], a[2])}; };
  EXPECT_TRUE(CheckVmap(f, {ArgSpec{{3, 4}}, ArgSpec{{4}, BoolMaker()}, ArgSpec{{}}}));
  EXPECT_TRUE(CheckVmap(f, {ArgSpec{{4}}, ArgSpec{{2, 4}, BoolMaker()}, ArgSpec{{}}}));
  EXPECT_TRUE(CheckVmap(f, {ArgSpec{{}}, ArgSpec{{}, BoolMaker()}, ArgSpec{{}}}));
  EXPECT_TRUE(CheckVmap(f, {ArgSpec{{2, 1}, UniformMaker(-5, 5, kInt64)},
                            ArgSpec{{3}, BoolMaker()}, ArgSpec{{}}}));
  auto fs = [](const TensorList& a) { return TensorList{masked_fill(a[0], a[1], 0.5)}; };
  EXPECT_TRUE(CheckVmap(fs, {ArgSpec{{3, 4}}, ArgSpec{{3, 1}, BoolMaker()}}));
}

TEST(NnIndexingRules, IndexAdd) {
  for (int64_t dim : {0, 1, -1}) {
    SCOPED_TRACE(dim);
    const int64_t size = dim == 0 ? 3 : 4;
    const Shape src = dim == 0 ? Shape{5, 4} : Shape{3, 5};
    auto f = [dim](const TensorList& a) { return TensorList{index_add(a[0], dim, a[1], a[2])}; };
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{3, 4}}, ArgSpec{{5}, IndexMaker(size)}, ArgSpec{src}}));
    auto fa = [dim](const TensorList& a) {
      return TensorList{index_add(a[0], dim, a[1], a[2], -1.5)};
    };
    EXPECT_TRUE(CheckVmap(fa, {ArgSpec{{3, 4}}, ArgSpec{{5}, IndexMaker(size)}, ArgSpec{src}}));
  }
  auto f0 = [](const TensorList& a) { return TensorList{index_add(a[0], 0, a[1], a[2], 2)}; };
  EXPECT_TRUE(CheckVmap(f0, {ArgSpec{{}}, ArgSpec{{1}, IndexMaker(1)}, ArgSpec{{}}}));
  EXPECT_TRUE(CheckVmap(f0, {ArgSpec{{3}}, ArgSpec{{}, IndexMaker(3)}, ArgSpec{{1}}}));
  EXPECT_TRUE(CheckVmap(f0, {ArgSpec{{3, 2}}, ArgSpec{{0}, IndexMaker(3)}, ArgSpec{{0, 2}}}));
  // Integer data: alpha is converted to int64 (2.7 -> 2) in every batching path.
  auto fi = [](const TensorList& a) { return TensorList{index_add(a[0], 0, a[1], a[2], 2.7)}; };
  EXPECT_TRUE(CheckVmap(fi, {ArgSpec{{3, 2}, UniformMaker(-5, 5, kInt64)},
                             ArgSpec{{4}, IndexMaker(3)},
                             ArgSpec{{4, 2}, UniformMaker(-5, 5, kInt64)}}));
}

TEST(NnIndexingRules, TrilTriu) {
  for (int64_t d : {-1, 0, 2}) {
    SCOPED_TRACE(d);
    auto lo = [d](const TensorList& a) { return TensorList{tril(a[0], d)}; };
    auto up = [d](const TensorList& a) { return TensorList{triu(a[0], d)}; };
    EXPECT_TRUE(CheckVmap(lo, {ArgSpec{{3, 4}}}));
    EXPECT_TRUE(CheckVmap(up, {ArgSpec{{3, 4}}}));
    EXPECT_TRUE(CheckVmap(lo, {ArgSpec{{2, 2, 3}}}));
    EXPECT_TRUE(CheckVmap(up, {ArgSpec{{2, 3, 2}}}));
  }
}

TEST(NnIndexingRules, Roll) {
  auto f = [](const TensorList& a) { return TensorList{roll(a[0], {1, -2}, {0, 1})}; };
  EXPECT_TRUE(CheckVmap(f, {ArgSpec{{3, 4}}}));
  auto fl = [](const TensorList& a) { return TensorList{roll(a[0], {5})}; };
  EXPECT_TRUE(CheckVmap(fl, {ArgSpec{{3, 4}}}));
  EXPECT_TRUE(CheckVmap(fl, {ArgSpec{{}}}));
  auto fr = [](const TensorList& a) { return TensorList{roll(a[0], {2, 1}, {-1, -1})}; };
  EXPECT_TRUE(CheckVmap(fr, {ArgSpec{{2, 5}}}));
}

TEST(NnIndexingRules, PixelShuffle) {
  auto s = [](const TensorList& a) { return TensorList{pixel_shuffle(a[0], 2)}; };
  auto u = [](const TensorList& a) { return TensorList{pixel_unshuffle(a[0], 2)}; };
  EXPECT_TRUE(CheckVmap(s, {ArgSpec{{4, 2, 3}}}));
  EXPECT_TRUE(CheckVmap(s, {ArgSpec{{2, 4, 1, 1}}}));
  EXPECT_TRUE(CheckVmap(u, {ArgSpec{{1, 4, 6}}}));
  EXPECT_TRUE(CheckVmap(u, {ArgSpec{{2, 1, 2, 4}}}));
}

// gather_nd / index_put_nd and the torch-style index / index_put built on them: shared rows
// (the batch dim parked behind the indexed dims) and batched rows (led by their example),
// negative and repeated coordinates (accumulate false: the last write wins in every example).
TEST(NnIndexingRules, GatherNdAndIndexPutNd) {
  const ValueMaker signed_index = UniformMaker(-3, 3, kInt64);
  auto g = [](const TensorList& a) { return TensorList{gather_nd(a[0], a[1])}; };
  EXPECT_TRUE(CheckVmap(g, {ArgSpec{{3, 3, 2}}, ArgSpec{{4, 2}, signed_index}}));
  EXPECT_TRUE(CheckVmap(g, {ArgSpec{{3, 2}}, ArgSpec{{2, 2, 1}, IndexMaker(3)}}));
  EXPECT_TRUE(CheckVmap(g, {ArgSpec{{3}}, ArgSpec{{1}, IndexMaker(3)}}));
  EXPECT_TRUE(CheckVmap(g, {ArgSpec{{2, 3}}, ArgSpec{{2, 0}, IndexMaker(1)}}));
  for (bool acc : {false, true}) {
    SCOPED_TRACE(acc);
    auto p = [acc](const TensorList& a) {
      return TensorList{index_put_nd(a[0], a[1], a[2], acc)};
    };
    EXPECT_TRUE(CheckVmap(p, {ArgSpec{{3, 3, 2}}, ArgSpec{{4, 2}, signed_index}, ArgSpec{{4, 2}}}));
    EXPECT_TRUE(CheckVmap(p, {ArgSpec{{3, 3, 2}}, ArgSpec{{4, 2}, IndexMaker(3)}, ArgSpec{{2}}}));
    EXPECT_TRUE(CheckVmap(p, {ArgSpec{{3, 2}}, ArgSpec{{2, 2, 1}, IndexMaker(3)}, ArgSpec{{}}}));
    EXPECT_TRUE(CheckVmap(p, {ArgSpec{{4}}, ArgSpec{{6, 1}, IndexMaker(4)}, ArgSpec{{6}}}));
    EXPECT_TRUE(CheckVmap(p, {ArgSpec{{2, 3}}, ArgSpec{{0}, IndexMaker(1)}, ArgSpec{{3}}}));
  }
  auto ix = [](const TensorList& a) {
    return TensorList{index(a[0], {std::nullopt, a[1], a[2]})};
  };
  EXPECT_TRUE(CheckVmap(ix, {ArgSpec{{2, 3, 4}}, ArgSpec{{2, 2}, IndexMaker(3)},
                             ArgSpec{{2}, IndexMaker(4)}}));
  auto ip = [](const TensorList& a) {
    return TensorList{index_put(a[0], {a[1], std::nullopt, a[2]}, a[3], true)};
  };
  EXPECT_TRUE(CheckVmap(ip, {ArgSpec{{3, 2, 4}}, ArgSpec{{2}, IndexMaker(3)},
                             ArgSpec{{2}, IndexMaker(4)}, ArgSpec{{2, 2}}}));
}

// A batch of size 0 gives an empty batch of the per-example result shape.
TEST(NnIndexingRules, EmptyBatch) {
  EXPECT_EQ(Vmapped([](const Tensor& w) { return embedding(tensor<int64_t>({0, 1}), w); },
                    ones({0, 3, 2}))
                .sizes(),
            IntArrayRef({0, 2, 2}));
  EXPECT_EQ(Vmapped([](const Tensor& i) { return embedding(i, ones({3, 2})); },
                    zeros({0, 4}, kInt64))
                .sizes(),
            IntArrayRef({0, 4, 2}));
  EXPECT_EQ(Vmapped([](const Tensor& m) { return masked_fill(ones({3}), m, 1.0); },
                    zeros({0, 3}, kBool))
                .sizes(),
            IntArrayRef({0, 3}));
  EXPECT_EQ(Vmapped([](const Tensor& s) { return index_add(ones({3}), 0, tensor<int64_t>({1}), s); },
                    ones({0, 1}))
                .sizes(),
            IntArrayRef({0, 3}));
  EXPECT_EQ(Vmapped([](const Tensor& x) { return tril(x); }, ones({0, 2, 3})).sizes(),
            IntArrayRef({0, 2, 3}));
  EXPECT_EQ(Vmapped([](const Tensor& x) { return roll(x, {1}); }, ones({0, 2, 3})).sizes(),
            IntArrayRef({0, 2, 3}));
  EXPECT_EQ(Vmapped([](const Tensor& x) { return pixel_shuffle(x, 2); }, ones({0, 4, 1, 1}))
                .sizes(),
            IntArrayRef({0, 1, 2, 2}));
}

TEST(NnIndexingRules, Errors) {
  EXPECT_FT_ERROR(Vmapped([](const Tensor& i) { return gather_nd(ones({3}), i); },
                          tensor<int64_t>({0, 3}, {2, 1})),
                  "gather_nd: an index is out of range for x of shape [3]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& x) { return gather_nd(x, tensor<int64_t>({0, 0}, {1, 2})); },
                          ones({2, 3})),
                  "gather_nd: index of shape [1, 2] has 2 coordinates per row, but x of shape [3] "
                  "has only 1 dims");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) {
                    return index_put_nd(ones({3, 2}), tensor<int64_t>({1}, {1, 1}), v);
                  }, ones({2, 3})),
                  "index_put_nd: values of shape [3] cannot be broadcast to the indexed shape [1, 2]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& w) { return embedding(tensor<int64_t>({0}), w); },
                          ones({2, 3})),
                  "embedding: weight must be 2-D [num_embeddings, embedding_dim], got shape [3]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& w) { return embedding(tensor<int64_t>({3}), w); },
                          ones({2, 3, 2})),
                  "embedding: an index is out of range for an embedding table of 3 rows");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& i) { return embedding(i, ones({3, 2})); },
                          tensor<int64_t>({0, 3}, {2, 1})),
                  "embedding: index 3 is out of range for an embedding table of 3 rows");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& w) { return embedding(tensor<int64_t>({0}), w, 3); },
                          ones({2, 3, 2})),
                  "embedding: padding_idx 3 must be within num_embeddings 3");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& v) { return masked_fill(ones({3}), gt(ones({3}), 0.0), v); },
                          ones({2, 2})),
                  "masked_fill: value must be a 0-dim tensor, got shape [2]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& x) { return masked_fill(x, ones({3}), 1.0); },
                          ones({2, 3})),
                  "masked_fill: expected a bool mask, got float32 of shape [3]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& i) { return index_add(ones({3}), 0, i, ones({1})); },
                          tensor<int64_t>({0, 3}, {2, 1})),
                  "index_add: an index is out of range for dimension 0 with size 3");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& x) { return index_add(x, 0, tensor<int64_t>({0}),
                                                                  ones({2, 2})); },
                          ones({2, 3, 2})),
                  "index_add: the number of indices (1) must equal source.size(0) (2)");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& x) { return tril(x); }, ones({2, 3})),
                  "tril: expected a tensor of at least 2 dims (a batch of matrices), got shape [3]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& x) { return roll(x, {1}, {2}); }, ones({2, 3, 4})),
                  "roll: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& x) { return pixel_shuffle(x, 2); }, ones({2, 5, 2, 2})),
                  "pixel_shuffle: the channel dim (size(-3) = 5) must be divisible by "
                  "upscale_factor^2 (upscale_factor 2), input shape [5, 2, 2]");
  EXPECT_FT_ERROR(Vmapped([](const Tensor& x) { return pixel_unshuffle(x, 2); }, ones({2, 3, 2})),
                  "pixel_unshuffle: expected an input of at least 3 dims");
}

}  // namespace
}  // namespace ft

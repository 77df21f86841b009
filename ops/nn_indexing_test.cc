// The indexing and shape ops for models: values, vjps and jvps against PyTorch fixtures
// (tests/fixtures/torch/nn_indexing, written by tools/torch_fixtures/nn_indexing.py), closed
// forms, float32 and integer dtypes, empty and size-1 dims, non-contiguous inputs, and every
// error case.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interop/npy.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jvp/jvp.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::NonContiguousCopy;

// Fix loads array `name` of fixture case `c` from the test's runfiles.
Tensor Fix(const std::string& c, const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string root =
      srcdir != nullptr
          ? std::string(srcdir) + "/" + (workspace != nullptr ? workspace : "ft") + "/"
          : "";
  return LoadNpy(root + "tests/fixtures/torch/nn_indexing/" + c + "." + name + ".npy");
}

Tensor I64(std::vector<int64_t> v, Shape shape) { return tensor(v, shape); }
Tensor I64(std::vector<int64_t> v) { return tensor(v); }

// At: the element of t at `pos`.
int64_t At(const Tensor& t, std::vector<int64_t> pos) {
  Tensor e = t;
  for (int64_t p : pos) e = select(e, 0, p);
  return e.item<int64_t>();
}

// CheckFixture: f of the differentiable inputs `names` of case `c` gives torch's output, its
// vjp along the saved cotangent gives torch's gradients, and its jvp torch's tangent.
void CheckFixture(const std::string& c, const std::vector<std::string>& names,
                  const std::function<Tensor(const TensorList&)>& f) {
  SCOPED_TRACE(c);
  TensorList primals, tangents;
  for (const std::string& n : names) {
    primals.push_back(Fix(c, n));
    tangents.push_back(Fix(c, "t_" + n));
  }
  const TensorListFn fl = [f](const TensorList& a) { return TensorList{f(a)}; };
  EXPECT_TENSOR_NEAR(f(primals), Fix(c, "out"), 1e-12);
  VjpResult r = vjp(fl, primals);
  EXPECT_TENSOR_NEAR(r.outputs[0], Fix(c, "out"), 1e-12);
  const TensorList g = r.vjp_fn({Fix(c, "ct")});
  ASSERT_EQ(g.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_TENSOR_NEAR(g[i], Fix(c, "g_" + names[i]), 1e-12) << names[i];
  }
  JvpResult j = jvp(fl, primals, tangents);
  EXPECT_TENSOR_NEAR(j.tangents[0], Fix(c, "jvp"), 1e-12);
}

// ---- PyTorch fixtures (float64: values, vjp, jvp) ----

TEST(NnIndexingOps, EmbeddingFixtures) {
  const Tensor idx = Fix("embedding", "input");
  CheckFixture("embedding", {"weight"}, [&](const TensorList& a) { return embedding(idx, a[0]); });
  CheckFixture("embedding_padding", {"weight"},
               [&](const TensorList& a) { return embedding(idx, a[0], 1); });
  CheckFixture("embedding_padding_neg", {"weight"},
               [&](const TensorList& a) { return embedding(idx, a[0], -1); });
}

TEST(NnIndexingOps, MaskedFillFixtures) {
  const Tensor mask = Fix("masked_fill", "mask");
  CheckFixture("masked_fill", {"x", "value"},
               [&](const TensorList& a) { return masked_fill(a[0], mask, a[1]); });
  const Tensor mask2 = Fix("masked_fill_broadcast", "mask");  // [2, 1] against x [3]
  CheckFixture("masked_fill_broadcast", {"x"},
               [&](const TensorList& a) { return masked_fill(a[0], mask2, 0.5); });
}

TEST(NnIndexingOps, IndexAddFixtures) {
  const Tensor idx = Fix("index_add", "index");
  CheckFixture("index_add", {"x", "source"},
               [&](const TensorList& a) { return index_add(a[0], 1, idx, a[1], 1.5); });
  CheckFixture("index_add_dim0", {"x", "source"},
               [&](const TensorList& a) { return index_add(a[0], 0, idx, a[1]); });
}

TEST(NnIndexingOps, TrilTriuFixtures) {
  for (int64_t d : {-1, 0, 2}) {
    const std::string tag = d < 0 ? "m" + std::to_string(-d) : std::to_string(d);
    CheckFixture("tril_" + tag, {"x"}, [d](const TensorList& a) { return tril(a[0], d); });
    CheckFixture("triu_" + tag, {"x"}, [d](const TensorList& a) { return triu(a[0], d); });
  }
}

TEST(NnIndexingOps, RollFixtures) {
  CheckFixture("roll_dims", {"x"}, [](const TensorList& a) { return roll(a[0], {1, -3}, {0, 1}); });
  CheckFixture("roll_flat", {"x"}, [](const TensorList& a) { return roll(a[0], {5}); });
  CheckFixture("roll_repeat", {"x"},
               [](const TensorList& a) { return roll(a[0], {2, 3}, {1, -1}); });
}

TEST(NnIndexingOps, PixelShuffleFixtures) {
  CheckFixture("pixel_shuffle", {"x"}, [](const TensorList& a) { return pixel_shuffle(a[0], 2); });
  CheckFixture("pixel_unshuffle", {"x"},
               [](const TensorList& a) { return pixel_unshuffle(a[0], 2); });
}

TEST(NnIndexingOps, AdvancedIndexingFixtures) {
  const Tensor i = Fix("index_adjacent", "i"), j = Fix("index_adjacent", "j");
  CheckFixture("index_adjacent", {"x"},
               [&](const TensorList& a) { return index(a[0], {std::nullopt, i, j}); });
  const Tensor ni = Fix("index_nonadjacent", "i"), nj = Fix("index_nonadjacent", "j");
  CheckFixture("index_nonadjacent", {"x"},
               [&](const TensorList& a) { return index(a[0], {ni, std::nullopt, nj}); });
  const Tensor pi = Fix("index_put_accumulate", "i");
  CheckFixture("index_put_accumulate", {"x", "values"}, [&](const TensorList& a) {
    return index_put(a[0], {std::nullopt, pi}, a[1], true);
  });
  const Tensor qi = Fix("index_put", "i"), qj = Fix("index_put", "j");
  CheckFixture("index_put", {"x", "values"}, [&](const TensorList& a) {
    return index_put(a[0], {qi, std::nullopt, qj}, a[1]);
  });
}

// ---- Closed forms and dtypes ----

TEST(NnIndexingOps, EmbeddingClosedForm) {
  const Tensor w = tensor({0.0, 1.0, 2.0, 3.0, 4.0, 5.0}, {3, 2});
  EXPECT_TENSOR_EQ(embedding(I64({2, 0}), w), tensor({4.0, 5.0, 0.0, 1.0}, {2, 2}));
  // A rank-0 index selects one row; padding_idx leaves the forward alone.
  EXPECT_TENSOR_EQ(embedding(scalar_tensor(int64_t{1}, kInt64), w, 1), tensor({2.0, 3.0}));
  EXPECT_TENSOR_EQ(embedding(I64({2, 0}), to(w, kFloat32)),
                   tensor({4.0f, 5.0f, 0.0f, 1.0f}, {2, 2}));
  EXPECT_TENSOR_EQ(embedding(I64({1}), to(w, kInt64)), I64({2, 3}, {1, 2}));
  // The padding row's gradient is zero, the others accumulate repeats.
  const Tensor g = grad([](const TensorList& a) {
    return sum(embedding(I64({0, 0, 2, 1}), a[0], -2) * 3.0);
  })({w})[0];
  EXPECT_TENSOR_EQ(g, tensor({6.0, 6.0, 0.0, 0.0, 3.0, 3.0}, {3, 2}));
}

TEST(NnIndexingOps, MaskedFillClosedForm) {
  const Tensor x = tensor({1.0, 2.0, 3.0});
  const Tensor m = tensor(std::vector<bool>{true, false, true}, {3});
  EXPECT_TENSOR_EQ(masked_fill(x, m, -1.0), tensor({-1.0, 2.0, -1.0}));
  EXPECT_TENSOR_EQ(masked_fill(to(x, kFloat32), m, 0.5), tensor({0.5f, 2.0f, 0.5f}));
  // The value is converted to x's dtype (truncated for int64), and x's dtype is kept.
  EXPECT_TENSOR_EQ(masked_fill(I64({4, 5, 6}), m, 7.9), I64({7, 5, 7}));
  EXPECT_TENSOR_EQ(masked_fill(I64({4, 5, 6}), m, scalar_tensor(2.0)), I64({2, 5, 2}));
  const Tensor none = tensor(std::vector<bool>{false, false, false}, {3});
  EXPECT_TENSOR_EQ(masked_fill(x, none, 9.0), x);
  // The mask may broadcast x: the result has the broadcast shape.
  const Tensor m2 = tensor(std::vector<bool>{true, false}, {2, 1});
  EXPECT_TENSOR_EQ(masked_fill(x, m2, 0.0), tensor({0.0, 0.0, 0.0, 1.0, 2.0, 3.0}, {2, 3}));
}

TEST(NnIndexingOps, IndexAddClosedForm) {
  EXPECT_TENSOR_EQ(index_add(zeros({3}, kFloat64), 0, I64({0, 0}), tensor({1.0, 2.0})),
                   tensor({3.0, 0.0, 0.0}));
  EXPECT_TENSOR_EQ(index_add(I64({1, 1, 1}), 0, I64({2, 0}), I64({10, 20}), 2),
                   I64({41, 1, 21}));
  EXPECT_TENSOR_EQ(index_add(zeros({2, 2}, kFloat32), 1, I64({1}), ones({2, 1}, kFloat32), 0.5),
                   tensor({0.0f, 0.5f, 0.0f, 0.5f}, {2, 2}));
  // Rank 0 counts as [1], for the input and for a one-element index.
  EXPECT_TENSOR_EQ(index_add(scalar_tensor(1.0), 0, I64({0}), scalar_tensor(2.0)),
                   scalar_tensor(3.0));
  EXPECT_TENSOR_EQ(index_add(zeros({3}, kFloat64), 0, scalar_tensor(int64_t{1}, kInt64), tensor({2.0})),
                   tensor({0.0, 2.0, 0.0}));
}

// index against its definition, element by element: x [3, 4, 5] (values 0..59) indexed at
// dims 0 and 2 (not adjacent: B = [2, 2] first, then the kept dim 1) and at dims 1 and 2
// (adjacent: B replaces them, after dim 0).
TEST(NnIndexingOps, IndexAgainstLoops) {
  const Tensor x = reshape(arange(0, 60, 1, kInt64), {3, 4, 5});
  const Tensor i = I64({2, -3, 0, 1}, {2, 2});
  const Tensor j = I64({4, -1}, {2});  // broadcasts against i to [2, 2]
  auto wrap = [](int64_t v, int64_t n) { return v < 0 ? v + n : v; };
  const Tensor apart = index(x, {i, std::nullopt, j});
  ASSERT_EQ(apart.sizes(), (IntArrayRef{2, 2, 4}));
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t m = 0; m < 4; ++m) {
        const int64_t xi = wrap(At(i, {a, b}), 3), xj = wrap(At(j, {b}), 5);
        EXPECT_EQ(At(apart, {a, b, m}), (xi * 4 + m) * 5 + xj) << a << b << m;
      }
    }
  }
  const Tensor k = I64({3, 0, -1, 2}, {2, 2});
  const Tensor together = index(x, {std::nullopt, k, j});
  ASSERT_EQ(together.sizes(), (IntArrayRef{3, 2, 2}));
  for (int64_t n = 0; n < 3; ++n) {
    for (int64_t a = 0; a < 2; ++a) {
      for (int64_t b = 0; b < 2; ++b) {
        const int64_t xk = wrap(At(k, {a, b}), 4), xj = wrap(At(j, {b}), 5);
        EXPECT_EQ(At(together, {n, a, b}), (n * 4 + xk) * 5 + xj);
      }
    }
  }
  // One index selects rows; no index tensor at all copies.
  EXPECT_TENSOR_EQ(index(x, {I64({1})}), narrow(x, 0, 1, 1));
  EXPECT_TENSOR_EQ(index(x, {std::nullopt}), x);
  EXPECT_TENSOR_EQ(index(x, {}), x);
  // A rank-0 index drops the dim, like select.
  EXPECT_TENSOR_EQ(index(x, {std::nullopt, scalar_tensor(int64_t{2}, kInt64)}), select(x, 1, 2));
}

TEST(NnIndexingOps, IndexPutClosedForm) {
  const Tensor i = I64({0, 2, 0});
  // accumulate adds up repeated places; without, the last write wins.
  EXPECT_TENSOR_EQ(index_put(zeros({3}, kFloat64), {i}, tensor({1.0, 2.0, 3.0}), true),
                   tensor({4.0, 0.0, 2.0}));
  EXPECT_TENSOR_EQ(index_put(zeros({3}, kFloat64), {i}, tensor({1.0, 2.0, 3.0})),
                   tensor({3.0, 0.0, 2.0}));
  // values broadcast over the indexed shape [2, 4]: rows 0 and 2 of dim 1, all of dim 2.
  const Tensor x = zeros({1, 3, 4}, kFloat64);
  const Tensor put = index_put(x, {std::nullopt, I64({0, 2})}, tensor({1.0, 2.0, 3.0, 4.0}));
  EXPECT_TENSOR_EQ(put, tensor({1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0},
                               {1, 3, 4}));
  // Non-adjacent indices: values come in torch's order, B first ([2] then kept [3]).
  const Tensor y = index_put(zeros({2, 3, 2}, kFloat64), {I64({0, 1}), std::nullopt, I64({1, 0})},
                             tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}));
  EXPECT_TENSOR_EQ(y, tensor({0.0, 1.0, 0.0, 2.0, 0.0, 3.0, 4.0, 0.0, 5.0, 0.0, 6.0, 0.0},
                             {2, 3, 2}));
  // int64 and bool; the input is never modified.
  const Tensor n = I64({5, 5, 5});
  EXPECT_TENSOR_EQ(index_put(n, {I64({1, 1})}, I64({2, 3}), true), I64({5, 10, 5}));
  EXPECT_TENSOR_EQ(n, I64({5, 5, 5}));
  EXPECT_TENSOR_EQ(index_put(zeros({3}, kBool), {I64({2})}, ones({1}, kBool)),
                   tensor(std::vector<bool>{false, false, true}));
  // The primitives directly: rows of coordinates into the leading dims.
  const Tensor m = reshape(arange(0, 12, 1, kFloat64), {3, 4});
  EXPECT_TENSOR_EQ(gather_nd(m, I64({0, 1, 2, 3, -1, 0}, {3, 2})), tensor({1.0, 11.0, 8.0}));
  EXPECT_TENSOR_EQ(gather_nd(m, I64({2, 0}, {2, 1})), index_select(m, 0, I64({2, 0})));
  EXPECT_TENSOR_EQ(index_put_nd(zeros({2, 2}, kFloat64), I64({1, 0, 1, 0}, {2, 2}),
                                tensor({1.0, 2.0}), true),
                   tensor({0.0, 0.0, 3.0, 0.0}, {2, 2}));
}

// Without accumulate, a place written twice keeps the last value, so only the last of the
// repeated rows gets a gradient (torch gives every repeat one; that is not the derivative).
TEST(NnIndexingOps, IndexPutRepeatedPlacesGradient) {
  const Tensor i = I64({1, 0, 1});
  const ScalarFn f = [&](const TensorList& a) {
    return sum(index_put(a[0], {i}, a[1]) * tensor({1.0, 10.0}));
  };
  const TensorList g = grad(f, {0, 1})({tensor({0.5, 0.5}), tensor({1.0, 2.0, 3.0})});
  EXPECT_TENSOR_EQ(g[0], tensor({0.0, 0.0}));
  EXPECT_TENSOR_EQ(g[1], tensor({0.0, 1.0, 10.0}));
}

// Found by nn_fuzzer (tests/fuzz/corpus/nn_fuzzer/regression-index-put-int64-overflow): an
// accumulating index_put of int64 values added them in signed arithmetic (UB on overflow,
// reported under --config=ubsan); they wrap, like torch's and scatter_add's.
TEST(NnIndexingOps, IndexPutAccumulateInt64Wraps) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const Tensor x = tensor(std::vector<int64_t>{kMin, kMax}, {2});
  const Tensor values = tensor(std::vector<int64_t>{kMin, 1}, {2});
  const Tensor out =
      index_put(x, {tensor(std::vector<int64_t>{0, 1}, {2})}, values, /*accumulate=*/true);
  EXPECT_EQ(out.to_vector<int64_t>(), (std::vector<int64_t>{0, kMin}));
  const Tensor nd = index_put_nd(x, tensor(std::vector<int64_t>{1, 1}, {2, 1}),
                                 tensor(std::vector<int64_t>{1}, {1}), /*accumulate=*/true);
  EXPECT_EQ(nd.to_vector<int64_t>(), (std::vector<int64_t>{kMin, kMin + 1}));
}

TEST(NnIndexingOps, TrilTriuClosedForm) {
  EXPECT_TENSOR_EQ(tril(ones({2, 3}, kFloat64)), tensor({1.0, 0.0, 0.0, 1.0, 1.0, 0.0}, {2, 3}));
  EXPECT_TENSOR_EQ(triu(ones({2, 3}, kFloat64), 1), tensor({0.0, 1.0, 1.0, 0.0, 0.0, 1.0}, {2, 3}));
  EXPECT_TENSOR_EQ(tril(ones({2, 3}, kFloat32), -1),
                   tensor({0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f}, {2, 3}));
  EXPECT_TENSOR_EQ(triu(I64({1, 2, 3, 4}, {2, 2})), I64({1, 2, 0, 4}, {2, 2}));
  const Tensor b = tensor(std::vector<bool>{true, true, true, true}, {2, 2});
  EXPECT_TENSOR_EQ(tril(b), tensor(std::vector<bool>{true, false, true, true}, {2, 2}));
  // Diagonals far outside the matrix keep or clear everything (no overflow).
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_TENSOR_EQ(tril(ones({2, 2}), big), ones({2, 2}));
  EXPECT_TENSOR_EQ(tril(ones({2, 2}), -big), zeros({2, 2}));
  EXPECT_TENSOR_EQ(triu(ones({2, 2}), std::numeric_limits<int64_t>::min()), ones({2, 2}));
}

TEST(NnIndexingOps, RollClosedForm) {
  const Tensor x = tensor({1.0, 2.0, 3.0, 4.0, 5.0});
  EXPECT_TENSOR_EQ(roll(x, {2}), tensor({4.0, 5.0, 1.0, 2.0, 3.0}));
  EXPECT_TENSOR_EQ(roll(x, {-1}, {0}), tensor({2.0, 3.0, 4.0, 5.0, 1.0}));
  EXPECT_TENSOR_EQ(roll(x, {12}, {-1}), tensor({4.0, 5.0, 1.0, 2.0, 3.0}));
  EXPECT_TENSOR_EQ(roll(x, {std::numeric_limits<int64_t>::min()}), roll(x, {2}));
  const Tensor m = I64({0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_TENSOR_EQ(roll(m, {1}), I64({5, 0, 1, 2, 3, 4}, {2, 3}));
  EXPECT_TENSOR_EQ(roll(m, {1, 1}, {0, 1}), I64({5, 3, 4, 2, 0, 1}, {2, 3}));
  EXPECT_TENSOR_EQ(roll(to(x, kFloat32), {1}), tensor({5.0f, 1.0f, 2.0f, 3.0f, 4.0f}));
  EXPECT_TENSOR_EQ(roll(scalar_tensor(3.0), {4}), scalar_tensor(3.0));
  // A zero shift still returns a new tensor.
  const Tensor same = roll(x, {5}, {0});
  EXPECT_TENSOR_EQ(same, x);
  EXPECT_NE(same.data<double>(), x.data<double>());
}

TEST(NnIndexingOps, PixelShuffleClosedForm) {
  const Tensor x = reshape(to(arange(0.0, 16.0), kFloat64), {4, 2, 2});
  const Tensor y = pixel_shuffle(x, 2);
  ASSERT_EQ(y.sizes(), IntArrayRef({1, 4, 4}));
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t w = 0; w < 2; ++w) {
      for (int64_t i = 0; i < 2; ++i) {
        for (int64_t j = 0; j < 2; ++j) {
          EXPECT_EQ(y.to_vector<double>()[(h * 2 + i) * 4 + w * 2 + j],
                    x.to_vector<double>()[(i * 2 + j) * 4 + h * 2 + w]);
        }
      }
    }
  }
  EXPECT_TENSOR_EQ(pixel_unshuffle(y, 2), x);
  EXPECT_TENSOR_EQ(pixel_unshuffle(pixel_shuffle(to(x, kFloat32), 2), 2), to(x, kFloat32));
  const Tensor x5 = reshape(arange(0.0, 72.0), {2, 1, 4, 3, 3});
  EXPECT_TENSOR_EQ(pixel_unshuffle(pixel_shuffle(x5, 2), 2), x5);
  // Factor 1 is the identity, as a new tensor.
  const Tensor id = pixel_shuffle(x, 1);
  EXPECT_TENSOR_EQ(id, x);
  EXPECT_NE(id.data<double>(), x.data<double>());
}

// ---- Empty and size-1 dims ----

TEST(NnIndexingOps, EmptyAndSizeOne) {
  const Tensor w = ones({4, 3});
  EXPECT_EQ(embedding(I64({}, {0}), w).sizes(), IntArrayRef({0, 3}));
  EXPECT_EQ(embedding(I64({1, 2}), ones({4, 0})).sizes(), IntArrayRef({2, 0}));
  EXPECT_EQ(embedding(I64({}, {2, 0}), ones({0, 3})).sizes(), IntArrayRef({2, 0, 3}));
  EXPECT_TENSOR_EQ(embedding(I64({0}, {1, 1}), ones({1, 1})), ones({1, 1, 1}));
  EXPECT_EQ(masked_fill(ones({0, 3}), tensor(std::vector<bool>{true, false, true}, {3}), 0.0)
                .sizes(),
            IntArrayRef({0, 3}));
  EXPECT_TENSOR_EQ(index_add(ones({3, 2}), 0, I64({}, {0}), ones({0, 2})), ones({3, 2}));
  EXPECT_TENSOR_EQ(index_add(ones({1, 1}), 1, I64({0}), ones({1, 1})), full({1, 1}, 2.0));
  EXPECT_EQ(tril(ones({0, 3})).sizes(), IntArrayRef({0, 3}));
  EXPECT_EQ(triu(ones({2, 3, 0})).sizes(), IntArrayRef({2, 3, 0}));
  EXPECT_TENSOR_EQ(tril(ones({1, 1})), ones({1, 1}));
  EXPECT_EQ(roll(ones({0, 3}), {1}, {0}).sizes(), IntArrayRef({0, 3}));
  EXPECT_EQ(roll(ones({0, 3}), {1}).sizes(), IntArrayRef({0, 3}));
  EXPECT_TENSOR_EQ(roll(ones({1, 3}), {7}, {0}), ones({1, 3}));
  EXPECT_EQ(pixel_shuffle(ones({0, 4, 2, 2}), 2).sizes(), IntArrayRef({0, 1, 4, 4}));
  EXPECT_EQ(pixel_unshuffle(ones({2, 0, 2, 2}), 2).sizes(), IntArrayRef({2, 0, 1, 1}));
  EXPECT_EQ(pixel_shuffle(ones({4, 0, 1}), 2).sizes(), IntArrayRef({1, 0, 2}));
}

// ---- Non-contiguous inputs give the contiguous inputs' results ----

TEST(NnIndexingOps, NonContiguousInputs) {
  const Tensor x = reshape(arange(0.0, 24.0), {2, 3, 4});
  const Tensor nx = NonContiguousCopy(x);
  const Tensor tx = transpose(reshape(arange(0.0, 12.0), {3, 4}), 0, 1);  // [4, 3]
  const Tensor ctx = contiguous(tx);
  const Tensor idx = I64({3, 1, 0, 3});
  EXPECT_TENSOR_EQ(embedding(idx, tx), embedding(idx, ctx));
  EXPECT_TENSOR_EQ(embedding(NonContiguousCopy(idx), tx), embedding(idx, ctx));
  const Tensor m = gt(x, 7.0);
  EXPECT_TENSOR_EQ(masked_fill(nx, NonContiguousCopy(m), -1.0), masked_fill(x, m, -1.0));
  EXPECT_TENSOR_EQ(index_add(tx, 0, NonContiguousCopy(I64({1, 1})), narrow(ctx, 0, 0, 2)),
                   index_add(ctx, 0, I64({1, 1}), narrow(ctx, 0, 0, 2)));
  EXPECT_TENSOR_EQ(tril(tx, 1), tril(ctx, 1));
  EXPECT_TENSOR_EQ(triu(nx), triu(x));
  EXPECT_TENSOR_EQ(roll(tx, {1, 2}, {0, 1}), roll(ctx, {1, 2}, {0, 1}));
  EXPECT_TENSOR_EQ(roll(tx, {3}), roll(ctx, {3}));
  const Tensor p = reshape(arange(0.0, 32.0), {2, 4, 2, 2});
  EXPECT_TENSOR_EQ(pixel_shuffle(NonContiguousCopy(p), 2), pixel_shuffle(p, 2));
  const Tensor q = reshape(arange(0.0, 32.0), {2, 4, 4});
  EXPECT_TENSOR_EQ(pixel_unshuffle(NonContiguousCopy(q), 2), pixel_unshuffle(q, 2));
}

// ---- Errors ----

TEST(NnIndexingOps, EmbeddingErrors) {
  const Tensor w = ones({3, 2});
  EXPECT_FT_ERROR(embedding(tensor({0.0}), w),
                  "embedding: expected an int64 input (indices) tensor, got float64 of shape [1]");
  EXPECT_FT_ERROR(embedding(I64({0}), ones({3})),
                  "embedding: weight must be 2-D [num_embeddings, embedding_dim], got shape [3]");
  EXPECT_FT_ERROR(embedding(I64({0, 5}), w),
                  "embedding: index 5 is out of range for an embedding table of 3 rows "
                  "(weight shape [3, 2])");
  EXPECT_FT_ERROR(embedding(I64({-1}), w), "embedding: index -1 is out of range");
  EXPECT_FT_ERROR(embedding(I64({0}), w, 3),
                  "embedding: padding_idx 3 must be within num_embeddings 3");
  EXPECT_FT_ERROR(embedding(I64({0}), w, -4), "padding_idx -4 must be within num_embeddings 3");
  EXPECT_FT_ERROR(embedding(I64({0}), ones({0, 2})),
                  "index 0 is out of range for an embedding table of 0 rows");
}

TEST(NnIndexingOps, MaskedFillErrors) {
  const Tensor x = ones({2, 3});
  EXPECT_FT_ERROR(masked_fill(x, ones({3}), 0.0),
                  "masked_fill: expected a bool mask, got float32 of shape [3]");
  EXPECT_FT_ERROR(masked_fill(x, gt(x, 0.0), tensor({1.0, 2.0})),
                  "masked_fill: value must be a 0-dim tensor, got shape [2]");
  EXPECT_FT_ERROR(masked_fill(x, tensor(std::vector<bool>{true, false}, {2}), 0.0),
                  "masked_fill");
}

TEST(NnIndexingOps, IndexAddErrors) {
  const Tensor x = zeros({3, 2});
  EXPECT_FT_ERROR(index_add(x, 0, tensor({0.0}), ones({1, 2})),
                  "index_add: expected an int64 index tensor, got float64 of shape [1]");
  EXPECT_FT_ERROR(index_add(x, 0, I64({0, 1}, {1, 2}), ones({2, 2})),
                  "index_add: index must be a rank-0 or 1-D tensor, got shape [1, 2]");
  EXPECT_FT_ERROR(index_add(x, 0, I64({0}), ones({1, 2}, kFloat64)),
                  "index_add: source dtype float64 must match the input dtype float32");
  EXPECT_FT_ERROR(index_add(x, 2, I64({0}), ones({1, 2})), "index_add: dim 2 is out of range");
  EXPECT_FT_ERROR(index_add(x, 0, I64({0}), ones({2})),
                  "index_add: source must have the input's number of dims, got source shape "
                  "[2] and input shape [3, 2]");
  EXPECT_FT_ERROR(index_add(x, 0, I64({0, 1}), ones({3, 2})),
                  "index_add: the number of indices (2) must equal source.size(0) (3)");
  EXPECT_FT_ERROR(index_add(x, 0, I64({0, 1}), ones({2, 3})),
                  "index_add: source shape [2, 3] must match input shape [3, 2] in every dim "
                  "but 0 (dim 1: 3 != 2)");
  EXPECT_FT_ERROR(index_add(x, 0, I64({0, 3}), ones({2, 2})),
                  "index_add: index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_FT_ERROR(index_add(x, -1, I64({-1}), ones({3, 1})),
                  "index_add: index -1 is out of bounds for dimension 1 with size 2");
}

TEST(NnIndexingOps, TrilTriuRollErrors) {
  EXPECT_FT_ERROR(tril(ones({3})),
                  "tril: expected a tensor of at least 2 dims (a batch of matrices), got shape [3]");
  EXPECT_FT_ERROR(triu(scalar_tensor(1.0)), "triu: expected a tensor of at least 2 dims");
  const Tensor x = ones({2, 3});
  EXPECT_FT_ERROR(roll(x, {}, {}), "roll: shifts must not be empty");
  EXPECT_FT_ERROR(roll(x, {1, 2}), "roll: with no dims the flattened tensor is rolled, so "
                                   "shifts must hold one value, got 2 shifts");
  EXPECT_FT_ERROR(roll(x, {1}, {0, 1}),
                  "roll: shifts and dims must have the same length, got 1 shifts and 2 dims");
  EXPECT_FT_ERROR(roll(x, {1}, {2}), "roll: dim 2 is out of range");
  EXPECT_FT_ERROR(roll(scalar_tensor(1.0), {1}, {0}),
                  "roll: dim 0 is out of range for a rank-0 tensor");
}

TEST(NnIndexingOps, PixelShuffleErrors) {
  EXPECT_FT_ERROR(pixel_shuffle(ones({4, 2}), 2),
                  "pixel_shuffle: expected an input of at least 3 dims [*, C * r^2, H, W], got "
                  "shape [4, 2]");
  EXPECT_FT_ERROR(pixel_shuffle(ones({4, 2, 2}), 0),
                  "pixel_shuffle: upscale_factor must be positive, got 0");
  EXPECT_FT_ERROR(pixel_shuffle(ones({5, 2, 2}), 2),
                  "pixel_shuffle: the channel dim (size(-3) = 5) must be divisible by "
                  "upscale_factor^2 (upscale_factor 2), input shape [5, 2, 2]");
  EXPECT_FT_ERROR(pixel_shuffle(ones({1, 2, 2}), std::numeric_limits<int64_t>::max()),
                  "must be divisible by upscale_factor^2");
  EXPECT_FT_ERROR(pixel_unshuffle(ones({2}), 2), "pixel_unshuffle: expected an input of at least "
                                                 "3 dims");
  EXPECT_FT_ERROR(pixel_unshuffle(ones({1, 4, 4}), -1),
                  "pixel_unshuffle: downscale_factor must be positive, got -1");
  EXPECT_FT_ERROR(pixel_unshuffle(ones({1, 5, 4}), 2),
                  "pixel_unshuffle: height and width (size(-2) = 5, size(-1) = 4) must be "
                  "divisible by downscale_factor 2, input shape [1, 5, 4]");
}

TEST(NnIndexingOps, AdvancedIndexingErrors) {
  const Tensor x = zeros({2, 3}, kFloat64);
  EXPECT_FT_ERROR(index(x, {I64({0}), I64({0}), I64({0})}),
                  "index: too many indices for a tensor of shape [2, 3]: 3 given");
  EXPECT_FT_ERROR(index(x, {ones({2}, kBool)}),
                  "index: the index for dim 0 is a boolean mask (shape [2])");
  EXPECT_FT_ERROR(index(x, {std::nullopt, ones({1}, kFloat32)}),
                  "index: the index for dim 1 must be int64, got float32");
  EXPECT_FT_ERROR(index(x, {I64({0, 1}), I64({0, 1, 2})}), "index");
  EXPECT_FT_ERROR(index(x, {std::nullopt, I64({3})}),
                  "index: an index is out of range for x of shape [2, 3] indexed at dims [1] "
                  "(gather_nd: index 3 is out of bounds for dimension 0 with size 3)");
  EXPECT_FT_ERROR(index(x, {I64({-3})}), "index -3 is out of bounds for dimension 0 with size 2");
  EXPECT_FT_ERROR(index_put(x, {I64({0})}, ones({3}, kFloat32)),
                  "index_put: values must have x's dtype float64, got float32");
  EXPECT_FT_ERROR(index_put(x, {I64({0, 1})}, ones({2}, kFloat64)),
                  "index_put: values of shape [2] cannot be broadcast to the indexed shape [2, 3]");
  EXPECT_FT_ERROR(gather_nd(x, scalar_tensor(int64_t{0}, kInt64)),
                  "gather_nd: index must have at least one dim");
  EXPECT_FT_ERROR(gather_nd(x, I64({0, 0, 0}, {1, 3})),
                  "gather_nd: index of shape [1, 3] has 3 coordinates per row, but x of shape "
                  "[2, 3] has only 2 dims");
  EXPECT_FT_ERROR(index_put_nd(x, I64({0}, {1, 1}), ones({4}, kFloat64)),
                  "index_put_nd: values of shape [4] cannot be broadcast to the indexed shape [1, 3]");
}

}  // namespace
}  // namespace ft

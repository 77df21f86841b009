// The sorting kernels of kernels/sort.h, called directly: sort, argsort and topk along every
// dim, ascending and descending, largest and smallest, sorted and by index, for float32,
// float64, int64 and bool, with ties, NaNs and signed zeros (the documented strict order),
// rank 0, size-0 and size-1 dims, non-contiguous inputs (transposed, strided, sliced with a
// step, expanded with stride 0), slices long enough for std::sort's introsort, 300 seeded
// random shape / layout / dim cases, and every documented error.
//
// Oracle: std::stable_sort of each slice's (value, index) pairs in double with the documented
// key order written out (NaN above every number, all NaNs equal, -0.0 == 0.0), so that equal
// keys keep their original order; topk takes the first k of that order (re-sorted by index
// when sorted is false). Hand-worked cases check the documented examples.
#include "kernels/sort.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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

using ::ft::testing::NonContiguousCopy;
using ::ft::testing::ShapeOf;
using ::ft::testing::TensorEqual;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Keys: seeded values of `dtype` with many ties: small integers (float dtypes also get
// halves, NaNs, infinities and signed zeros); bool is false / true.
Tensor Keys(IntArrayRef shape, DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, 15);
  std::vector<double> v(static_cast<size_t>(Numel(shape)));
  for (double& e : v) {
    const int r = d(rng);
    if (dtype == kBool) {
      e = r % 2;
    } else if (dtype == kInt64) {
      e = r - 7;
    } else if (r == 0) {
      e = kNan;
    } else if (r == 1) {
      e = -kInf;
    } else if (r == 2) {
      e = kInf;
    } else if (r == 3) {
      e = -0.0;
    } else if (r == 4) {
      e = 0.0;
    } else {
      e = (r - 10) * 0.5;
    }
  }
  return to(tensor(v, shape), dtype);
}

// Before: the documented key order, strict: NaN above every number, NaNs equal to each other.
bool Before(double a, double b, bool descending) {
  if (descending) std::swap(a, b);
  if (std::isnan(a)) return false;
  return std::isnan(b) || a < b;
}

struct Ordered {
  std::vector<double> values;
  std::vector<int64_t> indices;
  Shape shape;
};

// RefOrder: each slice of x along `dim` stably ordered; the first k entries of each (k < 0:
// all), re-sorted by original index when by_index.
Ordered RefOrder(const Tensor& x, int64_t dim, bool descending, int64_t k = -1,
                 bool by_index = false) {
  const std::vector<double> v = x.to_vector<double>();
  Shape shape = ShapeOf(x);
  if (shape.empty()) shape.push_back(1);  // rank 0: one slice of one element
  if (dim < 0) dim += static_cast<int64_t>(shape.size());
  const int64_t n = shape[dim];
  if (k < 0) k = n;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
  for (int64_t d = dim + 1; d < static_cast<int64_t>(shape.size()); ++d) inner *= shape[d];
  Ordered r;
  r.shape = shape;
  r.shape[dim] = k;
  if (x.dim() == 0) r.shape.clear();
  r.values.resize(static_cast<size_t>(outer * k * inner));
  r.indices.resize(r.values.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      std::vector<std::pair<double, int64_t>> slice;
      for (int64_t j = 0; j < n; ++j) slice.emplace_back(v[(o * n + j) * inner + in], j);
      std::stable_sort(slice.begin(), slice.end(), [&](const auto& a, const auto& b) {
        return Before(a.first, b.first, descending);
      });
      slice.resize(static_cast<size_t>(k));
      if (by_index) {
        std::sort(slice.begin(), slice.end(),
                  [](const auto& a, const auto& b) { return a.second < b.second; });
      }
      for (int64_t j = 0; j < k; ++j) {
        r.values[(o * k + j) * inner + in] = slice[j].first;
        r.indices[(o * k + j) * inner + in] = slice[j].second;
      }
    }
  }
  return r;
}

// ExpectOrdered: (values, indices) equal the oracle's, with x's dtype and int64 indices, and
// every value's sign bit (-0.0 against 0.0) is the one of the element its index names.
void ExpectOrdered(const Tensor& values, const Tensor& indices, const Ordered& want, DType dtype,
                   const std::string& what) {
  EXPECT_TRUE(TensorEqual(values, to(tensor(want.values, want.shape), dtype))) << what;
  EXPECT_TRUE(TensorEqual(indices, tensor(want.indices, want.shape))) << what;
  EXPECT_TRUE(values.is_contiguous()) << what;
  EXPECT_TRUE(indices.is_contiguous()) << what;
  if (dtype == kFloat32 || dtype == kFloat64) {
    const std::vector<double> got = values.to_vector<double>();
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want.values[i])) << what << " element " << i;
    }
  }
}

std::string Name(DType dtype, int64_t dim, bool descending) {
  return std::string(DTypeName(dtype)) + " dim " + std::to_string(dim) +
         (descending ? " descending" : " ascending");
}

constexpr DType kDTypes[] = {kFloat32, kFloat64, kInt64, kBool};

// ======================================================================================
// sort, argsort
// ======================================================================================

TEST(Sort, MatchesStableSortAlongEveryDim) {
  for (DType dtype : kDTypes) {
    const Tensor x = Keys({3, 4, 5}, dtype, 1);
    for (int64_t dim : {0, 1, 2, -1, -3}) {
      for (bool descending : {false, true}) {
        const auto [values, indices] = sort(x, dim, descending);
        const Ordered want = RefOrder(x, dim, descending);
        ExpectOrdered(values, indices, want, dtype, "sort " + Name(dtype, dim, descending));
        EXPECT_TRUE(TensorEqual(argsort(x, dim, descending), tensor(want.indices, want.shape)))
            << "argsort " << Name(dtype, dim, descending);
      }
    }
  }
}

TEST(Sort, NonContiguousInputsMatchStableSort) {
  for (DType dtype : kDTypes) {
    const Tensor base = Keys({4, 6}, dtype, 2);
    const std::vector<std::pair<std::string, Tensor>> inputs = {
        {"transposed", transpose(base, 0, 1)},
        {"strided", NonContiguousCopy(base)},
        {"sliced", slice(Keys({4, 13}, dtype, 3), 1, 1, std::nullopt, 2)},  // [4, 6]
        {"expanded", expand(Keys({1, 6}, dtype, 4), {4, 6})},
        {"expanded along dim", expand(Keys({4, 1}, dtype, 5), {4, 6})},
        {"permuted 3-D", permute(Keys({2, 3, 4}, dtype, 6), {2, 0, 1})},
    };
    for (const auto& [label, x] : inputs) {
      for (int64_t dim : {0, 1}) {
        for (bool descending : {false, true}) {
          const std::string what = label + " " + Name(dtype, dim, descending);
          const auto [values, indices] = sort(x, dim, descending);
          const Ordered want = RefOrder(x, dim, descending);
          ExpectOrdered(values, indices, want, dtype, what);
          EXPECT_TRUE(TensorEqual(argsort(x, dim, descending), tensor(want.indices, want.shape)))
              << what;
        }
      }
    }
  }
}

// Random tensors: rank 0 to 4, sizes 0 to 4, every dtype, a random layout (transposed,
// strided, expanded), dim, direction and k, against the oracle for sort, argsort and topk.
TEST(Sort, RandomShapesLayoutsAndDimsMatchStableSort) {
  std::mt19937 rng(99);
  const auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  for (int c = 0; c < 300; ++c) {
    Shape shape;
    const int rank = pick(5);
    for (int d = 0; d < rank; ++d) shape.push_back(pick(5));
    const DType dtype = kDTypes[pick(4)];
    Tensor x = Keys(shape, dtype, 1000 + c);
    const int layout = pick(4);
    if (layout == 1 && rank >= 2) x = transpose(contiguous(transpose(x, 0, rank - 1)), 0, rank - 1);
    if (layout == 2) x = NonContiguousCopy(x);
    if (layout == 3 && rank >= 1 && x.numel() > 0) x = expand(slice(x, 0, 0, 1, 1), shape);
    const int64_t dim = rank == 0 ? -pick(2) : pick(2 * rank) - rank;
    const bool descending = pick(2);
    const std::string what = "case " + std::to_string(c) + " " + ShapeToString(shape) + " " +
                             Name(dtype, dim, descending) + " layout " + std::to_string(layout);
    const Ordered want = RefOrder(x, dim, descending);
    const auto [values, indices] = sort(x, dim, descending);
    ExpectOrdered(values, indices, want, dtype, what);
    EXPECT_TRUE(TensorEqual(argsort(x, dim, descending), tensor(want.indices, want.shape))) << what;
    const int64_t n = rank == 0 ? 1 : shape[dim < 0 ? dim + rank : dim];
    const int64_t k = rank == 0 ? 1 : pick(static_cast<int>(n) + 1);
    const bool sorted = pick(2);
    const auto [tv, ti] = topk(x, k, dim, descending, sorted);
    ExpectOrdered(tv, ti, RefOrder(x, dim, descending, k, !sorted), dtype,
                  what + " topk " + std::to_string(k) + (sorted ? " sorted" : " by index"));
  }
}

TEST(Sort, DocumentedOrderOfNansInfinitiesAndSignedZeros) {
  // The documented example: [3, nan, 1, 3].
  const Tensor x = tensor({3.0f, NAN, 1.0f, 3.0f});
  auto [v, i] = sort(x, 0, false);
  EXPECT_TENSOR_EQ(v, tensor({1.0f, 3.0f, 3.0f, NAN}));
  EXPECT_TENSOR_EQ(i, tensor(std::vector<int64_t>{2, 0, 3, 1}));
  EXPECT_TENSOR_EQ(argsort(x, -1, true), tensor(std::vector<int64_t>{1, 0, 3, 2}));
  // NaNs tie with each other (index order, both directions); they sit above +inf.
  const Tensor n = tensor({kNan, 1.0, kNan, -kInf, kInf, 0.0});
  auto [nv, ni] = sort(n, 0, false);
  EXPECT_TENSOR_EQ(nv, tensor({-kInf, 0.0, 1.0, kInf, kNan, kNan}));
  EXPECT_TENSOR_EQ(ni, tensor(std::vector<int64_t>{3, 5, 1, 4, 0, 2}));
  auto [dv, di] = sort(n, 0, true);
  EXPECT_TENSOR_EQ(dv, tensor({kNan, kNan, kInf, 1.0, 0.0, -kInf}));
  EXPECT_TENSOR_EQ(di, tensor(std::vector<int64_t>{0, 2, 4, 1, 5, 3}));
  // -0.0 and 0.0 are equal keys: they keep their order, each with its own sign.
  for (bool descending : {false, true}) {
    const Tensor z = tensor({0.0f, -0.0f, 1.0f, -0.0f, 0.0f});
    auto [zv, zi] = sort(z, 0, descending);
    const std::vector<int64_t> order =
        descending ? std::vector<int64_t>{2, 0, 1, 3, 4} : std::vector<int64_t>{0, 1, 3, 4, 2};
    EXPECT_TENSOR_EQ(zi, tensor(order));
    const std::vector<float> got = zv.to_vector<float>(), in = z.to_vector<float>();
    for (size_t k = 0; k < order.size(); ++k) {
      EXPECT_EQ(std::signbit(got[k]), std::signbit(in[order[k]])) << k;
    }
  }
  // bool: false < true, stable.
  auto [bv, bi] = sort(tensor(std::vector<bool>{true, false, true, false}), 0, false);
  EXPECT_TENSOR_EQ(bv, tensor(std::vector<bool>{false, false, true, true}));
  EXPECT_TENSOR_EQ(bi, tensor(std::vector<int64_t>{1, 3, 0, 2}));
}

TEST(Sort, Int64KeysAreComparedExactly) {
  // Keys that double cannot tell apart: 2^60, 2^60 + 1, ... (sorted as integers).
  const int64_t b = int64_t{1} << 60;
  const Tensor x = tensor(std::vector<int64_t>{b + 1, b, std::numeric_limits<int64_t>::min(), b + 1,
                                               std::numeric_limits<int64_t>::max(), b - 1});
  auto [v, i] = sort(x, 0, false);
  EXPECT_EQ(v.to_vector<int64_t>(),
            std::vector<int64_t>({std::numeric_limits<int64_t>::min(), b - 1, b, b + 1, b + 1,
                                  std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(i.to_vector<int64_t>(), std::vector<int64_t>({2, 5, 1, 0, 3, 4}));
  auto [tv, ti] = topk(x, 3, 0, true, true);
  EXPECT_EQ(tv.to_vector<int64_t>(),
            std::vector<int64_t>({std::numeric_limits<int64_t>::max(), b + 1, b + 1}));
  EXPECT_EQ(ti.to_vector<int64_t>(), std::vector<int64_t>({4, 0, 3}));
}

TEST(Sort, LongSlicesMatchStableSort) {
  // 1000 keys per slice with many ties: std::sort's introsort and nth_element past their
  // small-range insertion sorts.
  for (DType dtype : {kFloat32, kInt64}) {
    const Tensor x = Keys({2, 1000}, dtype, 7);
    for (bool descending : {false, true}) {
      const auto [values, indices] = sort(x, 1, descending);
      ExpectOrdered(values, indices, RefOrder(x, 1, descending), dtype,
                    "long " + Name(dtype, 1, descending));
      for (int64_t k : {1, 300, 999}) {
        for (bool sorted : {true, false}) {
          const auto [tv, ti] = topk(x, k, 1, descending, sorted);
          ExpectOrdered(tv, ti, RefOrder(x, 1, descending, k, !sorted), dtype,
                        "long topk k " + std::to_string(k) + (sorted ? " sorted" : " by index"));
        }
      }
    }
  }
}

TEST(Sort, RankZeroSizeZeroAndSizeOne) {
  for (DType dtype : kDTypes) {
    const std::string name(DTypeName(dtype));
    // Rank 0: one element, index 0, a copy (rank 0 too).
    const Tensor s = to(scalar_tensor(1.0), dtype);
    for (int64_t dim : {0, -1}) {
      auto [v, i] = sort(s, dim, false);
      EXPECT_TENSOR_EQ(v, s);
      EXPECT_TENSOR_EQ(i, tensor(std::vector<int64_t>{0}, {}));
      EXPECT_NE(v.impl()->raw_data(), s.impl()->raw_data()) << name;
      EXPECT_TENSOR_EQ(argsort(s, dim, true), tensor(std::vector<int64_t>{0}, {}));
      auto [tv, ti] = topk(s, 1, dim, true, true);
      EXPECT_TENSOR_EQ(tv, s);
      EXPECT_TENSOR_EQ(ti, tensor(std::vector<int64_t>{0}, {}));
    }
    // Size-0 dims: along them and across them.
    for (const auto& [shape, dim] : {std::pair<Shape, int64_t>{{0}, 0},
                                     {{3, 0}, 0},
                                     {{3, 0}, 1},
                                     {{0, 4}, 1},
                                     {{2, 0, 3}, 2}}) {
      const Tensor x = zeros(shape, dtype);
      auto [v, i] = sort(x, dim, false);
      EXPECT_EQ(ShapeOf(v), shape) << name;
      EXPECT_EQ(ShapeOf(i), shape) << name;
      EXPECT_EQ(v.dtype(), dtype);
      EXPECT_EQ(i.dtype(), kInt64);
      EXPECT_EQ(ShapeOf(argsort(x, dim, true)), shape);
      auto [tv, ti] = topk(x, 0, dim, true, true);
      Shape k0 = shape;
      k0[dim] = 0;
      EXPECT_EQ(ShapeOf(tv), k0);
      EXPECT_EQ(ShapeOf(ti), k0);
    }
    // Empty, with other sizes whose product would overflow int64.
    const int64_t huge = int64_t{1} << 42;
    auto [hv, hi] = sort(empty({huge, 0, huge}, dtype), 2, true);
    EXPECT_EQ(ShapeOf(hv), Shape({huge, 0, huge}));
    EXPECT_EQ(ShapeOf(hi), Shape({huge, 0, huge}));
    auto [htv, hti] = topk(empty({huge, 0, huge}, dtype), 3, 2, true, false);
    EXPECT_EQ(ShapeOf(htv), Shape({huge, 0, 3}));
    // k = 0 on a non-empty tensor.
    const Tensor x = Keys({3, 4}, dtype, 8);
    auto [tv, ti] = topk(x, 0, 1, true, true);
    EXPECT_EQ(ShapeOf(tv), Shape({3, 0}));
    EXPECT_EQ(ShapeOf(ti), Shape({3, 0}));
    // A size-1 sort dim: the input, indices 0.
    const Tensor one = Keys({3, 1, 2}, dtype, 9);
    auto [ov, oi] = sort(one, 1, true);
    EXPECT_TENSOR_EQ(ov, one);
    EXPECT_TENSOR_EQ(oi, zeros({3, 1, 2}, kInt64));
  }
}

TEST(Sort, Errors) {
  const Tensor x = ones({2, 3});
  EXPECT_FT_ERROR(sort(x, 2, false),
                  "sort: dim 2 is out of range for a tensor of rank 2 (expected a dim in [-2, 1])");
  EXPECT_FT_ERROR(sort(x, -3, true), "sort: dim -3 is out of range");
  EXPECT_FT_ERROR(sort(scalar_tensor(1.0f), 1, false),
                  "sort: dim 1 is out of range for a tensor of rank 0");
  EXPECT_FT_ERROR(argsort(x, 2, false), "argsort: dim 2 is out of range");
  EXPECT_FT_ERROR(argsort(scalar_tensor(1.0f), -2, false), "argsort: dim -2 is out of range");
}

// ======================================================================================
// topk
// ======================================================================================

TEST(Topk, MatchesTheFirstKOfTheStableOrder) {
  for (DType dtype : kDTypes) {
    const Tensor x = Keys({3, 5, 4}, dtype, 10);
    for (int64_t dim : {0, 1, 2, -1}) {
      const int64_t n = x.sizes()[dim < 0 ? dim + 3 : dim];
      for (int64_t k = 0; k <= n; ++k) {
        for (bool largest : {true, false}) {
          for (bool sorted : {true, false}) {
            const std::string what = "topk k " + std::to_string(k) + " " +
                                     Name(dtype, dim, largest) + (sorted ? " sorted" : " by index");
            const auto [values, indices] = topk(x, k, dim, largest, sorted);
            ExpectOrdered(values, indices, RefOrder(x, dim, largest, k, !sorted), dtype, what);
          }
        }
      }
    }
  }
}

TEST(Topk, NonContiguousInputsMatchTheStableOrder) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    const Tensor base = Keys({5, 6}, dtype, 11);
    for (const Tensor& x : {transpose(base, 0, 1), NonContiguousCopy(base),
                            slice(Keys({5, 12}, dtype, 12), 1, 0, std::nullopt, 2),
                            expand(Keys({5, 1}, dtype, 13), {5, 6})}) {
      for (int64_t dim : {0, 1}) {
        for (bool sorted : {true, false}) {
          const std::string what = Name(dtype, dim, true) + (sorted ? " sorted" : " by index");
          const auto [values, indices] = topk(x, 3, dim, true, sorted);
          ExpectOrdered(values, indices, RefOrder(x, dim, true, 3, !sorted), dtype, what);
        }
      }
    }
  }
}

TEST(Topk, DocumentedExamplesAndTies) {
  // The documented example: topk([3, nan, 1, 3], 2) is ([nan, 3], [1, 0]).
  const Tensor x = tensor({3.0f, NAN, 1.0f, 3.0f});
  auto [v, i] = topk(x, 2, 0, true, true);
  EXPECT_TENSOR_EQ(v, tensor({NAN, 3.0f}));
  EXPECT_TENSOR_EQ(i, tensor(std::vector<int64_t>{1, 0}));
  // Ties keep the lower index: of three 5s the first two; by index order when not sorted.
  const Tensor t = tensor({1.0, 5.0, 2.0, 5.0, 9.0, 5.0});
  auto [tv, ti] = topk(t, 3, 0, true, true);
  EXPECT_TENSOR_EQ(tv, tensor({9.0, 5.0, 5.0}));
  EXPECT_TENSOR_EQ(ti, tensor(std::vector<int64_t>{4, 1, 3}));
  auto [uv, ui] = topk(t, 3, 0, true, false);
  EXPECT_TENSOR_EQ(uv, tensor({5.0, 5.0, 9.0}));
  EXPECT_TENSOR_EQ(ui, tensor(std::vector<int64_t>{1, 3, 4}));
  // Smallest: NaN comes last, so it is picked only when k reaches it.
  const Tensor n = tensor({kNan, 2.0, -1.0});
  auto [sv, si] = topk(n, 2, 0, false, true);
  EXPECT_TENSOR_EQ(sv, tensor({-1.0, 2.0}));
  EXPECT_TENSOR_EQ(si, tensor(std::vector<int64_t>{2, 1}));
  auto [av, ai] = topk(n, 3, 0, false, false);  // k == n, by index: the input order
  EXPECT_TENSOR_EQ(av, n);
  EXPECT_TENSOR_EQ(ai, tensor(std::vector<int64_t>{0, 1, 2}));
}

TEST(Topk, Errors) {
  const Tensor x = ones({3, 4});
  EXPECT_FT_ERROR(topk(x, 5, 1, true, true),
                  "topk: k (5) is out of range for dimension 1 of size 4 (shape [3, 4])");
  EXPECT_FT_ERROR(topk(x, -1, 0, true, true),
                  "topk: k (-1) is out of range for dimension 0 of size 3 (shape [3, 4])");
  EXPECT_FT_ERROR(topk(x, 1, 2, true, true), "topk: dim 2 is out of range");
  EXPECT_FT_ERROR(topk(zeros({3, 0}), 1, 1, true, true),
                  "topk: k (1) is out of range for dimension 1 of size 0");
  EXPECT_FT_ERROR(topk(scalar_tensor(1.0f), 2, 0, true, true),
                  "topk: k (2) is out of range for a rank-0 tensor, which holds exactly one "
                  "element (k must be 1)");
  EXPECT_FT_ERROR(topk(scalar_tensor(1.0f), 0, 0, true, true),
                  "topk: k (0) is out of range for a rank-0 tensor");
  EXPECT_FT_ERROR(topk(scalar_tensor(1.0f), 1, 1, true, true), "topk: dim 1 is out of range");
}

}  // namespace
}  // namespace ft::kernels

#include "ops/sort.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- oracle: std::stable_sort of each slice on the key alone ----

// KeyLess: NaN is larger than everything, NaNs are equal among themselves.
bool KeyLess(double a, double b) {
  if (std::isnan(b)) return !std::isnan(a);
  return a < b;
}

struct Expected {
  Tensor values;   // float64 values, converted to the input dtype by the caller
  Tensor indices;  // int64
};

// OracleTopK orders each slice of `x` along `dim` with std::stable_sort and keeps the first
// k entries (k = size(dim) for sort); by_index reorders those k by original index.
Expected OracleTopK(const Tensor& x, int64_t dim, int64_t k, bool descending, bool by_index) {
  const std::vector<double> v = x.to_vector<double>();
  Shape shape(x.sizes().begin(), x.sizes().end());
  if (shape.empty()) shape.push_back(1);
  if (dim < 0) dim += static_cast<int64_t>(shape.size());
  const int64_t n = shape[dim];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
  Shape out_shape = shape;
  out_shape[dim] = k;
  std::vector<double> values(static_cast<size_t>(outer * k * inner));
  std::vector<int64_t> indices(values.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) order[j] = j;
      auto key = [&](int64_t j) { return v[(o * n + j) * inner + i]; };
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        return descending ? KeyLess(key(q), key(p)) : KeyLess(key(p), key(q));
      });
      order.resize(static_cast<size_t>(k));
      if (by_index) std::sort(order.begin(), order.end());
      for (int64_t j = 0; j < k; ++j) {
        values[(o * k + j) * inner + i] = key(order[j]);
        indices[(o * k + j) * inner + i] = order[j];
      }
    }
  }
  if (x.dim() == 0) out_shape.clear();
  return {tensor(values, out_shape), tensor(indices, out_shape)};
}

// Values with ties (repeats), both zeros, infinities and NaNs at several positions.
Tensor Keys(IntArrayRef shape, DType dtype, int seed) {
  const double pool[] = {3.0, -1.0, 0.0, -0.0, 2.5, kNaN, 3.0, -7.0,
                         std::numeric_limits<double>::infinity(), 1.0, -1.0, kNaN};
  std::vector<double> v(static_cast<size_t>(Numel(shape)));
  uint64_t state = 0x2545F4914F6CDD1Dull * static_cast<uint64_t>(seed + 1);
  for (double& x : v) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = pool[(state >> 33) % 12];
    if (dtype == kInt64 && !std::isfinite(x)) x = 5.0;  // int64 has no NaN / inf
    if (dtype == kInt64 && x == 2.5) x = 2.0;
  }
  return kernels::to(tensor(v, shape), dtype);
}

Tensor Transposed(const Tensor& t) {
  // The same values with the first and last dims stored swapped (for rank >= 2).
  const size_t r = t.dim();
  if (r < 2) return testing::NonContiguousCopy(t);
  Shape sizes(t.sizes().begin(), t.sizes().end());
  Shape swapped = sizes;
  std::swap(swapped[0], swapped[r - 1]);
  Tensor base = EmptyContiguous(swapped, t.dtype());
  Shape strides = ContiguousStrides(swapped);
  std::swap(strides[0], strides[r - 1]);
  Tensor view = MakeDense(base.storage(), t.dtype(), sizes, strides, 0);
  kernels::copy_into(view, t);
  return view;
}

std::vector<Tensor> Layouts(const Tensor& t) {
  std::vector<Tensor> out = {t, testing::NonContiguousCopy(t), Transposed(t)};
  return out;
}

const std::vector<Shape> kShapes = {{7}, {1}, {0}, {3, 4, 5}, {2, 0, 3}, {4, 1}, {1, 6},
                                    {2, 3, 2, 9}, {40}};

TEST(SortOps, SortAndArgsortMatchStableSortAlongEveryDim) {
  int seed = 0;
  for (const Shape& shape : kShapes) {
    for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
      const Tensor x0 = Keys(shape, dtype, seed++);
      for (const Tensor& x : Layouts(x0)) {
        for (int64_t dim = -static_cast<int64_t>(shape.size());
             dim < static_cast<int64_t>(shape.size()); ++dim) {
          for (bool descending : {false, true}) {
            SCOPED_TRACE(ShapeToString(shape) + " " + DTypeName(dtype) + " dim " +
                         std::to_string(dim) + (descending ? " desc" : " asc") + " " +
                         x.DebugString());
            const int64_t n = shape[dim < 0 ? dim + shape.size() : dim];
            const Expected e = OracleTopK(x, dim, n, descending, false);
            auto [values, indices] = sort(x, dim, descending);
            EXPECT_TENSOR_EQ(values, kernels::to(e.values, dtype));
            EXPECT_TENSOR_EQ(indices, e.indices);
            EXPECT_TRUE(values.is_contiguous());
            EXPECT_TENSOR_EQ(argsort(x, dim, descending), e.indices);
          }
        }
      }
    }
  }
}

TEST(SortOps, DefaultsSortLastDimAscending) {
  const Tensor x = tensor({3.0f, NAN, 1.0f, 3.0f, 2.0f, 0.0f}, {2, 3});
  auto [values, indices] = sort(x);
  EXPECT_TENSOR_EQ(values, tensor({1.0f, 3.0f, NAN, 0.0f, 2.0f, 3.0f}, {2, 3}));
  const Tensor expected = tensor(std::vector<int64_t>{2, 0, 1, 2, 1, 0}, {2, 3});
  EXPECT_TENSOR_EQ(indices, expected);
  EXPECT_TENSOR_EQ(argsort(x), expected);
}

TEST(SortOps, NaNsAndTiesLiteral) {
  // Ascending: NaNs last in their original order; ties (3, 3 and -0, 0) by lower index.
  const Tensor x = tensor({3.0, kNaN, 1.0, 3.0, -0.0, kNaN, 0.0});
  auto [va, ia] = sort(x);
  EXPECT_TENSOR_EQ(va, tensor({-0.0, 0.0, 1.0, 3.0, 3.0, kNaN, kNaN}));
  EXPECT_TENSOR_EQ(ia, tensor(std::vector<int64_t>{4, 6, 2, 0, 3, 1, 5}));
  EXPECT_TRUE(std::signbit(va.to_vector<double>()[0]));
  // Descending: NaNs first (lower index first), ties still by lower index.
  auto [vd, id] = sort(x, 0, true);
  EXPECT_TENSOR_EQ(vd, tensor({kNaN, kNaN, 3.0, 3.0, 1.0, -0.0, 0.0}));
  EXPECT_TENSOR_EQ(id, tensor(std::vector<int64_t>{1, 5, 0, 3, 2, 4, 6}));
  // Bool: false < true, stable.
  auto [vb, ib] = sort(tensor(std::vector<bool>{true, false, true, false}));
  EXPECT_TENSOR_EQ(vb, tensor(std::vector<bool>{false, false, true, true}));
  EXPECT_TENSOR_EQ(ib, tensor(std::vector<int64_t>{1, 3, 0, 2}));
}

TEST(SortOps, RankZeroAndExpandedInputs) {
  for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    const Tensor x = kernels::to(scalar_tensor(4.0, kFloat64), dtype);
    for (int64_t dim : {0, -1}) {
      auto [v, i] = sort(x, dim, dim == 0);
      EXPECT_TENSOR_EQ(v, x);
      EXPECT_TENSOR_EQ(i, scalar_tensor(int64_t{0}, kInt64));
      EXPECT_TENSOR_EQ(argsort(x, dim), scalar_tensor(int64_t{0}, kInt64));
      auto [tv, ti] = topk(x, 1, dim);
      EXPECT_TENSOR_EQ(tv, x);
      EXPECT_TENSOR_EQ(ti, scalar_tensor(int64_t{0}, kInt64));
    }
  }
  // An expanded (stride 0) input: all keys equal, so the order is the identity.
  const Tensor one = tensor({2.5f});
  const Tensor e = MakeDense(one.storage(), kFloat32, {3, 4}, {0, 0}, 0);
  auto [v, i] = sort(e, 0, true);
  EXPECT_TENSOR_EQ(v, full({3, 4}, 2.5f));
  EXPECT_TENSOR_EQ(i, kernels::to(tensor({0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}, {3, 4}), kInt64));
  const Expected oe = OracleTopK(e, 1, 2, false, false);
  auto [tv, ti] = topk(e, 2, 1, false);
  EXPECT_TENSOR_EQ(tv, kernels::to(oe.values, kFloat32));
  EXPECT_TENSOR_EQ(ti, oe.indices);
}

TEST(SortOps, SortDoesNotModifyOrAliasInput) {
  const Tensor x = tensor({3.0f, 1.0f, 2.0f});
  const int64_t version = x.version();
  auto [v, i] = sort(x);
  EXPECT_TENSOR_EQ(x, tensor({3.0f, 1.0f, 2.0f}));
  EXPECT_EQ(x.version(), version);
  EXPECT_FALSE(v.storage().is_same(x.storage()));
  // Already sorted input: still a new tensor.
  auto [v2, i2] = sort(v);
  EXPECT_FALSE(v2.storage().is_same(v.storage()));
}

TEST(SortOps, TopkMatchesStableSortForEveryKAndDim) {
  int seed = 100;
  for (const Shape& shape : kShapes) {
    for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
      const Tensor x0 = Keys(shape, dtype, seed++);
      for (const Tensor& x : Layouts(x0)) {
        for (int64_t dim = -static_cast<int64_t>(shape.size());
             dim < static_cast<int64_t>(shape.size()); ++dim) {
          const int64_t n = shape[dim < 0 ? dim + shape.size() : dim];
          for (int64_t k = 0; k <= n; ++k) {
            for (bool largest : {true, false}) {
              for (bool sorted : {true, false}) {
                SCOPED_TRACE(ShapeToString(shape) + " " + DTypeName(dtype) + " dim " +
                             std::to_string(dim) + " k " + std::to_string(k) +
                             (largest ? " largest" : " smallest") +
                             (sorted ? " sorted" : " by index") + " " + x.DebugString());
                const Expected e = OracleTopK(x, dim, k, largest, !sorted);
                auto [values, indices] = topk(x, k, dim, largest, sorted);
                EXPECT_TENSOR_EQ(values, kernels::to(e.values, dtype));
                EXPECT_TENSOR_EQ(indices, e.indices);
              }
            }
          }
        }
      }
    }
  }
}

TEST(SortOps, TopkLiteral) {
  const Tensor x = tensor({1.0f, NAN, 5.0f, 5.0f, -2.0f, 5.0f});
  auto [v, i] = topk(x, 3);
  EXPECT_TENSOR_EQ(v, tensor({NAN, 5.0f, 5.0f}));
  EXPECT_TENSOR_EQ(i, tensor(std::vector<int64_t>{1, 2, 3}));
  auto [vs, is] = topk(x, 2, 0, /*largest=*/false);
  EXPECT_TENSOR_EQ(vs, tensor({-2.0f, 1.0f}));
  EXPECT_TENSOR_EQ(is, tensor(std::vector<int64_t>{4, 0}));
  // sorted=false: the chosen entries in index order.
  auto [vu, iu] = topk(x, 3, 0, true, false);
  EXPECT_TENSOR_EQ(vu, tensor({NAN, 5.0f, 5.0f}));
  EXPECT_TENSOR_EQ(iu, tensor(std::vector<int64_t>{1, 2, 3}));
  auto [vu2, iu2] = topk(x, 2, 0, false, false);
  EXPECT_TENSOR_EQ(vu2, tensor({1.0f, -2.0f}));
  EXPECT_TENSOR_EQ(iu2, tensor(std::vector<int64_t>{0, 4}));
  // k = 0 gives empty results with the dim resized.
  auto [v0, i0] = topk(ones({2, 3}), 0, 1);
  EXPECT_EQ(ShapeToString(v0.sizes()), "[2, 0]");
  EXPECT_EQ(i0.dtype(), kInt64);
}

TEST(SortOps, Errors) {
  EXPECT_FT_ERROR(sort(ones({2, 3}), 2),
                  "sort: dim 2 is out of range for a tensor of rank 2 (expected a dim in "
                  "[-2, 1])");
  EXPECT_FT_ERROR(sort(ones({2, 3}), -3), "sort: dim -3 is out of range");
  EXPECT_FT_ERROR(sort(ones({}), 1), "sort: dim 1 is out of range for a tensor of rank 0");
  EXPECT_FT_ERROR(argsort(ones({2, 3}), 5), "argsort: dim 5 is out of range");
  EXPECT_FT_ERROR(topk(ones({2, 3}), 1, 2), "topk: dim 2 is out of range");
  EXPECT_FT_ERROR(topk(ones({2, 3}), 5, 1),
                  "topk: k (5) is out of range for dimension 1 of size 3");
  EXPECT_FT_ERROR(topk(ones({2, 3}), 3, 0),
                  "topk: k (3) is out of range for dimension 0 of size 2");
  EXPECT_FT_ERROR(topk(ones({2, 3}), -1, -1),
                  "topk: k (-1) is out of range for dimension 1 of size 3");
  EXPECT_FT_ERROR(topk(ones({}), 0), "topk: k (0) is out of range for a rank-0 tensor");
  EXPECT_FT_ERROR(topk(ones({}), 2), "topk: k (2) is out of range for a rank-0 tensor");
}

// Fuzz finding (tests/fuzz/corpus/ops_fuzzer/regression-sort-empty-huge-dims): an empty
// tensor may have huge other sizes, and the product of the sizes after the sorted dim
// overflowed int64 (undefined behaviour, caught by --config=ubsan) before the kernel saw that
// there was nothing to sort.
TEST(SortOps, EmptyTensorsWithHugeSizesSortToEmptyResults) {
  const int64_t huge = int64_t{1} << 42;
  const Tensor x = empty({0, huge, huge}, kFloat32);
  auto [values, indices] = sort(x, 0);
  EXPECT_EQ(values.sizes(), x.sizes());
  EXPECT_EQ(indices.sizes(), x.sizes());
  EXPECT_EQ(argsort(x, 0, /*descending=*/true).numel(), 0);
  auto [top, top_indices] = topk(x, 0, 0);
  EXPECT_EQ(top.numel(), 0);
  EXPECT_EQ(top_indices.numel(), 0);
}

}  // namespace
}  // namespace ft

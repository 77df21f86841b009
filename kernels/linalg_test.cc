// The linear algebra kernels of kernels/linalg.h, called directly: matmul (every rank
// combination, batch broadcasting, every operand layout the GEMM maps or copies, int64 and
// dtype promotion, empty and 1 x 1 matrices, products large enough to split over threads, at
// every CPU capability, and 300 seeded random shape / layout / dtype cases), mm, bmm, dot,
// outer, linear, and the factorization-based ops linalg_solve, linalg_solve_triangular,
// cholesky, inverse, slogdet and logdet with their Check* helpers, and every documented error.
//
// Oracles: products are triple loops in double over to_vector<double>() values (int64 in
// uint64 arithmetic, which wraps as PyTorch does); solves, factorizations and inverses are
// checked by identities evaluated in double (A X = B residuals, L L^T = A, A A^-1 = I) and by
// forward / back substitution; determinants by Laplace expansion, by the diagonal of
// triangular matrices and by the parity of permutations, worked out by hand.
#include "kernels/linalg.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/cpu_capability.h"
#include "cpu/parallel.h"
#include "gtest/gtest.h"
#include "kernels/test_helpers.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::BroadcastIndex;
using ::ft::testing::NonContiguousCopy;
using ::ft::testing::Rand;
using ::ft::testing::ScopedCpuCapability;
using ::ft::testing::ShapeOf;
using ::ft::testing::TensorNear;
using ::ft::testing::TransposedCopy;

// ---- inputs ----

// WellConditioned: a batch of [n, n] matrices, random plus n on the diagonal (diagonally
// dominant, so invertible with a small condition number).
Tensor WellConditioned(IntArrayRef batch, int64_t n, DType dtype, uint32_t seed) {
  Shape shape(batch.begin(), batch.end());
  shape.push_back(n);
  shape.push_back(n);
  std::vector<double> v = Rand(shape, kFloat64, seed).to_vector<double>();
  for (size_t m = 0; m < v.size(); m += static_cast<size_t>(n * n)) {
    for (int64_t i = 0; i < n; ++i) v[m + i * n + i] += static_cast<double>(n);
  }
  return to(tensor(v, shape), dtype);
}

// Padded: t's values in rows of a wider buffer (row stride = cols + 3), starting at offset 1.
Tensor Padded(const Tensor& t) {
  Shape big(t.sizes().begin(), t.sizes().end());
  const int64_t cols = big.back();
  big.back() += 3;
  const Tensor buffer = zeros(big, t.dtype());
  const Tensor view = slice(buffer, -1, 1, cols + 1, 1);
  copy_into(view, t);
  return view;
}

enum class Layout { kContiguous, kTransposed, kStrided, kPadded };
constexpr Layout kLayouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kStrided,
                               Layout::kPadded};

std::string LayoutName(Layout l) {
  switch (l) {
    case Layout::kContiguous:
      return "contiguous";
    case Layout::kTransposed:
      return "transposed";
    case Layout::kStrided:
      return "strided";
    case Layout::kPadded:
      return "padded";
  }
  return "?";
}

Tensor WithLayout(const Tensor& t, Layout l) {
  switch (l) {
    case Layout::kContiguous:
      return t;
    case Layout::kTransposed:
      return TransposedCopy(t);
    case Layout::kStrided:
      return NonContiguousCopy(t);
    case Layout::kPadded:
      return Padded(t);
  }
  return t;
}

// ---- oracles ----

// Expected: a tensor of `dtype` holding `values` (exact for int64 values under 2^53).
Tensor Expected(const std::vector<double>& values, IntArrayRef shape, DType dtype) {
  return to(tensor(values, shape), dtype);
}

double Tol(DType dtype) {
  if (dtype == kFloat32) return 2e-5;
  if (dtype == kFloat64) return 1e-12;
  return 0.0;
}

// Matrices: a tensor read as a broadcastable batch of [rows, cols] matrices in double, with
// torch.matmul's promotion of a 1-D operand to a row (first operand) or a column (second).
struct Matrices {
  std::vector<double> v;
  Shape batch;
  int64_t rows = 0;
  int64_t cols = 0;
  double at(int64_t b, int64_t r, int64_t c) const {
    return v[static_cast<size_t>((b * rows + r) * cols + c)];
  }
};

Matrices ReadMatrices(const Tensor& t, bool first) {
  Matrices m;
  m.v = t.to_vector<double>();
  Shape s = ShapeOf(t);
  if (s.size() == 1) {
    if (first) {
      s.insert(s.begin(), 1);
    } else {
      s.push_back(1);
    }
  }
  m.rows = s[s.size() - 2];
  m.cols = s[s.size() - 1];
  m.batch.assign(s.begin(), s.end() - 2);
  return m;
}

Shape BroadcastBatchShape(IntArrayRef a, IntArrayRef b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// RefMatmul: torch.matmul by triple loops in double; `shape` receives the result's shape.
std::vector<double> RefMatmul(const Tensor& a, const Tensor& b, Shape* shape) {
  const Matrices x = ReadMatrices(a, true), y = ReadMatrices(b, false);
  EXPECT_EQ(x.cols, y.rows);
  const Shape batch = BroadcastBatchShape(x.batch, y.batch);
  *shape = batch;
  if (a.dim() > 1) shape->push_back(x.rows);
  if (b.dim() > 1) shape->push_back(y.cols);
  const int64_t m = x.rows, k = x.cols, n = y.cols;
  std::vector<double> out(static_cast<size_t>(Numel(batch) * m * n));
  double* o = out.data();
  for (int64_t i = 0; i < Numel(batch); ++i) {
    // Matrix ia of a and ib of b (a broadcast batch dim reads index 0 of that dim).
    const double* pa = x.v.data() + BroadcastIndex(x.batch, batch, i) * m * k;
    const double* pb = y.v.data() + BroadcastIndex(y.batch, batch, i) * k * n;
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += pa[r * k + p] * pb[p * n + c];
        *o++ = acc;
      }
    }
  }
  return out;
}

// ExpectMatmul: got == torch.matmul(a, b) of `dtype`, within `tol` of the double oracle.
void ExpectMatmul(const Tensor& got, const Tensor& a, const Tensor& b, DType dtype,
                  const std::string& what, double tol = -1) {
  Shape shape;
  const std::vector<double> want = RefMatmul(a, b, &shape);
  EXPECT_TRUE(TensorNear(got, Expected(want, shape, dtype), tol < 0 ? Tol(dtype) : tol, 1e-5))
      << what << ": " << ShapeToString(a.sizes()) << " @ " << ShapeToString(b.sizes());
}

// MatmulRows: row-major [m, n] product of row-major [m, k] and [k, n] double values.
[[maybe_unused]] std::vector<double> MatmulRows(const std::vector<double>& a,
                                                const std::vector<double>& b, int64_t m, int64_t k,
                                                int64_t n) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += a[i * k + p] * b[p * n + j];
      c[i * n + j] = acc;
    }
  }
  return c;
}

// Det: the determinant by Laplace expansion along the first row (small n only).
double Det(const std::vector<double>& a, int64_t n) {
  if (n == 0) return 1.0;
  if (n == 1) return a[0];
  double det = 0;
  for (int64_t c = 0; c < n; ++c) {
    std::vector<double> minor;
    for (int64_t r = 1; r < n; ++r) {
      for (int64_t cc = 0; cc < n; ++cc) {
        if (cc != c) minor.push_back(a[r * n + cc]);
      }
    }
    det += (c % 2 == 0 ? 1 : -1) * a[c] * Det(minor, n - 1);
  }
  return det;
}

class ThreadCount : public ::testing::Test {
 protected:
  void TearDown() override { SetNumThreads(threads_); }
  int threads_ = GetNumThreads();
};

// ======================================================================================
// matmul
// ======================================================================================

TEST(Matmul, EveryRankCombinationMatchesLoops) {
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> cases = {
      {{3}, {3}, {}},                              // dot: rank 0
      {{3}, {3, 4}, {4}},                          // vector-matrix
      {{2, 3}, {3}, {2}},                          // matrix-vector
      {{2, 3}, {3, 4}, {2, 4}},                    // matrix-matrix
      {{5, 2, 3}, {3, 4}, {5, 2, 4}},              // batch @ matrix (folded batch)
      {{2, 3}, {5, 3, 4}, {5, 2, 4}},              // matrix @ batch
      {{5, 2, 3}, {5, 3, 4}, {5, 2, 4}},           // batch @ batch
      {{2, 1, 2, 3}, {3, 3, 4}, {2, 3, 2, 4}},     // broadcast batch dims
      {{4, 1, 2, 3}, {5, 3, 6}, {4, 5, 2, 6}},     // the documented example
      {{3}, {5, 3, 4}, {5, 4}},                    // vector @ batch
      {{5, 2, 3}, {3}, {5, 2}},                    // batch @ vector
      {{2, 3}, {5, 3, 1}, {5, 2, 1}},              // matrix @ a batch of columns (one GEMM)
      {{1, 2, 3}, {5, 3, 1}, {5, 2, 1}},           // the same with a size-1 batch on the matrix
      {{1, 2, 3}, {1, 3, 4}, {1, 2, 4}},           // size-1 batches on both
      {{3, 1}, {4, 1, 1}, {4, 3, 1}},              // columns of length 1
      {{1, 3}, {4, 3, 1}, {4, 1, 1}},              // a one-row matrix @ columns
      {{2, 1, 3, 4, 5}, {5, 2}, {2, 1, 3, 4, 2}},  // size-1 dim inside the batch
  };
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    uint32_t seed = 1;
    for (const Case& c : cases) {
      const Tensor a = Rand(c.a, dtype, seed++), b = Rand(c.b, dtype, seed++);
      const Tensor got = matmul(a, b);
      EXPECT_EQ(ShapeOf(got), c.out) << ShapeToString(c.a) << " @ " << ShapeToString(c.b);
      EXPECT_TRUE(got.is_contiguous());
      ExpectMatmul(got, a, b, dtype, DTypeName(dtype));
    }
  }
}

TEST(Matmul, EveryOperandLayoutMatchesLoops) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{4, 5}, {5, 6}},    {{3, 4, 5}, {3, 5, 6}},    {{3, 4, 5}, {5, 6}},
      {{4, 5}, {3, 5, 6}}, {{2, 1, 4, 5}, {3, 5, 6}}, {{4, 5}, {5, 1}},
      {{1, 5}, {5, 6}},    {{3, 4, 1}, {3, 1, 6}},    {{4, 5}, {3, 5, 1}},
  };
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    uint32_t seed = 100;
    for (const auto& [sa, sb] : shapes) {
      const Tensor a = Rand(sa, dtype, seed++), b = Rand(sb, dtype, seed++);
      for (Layout la : kLayouts) {
        for (Layout lb : kLayouts) {
          const Tensor x = WithLayout(a, la), y = WithLayout(b, lb);
          ExpectMatmul(
              matmul(x, y), x, y, dtype,
              std::string(DTypeName(dtype)) + " " + LayoutName(la) + " @ " + LayoutName(lb));
        }
      }
    }
  }
}

TEST(Matmul, StridedVectorsMatchLoops) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    const Tensor m = Rand({4, 6}, dtype, 7);
    const Tensor v = slice(Rand({18}, dtype, 8), 0, 1, std::nullopt, 3);  // 6 values, stride 3
    ExpectMatmul(matmul(m, v), m, v, dtype, "matrix @ strided vector");
    ExpectMatmul(matmul(v, transpose(m, 0, 1)), v, transpose(m, 0, 1), dtype,
                 "strided vector @ transposed matrix");
    ExpectMatmul(matmul(v, v), v, v, dtype, "strided dot");
    const Tensor batch = Rand({3, 6, 4}, dtype, 9);
    ExpectMatmul(matmul(v, batch), v, batch, dtype, "strided vector @ batch");
  }
}

TEST(Matmul, BroadcastOperandsWithZeroStridesMatchLoops) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    // A batch expanded from one matrix (batch stride 0): must not fold into distinct rows.
    const Tensor one = Rand({1, 4, 5}, dtype, 11);
    const Tensor a = expand(one, {3, 4, 5});
    const Tensor w = Rand({5, 6}, dtype, 12);
    ExpectMatmul(matmul(a, w), a, w, dtype, "expanded batch @ matrix");
    const Tensor bb = expand(Rand({1, 5, 6}, dtype, 13), {3, 5, 6});
    ExpectMatmul(matmul(a, bb), a, bb, dtype, "expanded batch @ expanded batch");
    // Rows repeated within a matrix (row stride 0) and columns repeated (column stride 0).
    const Tensor rows = expand(Rand({1, 5}, dtype, 14), {4, 5});
    const Tensor cols = expand(Rand({5, 1}, dtype, 15), {5, 6});
    const Tensor m45 = Rand({4, 5}, dtype, 16);
    ExpectMatmul(matmul(rows, w), rows, w, dtype, "repeated rows @ matrix");
    ExpectMatmul(matmul(m45, cols), m45, cols, dtype, "matrix @ repeated columns");
    ExpectMatmul(matmul(rows, cols), rows, cols, dtype, "repeated rows @ repeated columns");
    // A vector expanded from one element (stride 0), on either side.
    const Tensor v = expand(Rand({1}, dtype, 17), {5});
    ExpectMatmul(matmul(m45, v), m45, v, dtype, "matrix @ expanded vector");
    ExpectMatmul(matmul(v, w), v, w, dtype, "expanded vector @ matrix");
    // Columns of a batch of vectors expanded along the batch (batch stride 0).
    const Tensor cols_batch = expand(Rand({1, 5, 1}, dtype, 19), {4, 5, 1});
    const Tensor m = Rand({3, 5}, dtype, 20);
    ExpectMatmul(matmul(m, cols_batch), m, cols_batch, dtype, "matrix @ expanded columns");
    // An inner batch dim expanded (stride 0) under a real outer one, over one-row matrices
    // and over columns: 2 distinct rows (columns) repeated 3 times, not 6 distinct ones
    // spaced by the outer stride (a batch fold that takes stride 0 for "unset" gets this
    // wrong).
    const Tensor row_batch = expand(Rand({2, 1, 1, 5}, dtype, 21), {2, 3, 1, 5});
    ExpectMatmul(matmul(row_batch, w), row_batch, w, dtype, "expanded inner batch of rows");
    const Tensor col_batch = expand(Rand({2, 1, 5, 1}, dtype, 22), {2, 3, 5, 1});
    ExpectMatmul(matmul(m, col_batch), m, col_batch, dtype, "expanded inner batch of columns");
  }
}

TEST(Matmul, SlicedAndPermutedBatchesMatchLoops) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    // Every other matrix of a batch: the batch stride is not rows * row stride.
    const Tensor a = slice(Rand({6, 4, 5}, dtype, 21), 0, 0, std::nullopt, 2);
    const Tensor b = Rand({5, 3}, dtype, 22);
    ExpectMatmul(matmul(a, b), a, b, dtype, "stepped batch @ matrix");
    const Tensor bb = slice(Rand({3, 5, 7}, dtype, 23), 2, 1, std::nullopt, 2);  // [3, 5, 3]
    ExpectMatmul(matmul(a, bb), a, bb, dtype, "stepped batch @ stepped columns");
    // A gap after each matrix: the batch stride exceeds rows * row stride.
    const Tensor g = slice(Rand({3, 5, 5}, dtype, 31), 1, 0, 4, 1);  // [3, 4, 5]
    ExpectMatmul(matmul(g, b), g, b, dtype, "gapped batch @ matrix");
    // Batch dims stored in the other order (strides not decreasing).
    const Tensor p = permute(Rand({3, 2, 4, 5}, dtype, 24), {1, 0, 2, 3});  // [2, 3, 4, 5]
    ExpectMatmul(matmul(p, b), p, b, dtype, "permuted batch @ matrix");
    const Tensor q = Rand({2, 3, 5, 2}, dtype, 25);
    ExpectMatmul(matmul(p, q), p, q, dtype, "permuted batch @ batch");
    // A batch of column vectors whose batch does not fold into one stride.
    const Tensor vcols = permute(Rand({3, 2, 5, 1}, dtype, 26), {1, 0, 2, 3});
    const Tensor m = Rand({4, 5}, dtype, 27);
    ExpectMatmul(matmul(m, vcols), m, vcols, dtype, "matrix @ permuted columns");
    // Transposed matrix @ a stepped batch of columns (the batch-as-GEMM path).
    const Tensor tm = TransposedCopy(m);
    const Tensor scols = slice(Rand({6, 5, 1}, dtype, 28), 0, 0, std::nullopt, 2);
    ExpectMatmul(matmul(tm, scols), tm, scols, dtype, "transposed matrix @ stepped columns");
    const Tensor ncols = NonContiguousCopy(Rand({4, 5, 1}, dtype, 29));
    ExpectMatmul(matmul(tm, ncols), tm, ncols, dtype, "transposed matrix @ strided columns");
    const Tensor rcols = TransposedCopy(Rand({4, 5, 1}, dtype, 30));
    ExpectMatmul(matmul(m, rcols), m, rcols, dtype, "matrix @ transposed columns");
  }
}

// Random operands: ranks 1 to 4, sizes 0 to 8 (batch dims 0 to 3 broadcast, some of size 1 and
// expanded), each in a random layout and dtype pair, against the loops.
TEST(Matmul, RandomShapesLayoutsAndDTypesMatchLoops) {
  std::mt19937 rng(2024);
  const auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const DType dtypes[] = {kFloat32, kFloat64, kInt64};
  for (int c = 0; c < 300; ++c) {
    const int ra = 1 + pick(4), rb = 1 + pick(4);
    const int64_t m = pick(9), k = pick(9), n = pick(9);
    const int batch_rank = std::max(ra, rb) - 2;
    Shape batch;
    for (int d = 0; d < batch_rank; ++d) batch.push_back(pick(4));
    const auto make_shape = [&](int rank, bool first) {
      Shape s;
      for (int d = batch_rank - (rank - 2); d < batch_rank; ++d) {
        s.push_back(pick(3) == 0 ? 1 : batch[d]);  // sometimes a size-1 (broadcast) dim
      }
      if (rank == 1) return Shape{k};
      s.push_back(first ? m : k);
      s.push_back(first ? k : n);
      return s;
    };
    const Shape sa = make_shape(ra, true), sb = make_shape(rb, false);
    const DType da = dtypes[pick(3)], db = dtypes[pick(3)];
    const auto layout = [&](const Tensor& t) {
      switch (pick(6)) {
        case 1:
          return t.dim() >= 2 ? TransposedCopy(t) : t;
        case 2:
          return NonContiguousCopy(t);
        case 3:
          return Padded(t);
        case 4: {  // expanded from its first slice along a random dim (stride 0)
          if (t.numel() == 0) return t;
          return expand(slice(t, pick(static_cast<int>(t.dim())), 0, 1, 1), t.sizes());
        }
        case 5: {  // dims 0 and 1 swapped in memory (a permuted batch, or a transpose)
          if (t.dim() < 2) return t;
          return transpose(contiguous(transpose(t, 0, 1)), 0, 1);
        }
        default:
          return t;
      }
    };
    const Tensor a = layout(Rand(sa, da, 1000 + c)), b = layout(Rand(sb, db, 5000 + c));
    Tensor got;
    try {
      got = matmul(a, b);
    } catch (const Error& e) {
      ADD_FAILURE() << "case " << c << ": " << e.what();
      continue;
    }
    ExpectMatmul(got, a, b, PromoteTypes(da, db), "case " + std::to_string(c), 1e-4);
  }
}

TEST(Matmul, EmptyAndOneByOne) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    // Inner size 0: zeros (an empty sum), for every path.
    EXPECT_TENSOR_EQ(matmul(Rand({2, 0}, dtype, 1), Rand({0, 3}, dtype, 2)), zeros({2, 3}, dtype));
    EXPECT_TENSOR_EQ(matmul(Rand({0}, dtype, 1), Rand({0}, dtype, 2)), zeros({}, dtype));
    EXPECT_TENSOR_EQ(matmul(Rand({4, 2, 0}, dtype, 1), Rand({0, 3}, dtype, 2)),
                     zeros({4, 2, 3}, dtype));
    EXPECT_TENSOR_EQ(matmul(Rand({2, 0}, dtype, 1), Rand({0}, dtype, 2)), zeros({2}, dtype));
    // Other size-0 dims: empty results of the right shape.
    EXPECT_EQ(ShapeOf(matmul(Rand({0, 3}, dtype, 1), Rand({3, 4}, dtype, 2))), Shape({0, 4}));
    EXPECT_EQ(ShapeOf(matmul(Rand({2, 3}, dtype, 1), Rand({3, 0}, dtype, 2))), Shape({2, 0}));
    EXPECT_EQ(ShapeOf(matmul(Rand({0, 2, 3}, dtype, 1), Rand({3, 4}, dtype, 2))), Shape({0, 2, 4}));
    EXPECT_EQ(ShapeOf(matmul(Rand({2, 3}, dtype, 1), Rand({5, 0, 3, 4}, dtype, 2))),
              Shape({5, 0, 2, 4}));
    EXPECT_EQ(ShapeOf(matmul(Rand({0, 1, 2, 3}, dtype, 1), Rand({4, 3, 1}, dtype, 2))),
              Shape({0, 4, 2, 1}));
    EXPECT_EQ(matmul(Rand({0, 3}, dtype, 1), Rand({3}, dtype, 2)).dtype(), dtype);
    // 1 x 1 matrices, a length-1 dot, 1 x 1 batches.
    const Tensor a = Expected({-3}, {1, 1}, dtype), b = Expected({2}, {1, 1}, dtype);
    EXPECT_TENSOR_EQ(matmul(a, b), Expected({-6}, {1, 1}, dtype));
    EXPECT_TENSOR_EQ(matmul(Expected({-3}, {1}, dtype), Expected({2}, {1}, dtype)),
                     Expected({-6}, {}, dtype));
    const Tensor ab = Rand({4, 1, 1}, dtype, 3), bb = Rand({4, 1, 1}, dtype, 4);
    ExpectMatmul(matmul(ab, bb), ab, bb, dtype, "batch of 1 x 1");
  }
}

TEST(Matmul, Int64IsExactAndWrapsAroundLikeTorch) {
  // Products and sums that overflow int64 wrap modulo 2^64 (PyTorch's int64 GEMM).
  const int64_t big = int64_t{3} << 61;
  const std::vector<int64_t> av = {big, 3, -big, 7};  // [2, 2]
  const std::vector<int64_t> bv = {5, big, 9, -2};    // [2, 2]
  std::vector<int64_t> want(4);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      uint64_t acc = 0;
      for (int p = 0; p < 2; ++p) {
        acc += static_cast<uint64_t>(av[i * 2 + p]) * static_cast<uint64_t>(bv[p * 2 + j]);
      }
      want[i * 2 + j] = static_cast<int64_t>(acc);
    }
  }
  const Tensor a = tensor(av, {2, 2}), b = tensor(bv, {2, 2});
  EXPECT_TENSOR_EQ(matmul(a, b), tensor(want, {2, 2}));
  EXPECT_TENSOR_EQ(mm(TransposedCopy(a), b), tensor(want, {2, 2}));
  EXPECT_TENSOR_EQ(bmm(unsqueeze(a, 0), unsqueeze(b, 0)), tensor(want, {1, 2, 2}));
  // Large exact values stay exact (no detour through double).
  const int64_t e = (int64_t{1} << 53) + 1;
  EXPECT_TENSOR_EQ(matmul(tensor(std::vector<int64_t>{e, 1}), tensor(std::vector<int64_t>{1, 1})),
                   tensor(std::vector<int64_t>{e + 1}, {}));
  EXPECT_TENSOR_EQ(
      dot(tensor(std::vector<int64_t>{big, big}), tensor(std::vector<int64_t>{4, 4})),
      tensor(std::vector<int64_t>{static_cast<int64_t>(static_cast<uint64_t>(big) * 8u)}, {}));
}

TEST(Matmul, PromotesDTypes) {
  const Tensor i = Rand({2, 3}, kInt64, 1), f = Rand({3, 4}, kFloat32, 2);
  const Tensor d = Rand({3, 4}, kFloat64, 3);
  ExpectMatmul(matmul(i, f), i, f, kFloat32, "int64 @ float32");
  ExpectMatmul(matmul(i, d), i, d, kFloat64, "int64 @ float64");
  const Tensor f2 = Rand({2, 3}, kFloat32, 4);
  ExpectMatmul(matmul(f2, d), f2, d, kFloat64, "float32 @ float64");
  ExpectMatmul(matmul(transpose(d, 0, 1), transpose(f2, 0, 1)), transpose(d, 0, 1),
               transpose(f2, 0, 1), kFloat64, "float64^T @ float32^T");
  const Tensor iv = Rand({3}, kInt64, 5);
  ExpectMatmul(matmul(f2, iv), f2, iv, kFloat32, "float32 @ int64 vector");
}

TEST(Matmul, Errors) {
  const Tensor m = ones({2, 3});
  EXPECT_FT_ERROR(matmul(scalar_tensor(1.0f), m),
                  "matmul: both arguments need at least 1 dimension");
  EXPECT_FT_ERROR(matmul(m, scalar_tensor(1.0f)),
                  "matmul: both arguments need at least 1 dimension");
  EXPECT_FT_ERROR(matmul(m, ones({2, 3})), "matmul: size mismatch, got [2, 3] @ [2, 3]");
  EXPECT_FT_ERROR(matmul(m, ones({4})), "matmul: size mismatch");
  EXPECT_FT_ERROR(matmul(ones({4}), m), "matmul: size mismatch");
  EXPECT_FT_ERROR(matmul(ones({2, 2, 3}), ones({3, 3, 4})), "matmul: batch dims [2] of");
  EXPECT_FT_ERROR(matmul(ones({2, 3}, kBool), ones({3, 2})),
                  "matmul: bool tensors are not supported");
  EXPECT_FT_ERROR(matmul(m, ones({3}, kBool)), "matmul: bool tensors are not supported");
}

// ExpectLargeNear: the contiguous `got` holds `want` (row-major) within atol + rtol |want|;
// reads its buffer directly (TensorNear's element reads are slow on millions of elements in
// an unoptimized build).
template <typename T>
void ExpectLargeNear(const Tensor& got, const std::vector<double>& want, double tol,
                     const std::string& what) {
  ASSERT_EQ(got.dtype(), DTypeOf<T>()) << what;
  ASSERT_TRUE(got.is_contiguous()) << what;
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  const T* p = got.data<T>();
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = static_cast<double>(p[i]);
    if (!(std::abs(g - want[i]) <= tol * (1 + std::abs(want[i])))) {
      ADD_FAILURE() << what << ": element " << i << " is " << g << ", expected " << want[i];
      return;
    }
  }
}

// Products large enough that the GEMM splits them over the intra-op threads (rows of one
// product, or whole products of a batch: at least 2 grains of 2^21 multiply-adds, or of
// 2^21 written elements for outer products): each chunk must write exactly its part.
TEST_F(ThreadCount, LargeProductsSplitOverThreadsMatchLoops) {
  SetNumThreads(3);
  const auto check = [](const Tensor& x, const Tensor& y, const std::string& what) {
    Shape shape;
    const std::vector<double> want = RefMatmul(x, y, &shape);
    const Tensor got = matmul(x, y);
    ASSERT_EQ(ShapeOf(got), shape) << what;
    switch (got.dtype()) {
      case kFloat32:
        return ExpectLargeNear<float>(got, want, 1e-5, what);
      case kFloat64:
        return ExpectLargeNear<double>(got, want, 1e-12, what);
      default:
        return ExpectLargeNear<int64_t>(got, want, 0, what);
    }
  };
  // One 256 x 128 x 128 product (2^22 multiply-adds: two row grains of 128), on the vector
  // unit's GEMM (float) and Eigen's (int64).
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    const Tensor a = Rand({256, 128}, dtype, 1), b = Rand({128, 128}, dtype, 2);
    check(dtype == kFloat64 ? TransposedCopy(a) : a, b, std::string(DTypeName(dtype)) + " product");
  }
  // 256 products of 16 x 32 x 32: split by batch items.
  check(Rand({256, 16, 32}, kFloat32, 3), TransposedCopy(Rand({256, 32, 32}, kFloat32, 4)),
        "float32 batch");
  // One 32 x 64 matrix @ 2048 columns (2^22 multiply-adds), as one GEMM.
  for (DType dtype : {kFloat32, kInt64}) {
    check(TransposedCopy(Rand({32, 64}, dtype, 5)), Rand({2048, 64, 1}, dtype, 6),
          std::string(DTypeName(dtype)) + " columns");
  }
  // 64 outer products of 256 x 256 float32 (2^22 elements, 16 MB): streaming stores.
  check(Rand({64, 256, 1}, kFloat32, 7), Rand({64, 1, 256}, kFloat32, 8),
        "streamed outer products");
}

// The float GEMM is compiled once per CPU capability: every one must compute the product
// (small products take SmallGemm, larger ones the blocked GEMM).
TEST(Matmul, EveryCpuCapabilityMatchesLoops) {
  for (CpuCapability level : SupportedCpuCapabilities()) {
    const ScopedCpuCapability scoped(level);
    const std::string name(CpuCapabilityName(level));
    for (DType dtype : {kFloat32, kFloat64}) {
      for (const auto& [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{3, 5, 7},
                                    {17, 33, 9},
                                    {70, 90, 65},
                                    {1, 200, 1}}) {
        const Tensor a = Rand({m, k}, dtype, 1), b = Rand({k, n}, dtype, 2);
        ExpectMatmul(matmul(a, b), a, b, dtype, name, 1e-4);
        ExpectMatmul(matmul(TransposedCopy(a), NonContiguousCopy(b)), a, b, dtype,
                     name + " transposed @ strided", 1e-4);
        const Tensor ab = Rand({3, m, k}, dtype, 3), bb = Rand({3, k, n}, dtype, 4);
        ExpectMatmul(matmul(ab, bb), ab, bb, dtype, name + " batch", 1e-4);
      }
    }
  }
}

// ======================================================================================
// mm, bmm, dot, outer
// ======================================================================================

TEST(Mm, MatchesLoopsInEveryLayoutAndDType) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    const Tensor a = Rand({4, 5}, dtype, 1), b = Rand({5, 3}, dtype, 2);
    for (Layout la : kLayouts) {
      for (Layout lb : kLayouts) {
        const Tensor x = WithLayout(a, la), y = WithLayout(b, lb);
        ExpectMatmul(mm(x, y), x, y, dtype, "mm " + LayoutName(la) + " @ " + LayoutName(lb));
      }
    }
    ExpectMatmul(mm(Rand({4, 1}, dtype, 3), Rand({1, 6}, dtype, 4)), Rand({4, 1}, dtype, 3),
                 Rand({1, 6}, dtype, 4), dtype, "mm inner size 1");
    EXPECT_TENSOR_EQ(mm(Rand({3, 0}, dtype, 1), Rand({0, 2}, dtype, 2)), zeros({3, 2}, dtype));
    EXPECT_EQ(ShapeOf(mm(Rand({0, 4}, dtype, 1), Rand({4, 2}, dtype, 2))), Shape({0, 2}));
  }
  const Tensor i = Rand({2, 3}, kInt64, 5), d = Rand({3, 2}, kFloat64, 6);
  ExpectMatmul(mm(i, d), i, d, kFloat64, "mm int64 @ float64");
}

TEST(Mm, Errors) {
  EXPECT_FT_ERROR(mm(ones({2, 3}), ones({3})), "mm: expected 2-D tensors, got [2, 3] and [3]");
  EXPECT_FT_ERROR(mm(ones({1, 2, 3}), ones({3, 2})), "mm: expected 2-D tensors");
  EXPECT_FT_ERROR(mm(ones({2, 3}), ones({2, 3})), "mm: size mismatch, got [2, 3] @ [2, 3]");
  EXPECT_FT_ERROR(mm(ones({2, 3}, kBool), ones({3, 2})), "mm: bool tensors are not supported");
}

TEST(Bmm, MatchesLoopsInEveryLayoutAndDType) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    const Tensor a = Rand({3, 4, 5}, dtype, 1), b = Rand({3, 5, 2}, dtype, 2);
    for (Layout la : kLayouts) {
      for (Layout lb : kLayouts) {
        const Tensor x = WithLayout(a, la), y = WithLayout(b, lb);
        ExpectMatmul(bmm(x, y), x, y, dtype, "bmm " + LayoutName(la) + " @ " + LayoutName(lb));
      }
    }
    const Tensor e = expand(Rand({1, 4, 5}, dtype, 3), {3, 4, 5});
    ExpectMatmul(bmm(e, b), e, b, dtype, "bmm expanded batch");
    EXPECT_EQ(ShapeOf(bmm(Rand({0, 4, 5}, dtype, 1), Rand({0, 5, 2}, dtype, 2))), Shape({0, 4, 2}));
    EXPECT_TENSOR_EQ(bmm(Rand({2, 4, 0}, dtype, 1), Rand({2, 0, 3}, dtype, 2)),
                     zeros({2, 4, 3}, dtype));
  }
}

TEST(Bmm, Errors) {
  EXPECT_FT_ERROR(bmm(ones({2, 3}), ones({2, 3, 2})), "bmm: expected 3-D tensors");
  EXPECT_FT_ERROR(bmm(ones({2, 2, 3}), ones({3, 3, 2})), "bmm: batch sizes differ");
  EXPECT_FT_ERROR(bmm(ones({1, 2, 3}), ones({2, 3, 2})), "bmm: batch sizes differ");
  EXPECT_FT_ERROR(bmm(ones({2, 2, 3}), ones({2, 2, 2})), "bmm: size mismatch");
  EXPECT_FT_ERROR(bmm(ones({2, 2, 3}), ones({2, 3, 2}, kBool)),
                  "bmm: bool tensors are not supported");
}

TEST(Dot, MatchesLoops) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    const Tensor a = Rand({7}, dtype, 1), b = Rand({7}, dtype, 2);
    const Tensor got = dot(a, b);
    EXPECT_EQ(got.dim(), 0);
    ExpectMatmul(got, a, b, dtype, "dot");
    const Tensor sa = NonContiguousCopy(a);
    const Tensor sb = slice(Rand({21}, dtype, 3), 0, 2, std::nullopt, 3);
    ExpectMatmul(dot(sa, sb), sa, sb, dtype, "dot strided");
    const Tensor e = expand(Rand({1}, dtype, 4), {7});
    ExpectMatmul(dot(e, a), e, a, dtype, "dot expanded");
    EXPECT_TENSOR_EQ(dot(Rand({0}, dtype, 1), Rand({0}, dtype, 2)), zeros({}, dtype));
  }
  EXPECT_TENSOR_NEAR(dot(tensor({1.0f, 2.0f, 3.0f}), tensor({4.0, 5.0, 6.0})),
                     scalar_tensor(32.0, kFloat64), 0);
  EXPECT_TENSOR_NEAR(dot(tensor({1.5f, 2.0f}), tensor(std::vector<int64_t>{2, 3})),
                     scalar_tensor(9.0, kFloat32), 0);
}

TEST(Dot, Errors) {
  EXPECT_FT_ERROR(dot(ones({2, 1}), ones({2})), "dot: expected 1-D tensors, got [2, 1] and [2]");
  EXPECT_FT_ERROR(dot(scalar_tensor(1.0f), ones({1})), "dot: expected 1-D tensors");
  EXPECT_FT_ERROR(dot(ones({2}), ones({3})), "dot: size mismatch, got [2] and [3]");
  EXPECT_FT_ERROR(dot(ones({2}, kBool), ones({2})), "dot: bool tensors are not supported");
}

TEST(Outer, MatchesLoops) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    const Tensor a = Rand({4}, dtype, 1), b = Rand({6}, dtype, 2);
    const auto expect = [&](const Tensor& x, const Tensor& y, const std::string& what) {
      const std::vector<double> xv = x.to_vector<double>(), yv = y.to_vector<double>();
      std::vector<double> want;
      for (double p : xv) {
        for (double q : yv) want.push_back(p * q);
      }
      EXPECT_TRUE(
          TensorNear(outer(x, y), Expected(want, {x.sizes()[0], y.sizes()[0]}, dtype), Tol(dtype)))
          << what;
    };
    expect(a, b, "contiguous");
    expect(NonContiguousCopy(a), NonContiguousCopy(b), "strided");
    expect(expand(Rand({1}, dtype, 3), {4}), b, "expanded column");
    expect(a, expand(Rand({1}, dtype, 4), {6}), "expanded row");
    expect(Rand({1}, dtype, 5), Rand({1}, dtype, 6), "1 x 1");
    EXPECT_EQ(ShapeOf(outer(Rand({0}, dtype, 1), b)), Shape({0, 6}));
    EXPECT_EQ(ShapeOf(outer(a, Rand({0}, dtype, 1))), Shape({4, 0}));
  }
  EXPECT_TENSOR_EQ(outer(tensor(std::vector<int64_t>{2, -3}), tensor({0.5, 1.0})),
                   tensor({1.0, 2.0, -1.5, -3.0}, {2, 2}));
}

TEST(Outer, Errors) {
  EXPECT_FT_ERROR(outer(ones({2, 1}), ones({2})), "outer: expected 1-D tensors");
  EXPECT_FT_ERROR(outer(ones({2}), scalar_tensor(1.0f)), "outer: expected 1-D tensors");
  EXPECT_FT_ERROR(outer(ones({2}), ones({2}, kBool)), "outer: bool tensors are not supported");
}

// ======================================================================================
// linear
// ======================================================================================

// RefLinear: x @ w^T + bias in double; bias broadcasts to [..., out].
std::vector<double> RefLinear(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                              Shape* shape) {
  const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>();
  const int64_t in = w.sizes()[1], out = w.sizes()[0];
  *shape = Shape(x.sizes().begin(), x.sizes().end() - 1);
  const int64_t rows = Numel(*shape);
  shape->push_back(out);
  std::vector<double> bv;
  Shape bshape;
  if (bias) {
    bv = bias->to_vector<double>();
    bshape = ShapeOf(*bias);
  }
  std::vector<double> r;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t o = 0; o < out; ++o) {
      double acc = 0;
      for (int64_t p = 0; p < in; ++p) acc += xv[i * in + p] * wv[o * in + p];
      if (bias) acc += bv[BroadcastIndex(bshape, *shape, i * out + o)];
      r.push_back(acc);
    }
  }
  return r;
}

void ExpectLinear(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias, DType dtype,
                  const std::string& what) {
  Shape shape;
  const std::vector<double> want = RefLinear(x, w, bias, &shape);
  EXPECT_TRUE(TensorNear(linear(x, w, bias), Expected(want, shape, dtype), Tol(dtype), 1e-5))
      << what;
}

TEST(Linear, MatchesLoopsWithAndWithoutBias) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    const std::string name(DTypeName(dtype));
    const Tensor w = Rand({3, 5}, dtype, 1), bias = Rand({3}, dtype, 2);
    for (const Shape& xs : {Shape{5}, Shape{4, 5}, Shape{2, 4, 5}, Shape{1, 5}}) {
      const Tensor x = Rand(xs, dtype, 3);
      ExpectLinear(x, w, std::nullopt, dtype, name + " no bias " + ShapeToString(xs));
      ExpectLinear(x, w, bias, dtype, name + " bias " + ShapeToString(xs));
    }
    const Tensor x = Rand({2, 4, 5}, dtype, 4);
    // Biases that broadcast other than along the last dim.
    ExpectLinear(x, w, Rand({4, 1}, dtype, 5), dtype, name + " bias [4, 1]");
    ExpectLinear(x, w, Rand({2, 4, 3}, dtype, 6), dtype, name + " full bias");
    ExpectLinear(x, w, Rand({}, dtype, 7), dtype, name + " rank-0 bias");
    // Non-contiguous operands: a transposed (row-major) weight, a strided x, an expanded bias.
    ExpectLinear(NonContiguousCopy(x), TransposedCopy(w), expand(Rand({1}, dtype, 8), {3}), dtype,
                 name + " layouts");
    ExpectLinear(x, NonContiguousCopy(w), NonContiguousCopy(bias), dtype, name + " strided w");
    ExpectLinear(x, expand(Rand({1, 5}, dtype, 12), {3, 5}), bias, dtype, name + " expanded w");
    // One output feature, one input feature.
    ExpectLinear(Rand({4, 1}, dtype, 9), Rand({1, 1}, dtype, 10), Rand({1}, dtype, 11), dtype,
                 name + " 1 x 1 weight");
    // Size 0: no rows; no input features (the bias alone).
    EXPECT_EQ(ShapeOf(linear(Rand({0, 5}, dtype, 1), w, bias)), Shape({0, 3}));
    ExpectLinear(Rand({2, 0}, dtype, 1), Rand({3, 0}, dtype, 2), bias, dtype,
                 name + " in_features 0");
  }
}

TEST(Linear, PromotesOverAllThreeOperandsAndWrapsInt64) {
  const Tensor x = Rand({2, 3}, kFloat32, 1), w = Rand({4, 3}, kFloat32, 2);
  ExpectLinear(x, w, Rand({4}, kFloat64, 3), kFloat64, "float64 bias");
  ExpectLinear(x, w, Rand({4}, kInt64, 4), kFloat32, "int64 bias");
  ExpectLinear(Rand({2, 3}, kInt64, 5), w, std::nullopt, kFloat32, "int64 x");
  ExpectLinear(Rand({2, 3}, kInt64, 5), Rand({4, 3}, kInt64, 6), Rand({4}, kFloat64, 7), kFloat64,
               "int64 x and w, float64 bias");
  // The bias sum wraps like the product does.
  const int64_t max = std::numeric_limits<int64_t>::max();
  const Tensor got =
      linear(tensor(std::vector<int64_t>{1}, {1, 1}), tensor(std::vector<int64_t>{max}, {1, 1}),
             tensor(std::vector<int64_t>{2}));
  EXPECT_TENSOR_EQ(got,
                   tensor(std::vector<int64_t>{std::numeric_limits<int64_t>::min() + 1}, {1, 1}));
}

TEST(Linear, Errors) {
  const Tensor w = ones({3, 2});
  EXPECT_FT_ERROR(linear(scalar_tensor(1.0f), w, std::nullopt),
                  "linear: input must have at least 1 dimension");
  EXPECT_FT_ERROR(linear(ones({4, 2}), ones({3}), std::nullopt),
                  "linear: weight must be 2-D [out_features, in_features], got [3]");
  EXPECT_FT_ERROR(linear(ones({4, 5}), w, std::nullopt),
                  "linear: size mismatch, input [4, 5] has 5 features");
  EXPECT_FT_ERROR(linear(ones({4, 2}, kBool), w, std::nullopt),
                  "linear: bool tensors are not supported");
  EXPECT_FT_ERROR(linear(ones({4, 2}), w, ones({3}, kBool)),
                  "linear: bool tensors are not supported, got a bool bias");
  EXPECT_FT_ERROR(linear(ones({4, 2}), w, ones({2, 4, 3})),
                  "linear: bias of shape [2, 4, 3] does not broadcast to the output shape [4, 3]");
  EXPECT_FT_ERROR(linear(ones({4, 2}), w, ones({5})), "linear:");
}

// ======================================================================================
// linalg_solve, linalg_solve_triangular
// ======================================================================================

// ExpectSolves: X (vector_b: a batch of vectors) solves A X = B in double, to `tol`
// relative to the size of B, over the broadcast batch.
void ExpectSolves(const Tensor& x, const Tensor& a, const Tensor& b, bool vector_b, double tol,
                  const std::string& what) {
  const Matrices ma = ReadMatrices(a, true);
  const int64_t n = ma.rows;
  Shape bshape = ShapeOf(b);
  if (vector_b) bshape.push_back(1);
  Shape bbatch(bshape.begin(), bshape.end() - 2);
  const int64_t k = bshape.back();
  const Shape batch = BroadcastBatchShape(ma.batch, bbatch);
  Shape want_shape = batch;
  want_shape.push_back(n);
  if (!vector_b) want_shape.push_back(k);
  ASSERT_EQ(ShapeOf(x), want_shape) << what;
  ASSERT_EQ(x.dtype(), PromoteTypes(a.dtype(), b.dtype())) << what;
  const std::vector<double> bv = b.to_vector<double>(), xv = x.to_vector<double>();
  double worst = 0;
  for (int64_t i = 0; i < Numel(batch); ++i) {
    const int64_t ia = BroadcastIndex(ma.batch, batch, i), ib = BroadcastIndex(bbatch, batch, i);
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < k; ++c) {
        double ax = 0;
        for (int64_t p = 0; p < n; ++p) ax += ma.at(ia, r, p) * xv[(i * n + p) * k + c];
        worst = std::max(worst, std::abs(ax - bv[(ib * n + r) * k + c]));
      }
    }
  }
  EXPECT_LE(worst, tol) << what << ": max |A X - B|";
}

TEST(LinalgSolve, SolvesMatricesVectorsAndBroadcastBatches) {
  struct Case {
    Shape batch;  // of A
    int64_t n;
    Shape b;
    bool vector;
  };
  const std::vector<Case> cases = {
      {{}, 3, {3}, true},             // one vector
      {{}, 3, {3, 2}, false},         // several right-hand sides
      {{4}, 3, {4, 3}, true},         // a batch of vectors (B is A's shape without dim -1)
      {{4}, 3, {3}, true},            // one vector for every matrix
      {{4}, 3, {4, 3, 2}, false},     // a batch of matrices
      {{4}, 3, {3, 3}, false},        // [3, 3] is a matrix here, broadcast over A's batch
      {{2, 1}, 3, {5, 3, 2}, false},  // broadcast batch dims: [2, 5, 3, 2]
      {{}, 3, {5, 3, 1}, false},      // one A for a batch of B
      {{}, 1, {1}, true},             // 1 x 1
      {{}, 1, {2, 1, 3}, false},
  };
  for (DType dtype : {kFloat32, kFloat64}) {
    uint32_t seed = 1;
    for (const Case& c : cases) {
      const Tensor a = WellConditioned(c.batch, c.n, dtype, seed++);
      const Tensor b = Rand(c.b, dtype, seed++);
      const std::string what = std::string(DTypeName(dtype)) + " A " + ShapeToString(a.sizes()) +
                               " B " + ShapeToString(c.b);
      const double tol = dtype == kFloat32 ? 1e-5 : 1e-13;
      ExpectSolves(linalg_solve(a, b), a, b, c.vector, tol, what);
      ExpectSolves(linalg_solve(TransposedCopy(a), NonContiguousCopy(b)), TransposedCopy(a), b,
                   c.vector, tol, what + " non-contiguous");
    }
  }
  // 1 x 1: x = b / a, worked by hand.
  EXPECT_TENSOR_NEAR(linalg_solve(tensor({4.0}, {1, 1}), tensor({2.0})), tensor({0.5}), 1e-15);
  // The documented example: [[4, 2], [2, 3]] x = [2, 1] gives [0.5, 0].
  EXPECT_TENSOR_NEAR(linalg_solve(tensor({4.0, 2.0, 2.0, 3.0}, {2, 2}), tensor({2.0, 1.0})),
                     tensor({0.5, 0.0}), 1e-15);
  // A matrix that needs a row swap (zero leading entry).
  EXPECT_TENSOR_NEAR(linalg_solve(tensor({0.0, 1.0, 1.0, 0.0}, {2, 2}), tensor({3.0, 5.0})),
                     tensor({5.0, 3.0}), 1e-15);
}

TEST(LinalgSolve, PromotesAndHandlesEmptyShapes) {
  const Tensor a32 = WellConditioned({}, 3, kFloat32, 1);
  const Tensor b64 = Rand({3, 2}, kFloat64, 2);
  ExpectSolves(linalg_solve(a32, b64), a32, b64, false, 1e-5, "float32 A, float64 B");
  const Tensor a64 = WellConditioned({2}, 3, kFloat64, 3);
  const Tensor b32 = Rand({2, 3}, kFloat32, 4);
  ExpectSolves(linalg_solve(a64, b32), a64, b32, true, 1e-12, "float64 A, float32 B");
  // Size 0: n = 0, k = 0, an empty batch.
  EXPECT_EQ(ShapeOf(linalg_solve(zeros({0, 0}), zeros({0}))), Shape({0}));
  EXPECT_EQ(ShapeOf(linalg_solve(zeros({2, 0, 0}), zeros({2, 0, 4}))), Shape({2, 0, 4}));
  EXPECT_EQ(ShapeOf(linalg_solve(eye(3), zeros({3, 0}))), Shape({3, 0}));
  EXPECT_EQ(ShapeOf(linalg_solve(zeros({0, 3, 3}), zeros({0, 3}))), Shape({0, 3}));
  EXPECT_EQ(ShapeOf(linalg_solve(zeros({0, 3, 3}), zeros({3}))), Shape({0, 3}));
  EXPECT_EQ(linalg_solve(zeros({0, 3, 3}, kFloat64), zeros({3})).dtype(), kFloat64);
}

TEST(LinalgSolve, SingularMatrixThrows) {
  // [[1, 2], [2, 4]]: the second pivot is exactly zero.
  const Tensor s = tensor({1.0, 2.0, 2.0, 4.0}, {2, 2});
  EXPECT_FT_ERROR(
      linalg_solve(s, tensor({1.0, 1.0})),
      "linalg_solve: A is singular: pivot 1 of its LU factorization is zero (A [2, 2])");
  EXPECT_FT_ERROR(linalg_solve(zeros({3, 3}), ones({3})), "linalg_solve: A is singular: pivot 0");
  // The second matrix of a batch is singular: the message names it.
  Tensor batch = to(tensor({2.0, 0.0, 0.0, 2.0, 1.0, 2.0, 2.0, 4.0}, {2, 2, 2}), kFloat32);
  EXPECT_FT_ERROR(linalg_solve(batch, ones({2, 2})),
                  "linalg_solve: A is singular: pivot 1 of its LU factorization is zero (matrix 1 "
                  "of the batch of A [2, 2, 2])");
}

TEST(LinalgSolve, Errors) {
  EXPECT_FT_ERROR(linalg_solve(ones({3}), ones({3})),
                  "linalg_solve: expected A of rank >= 2 (a batch of square matrices");
  EXPECT_FT_ERROR(linalg_solve(ones({2, 3}), ones({2})),
                  "linalg_solve: expected square matrices [..., n, n] for A, got [2, 3]");
  EXPECT_FT_ERROR(linalg_solve(ones({2, 2}, kInt64), ones({2})),
                  "linalg_solve: expected a float32 or float64 A, got int64 [2, 2]");
  EXPECT_FT_ERROR(linalg_solve(eye(2), ones({2}, kInt64)),
                  "linalg_solve: expected a float32 or float64 B, got int64 [2]");
  EXPECT_FT_ERROR(linalg_solve(eye(2), ones({2}, kBool)), "linalg_solve: expected a float32");
  EXPECT_FT_ERROR(
      linalg_solve(eye(2), ones({3})),
      "linalg_solve: size mismatch, B [3] is a vector of length 3 but A [2, 2] is 2 x 2");
  EXPECT_FT_ERROR(linalg_solve(eye(3), ones({2, 3})),
                  "linalg_solve: size mismatch, got A [3, 3] and B [2, 3]: dim -2 of B (2) must "
                  "equal n (3)");
  EXPECT_FT_ERROR(linalg_solve(expand(eye(2), {3, 2, 2}), ones({4, 2, 1})),
                  "linalg_solve: batch dims [3] of A [3, 2, 2] and [4] of B [4, 2, 1] cannot be "
                  "broadcast together (3 vs 4)");
}

// RefTriangularSolve: forward (lower) or back (upper) substitution in double, reading only
// that triangle of A; a [n, n], b [n, k] row-major.
std::vector<double> RefTriangularSolve(const std::vector<double>& a, const std::vector<double>& b,
                                       int64_t n, int64_t k, bool upper) {
  std::vector<double> x(static_cast<size_t>(n * k));
  for (int64_t c = 0; c < k; ++c) {
    for (int64_t s = 0; s < n; ++s) {
      const int64_t r = upper ? n - 1 - s : s;
      double acc = b[r * k + c];
      for (int64_t p = 0; p < n; ++p) {
        if (upper ? p > r : p < r) acc -= a[r * n + p] * x[p * k + c];
      }
      x[r * k + c] = acc / a[r * n + r];
    }
  }
  return x;
}

TEST(LinalgSolveTriangular, MatchesSubstitutionAndReadsOnlyItsTriangle) {
  for (DType dtype : {kFloat32, kFloat64}) {
    for (bool upper : {false, true}) {
      const std::string what = std::string(DTypeName(dtype)) + (upper ? " upper" : " lower");
      // The other triangle holds large garbage: it must not be read.
      const Tensor a = WellConditioned({3}, 4, dtype, upper ? 1 : 2);
      const std::vector<double> av = a.to_vector<double>();
      const Tensor b = Rand({3, 4, 2}, dtype, 3);
      const std::vector<double> bv = b.to_vector<double>();
      std::vector<double> want;
      for (int64_t i = 0; i < 3; ++i) {
        const std::vector<double> ai(av.begin() + i * 16, av.begin() + (i + 1) * 16);
        const std::vector<double> bi(bv.begin() + i * 8, bv.begin() + (i + 1) * 8);
        const std::vector<double> xi = RefTriangularSolve(ai, bi, 4, 2, upper);
        want.insert(want.end(), xi.begin(), xi.end());
      }
      const Tensor expected = Expected(want, {3, 4, 2}, dtype);
      const double tol = dtype == kFloat32 ? 1e-5 : 1e-13;
      EXPECT_TENSOR_NEAR(linalg_solve_triangular(a, b, upper), expected, tol) << what;
      EXPECT_TENSOR_NEAR(linalg_solve_triangular(TransposedCopy(a), NonContiguousCopy(b), upper),
                         expected, tol)
          << what << " non-contiguous";
      // A broadcast over a batch of B and B broadcast over a batch of A.
      const Tensor a0 = select(a, 0, 0);
      const Tensor b0 = select(b, 0, 0);
      const std::vector<double> x0(want.begin(), want.begin() + 8);
      EXPECT_TENSOR_NEAR(linalg_solve_triangular(a0, unsqueeze(b0, 0), upper),
                         Expected(x0, {1, 4, 2}, dtype), tol)
          << what;
      const Tensor x = linalg_solve_triangular(a, b0, upper);
      ASSERT_EQ(ShapeOf(x), Shape({3, 4, 2})) << what;
      EXPECT_TENSOR_NEAR(select(x, 0, 0), Expected(x0, {4, 2}, dtype), tol) << what;
    }
  }
  // By hand: lower [[2, 0], [1, 4]] x = [[2], [9]] gives x = [1, 2]; the 7 is ignored.
  EXPECT_TENSOR_NEAR(
      linalg_solve_triangular(tensor({2.0, 7.0, 1.0, 4.0}, {2, 2}), tensor({2.0, 9.0}, {2, 1}),
                              /*upper=*/false),
      tensor({1.0, 2.0}, {2, 1}), 1e-15);
  // A zero on the diagonal is not checked: infs, as torch's (x0 = 1 / 0, x1 = 1 - x0).
  const Tensor x = linalg_solve_triangular(tensor({0.0, 0.0, 1.0, 1.0}, {2, 2}),
                                           tensor({1.0, 1.0}, {2, 1}), /*upper=*/false);
  EXPECT_TENSOR_EQ(
      x, tensor({std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()},
                {2, 1}));
  // Promotion, 1 x 1 and empty shapes.
  EXPECT_EQ(linalg_solve_triangular(eye(2), ones({2, 1}, kFloat64), true).dtype(), kFloat64);
  EXPECT_TENSOR_NEAR(linalg_solve_triangular(tensor({-2.0f}, {1, 1}), tensor({3.0f}, {1, 1}), true),
                     tensor({-1.5f}, {1, 1}), 0);
  EXPECT_EQ(ShapeOf(linalg_solve_triangular(zeros({0, 0}), zeros({0, 3}), false)), Shape({0, 3}));
  EXPECT_EQ(ShapeOf(linalg_solve_triangular(zeros({0, 2, 2}), zeros({2, 1}), true)),
            Shape({0, 2, 1}));
}

TEST(LinalgSolveTriangular, Errors) {
  EXPECT_FT_ERROR(linalg_solve_triangular(eye(2), ones({2}), true),
                  "linalg_solve_triangular: expected B of rank >= 2 ([..., n, k]), got [2] (A "
                  "[2, 2])");
  EXPECT_FT_ERROR(linalg_solve_triangular(ones({2}), ones({2, 1}), true),
                  "linalg_solve_triangular: expected A of rank >= 2");
  EXPECT_FT_ERROR(linalg_solve_triangular(ones({2, 3}), ones({2, 1}), true),
                  "linalg_solve_triangular: expected square matrices");
  EXPECT_FT_ERROR(linalg_solve_triangular(eye(2), ones({3, 1}), false),
                  "linalg_solve_triangular: size mismatch");
  EXPECT_FT_ERROR(linalg_solve_triangular(ones({2, 2}, kInt64), ones({2, 1}), false),
                  "linalg_solve_triangular: expected a float32 or float64 A");
  EXPECT_FT_ERROR(linalg_solve_triangular(eye(2), ones({2, 1}, kInt64), false),
                  "linalg_solve_triangular: expected a float32 or float64 B");
  EXPECT_FT_ERROR(linalg_solve_triangular(ones({2, 2, 2}), ones({3, 2, 1}), false),
                  "linalg_solve_triangular: batch dims [2] of A");
}

// ======================================================================================
// cholesky, inverse
// ======================================================================================

// Spd: M M^T + n I for a random M: symmetric positive-definite.
Tensor Spd(IntArrayRef batch, int64_t n, DType dtype, uint32_t seed) {
  Shape shape(batch.begin(), batch.end());
  shape.push_back(n);
  shape.push_back(n);
  const std::vector<double> m = Rand(shape, kFloat64, seed).to_vector<double>();
  std::vector<double> a(m.size());
  for (size_t o = 0; o < m.size(); o += static_cast<size_t>(n * n)) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = i == j ? static_cast<double>(n) : 0.0;
        for (int64_t p = 0; p < n; ++p) acc += m[o + i * n + p] * m[o + j * n + p];
        a[o + i * n + j] = acc;
      }
    }
  }
  return to(tensor(a, shape), dtype);
}

// ExpectCholeskyFactor: l is lower triangular with a positive diagonal and L L^T = A (read
// from a's lower triangle, mirrored), in double: that defines the factor uniquely.
void ExpectCholeskyFactor(const Tensor& l, const Tensor& a, double tol, const std::string& what) {
  ASSERT_EQ(ShapeOf(l), ShapeOf(a)) << what;
  ASSERT_EQ(l.dtype(), a.dtype()) << what;
  const Matrices ma = ReadMatrices(a, true);
  const Matrices ml = ReadMatrices(l, true);
  const int64_t n = ma.rows;
  for (int64_t b = 0; b < Numel(ma.batch); ++b) {
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_GT(ml.at(b, i, i), 0) << what;
      for (int64_t j = 0; j < n; ++j) {
        if (j > i) {
          EXPECT_EQ(ml.at(b, i, j), 0) << what << " upper triangle";
          continue;
        }
        double llt = 0;
        for (int64_t p = 0; p < n; ++p) llt += ml.at(b, i, p) * ml.at(b, j, p);
        EXPECT_NEAR(llt, ma.at(b, i, j), tol * (1 + std::abs(ma.at(b, i, j))))
            << what << " (L L^T)[" << i << ", " << j << "] of matrix " << b;
      }
    }
  }
}

TEST(Cholesky, FactorsSpdMatrices) {
  // By hand: [[4, 2], [2, 3]] = L L^T with L = [[2, 0], [1, sqrt(2)]].
  EXPECT_TENSOR_NEAR(cholesky(tensor({4.0, 2.0, 2.0, 3.0}, {2, 2})),
                     tensor({2.0, 0.0, 1.0, std::sqrt(2.0)}, {2, 2}), 1e-15);
  EXPECT_TENSOR_NEAR(cholesky(tensor({9.0f}, {1, 1})), tensor({3.0f}, {1, 1}), 0);
  for (DType dtype : {kFloat32, kFloat64}) {
    const double tol = dtype == kFloat32 ? 1e-5 : 1e-13;
    const std::string name(DTypeName(dtype));
    const Tensor a = Spd({2, 3}, 5, dtype, 1);
    ExpectCholeskyFactor(cholesky(a), a, tol, name + " batch");
    ExpectCholeskyFactor(cholesky(TransposedCopy(a)), a, tol, name + " transposed");
    ExpectCholeskyFactor(cholesky(NonContiguousCopy(a)), a, tol, name + " strided");
    const Tensor one = Spd({1}, 4, dtype, 2);
    const Tensor e = expand(one, {3, 4, 4});
    ExpectCholeskyFactor(cholesky(e), e, tol, name + " expanded batch");
  }
  // Only the lower triangle is read: garbage above the diagonal changes nothing.
  const Tensor garbage = tensor({4.0, -100.0, 2.0, 3.0}, {2, 2});
  EXPECT_TENSOR_NEAR(cholesky(garbage), tensor({2.0, 0.0, 1.0, std::sqrt(2.0)}, {2, 2}), 1e-15);
  EXPECT_EQ(ShapeOf(cholesky(zeros({0, 0}))), Shape({0, 0}));
  EXPECT_EQ(ShapeOf(cholesky(zeros({0, 3, 3}, kFloat64))), Shape({0, 3, 3}));
}

TEST(Cholesky, Errors) {
  EXPECT_FT_ERROR(cholesky(tensor({1.0, 2.0, 2.0, 1.0}, {2, 2})),
                  "cholesky: A is not positive-definite (A [2, 2])");
  EXPECT_FT_ERROR(cholesky(tensor({-1.0f}, {1, 1})), "cholesky: A is not positive-definite");
  EXPECT_FT_ERROR(cholesky(zeros({2, 2})), "cholesky: A is not positive-definite");
  Tensor batch = tensor({1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, -1.0}, {2, 2, 2});
  EXPECT_FT_ERROR(cholesky(batch),
                  "cholesky: A is not positive-definite (matrix 1 of the batch of A [2, 2, 2])");
  EXPECT_FT_ERROR(cholesky(ones({3})), "cholesky: expected A of rank >= 2");
  EXPECT_FT_ERROR(cholesky(ones({2, 3})), "cholesky: expected square matrices");
  EXPECT_FT_ERROR(cholesky(ones({2, 2}, kInt64)), "cholesky: expected a float32 or float64 A");
  EXPECT_FT_ERROR(cholesky(ones({2, 2}, kBool)), "cholesky: expected a float32 or float64 A");
}

// ExpectInverse: a X = I and X a = I in double.
void ExpectInverse(const Tensor& x, const Tensor& a, double tol, const std::string& what) {
  ASSERT_EQ(ShapeOf(x), ShapeOf(a)) << what;
  ASSERT_EQ(x.dtype(), a.dtype()) << what;
  const Matrices ma = ReadMatrices(a, true), mx = ReadMatrices(x, true);
  const int64_t n = ma.rows;
  for (int64_t b = 0; b < Numel(ma.batch); ++b) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double ax = 0, xa = 0;
        for (int64_t p = 0; p < n; ++p) {
          ax += ma.at(b, i, p) * mx.at(b, p, j);
          xa += mx.at(b, i, p) * ma.at(b, p, j);
        }
        EXPECT_NEAR(ax, i == j ? 1.0 : 0.0, tol) << what << " (A X)[" << i << ", " << j << "]";
        EXPECT_NEAR(xa, i == j ? 1.0 : 0.0, tol) << what << " (X A)[" << i << ", " << j << "]";
      }
    }
  }
}

TEST(Inverse, InvertsMatrices) {
  // By hand: [[4, 7], [2, 6]]^-1 = [[0.6, -0.7], [-0.2, 0.4]]; a permutation's is its
  // transpose; 1 x 1 is the reciprocal.
  EXPECT_TENSOR_NEAR(inverse(tensor({4.0, 7.0, 2.0, 6.0}, {2, 2})),
                     tensor({0.6, -0.7, -0.2, 0.4}, {2, 2}), 1e-15);
  const Tensor p = tensor({0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0}, {3, 3});
  EXPECT_TENSOR_NEAR(inverse(p), contiguous(transpose(p, 0, 1)), 0);
  EXPECT_TENSOR_NEAR(inverse(tensor({-4.0f}, {1, 1})), tensor({-0.25f}, {1, 1}), 0);
  for (DType dtype : {kFloat32, kFloat64}) {
    const double tol = dtype == kFloat32 ? 1e-5 : 1e-13;
    const std::string name(DTypeName(dtype));
    const Tensor a = WellConditioned({2, 3}, 4, dtype, 1);
    ExpectInverse(inverse(a), a, tol, name + " batch");
    ExpectInverse(inverse(TransposedCopy(a)), TransposedCopy(a), tol, name + " transposed");
    ExpectInverse(inverse(NonContiguousCopy(a)), a, tol, name + " strided");
    const Tensor e = expand(WellConditioned({1}, 3, dtype, 2), {2, 3, 3});
    ExpectInverse(inverse(e), e, tol, name + " expanded batch");
  }
  EXPECT_EQ(ShapeOf(inverse(zeros({0, 0}))), Shape({0, 0}));
  EXPECT_EQ(ShapeOf(inverse(zeros({0, 2, 2}))), Shape({0, 2, 2}));
  EXPECT_EQ(ShapeOf(inverse(zeros({2, 0, 0}))), Shape({2, 0, 0}));
}

TEST(Inverse, Errors) {
  EXPECT_FT_ERROR(inverse(tensor({1.0, 2.0, 2.0, 4.0}, {2, 2})),
                  "inverse: A is singular: pivot 1 of its LU factorization is zero (A [2, 2]); it "
                  "has no inverse");
  EXPECT_FT_ERROR(inverse(tensor({0.0f}, {1, 1})), "inverse: A is singular: pivot 0");
  EXPECT_FT_ERROR(inverse(tensor({1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0}, {2, 2, 2})),
                  "inverse: A is singular: pivot 0 of its LU factorization is zero (matrix 1 of "
                  "the batch of A [2, 2, 2])");
  EXPECT_FT_ERROR(inverse(ones({2})), "inverse: expected A of rank >= 2");
  EXPECT_FT_ERROR(inverse(ones({3, 2})), "inverse: expected square matrices");
  EXPECT_FT_ERROR(inverse(ones({2, 2}, kInt64)), "inverse: expected a float32 or float64 A");
}

// ======================================================================================
// slogdet, logdet
// ======================================================================================

TEST(Slogdet, TriangularAndPermutationMatricesByHand) {
  for (DType dtype : {kFloat32, kFloat64}) {
    // Triangular: det is the product of the diagonal (2 * -3 * 0.5 = -3).
    const Tensor tri = to(tensor({2.0, 5.0, -1.0, 0.0, -3.0, 7.0, 0.0, 0.0, 0.5}, {3, 3}), dtype);
    auto [s, l] = slogdet(tri);
    EXPECT_TENSOR_NEAR(s, to(scalar_tensor(-1.0), dtype), 0);
    EXPECT_TENSOR_NEAR(l, to(scalar_tensor(std::log(3.0)), dtype), 1e-6);
    auto [s2, l2] = slogdet(TransposedCopy(tri));  // lower triangular, same det
    EXPECT_TENSOR_NEAR(s2, to(scalar_tensor(-1.0), dtype), 0);
    EXPECT_TENSOR_NEAR(l2, to(scalar_tensor(std::log(3.0)), dtype), 1e-6);
    // Permutations: a swap is odd (det -1), a 3-cycle even (det 1); scaled by 2: |det| 8.
    const Tensor perms = to(tensor({0.0, 2.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 2.0,  //
                                    0.0, 2.0, 0.0, 0.0, 0.0, 2.0, 2.0, 0.0, 0.0},
                                   {2, 3, 3}),
                            dtype);
    auto [ps, pl] = slogdet(perms);
    EXPECT_TENSOR_NEAR(ps, to(tensor({-1.0, 1.0}), dtype), 0);
    EXPECT_TENSOR_NEAR(pl, to(tensor({std::log(8.0), std::log(8.0)}), dtype), 1e-6);
    // Singular: sign 0, logabsdet -inf, no error.
    auto [zs, zl] = slogdet(to(tensor({1.0, 2.0, 2.0, 4.0}, {2, 2}), dtype));
    EXPECT_TENSOR_EQ(zs, to(scalar_tensor(0.0), dtype));
    EXPECT_TENSOR_EQ(zl, to(scalar_tensor(-std::numeric_limits<double>::infinity()), dtype));
    // 1 x 1 negative; the empty matrix (det 1) over a batch; an empty batch.
    auto [os, ol] = slogdet(to(tensor({-0.5}, {1, 1}), dtype));
    EXPECT_TENSOR_EQ(os, to(scalar_tensor(-1.0), dtype));
    EXPECT_TENSOR_NEAR(ol, to(scalar_tensor(std::log(0.5)), dtype), 1e-7);
    auto [es, el] = slogdet(zeros({2, 0, 0}, dtype));
    EXPECT_TENSOR_EQ(es, ones({2}, dtype));
    EXPECT_TENSOR_EQ(el, zeros({2}, dtype));
    auto [bs, bl] = slogdet(zeros({0, 3, 3}, dtype));
    EXPECT_EQ(ShapeOf(bs), Shape({0}));
    EXPECT_EQ(ShapeOf(bl), Shape({0}));
    EXPECT_EQ(bl.dtype(), dtype);
  }
  // |det| beyond float32's range: the log is still finite (a sum of logs, not a product).
  auto [hs, hl] =
      slogdet(to(tensor({1e30, 0.0, 0.0, 0.0, 1e30, 0.0, 0.0, 0.0, -1e30}, {3, 3}), kFloat32));
  EXPECT_TENSOR_EQ(hs, scalar_tensor(-1.0, kFloat32));
  EXPECT_TRUE(TensorNear(hl, scalar_tensor(3 * std::log(1e30), kFloat32), 0, 1e-6));
}

TEST(Slogdet, RandomMatricesMatchLaplaceExpansion) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor a = Rand({2, 3, 4, 4}, dtype, 5);
    for (const Tensor& x :
         {a, TransposedCopy(a), NonContiguousCopy(a), expand(select(a, 0, 0), {2, 3, 4, 4})}) {
      const Matrices m = ReadMatrices(x, true);
      std::vector<double> sign, logabs;
      for (int64_t b = 0; b < 6; ++b) {
        const std::vector<double> mat(m.v.begin() + b * 16, m.v.begin() + (b + 1) * 16);
        const double det = Det(mat, 4);
        sign.push_back(det > 0 ? 1.0 : -1.0);
        logabs.push_back(std::log(std::abs(det)));
      }
      auto [s, l] = slogdet(x);
      EXPECT_TENSOR_EQ(s, Expected(sign, {2, 3}, dtype));
      EXPECT_TENSOR_NEAR(l, Expected(logabs, {2, 3}, dtype), dtype == kFloat32 ? 1e-4 : 1e-12);
    }
  }
}

TEST(Logdet, LogOfDetNanWhenNegativeMinusInfWhenSingular) {
  for (DType dtype : {kFloat32, kFloat64}) {
    // det 6, det -3, det 0 in one batch.
    const Tensor a = to(tensor({2.0, 1.0, 0.0, 3.0,  //
                                0.0, 1.0, 3.0, 0.0,  //
                                1.0, 2.0, 2.0, 4.0},
                               {3, 2, 2}),
                        dtype);
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_TRUE(
        TensorNear(logdet(a), to(tensor({std::log(6.0), std::nan(""), -inf}), dtype), 1e-6));
    EXPECT_TENSOR_NEAR(logdet(TransposedCopy(a)),
                       to(tensor({std::log(6.0), std::nan(""), -inf}), dtype), 1e-6);
    const Tensor spd = Spd({}, 3, dtype, 3);
    const std::vector<double> v = spd.to_vector<double>();
    EXPECT_TRUE(TensorNear(logdet(spd), to(scalar_tensor(std::log(Det(v, 3))), dtype), 0, 1e-5));
    EXPECT_TENSOR_EQ(logdet(zeros({2, 0, 0}, dtype)), zeros({2}, dtype));
  }
}

TEST(Slogdet, Errors) {
  EXPECT_FT_ERROR(slogdet(ones({3})), "slogdet: expected A of rank >= 2");
  EXPECT_FT_ERROR(slogdet(ones({2, 3})), "slogdet: expected square matrices");
  EXPECT_FT_ERROR(slogdet(ones({2, 2}, kInt64)), "slogdet: expected a float32 or float64 A");
  EXPECT_FT_ERROR(logdet(ones({3})), "logdet: expected A of rank >= 2");
  EXPECT_FT_ERROR(logdet(ones({4, 2, 3})), "logdet: expected square matrices");
  EXPECT_FT_ERROR(logdet(ones({2, 2}, kBool)), "logdet: expected a float32 or float64 A");
}

// ======================================================================================
// CheckSquareMatrices, CheckSolveOperands
// ======================================================================================

TEST(CheckSquareMatrices, AcceptsFloatBatchesOfSquareMatricesOnly) {
  CheckSquareMatrices("op", Shape{3, 3}, kFloat32);
  CheckSquareMatrices("op", Shape{2, 4, 0, 0}, kFloat64);
  CheckSquareMatrices("op", Shape{1, 1}, kFloat64);
  EXPECT_FT_ERROR(CheckSquareMatrices("my_op", Shape{3}, kFloat32),
                  "my_op: expected A of rank >= 2 (a batch of square matrices [..., n, n]), got "
                  "[3]");
  EXPECT_FT_ERROR(CheckSquareMatrices("my_op", Shape{}, kFloat32), "my_op: expected A of rank");
  EXPECT_FT_ERROR(CheckSquareMatrices("my_op", Shape{2, 3, 4}, kFloat32),
                  "my_op: expected square matrices [..., n, n] for A, got [2, 3, 4] (dims -2 and "
                  "-1 are 3 and 4)");
  EXPECT_FT_ERROR(CheckSquareMatrices("my_op", Shape{3, 3}, kInt64),
                  "my_op: expected a float32 or float64 A, got int64 [3, 3]");
  EXPECT_FT_ERROR(CheckSquareMatrices("my_op", Shape{3, 3}, kBool),
                  "my_op: expected a float32 or float64 A, got bool");
}

TEST(CheckSolveOperands, ClassifiesVectorsAndValidates) {
  // torch.linalg.solve's rule: B is a vector when 1-D or A's shape without its last dim.
  EXPECT_TRUE(CheckSolveOperands("op", Shape{3, 3}, kFloat32, Shape{3}, kFloat32, true));
  EXPECT_TRUE(CheckSolveOperands("op", Shape{2, 3, 3}, kFloat32, Shape{2, 3}, kFloat64, true));
  EXPECT_TRUE(CheckSolveOperands("op", Shape{2, 3, 3}, kFloat32, Shape{3}, kFloat32, true));
  EXPECT_FALSE(CheckSolveOperands("op", Shape{2, 3, 3}, kFloat32, Shape{3, 3}, kFloat32, true));
  EXPECT_FALSE(CheckSolveOperands("op", Shape{3, 3}, kFloat32, Shape{3, 1}, kFloat32, true));
  EXPECT_FALSE(
      CheckSolveOperands("op", Shape{2, 1, 3, 3}, kFloat64, Shape{4, 3, 2}, kFloat64, false));
  EXPECT_FALSE(CheckSolveOperands("op", Shape{0, 0}, kFloat64, Shape{0, 5}, kFloat64, false));
  // Without allow_vector a 1-D B is an error, and [2, 3] is a (mismatched) matrix.
  EXPECT_FT_ERROR(CheckSolveOperands("my_op", Shape{3, 3}, kFloat32, Shape{3}, kFloat32, false),
                  "my_op: expected B of rank >= 2 ([..., n, k]), got [3] (A [3, 3])");
  EXPECT_FT_ERROR(
      CheckSolveOperands("my_op", Shape{2, 3, 3}, kFloat32, Shape{2, 3}, kFloat32, false),
      "my_op: size mismatch, got A [2, 3, 3] and B [2, 3]: dim -2 of B (2) must equal n (3)");
  EXPECT_FT_ERROR(CheckSolveOperands("my_op", Shape{3, 3}, kFloat32, Shape{4}, kFloat32, true),
                  "my_op: size mismatch, B [4] is a vector of length 4 but A [3, 3] is 3 x 3");
  EXPECT_FT_ERROR(
      CheckSolveOperands("my_op", Shape{2, 3, 3}, kFloat32, Shape{3, 3, 1}, kFloat32, true),
      "my_op: batch dims [2] of A [2, 3, 3] and [3] of B [3, 3, 1] cannot be broadcast together "
      "(2 vs 3)");
  EXPECT_FT_ERROR(CheckSolveOperands("my_op", Shape{3, 3}, kFloat32, Shape{3}, kInt64, true),
                  "my_op: expected a float32 or float64 B, got int64 [3]");
  EXPECT_FT_ERROR(CheckSolveOperands("my_op", Shape{3, 3}, kInt64, Shape{3}, kFloat32, true),
                  "my_op: expected a float32 or float64 A");
  EXPECT_FT_ERROR(CheckSolveOperands("my_op", Shape{3, 2}, kFloat32, Shape{3}, kFloat32, true),
                  "my_op: expected square matrices");
}

}  // namespace
}  // namespace ft::kernels

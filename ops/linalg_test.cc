#include "ops/linalg.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/random.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"

namespace ft {
namespace {

// ---- independent reference: torch.matmul's rules with hand-written loops ----

struct Ref {
  std::vector<double> values;
  Shape shape;
};

Tensor RefTensor(const Ref& r, DType dtype) {
  return kernels::to(tensor(r.values, r.shape), dtype);
}

Ref RefMatmul(const Tensor& a, const Tensor& b) {
  const std::vector<double> av = a.to_vector<double>();
  const std::vector<double> bv = b.to_vector<double>();
  std::vector<int64_t> as(a.sizes().begin(), a.sizes().end());
  std::vector<int64_t> bs(b.sizes().begin(), b.sizes().end());
  const bool a_vec = as.size() == 1;
  const bool b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  EXPECT_EQ(k, bs[bs.size() - 2]);
  std::vector<int64_t> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(ab.size(), bb.size());
  while (ab.size() < rank) ab.insert(ab.begin(), 1);
  while (bb.size() < rank) bb.insert(bb.begin(), 1);
  std::vector<int64_t> batch(rank);
  for (size_t i = 0; i < rank; ++i) batch[i] = std::max(ab[i], bb[i]);
  if (std::find(ab.begin(), ab.end(), 0) != ab.end() ||
      std::find(bb.begin(), bb.end(), 0) != bb.end()) {
    for (size_t i = 0; i < rank; ++i) {
      if (ab[i] == 0 || bb[i] == 0) batch[i] = 0;
    }
  }
  Ref r;
  r.shape.assign(batch.begin(), batch.end());
  if (!a_vec) r.shape.push_back(m);
  if (!b_vec) r.shape.push_back(n);
  int64_t count = 1;
  for (int64_t s : batch) count *= s;
  for (int64_t bi = 0; bi < count; ++bi) {
    // Multi-index of bi, then the (broadcast) linear batch index into a and b.
    int64_t rem = bi, ia = 0, ib = 0, mul_a = 1, mul_b = 1;
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      ia += (ab[d] == 1 ? 0 : idx) * mul_a;
      ib += (bb[d] == 1 ? 0 : idx) * mul_b;
      mul_a *= ab[d];
      mul_b *= bb[d];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += av[(ia * m + i) * k + p] * bv[(ib * k + p) * n + j];
        }
        r.values.push_back(acc);
      }
    }
  }
  return r;
}

// Deterministic small integers in [-3, 3]: every product is exact in every dtype.
Tensor Ints(IntArrayRef shape, DType dtype, int seed) {
  std::vector<double> v(static_cast<size_t>(Numel(shape)));
  uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(seed + 1);
  for (double& x : v) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<double>(static_cast<int64_t>((state >> 33) % 7) - 3);
  }
  return kernels::to(tensor(v, shape), dtype);
}

// ---- layouts: the same values in differently strided tensors ----

enum class Layout { kContiguous, kStrided, kTransposed, kPadded, kGapped };
const char* LayoutName(Layout l) {
  switch (l) {
    case Layout::kContiguous:
      return "contiguous";
    case Layout::kStrided:
      return "strided";
    case Layout::kTransposed:
      return "transposed";
    case Layout::kPadded:
      return "padded";
    case Layout::kGapped:
      return "gapped";
  }
  return "?";
}

// WithLayout returns a tensor equal to `t` laid out as `layout`:
//   strided: every other element of the last dim (no unit stride anywhere in the matrix);
//   transposed: the last two dims swapped in memory (outer stride 1, a column-major matrix);
//   padded: rows of a wider buffer (row stride > number of columns), starting at offset 1;
//   gapped: an unused row after each matrix (batch stride > rows * row stride).
Tensor WithLayout(const Tensor& t, Layout layout) {
  Shape sizes(t.sizes().begin(), t.sizes().end());
  const size_t r = sizes.size();
  switch (layout) {
    case Layout::kContiguous:
      return kernels::clone(t);
    case Layout::kStrided:
      return testing::NonContiguousCopy(t);
    case Layout::kTransposed: {
      if (r < 2) return testing::NonContiguousCopy(t);
      Shape swapped = sizes;
      std::swap(swapped[r - 1], swapped[r - 2]);
      Tensor base = EmptyContiguous(swapped, t.dtype());
      Shape strides = ContiguousStrides(swapped);
      std::swap(strides[r - 1], strides[r - 2]);
      Tensor view = MakeDense(base.storage(), t.dtype(), sizes, strides, 0);
      kernels::copy_into(view, t);
      return view;
    }
    case Layout::kPadded: {
      Shape big = sizes;
      big.back() += 3;
      Tensor base = EmptyContiguous(big, t.dtype());
      Tensor view = MakeDense(base.storage(), t.dtype(), sizes, ContiguousStrides(big), 1);
      kernels::copy_into(view, t);
      return view;
    }
    case Layout::kGapped: {
      if (r < 2) return testing::NonContiguousCopy(t);
      Shape big = sizes;
      big[r - 2] += 1;
      Tensor base = EmptyContiguous(big, t.dtype());
      Tensor view = MakeDense(base.storage(), t.dtype(), sizes, ContiguousStrides(big), 0);
      kernels::copy_into(view, t);
      return view;
    }
  }
  return t;
}

// Expanded returns `t` (whose dim `d` has size 1) viewed with dim d broadcast to `n`.
Tensor Expanded(const Tensor& t, int64_t d, int64_t n) {
  Shape sizes(t.sizes().begin(), t.sizes().end());
  Shape strides(t.strides().begin(), t.strides().end());
  EXPECT_EQ(sizes[d], 1);
  sizes[d] = n;
  strides[d] = 0;
  return MakeDense(t.storage(), t.dtype(), sizes, strides, t.storage_offset());
}

const Layout kLayouts[] = {Layout::kContiguous, Layout::kStrided, Layout::kTransposed,
                           Layout::kPadded, Layout::kGapped};

struct ShapePair {
  Shape a;
  Shape b;
};

// Every rank combination of torch.matmul, with batch broadcasting and size-0/1 dims.
std::vector<ShapePair> MatmulShapes() {
  return {
      {{4}, {4}},                      // 1-1: dot
      {{1}, {1}},                      //
      {{0}, {0}},                      // empty dot: 0
      {{3}, {3, 5}},                   // 1-2
      {{4, 3}, {3}},                   // 2-1
      {{4, 3}, {3, 5}},                // 2-2
      {{1, 1}, {1, 1}},                //
      {{0, 3}, {3, 5}},                // M = 0
      {{4, 0}, {0, 5}},                // K = 0: zeros
      {{4, 3}, {3, 0}},                // N = 0
      {{2, 4, 3}, {3, 5}},             // 3-2 (folded into one GEMM when possible)
      {{4, 3}, {2, 3, 5}},             // 2-3
      {{3}, {2, 3, 5}},                // 1-3
      {{2, 4, 3}, {3}},                // 3-1
      {{2, 1, 4, 3}, {3, 3, 5}},       // 4-3 with batch broadcasting
      {{2, 3, 4, 3}, {1, 3, 5}},       //
      {{1, 4, 3}, {2, 1, 3, 5}},       //
      {{2, 4, 3}, {2, 3, 5}},          // 3-3 (bmm-like)
      {{0, 4, 3}, {3, 5}},             // empty batch
      {{2, 4, 0}, {2, 0, 5}},          // batched K = 0
      {{1, 1, 3}, {1, 3, 1}},          //
      {{3, 1, 3}, {3, 3, 1}},          // size-1 rows / cols in a batch
      {{2, 3, 30, 25}, {25, 21}},      // GEMM-sized, folded
      {{2, 30, 25}, {1, 25, 21}},      // b's batch of 1 broadcast
      {{2, 30, 25}, {2, 25, 21}},      //
      {{33, 47}, {47, 29}},            //
      {{16, 16}, {16, 16}},            // small products (small_gemm.h): whole tiles,
      {{5, 16}, {16, 18}},             // an odd row and two columns past the tiles,
      {{7, 9}, {9, 13}},               // narrow tiles, rows past them, a column past them
      {{1, 12}, {12, 20}},             // one row
      {{47}, {2, 47, 29}},             //
      {{3, 33, 47}, {47}},             //
      {{4, 3}, {5, 3, 1}},             // shared matrix @ a batch of columns: one GEMM
      {{1, 4, 3}, {6, 3, 1}},          //
      {{4, 3}, {2, 3, 3, 1}},          // two batch dims folded
      {{4, 1}, {5, 1, 1}},             // K = 1
      {{4, 1}, {1, 5}},                // K = 1: outer products, written without GEMM
      {{3, 4, 1}, {3, 1, 5}},          //
      {{33, 47}, {20, 47, 1}},         //
  };
}

TEST(LinalgOps, MatmulEveryRankAndLayoutMatchesLoops) {
  int seed = 0;
  for (const ShapePair& sp : MatmulShapes()) {
    for (DType dtype : {kFloat32, kFloat64, kInt64}) {
      const Tensor a0 = Ints(sp.a, dtype, seed++);
      const Tensor b0 = Ints(sp.b, dtype, seed++);
      for (Layout la : kLayouts) {
        for (Layout lb : kLayouts) {
          const Tensor a = WithLayout(a0, la);
          const Tensor b = WithLayout(b0, lb);
          SCOPED_TRACE(ShapeToString(sp.a) + " @ " + ShapeToString(sp.b) + " " +
                       DTypeName(dtype) + " " + LayoutName(la) + "/" + LayoutName(lb));
          const Tensor got = matmul(a, b);
          EXPECT_TENSOR_EQ(got, RefTensor(RefMatmul(a, b), dtype));
          EXPECT_TRUE(got.is_contiguous());
        }
      }
    }
  }
}

TEST(LinalgOps, MatmulFractionalValuesFloat32AndFloat64) {
  const Tensor x = tensor({0.5, -1.25, 2.0, 0.1, 3.5, -0.7}, {2, 3});
  const Tensor y = tensor({1.5, 0.25, -2.0, 0.3, 1.0, -0.5}, {3, 2});
  const Tensor expected = tensor({0.5 * 1.5 - 1.25 * -2.0 + 2.0 * 1.0,
                                  0.5 * 0.25 - 1.25 * 0.3 + 2.0 * -0.5,
                                  0.1 * 1.5 + 3.5 * -2.0 - 0.7 * 1.0,
                                  0.1 * 0.25 + 3.5 * 0.3 - 0.7 * -0.5},
                                 {2, 2});
  EXPECT_TENSOR_NEAR(matmul(x, y), expected, 1e-12);
  EXPECT_TENSOR_NEAR(matmul(kernels::to(x, kFloat32), kernels::to(y, kFloat32)),
                     kernels::to(expected, kFloat32), 1e-5);
}

// Batches of outer products writing 16 MB or more are written with non-temporal stores
// (kernels/linalg.cc, kStreamOuterProductBytes): each element must be the same product
// a[i] * b[j] a loop computes, bit for bit, in both dtypes, with b's rows in place or strided,
// and with rows whose byte length is not a multiple of 16 (not streamed).
TEST(LinalgOps, LargeBatchesOfOuterProductsAreExactProducts) {
  Generator g(5);
  for (DType dtype : {kFloat32, kFloat64}) {
    for (int64_t n : {int64_t{64}, int64_t{61}}) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " n " << n);
      const int64_t batch = dtype == kFloat32 ? 1100 : 560, m = 64;
      const Tensor a = kernels::to(kernels::rand_like(zeros({batch, m, 1}), &g), dtype);
      const Tensor b = kernels::to(kernels::rand_like(zeros({batch, 1, n}), &g), dtype);
      const Tensor c = matmul(a, b);  // >= 16 MB for n = 64
      const Tensor ca = kernels::to(c, kFloat64), aa = kernels::to(a, kFloat64),
                   bb = kernels::to(b, kFloat64);
      const double* pc = ca.data<double>();
      const double* pa = aa.data<double>();
      const double* pb = bb.data<double>();
      for (int64_t i : {int64_t{0}, int64_t{1}, batch / 2, batch - 1}) {
        for (int64_t r = 0; r < m; ++r) {
          for (int64_t j = 0; j < n; ++j) {
            const double want = dtype == kFloat32
                                    ? static_cast<double>(static_cast<float>(pa[i * m + r]) *
                                                          static_cast<float>(pb[i * n + j]))
                                    : pa[i * m + r] * pb[i * n + j];
            ASSERT_EQ(pc[(i * m + r) * n + j], want) << i << " " << r << " " << j;
          }
        }
      }
      // b given transposed (its rows strided): the ordinary path, the same values.
      const Tensor bt =
          kernels::transpose(kernels::contiguous(kernels::transpose(b, 1, 2)), 1, 2);
      EXPECT_TRUE(testing::TensorEqual(matmul(a, bt), c));
    }
  }
}

TEST(LinalgOps, MatmulExpandedOperands) {
  // Broadcast rows (stride 0 inside the matrix), a broadcast batch dim and a broadcast
  // vector: the results must equal those of materialized copies.
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor row = Ints({1, 6}, dtype, 1);
    const Tensor rows = Expanded(row, 0, 25);                           // [25, 6], rs = 0
    const Tensor b = Ints({6, 22}, dtype, 2);
    EXPECT_TENSOR_EQ(matmul(rows, b), RefTensor(RefMatmul(rows, b), dtype));
    const Tensor left = Ints({3, 25}, dtype, 3);
    EXPECT_TENSOR_EQ(matmul(left, rows), RefTensor(RefMatmul(left, rows), dtype));
    const Tensor batch = Expanded(Ints({1, 4, 6}, dtype, 4), 0, 3);     // [3, 4, 6]
    EXPECT_TENSOR_EQ(matmul(batch, b), RefTensor(RefMatmul(batch, b), dtype));
    EXPECT_TENSOR_EQ(matmul(Ints({3, 22, 4}, dtype, 5), batch),
                     RefTensor(RefMatmul(Ints({3, 22, 4}, dtype, 5), batch), dtype));
    const Tensor vec = Expanded(Ints({1}, dtype, 6), 0, 6);             // [6], stride 0
    EXPECT_TENSOR_EQ(matmul(vec, b), RefTensor(RefMatmul(vec, b), dtype));
    EXPECT_TENSOR_EQ(matmul(Ints({5, 6}, dtype, 7), vec),
                     RefTensor(RefMatmul(Ints({5, 6}, dtype, 7), vec), dtype));
    EXPECT_TENSOR_EQ(dot(vec, vec), RefTensor(RefMatmul(vec, vec), dtype));
    const Tensor all = Expanded(Expanded(Ints({1, 1}, dtype, 8), 0, 4), 1, 6);
    EXPECT_TENSOR_EQ(matmul(all, b), RefTensor(RefMatmul(all, b), dtype));
  }
}

// Found by the property test (jacfwd of a matmul whose operand came from a broadcast copy_):
// a broadcast batch dim inside a strided one, [2, 3] with strides [k, 0], passed the batch
// folds' "constant stride" test because 0 also meant "no stride yet", so repeated matrices
// were read as distinct ones.
TEST(LinalgOps, MatmulBroadcastBatchDimInsideAStridedOne) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor a = Ints({3, 2}, dtype, 11);
    // A batch of column vectors (the shared-matrix GEMM path): [2, 3, 2, 1].
    const Tensor cols = Expanded(Ints({2, 1, 2, 1}, dtype, 12), 1, 3);
    EXPECT_TENSOR_EQ(matmul(a, cols), RefTensor(RefMatmul(a, cols), dtype));
    // A batch of rows times a shared matrix (the fold-into-rows path): [2, 3, 1, 3] @ [3, 2].
    const Tensor rows = Expanded(Ints({2, 1, 1, 3}, dtype, 13), 1, 3);
    const Tensor b = Ints({3, 2}, dtype, 14);
    EXPECT_TENSOR_EQ(matmul(rows, b), RefTensor(RefMatmul(rows, b), dtype));
    // Matrices of several rows: [2, 4, 2, 3] @ [3, 5].
    const Tensor mats = Expanded(Ints({2, 1, 2, 3}, dtype, 15), 1, 4);
    const Tensor c = Ints({3, 5}, dtype, 16);
    EXPECT_TENSOR_EQ(matmul(mats, c), RefTensor(RefMatmul(mats, c), dtype));
  }
}

TEST(LinalgOps, MatmulDoesNotAliasOrModifyInputs) {
  const Tensor a = Ints({3, 4}, kFloat32, 1);
  const Tensor b = Ints({4, 2}, kFloat32, 2);
  const std::vector<float> av = a.to_vector<float>();
  const int64_t version = a.version();
  const Tensor c = matmul(a, b);
  EXPECT_FALSE(c.storage().is_same(a.storage()));
  EXPECT_EQ(a.to_vector<float>(), av);
  EXPECT_EQ(a.version(), version);
  // 1 x 1 result stays a fresh tensor.
  const Tensor d = matmul(Ints({1, 1}, kFloat32, 3), Ints({1, 1}, kFloat32, 4));
  EXPECT_EQ(d.numel(), 1);
}

TEST(LinalgOps, MatmulZeroInnerSizeGivesZeros) {
  EXPECT_TENSOR_EQ(matmul(ones({3, 0}), ones({0, 2})), zeros({3, 2}));
  EXPECT_TENSOR_EQ(matmul(ones({0}, kInt64), ones({0}, kInt64)), zeros({}, kInt64));
  EXPECT_TENSOR_EQ(matmul(ones({2, 3, 0}), ones({0})), zeros({2, 3}));
}

TEST(LinalgOps, MatmulPromotesMixedDtypes) {
  const Tensor ai = Ints({3, 4}, kInt64, 1);
  const Tensor bf = Ints({4, 2}, kFloat32, 2);
  const Tensor bd = Ints({4, 2}, kFloat64, 3);
  EXPECT_TENSOR_EQ(matmul(ai, bf), RefTensor(RefMatmul(ai, bf), kFloat32));
  EXPECT_TENSOR_EQ(matmul(ai, bd), RefTensor(RefMatmul(ai, bd), kFloat64));
  const Tensor af = Ints({2, 4}, kFloat32, 4);
  EXPECT_TENSOR_EQ(matmul(af, bd), RefTensor(RefMatmul(af, bd), kFloat64));
  const Tensor vi = Ints({4}, kInt64, 5);
  const Tensor mf = Ints({2, 4}, kFloat32, 6);
  EXPECT_TENSOR_EQ(matmul(mf, vi), RefTensor(RefMatmul(mf, vi), kFloat32));
  EXPECT_EQ(matmul(ai, Ints({4, 1}, kInt64, 7)).dtype(), kInt64);
}

TEST(LinalgOps, MatmulErrors) {
  EXPECT_FT_ERROR(matmul(ones({2, 3}), ones({4, 5})),
                  "matmul: size mismatch, got [2, 3] @ [4, 5]: dim -1 of the first (3) must "
                  "equal dim -2 of the second (4)");
  EXPECT_FT_ERROR(matmul(ones({2, 3}), ones({4})),
                  "matmul: size mismatch, got [2, 3] @ [4]: dim -1 of the first (3) must "
                  "equal dim -1 of the second (4)");
  EXPECT_FT_ERROR(matmul(ones({3}), ones({4})), "dim -1 of the first (3)");
  EXPECT_FT_ERROR(matmul(ones({}), ones({3})),
                  "matmul: both arguments need at least 1 dimension, got [] and [3]");
  EXPECT_FT_ERROR(matmul(ones({3}), ones({})), "matmul: both arguments need at least 1");
  EXPECT_FT_ERROR(matmul(ones({2, 2, 3}), ones({3, 3, 4})),
                  "matmul: batch dims [2] of [2, 2, 3] and [3] of [3, 3, 4] cannot be "
                  "broadcast together (2 vs 3)");
  EXPECT_FT_ERROR(matmul(ones({2, 3}, kBool), ones({3, 2}, kBool)),
                  "matmul: bool tensors are not supported, got bool [2, 3] and bool [3, 2]");
  EXPECT_FT_ERROR(matmul(ones({2, 3}), ones({3}, kBool)),
                  "matmul: bool tensors are not supported, got float32 [2, 3] and bool [3]");
}

TEST(LinalgOps, MmMatchesLoopsAndChecksShapes) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    for (Layout la : kLayouts) {
      const Tensor a = WithLayout(Ints({5, 7}, dtype, 1), la);
      const Tensor b = WithLayout(Ints({7, 3}, dtype, 2), Layout::kTransposed);
      SCOPED_TRACE(LayoutName(la));
      EXPECT_TENSOR_EQ(mm(a, b), RefTensor(RefMatmul(a, b), dtype));
    }
  }
  EXPECT_TENSOR_EQ(mm(ones({0, 2}), ones({2, 3})), zeros({0, 3}));
  EXPECT_TENSOR_EQ(mm(ones({2, 0}), ones({0, 3})), zeros({2, 3}));
  EXPECT_TENSOR_EQ(mm(Ints({2, 3}, kInt64, 3), Ints({3, 2}, kFloat64, 4)),
                   RefTensor(RefMatmul(Ints({2, 3}, kInt64, 3), Ints({3, 2}, kFloat64, 4)),
                             kFloat64));
  EXPECT_FT_ERROR(mm(ones({3}), ones({3, 2})), "mm: expected 2-D tensors, got [3] and [3, 2]");
  EXPECT_FT_ERROR(mm(ones({2, 2, 3}), ones({3, 2})), "mm: expected 2-D tensors, got [2, 2, 3]");
  EXPECT_FT_ERROR(mm(ones({2, 3}), ones({4, 5})),
                  "mm: size mismatch, got [2, 3] @ [4, 5]: dim 1 of the first (3) must equal "
                  "dim 0 of the second (4)");
  EXPECT_FT_ERROR(mm(ones({2, 3}, kBool), ones({3, 2})), "mm: bool tensors are not supported");
}

TEST(LinalgOps, BmmMatchesLoopsAndChecksShapes) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    for (Layout la : kLayouts) {
      for (Layout lb : kLayouts) {
        const Tensor a = WithLayout(Ints({3, 4, 6}, dtype, 1), la);
        const Tensor b = WithLayout(Ints({3, 6, 5}, dtype, 2), lb);
        SCOPED_TRACE(std::string(LayoutName(la)) + "/" + LayoutName(lb));
        EXPECT_TENSOR_EQ(bmm(a, b), RefTensor(RefMatmul(a, b), dtype));
      }
    }
  }
  const Tensor bexp = Expanded(Ints({1, 6, 5}, kFloat32, 3), 0, 3);
  const Tensor a = Ints({3, 4, 6}, kFloat32, 4);
  EXPECT_TENSOR_EQ(bmm(a, bexp), RefTensor(RefMatmul(a, bexp), kFloat32));
  EXPECT_TENSOR_EQ(bmm(ones({0, 2, 3}), ones({0, 3, 4})), zeros({0, 2, 4}));
  EXPECT_TENSOR_EQ(bmm(ones({2, 2, 0}), ones({2, 0, 4})), zeros({2, 2, 4}));
  EXPECT_FT_ERROR(bmm(ones({2, 3}), ones({2, 3, 4})),
                  "bmm: expected 3-D tensors, got [2, 3] and [2, 3, 4]");
  EXPECT_FT_ERROR(bmm(ones({2, 3, 4}), ones({3, 4, 5})),
                  "bmm: batch sizes differ, got [2, 3, 4] and [3, 4, 5] (2 vs 3)");
  EXPECT_FT_ERROR(bmm(ones({2, 3, 4}), ones({2, 5, 5})),
                  "bmm: size mismatch, got [2, 3, 4] @ [2, 5, 5]: dim 2 of the first (4) "
                  "must equal dim 1 of the second (5)");
  EXPECT_FT_ERROR(bmm(ones({2, 3, 4}, kBool), ones({2, 4, 5}, kBool)), "bmm: bool tensors");
}

TEST(LinalgOps, DotMatchesLoopsAndChecksShapes) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    for (Layout la : {Layout::kContiguous, Layout::kStrided, Layout::kPadded}) {
      const Tensor a = WithLayout(Ints({30}, dtype, 1), la);
      const Tensor b = WithLayout(Ints({30}, dtype, 2), Layout::kStrided);
      double expected = 0;
      const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
      for (size_t i = 0; i < av.size(); ++i) expected += av[i] * bv[i];
      const Tensor got = dot(a, b);
      EXPECT_EQ(got.dim(), 0);
      EXPECT_TENSOR_EQ(got, kernels::to(scalar_tensor(expected, kFloat64), dtype));
    }
  }
  EXPECT_TENSOR_EQ(dot(ones({0}), ones({0})), zeros({}));
  EXPECT_TENSOR_EQ(dot(tensor({1, 2, 3}), tensor({0.5f, 0.25f, 2.0f})), scalar_tensor(7.0f));
  EXPECT_FT_ERROR(dot(ones({2, 3}), ones({3})), "dot: expected 1-D tensors, got [2, 3] and [3]");
  EXPECT_FT_ERROR(dot(ones({3}), ones({})), "dot: expected 1-D tensors, got [3] and []");
  EXPECT_FT_ERROR(dot(ones({3}), ones({4})),
                  "dot: size mismatch, got [3] and [4]: both vectors must have the same length");
  EXPECT_FT_ERROR(dot(ones({3}, kBool), ones({3}, kBool)), "dot: bool tensors");
}

TEST(LinalgOps, OuterMatchesLoopsAndChecksShapes) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    for (Layout la : {Layout::kContiguous, Layout::kStrided}) {
      const Tensor a = WithLayout(Ints({4}, dtype, 1), la);
      const Tensor b = WithLayout(Ints({25}, dtype, 2), Layout::kStrided);
      const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
      std::vector<double> expected;
      for (double x : av) {
        for (double y : bv) expected.push_back(x * y);
      }
      EXPECT_TENSOR_EQ(outer(a, b), kernels::to(tensor(expected, {4, 25}), dtype));
    }
  }
  EXPECT_TENSOR_EQ(outer(ones({0}), ones({3})), zeros({0, 3}));
  EXPECT_TENSOR_EQ(outer(ones({2}), ones({0})), zeros({2, 0}));
  const Tensor v = Expanded(tensor({2.0}), 0, 3);
  EXPECT_TENSOR_EQ(outer(v, tensor({1.0, -1.0})), tensor({2.0, -2.0, 2.0, -2.0, 2.0, -2.0},
                                                         {3, 2}));
  EXPECT_TENSOR_EQ(outer(tensor({1, 2}), tensor({0.5f})), tensor({0.5f, 1.0f}, {2, 1}));
  EXPECT_FT_ERROR(outer(ones({2, 1}), ones({3})), "outer: expected 1-D tensors, got [2, 1]");
  EXPECT_FT_ERROR(outer(ones({2}, kBool), ones({3})), "outer: bool tensors");
}

// RefLinear: x @ w^T + bias (bias broadcast over the result) with loops.
Ref RefLinear(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias) {
  const std::vector<double> xv = x.to_vector<double>();
  const std::vector<double> wv = w.to_vector<double>();
  const int64_t in = w.sizes()[1], out = w.sizes()[0];
  const int64_t rows = x.numel() / std::max<int64_t>(in, 1);
  Ref r;
  r.shape.assign(x.sizes().begin(), x.sizes().end() - 1);
  r.shape.push_back(out);
  const int64_t nrows = in == 0 ? Numel(r.shape) / std::max<int64_t>(out, 1) : rows;
  std::vector<double> bv;
  if (bias) {
    // Broadcast the bias to the result shape by hand (right-aligned dims).
    Tensor full_bias = zeros(r.shape, kFloat64);
    kernels::copy_into(full_bias, kernels::to(*bias, kFloat64));
    bv = full_bias.to_vector<double>();
  }
  for (int64_t i = 0; i < nrows; ++i) {
    for (int64_t o = 0; o < out; ++o) {
      double acc = 0;
      for (int64_t p = 0; p < in; ++p) acc += xv[i * in + p] * wv[o * in + p];
      if (bias) acc += bv[i * out + o];
      r.values.push_back(acc);
    }
  }
  return r;
}

TEST(LinalgOps, LinearMatchesLoops) {
  struct Case {
    std::vector<int64_t> x;
    std::vector<int64_t> w;
    bool has_bias;
    std::vector<int64_t> bias;
  };
  const std::vector<Case> cases = {
      {{5}, {3, 5}, true, {3}},          {{4, 5}, {3, 5}, true, {3}},
      {{2, 4, 5}, {3, 5}, true, {3}},    {{2, 4, 5}, {3, 5}, false, {}},
      {{2, 3, 4, 5}, {6, 5}, true, {1}}, {{4, 5}, {3, 5}, true, {}},
      {{4, 5}, {3, 5}, true, {4, 3}},    {{2, 4, 5}, {3, 5}, true, {4, 1}},
      {{0, 5}, {3, 5}, true, {3}},       {{4, 0}, {3, 0}, true, {3}},
      {{4, 5}, {0, 5}, true, {0}},       {{3, 30, 26}, {21, 26}, true, {21}},
  };
  int seed = 0;
  for (const Case& c : cases) {
    for (DType dtype : {kFloat32, kFloat64, kInt64}) {
      for (Layout lx : kLayouts) {
        for (Layout lw : {Layout::kContiguous, Layout::kTransposed, Layout::kStrided}) {
          SCOPED_TRACE(ShapeToString(c.x) + " " + ShapeToString(c.w) + " " + DTypeName(dtype) +
                       " " + LayoutName(lx) + "/" + LayoutName(lw));
          const Tensor x = WithLayout(Ints(c.x, dtype, seed++), lx);
          const Tensor w = WithLayout(Ints(c.w, dtype, seed++), lw);
          std::optional<Tensor> bias;
          if (c.has_bias) bias = Ints(c.bias, dtype, seed++);
          EXPECT_TENSOR_EQ(linear(x, w, bias), RefTensor(RefLinear(x, w, bias), dtype));
        }
      }
    }
  }
  // An expanded (stride 0) bias, and a transposed weight (a column-major view of W^T).
  const Tensor x = Ints({4, 5}, kFloat32, 1);
  const Tensor w = Ints({3, 5}, kFloat32, 2);
  const Tensor b = Expanded(tensor({1.5f}), 0, 3);
  EXPECT_TENSOR_EQ(linear(x, w, b), RefTensor(RefLinear(x, w, b), kFloat32));
}

TEST(LinalgOps, LinearPromotesOverAllOperands) {
  const Tensor x = Ints({2, 3}, kInt64, 1);
  const Tensor w = Ints({4, 3}, kInt64, 2);
  EXPECT_EQ(linear(x, w).dtype(), kInt64);
  const Tensor bf = tensor({0.5f, 1.5f, -2.0f, 0.25f});
  EXPECT_TENSOR_EQ(linear(x, w, bf), RefTensor(RefLinear(x, w, bf), kFloat32));
  const Tensor wd = Ints({4, 3}, kFloat64, 3);
  EXPECT_TENSOR_EQ(linear(x, wd, bf), RefTensor(RefLinear(x, wd, bf), kFloat64));
}

// Found by //tests/fuzz:ops_fuzzer (corpus/ops_fuzzer/regression-int64-matmul): int64
// products and sums were signed overflow (UB) in Eigen's GEMM. They wrap around, as the
// elementwise int64 ops do: max * max = 1 and 1 + max = min (mod 2^64).
TEST(LinalgOps, Int64ProductsWrap) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  auto i64 = [](std::vector<int64_t> v, IntArrayRef shape) { return tensor(v, shape); };
  EXPECT_TENSOR_EQ(matmul(i64({max, max}, {1, 2}), i64({max, 1}, {2, 1})), i64({min}, {1, 1}));
  EXPECT_TENSOR_EQ(mm(i64({min, 3}, {1, 2}), i64({min, 2}, {2, 1})), i64({6}, {1, 1}));
  EXPECT_TENSOR_EQ(dot(i64({max, 2}, {2}), i64({max, min}, {2})), i64({1}, {}));
  EXPECT_TENSOR_EQ(outer(i64({max}, {1}), i64({max, 2}, {2})), i64({1, -2}, {1, 2}));
  EXPECT_TENSOR_EQ(bmm(i64({max, max}, {2, 1, 1}), i64({max, 2}, {2, 1, 1})),
                   i64({1, -2}, {2, 1, 1}));
  EXPECT_TENSOR_EQ(linear(i64({max}, {1, 1}), i64({1}, {1, 1}), i64({1}, {1})),
                   i64({min}, {1, 1}));
}

TEST(LinalgOps, LinearErrors) {
  EXPECT_FT_ERROR(linear(ones({}), ones({3, 1})),
                  "linear: input must have at least 1 dimension, got a rank-0 tensor");
  EXPECT_FT_ERROR(linear(ones({2, 3}), ones({3})),
                  "linear: weight must be 2-D [out_features, in_features], got [3]");
  EXPECT_FT_ERROR(linear(ones({2, 3}), ones({4, 5})),
                  "linear: size mismatch, input [2, 3] has 3 features (dim -1) but weight "
                  "[4, 5] expects 5 (dim 1)");
  EXPECT_FT_ERROR(linear(ones({2, 3}), ones({4, 3}), ones({5})),
                  "linear: shapes [2, 4] and [5] cannot be broadcast together");
  EXPECT_FT_ERROR(linear(ones({2, 3}), ones({4, 3}), ones({3, 2, 4})),
                  "linear: bias of shape [3, 2, 4] does not broadcast to the output shape "
                  "[2, 4]");
  EXPECT_FT_ERROR(linear(ones({2, 3}, kBool), ones({4, 3})),
                  "linear: bool tensors are not supported, got bool [2, 3] and float32 [4, 3]");
  EXPECT_FT_ERROR(linear(ones({2, 3}), ones({4, 3}), ones({4}, kBool)),
                  "linear: bool tensors are not supported, got a bool bias [4]");
}

}  // namespace
}  // namespace ft

#include "ops/index.h"

#include <array>
#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "dispatch/dispatch.h"
#include "dispatch/operator.h"
#include "gtest/gtest.h"
#include "ops/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

// ---- helpers: inputs with known values and unusual layouts ----

// Seq returns 0, 1, 2, ... of `shape` in `dtype`.
Tensor Seq(IntArrayRef shape, DType dtype = kFloat64) {
  std::vector<double> v(static_cast<size_t>(Numel(shape)));
  std::iota(v.begin(), v.end(), 0.0);
  return kernels::to(tensor(v, shape), dtype);
}

Tensor Ix(const std::vector<int64_t>& v, IntArrayRef shape) { return tensor(v, shape); }
Tensor Ix(const std::vector<int64_t>& v) { return tensor(v); }

// SwapLayout returns t's values stored with its last two dims swapped in memory: a
// non-contiguous tensor (a transpose-like layout) equal to t.
Tensor SwapLayout(const Tensor& t) {
  const int64_t r = t.dim();
  Shape mem(t.sizes().begin(), t.sizes().end());
  std::swap(mem[r - 1], mem[r - 2]);
  Tensor buf = EmptyContiguous(mem, t.dtype());
  Shape strides = ContiguousStrides(mem);
  std::swap(strides[r - 1], strides[r - 2]);
  Tensor view = MakeDense(buf.storage(), t.dtype(), Shape(t.sizes().begin(), t.sizes().end()),
                          strides, 0);
  kernels::copy_into(view, t);
  EXPECT_FALSE(view.is_contiguous());
  return view;
}

// Strided returns t's values with stride 2 in the last dim.
Tensor Strided(const Tensor& t) {
  Tensor s = testing::NonContiguousCopy(t);
  EXPECT_FALSE(s.is_contiguous());
  return s;
}

int64_t Lin(IntArrayRef shape, const std::array<int64_t, 3>& p) {
  return (p[0] * shape[1] + p[1]) * shape[2] + p[2];
}

// Loop oracles over rank-3 tensors, on std::vector copies of the values.
Tensor RefGather3(const Tensor& x, int64_t dim, const Tensor& index) {
  const std::vector<double> xv = x.to_vector<double>();
  const std::vector<int64_t> iv = index.to_vector<int64_t>();
  std::vector<double> out(iv.size());
  const IntArrayRef is = index.sizes();
  for (int64_t i = 0; i < is[0]; ++i) {
    for (int64_t j = 0; j < is[1]; ++j) {
      for (int64_t k = 0; k < is[2]; ++k) {
        std::array<int64_t, 3> p = {i, j, k};
        const int64_t at = Lin(is, p);
        p[dim] = iv[at];
        out[at] = xv[Lin(x.sizes(), p)];
      }
    }
  }
  return kernels::to(tensor(out, is), x.dtype());
}

Tensor RefScatterAdd3(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  std::vector<double> out = x.to_vector<double>();
  const std::vector<int64_t> iv = index.to_vector<int64_t>();
  const std::vector<double> sv = src.to_vector<double>();
  const IntArrayRef is = index.sizes();
  for (int64_t i = 0; i < is[0]; ++i) {
    for (int64_t j = 0; j < is[1]; ++j) {
      for (int64_t k = 0; k < is[2]; ++k) {
        std::array<int64_t, 3> p = {i, j, k};
        const double v = sv[Lin(src.sizes(), p)];
        p[dim] = iv[Lin(is, p)];
        out[Lin(x.sizes(), p)] += v;
      }
    }
  }
  return kernels::to(tensor(out, x.sizes()), x.dtype());
}

// A deterministic pseudo-random int64 index tensor with values in [0, bound).
Tensor Indices(IntArrayRef shape, int64_t bound, int64_t seed) {
  std::vector<int64_t> v(static_cast<size_t>(Numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<int64_t>((i * 7 + static_cast<size_t>(seed) * 3 + i * i) %
                                static_cast<size_t>(bound));
  }
  return Ix(v, shape);
}

// ---- registration ----

TEST(IndexOps, AllRegistered) {
  RegisterAllOps();
  for (const char* name : {"index_select", "gather", "scatter_add", "take_along_dim", "cat",
                           "stack", "split", "split_with_sizes", "chunk", "repeat", "pad", "to",
                           "one_hot"}) {
    EXPECT_NE(OpRegistry::Global().Find(name), nullptr) << name;
  }
}

// ---- index_select ----

TEST(IndexSelect, Matrix) {
  Tensor x = tensor({0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f}, {2, 3});
  EXPECT_TENSOR_EQ(index_select(x, 1, Ix({2, 0, 2})),
                   tensor({2.0f, 0.0f, 2.0f, 5.0f, 3.0f, 5.0f}, {2, 3}));
  EXPECT_TENSOR_EQ(index_select(x, -1, Ix({1})), tensor({1.0f, 4.0f}, {2, 1}));
  EXPECT_TENSOR_EQ(index_select(x, 0, Ix({1, 1, 0})),
                   tensor({3.0f, 4.0f, 5.0f, 3.0f, 4.0f, 5.0f, 0.0f, 1.0f, 2.0f}, {3, 3}));
  // Empty index: size 0 along dim.
  EXPECT_EQ(index_select(x, 0, Ix({})).sizes(), (IntArrayRef{0, 3}));
  // Rank-0 index keeps the dim (size 1).
  EXPECT_TENSOR_EQ(index_select(x, 0, scalar_tensor(int64_t{1})),
                   tensor({3.0f, 4.0f, 5.0f}, {1, 3}));
}

TEST(IndexSelect, Rank3EveryDimAgainstLoops) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    Tensor x = Seq({3, 4, 5}, dtype);
    for (int64_t dim = 0; dim < 3; ++dim) {
      Tensor idx = Indices({6}, x.size(dim), dim);
      // index_select equals gather with the index broadcast along the other dims.
      Shape is = {3, 4, 5};
      is[dim] = 6;
      std::vector<int64_t> full_idx;
      const std::vector<int64_t> iv = idx.to_vector<int64_t>();
      for (int64_t i = 0; i < is[0]; ++i) {
        for (int64_t j = 0; j < is[1]; ++j) {
          for (int64_t k = 0; k < is[2]; ++k) {
            std::array<int64_t, 3> p = {i, j, k};
            full_idx.push_back(iv[p[dim]]);
          }
        }
      }
      Tensor expected = RefGather3(x, dim, Ix(full_idx, is));
      EXPECT_TENSOR_EQ(index_select(x, dim, idx), expected);
      EXPECT_TENSOR_EQ(index_select(SwapLayout(x), dim, Strided(idx)), expected);
      EXPECT_TENSOR_EQ(index_select(Strided(x), dim, idx), expected);
    }
  }
}

TEST(IndexSelect, LayoutsDtypesRankZero) {
  // Expanded input (stride 0 rows).
  Tensor row = tensor({1.0, 2.0, 3.0});
  Tensor expanded = MakeDense(row.storage(), kFloat64, {4, 3}, {0, 1}, 0);
  EXPECT_TENSOR_EQ(index_select(expanded, 1, Ix({2, 2})),
                   tensor({3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0}, {4, 2}));
  EXPECT_TENSOR_EQ(index_select(expanded, 0, Ix({3})), tensor({1.0, 2.0, 3.0}, {1, 3}));
  // Expanded index.
  Tensor one = Ix({2});
  Tensor idx = MakeDense(one.storage(), kInt64, {3}, {0}, 0);
  EXPECT_TENSOR_EQ(index_select(row, 0, idx), tensor({3.0, 3.0, 3.0}));
  // Bool.
  Tensor b = tensor(std::vector<bool>{true, false, true});
  EXPECT_TENSOR_EQ(index_select(b, 0, Ix({1, 0})), tensor(std::vector<bool>{false, true}));
  // Rank-0 input: one index, rank-0 result.
  Tensor s = scalar_tensor(2.5, kFloat64);
  Tensor r = index_select(s, 0, Ix({0}));
  EXPECT_EQ(r.dim(), 0);
  EXPECT_EQ(r.item<double>(), 2.5);
  EXPECT_EQ(index_select(s, -1, scalar_tensor(int64_t{0})).item<double>(), 2.5);
  // Size-0 input dims other than dim.
  EXPECT_EQ(index_select(zeros({0, 3}), 1, Ix({0, 1})).sizes(), (IntArrayRef{0, 2}));
  // Result is a new tensor.
  Tensor x = Seq({3});
  EXPECT_FALSE(index_select(x, 0, Ix({0, 1, 2})).storage().is_same(x.storage()));
}

TEST(IndexSelect, Errors) {
  Tensor x = Seq({3, 2});
  EXPECT_FT_ERROR(index_select(x, 0, Ix({5})),
                  "index_select: index 5 is out of bounds for dimension 0 with size 3");
  EXPECT_FT_ERROR(index_select(x, 1, Ix({0, -1})),
                  "index_select: index -1 is out of bounds for dimension 1 with size 2");
  EXPECT_FT_ERROR(index_select(x, 0, tensor({0.0f})),
                  "index_select: expected an int64 index tensor, got float32");
  EXPECT_FT_ERROR(index_select(x, 0, Ix({0, 1}, {1, 2})),
                  "index_select: index must be a rank-0 or 1-D tensor, got shape [1, 2]");
  EXPECT_FT_ERROR(index_select(x, 2, Ix({0})), "index_select: dim 2 is out of range");
  EXPECT_FT_ERROR(index_select(scalar_tensor(1.0), 0, Ix({0, 0})),
                  "index_select: selecting from a rank-0 tensor takes exactly one index, got 2");
  EXPECT_FT_ERROR(index_select(scalar_tensor(1.0), 0, Ix({1})),
                  "index 1 is out of bounds for dimension 0 with size 1");
  EXPECT_FT_ERROR(index_select(zeros({0}), 0, Ix({0})),
                  "index 0 is out of bounds for dimension 0 with size 0");
}

// ---- gather ----

TEST(Gather, Matrix) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  EXPECT_TENSOR_EQ(gather(x, 1, Ix({0, 0, 2, 1}, {2, 2})), tensor({1.0, 1.0, 6.0, 5.0}, {2, 2}));
  EXPECT_TENSOR_EQ(gather(x, 0, Ix({1, 0, 1}, {1, 3})), tensor({4.0, 2.0, 6.0}, {1, 3}));
  // The index may be larger than x along dim.
  EXPECT_TENSOR_EQ(gather(x, -2, Ix({1, 0, 1, 1}, {4, 1})), tensor({4.0, 1.0, 4.0, 4.0}, {4, 1}));
  // Size-0 index.
  EXPECT_EQ(gather(x, 1, Ix({}, {2, 0})).sizes(), (IntArrayRef{2, 0}));
  EXPECT_EQ(gather(zeros({2, 0}), 1, Ix({}, {2, 0})).sizes(), (IntArrayRef{2, 0}));
  // Bool and int64.
  Tensor b = tensor(std::vector<bool>{true, false}, {1, 2});
  EXPECT_TENSOR_EQ(gather(b, 1, Ix({1, 1, 0}, {1, 3})),
                   tensor(std::vector<bool>{false, false, true}, {1, 3}));
  EXPECT_TENSOR_EQ(gather(Ix({7, 8, 9}), 0, Ix({2, 0})), Ix({9, 7}));
}

TEST(Gather, Rank3AgainstLoopsAndLayouts) {
  for (DType dtype : {kFloat32, kFloat64}) {
    Tensor x = Seq({3, 4, 5}, dtype);
    for (int64_t dim = 0; dim < 3; ++dim) {
      Shape is = {2, 3, 4};
      is[dim] = 6;
      Tensor idx = Indices(is, x.size(dim), dim);
      Tensor expected = RefGather3(x, dim, idx);
      EXPECT_TENSOR_EQ(gather(x, dim, idx), expected);
      EXPECT_TENSOR_EQ(gather(SwapLayout(x), dim, idx), expected);
      EXPECT_TENSOR_EQ(gather(Strided(x), dim, SwapLayout(idx)), expected);
      EXPECT_TENSOR_EQ(gather(x, dim - 3, Strided(idx)), expected);
    }
  }
  // Expanded index (stride 0 along dim 0).
  Tensor x = Seq({3, 2});
  Tensor row = Ix({1, 0}, {1, 2});
  Tensor idx = MakeDense(row.storage(), kInt64, {3, 2}, {0, 1}, 0);
  EXPECT_TENSOR_EQ(gather(x, 0, idx), tensor({2.0, 1.0, 2.0, 1.0, 2.0, 1.0}, {3, 2}));
}

TEST(Gather, RankZero) {
  Tensor r = gather(scalar_tensor(4.0), 0, scalar_tensor(int64_t{0}));
  EXPECT_EQ(r.dim(), 0);
  EXPECT_EQ(r.item<double>(), 4.0);
  // Rank 0 counts as rank 1 (PyTorch): a rank-0 index into a 1-D input.
  EXPECT_TENSOR_EQ(gather(tensor({5.0, 6.0}), 0, scalar_tensor(int64_t{1})),
                   scalar_tensor(6.0, kFloat64));
}

TEST(Gather, Errors) {
  Tensor x = Seq({2, 3});
  EXPECT_FT_ERROR(gather(x, 1, Ix({3}, {1, 1})),
                  "gather: index 3 is out of bounds for dimension 1 with size 3");
  EXPECT_FT_ERROR(gather(x, 0, Ix({-2}, {1, 1})),
                  "gather: index -2 is out of bounds for dimension 0 with size 2");
  EXPECT_FT_ERROR(gather(x, 0, tensor({0.0}, {1, 1})),
                  "gather: expected an int64 index tensor, got float64");
  EXPECT_FT_ERROR(gather(x, 0, Ix({0})),
                  "gather: index must have the same number of dims as the input, got index "
                  "shape [1] and input shape [2, 3]");
  EXPECT_FT_ERROR(gather(x, 0, Ix({0, 0, 0, 0}, {1, 4})),
                  "gather: index shape [1, 4] exceeds input shape [2, 3] in dim 1 (4 > 3)");
  EXPECT_FT_ERROR(gather(x, 2, Ix({0}, {1, 1})), "gather: dim 2 is out of range");
}

// ---- scatter_add ----

TEST(ScatterAdd, MatrixAndAccumulation) {
  Tensor x = tensor({1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, {2, 3});
  Tensor src = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  Tensor r = scatter_add(x, 1, Ix({0, 0, 2, 1}, {2, 2}), src);
  EXPECT_TENSOR_EQ(r, tensor({4.0, 1.0, 1.0, 1.0, 6.0, 5.0}, {2, 3}));
  // Out of place: x unchanged, no aliasing.
  EXPECT_TENSOR_EQ(x, ones({2, 3}, kFloat64));
  EXPECT_FALSE(r.storage().is_same(x.storage()));
  // Repeated indices along dim 0 accumulate.
  EXPECT_TENSOR_EQ(scatter_add(zeros({2, 3}, kFloat64), 0, Ix({1, 1, 1, 1, 0, 1}, {2, 3}), src),
                   tensor({0.0, 5.0, 0.0, 5.0, 2.0, 9.0}, {2, 3}));
  // int64 and bool (or).
  EXPECT_TENSOR_EQ(scatter_add(Ix({10, 20}), 0, Ix({1, 1, 0}), Ix({1, 2, 3})), Ix({13, 23}));
  // int64 overflow wraps (two's complement), as in PyTorch, instead of being UB.
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_TENSOR_EQ(scatter_add(Ix({big}), 0, Ix({0}), Ix({1})),
                   Ix({std::numeric_limits<int64_t>::min()}));
  Tensor bf = tensor(std::vector<bool>{false, false, true});
  EXPECT_TENSOR_EQ(scatter_add(bf, 0, Ix({1, 1}), tensor(std::vector<bool>{true, true})),
                   tensor(std::vector<bool>{false, true, true}));
  // Empty index: a copy of x.
  Tensor e = scatter_add(x, 0, Ix({}, {0, 3}), src);
  EXPECT_TENSOR_EQ(e, x);
  EXPECT_FALSE(e.storage().is_same(x.storage()));
}

TEST(ScatterAdd, DeterministicRowMajorOrder) {
  // In float32, (((0 + 1e8) + 1) - 1e8) == 0 but ((0 + 1e8) - 1e8) + 1 == 1: the result
  // shows the values are added in the index's row-major order.
  Tensor src = tensor({1e8f, 1.0f, -1e8f});
  Tensor r = scatter_add(zeros({1}), 0, Ix({0, 0, 0}), src);
  EXPECT_EQ(r.item<float>(), 0.0f);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TENSOR_EQ(scatter_add(zeros({1}), 0, Ix({0, 0, 0}), src), r);
  }
}

TEST(ScatterAdd, Rank3AgainstLoopsAndLayouts) {
  for (DType dtype : {kFloat32, kFloat64}) {
    Tensor x = Seq({3, 4, 5}, dtype);
    Tensor src = kernels::to(tensor(std::vector<double>(6 * 6 * 6, 0.5), {6, 6, 6}), dtype);
    for (int64_t dim = 0; dim < 3; ++dim) {
      Shape is = {2, 3, 4};
      is[dim] = 6;
      Tensor idx = Indices(is, x.size(dim), dim + 1);
      Tensor s = kernels::to(Seq({6, 6, 6}), dtype);
      Tensor expected = RefScatterAdd3(x, dim, idx, s);
      EXPECT_TENSOR_EQ(scatter_add(x, dim, idx, s), expected);
      EXPECT_TENSOR_EQ(scatter_add(SwapLayout(x), dim, Strided(idx), SwapLayout(s)), expected);
      EXPECT_TENSOR_EQ(scatter_add(Strided(x), dim - 3, SwapLayout(idx), Strided(s)), expected);
      // Expanded src (stride 0 everywhere).
      Tensor one = kernels::to(tensor({0.5}), dtype);
      Tensor expanded = MakeDense(one.storage(), dtype, {6, 6, 6}, {0, 0, 0}, 0);
      EXPECT_TENSOR_EQ(scatter_add(x, dim, idx, expanded), RefScatterAdd3(x, dim, idx, src));
    }
  }
}

TEST(ScatterAdd, RankZero) {
  Tensor r = scatter_add(scalar_tensor(1.0), 0, scalar_tensor(int64_t{0}), scalar_tensor(2.0));
  EXPECT_EQ(r.dim(), 0);
  EXPECT_EQ(r.item<double>(), 3.0);
}

TEST(ScatterAdd, Errors) {
  Tensor x = zeros({2, 3}, kFloat64);
  Tensor src = ones({2, 3}, kFloat64);
  EXPECT_FT_ERROR(scatter_add(x, 1, Ix({3}, {1, 1}), src),
                  "scatter_add: index 3 is out of bounds for dimension 1 with size 3");
  EXPECT_FT_ERROR(scatter_add(x, 1, Ix({-1}, {1, 1}), src),
                  "scatter_add: index -1 is out of bounds for dimension 1 with size 3");
  EXPECT_FT_ERROR(scatter_add(x, 0, Ix({0}, {1, 1}), ones({2, 3})),
                  "scatter_add: src dtype float32 must match the input dtype float64");
  EXPECT_FT_ERROR(scatter_add(x, 0, tensor({0.0}, {1, 1}), src),
                  "scatter_add: expected an int64 index tensor, got float64");
  EXPECT_FT_ERROR(scatter_add(x, 0, Ix({0}), src),
                  "scatter_add: index must have the same number of dims as the input");
  EXPECT_FT_ERROR(scatter_add(x, 0, Ix({0}, {1, 1}), ones({3}, kFloat64)),
                  "scatter_add: src must have the same number of dims as the input");
  EXPECT_FT_ERROR(scatter_add(x, 0, Ix({0, 0, 0}, {3, 1}), ones({2, 1}, kFloat64)),
                  "scatter_add: index shape [3, 1] exceeds src shape [2, 1] in dim 0 (3 > 2)");
  EXPECT_FT_ERROR(scatter_add(x, 0, Ix({0, 0, 0, 0}, {1, 4}), ones({2, 4}, kFloat64)),
                  "scatter_add: index shape [1, 4] exceeds input shape [2, 3] in dim 1 (4 > 3)");
  EXPECT_FT_ERROR(scatter_add(x, -3, Ix({0}, {1, 1}), src), "scatter_add: dim -3 is out of range");
}

// ---- take_along_dim ----

TEST(TakeAlongDim, WithDimAndBroadcast) {
  Tensor x = tensor({10.0, 30.0, 20.0, 60.0, 40.0, 50.0}, {2, 3});
  // argsort-like indices along dim 1.
  Tensor idx = Ix({0, 2, 1, 1, 2, 0}, {2, 3});
  EXPECT_TENSOR_EQ(take_along_dim(x, idx, 1),
                   tensor({10.0, 20.0, 30.0, 40.0, 50.0, 60.0}, {2, 3}));
  EXPECT_TENSOR_EQ(take_along_dim(x, Ix({1, 0}, {1, 2}), -1),
                   tensor({30.0, 10.0, 40.0, 60.0}, {2, 2}));  // indices broadcast over dim 0
  // x broadcast over dim 0: [1, 3] with indices [4, 1].
  Tensor row = tensor({1.0, 2.0, 3.0}, {1, 3});
  EXPECT_TENSOR_EQ(take_along_dim(row, Ix({2, 0, 1, 2}, {4, 1}), 1),
                   tensor({3.0, 1.0, 2.0, 3.0}, {4, 1}));
  // Along dim 0, both broadcast: x [2, 1], indices [1, 3] -> [1, 3].
  EXPECT_TENSOR_EQ(take_along_dim(tensor({7.0, 8.0}, {2, 1}), Ix({1, 0, 1}, {1, 3}), 0),
                   tensor({8.0, 7.0, 8.0}, {1, 3}));
  // Non-contiguous operands against the same literal.
  EXPECT_TENSOR_EQ(take_along_dim(SwapLayout(x), Strided(idx), 1),
                   tensor({10.0, 20.0, 30.0, 40.0, 50.0, 60.0}, {2, 3}));
  // Rank 0 and size 0.
  Tensor r = take_along_dim(scalar_tensor(3.0), scalar_tensor(int64_t{0}), 0);
  EXPECT_EQ(r.dim(), 0);
  EXPECT_EQ(r.item<double>(), 3.0);
  EXPECT_EQ(take_along_dim(x, Ix({}, {2, 0}), 1).sizes(), (IntArrayRef{2, 0}));
  // An empty broadcast result reads no index, so none is checked.
  EXPECT_EQ(take_along_dim(zeros({0, 3}), Ix({9}, {1, 1}), 1).sizes(), (IntArrayRef{0, 1}));
}

TEST(TakeAlongDim, Rank3AgainstGatherLoops) {
  Tensor x = Seq({3, 4, 5});
  for (int64_t dim = 0; dim < 3; ++dim) {
    Shape is = {3, 4, 5};
    is[dim] = 2;
    Tensor idx = Indices(is, x.size(dim), dim);
    EXPECT_TENSOR_EQ(take_along_dim(SwapLayout(x), idx, dim), RefGather3(x, dim, idx));
  }
}

TEST(TakeAlongDim, Flattened) {
  Tensor x = tensor({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {2, 3});
  EXPECT_TENSOR_EQ(take_along_dim(x, Ix({5, 0, 3}, {3, 1})), tensor({6.0f, 1.0f, 4.0f}));
  // Flattening follows the logical (row-major) order, whatever the layout.
  EXPECT_TENSOR_EQ(take_along_dim(SwapLayout(x), Strided(Ix({1, 4}, {1, 2}))),
                   tensor({2.0f, 5.0f}));
  EXPECT_TENSOR_EQ(take_along_dim(scalar_tensor(int64_t{9}), scalar_tensor(int64_t{0})),
                   Ix({9}));
  EXPECT_EQ(take_along_dim(x, Ix({})).sizes(), (IntArrayRef{0}));
}

TEST(TakeAlongDim, Errors) {
  Tensor x = Seq({2, 3});
  EXPECT_FT_ERROR(take_along_dim(x, Ix({3}, {1, 1}), 1),
                  "take_along_dim: index 3 is out of bounds for dimension 1 with size 3");
  EXPECT_FT_ERROR(take_along_dim(x, Ix({6})),
                  "take_along_dim: index 6 is out of bounds for dimension 0 with size 6");
  EXPECT_FT_ERROR(take_along_dim(x, Ix({0}), 0),
                  "take_along_dim: input and indices must have the same number of dims, got "
                  "input shape [2, 3] and indices shape [1]");
  EXPECT_FT_ERROR(take_along_dim(x, Ix({0, 0, 0}, {3, 1}), 1),
                  "take_along_dim: shapes [2, 1] and [3, 1] cannot be broadcast");
  EXPECT_FT_ERROR(take_along_dim(x, tensor({0.0f}, {1, 1}), 1),
                  "take_along_dim: expected an int64 indices tensor, got float32");
  EXPECT_FT_ERROR(take_along_dim(x, Ix({0}, {1, 1}), 2), "take_along_dim: dim 2 is out of range");
}

// ---- cat / stack ----

TEST(Cat, DimsLayoutsAndPromotion) {
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  Tensor b = tensor({5.0, 6.0}, {1, 2});
  EXPECT_TENSOR_EQ(cat({a, b}), tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {3, 2}));
  Tensor c = tensor({7.0, 8.0, 9.0, 10.0, 11.0, 12.0}, {2, 3});
  EXPECT_TENSOR_EQ(cat({a, c}, 1),
                   tensor({1.0, 2.0, 7.0, 8.0, 9.0, 3.0, 4.0, 10.0, 11.0, 12.0}, {2, 5}));
  EXPECT_TENSOR_EQ(cat({SwapLayout(a), Strided(c)}, -1),
                   tensor({1.0, 2.0, 7.0, 8.0, 9.0, 3.0, 4.0, 10.0, 11.0, 12.0}, {2, 5}));
  // Expanded input.
  Tensor row = tensor({1.0, 2.0});
  Tensor expanded = MakeDense(row.storage(), kFloat64, {2, 2}, {0, 1}, 0);
  EXPECT_TENSOR_EQ(cat({expanded, b}, 0), tensor({1.0, 2.0, 1.0, 2.0, 5.0, 6.0}, {3, 2}));
  // Promotion over all inputs.
  Tensor i = Ix({1, 2});
  Tensor f = tensor({0.5f});
  Tensor t = tensor(std::vector<bool>{true});
  EXPECT_TENSOR_EQ(cat({i, f}), tensor({1.0f, 2.0f, 0.5f}));
  EXPECT_TENSOR_EQ(cat({t, i}), Ix({1, 1, 2}));
  EXPECT_TENSOR_EQ(cat({f, tensor({2.0})}), tensor({0.5, 2.0}));
  // Size-0 along dim, legacy-skipped [0] tensors (still promote), single input copies.
  EXPECT_TENSOR_EQ(cat({zeros({2, 0}, kFloat64), a}, 1), a);
  EXPECT_TENSOR_EQ(cat({zeros({0}, kFloat64), a, Ix({})}, 0), a);
  EXPECT_EQ(cat({zeros({0}), Ix({})}).sizes(), (IntArrayRef{0}));
  EXPECT_EQ(cat({zeros({0}), Ix({})}).dtype(), kFloat32);
  EXPECT_EQ(cat({zeros({0, 3}), zeros({0, 3})}).sizes(), (IntArrayRef{0, 3}));
  Tensor copy = cat({a});
  EXPECT_TENSOR_EQ(copy, a);
  EXPECT_FALSE(copy.storage().is_same(a.storage()));
  // Rank 3 along the middle dim against a loop.
  Tensor p = Seq({2, 1, 3});
  Tensor q = Seq({2, 2, 3});
  Tensor r = cat({p, q}, 1);
  EXPECT_EQ(r.sizes(), (IntArrayRef{2, 3, 3}));
  const std::vector<double> pv = p.to_vector<double>(), qv = q.to_vector<double>();
  const std::vector<double> rv = r.to_vector<double>();
  for (int64_t x0 = 0; x0 < 2; ++x0) {
    for (int64_t x1 = 0; x1 < 3; ++x1) {
      for (int64_t x2 = 0; x2 < 3; ++x2) {
        const double want = x1 == 0 ? pv[x0 * 3 + x2] : qv[(x0 * 2 + x1 - 1) * 3 + x2];
        EXPECT_EQ(rv[(x0 * 3 + x1) * 3 + x2], want);
      }
    }
  }
}

TEST(Cat, Errors) {
  EXPECT_FT_ERROR(cat({}), "cat: expected a non-empty list of tensors");
  EXPECT_FT_ERROR(cat({zeros({2}), scalar_tensor(1.0)}),
                  "cat: tensor 1 is rank 0 and cannot be concatenated");
  EXPECT_FT_ERROR(cat({zeros({3, 4}), zeros({1, 4}), zeros({2, 5})}),
                  "cat: shapes must match except in dim 0, but tensor 2 has shape [2, 5] and "
                  "tensor 0 has shape [3, 4]");
  EXPECT_FT_ERROR(cat({zeros({0}), zeros({3, 4}), zeros({3})}, 1),
                  "cat: shapes must match except in dim 1, but tensor 2 has shape [3] and tensor "
                  "1 has shape [3, 4]");
  EXPECT_FT_ERROR(cat({zeros({3, 4})}, 2), "cat: dim 2 is out of range");
}

TEST(Stack, DimsLayoutsPromotion) {
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  Tensor b = tensor({5.0, 6.0, 7.0, 8.0}, {2, 2});
  EXPECT_TENSOR_EQ(stack({a, b}), tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}, {2, 2, 2}));
  EXPECT_TENSOR_EQ(stack({a, b}, 1),
                   tensor({1.0, 2.0, 5.0, 6.0, 3.0, 4.0, 7.0, 8.0}, {2, 2, 2}));
  EXPECT_TENSOR_EQ(stack({a, b}, 2),
                   tensor({1.0, 5.0, 2.0, 6.0, 3.0, 7.0, 4.0, 8.0}, {2, 2, 2}));
  EXPECT_TENSOR_EQ(stack({a, b}, -1), stack({a, b}, 2));
  EXPECT_TENSOR_EQ(stack({a, b}, -3), stack({a, b}, 0));
  EXPECT_TENSOR_EQ(stack({SwapLayout(a), Strided(b)}, 1),
                   tensor({1.0, 2.0, 5.0, 6.0, 3.0, 4.0, 7.0, 8.0}, {2, 2, 2}));
  // Rank 0 inputs give a vector; promotion.
  EXPECT_TENSOR_EQ(stack({scalar_tensor(int64_t{1}), scalar_tensor(2.5f)}),
                   tensor({1.0f, 2.5f}));
  EXPECT_TENSOR_EQ(stack({scalar_tensor(int64_t{1})}, -1), Ix({1}));
  // Size 0.
  EXPECT_EQ(stack({zeros({0, 3}), zeros({0, 3})}, 1).sizes(), (IntArrayRef{0, 2, 3}));
}

TEST(Stack, Errors) {
  EXPECT_FT_ERROR(stack({}), "stack: expected a non-empty list of tensors");
  EXPECT_FT_ERROR(stack({zeros({2}), zeros({2}), zeros({3})}),
                  "stack: expected all tensors to have the same shape, but tensor 2 has shape [3] "
                  "and tensor 0 has shape [2]");
  EXPECT_FT_ERROR(stack({zeros({2, 2})}, 3),
                  "stack: dim 3 is out of range for stacking tensors of rank 2 (expected a dim in "
                  "[-3, 2])");
  EXPECT_FT_ERROR(stack({zeros({2, 2})}, -4), "stack: dim -4 is out of range");
}

// ---- split / split_with_sizes / chunk ----

void ExpectViewsOf(const TensorList& parts, const Tensor& x) {
  for (const Tensor& p : parts) {
    EXPECT_TRUE(p.storage().is_same(x.storage()));
    EXPECT_EQ(p.version(), x.version());
  }
}

TEST(Split, ViewsAndValues) {
  Tensor x = Seq({5, 2});
  TensorList parts = split(x, 2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_TENSOR_EQ(parts[0], tensor({0.0, 1.0, 2.0, 3.0}, {2, 2}));
  EXPECT_TENSOR_EQ(parts[1], tensor({4.0, 5.0, 6.0, 7.0}, {2, 2}));
  EXPECT_TENSOR_EQ(parts[2], tensor({8.0, 9.0}, {1, 2}));
  ExpectViewsOf(parts, x);
  // A write through the input is seen by the views (shared storage and version).
  x.data<double>()[8] = 42.0;
  x.bump_version();
  EXPECT_EQ(parts[2].to_vector<double>()[0], 42.0);
  EXPECT_EQ(parts[2].version(), x.version());
  // Along the last dim of a non-contiguous input.
  Tensor s = SwapLayout(Seq({2, 3}));
  TensorList cols = split(s, 2, -1);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_TENSOR_EQ(cols[0], tensor({0.0, 1.0, 3.0, 4.0}, {2, 2}));
  EXPECT_TENSOR_EQ(cols[1], tensor({2.0, 5.0}, {2, 1}));
  ExpectViewsOf(cols, s);
  // split_size larger than the dim: one piece; an empty dim: one empty piece.
  EXPECT_EQ(split(x, 7).size(), 1u);
  TensorList empty = split(zeros({0, 3}), 0);
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0].sizes(), (IntArrayRef{0, 3}));
  EXPECT_EQ(split(zeros({0, 3}), 2).size(), 1u);
  // Split of a sliced view keeps the view's offset.
  TensorList again = split(parts[1], 1, 1);
  EXPECT_TENSOR_EQ(again[1], tensor({5.0, 7.0}, {2, 1}));
  EXPECT_TRUE(again[1].storage().is_same(x.storage()));
}

TEST(Split, Errors) {
  EXPECT_FT_ERROR(split(scalar_tensor(1.0), 1),
                  "split: expected a tensor with at least one dim, got a rank-0 tensor");
  EXPECT_FT_ERROR(split(zeros({4}), -1), "split: split_size must be non-negative, got -1");
  EXPECT_FT_ERROR(split(zeros({4}), 0),
                  "split: split_size 0 is only allowed when the split dim is empty, but "
                  "dimension 0 has size 4");
  EXPECT_FT_ERROR(split(zeros({4}), 1, 1), "split: dim 1 is out of range");
}

TEST(SplitWithSizes, ViewsAndValues) {
  Tensor x = Seq({2, 5});
  TensorList parts = split_with_sizes(x, {2, 0, 3}, 1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_TENSOR_EQ(parts[0], tensor({0.0, 1.0, 5.0, 6.0}, {2, 2}));
  EXPECT_EQ(parts[1].sizes(), (IntArrayRef{2, 0}));
  EXPECT_TENSOR_EQ(parts[2], tensor({2.0, 3.0, 4.0, 7.0, 8.0, 9.0}, {2, 3}));
  ExpectViewsOf(parts, x);
  TensorList rows = split_with_sizes(Strided(x), {1, 1}, -2);
  EXPECT_TENSOR_EQ(rows[1], tensor({5.0, 6.0, 7.0, 8.0, 9.0}, {1, 5}));
  EXPECT_TRUE(split_with_sizes(zeros({0}), {}).empty());
}

TEST(SplitWithSizes, Errors) {
  Tensor x = zeros({3, 5});
  EXPECT_FT_ERROR(split_with_sizes(x, {2, 2}, 1),
                  "split_with_sizes: sizes [2, 2] sum to 4 but dimension 1 has size 5");
  EXPECT_FT_ERROR(split_with_sizes(x, {4, -1}, 0),
                  "split_with_sizes: sizes [4, -1] contain the negative size -1");
  EXPECT_FT_ERROR(split_with_sizes(scalar_tensor(1.0), {1}),
                  "split_with_sizes: expected a tensor with at least one dim");
  EXPECT_FT_ERROR(split_with_sizes(x, {3}, 2), "split_with_sizes: dim 2 is out of range");
}

TEST(Chunk, TorchRule) {
  Tensor x = Seq({5});
  TensorList c = chunk(x, 3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_TENSOR_EQ(c[0], tensor({0.0, 1.0}));
  EXPECT_TENSOR_EQ(c[1], tensor({2.0, 3.0}));
  EXPECT_TENSOR_EQ(c[2], tensor({4.0}));
  ExpectViewsOf(c, x);
  // ceil(6 / 4) = 2: only 3 chunks.
  TensorList d = chunk(Seq({2, 6}), 4, 1);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_TENSOR_EQ(d[2], tensor({4.0, 5.0, 10.0, 11.0}, {2, 2}));
  // More chunks than elements.
  EXPECT_EQ(chunk(x, 9).size(), 5u);
  // An empty dim gives `chunks` empty views.
  TensorList e = chunk(zeros({3, 0}), 4, -1);
  ASSERT_EQ(e.size(), 4u);
  for (const Tensor& t : e) EXPECT_EQ(t.sizes(), (IntArrayRef{3, 0}));
  // Non-contiguous input.
  TensorList n = chunk(SwapLayout(Seq({2, 2})), 2, 0);
  EXPECT_TENSOR_EQ(n[1], tensor({2.0, 3.0}, {1, 2}));
}

// Found by //tests/fuzz (corpus/transforms_fuzzer/regression-split-views-offset-overflow*):
// the pieces of a tensor without elements were placed at offset + start * stride, and a
// stride near INT64_MAX (ContiguousStrides saturates) overflowed that product, which UBSan
// reports. No element is addressed, so every piece is an empty view and nothing overflows.
TEST(Chunk, PiecesOfAnEmptyTensorWithHugeStrides) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const Tensor base = zeros({0});
  const Tensor odd = MakeDense(base.storage(), kFloat32, {0, 5, 3}, {max, max, max}, 0);
  ASSERT_EQ(odd.numel(), 0);
  struct Case {
    TensorList pieces;
    int64_t dim;
    std::vector<int64_t> sizes;  // along dim
  };
  const std::vector<Case> cases = {
      {chunk(odd, 3, 1), 1, {2, 2, 1}},
      {split(odd, 2, 1), 1, {2, 2, 1}},
      {split_with_sizes(odd, {1, 1, 3}, 1), 1, {1, 1, 3}},
      {chunk(odd, 2, 2), 2, {2, 1}},
      {split(odd, 1, 2), 2, {1, 1, 1}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(cases[i].pieces.size(), cases[i].sizes.size());
    for (size_t j = 0; j < cases[i].pieces.size(); ++j) {
      EXPECT_EQ(cases[i].pieces[j].numel(), 0);
      EXPECT_EQ(cases[i].pieces[j].sizes()[cases[i].dim], cases[i].sizes[j]);
    }
  }
}

TEST(Chunk, Errors) {
  EXPECT_FT_ERROR(chunk(zeros({4}), 0), "chunk: chunks must be positive, got 0");
  EXPECT_FT_ERROR(chunk(zeros({4}), -2), "chunk: chunks must be positive, got -2");
  EXPECT_FT_ERROR(chunk(scalar_tensor(1.0), 1), "chunk: expected a tensor with at least one dim");
  // Found by //tests/fuzz (corpus/ops_fuzzer/regression-chunk-empty-huge): an empty dim
  // gives `chunks` empty views, and a huge count tried to allocate that many (a fatal
  // allocation under ASan, std::bad_array_new_length for INT64_MAX).
  EXPECT_FT_ERROR(chunk(zeros({0}), int64_t{1} << 42),
                  "chunk: cannot split dimension 0 of shape [0] into 4398046511104 pieces (at "
                  "most 2147483647)");
  EXPECT_FT_ERROR(chunk(zeros({2, 0}), std::numeric_limits<int64_t>::max(), 1),
                  "chunk: cannot split dimension 1 of shape [2, 0]");
  // Found by //tests/fuzz (transforms_fuzzer, corpus regression-chunk-expanded-huge): a dim
  // of 2^62 elements exists as an expanded view, and chunking or splitting it into that many
  // pieces tried to allocate the list (std::bad_array_new_length, an abort).
  const Tensor long_dim = MakeDense(ones({1}).storage(), kFloat64, {int64_t{1} << 62}, {0}, 0);
  EXPECT_FT_ERROR(chunk(long_dim, int64_t{1} << 62),
                  "chunk: cannot split dimension 0 of shape [4611686018427387904] into "
                  "4611686018427387904 pieces (at most 2147483647)");
  EXPECT_FT_ERROR(split(long_dim, 1), "split: cannot split dimension 0 of shape");
  EXPECT_EQ(chunk(long_dim, 3).size(), 3u);
  EXPECT_FT_ERROR(chunk(zeros({4}), 2, -2), "chunk: dim -2 is out of range");
}

// ---- repeat ----

TEST(Repeat, ValuesAndShapes) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  EXPECT_TENSOR_EQ(repeat(x, {2, 1}),
                   tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {4, 3}));
  EXPECT_TENSOR_EQ(repeat(x, {1, 2}),
                   tensor({1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 4.0, 5.0, 6.0}, {2, 6}));
  // Against a loop: new leading dim and repeats in every dim, non-contiguous input.
  Tensor r = repeat(SwapLayout(x), {2, 3, 2});
  ASSERT_EQ(r.sizes(), (IntArrayRef{2, 6, 6}));
  const std::vector<double> rv = r.to_vector<double>();
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 6; ++j) {
      for (int64_t k = 0; k < 6; ++k) {
        EXPECT_EQ(rv[(i * 6 + j) * 6 + k], 1.0 + (j % 2) * 3 + (k % 3));
      }
    }
  }
  EXPECT_TENSOR_EQ(repeat(Strided(Ix({1, 2})), {2}), Ix({1, 2, 1, 2}));
  // Expanded input, bool, rank 0, zero repeats, empty repeats of a rank-0 tensor.
  Tensor one = tensor({7.0f});
  Tensor expanded = MakeDense(one.storage(), kFloat32, {2}, {0}, 0);
  EXPECT_TENSOR_EQ(repeat(expanded, {2}), tensor({7.0f, 7.0f, 7.0f, 7.0f}));
  EXPECT_TENSOR_EQ(repeat(tensor(std::vector<bool>{true, false}), {1, 2}),
                   tensor(std::vector<bool>{true, false, true, false}, {1, 4}));
  EXPECT_TENSOR_EQ(repeat(scalar_tensor(2.0), {3}), tensor({2.0f, 2.0f, 2.0f}));
  Tensor r0 = repeat(scalar_tensor(2.0), {});
  EXPECT_EQ(r0.dim(), 0);
  EXPECT_EQ(r0.item<double>(), 2.0);
  EXPECT_EQ(repeat(x, {0, 2}).sizes(), (IntArrayRef{0, 6}));
  EXPECT_EQ(repeat(zeros({0, 2}), {3, 1}).sizes(), (IntArrayRef{0, 2}));
  EXPECT_FALSE(repeat(x, {1, 1}).storage().is_same(x.storage()));
}

TEST(Repeat, Errors) {
  EXPECT_FT_ERROR(repeat(zeros({2, 3}), {2}),
                  "repeat: got 1 repeats [2] but need at least one per dim of the input (shape "
                  "[2, 3], rank 2)");
  EXPECT_FT_ERROR(repeat(zeros({2}), {2, -1}),
                  "repeat: repeats [2, -1] contain the negative value -1");
  EXPECT_FT_ERROR(repeat(zeros({2}), {int64_t{1} << 62}), "repeat: repeating dim 0 of size 2");
}

// ---- pad ----

TEST(Pad, ConstantPadding) {
  Tensor v = tensor({1.0, 2.0, 3.0});
  EXPECT_TENSOR_EQ(pad(v, {1, 2}), tensor({0.0, 1.0, 2.0, 3.0, 0.0, 0.0}));
  EXPECT_TENSOR_EQ(pad(v, {0, 1}, 9.5), tensor({1.0, 2.0, 3.0, 9.5}));
  Tensor m = tensor({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2});
  // Last dim (1, 0), first dim (0, 1).
  EXPECT_TENSOR_EQ(pad(m, {1, 0, 0, 1}, -1.0),
                   tensor({-1.0f, 1.0f, 2.0f, -1.0f, 3.0f, 4.0f, -1.0f, -1.0f, -1.0f}, {3, 3}));
  EXPECT_TENSOR_EQ(pad(SwapLayout(m), {1, 1}),
                   tensor({0.0f, 1.0f, 2.0f, 0.0f, 0.0f, 3.0f, 4.0f, 0.0f}, {2, 4}));
  EXPECT_TENSOR_EQ(pad(Strided(m), {0, 0, 1, 0}),
                   tensor({0.0f, 0.0f, 1.0f, 2.0f, 3.0f, 4.0f}, {3, 2}));
  // Negative pads crop; mixed crop and pad.
  Tensor s = Seq({2, 4});
  EXPECT_TENSOR_EQ(pad(s, {-1, -2}), tensor({1.0, 5.0}, {2, 1}));
  EXPECT_TENSOR_EQ(pad(s, {-3, 1, 0, -1}, 7), tensor({3.0, 7.0}, {1, 2}));
  EXPECT_TENSOR_EQ(pad(s, {-3, 1, -1, 0}, 7), tensor({7.0, 7.0}, {1, 2}));
  // Cropping away everything on one side but padding the other.
  EXPECT_TENSOR_EQ(pad(v, {-3, 2}, 4), tensor({4.0, 4.0}));
  EXPECT_TENSOR_EQ(pad(v, {-5, 3}, 4), tensor({4.0}));
  EXPECT_EQ(pad(v, {-2, -1}).sizes(), (IntArrayRef{0}));
  // Dtypes: int64 (value truncates toward zero), bool.
  EXPECT_TENSOR_EQ(pad(Ix({5}), {1, 1}, 2.7), Ix({2, 5, 2}));
  EXPECT_TENSOR_EQ(pad(tensor(std::vector<bool>{false}), {0, 1}, 3),
                   tensor(std::vector<bool>{false, true}));
  // Rank 0 with no pads, size-0 input, fewer pairs than dims, expanded input.
  Tensor r0 = pad(scalar_tensor(1.5), {});
  EXPECT_EQ(r0.dim(), 0);
  EXPECT_EQ(r0.item<double>(), 1.5);
  EXPECT_TENSOR_EQ(pad(zeros({2, 0}, kFloat64), {1, 0}, 3.0), tensor({3.0, 3.0}, {2, 1}));
  Tensor row = tensor({1.0, 2.0});
  Tensor expanded = MakeDense(row.storage(), kFloat64, {2, 2}, {0, 1}, 0);
  EXPECT_TENSOR_EQ(pad(expanded, {0, 0, 0, 1}), tensor({1.0, 2.0, 1.0, 2.0, 0.0, 0.0}, {3, 2}));
  Tensor copy = pad(v, {});
  EXPECT_TENSOR_EQ(copy, v);
  EXPECT_FALSE(copy.storage().is_same(v.storage()));
}

TEST(Pad, Errors) {
  Tensor m = zeros({2, 3});
  EXPECT_FT_ERROR(pad(m, {1, 2, 3}),
                  "pad: padding [1, 2, 3] must have an even length, got 3 values");
  EXPECT_FT_ERROR(pad(m, {0, 0, 0, 0, 1, 1}),
                  "pad: padding [0, 0, 0, 0, 1, 1] has 3 (left, right) pairs but the input has "
                  "only 2 dims (shape [2, 3])");
  EXPECT_FT_ERROR(pad(m, {-2, -2}),
                  "pad: padding (-2, -2) of dim 1 (size 3) gives the negative size -1");
  EXPECT_FT_ERROR(pad(scalar_tensor(1.0), {1, 1}), "pad: padding [1, 1] has 1 (left, right)");
}

// ---- to ----

TEST(To, SameObjectOrConvertedCopy) {
  Tensor x = tensor({1.5f, -2.7f, 0.0f});
  EXPECT_TRUE(ft::to(x, kFloat32).is_same(x));
  EXPECT_TENSOR_EQ(ft::to(x, kFloat64), tensor({1.5, static_cast<double>(-2.7f), 0.0}));
  EXPECT_TENSOR_EQ(ft::to(x, kInt64), Ix({1, -2, 0}));
  EXPECT_TENSOR_EQ(ft::to(x, kBool), tensor(std::vector<bool>{true, true, false}));
  EXPECT_TENSOR_EQ(ft::to(tensor(std::vector<bool>{true, false}), kFloat32),
                   tensor({1.0f, 0.0f}));
  Tensor s = SwapLayout(Seq({2, 3}, kInt64));
  Tensor c = ft::to(s, kFloat32);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_TENSOR_EQ(c, Seq({2, 3}, kFloat32));
  EXPECT_TRUE(ft::to(s, kInt64).is_same(s));  // same dtype: no copy even if non-contiguous
  Tensor r = ft::to(scalar_tensor(int64_t{3}), kFloat64);
  EXPECT_EQ(r.dim(), 0);
  EXPECT_EQ(r.item<double>(), 3.0);
  EXPECT_EQ(ft::to(zeros({0, 2}), kInt64).sizes(), (IntArrayRef{0, 2}));
}

// ---- one_hot ----

TEST(OneHot, ValuesAndShapes) {
  EXPECT_TENSOR_EQ(one_hot(Ix({2, 0, 1})), Ix({0, 0, 1, 1, 0, 0, 0, 1, 0}, {3, 3}));
  EXPECT_TENSOR_EQ(one_hot(Ix({1}), 4), Ix({0, 1, 0, 0}, {1, 4}));
  // 2-D non-contiguous input against a loop.
  Tensor idx = Ix({0, 3, 1, 2, 2, 0}, {2, 3});
  for (const Tensor& in : {idx, SwapLayout(idx), Strided(idx)}) {
    Tensor r = one_hot(in, 5);
    ASSERT_EQ(r.sizes(), (IntArrayRef{2, 3, 5}));
    const std::vector<int64_t> rv = r.to_vector<int64_t>();
    const std::vector<int64_t> iv = idx.to_vector<int64_t>();
    for (size_t p = 0; p < iv.size(); ++p) {
      for (int64_t c = 0; c < 5; ++c) EXPECT_EQ(rv[p * 5 + c], c == iv[p] ? 1 : 0);
    }
  }
  // Rank 0 input, empty input with explicit num_classes, num_classes 0 on empty input.
  EXPECT_TENSOR_EQ(one_hot(scalar_tensor(int64_t{1}), 3), Ix({0, 1, 0}));
  EXPECT_EQ(one_hot(Ix({}, {0, 2}), 3).sizes(), (IntArrayRef{0, 2, 3}));
  EXPECT_EQ(one_hot(Ix({}), 0).sizes(), (IntArrayRef{0, 0}));
}

TEST(OneHot, Errors) {
  EXPECT_FT_ERROR(one_hot(Ix({})), "one_hot: cannot infer num_classes from an empty tensor");
  EXPECT_FT_ERROR(one_hot(Ix({0, 3}), 3),
                  "one_hot: class value 3 is out of range [0, 3) for num_classes 3");
  EXPECT_FT_ERROR(one_hot(Ix({-1}), 3), "one_hot: class value -1 is out of range [0, 3)");
  EXPECT_FT_ERROR(one_hot(Ix({1, -2})), "one_hot: class values must be non-negative, got -2");
  EXPECT_FT_ERROR(one_hot(tensor({1.0f})),
                  "one_hot: expected an int64 indices tensor, got float32");
  EXPECT_FT_ERROR(one_hot(Ix({1}), -2),
                  "one_hot: num_classes must be -1 (infer) or non-negative, got -2");
}

// The ops that only move elements are written for every dtype (OpSchema::dtypes): on each
// of the twelve, the values land where the closed form says, read back through double.
TEST(IndexOps, EveryDTypeMovesElements) {
  using V = std::vector<double>;
  for (DType d : kAllDTypes) {
    SCOPED_TRACE(DTypeName(d));
    const double top = d == kBool ? 1 : 5;  // bool holds 0 and 1 only
    // x = [[0, 1, 2], [3, 4, 5]] (bool: [[0, 1, 1], [1, 1, 1]]).
    const Tensor x = ft::to(tensor({0.0, 1.0, 2.0, 3.0, 4.0, top}, {2, 3}), d);
    ASSERT_EQ(x.dtype(), d);
    const V xv = x.to_vector<double>();
    const Tensor idx = tensor(std::vector<int64_t>{2, 0});
    EXPECT_EQ(index_select(x, 1, idx).to_vector<double>(), (V{xv[2], xv[0], xv[5], xv[3]}));
    EXPECT_EQ(gather(x, 1, tensor(std::vector<int64_t>{1, 1, 0, 2}, {2, 2})).to_vector<double>(),
              (V{xv[1], xv[1], xv[3], xv[5]}));
    EXPECT_EQ(cat({x, x}, 0).to_vector<double>().size(), 12u);
    EXPECT_EQ(cat({x, x}, 1).to_vector<double>(),
              (V{xv[0], xv[1], xv[2], xv[0], xv[1], xv[2], xv[3], xv[4], xv[5], xv[3], xv[4],
                 xv[5]}));
    EXPECT_EQ(stack({x, x}, 2).dtype(), d);
    EXPECT_EQ(repeat(x, {1, 2}).to_vector<double>(), cat({x, x}, 1).to_vector<double>());
    EXPECT_EQ(pad(x, {1, 0}, 1).to_vector<double>(),
              (V{1, xv[0], xv[1], xv[2], 1, xv[3], xv[4], xv[5]}));
    const TensorList halves = split(x, 2, 1);
    EXPECT_EQ(halves[1].to_vector<double>(), (V{xv[2], xv[5]}));
    EXPECT_EQ(chunk(x, 2, 0)[1].to_vector<double>(), (V{xv[3], xv[4], xv[5]}));
    // Views and the copies beside them.
    EXPECT_EQ(contiguous(transpose(x, 0, 1)).to_vector<double>(),
              (V{xv[0], xv[3], xv[1], xv[4], xv[2], xv[5]}));
    EXPECT_EQ(flip(x, {1}).to_vector<double>(), (V{xv[2], xv[1], xv[0], xv[5], xv[4], xv[3]}));
    EXPECT_EQ(flip(transpose(x, 0, 1), {0, 1}).to_vector<double>(),
              (V{xv[5], xv[2], xv[4], xv[1], xv[3], xv[0]}));
    EXPECT_EQ(reshape(x, {3, 2}).to_vector<double>(), xv);
    EXPECT_EQ(select(x, 0, 1).to_vector<double>(), (V{xv[3], xv[4], xv[5]}));
    EXPECT_EQ(clone(slice(x, 1, 0, 3, 2)).to_vector<double>(), (V{xv[0], xv[2], xv[3], xv[5]}));
    EXPECT_EQ(expand(unsqueeze(select(x, 1, 0), 1), {2, 2}).to_vector<double>(),
              (V{xv[0], xv[0], xv[3], xv[3]}));
    EXPECT_EQ(select_scatter(x, zeros({3}, d), 0, 0).to_vector<double>(),
              (V{0, 0, 0, xv[3], xv[4], xv[5]}));
    EXPECT_EQ(ft::to(x, kFloat64).to_vector<double>(), xv);
  }
  // Complex elements move whole, both parts.
  const Tensor z = tensor(std::vector<std::complex<double>>{{1, -1}, {2, -2}, {3, -3}});
  EXPECT_EQ(flip(z, {0}).to_vector<std::complex<double>>(),
            (std::vector<std::complex<double>>{{3, -3}, {2, -2}, {1, -1}}));
  EXPECT_EQ(index_select(z, 0, tensor(std::vector<int64_t>{1})).item<std::complex<double>>(),
            std::complex<double>(2, -2));
  // An op that computes is not open to them yet, and says so.
  EXPECT_FT_ERROR(scatter_add(z, 0, tensor(std::vector<int64_t>{0}), z),
                  "scatter_add: argument 'self' is complex128");
}

}  // namespace
}  // namespace ft

// select_scatter, slice_scatter and diagonal_scatter (ops/view.h; split from
// view_test.cc for size). Every result is compared with an element-by-element oracle
// (Expected) that reads self's and src's values in row-major order and knows the region
// from hand-computed bounds: no view, no copy kernel and no scatter op is involved.
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "dispatch/dispatch.h"
#include "gtest/gtest.h"
#include "kernels/view.h"
#include "ops/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Iota is a contiguous tensor of `shape` holding start, start + 1, ... in row-major order.
Tensor Iota(IntArrayRef shape, DType dtype = kFloat64, double start = 0.0) {
  Doubles v(static_cast<size_t>(Numel(shape)));
  std::iota(v.begin(), v.end(), start);
  return kernels::to(tensor(v, shape), dtype);
}

Ints Vec(IntArrayRef s) { return Ints(s.begin(), s.end()); }
Doubles Values(const Tensor& x) { return x.to_vector<double>(); }

// Where maps a multi-index of self to the multi-index of src whose value the scatter op puts
// there, or nullopt where the result keeps self's value.
using Where = std::function<std::optional<Ints>(const Ints& index)>;

// Expected: the scatter op's result built element by element from `where`.
Tensor Expected(const Tensor& self, const Tensor& src, const Where& where) {
  const Doubles sv = Values(self), rv = Values(src);
  const Ints shape = Vec(self.sizes()), src_shape = Vec(src.sizes());
  Doubles out(sv.size());
  Ints index(shape.size());
  for (size_t flat = 0; flat < sv.size(); ++flat) {
    int64_t rest = static_cast<int64_t>(flat);
    for (size_t d = shape.size(); d-- > 0;) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    const std::optional<Ints> s = where(index);
    if (!s) {
      out[flat] = sv[flat];
      continue;
    }
    int64_t src_flat = 0;
    for (size_t d = 0; d < src_shape.size(); ++d) src_flat = src_flat * src_shape[d] + (*s)[d];
    out[flat] = rv[static_cast<size_t>(src_flat)];
  }
  return kernels::to(tensor(out, self.sizes()), self.dtype());
}

// Where of select(self, d, i) (d, i already non-negative): the src index drops dim d.
Where SelectWhere(int64_t d, int64_t i) {
  return [=](const Ints& index) -> std::optional<Ints> {
    if (index[d] != i) return std::nullopt;
    Ints s = index;
    s.erase(s.begin() + d);
    return s;
  };
}

// Where of a slice of dim d holding elements begin, begin + step, ... (length of them).
Where SliceWhere(int64_t d, int64_t begin, int64_t step, int64_t length) {
  return [=](const Ints& index) -> std::optional<Ints> {
    const int64_t off = index[d] - begin;
    if (off < 0 || off % step != 0 || off / step >= length) return std::nullopt;
    Ints s = index;
    s[d] = off / step;
    return s;
  };
}

// Where of a diagonal over (d1, d2) whose element k is at (row0 + k, col0 + k), k < length:
// the src index is the other dims in order, then k.
Where DiagonalWhere(int64_t d1, int64_t d2, int64_t row0, int64_t col0, int64_t length) {
  return [=](const Ints& index) -> std::optional<Ints> {
    const int64_t k = index[d1] - row0;
    if (k < 0 || k >= length || index[d2] - col0 != k) return std::nullopt;
    Ints s;
    for (size_t d = 0; d < index.size(); ++d) {
      if (static_cast<int64_t>(d) != d1 && static_cast<int64_t>(d) != d2) s.push_back(index[d]);
    }
    s.push_back(k);
    return s;
  };
}

// IsFreshResult: r is contiguous, of self's shape and dtype, on its own storage.
::testing::AssertionResult IsFreshResult(const Tensor& r, const Tensor& self) {
  if (r.storage().is_same(self.storage())) {
    return ::testing::AssertionFailure() << "shares self's storage: " << r.DebugString();
  }
  if (!r.is_contiguous() || Vec(r.sizes()) != Vec(self.sizes()) || r.dtype() != self.dtype()) {
    return ::testing::AssertionFailure() << "not a contiguous " << ShapeToString(self.sizes())
                                         << " " << DTypeName(self.dtype()) << ": "
                                         << r.DebugString();
  }
  return ::testing::AssertionSuccess();
}

using ScatterFn = std::function<Tensor(const Tensor&, const Tensor&)>;

// CheckScatter: `op(self, src)` equals Expected, is a fresh tensor, and leaves self (values
// and version) and src untouched.
::testing::AssertionResult CheckScatter(const ScatterFn& op, const Tensor& self, const Tensor& src,
                                        const Where& where) {
  const Doubles self_before = Values(self), src_before = Values(src);
  const int64_t version = self.version();
  const Tensor want = Expected(self, src, where);
  const Tensor got = op(self, src);
  if (auto r = IsFreshResult(got, self); !r) return r;
  if (auto r = ::ft::testing::TensorEqual(got, want); !r) return r;
  if (Values(self) != self_before || self.version() != version) {
    return ::testing::AssertionFailure() << "self was written";
  }
  if (Values(src) != src_before) return ::testing::AssertionFailure() << "src was written";
  return ::testing::AssertionSuccess();
}

// Src: distinct values (100, 101, ...) of the region's shape.
Tensor Src(IntArrayRef shape, DType dtype = kFloat64) { return Iota(shape, dtype, 100.0); }

// ---------------------------------------------------------------- select_scatter

TEST(ScatterOps, SelectScatter) {
  struct Case {
    int64_t dim, index, d, i;  // arguments, and their wrapped values
    Ints src_shape;
  };
  const std::vector<Case> cases = {{0, 1, 0, 1, {3, 4}},  {1, -1, 1, 2, {2, 4}},
                                   {-1, 0, 2, 0, {2, 3}}, {-2, 2, 1, 2, {2, 4}},
                                   {2, 3, 2, 3, {2, 3}},  {-3, -2, 0, 0, {3, 4}}};
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " " << c.dim << ", " << c.index);
      EXPECT_TRUE(CheckScatter(
          [&](const Tensor& s, const Tensor& v) { return select_scatter(s, v, c.dim, c.index); },
          Iota({2, 3, 4}, dtype), Src(c.src_shape, dtype), SelectWhere(c.d, c.i)));
    }
  }
  // Rank 1: src is rank 0.
  Tensor v = Iota({3});
  EXPECT_TENSOR_EQ(select_scatter(v, scalar_tensor(9.0, kFloat64), 0, -1),
                   tensor(Doubles{0, 1, 9}));
  // bool.
  Tensor b = kernels::to(zeros({2, 2}), kBool);
  EXPECT_TENSOR_EQ(select_scatter(b, tensor(std::vector<bool>{true, false}), 1, 0),
                   tensor(std::vector<bool>{true, false, false, false}, {2, 2}));
}

// ---------------------------------------------------------------- slice_scatter

TEST(ScatterOps, SliceScatter) {
  struct Case {
    Ints shape;
    int64_t dim;
    std::optional<int64_t> start, end;
    int64_t step;
    int64_t d, begin, length;  // wrapped dim, first element and element count, by hand
  };
  const std::optional<int64_t> none;
  const std::vector<Case> cases = {
      {{10}, 0, 2, 8, 3, 0, 2, 2},           {{10}, 0, none, none, 4, 0, 0, 3},
      {{10}, 0, -3, none, 1, 0, 7, 3},       {{10}, 0, none, -7, 1, 0, 0, 3},
      {{10}, 0, -100, 2, 1, 0, 0, 2},        {{10}, 0, 8, kMax, 1, 0, 8, 2},
      {{10}, 0, kMin, 1, 1, 0, 0, 1},        {{10}, 0, 3, kMax, kMax, 0, 3, 1},
      {{10}, 0, 6, 2, 1, 0, 6, 0},           {{10}, 0, 12, 20, 1, 0, 10, 0},
      {{10}, 0, kMax, none, 1, 0, 10, 0},    {{10}, -1, 9, 10, 5, 0, 9, 1},
      {{3, 6}, 1, 1, none, 2, 1, 1, 3},      {{3, 6}, -2, 1, none, 1, 0, 1, 2},
      {{3, 6}, -1, -4, -1, 2, 1, 2, 2},      {{3, 6}, 0, none, none, 1, 0, 0, 3},
      {{2, 3, 4}, 1, 0, 3, 2, 1, 0, 2},      {{2, 3, 4}, 2, -3, none, 1, 2, 1, 3},
  };
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " " << ShapeToString(c.shape)
                                        << " dim " << c.dim << " step " << c.step);
      Ints src_shape = c.shape;
      src_shape[c.d] = c.length;
      EXPECT_TRUE(CheckScatter(
          [&](const Tensor& s, const Tensor& v) {
            return slice_scatter(s, v, c.dim, c.start, c.end, c.step);
          },
          Iota(c.shape, dtype), Src(src_shape, dtype), SliceWhere(c.d, c.begin, c.step, c.length)));
    }
  }
  // The defaults: dim 0, the whole dim, step 1: src itself, copied.
  Tensor src = Src({2, 3});
  Tensor all = slice_scatter(Iota({2, 3}), src);
  EXPECT_TRUE(IsFreshResult(all, src));
  EXPECT_TENSOR_EQ(all, src);
  EXPECT_TENSOR_EQ(slice_scatter(Iota({4}), Src({3}), 0, 1), tensor(Doubles{0, 100, 101, 102}));
}

// ---------------------------------------------------------------- diagonal_scatter

TEST(ScatterOps, DiagonalScatter) {
  struct Case {
    Ints shape;
    int64_t offset, dim1, dim2;
    int64_t d1, d2, row0, col0, length;  // wrapped dims, the first element and the length
  };
  const std::vector<Case> cases = {
      {{3, 4}, 0, 0, 1, 0, 1, 0, 0, 3},     {{3, 4}, 1, 0, 1, 0, 1, 0, 1, 3},
      {{3, 4}, 2, 0, 1, 0, 1, 0, 2, 2},     {{3, 4}, -1, 0, 1, 0, 1, 1, 0, 2},
      {{3, 4}, -2, 0, 1, 0, 1, 2, 0, 1},    {{3, 4}, 4, 0, 1, 0, 1, 0, 4, 0},
      {{3, 4}, -3, 0, 1, 0, 1, 3, 0, 0},    {{3, 4}, kMax, 0, 1, 0, 1, 0, 0, 0},
      {{3, 4}, kMin, 0, 1, 0, 1, 0, 0, 0},  {{3, 4}, 1, 1, 0, 1, 0, 0, 1, 2},
      {{2, 3, 3}, 0, 1, 2, 1, 2, 0, 0, 3},  {{2, 3, 3}, 0, 0, 2, 0, 2, 0, 0, 2},
      {{2, 3, 3}, 1, -1, -2, 2, 1, 0, 1, 2}, {{2, 4, 3}, -1, 1, -1, 1, 2, 1, 0, 3},
  };
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " " << ShapeToString(c.shape)
                                        << " offset " << c.offset << " dims " << c.dim1 << ", "
                                        << c.dim2);
      Ints src_shape;
      for (size_t d = 0; d < c.shape.size(); ++d) {
        if (static_cast<int64_t>(d) != c.d1 && static_cast<int64_t>(d) != c.d2) {
          src_shape.push_back(c.shape[d]);
        }
      }
      src_shape.push_back(c.length);
      EXPECT_TRUE(CheckScatter(
          [&](const Tensor& s, const Tensor& v) {
            return diagonal_scatter(s, v, c.offset, c.dim1, c.dim2);
          },
          Iota(c.shape, dtype), Src(src_shape, dtype),
          DiagonalWhere(c.d1, c.d2, c.row0, c.col0, c.length)));
    }
  }
  // The defaults: the main diagonal of dims (0, 1).
  EXPECT_TENSOR_EQ(diagonal_scatter(zeros({2, 2}, kFloat64), tensor(Doubles{1, 2})),
                   tensor(Doubles{1, 0, 0, 2}, {2, 2}));
}

// ---------------------------------------------------------------- layouts and sizes

// Non-contiguous self and src (transposed, strided, broadcast, offset), and a src that
// aliases self: the result is a fresh contiguous tensor with the right values all the same.
TEST(ScatterOps, NonContiguousInputs) {
  // A transposed self (strides [1, 3]) and a strided src.
  Tensor tr = transpose(Iota({4, 3}), 0, 1);
  EXPECT_TRUE(CheckScatter([](const Tensor& s,
                              const Tensor& v) { return select_scatter(s, v, 1, 2); },
                           tr, testing::NonContiguousCopy(Src({3})), SelectWhere(1, 2)));
  EXPECT_TRUE(CheckScatter(
      [](const Tensor& s, const Tensor& v) { return slice_scatter(s, v, 1, 1, std::nullopt, 2); },
      tr, transpose(Src({2, 3}), 0, 1), SliceWhere(1, 1, 2, 2)));
  EXPECT_TRUE(CheckScatter(
      [](const Tensor& s, const Tensor& v) { return diagonal_scatter(s, v, -1); }, tr,
      testing::NonContiguousCopy(Src({2})), DiagonalWhere(0, 1, 1, 0, 2)));
  // A broadcast self (stride 0): every row but the written one stays row 0 of the base.
  Tensor ex = expand(Iota({1, 4}), {3, 4});
  EXPECT_TRUE(CheckScatter(
      [](const Tensor& s, const Tensor& v) { return select_scatter(s, v, 0, 1); }, ex,
      Src({4}), SelectWhere(0, 1)));
  EXPECT_TRUE(CheckScatter(
      [](const Tensor& s, const Tensor& v) { return diagonal_scatter(s, v, 1); }, ex, Src({3}),
      DiagonalWhere(0, 1, 0, 1, 3)));
  // A broadcast src, and a self with a storage offset.
  Tensor off = select(Iota({2, 3, 4}), 0, 1);
  EXPECT_TRUE(CheckScatter(
      [](const Tensor& s, const Tensor& v) { return slice_scatter(s, v, 0, 0, 2); }, off,
      expand(scalar_tensor(7.0, kFloat64), {2, 4}), SliceWhere(0, 0, 1, 2)));
  // src aliasing self: row 0 copied over row 2.
  Tensor x = Iota({3, 2});
  EXPECT_TENSOR_EQ(select_scatter(x, select(x, 0, 0), 0, 2),
                   tensor(Doubles{0, 1, 2, 3, 0, 1}, {3, 2}));
  EXPECT_EQ(Values(x), (Doubles{0, 1, 2, 3, 4, 5}));
}

TEST(ScatterOps, SizeZero) {
  EXPECT_TRUE(IsFreshResult(select_scatter(zeros({0, 3}), zeros({0}), 1, 2), zeros({0, 3})));
  EXPECT_TRUE(IsFreshResult(select_scatter(zeros({2, 0}), zeros({0}), 0, 1), zeros({2, 0})));
  EXPECT_TRUE(IsFreshResult(slice_scatter(zeros({2, 0}), zeros({1, 0}), 0, 1), zeros({2, 0})));
  EXPECT_TRUE(IsFreshResult(slice_scatter(zeros({0, 3}), zeros({0, 1}), 1, 1, 2), zeros({0, 3})));
  EXPECT_TRUE(IsFreshResult(diagonal_scatter(zeros({0, 3}), zeros({0})), zeros({0, 3})));
  EXPECT_TRUE(IsFreshResult(diagonal_scatter(zeros({2, 0, 3}), zeros({0, 2}), 0, 0, 2),
                            zeros({2, 0, 3})));
  // An empty region of a non-empty self: the result is a copy of self.
  Tensor x = Iota({2, 3});
  EXPECT_TENSOR_EQ(slice_scatter(x, zeros({2, 0}, kFloat64), 1, 5), x);
  EXPECT_TENSOR_EQ(diagonal_scatter(x, zeros({0}, kFloat64), 3), x);
}

// ---------------------------------------------------------------- errors

TEST(ScatterOps, TheViewsArgumentErrors) {
  Tensor x = Iota({3, 4});
  Tensor s = scalar_tensor(1.0, kFloat64);
  EXPECT_FT_ERROR(select_scatter(s, s, 0, 0), "select: cannot be applied to a 0-dim tensor");
  EXPECT_FT_ERROR(select_scatter(x, zeros({4}, kFloat64), 0, 5),
                  "select: index 5 out of range for tensor of size [3, 4] at dimension 0");
  EXPECT_FT_ERROR(select_scatter(x, zeros({3}, kFloat64), 1, -5),
                  "select: index -5 out of range for tensor of size [3, 4]");
  EXPECT_FT_ERROR(select_scatter(x, zeros({4}, kFloat64), 2, 0), "select: dim 2 is out of range");
  Tensor v = Iota({10});
  EXPECT_FT_ERROR(slice_scatter(v, zeros({5}, kFloat64), 0, 0, 5, 0),
                  "slice: step must be positive, got 0");
  EXPECT_FT_ERROR(slice_scatter(v, zeros({5}, kFloat64), 0, 0, 5, -1),
                  "slice: step must be positive, got -1");
  EXPECT_FT_ERROR(slice_scatter(s, s), "slice: cannot be applied to a 0-dim");
  EXPECT_FT_ERROR(slice_scatter(v, v, 1), "slice: dim 1 is out of range");
  EXPECT_FT_ERROR(diagonal_scatter(v, zeros({1}, kFloat64)),
                  "diagonal: expected a tensor with at least 2 dimensions, got shape [10]");
  EXPECT_FT_ERROR(diagonal_scatter(x, zeros({3}, kFloat64), 0, 1, -1),
                  "diagonal: dim1 and dim2 cannot be the same dimension");
  EXPECT_FT_ERROR(diagonal_scatter(x, zeros({3}, kFloat64), 0, 0, 2),
                  "diagonal: dim 2 is out of range");
}

TEST(ScatterOps, SrcErrors) {
  Tensor x = Iota({3, 4});
  EXPECT_FT_ERROR(select_scatter(x, zeros({3}, kFloat64), 0, 1),
                  "select_scatter: expected src to have a size equal to the slice of self. src "
                  "size = [3], slice size = [4]");
  // No broadcasting, not even of size-1 dims.
  EXPECT_FT_ERROR(select_scatter(x, zeros({1, 4}, kFloat64), 0, 1),
                  "select_scatter: expected src to have a size equal to the slice of self. src "
                  "size = [1, 4], slice size = [4]");
  EXPECT_FT_ERROR(select_scatter(x, scalar_tensor(1.0, kFloat64), 0, 1),
                  "src size = [], slice size = [4]");
  EXPECT_FT_ERROR(slice_scatter(Iota({10}), zeros({2}, kFloat64), 0, 0, 5, 2),
                  "slice_scatter: expected src to have a size equal to the slice of self. src "
                  "size = [2], slice size = [3]");
  EXPECT_FT_ERROR(slice_scatter(x, zeros({3, 4}, kFloat64), 1, 8),
                  "slice_scatter: expected src to have a size equal to the slice of self. src "
                  "size = [3, 4], slice size = [3, 0]");
  EXPECT_FT_ERROR(diagonal_scatter(x, zeros({2}, kFloat64)),
                  "diagonal_scatter: expected src to have a size equal to the slice of self. "
                  "src size = [2], slice size = [3]");
  EXPECT_FT_ERROR(diagonal_scatter(Iota({2, 3, 3}), zeros({3, 2}, kFloat64), 0, 1, 2),
                  "src size = [3, 2], slice size = [2, 3]");
  // dtypes.
  EXPECT_FT_ERROR(select_scatter(x, zeros({4}), 0, 1),
                  "select_scatter: expected src to have the same dtype as self, got src dtype "
                  "float32 and self dtype float64");
  EXPECT_FT_ERROR(slice_scatter(x, zeros({3, 4}, kInt64)),
                  "slice_scatter: expected src to have the same dtype as self, got src dtype "
                  "int64 and self dtype float64");
  EXPECT_FT_ERROR(diagonal_scatter(kernels::to(x, kInt64), zeros({3}, kBool)),
                  "diagonal_scatter: expected src to have the same dtype as self, got src "
                  "dtype bool and self dtype int64");
  // The order: the view's arguments, then src's shape, then its dtype.
  EXPECT_FT_ERROR(select_scatter(x, zeros({7}, kInt64), 0, 5), "select: index 5 out of range");
  EXPECT_FT_ERROR(select_scatter(x, zeros({7}, kInt64), 0, 1), "src size = [7], slice size = [4]");
}

// ---------------------------------------------------------------- docs and dispatch

// The examples of kernels/view.h and ops/view.h.
TEST(ScatterOps, HeaderExamples) {
  Tensor x = kernels::reshape(arange(6.0), {2, 3});
  Tensor s = kernels::select_scatter(x, zeros({3}), 0, 1);
  EXPECT_TENSOR_EQ(s, tensor(std::vector<float>{0, 1, 2, 0, 0, 0}, {2, 3}));
  EXPECT_TENSOR_EQ(x, tensor(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3}));
  Tensor m = reshape(arange(6.0), {2, -1});
  EXPECT_TENSOR_EQ(select_scatter(m, zeros({2}), 1, -1),
                   tensor(std::vector<float>{0, 1, 0, 3, 4, 0}, {2, 3}));
}

TEST(ScatterOps, RegisteredAndCallableBoxed) {
  RegisterAllOps();
  const Operator& sel = OpFor<&kernels::select_scatter>();
  EXPECT_EQ(sel.name(), "select_scatter");
  EXPECT_EQ(sel.schema().ToString(),
            "select_scatter(Tensor self, Tensor src, int dim, int index) -> Tensor  [every dtype]");
  EXPECT_EQ(OpFor<&kernels::diagonal_scatter>().name(), "diagonal_scatter");
  const Operator& sl = OpFor<&kernels::slice_scatter>();
  EXPECT_EQ(sl.name(), "slice_scatter");
  // The boxed path (what interpreters use), with start = None.
  ValueList args;
  args.emplace_back(Iota({10}));
  args.emplace_back(Src({3}));
  args.emplace_back(int64_t{0});
  args.emplace_back();
  args.emplace_back(int64_t{-2});
  args.emplace_back(int64_t{3});
  ValueList out = DispatchBoxed(sl, args);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TENSOR_EQ(out[0].tensor(), tensor(Doubles{100, 1, 2, 101, 4, 5, 102, 7, 8, 9}));
}

}  // namespace
}  // namespace ft

#include "ops/view.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

#include "dispatch/dispatch.h"
#include "gtest/gtest.h"
#include "kernels/unary.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

// Iota is a contiguous tensor of `shape` holding 0, 1, 2, ... in row-major order.
Tensor Iota(IntArrayRef shape, DType dtype = kFloat64) {
  Doubles v(static_cast<size_t>(Numel(shape)));
  std::iota(v.begin(), v.end(), 0.0);
  return kernels::to(tensor(v, shape), dtype);
}

// ColumnMajor is a [rows, cols] tensor holding row-major values 0..rows*cols-1 but stored
// column by column (strides [1, rows]): a non-contiguous input that is not a view of
// anything else.
Tensor ColumnMajor(int64_t rows, int64_t cols) {
  Doubles storage(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) storage[j * rows + i] = static_cast<double>(i * cols + j);
  }
  Tensor s = tensor(storage, {rows * cols});
  return MakeDense(s.storage(), kFloat64, {rows, cols}, {1, rows}, 0);
}

Ints Vec(IntArrayRef s) { return Ints(s.begin(), s.end()); }
Doubles Values(const Tensor& x) { return x.to_vector<double>(); }

// IsView: v is a different tensor object over base's storage with the given geometry.
::testing::AssertionResult IsView(const Tensor& v, const Tensor& base, const Ints& sizes,
                                  const Ints& strides, int64_t offset) {
  if (!v.storage().is_same(base.storage())) {
    return ::testing::AssertionFailure() << "does not share storage: " << v.DebugString();
  }
  if (v.is_same(base)) return ::testing::AssertionFailure() << "is the same object";
  if (Vec(v.sizes()) != sizes || Vec(v.strides()) != strides || v.storage_offset() != offset) {
    return ::testing::AssertionFailure()
           << "geometry " << v.DebugString() << ", expected sizes " << ShapeToString(sizes)
           << " strides " << ShapeToString(strides) << " offset " << offset;
  }
  return ::testing::AssertionSuccess();
}

// IsCopy: r owns new contiguous storage (not x's).
::testing::AssertionResult IsCopy(const Tensor& r, const Tensor& x, const Ints& sizes) {
  if (r.storage().is_same(x.storage())) {
    return ::testing::AssertionFailure() << "shares storage: " << r.DebugString();
  }
  if (!r.is_contiguous() || Vec(r.sizes()) != sizes) {
    return ::testing::AssertionFailure() << "not contiguous " << ShapeToString(sizes) << ": "
                                         << r.DebugString();
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------- reshape / view

TEST(ViewOps, ReshapeContiguousIsAView) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    Tensor x = Iota({2, 3}, dtype);
    const int64_t version = x.version();
    Tensor r = reshape(x, {3, 2});
    EXPECT_TRUE(IsView(r, x, {3, 2}, {2, 1}, 0));
    EXPECT_EQ(Values(r), (Doubles{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(r.dtype(), dtype);
    EXPECT_TRUE(IsView(reshape(x, {-1}), x, {6}, {1}, 0));
    EXPECT_TRUE(IsView(reshape(x, {1, -1, 2}), x, {1, 3, 2}, {6, 2, 1}, 0));
    EXPECT_TRUE(IsView(reshape(x, {2, 3}), x, {2, 3}, {3, 1}, 0));
    EXPECT_EQ(x.version(), version);  // views never bump the version
  }
  Tensor b = tensor(std::vector<bool>{true, false, false, true});
  EXPECT_TENSOR_EQ(reshape(b, {2, 2}), tensor(std::vector<bool>{true, false, false, true}, {2, 2}));
}

TEST(ViewOps, ReshapeNonContiguousViewWhenStridesAllow) {
  // Every other column of a [4, 6] matrix: sizes [4, 3], strides [6, 2]. Not contiguous,
  // but its elements are one uniform stride-2 run, so any reshape is a view.
  Tensor base = Iota({4, 6});
  Tensor x = slice(base, 1, std::nullopt, std::nullopt, 2);
  ASSERT_TRUE(IsView(x, base, {4, 3}, {6, 2}, 0));
  Tensor r = reshape(x, {12});
  EXPECT_TRUE(IsView(r, base, {12}, {2}, 0));
  EXPECT_EQ(Values(r), (Doubles{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}));
  EXPECT_TRUE(IsView(reshape(x, {3, 4}), base, {3, 4}, {8, 2}, 0));

  // The first 3 columns of a [4, 6] matrix: sizes [4, 3], strides [6, 1]: two chunks.
  Tensor y = narrow(base, 1, 0, 3);
  // Splitting dim 0 and adding size-1 dims only needs strides.
  Tensor ry = reshape(y, {2, 2, 1, 3});
  EXPECT_TRUE(IsView(ry, base, {2, 2, 1, 3}, {12, 6, 3, 1}, 0));
  const Doubles y_values = {0, 1, 2, 6, 7, 8, 12, 13, 14, 18, 19, 20};
  EXPECT_EQ(Values(ry), y_values);
  // Merging the two dims is not expressible: a copy.
  Tensor c = reshape(y, {12});
  EXPECT_TRUE(IsCopy(c, base, {12}));
  EXPECT_EQ(Values(c), y_values);
  Tensor c34 = reshape(y, {3, 4});
  EXPECT_TRUE(IsCopy(c34, base, {3, 4}));
  EXPECT_EQ(Values(c34), y_values);
  // The same with an offset (columns 2..4): views keep it, the copy starts at 0.
  Tensor yo = narrow(base, 1, 2, 3);
  EXPECT_TRUE(IsView(reshape(yo, {2, 2, 3}), base, {2, 2, 3}, {12, 6, 1}, 2));
  EXPECT_EQ(Values(reshape(yo, {12})), (Doubles{2, 3, 4, 8, 9, 10, 14, 15, 16, 20, 21, 22}));

  // A transposed matrix: splitting/keeping dims is a view, flattening copies.
  Tensor tr = ColumnMajor(3, 2);  // values [[0,1],[2,3],[4,5]], strides [1, 3]
  EXPECT_TRUE(IsView(reshape(tr, {3, 2, 1}), tr, {3, 2, 1}, {1, 3, 3}, 0));
  EXPECT_TRUE(IsView(reshape(tr, {3, 1, 2}), tr, {3, 1, 2}, {1, 6, 3}, 0));
  Tensor flat = reshape(tr, {6});
  EXPECT_TRUE(IsCopy(flat, tr, {6}));
  EXPECT_EQ(Values(flat), (Doubles{0, 1, 2, 3, 4, 5}));

  // Size-1 dims with arbitrary strides do not break a contiguous run.
  Tensor odd = MakeDense(Iota({6}).storage(), kFloat64, {2, 1, 3}, {3, 100, 1}, 0);
  EXPECT_TRUE(IsView(reshape(odd, {6}), odd, {6}, {1}, 0));

  // Offset input (row 1 of a [3, 4] matrix) keeps its offset.
  Tensor m = Iota({3, 4});
  Tensor row = select(m, 0, 1);
  Tensor rr = reshape(row, {2, 2});
  EXPECT_TRUE(IsView(rr, m, {2, 2}, {2, 1}, 4));
  EXPECT_EQ(Values(rr), (Doubles{4, 5, 6, 7}));
  // A column (stride 4, offset 2) reshaped to [3, 1].
  EXPECT_TRUE(IsView(reshape(select(m, 1, 2), {3, 1}), m, {3, 1}, {4, 4}, 2));
}

TEST(ViewOps, ReshapeExpandedInput) {
  Tensor row = Iota({1, 3});
  Tensor e = expand(row, {4, 3});  // strides [0, 1]
  Tensor v = reshape(e, {2, 2, 3});
  EXPECT_TRUE(IsView(v, row, {2, 2, 3}, {0, 0, 1}, 0));
  Tensor c = reshape(e, {12});
  EXPECT_TRUE(IsCopy(c, row, {12}));
  EXPECT_EQ(Values(c), (Doubles{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}));
  // A broadcast scalar reshaped keeps stride 0 everywhere.
  Tensor s = expand(scalar_tensor(2.5, kFloat64), {2, 3});
  Tensor sv = reshape(s, {3, 2});
  EXPECT_TRUE(IsView(sv, s, {3, 2}, {0, 0}, 0));
  EXPECT_EQ(Values(sv), Doubles(6, 2.5));
}

TEST(ViewOps, ReshapeRankZeroAndSizeZero) {
  Tensor s = scalar_tensor(7.0, kFloat64);
  EXPECT_TRUE(IsView(reshape(s, {1}), s, {1}, {1}, 0));
  EXPECT_TRUE(IsView(reshape(s, {}), s, {}, {}, 0));
  EXPECT_TRUE(IsView(reshape(s, {-1}), s, {1}, {1}, 0));
  EXPECT_TRUE(IsView(reshape(s, {1, 1, 1}), s, {1, 1, 1}, {1, 1, 1}, 0));
  Tensor one = Iota({1, 1});
  Tensor r0 = reshape(one, {});
  EXPECT_TRUE(IsView(r0, one, {}, {}, 0));
  EXPECT_EQ(r0.item<double>(), 0.0);

  Tensor z = zeros({0, 3}, kFloat64);
  EXPECT_TRUE(IsView(reshape(z, {3, 0}), z, {3, 0}, {1, 1}, 0));
  EXPECT_TRUE(IsView(reshape(z, {-1}), z, {0}, {1}, 0));
  EXPECT_TRUE(IsView(reshape(z, {0, 3}), z, {0, 3}, {3, 1}, 0));
  EXPECT_TRUE(IsView(reshape(z, {2, 0, 5}), z, {2, 0, 5}, {5, 5, 1}, 0));
  // -1 next to a size-0 dim is ambiguous (any size fits), as in PyTorch.
  EXPECT_FT_ERROR(reshape(z, {-1, 0}), "reshape: shape [-1, 0] is invalid for input of size 0");
  EXPECT_FT_ERROR(reshape(z, {0, -1}), "reshape: shape [0, -1] is invalid for input of size 0");
  EXPECT_FT_ERROR(reshape(z, {0, -1, 5}), "reshape: shape [0, -1, 5] is invalid");
}

TEST(ViewOps, ReshapeErrors) {
  Tensor x = Iota({2, 3});
  EXPECT_FT_ERROR(reshape(x, {4, -1}), "reshape: shape [4, -1] is invalid for input of size 6");
  EXPECT_FT_ERROR(reshape(x, {4}), "reshape: shape [4] is invalid for input of size 6");
  EXPECT_FT_ERROR(reshape(x, {-1, -1}),
                  "reshape: only one dimension can be inferred, got shape [-1, -1]");
  EXPECT_FT_ERROR(reshape(x, {-2, -3}), "reshape: invalid shape dimension -2 in shape [-2, -3]");
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  EXPECT_FT_ERROR(reshape(x, {big, big, 0}), "reshape: shape");
  EXPECT_FT_ERROR(reshape(x, {big, big, 0}), "too many elements");
  EXPECT_FT_ERROR(reshape(scalar_tensor(1.0), {2}),
                  "reshape: shape [2] is invalid for input of size 1");
}

TEST(ViewOps, ViewNeverCopies) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_TRUE(IsView(view(x, {6, 4}), x, {6, 4}, {4, 1}, 0));
  EXPECT_TRUE(IsView(view(x, {-1}), x, {24}, {1}, 0));
  Tensor p = permute(x, {1, 0, 2});  // [3, 2, 4] strides [4, 12, 1]
  EXPECT_TRUE(IsView(view(p, {3, 2, 2, 2}), x, {3, 2, 2, 2}, {4, 12, 2, 1}, 0));
  EXPECT_FT_ERROR(view(p, {6, 4}),
                  "view: size is not compatible with input tensor's size and stride (at least "
                  "one dimension spans across two contiguous subspaces). Use reshape(...) "
                  "instead.");
  EXPECT_FT_ERROR(view(ColumnMajor(2, 3), {6}), "view: size is not compatible");
  EXPECT_FT_ERROR(view(expand(Iota({1, 3}), {2, 3}), {6}), "view: size is not compatible");
  EXPECT_FT_ERROR(view(x, {5, -1}), "view: shape [5, -1] is invalid for input of size 24");
  EXPECT_FT_ERROR(view(x, {-1, -1}), "view: only one dimension can be inferred");
  Tensor s = scalar_tensor(3.0, kFloat64);
  EXPECT_TRUE(IsView(view(s, {1, 1}), s, {1, 1}, {1, 1}, 0));
  Tensor z = zeros({2, 0});
  EXPECT_TRUE(IsView(view(z, {0, 5}), z, {0, 5}, {5, 1}, 0));
}

TEST(ViewOps, WritesThroughReshapeAreVisible) {
  Tensor x = Iota({2, 3});
  Tensor r = reshape(x, {3, 2});
  const int64_t version = x.version();
  kernels::exp_(r);
  EXPECT_EQ(x.version(), version + 1);  // one storage, one counter
  EXPECT_TENSOR_NEAR(x, tensor({std::exp(0.0), std::exp(1.0), std::exp(2.0), std::exp(3.0),
                                std::exp(4.0), std::exp(5.0)},
                               {2, 3}),
                     1e-12);
  // And the other way round: writing the base changes the view.
  x.data<double>()[5] = -1.0;
  EXPECT_EQ(r.to_vector<double>()[5], -1.0);
  // A reshape that had to copy does not alias.
  Tensor tr = ColumnMajor(2, 3);
  Tensor c = reshape(tr, {6});
  c.data<double>()[0] = 42.0;
  EXPECT_EQ(tr.to_vector<double>()[0], 0.0);
}

// ---------------------------------------------------------------- flatten / unflatten

TEST(ViewOps, Flatten) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_TRUE(IsView(flatten(x), x, {24}, {1}, 0));
  EXPECT_TRUE(IsView(flatten(x, 1), x, {2, 12}, {12, 1}, 0));
  EXPECT_TRUE(IsView(flatten(x, 0, 1), x, {6, 4}, {4, 1}, 0));
  EXPECT_TRUE(IsView(flatten(x, -2, -1), x, {2, 12}, {12, 1}, 0));
  EXPECT_TRUE(IsView(flatten(x, 1, 1), x, {2, 3, 4}, {12, 4, 1}, 0));  // new object, same shape
  Tensor s = scalar_tensor(5.0, kFloat64);
  Tensor fs = flatten(s);
  EXPECT_TRUE(IsView(fs, s, {1}, {1}, 0));
  EXPECT_EQ(fs.item<double>(), 5.0);
  // Non-contiguous: merging transposed dims copies, in row-major order of the view.
  Tensor tr = ColumnMajor(2, 3);
  Tensor f = flatten(tr);
  EXPECT_TRUE(IsCopy(f, tr, {6}));
  EXPECT_EQ(Values(f), (Doubles{0, 1, 2, 3, 4, 5}));
  // Merging only the contiguous part of a sliced tensor stays a view.
  Tensor sl = slice(x, 0, 1, std::nullopt, 1);  // [1, 3, 4], offset 12
  EXPECT_TRUE(IsView(flatten(sl, 1), x, {1, 12}, {12, 1}, 12));
  Tensor z = zeros({2, 0, 3});
  EXPECT_TRUE(IsView(flatten(z), z, {0}, {1}, 0));
  EXPECT_TRUE(IsView(flatten(z, 1), z, {2, 0}, {1, 1}, 0));
  EXPECT_FT_ERROR(flatten(x, 2, 1), "flatten: start_dim 2 cannot come after end_dim 1");
  EXPECT_FT_ERROR(flatten(x, 3), "flatten: dim 3 is out of range");
  EXPECT_FT_ERROR(flatten(x, 0, -4), "flatten: dim -4 is out of range");
}

TEST(ViewOps, Unflatten) {
  Tensor x = Iota({2, 6});
  Tensor u = unflatten(x, 1, {2, 3});
  EXPECT_TRUE(IsView(u, x, {2, 2, 3}, {6, 3, 1}, 0));
  EXPECT_EQ(Values(u), Values(x));
  EXPECT_TRUE(IsView(unflatten(x, -1, {-1, 3}), x, {2, 2, 3}, {6, 3, 1}, 0));
  EXPECT_TRUE(IsView(unflatten(x, 0, {1, 2, 1}), x, {1, 2, 1, 6}, {12, 6, 6, 1}, 0));
  // Non-contiguous: every other row of an [8, 3] matrix, split in two.
  Tensor base = Iota({8, 3});
  Tensor rows = slice(base, 0, 0, std::nullopt, 2);  // [4, 3], strides [6, 1]
  Tensor ur = unflatten(rows, 0, {2, 2});
  EXPECT_TRUE(IsView(ur, base, {2, 2, 3}, {12, 6, 1}, 0));
  EXPECT_EQ(Values(ur), Values(rows));
  Tensor z = zeros({3, 0});
  EXPECT_EQ(Vec(unflatten(z, 1, {0, 4}).sizes()), (Ints{3, 0, 4}));
  EXPECT_FT_ERROR(unflatten(x, 1, {4, 2}),
                  "unflatten: provided sizes [4, 2] don't multiply up to the size of dim 1 (6)");
  EXPECT_FT_ERROR(unflatten(x, 1, {}), "unflatten: sizes must be non-empty");
  EXPECT_FT_ERROR(unflatten(x, 1, {-1, -1}), "unflatten: only one dimension can be inferred");
  EXPECT_FT_ERROR(unflatten(scalar_tensor(1.0), 0, {1}), "unflatten: cannot be applied to a 0-dim");
  EXPECT_FT_ERROR(unflatten(x, 2, {1}), "unflatten: dim 2 is out of range");
}

// ---------------------------------------------------------------- expand

TEST(ViewOps, Expand) {
  Tensor col = Iota({3, 1});
  Tensor e = expand(col, {3, 4});
  EXPECT_TRUE(IsView(e, col, {3, 4}, {1, 0}, 0));
  EXPECT_EQ(Values(e), (Doubles{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_TRUE(IsView(expand(col, {2, -1, 4}), col, {2, 3, 4}, {0, 1, 0}, 0));
  EXPECT_TRUE(IsView(expand(col, {3, 1}), col, {3, 1}, {1, 1}, 0));
  EXPECT_TRUE(IsView(expand(col, {3, 0}), col, {3, 0}, {1, 0}, 0));  // 1 -> 0 is allowed
  Tensor s = scalar_tensor(int64_t{4});
  Tensor es = expand(s, {2, 2});
  EXPECT_TRUE(IsView(es, s, {2, 2}, {0, 0}, 0));
  EXPECT_TENSOR_EQ(es, full({2, 2}, int64_t{4}));
  EXPECT_TRUE(IsView(expand(s, {}), s, {}, {}, 0));
  // Offset, non-contiguous input: column 1 of a [2, 3] matrix viewed as [2, 1].
  Tensor m = Iota({2, 3});
  Tensor c1 = narrow(m, 1, 1, 1);  // [2, 1] strides [3, 1] offset 1
  Tensor ec = expand(c1, {2, 2, 3});
  EXPECT_TRUE(IsView(ec, m, {2, 2, 3}, {0, 3, 0}, 1));
  EXPECT_EQ(Values(ec), (Doubles{1, 1, 1, 4, 4, 4, 1, 1, 1, 4, 4, 4}));
  // Expanding an already expanded tensor.
  EXPECT_TRUE(IsView(expand(e, {5, 3, 4}), col, {5, 3, 4}, {0, 1, 0}, 0));
  // expand_as.
  EXPECT_TRUE(IsView(expand_as(col, zeros({2, 3, 5})), col, {2, 3, 5}, {0, 1, 0}, 0));
  // Writes to the base show through every broadcast copy.
  kernels::exp_(col);
  EXPECT_NEAR(e.to_vector<double>()[7], std::exp(1.0), 1e-12);
  // ... but the expanded view itself is not writable in place.
  EXPECT_FT_ERROR(kernels::exp_(e), "cannot write in place into a tensor whose elements overlap");
}

TEST(ViewOps, ExpandErrors) {
  Tensor x = Iota({2, 3});
  EXPECT_FT_ERROR(expand(x, {2, 4}),
                  "expand: the expanded size of the tensor (4) must match the existing size (3) "
                  "at non-singleton dimension 1. Target sizes: [2, 4]. Tensor sizes: [2, 3]");
  EXPECT_FT_ERROR(expand(x, {3}),
                  "expand: the number of sizes provided (1) must be greater or equal to the "
                  "number of dimensions in the tensor (2)");
  EXPECT_FT_ERROR(expand(x, {-1, 2, 3}), "expand: the expanded size -1 is not allowed in a "
                                         "leading, non-existing dimension 0");
  EXPECT_FT_ERROR(expand(Iota({1}), {-2}), "expand: invalid size -2 at dimension 0");
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  EXPECT_FT_ERROR(expand(Iota({1}), {big, big, 4}), "expand: shape");
}

// ---------------------------------------------------------------- (un)squeeze

TEST(ViewOps, Unsqueeze) {
  Tensor x = Iota({2, 3});
  EXPECT_TRUE(IsView(unsqueeze(x, 0), x, {1, 2, 3}, {6, 3, 1}, 0));
  EXPECT_TRUE(IsView(unsqueeze(x, 1), x, {2, 1, 3}, {3, 3, 1}, 0));
  EXPECT_TRUE(IsView(unsqueeze(x, 2), x, {2, 3, 1}, {3, 1, 1}, 0));
  EXPECT_TRUE(IsView(unsqueeze(x, -1), x, {2, 3, 1}, {3, 1, 1}, 0));
  EXPECT_TRUE(IsView(unsqueeze(x, -3), x, {1, 2, 3}, {6, 3, 1}, 0));
  EXPECT_TRUE(unsqueeze(x, 1).is_contiguous());
  Tensor s = scalar_tensor(1.5, kFloat64);
  EXPECT_TRUE(IsView(unsqueeze(s, 0), s, {1}, {1}, 0));
  EXPECT_TRUE(IsView(unsqueeze(s, -1), s, {1}, {1}, 0));
  // Transposed, offset input.
  Tensor tr = ColumnMajor(2, 3);
  EXPECT_TRUE(IsView(unsqueeze(tr, 1), tr, {2, 1, 3}, {1, 6, 2}, 0));
  Tensor row = select(Iota({3, 4}), 0, 2);
  EXPECT_EQ(unsqueeze(row, 0).storage_offset(), 8);
  EXPECT_EQ(Values(unsqueeze(row, 1)), (Doubles{8, 9, 10, 11}));
  EXPECT_EQ(Vec(unsqueeze(zeros({0}), 0).sizes()), (Ints{1, 0}));
  EXPECT_FT_ERROR(unsqueeze(x, 3), "unsqueeze: dim 3 is out of range");
  EXPECT_FT_ERROR(unsqueeze(x, -4), "unsqueeze: dim -4 is out of range");
  EXPECT_FT_ERROR(unsqueeze(s, 1), "unsqueeze: dim 1 is out of range");
}

TEST(ViewOps, Squeeze) {
  Tensor base = Iota({2, 3});
  Tensor x = MakeDense(base.storage(), kFloat64, {1, 2, 1, 3}, {6, 3, 3, 1}, 0);
  EXPECT_TRUE(IsView(squeeze(x), base, {2, 3}, {3, 1}, 0));
  EXPECT_TRUE(IsView(squeeze_dim(x, 0), base, {2, 1, 3}, {3, 3, 1}, 0));
  EXPECT_TRUE(IsView(squeeze_dim(x, -2), base, {1, 2, 3}, {6, 3, 1}, 0));
  EXPECT_TRUE(IsView(squeeze_dim(x, 1), base, {1, 2, 1, 3}, {6, 3, 3, 1}, 0));  // not size 1
  EXPECT_TRUE(IsView(squeeze_dims(x, {0, 2}), base, {2, 3}, {3, 1}, 0));
  EXPECT_TRUE(IsView(squeeze_dims(x, {-4, 1}), base, {2, 1, 3}, {3, 3, 1}, 0));
  EXPECT_TRUE(IsView(squeeze_dims(x, {}), base, {1, 2, 1, 3}, {6, 3, 3, 1}, 0));
  EXPECT_EQ(Values(squeeze(x)), (Doubles{0, 1, 2, 3, 4, 5}));
  // Size-0 dims are not squeezed; offsets survive.
  EXPECT_EQ(Vec(squeeze(zeros({1, 0, 1})).sizes()), (Ints{0}));
  Tensor m = Iota({3, 4});
  Tensor one = narrow(m, 0, 2, 1);  // [1, 4] offset 8
  EXPECT_TRUE(IsView(squeeze(one), m, {4}, {1}, 8));
  // Rank 0.
  Tensor s = scalar_tensor(2.0, kFloat64);
  EXPECT_TRUE(IsView(squeeze(s), s, {}, {}, 0));
  EXPECT_TRUE(IsView(squeeze_dim(s, 0), s, {}, {}, 0));
  EXPECT_TRUE(IsView(squeeze_dim(s, -1), s, {}, {}, 0));
  Tensor ones11 = Iota({1, 1});
  EXPECT_TRUE(IsView(squeeze(ones11), ones11, {}, {}, 0));
  EXPECT_FT_ERROR(squeeze_dim(x, 4), "squeeze: dim 4 is out of range");
  EXPECT_FT_ERROR(squeeze_dims(x, {0, -4}), "squeeze: dim 0 appears more than once");
  EXPECT_FT_ERROR(squeeze_dims(x, {5}), "squeeze: dim 5 is out of range");
}

// ---------------------------------------------------------------- dim reordering

TEST(ViewOps, PermuteTransposeAndT) {
  Tensor x = Iota({2, 3, 4});
  Tensor p = permute(x, {2, 0, 1});
  EXPECT_TRUE(IsView(p, x, {4, 2, 3}, {1, 12, 4}, 0));
  Doubles expected;
  for (int64_t k = 0; k < 4; ++k) {
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 3; ++j) expected.push_back(static_cast<double>(i * 12 + j * 4 + k));
    }
  }
  EXPECT_EQ(Values(p), expected);
  EXPECT_TRUE(IsView(permute(x, {-1, -3, -2}), x, {4, 2, 3}, {1, 12, 4}, 0));
  Tensor s0 = scalar_tensor(1.0);
  EXPECT_TRUE(IsView(permute(s0, {}), s0, {}, {}, 0));
  EXPECT_FT_ERROR(permute(x, {0, 1}), "permute: number of dims don't match");
  EXPECT_FT_ERROR(permute(x, {0, 1, 1}), "permute: dim 1 appears more than once");
  EXPECT_FT_ERROR(permute(x, {0, 1, 3}), "permute: dim 3 is out of range");
  EXPECT_FT_ERROR(permute(scalar_tensor(1.0), {0}), "permute: number of dims don't match");

  EXPECT_TRUE(IsView(transpose(x, 0, 2), x, {4, 3, 2}, {1, 4, 12}, 0));
  EXPECT_TRUE(IsView(transpose(x, -1, 1), x, {2, 4, 3}, {12, 1, 4}, 0));
  EXPECT_TRUE(IsView(transpose(x, 1, 1), x, {2, 3, 4}, {12, 4, 1}, 0));
  Tensor s = scalar_tensor(1.0);
  EXPECT_TRUE(IsView(transpose(s, 0, -1), s, {}, {}, 0));
  EXPECT_FT_ERROR(transpose(x, 0, 3), "transpose: dim 3 is out of range");

  Tensor m = Iota({2, 3});
  Tensor mt = t(m);
  EXPECT_TRUE(IsView(mt, m, {3, 2}, {1, 3}, 0));
  EXPECT_EQ(Values(mt), (Doubles{0, 3, 1, 4, 2, 5}));
  // t of a transposed (column-major) matrix is contiguous again.
  EXPECT_TRUE(t(ColumnMajor(2, 3)).is_contiguous());
  Tensor v = Iota({3});
  EXPECT_TRUE(IsView(t(v), v, {3}, {1}, 0));
  EXPECT_TRUE(IsView(t(s), s, {}, {}, 0));
  EXPECT_FT_ERROR(t(x), "t: expects a tensor with <= 2 dimensions, but self is 3D");
}

TEST(ViewOps, Movedim) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_TRUE(IsView(movedim(x, 0, 2), x, {3, 4, 2}, {4, 1, 12}, 0));
  EXPECT_TRUE(IsView(movedim(x, -1, 0), x, {4, 2, 3}, {1, 12, 4}, 0));
  EXPECT_TRUE(IsView(movedim(x, 1, 1), x, {2, 3, 4}, {12, 4, 1}, 0));
  // torch.movedim(x, (0, 2), (1, 0)).shape == (4, 2, 3).
  EXPECT_TRUE(IsView(movedim(x, {0, 2}, {1, 0}), x, {4, 2, 3}, {1, 12, 4}, 0));
  EXPECT_TRUE(IsView(movedim(x, {0, 1}, {-1, -2}), x, {4, 3, 2}, {1, 4, 12}, 0));
  EXPECT_TRUE(IsView(movedim(x, Ints{}, Ints{}), x, {2, 3, 4}, {12, 4, 1}, 0));
  Tensor s = scalar_tensor(1.0);
  EXPECT_TRUE(IsView(movedim(s, 0, -1), s, {}, {}, 0));
  // Values: moving dim 0 of [2, 3] to the end transposes.
  EXPECT_EQ(Values(movedim(Iota({2, 3}), 0, 1)), (Doubles{0, 3, 1, 4, 2, 5}));
  EXPECT_FT_ERROR(movedim(x, {0, 1}, {0}), "movedim: invalid source or destination dims");
  EXPECT_FT_ERROR(movedim(x, {0, 0}, {1, 2}), "movedim: dim 0 appears more than once");
  EXPECT_FT_ERROR(movedim(x, {0, 1}, {2, -1}), "movedim: dim 2 appears more than once");
  EXPECT_FT_ERROR(movedim(x, 3, 0), "movedim: dim 3 is out of range");
}

// ---------------------------------------------------------------- indexing views

TEST(ViewOps, Select) {
  Tensor x = Iota({3, 4});
  Tensor r = select(x, 0, 1);
  EXPECT_TRUE(IsView(r, x, {4}, {1}, 4));
  EXPECT_EQ(Values(r), (Doubles{4, 5, 6, 7}));
  Tensor c = select(x, 1, -1);
  EXPECT_TRUE(IsView(c, x, {3}, {4}, 3));
  EXPECT_EQ(Values(c), (Doubles{3, 7, 11}));
  // Select of a select gives rank 0.
  Tensor e = select(r, 0, 2);
  EXPECT_TRUE(IsView(e, x, {}, {}, 6));
  EXPECT_EQ(e.item<double>(), 6.0);
  // Transposed and expanded inputs.
  Tensor tr = ColumnMajor(3, 2);  // [[0,1],[2,3],[4,5]] strides [1, 3]
  EXPECT_TRUE(IsView(select(tr, 0, 2), tr, {2}, {3}, 2));
  EXPECT_EQ(Values(select(tr, 0, 2)), (Doubles{4, 5}));
  Tensor ex = expand(Iota({1, 3}), {5, 3});
  EXPECT_TRUE(IsView(select(ex, 0, 4), ex, {3}, {1}, 0));
  EXPECT_EQ(Values(select(ex, 0, 4)), (Doubles{0, 1, 2}));
  EXPECT_EQ(Vec(select(zeros({2, 0}), 0, 1).sizes()), (Ints{0}));
  EXPECT_FT_ERROR(select(x, 0, 5), "select: index 5 out of range for tensor of size [3, 4] at "
                                   "dimension 0");
  EXPECT_FT_ERROR(select(x, 1, -5), "select: index -5 out of range for tensor of size [3, 4]");
  EXPECT_FT_ERROR(select(zeros({0, 2}), 0, 0), "select: index 0 out of range");
  EXPECT_FT_ERROR(select(scalar_tensor(1.0), 0, 0), "select: cannot be applied to a 0-dim");
  EXPECT_FT_ERROR(select(x, 2, 0), "select: dim 2 is out of range");
}

TEST(ViewOps, Narrow) {
  Tensor x = Iota({4, 5});
  Tensor n = narrow(x, 1, 1, 3);
  EXPECT_TRUE(IsView(n, x, {4, 3}, {5, 1}, 1));
  EXPECT_EQ(Values(narrow(x, 0, 2, 2)), (Doubles{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  EXPECT_TRUE(IsView(narrow(x, -1, -2, 2), x, {4, 2}, {5, 1}, 3));
  EXPECT_TRUE(IsView(narrow(x, 0, 4, 0), x, {0, 5}, {5, 1}, 20));
  EXPECT_TRUE(IsView(narrow(x, 0, 1, 0), x, {0, 5}, {5, 1}, 5));
  // Narrowing a transposed view.
  Tensor tr = ColumnMajor(3, 2);
  EXPECT_TRUE(IsView(narrow(tr, 0, 1, 2), tr, {2, 2}, {1, 3}, 1));
  EXPECT_EQ(Values(narrow(tr, 0, 1, 2)), (Doubles{2, 3, 4, 5}));
  EXPECT_FT_ERROR(narrow(x, 1, 3, 3), "narrow: start (3) + length (3) exceeds dimension size (5)");
  EXPECT_FT_ERROR(narrow(x, 1, 0, -1), "narrow: start (0) + length (-1)");
  EXPECT_FT_ERROR(narrow(x, 1, 6, 0), "narrow: start 6 is out of range for dimension 1 of size 5");
  EXPECT_FT_ERROR(narrow(x, 1, -6, 1), "narrow: start -6 is out of range");
  EXPECT_FT_ERROR(narrow(scalar_tensor(1.0), 0, 0, 1), "narrow: cannot be applied to a 0-dim");
}

TEST(ViewOps, Slice) {
  Tensor x = Iota({10});
  EXPECT_TRUE(IsView(slice(x, 0, 2, 8, 3), x, {2}, {3}, 2));
  EXPECT_EQ(Values(slice(x, 0, 2, 8, 3)), (Doubles{2, 5}));
  EXPECT_EQ(Values(slice(x, 0, std::nullopt, std::nullopt, 4)), (Doubles{0, 4, 8}));
  EXPECT_EQ(Values(slice(x, 0, -3, std::nullopt)), (Doubles{7, 8, 9}));
  EXPECT_EQ(Values(slice(x, 0, std::nullopt, -7)), (Doubles{0, 1, 2}));
  EXPECT_EQ(Values(slice(x, 0, -100, 2)), (Doubles{0, 1}));
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(Values(slice(x, 0, 8, max)), (Doubles{8, 9}));
  EXPECT_EQ(Values(slice(x, 0, min, 1)), (Doubles{0}));
  EXPECT_EQ(Values(slice(x, 0, 3, max, max)), (Doubles{3}));
  EXPECT_EQ(slice(x, 0, 6, 2).numel(), 0);        // start past end: empty
  EXPECT_EQ(slice(x, 0, 12, 20).numel(), 0);      // clamped to [10, 10)
  EXPECT_EQ(slice(x, 0, max, std::nullopt).numel(), 0);
  EXPECT_TRUE(IsView(slice(x, 0, 9, 10, 5), x, {1}, {1}, 9));  // a length-1 slice
  // 2-D: every other column, then rows 1.. of that.
  Tensor m = Iota({3, 4});
  Tensor cols = slice(m, 1, 1, std::nullopt, 2);
  EXPECT_TRUE(IsView(cols, m, {3, 2}, {4, 2}, 1));
  EXPECT_EQ(Values(cols), (Doubles{1, 3, 5, 7, 9, 11}));
  Tensor sub = slice(cols, -2, 1, std::nullopt, 1);
  EXPECT_TRUE(IsView(sub, m, {2, 2}, {4, 2}, 5));
  EXPECT_EQ(Values(sub), (Doubles{5, 7, 9, 11}));
  // Expanded input keeps stride 0.
  Tensor ex = expand(Iota({1, 3}), {6, 3});
  EXPECT_TRUE(IsView(slice(ex, 0, 1, 5, 2), ex, {2, 3}, {0, 1}, 0));
  // Size-0 dim.
  EXPECT_EQ(Vec(slice(zeros({0, 2}), 0, 1, 3).sizes()), (Ints{0, 2}));
  EXPECT_FT_ERROR(slice(x, 0, 0, 5, 0), "slice: step must be positive, got 0");
  EXPECT_FT_ERROR(slice(x, 0, 0, 5, -1), "slice: step must be positive, got -1");
  EXPECT_FT_ERROR(slice(scalar_tensor(1.0), 0, 0, 1), "slice: cannot be applied to a 0-dim");
  EXPECT_FT_ERROR(slice(x, 1, 0, 1), "slice: dim 1 is out of range");
}

TEST(ViewOps, Diagonal) {
  Tensor x = Iota({3, 4});
  Tensor d = diagonal(x);
  EXPECT_TRUE(IsView(d, x, {3}, {5}, 0));
  EXPECT_EQ(Values(d), (Doubles{0, 5, 10}));
  EXPECT_TRUE(IsView(diagonal(x, 1), x, {3}, {5}, 1));
  EXPECT_EQ(Values(diagonal(x, 1)), (Doubles{1, 6, 11}));
  EXPECT_EQ(Values(diagonal(x, 2)), (Doubles{2, 7}));
  EXPECT_TRUE(IsView(diagonal(x, -1), x, {2}, {5}, 4));
  EXPECT_EQ(Values(diagonal(x, -1)), (Doubles{4, 9}));
  EXPECT_EQ(Values(diagonal(x, -2)), (Doubles{8}));
  EXPECT_TRUE(IsView(diagonal(x, 4), x, {0}, {5}, 0));
  EXPECT_TRUE(IsView(diagonal(x, -3), x, {0}, {5}, 0));
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(diagonal(x, max).numel(), 0);
  EXPECT_EQ(diagonal(x, std::numeric_limits<int64_t>::min()).numel(), 0);
  // Swapped dims: the diagonal of the transpose.
  EXPECT_EQ(Values(diagonal(x, 1, 1, 0)), (Doubles{4, 9}));
  // Batched: [2, 3, 3], diagonal over the last two dims goes last.
  Tensor b = Iota({2, 3, 3});
  Tensor bd = diagonal(b, 0, 1, 2);
  EXPECT_TRUE(IsView(bd, b, {2, 3}, {9, 4}, 0));
  EXPECT_EQ(Values(bd), (Doubles{0, 4, 8, 9, 13, 17}));
  Tensor bd2 = diagonal(b, 0, 0, 2);  // remaining dim 1 first, then the diagonal
  EXPECT_TRUE(IsView(bd2, b, {3, 2}, {3, 10}, 0));
  EXPECT_EQ(Values(bd2), (Doubles{0, 10, 3, 13, 6, 16}));
  EXPECT_TRUE(IsView(diagonal(b, 1, -1, -2), b, {2, 2}, {9, 4}, 3));
  // Transposed input.
  Tensor tr = ColumnMajor(3, 3);  // values 0..8 row-major, strides [1, 3]
  EXPECT_EQ(Values(diagonal(tr)), (Doubles{0, 4, 8}));
  EXPECT_EQ(Values(diagonal(tr, 1)), (Doubles{1, 5}));
  EXPECT_EQ(Vec(diagonal(zeros({0, 3})).sizes()), (Ints{0}));
  EXPECT_FT_ERROR(diagonal(Iota({3})), "diagonal: expected a tensor with at least 2 dimensions");
  EXPECT_FT_ERROR(diagonal(x, 0, 1, -1), "diagonal: dim1 and dim2 cannot be the same dimension");
  EXPECT_FT_ERROR(diagonal(x, 0, 0, 2), "diagonal: dim 2 is out of range");
}

// A tensor without elements may carry strides near INT64_MAX (ContiguousStrides saturates;
// ops_fuzzer reached [0, 0, 0, 0] -> unflatten -> diagonal, whose stride sum overflowed).
// No element is ever addressed, so every view of it is an empty tensor and none of the
// geometry arithmetic may overflow (a signed overflow: CI's UBSan run reports it).
TEST(ViewOps, ViewsOfAnEmptyTensorWithHugeStridesStayEmpty) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t huge = int64_t{1} << 42;
  const Tensor base = zeros({0});
  const Tensor odd = MakeDense(base.storage(), kFloat32, {0, huge, 3, 2}, {max, max, max, 1}, 0);
  ASSERT_EQ(odd.numel(), 0);
  const std::vector<std::function<Tensor()>> views = {
      [&] { return diagonal(odd, 0, 1, 2); },
      [&] { return diagonal(odd, 1, 0, 1); },
      [&] { return diagonal(odd, -1, 1, 2); },
      [&] { return unflatten(odd, 1, {huge, 1}); },
      [&] { return unflatten(odd, 3, {2, 1}); },
      [&] { return unsqueeze(odd, 1); },
      [&] { return select(odd, 2, 2); },
      [&] { return narrow(odd, 1, huge - 1, 1); },
      [&] { return slice(odd, 1, 1, huge, huge / 2); },
      [&] { return slice(odd, 2, 0, 3, 2); },
      [&] { return diagonal(unflatten(odd, 1, {huge / 2, 2}), 0, 1, 2); },
  };
  for (size_t i = 0; i < views.size(); ++i) {
    SCOPED_TRACE(i);
    const Tensor v = views[i]();
    EXPECT_EQ(v.numel(), 0);
    EXPECT_EQ(contiguous(v).numel(), 0);
  }
}

// Writing through each kind of view changes exactly the base elements it covers.
TEST(ViewOps, WritesThroughEveryViewAreVisibleInTheBase) {
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> make;
    Ints covered;  // flat indices of the [3, 4] base the view covers
  };
  const std::vector<Case> cases = {
      {"reshape", [](const Tensor& b) { return reshape(b, {2, 6}); },
       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
      {"view", [](const Tensor& b) { return view(b, {12}); }, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
      {"flatten", [](const Tensor& b) { return flatten(b); }, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
      {"unflatten", [](const Tensor& b) { return unflatten(b, 1, {2, 2}); },
       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
      {"unsqueeze", [](const Tensor& b) { return unsqueeze(b, 1); },
       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
      {"squeeze", [](const Tensor& b) { return squeeze(narrow(b, 0, 1, 1)); }, {4, 5, 6, 7}},
      {"squeeze_dim", [](const Tensor& b) { return squeeze_dim(narrow(b, 1, 3, 1), 1); },
       {3, 7, 11}},
      {"squeeze_dims", [](const Tensor& b) { return squeeze_dims(narrow(b, 1, 0, 1), {1}); },
       {0, 4, 8}},
      {"transpose", [](const Tensor& b) { return transpose(b, 0, 1); },
       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
      {"t", [](const Tensor& b) { return t(narrow(b, 0, 0, 2)); }, {0, 1, 2, 3, 4, 5, 6, 7}},
      {"permute", [](const Tensor& b) { return permute(b, {1, 0}); },
       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
      {"movedim", [](const Tensor& b) { return movedim(b, 0, 1); },
       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
      {"select", [](const Tensor& b) { return select(b, 1, 2); }, {2, 6, 10}},
      {"narrow", [](const Tensor& b) { return narrow(b, 0, 1, 2); }, {4, 5, 6, 7, 8, 9, 10, 11}},
      {"slice", [](const Tensor& b) { return slice(b, 1, 1, std::nullopt, 2); },
       {1, 3, 5, 7, 9, 11}},
      {"diagonal", [](const Tensor& b) { return diagonal(b, 1); }, {1, 6, 11}},
      {"expand(no-op)", [](const Tensor& b) { return expand(b, {-1, 4}); },
       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor base = Iota({3, 4});
    const int64_t version = base.version();
    Tensor v = c.make(base);
    EXPECT_TRUE(v.storage().is_same(base.storage()));
    EXPECT_EQ(base.version(), version);
    kernels::exp_(v);
    EXPECT_EQ(base.version(), version + 1);
    Doubles expected(12);
    for (int64_t i = 0; i < 12; ++i) expected[i] = static_cast<double>(i);
    for (int64_t i : c.covered) expected[i] = std::exp(static_cast<double>(i));
    EXPECT_TENSOR_NEAR(base, tensor(expected, {3, 4}), 1e-12);
  }
}

// ---------------------------------------------------------------- copies

TEST(ViewOps, ContiguousAndClone) {
  Tensor x = Iota({2, 3});
  EXPECT_TRUE(contiguous(x).is_same(x));
  Tensor tr = ColumnMajor(2, 3);
  Tensor c = contiguous(tr);
  EXPECT_TRUE(IsCopy(c, tr, {2, 3}));
  EXPECT_EQ(Vec(c.strides()), (Ints{3, 1}));
  EXPECT_EQ(Values(c), (Doubles{0, 1, 2, 3, 4, 5}));
  Tensor ex = expand(Iota({3}, kInt64), {2, 3});
  Tensor ce = contiguous(ex);
  EXPECT_TRUE(IsCopy(ce, ex, {2, 3}));
  EXPECT_TENSOR_EQ(ce, tensor(std::vector<int64_t>{0, 1, 2, 0, 1, 2}, {2, 3}));
  Tensor s = scalar_tensor(1.0);
  EXPECT_TRUE(contiguous(s).is_same(s));

  for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    Tensor y = Iota({2, 3}, dtype);
    Tensor cl = clone(y);
    EXPECT_TRUE(IsCopy(cl, y, {2, 3}));
    EXPECT_TENSOR_EQ(cl, y);
  }
  Tensor ct = clone(tr);
  EXPECT_TRUE(IsCopy(ct, tr, {2, 3}));
  EXPECT_EQ(Values(ct), (Doubles{0, 1, 2, 3, 4, 5}));
  Tensor cs = clone(s);
  EXPECT_TRUE(IsCopy(cs, s, {}));
  EXPECT_EQ(clone(zeros({0, 4})).numel(), 0);
  // A clone does not alias: writing it leaves the source alone.
  Tensor cx = clone(x);
  kernels::exp_(cx);
  EXPECT_EQ(Values(x), (Doubles{0, 1, 2, 3, 4, 5}));
}

TEST(ViewOps, Flip) {
  Tensor x = Iota({2, 3});
  Tensor f0 = flip(x, {0});
  EXPECT_TRUE(IsCopy(f0, x, {2, 3}));
  EXPECT_EQ(Values(f0), (Doubles{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(Values(flip(x, {1})), (Doubles{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(Values(flip(x, {-1})), (Doubles{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(Values(flip(x, {0, 1})), (Doubles{5, 4, 3, 2, 1, 0}));
  Tensor none = flip(x, {});
  EXPECT_TRUE(IsCopy(none, x, {2, 3}));
  EXPECT_EQ(Values(none), (Doubles{0, 1, 2, 3, 4, 5}));
  // 3-D against a hand-written loop, every subset of dims, float32 and float64.
  for (DType dtype : {kFloat32, kFloat64}) {
    Tensor y = Iota({3, 4, 5}, dtype);
    for (int mask = 0; mask < 8; ++mask) {
      Ints dims;
      for (int d = 0; d < 3; ++d) {
        if (mask & (1 << d)) dims.push_back(d);
      }
      Doubles expected;
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t j = 0; j < 4; ++j) {
          for (int64_t k = 0; k < 5; ++k) {
            const int64_t si = (mask & 1) ? 2 - i : i;
            const int64_t sj = (mask & 2) ? 3 - j : j;
            const int64_t sk = (mask & 4) ? 4 - k : k;
            expected.push_back(static_cast<double>(si * 20 + sj * 5 + sk));
          }
        }
      }
      Tensor r = flip(y, dims);
      EXPECT_EQ(r.dtype(), dtype);
      EXPECT_EQ(Values(r), expected) << "mask " << mask;
      // The same on a non-contiguous copy of y.
      EXPECT_EQ(Values(flip(testing::NonContiguousCopy(y), dims)), expected) << "mask " << mask;
    }
  }
  // Transposed, expanded and offset inputs.
  EXPECT_EQ(Values(flip(ColumnMajor(2, 3), {1})), (Doubles{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(Values(flip(ColumnMajor(2, 3), {0})), (Doubles{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(Values(flip(expand(Iota({3}), {2, 3}), {0, 1})), (Doubles{2, 1, 0, 2, 1, 0}));
  EXPECT_EQ(Values(flip(select(Iota({3, 4}), 0, 1), {0})), (Doubles{7, 6, 5, 4}));
  // int64, bool, rank 0, size 0, size 1.
  EXPECT_TENSOR_EQ(flip(tensor(std::vector<int64_t>{1, 2, 3}), {0}),
                   tensor(std::vector<int64_t>{3, 2, 1}));
  EXPECT_TENSOR_EQ(flip(tensor(std::vector<bool>{true, false, false}), {0}),
                   tensor(std::vector<bool>{false, false, true}));
  Tensor s = scalar_tensor(4.0, kFloat64);
  Tensor fs = flip(s, {});
  EXPECT_TRUE(IsCopy(fs, s, {}));
  EXPECT_EQ(fs.item<double>(), 4.0);
  EXPECT_EQ(flip(s, {0}).item<double>(), 4.0);
  EXPECT_EQ(Vec(flip(zeros({0, 3}), {0, 1}).sizes()), (Ints{0, 3}));
  EXPECT_EQ(Values(flip(Iota({1, 3}), {0})), (Doubles{0, 1, 2}));
  EXPECT_FT_ERROR(flip(x, {0, -2}), "flip: dim 0 appears more than once");
  EXPECT_FT_ERROR(flip(x, {2}), "flip: dim 2 is out of range");
}

// ---------------------------------------------------------------- dispatch

TEST(ViewOps, RegisteredAndCallableBoxed) {
  RegisterAllOps();
  EXPECT_EQ(OpFor<&kernels::slice>().name(), "slice");
  EXPECT_EQ(OpFor<&kernels::reshape>().name(), "reshape");
  EXPECT_EQ(OpFor<&kernels::contiguous>().name(), "contiguous");
  EXPECT_EQ(OpFor<&kernels::flip>().name(), "flip");
  // The boxed path (what interpreters use) handles optional ints and int lists.
  Tensor x = Iota({10});
  ValueList args;
  args.emplace_back(x);
  args.emplace_back(int64_t{0});
  args.emplace_back();  // start = None
  args.emplace_back(int64_t{-2});
  args.emplace_back(int64_t{3});
  ValueList out = DispatchBoxed(OpFor<&kernels::slice>(), args);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(IsView(out[0].tensor(), x, {3}, {3}, 0));
  EXPECT_EQ(Values(out[0].tensor()), (Doubles{0, 3, 6}));
  ValueList rargs;
  rargs.emplace_back(x);
  rargs.emplace_back(Shape{2, -1});
  ValueList rout = DispatchBoxed(OpFor<&kernels::reshape>(), rargs);
  EXPECT_TRUE(IsView(rout[0].tensor(), x, {2, 5}, {5, 1}, 0));
}

}  // namespace
}  // namespace ft

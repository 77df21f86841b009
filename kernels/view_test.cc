// Tests of the view and shape kernels (kernels/view.h) on dense tensors: reshape, view,
// flatten, unflatten, expand, unsqueeze, squeeze*, movedim, permute, transpose, t, select,
// narrow, slice, diagonal (and CheckSelectArgs / CheckNarrowArgs), flip, and the scatter ops
// with CheckScatterSrc.
//
// Oracles: for every view, the sizes, strides and storage offset PyTorch gives, worked out by
// hand; the values of a view of Iota (element i holds i) as a closed form of the index; the
// aliasing by writing through the view and reading the base; the copy-vs-view rule of
// reshape / flatten (PyTorch's computeStride) by hand-worked layouts. flip and the scatter
// ops are checked against hand-written index loops over to_vector<double>() values.
#include "kernels/view.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/test_helpers.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::FromDoubles;
using ::ft::testing::NumelOf;
using ::ft::testing::RandomValues;
using ::ft::testing::Ravel;
using ::ft::testing::Strided;
using ::ft::testing::Unravel;

using Ints = std::vector<int64_t>;

Ints Vec(IntArrayRef s) { return Ints(s.begin(), s.end()); }

// Iota: a contiguous tensor whose row-major element i holds i.
Tensor Iota(const Ints& shape, DType dtype = kFloat64) {
  std::vector<double> v(static_cast<size_t>(NumelOf(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return FromDoubles(v, shape, dtype);
}

// IsView: v shares base's storage and has exactly the given geometry.
::testing::AssertionResult IsView(const Tensor& v, const Tensor& base, const Ints& sizes,
                                  const Ints& strides, int64_t offset) {
  if (!v.storage().is_same(base.storage())) {
    return ::testing::AssertionFailure() << "not a view of the base (other storage)";
  }
  if (Vec(v.sizes()) != sizes || Vec(v.strides()) != strides || v.storage_offset() != offset) {
    return ::testing::AssertionFailure()
           << "geometry " << ShapeToString(v.sizes()) << " strides " << ShapeToString(v.strides())
           << " offset " << v.storage_offset() << ", expected " << ShapeToString(sizes)
           << " strides " << ShapeToString(strides) << " offset " << offset;
  }
  return ::testing::AssertionSuccess();
}

// Geometry: sizes, strides and offset, whatever the storage.
::testing::AssertionResult HasGeometry(const Tensor& v, const Ints& sizes, const Ints& strides,
                                       int64_t offset) {
  if (Vec(v.sizes()) != sizes || Vec(v.strides()) != strides || v.storage_offset() != offset) {
    return ::testing::AssertionFailure()
           << "geometry " << ShapeToString(v.sizes()) << " strides " << ShapeToString(v.strides())
           << " offset " << v.storage_offset();
  }
  return ::testing::AssertionSuccess();
}

// IsCopy: v is a new contiguous tensor (not sharing x's storage).
::testing::AssertionResult IsCopy(const Tensor& v, const Tensor& x) {
  if (v.storage().is_same(x.storage())) return ::testing::AssertionFailure() << "aliases x";
  if (!v.is_contiguous() || v.storage_offset() != 0) {
    return ::testing::AssertionFailure() << "not contiguous at offset 0";
  }
  return ::testing::AssertionSuccess();
}

// WrittenThrough writes -1 into every element of `view` and returns the row-major positions
// of `base` (whose values are all >= 0) that now hold -1.
Ints WrittenThrough(const Tensor& base, const Tensor& view) {
  copy_into(view, scalar_tensor(-1.0, kFloat64));
  Ints positions;
  const std::vector<double> v = base.to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == -1.0) positions.push_back(static_cast<int64_t>(i));
  }
  return positions;
}

// ExpectValues: v (any layout) holds f(multi-index) at every position.
template <typename F>
void ExpectValues(const Tensor& v, F f) {
  const Ints shape = Vec(v.sizes());
  std::vector<double> expected(static_cast<size_t>(NumelOf(shape)));
  for (size_t i = 0; i < expected.size(); ++i) {
    expected[i] = f(Unravel(static_cast<int64_t>(i), shape));
  }
  EXPECT_TENSOR_EQ(v, FromDoubles(expected, shape, v.dtype()));
}

// ---------------------------------------------------------------------------------------
// reshape / view

TEST(ViewKernelReshapeTest, ContiguousInputIsRowMajorViewWithoutVersionBump) {
  Tensor x = Iota({2, 3, 4});
  const int64_t version = x.version();
  Tensor y = reshape(x, {4, -1});
  EXPECT_TRUE(IsView(y, x, {4, 6}, {6, 1}, 0));
  EXPECT_TENSOR_EQ(y, Iota({4, 6}));
  EXPECT_EQ(x.version(), version);
  EXPECT_FALSE(y.is_same(x));
  // A write through the view is visible in the base and vice versa.
  y.data<double>()[1 * 6 + 5] = -7;
  EXPECT_EQ(x.to_vector<double>()[11], -7);
  x.data<double>()[0] = -3;
  EXPECT_EQ(y.to_vector<double>()[0], -3);
  EXPECT_TRUE(IsView(reshape(x, {24}), x, {24}, {1}, 0));
  EXPECT_TRUE(IsView(reshape(x, {2, 1, 12}), x, {2, 1, 12}, {12, 12, 1}, 0));
}

TEST(ViewKernelReshapeTest, HeaderExampleTransposedIsCopiedUnlessSplitOnly) {
  Tensor x = reshape(Iota({6}), {2, 3});
  Tensor y = transpose(x, 0, 1);  // sizes [3, 2], strides [1, 3]
  Tensor z = reshape(y, {6});
  EXPECT_TRUE(IsCopy(z, x));
  EXPECT_TENSOR_EQ(z, tensor({0.0, 3.0, 1.0, 4.0, 2.0, 5.0}, {6}));
  z.data<double>()[0] = 99;  // the copy does not write x
  EXPECT_TENSOR_EQ(x, Iota({2, 3}));
  Tensor w = reshape(y, {3, 2, 1});
  EXPECT_TRUE(IsView(w, x, {3, 2, 1}, {1, 3, 3}, 0));
  ExpectValues(w, [](const Ints& i) { return 3.0 * i[1] + i[0]; });
}

TEST(ViewKernelReshapeTest, StridedInputMergesOnlyContiguousRuns) {
  Tensor base = Iota({4, 6});
  // base[:, ::2]: sizes [4, 3], strides [6, 2]: the rows continue each other (6 == 3 * 2),
  // so flattening is a view with stride 2.
  Tensor even = Strided(base, {4, 3}, {6, 2}, 0);
  Tensor flat = reshape(even, {12});
  EXPECT_TRUE(IsView(flat, base, {12}, {2}, 0));
  ExpectValues(flat, [](const Ints& i) { return 2.0 * i[0]; });
  // base[:, 1:5:2]: sizes [4, 2], strides [6, 2], offset 1: 6 != 2 * 2, flattening copies.
  Tensor odd = Strided(base, {4, 2}, {6, 2}, 1);
  Tensor flat_odd = reshape(odd, {8});
  EXPECT_TRUE(IsCopy(flat_odd, base));
  EXPECT_TENSOR_EQ(flat_odd, tensor({1.0, 3.0, 7.0, 9.0, 13.0, 15.0, 19.0, 21.0}, {8}));
  // Splitting a dim is always a view, and keeps the offset.
  Tensor split = reshape(odd, {2, 2, 2});
  EXPECT_TRUE(IsView(split, base, {2, 2, 2}, {12, 6, 2}, 1));
  ExpectValues(split, [](const Ints& i) { return 12.0 * i[0] + 6.0 * i[1] + 1 + 2.0 * i[2]; });
  // Expanded (stride 0): [3, 4] with strides [0, 1] splits as a view and flattens as a copy.
  Tensor row = Iota({4});
  Tensor expanded = Strided(row, {3, 4}, {0, 1}, 0);
  EXPECT_TRUE(IsView(reshape(expanded, {3, 2, 2}), row, {3, 2, 2}, {0, 2, 1}, 0));
  Tensor flat_expanded = reshape(expanded, {12});
  EXPECT_TRUE(IsCopy(flat_expanded, row));
  ExpectValues(flat_expanded, [](const Ints& i) { return static_cast<double>(i[0] % 4); });
  // A size-1 dim never cuts a run, whatever its stride.
  Tensor odd_one = Strided(Iota({6}), {2, 1, 3}, {3, 100, 1}, 0);
  EXPECT_TRUE(IsView(reshape(odd_one, {6}), odd_one, {6}, {1}, 0));
  EXPECT_TRUE(IsView(reshape(odd_one, {3, 2}), odd_one, {3, 2}, {2, 1}, 0));
}

TEST(ViewKernelReshapeTest, RankZeroAndSizeZero) {
  Tensor one = Iota({1});
  Tensor s = reshape(one, {});
  EXPECT_TRUE(IsView(s, one, {}, {}, 0));
  EXPECT_EQ(s.item<double>(), 0.0);
  EXPECT_TRUE(IsView(reshape(s, {1, 1}), one, {1, 1}, {1, 1}, 0));
  EXPECT_TRUE(IsView(reshape(s, {-1}), one, {1}, {1}, 0));
  Tensor z = Iota({0, 3});
  // Empty: same sizes keep the strides; other sizes get PyTorch's contiguous strides, in
  // which a size-0 dim counts as 1.
  EXPECT_TRUE(IsView(reshape(z, {0, 3}), z, {0, 3}, {3, 1}, 0));
  EXPECT_TRUE(IsView(reshape(z, {3, 0}), z, {3, 0}, {1, 1}, 0));
  EXPECT_TRUE(IsView(reshape(z, {-1}), z, {0}, {1}, 0));
  EXPECT_TRUE(IsView(reshape(z, {5, -1}), z, {5, 0}, {1, 1}, 0));
  EXPECT_FT_ERROR(reshape(z, {-1, 0}), "reshape: shape [-1, 0] is invalid for input of size 0");
}

TEST(ViewKernelReshapeTest, EveryDTypeKeepsItsValues) {
  for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    const std::vector<double> v = RandomValues(6, dtype, 7);
    Tensor x = FromDoubles(v, {2, 3}, dtype);
    Tensor y = reshape(x, {3, 2});
    EXPECT_TRUE(IsView(y, x, {3, 2}, {2, 1}, 0));
    EXPECT_TENSOR_EQ(y, FromDoubles(v, {3, 2}, dtype));
    Tensor copy = reshape(transpose(x, 0, 1), {6});  // copies
    EXPECT_TENSOR_EQ(copy, FromDoubles({v[0], v[3], v[1], v[4], v[2], v[5]}, {6}, dtype));
  }
}

TEST(ViewKernelReshapeTest, Errors) {
  Tensor x = Iota({6});
  EXPECT_FT_ERROR(reshape(x, {4, 2}), "reshape: shape [4, 2] is invalid for input of size 6");
  EXPECT_FT_ERROR(reshape(x, {4, -1}), "reshape: shape [4, -1] is invalid for input of size 6");
  EXPECT_FT_ERROR(reshape(x, {-1, -1}), "reshape: only one dimension can be inferred");
  EXPECT_FT_ERROR(reshape(x, {-2, -3}), "reshape: invalid shape dimension -2");
}

TEST(ViewKernelViewTest, ViewsWhereReshapeWouldAndThrowsWhereItCopies) {
  Tensor base = Iota({4, 6});
  Tensor even = Strided(base, {4, 3}, {6, 2}, 0);
  EXPECT_TRUE(IsView(view(even, {12}), base, {12}, {2}, 0));
  EXPECT_TRUE(IsView(view(even, {2, -1}), base, {2, 6}, {12, 2}, 0));
  Tensor tr = Strided(Iota({6}), {3, 2}, {1, 3}, 0);
  EXPECT_TRUE(IsView(view(tr, {3, 2, 1}), tr, {3, 2, 1}, {1, 3, 3}, 0));
  Tensor z = Iota({0, 2});
  EXPECT_TRUE(IsView(view(z, {2, 0}), z, {2, 0}, {1, 1}, 0));
  Tensor s = view(Iota({1}), {});
  EXPECT_EQ(s.dim(), 0);
  EXPECT_FT_ERROR(view(tr, {6}),
                  "view: size is not compatible with input tensor's size and stride");
  EXPECT_FT_ERROR(view(Strided(base, {4, 2}, {6, 2}, 1), {8}), "Use reshape(...) instead");
  EXPECT_FT_ERROR(view(Iota({6}), {4}), "view: shape [4] is invalid for input of size 6");
  EXPECT_FT_ERROR(view(Iota({6}), {-1, -1}), "view: only one dimension can be inferred");
}

// ---------------------------------------------------------------------------------------
// flatten / unflatten

TEST(ViewKernelFlattenTest, MergesDimsAsViewWhenContiguous) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_TRUE(IsView(flatten(x, 1, 2), x, {2, 12}, {12, 1}, 0));
  EXPECT_TRUE(IsView(flatten(x, -2, -1), x, {2, 12}, {12, 1}, 0));
  EXPECT_TRUE(IsView(flatten(x, 0, -1), x, {24}, {1}, 0));
  EXPECT_TRUE(IsView(flatten(x, 0, 1), x, {6, 4}, {4, 1}, 0));
  EXPECT_TRUE(IsView(flatten(x, 1, 1), x, {2, 3, 4}, {12, 4, 1}, 0));
  EXPECT_TENSOR_EQ(flatten(x, 0, 1), Iota({6, 4}));
  // Rank 0 becomes [1] (a view).
  Tensor one = Iota({1});
  Tensor s = reshape(one, {});
  EXPECT_TRUE(IsView(flatten(s, 0, -1), one, {1}, {1}, 0));
  EXPECT_TRUE(IsView(flatten(s, 0, 0), one, {1}, {1}, 0));
  // Size-0 dims.
  Tensor z = Iota({2, 0, 3});
  EXPECT_TRUE(IsView(flatten(z, 0, 1), z, {0, 3}, {3, 1}, 0));
}

TEST(ViewKernelFlattenTest, NonContiguousRunsAreCopied) {
  Tensor base = Iota({2, 3, 4});
  // base.transpose(1, 2): sizes [2, 4, 3], strides [12, 1, 4].
  Tensor tr = Strided(base, {2, 4, 3}, {12, 1, 4}, 0);
  Tensor merged = flatten(tr, 1, 2);
  EXPECT_TRUE(IsCopy(merged, base));
  ExpectValues(merged, [](const Ints& i) { return 12.0 * i[0] + i[1] / 3 + 4.0 * (i[1] % 3); });
  Tensor outer = flatten(tr, 0, 1);
  EXPECT_TRUE(IsCopy(outer, base));
  ExpectValues(outer, [](const Ints& i) { return 12.0 * (i[0] / 4) + i[0] % 4 + 4.0 * i[1]; });
  // Merging only the untouched outer dim with nothing is the identity view.
  EXPECT_TRUE(IsView(flatten(tr, 0, 0), base, {2, 4, 3}, {12, 1, 4}, 0));
}

// Regression: flatten used to multiply the merged sizes left to right and throw on the
// overflow of 2^40 * 2^40 before reaching the 0 (the run holds 0 elements).
TEST(ViewKernelFlattenTest, EmptyTensorWithHugeSizes) {
  // An empty tensor may have sizes whose product overflows int64 unless a 0 is among them.
  constexpr int64_t kBig = int64_t{1} << 40;
  Tensor z = Iota({0});
  Tensor huge = Strided(z, {kBig, kBig, 0}, {0, 0, 1}, 0);
  // Merging a run that holds the 0 gives 0 elements, however large the others are.
  Tensor all = flatten(huge, 0, 2);
  EXPECT_EQ(Vec(all.sizes()), (Ints{0}));
  Tensor inner = flatten(huge, 1, 2);
  EXPECT_EQ(Vec(inner.sizes()), (Ints{kBig, 0}));
  // Merging the two large dims alone does overflow.
  EXPECT_FT_ERROR(flatten(huge, 0, 1),
                  "flatten: dims 0 to 1 of shape [1099511627776, 1099511627776, 0] hold more "
                  "elements than int64 can count");
}

TEST(ViewKernelFlattenTest, Errors) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_FT_ERROR(flatten(x, 2, 1), "flatten: start_dim 2 cannot come after end_dim 1");
  EXPECT_FT_ERROR(flatten(x, -1, 0), "flatten: start_dim -1 cannot come after end_dim 0");
  EXPECT_FT_ERROR(flatten(x, 0, 3), "flatten: dim 3 is out of range for a tensor of rank 3");
  EXPECT_FT_ERROR(flatten(x, -4, 0), "flatten: dim -4 is out of range");
}

TEST(ViewKernelUnflattenTest, SplitsOneDimAlwaysAsView) {
  Tensor x = Iota({2, 12});
  EXPECT_TRUE(IsView(unflatten(x, 1, {3, -1}), x, {2, 3, 4}, {12, 4, 1}, 0));
  EXPECT_TRUE(IsView(unflatten(x, -1, {2, 2, 3}), x, {2, 2, 2, 3}, {12, 6, 3, 1}, 0));
  EXPECT_TRUE(IsView(unflatten(x, 0, {1, 2}), x, {1, 2, 12}, {24, 12, 1}, 0));
  EXPECT_TRUE(IsView(unflatten(x, 0, {2}), x, {2, 12}, {12, 1}, 0));
  // Strided input: the inner strides scale by the dim's stride; the offset stays.
  Tensor base = Iota({2, 24});
  Tensor nc = Strided(base, {2, 12}, {24, 2}, 1);
  Tensor u = unflatten(nc, 1, {3, 4});
  EXPECT_TRUE(IsView(u, base, {2, 3, 4}, {24, 8, 2}, 1));
  ExpectValues(u, [](const Ints& i) { return 24.0 * i[0] + 1 + 2.0 * (4 * i[1] + i[2]); });
  // A transposed dim splits too (no copy, unlike reshape of the whole).
  Tensor b2 = Iota({3, 4});
  Tensor tr = Strided(b2, {4, 3}, {1, 4}, 0);
  Tensor ut = unflatten(tr, 0, {2, 2});
  EXPECT_TRUE(IsView(ut, b2, {2, 2, 3}, {2, 1, 4}, 0));
  ExpectValues(ut, [](const Ints& i) { return 2.0 * i[0] + i[1] + 4.0 * i[2]; });
  // A size-0 dim.
  Tensor z = Iota({0});
  EXPECT_TRUE(IsView(unflatten(z, 0, {0, 5}), z, {0, 5}, {5, 1}, 0));
}

TEST(ViewKernelUnflattenTest, Errors) {
  Tensor x = Iota({2, 12});
  EXPECT_FT_ERROR(unflatten(reshape(Iota({1}), {}), 0, {1}),
                  "unflatten: cannot be applied to a 0-dim tensor");
  EXPECT_FT_ERROR(unflatten(x, 1, {}), "unflatten: sizes must be non-empty");
  EXPECT_FT_ERROR(unflatten(x, 1, {5, -1}),
                  "unflatten: provided sizes [5, -1] don't multiply up to the size of dim 1 (12)");
  EXPECT_FT_ERROR(unflatten(x, 1, {5, 2}), "unflatten: provided sizes [5, 2] don't multiply");
  EXPECT_FT_ERROR(unflatten(x, 2, {1}), "unflatten: dim 2 is out of range");
  EXPECT_FT_ERROR(unflatten(x, 1, {-1, -1}), "unflatten: only one dimension can be inferred");
}

// ---------------------------------------------------------------------------------------
// expand / unsqueeze / squeeze

TEST(ViewKernelExpandTest, BroadcastsWithStrideZero) {
  Tensor col = Iota({3, 1});
  Tensor e = expand(col, {2, 3, 4});
  EXPECT_TRUE(IsView(e, col, {2, 3, 4}, {0, 1, 0}, 0));
  ExpectValues(e, [](const Ints& i) { return static_cast<double>(i[1]); });
  EXPECT_TRUE(IsView(expand(col, {-1, 5}), col, {3, 5}, {1, 0}, 0));
  EXPECT_TRUE(IsView(expand(col, {3, 0}), col, {3, 0}, {1, 0}, 0));
  EXPECT_TRUE(IsView(expand(col, {0, 3, 1}), col, {0, 3, 1}, {0, 1, 1}, 0));
  Tensor v = Iota({3});
  EXPECT_TRUE(IsView(expand(v, {2, 3}), v, {2, 3}, {0, 1}, 0));
  // A size-1 dim expanded to its own size keeps its stride.
  Tensor r = Iota({1, 3});
  EXPECT_TRUE(IsView(expand(r, {1, 3}), r, {1, 3}, {3, 1}, 0));
  // Offset input (base[1:2, :] of a [2, 3]).
  Tensor base = Iota({2, 3});
  Tensor row = Strided(base, {1, 3}, {3, 1}, 3);
  Tensor er = expand(row, {4, 3});
  EXPECT_TRUE(IsView(er, base, {4, 3}, {0, 1}, 3));
  ExpectValues(er, [](const Ints& i) { return 3.0 + i[1]; });
  // Rank 0.
  Tensor one = Iota({1});
  Tensor s = reshape(one, {});
  EXPECT_TRUE(IsView(expand(s, {2, 2}), one, {2, 2}, {0, 0}, 0));
  EXPECT_TRUE(IsView(expand(s, {}), one, {}, {}, 0));
  // Writing through the expanded view writes the base elements it repeats.
  EXPECT_EQ(WrittenThrough(col, e), (Ints{0, 1, 2}));
  EXPECT_EQ(WrittenThrough(base, er), (Ints{3, 4, 5}));
}

TEST(ViewKernelExpandTest, Errors) {
  Tensor col = Iota({3, 1});
  EXPECT_FT_ERROR(expand(Iota({2, 3}), {3}),
                  "expand: the number of sizes provided (1) must be greater or equal to the "
                  "number of dimensions in the tensor (2)");
  EXPECT_FT_ERROR(expand(col, {-1, 3, 4}),
                  "expand: the expanded size -1 is not allowed in a leading, non-existing "
                  "dimension 0");
  EXPECT_FT_ERROR(expand(Iota({3}), {2, 4}),
                  "expand: the expanded size of the tensor (4) must match the existing size (3) "
                  "at non-singleton dimension 1");
  EXPECT_FT_ERROR(expand(col, {3, -2}), "expand: invalid size -2 at dimension 1");
  constexpr int64_t kBig = int64_t{1} << 40;
  EXPECT_FT_ERROR(expand(col, {kBig, kBig, 3, 1}),
                  "expand: shape [1099511627776, 1099511627776, 3, 1] has too many elements");
}

TEST(ViewKernelUnsqueezeTest, InsertsSizeOneDimWithPyTorchStride) {
  Tensor x = Iota({2, 3});
  EXPECT_TRUE(IsView(unsqueeze(x, 0), x, {1, 2, 3}, {6, 3, 1}, 0));
  EXPECT_TRUE(IsView(unsqueeze(x, 1), x, {2, 1, 3}, {3, 3, 1}, 0));
  EXPECT_TRUE(IsView(unsqueeze(x, 2), x, {2, 3, 1}, {3, 1, 1}, 0));
  EXPECT_TRUE(IsView(unsqueeze(x, -1), x, {2, 3, 1}, {3, 1, 1}, 0));
  EXPECT_TRUE(IsView(unsqueeze(x, -3), x, {1, 2, 3}, {6, 3, 1}, 0));
  EXPECT_TRUE(unsqueeze(x, 1).is_contiguous());
  Tensor one = Iota({1});
  Tensor s = reshape(one, {});
  EXPECT_TRUE(IsView(unsqueeze(s, 0), one, {1}, {1}, 0));
  EXPECT_TRUE(IsView(unsqueeze(s, -1), one, {1}, {1}, 0));
  Tensor b = Iota({6});
  Tensor tr = Strided(b, {3, 2}, {1, 3}, 0);
  EXPECT_TRUE(IsView(unsqueeze(tr, 1), b, {3, 1, 2}, {1, 6, 3}, 0));
  EXPECT_TRUE(IsView(unsqueeze(tr, 0), b, {1, 3, 2}, {3, 1, 3}, 0));
  EXPECT_TRUE(IsView(unsqueeze(Strided(b, {3}, {1}, 2), 0), b, {1, 3}, {3, 1}, 2));
  EXPECT_FT_ERROR(unsqueeze(x, 3), "unsqueeze: dim 3 is out of range for a tensor of rank 3");
  EXPECT_FT_ERROR(unsqueeze(x, -4), "unsqueeze: dim -4 is out of range");
}

TEST(ViewKernelSqueezeTest, DropsSizeOneDims) {
  Tensor x = Iota({1, 2, 1, 3});
  EXPECT_TRUE(IsView(squeeze(x), x, {2, 3}, {3, 1}, 0));
  EXPECT_TRUE(IsView(squeeze_dim(x, 0), x, {2, 1, 3}, {3, 3, 1}, 0));
  EXPECT_TRUE(IsView(squeeze_dim(x, -2), x, {1, 2, 3}, {6, 3, 1}, 0));
  // A dim of size != 1 is left alone: a new object with the same geometry.
  Tensor same = squeeze_dim(x, 1);
  EXPECT_TRUE(IsView(same, x, {1, 2, 1, 3}, {6, 3, 3, 1}, 0));
  EXPECT_FALSE(same.is_same(x));
  EXPECT_TRUE(IsView(squeeze_dims(x, {0, 2}), x, {2, 3}, {3, 1}, 0));
  EXPECT_TRUE(IsView(squeeze_dims(x, {1, -2}), x, {1, 2, 3}, {6, 3, 1}, 0));
  EXPECT_TRUE(IsView(squeeze_dims(x, {}), x, {1, 2, 1, 3}, {6, 3, 3, 1}, 0));
  // All dims of size 1: rank 0 at the view's offset.
  Tensor base = Iota({4});
  Tensor ones = Strided(base, {1, 1}, {1, 1}, 2);
  Tensor s0 = squeeze(ones);
  EXPECT_TRUE(IsView(s0, base, {}, {}, 2));
  EXPECT_EQ(s0.item<double>(), 2.0);
  // Rank 0 and size-0 dims.
  Tensor one = Iota({1});
  Tensor s = reshape(one, {});
  EXPECT_TRUE(IsView(squeeze(s), one, {}, {}, 0));
  EXPECT_TRUE(IsView(squeeze_dim(s, 0), one, {}, {}, 0));
  EXPECT_TRUE(IsView(squeeze_dim(s, -1), one, {}, {}, 0));
  EXPECT_TRUE(IsView(squeeze_dims(s, {0}), one, {}, {}, 0));
  Tensor z = Iota({0, 1});
  EXPECT_TRUE(IsView(squeeze(z), z, {0}, {1}, 0));
}

TEST(ViewKernelSqueezeTest, Errors) {
  Tensor x = Iota({1, 2, 1, 3});
  EXPECT_FT_ERROR(squeeze_dim(x, 4), "squeeze: dim 4 is out of range for a tensor of rank 4");
  EXPECT_FT_ERROR(squeeze_dims(x, {0, -4}), "squeeze: dim 0 appears more than once");
  EXPECT_FT_ERROR(squeeze_dims(x, {5}), "squeeze: dim 5 is out of range");
  EXPECT_FT_ERROR(squeeze_dims(reshape(Iota({1}), {}), {0, -1}),
                  "squeeze: dim 0 appears more than once");
}

// ---------------------------------------------------------------------------------------
// permute / movedim / transpose / t

TEST(ViewKernelPermuteTest, ReordersSizesAndStrides) {
  Tensor x = Iota({2, 3, 4});
  Tensor p = permute(x, {2, 0, 1});
  EXPECT_TRUE(IsView(p, x, {4, 2, 3}, {1, 12, 4}, 0));
  ExpectValues(p, [](const Ints& i) { return 12.0 * i[1] + 4.0 * i[2] + i[0]; });
  EXPECT_TRUE(IsView(permute(x, {-1, -3, -2}), x, {4, 2, 3}, {1, 12, 4}, 0));
  Tensor id = permute(x, {0, 1, 2});
  EXPECT_TRUE(IsView(id, x, {2, 3, 4}, {12, 4, 1}, 0));
  EXPECT_FALSE(id.is_same(x));
  Tensor one = Iota({1});
  EXPECT_TRUE(IsView(permute(reshape(one, {}), {}), one, {}, {}, 0));
  // Offset input.
  Tensor base = Iota({3, 2, 3});
  Tensor sub = Strided(base, {2, 3}, {3, 1}, 6);
  EXPECT_TRUE(IsView(permute(sub, {1, 0}), base, {3, 2}, {1, 3}, 6));
  // Writing a pattern through the permuted view lands at the transposed positions.
  Tensor m = Iota({2, 3});
  Tensor pm = permute(m, {1, 0});
  copy_into(pm, tensor({100.0, 101.0, 102.0, 103.0, 104.0, 105.0}, {3, 2}));
  // pm[i][j] = m[j][i] = 100 + 2 * i + j.
  EXPECT_TENSOR_EQ(m, tensor({100.0, 102.0, 104.0, 101.0, 103.0, 105.0}, {2, 3}));
}

TEST(ViewKernelPermuteTest, Errors) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_FT_ERROR(permute(x, {0, 1}), "permute: number of dims don't match");
  EXPECT_FT_ERROR(permute(x, {0, 0, 1}), "permute: dim 0 appears more than once");
  EXPECT_FT_ERROR(permute(x, {0, -3, 1}), "permute: dim 0 appears more than once");
  EXPECT_FT_ERROR(permute(x, {0, 1, 3}), "permute: dim 3 is out of range");
  EXPECT_FT_ERROR(permute(reshape(Iota({1}), {}), {0}), "permute: number of dims don't match");
}

TEST(ViewKernelMovedimTest, MovesListedDimsAndKeepsTheOthersInOrder) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_TRUE(IsView(movedim(x, {0}, {2}), x, {3, 4, 2}, {4, 1, 12}, 0));
  EXPECT_TRUE(IsView(movedim(x, {2, 0}, {0, 1}), x, {4, 2, 3}, {1, 12, 4}, 0));
  EXPECT_TRUE(IsView(movedim(x, {-1}, {0}), x, {4, 2, 3}, {1, 12, 4}, 0));
  EXPECT_TRUE(IsView(movedim(x, {1}, {-1}), x, {2, 4, 3}, {12, 1, 4}, 0));
  EXPECT_TRUE(IsView(movedim(x, {0, 1}, {2, 0}), x, {3, 4, 2}, {4, 1, 12}, 0));
  EXPECT_TRUE(IsView(movedim(x, {}, {}), x, {2, 3, 4}, {12, 4, 1}, 0));
  Tensor m = movedim(x, {1}, {-1});
  ExpectValues(m, [](const Ints& i) { return 12.0 * i[0] + 4.0 * i[2] + i[1]; });
  Tensor one = Iota({1});
  EXPECT_TRUE(IsView(movedim(reshape(one, {}), {0}, {-1}), one, {}, {}, 0));
}

TEST(ViewKernelMovedimTest, Errors) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_FT_ERROR(movedim(x, {0}, {1, 2}),
                  "movedim: invalid source or destination dims: source [0] and destination "
                  "[1, 2] must have the same number of elements");
  EXPECT_FT_ERROR(movedim(x, {0, 0}, {1, 2}), "movedim: dim 0 appears more than once");
  EXPECT_FT_ERROR(movedim(x, {0, 1}, {2, -1}), "movedim: dim 2 appears more than once");
  EXPECT_FT_ERROR(movedim(x, {3}, {0}), "movedim: dim 3 is out of range");
}

TEST(ViewKernelTransposeTest, SwapsTwoDims) {
  Tensor x = Iota({2, 3, 4});
  Tensor tr = transpose(x, 0, 2);
  EXPECT_TRUE(IsView(tr, x, {4, 3, 2}, {1, 4, 12}, 0));
  ExpectValues(tr, [](const Ints& i) { return 12.0 * i[2] + 4.0 * i[1] + i[0]; });
  EXPECT_TRUE(IsView(transpose(x, -1, 0), x, {4, 3, 2}, {1, 4, 12}, 0));
  EXPECT_TRUE(IsView(transpose(x, 1, 1), x, {2, 3, 4}, {12, 4, 1}, 0));
  EXPECT_TRUE(transpose(x, 1, 1).is_contiguous());
  EXPECT_FALSE(tr.is_contiguous());
  Tensor one = Iota({1});
  EXPECT_TRUE(IsView(transpose(reshape(one, {}), 0, -1), one, {}, {}, 0));
  Tensor v = Iota({3});
  EXPECT_TRUE(IsView(transpose(v, 0, -1), v, {3}, {1}, 0));
  // Integer and bool tensors are viewed the same way.
  Tensor xi = Iota({2, 3}, kInt64);
  EXPECT_TENSOR_EQ(transpose(xi, 0, 1), tensor(Ints{0, 3, 1, 4, 2, 5}, {3, 2}));
  Tensor xb = tensor(std::vector<bool>{true, false, false, true, true, false}, {2, 3});
  EXPECT_TENSOR_EQ(transpose(xb, 0, 1),
                   tensor(std::vector<bool>{true, true, false, true, false, false}, {3, 2}));
  EXPECT_FT_ERROR(transpose(x, 0, 3), "transpose: dim 3 is out of range for a tensor of rank 3");
  EXPECT_FT_ERROR(transpose(x, -4, 0), "transpose: dim -4 is out of range");
}

TEST(ViewKernelTTest, TransposesMatricesAndKeepsLowerRanks) {
  Tensor m = Iota({2, 3});
  EXPECT_TRUE(IsView(t(m), m, {3, 2}, {1, 3}, 0));
  ExpectValues(t(m), [](const Ints& i) { return 3.0 * i[1] + i[0]; });
  Tensor v = Iota({3});
  Tensor tv = t(v);
  EXPECT_TRUE(IsView(tv, v, {3}, {1}, 0));
  EXPECT_FALSE(tv.is_same(v));
  Tensor one = Iota({1});
  EXPECT_TRUE(IsView(t(reshape(one, {})), one, {}, {}, 0));
  EXPECT_FT_ERROR(t(Iota({2, 3, 4})), "t: expects a tensor with <= 2 dimensions, but self is 3D");
}

// ---------------------------------------------------------------------------------------
// select / narrow / slice / diagonal

TEST(ViewKernelSelectTest, CheckSelectArgsWrapsDimAndIndex) {
  DimAndIndex a = CheckSelectArgs({2, 3}, -1, -1);
  EXPECT_EQ(a.dim, 1);
  EXPECT_EQ(a.index, 2);
  DimAndIndex b = CheckSelectArgs({2, 3}, 0, 1);
  EXPECT_EQ(b.dim, 0);
  EXPECT_EQ(b.index, 1);
  DimAndIndex c = CheckSelectArgs({4}, 0, -4);
  EXPECT_EQ(c.dim, 0);
  EXPECT_EQ(c.index, 0);
  EXPECT_FT_ERROR(CheckSelectArgs({}, 0, 0), "select: cannot be applied to a 0-dim tensor");
  EXPECT_FT_ERROR(CheckSelectArgs({2, 3}, 1, 3),
                  "select: index 3 out of range for tensor of size [2, 3] at dimension 1");
  EXPECT_FT_ERROR(CheckSelectArgs({2, 3}, -1, -4), "select: index -4 out of range");
  EXPECT_FT_ERROR(CheckSelectArgs({2, 0}, 1, 0), "select: index 0 out of range");
  EXPECT_FT_ERROR(CheckSelectArgs({2, 3}, 2, 0), "select: dim 2 is out of range");
}

TEST(ViewKernelSelectTest, DropsTheDimAndMovesTheOffset) {
  Tensor x = Iota({2, 3, 4});
  const int64_t version = x.version();
  Tensor a = select(x, 1, -1);
  EXPECT_TRUE(IsView(a, x, {2, 4}, {12, 1}, 8));
  ExpectValues(a, [](const Ints& i) { return 12.0 * i[0] + 8 + i[1]; });
  EXPECT_TRUE(IsView(select(x, 0, 1), x, {3, 4}, {4, 1}, 12));
  EXPECT_TRUE(IsView(select(x, -1, 3), x, {2, 3}, {12, 4}, 3));
  // Views of views accumulate the offset.
  Tensor b = select(select(x, 0, 1), 1, 2);
  EXPECT_TRUE(IsView(b, x, {3}, {4}, 14));
  ExpectValues(b, [](const Ints& i) { return 14.0 + 4 * i[0]; });
  // Rank 1 gives rank 0.
  Tensor v = Iota({5});
  Tensor e = select(v, 0, -2);
  EXPECT_TRUE(IsView(e, v, {}, {}, 3));
  EXPECT_EQ(e.item<double>(), 3.0);
  // Expanded input: the broadcast dim has stride 0.
  Tensor row = Iota({3});
  EXPECT_TRUE(IsView(select(Strided(row, {4, 3}, {0, 1}, 0), 0, 3), row, {3}, {1}, 0));
  EXPECT_EQ(x.version(), version);
  EXPECT_EQ(WrittenThrough(x, a), (Ints{8, 9, 10, 11, 20, 21, 22, 23}));
  Tensor xi = Iota({2, 3}, kInt64);
  EXPECT_TENSOR_EQ(select(xi, 1, 1), tensor(Ints{1, 4}, {2}));
  EXPECT_FT_ERROR(select(Iota({2, 3}), 0, 2),
                  "select: index 2 out of range for tensor of size [2, 3] at dimension 0");
  EXPECT_FT_ERROR(select(reshape(Iota({1}), {}), 0, 0), "select: cannot be applied to a 0-dim");
}

TEST(ViewKernelNarrowTest, CheckNarrowArgsWrapsAndValidates) {
  DimAndIndex a = CheckNarrowArgs({5}, 0, -2, 2);
  EXPECT_EQ(a.dim, 0);
  EXPECT_EQ(a.index, 3);
  DimAndIndex b = CheckNarrowArgs({5}, -1, 5, 0);
  EXPECT_EQ(b.dim, 0);
  EXPECT_EQ(b.index, 5);
  DimAndIndex c = CheckNarrowArgs({4, 5}, 1, 1, 3);
  EXPECT_EQ(c.dim, 1);
  EXPECT_EQ(c.index, 1);
  EXPECT_FT_ERROR(CheckNarrowArgs({5}, 0, 6, 0),
                  "narrow: start 6 is out of range for dimension 0 of size 5");
  EXPECT_FT_ERROR(CheckNarrowArgs({5}, 0, -6, 1), "narrow: start -6 is out of range");
  EXPECT_FT_ERROR(CheckNarrowArgs({5}, 0, 3, 3),
                  "narrow: start (3) + length (3) exceeds dimension size (5)");
  EXPECT_FT_ERROR(CheckNarrowArgs({5}, 0, -1, 2), "narrow: start (4) + length (2) exceeds");
  EXPECT_FT_ERROR(CheckNarrowArgs({5}, 0, 0, -1), "narrow: start (0) + length (-1)");
  EXPECT_FT_ERROR(CheckNarrowArgs({}, 0, 0, 0), "narrow: cannot be applied to a 0-dim tensor");
  EXPECT_FT_ERROR(CheckNarrowArgs({5}, 1, 0, 0), "narrow: dim 1 is out of range");
}

TEST(ViewKernelNarrowTest, KeepsTheDimShortened) {
  Tensor x = Iota({4, 5});
  Tensor n = narrow(x, 1, 1, 3);
  EXPECT_TRUE(IsView(n, x, {4, 3}, {5, 1}, 1));
  ExpectValues(n, [](const Ints& i) { return 5.0 * i[0] + 1 + i[1]; });
  EXPECT_TRUE(IsView(narrow(x, 0, -1, 1), x, {1, 5}, {5, 1}, 15));
  EXPECT_TRUE(IsView(narrow(x, 1, 5, 0), x, {4, 0}, {5, 1}, 5));
  Tensor tr = Strided(Iota({5, 4}), {4, 5}, {1, 4}, 0);
  EXPECT_TRUE(IsView(narrow(tr, 1, 2, 2), tr, {4, 2}, {1, 4}, 8));
  EXPECT_EQ(WrittenThrough(x, n), (Ints{1, 2, 3, 6, 7, 8, 11, 12, 13, 16, 17, 18}));
  EXPECT_FT_ERROR(narrow(x, 1, 3, 3), "narrow: start (3) + length (3) exceeds dimension size");
}

struct SliceCase {
  std::optional<int64_t> start, end;
  int64_t step;
  Ints values;  // of Iota({10})[start:end:step], worked out by hand
};

TEST(ViewKernelSliceTest, FollowsPythonSlicingOn1D) {
  const std::vector<SliceCase> cases = {
      {std::nullopt, std::nullopt, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {2, 8, 3, {2, 5}},
      {-3, std::nullopt, 1, {7, 8, 9}},
      {-100, 100, 4, {0, 4, 8}},
      {8, 2, 1, {}},
      {12, 20, 1, {}},
      {std::nullopt, -1, 2, {0, 2, 4, 6, 8}},
      {3, -3, 2, {3, 5}},
      {-1, std::nullopt, 5, {9}},
      {0, 10, 100, {0}},
      {std::nullopt, std::nullopt, std::numeric_limits<int64_t>::max(), {0}},
      {1, 10, 3, {1, 4, 7}},
      {1, 9, 3, {1, 4, 7}},
      {1, 8, 3, {1, 4, 7}},
      {1, 7, 3, {1, 4}},
      {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 9, {0, 9}},
      {std::numeric_limits<int64_t>::max(), std::nullopt, 1, {}},
      {std::nullopt, std::numeric_limits<int64_t>::min(), 1, {}},
  };
  Tensor x = Iota({10});
  for (const SliceCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << "start " << c.start.value_or(-999) << " end "
                                      << c.end.value_or(-999) << " step " << c.step);
    Tensor s = slice(x, 0, c.start, c.end, c.step);
    EXPECT_TRUE(s.storage().is_same(x.storage()));
    const int64_t n = static_cast<int64_t>(c.values.size());
    ASSERT_EQ(Vec(s.sizes()), Ints{n});
    if (n > 0) {
      EXPECT_EQ(s.storage_offset(), c.values[0]);
    }
    if (n > 1) {
      EXPECT_EQ(s.stride(0), c.step);
    }
    std::vector<double> expected(c.values.begin(), c.values.end());
    EXPECT_TENSOR_EQ(s, tensor(expected, {n}));
  }
  // Empty slices: the offset is the clamped start, as in PyTorch.
  EXPECT_EQ(slice(x, 0, 8, 2, 1).storage_offset(), 8);
  EXPECT_EQ(slice(x, 0, 12, 20, 1).storage_offset(), 10);
}

TEST(ViewKernelSliceTest, MultiDimStridedAndWriteThrough) {
  Tensor x = Iota({4, 6});
  Tensor s = slice(x, 1, 1, std::nullopt, 2);
  EXPECT_TRUE(IsView(s, x, {4, 3}, {6, 2}, 1));
  ExpectValues(s, [](const Ints& i) { return 6.0 * i[0] + 1 + 2.0 * i[1]; });
  EXPECT_TRUE(IsView(slice(x, -1, 1, std::nullopt, 2), x, {4, 3}, {6, 2}, 1));
  EXPECT_TRUE(IsView(slice(x, 0, std::nullopt, std::nullopt, 3), x, {2, 6}, {18, 1}, 0));
  EXPECT_TRUE(IsView(slice(x, 0, -3, -1, 1), x, {2, 6}, {6, 1}, 6));
  // Transposed input: the step multiplies the dim's own stride.
  Tensor b = Iota({6, 4});
  Tensor tr = Strided(b, {4, 6}, {1, 4}, 0);
  Tensor st = slice(tr, 1, 1, 5, 2);
  EXPECT_TRUE(IsView(st, b, {4, 2}, {1, 8}, 4));
  ExpectValues(st, [](const Ints& i) { return 4.0 * (1 + 2 * i[1]) + i[0]; });
  // Slice of a slice.
  Tensor ss = slice(s, 1, 1, std::nullopt, 1);
  EXPECT_TRUE(IsView(ss, x, {4, 2}, {6, 2}, 3));
  // Size-0 dim.
  Tensor z = Iota({0, 3});
  Tensor sz = slice(z, 0, 1, 5, 1);
  EXPECT_EQ(Vec(sz.sizes()), (Ints{0, 3}));
  EXPECT_EQ(sz.storage_offset(), 0);
  EXPECT_EQ(WrittenThrough(x, s), (Ints{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23}));
}

TEST(ViewKernelSliceTest, Errors) {
  Tensor x = Iota({4, 6});
  EXPECT_FT_ERROR(slice(x, 1, 0, 4, 0), "slice: step must be positive, got 0");
  EXPECT_FT_ERROR(slice(x, 1, 0, 4, -1), "slice: step must be positive, got -1");
  EXPECT_FT_ERROR(slice(reshape(Iota({1}), {}), 0, 0, 1, 1),
                  "slice: cannot be applied to a 0-dim tensor");
  EXPECT_FT_ERROR(slice(x, 2, 0, 1, 1), "slice: dim 2 is out of range for a tensor of rank 2");
}

TEST(ViewKernelDiagonalTest, OffsetsAndDimOrderOn2D) {
  Tensor x = Iota({3, 4});
  Tensor d0 = diagonal(x, 0, 0, 1);
  EXPECT_TRUE(IsView(d0, x, {3}, {5}, 0));
  EXPECT_TENSOR_EQ(d0, tensor({0.0, 5.0, 10.0}, {3}));
  Tensor d1 = diagonal(x, 1, 0, 1);
  EXPECT_TRUE(IsView(d1, x, {3}, {5}, 1));
  EXPECT_TENSOR_EQ(d1, tensor({1.0, 6.0, 11.0}, {3}));
  EXPECT_TRUE(IsView(diagonal(x, 2, 0, 1), x, {2}, {5}, 2));
  EXPECT_TENSOR_EQ(diagonal(x, 2, 0, 1), tensor({2.0, 7.0}, {2}));
  Tensor dm1 = diagonal(x, -1, 0, 1);
  EXPECT_TRUE(IsView(dm1, x, {2}, {5}, 4));
  EXPECT_TENSOR_EQ(dm1, tensor({4.0, 9.0}, {2}));
  EXPECT_TRUE(IsView(diagonal(x, -2, 0, 1), x, {1}, {5}, 8));
  // Off the end: empty, and the offset stays put (PyTorch).
  EXPECT_TRUE(IsView(diagonal(x, 4, 0, 1), x, {0}, {5}, 0));
  EXPECT_TRUE(IsView(diagonal(x, -3, 0, 1), x, {0}, {5}, 0));
  EXPECT_TRUE(IsView(diagonal(x, 100, 0, 1), x, {0}, {5}, 0));
  EXPECT_TRUE(IsView(diagonal(x, std::numeric_limits<int64_t>::max(), 0, 1), x, {0}, {5}, 0));
  EXPECT_TRUE(IsView(diagonal(x, std::numeric_limits<int64_t>::min(), 0, 1), x, {0}, {5}, 0));
  // Reversed dims read the transpose's diagonals.
  EXPECT_TRUE(IsView(diagonal(x, 0, 1, 0), x, {3}, {5}, 0));
  Tensor r1 = diagonal(x, 1, 1, 0);
  EXPECT_TRUE(IsView(r1, x, {2}, {5}, 4));
  EXPECT_TENSOR_EQ(r1, tensor({4.0, 9.0}, {2}));
  EXPECT_TRUE(IsView(diagonal(x, 0, -1, -2), x, {3}, {5}, 0));
  EXPECT_EQ(WrittenThrough(x, d1), (Ints{1, 6, 11}));
}

TEST(ViewKernelDiagonalTest, BatchedDimsComeFirstAndDiagonalLast) {
  Tensor y = Iota({2, 3, 4});
  Tensor a = diagonal(y, 0, 0, 2);
  EXPECT_TRUE(IsView(a, y, {3, 2}, {4, 13}, 0));
  ExpectValues(a, [](const Ints& i) { return 13.0 * i[1] + 4.0 * i[0]; });
  Tensor b = diagonal(y, 1, 1, 2);
  EXPECT_TRUE(IsView(b, y, {2, 3}, {12, 5}, 1));
  ExpectValues(b, [](const Ints& i) { return 12.0 * i[0] + 4.0 * i[1] + i[1] + 1; });
  // Non-contiguous input (every other element of a [2, 3, 8] buffer).
  Tensor nc = ft::testing::NonContiguousCopy(y);
  Tensor c = diagonal(nc, -1, 1, 2);
  EXPECT_TRUE(HasGeometry(c, {2, 2}, {24, 10}, 8));
  ExpectValues(c, [](const Ints& i) { return 12.0 * i[0] + 4.0 * (i[1] + 1) + i[1]; });
}

TEST(ViewKernelDiagonalTest, Errors) {
  Tensor x = Iota({3, 4});
  EXPECT_FT_ERROR(diagonal(Iota({3}), 0, 0, 1),
                  "diagonal: expected a tensor with at least 2 dimensions, got shape [3]");
  EXPECT_FT_ERROR(diagonal(x, 0, 1, -1),
                  "diagonal: dim1 and dim2 cannot be the same dimension, got 1 and -1");
  EXPECT_FT_ERROR(diagonal(x, 0, 0, 2), "diagonal: dim 2 is out of range");
}

// ---------------------------------------------------------------------------------------
// flip

// FlipOracle: out[i] = in[i with i[d] -> n_d - 1 - i[d] for d in dims].
std::vector<double> FlipOracle(const std::vector<double>& in, const Ints& shape, const Ints& dims) {
  std::vector<double> out(in.size());
  const int64_t rank = static_cast<int64_t>(shape.size());
  for (size_t i = 0; i < in.size(); ++i) {
    Ints idx = Unravel(static_cast<int64_t>(i), shape);
    for (int64_t d : dims) {
      const int64_t w = d < 0 ? d + rank : d;
      idx[w] = shape[w] - 1 - idx[w];
    }
    out[i] = in[Ravel(idx, shape)];
  }
  return out;
}

TEST(ViewKernelFlipTest, EveryDTypeAndDimSetAgainstIndexOracle) {
  const Ints shape = {2, 3, 4};
  const std::vector<Ints> dim_sets = {{}, {0}, {1}, {2}, {-1}, {0, 2}, {2, 0}, {0, 1, 2}};
  for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    const std::vector<double> v = RandomValues(24, dtype, 11);
    Tensor x = FromDoubles(v, shape, dtype);
    for (const Ints& dims : dim_sets) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " dims " << ShapeToString(dims));
      Tensor f = flip(x, dims);
      EXPECT_TRUE(IsCopy(f, x));
      EXPECT_TENSOR_EQ(f, FromDoubles(FlipOracle(v, shape, dims), shape, dtype));
    }
    EXPECT_TENSOR_EQ(x, FromDoubles(v, shape, dtype));  // the input is untouched
  }
}

TEST(ViewKernelFlipTest, NonContiguousInputs) {
  const Ints shape = {3, 4};
  const std::vector<double> v = RandomValues(12, kFloat32, 5);
  Tensor x = FromDoubles(v, shape, kFloat32);
  // Transposed storage: a [4, 3] buffer viewed as [3, 4] with strides [1, 3], offset 2.
  std::vector<double> buf(14, 0.0);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) buf[2 + j * 3 + i] = v[i * 4 + j];
  }
  Tensor tr = Strided(FromDoubles(buf, {14}, kFloat32), shape, {1, 3}, 2);
  EXPECT_TENSOR_EQ(tr, x);
  Tensor nc = ft::testing::NonContiguousCopy(x);
  for (const Ints& dims : std::vector<Ints>{{0}, {1}, {0, 1}}) {
    const Tensor expected = FromDoubles(FlipOracle(v, shape, dims), shape, kFloat32);
    EXPECT_TENSOR_EQ(flip(tr, dims), expected);
    EXPECT_TENSOR_EQ(flip(nc, dims), expected);
  }
  // Expanded (stride 0) rows and a size-1 dim.
  Tensor row = tensor({1.0f, 2.0f, 3.0f}, {3});
  Tensor e = Strided(row, {2, 1, 3}, {0, 7, 1}, 0);
  EXPECT_TENSOR_EQ(flip(e, {0, 1}), tensor({1.0f, 2.0f, 3.0f, 1.0f, 2.0f, 3.0f}, {2, 1, 3}));
  EXPECT_TENSOR_EQ(flip(e, {2}), tensor({3.0f, 2.0f, 1.0f, 3.0f, 2.0f, 1.0f}, {2, 1, 3}));
}

TEST(ViewKernelFlipTest, RankZeroSizeZeroAndLarge) {
  Tensor one = Iota({1});
  Tensor s = reshape(one, {});
  Tensor fs = flip(s, {0});
  EXPECT_TRUE(IsCopy(fs, one));
  EXPECT_EQ(fs.dim(), 0);
  EXPECT_EQ(fs.item<double>(), 0.0);
  EXPECT_EQ(flip(s, {}).dim(), 0);
  Tensor z = flip(Iota({0, 3}), {0, 1});
  EXPECT_EQ(Vec(z.sizes()), (Ints{0, 3}));
  // Past the intra-op threading threshold (65536 elements).
  const Ints shape = {3, 25000};
  const std::vector<double> v = RandomValues(75000, kFloat32, 3);
  Tensor x = FromDoubles(v, shape, kFloat32);
  EXPECT_TENSOR_EQ(flip(x, {1}), FromDoubles(FlipOracle(v, shape, {1}), shape, kFloat32));
  EXPECT_TENSOR_EQ(flip(x, {0, 1}), FromDoubles(FlipOracle(v, shape, {0, 1}), shape, kFloat32));
  EXPECT_TENSOR_EQ(flip(x, {0}), FromDoubles(FlipOracle(v, shape, {0}), shape, kFloat32));
}

TEST(ViewKernelFlipTest, Errors) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_FT_ERROR(flip(x, {0, -3}), "flip: dim 0 appears more than once in the dim list");
  EXPECT_FT_ERROR(flip(x, {3}), "flip: dim 3 is out of range for a tensor of rank 3");
}

// ---------------------------------------------------------------------------------------
// select_scatter / slice_scatter / diagonal_scatter / CheckScatterSrc

TEST(ViewKernelScatterTest, CheckScatterSrc) {
  CheckScatterSrc("select_scatter", {4}, {4}, kFloat32, kFloat32);
  CheckScatterSrc("diagonal_scatter", {}, {}, kInt64, kInt64);
  EXPECT_FT_ERROR(CheckScatterSrc("select_scatter", {4}, {2}, kFloat32, kFloat32),
                  "select_scatter: expected src to have a size equal to the slice of self. "
                  "src size = [2], slice size = [4]");
  EXPECT_FT_ERROR(CheckScatterSrc("slice_scatter", {4}, {1, 4}, kFloat32, kFloat32),
                  "slice_scatter: expected src to have a size equal to the slice of self. "
                  "src size = [1, 4], slice size = [4]");
  EXPECT_FT_ERROR(CheckScatterSrc("diagonal_scatter", {4}, {4}, kFloat32, kFloat64),
                  "diagonal_scatter: expected src to have the same dtype as self, got src "
                  "dtype float64 and self dtype float32");
}

TEST(ViewKernelScatterTest, SelectScatterWritesOneSliceOfACopy) {
  Tensor x = Iota({2, 3});
  Tensor r = select_scatter(x, zeros({3}, kFloat64), 0, 1);
  EXPECT_TRUE(IsCopy(r, x));
  EXPECT_TENSOR_EQ(r, tensor({0.0, 1.0, 2.0, 0.0, 0.0, 0.0}, {2, 3}));
  EXPECT_TENSOR_EQ(x, Iota({2, 3}));
  EXPECT_TENSOR_EQ(select_scatter(x, tensor({-1.0, -2.0}, {2}), 1, -1),
                   tensor({0.0, 1.0, -1.0, 3.0, 4.0, -2.0}, {2, 3}));
  // Non-contiguous self (transposed) and src (stride 2).
  Tensor b = Iota({3, 2});
  Tensor tr = Strided(b, {2, 3}, {1, 2}, 0);  // tr[i][j] = 2 j + i
  Tensor src = ft::testing::NonContiguousCopy(tensor({7.0, 8.0, 9.0}, {3}));
  EXPECT_TENSOR_EQ(select_scatter(tr, src, 0, 0), tensor({7.0, 8.0, 9.0, 1.0, 3.0, 5.0}, {2, 3}));
  // Rank 1 self takes a rank-0 src.
  EXPECT_TENSOR_EQ(select_scatter(Iota({3}), scalar_tensor(-5.0, kFloat64), 0, 1),
                   tensor({0.0, -5.0, 2.0}, {3}));
  // src aliasing self: read before anything is written, self untouched.
  EXPECT_TENSOR_EQ(select_scatter(x, select(x, 0, 0), 0, 1),
                   tensor({0.0, 1.0, 2.0, 0.0, 1.0, 2.0}, {2, 3}));
  EXPECT_TENSOR_EQ(x, Iota({2, 3}));
  // Integer and bool.
  EXPECT_TENSOR_EQ(select_scatter(Iota({2, 2}, kInt64), tensor(Ints{9, 9}, {2}), 1, 0),
                   tensor(Ints{9, 1, 9, 3}, {2, 2}));
  Tensor fb = tensor(std::vector<bool>{false, false, false, false}, {2, 2});
  EXPECT_TENSOR_EQ(select_scatter(fb, tensor(std::vector<bool>{true, true}, {2}), 0, 1),
                   tensor(std::vector<bool>{false, false, true, true}, {2, 2}));
}

TEST(ViewKernelScatterTest, SliceScatterWritesTheSlicedPositions) {
  Tensor x = Iota({4, 5});
  Tensor src = FromDoubles({-1, -2, -3, -4, -5, -6, -7, -8}, {4, 2}, kFloat64);
  Tensor r = slice_scatter(x, src, 1, 1, std::nullopt, 2);
  EXPECT_TRUE(IsCopy(r, x));
  ExpectValues(r, [](const Ints& i) {
    if (i[1] == 1 || i[1] == 3) return -(2.0 * i[0] + (i[1] - 1) / 2) - 1;
    return 5.0 * i[0] + i[1];
  });
  EXPECT_TENSOR_EQ(x, Iota({4, 5}));
  Tensor rows = slice_scatter(x, zeros({2, 5}, kFloat64), 0, -2, std::nullopt, 1);
  ExpectValues(rows, [](const Ints& i) { return i[0] >= 2 ? 0.0 : 5.0 * i[0] + i[1]; });
  // Empty slice: a plain copy.
  Tensor empty_src = zeros({0, 5}, kFloat64);
  Tensor same = slice_scatter(x, empty_src, 0, 4, std::nullopt, 1);
  EXPECT_TRUE(IsCopy(same, x));
  EXPECT_TENSOR_EQ(same, x);
  // Transposed self.
  Tensor b = Iota({5, 4});
  Tensor tr = Strided(b, {4, 5}, {1, 4}, 0);  // tr[i][j] = 4 j + i
  Tensor rt = slice_scatter(tr, zeros({4, 1}, kFloat64), 1, 4, 5, 1);
  ExpectValues(rt, [](const Ints& i) { return i[1] == 4 ? 0.0 : 4.0 * i[1] + i[0]; });
  EXPECT_FT_ERROR(slice_scatter(x, src, 1, 1, std::nullopt, 0), "slice: step must be positive");
  EXPECT_FT_ERROR(slice_scatter(x, zeros({4, 3}, kFloat64), 1, 1, std::nullopt, 2),
                  "slice_scatter: expected src to have a size equal to the slice of self. src "
                  "size = [4, 3], slice size = [4, 2]");
  EXPECT_FT_ERROR(slice_scatter(x, zeros({4, 2}), 1, 1, std::nullopt, 2),
                  "slice_scatter: expected src to have the same dtype as self");
}

TEST(ViewKernelScatterTest, DiagonalScatterWritesTheDiagonal) {
  Tensor z = zeros({3, 4}, kFloat64);
  Tensor r = diagonal_scatter(z, tensor({1.0, 2.0, 3.0}, {3}), 1, 0, 1);
  EXPECT_TRUE(IsCopy(r, z));
  ExpectValues(r, [](const Ints& i) { return i[1] == i[0] + 1 ? i[0] + 1.0 : 0.0; });
  Tensor below = diagonal_scatter(z, tensor({1.0, 2.0}, {2}), -1, 0, 1);
  ExpectValues(below, [](const Ints& i) { return i[0] == i[1] + 1 ? i[1] + 1.0 : 0.0; });
  // 3-D: diagonal over dims 0 and 2, the remaining dim first: r3[k][j][k] = src[j][k].
  Tensor src = FromDoubles({1, 2, 3, 4, 5, 6}, {3, 2}, kFloat64);
  Tensor r3 = diagonal_scatter(zeros({2, 3, 4}, kFloat64), src, 0, 0, 2);
  ExpectValues(r3, [](const Ints& i) { return i[0] == i[2] ? 2.0 * i[1] + i[0] + 1 : 0.0; });
  // Empty diagonal: a copy.
  EXPECT_TENSOR_EQ(diagonal_scatter(z, zeros({0}, kFloat64), 5, 0, 1), z);
  EXPECT_FT_ERROR(diagonal_scatter(z, zeros({3}, kFloat64), 0, 1, 1),
                  "diagonal: dim1 and dim2 cannot be the same dimension");
  EXPECT_FT_ERROR(diagonal_scatter(z, zeros({4}, kFloat64), 0, 0, 1),
                  "diagonal_scatter: expected src to have a size equal to the slice of self. "
                  "src size = [4], slice size = [3]");
  EXPECT_FT_ERROR(diagonal_scatter(z, zeros({3}, kInt64), 0, 0, 1),
                  "diagonal_scatter: expected src to have the same dtype as self");
}

}  // namespace
}  // namespace ft::kernels

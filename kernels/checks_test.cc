// The shared input checks of //kernels (kernels/checks.h): the dtype and in-place checks
// (CheckFloating, CheckWritable, CheckNotBool) on every dtype and on contiguous, transposed,
// broadcast (stride 0), rank-0 and size-0 tensors, and the window-argument helpers (PerDim,
// CheckPositive, CheckNonNegative, CheckInputRank, WindowRoom) on their boundaries. Oracles:
// the documented rules written out by hand, and for WindowRoom the formula evaluated in
// 128-bit arithmetic (which cannot overflow for int64 arguments).
#include "kernels/checks.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/factories.h"
#include "tensor/tensor.h"
#include "tests/test_util.h"

namespace ft::kernels::internal {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

const std::vector<DType> kAllDTypes = {kFloat32, kFloat64, kInt64, kBool};

// A [3] tensor whose one stored element is broadcast with stride 0 (an expanded view).
Tensor Broadcast3(DType dtype) {
  const Tensor one = zeros({1}, dtype);
  return MakeDense(one.storage(), dtype, {3}, {0}, 0);
}

// A [3, 2] view of a [2, 3] buffer with swapped strides (a transpose: no overlap).
Tensor Transposed(DType dtype) {
  const Tensor base = zeros({2, 3}, dtype);
  return MakeDense(base.storage(), dtype, {3, 2}, {1, 3}, 0);
}

// ---------------------------------------------------------------------------------------
// CheckFloating / CheckNotBool

TEST(CheckFloatingTest, AcceptsFloat32AndFloat64InAnyLayout) {
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    EXPECT_NO_THROW(CheckFloating("op", zeros({2, 3}, dtype)));
    EXPECT_NO_THROW(CheckFloating("op", zeros({}, dtype)));
    EXPECT_NO_THROW(CheckFloating("op", zeros({0, 4}, dtype)));
    EXPECT_NO_THROW(CheckFloating("op", Transposed(dtype)));
    EXPECT_NO_THROW(CheckFloating("op", Broadcast3(dtype)));
  }
}

TEST(CheckFloatingTest, RejectsInt64AndBoolNamingOpDtypeAndShape) {
  EXPECT_FT_ERROR(CheckFloating("digamma", zeros({3}, kInt64)),
                  "digamma: expected a floating point tensor (float32 or float64), got int64 of "
                  "shape [3]");
  EXPECT_FT_ERROR(CheckFloating("lgamma", zeros({2, 0}, kBool)),
                  "lgamma: expected a floating point tensor (float32 or float64), got bool of "
                  "shape [2, 0]");
  EXPECT_FT_ERROR(CheckFloating("erf", zeros({}, kInt64)),
                  "erf: expected a floating point "
                  "tensor (float32 or float64), got "
                  "int64 of shape []");
}

TEST(CheckNotBoolTest, AcceptsEveryDtypeButBool) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    SCOPED_TRACE(DTypeName(dtype));
    EXPECT_NO_THROW(CheckNotBool("op", zeros({2}, dtype)));
    EXPECT_NO_THROW(CheckNotBool("op", zeros({}, dtype)));
  }
}

TEST(CheckNotBoolTest, RejectsBoolNamingOpAndShape) {
  EXPECT_FT_ERROR(CheckNotBool("neg", zeros({2, 3}, kBool)),
                  "neg: not supported for bool tensors (shape [2, 3])");
  EXPECT_FT_ERROR(CheckNotBool("abs", zeros({}, kBool)),
                  "abs: not supported for bool tensors (shape [])");
  EXPECT_FT_ERROR(CheckNotBool("sign", zeros({0}, kBool)),
                  "sign: not supported for bool tensors (shape [0])");
  EXPECT_FT_ERROR(CheckNotBool("neg", Broadcast3(kBool)), "neg: not supported for bool");
}

// ---------------------------------------------------------------------------------------
// CheckWritable

TEST(CheckWritableTest, AcceptsTensorsWithoutOverlapInEveryDtype) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    EXPECT_NO_THROW(CheckWritable("add_", zeros({2, 3}, dtype)));
    EXPECT_NO_THROW(CheckWritable("add_", zeros({}, dtype)));
    EXPECT_NO_THROW(CheckWritable("add_", zeros({0, 3}, dtype)));
    EXPECT_NO_THROW(CheckWritable("add_", Transposed(dtype)));
    EXPECT_NO_THROW(CheckWritable("add_", testing::NonContiguousCopy(zeros({2, 3}, dtype))));
  }
}

TEST(CheckWritableTest, StrideZeroIsFineWhenTheDimHasAtMostOneElement) {
  const Tensor base = zeros({4});
  // Size 1 with stride 0 (what expand leaves for a kept size-1 dim): one element, no overlap.
  EXPECT_NO_THROW(CheckWritable("mul_", MakeDense(base.storage(), kFloat32, {1, 4}, {0, 1}, 0)));
  // Size 0 with stride 0: no element at all.
  EXPECT_NO_THROW(CheckWritable("mul_", MakeDense(base.storage(), kFloat32, {0, 4}, {0, 1}, 0)));
}

TEST(CheckWritableTest, RejectsABroadcastDimNamingOpShapeStridesAndDim) {
  EXPECT_FT_ERROR(CheckWritable("add_", Broadcast3(kFloat32)),
                  "add_: cannot write in place into a tensor whose elements overlap (shape [3], "
                  "strides [0]: dim 0 is broadcast); clone() it first");
  const Tensor base = zeros({4}, kInt64);
  // An inner broadcast dim after a normal one: the message names dim 1.
  EXPECT_FT_ERROR(
      CheckWritable("copy_", MakeDense(base.storage(), kInt64, {4, 2}, {1, 0}, 0)),
      "copy_: cannot write in place into a tensor whose elements overlap (shape [4, 2], "
      "strides [1, 0]: dim 1 is broadcast)");
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    EXPECT_FT_ERROR(CheckWritable("zero_", Broadcast3(dtype)), "zero_: cannot write in place");
  }
}

// ---------------------------------------------------------------------------------------
// PerDim

TEST(PerDimTest, KeepsOneValuePerDim) {
  const std::vector<int64_t> v = {3, 1, 2};
  EXPECT_EQ(PerDim("conv3d", "stride", v, 3), (Shape{3, 1, 2}));
  const std::vector<int64_t> one = {5};
  EXPECT_EQ(PerDim("conv1d", "padding", one, 1), (Shape{5}));
}

TEST(PerDimTest, RepeatsASingleValueForEveryDim) {
  const std::vector<int64_t> one = {4};
  EXPECT_EQ(PerDim("conv2d", "stride", one, 2), (Shape{4, 4}));
  EXPECT_EQ(PerDim("conv3d", "dilation", one, 3), (Shape{4, 4, 4}));
  const std::vector<int64_t> zero = {0};
  EXPECT_EQ(PerDim("max_pool2d", "padding", zero, 2), (Shape{0, 0}));
}

TEST(PerDimTest, RejectsAnyOtherCountNamingOpArgumentAndValues) {
  const std::vector<int64_t> two = {1, 2};
  EXPECT_FT_ERROR(PerDim("conv3d", "stride", two, 3),
                  "conv3d: stride must have 1 or 3 values, got [1, 2]");
  const std::vector<int64_t> three = {1, 2, 3};
  EXPECT_FT_ERROR(PerDim("conv2d", "kernel_size", three, 2),
                  "conv2d: kernel_size must have 1 or 2 values, got [1, 2, 3]");
  const std::vector<int64_t> none;
  EXPECT_FT_ERROR(PerDim("avg_pool1d", "padding", none, 1),
                  "avg_pool1d: padding must have 1 or 1 values, got []");
}

// ---------------------------------------------------------------------------------------
// CheckPositive / CheckNonNegative

TEST(CheckPositiveTest, AcceptsPositiveValuesAndAnEmptyList) {
  const std::vector<int64_t> v = {1, 2, kMax};
  EXPECT_NO_THROW(CheckPositive("conv2d", "stride", v));
  EXPECT_NO_THROW(CheckPositive("conv2d", "stride", {}));
}

TEST(CheckPositiveTest, RejectsZeroAndNegativeValuesInAnyPosition) {
  const std::vector<int64_t> zero_last = {2, 0};
  EXPECT_FT_ERROR(CheckPositive("conv2d", "stride", zero_last),
                  "conv2d: stride must be positive, got [2, 0]");
  const std::vector<int64_t> neg_first = {-1, 3};
  EXPECT_FT_ERROR(CheckPositive("max_pool2d", "dilation", neg_first),
                  "max_pool2d: dilation must be positive, got [-1, 3]");
  const std::vector<int64_t> int_min = {std::numeric_limits<int64_t>::min()};
  EXPECT_FT_ERROR(CheckPositive("unfold", "kernel_size", int_min),
                  "unfold: kernel_size must be positive");
}

TEST(CheckNonNegativeTest, AcceptsZeroAndPositiveValues) {
  const std::vector<int64_t> v = {0, 1, kMax};
  EXPECT_NO_THROW(CheckNonNegative("conv2d", "padding", v));
  EXPECT_NO_THROW(CheckNonNegative("conv2d", "padding", {}));
}

TEST(CheckNonNegativeTest, RejectsNegativeValues) {
  const std::vector<int64_t> v = {0, -2, 1};
  EXPECT_FT_ERROR(CheckNonNegative("avg_pool2d", "padding", v),
                  "avg_pool2d: padding must be non-negative, got [0, -2, 1]");
  const std::vector<int64_t> minus_one = {-1};
  EXPECT_FT_ERROR(CheckNonNegative("fold", "padding", minus_one),
                  "fold: padding must be non-negative, got [-1]");
}

// ---------------------------------------------------------------------------------------
// CheckInputRank

TEST(CheckInputRankTest, UnbatchedHasNPlusOneDimsBatchedNPlusTwo) {
  const std::vector<int64_t> unbatched1 = {3, 10};
  const std::vector<int64_t> batched1 = {2, 3, 10};
  EXPECT_FALSE(CheckInputRank("conv1d", 1, unbatched1));
  EXPECT_TRUE(CheckInputRank("conv1d", 1, batched1));
  const std::vector<int64_t> unbatched3 = {1, 4, 4, 4};
  const std::vector<int64_t> batched3 = {0, 1, 4, 4, 4};  // a size-0 batch is still batched
  EXPECT_FALSE(CheckInputRank("conv3d", 3, unbatched3));
  EXPECT_TRUE(CheckInputRank("conv3d", 3, batched3));
}

TEST(CheckInputRankTest, RejectsOtherRanksNamingOpAndShape) {
  const std::vector<int64_t> too_small = {5, 5};
  EXPECT_FT_ERROR(CheckInputRank("conv2d", 2, too_small),
                  "conv2d: expected a 3-D (unbatched) or 4-D (batched) input, got shape [5, 5]");
  const std::vector<int64_t> too_big = {1, 1, 1, 1, 1};
  EXPECT_FT_ERROR(CheckInputRank("max_pool2d", 2, too_big),
                  "max_pool2d: expected a 3-D (unbatched) or 4-D (batched) input, got shape "
                  "[1, 1, 1, 1, 1]");
  EXPECT_FT_ERROR(CheckInputRank("conv1d", 1, {}),
                  "conv1d: expected a 2-D (unbatched) or 3-D (batched) input, got shape []");
}

// ---------------------------------------------------------------------------------------
// WindowRoom

// The documented formula in 128-bit arithmetic; nullopt when an intermediate (the dilated
// extent d * (k - 1) or the padded size in + 2 * p) exceeds int64.
std::optional<int64_t> RoomOracle(int64_t in, int64_t k, int64_t p, int64_t d) {
  const __int128 extent = static_cast<__int128>(d) * (k - 1);
  const __int128 padded = static_cast<__int128>(in) + 2 * static_cast<__int128>(p);
  if (extent > kMax || padded > kMax) return std::nullopt;
  return static_cast<int64_t>(padded - 1 - extent);
}

TEST(WindowRoomTest, SmallArgumentsFollowTheFormula) {
  // Hand-worked: a 3-wide window on 5 elements leaves 2; padding 1 adds 2; dilation 2
  // stretches the window to 5 elements.
  EXPECT_EQ(WindowRoom("conv1d", 5, 3, 0, 1), 2);
  EXPECT_EQ(WindowRoom("conv1d", 5, 3, 1, 1), 4);
  EXPECT_EQ(WindowRoom("conv1d", 5, 3, 0, 2), 0);
  EXPECT_EQ(WindowRoom("conv1d", 1, 1, 0, 1), 0);   // one element, one window
  EXPECT_EQ(WindowRoom("conv1d", 0, 1, 0, 1), -1);  // an empty dim fits no window
  EXPECT_EQ(WindowRoom("conv1d", 2, 5, 0, 1), -3);  // the window is wider than the dim
  EXPECT_EQ(WindowRoom("conv1d", 0, 2, 1, 1), 0);   // padding alone holds the window
  for (int64_t in : {0, 1, 2, 7, 31}) {
    for (int64_t k : {1, 2, 3, 8}) {
      for (int64_t p : {0, 1, 4}) {
        for (int64_t d : {1, 2, 5}) {
          SCOPED_TRACE(::testing::Message() << in << " " << k << " " << p << " " << d);
          EXPECT_EQ(WindowRoom("conv2d", in, k, p, d), *RoomOracle(in, k, p, d));
        }
      }
    }
  }
}

TEST(WindowRoomTest, LargeArgumentsThatFitAreExact) {
  EXPECT_EQ(WindowRoom("conv1d", kMax, 1, 0, 1), kMax - 1);
  EXPECT_EQ(WindowRoom("conv1d", 1, kMax, 0, 1), 1 - kMax);
  EXPECT_EQ(WindowRoom("conv1d", 0, 2, (kMax - 1) / 2, 1), *RoomOracle(0, 2, (kMax - 1) / 2, 1));
  EXPECT_EQ(WindowRoom("conv1d", 3, 2, 0, kMax), *RoomOracle(3, 2, 0, kMax));
  EXPECT_EQ(WindowRoom("conv1d", kMax, kMax, 0, 1), 0);
}

TEST(WindowRoomTest, OverflowThrowsNamingOpAndArguments) {
  // The dilated extent d * (k - 1) overflows.
  EXPECT_FT_ERROR(WindowRoom("conv2d", 4, 3, 0, kMax),
                  "conv2d: kernel size 3 with dilation " + std::to_string(kMax) +
                      " and padding 0 on a dim of size 4 overflows int64");
  // 2 * p overflows.
  EXPECT_FT_ERROR(WindowRoom("max_pool1d", 4, 1, kMax / 2 + 1, 1), "max_pool1d: kernel size 1");
  // in + 2 * p overflows.
  EXPECT_FT_ERROR(WindowRoom("unfold", kMax, 1, 1, 1),
                  "unfold: kernel size 1 with dilation 1 "
                  "and padding 1 on a dim of size");
  // The oracle agrees on which of a sweep of large arguments overflow.
  const std::vector<int64_t> big = {0, 1, 2, kMax / 4, kMax / 2, kMax / 2 + 1, kMax - 1, kMax};
  for (int64_t in : big) {
    for (int64_t p : big) {
      for (int64_t k : {int64_t{1}, int64_t{2}, kMax / 2, kMax}) {
        for (int64_t d : {int64_t{1}, int64_t{2}, kMax}) {
          SCOPED_TRACE(::testing::Message() << in << " " << k << " " << p << " " << d);
          const std::optional<int64_t> want = RoomOracle(in, k, p, d);
          if (want) {
            EXPECT_EQ(WindowRoom("conv1d", in, k, p, d), *want);
          } else {
            EXPECT_FT_ERROR(WindowRoom("conv1d", in, k, p, d), "conv1d: kernel size");
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace ft::kernels::internal

// Tests for tensor/shape.h: dim wrapping, broadcasting, strides and contiguity.
#include "tensor/shape.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace ft {
namespace {

Shape S(std::initializer_list<int64_t> v) { return Shape(v); }

TEST(Shape, ShapeToString) {
  EXPECT_EQ(ShapeToString({}), "[]");
  EXPECT_EQ(ShapeToString({5}), "[5]");
  EXPECT_EQ(ShapeToString({2, 0, 3}), "[2, 0, 3]");
  EXPECT_EQ(ShapeToString({-1, 2}), "[-1, 2]");
}

TEST(Shape, Numel) {
  EXPECT_EQ(Numel({}), 1);
  EXPECT_EQ(Numel({7}), 7);
  EXPECT_EQ(Numel({2, 3, 4}), 24);
  EXPECT_EQ(Numel({2, 0, 4}), 0);
  EXPECT_EQ(Numel({1, 1, 1}), 1);
}

TEST(Shape, ContiguousStrides) {
  EXPECT_EQ(ContiguousStrides({}), S({}));
  EXPECT_EQ(ContiguousStrides({5}), S({1}));
  EXPECT_EQ(ContiguousStrides({2, 3, 4}), S({12, 4, 1}));
  EXPECT_EQ(ContiguousStrides({4, 1, 3}), S({3, 3, 1}));
  // Size-0 dims count as 1 (torch.empty(2, 0, 3).stride() == (3, 3, 1)).
  EXPECT_EQ(ContiguousStrides({2, 0, 3}), S({3, 3, 1}));
  EXPECT_EQ(ContiguousStrides({0, 2}), S({2, 1}));
}

TEST(Shape, SaturatingMul) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(SaturatingMul(6, 7), 42);
  EXPECT_EQ(SaturatingMul(-6, 7), -42);
  EXPECT_EQ(SaturatingMul(int64_t{1} << 40, 0), 0);
  EXPECT_EQ(SaturatingMul(int64_t{1} << 40, int64_t{1} << 40), kMax);
  EXPECT_EQ(SaturatingMul(kMax, 1), kMax);
  EXPECT_EQ(SaturatingMul(kMax, 0), 0);  // a zero after saturating still gives 0
}

// WriteContiguousStrides (the tensor constructors' one-pass version) agrees with
// ContiguousStrides and Numel everywhere, the saturating corner cases included.
TEST(Shape, WriteContiguousStridesMatchesContiguousStridesAndNumel) {
  const int64_t big = int64_t{1} << 62;
  const std::vector<Shape> shapes = {
      {},        {1},          {5},          {2, 3},          {3, 1, 4},
      {0},       {2, 0, 3},    {big, 0, big}, {big, 4},       {4, big},
      {big, big}, {1, 2, 3, 4, 5, 6, 7, 8},   {7, 1, 1, 1, 1, 1, 1},
  };
  for (const Shape& shape : shapes) {
    Shape strides(shape.size(), -1);
    const int64_t numel = WriteContiguousStrides(shape, strides.data());
    EXPECT_EQ(strides, ContiguousStrides(shape)) << ShapeToString(shape);
    EXPECT_EQ(numel, Numel(shape)) << ShapeToString(shape);
  }
}

TEST(Shape, IsContiguous) {
  EXPECT_TRUE(IsContiguous({}, {}));
  EXPECT_TRUE(IsContiguous({2, 3}, {3, 1}));
  EXPECT_TRUE(IsContiguous({2, 3, 4}, {12, 4, 1}));
  EXPECT_FALSE(IsContiguous({2, 3}, {1, 2}));  // transposed
  EXPECT_FALSE(IsContiguous({2, 3}, {4, 1}));  // padded rows
  EXPECT_FALSE(IsContiguous({3}, {2}));        // every other element
  EXPECT_FALSE(IsContiguous({3}, {0}));        // broadcast
  EXPECT_FALSE(IsContiguous({2, 3}, {0, 1}));  // expanded rows
  // Size-1 dims may carry any stride.
  EXPECT_TRUE(IsContiguous({2, 1, 3}, {3, 99, 1}));
  EXPECT_TRUE(IsContiguous({1, 1}, {7, 5}));
  EXPECT_TRUE(IsContiguous({1, 3}, {0, 1}));
  EXPECT_TRUE(IsContiguous({3, 1}, {1, -4}));
  EXPECT_TRUE(IsContiguous({1}, {0}));
  // Tensors without elements are contiguous whatever the strides, wherever the 0 is.
  EXPECT_TRUE(IsContiguous({0}, {5}));
  EXPECT_TRUE(IsContiguous({3, 0}, {1, 1}));
  EXPECT_TRUE(IsContiguous({0, 3}, {3, 2}));
  EXPECT_TRUE(IsContiguous({2, 0, 3}, {1, 1, 7}));
}

TEST(Shape, WrapDim) {
  EXPECT_EQ(WrapDim("sum", 0, 3), 0);
  EXPECT_EQ(WrapDim("sum", 2, 3), 2);
  EXPECT_EQ(WrapDim("sum", -1, 3), 2);
  EXPECT_EQ(WrapDim("sum", -3, 3), 0);
  // Rank 0 accepts -1 and 0 (PyTorch's scalar rule).
  EXPECT_EQ(WrapDim("sum", 0, 0), 0);
  EXPECT_EQ(WrapDim("sum", -1, 0), 0);
}

TEST(Shape, WrapDimErrors) {
  EXPECT_FT_ERROR(WrapDim("sum", 3, 2),
                  "sum: dim 3 is out of range for a tensor of rank 2 (expected a dim in [-2, 1])");
  EXPECT_FT_ERROR(WrapDim("sum", 2, 2),
                  "sum: dim 2 is out of range for a tensor of rank 2 (expected a dim in [-2, 1])");
  EXPECT_FT_ERROR(
      WrapDim("mean", -3, 2),
      "mean: dim -3 is out of range for a tensor of rank 2 (expected a dim in [-2, 1])");
  EXPECT_FT_ERROR(WrapDim("sum", 1, 0),
                  "sum: dim 1 is out of range for a tensor of rank 0 (expected a dim in [-1, 0])");
  EXPECT_FT_ERROR(WrapDim("sum", -2, 0), "sum: dim -2 is out of range for a tensor of rank 0");
}

TEST(Shape, WrapDims) {
  EXPECT_EQ(WrapDims("sum", {0, -1}, 3, false), S({0, 2}));
  EXPECT_EQ(WrapDims("sum", {-1, 0}, 3, false), S({2, 0}));  // order kept
  EXPECT_EQ(WrapDims("sum", {}, 3, true), S({0, 1, 2}));
  EXPECT_EQ(WrapDims("sum", {}, 3, false), S({}));
  EXPECT_EQ(WrapDims("sum", {}, 0, true), S({}));
  // Rank 0: dim 0 / -1 name the absent only dim, so nothing is left to reduce.
  EXPECT_EQ(WrapDims("sum", {0}, 0, false), S({}));
  EXPECT_EQ(WrapDims("sum", {-1}, 0, false), S({}));
}

TEST(Shape, WrapDimsErrors) {
  EXPECT_FT_ERROR(WrapDims("sum", {1, -2}, 3, false),
                  "sum: dim 1 appears more than once in the dim list [1, -2]");
  EXPECT_FT_ERROR(WrapDims("sum", {0, 0}, 2, true),
                  "sum: dim 0 appears more than once in the dim list [0, 0]");
  EXPECT_FT_ERROR(WrapDims("sum", {0, -1}, 0, false),
                  "sum: dim 0 appears more than once in the dim list [0, -1]");
  EXPECT_FT_ERROR(WrapDims("amax", {0, 3}, 3, false),
                  "amax: dim 3 is out of range for a tensor of rank 3");
}

TEST(Shape, IsExpandableTo) {
  EXPECT_TRUE(IsExpandableTo({3}, {2, 3}));
  EXPECT_TRUE(IsExpandableTo({1, 3}, {4, 3}));
  EXPECT_TRUE(IsExpandableTo({}, {2, 3}));
  EXPECT_TRUE(IsExpandableTo({2, 3}, {2, 3}));
  EXPECT_FALSE(IsExpandableTo({2}, {2, 3}));        // trailing dims must line up
  EXPECT_FALSE(IsExpandableTo({2, 3}, {3}));        // more dims than the target
  EXPECT_FALSE(IsExpandableTo({4, 3}, {1, 3}));     // the target is not changed
}

TEST(Shape, BroadcastShapes) {
  EXPECT_EQ(BroadcastShapes("add", {2, 1, 3}, {4, 3}), S({2, 4, 3}));
  EXPECT_EQ(BroadcastShapes("add", {4, 3}, {2, 1, 3}), S({2, 4, 3}));
  EXPECT_EQ(BroadcastShapes("add", {}, {2, 3}), S({2, 3}));
  EXPECT_EQ(BroadcastShapes("add", {}, {}), S({}));
  EXPECT_EQ(BroadcastShapes("add", {5, 1}, {1, 6}), S({5, 6}));
  EXPECT_EQ(BroadcastShapes("add", {2, 3}, {2, 3}), S({2, 3}));
  // Size 0 broadcasts like any size against 1.
  EXPECT_EQ(BroadcastShapes("add", {0}, {1}), S({0}));
  EXPECT_EQ(BroadcastShapes("add", {1, 0}, {5, 1}), S({5, 0}));
  EXPECT_EQ(BroadcastShapes("add", {0, 3}, {3}), S({0, 3}));
}

TEST(Shape, BroadcastShapesErrors) {
  EXPECT_FT_ERROR(BroadcastShapes("add", {2, 3}, {3, 2}),
                  "add: shapes [2, 3] and [3, 2] cannot be broadcast together (dim 0 of the "
                  "broadcast shape: 2 vs 3)");
  EXPECT_FT_ERROR(BroadcastShapes("mul", {2, 3}, {4}),
                  "mul: shapes [2, 3] and [4] cannot be broadcast together (dim 1 of the "
                  "broadcast shape: 3 vs 4)");
  EXPECT_FT_ERROR(BroadcastShapes("add", {0}, {3}), "add: shapes [0] and [3] cannot be broadcast");
}

TEST(Shape, CheckShapeValid) {
  CheckShapeValid("zeros", {});
  CheckShapeValid("zeros", {0, 2});
  CheckShapeValid("zeros", {3, 4});
  EXPECT_FT_ERROR(CheckShapeValid("zeros", {2, -1}), "zeros: negative size in shape [2, -1]");
  EXPECT_FT_ERROR(CheckShapeValid("view", {-3}), "view: negative size in shape [-3]");
}

}  // namespace
}  // namespace ft

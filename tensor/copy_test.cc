// Tests for tensor/copy.h: the strided casting copy (every dtype pair, broadcasting,
// non-contiguous source and destination), contiguous, clone and to.
#include "tensor/copy.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using kernels::clone;
using kernels::contiguous;
using kernels::copy_into;

// Values every dtype can hold exactly, as each source dtype.
Tensor SourceOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return tensor({-2.75f, -0.5f, -0.0f, 0.0f, 0.5f, 2.75f, 3.0f});
    case DType::kFloat64:
      return tensor({-2.75, -0.5, -0.0, 0.0, 0.5, 2.75, 3.0});
    case DType::kInt64:
      return tensor(std::vector<int64_t>{-3, -1, 0, 0, 1, 2, 5});
    default:
      break;
  }
  return tensor(std::vector<bool>{true, false, true, false, false, true, true});
}

// The converted values, written out by hand for each (source, destination) pair.
std::vector<double> Expected(DType from, DType to) {
  if (from == kBool) return {1, 0, 1, 0, 0, 1, 1};  // true -> 1 in every dtype
  if (to == kBool) {
    if (from == kInt64) return {1, 1, 0, 0, 1, 1, 1};
    return {1, 1, 0, 0, 1, 1, 1};  // nonzero -> true; -0.0 is zero
  }
  if (from == kInt64) return {-3, -1, 0, 0, 1, 2, 5};
  if (to == kInt64) return {-2, 0, 0, 0, 0, 2, 3};  // truncation toward zero
  return {-2.75, -0.5, -0.0, 0.0, 0.5, 2.75, 3.0};
}

Tensor Expect(const std::vector<double>& values, DType dtype) {
  Tensor t = EmptyContiguous({static_cast<int64_t>(values.size())}, dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = static_cast<T>(values[i]);
  });
  return t;
}

const DType kAll[] = {kFloat32, kFloat64, kInt64, kBool};

TEST(CopyInto, EveryDTypePair) {
  for (DType from : kAll) {
    for (DType to : kAll) {
      SCOPED_TRACE(std::string(DTypeName(from)) + " -> " + DTypeName(to));
      Tensor dst = zeros({7}, to);
      copy_into(dst, SourceOf(from));
      EXPECT_TENSOR_EQ(dst, Expect(Expected(from, to), to));
    }
  }
}

TEST(CopyInto, NegativeZeroKeepsItsSign) {
  Tensor dst = zeros({1}, kFloat64);
  copy_into(dst, tensor({-0.0f}));
  EXPECT_TRUE(std::signbit(dst.item<double>()));
}

TEST(CopyInto, LongRunsMatchScalarConversion) {
  // Lengths that are not a multiple of any vector width exercise vectorized bodies and tails.
  for (int64_t n : {1, 5, 17, 67, 1001}) {
    std::vector<float> src(n);
    for (int64_t i = 0; i < n; ++i) src[i] = static_cast<float>((i % 13) - 6) * 0.7f;
    Tensor s = tensor(src);
    Tensor as_int = zeros({n}, kInt64);
    Tensor as_double = zeros({n}, kFloat64);
    Tensor as_bool = zeros({n}, kBool);
    copy_into(as_int, s);
    copy_into(as_double, s);
    copy_into(as_bool, s);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(as_int.data<int64_t>()[i], static_cast<int64_t>(std::trunc(src[i]))) << i;
      ASSERT_EQ(as_double.data<double>()[i], static_cast<double>(src[i])) << i;
      ASSERT_EQ(as_bool.data<bool>()[i], src[i] != 0.0f) << i;
    }
  }
}

TEST(CopyInto, Float64ToFloat32Rounds) {
  Tensor dst = zeros({3}, kFloat32);
  copy_into(dst, tensor({0.1, 1.0 / 3.0, 1e10}));
  EXPECT_EQ(dst.to_vector<float>(), (std::vector<float>{0.1f, 1.0f / 3.0f, 1e10f}));
}

// Floating values int64 cannot hold (NaN, infinities, out of range) convert to INT64_MIN,
// PyTorch's CPU result, in every path that converts an element: a casting copy, item(),
// to_vector(), a Scalar. (Undefined behavior in C++; UBSan's float-cast-overflow check
// stays quiet.) Representable values truncate toward zero; to bool, NaN is true.
TEST(CopyInto, FloatToIntegerIsDefinedForEveryValue) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {nan,     inf,      -inf, 1e30, -1e30,
                                      0x1p63, -0x1p63, 2.7,  -2.7, 0.0};
  // -2^63 itself is representable (in float32 too).
  const std::vector<int64_t> expected = {kMin, kMin, kMin, kMin, kMin, kMin, kMin, 2, -2, 0};
  // 7 copies: long enough for the vectorized loops and their tails.
  std::vector<double> many;
  for (int r = 0; r < 7; ++r) many.insert(many.end(), values.begin(), values.end());
  for (DType from : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(from));
    const Tensor src = kernels::to(tensor(many), from);
    const std::vector<int64_t> got = kernels::to(src, kInt64).to_vector<int64_t>();
    const std::vector<int64_t> read = src.to_vector<int64_t>();  // the element-read path
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], expected[i % values.size()]) << "element " << i;
      ASSERT_EQ(read[i], expected[i % values.size()]) << "element " << i;
    }
    EXPECT_EQ(kernels::to(tensor(std::vector<double>{nan}), from).item<int64_t>(), kMin);
    const std::vector<bool> truth = kernels::to(src, kBool).to_vector<bool>();
    EXPECT_TRUE(truth[0]);   // NaN is not zero
    EXPECT_FALSE(truth[9]);  // 0.0
  }
  EXPECT_EQ(Scalar(nan).to<int64_t>(), kMin);
  EXPECT_EQ(Scalar(-inf).to<int64_t>(), kMin);
  EXPECT_EQ(Scalar(-2.7).to<int64_t>(), -2);
  EXPECT_TRUE(Scalar(nan).to<bool>());
}

TEST(CopyInto, Broadcasting) {
  Tensor dst = zeros({2, 3});
  copy_into(dst, tensor({1.0f, 2.0f, 3.0f}));  // a row to every row
  EXPECT_TENSOR_EQ(dst, tensor({1.0f, 2.0f, 3.0f, 1.0f, 2.0f, 3.0f}, {2, 3}));
  copy_into(dst, tensor({4.0f, 5.0f}, {2, 1}));  // a column to every column
  EXPECT_TENSOR_EQ(dst, tensor({4.0f, 4.0f, 4.0f, 5.0f, 5.0f, 5.0f}, {2, 3}));
  copy_into(dst, tensor({7.0f}, {1, 3 - 2}));  // [1, 1]
  EXPECT_TENSOR_EQ(dst, full({2, 3}, 7.0f));
  copy_into(dst, scalar_tensor(int64_t{9}));  // rank 0, int64 -> float32
  EXPECT_TENSOR_EQ(dst, full({2, 3}, 9.0f));
  copy_into(dst, tensor({1.0, 2.0, 3.0}, {1, 3}));  // leading size-1 dim, float64
  EXPECT_TENSOR_EQ(dst, tensor({1.0f, 2.0f, 3.0f, 1.0f, 2.0f, 3.0f}, {2, 3}));
  // 3-D destination from a [2, 1] source.
  Tensor d3 = zeros({2, 2, 2}, kInt64);
  copy_into(d3, tensor(std::vector<int64_t>{1, 2}, {2, 1}));
  EXPECT_TENSOR_EQ(d3, tensor(std::vector<int64_t>{1, 1, 2, 2, 1, 1, 2, 2}, {2, 2, 2}));
}

TEST(CopyInto, RankZero) {
  Tensor s = zeros({});
  copy_into(s, scalar_tensor(3.5, kFloat64));
  EXPECT_EQ(s.item<float>(), 3.5f);
  // [1] broadcasts to [1], not to [] (like Tensor.copy_).
  EXPECT_FT_ERROR(copy_into(s, tensor({1.0f})),
                  "copy_: source of shape [1] cannot be broadcast to the destination shape []");
}

TEST(CopyInto, BroadcastErrors) {
  Tensor dst = zeros({2, 3});
  EXPECT_FT_ERROR(copy_into(dst, zeros({2})),
                  "copy_: shapes [2, 3] and [2] cannot be broadcast together");
  EXPECT_FT_ERROR(copy_into(dst, zeros({2, 2, 3})),
                  "copy_: source of shape [2, 2, 3] cannot be broadcast to the destination shape "
                  "[2, 3]");
  EXPECT_FT_ERROR(copy_into(zeros({1}), zeros({3})),
                  "copy_: source of shape [3] cannot be broadcast to the destination shape [1]");
  // A size-0 destination still validates the source (3 values cannot go into 0 slots).
  EXPECT_FT_ERROR(copy_into(zeros({0}), zeros({3})),
                  "copy_: shapes [0] and [3] cannot be broadcast together");
  EXPECT_FT_ERROR(copy_into(zeros({3}), zeros({0})),
                  "copy_: shapes [3] and [0] cannot be broadcast together");
  // Nothing was written by the failed calls.
  EXPECT_TENSOR_EQ(dst, zeros({2, 3}));
}

TEST(CopyInto, EmptyDestinationWithCompatibleSource) {
  copy_into(zeros({0}), zeros({1}));
  copy_into(zeros({2, 0}), zeros({0}));
  copy_into(zeros({0, 3}), tensor({1.0f, 2.0f, 3.0f}));
}

TEST(CopyInto, NonContiguousSources) {
  const Tensor expected = tensor({0.0f, 3.0f, 1.0f, 4.0f, 2.0f, 5.0f}, {3, 2});
  // Transposed view of [[0, 1, 2], [3, 4, 5]].
  Tensor base = tensor({0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f}, {2, 3});
  Tensor transposed = MakeDense(base.storage(), kFloat32, {3, 2}, {1, 3}, 0);
  Tensor dst = zeros({3, 2}, kFloat64);
  copy_into(dst, transposed);
  EXPECT_TENSOR_EQ(dst, tensor({0.0, 3.0, 1.0, 4.0, 2.0, 5.0}, {3, 2}));
  // Stride-2 copy (testing::NonContiguousCopy) of the same values.
  Tensor strided = testing::NonContiguousCopy(expected);
  EXPECT_FALSE(strided.is_contiguous());
  Tensor dst2 = zeros({3, 2});
  copy_into(dst2, strided);
  EXPECT_TENSOR_EQ(dst2, expected);
  // Stride-0 (expanded) source with an offset: the element at storage index 4, repeated.
  Tensor expanded = MakeDense(base.storage(), kFloat32, {3, 2}, {0, 0}, 4);
  copy_into(dst2, expanded);
  EXPECT_TENSOR_EQ(dst2, full({3, 2}, 4.0f));
  // Offset view with stride 2: [[1, 3], [1, 3]] via an expanded outer dim.
  Tensor off = MakeDense(base.storage(), kFloat32, {3, 2}, {0, 2}, 1);
  copy_into(dst2, off);
  EXPECT_TENSOR_EQ(dst2, tensor({1.0f, 3.0f, 1.0f, 3.0f, 1.0f, 3.0f}, {3, 2}));
}

TEST(CopyInto, NonContiguousDestinations) {
  // Write into the transposed view of a [2, 3] buffer and inspect the buffer.
  Tensor buffer = zeros({2, 3}, kInt64);
  Tensor dst = MakeDense(buffer.storage(), kInt64, {3, 2}, {1, 3}, 0);
  copy_into(dst, tensor({0.0f, 3.0f, 1.0f, 4.0f, 2.0f, 5.0f}, {3, 2}));
  EXPECT_TENSOR_EQ(buffer, tensor(std::vector<int64_t>{0, 1, 2, 3, 4, 5}, {2, 3}));
  // Every other element of a buffer of sentinels: the skipped ones stay untouched.
  Tensor sentinel = full({8}, -1.0, kFloat64);
  Tensor every_other = MakeDense(sentinel.storage(), kFloat64, {2, 2}, {4, 2}, 1);
  copy_into(every_other, tensor({1.0, 2.0}, {1, 2}));
  EXPECT_TENSOR_EQ(sentinel, tensor({-1.0, 1.0, -1.0, 2.0, -1.0, 1.0, -1.0, 2.0}));
  // Both sides non-contiguous, 3-D, with broadcasting of a transposed source.
  Tensor big = zeros({2, 3, 4});
  Tensor perm = MakeDense(big.storage(), kFloat32, {4, 3, 2}, {1, 4, 12}, 0);  // big^T
  Tensor src_base = tensor({10.0f, 20.0f, 30.0f, 40.0f}, {1, 4});
  Tensor src = MakeDense(src_base.storage(), kFloat32, {4, 1, 1}, {1, 1, 1}, 0);
  copy_into(perm, src);  // perm[i, j, k] = 10 * (i + 1)  ->  big[k, j, i] = 10 * (i + 1)
  std::vector<float> want;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 4; ++i) want.push_back(10.0f * (i + 1));
  EXPECT_EQ(big.to_vector<float>(), want);
}

TEST(CopyInto, DoesNotBumpTheVersion) {
  Tensor dst = zeros({3});
  copy_into(dst, tensor({1.0f, 2.0f, 3.0f}));
  EXPECT_EQ(dst.version(), 0);
}

TEST(Contiguous, ReturnsTheSameObjectWhenContiguous) {
  Tensor t = tensor({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2});
  EXPECT_TRUE(contiguous(t).is_same(t));
  Tensor s = scalar_tensor(1.5);
  EXPECT_TRUE(contiguous(s).is_same(s));
  // Size-1 dims with odd strides and size-0 tensors count as contiguous.
  Tensor odd = MakeDense(t.storage(), kFloat32, {1, 2}, {7, 1}, 2);
  EXPECT_TRUE(contiguous(odd).is_same(odd));
  Tensor empty = MakeDense(t.storage(), kFloat32, {0, 2}, {1, 5}, 0);
  EXPECT_TRUE(contiguous(empty).is_same(empty));
}

TEST(Contiguous, CopiesNonContiguousTensors) {
  Tensor base = tensor({0.0, 1.0, 2.0, 3.0, 4.0, 5.0}, {2, 3});
  Tensor t = MakeDense(base.storage(), kFloat64, {3, 2}, {1, 3}, 0);
  Tensor c = contiguous(t);
  EXPECT_FALSE(c.is_same(t));
  EXPECT_FALSE(c.storage().is_same(base.storage()));
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(Shape(c.strides().begin(), c.strides().end()), Shape({2, 1}));
  EXPECT_TENSOR_EQ(c, tensor({0.0, 3.0, 1.0, 4.0, 2.0, 5.0}, {3, 2}));
  Tensor strided = testing::NonContiguousCopy(tensor(std::vector<bool>{true, false, true}));
  EXPECT_TENSOR_EQ(contiguous(strided), tensor(std::vector<bool>{true, false, true}));
  Tensor expanded = MakeDense(base.storage(), kFloat64, {2, 2}, {0, 1}, 1);
  EXPECT_TENSOR_EQ(contiguous(expanded), tensor({1.0, 2.0, 1.0, 2.0}, {2, 2}));
}

TEST(Clone, NeverAliases) {
  for (DType dtype : kAll) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor t = SourceOf(dtype);
    Tensor c = clone(t);
    EXPECT_FALSE(c.is_same(t));
    EXPECT_FALSE(c.storage().is_same(t.storage()));
    EXPECT_TENSOR_EQ(c, t);
  }
  // Writing into the clone leaves the original alone.
  Tensor t = tensor({1.0f, 2.0f});
  Tensor c = clone(t);
  c.data<float>()[0] = 100.0f;
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1.0f, 2.0f}));
  // Rank 0, empty, and a non-contiguous source.
  EXPECT_TENSOR_EQ(clone(scalar_tensor(2.5)), scalar_tensor(2.5));
  Tensor e = clone(zeros({2, 0}));
  EXPECT_EQ(Shape(e.sizes().begin(), e.sizes().end()), Shape({2, 0}));
  Tensor base = tensor({0.0f, 1.0f, 2.0f, 3.0f}, {2, 2});
  Tensor tr = MakeDense(base.storage(), kFloat32, {2, 2}, {1, 2}, 0);
  Tensor ct = clone(tr);
  EXPECT_TRUE(ct.is_contiguous());
  EXPECT_TENSOR_EQ(ct, tensor({0.0f, 2.0f, 1.0f, 3.0f}, {2, 2}));
}

TEST(To, SameObjectWhenTheDTypeMatches) {
  for (DType dtype : kAll) {
    Tensor t = SourceOf(dtype);
    EXPECT_TRUE(kernels::to(t, dtype).is_same(t));
  }
  // Even a non-contiguous tensor is returned as is.
  Tensor base = tensor({0.0f, 1.0f, 2.0f, 3.0f}, {2, 2});
  Tensor tr = MakeDense(base.storage(), kFloat32, {2, 2}, {1, 2}, 0);
  EXPECT_TRUE(kernels::to(tr, kFloat32).is_same(tr));
}

TEST(To, ConvertsIntoANewContiguousTensor) {
  for (DType from : kAll) {
    for (DType to : kAll) {
      if (from == to) continue;
      SCOPED_TRACE(std::string(DTypeName(from)) + " -> " + DTypeName(to));
      Tensor src = SourceOf(from);
      Tensor r = kernels::to(src, to);
      EXPECT_FALSE(r.storage().is_same(src.storage()));
      EXPECT_TENSOR_EQ(r, Expect(Expected(from, to), to));
    }
  }
  Tensor base = tensor({0.5f, 1.5f, 2.5f, 3.5f}, {2, 2});
  Tensor tr = MakeDense(base.storage(), kFloat32, {2, 2}, {1, 2}, 0);
  Tensor r = kernels::to(tr, kInt64);
  EXPECT_TRUE(r.is_contiguous());
  EXPECT_TENSOR_EQ(r, tensor(std::vector<int64_t>{0, 2, 1, 3}, {2, 2}));
}

}  // namespace
}  // namespace ft

// Tests for tensor/scalar_check.h: c10's overflow rule for a scalar filling a tensor, case by
// case against what torch 1.13's torch.full_like answers (comments give the torch call).
#include "tensor/scalar_check.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace ft {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ScalarOverflows, Integers) {
  EXPECT_TRUE(ScalarOverflows(300, kInt8));  // value cannot be converted to type int8_t
  EXPECT_FALSE(ScalarOverflows(127, kInt8));
  EXPECT_FALSE(ScalarOverflows(-128, kInt8));
  EXPECT_TRUE(ScalarOverflows(-129, kInt8));
  EXPECT_FALSE(ScalarOverflows(-1, kUInt8));  // fills 255: a - b may mean a + 255 * b
  EXPECT_FALSE(ScalarOverflows(-255, kUInt8));
  EXPECT_TRUE(ScalarOverflows(-256, kUInt8));
  EXPECT_TRUE(ScalarOverflows(256, kUInt8));
  EXPECT_TRUE(ScalarOverflows(int64_t{1} << 31, kInt32));
  EXPECT_FALSE(ScalarOverflows(-(int64_t{1} << 31), kInt32));
  EXPECT_FALSE(ScalarOverflows(std::numeric_limits<int64_t>::min(), kInt64));
  EXPECT_TRUE(ScalarOverflows(70000, kFloat16));
  EXPECT_FALSE(ScalarOverflows(65504, kFloat16));
  EXPECT_FALSE(ScalarOverflows(std::numeric_limits<int64_t>::max(), kFloat32));
  EXPECT_FALSE(ScalarOverflows(2, kBool));  // True
}

TEST(ScalarOverflows, Floating) {
  EXPECT_TRUE(ScalarOverflows(127.9, kInt8));  // compared before truncation
  EXPECT_FALSE(ScalarOverflows(127.0, kInt8));
  EXPECT_TRUE(ScalarOverflows(255.5, kUInt8));
  EXPECT_TRUE(ScalarOverflows(-0.5, kUInt8));  // the negative wrap is for integers only
  EXPECT_TRUE(ScalarOverflows(std::nan(""), kInt16));
  EXPECT_TRUE(ScalarOverflows(kInf, kInt64));
  EXPECT_TRUE(ScalarOverflows(0x1p63, kInt64));
  EXPECT_FALSE(ScalarOverflows(-0x1p63, kInt64));
  EXPECT_TRUE(ScalarOverflows(1e5, kFloat16));
  EXPECT_TRUE(ScalarOverflows(65519.0, kFloat16));  // would round to 65504: still refused
  EXPECT_FALSE(ScalarOverflows(65504.0, kFloat16));
  EXPECT_TRUE(ScalarOverflows(1e39, kBFloat16));
  EXPECT_TRUE(ScalarOverflows(1e39, kFloat32));
  EXPECT_FALSE(ScalarOverflows(1e39, kFloat64));
  EXPECT_FALSE(ScalarOverflows(kInf, kFloat16));
  EXPECT_FALSE(ScalarOverflows(-kInf, kBFloat16));
  EXPECT_FALSE(ScalarOverflows(std::nan(""), kFloat32));
  EXPECT_FALSE(ScalarOverflows(2.5, kBool));
}

TEST(ScalarOverflows, Complex) {
  EXPECT_TRUE(ScalarOverflows(1e39, kComplex64));
  EXPECT_FALSE(ScalarOverflows(1e39, kComplex128));
  EXPECT_TRUE(ScalarOverflows(std::complex<double>(0, 1e39), kComplex64));
  EXPECT_FALSE(ScalarOverflows(std::complex<double>(1, -2), kComplex64));
  // A nonzero imaginary part never fits a real dtype; a zero one converts the real part.
  EXPECT_TRUE(ScalarOverflows(std::complex<double>(1, 1), kFloat64));
  EXPECT_FALSE(ScalarOverflows(std::complex<double>(3, 0), kInt8));
  EXPECT_TRUE(ScalarOverflows(std::complex<double>(300, 0), kInt8));
}

TEST(CheckScalarFits, NamesTheOpTheValueAndTheDType) {
  EXPECT_FT_ERROR(CheckScalarFits("full", 300, kInt8),
                  "full: value 300 cannot be converted to int8 without overflow");
  EXPECT_FT_ERROR(CheckScalarFits("fill_", std::complex<double>(1, -1), kFloat32),
                  "fill_: value (1-1j) cannot be converted to float32 without overflow");
  EXPECT_NO_THROW(CheckScalarFits("full", -1, kUInt8));
}

}  // namespace
}  // namespace ft

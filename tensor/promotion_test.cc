// Tests for tensor/promotion.h: torch's promote_types, result_type and can_cast by name, on
// cases whose answers torch 1.13 gives (the whole tables are checked against torch in
// dtype_test, on the functions these call).
#include "tensor/promotion.h"

#include <complex>
#include <cstdint>

#include "gtest/gtest.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

TEST(Promotion, PromoteTypesAndCanCast) {
  EXPECT_EQ(promote_types(kUInt8, kInt8), kInt16);
  EXPECT_EQ(promote_types(kFloat16, kBFloat16), kFloat32);
  EXPECT_EQ(promote_types(kComplex64, kFloat64), kComplex128);
  EXPECT_EQ(promote_types(kBool, kInt32), kInt32);
  EXPECT_TRUE(can_cast(kInt8, kUInt8));  // within a category: wraps
  EXPECT_FALSE(can_cast(kFloat32, kInt64));
  EXPECT_FALSE(can_cast(kComplex64, kFloat64));
  EXPECT_TRUE(can_cast(kBool, kFloat16));
}

TEST(Promotion, ResultTypeOfTensorsAndScalars) {
  const Tensor i32 = zeros({3}, kInt32);
  EXPECT_EQ(result_type(i32, 2), kInt32);  // torch.result_type(i32, 2)
  EXPECT_EQ(result_type(i32, 2.5), kFloat32);
  EXPECT_EQ(result_type(2.5, i32), kFloat32);
  EXPECT_EQ(result_type(i32, true), kInt32);
  EXPECT_EQ(result_type(i32, std::complex<double>(0, 1)), kComplex64);
  EXPECT_EQ(result_type(zeros({2}, kFloat64), std::complex<double>(0, 1)), kComplex128);
  EXPECT_EQ(result_type(zeros({2}, kBool), 1), kInt64);
  // A zero-dim tensor decides only when of a higher category.
  EXPECT_EQ(result_type(i32, scalar_tensor(1.0, kFloat64)), kFloat64);  // its own dtype
  EXPECT_EQ(result_type(zeros({2}, kFloat32), scalar_tensor(1.0, kFloat64)), kFloat32);
  EXPECT_EQ(result_type(i32, scalar_tensor(1, kInt64)), kInt32);
  EXPECT_EQ(result_type(scalar_tensor(1, kInt64), i32), kInt32);
  EXPECT_EQ(result_type(i32, zeros({3}, kFloat64)), kFloat64);
  EXPECT_EQ(result_type(scalar_tensor(1, kUInt8), scalar_tensor(1, kInt8)), kInt16);
  EXPECT_FT_ERROR(result_type(Tensor(), i32),
                  "result_type: the first operand is an undefined tensor");
}

}  // namespace
}  // namespace ft

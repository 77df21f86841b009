// Tests for tensor/dtype.h (promotion tables, names, sizes, VisitDType) and tensor/scalar.h.
// The expected tables are written out literally from torch.promote_types / torch.result_type.
#include "tensor/dtype.h"

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/scalar.h"

namespace ft {
namespace {

const DType kAll[] = {kFloat32, kFloat64, kInt64, kBool};

TEST(DType, NamesAndStream) {
  EXPECT_STREQ(DTypeName(kFloat32), "float32");
  EXPECT_STREQ(DTypeName(kFloat64), "float64");
  EXPECT_STREQ(DTypeName(kInt64), "int64");
  EXPECT_STREQ(DTypeName(kBool), "bool");
  std::ostringstream os;
  os << kFloat32 << "," << kFloat64 << "," << kInt64 << "," << kBool;
  EXPECT_EQ(os.str(), "float32,float64,int64,bool");
}

TEST(DType, ItemSizeMatchesCppTypes) {
  EXPECT_EQ(ItemSize(kFloat32), 4);
  EXPECT_EQ(ItemSize(kFloat64), 8);
  EXPECT_EQ(ItemSize(kInt64), 8);
  EXPECT_EQ(ItemSize(kBool), 1);
  static_assert(ItemSize(kFloat32) == sizeof(float));
  static_assert(ItemSize(kBool) == sizeof(bool));
}

TEST(DType, Categories) {
  EXPECT_TRUE(IsFloating(kFloat32));
  EXPECT_TRUE(IsFloating(kFloat64));
  EXPECT_FALSE(IsFloating(kInt64));
  EXPECT_FALSE(IsFloating(kBool));
  EXPECT_TRUE(IsIntegral(kInt64, /*include_bool=*/false));
  EXPECT_FALSE(IsIntegral(kBool, /*include_bool=*/false));
  EXPECT_TRUE(IsIntegral(kBool, /*include_bool=*/true));
  EXPECT_FALSE(IsIntegral(kFloat32, /*include_bool=*/true));
  EXPECT_FALSE(IsIntegral(kFloat64, /*include_bool=*/true));
  EXPECT_EQ(kDefaultFloat, kFloat32);
}

TEST(DType, DTypeOf) {
  static_assert(DTypeOf<float>() == kFloat32);
  static_assert(DTypeOf<double>() == kFloat64);
  static_assert(DTypeOf<int64_t>() == kInt64);
  static_assert(DTypeOf<bool>() == kBool);
}

// torch.promote_types over every ordered pair.
TEST(DType, PromoteTypesAllSixteenPairs) {
  struct Case {
    DType a, b, expected;
  };
  const Case cases[] = {
      {kFloat32, kFloat32, kFloat32}, {kFloat32, kFloat64, kFloat64},
      {kFloat32, kInt64, kFloat32},   {kFloat32, kBool, kFloat32},
      {kFloat64, kFloat32, kFloat64}, {kFloat64, kFloat64, kFloat64},
      {kFloat64, kInt64, kFloat64},   {kFloat64, kBool, kFloat64},
      {kInt64, kFloat32, kFloat32},   {kInt64, kFloat64, kFloat64},
      {kInt64, kInt64, kInt64},       {kInt64, kBool, kInt64},
      {kBool, kFloat32, kFloat32},    {kBool, kFloat64, kFloat64},
      {kBool, kInt64, kInt64},        {kBool, kBool, kBool},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(PromoteTypes(c.a, c.b), c.expected) << c.a << " + " << c.b;
  }
}

// torch.result_type(tensor, python scalar): a scalar only matters when its category is
// higher, and then it contributes its category's default dtype (float32 / int64).
TEST(DType, ResultTypeWithScalarEveryDTypeAndKind) {
  struct Case {
    DType tensor;
    ScalarKind scalar;
    DType expected;
  };
  const Case cases[] = {
      {kFloat32, ScalarKind::kBool, kFloat32},   {kFloat32, ScalarKind::kInt, kFloat32},
      {kFloat32, ScalarKind::kDouble, kFloat32}, {kFloat64, ScalarKind::kBool, kFloat64},
      {kFloat64, ScalarKind::kInt, kFloat64},    {kFloat64, ScalarKind::kDouble, kFloat64},
      {kInt64, ScalarKind::kBool, kInt64},       {kInt64, ScalarKind::kInt, kInt64},
      {kInt64, ScalarKind::kDouble, kFloat32},   {kBool, ScalarKind::kBool, kBool},
      {kBool, ScalarKind::kInt, kInt64},         {kBool, ScalarKind::kDouble, kFloat32},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ResultTypeWithScalar(c.tensor, c.scalar), c.expected)
        << c.tensor << " with scalar kind " << static_cast<int>(c.scalar);
  }
}

TEST(DType, ResultTypeSamePriorityIsPromoteTypes) {
  for (DType a : kAll) {
    for (DType b : kAll) {
      const DType expected = PromoteTypes(a, b);
      EXPECT_EQ(ResultType(a, false, b, false), expected) << a << " " << b;
      EXPECT_EQ(ResultType(a, true, b, true), expected) << a << " " << b;
    }
  }
}

// torch.result_type(dimensioned tensor, zero-dim tensor), every pair, written out from
// PyTorch: torch.result_type(torch.ones(3, dtype=d), torch.tensor(1, dtype=z)).
TEST(DType, ResultTypeDimensionedBeatsZeroDimUnlessHigherCategory) {
  struct Case {
    DType dimensioned, zero_dim, expected;
  };
  const Case cases[] = {
      {kFloat32, kFloat32, kFloat32}, {kFloat32, kFloat64, kFloat32},
      {kFloat32, kInt64, kFloat32},   {kFloat32, kBool, kFloat32},
      {kFloat64, kFloat32, kFloat64}, {kFloat64, kFloat64, kFloat64},
      {kFloat64, kInt64, kFloat64},   {kFloat64, kBool, kFloat64},
      {kInt64, kFloat32, kFloat32},   {kInt64, kFloat64, kFloat64},
      {kInt64, kInt64, kInt64},       {kInt64, kBool, kInt64},
      {kBool, kFloat32, kFloat32},    {kBool, kFloat64, kFloat64},
      {kBool, kInt64, kInt64},        {kBool, kBool, kBool},
  };
  for (const Case& c : cases) {
    // Both argument orders: priority, not position, decides.
    EXPECT_EQ(ResultType(c.dimensioned, false, c.zero_dim, true), c.expected)
        << c.dimensioned << " [3] with " << c.zero_dim << " 0-dim";
    EXPECT_EQ(ResultType(c.zero_dim, true, c.dimensioned, false), c.expected)
        << c.zero_dim << " 0-dim with " << c.dimensioned << " [3]";
  }
}

TEST(DType, VisitDTypeCallsWithTheMatchingType) {
  for (DType d : kAll) {
    const DType seen = VisitDType(d, [](auto tag) {
      using T = typename decltype(tag)::type;
      return DTypeOf<T>();
    });
    EXPECT_EQ(seen, d);
    const size_t size =
        VisitDType(d, [](auto tag) { return sizeof(typename decltype(tag)::type); });
    EXPECT_EQ(static_cast<int64_t>(size), ItemSize(d));
  }
  // A void-returning visitor works too.
  std::vector<std::string> names;
  for (DType d : kAll) {
    VisitDType(d, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, float>) names.push_back("float");
      if constexpr (std::is_same_v<T, double>) names.push_back("double");
      if constexpr (std::is_same_v<T, int64_t>) names.push_back("int64_t");
      if constexpr (std::is_same_v<T, bool>) names.push_back("bool");
    });
  }
  EXPECT_EQ(names, (std::vector<std::string>{"float", "double", "int64_t", "bool"}));
}

TEST(Scalar, KindsAndDefaultDTypes) {
  EXPECT_EQ(Scalar(true).kind(), ScalarKind::kBool);
  EXPECT_EQ(Scalar(3).kind(), ScalarKind::kInt);
  EXPECT_EQ(Scalar(int64_t{3}).kind(), ScalarKind::kInt);
  EXPECT_EQ(Scalar(2.5).kind(), ScalarKind::kDouble);
  EXPECT_EQ(Scalar(2.5f).kind(), ScalarKind::kDouble);
  EXPECT_EQ(Scalar().kind(), ScalarKind::kInt);
  EXPECT_TRUE(Scalar(2.5).is_floating());
  EXPECT_FALSE(Scalar(2).is_floating());
  EXPECT_EQ(Scalar(true).DefaultDType(), kBool);
  EXPECT_EQ(Scalar(1).DefaultDType(), kInt64);
  EXPECT_EQ(Scalar(1.0).DefaultDType(), kFloat32);
}

TEST(Scalar, ConversionsAndToString) {
  EXPECT_EQ(Scalar(2.7).to<int64_t>(), 2);
  EXPECT_EQ(Scalar(-2.7).to<int64_t>(), -2);
  EXPECT_TRUE(Scalar(0.5).to<bool>());
  EXPECT_FALSE(Scalar(0.0).to<bool>());
  EXPECT_TRUE(Scalar(-3).to<bool>());
  EXPECT_FALSE(Scalar(0).to<bool>());
  EXPECT_EQ(Scalar(true).to<double>(), 1.0);
  EXPECT_EQ(Scalar(7).to<float>(), 7.0f);
  EXPECT_EQ(Scalar(int64_t{1} << 60).to<int64_t>(), int64_t{1} << 60);
  EXPECT_EQ(Scalar().to<double>(), 0.0);
  EXPECT_EQ(Scalar(true).ToString(), "true");
  EXPECT_EQ(Scalar(false).ToString(), "false");
  EXPECT_EQ(Scalar(-42).ToString(), "-42");
  EXPECT_EQ(Scalar(2.5).ToString(), "2.5");
}

}  // namespace
}  // namespace ft

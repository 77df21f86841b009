// Tests for tensor/dtype.h (promotion tables, names, sizes, VisitDType) and tensor/scalar.h.
// The tables of the first four dtypes are written out literally from torch.promote_types /
// torch.result_type; the tables over all twelve are torch 1.13's, generated into
// tests/fixtures/torch/dtypes/promotion.*.npy by tools/torch_fixtures/dtypes.py.
#include "tensor/dtype.h"

#include <complex>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "interop/npy.h"
#include "tensor/error.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"
#include "tests/test_util.h"

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

// ---- All twelve dtypes ----

// Torch: a promotion table of torch 1.13 as a [12, n] vector of dtype codes in ft's enum order
// (100 where torch answers complex32, which ft does not have).
std::vector<int64_t> Torch(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string root = srcdir != nullptr ? std::string(srcdir) + "/" +
                                                   (workspace != nullptr ? workspace : "ft") + "/"
                                             : "";
  const Tensor t = LoadNpy(root + "tests/fixtures/torch/dtypes/promotion." + name + ".npy");
  if (t.dtype() == kBool) {
    std::vector<int64_t> out;
    for (bool b : t.to_vector<bool>()) out.push_back(b ? 1 : 0);
    return out;
  }
  return t.to_vector<int64_t>();
}

// TorchDType: a code of Torch() as ft's dtype; torch's complex32 is ft's complex64.
DType TorchDType(int64_t code) {
  constexpr int64_t kTorchComplex32 = 100;
  return code == kTorchComplex32 ? kComplex64 : static_cast<DType>(code);
}

TEST(DTypeAll, NamesSizesAndElementTypes) {
  const char* const names[kNumDTypes] = {"float32",  "float64", "int64", "bool",
                                         "complex64", "complex128", "bfloat16", "float16",
                                         "int8",     "int16",   "int32", "uint8"};
  for (int i = 0; i < kNumDTypes; ++i) {
    EXPECT_EQ(static_cast<int>(kAllDTypes[i]), i);
    EXPECT_STREQ(DTypeName(kAllDTypes[i]), names[i]);
  }
  static_assert(ItemSize(kComplex64) == sizeof(std::complex<float>));
  static_assert(ItemSize(kComplex128) == sizeof(std::complex<double>));
  static_assert(ItemSize(kBFloat16) == sizeof(BFloat16));
  static_assert(ItemSize(kFloat16) == sizeof(Half));
  static_assert(ItemSize(kInt8) == sizeof(int8_t));
  static_assert(ItemSize(kInt16) == sizeof(int16_t));
  static_assert(ItemSize(kInt32) == sizeof(int32_t));
  static_assert(ItemSize(kUInt8) == sizeof(uint8_t));
  static_assert(DTypeOf<std::complex<float>>() == kComplex64);
  static_assert(DTypeOf<std::complex<double>>() == kComplex128);
  static_assert(DTypeOf<BFloat16>() == kBFloat16);
  static_assert(DTypeOf<Half>() == kFloat16);
  static_assert(DTypeOf<int8_t>() == kInt8);
  static_assert(DTypeOf<int16_t>() == kInt16);
  static_assert(DTypeOf<int32_t>() == kInt32);
  static_assert(DTypeOf<uint8_t>() == kUInt8);
}

TEST(DTypeAll, CategoriesAreTorchs) {
  for (DType d : kAllDTypes) {
    const int categories =
        int{d == kBool} + int{IsIntegral(d, false)} + int{IsFloating(d)} + int{IsComplex(d)};
    EXPECT_EQ(categories, 1) << d << " is in exactly one category";
    EXPECT_EQ(IsIntegral(d, true), d == kBool || IsIntegral(d, false)) << d;
  }
  EXPECT_TRUE(IsFloating(kFloat16) && IsFloating(kBFloat16));
  EXPECT_TRUE(IsIntegral(kUInt8, false) && IsIntegral(kInt8, false) && IsIntegral(kInt32, false));
  EXPECT_TRUE(IsComplex(kComplex64) && IsComplex(kComplex128));
  EXPECT_EQ(ToRealDType(kComplex64), kFloat32);
  EXPECT_EQ(ToRealDType(kComplex128), kFloat64);
  EXPECT_EQ(ToRealDType(kInt8), kInt8);
  EXPECT_EQ(ToComplexDType(kFloat64), kComplex128);
  EXPECT_EQ(ToComplexDType(kFloat32), kComplex64);
  EXPECT_EQ(ToComplexDType(kFloat16), kComplex64);
  EXPECT_EQ(ToComplexDType(kBFloat16), kComplex64);
  EXPECT_EQ(ToComplexDType(kComplex128), kComplex128);
  EXPECT_FT_ERROR(ToComplexDType(kInt32), "ToComplexDType: int32 has no complex counterpart");
}

// torch.promote_types over all 144 ordered pairs.
TEST(DTypeAll, PromoteTypesIsTorchsOnAll144Pairs) {
  const std::vector<int64_t> want = Torch("promote");
  ASSERT_EQ(want.size(), size_t{kNumDTypes * kNumDTypes});
  for (int i = 0; i < kNumDTypes; ++i) {
    for (int j = 0; j < kNumDTypes; ++j) {
      EXPECT_EQ(PromoteTypes(kAllDTypes[i], kAllDTypes[j]),
                TorchDType(want[static_cast<size_t>(i * kNumDTypes + j)]))
          << kAllDTypes[i] << " with " << kAllDTypes[j];
    }
  }
}

TEST(DTypeAll, CanCastIsTorchsOnAll144Pairs) {
  const std::vector<int64_t> want = Torch("can_cast");
  ASSERT_EQ(want.size(), size_t{kNumDTypes * kNumDTypes});
  for (int i = 0; i < kNumDTypes; ++i) {
    for (int j = 0; j < kNumDTypes; ++j) {
      EXPECT_EQ(CanCast(kAllDTypes[i], kAllDTypes[j]),
                want[static_cast<size_t>(i * kNumDTypes + j)] != 0)
          << kAllDTypes[i] << " to " << kAllDTypes[j];
    }
  }
}

// torch.result_type(dimensioned, zero-dim) over all 144 pairs, both argument orders; where
// torch answers complex32 (a float16 tensor with a complex zero-dim one) ft answers complex64.
TEST(DTypeAll, ResultTypeWithZeroDimIsTorchsOnAll144Pairs) {
  const std::vector<int64_t> want = Torch("zero_dim");
  ASSERT_EQ(want.size(), size_t{kNumDTypes * kNumDTypes});
  for (int i = 0; i < kNumDTypes; ++i) {
    for (int j = 0; j < kNumDTypes; ++j) {
      const DType d = kAllDTypes[i], z = kAllDTypes[j];
      const DType expected = TorchDType(want[static_cast<size_t>(i * kNumDTypes + j)]);
      EXPECT_EQ(ResultType(d, false, z, true), expected) << d << " [2] with " << z << " 0-dim";
      EXPECT_EQ(ResultType(z, true, d, false), expected) << z << " 0-dim with " << d << " [2]";
    }
  }
}

// torch.result_type(tensor, python scalar) for each dtype and each kind (True, 2, 2.5, 2.5j).
TEST(DTypeAll, ResultTypeWithScalarIsTorchsForEveryDTypeAndKind) {
  const std::vector<int64_t> want = Torch("scalar");
  ASSERT_EQ(want.size(), size_t{kNumDTypes * 4});
  const ScalarKind kinds[] = {ScalarKind::kBool, ScalarKind::kInt, ScalarKind::kDouble,
                              ScalarKind::kComplex};
  for (int i = 0; i < kNumDTypes; ++i) {
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(ResultTypeWithScalar(kAllDTypes[i], kinds[k]),
                TorchDType(want[static_cast<size_t>(i * 4 + k)]))
          << kAllDTypes[i] << " with scalar kind " << k;
    }
  }
  // The one place ft departs from torch: float16 with a complex scalar is complex32 there.
  EXPECT_EQ(want[7 * 4 + 3], 100);
  EXPECT_EQ(ResultTypeWithScalar(kFloat16, ScalarKind::kComplex), kComplex64);
}

// Promotion's algebra, independent of the fixture: commutative, idempotent, and an upper
// bound both operands may be cast to.
TEST(DTypeAll, PromoteTypesIsCommutativeAndCastableFromBothOperands) {
  for (DType a : kAllDTypes) {
    EXPECT_EQ(PromoteTypes(a, a), a);
    for (DType b : kAllDTypes) {
      const DType p = PromoteTypes(a, b);
      EXPECT_EQ(p, PromoteTypes(b, a)) << a << " " << b;
      EXPECT_TRUE(CanCast(a, p) && CanCast(b, p)) << a << " " << b << " -> " << p;
      for (DType c : kAllDTypes) {
        EXPECT_EQ(PromoteTypes(PromoteTypes(a, b), c), PromoteTypes(a, PromoteTypes(b, c)))
            << a << " " << b << " " << c;
      }
    }
  }
}

// The dtypes of issue 43 are refused, naming the dtype, by code written for the first four.
TEST(DTypeAll, VisitDTypeRefusesTheDTypesNotWrittenYet) {
  for (DType d : {kComplex64, kComplex128, kBFloat16, kFloat16, kInt8, kInt16, kInt32, kUInt8}) {
    EXPECT_FT_ERROR(VisitDType(d, [](auto) { return 0; }),
                    std::string(DTypeName(d)) + " tensors are not supported by this operation yet");
  }
}

TEST(Scalar, Complex) {
  const Scalar z = std::complex<double>(1.5, -2.0);
  EXPECT_EQ(z.kind(), ScalarKind::kComplex);
  EXPECT_TRUE(z.is_complex());
  EXPECT_FALSE(z.is_floating());
  EXPECT_EQ(z.DefaultDType(), kComplex64);
  EXPECT_EQ(z.to<std::complex<double>>(), std::complex<double>(1.5, -2.0));
  EXPECT_EQ(z.to<std::complex<float>>(), std::complex<float>(1.5f, -2.0f));
  EXPECT_EQ(z.ToString(), "(1.5-2j)");
  EXPECT_EQ(Scalar(std::complex<float>(0, 1)).ToString(), "(0+1j)");
  EXPECT_FT_ERROR(z.to<double>(), "Scalar: the complex value (1.5-2j) has a nonzero imaginary part");
  EXPECT_EQ(Scalar(std::complex<double>(3.7, 0)).to<int64_t>(), 3);
  EXPECT_EQ(Scalar(std::complex<double>(3.7, 0)).to<double>(), 3.7);
  // Real scalars widen to complex with a zero imaginary part.
  EXPECT_EQ(Scalar(2).to<std::complex<double>>(), std::complex<double>(2, 0));
  EXPECT_EQ(Scalar(true).to<std::complex<float>>(), std::complex<float>(1, 0));
  EXPECT_EQ(Scalar(-0.5).to<std::complex<double>>(), std::complex<double>(-0.5, 0));
}

}  // namespace
}  // namespace ft

#include "tensor/dtype.h"

#include <bit>
#include <string>

#include "tensor/error.h"

namespace ft {
namespace {

// Category: bool 0 < integral 1 < floating 2 < complex 3, the order of promotion.
int Category(DType d) {
  if (d == kBool) return 0;
  if (IsIntegral(d, /*include_bool=*/false)) return 1;
  if (IsFloating(d)) return 2;
  return 3;
}

// Rank within a category, for the wider-wins rule; equal ranks (uint8 and int8, float16 and
// bfloat16) are resolved apart.
int Width(DType d) { return static_cast<int>(ItemSize(d)); }

// PromoteWithinCategory: two different dtypes of one category.
DType PromoteWithinCategory(DType a, DType b) {
  if (IsIntegral(a, false)) {
    // uint8 with a signed type: the signed type if it holds 0..255, else int16.
    if (a == kUInt8 || b == kUInt8) {
      const DType other = a == kUInt8 ? b : a;
      return other == kInt8 ? kInt16 : other;
    }
  } else if (IsFloating(a)) {
    // float16 and bfloat16 hold neither's values: float32 holds both.
    if (Width(a) == 2 && Width(b) == 2) return kFloat32;
  }
  return Width(a) >= Width(b) ? a : b;
}

// DefaultForKind: the dtype a C++ scalar of this kind gets alone.
DType DefaultForKind(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::kBool:
      return kBool;
    case ScalarKind::kInt:
      return kInt64;
    case ScalarKind::kDouble:
      return kDefaultFloat;
    case ScalarKind::kComplex:
      break;
  }
  return ToComplexDType(kDefaultFloat);
}

// CombineCategories: the result of a higher-priority operand `higher` (dimensioned over
// zero-dim over scalar) with a lower-priority one: the higher decides unless the lower is of
// a higher category, which then decides the category; a floating `higher` keeps its width
// under a complex `lower`.
DType CombineCategories(DType higher, DType lower) {
  if (Category(lower) <= Category(higher)) return higher;
  if (IsComplex(lower) && IsFloating(higher)) return ToComplexDType(higher);
  return lower;
}

}  // namespace

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kInt64:
      return "int64";
    case DType::kBool:
      return "bool";
    case DType::kComplex64:
      return "complex64";
    case DType::kComplex128:
      return "complex128";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kFloat16:
      return "float16";
    case DType::kInt8:
      return "int8";
    case DType::kInt16:
      return "int16";
    case DType::kInt32:
      return "int32";
    case DType::kUInt8:
      return "uint8";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << DTypeName(dtype); }

DType ToComplexDType(DType dtype) {
  if (IsComplex(dtype)) return dtype;
  if (dtype == kFloat64) return kComplex128;
  if (IsFloating(dtype)) return kComplex64;
  ThrowError("ToComplexDType: ", DTypeName(dtype), " has no complex counterpart");
}

DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  const int ca = Category(a);
  const int cb = Category(b);
  if (ca == cb) return PromoteWithinCategory(a, b);
  const DType high = ca > cb ? a : b;
  const DType low = ca > cb ? b : a;
  // Complex with floating: complex of the wider component (complex64 with float64 is
  // complex128); with anything lower, the complex dtype.
  if (IsComplex(high) && IsFloating(low)) {
    return ToComplexDType(PromoteWithinCategory(ToRealDType(high), low));
  }
  return high;
}

bool CanCast(DType from, DType to) { return Category(from) <= Category(to); }

DType ResultTypeWithScalar(DType tensor_dtype, ScalarKind scalar) {
  return CombineCategories(tensor_dtype, DefaultForKind(scalar));
}

DType ResultType(DType a, bool a_zero_dim, DType b, bool b_zero_dim) {
  if (a_zero_dim == b_zero_dim) return PromoteTypes(a, b);
  // One dimensioned, one zero-dim: the zero-dim operand only matters when it is of a higher
  // category.
  return CombineCategories(a_zero_dim ? b : a, a_zero_dim ? a : b);
}

std::string DTypeSet::ToString() const {
  std::string out;
  int remaining = std::popcount(bits_);
  for (DType d : kAllDTypes) {
    if (!contains(d)) continue;
    if (!out.empty()) out += remaining == 1 ? " and " : ", ";
    out += DTypeName(d);
    --remaining;
  }
  return out.empty() ? "no dtype" : out;
}

void ThrowDTypeNotSupportedYet(DType dtype) {
  ThrowError(DTypeName(dtype),
             " tensors are not supported by this operation yet (ft supports float32, float64, "
             "int64 and bool everywhere; issue 43 brings the other dtypes op by op)");
}

}  // namespace ft

#include "tensor/dtype.h"

namespace ft {
namespace {

int Category(DType d) {
  switch (d) {
    case DType::kBool:
      return 0;
    case DType::kInt64:
      return 1;
    case DType::kFloat32:
    case DType::kFloat64:
      return 2;
  }
  return 0;
}

DType DefaultForCategory(int category) {
  switch (category) {
    case 0:
      return kBool;
    case 1:
      return kInt64;
    default:
      return kDefaultFloat;
  }
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
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << DTypeName(dtype); }

DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  const int ca = Category(a);
  const int cb = Category(b);
  if (ca != cb) return ca > cb ? a : b;
  // Same category, different dtypes: only float32 vs float64 is possible.
  return kFloat64;
}

DType ResultTypeWithScalar(DType tensor_dtype, ScalarKind scalar) {
  const int scalar_category = static_cast<int>(scalar);
  if (scalar_category > Category(tensor_dtype)) return DefaultForCategory(scalar_category);
  return tensor_dtype;
}

DType ResultType(DType a, bool a_zero_dim, DType b, bool b_zero_dim) {
  if (a_zero_dim == b_zero_dim) return PromoteTypes(a, b);
  // One dimensioned, one zero-dim: the zero-dim operand only matters when it is of a higher
  // category, and then its own dtype is used.
  const DType dimensioned = a_zero_dim ? b : a;
  const DType zero_dim = a_zero_dim ? a : b;
  if (Category(zero_dim) > Category(dimensioned)) return zero_dim;
  return dimensioned;
}

}  // namespace ft

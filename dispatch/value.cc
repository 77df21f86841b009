#include "dispatch/value.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ft {

Scalar Value::scalar() const {
  switch (tag()) {
    case Tag::kScalar:
      return std::get<Scalar>(v_);
    case Tag::kInt:
      return Scalar(std::get<int64_t>(v_));
    case Tag::kDouble:
      return Scalar(std::get<double>(v_));
    case Tag::kBool:
      return Scalar(std::get<bool>(v_));
    default:
      FT_CHECK(false && "Value is not a number");
  }
  return Scalar();
}
int64_t Value::to_int() const {
  FT_CHECK(tag() == Tag::kInt);
  return std::get<int64_t>(v_);
}
double Value::to_double() const {
  FT_CHECK(tag() == Tag::kDouble);
  return std::get<double>(v_);
}
bool Value::to_bool() const {
  FT_CHECK(tag() == Tag::kBool);
  return std::get<bool>(v_);
}
const Shape& Value::shape() const {
  FT_CHECK(tag() == Tag::kShape);
  return std::get<Shape>(v_);
}
DType Value::dtype() const {
  FT_CHECK(tag() == Tag::kDType);
  return std::get<DType>(v_);
}
Generator* Value::generator() const {
  FT_CHECK(tag() == Tag::kGenerator);
  return std::get<Generator*>(v_);
}

namespace {
std::string TensorSummary(const Tensor& t) {
  if (!t.defined()) return "Tensor(undefined)";
  std::string s = absl::StrCat("Tensor", ShapeToString(t.sizes()), " ", DTypeName(t.dtype()));
  if (!t.is_dense()) absl::StrAppend(&s, " ", TensorKindName(t.kind()));
  return s;
}
}  // namespace

std::string Value::ToString() const {
  switch (tag()) {
    case Tag::kNone:
      return "None";
    case Tag::kTensor:
      return TensorSummary(tensor());
    case Tag::kTensorList: {
      std::vector<std::string> parts;
      for (const Tensor& t : tensor_list()) parts.push_back(TensorSummary(t));
      return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
    }
    case Tag::kScalar:
      return std::get<Scalar>(v_).ToString();
    case Tag::kInt:
      return absl::StrCat(to_int());
    case Tag::kDouble:
      return absl::StrCat(to_double());
    case Tag::kBool:
      return to_bool() ? "true" : "false";
    case Tag::kShape:
      return ShapeToString(shape());
    case Tag::kDType:
      return DTypeName(dtype());
    case Tag::kGenerator:
      return "Generator";
  }
  return "?";
}

const char* ValueTagName(Value::Tag tag) {
  switch (tag) {
    case Value::Tag::kNone:
      return "None";
    case Value::Tag::kTensor:
      return "Tensor";
    case Value::Tag::kTensorList:
      return "TensorList";
    case Value::Tag::kScalar:
      return "Scalar";
    case Value::Tag::kInt:
      return "int";
    case Value::Tag::kDouble:
      return "double";
    case Value::Tag::kBool:
      return "bool";
    case Value::Tag::kShape:
      return "int[]";
    case Value::Tag::kDType:
      return "DType";
    case Value::Tag::kGenerator:
      return "Generator";
  }
  return "?";
}

}  // namespace ft

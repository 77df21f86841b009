#include "dispatch/value.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ft {

void Value::CopyTrivialPayload(const Value& other) noexcept {
  switch (tag_) {
    case Tag::kScalar:
      new (&u_.scalar) Scalar(other.u_.scalar);
      return;
    case Tag::kInt:
      u_.int_value = other.u_.int_value;
      return;
    case Tag::kDouble:
      u_.double_value = other.u_.double_value;
      return;
    case Tag::kBool:
      u_.bool_value = other.u_.bool_value;
      return;
    case Tag::kDType:
      u_.dtype = other.u_.dtype;
      return;
    case Tag::kGenerator:
      u_.generator = other.u_.generator;
      return;
    case Tag::kNone:
    case Tag::kTensor:
    case Tag::kTensorList:
    case Tag::kShape:
      return;  // none, or owning kinds (handled inline by the caller)
  }
}

Scalar Value::scalar() const {
  switch (tag()) {
    case Tag::kScalar:
      return u_.scalar;
    case Tag::kInt:
      return Scalar(u_.int_value);
    case Tag::kDouble:
      return Scalar(u_.double_value);
    case Tag::kBool:
      return Scalar(u_.bool_value);
    default:
      FT_CHECK(false && "Value is not a number");
  }
  return Scalar();
}
int64_t Value::to_int() const {
  FT_CHECK(tag() == Tag::kInt);
  return u_.int_value;
}
double Value::to_double() const {
  FT_CHECK(tag() == Tag::kDouble);
  return u_.double_value;
}
bool Value::to_bool() const {
  FT_CHECK(tag() == Tag::kBool);
  return u_.bool_value;
}
const Shape& Value::shape() const {
  FT_CHECK(tag() == Tag::kShape);
  return u_.shape;
}
DType Value::dtype() const {
  FT_CHECK(tag() == Tag::kDType);
  return u_.dtype;
}
Generator* Value::generator() const {
  FT_CHECK(tag() == Tag::kGenerator);
  return u_.generator;
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
      return u_.scalar.ToString();
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

#include "dispatch/operator.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ft {

const char* ArgKindName(ArgKind kind) {
  switch (kind) {
    case ArgKind::kTensor:
      return "Tensor";
    case ArgKind::kOptionalTensor:
      return "Tensor?";
    case ArgKind::kTensorList:
      return "Tensor[]";
    case ArgKind::kScalar:
      return "Scalar";
    case ArgKind::kOptionalScalar:
      return "Scalar?";
    case ArgKind::kInt:
      return "int";
    case ArgKind::kOptionalInt:
      return "int?";
    case ArgKind::kDouble:
      return "float";
    case ArgKind::kBool:
      return "bool";
    case ArgKind::kIntList:
      return "int[]";
    case ArgKind::kDType:
      return "DType";
    case ArgKind::kGenerator:
      return "Generator?";
    case ArgKind::kOptionalDouble:
      return "float?";
  }
  return "?";
}

std::string OpSchema::ToString() const {
  std::vector<std::string> parts;
  for (const ArgSpec& a : args) parts.push_back(absl::StrCat(ArgKindName(a.kind), " ", a.name));
  std::vector<std::string> rets;
  for (ArgKind r : returns) rets.push_back(ArgKindName(r));
  std::string s = absl::StrCat(name, "(", absl::StrJoin(parts, ", "), ") -> ");
  if (rets.size() == 1) {
    absl::StrAppend(&s, rets[0]);
  } else {
    absl::StrAppend(&s, "(", absl::StrJoin(rets, ", "), ")");
  }
  if (mutated_arg) absl::StrAppend(&s, "  [mutates ", args[*mutated_arg].name, "]");
  if (random) absl::StrAppend(&s, "  [random]");
  if (dtypes == kEveryDType) {
    absl::StrAppend(&s, "  [every dtype]");
  } else if (dtypes != kOriginalDTypes) {
    absl::StrAppend(&s, "  [dtypes: ", dtypes.ToString(), "]");
  }
  return s;
}

Operator::Operator(int id, OpSchema schema, BoxedKernel base_kernel,
                   DirectKernel direct_kernel)
    : id_(id),
      schema_(std::move(schema)),
      base_kernel_(base_kernel),
      direct_kernel_(direct_kernel) {}

void Operator::SetRule(TransformType transform, TransformRule rule) {
  rules_[static_cast<int>(transform)] = std::make_unique<TransformRule>(std::move(rule));
}

OpRegistry& OpRegistry::Global() {
  // Never destroyed: operators must outlive every static that holds a pointer to one.
  static OpRegistry* registry = new OpRegistry();
  return *registry;
}

Operator& OpRegistry::Register(OpSchema schema, BoxedKernel base_kernel,
                               DirectKernel direct_kernel) {
  FT_CHECK(!by_name_.contains(schema.name));
  const int id = static_cast<int>(ops_.size());
  by_name_[schema.name] = id;
  ops_.emplace_back(id, std::move(schema), base_kernel, direct_kernel);
  return ops_.back();
}

Operator* OpRegistry::Find(absl::string_view name) {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &ops_[it->second];
}

Operator& OpRegistry::Get(absl::string_view name) {
  Operator* op = Find(name);
  if (op == nullptr) ThrowError("OpRegistry: no operator named '", name, "'");
  return *op;
}

std::vector<Operator*> OpRegistry::ops() {
  std::vector<Operator*> out;
  for (Operator& op : ops_) out.push_back(&op);
  return out;
}

}  // namespace ft

#include "dispatch/interpreter.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ft {
namespace internal {
constinit thread_local int tls_layer_depth = 0;
}  // namespace internal

namespace {
constinit thread_local Interpreter* tls_layers[LayerStack::kMaxDepth] = {};
constinit thread_local int64_t tls_next_level = 1;
}  // namespace

const char* TransformTypeName(TransformType t) {
  switch (t) {
    case TransformType::kVmap:
      return "Vmap";
    case TransformType::kGrad:
      return "Grad";
    case TransformType::kJvp:
      return "Jvp";
    case TransformType::kFunctionalize:
      return "Functionalize";
  }
  return "?";
}

Interpreter::Interpreter(TransformType key, int64_t level)
    : key_(key), level_(level), alive_(std::make_shared<bool>(false)) {}

Interpreter::~Interpreter() = default;

std::string Interpreter::DebugString() const {
  return absl::StrCat(TransformTypeName(key_), "(level=", level_, ")");
}

bool Interpreter::AliasesInput(const Tensor& value) const {
  const Storage& storage = value.data_storage();
  for (const Storage& s : input_storages_) {
    if (s.is_same(storage)) return true;
  }
  return false;
}

Interpreter* LayerStack::Top() {
  const int depth = internal::tls_layer_depth;
  return depth == 0 ? nullptr : tls_layers[depth - 1];
}

Interpreter* LayerStack::At(int i) {
  FT_CHECK(i >= 0 && i < internal::tls_layer_depth);
  return tls_layers[i];
}

void LayerStack::Push(Interpreter* interpreter) {
  FT_CHECK(interpreter != nullptr);
  if (internal::tls_layer_depth >= kMaxDepth) {
    ThrowError(TransformTypeName(interpreter->key()), ": cannot nest more than ", kMaxDepth,
               " transforms (level ", interpreter->level(), ")");
  }
  tls_layers[internal::tls_layer_depth++] = interpreter;
}

Interpreter* LayerStack::Pop() {
  FT_CHECK(internal::tls_layer_depth > 0);
  return tls_layers[--internal::tls_layer_depth];
}

int64_t LayerStack::NewLevel() { return tls_next_level++; }

std::string LayerStack::DebugString() {
  std::vector<std::string> parts;
  for (int i = 0; i < internal::tls_layer_depth; ++i) parts.push_back(tls_layers[i]->DebugString());
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

InterpreterScope::InterpreterScope(Interpreter* interpreter) : interpreter_(interpreter) {
  LayerStack::Push(interpreter);
  *interpreter->alive_ = true;
}

InterpreterScope::~InterpreterScope() {
  Interpreter* popped = LayerStack::Pop();
  FT_CHECK(popped == interpreter_);
  *interpreter_->alive_ = false;
}

LowerGuard::LowerGuard(Interpreter* interpreter) : interpreter_(interpreter) {
  FT_CHECK(LayerStack::Top() == interpreter);
  LayerStack::Pop();
}

LowerGuard::~LowerGuard() { LayerStack::Push(interpreter_); }

ExcludeAllGuard::ExcludeAllGuard() : depth_(internal::tls_layer_depth) {
  for (int i = 0; i < depth_; ++i) saved_[i] = tls_layers[i];
  internal::tls_layer_depth = 0;
}

ExcludeAllGuard::~ExcludeAllGuard() {
  for (int i = 0; i < depth_; ++i) tls_layers[i] = saved_[i];
  internal::tls_layer_depth = depth_;
}

}  // namespace ft

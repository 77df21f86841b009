#include "dispatch/interpreter.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ft {
namespace internal {
constinit thread_local int tls_layer_depth = 0;
constinit thread_local int tls_lowerings = 0;
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

const char* TransformName(TransformType t) {
  switch (t) {
    case TransformType::kVmap:
      return "vmap";
    case TransformType::kGrad:
      return "grad";
    case TransformType::kJvp:
      return "jvp";
    case TransformType::kFunctionalize:
      return "functionalize";
  }
  return "?";
}

Interpreter::Interpreter(TransformType key, int64_t level)
    : key_(key), level_(level), name_(TransformName(key)), alive_(std::make_shared<bool>(false)) {}

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
    ThrowError(interpreter->name(), ": cannot nest more than ", kMaxDepth,
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

namespace {
// Pushed: pushes `interpreter` (throws like LayerStack::Push) and returns its name, so that
// InterpreterScope's context names the level only once it is on the stack.
const char* Pushed(Interpreter* interpreter) {
  LayerStack::Push(interpreter);
  return interpreter->name();
}
}  // namespace

InterpreterScope::InterpreterScope(Interpreter* interpreter)
    : interpreter_(interpreter), context_(Pushed(interpreter), interpreter->level()) {
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
  ++internal::tls_lowerings;
}

LowerGuard::~LowerGuard() {
  --internal::tls_lowerings;
  LayerStack::Push(interpreter_);
}

ExcludeAllGuard::ExcludeAllGuard() : depth_(internal::tls_layer_depth) {
  for (int i = 0; i < depth_; ++i) saved_[i] = tls_layers[i];
  internal::tls_layer_depth = 0;
  ++internal::tls_lowerings;
}

ExcludeAllGuard::~ExcludeAllGuard() {
  --internal::tls_lowerings;
  for (int i = 0; i < depth_; ++i) tls_layers[i] = saved_[i];
  internal::tls_layer_depth = depth_;
}

namespace {
[[noreturn, gnu::noinline]] void ThrowUndefined(absl::string_view transform,
                                               absl::string_view role, size_t i,
                                               int64_t element) {
  if (element >= 0) {
    ThrowError(transform, ": ", role, " ", i, ", element ", element, ", is an undefined ",
               "tensor (a default-constructed ft::Tensor)");
  }
  ThrowError(transform, ": ", role, " ", i,
             " is an undefined tensor (a default-constructed ft::Tensor)");
}
}  // namespace

void CheckDefined(absl::string_view transform, absl::string_view role,
                  absl::Span<const Tensor> tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].defined()) ThrowUndefined(transform, role, i, -1);
  }
}

void CheckDefined(absl::string_view transform, absl::string_view role, const ValueList& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].is_tensor() && !values[i].tensor().defined()) {
      ThrowUndefined(transform, role, i, -1);
    }
    if (values[i].is_tensor_list()) {
      const TensorList& list = values[i].tensor_list();
      for (size_t k = 0; k < list.size(); ++k) {
        if (!list[k].defined()) ThrowUndefined(transform, role, i, static_cast<int64_t>(k));
      }
    }
  }
}

LowerBelowGuard::LowerBelowGuard(int64_t level) : depth_(internal::tls_layer_depth) {
  // Levels grow from the bottom of the stack up (NOTE: [Levels]).
  kept_ = 0;
  while (kept_ < depth_ && tls_layers[kept_]->level() < level) ++kept_;
  for (int i = kept_; i < depth_; ++i) saved_[i] = tls_layers[i];
  internal::tls_layer_depth = kept_;
  ++internal::tls_lowerings;
}

LowerBelowGuard::~LowerBelowGuard() {
  --internal::tls_lowerings;
  for (int i = kept_; i < depth_; ++i) tls_layers[i] = saved_[i];
  internal::tls_layer_depth = depth_;
}

}  // namespace ft

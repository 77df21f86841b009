#include "dispatch/dispatch.h"

#include <mutex>

namespace ft {

// Defined in dispatch/register_ops.cc: registers every built-in op family.
void RegisterBuiltinOps(OpRegistry& registry);

void RegisterAllOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterBuiltinOps(OpRegistry::Global());
    OpRegistry::Global().MarkBuiltins();
  });
}

namespace internal {
constinit thread_local BaseCallObserver* tls_base_call_observer = nullptr;
}  // namespace internal

namespace {

// ReplaceDeadWrapper replaces t, while it is a wrapper of a dead level, by its value, and
// tells whether t is now dense (or undefined). Out of line: dense tensors never get there.
[[gnu::noinline]] bool ReplaceDeadWrapperSlow(const Operator& op, Tensor& t) {
  while (!t.is_dense() && !t.impl()->is_alive_wrapper()) {
    t = t.impl()->UnwrapDead(op.name());
  }
  return t.is_dense();
}

inline bool ReplaceDeadWrapper(const Operator& op, Tensor& t) {
  return !t.defined() || t.is_dense() || ReplaceDeadWrapperSlow(op, t);
}

void CheckDense(const Operator& op, const Tensor& t, size_t arg) {
  if (t.defined() && !t.is_dense()) {
    ThrowError(op.name(), ": argument '", op.schema().args[arg].name, "' is a ",
               TensorKindName(t.kind()), " tensor (", t.impl()->WrapperRepr(),
               ") but no transform is active");
  }
}

// CheckAllDense throws for the first argument that is still a wrapper.
[[gnu::noinline]] void CheckAllDense(const Operator& op, const ValueList& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_tensor()) {
      CheckDense(op, args[i].tensor(), i);
    } else if (args[i].is_tensor_list()) {
      for (const Tensor& t : args[i].tensor_list()) CheckDense(op, t, i);
    }
  }
}

}  // namespace

ValueList DispatchBoxed(const Operator& op, ValueList& args) {
  // One pass replaces dead wrappers and notes whether any wrapper is left; only then does
  // an empty stack need the (throwing) second look.
  bool all_dense = true;
  for (Value& v : args) {
    if (v.is_tensor()) {
      all_dense &= ReplaceDeadWrapper(op, v.mutable_tensor());
    } else if (v.is_tensor_list()) {
      for (Tensor& t : v.mutable_tensor_list()) all_dense &= ReplaceDeadWrapper(op, t);
    }
  }
  Interpreter* top = LayerStack::Top();
  if (top != nullptr) return top->Process(op, args);
  if (!all_dense) CheckAllDense(op, args);
  if (internal::tls_base_call_observer != nullptr) [[unlikely]] {
    return internal::tls_base_call_observer->RunBaseKernel(op, args);
  }
  return op.CallBaseKernel(args);
}

}  // namespace ft

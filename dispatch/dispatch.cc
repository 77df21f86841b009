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

namespace {

void ReplaceDeadWrapper(const Operator& op, Tensor& t) {
  while (t.defined() && !t.is_dense() && !t.impl()->is_alive_wrapper()) {
    t = t.impl()->UnwrapDead(op.name());
  }
}

void CheckDense(const Operator& op, const Tensor& t, size_t arg) {
  if (t.defined() && !t.is_dense()) {
    ThrowError(op.name(), ": argument '", op.schema().args[arg].name, "' is a ",
               TensorKindName(t.kind()), " tensor (", t.impl()->WrapperRepr(),
               ") but no transform is active");
  }
}

}  // namespace

ValueList DispatchBoxed(const Operator& op, ValueList& args) {
  for (Value& v : args) {
    if (v.is_tensor()) {
      ReplaceDeadWrapper(op, v.mutable_tensor());
    } else if (v.is_tensor_list()) {
      for (Tensor& t : v.mutable_tensor_list()) ReplaceDeadWrapper(op, t);
    }
  }
  Interpreter* top = LayerStack::Top();
  if (top != nullptr) return top->Process(op, args);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_tensor()) {
      CheckDense(op, args[i].tensor(), i);
    } else if (args[i].is_tensor_list()) {
      for (const Tensor& t : args[i].tensor_list()) CheckDense(op, t, i);
    }
  }
  return op.CallBaseKernel(args);
}

}  // namespace ft

#include "dispatch/dispatch.h"

#include "absl/strings/str_cat.h"

namespace ft {

namespace internal {
constinit thread_local BaseCallObserver* tls_base_call_observer = nullptr;
constinit thread_local DispatchHookState tls_dispatch_hook;
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

// ThrowUndefinedArgument: an op got a default-constructed tensor (element `element` of a
// TensorList argument, or the argument itself when element < 0).
[[noreturn, gnu::noinline]] void ThrowUndefinedArgument(const Operator& op, size_t arg,
                                                       int64_t element) {
  const std::string& name = op.schema().args[arg].name;
  if (element >= 0) {
    ThrowError(op.name(), ": element ", element, " of argument '", name,
               "' is an undefined tensor (a default-constructed ft::Tensor)");
  }
  ThrowError(op.name(), ": argument '", name,
             "' is an undefined tensor (a default-constructed ft::Tensor)");
}

inline bool ReplaceDeadWrapper(const Operator& op, Tensor& t, size_t arg, int64_t element) {
  if (t.is_dense()) [[likely]] return true;
  if (!t.defined()) ThrowUndefinedArgument(op, arg, element);
  return ReplaceDeadWrapperSlow(op, t);
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

// CheckDTypes throws for the first tensor (or DType) argument whose dtype the op's kernel
// is not written for (OpSchema::dtypes).
[[gnu::noinline]] void CheckDTypes(const Operator& op, const ValueList& args) {
  const DTypeSet supported = op.schema().dtypes;
  auto check = [&](DType dtype, size_t arg, int64_t element) {
    if (supported.contains(dtype)) return;
    const std::string where =
        element >= 0 ? absl::StrCat("element ", element, " of argument '") : "argument '";
    const std::vector<ArgSpec>& specs = op.schema().args;
    const std::string name = arg < specs.size() ? specs[arg].name : absl::StrCat(arg);
    ThrowError(op.name(), ": ", where, name, "' is ", DTypeName(dtype),
               ", which ", op.name(), " does not support yet (it supports ",
               supported.ToString(), "; issue 43 brings the other dtypes op by op)");
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const Value& v = args[i];
    if (v.is_tensor()) {
      check(v.tensor().dtype(), i, -1);
    } else if (v.is_tensor_list()) {
      const TensorList& list = v.tensor_list();
      for (size_t k = 0; k < list.size(); ++k) {
        check(list[k].dtype(), i, static_cast<int64_t>(k));
      }
    } else if (v.tag() == Value::Tag::kDType) {
      check(v.dtype(), i, -1);
    }
  }
}

}  // namespace

namespace {
// DispatchHooked: an op at the depth of the installed DispatchArgumentHook. The hook rewrites
// the arguments with its predecessor installed (so its own ops do not come back to it, and
// an enclosing region's hook sees them), the op runs with no hook (its work happens at the
// depths below), and the hook sees the outputs.
ValueList DispatchHooked(const Operator& op, ValueList& args) {
  const internal::DispatchHookState state = internal::tls_dispatch_hook;
  struct Restore {
    internal::DispatchHookState state;
    ~Restore() { internal::tls_dispatch_hook = state; }
  } restore{state};
  // BeforeOp runs with the hook installed before `state` (its ops see that one).
  internal::tls_dispatch_hook = *state.previous;
  state.hook->BeforeOp(op, args);
  internal::tls_dispatch_hook = {};
  ValueList outputs = DispatchBoxed(op, args);
  state.hook->AfterOp(op, outputs);
  return outputs;
}
}  // namespace

ValueList DispatchBoxed(const Operator& op, ValueList& args) {
  // One pass replaces dead wrappers and notes whether any wrapper is left (only then does
  // an empty stack need the throwing second look) and whether any dtype is new (only then
  // is the op's dtype set consulted).
  bool all_dense = true;
  bool all_original = true;
  for (size_t i = 0; i < args.size(); ++i) {
    Value& v = args[i];
    if (v.is_tensor()) {
      all_dense &= ReplaceDeadWrapper(op, v.mutable_tensor(), i, -1);
      all_original &= IsOriginalDType(v.tensor().dtype());
    } else if (v.is_tensor_list()) {
      TensorList& list = v.mutable_tensor_list();
      for (size_t k = 0; k < list.size(); ++k) {
        all_dense &= ReplaceDeadWrapper(op, list[k], i, static_cast<int64_t>(k));
        all_original &= IsOriginalDType(list[k].dtype());
      }
    } else if (v.tag() == Value::Tag::kDType) {
      all_original &= IsOriginalDType(v.dtype());
    }
  }
  if (!all_original) [[unlikely]] CheckDTypes(op, args);
  Interpreter* top = LayerStack::Top();
  if (internal::tls_dispatch_hook.hook != nullptr &&
      internal::tls_dispatch_hook.depth == LayerStack::size() &&
      internal::tls_dispatch_hook.lowerings == internal::tls_lowerings) [[unlikely]] {
    return DispatchHooked(op, args);
  }
  if (top != nullptr) return top->Process(op, args);
  if (!all_dense) CheckAllDense(op, args);
  try {
    if (internal::tls_base_call_observer != nullptr) [[unlikely]] {
      return internal::tls_base_call_observer->RunBaseKernel(op, args);
    }
    return op.CallBaseKernel(args);
  } catch (const AllocationError& e) {
    internal::ThrowNamed(op, e);
  }
}

namespace internal {
void ThrowNamed(const Operator& op, const AllocationError& e) {
  throw AllocationError(absl::StrCat(op.name(), ": ", e.message()));
}
}  // namespace internal

}  // namespace ft

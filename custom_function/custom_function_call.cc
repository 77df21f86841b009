#include "custom_function/custom_function_call.h"

#include <cxxabi.h>

#include <cstdlib>
#include <mutex>

#include "autograd/grad_mode.h"
#include "custom_function/rules.h"
#include "dispatch/higher_order_operator.h"

namespace ft {

void SavedTensors::ThrowOutOfRange(size_t i) const {
  ThrowError("saved_tensors: index ", i, " is out of range, ", size(), " tensors were saved ",
             "(backward reads what setup_context passed to save_for_backward, jvp what it ",
             "passed to save_for_forward)");
}

const SavedTensors& FunctionCtx::saved_tensors() const {
  if (saved_override_ != nullptr) return *saved_override_;
  return phase_ == Phase::kBackward ? for_backward_ : for_forward_;
}

namespace {

std::string FullTypeName(const std::type_info& type) {
  int status = 0;
  char* name = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string result = status == 0 && name != nullptr ? name : type.name();
  std::free(name);
  return result;
}

}  // namespace

void FunctionCtx::ThrowStateTypeMismatch(std::string_view name, const std::type_info& held,
                                         const std::type_info& asked) {
  ThrowError("state: \"", std::string(name), "\" holds a ", FullTypeName(held), ", asked for a ",
             FullTypeName(asked), " (a named state keeps the type of its first use)");
}

namespace internal {

std::string DemangledName(const std::type_info& type) {
  std::string result = FullTypeName(type);
  // Keep the last component ("ns::Cube" -> "Cube"): the name appears in node names.
  const size_t colon = result.rfind("::");
  return colon == std::string::npos ? result : result.substr(colon + 2);
}

}  // namespace internal

namespace {

// The plain apply (no transform active): forward, then setup_context. forward runs with
// grad and forward grad mode off, as PyTorch runs a Function's forward (functorch_semantics
// §1.6 case 9): its ops are never what a transform differentiates; the Function's own rules
// are. (A transform forward starts inside, such as a jvp, turns them on for itself.)
ValueList PlainApply(const FunctionSpecPtr& spec, ValueList& args) {
  NoGradGuard no_grad;
  NoFwdGradGuard no_fwd_grad;
  if (spec->plain_apply) {
    ValueList outputs = spec->plain_apply(args);
    CheckDefined(spec->name, "forward's output", outputs);
    return outputs;
  }
  FunctionCtx ctx;
  return custom_function::ForwardWithContext(*spec, ctx, args);
}

HigherOrderOperator<FunctionSpecPtr>& CustomFunctionCallOp() {
  static auto* op = [] {
    auto* o = new HigherOrderOperator<FunctionSpecPtr>("custom_function_call", &PlainApply);
    custom_function::RegisterRules(*o);
    return o;
  }();
  return *op;
}

}  // namespace

ValueList CallCustomFunction(const FunctionSpecPtr& spec, ValueList& args) {
  if (args.size() != spec->num_args) {
    ThrowError(spec->name, ": forward takes ", spec->num_args, " arguments, got ", args.size());
  }
  CheckDefined(spec->name, "argument", args);
  // A wrapper of a finished transform behaves like its value (NOTE: [Dead wrappers]): ops
  // get this from the dispatcher; a Function call, which every rule sees first, does it
  // here (e.g. a backward calling a Function on a tensor its ctx saved at a dead level).
  for (Value& v : args) {
    while (v.is_tensor() && v.tensor().defined() && !v.tensor().is_dense() &&
           !v.tensor().impl()->is_alive_wrapper()) {
      v = Value(v.tensor().impl()->UnwrapDead(spec->name));
    }
  }
  return CustomFunctionCallOp()(spec, args);
}

}  // namespace ft

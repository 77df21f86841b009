// ft/custom_function/rules.h  (internal to //custom_function)
//
// The rules of the custom_function_call operator per transform (NOTE: [custom_function_call])
// and the checks they share.
#ifndef FT_CUSTOM_FUNCTION_RULES_H_
#define FT_CUSTOM_FUNCTION_RULES_H_

#include <optional>
#include <vector>

#include "custom_function/custom_function_call.h"
#include "dispatch/higher_order_operator.h"

namespace ft::custom_function {

// RegisterRules installs the grad, jvp, vmap and functionalize rules on the operator.
void RegisterRules(HigherOrderOperator<FunctionSpecPtr>& op);

// FunctionalizeRule: the rule under ft::functionalize (functionalize_rule.cc).
ValueList FunctionalizeRule(Interpreter& interpreter, const FunctionSpecPtr& spec,
                            ValueList& args);

// OutputSources: for each output, the index of the argument it IS (same object: forward
// returned an input, e.g. after modifying it in place), or -1.
std::vector<int> OutputSources(const ValueList& args, const ValueList& outputs);

// CheckReturnedInputsNotSaved: PyTorch's rule for setup_context: an input returned as-is as
// an output may not be saved (for backward or forward) unless it was marked dirty.
void CheckReturnedInputsNotSaved(const FunctionSpec& spec, const FunctionCtx& ctx,
                                 const ValueList& args, const ValueList& outputs);

// ForwardWithContext runs spec's forward and setup_context on `ctx` (through
// forward_with_context when the spec has it), then CheckReturnedInputsNotSaved. The caller
// sets the grad modes.
ValueList ForwardWithContext(const FunctionSpec& spec, FunctionCtx& ctx, const ValueList& args);

// ReductifyLeaf: a gradient (or tangent) `g` computed under a temporary vmap, batched at
// g_bdim (or not), brought to the batch dim of the input (or output) it is for, in_bdim:
// summed over the batch when the input is not batched, broadcast over it when only the input
// is, moved otherwise; with `target` (an example's shape) reduced per example to it. The
// table of functorch_semantics §2.6.
Tensor ReductifyLeaf(Tensor g, std::optional<int64_t> g_bdim, std::optional<int64_t> in_bdim,
                     int64_t batch_size, const std::optional<Shape>& target);

// Contains: whether `list` holds the very object `t`.
template <typename List>
bool Contains(const List& list, const Tensor& t) {
  for (const Tensor& e : list) {
    if (e.defined() && e.is_same(t)) return true;
  }
  return false;
}

}  // namespace ft::custom_function

#endif  // FT_CUSTOM_FUNCTION_RULES_H_

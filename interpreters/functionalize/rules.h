// ft/interpreters/functionalize/rules.h  (internal to //interpreters/functionalize)
//
// The functionalize rules of the op table's view ops (view_rules.cc) and in-place ops
// (inplace_rules.cc), registered by RegisterFunctionalizeRules.
#ifndef FT_INTERPRETERS_FUNCTIONALIZE_RULES_H_
#define FT_INTERPRETERS_FUNCTIONALIZE_RULES_H_

#include <optional>

#include "dispatch/operator.h"
#include "dispatch/value.h"
#include "tensor/tensor.h"

namespace ft::functionalize_rules {

// RegisterViewRules: the rule (PassThrough) and the inverse of every built-in view op.
void RegisterViewRules();
// RegisterInPlaceRules: the functional op of every built-in in-place op.
void RegisterInPlaceRules();

// IsViewOp: op is one of the built-in ops whose result may share memory with its first
// argument (the table in view_rules.cc).
bool IsViewOp(const Operator& op);

// EagerViewMetas: for a view op called with `values` (one level down) whose argument 0 has
// the eager geometry `meta` (NOTE: [Eager geometry]), and whose call one level down gave
// `outputs`: the eager geometry of each tensor output (list elements in order) when the
// eager op would return views of its argument, or nullopt when it would return new tensors
// (a reshape whose strides allow no view, contiguous of a non-contiguous tensor, `to` another
// dtype). For `view` with a geometry that allows none, throws the eager error.
std::optional<TensorList> EagerViewMetas(const Operator& op, const ValueList& values,
                                         const Tensor& meta, const ValueList& outputs);

// IsWritableView: whether a view `op` made, with eager geometry `meta`, can be written
// through: functionalize knows op's inverse and the view does not broadcast (an expand
// that gives a dim stride 0).
bool IsWritableView(const Operator& op, const Tensor& meta);

}  // namespace ft::functionalize_rules

#endif  // FT_INTERPRETERS_FUNCTIONALIZE_RULES_H_

// The functionalize rule of custom_function_call (NOTE: [custom_function_call]), which the
// seed leaves "not yet implemented":
//   - the Function runs one level down on its arguments' synced values, so the levels below
//     (a grad level outside functionalize, a vmap level, ...) run their own rules for it: the
//     user's backward, jvp and vmap rules hold under grad(functionalize(...)) and
//     vmap(functionalize(...));
//   - a forward that writes an argument in place (mark_dirty) writes that argument's value one
//     level down; the write becomes the argument wrapper's new value, so it reaches the
//     caller's tensor at functionalize's exit and every view of the argument sees it;
//   - outputs are wrapped at this level: an output that is an argument's value is that
//     argument's wrapper (mark_dirty's identity), every other output a new base;
//   - saved tensors are the values one level down at save time: later writes at this level
//     replace wrappers' values instead of writing them, so what was saved keeps its values.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "custom_function/rules.h"
#include "dispatch/higher_order_operator.h"
#include "interpreters/functionalize/functional_tensor.h"
#include "interpreters/functionalize/functionalize_interpreter.h"

namespace ft::custom_function {

ValueList FunctionalizeRule(Interpreter& interpreter, const FunctionSpecPtr& spec,
                            ValueList& args) {
  auto* functionalize = dynamic_cast<FunctionalizeInterpreter*>(&interpreter);
  if (functionalize == nullptr) {
    ThrowError(spec->name, ": a Function call met a Functionalize interpreter (level ",
               interpreter.level(), ") that is not ft::functionalize's, and has no rule for it");
  }
  const int64_t level = functionalize->level();
  ValueList values = SyncAndUnwrap(args, level);
  // The version of each argument's value, to tell which ones forward writes in place.
  std::vector<int64_t> versions(args.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    if (MaybeFunctionalAt(args[i].is_tensor() ? args[i].tensor() : Tensor(), level) != nullptr) {
      versions[i] = values[i].tensor().data_version();
    }
  }
  ValueList outputs;
  {
    LowerGuard lower(functionalize);
    outputs = CallCustomFunction(spec, values);
  }
  std::vector<FunctionalTensorImpl*> written;
  for (size_t i = 0; i < args.size(); ++i) {
    FunctionalTensorImpl* w =
        MaybeFunctionalAt(args[i].is_tensor() ? args[i].tensor() : Tensor(), level);
    if (w == nullptr || values[i].tensor().data_version() == versions[i]) continue;
    for (const FunctionalTensorImpl* other : written) {
      if (other == w) continue;  // the same tensor passed twice, written once
      if (other->storage() == w->storage()) {
        ThrowError(spec->name, ": forward wrote arguments that share memory (argument ", i,
                   " and an earlier one) under functionalize (level ", level, "); pass the ",
                   "base once and take the views inside the Function");
      }
    }
    if (std::find(written.begin(), written.end(), w) != written.end()) continue;
    if (!w->writable()) {
      ThrowError(spec->name, ": forward wrote argument ", i, " in place, a view of shape ",
                 ShapeToString(args[i].tensor().sizes()), " that functionalize (level ", level,
                 ") cannot write through (a broadcasting expand, or a view made by an op it ",
                 "knows no inverse for); clone it first");
    }
    w->Write(values[i].tensor());
    written.push_back(w);
  }
  return functionalize->WrapOutputs(nullptr, args, values, std::move(outputs));
}

}  // namespace ft::custom_function

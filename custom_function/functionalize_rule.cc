// The functionalize rule of custom_function_call (NOTE: [custom_function_call]), which the
// seed leaves "not yet implemented":
//   - the Function runs one level down on its arguments' synced values, so the levels below
//     (a grad level outside functionalize, a vmap level, ...) run their own rules for it: the
//     user's backward, jvp and vmap rules hold under grad(functionalize(...)) and
//     vmap(functionalize(...));
//   - forward gets a private copy of each wrapped argument's value (one per wrapper, so a
//     tensor passed twice is one tensor to forward): a value may be the caller's own tensor,
//     or share memory with a view's base, and a write must reach those only through the
//     wrapper. A forward that writes an argument in place (mark_dirty) writes its copy; the
//     copy becomes the argument wrapper's new value, so the write reaches the caller's tensor
//     at functionalize's exit (never if f throws) and every view of the argument sees it.
//     Each copy's version counter tells exactly which argument forward wrote (values of a
//     view and its base share one counter);
//   - outputs are wrapped at this level: an output that is an argument's value is that
//     argument's wrapper (mark_dirty's identity), every other output a new base;
//   - saved tensors are the values one level down at save time: later writes at this level
//     replace wrappers' values instead of writing them, so what was saved keeps its values.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "custom_function/rules.h"
#include "dispatch/higher_order_operator.h"
#include "interpreters/functionalize/functional_tensor.h"
#include "interpreters/functionalize/functionalize_interpreter.h"
#include "ops/ops.h"

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
  // The version of each wrapped argument's copy, to tell which ones forward writes in place.
  std::vector<int64_t> versions(args.size(), 0);
  ValueList outputs;
  {
    LowerGuard lower(functionalize);
    std::vector<std::pair<const FunctionalTensorImpl*, Tensor>> copies;
    for (size_t i = 0; i < args.size(); ++i) {
      const FunctionalTensorImpl* w =
          MaybeFunctionalAt(args[i].is_tensor() ? args[i].tensor() : Tensor(), level);
      if (w == nullptr) continue;
      auto same = std::find_if(copies.begin(), copies.end(),
                               [w](const auto& copy) { return copy.first == w; });
      if (same == copies.end()) {
        copies.emplace_back(w, clone(values[i].tensor()));
        same = copies.end() - 1;
      }
      values[i] = Value(same->second);
      versions[i] = same->second.data_version();
    }
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

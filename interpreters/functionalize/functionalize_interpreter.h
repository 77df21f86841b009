// ft/interpreters/functionalize/functionalize_interpreter.h
//
// FunctionalizeInterpreter: the interpreter ft::functionalize pushes (one per call, at a fresh
// level), and the steps its rules share.
//
// How an op is processed at a functionalize level (NOTE: [Functional wrappers] in
// functional_tensor.h says what a wrapper holds):
//   1. Every functional wrapper of this level among the arguments is synced (stale views
//      regenerated from their base) and replaced by its value, one level down.
//   2. An in-place op on a wrapper of this level runs its functional rule instead (the
//      out-of-place op one level down: add for add_, full_like for fill_, ...); the result,
//      checked to keep the wrapper's sizes and cast to its dtype as the in-place kernel would,
//      becomes the wrapper's new value. The op returns the very wrapper it was given. An
//      in-place op on a tensor functionalize does not own (captured from outside the
//      function) runs as it is, eagerly.
//   3. Any other op is lowered and run once; each tensor output is wrapped at this level: the
//      same object as an input's value is that input's wrapper; an output sharing memory with
//      its first argument's value is a view of that wrapper (recipe: its parent's recipe plus
//      this op and its arguments, NOTE: [Functional wrappers]); an output sharing memory with
//      a tensor functionalize does not own stays as it is (writes through it reach that
//      tensor, as eagerly); any other output is a new base. In kMutationsAndViews mode a
//      view's value is a copy, so no value ever aliases another.
// The op table's kFunctionalize slot holds a rule for every in-place op (its functional op)
// and every view op (step 3, with the inverse that writes through the view); every other op
// takes step 3 directly.
//
// Example (what functionalize.cc does around a user's function):
//   FunctionalizeInterpreter interp(LayerStack::NewLevel(), FunctionalizeRemove::kMutations);
//   InterpreterScope scope(&interp);
//   Tensor b = interp.Wrap(x);    // f's argument
//   ft::add_(b, y);               // b's value := add(x, y); x is untouched
#ifndef FT_INTERPRETERS_FUNCTIONALIZE_FUNCTIONALIZE_INTERPRETER_H_
#define FT_INTERPRETERS_FUNCTIONALIZE_FUNCTIONALIZE_INTERPRETER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "dispatch/interpreter.h"
#include "dispatch/operator.h"
#include "dispatch/value.h"
#include "interpreters/functionalize/functional_tensor.h"
#include "tensor/tensor.h"

namespace ft {

// FunctionalizeRemove: what functionalize removes (torch.func.functionalize's `remove`).
enum class FunctionalizeRemove {
  kMutations,          // in-place ops become out-of-place; views stay views
  kMutationsAndViews,  // and views become copies: no output aliases an input
};

const char* FunctionalizeRemoveName(FunctionalizeRemove remove);

class FunctionalizeInterpreter : public Interpreter {
 public:
  // `level` must come from LayerStack::NewLevel().
  FunctionalizeInterpreter(int64_t level, FunctionalizeRemove remove);

  FunctionalizeRemove remove() const { return remove_; }
  // copy_views: kMutationsAndViews (view values are copies).
  bool copy_views() const { return remove_ == FunctionalizeRemove::kMutationsAndViews; }

  ValueList Process(const Operator& op, ValueList& args) override;
  // "Functionalize(level=2, remove=mutations)".
  std::string DebugString() const override;

  // Wrap: `value` (one level down) as a new base wrapper of this level.
  Tensor Wrap(Tensor value) const;

  // PassThrough: step 3 of the header comment (the rule of view ops, and of every op
  // without one).
  ValueList PassThrough(const Operator& op, ValueList& args);

  // FunctionalOp computes an in-place op's result out of place from its synced, unwrapped
  // arguments (argument `mutated_arg` is self's value); it runs lowered.
  using FunctionalOp = std::function<Tensor(const ValueList& values)>;
  // InPlace: step 2 of the header comment, with `functional` as the op's functional rule.
  ValueList InPlace(const Operator& op, ValueList& args, const FunctionalOp& functional);

  // WrapOutputs wraps `outputs` of a call (of `op`, or of a custom Function when op is null:
  // its outputs are never views) whose arguments were `args` at this level and `values`
  // once unwrapped, as step 3 says.
  ValueList WrapOutputs(const Operator* op, const ValueList& args, const ValueList& values,
                        ValueList outputs) const;

 private:
  FunctionalizeRemove remove_;
};

// SyncAndUnwrap: `args` with every functional wrapper of `level` (TensorList elements
// included) synced and replaced by its value.
ValueList SyncAndUnwrap(const ValueList& args, int64_t level);

// RegisterFunctionalizeRules fills the kFunctionalize slot of every built-in in-place and
// view op (idempotent, thread-safe). ft::functionalize calls it before its first use.
void RegisterFunctionalizeRules();

}  // namespace ft

#endif  // FT_INTERPRETERS_FUNCTIONALIZE_FUNCTIONALIZE_INTERPRETER_H_

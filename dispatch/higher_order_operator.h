// ft/dispatch/higher_order_operator.h
//
// HigherOrderOperator<Callable>: an operator whose calls take a callable plus operands
// (PyTorch's HigherOrderOperator; custom_function_call is one, its callable being a user's
// Function). It has one rule per TransformType, registered like PyTorch's `py_impl`:
//   - no transform active: the default implementation runs directly;
//   - otherwise the rule for the top interpreter's TransformType runs, with that interpreter;
//     a missing rule is an ft::Error naming the operator and the transform.
// A rule typically unwraps its level, takes a LowerGuard and calls the operator again, so
// the levels below see it (interpreter.h).
//
// Example:
//   HigherOrderOperator<MyFn> call_fn("call_fn", [](const MyFn& f, ValueList& xs) {
//     return f.Run(xs);
//   });
//   call_fn.SetRule(TransformType::kGrad, [&](Interpreter& interp, const MyFn& f,
//                                             ValueList& xs) { ... });
//   ValueList out = call_fn(fn, operands);
#ifndef FT_DISPATCH_HIGHER_ORDER_OPERATOR_H_
#define FT_DISPATCH_HIGHER_ORDER_OPERATOR_H_

#include <array>
#include <functional>
#include <string>
#include <utility>

#include "dispatch/interpreter.h"
#include "dispatch/value.h"
#include "tensor/error.h"

namespace ft {

template <typename Callable>
class HigherOrderOperator {
 public:
  using DefaultImpl = std::function<ValueList(const Callable& fn, ValueList& operands)>;
  using Rule =
      std::function<ValueList(Interpreter& interpreter, const Callable& fn, ValueList& operands)>;

  HigherOrderOperator(std::string name, DefaultImpl default_impl)
      : name_(std::move(name)), default_(std::move(default_impl)) {}

  const std::string& name() const { return name_; }

  // SetRule registers the rule for `transform` (replacing any previous one).
  void SetRule(TransformType transform, Rule rule) {
    rules_[static_cast<int>(transform)] = std::move(rule);
  }
  bool has_rule(TransformType transform) const {
    return static_cast<bool>(rules_[static_cast<int>(transform)]);
  }

  // operator() dispatches one call: default with an empty stack, else the top's rule.
  ValueList operator()(const Callable& fn, ValueList& operands) const {
    Interpreter* top = LayerStack::Top();
    if (top == nullptr) return default_(fn, operands);
    const Rule& rule = rules_[static_cast<int>(top->key())];
    if (!rule) {
      ThrowError(name_, ": no rule for the ", TransformName(top->key()),
                 " transform (level ", top->level(), ")");
    }
    return rule(*top, fn, operands);
  }

 private:
  std::string name_;
  DefaultImpl default_;
  std::array<Rule, kNumTransformTypes> rules_;
};

}  // namespace ft

#endif  // FT_DISPATCH_HIGHER_ORDER_OPERATOR_H_

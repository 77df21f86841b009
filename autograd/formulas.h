// ft/autograd/formulas.h
//
// Derivative formulas: for each op, a vjp formula mapping the gradients of its outputs to the
// gradients of its tensor inputs, written with the public ops so that it is itself
// differentiable and batchable (grad of grad and vmap of grad need nothing more). Ops whose
// outputs carry no gradient (comparisons, argmax, ...) are marked non-differentiable.
//
// A formula receives the op's (unwrapped) inputs and outputs and returns one gradient per
// tensor input, in argument order, with TensorList arguments expanded element by element; an
// undefined tensor means "no gradient" (e.g. for an integer index argument).
//
// Example (sin):
//   SetVjp(OpFor<&kernels::sin>(), [](const VjpContext& c, const TensorList& g) {
//     return TensorList{g[0] * cos(c.input(0))};
//   });
#ifndef FT_AUTOGRAD_FORMULAS_H_
#define FT_AUTOGRAD_FORMULAS_H_

#include <functional>
#include <string>
#include <vector>

#include "dispatch/operator.h"
#include "dispatch/value.h"
#include "tensor/tensor.h"

namespace ft::autograd {

struct VjpContext {
  const Operator& op;
  const ValueList& inputs;   // the op's arguments, one level down (tensors unwrapped)
  const ValueList& outputs;  // the op's results, one level down
  // needs_grad[k]: whether the k-th tensor input (argument order, lists expanded) wants a
  // gradient. A formula may return an undefined tensor for the others and skip their work
  // (e.g. the constant in x * 0.9). Empty means "all".
  std::vector<bool> needs_grad = {};

  const Tensor& input(size_t i) const { return inputs[i].tensor(); }
  const Tensor& output(size_t i) const { return outputs[i].tensor(); }
  bool needs(size_t k) const { return needs_grad.empty() || needs_grad[k]; }
};

using VjpFormula = std::function<TensorList(const VjpContext& ctx, const TensorList& grads)>;

// SetVjp installs op's formula; MarkNonDifferentiable marks op's outputs as carrying no
// gradient.
void SetVjp(const Operator& op, VjpFormula formula);
void MarkNonDifferentiable(const Operator& op);

// MarkInputValuesUnused: op's formula reads only its inputs' shapes and dtypes, never their
// values (add, sum, reshape, ...), so writing an input in place after the op ran cannot
// change its gradient (NOTE: [Saved tensor versions] in interpreters/grad).
void MarkInputValuesUnused(const Operator& op);
bool ReadsInputValues(const Operator& op);

// BackwardName: the name of op's backward node, e.g. "LogSoftmaxBackward" for log_softmax
// (built when the formula is set, so reading it on the hot path takes no lock).
const std::string& BackwardName(const Operator& op);

// GetVjp returns op's formula or nullptr (the pointer stays valid for the process, also when
// later formulas are set); IsNonDifferentiable tells the mark.
const VjpFormula* GetVjp(const Operator& op);
bool IsNonDifferentiable(const Operator& op);

// RegisterDerivatives installs every built-in formula (idempotent, thread-safe).
void RegisterDerivatives();

}  // namespace ft::autograd

#endif  // FT_AUTOGRAD_FORMULAS_H_

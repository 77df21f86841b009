// ft/autograd/formulas.h
//
// Derivative formulas: for each op, a vjp formula mapping the gradients of its outputs to the
// gradients of its tensor inputs (reverse mode), and a jvp formula mapping the tangents of its
// tensor inputs to the tangents of its outputs (forward mode). Both are written with the
// public ops so that they are themselves differentiable and batchable (grad of grad, jvp of
// grad and vmap of either need nothing more). Ops whose outputs carry no gradient
// (comparisons, argmax, ...) are marked non-differentiable and need neither.
//
// A formula receives the op's (unwrapped) inputs and outputs and returns one gradient per
// tensor input, in argument order, with TensorList arguments expanded element by element; an
// undefined tensor means "no gradient" (e.g. for an integer index argument).
//
// A jvp formula receives the same inputs and outputs and one tangent per tensor input (same
// indexing as the vjp's gradients; an undefined tangent is zero, and at least one is defined)
// and returns one tangent per output (TensorList outputs expanded; undefined = zero). The
// JvpInterpreter broadcasts a returned tangent to its output's shape and converts it to the
// output's dtype, so `ta + tb` is a valid tangent for add with broadcasting.
//
// Example (sin):
//   SetVjp(OpFor<&kernels::sin>(), [](const VjpContext& c, const TensorList& g) {
//     return TensorList{g[0] * cos(c.input(0))};
//   });
//   SetJvp(OpFor<&kernels::sin>(), [](const JvpContext& c, const TensorList& t) {
//     return TensorList{t[0] * cos(c.input(0))};
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
  absl::InlinedVector<bool, 6> needs_grad = {};

  const Tensor& input(size_t i) const { return inputs[i].tensor(); }
  const Tensor& output(size_t i) const { return outputs[i].tensor(); }
  bool needs(size_t k) const { return needs_grad.empty() || needs_grad[k]; }
};

using VjpFormula = std::function<TensorList(const VjpContext& ctx, const TensorList& grads)>;

// JvpContext: what a jvp formula sees (values one level down, like VjpContext).
struct JvpContext {
  const Operator& op;
  const ValueList& inputs;
  const ValueList& outputs;

  const Tensor& input(size_t i) const { return inputs[i].tensor(); }
  const Tensor& output(size_t i) const { return outputs[i].tensor(); }
};

using JvpFormula = std::function<TensorList(const JvpContext& ctx, const TensorList& tangents)>;

// SetVjp installs op's formula; MarkNonDifferentiable marks op's outputs as carrying no
// gradient.
void SetVjp(const Operator& op, VjpFormula formula);
void MarkNonDifferentiable(const Operator& op);
// SetJvp installs op's forward-mode formula.
void SetJvp(const Operator& op, JvpFormula formula);

// MarkInputValuesUnused: op's formula reads only its inputs' shapes and dtypes, never their
// values (add, sum, reshape, ...), so writing an input in place after the op ran cannot
// change its gradient (NOTE: [Saved tensor versions] in interpreters/grad).
void MarkInputValuesUnused(const Operator& op);
bool ReadsInputValues(const Operator& op);
// ReadsOutputValues: op's vjp formula reads its outputs' values (exp: g * y), so writing an
// output in place after the op ran is an error at backward. Set for the built-in ops by
// RegisterDerivatives; off by default.
void MarkOutputValuesRead(const Operator& op);
bool ReadsOutputValues(const Operator& op);

// BackwardName: the name of op's backward node, e.g. "LogSoftmaxBackward" for log_softmax
// (built when the formula is set, so reading it on the hot path takes no lock).
const std::string& BackwardName(const Operator& op);

// GetVjp returns op's formula or nullptr (the pointer stays valid for the process, also when
// later formulas are set); IsNonDifferentiable tells the mark.
const VjpFormula* GetVjp(const Operator& op);
bool IsNonDifferentiable(const Operator& op);
// GetJvp returns op's jvp formula or nullptr (stable pointer, like GetVjp).
const JvpFormula* GetJvp(const Operator& op);

// OpDerivatives: everything the derivative table holds for one op, read in one lookup by
// the grad level on every recorded op (the accessors above each look the op up again).
struct OpDerivatives {
  VjpFormula vjp;                 // empty: no reverse-mode formula
  JvpFormula jvp;                 // empty: no forward-mode formula
  std::string backward_name;      // set with vjp
  bool nondifferentiable = false;
  bool reads_input_values = true;
  bool reads_output_values = false;
};
// FindDerivatives returns op's entry, or nullptr when nothing was ever set for op (then op
// has no formula, is differentiable, reads its inputs and not its outputs). The pointer
// stays valid for the process.
const OpDerivatives* FindDerivatives(const Operator& op);

// RegisterDerivatives installs every built-in formula (idempotent, thread-safe).
void RegisterDerivatives();

}  // namespace ft::autograd

#endif  // FT_AUTOGRAD_FORMULAS_H_

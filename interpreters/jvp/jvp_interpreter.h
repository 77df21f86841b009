// ft/interpreters/jvp/jvp_interpreter.h
//
// The forward-mode transform's machinery: DualImpl (a dual tensor of one level) and
// JvpInterpreter.
//
// A dual tensor pairs a primal with its tangent at one level; both are values one level
// down (dense tensors, or wrappers of outer levels), and the tangent has the primal's shape
// and dtype. JvpInterpreter::Process unwraps its level's duals, lowers, runs the op on the
// primals for the levels below, and when some input carries a tangent, runs the op's jvp
// formula (autograd/formulas.h) on the primals and tangents, also lowered, then wraps each
// output with its tangent. Because the formulas are ordinary ops seen by the outer levels,
// jvp of grad, grad of jvp, jvp of jvp and vmap of jvp need nothing else. No graph is kept.
//
// Invariants: a dual's tangent is defined and shaped like its primal (outputs whose tangent
// is zero are left unwrapped: constants at this level); a dual whose level died behaves like
// its primal (NOTE: [Dead wrappers] in tensor/tensor.h).
//
// In-place ops: on a dual of this level the primal is written in place and the dual's
// tangent replaced by the op's tangent (the out-of-place formula, over the value before the
// write); writing a tangent-carrying value into a tensor that is not a dual of this level
// (captured from outside the function) is an ft::Error, as in functorch, as are writing into
// an input of the transform (or a view of one: it is the caller's tensor) and using a dual
// whose primal was changed through a view (is_stale).
//
// Forward grad mode (autograd/grad_mode.h): ops run with it off get no tangent; a level
// entered with it off lowers with it off.
#ifndef FT_INTERPRETERS_JVP_JVP_INTERPRETER_H_
#define FT_INTERPRETERS_JVP_JVP_INTERPRETER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "dispatch/interpreter.h"
#include "tensor/tensor.h"

namespace ft {

class DualImpl : public TensorImpl {
 public:
  DualImpl(Tensor primal, Tensor tangent, int64_t level, std::shared_ptr<const bool> alive);

  const Tensor& primal() const { return primal_; }
  const Tensor& tangent() const { return tangent_; }
  int64_t level() const { return level_; }
  // An in-place op on the dual gives it a new tangent (same shape and dtype) and records the
  // primal's new data_version.
  void set_tangent(Tensor tangent);
  // is_stale: the primal was written in place other than through this dual (through a view
  // or its base), so the tangent no longer describes it (as NOTE: [Stale history] in
  // interpreters/grad/grad_interpreter.h).
  bool is_stale() const { return primal_.data_version() != recorded_version_; }

  const Tensor* wrapped_value() const override { return &primal_; }
  bool is_alive_wrapper() const override { return *alive_; }
  // A dead dual behaves exactly like its primal.
  Tensor UnwrapDead(const std::string& op) const override { return primal_; }
  // "DualTensor(lvl=1, primal=..., tangent=...)".
  std::string WrapperRepr() const override;

 private:
  Tensor primal_;
  Tensor tangent_;
  int64_t level_;
  std::shared_ptr<const bool> alive_;
  int64_t recorded_version_;
};

Tensor MakeDual(Tensor primal, Tensor tangent, int64_t level, std::shared_ptr<const bool> alive);

// MaybeDualAt: t's DualImpl when t is a dual of exactly `level` (live or dead), else nullptr.
DualImpl* MaybeDualAt(const Tensor& t, int64_t level);

// CheckTangentCurrent throws the ft::Error for a stale dual (is_stale): `user` (an op's or a
// custom Function's name) would otherwise get a silently wrong tangent. The interpreter and
// the custom-Function rule both call it.
void CheckTangentCurrent(const DualImpl& d, absl::string_view user);

class JvpInterpreter : public Interpreter {
 public:
  // prev_fwd_grad_mode: forward grad mode when the transform was entered; when it was off,
  // this level passes ops down with it off.
  JvpInterpreter(int64_t level, bool prev_fwd_grad_mode);
  bool prev_fwd_grad_mode() const { return prev_fwd_grad_mode_; }
  ValueList Process(const Operator& op, ValueList& args) override;

 private:
  bool prev_fwd_grad_mode_;
};

}  // namespace ft

#endif  // FT_INTERPRETERS_JVP_JVP_INTERPRETER_H_

// ft/interpreters/grad/grad_interpreter.h
//
// The reverse-mode transform's machinery: GradWrapperImpl (functorch's GradTrackingTensor)
// and GradInterpreter.
//
// A GradWrapper holds a value one level down, its level, and the Edge its gradient flows
// into (autograd/graph.h): a LeafNode for an input being differentiated, the producing op's
// node for an intermediate, none for a constant at this level. GradInterpreter::Process
// unwraps its level, lowers, runs the op for the levels below, and, when an input carries a
// gradient, records a node whose backward is the op's vjp formula (autograd/formulas.h) over
// the values one level down, then wraps the outputs. Because those values may themselves be
// wrappers of outer levels, the backward (run after this level is popped) is seen by the
// outer levels: grad of grad and vmap of grad need nothing else.
//
// A wrapper whose level died (e.g. saved in a vjp_fn used after vjp returned) unwraps itself
// when an op meets it (NOTE: [Dead wrappers] in tensor/tensor.h).
//
// Grad mode (autograd/grad_mode.h): ops run with grad mode off are not recorded; a level
// entered with grad mode off lowers with grad mode off (functorch's GradInterpreter.lower,
// without the seed's bug of testing the method instead of its value).
//
// In-place ops (NOTE: [In-place under grad] in grad_interpreter.cc): on a wrapper of this
// level the value is written in place and the wrapper's history rebased onto a node of the
// op (PyTorch's rebase_history); writing a gradient-carrying value into a tensor that is not
// a wrapper of this level (captured from outside the function, or a plain factory tensor)
// is an ft::Error, as is writing in place into an input being differentiated or using a
// tensor whose value changed through a view (NOTE: [Stale history]).
#ifndef FT_INTERPRETERS_GRAD_GRAD_INTERPRETER_H_
#define FT_INTERPRETERS_GRAD_GRAD_INTERPRETER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "autograd/graph.h"
#include "dispatch/interpreter.h"
#include "tensor/tensor.h"

namespace ft {

// NOTE: [Gradients across named axes]
// Collectives (psum, all_gather, ..., //distributed) reduce or gather over a named axis: a
// vmap's examples or a group's processes (dispatch/named_axes.h). For their gradients to be
// right, a grad level tracks, for each axis named outside it, whether each value it holds
// varies over the axis (each member has its own) or is invariant (every member has the
// same), as JAX's shard_map does (its "varying manual axes"):
//   - an input being differentiated is invariant over a process axis: a parameter that
//     every process holds (the data-parallel convention; ft::dist::PerProcessInputs makes
//     them each process's own instead); over a vmap axis it varies when it is batched there;
//   - over a vmap axis, any other value varies when it is batched there;
//   - over a process axis, a tensor that existed before the level was entered (data
//     captured by f or passed to it without being differentiated) is each process's own, so
//     it varies; one made inside f without an op (a factory, a scalar operand) is a constant
//     every process makes alike, so it is invariant;
//   - an op's result varies over the axes any of its inputs varies over (a result that
//     carries no gradient but varies over a process axis is wrapped anyway, with no
//     history, so that what was computed from a process's data stays its own); a collective's
//     result is invariant over its axis (psum, pmean, pmax, all_gather) or varies over it
//     (psum_scatter, axis_index) (OpSchema::axis_arg and makes_invariant).
// Where a value that carries a gradient meets one that varies over more axes (a parameter
// times a process's data), the value is implicitly broadcast over the extra axes (JAX's
// pvary); the transpose of that broadcast sums its gradient over them: a psum. One
// PvaryBackward node per value and set of axes gathers every such use, so each gradient is
// summed once, however often the parameter is used. Whether the sum runs depends on the
// function's output (its "objective"):
//   - an output invariant over the axis (a loss after pmean) is one value for all members,
//     so the gradient of a shared parameter is the sum of every member's part: the psum
//     runs, and grad(pmean(local_loss, "dp")) is the global mean gradient on every
//     process, with one all-reduce per gradient;
//   - an output that varies over the axis is each member's own (per-example losses under
//     vmap, a process's local loss): the gradient is that member's own, and the node is the
//     identity. A level with no collective over its axes therefore computes exactly what
//     it would without named axes.
// An output that varies over an axis but was computed through a collective over it, from
// a value broadcast over it, would need other members' shares of its gradient: grad
// refuses it with an ft::Error (reduce the output over the axis first).
// The collectives' own transposes need no tracking: psum's is the identity on the
// (invariant) cotangent, all_gather's takes this member's slice, psum_scatter's is
// all_gather (//distributed/collectives.cc).
class AxisObjective {
 public:
  // The named axes outside the level (the first `count` of NamedAxes), and their ids.
  int count = 0;
  int64_t name_ids[64] = {};
  // Which of them are process axes, and over which the inputs being differentiated vary.
  uint64_t process_axes = 0;
  uint64_t inputs_vary = 0;
  // When the level was entered: tensors allocated before are data from outside f.
  Storage::AllocationMark entered{};
  // Axes over which the level's outputs are invariant (set when f returned).
  uint64_t invariant = 0;
  // Axes that a collective at this level reduced or scattered over, and axes over which a
  // PvaryBackward node was made: both with a varying output is the refused case above.
  uint64_t collectives = 0;
  uint64_t broadcasts = 0;
};

class GradWrapperImpl : public TensorImpl {
 public:
  GradWrapperImpl(Tensor value, int64_t level, std::shared_ptr<const bool> alive,
                  autograd::Edge grad_edge, uint64_t varying = 0);

  const Tensor& value() const { return value_; }
  int64_t level() const { return level_; }
  const autograd::Edge& grad_edge() const { return grad_edge_; }
  bool requires_grad() const { return grad_edge_.valid(); }
  // varying: bit i set when the value varies over named axis i of its level (NOTE:
  // [Gradients across named axes]); 0 when no axis is named outside the level.
  uint64_t varying() const { return varying_; }
  void set_varying(uint64_t varying) { varying_ = varying; }
  // BroadcastEdge: where the gradient of a use of this value that broadcasts it over the
  // axes `missing` goes: one PvaryBackward node per set of axes and history, made on
  // first use, that sums the gradient over them and passes it to grad_edge().
  autograd::Edge BroadcastEdge(uint64_t missing, const std::shared_ptr<AxisObjective>& objective);

  // NOTE: [Stale history] The wrapper remembers its value's data_version when its history
  // (grad_edge) was recorded. An in-place op on the wrapper itself records new history and
  // a new version (set_history). If the value changes any other way (an in-place op on a
  // view sharing its storage), the history no longer describes the value, and using it for
  // a gradient would be silently wrong: is_stale() tells, and the interpreter throws.
  void set_history(autograd::Edge grad_edge);
  bool is_stale() const { return value_.data_version() != recorded_version_; }

  bool is_alive_wrapper() const override { return *alive_; }
  const Tensor* wrapped_value() const override { return &value_; }
  // A dead grad wrapper behaves exactly like its value.
  Tensor UnwrapDead(const std::string& op) const override { return value_; }
  // "GradTrackingTensor(lvl=2, value=...)".
  std::string WrapperRepr() const override;

 private:
  Tensor value_;
  int64_t level_;
  std::shared_ptr<const bool> alive_;
  autograd::Edge grad_edge_;
  int64_t recorded_version_;
  uint64_t varying_;
  struct Broadcast {
    uint64_t missing;
    const autograd::Node* history;  // grad_edge_ when the node was made
    autograd::Edge edge;
  };
  std::vector<Broadcast> broadcasts_;
};

Tensor MakeGradWrapper(Tensor value, int64_t level, std::shared_ptr<const bool> alive,
                       autograd::Edge grad_edge, uint64_t varying = 0);

// NamedAxisVarying: the bits over the named axes of `objective`'s level of a value that is
// not a wrapper of that level (NOTE: [Gradients across named axes]): an outer grad
// wrapper's own record where it has one, else batchedness for a vmap axis and, for a
// process axis, the rules for inputs being differentiated (`differentiated`) and for
// tensors from outside f or made inside it.
uint64_t NamedAxisVarying(const Tensor& t, const AxisObjective& objective, bool differentiated);

// RouteAcrossNamedAxes: for one op at grad level `level` whose tensor inputs (lists
// expanded) are `inputs` (as passed, wrappers included) with gradient edges `edges`,
// computes the variance of its results (returned) and reroutes the edge of each input
// that varies over fewer axes through its BroadcastEdge. For a collective, `axis_id` is
// its axis's name id and `makes_invariant` its OpSchema flag; -1 for any other op.
// Custom Function rules call it as the interpreter does for ops.
uint64_t RouteAcrossNamedAxes(int64_t level, const std::shared_ptr<AxisObjective>& objective,
                              absl::Span<const Tensor* const> inputs, autograd::EdgeList& edges,
                              int64_t axis_id, bool makes_invariant);

// MaybeGradWrapperAt: t's GradWrapperImpl when t is a grad wrapper of exactly `level`.
GradWrapperImpl* MaybeGradWrapperAt(const Tensor& t, int64_t level);

// CheckHistoryCurrent throws NOTE: [Stale history]'s ft::Error when `w` carries a gradient
// and its value was written through an alias after its history was recorded: `user` (an
// op's or a custom Function's name) would otherwise get a silently wrong gradient. Every
// consumer of wrappers at a level calls it: the interpreter for ops and the custom-Function
// rule (the property test found the rule without it returning wrong gradients).
void CheckHistoryCurrent(const GradWrapperImpl& w, absl::string_view user);

class RematRecord;  // grad_interpreter.cc

class GradInterpreter : public Interpreter {
 public:
  // prev_grad_mode: grad mode when the transform was entered (autograd/grad_mode.h): when
  // it was off, this level passes ops down with grad mode off.
  GradInterpreter(int64_t level, bool prev_grad_mode);
  ~GradInterpreter() override;
  bool prev_grad_mode() const { return prev_grad_mode_; }
  ValueList Process(const Operator& op, ValueList& args) override;
  // objective: the named axes outside this level and what f's outputs are over them
  // (NOTE: [Gradients across named axes]); null when no axis is named outside it.
  const std::shared_ptr<AxisObjective>& objective() const { return objective_; }

 private:
  friend class RematScope;
  // RouteNamedAxes: RouteAcrossNamedAxes for one op (0 without named axes).
  uint64_t RouteNamedAxes(const Operator& op, const ValueList& args,
                          absl::Span<const Tensor* const> passed, autograd::EdgeList& edges);
  // KeepVarying wraps, with no history, the results of an op that carries no gradient
  // when they vary over a process axis (NOTE: [Gradients across named axes]).
  void KeepVarying(const Operator& op, const ValueList& args, ValueList& outputs);
  bool prev_grad_mode_;
  std::shared_ptr<AxisObjective> objective_;
  std::shared_ptr<RematRecord> remat_;  // set while a RematScope covers this level
};

// NOTE: [Rematerialization]
// While a RematScope lives, every grad level on this thread's stack records the ops that
// reach it (the op, its arguments one level down: outputs of earlier recorded ops by
// reference, other tensors and values as they are, and the offset of the generator a random
// op draws from) and builds backward nodes that keep none of their inputs and outputs. The
// first such node a backward pass runs replays the record at its own position in the stack
// (the same kernels on the same tensors, each random op with its generator set back, which
// is restored after), so every node gets the values the forward computed; they are released
// when the pass has run every node of the record, and a later pass replays again. This is
// torch's non-reentrant checkpoint placed in the grad interpreter: captured tensors need
// nothing (the record holds them as they are), and because the replay is of the ops each
// level saw, it composes with vmap, jvp, functionalize and other grad levels around or
// inside. ft::checkpoint (//control_flow) is built on it.
//   - `save_outputs(op)`: ops whose outputs the record keeps (a checkpoint policy, e.g.
//     matrix products): the replay takes them instead of running the op again.
//   - `names`: KeepNamed(t, name) with one of them keeps the value t holds at each covered
//     level (JAX's checkpoint_name with save_only_these_names); the replay takes it instead
//     of running the op that made it (when that op made t alone).
//   - In-place ops inside: the write is replayed on the replayed tensor, after a copy of it
//     is kept for the ops that read it before the write; an in-place write into a tensor the
//     region did not make is an ft::Error (the replay would write it twice).
//   - A tensor the record holds that is written in place after the region ran makes the
//     replay an ft::Error (its values would no longer be the forward's).
// Nested scopes: a level a scope already covers stays with that scope's record.
class RematScope {
 public:
  explicit RematScope(std::function<bool(const Operator&)> save_outputs = nullptr,
                      std::vector<std::string> names = {});
  ~RematScope();
  // KeepNamed: the records of the levels on this thread's stack whose scope saves `name`
  // keep the value `t` holds there (no-op elsewhere, and for a value not made in a scope).
  static void KeepNamed(const Tensor& t, const std::string& name);
  RematScope(const RematScope&) = delete;
  RematScope& operator=(const RematScope&) = delete;

 private:
  std::vector<GradInterpreter*> covered_;
};

}  // namespace ft

#endif  // FT_INTERPRETERS_GRAD_GRAD_INTERPRETER_H_

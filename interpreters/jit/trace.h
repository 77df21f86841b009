// ft/interpreters/jit/trace.h
//
// Trace and Program: record the base-kernel calls that one run of a function makes, and
// replay them on new inputs of the same signature. A replay runs only the kernels: the
// transforms that produced them (vmap levels, grad graphs, jvp duals, wrappers) are gone, so
// jit(jacrev(f)) pays for the Jacobian's arithmetic and not for building it. ft::jit
// (jit.h) is the user-facing cache over this; most code wants that.
//
// What a trace sees. While Trace runs f, a BaseCallObserver (dispatch.h) is installed: every
// op that reaches the bottom of the layer stack is run by the tracer and recorded, and the
// typed fast path is closed, so nothing bypasses it. Each tensor the recorded calls touch
// gets a slot:
//   input     one of Trace's inputs. f receives new handles on the input buffers (same
//             storage and geometry), so a tensor that f also captures, passed as an input
//             too, stays a captured constant: replays read the capture, not the new input;
//   step      an output of an earlier recorded call;
//   captured  a tensor whose buffer the tracing thread did not allocate during the trace
//             (a weight f closes over, or a buffer another thread made);
//             replays read its buffer as it is then, so in-place updates between calls are
//             seen, but a closure rebinding the variable to another tensor is not;
//   fresh     a tensor a factory made inside f, on the tracing thread (zeros, eye): its
//             values cannot depend on the inputs, so it is kept as the traced value.
//
// Finishing: calls whose arguments are all fresh are folded into fresh constants (the
// identity basis of a Jacobian and its reshapes are computed once); a call that returned a
// view of an argument (transpose, unsqueeze, a reshape that did not copy) becomes a view
// step that rebuilds that geometry on the argument's buffer directly, a view of a view is
// taken from the first buffer, a view equal to its base is the base, and a view of a
// captured tensor that is not returned is a captured constant itself (the traced view, over
// the same buffer, so in-place updates are still seen); in a program without in-place
// writes, a call repeating an earlier one (same op, same argument slots and values) reuses
// its results, unless they are returned (returned tensors stay separate, as eagerly); calls
// that neither reach an output nor write a buffer are dropped; each slot is released after
// its last use; runs of elementwise arithmetic become fused steps (fuse.h, unless
// TraceOptions::fuse_pointwise is off). Kernels choose layouts from input layouts only, so
// the replayed buffers have the traced layouts and the recorded geometry stays valid. A
// replay runs each kernel through its op's DirectKernel when it has one.
//
// When a trace cannot be replayed (TraceResult::program is null, `reason` says why):
//   - f read element values outside an op (item(), data(), to_vector()): it may branch on
//     them;
//   - a kernel's output shape came from values (one_hot inferring num_classes);
//   - a random op ran (a replay would repeat or skip draws the eager call makes);
//   - an op wrote into a fresh constant (a replay would see the previous call's writes), or
//     f accessed a fresh constant's elements after an op had used it;
//   - a tensor shares a buffer with a recorded result but was not made by an op;
//   - an output is a transform's wrapper, not a plain tensor.
// Control flow (//control_flow) is the exception to the first case: a cond, switch_case or
// while_loop called with no transform active becomes one step with a sub-program per branch
// (or for the predicate and the body), and the replay evaluates the predicate (NOTE:
// [Control flow in traces]).
// In every one of these cases the traced run itself is still an ordinary eager run: its
// outputs are right.
//
// Invariants: a Program is immutable and can Run from several threads at once; Run needs
// inputs with the traced dtypes, sizes, strides and aliasing (ft::jit keys its cache on
// exactly that); Run installs nothing, so it must not run while a trace is recording
// (ft::jit calls f instead then).
//
// Example:
//   TraceResult t = Trace([](const TensorList& a) { return TensorList{sin(a[0]) * 2.0}; },
//                         {x});
//   t.program->num_steps() == 2;
//   t.program->Run({y})[0]   // == sin(y) * 2
#ifndef FT_INTERPRETERS_JIT_TRACE_H_
#define FT_INTERPRETERS_JIT_TRACE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "dispatch/operator.h"
#include "dispatch/value.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft {

class FusedKernel;  // fused_kernel.h
class Tracer;       // tracer.h

class Program {
 public:
  // Run replays the program on `inputs` and returns the outputs. Throws ft::Error when the
  // input count differs or a guard does not hold (NOTE: [Guards]); kernels throw as they
  // would eagerly (e.g. an index out of range).
  TensorList Run(absl::Span<const Tensor> inputs) const;
  // TryRun: Run, or nothing when a guard does not hold (the program was traced for another
  // branch or trip count; no step with an effect ran).
  std::optional<TensorList> TryRun(absl::Span<const Tensor> inputs) const;
  int num_guards() const { return num_guards_; }

  int num_inputs() const { return num_inputs_; }
  // num_steps: the kernel calls one Run makes (after folding and dead-code removal).
  int num_steps() const { return static_cast<int>(steps_.size()); }
  // num_traced_calls: the base-kernel calls the traced run made.
  int num_traced_calls() const { return num_traced_calls_; }
  int num_constants() const { return static_cast<int>(constants_.size()); }

  // DebugString lists the program, one step per line, e.g.
  //   "%3 = matmul(%1, %0)\n%4 = sin(%3)\n..."  with inputs and constants first.
  std::string DebugString() const;

 private:
  friend class Tracer;
  friend void FusePointwiseSteps(Program& program, const std::vector<const Tensor*>& traced);
  friend TensorList TraceSwitch(
      const Tensor& index, bool bool_index,
      const std::vector<std::function<TensorList(const TensorList&)>>& branches,
      const TensorList& operands);
  friend TensorList TraceWhile(const std::function<Tensor(const TensorList&)>& cond_fn,
                               const std::function<TensorList(const TensorList&)>& body_fn,
                               const TensorList& init);

  // A tensor in a step's arguments or results: argument (or result) index, element of a
  // TensorList (-1: the value itself), and slot.
  struct TensorRef {
    int value;
    int element;
    int slot;
    bool last_use = false;  // the replay moves the slot's tensor into the call
  };
  // A view of another slot's buffer, with the geometry the traced call produced.
  struct View {
    DType dtype;
    Shape sizes;
    Shape strides;
    int64_t offset;
  };
  // A step runs its op's DirectKernel (no boxing) when the op has one and takes at most
  // kMaxDirectArgs arguments, none of them a TensorList, and returns at most
  // kMaxDirectResults tensors.
  static constexpr int kMaxDirectArgs = 8;
  static constexpr int kMaxDirectResults = 4;
  // A control-flow step (NOTE: [Control flow in traces]): switch runs programs[k] for the
  // index in tensor_args[0] (clamped; a bool is 0 for true); while runs programs[0] (the
  // predicate) and programs[1] (the body) over the carries, the first num_carries
  // tensor_args. Program k's inputs are the carries (while) and then the tensor_args at
  // extras[k].
  // A guard (NOTE: [Guards]): the value in tensor_args[0]'s slot must say what it said when
  // traced, or the replay stops (TryRun returns nothing).
  struct Guard {
    bool truth = true;        // compare (value != 0) with expected != 0
    int64_t expected = 0;     // else compare clamp(value, 0, clamp_to) with expected
    int64_t clamp_to = 0;
  };
  struct ControlFlow {
    bool is_while = false;
    bool bool_index = false;
    int num_carries = 0;
    std::vector<std::shared_ptr<const Program>> programs;
    std::vector<std::vector<int>> extras;
  };
  // A step is one of: a kernel call (op set); a view (op null, fused null, control null:
  // tensor_args[0] is the base, `view` the view); a fused pointwise run (op null, fused set:
  // tensor_args are its inputs in register order, outputs its results; fused_kernel.h); a
  // control-flow step (op null, control set); a guard (op null, guard set).
  struct Step {
    const Operator* op;
    ValueList args;      // the traced arguments with every tensor cleared; refs fill them
    std::vector<TensorRef> tensor_args;
    std::vector<TensorRef> outputs;  // slot -1: a result nobody reads
    std::vector<int> release;        // slots whose last use is this step
    View view;
    DirectKernel direct = nullptr;  // set when the op's DirectKernel can run this step
    std::shared_ptr<const FusedKernel> fused = nullptr;
    std::shared_ptr<const ControlFlow> control = nullptr;
    std::optional<Guard> guard = std::nullopt;
    // A fused step's donor input slot, when this step is its last use (-1: none): if the
    // replay then holds the only reference to its buffer, the fused result is written into
    // it (FusedKernel::donor).
    int donor_slot = -1;
  };
  struct Output {
    int slot;    // -1: an undefined tensor
    bool clone;  // a fresh constant: each call gets its own copy, as eagerly
  };

  static void RunDirect(const Step& step, Tensor* slots);
  static void RunControl(const Step& step, Tensor* slots);

  int num_inputs_ = 0;
  int num_guards_ = 0;
  int num_slots_ = 0;
  int num_traced_calls_ = 0;
  std::vector<std::pair<int, Tensor>> constants_;  // slot, value
  std::vector<Step> steps_;
  std::vector<Output> outputs_;
};

struct TraceOptions {
  // fold_captured: captured tensors (buffers that existed before the trace) that no op in f
  // writes are constants: calls over them alone are folded, and the program keeps a copy of
  // those it still reads. It uses their values as they were when traced, as jax.jit does
  // with closed-over arrays: in-place updates after tracing are not seen. linearize uses it
  // to keep only the tangent's arithmetic.
  bool fold_captured = false;
  // fuse_pointwise: merge runs of elementwise arithmetic into fused steps (fuse.h). The
  // results are bit for bit the same; off, every op replays as its own kernel.
  bool fuse_pointwise = true;
};

struct TraceResult {
  TensorList outputs;  // f's outputs from the traced (eager) run; an input f returns is the
                       // handle f received (the caller's buffer, another Tensor object)
  std::shared_ptr<const Program> program;   // null when the run cannot be replayed
  std::string reason;                       // why not, when program is null
};

// Trace runs f(inputs) once, eagerly, while recording it. Must be called with no transform
// active and no other trace recording (throws ft::Error otherwise), on dense inputs.
TraceResult Trace(const std::function<TensorList(const TensorList&)>& f,
                  const TensorList& inputs, const TraceOptions& options = {});

// NOTE: [Control flow in traces]
// For //control_flow. While a trace records, a cond, switch_case or while_loop asks
// ControlFlowTraceable() before it reads its predicate; when true, it calls TraceSwitch or
// TraceWhile instead, which run it eagerly (the traced call's results are the eager ones)
// and record one step with a sub-program traced per function:
//   - every branch is traced, the ones not taken too (run once on the operands, results
//     dropped; a branch that throws there makes the trace untraceable instead);
//   - a tensor of the enclosing trace that a function reads (an operand, a weight computed
//     in f) becomes an input of its sub-program, bound to the enclosing slot;
//   - the while body is traced on the first iteration (or once on init when the loop does
//     not run) with the carries as inputs, copied to contiguous buffers, and the replay
//     feeds each iteration's carries in that layout;
//   - every branch must give results with the same dtypes, sizes and strides (the replay's
//     later steps read them), and the body its carries', else the trace is untraceable.
// ControlFlowTraceable is true when a trace records on this thread and no transform is
// active. Under grad a branch's derivative work happens outside the call, where one branch's
// steps would be replayed whatever the predicate says; under vmap, jvp or functionalize the
// values the trace sees are wrapped. There the op reads its predicate as a guard (NOTE:
// [Guards] below). The functions must not read element values (their sub-traces would be
// untraceable).
bool ControlFlowTraceable();

// NOTE: [Guards]
// Under a transform, a control-flow op reads its predicate (or, for a batched while_loop,
// whether any example is still running), and what follows in the trace, the branch's
// backward included, holds only for that value. TraceGuard records the read as a guard
// instead of making the trace untraceable: the replay checks the guard's slot, and when it
// says otherwise TryRun stops and ft::jit traces that call again, keeping one program per
// path (up to a bound, then eager). `value` must be a plain tensor of one element, the
// predicate under every wrapper; `truth`: the guard compares value != 0, else
// clamp(value, 0, clamp_to). Returns false when no trace is recording or the trace is
// already untraceable: the caller's read then counts as usual. A program whose replay could
// stop at a guard after writing an input or a captured tensor in place is refused; writes
// into its own buffers, and writes after its last guard, are replayed.
bool TraceGuard(const Tensor& value, bool truth, int64_t clamp_to = 0);
TensorList TraceSwitch(const Tensor& index, bool bool_index,
                       const std::vector<std::function<TensorList(const TensorList&)>>& branches,
                       const TensorList& operands);
TensorList TraceWhile(const std::function<Tensor(const TensorList&)>& cond_fn,
                      const std::function<TensorList(const TensorList&)>& body_fn,
                      const TensorList& init);

}  // namespace ft

#endif  // FT_INTERPRETERS_JIT_TRACE_H_

// ft/control_flow/control_flow.h
//
// Control flow and rematerialization the transforms can see: cond, switch_case, while_loop,
// fori_loop, scan and checkpoint (JAX's lax.cond / switch / while_loop / fori_loop / scan and
// jax.checkpoint; torch.cond, torch.while_loop, torch.utils.checkpoint).
//
// A C++ `if` on a tensor's value works inside grad, vjp, jvp, jacrev, jacfwd and hessian
// (reads there return the primal, NOTE: [Host reads inside transforms] in tensor/tensor.h),
// but not inside vmap, where the value differs per example. These ops branch and loop on
// tensors, and mean the same thing under every transform:
//   - no transform: the branch the predicate names runs; the loop runs its trip count;
//   - vmap with an unbatched predicate or index: still one branch, a real branch;
//   - vmap with a batched predicate: every branch runs and each output is selected per
//     example; a while_loop runs until every example is done, finished examples keep their
//     carry;
//   - grad, vjp, jacrev: the derivative of the path each example took. The operands of a
//     branch an example did not take are masked (stop_gradient selected in), so its gradient
//     there is exactly zero, never NaN, even where that branch's derivative is infinite;
//   - jvp, jacfwd, hessian: forward mode through the same path; higher orders compose;
//   - functionalize: writes inside a branch or body are functionalized like any other;
//   - jit: scan and fori_loop (trip counts are shapes or integers) trace as straight-line
//     programs; jit(f) records a cond, switch_case or while_loop as one step with a
//     sub-program per branch (or for the predicate and the body), and the replay evaluates
//     the predicate and runs the real trip count (NOTE: [Control flow in traces] in
//     interpreters/jit/trace.h). Under grad, jvp, functionalize or vmap inside the jit the
//     predicate is read instead, as a guard: jit keeps one program per path (NOTE:
//     [Guards] there).
// checkpoint(f) keeps only what f read from outside for the backward pass and replays f's
// ops there (with the same random draws); it composes with vmap, grad, jvp, hessian and
// functionalize.
//
// NOTE: [Control flow by decomposition]
// Each op is a HigherOrderOperator (dispatch/higher_order_operator.h) with a rule for every
// transform. A rule runs the op at the level on top, in ft's own ops: it reads the predicate
// through the grad and dual wrappers when no vmap level batches it, and otherwise selects
// with `where`. Because the branch, the body and the selection are ordinary ops at that
// level, every level below sees them with its own rules, which is what makes the ops compose
// in any order and depth. Costs: under grad a while_loop or scan keeps each step's
// intermediates until the backward pass (O(trip count) memory; wrap the body in checkpoint,
// or set ScanOptions::checkpoint, to keep only the carries); a batched predicate runs every
// branch.
//
// Invariants and checks (ft::Error naming the op, the branch or iteration and the output):
//   - a predicate is a bool tensor with one element, an index an integer one; the value of an
//     index is clamped to [0, branches - 1] (JAX's rule);
//   - branches return the same number of outputs with the same dtypes and shapes when both
//     run (batched predicate); a body returns carries with its init's dtypes and shapes;
//   - a branch or body that writes one of its operands in place is an error (under a batched
//     predicate the write would reach every example); so is one that writes a tensor it
//     captured, under a batched predicate or functionalize.
//
// Example (a per-example branch under vmap, differentiable):
//   auto f = [](const ft::Tensor& x) {
//     return ft::cond(ft::gt(ft::sum(x), 0),
//                     [](const ft::TensorList& a) { return ft::TensorList{ft::sqrt(a[0])}; },
//                     [](const ft::TensorList& a) { return ft::TensorList{a[0] * a[0]}; },
//                     {x})[0];
//   };
//   ft::Tensor g = ft::vmap(ft::grad(ft::TensorFn([&](const ft::Tensor& x) {
//     return ft::sum(f(x));
//   })))(xs);   // per row: 0.5 / sqrt(x) where the row sums to > 0, else 2x; never NaN
#ifndef FT_CONTROL_FLOW_CONTROL_FLOW_H_
#define FT_CONTROL_FLOW_CONTROL_FLOW_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/value.h"
#include "tensor/tensor.h"

namespace ft {

// CondFn: a while_loop's predicate over the carries; returns a bool tensor of one element.
using CondFn = std::function<Tensor(const TensorList&)>;

// cond runs true_fn(operands) when pred is true, else false_fn(operands). pred: a bool tensor
// with one element.
TensorList cond(const Tensor& pred, const TensorListFn& true_fn, const TensorListFn& false_fn,
                const TensorList& operands);

// switch_case runs branches[index](operands); index: an integer tensor with one element,
// clamped to [0, branches.size() - 1].
TensorList switch_case(const Tensor& index, const std::vector<TensorListFn>& branches,
                       const TensorList& operands);

// while_loop: carry = init; while (cond_fn(carry)) carry = body_fn(carry); returns carry.
TensorList while_loop(const CondFn& cond_fn, const TensorListFn& body_fn, const TensorList& init);

// fori_loop: carry = init; for i in [lower, upper): carry = body(i, carry), with i an int64
// tensor of shape []. No iteration when upper <= lower.
using ForiBodyFn = std::function<TensorList(const Tensor& i, const TensorList& carry)>;
TensorList fori_loop(int64_t lower, int64_t upper, const ForiBodyFn& body,
                     const TensorList& init);

// scan: for t in 0..T-1 (T-1..0 with reverse): (carry, y_t) = f(carry, {x[t] for x in xs});
// returns the final carry and the y_t stacked along a new dim 0 (at index t in both orders,
// as JAX). Every x in xs has the same size T along dim 0.
struct ScanResult {
  TensorList carry;
  TensorList ys;
};
struct ScanOptions {
  bool reverse = false;
  // checkpoint: each step is checkpoint(f): under grad only the carries are kept and every
  // step runs again in the backward pass (memory O(T * carry) instead of O(T * step)).
  bool checkpoint = false;
  // length: T when xs is empty (then f gets no x); must equal the xs' size when both given.
  std::optional<int64_t> length = std::nullopt;
};
using ScanFn =
    std::function<std::pair<TensorList, TensorList>(const TensorList& carry, const TensorList& x)>;
ScanResult scan(const ScanFn& f, const TensorList& init, const TensorList& xs,
                ScanOptions options = {});

// checkpoint(f) returns a function equal to f whose backward pass keeps only what f read
// from outside (its inputs and captured tensors) and runs f's ops again to get its
// intermediates (torch.utils.checkpoint, jax.checkpoint). Random ops replay the same draws.
// Tensors f captures need nothing special. It is built on the grad levels' record and replay
// (NOTE: [Rematerialization] in interpreters/grad/grad_interpreter.h), so it composes with
// vmap, jvp, hessian and functionalize in any order; without a grad level it simply runs f.
enum class CheckpointPolicy {
  kSaveNothing,   // recompute everything (the default)
  kSaveMatmuls,   // keep matrix products' outputs (matmul, mm, bmm, linear, dot, outer,
                  // conv2d, einsum): recompute only the cheap ops between them
  kSaveNamed,     // keep the values f tags with checkpoint_name(x, n), n in `names`
};
struct CheckpointOptions {
  CheckpointPolicy policy = CheckpointPolicy::kSaveNothing;
  std::vector<std::string> names = {};  // for kSaveNamed
};

// checkpoint_name(x, name) returns x. Inside a checkpoint whose policy is kSaveNamed with
// `name` among its names, the backward pass reuses the value x holds instead of
// recomputing it (JAX's checkpoint_name). Anywhere else it does nothing.
Tensor checkpoint_name(const Tensor& x, const std::string& name);
TensorListFn checkpoint(TensorListFn f, CheckpointOptions options = {});

}  // namespace ft

#endif  // FT_CONTROL_FLOW_CONTROL_FLOW_H_

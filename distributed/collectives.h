// ft/distributed/collectives.h
//
// Named-axis collectives, JAX's model for C++: psum, pmean, pmax, all_gather, psum_scatter
// and axis_index over an axis named either by a vmap (VmapOptions::axis_name: the members
// are its examples) or by a process binding (bind_axis: the members are a group's
// processes). They are ops of the op table, with a rule for every transform, so they
// compose with vmap, grad, vjp, jvp, jacrev, jacfwd, hessian, functionalize and jit.
//
// Semantics (x is each member's value):
//   psum(x, a)              the sum of every member's x, the same on every member;
//   pmean(x, a)             psum(x, a) / size(a);
//   pmax(x, a)              the elementwise maximum (no derivative: grad and jvp refuse it);
//   all_gather(x, a, dim)   every member's x stacked along a new dim `dim`, in member order;
//   psum_scatter(x, a, dim) x's dim `dim` must have size(a) entries; member i gets the sum
//                           over members of their entry i (the transpose of all_gather);
//   ppermute(x, a, pairs)   member d gets member s's x for each (s, d) pair, zeros elsewhere;
//   axis_index(a)           this member's index along a, an int64 scalar.
// Nested names compose: psum over "i" inside vmap(..., axis_name = "i"), then over "dp"
// across processes, gives the global sum. The innermost axis of a name is the one meant.
//
// Transforms:
//   - vmap: over the vmap's own axis, a local reduction or gather over its batch dim (an
//     unbatched x counts as the same x on every example: psum gives size * x); over any
//     other axis the batch rides along.
//   - jvp: the collective applied to the tangent (they are linear); pmax has none.
//   - grad/vjp: psum's transpose is the identity (its cotangent is one value for all
//     members), pmean's divides by size, all_gather's takes this member's slice,
//     psum_scatter's is all_gather. A value shared by all members that meets one that varies
//     (a parameter times a process's data) gets its gradient summed over the axis, once
//     per value, when f's output is invariant over it: grad(pmean(local_loss, "dp")) is the
//     global mean gradient on every process, with one all-reduce per gradient and no factor
//     of P (NOTE: [Gradients across named axes] in interpreters/grad/grad_interpreter.h).
//   - jit and functionalize: collectives are ordered effects, never dropped, reused,
//     reordered or folded; a replay communicates again.
//
// Over a process axis every process must make the same collectives in the same order with
// the same dtypes and shapes: a mismatch is an ft::Error on every process naming both
// sides; a dead or stalled peer is an ft::Error naming the axis, op, rank and cause within
// twice the group's timeout. For a fixed number of processes results are bitwise
// identical on every process and from run to run.
//
// Errors (ft::Error naming the op): an axis name that is not in effect (listing those
// that are), a dim out of range, psum_scatter's dim not of the axis's size, pmax under grad
// or jvp, chunk_size with axis_name.
//
// Example (per-example normalization across a batch, then the global sum over processes):
//   auto normalize = [](const ft::Tensor& x) { return x / ft::psum(x, "batch"); };
//   ft::Tensor y = ft::vmap(normalize, ft::VmapOptions{.axis_name = "batch"})(xs);
//   auto binding = ft::dist::bind_axis("dp", ft::dist::init_process_group());
//   ft::Tensor total = ft::psum(ft::sum(xs), "dp");   // the same on every process
#ifndef FT_DISTRIBUTED_COLLECTIVES_H_
#define FT_DISTRIBUTED_COLLECTIVES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/named_axes.h"
#include "distributed/process_group.h"
#include "tensor/tensor.h"

namespace ft {

Tensor psum(const Tensor& x, const std::string& axis);
Tensor pmean(const Tensor& x, const std::string& axis);
Tensor pmax(const Tensor& x, const std::string& axis);
Tensor all_gather(const Tensor& x, const std::string& axis, int64_t dim = 0);
Tensor psum_scatter(const Tensor& x, const std::string& axis, int64_t dim = 0);
// ppermute: member `destination` gets member `source`'s x for each (source, destination)
// pair (each member at most once as each); a member no pair sends to gets zeros. Its
// transpose sends back (the pairs swapped). Across processes it is an all-gather of which
// each process keeps one row (the engines' point-to-point calls are not used): P times the
// traffic of a direct exchange.
Tensor ppermute(const Tensor& x, const std::string& axis,
                const std::vector<std::pair<int64_t, int64_t>>& pairs);
Tensor axis_index(const std::string& axis);
// axis_size: the number of members of `axis` (no communication).
int64_t axis_size(const std::string& axis);

namespace dist {

// AxisBinding names the processes of `group` `axis` on the calling thread for its lifetime
// (RAII), so that collectives over `axis` run across them. Bind outside any transform (an
// ft::Error otherwise) and destroy bindings in reverse order of creation.
class AxisBinding {
 public:
  AxisBinding(const std::string& axis, std::shared_ptr<ProcessGroup> group);
  AxisBinding(const AxisBinding&) = delete;
  AxisBinding& operator=(const AxisBinding&) = delete;

  ProcessGroup& group() const { return *group_; }
  const std::string& axis() const { return axis_; }
  // The collectives made through this binding so far (for messages and tests).
  int64_t calls() const { return calls_; }
  int64_t& mutable_calls() { return calls_; }

 private:
  std::string axis_;
  std::shared_ptr<ProcessGroup> group_;
  int64_t calls_ = 0;
  NamedAxisScope scope_;
};

// PerProcessInputs: while it lives, grad, vjp, jacrev and hessian (entered inside it)
// treat the inputs they differentiate as each process's own values over `axis` (process
// axis already bound), not as parameters every process shares: their gradients are each
// process's own, never summed over the processes (NOTE: [Gradients across named axes]).
//   auto local = ft::dist::PerProcessInputs("dp");
//   Tensor dx = ft::grad(f)({x_local})[0];   // d(objective)/d(this process's x)
class PerProcessInputs {
 public:
  explicit PerProcessInputs(const std::string& axis);
  ~PerProcessInputs();
  PerProcessInputs(const PerProcessInputs&) = delete;
  PerProcessInputs& operator=(const PerProcessInputs&) = delete;

 private:
  int index_;
  bool saved_;
};

// bind_axis: `auto binding = bind_axis("dp", group);` (an AxisBinding).
inline AxisBinding bind_axis(const std::string& axis, std::shared_ptr<ProcessGroup> group) {
  return AxisBinding(axis, std::move(group));
}

}  // namespace dist
}  // namespace ft

#endif  // FT_DISTRIBUTED_COLLECTIVES_H_

// ft/interpreters/jit/jit.h
//
// ft::jit: trace a function once per input signature and replay its kernels afterwards, as
// jax.jit does for a traceable function. It is what makes small transformed functions fast:
// jit(jacrev(f)) traces the vmap, grad and wrapper machinery once, and every later call with
// inputs of the same dtypes, sizes and strides runs only the kernels that machinery chose
// (with the Jacobian basis computed once). trace.h explains what is recorded.
//
// Semantics: a JitFunction returns what f returns, always.
//   - The first call with a new signature (dtypes, sizes, strides, storage offsets, which
//     inputs share a buffer, grad and forward-grad mode) runs f eagerly while tracing it.
//   - Later calls with that signature replay the trace.
//   - A trace that cannot be replayed (f reads element values, draws random numbers, ...:
//     trace.h lists the cases) is remembered as such, and calls with that signature run f
//     eagerly every time; untraceable_reason() says why.
//   - A control-flow op whose predicate is read under a transform (jit(grad(f)) with a
//     cond) leaves a guard in the program (NOTE: [Guards] in trace.h): a call whose
//     predicates take another path is traced again, and the signature keeps one program per
//     path (up to 16; further paths run eagerly).
//   - Inside a transform (jit(f) called under vmap or grad), on wrapped or undefined inputs,
//     or while another trace is recording, f runs eagerly: the outer transform or trace
//     sees its ops as usual.
// What a replay assumes, as jax.jit does: f is a function of its inputs and of the tensors
// it captures. Captured tensors are read at replay time, so in-place updates to a weight
// between calls are seen (unless TraceOptions::fold_captured made them constants);
// rebinding a captured variable to another tensor, or other host-side state f reads, is not
// seen until a new signature is traced (make a new jit).
//
// Thread safety: a JitFunction may be called from several threads at once; copies share one
// cache. Threads that meet a new signature together each trace it; the first to finish keeps
// its program (stats().raced_traces counts the others). The cache keeps every signature's
// program (no eviction).
//
// Example:
//   Tensor w = ft::randn_like(ft::zeros({16, 16}), &gen);
//   ft::JitFunction jac = ft::jit(ft::jacrev([&w](const ft::TensorList& a) {
//     return ft::sin(ft::matmul(w, a[0])) + a[0];
//   }));
//   ft::Tensor j1 = jac({x})[0];   // traced: the eager jacrev's result
//   ft::Tensor j2 = jac({y})[0];   // replayed kernels only
//   jac.stats().replays == 1
#ifndef FT_INTERPRETERS_JIT_JIT_H_
#define FT_INTERPRETERS_JIT_JIT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/types/span.h"
#include "interpreters/jit/trace.h"
#include "tensor/tensor.h"

namespace ft {

struct JitStats {
  int64_t traces = 0;       // calls that traced: a new signature, or a new guarded path of one
  int64_t replays = 0;      // calls that replayed a program
  int64_t eager_calls = 0;  // calls that ran f eagerly without tracing (see Semantics)
  int64_t programs = 0;     // replayable programs kept (one per signature, or per path)
  int64_t untraceable = 0;  // traces that could not be replayed
  // Calls that traced a signature another thread finished tracing first: their outputs are
  // returned, their trace is dropped. Every call counts once in traces, replays,
  // eager_calls or raced_traces.
  int64_t raced_traces = 0;
};

class JitFunction {
 public:
  using Fn = std::function<TensorList(const TensorList&)>;

  explicit JitFunction(Fn f, TraceOptions options = {});

  // operator() returns f(inputs): traced, replayed or eager as described above. It takes a
  // TensorList or a braced list (jac({x, w})); a replay builds no list of its inputs.
  TensorList operator()(absl::Span<const Tensor> inputs) const;

  JitStats stats() const;

  // program returns the replayable program for the signature of `inputs` (its first path),
  // or null (not traced yet, or untraceable). num_paths: how many programs (guarded paths)
  // the signature has. untraceable_reason returns why that signature's trace cannot be
  // replayed, or "" if it can or was not traced.
  std::shared_ptr<const Program> program(absl::Span<const Tensor> inputs) const;
  int num_paths(absl::Span<const Tensor> inputs) const;
  std::string untraceable_reason(absl::Span<const Tensor> inputs) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// jit wraps f; see the header comment. options.fold_captured (trace.h) makes captured
// tensors constants of the program, computed on once.
JitFunction jit(JitFunction::Fn f, TraceOptions options = {});

}  // namespace ft

#endif  // FT_INTERPRETERS_JIT_JIT_H_

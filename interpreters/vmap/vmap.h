// ft/interpreters/vmap/vmap.h
//
// ft::vmap: torch.func.vmap for C++. vmap(f) returns a function that maps f over a dim of its
// inputs: f is written for one example, the result runs it on a whole batch, and every op
// inside runs once on the batched data (its batching rule), not once per example.
//
//   in_dims   which dim of each argument is mapped: an int (negative allowed) or nullopt
//             (not mapped: the argument is shared by every example). One entry per argument,
//             or a single entry for all. Non-tensor arguments must have nullopt.
//   out_dims  where the batch dim goes in each output (int or nullopt for an output that
//             does not depend on the batch); one per output or a single entry for all.
//             An output that does not depend on any mapped input is expanded to the batch.
//   randomness  kError (default: a random op throws), kSame (one sample for the whole batch),
//             kDifferent (independent samples per example).
//   chunk_size  process the batch in chunks of this many examples and concatenate: same
//             results, bounded peak memory.
// vmap nests to any depth (vmap(vmap(f))) and composes with the other transforms.
//
// Errors (ft::Error, each naming vmap): no inputs, no mapped tensor, in_dims/out_dims counts
// that do not match, an in_dim on a non-tensor or out of range, mismatched batch sizes (each
// argument's size and in_dim listed), a non-tensor output with an out_dim, a batched output
// with out_dim nullopt, chunk_size < 1, a random op in kError mode; each ends with the vmap
// level, e.g. "(vmap level 3)". The layer stack is as it was after any exception.
//
// Example:
//   auto f = [](const ft::Tensor& x) { return ft::sum(ft::sin(x) * x); };  // x: [5] -> []
//   ft::Tensor xs = ft::rand_like(ft::zeros({64, 5}), &gen);
//   ft::Tensor ys = ft::vmap(f)(xs);                                        // [64]
//   auto g = ft::vmap([](const ft::TensorList& a) { return ft::TensorList{a[0] * a[1]}; },
//                     {0, std::nullopt});
//   g({xs, ft::ones({5})});                                                 // [64, 5]
#ifndef FT_INTERPRETERS_VMAP_VMAP_H_
#define FT_INTERPRETERS_VMAP_VMAP_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dispatch/value.h"
#include "interpreters/vmap/vmap_interpreter.h"
#include "tensor/tensor.h"

namespace ft {

// Dims: in_dims or out_dims: one optional dim per argument/output, or one for all.
class Dims {
 public:
  Dims(int64_t dim) : dims_{dim}, broadcast_(true) {}                 // NOLINT
  Dims(int dim) : dims_{int64_t{dim}}, broadcast_(true) {}            // NOLINT
  Dims(std::nullopt_t) : dims_{std::nullopt}, broadcast_(true) {}     // NOLINT
  Dims(std::initializer_list<std::optional<int64_t>> dims) : dims_(dims) {}  // NOLINT
  Dims(std::vector<std::optional<int64_t>> dims) : dims_(std::move(dims)) {}  // NOLINT
  // Deferred: out_dims computed from the number of outputs once f has run, for a caller that
  // learns the structure of f's outputs only then (vmap over trees, tree/transforms.h).
  using Compute = std::function<std::vector<std::optional<int64_t>>(size_t n)>;
  static Dims Deferred(Compute compute) {
    Dims d(std::nullopt);
    d.compute_ = std::move(compute);
    return d;
  }

  // Expand returns one dim per item (n items); throws naming `what` and the vmap `level`
  // when the count differs.
  std::vector<std::optional<int64_t>> Expand(size_t n, const char* what, int64_t level) const;

 private:
  std::vector<std::optional<int64_t>> dims_;
  bool broadcast_ = false;
  Compute compute_;
};

// VmapOptions: every setting of one vmap, for the overloads that take them by name:
//   ft::vmap(f, ft::VmapOptions{.in_dims = {0, std::nullopt}, .axis_name = "batch"})
// axis_name (empty: none) names the mapped axis, so that collectives inside f (psum,
// all_gather, ..., //distributed/collectives.h) can reduce or gather across the examples.
// The name is in effect while f runs, also for transforms nested inside. It cannot be
// combined with chunk_size (a collective needs every example at once).
struct VmapOptions {
  Dims in_dims = 0;
  Dims out_dims = 0;
  Randomness randomness = Randomness::kError;
  std::optional<int64_t> chunk_size = std::nullopt;
  std::string axis_name;
};

// ValueFn, TensorListFn and TensorFn: dispatch/value.h.
namespace internal {
ValueFn VmapWithOptions(ValueFn f, VmapOptions options);
TensorListFn VmapWithOptions(TensorListFn f, VmapOptions options);
TensorFn VmapWithOptions(TensorFn f, VmapOptions options);
}  // namespace internal

// The overloads below take the options by a deduced type T (VmapOptions only), so that a
// braced list such as vmap(f, {0, 0}) still means in_dims: a braced list deduces no type.
// Write vmap(f, VmapOptions{.in_dims = ..., .axis_name = "i"}).
template <typename T, typename = std::enable_if_t<std::is_same_v<T, VmapOptions>>>
ValueFn vmap(ValueFn f, const T& options) {
  return internal::VmapWithOptions(std::move(f), options);
}
template <typename T, typename = std::enable_if_t<std::is_same_v<T, VmapOptions>>>
TensorListFn vmap(TensorListFn f, const T& options) {
  return internal::VmapWithOptions(std::move(f), options);
}
template <typename T, typename = std::enable_if_t<std::is_same_v<T, VmapOptions>>>
TensorFn vmap(TensorFn f, const T& options) {
  return internal::VmapWithOptions(std::move(f), options);
}

// vmap over a function of Values (tensors and pass-through non-tensors).
ValueFn vmap(ValueFn f, Dims in_dims = 0, Dims out_dims = 0,
             Randomness randomness = Randomness::kError,
             std::optional<int64_t> chunk_size = std::nullopt);
// vmap over a function of several tensors returning several tensors.
TensorListFn vmap(TensorListFn f, Dims in_dims = 0, Dims out_dims = 0,
                  Randomness randomness = Randomness::kError,
                  std::optional<int64_t> chunk_size = std::nullopt);
// vmap over a function of one tensor returning one tensor.
TensorFn vmap(TensorFn f, Dims in_dims = 0, Dims out_dims = 0,
              Randomness randomness = Randomness::kError,
              std::optional<int64_t> chunk_size = std::nullopt);

}  // namespace ft

#endif  // FT_INTERPRETERS_VMAP_VMAP_H_

// ft/interpreters/functionalize/functionalize.h
//
// ft::functionalize: torch.func.functionalize for C++. functionalize(f) returns a function
// that computes what f computes, but in which no kernel ever writes in place: every in-place
// op inside f (add_, copy_, fill_, ... and writes through views) becomes its out-of-place
// op, and at the end every input f wrote is written back to the caller's tensor once, with
// one copy_. f's outputs are the same values the eager call gives.
//
// Why: the transforms around it then see a pure program. vmap(functionalize(f)) runs an f
// that fills a buffer it made (`buf = zeros({3}); add_(buf, x)`) with batched values, which
// plain vmap refuses; grad(functionalize(f)) differentiates through writes into views of
// tensors that carry a gradient, which plain grad refuses; jit(functionalize(f)) traces a
// program without writes, whose elementwise runs fuse.
//
//   remove  kMutations (default): in-place ops become out-of-place, views stay views (an
//           output that is a view of an input is a view of the caller's tensor, as
//           eagerly). kMutationsAndViews: views become copies too: no output shares memory
//           with an input, and no value below functionalize aliases another.
//
// Semantics, in the order the questions come up:
//   - Tensors f makes (factories, op results) are functionalize's own; an in-place write
//     into a tensor f captured from outside (not an argument) happens in place, as eagerly.
//   - Writes through a view reach its base and every other view of that base, which read
//     their new values at their next use (regenerated from the base).
//   - An input f writes is written back to the caller's tensor when f returns, once. If f
//     throws, no input is written. Passing the same tensor twice gives f one tensor; passing
//     two different tensors that share memory, and writing one, is an ft::Error at the
//     write-back (functionalize treats inputs as separate tensors).
//   - Writes through a broadcasting expand are refused, as eagerly (ft::Error).
//   - It composes with every transform in both orders and nests with itself.
//
// Example:
//   auto f = [](const ft::Tensor& x) {
//     ft::Tensor buf = ft::zeros({3});
//     ft::add_(buf, x);                              // vmap alone refuses this for batched x
//     ft::mul_(ft::select(buf, 0, 0), 2.0);          // a write through a view
//     return buf;
//   };
//   ft::Tensor ys = ft::vmap(ft::functionalize(ft::TensorFn(f)))(xs);   // xs: [B, 3]
#ifndef FT_INTERPRETERS_FUNCTIONALIZE_FUNCTIONALIZE_H_
#define FT_INTERPRETERS_FUNCTIONALIZE_FUNCTIONALIZE_H_

#include <functional>

#include "dispatch/value.h"
#include "interpreters/functionalize/functionalize_interpreter.h"
#include "tensor/tensor.h"

namespace ft {

// FunctionalizeOptions: what functionalize removes (see the header comment). Implicit from
// a FunctionalizeRemove: functionalize(f, FunctionalizeRemove::kMutationsAndViews).
struct FunctionalizeOptions {
  FunctionalizeOptions(FunctionalizeRemove r = FunctionalizeRemove::kMutations)  // NOLINT
      : remove(r) {}
  FunctionalizeRemove remove;
};

// functionalize of a function of Values (tensors, tensor lists and pass-through
// non-tensors), of several tensors returning several, of several returning one (what grad
// takes), and of one returning one.
std::function<ValueList(const ValueList&)> functionalize(
    std::function<ValueList(const ValueList&)> f, FunctionalizeOptions options = {});
std::function<TensorList(const TensorList&)> functionalize(
    std::function<TensorList(const TensorList&)> f, FunctionalizeOptions options = {});
std::function<Tensor(const TensorList&)> functionalize(std::function<Tensor(const TensorList&)> f,
                                                       FunctionalizeOptions options = {});
std::function<Tensor(const Tensor&)> functionalize(std::function<Tensor(const Tensor&)> f,
                                                   FunctionalizeOptions options = {});

}  // namespace ft

#endif  // FT_INTERPRETERS_FUNCTIONALIZE_FUNCTIONALIZE_H_

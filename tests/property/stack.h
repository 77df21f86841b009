// ft/tests/property/stack.h  (testonly)
//
// Random transform stacks over random programs (program.h), each checked against an oracle
// that shares no code path with the transform under test:
//   vmap            ≡ a loop over the examples and stack (tests/vmap_oracle.h)
//   grad, vjp       ≡ float64 central differences of s = Σ sum(out * Weight(out))
//   jvp             ≡ central differences along the tangent, and <J t, c> = <t, Jᵀ c> with vjp
//   jacrev, jacfwd  ≡ the central-difference Jacobian, column by column
//   hessian         ≡ second-order central differences of s
//   jit             ≡ the eager function, bit for bit (traced on other inputs, then replayed)
//   functionalize   ≡ the eager function, to rounding (its copies may change a kernel's path)
//   a custom Function step ≡ the same math in built-in ops (the whole stack run on both).
// The outermost layer is the one checked; the layers inside it run as they are (their own
// correctness is checked in the cases where they are outermost, and a nested composition is
// checked whenever an outer layer's oracle runs it eagerly).
//
// Invariants: GenerateCase(seed) is the same on every run; Check never throws (an ft::Error
// from the transformed call or from the oracle makes the case "rejected", with the message);
// after every Check the layer stack is empty, or the case fails.
//
// Example:
//   Case c = GenerateCase(42);
//   Outcome o = Check(c);
//   if (o.status == Outcome::kMismatch) std::cout << RegressionTest(Shrink(c), o);
#ifndef FT_TESTS_PROPERTY_STACK_H_
#define FT_TESTS_PROPERTY_STACK_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tensor/tensor.h"
#include "tests/property/program.h"

namespace ft::property {

using Fn = std::function<TensorList(const TensorList&)>;

enum class Kind { kVmap, kGrad, kVjp, kJvp, kJacrev, kJacfwd, kHessian, kJit, kFunctionalize };
const char* KindName(Kind kind);
// IsDerivative: the kinds whose oracle is central differences.
bool IsDerivative(Kind kind);

// Layer: one transform with its parameters. Every layer maps a TensorList function to a
// TensorList function of the same inputs:
//   vmap      outputs f's outputs batched (in_dims, out_dims, chunk_size as vmap's)
//   grad      the gradients of s at argnums
//   vjp       f's outputs, then the vjp of every input for the cotangents Weight(out)
//   jvp       f's outputs, then their tangents for the tangents Tangent(input)
//   jacrev    the Jacobians of f's first output at argnums (chunk_size as jacrev's)
//   jacfwd    the same by forward mode
//   hessian   the Hessian blocks of s at argnums (row-major)
//   jit, functionalize   f's outputs
struct Layer {
  Kind kind = Kind::kVmap;
  std::vector<std::optional<int64_t>> in_dims;  // kVmap: one per input
  std::vector<int64_t> out_dims;                // kVmap: one per output
  int64_t batch = 2;                            // kVmap: the batch size it adds
  std::optional<int64_t> chunk_size;            // kVmap, kJacrev, kJacfwd
  std::vector<int64_t> argnums;                 // kGrad, kJacrev, kJacfwd, kHessian
  bool remove_views = false;                    // kFunctionalize: kMutationsAndViews

  static Layer Vmap(std::vector<std::optional<int64_t>> in_dims, std::vector<int64_t> out_dims,
                    int64_t batch, std::optional<int64_t> chunk_size = std::nullopt);
  static Layer Of(Kind kind, std::vector<int64_t> argnums = {},
                  std::optional<int64_t> chunk_size = std::nullopt);
  static Layer Functionalize(bool remove_views);
  std::string ToCpp() const;     // e.g. Layer::Vmap({0, std::nullopt}, {-1}, 3)
  std::string Describe() const;  // e.g. vmap(in_dims=[0, none], out_dims=[-1], B=3)
};

// Tangent: the fixed tangent of a jvp layer for an input like `like`.
Tensor Tangent(const Tensor& like);

// Transform: `layer` applied to `inner` with ft's transforms. Compose: the stack applied to
// f, stack[0] outermost.
Fn Transform(const Layer& layer, Fn inner);
Fn Compose(const std::vector<Layer>& stack, Fn f);

// OuterInputs: the input specs of the whole stack: the program's (one example's) shapes with
// each vmap layer's batch dim inserted, innermost layer first.
std::vector<InputSpec> OuterInputs(const std::vector<InputSpec>& example,
                                   const std::vector<Layer>& stack);

struct Outcome {
  enum Status { kPass, kRejected, kMismatch };
  Status status = kPass;
  std::string message;  // why rejected, or what disagreed
};

// CheckFunction: stack[0] applied to Compose(stack[1..], f) against stack[0]'s oracle, on
// MakeInputs(OuterInputs(example, stack), dtype, input_seed). With `plain`, f's custom
// Functions are compared with the same math in built-in ops (Compose(stack, plain)).
Outcome CheckFunction(const Fn& f, const std::optional<Fn>& plain,
                      const std::vector<InputSpec>& example, DType dtype, uint64_t input_seed,
                      const std::vector<Layer>& stack);

// Case: a program under a stack of 1 to 3 layers.
struct Case {
  uint64_t seed = 0;
  Program program;
  std::vector<Layer> stack;  // outermost first
  uint64_t input_seed = 0;
};

// GenerateCase: the case for `seed`. Its stack runs on sample inputs (else a different stack
// is drawn; `rejected_stacks` collects why each was redrawn, when not null). A redraw can
// hide a bug (two of the first ones were): with FT_PROPERTY_DEBUG set in the environment,
// each redrawn case is printed to stderr as a regression test.
Case GenerateCase(uint64_t seed, std::vector<std::string>* rejected_stacks = nullptr);
Outcome Check(const Case& c);

// Shrink: a smaller case that still mismatches (fewer layers and steps, simpler parameters
// and layouts), by greedy deletion; `c` itself when nothing smaller fails.
Case Shrink(const Case& c);
// RegressionTest: the case as a gtest body to paste into property_test.cc.
std::string RegressionTest(const Case& c, const Outcome& o);

}  // namespace ft::property

#endif  // FT_TESTS_PROPERTY_STACK_H_

// ft/tests/fuzz/transform_stack.h
//
// A function and a stack of transforms around it, both decoded from a fuzzer's bytes, for
// transforms_fuzzer and custom_function_fuzzer.
//
// Program: the function. Its steps are decoded once (each step keeps its own bytes) and run
// on every call, so vmap's chunks, a Jacobian's rows and a jit replay all run the same ops.
// A step may catch the ft::Error its op throws and go on (user code that handles an error
// inside a transform); otherwise the error leaves the function through every transform.
//
// DecodeLayers / Wrap: up to three transforms, innermost first, each one of vmap (in_dims
// with nullopt, negative and out-of-range dims, one per argument or one for all or the wrong
// count; out_dims; randomness; chunk_size including 0, negative and huge), grad and
// grad_and_value (argnums out of range, repeated, empty; a non-scalar output), vjp
// (cotangents of the right shape, the wrong shape or count, undefined), jvp (tangents
// likewise), jacrev and jacfwd (argnums, chunk_size), hessian, jit (called twice, so the
// second call replays), functionalize (both modes) and linearize.
//
// Example:
//   FuzzInput in(data, size);
//   TensorList args = DecodeArgs(in);
//   auto program = std::make_shared<Program>(DecodeProgram(in, &RunOpStep));
//   TensorListFn f = WrapAll(DecodeLayers(in), program->AsFunction(), args.size());
//   TensorList out = f(args);
#ifndef FT_TESTS_FUZZ_TRANSFORM_STACK_H_
#define FT_TESTS_FUZZ_TRANSFORM_STACK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "interpreters/vmap/vmap.h"
#include "tensor/tensor.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/op_table.h"

namespace ft::fuzz {

// StepFn runs one step of a Program: reads its parameters from `in`, appends to `regs`.
using StepFn = void (*)(FuzzInput& in, Registers& regs);

// RunOpStep: a step that is one ApplyOp.
void RunOpStep(FuzzInput& in, Registers& regs);

struct Program {
  std::vector<std::vector<uint8_t>> steps;  // each step's bytes
  std::vector<bool> catches;                // whether step i swallows its ft::Error
  Tensor captured;                          // a tensor made outside, read (and written) inside
  int64_t num_outputs = 1;
  StepFn step = &RunOpStep;

  // Run: registers = args + captured, the steps in order, the last num_outputs registers.
  TensorList Run(const TensorList& args) const;
  // AsFunction: Run as a TensorListFn that keeps this Program alive.
  static TensorListFn AsFunction(std::shared_ptr<const Program> program);
};

// DecodeProgram: 1 to 6 steps of up to step_bytes bytes each, and the captured tensor.
// (nn_fuzzer's steps take more bytes than an ApplyOp: shapes, kernels, strides.)
Program DecodeProgram(FuzzInput& in, StepFn step, size_t step_bytes = 16);

// DecodeArgs: 1 to 3 small tensors (rank <= 3, sizes <= 4), mostly floating.
TensorList DecodeArgs(FuzzInput& in);

enum class TransformKind {
  kVmap,
  kGrad,
  kGradAndValue,
  kVjp,
  kJvp,
  kJacrev,
  kJacfwd,
  kHessian,
  kJit,
  kFunctionalize,
  kLinearize,
};

struct Layer {
  TransformKind kind;
  std::vector<uint8_t> params;  // decoded when the layer wraps its function
};

// DecodeLayers: 0 to 3 layers, innermost first.
std::vector<Layer> DecodeLayers(FuzzInput& in);
// Wrap: `layer` applied to f, a function of num_args tensors.
TensorListFn Wrap(const Layer& layer, TensorListFn f, size_t num_args);
// WrapAll: the layers applied innermost first.
TensorListFn WrapAll(const std::vector<Layer>& layers, TensorListFn f, size_t num_args);
std::string LayersString(const std::vector<Layer>& layers);

// CheckOutputs aborts unless each defined output is a dense tensor (no transform's wrapper
// escapes to the caller) that lies inside its storage, then reads every element.
void CheckOutputs(const TensorList& outputs);

// JacobianWork: how many times the program runs (as rows of a batch) under the layers'
// Jacobians, layers innermost first. With n bounding the arguments' element count: a jacfwd
// batches over its function's inputs (n rows), a jacrev over its function's outputs, a
// hessian over both; and each Jacobian multiplies the output of what it wraps by n (n^2 for
// a hessian), which an outer jacrev then batches over. `outputs` is the element count of the
// program's own results (m): three nested jacrevs are m^3 n^3 rows, not n^3. Such stacks
// legitimately take minutes (CI's fuzz stage timed out on hessian(jacfwd(...)), and on
// jacrev(jacrev(jacrev(f))) of an attention and an einsum, whose outputs counted for
// nothing in the earlier bound), so RunStack skips a stack whose work exceeds
// kMaxJacobianWork; nested Jacobians of small functions stay.
inline constexpr int64_t kMaxJacobianWork = 4096;
int64_t JacobianWork(const std::vector<Layer>& layers, const TensorList& args,
                     int64_t outputs);

// RunStack: the common body of transforms_fuzzer and custom_function_fuzzer: decode args,
// program and layers, call the transformed function twice (the second time with the
// arguments made contiguous or transposed, a new jit signature) and check the outputs.
// A stack over kMaxJacobianWork is skipped. step_bytes as DecodeProgram's.
void RunStack(FuzzInput& in, StepFn step, size_t step_bytes = 16);

}  // namespace ft::fuzz

#endif  // FT_TESTS_FUZZ_TRANSFORM_STACK_H_

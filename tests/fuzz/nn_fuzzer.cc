// nn_fuzzer: the neural-network ops of nn_op_table.h (convolutions, pools, interpolate,
// normalizations, attention, einsum, activations, losses, model indexing), mixed with
// op_table.h's elementwise and view ops, in two modes chosen by the first byte:
//   - a function of 1-3 tensors whose steps are those ops (some catching their own
//     ft::Error) under a decoded stack of up to three transforms (vmap, grad, vjp, jvp,
//     jacrev, jacfwd, hessian, jit, functionalize, linearize; transform_stack.h), called
//     twice, as transforms_fuzzer;
//   - (a quarter of the inputs) an eager sequence of up to 16 such ops on one or two input
//     tensors, as ops_fuzzer.
// The only outcomes are values (dense tensors inside their storage) or an ft::Error, and the
// layer stack is empty afterwards.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "ops/ops.h"
#include "tensor/error.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/nn_op_table.h"
#include "tests/fuzz/op_table.h"
#include "tests/fuzz/transform_stack.h"

namespace ft::fuzz {
namespace {

// kNnStepBytes: an nn op decodes its shapes, kernel, strides, paddings and a few operands:
// up to ~40 bytes, where an ApplyOp takes 16.
constexpr size_t kNnStepBytes = 48;

// RunNnStep: an nn op three times in four, an ApplyOp otherwise (so views, in-place ops and
// elementwise ops feed the nn ops and read their results).
void RunNnStep(FuzzInput& in, Registers& regs) {
  if (in.Below(4) == 0) {
    ApplyOp(in, regs);
  } else {
    ApplyNnOp(in, regs);
  }
}

void RunEager(FuzzInput& in) {
  Registers regs = {MakeTensor(in, {.max_rank = 4, .max_size = 4})};
  if (in.Bool()) regs.push_back(MakeTensor(in, {.max_rank = 4, .max_size = 4}));
  if (Verbose()) {
    for (const Tensor& t : regs) std::fprintf(stderr, "input %s\n", t.DebugString().c_str());
  }
  for (int step = 0; step < 16 && !in.exhausted(); ++step) {
    const size_t before = regs.size();
    try {
      RunNnStep(in, regs);
    } catch (const Error& e) {
      if (Verbose()) std::fprintf(stderr, "  ft::Error: %s\n", e.what());
    }
    for (size_t i = before; i < regs.size(); ++i) {
      CheckLayout(regs[i]);
      if (regs[i].defined()) (void)contiguous(regs[i]);
    }
  }
}

}  // namespace
}  // namespace ft::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ft::fuzz::RunInput([&] {
    ft::fuzz::FuzzInput in(data, size);
    if (in.Below(4) == 0) {
      ft::fuzz::RunEager(in);
    } else {
      ft::fuzz::RunStack(in, &ft::fuzz::RunNnStep, ft::fuzz::kNnStepBytes);
    }
  });
  return 0;
}

// transforms_fuzzer: a decoded function of 1-3 tensors (a few ops of op_table.h, some of which
// catch their own ft::Error) under a decoded stack of up to three transforms (vmap, grad,
// grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, jit, functionalize, linearize with their
// in_dims, out_dims, chunk_size, randomness and argnums; transform_stack.h), called twice.
// The only outcomes are values (dense tensors inside their storage) or an ft::Error, and the
// layer stack is empty afterwards.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/transform_stack.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ft::fuzz::RunInput([&] {
    ft::fuzz::FuzzInput in(data, size);
    ft::fuzz::RunStack(in, &ft::fuzz::RunOpStep);
  });
  return 0;
}

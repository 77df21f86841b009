// ft/interpreters/jit/fuse.h
//
// Pointwise fusion for jit programs. A Jacobian or Hessian program at small sizes is mostly
// short runs of elementwise arithmetic on one shape (the Hessian of sum(tanh(Wx)^2) has nine
// multiplies and adds in a row on its 16x16 basis). Replayed one kernel per op, each pays a
// result allocation, the kernel's checks and a pass over memory. FusePointwiseSteps merges
// such runs into one FusedKernel step that computes them chunk by chunk in a small scratch
// area and allocates only the tensors that are read after the run.
//
// What a fused step computes (which ops fuse, masks, buffers, and why its bits are the
// separate kernels' bits) is described in fused_kernel.h; this pass decides which steps of a
// Program form a run. Tracer::Finish runs it last among the passes from a recording to a
// Program (finish.cc), unless TraceOptions::fuse_pointwise is off (trace.h).
//
// Invariants: the rewritten program returns what it returned before, bit for bit; steps from
// the first in-place write on keep their order and their kernels; a run of one step stays
// that step.
//
// Ordering. A fused step runs where its last member ran. A member's result read by a step
// outside the run closes the run before that reader, so every reader of a fused result
// comes after the fused step, and every operand a member reads was computed before it.
//
// Preludes. A run of a smaller shape whose results only one run reads, where that shape is
// the reader's trailing dims, becomes the reader's prelude: its instructions run once per
// call over one period (the smaller shape's size) before the reader's chunks, and their
// results are read row by row. Its inputs broadcast the same way, so one period of each is
// all it reads.
//
// Example (Hessian of sum(tanh(Wx)^2), n = 16): before, "%9 = tanh(%7)", "%10 =
// square(%9)", ..., "%22 = add(%21, %20)": fourteen steps on [16] and [16, 16]; after, one
//   "%22 = fused[16, 16] float32(%7, %4, %6, %5, %8) { prelude[16] { r5 = tanh(r0);
//    r6 = square(r5); r7 = sub(r1, r6); r8 = mul(r2, r5); r9 = mul(r8, r3) };
//    r10 = mul(r4, r7); ... }".
#ifndef FT_INTERPRETERS_JIT_FUSE_H_
#define FT_INTERPRETERS_JIT_FUSE_H_

#include <vector>

#include "interpreters/jit/trace.h"
#include "tensor/tensor.h"

namespace ft {

// FusePointwiseSteps rewrites `program`'s steps as above. traced[s] is the tensor slot s
// held in the traced run (its dtype and layout decide what fuses).
void FusePointwiseSteps(Program& program, const std::vector<const Tensor*>& traced);

}  // namespace ft

#endif  // FT_INTERPRETERS_JIT_FUSE_H_

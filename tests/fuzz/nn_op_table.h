// ft/tests/fuzz/nn_op_table.h
//
// ApplyNnOp: one neural-network op (convolution, pooling, interpolation, normalization,
// attention, activations, losses, model indexing; dispatch/*_ops.h), chosen and parametrized
// by the fuzzer's bytes, on tensors of a register file. nn_fuzzer runs them, mixed with
// ApplyOp's elementwise and view ops, eagerly and under a stack of transforms.
//
// A separate table from op_table.h's: ApplyOp picks its op with in.Below(NumOps()), so every
// entry appended there would change what each of its corpus files (the regression
// reproducers too) decodes to. This table may grow for the same reason only at its end, and
// nn_fuzzer's corpus then still decodes to the ops it was made for.
//
// The operands: these ops want ranks and shapes that fit each other (a weight
// [O, C / groups, *kernel] for an input [N, C, *spatial]), which random registers seldom do.
// So an op decodes its shapes first (small sizes, so results stay near kMaxNumel) and builds
// each operand from a register fitted to its shape (flattened, cut or tiled, reshaped) and
// converted to the op's dtype; the operand then still depends on the function's inputs (it is
// batched under vmap, tracked under grad). Sometimes an operand is a register as it is (any
// rank, shape and dtype) or a constant made here, and the parameters (strides, paddings,
// dilations, groups, output sizes, modes, reductions, equations) are sometimes out of range,
// so both sides of every op's validation are reached.
//
// As in ApplyOp, a result of more than kMaxNumel elements is not kept (an ft::Error).
#ifndef FT_TESTS_FUZZ_NN_OP_TABLE_H_
#define FT_TESTS_FUZZ_NN_OP_TABLE_H_

#include <cstdint>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/op_table.h"

namespace ft::fuzz {

// ApplyNnOp decodes one nn op from `in` and runs it on `regs` (non-empty), appending its
// result(s); returns the op's name. Throws what the op throws (ft::Error only, unless ft has
// a bug).
const char* ApplyNnOp(FuzzInput& in, Registers& regs);

// NumNnOps: how many entries the table has.
int64_t NumNnOps();

}  // namespace ft::fuzz

#endif  // FT_TESTS_FUZZ_NN_OP_TABLE_H_

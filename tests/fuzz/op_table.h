// ft/tests/fuzz/op_table.h
//
// ApplyOp: one public op, chosen and parametrized by the fuzzer's bytes, on tensors of a
// register file. ops_fuzzer runs sequences of them eagerly; transforms_fuzzer runs the same
// sequences as the function under a stack of transforms, where the same ops reach their
// batching rules, derivative formulas and functionalize rules. The table covers the op table
// of docs/coverage.md (every family, in-place ops and views included), plus factories.
//
// Each op reads its operands from the registers (any register: a mismatched shape or dtype is
// one of the cases), decodes its parameters (dims out of range, negative and huge sizes) and
// appends its result(s). A result with more than kMaxNumel elements is not kept: the op
// throws an ft::Error saying so, which the caller treats like any other ft::Error.
#ifndef FT_TESTS_FUZZ_OP_TABLE_H_
#define FT_TESTS_FUZZ_OP_TABLE_H_

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"
#include "tests/fuzz/fuzz_input.h"

namespace ft::fuzz {

// Registers: the tensors an op may read. ApplyOp reads a non-empty file.
using Registers = std::vector<Tensor>;

// The helpers every op table uses (this one and nn_op_table.h).
// Pick: a register chosen by one byte (a reference into r: copy it before appending to r).
const Tensor& Pick(FuzzInput& in, const Registers& r);
// Put appends t, or throws an ft::Error when t has more than kMaxNumel elements.
void Put(Registers& r, const Tensor& t);
// PutAll: Put of the first few of ts (split and chunk can make many pieces).
void PutAll(Registers& r, const TensorList& ts);
// SizeAt: x's size at dim d, or a plausible size when d is out of range (the op then throws);
// at most INT64_MAX - 2, so a caller may add 1.
int64_t SizeAt(const Tensor& x, int64_t d);

// ApplyOp decodes one op from `in` and runs it; returns the op's name. Throws what the op
// throws (ft::Error only, unless ft has a bug).
const char* ApplyOp(FuzzInput& in, Registers& regs);

// NumOps: how many entries the table has.
int64_t NumOps();

}  // namespace ft::fuzz

#endif  // FT_TESTS_FUZZ_OP_TABLE_H_

// ops_fuzzer: a decoded input tensor (tensor/layout of fuzz_input.h) and a sequence of up to
// 24 public ops on it and on what the earlier ops returned (op_table.h), eagerly, no
// transform. Each op ends in a value or an ft::Error (which leaves its arguments as they
// were, and the sequence goes on); every result kept is checked to lie inside its storage
// and read in full.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "ops/ops.h"
#include "tensor/error.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/op_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ft::fuzz::RunInput([&] {
    ft::fuzz::FuzzInput in(data, size);
    ft::fuzz::Registers regs = {ft::fuzz::MakeTensor(in)};
    if (in.Bool()) regs.push_back(ft::fuzz::MakeTensor(in));
    if (ft::fuzz::Verbose()) {
      for (const ft::Tensor& t : regs) std::fprintf(stderr, "input %s\n", t.DebugString().c_str());
    }
    for (int step = 0; step < 24 && !in.exhausted(); ++step) {
      const size_t before = regs.size();
      try {
        ft::fuzz::ApplyOp(in, regs);
      } catch (const ft::Error& e) {
        if (ft::fuzz::Verbose()) std::fprintf(stderr, "  ft::Error: %s\n", e.what());
      }
      for (size_t i = before; i < regs.size(); ++i) {
        ft::fuzz::CheckLayout(regs[i]);
        if (regs[i].defined()) (void)ft::contiguous(regs[i]);
      }
    }
  });
  return 0;
}

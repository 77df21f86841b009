// control_flow_fuzzer: cond, switch_case, while_loop, fori_loop, scan and checkpoint inside a
// decoded function, under a decoded stack of transforms (transform_stack.h). Each branch,
// body or step is itself a few decoded ops (op_table.h) over registers seeded with its
// operands, so branches disagree in shapes and dtypes, bodies change their carries' shapes,
// predicates come out non-bool or batched, operands and captured tensors get written in
// place, and loops run 0 or several times, per example under vmap. Each input must end in a
// value or an ft::Error naming the op, never a crash, a sanitizer report or a hang, with the
// layer stack balanced (RunInput checks).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "control_flow/control_flow.h"
#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/factories.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/op_table.h"
#include "tests/fuzz/transform_stack.h"

namespace ft::fuzz {
namespace {

// SubFunction: a few ops decoded from `bytes`, on registers seeded with the function's
// arguments (and a captured tensor); returns its last `num_out` registers. The same bytes
// give the same ops on every call, as a function of the transforms' replays must.
TensorList RunSub(const std::vector<uint8_t>& bytes, const TensorList& args, int64_t num_out,
                  const Tensor& captured) {
  FuzzInput in(bytes.data(), bytes.size());
  Registers r;
  for (const Tensor& t : args) Put(r, t);
  if (captured.defined()) Put(r, captured);
  if (r.empty()) Put(r, ones({2}));
  const int64_t steps = in.Below(4);
  for (int64_t i = 0; i < steps; ++i) ApplyOp(in, r);
  TensorList out;
  for (int64_t k = 0; k < num_out; ++k) {
    out.push_back(r[r.size() - 1 - static_cast<size_t>(k) % r.size()]);
  }
  return out;
}

TensorListFn Sub(std::vector<uint8_t> bytes, int64_t num_out, Tensor captured) {
  return [bytes = std::move(bytes), num_out, captured](const TensorList& args) {
    return RunSub(bytes, args, num_out, captured);
  };
}

// Predicate: mostly a bool scalar from the values (so it may be batched), sometimes the wrong
// kind or shape.
Tensor Predicate(FuzzInput& in, const Tensor& x) {
  switch (in.Below(6)) {
    case 0: return gt(x, in.Double());                 // maybe not one element
    case 1: return sum(x);                             // not bool
    case 2: return scalar_tensor(in.Bool());           // unbatched constant
    default: return gt(sum(abs(x)), in.Double());
  }
}

void ControlFlowStep(FuzzInput& in, Registers& r) {
  const Tensor x = Pick(in, r);
  const Tensor y = Pick(in, r);
  const Tensor captured = in.Bool() ? Pick(in, r) : Tensor();
  const int64_t num_out = 1 + in.Below(2);
  const int64_t kind = in.Below(8);
  std::vector<uint8_t> a = in.Take(12), b = in.Take(12), c = in.Take(12);
  switch (kind) {
    case 0: {
      const Tensor p = Predicate(in, x);
      PutAll(r, cond(p, Sub(a, num_out, captured), Sub(b, num_out, captured), {x, y}));
      break;
    }
    case 1: {
      const Tensor index = in.Bool() ? to(sum(abs(x)), kInt64) : scalar_tensor(in.Index(4));
      std::vector<TensorListFn> branches;
      const int64_t n = in.Below(4);  // 0 branches: an error
      for (int64_t k = 0; k < n; ++k) branches.push_back(Sub(k % 2 ? a : b, num_out, captured));
      PutAll(r, switch_case(index, branches, {x}));
      break;
    }
    case 2: {
      // A counter bounds the loop; the rest of the predicate comes from the carry.
      const int64_t cap = in.Below(5);
      const double bound = in.Double();
      const bool by_value = in.Bool();
      TensorListFn body = Sub(a, 1, captured);
      PutAll(r, while_loop(
                    [cap, bound, by_value](const TensorList& carry) {
                      Tensor more = lt(carry[1], cap);
                      if (by_value) more = logical_and(more, gt(sum(abs(carry[0])), bound));
                      return more;
                    },
                    [body](const TensorList& carry) {
                      return TensorList{body({carry[0]})[0], carry[1] + 1};
                    },
                    {x, zeros({}, kInt64)}));
      break;
    }
    case 3: {
      TensorListFn body = Sub(a, 1, captured);
      // Small bounds: a loop of 2^63 trips is a request for a hang, not a bug.
      PutAll(r, fori_loop(in.Below(5) - 1, in.Below(5) - 1,
                          [body](const Tensor& i, const TensorList& carry) {
                            return TensorList{body({carry[0], to(i, carry[0].dtype())})[0]};
                          },
                          {x}));
      break;
    }
    case 4: {
      TensorListFn step = Sub(a, 2, captured);
      ScanOptions options;
      options.reverse = in.Bool();
      options.checkpoint = in.Bool();
      if (in.Bool()) options.length = in.Below(6) - 1;  // -1: an error
      ScanResult s = scan(
          [step](const TensorList& carry, const TensorList& xs) {
            TensorList args = carry;
            args.insert(args.end(), xs.begin(), xs.end());
            TensorList out = step(args);
            return std::pair(TensorList{out[0]}, TensorList{out[1]});
          },
          {y}, in.Bool() ? TensorList{x} : TensorList{}, options);
      PutAll(r, s.carry);
      PutAll(r, s.ys);
      break;
    }
    case 5: {
      CheckpointOptions options;
      options.policy = static_cast<CheckpointPolicy>(in.Below(3));
      options.names = {"a"};
      TensorListFn f = Sub(a, num_out, captured);
      PutAll(r, checkpoint(
                    [f](const TensorList& args) {
                      TensorList out = f(args);
                      out[0] = checkpoint_name(out[0], "a");
                      return out;
                    },
                    options)({x, y}));
      break;
    }
    case 6: {
      // Nested: a cond inside a while body.
      TensorListFn then_fn = Sub(b, 1, captured), else_fn = Sub(c, 1, captured);
      const double bound = in.Double();
      PutAll(r, while_loop(
                    [](const TensorList& carry) { return lt(carry[1], 2); },
                    [then_fn, else_fn, bound](const TensorList& carry) {
                      TensorList next = cond(gt(sum(carry[0]), bound), then_fn, else_fn,
                                             {carry[0]});
                      return TensorList{next[0], carry[1] + 1};
                    },
                    {x, zeros({}, kInt64)}));
      break;
    }
    default:
      ApplyOp(in, r);
      break;
  }
}

}  // namespace
}  // namespace ft::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ft::fuzz::RunInput([&] {
    ft::fuzz::FuzzInput in(data, size);
    ft::fuzz::RunStack(in, &ft::fuzz::ControlFlowStep, /*step_bytes=*/64);
  });
  return 0;
}

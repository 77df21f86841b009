// functionalize composed with the other transforms, in both orders, each against an oracle
// that does not use functionalize: a loop of the eager function per example, float64
// central differences, closed forms, or the same program written out of place. Also the
// cases the plain transforms refuse, which functionalize makes work.
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dispatch/dispatch.h"
#include "gtest/gtest.h"
#include "interpreters/functionalize/functionalize.h"
#include "interpreters/functionalize/random_program.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jit/jit.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::Rand;
using Fn = std::function<Tensor(const Tensor&)>;
using ListFn = std::function<Tensor(const TensorList&)>;

// InPlaceCounter counts the in-place base kernels that run while it is installed.
struct InPlaceCounter : BaseCallObserver {
  ValueList RunBaseKernel(const Operator& op, ValueList& args) override {
    if (op.schema().mutated_arg) ++writes;
    return op.CallBaseKernel(args);
  }
  int writes = 0;
};

// Loop: f applied eagerly to each row of xs, stacked.
Tensor Loop(const Fn& f, const Tensor& xs) {
  TensorList rows;
  for (int64_t b = 0; b < xs.size(0); ++b) rows.push_back(f(select(xs, 0, b)));
  return stack(rows, 0);
}

// FillsABuffer: the buffer is made inside f and written with values of x in place, then
// written through views.
Tensor FillsABuffer(const Tensor& x) {
  Tensor buf = zeros({3}, x.dtype());
  add_(buf, x);
  mul_(select(buf, 0, 0), 2.0);
  Tensor tail = narrow(buf, 0, 1, 2);
  add_(tail, sin(narrow(x, 0, 1, 2)));
  return buf * buf;
}

TEST(VmapOfFunctionalize, FillsABufferMadeInsideWithBatchedValues) {
  const Tensor xs = Rand({5, 3}, 1);
  // Plain vmap refuses the write of batched values into an unbatched buffer.
  EXPECT_FT_ERROR(vmap(Fn(&FillsABuffer))(xs), "would write values that vary over the batch");
  EXPECT_TRUE(LayerStack::empty());
  InPlaceCounter counter;
  Tensor got;
  {
    BaseCallObserverScope observe(&counter);
    got = vmap(functionalize(Fn(&FillsABuffer)))(xs);
  }
  EXPECT_EQ(counter.writes, 0);
  EXPECT_TENSOR_NEAR(got, Loop(&FillsABuffer, xs), 1e-12);
  // in_dims and out_dims elsewhere, chunks, and a second vmap level.
  EXPECT_TENSOR_NEAR(vmap(functionalize(Fn(&FillsABuffer)), 1, 1)(transpose(xs, 0, 1)),
                     transpose(Loop(&FillsABuffer, xs), 0, 1), 1e-12);
  EXPECT_TENSOR_NEAR(vmap(functionalize(Fn(&FillsABuffer)), 0, 0, Randomness::kError, 2)(xs),
                     Loop(&FillsABuffer, xs), 1e-12);
  const Tensor xss = Rand({2, 4, 3}, 2);
  Tensor nested = vmap(vmap(functionalize(Fn(&FillsABuffer))))(xss);
  for (int64_t i = 0; i < 2; ++i) {
    EXPECT_TENSOR_NEAR(select(nested, 0, i), Loop(&FillsABuffer, select(xss, 0, i)), 1e-12);
  }
}

TEST(VmapOfFunctionalize, DiagonalMatricesFromAZerosBuffer) {
  // functorch's documented case: zeros(3, 3).diagonal().copy_(vec) under vmap.
  auto diag = [](const Tensor& v) {
    Tensor m = zeros({3, 3}, v.dtype());
    copy_(diagonal(m), v);
    return m;
  };
  const Tensor vs = Rand({4, 3}, 3);
  EXPECT_FT_ERROR(vmap(Fn(diag))(vs), "vmap: copy_");
  Tensor got = vmap(functionalize(Fn(diag)))(vs);
  EXPECT_TENSOR_EQ(got, Loop(diag, vs));
}

TEST(VmapOfFunctionalize, WritesIntoTheBatchedInputReachTheCaller) {
  Tensor xs = Rand({4, 3}, 4);
  const Tensor before = clone(xs);
  auto f = [](const Tensor& x) {
    mul_(select(x, 0, 1), 3.0);
    return sum(x);
  };
  Tensor sums = vmap(functionalize(Fn(f)))(xs);
  Tensor expected = clone(before);
  TensorList rows;
  for (int64_t b = 0; b < 4; ++b) {
    Tensor row = clone(select(before, 0, b));
    rows.push_back(f(row));
    copy_(select(expected, 0, b), row);
  }
  EXPECT_TENSOR_NEAR(sums, stack(rows, 0), 1e-12);
  EXPECT_TENSOR_NEAR(xs, expected, 1e-15);
}

// WritesThroughAViewOfATrackedTensor: y carries a gradient and is written through a view;
// plain grad refuses the next use of y (its history is stale).
Tensor WritesThroughAViewOfATrackedTensor(const TensorList& a) {
  Tensor y = a[0] * a[1];
  Tensor row = select(y, 0, 1);
  mul_(row, a[1]);                 // y[1] *= x2 (broadcast over the row)
  Tensor d = diagonal(y);
  add_(d, sin(select(a[0], 1, 0)));  // y[i, i] += sin(x[i, 0])
  return sum(y * y);
}

// The same program written out of place.
Tensor OutOfPlaceTwin(const TensorList& a) {
  const Tensor& x = a[0];
  Tensor y = x * a[1];
  y = cat({narrow(y, 0, 0, 1), unsqueeze(select(y, 0, 1) * a[1], 0), narrow(y, 0, 2, 1)}, 0);
  Tensor eye3 = eye(3, kFloat64);
  Tensor bump = unsqueeze(sin(select(x, 1, 0)), 1) * eye3;
  y = y + bump;
  return sum(y * y);
}

TEST(GradOfFunctionalize, DifferentiatesWritesThroughViewsOfTrackedTensors) {
  const TensorList args = {Rand({3, 3}, 5), Rand({3}, 6)};
  EXPECT_FT_ERROR(grad(ListFn(&WritesThroughAViewOfATrackedTensor))(args),
                  "modified in place through a view");
  EXPECT_TRUE(LayerStack::empty());
  const ListFn f = functionalize(ListFn(&WritesThroughAViewOfATrackedTensor));
  EXPECT_TENSOR_NEAR(f(args), OutOfPlaceTwin(args), 1e-12);
  const TensorList g = grad(f, {0, 1})(args);
  const TensorList twin = grad(ListFn(&OutOfPlaceTwin), {0, 1})(args);
  EXPECT_TENSOR_NEAR(g[0], twin[0], 1e-12);
  EXPECT_TENSOR_NEAR(g[1], twin[1], 1e-12);
  EXPECT_TRUE(testing::GradCheck(f, args));
  EXPECT_TRUE(testing::GradGradCheck(f, args));
}

TEST(GradOfFunctionalize, ABufferMadeInsideTakesValuesThatCarryAGradient) {
  auto f = [](const TensorList& a) {
    Tensor buf = zeros({2, 3}, kFloat64);
    copy_(select(buf, 0, 0), a[0]);
    copy_(select(buf, 0, 1), exp(a[0]));
    return sum(buf * buf);
  };
  const TensorList args = {Rand({3}, 7)};
  EXPECT_FT_ERROR(grad(ListFn(f))(args), "made by a factory inside it");
  const Tensor x = args[0];
  EXPECT_TENSOR_NEAR(grad(functionalize(ListFn(f)))(args)[0], x * 2.0 + exp(x * 2.0) * 2.0,
                     1e-12);
}

TEST(ForwardModeOfFunctionalize, JvpJacrevJacfwdHessianMatchTheTwin) {
  const TensorList args = {Rand({3, 3}, 8), Rand({3}, 9)};
  const ListFn f = functionalize(ListFn(&WritesThroughAViewOfATrackedTensor));
  EXPECT_TRUE(testing::JvpCheck(f, args));
  const TensorList t = {Rand({3, 3}, 10), Rand({3}, 11)};
  auto as_list = [](const ListFn& g) {
    return TensorListFn([g](const TensorList& a) { return TensorList{g(a)}; });
  };
  const Tensor jf = jvp(as_list(f), args, t).tangents[0];
  const Tensor jt = jvp(as_list(ListFn(&OutOfPlaceTwin)), args, t).tangents[0];
  EXPECT_TENSOR_NEAR(jf, jt, 1e-12);
  const TensorList rev = jacrev(f, {0, 1})(args);
  const TensorList rev_twin = jacrev(ListFn(&OutOfPlaceTwin), {0, 1})(args);
  const TensorList fwd = jacfwd(f, {0, 1})(args);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TENSOR_NEAR(rev[i], rev_twin[i], 1e-12);
    EXPECT_TENSOR_NEAR(fwd[i], rev_twin[i], 1e-12);
  }
  const TensorList h = hessian(f, {1})(args);
  const TensorList h_twin = hessian(ListFn(&OutOfPlaceTwin), {1})(args);
  EXPECT_TENSOR_NEAR(h[0], h_twin[0], 1e-10);
}

TEST(FunctionalizeOfVmap, RemovesTheWritesOfABatchedFunction) {
  // vmap alone runs this (the buffer is batched); functionalize outside removes its writes.
  auto f = [](const Tensor& x) {
    Tensor buf = clone(x);
    add_(buf, 1.0);
    mul_(select(buf, 0, 2), -1.0);
    return buf;
  };
  const Tensor xs = Rand({4, 3}, 12);
  const Tensor expected = vmap(Fn(f))(xs);
  EXPECT_TENSOR_EQ(expected, Loop(f, xs));
  InPlaceCounter counter;
  Tensor got;
  {
    BaseCallObserverScope observe(&counter);
    got = functionalize(vmap(Fn(f)))(xs);
  }
  EXPECT_EQ(counter.writes, 0);
  EXPECT_TENSOR_EQ(got, expected);
}

TEST(FunctionalizeOfGrad, RemovesTheWritesOfAGradient) {
  auto f = [](const TensorList& a) {
    Tensor y = a[0] * 2.0;
    mul_(y, a[0]);  // y = 2 x^2, written in place (grad rebases its history)
    add_(y, 1.0);
    return sum(y);
  };
  const TensorList args = {Rand({4}, 13)};
  const TensorList expected = grad(ListFn(f))(args);
  EXPECT_TENSOR_NEAR(expected[0], args[0] * 4.0, 1e-12);
  InPlaceCounter counter;
  Tensor got;
  {
    BaseCallObserverScope observe(&counter);
    got = functionalize(std::function<TensorList(const TensorList&)>(grad(ListFn(f))))(args)[0];
  }
  EXPECT_EQ(counter.writes, 0);
  EXPECT_TENSOR_NEAR(got, expected[0], 1e-15);
}

// Random programs of writes through views of the input: under vmap against a loop of the
// eager program over the examples (outputs and the written input), and under grad against
// float64 central differences.
TEST(RandomPrograms, VmapOfFunctionalizeIsALoopOfTheEagerProgram) {
  for (uint64_t seed = 0; seed < 120; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const testing::RandomProgram program(seed);
    const Tensor xs = Rand({3, 3, 4}, 100 + seed);
    Tensor xs_vmap = clone(xs);
    const TensorList got = vmap(functionalize(TensorListFn([&program](const TensorList& a) {
      return program.Run(a[0]);
    })))({xs_vmap});
    Tensor xs_loop = clone(xs);
    std::vector<TensorList> rows;
    for (int64_t b = 0; b < 3; ++b) {
      Tensor row = clone(select(xs, 0, b));
      rows.push_back(program.Run(row));
      copy_(select(xs_loop, 0, b), row);
    }
    ASSERT_EQ(got.size(), rows[0].size());
    for (size_t i = 0; i < got.size(); ++i) {
      TensorList per_example;
      for (const TensorList& r : rows) per_example.push_back(r[i]);
      ASSERT_TRUE(testing::TensorEqual(got[i], stack(per_example, 0))) << "output " << i;
    }
    ASSERT_TRUE(testing::TensorEqual(xs_vmap, xs_loop));
  }
}

TEST(RandomPrograms, GradOfFunctionalizeMatchesCentralDifferences) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const testing::RandomProgram program(seed);
    const Tensor w = Rand({64}, 500 + seed);
    // The program writes its argument: differentiate a copy of it (the input being
    // differentiated may not be written, as eagerly).
    const ListFn f = functionalize(ListFn([&program, w](const TensorList& a) {
      const TensorList outs = program.Run(a[0] * 1.0);
      Tensor total = zeros({}, kFloat64);
      for (size_t i = 0; i < outs.size(); ++i) {
        total = total + sum(outs[i] * reshape(narrow(w, 0, 0, outs[i].numel()), outs[i].sizes()));
      }
      return total;
    }));
    ASSERT_TRUE(testing::GradCheck(f, {Rand({3, 4}, 200 + seed)}));
  }
}

TEST(JitOfFunctionalize, TracesAPureProgramThatFuses) {
  auto chain = [](const TensorList& a) {
    Tensor buf = zeros({1000}, kFloat64);
    add_(buf, a[0]);
    for (int i = 0; i < 10; ++i) {
      mul_(buf, 1.5);
      add_(buf, a[0]);
    }
    return TensorList{buf};
  };
  const Tensor x = Rand({1000}, 14);
  // Eagerly: the chain writes a tensor a factory made, which a replay could not repeat.
  JitFunction plain = jit(chain);
  plain({x});
  EXPECT_NE(plain.untraceable_reason({x}), "");
  JitFunction pure = jit(functionalize(std::function<TensorList(const TensorList&)>(chain)));
  const TensorList first = pure({x});
  const TensorList second = pure({x});
  EXPECT_EQ(pure.untraceable_reason({x}), "");
  EXPECT_EQ(pure.stats().replays, 1);
  EXPECT_TENSOR_EQ(first[0], chain({x})[0]);
  EXPECT_TENSOR_EQ(second[0], chain({x})[0]);
  const std::string program = pure.program({x})->DebugString();
  EXPECT_NE(program.find("fused["), std::string::npos) << program;
  EXPECT_EQ(program.find("add_"), std::string::npos) << program;
  EXPECT_EQ(program.find("mul_"), std::string::npos) << program;

  // Writing the input: the program fuses the chain and writes the input back once, last.
  auto writes_input = [](const TensorList& a) {
    for (int i = 0; i < 4; ++i) {
      mul_(a[0], 0.5);
      add_(a[0], 1.0);
    }
    return TensorList{a[0] * 2.0};
  };
  JitFunction writer =
      jit(functionalize(std::function<TensorList(const TensorList&)>(writes_input)));
  Tensor traced = clone(x);
  writer({traced});
  Tensor replayed = clone(x), eager = clone(x);
  const Tensor out = writer({replayed})[0];
  EXPECT_EQ(writer.stats().replays, 1) << writer.untraceable_reason({replayed});
  EXPECT_TENSOR_EQ(out, writes_input({eager})[0]);
  EXPECT_TENSOR_EQ(replayed, eager);
  const std::string write_program = writer.program({x})->DebugString();
  EXPECT_NE(write_program.find("fused["), std::string::npos) << write_program;
  EXPECT_NE(write_program.find("copy_"), std::string::npos) << write_program;
}

}  // namespace
}  // namespace ft

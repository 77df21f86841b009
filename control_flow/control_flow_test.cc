// cond, switch_case, while_loop, fori_loop and scan against independent oracles: closed
// forms, float64 central differences (gradcheck, jvpcheck), the same math unrolled in plain
// ops, and loops over examples for vmap. Also host control flow (C++ `if` on item()) under
// grad and jvp.
#include "control_flow/control_flow.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dispatch/interpreter.h"
#include "gtest/gtest.h"
#include "interpreters/functionalize/functionalize.h"
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

using testing::GradCheck;
using testing::GradGradCheck;
using testing::JvpCheck;
using testing::Rand;

Tensor Row(const Tensor& x, int64_t i) { return select(x, 0, i); }

// ---- Host control flow: C++ `if` on a value inside grad and jvp ----

// functorch's example: grad(lambda x: (x*x).sum() if x.sum().item() > 0 else (x**3).sum()).
Tensor Piecewise(const Tensor& x) {
  if (sum(x).item<double>() > 0) return sum(x * x);
  return sum(x * x * x);
}

TEST(HostControlFlow, GradTakesThePathTheValueChose) {
  const Tensor pos = tensor({0.5, 1.0, -0.25}), neg = tensor({-0.5, -1.0, 0.25});
  EXPECT_TENSOR_NEAR(grad(TensorFn(Piecewise))(pos), pos * 2.0, 1e-15);
  EXPECT_TENSOR_NEAR(grad(TensorFn(Piecewise))(neg), neg * neg * 3.0, 1e-15);
  // Forward mode, second order, and reads in the middle of a nested transform.
  JvpResult r = jvp([](const TensorList& a) { return TensorList{Piecewise(a[0])}; }, {neg},
                    {ones_like(neg)});
  EXPECT_NEAR(r.tangents[0].item<double>(), 3.0 * (0.25 + 1.0 + 0.0625), 1e-15);
  Tensor h = hessian([](const TensorList& a) { return Piecewise(a[0]); })({neg})[0];
  EXPECT_TENSOR_NEAR(h, eye(3, kFloat64) * (neg * 6.0), 1e-14);  // diag(6x)
  Tensor gg = grad(TensorFn([](const Tensor& x) {
    // The inner gradient's value decides the branch.
    Tensor g = grad(TensorFn(Piecewise))(x);
    return g.to_vector<double>()[0] > 0 ? sum(g * g) : sum(g);
  }))(pos);
  EXPECT_TENSOR_NEAR(gg, pos * 8.0, 1e-14);  // d/dx sum((2x)^2) = 8x
}

TEST(HostControlFlow, JitOfAValueReadRunsEagerlyAndRight) {
  JitFunction f = jit([](const TensorList& a) {
    return TensorList{grad(TensorFn(Piecewise))(a[0])};
  });
  const Tensor pos = tensor({0.5, 1.0, -0.25}), neg = tensor({-0.5, -1.0, 0.25});
  EXPECT_TENSOR_NEAR(f({pos})[0], pos * 2.0, 1e-15);
  EXPECT_TENSOR_NEAR(f({neg})[0], neg * neg * 3.0, 1e-15);
  EXPECT_NE(f.untraceable_reason({pos}).find("read tensor elements"), std::string::npos);
}

TEST(HostControlFlow, VmapStillRefusesAndNamesTheOps) {
  EXPECT_FT_ERROR(vmap(TensorFn(Piecewise))(Rand({4, 3}, 1)),
                  "item: cannot read the elements of a batched tensor inside vmap");
  EXPECT_FT_ERROR(vmap(grad(TensorFn(Piecewise)))(Rand({4, 3}, 1)),
                  "ft::where, ft::cond or ft::while_loop");
  EXPECT_EQ(LayerStack::size(), 0);
}

// ---- cond ----

TensorList Sqrt(const TensorList& a) { return {sqrt(a[0]), a[1] * 2.0}; }
TensorList Square(const TensorList& a) { return {a[0] * a[0], a[1] + 1.0}; }

TEST(Cond, RunsTheBranchThePredicateNames) {
  const Tensor x = tensor({4.0, 9.0}), y = tensor({1.0});
  TensorList t = cond(scalar_tensor(true), Sqrt, Square, {x, y});
  EXPECT_TENSOR_NEAR(t[0], tensor({2.0, 3.0}), 0);
  EXPECT_TENSOR_NEAR(t[1], tensor({2.0}), 0);
  TensorList f = cond(scalar_tensor(false), Sqrt, Square, {x, y});
  EXPECT_TENSOR_NEAR(f[0], tensor({16.0, 81.0}), 0);
  EXPECT_TENSOR_NEAR(f[1], tensor({2.0}), 0);
  // A one-element predicate of any shape.
  EXPECT_TENSOR_NEAR(cond(ge(tensor({1.0}, {1, 1}), 0.0), Sqrt, Square, {x, y})[0],
                     tensor({2.0, 3.0}), 0);
}

TEST(Cond, UnbatchedPredicateUnderVmapRunsOneBranch) {
  int true_calls = 0, false_calls = 0;
  const Tensor w = tensor({1.0, -2.0, 3.0});
  auto f = [&](const Tensor& x) {
    return cond(gt(sum(w), 0.0),  // the same in every example
                [&](const TensorList& a) { ++true_calls; return TensorList{sin(a[0])}; },
                [&](const TensorList& a) { ++false_calls; return TensorList{cos(a[0])}; },
                {x})[0];
  };
  const Tensor xs = Rand({5, 3}, 2);
  EXPECT_TENSOR_NEAR(vmap(TensorFn(f))(xs), sin(xs), 1e-15);
  EXPECT_EQ(true_calls, 1);
  // false_fn's code ran once more, on a batch of zero examples, only to check that it
  // agrees with true_fn (NOTE: [Branches that do not run]).
  EXPECT_EQ(false_calls, 1);
}

// f(x) = sqrt(x) where sum(x) > 1, else x^2 (two outputs): the branch not taken has an
// infinite or NaN derivative at the inputs of the examples that did not take it.
TensorList Branchy(const TensorList& a) {
  return cond(gt(sum(a[0]), 1.0),
              [](const TensorList& b) { return TensorList{sqrt(b[0]), sum(b[0]) * 2.0}; },
              [](const TensorList& b) { return TensorList{b[0] * b[0], sum(b[0]) - 1.0}; },
              {a[0]});
}

Tensor BranchyLoss(const TensorList& a) {
  TensorList o = Branchy(a);
  return sum(o[0]) + o[1] * 3.0;
}

Tensor BranchyBatch() {
  // Rows 0 and 2 take sqrt; rows 1 and 3 take the square at negative values, where sqrt's
  // derivative is NaN, and at zero, where it is infinite.
  return tensor({0.5, 0.7, 0.1, -0.5, -0.25, 0.0, 2.0, 0.1, 0.3, 0.0, 0.0, 0.0}, {4, 3});
}

TEST(Cond, BatchedPredicateSelectsEveryOutputPerExample) {
  const Tensor xs = BranchyBatch();
  TensorList batched = vmap(TensorListFn(Branchy))({xs});
  for (int64_t i = 0; i < 4; ++i) {
    TensorList one = Branchy({Row(xs, i)});
    EXPECT_TENSOR_NEAR(Row(batched[0], i), one[0], 0);
    EXPECT_TENSOR_NEAR(Row(batched[1], i), one[1], 0);
  }
}

TEST(Cond, PerExampleGradientsAreTheTakenBranchsAndNeverNaN) {
  const Tensor xs = BranchyBatch();
  // Per-example gradients, both orders of vmap and grad, against a loop of grads.
  Tensor per_example = vmap(grad(ScalarFn(BranchyLoss)))({xs})[0];
  for (int64_t i = 0; i < 4; ++i) {
    Tensor expected = grad(ScalarFn(BranchyLoss))({Row(xs, i)})[0];
    EXPECT_TENSOR_NEAR(Row(per_example, i), expected, 1e-15);
  }
  EXPECT_EQ(sum(ne(per_example, per_example)).item<int64_t>(), 0);
  // grad of the batch's summed loss: the same rows.
  Tensor total = grad(ScalarFn([](const TensorList& a) {
    return sum(vmap(TensorFn([](const Tensor& x) { return BranchyLoss({x}); }))(a[0]));
  }))({xs})[0];
  EXPECT_TENSOR_NEAR(total, per_example, 1e-15);
  // Closed form of the false branch: 2x + 3.
  EXPECT_TENSOR_NEAR(Row(total, 1), Row(xs, 1) * 2.0 + 3.0, 1e-15);
}

TEST(Cond, DerivativesAgainstFiniteDifferences) {
  const Tensor x = tensor({0.9, 0.4, 0.3}), y = tensor({0.2, -0.4, 0.1});
  for (const Tensor& v : {x, y}) {
    EXPECT_TRUE(GradCheck(BranchyLoss, {v}));
    EXPECT_TRUE(JvpCheck(BranchyLoss, {v}));
    EXPECT_TRUE(GradGradCheck(BranchyLoss, {v}));
  }
  // jvp under vmap with a batched predicate: per example, against a loop.
  const Tensor xs = tensor({0.9, 0.4, 0.3, 0.2, -0.4, 0.1}, {2, 3});
  const Tensor ts = Rand({2, 3}, 3);
  TensorList batched = vmap(TensorListFn([](const TensorList& a) {
    return jvp(Branchy, {a[0]}, {a[1]}).tangents;
  }))({xs, ts});
  for (int64_t i = 0; i < 2; ++i) {
    TensorList one = jvp(Branchy, {Row(xs, i)}, {Row(ts, i)}).tangents;
    EXPECT_TENSOR_NEAR(Row(batched[0], i), one[0], 1e-15);
    EXPECT_TENSOR_NEAR(Row(batched[1], i), one[1], 1e-15);
  }
}

TEST(Cond, Errors) {
  const Tensor x = tensor({1.0, 2.0});
  EXPECT_FT_ERROR(cond(scalar_tensor(1.0), Sqrt, Square, {x, x}),
                  "cond: pred must be a bool tensor with one element, got float32 []");
  EXPECT_FT_ERROR(cond(gt(x, 0.0), Sqrt, Square, {x, x}),
                  "cond: pred must be a bool tensor with one element, got bool [2]");
  EXPECT_FT_ERROR(cond(scalar_tensor(true), Sqrt, Square, {x, Tensor()}),
                  "cond: operand 1 is an undefined tensor");
  // Branches that disagree, caught when both run (a batched predicate).
  auto mismatched = [](const Tensor& v) {
    return cond(gt(sum(v), 0.0), [](const TensorList& a) { return TensorList{a[0]}; },
                [](const TensorList& a) { return TensorList{sum(a[0])}; }, {v})[0];
  };
  EXPECT_FT_ERROR(vmap(TensorFn(mismatched))(Rand({3, 2}, 4)),
                  "cond: output 0 of false_fn is float64 [], but true_fn's is float64 [2]; "
                  "they must match");
  EXPECT_EQ(LayerStack::size(), 0);
  // A branch writing its operand in place.
  Tensor buffer = tensor({1.0, 2.0});
  EXPECT_FT_ERROR(cond(scalar_tensor(false), Sqrt,
                       [](const TensorList& a) { return TensorList{add_(a[0], 1.0), a[1]}; },
                       {buffer, x}),
                  "cond: false_fn wrote operand 0 (float64 [2]) in place");
}

// NOTE: [Branches that do not run] in control_flow.cc: an unbatched predicate runs one
// branch, and the others are still checked against it, on a batch of zero examples.
TEST(Cond, BranchesThatDoNotRunAreCheckedToo) {
  const Tensor x = tensor({1.0, 2.0});
  const TensorListFn doubled = [](const TensorList& a) { return TensorList{a[0] * 2.0}; };
  const TensorListFn summed = [](const TensorList& a) { return TensorList{sum(a[0])}; };
  const TensorListFn twice = [](const TensorList& a) { return TensorList{a[0], a[0]}; };
  const TensorListFn as_float = [](const TensorList& a) { return TensorList{to(a[0], kFloat32)}; };
  EXPECT_FT_ERROR(cond(scalar_tensor(true), doubled, summed, {x}),
                  "cond: output 0 of false_fn is float64 [], but true_fn's is float64 [2]; they "
                  "must match (false_fn did not run: its outputs were evaluated on an empty "
                  "batch)");
  EXPECT_FT_ERROR(cond(scalar_tensor(false), twice, doubled, {x}),
                  "cond: true_fn returned 2 outputs, but false_fn has 1");
  EXPECT_FT_ERROR(switch_case(scalar_tensor(int64_t{0}, kInt64), {doubled, doubled, as_float}, {x}),
                  "switch_case: output 0 of branch 2 is float32 [2], but branch 0's is float64 "
                  "[2]");
  // Under transforms the same: the logical shapes are compared.
  EXPECT_FT_ERROR(grad([&](const Tensor& v) {
                    return sum(cond(scalar_tensor(true), doubled, summed, {v})[0]);
                  })(x),
                  "cond: output 0 of false_fn is float64 [], but true_fn's is float64 [2]");
  EXPECT_FT_ERROR(vmap(TensorFn([&](const Tensor& v) {
                    return cond(scalar_tensor(false), summed, doubled, {v})[0];
                  }))(Rand({3, 2}, 1)),
                  "cond: output 0 of true_fn is float64 [], but false_fn's is float64 [2]");
  EXPECT_EQ(LayerStack::size(), 0);
  // Agreeing branches: the taken one's values, and its gradient alone.
  EXPECT_TENSOR_NEAR(cond(scalar_tensor(false), doubled, TensorListFn([](const TensorList& a) {
                            return TensorList{a[0] * a[0]};
                          }), {x})[0],
                     tensor({1.0, 4.0}), 0);
  EXPECT_TENSOR_NEAR(grad([&](const Tensor& v) {
                       return sum(cond(scalar_tensor(true), doubled, TensorListFn([](
                                       const TensorList& a) { return TensorList{exp(a[0])}; }),
                                       {v})[0]);
                     })(x),
                     tensor({2.0, 2.0}), 0);
}

// The evaluation on an empty batch has no effect a user could see, and a branch it cannot
// evaluate without data goes unchecked rather than failing a call that runs the other one.
TEST(Cond, CheckingABranchThatDoesNotRunHasNoEffect) {
  const Tensor x = tensor({1.0, 2.0});
  const TensorListFn doubled = [](const TensorList& a) { return TensorList{a[0] * 2.0}; };
  // Reads a value (item() has no value per example in an empty batch).
  const TensorListFn reads = [](const TensorList& a) {
    return TensorList{sum(a[0]).item<double>() > 0 ? a[0] : sum(a[0])};
  };
  EXPECT_TENSOR_NEAR(cond(scalar_tensor(true), doubled, reads, {x})[0], x * 2.0, 0);
  // Writes a tensor it captured: refused before the write, so the tensor keeps its values.
  Tensor counter = tensor({0.0});
  const TensorListFn writes = [&counter](const TensorList& a) {
    add_(counter, 1.0);
    return TensorList{a[0] + counter};
  };
  EXPECT_TENSOR_NEAR(cond(scalar_tensor(true), doubled, writes, {x})[0], x * 2.0, 0);
  EXPECT_TENSOR_EQ(counter, tensor({0.0}));
  // Draws random numbers: the generator is where it was.
  const TensorListFn noisy = [](const TensorList& a) {
    return TensorList{a[0] + randn_like(a[0])};
  };
  manual_seed(3);
  const Tensor expected = randn_like(zeros({4}));
  manual_seed(3);
  EXPECT_TENSOR_NEAR(cond(scalar_tensor(true), doubled, noisy, {x})[0], x * 2.0, 0);
  EXPECT_TENSOR_EQ(randn_like(zeros({4})), expected);
  // Throws: the taken branch's result stands.
  const TensorListFn throws = [](const TensorList&) -> TensorList {
    ThrowError("a branch that must not run");
  };
  EXPECT_TENSOR_NEAR(cond(scalar_tensor(true), doubled, throws, {x})[0], x * 2.0, 0);
  EXPECT_EQ(LayerStack::size(), 0);
}

// The check on an empty batch composes: captured tensors batched by an outer vmap, a
// checkpoint that records (and replays) the check's ops, and jvp.
TEST(Cond, UntakenBranchChecksComposeWithTransforms) {
  const Tensor xs = Rand({4, 3}, 5), ys = Rand({4, 3}, 6);
  const TensorListFn doubled = [](const TensorList& a) { return TensorList{a[0] * 2.0}; };
  // vmap over (x, y): the untaken branch captures y, batched by the outer vmap.
  auto per_example = [&](const TensorList& a) {
    const Tensor y = a[1];
    return cond(scalar_tensor(true), doubled,
                TensorListFn([&y](const TensorList& b) { return TensorList{b[0] * y}; }),
                {a[0]});
  };
  EXPECT_TENSOR_NEAR(vmap(TensorListFn(per_example))({xs, ys})[0], xs * 2.0, 0);
  auto mismatched = [&](const TensorList& a) {
    const Tensor y = a[1];
    return cond(scalar_tensor(true), doubled,
                TensorListFn([&y](const TensorList& b) { return TensorList{sum(b[0] * y)}; }),
                {a[0]});
  };
  EXPECT_FT_ERROR(vmap(TensorListFn(mismatched))({xs, ys}),
                  "cond: output 0 of false_fn is float64 [], but true_fn's is float64 [3]");
  // grad through a checkpoint whose cond checks its untaken branch, against the same
  // function without the checkpoint; and jvp against the closed form.
  const Tensor w = tensor({0.5, -1.0, 2.0});
  auto loss = [&](const TensorList& a) {
    TensorList out = cond(gt(sum(a[0]), 0.0),
                          TensorListFn([&w](const TensorList& b) {
                            return TensorList{sin(b[0] * w)};
                          }),
                          TensorListFn([&w](const TensorList& b) {
                            return TensorList{exp(b[0]) * w};
                          }),
                          {a[0]});
    return out;
  };
  const TensorListFn checkpointed = checkpoint(TensorListFn(loss));
  for (const Tensor& x : {tensor({0.3, 0.2, 0.1}), tensor({-0.3, 0.2, -0.1})}) {
    auto scalar = [](const TensorListFn& f) {
      return ScalarFn([f](const TensorList& a) { return sum(f(a)[0]); });
    };
    EXPECT_TENSOR_NEAR(grad(scalar(checkpointed))({x})[0], grad(scalar(TensorListFn(loss)))({x})[0],
                       1e-15);
    const Tensor closed = sum(x).item<double>() > 0 ? cos(x * w) * w : exp(x) * w;
    EXPECT_TENSOR_NEAR(grad(scalar(checkpointed))({x})[0], closed, 1e-12);
    const Tensor t = tensor({1.0, -2.0, 0.5});
    EXPECT_TENSOR_NEAR(jvp(TensorListFn(loss), {x}, {t}).tangents[0], closed * t, 1e-12);
  }
  EXPECT_EQ(LayerStack::size(), 0);
}

TEST(Cond, WritingACapturedTensorInsideABranchIsAnErrorUnderTransforms) {
  Tensor captured = tensor({1.0, 2.0});
  auto f = [&captured](const TensorList& a) {
    return cond(gt(sum(a[0]), 0.0),
                [&captured](const TensorList& b) {
                  add_(captured, 1.0);
                  return TensorList{b[0] * captured};
                },
                [](const TensorList& b) { return TensorList{b[0]}; }, {a[0]});
  };
  EXPECT_FT_ERROR(functionalize(f)({tensor({1.0, 1.0})}),
                  "cond: true_fn wrote a tensor it did not make (in-place op 'add_' on float64 "
                  "[2])");
  EXPECT_FT_ERROR(vmap(TensorListFn(f))({tensor({1.0, 1.0, -1.0, -1.0}, {2, 2})}),
                  "branches and loop bodies must not modify tensors captured from outside");
  EXPECT_TENSOR_EQ(captured, tensor({1.0, 2.0}));  // refused before the write
  EXPECT_EQ(LayerStack::size(), 0);
}

TEST(Cond, FunctionalizeWritesInsideABranchOnItsOwnBuffers) {
  auto f = [](const TensorList& a) {
    return cond(gt(sum(a[0]), 0.0),
                [](const TensorList& b) {
                  Tensor y = clone(b[0]);
                  mul_(narrow(y, 0, 0, 1), 10.0);  // a write through a view of a local
                  return TensorList{y};
                },
                [](const TensorList& b) { return TensorList{b[0] * -1.0}; }, {a[0]});
  };
  const Tensor x = tensor({1.0, 2.0});
  EXPECT_TENSOR_NEAR(functionalize(f)({x})[0], tensor({10.0, 2.0}), 0);
  const Tensor xs = tensor({1.0, 2.0, -3.0, -4.0}, {2, 2});
  EXPECT_TENSOR_NEAR(vmap(functionalize(f))({xs})[0], tensor({10.0, 2.0, 3.0, 4.0}, {2, 2}), 0);
}

// ---- switch_case ----

std::vector<TensorListFn> ThreeBranches() {
  return {[](const TensorList& a) { return TensorList{sin(a[0])}; },
          [](const TensorList& a) { return TensorList{a[0] * 3.0}; },
          [](const TensorList& a) { return TensorList{log(a[0])}; }};
}

TEST(SwitchCase, ClampsTheIndexAndSelectsPerExample) {
  const Tensor x = tensor({0.5, 2.0});
  auto branches = ThreeBranches();
  EXPECT_TENSOR_NEAR(switch_case(scalar_tensor(int64_t{1}), branches, {x})[0], x * 3.0, 0);
  EXPECT_TENSOR_NEAR(switch_case(scalar_tensor(int64_t{-5}), branches, {x})[0], sin(x), 0);
  EXPECT_TENSOR_NEAR(switch_case(scalar_tensor(int64_t{7}), branches, {x})[0], log(x), 0);
  // Batched index (one per example, out of range too) against a loop; gradients too. The
  // branch log is NaN's source at negative inputs for the examples that do not take it.
  const Tensor xs = tensor({0.5, 2.0, -1.0, 3.0, -2.0, -0.5, 1.5, 0.25}, {4, 2});
  const Tensor idx = tensor(std::vector<int64_t>{0, 1, -3, 2});
  auto f = [&branches](const TensorList& a) {
    return sum(switch_case(a[1], branches, {a[0]})[0]);
  };
  Tensor values = vmap(TensorListFn([&](const TensorList& a) { return TensorList{f(a)}; }))(
      {xs, idx})[0];
  Tensor grads = vmap(grad(ScalarFn(f)))({xs, idx})[0];
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_TENSOR_NEAR(Row(values, i), f({Row(xs, i), Row(idx, i)}), 0);
    EXPECT_TENSOR_NEAR(Row(grads, i), grad(ScalarFn(f))({Row(xs, i), Row(idx, i)})[0], 1e-15);
  }
  EXPECT_EQ(sum(ne(grads, grads)).item<int64_t>(), 0);
  EXPECT_FT_ERROR(switch_case(scalar_tensor(true), branches, {x}),
                  "switch_case: index must be an integer tensor with one element, got bool []");
  EXPECT_FT_ERROR(switch_case(scalar_tensor(int64_t{0}), {}, {x}), "switch_case: no branches");
}

// ---- while_loop ----

// Doubles x (and counts steps) until sum(x) > limit.
TensorList Doubling(const TensorList& init, double limit) {
  return while_loop([limit](const TensorList& c) { return gt(sum(c[0]), limit); },
                    [](const TensorList& c) { return TensorList{c[0] * 2.0, c[1] + 1}; }, init);
}

TensorList DoublingUntil(const TensorList& init, double limit) {
  return while_loop([limit](const TensorList& c) { return le(sum(c[0]), limit); },
                    [](const TensorList& c) { return TensorList{c[0] * 2.0, c[1] + 1}; }, init);
}

TEST(WhileLoop, RunsItsTripCount) {
  const Tensor x = tensor({0.25, 0.5});  // sum 0.75 -> 1.5 -> 3 -> 6 -> 12
  TensorList r = DoublingUntil({x, scalar_tensor(int64_t{0})}, 10.0);
  EXPECT_TENSOR_NEAR(r[0], x * 16.0, 0);
  EXPECT_EQ(r[1].item<int64_t>(), 4);
  // Zero trips returns init.
  EXPECT_TENSOR_NEAR(Doubling({x, scalar_tensor(int64_t{0})}, 10.0)[0], x, 0);
}

TEST(WhileLoop, GradAndJvpThroughTheTripCount) {
  // x * 2^k(x): the gradient is 2^k (k constant near x), whatever k is.
  auto f = [](const TensorList& a) {
    return sum(DoublingUntil({a[0], scalar_tensor(int64_t{0})}, 10.0)[0] * a[0]);
  };
  const Tensor x = tensor({0.25, 0.5});
  EXPECT_TENSOR_NEAR(grad(ScalarFn(f))({x})[0], x * 32.0, 1e-15);  // d/dx 16 x^2
  EXPECT_TRUE(GradCheck(f, {x}));
  EXPECT_TRUE(JvpCheck(f, {x}));
  EXPECT_TRUE(GradGradCheck(f, {x}));
}

TEST(WhileLoop, PerExampleTripCountsUnderVmap) {
  // Trip counts 0, 1, 4 and 6.
  const Tensor xs = tensor({6.0, 6.0, 3.0, 3.0, 1.0, 0.25, 0.1, 0.1}, {4, 2});
  auto loop = [](const TensorList& a) {
    return DoublingUntil({a[0], scalar_tensor(int64_t{0})}, 10.0);
  };
  TensorList batched = vmap(TensorListFn(loop))({xs});
  EXPECT_TENSOR_EQ(batched[1], tensor(std::vector<int64_t>{0, 1, 4, 6}));
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_TENSOR_NEAR(Row(batched[0], i), loop({Row(xs, i)})[0], 0);
  }
  // Per-example gradients with different trip counts (JAX refuses reverse mode here), both
  // orders, against a loop; and jvp.
  auto loss = [&loop](const TensorList& a) { return sum(sin(loop(a)[0])); };
  Tensor g = vmap(grad(ScalarFn(loss)))({xs})[0];
  Tensor g2 = grad(ScalarFn([&](const TensorList& a) {
    return sum(vmap(TensorFn([&](const Tensor& x) { return loss({x}); }))(a[0]));
  }))({xs})[0];
  Tensor t = vmap(TensorListFn([&](const TensorList& a) {
    return jvp([&](const TensorList& b) { return TensorList{loss(b)}; }, {a[0]}, {a[1]}).tangents;
  }))({xs, ones_like(xs)})[0];
  for (int64_t i = 0; i < 4; ++i) {
    Tensor expected = grad(ScalarFn(loss))({Row(xs, i)})[0];
    EXPECT_TENSOR_NEAR(Row(g, i), expected, 1e-14);
    EXPECT_TENSOR_NEAR(Row(g2, i), expected, 1e-14);
    EXPECT_NEAR(Row(t, i).item<double>(), sum(expected).item<double>(), 1e-13);
  }
}

TEST(WhileLoop, FinishedExamplesGetNoNaNFromTheBody) {
  // The body takes log, which is NaN for the carries of finished examples (negative).
  auto loss = [](const TensorList& a) {
    TensorList r = while_loop([](const TensorList& c) { return gt(sum(c[0]), 0.0); },
                              [](const TensorList& c) { return TensorList{log(c[0]) - 1.0}; },
                              {a[0]});
    return sum(r[0]);
  };
  const Tensor xs = tensor({-1.0, 5.0, 20.0}, {3, 1});
  Tensor g = vmap(grad(ScalarFn(loss)))({xs})[0];
  EXPECT_EQ(sum(ne(g, g)).item<int64_t>(), 0);
  // -1 takes no trip; 5 and 20 take two: d/dx log(log(x) - 1) - 1 = 1 / (x (log x - 1)).
  EXPECT_TENSOR_NEAR(g, tensor({1.0, 1.0 / (5.0 * (std::log(5.0) - 1.0)),
                                1.0 / (20.0 * (std::log(20.0) - 1.0))}, {3, 1}), 1e-12);
}

TEST(WhileLoop, CapturedTensorsGetNoNaNFromFinishedExamples) {
  // The body reads a captured rate k; for finished examples it runs at h = 0, where
  // d/dk passes through 0 * inf. Masking the capture per example keeps k's gradient exact.
  auto loss = [](const TensorList& a) {
    const Tensor& k = a[0];
    TensorList r = while_loop(
        [](const TensorList& c) { return lt(c[0], 1.0); },
        [&k](const TensorList& c) {
          Tensor h = minimum(c[2], 1.0 - c[0]);
          Tensor err = abs(h * k * c[1]) + 1e-300;
          Tensor step = clamp(sqrt(1e-3 / err), 0.0, 0.5);  // d step / d err: 0 * inf at h = 0
          return TensorList{c[0] + h, c[1] - h * k * c[1], step};
        },
        {zeros({}, kFloat64), a[1], scalar_tensor(0.1, kFloat64)});
    return r[1];
  };
  const Tensor k = scalar_tensor(0.8, kFloat64);
  const Tensor y0s = tensor({1.0, 0.01, 3.0});
  Tensor g = vmap(grad(ScalarFn(loss)), std::vector<std::optional<int64_t>>{std::nullopt, 0})(
      {k, y0s})[0];
  for (int64_t i = 0; i < 3; ++i) {
    Tensor expected = grad(ScalarFn(loss))({k, Row(y0s, i)})[0];
    EXPECT_FALSE(std::isnan(Row(g, i).item<double>()));
    EXPECT_TENSOR_NEAR(Row(g, i), expected, 1e-12);
  }
  // The summed gradient with respect to the shared k, through grad(vmap): the same sum.
  Tensor total = grad(ScalarFn([&](const TensorList& a) {
    return sum(vmap(TensorListFn([&](const TensorList& b) { return TensorList{loss(b)}; }),
                    std::vector<std::optional<int64_t>>{std::nullopt, 0})({a[0], y0s})[0]);
  }))({k})[0];
  EXPECT_NEAR(total.item<double>(), sum(g).item<double>(), 1e-12);
}

TEST(WhileLoop, Errors) {
  const Tensor x = tensor({1.0});
  EXPECT_FT_ERROR(while_loop([](const TensorList& c) { return sum(c[0]); },
                             [](const TensorList& c) { return c; }, {x}),
                  "while_loop: cond_fn's result at iteration 0 must be a bool tensor");
  EXPECT_FT_ERROR(while_loop([](const TensorList& c) { return lt(sum(c[0]), 4.0); },
                             [](const TensorList& c) { return TensorList{cat({c[0], c[0]})}; },
                             {x}),
                  "while_loop: carry 0 of body_fn at iteration 0 is float64 [2], but init's is "
                  "float64 [1]");
  EXPECT_FT_ERROR(while_loop([](const TensorList& c) { return lt(sum(c[0]), 4.0); },
                             [](const TensorList& c) { return TensorList{c[0], c[0]}; }, {x}),
                  "while_loop: body_fn at iteration 0 returned 2 carrys, but init has 1");
}

// ---- fori_loop ----

TEST(ForiLoop, ClosedFormAndDerivatives) {
  // c_{i+1} = c_i * 0.5 + i, from c_0 = x over i in [2, 5): c = x/8 + 2/4 + 3/2 + 4.
  auto f = [](const TensorList& a) {
    return fori_loop(2, 5, [](const Tensor& i, const TensorList& c) {
      return TensorList{c[0] * 0.5 + i.to_vector<double>()[0] + sin(c[0]) * 0.0};
    }, {a[0]})[0];
  };
  const Tensor x = tensor({1.0, -3.0});
  EXPECT_TENSOR_NEAR(f({x}), x / 8.0 + 6.0, 1e-15);
  auto loss = [&f](const TensorList& a) { return sum(sin(f(a))); };
  EXPECT_TRUE(GradCheck(loss, {x}));
  EXPECT_TRUE(JvpCheck(loss, {x}));
  EXPECT_TENSOR_NEAR(fori_loop(3, 3, [](const Tensor&, const TensorList& c) {
    return TensorList{c[0] + 1.0};
  }, {x})[0], x, 0);
  // The index is an int64 scalar tensor, usable in ops (also under vmap).
  Tensor xs = Rand({3, 2}, 5);
  Tensor ys = vmap(TensorFn([](const Tensor& v) {
    return fori_loop(0, 3, [](const Tensor& i, const TensorList& c) {
      return TensorList{c[0] + to(i, kFloat64)};
    }, {v})[0];
  }))(xs);
  EXPECT_TENSOR_NEAR(ys, xs + 3.0, 1e-15);
}

// ---- scan ----

// One tanh RNN step: h' = tanh(h W + x U + b), y = h' . v.
struct Rnn {
  Tensor w = Rand({4, 4}, 10, -0.5, 0.5), u = Rand({3, 4}, 11), b = Rand({4}, 12);
  Tensor v = Rand({4}, 13);
  std::pair<TensorList, TensorList> Step(const Tensor& h, const Tensor& x) const {
    Tensor next = tanh(matmul(h, w) + matmul(x, u) + b);
    return {{next}, {sum(next * v)}};
  }
  // Unrolled in plain ops: the oracle.
  Tensor UnrolledLoss(const Tensor& h0, const Tensor& xs) const {
    Tensor h = h0, loss = zeros({}, kFloat64);
    for (int64_t t = 0; t < xs.size(0); ++t) {
      auto [c, y] = Step(h, select(xs, 0, t));
      h = c[0];
      loss = loss + y[0] * static_cast<double>(t + 1);
    }
    return loss + sum(h);
  }
  Tensor ScanLoss(const Tensor& h0, const Tensor& xs, ScanOptions options = {}) const {
    ScanResult r = scan([this](const TensorList& c, const TensorList& x) {
      return Step(c[0], x[0]);
    }, {h0}, {xs}, options);
    return sum(r.ys[0] * arange(1, xs.size(0) + 1, 1, kFloat64)) + sum(r.carry[0]);
  }
};

TEST(Scan, CumulativeSumAndReverse) {
  const Tensor xs = tensor({1.0, 2.0, 3.0, 4.0});
  auto add = [](const TensorList& c, const TensorList& x) {
    Tensor s = c[0] + x[0];
    return std::pair(TensorList{s}, TensorList{s});
  };
  ScanResult r = scan(add, {zeros({}, kFloat64)}, {xs});
  EXPECT_TENSOR_NEAR(r.ys[0], tensor({1.0, 3.0, 6.0, 10.0}), 0);
  EXPECT_TENSOR_NEAR(r.carry[0], scalar_tensor(10.0, kFloat64), 0);
  ScanResult rev = scan(add, {zeros({}, kFloat64)}, {xs}, {.reverse = true});
  EXPECT_TENSOR_NEAR(rev.ys[0], tensor({10.0, 9.0, 7.0, 4.0}), 0);
  // No steps: the ys are empty with the step's shape; no xs: options.length steps.
  ScanResult none = scan(add, {zeros({}, kFloat64)}, {zeros({0}, kFloat64)});
  EXPECT_EQ(none.ys[0].sizes(), IntArrayRef({0}));
  ScanResult counted = scan([](const TensorList& c, const TensorList&) {
    return std::pair(TensorList{c[0] * 2.0}, TensorList{c[0]});
  }, {scalar_tensor(1.0, kFloat64)}, {}, {.length = 3});
  EXPECT_TENSOR_NEAR(counted.ys[0], tensor({1.0, 2.0, 4.0}), 0);
}

TEST(Scan, RnnMatchesTheUnrolledModelInValuesGradientsAndTangents) {
  Rnn rnn;
  const Tensor h0 = Rand({4}, 20), xs = Rand({6, 3}, 21);
  EXPECT_NEAR(rnn.ScanLoss(h0, xs).item<double>(), rnn.UnrolledLoss(h0, xs).item<double>(),
              1e-13);
  auto scan_loss = [&rnn](const TensorList& a) { return rnn.ScanLoss(a[0], a[1]); };
  auto ckpt_loss = [&rnn](const TensorList& a) {
    return rnn.ScanLoss(a[0], a[1], {.checkpoint = true});
  };
  auto unrolled = [&rnn](const TensorList& a) { return rnn.UnrolledLoss(a[0], a[1]); };
  TensorList g = grad(ScalarFn(scan_loss), {0, 1})({h0, xs});
  TensorList gu = grad(ScalarFn(unrolled), {0, 1})({h0, xs});
  TensorList gc = grad(ScalarFn(ckpt_loss), {0, 1})({h0, xs});
  for (int k = 0; k < 2; ++k) {
    EXPECT_TENSOR_NEAR(g[k], gu[k], 1e-13);
    EXPECT_TENSOR_NEAR(gc[k], gu[k], 1e-13);
  }
  EXPECT_TRUE(JvpCheck(scan_loss, {h0, xs}));
  EXPECT_TRUE(GradGradCheck(ckpt_loss, {h0, xs}, 1e-5, {0}));
  // Reverse scan against the unrolled model over the flipped sequence.
  auto rev = [&rnn](const TensorList& a) {
    ScanResult r = scan([&rnn](const TensorList& c, const TensorList& x) {
      return rnn.Step(c[0], x[0]);
    }, {a[0]}, {a[1]}, {.reverse = true});
    return sum(flip(r.ys[0], {0}) * arange(1, 7, 1, kFloat64)) + sum(r.carry[0]);
  };
  EXPECT_NEAR(rev({h0, xs}).item<double>(), rnn.UnrolledLoss(h0, flip(xs, {0})).item<double>(),
              1e-13);
}

TEST(Scan, PerSampleGradientsUnderVmap) {
  Rnn rnn;
  const Tensor h0 = Rand({4}, 30), xs = Rand({5, 6, 3}, 31);  // 5 sequences of 6 steps
  for (bool ckpt : {false, true}) {
    SCOPED_TRACE(ckpt ? "checkpointed steps" : "plain steps");
    auto loss = [&rnn, ckpt](const TensorList& a) {
      return rnn.ScanLoss(a[0], a[1], {.checkpoint = ckpt});
    };
    Tensor g = vmap(grad(ScalarFn(loss)), std::vector<std::optional<int64_t>>{std::nullopt, 0})(
        {h0, xs})[0];
    for (int64_t i = 0; i < 5; ++i) {
      Tensor expected = grad(ScalarFn([&rnn](const TensorList& a) {
        return rnn.UnrolledLoss(a[0], a[1]);
      }))({h0, Row(xs, i)})[0];
      EXPECT_TENSOR_NEAR(Row(g, i), expected, 1e-13);
    }
  }
}

TEST(Scan, JitTracesTheStepsAndReplays) {
  Rnn rnn;
  JitFunction f = jit([&rnn](const TensorList& a) {
    return grad(ScalarFn([&rnn](const TensorList& b) { return rnn.ScanLoss(b[0], b[1]); }),
                {0, 1})(a);
  });
  const Tensor h0 = Rand({4}, 40), xs = Rand({6, 3}, 41), xs2 = Rand({6, 3}, 42);
  TensorList first = f({h0, xs});
  TensorList second = f({h0, xs2});
  EXPECT_EQ(f.stats().replays, 1);
  TensorList expected = grad(ScalarFn([&rnn](const TensorList& b) {
    return rnn.UnrolledLoss(b[0], b[1]);
  }), {0, 1})({h0, xs2});
  EXPECT_TENSOR_NEAR(second[0], expected[0], 1e-13);
  EXPECT_TENSOR_NEAR(second[1], expected[1], 1e-13);
}

TEST(Scan, AHugeLengthCostsNothingBeforeItsSteps) {
  // Found by control_flow_fuzzer: scan allocated a slot per step up front, so a huge length
  // with no xs ran out of memory before the first step. Steps now run as they come; this
  // one stops the scan at its fourth step.
  int steps = 0;
  EXPECT_FT_ERROR(scan([&steps](const TensorList& c, const TensorList&) {
                    if (++steps == 4) ThrowError("stop: step ", steps);
                    return std::pair(TensorList{c[0] + 1.0}, TensorList{c[0]});
                  }, {zeros({}, kFloat64)}, {}, {.length = INT64_MAX}),
                  "stop: step 4");
}

TEST(ControlFlow, ArgumentErrorsNameTheOp) {
  const Tensor x = tensor({1.0, 2.0});
  const TensorListFn id = [](const TensorList& a) { return a; };
  EXPECT_FT_ERROR(cond(scalar_tensor(true), id, TensorListFn(), {x}),
                  "cond: true_fn and false_fn must be callable");
  EXPECT_FT_ERROR(switch_case(scalar_tensor(int64_t{0}), {id, TensorListFn()}, {x}),
                  "switch_case: branch 1 is not callable");
  EXPECT_FT_ERROR(while_loop(CondFn(), id, {x}),
                  "while_loop: cond_fn and body_fn must be callable");
  EXPECT_FT_ERROR(fori_loop(0, 1, ForiBodyFn(), {x}), "fori_loop: body must be callable");
  EXPECT_FT_ERROR(scan(ScanFn(), {x}, {x}), "scan: f must be callable");
  EXPECT_FT_ERROR(cond(scalar_tensor(true),
                       [](const TensorList&) { return TensorList{Tensor()}; }, id, {x}),
                  "cond: true_fn returned an undefined tensor as output 0");
}

TEST(Scan, Errors) {
  auto id = [](const TensorList& c, const TensorList& x) {
    return std::pair(TensorList{c[0]}, TensorList{x[0]});
  };
  const Tensor c = zeros({}, kFloat64);
  EXPECT_FT_ERROR(scan(id, {c}, {zeros({3}), zeros({4})}),
                  "scan: xs[1] has 4 steps along dim 0 but xs[0] has 3");
  EXPECT_FT_ERROR(scan(id, {c}, {}), "scan: no xs and no options.length");
  EXPECT_FT_ERROR(scan(id, {c}, {zeros({3})}, {.length = 4}),
                  "scan: options.length is 4 but xs have 3 steps along dim 0");
  EXPECT_FT_ERROR(scan(id, {c}, {}, {.length = -1}), "scan: length must be >= 0, got -1");
  EXPECT_FT_ERROR(scan([](const TensorList& carry, const TensorList&) {
    return std::pair(TensorList{carry[0], carry[0]}, TensorList{});
  }, {c}, {}, {.length = 1}), "scan: f returned 2 carries, but init has 1");
  EXPECT_FT_ERROR(scan(id, {c}, {scalar_tensor(1.0)}), "scan: xs[0] is float32 []");
  EXPECT_FT_ERROR(scan([](const TensorList& carry, const TensorList& x) {
    return std::pair(TensorList{to(carry[0] + x[0], kFloat32)}, TensorList{});
  }, {c}, {zeros({2}, kFloat64)}), "scan: carry 0 of f at step 0 is float32 [], but init's is "
                                   "float64 []");
}

// ---- Random programs: nests of cond and while_loop over a catalog of functions ----

// A random program: cond(sum(x * a) > t, while-branch, plain branch) where the while branch
// loops body(x) (capped by a counter) while sum(x) stays above a bound, every function from
// the catalog, and a weight w captured throughout. Per-example gradients by vmap(grad)
// (both branch masking and capture masking at work) must equal a loop of single gradients,
// where every branch is a real branch; forward mode must agree with reverse mode.
TEST(RandomPrograms, VmapOfGradAndJvpMatchTheLoopOverExamples) {
  const std::vector<std::function<Tensor(const Tensor&)>> catalog = {
      [](const Tensor& x) { return sin(x); },
      [](const Tensor& x) { return sqrt(abs(x) + 1e-3); },
      [](const Tensor& x) { return log(abs(x) + 0.1); },
      [](const Tensor& x) { return x * x; },
      [](const Tensor& x) { return exp(x * 0.5); },
      [](const Tensor& x) { return tanh(x * 3.0); },
      [](const Tensor& x) { return reciprocal(x); },  // infinite derivative near 0
      [](const Tensor& x) { return sqrt(relu(x)); },  // infinite derivative wherever x <= 0
      [](const Tensor& x) { return sqrt(x); },        // NaN below 0: only where not taken
      [](const Tensor& x) { return log(x); },
  };
  int checked = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Generator gen(seed);
    auto pick = [&gen](int64_t n) {
      return static_cast<size_t>(Generator::Uniform(gen.seed(), gen.Reserve(1)) * n);
    };
    const int64_t batch = 1 + static_cast<int64_t>(pick(5));
    const int64_t dim = 1 + static_cast<int64_t>(pick(4));
    const auto& body = catalog[pick(catalog.size())];
    const auto& other = catalog[pick(catalog.size())];
    const auto& after = catalog[pick(catalog.size())];
    const int64_t cap = 1 + static_cast<int64_t>(pick(4));
    const double threshold = Generator::Uniform(seed, 99) - 0.5;
    const Tensor a = Rand({dim}, seed * 7 + 1);
    const Tensor w = Rand({dim}, seed * 7 + 2);
    const Tensor xs = Rand({batch, dim}, seed * 7 + 3, -1.5, 1.5);
    auto f = [&](const TensorList& args) {
      const Tensor& x = args[0];
      TensorList r = cond(
          gt(sum(x * a), threshold),
          [&](const TensorList& b) {
            TensorList l = while_loop(
                [&](const TensorList& c) {
                  return logical_and(lt(c[1], cap), gt(sum(abs(c[0])), 0.2));
                },
                [&](const TensorList& c) {
                  // The captured w inside the function: an example that finished still
                  // runs the body, and its d/dw there may be 0 * inf.
                  return TensorList{body(c[0] * w) * 0.9, c[1] + 1};
                },
                {b[0], zeros({}, kInt64)});
            return TensorList{after(l[0])};
          },
          [&](const TensorList& b) { return TensorList{other(b[0] * w)}; }, {x});
      return sum(r[0] * w);
    };
    const Tensor vs = Rand({batch, dim}, seed * 7 + 4);
    Tensor per_example, tangents;
    try {
      per_example = vmap(grad(ScalarFn(f)))({xs})[0];
      tangents = vmap(TensorListFn([&](const TensorList& b) {
        return jvp([&](const TensorList& c) { return TensorList{f(c)}; }, {b[0]}, {b[1]})
            .tangents;
      }))({xs, vs})[0];
    } catch (const Error& e) {
      FAIL() << e.what();
    }
    for (int64_t i = 0; i < batch; ++i) {
      const Tensor x = Row(xs, i);
      const Tensor expected = grad(ScalarFn(f))({x})[0];
      // Where the true derivative is finite, exactly the loop's (never NaN from a branch or
      // iteration the example did not take).
      if (std::isfinite(sum(expected).item<double>())) {
        EXPECT_TENSOR_NEAR(Row(per_example, i), expected, 1e-12);
        // jvp along a random direction equals <grad, v> (where forward mode is finite:
        // sqrt(relu(x)) at x <= 0 has tangent 0/0 while reverse mode selects 0 there).
        const Tensor v = Row(vs, i);
        const Tensor t = jvp([&](const TensorList& b) { return TensorList{f(b)}; }, {x}, {v})
                             .tangents[0];
        if (std::isfinite(t.item<double>())) {
          EXPECT_NEAR(t.item<double>(), sum(expected * v).item<double>(),
                      1e-10 * (1 + std::abs(t.item<double>())));
        }
        // Batched forward mode equals the example's own, NaN for NaN.
        EXPECT_TENSOR_NEAR(Row(tangents, i), t, 1e-12);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 60);
}

// ---- jit: the predicate is evaluated at replay time (NOTE: [Control flow in traces]) ----

TEST(JitControlFlow, CondReplaysTheBranchTheNewInputsChoose) {
  const Tensor w = tensor({2.0, 3.0});
  JitFunction f = jit([&w](const TensorList& a) {
    Tensor scaled = a[0] * w;  // a step of the trace that both branches read
    TensorList r = cond(gt(sum(a[0]), 0.0),
                        [&scaled](const TensorList& b) { return TensorList{sin(b[0]) + scaled}; },
                        [&scaled](const TensorList& b) { return TensorList{cos(b[0]) - scaled}; },
                        {a[0]});
    return TensorList{r[0] * 2.0};
  });
  const Tensor pos = tensor({0.5, 0.25}), neg = tensor({-0.5, 0.25}), pos2 = tensor({1.0, 2.0});
  EXPECT_TENSOR_NEAR(f({pos})[0], (sin(pos) + pos * w) * 2.0, 1e-15);
  ASSERT_NE(f.program({pos}), nullptr) << f.untraceable_reason({pos});
  EXPECT_NE(f.program({pos})->DebugString().find("switch("), std::string::npos);
  EXPECT_TENSOR_NEAR(f({neg})[0], (cos(neg) - neg * w) * 2.0, 1e-15);
  EXPECT_TENSOR_NEAR(f({pos2})[0], (sin(pos2) + pos2 * w) * 2.0, 1e-15);
  EXPECT_EQ(f.stats().replays, 2);
}

TEST(JitControlFlow, SwitchCaseReplaysEveryIndex) {
  auto branches = ThreeBranches();
  JitFunction f = jit([&branches](const TensorList& a) {
    return switch_case(a[1], branches, {a[0]});
  });
  const Tensor x = tensor({0.5, 2.0});
  for (int64_t k : {1, 0, 2, -4, 9}) {
    const Tensor expected = branches[std::clamp<int64_t>(k, 0, 2)]({x})[0];
    EXPECT_TENSOR_NEAR(f({x, scalar_tensor(k, kInt64)})[0], expected, 1e-15) << k;
  }
  EXPECT_EQ(f.stats().traces, 1);
  EXPECT_EQ(f.stats().replays, 4);
}

TEST(JitControlFlow, WhileLoopReplaysItsRealTripCount) {
  JitFunction f = jit([](const TensorList& a) {
    return DoublingUntil({a[0], zeros({}, kInt64)}, 10.0);
  });
  for (const std::vector<double>& start : {std::vector<double>{1.0, 0.5},  // traced: 3 trips
                                           {6.0, 6.0},                       // none
                                           {0.01, 0.02},                     // 9
                                           {3.0, 3.0}}) {                    // 1
    const Tensor x = tensor(start);
    TensorList expected = DoublingUntil({x, zeros({}, kInt64)}, 10.0);
    TensorList got = f({x});
    EXPECT_TENSOR_NEAR(got[0], expected[0], 0);
    EXPECT_TENSOR_EQ(got[1], expected[1]);
  }
  EXPECT_EQ(f.stats().replays, 3);
  // Traced where the loop does not run: the body is traced on init all the same.
  JitFunction g = jit([](const TensorList& a) {
    return DoublingUntil({a[0], zeros({}, kInt64)}, 10.0);
  });
  EXPECT_TENSOR_EQ(g({tensor({6.0, 6.0})})[1], scalar_tensor(int64_t{0}, kInt64));
  EXPECT_TENSOR_EQ(g({tensor({1.0, 1.0})})[1], scalar_tensor(int64_t{3}, kInt64));
  EXPECT_EQ(g.stats().replays, 1);
}

TEST(JitControlFlow, NestedControlFlowAndCapturedTensorsInsideTheBody) {
  const Tensor w = tensor({0.5, -1.0});
  // A loop whose body branches; the body reads a weight and a tensor computed in f.
  JitFunction f = jit([&w](const TensorList& a) {
    const Tensor offset = a[0] * 0.0 + 1.0;
    return while_loop([](const TensorList& c) { return lt(c[1], 5); },
                      [&](const TensorList& c) {
                        TensorList next = cond(gt(sum(c[0]), 0.0),
                                               [&](const TensorList& b) {
                                                 return TensorList{b[0] * w};
                                               },
                                               [&](const TensorList& b) {
                                                 return TensorList{b[0] + offset};
                                               },
                                               {c[0]});
                        return TensorList{next[0], c[1] + 1};
                      },
                      {a[0], zeros({}, kInt64)});
  });
  auto eager = [&w](const Tensor& x) {
    Tensor c = x;
    for (int i = 0; i < 5; ++i) c = sum(c).item<double>() > 0 ? c * w : c + 1.0;
    return c;
  };
  for (const Tensor& x : {tensor({1.0, 0.5}), tensor({-3.0, 0.5}), tensor({0.25, -2.0})}) {
    EXPECT_TENSOR_NEAR(f({x})[0], eager(x), 1e-15);
  }
  EXPECT_EQ(f.stats().replays, 2);
}

TEST(JitControlFlow, WhatStaysUntraceableRunsEagerlyAndRight) {
  // An untaken branch that throws on the trace's inputs.
  JitFunction throwing = jit([](const TensorList& a) {
    return cond(ge(sum(a[0]), 0.0), [](const TensorList& b) { return TensorList{b[0] * 2.0}; },
                [](const TensorList& b) { return TensorList{cat({b[0], reshape(b[0], {3})})}; },
                {a[0]});
  });
  const Tensor x = tensor({1.0, 2.0});
  EXPECT_TENSOR_NEAR(throwing({x})[0], x * 2.0, 0);
  EXPECT_NE(throwing.untraceable_reason({x}).find("not taken at trace time, threw"),
            std::string::npos)
      << throwing.untraceable_reason({x});
  // Branches whose results have different layouts.
  JitFunction layouts = jit([](const TensorList& a) {
    return cond(ge(sum(a[0]), 0.0), [](const TensorList& b) { return TensorList{b[0] * 2.0}; },
                [](const TensorList& b) { return TensorList{transpose(b[0] * 3.0, 0, 1)}; },
                {a[0]});
  });
  const Tensor m = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  EXPECT_TENSOR_NEAR(layouts({m})[0], m * 2.0, 0);
  EXPECT_NE(layouts.untraceable_reason({m}).find("different layouts"), std::string::npos);
}

// NOTE: [Guards]: under a transform the predicate is read, and the trace keeps the read as a
// guard: one program per path, each replayed when its guards hold.
TEST(JitControlFlow, GuardsReplayEachBranchOfACondUnderGrad) {
  JitFunction g = jit([](const TensorList& a) { return grad(ScalarFn(BranchyLoss))(a); });
  const Tensor p1 = tensor({0.9, 0.4, 0.3}), n1 = tensor({0.2, -0.4, 0.1});
  const Tensor p2 = tensor({0.5, 0.5, 0.5}), n2 = tensor({0.1, 0.1, -0.3});
  for (const Tensor& v : {p1, n1, p2, n2, p1}) {
    EXPECT_TENSOR_NEAR(g({v})[0], grad(ScalarFn(BranchyLoss))({v})[0], 1e-15);
  }
  EXPECT_EQ(g.stats().traces, 2);
  EXPECT_EQ(g.stats().replays, 3);
  EXPECT_EQ(g.num_paths({p1}), 2);
  const auto program = g.program({p1});
  ASSERT_NE(program, nullptr);
  EXPECT_NE(program->DebugString().find("guard("), std::string::npos);
  EXPECT_EQ(program->num_guards(), 1);
  // Run (not through ft::jit) on the other path: an ft::Error, not another branch's result.
  EXPECT_FT_ERROR(program->Run({n1}), "a guard of the program does not hold");
}

// In-place writes into buffers f makes (a running sum, a scratch copy) and into tensors
// after the last guard (an optimizer step) keep a guarded function traceable.
TEST(JitControlFlow, GuardedFunctionsMayWriteTheirOwnBuffersAndAfterTheirGuards) {
  Tensor weights = tensor({0.5, -0.25, 1.0});
  auto step = [&weights](const TensorList& a) {
    Tensor scratch = a[0] * 1.0;
    mul_(scratch, weights);  // f's own buffer, written before the guards
    Tensor g = grad(ScalarFn(BranchyLoss))({scratch})[0];
    sub_(weights, g * 0.1);  // a captured tensor, written after the last guard
    return TensorList{g};
  };
  auto expected = [](const Tensor& x, Tensor& w) {
    const Tensor g = grad(ScalarFn(BranchyLoss))({x * w})[0];
    w = w - g * 0.1;
    return g;
  };
  JitFunction j = jit(step);
  Tensor w_ref = clone(weights);
  // sum(x * weights) > 1 takes sqrt, else the square (BranchyLoss).
  const Tensor p1 = tensor({3.0, -1.0, 1.0}), n1 = tensor({0.2, -0.4, 0.1});
  for (const Tensor& v : {p1, n1, p1 * 2.0, n1 * 2.0, p1}) {
    EXPECT_TENSOR_NEAR(j({v})[0], expected(v, w_ref), 1e-15);
    EXPECT_TENSOR_NEAR(weights, w_ref, 1e-15);
  }
  EXPECT_EQ(j.num_paths({p1}), 2) << j.untraceable_reason({p1});
  EXPECT_EQ(j.stats().replays, 3);
}

TEST(JitControlFlow, GuardsOnTripCountsUnderGradAndVmap) {
  // grad of an unbatched while_loop: one path per trip count.
  auto loss = [](const TensorList& a) {
    return sum(DoublingUntil({a[0], zeros({}, kInt64)}, 10.0)[0] * a[0]);
  };
  JitFunction g = jit([&loss](const TensorList& a) { return grad(ScalarFn(loss))(a); });
  for (const Tensor& v : {tensor({0.25, 0.5}), tensor({0.5, 0.25}), tensor({3.0, 3.0}),
                          tensor({0.2, 0.6})}) {
    EXPECT_TENSOR_NEAR(g({v})[0], grad(ScalarFn(loss))({v})[0], 1e-15);
  }
  EXPECT_EQ(g.stats().traces, 2);  // 4 trips (three times) and 1 trip
  // vmap of a while_loop with a batched predicate: the guards are "some example still runs",
  // so a batch with the same longest trip count replays.
  JitFunction v = jit(vmap(TensorListFn([](const TensorList& a) {
    return DoublingUntil({a[0], zeros({}, kInt64)}, 10.0);
  })));
  const Tensor b1 = tensor({6.0, 6.0, 3.0, 3.0, 0.1, 0.1}, {3, 2});   // 0, 1 and 6 trips
  const Tensor b2 = tensor({0.1, 0.1, 1.0, 1.0, 0.2, 0.1}, {3, 2});   // 6, 3 and 6
  const Tensor b3 = tensor({1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, {3, 2});   // 3 each
  for (const Tensor& b : {b1, b2, b3, b1}) {
    TensorList got = v({b});
    for (int64_t i = 0; i < 3; ++i) {
      TensorList one = DoublingUntil({Row(b, i), zeros({}, kInt64)}, 10.0);
      EXPECT_TENSOR_NEAR(Row(got[0], i), one[0], 0);
      EXPECT_TENSOR_EQ(Row(got[1], i), one[1]);
    }
  }
  EXPECT_EQ(v.stats().traces, 2);
  EXPECT_EQ(v.stats().replays, 2);
}


}  // namespace
}  // namespace ft

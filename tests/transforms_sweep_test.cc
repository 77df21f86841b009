// The transforms sweep: one table entry per differentiable built-in op (every op of
// docs/coverage.md whose vjp column is `yes`, in-place ops included), each checked through
// the compositions of the transforms against independent references:
//   1. vmap(grad(s)) == a loop of grad per example (stacked), with the batch dim at dim 0
//      and at the last dim of the first argument (the other arguments shared); also with
//      only the last argument batched (in-place entries must then throw vmap's error);
//   2. vmap(jvp) == a loop of jvp (every tangent batched), batch dim first and last;
//   3. grad(vmap(f)) == the stacked per-example grads (the examples are independent), and
//      the batch sum of them for the shared arguments; batch dim first and last;
//   4. jacfwd == jacrev on one example;
//   5. jit: vmap(grad(s)) and jacrev traced on one set of arguments and replayed on another
//      match the loop of grad and the eager jacrev on that other set (the replay runs only
//      the recorded kernels, so this checks the tracer's folding, views and merging per op).
// where s(args) = sum(f(args) * w) for a fixed pseudo-random w. Before those, each entry's
// gradient is checked against float64 central differences (gradcheck), which proves the
// entry's inputs sit in a smooth region (away from kinks and ties).
// A completeness test fails when a built-in differentiable op has no entry, so a new op
// needs a sweep entry.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/formulas.h"
#include "dispatch/operator.h"
#include "gtest/gtest.h"
#include "interpreters/functionalize/functionalize.h"
#include "interpreters/grad/grad.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "interpreters/jit/jit.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/derivative_checks.h"
#include "tests/sweep_cases.h"
#include "tests/test_util.h"
#include "tests/vmap_oracle.h"

namespace ft {
namespace {

using testing::Rand;

constexpr int64_t kBatch = 3;
constexpr double kTol = 1e-10;

using sweep::ArgSpec;
using sweep::kGradOfVmap;
using sweep::kJacfwdVsJacrev;
using sweep::kVmapOfGrad;
using sweep::kVmapOfJvp;
using sweep::OpCase;

using Fn = std::function<Tensor(const TensorList&)>;

// Fixed non-differentiable arguments (indices, masks) captured by the entries.
const Tensor& Index1() {  // index_select along a dim of size 4
  static const Tensor t = tensor(std::vector<int64_t>{2, 0, 3});
  return t;
}
const Tensor& GatherIndex() {  // [3, 2] into dim 1 of a [3, 4] tensor; repeats accumulate
  static const Tensor t = tensor(std::vector<int64_t>{3, 0, 1, 1, 2, 0}, {3, 2});
  return t;
}
const Tensor& TakeIndex() {  // [2, 4] into dim 0 of a [3, 4] tensor
  static const Tensor t = tensor(std::vector<int64_t>{2, 0, 1, 1, 0, 2, 2, 0}, {2, 4});
  return t;
}
const Tensor& Mask() {
  static const Tensor t = tensor(std::vector<bool>{true, false, false, true, true, true, false,
                                                   false, false, true, false, true},
                                 {3, 4});
  return t;
}

// Shifted: a + s I for a batch of square matrices a.
Tensor Shifted(const Tensor& a, double s) { return a + eye(a.size(-1), kFloat64) * s; }

// The table: one entry per differentiable built-in op. Each example argument has at most 12
// elements, so the Jacobians of check 4 stay small.
const std::vector<OpCase>& Table() {
  static std::vector<OpCase>* table = new std::vector<OpCase>{
      // ---- Unary. ----
      {"neg", [](const TensorList& a) { return neg(a[0]); }, {{{3, 4}}}},
      {"abs", [](const TensorList& a) { return abs(a[0]); }, {{{3, 4}}}},
      {"sign", [](const TensorList& a) { return sign(a[0]); }, {{{3, 4}}}},
      {"exp", [](const TensorList& a) { return exp(a[0]); }, {{{3, 4}}}},
      {"expm1", [](const TensorList& a) { return expm1(a[0]); }, {{{3, 4}}}},
      {"log", [](const TensorList& a) { return log(a[0]); }, {{{3, 4}, 0.5, 2.0}}},
      {"log1p", [](const TensorList& a) { return log1p(a[0]); }, {{{3, 4}, 0.0, 1.0}}},
      {"sin", [](const TensorList& a) { return sin(a[0]); }, {{{3, 4}}}},
      {"cos", [](const TensorList& a) { return cos(a[0]); }, {{{3, 4}}}},
      {"tan", [](const TensorList& a) { return tan(a[0]); }, {{{3, 4}}}},
      {"tanh", [](const TensorList& a) { return tanh(a[0]); }, {{{3, 4}}}},
      {"sigmoid", [](const TensorList& a) { return sigmoid(a[0]); }, {{{3, 4}}}},
      {"relu", [](const TensorList& a) { return relu(a[0]); }, {{{3, 4}}}},
      {"sqrt", [](const TensorList& a) { return sqrt(a[0]); }, {{{3, 4}, 0.5, 2.0}}},
      {"rsqrt", [](const TensorList& a) { return rsqrt(a[0]); }, {{{3, 4}, 0.5, 2.0}}},
      {"square", [](const TensorList& a) { return square(a[0]); }, {{{3, 4}}}},
      {"reciprocal", [](const TensorList& a) { return reciprocal(a[0]); }, {{{3, 4}, 0.5, 2.0}}},
      {"floor", [](const TensorList& a) { return floor(a[0]); }, {{{3, 4}, -2.0, 2.0}}},
      {"round", [](const TensorList& a) { return round(a[0]); }, {{{3, 4}, -2.0, 2.0}}},
      {"exp_",
       [](const TensorList& a) {
         Tensor y = a[0] * 1.0;
         exp_(y);
         return y;
       },
       {{{3, 4}}}},
      // ---- Binary (some broadcasting, so the vjp reduces to the input's shape). ----
      {"add", [](const TensorList& a) { return add(a[0], a[1]); }, {{{3, 4}}, {{4}}}},
      {"sub", [](const TensorList& a) { return sub(a[0], a[1]); }, {{{3, 4}}, {{3, 1}}}},
      {"mul", [](const TensorList& a) { return mul(a[0], a[1]); }, {{{3, 4}}, {{4}}}},
      {"div", [](const TensorList& a) { return div(a[0], a[1]); },
       {{{3, 4}}, {{3, 4}, 0.5, 2.0}}},
      {"pow", [](const TensorList& a) { return pow(a[0], a[1]); },
       {{{3, 4}, 0.5, 2.0}, {{3, 4}}}},
      {"maximum", [](const TensorList& a) { return maximum(a[0], a[1]); },
       {{{3, 4}}, {{3, 4}}}},
      {"minimum", [](const TensorList& a) { return minimum(a[0], a[1]); },
       {{{3, 4}}, {{4}}}},
      {"atan2", [](const TensorList& a) { return atan2(a[0], a[1]); },
       {{{3, 4}}, {{3, 4}, 0.5, 2.0}}},
      {"where", [](const TensorList& a) { return where(Mask(), a[0], a[1]); },
       {{{3, 4}}, {{4}}}},
      {"clamp", [](const TensorList& a) { return clamp(a[0], -0.5, 0.5); }, {{{3, 4}}}},
      // ---- In place: the entry writes a fresh copy of its input. ----
      {"add_",
       [](const TensorList& a) {
         Tensor y = a[0] * 1.0;
         add_(y, a[1]);
         return y;
       },
       {{{3, 4}}, {{4}}}},
      {"sub_",
       [](const TensorList& a) {
         Tensor y = a[0] * 1.0;
         sub_(y, a[1]);
         return y;
       },
       {{{3, 4}}, {{3, 4}}}},
      {"mul_",
       [](const TensorList& a) {
         Tensor y = a[0] * 1.0;
         mul_(y, a[1]);
         return y;
       },
       {{{3, 4}}, {{4}}}},
      {"div_",
       [](const TensorList& a) {
         Tensor y = a[0] * 1.0;
         div_(y, a[1]);
         return y;
       },
       {{{3, 4}}, {{3, 4}, 0.5, 2.0}}},
      {"clamp_",
       [](const TensorList& a) {
         Tensor y = a[0] * 1.0;
         clamp_(y, -0.5, 0.5);
         return y;
       },
       {{{3, 4}}}},
      {"copy_",
       [](const TensorList& a) {
         Tensor y = a[0] * 1.0;
         copy_(y, a[1]);
         return y * a[0];
       },
       {{{3, 4}}, {{4}}}},
      {"fill_",
       [](const TensorList& a) {
         Tensor y = a[0] * 1.0;
         fill_(y, 2.5);
         return y * a[0];
       },
       {{{3, 4}}}},
      {"zero_",
       [](const TensorList& a) {
         Tensor y = square(a[0]);
         zero_(y);
         return y + sin(a[0]);
       },
       {{{3, 4}}}},
      // ---- Reductions and dim-wise ops. ----
      {"sum", [](const TensorList& a) { return sum(a[0], {1}); }, {{{3, 4}}}},
      {"mean", [](const TensorList& a) { return mean(a[0], {0}, true); }, {{{3, 4}}}},
      {"prod", [](const TensorList& a) { return prod(a[0], {1}); }, {{{3, 4}, 0.5, 1.5}}},
      {"amax", [](const TensorList& a) { return amax(a[0], {1}); }, {{{3, 4}}}},
      {"amin", [](const TensorList& a) { return amin(a[0], {0}, true); }, {{{3, 4}}}},
      {"logsumexp", [](const TensorList& a) { return logsumexp(a[0], {1}); }, {{{3, 4}}}},
      {"var", [](const TensorList& a) { return var(a[0], {1}); }, {{{3, 4}}}},
      {"std", [](const TensorList& a) { return std(a[0], {0}, 0, true); }, {{{3, 4}}}},
      {"norm", [](const TensorList& a) { return norm(a[0], 2, {1}); }, {{{3, 4}}}},
      {"softmax", [](const TensorList& a) { return softmax(a[0], 1); }, {{{3, 4}}}},
      {"log_softmax", [](const TensorList& a) { return log_softmax(a[0], 0); }, {{{3, 4}}}},
      {"cumsum", [](const TensorList& a) { return cumsum(a[0], 1); }, {{{3, 4}}}},
      {"cumprod", [](const TensorList& a) { return cumprod(a[0], 1); }, {{{3, 4}}}},
      {"logcumsumexp", [](const TensorList& a) { return logcumsumexp(a[0], 0); }, {{{3, 4}}}},
      {"linear_recurrence", [](const TensorList& a) { return linear_recurrence(a[0], a[1], 1); },
       {{{3, 4}}, {{4}}}},
      {"sum_to_size", [](const TensorList& a) { return sum_to_size(a[0], {1, 4}); },
       {{{3, 4}}}},
      // ---- Views and shape ops. ----
      {"reshape", [](const TensorList& a) { return reshape(a[0], {4, -1}); }, {{{3, 4}}}},
      {"view", [](const TensorList& a) { return view(a[0], {2, 6}); }, {{{3, 4}}}},
      {"flatten", [](const TensorList& a) { return flatten(a[0], 1, 2); }, {{{2, 3, 2}}}},
      {"unflatten", [](const TensorList& a) { return unflatten(a[0], 1, {2, 2}); },
       {{{3, 4}}}},
      {"expand", [](const TensorList& a) { return expand(a[0], {2, 3, 4}); }, {{{3, 1}}}},
      {"unsqueeze", [](const TensorList& a) { return unsqueeze(a[0], 1); }, {{{3, 4}}}},
      {"squeeze", [](const TensorList& a) { return squeeze(a[0]); }, {{{3, 1, 4}}}},
      {"squeeze_dim", [](const TensorList& a) { return squeeze_dim(a[0], 1); },
       {{{3, 1, 4}}}},
      {"squeeze_dims", [](const TensorList& a) { return squeeze_dims(a[0], {1, 2}); },
       {{{3, 1, 4}}}},
      {"movedim", [](const TensorList& a) { return movedim(a[0], 0, 2); }, {{{2, 3, 2}}}},
      {"permute", [](const TensorList& a) { return permute(a[0], {2, 0, 1}); },
       {{{2, 3, 2}}}},
      {"transpose", [](const TensorList& a) { return transpose(a[0], 0, 1); }, {{{3, 4}}}},
      {"t", [](const TensorList& a) { return t(a[0]); }, {{{3, 4}}}},
      {"select", [](const TensorList& a) { return select(a[0], 1, 2); }, {{{3, 4}}}},
      {"narrow", [](const TensorList& a) { return narrow(a[0], 1, 1, 2); }, {{{3, 4}}}},
      {"slice", [](const TensorList& a) { return slice(a[0], 1, 0, std::nullopt, 2); },
       {{{3, 4}}}},
      {"diagonal", [](const TensorList& a) { return diagonal(a[0], 1); }, {{{3, 4}}}},
      {"select_scatter", [](const TensorList& a) { return select_scatter(a[0], a[1], 1, 2); },
       {{{3, 4}}, {{3}}}},
      {"slice_scatter",
       [](const TensorList& a) { return slice_scatter(a[0], a[1], 1, 0, std::nullopt, 2); },
       {{{3, 4}}, {{3, 2}}}},
      {"diagonal_scatter", [](const TensorList& a) { return diagonal_scatter(a[0], a[1], 1); },
       {{{3, 4}}, {{3}}}},
      {"contiguous", [](const TensorList& a) { return contiguous(t(a[0])); }, {{{3, 4}}}},
      {"clone", [](const TensorList& a) { return clone(a[0]); }, {{{3, 4}}}},
      {"flip", [](const TensorList& a) { return flip(a[0], {1}); }, {{{3, 4}}}},
      // ---- Indexing, joining, conversion. ----
      {"index_select", [](const TensorList& a) { return index_select(a[0], 1, Index1()); },
       {{{3, 4}}}},
      {"gather", [](const TensorList& a) { return gather(a[0], 1, GatherIndex()); },
       {{{3, 4}}}},
      {"scatter_add",
       [](const TensorList& a) { return scatter_add(a[0], 1, GatherIndex(), a[1]); },
       {{{3, 4}}, {{3, 2}}}},
      {"take_along_dim",
       [](const TensorList& a) { return take_along_dim(a[0], TakeIndex(), 0); }, {{{3, 4}}}},
      {"cat", [](const TensorList& a) { return cat({a[0], a[1]}, 0); }, {{{3, 4}}, {{2, 4}}}},
      {"stack", [](const TensorList& a) { return stack({a[0], a[1]}, 1); },
       {{{3, 4}}, {{3, 4}}}},
      {"split",
       [](const TensorList& a) {
         TensorList p = split(a[0], 2, 1);
         return p[0] * p[1];
       },
       {{{3, 4}}}},
      {"split_with_sizes",
       [](const TensorList& a) {
         TensorList p = split_with_sizes(a[0], {1, 2}, 0);
         return p[0] * p[1];
       },
       {{{3, 4}}}},
      {"chunk",
       [](const TensorList& a) {
         TensorList p = chunk(a[0], 2, 1);
         return p[0] * p[1];
       },
       {{{3, 4}}}},
      {"repeat", [](const TensorList& a) { return repeat(a[0], {2, 1}); }, {{{2, 3}}}},
      {"pad", [](const TensorList& a) { return pad(a[0], {1, 2}, 0.5); }, {{{3, 2}}}},
      {"to", [](const TensorList& a) { return to(to(a[0], kFloat32), kFloat64); },
       {{{3, 4}}},
       Randomness::kError,
       0,
       /*fd_eps=*/1e-3},
      // ---- Linear algebra. ----
      {"matmul", [](const TensorList& a) { return matmul(a[0], a[1]); },
       {{{3, 4}}, {{4, 2}}}},
      {"mm", [](const TensorList& a) { return mm(a[0], a[1]); }, {{{2, 4}}, {{4, 3}}}},
      {"bmm", [](const TensorList& a) { return bmm(a[0], a[1]); },
       {{{2, 2, 3}}, {{2, 3, 2}}}},
      {"dot", [](const TensorList& a) { return dot(a[0], a[1]); }, {{{4}}, {{4}}}},
      {"outer", [](const TensorList& a) { return outer(a[0], a[1]); }, {{{3}}, {{4}}}},
      {"linear", [](const TensorList& a) { return linear(a[0], a[1], a[2]); },
       {{{2, 3}}, {{4, 3}}, {{4}}}},
      // Solves and factorizations, of matrices kept well-conditioned (a + 4I: diagonally
      // dominant; a a^T + 3I: symmetric positive-definite).
      {"linalg_solve", [](const TensorList& a) { return linalg_solve(Shifted(a[0], 4.0), a[1]); },
       {{{3, 3}}, {{3, 2}}}},
      {"linalg_solve_triangular",
       [](const TensorList& a) { return linalg_solve_triangular(Shifted(a[0], 4.0), a[1], false); },
       {{{3, 3}}, {{3, 2}}}},
      {"cholesky",
       [](const TensorList& a) {
         return cholesky(Shifted(matmul(a[0], transpose(a[0], -2, -1)), 3.0));
       },
       {{{3, 3}}}},
      {"inverse", [](const TensorList& a) { return inverse(Shifted(a[0], 4.0)); }, {{{3, 3}}}},
      {"slogdet",  // det < 0: sign -1
       [](const TensorList& a) { return std::get<1>(slogdet(Shifted(a[0], -4.0))); },
       {{{3, 3}}}},
      {"logdet", [](const TensorList& a) { return logdet(Shifted(a[0], 4.0)); }, {{{3, 3}}}},
      // ---- Sorting (the values output; ties have probability 0). ----
      {"sort", [](const TensorList& a) { return std::get<0>(sort(a[0], 1, true)); },
       {{{3, 4}}}},
      {"topk", [](const TensorList& a) { return std::get<0>(topk(a[0], 2, 1)); },
       {{{3, 4}}}},
      // ---- Random: a fresh generator per call, so every call draws the same mask; under
      // vmap that is randomness kSame (one mask for the whole batch). ----
      {"dropout",
       [](const TensorList& a) {
         Generator g(7);
         return dropout(a[0], 0.5, /*train=*/true, &g);
       },
       {{{3, 4}}},
       Randomness::kSame},
  };
  static const bool appended = [] {
    for (auto family : {&sweep::ActivationCases, &sweep::LossCases, &sweep::NormalizationCases,
                        &sweep::NnIndexingCases, &sweep::ConvCases, &sweep::AttentionCases}) {
      for (OpCase& c : family()) table->push_back(std::move(c));
    }
    return true;
  }();
  (void)appended;
  return *table;
}

// The arguments of one entry: the first one batched (kBatch examples along dim 0), the
// others shared by every example; `seed` makes each entry's draws distinct.
struct Args {
  TensorList batched;  // {xs, shared...}: xs has a leading batch dim
  TensorList one;      // one example: {xs[0], shared...}
};

Args MakeArgs(const OpCase& c, uint64_t seed) {
  Args r;
  for (size_t i = 0; i < c.args.size(); ++i) {
    const ArgSpec& s = c.args[i];
    if (i == 0) {
      std::vector<int64_t> shape = {kBatch};
      shape.insert(shape.end(), s.shape.begin(), s.shape.end());
      r.batched.push_back(Rand(shape, seed, s.low, s.high));
      r.one.push_back(select(r.batched[0], 0, 0));
    } else {
      r.batched.push_back(Rand(s.shape, seed + i, s.low, s.high));
      r.one.push_back(r.batched.back());
    }
  }
  return r;
}

std::vector<int64_t> AllArgnums(size_t n) {
  std::vector<int64_t> r;
  for (size_t i = 0; i < n; ++i) r.push_back(static_cast<int64_t>(i));
  return r;
}

// FirstBatched: in_dims with `dim` for the first argument and nullopt for the others.
std::vector<std::optional<int64_t>> FirstBatched(size_t n, int64_t dim) {
  std::vector<std::optional<int64_t>> r(n, std::nullopt);
  r[0] = dim;
  return r;
}

class TransformsSweep : public ::testing::TestWithParam<size_t> {};

TEST_P(TransformsSweep, Compositions) {
  const OpCase& c = Table()[GetParam()];
  const uint64_t seed = 1000 + 10 * GetParam();
  const size_t n = c.args.size();
  const Args args = MakeArgs(c, seed);
  const std::vector<int64_t> argnums = AllArgnums(n);
  const Fn f = c.fn;
  const Tensor w = Rand(f(args.one).sizes(), seed + 7);
  const ScalarFn s = [f, w](const TensorList& a) { return sum(f(a) * w); };

  // 0. The entry's gradient against central differences (its inputs are in a smooth region).
  {
    SCOPED_TRACE("gradcheck");
    const GradcheckResult r = gradcheck(f, args.one, {}, c.fd_eps, c.fd_eps, c.fd_eps);
    EXPECT_TRUE(r.ok) << r.message;
  }

  // Per-example gradients: the loop-and-stack oracle of vmap (no BatchedTensor involved).
  const TensorList per_grads = testing::LoopVmap(grad(s, argnums), args.batched, FirstBatched(n, 0),
                                                 std::vector<int64_t>(n, 0));

  // 1. vmap(grad(s)), batch dim first and last.
  if (!(c.skip & kVmapOfGrad)) {
    SCOPED_TRACE("vmap(grad)");
    const TensorList g0 =
        vmap(grad(s, argnums), Dims(FirstBatched(n, 0)), 0, c.randomness)(args.batched);
    TensorList last_args = args.batched;
    last_args[0] = movedim(last_args[0], 0, -1);
    const TensorList g1 =
        vmap(grad(s, argnums), Dims(FirstBatched(n, -1)), 0, c.randomness)(last_args);
    ASSERT_EQ(g0.size(), n);
    ASSERT_EQ(g1.size(), n);
    for (size_t i = 0; i < n; ++i) {
      SCOPED_TRACE(i);
      EXPECT_TENSOR_NEAR(g0[i], per_grads[i], kTol);
      EXPECT_TENSOR_NEAR(g1[i], per_grads[i], kTol);
    }
  }

  // 1b. vmap(grad(s)) with the batch on the LAST argument instead (the first one shared).
  // An in-place entry would then write a batched `other` into an unbatched copy of the
  // first argument, which vmap rejects (as functorch does).
  if (n > 1) {
    SCOPED_TRACE("vmap(grad), last argument batched");
    TensorList largs = args.one;
    std::vector<int64_t> shape = {kBatch};
    for (int64_t d : args.one[n - 1].sizes()) shape.push_back(d);
    largs[n - 1] = Rand(shape, seed + 30, c.args[n - 1].low, c.args[n - 1].high);
    std::vector<std::optional<int64_t>> in_dims(n, std::nullopt);
    in_dims[n - 1] = 0;
    const TensorListFn batched_grad = vmap(grad(s, argnums), Dims(in_dims), 0, c.randomness);
    if (c.op.back() == '_') {
      EXPECT_FT_ERROR(batched_grad(largs), "would write values that vary over the batch");
    } else {
      const TensorList expected =
          testing::LoopVmap(grad(s, argnums), largs, in_dims, std::vector<int64_t>(n, 0));
      const TensorList got = batched_grad(largs);
      ASSERT_EQ(got.size(), n);
      for (size_t i = 0; i < n; ++i) {
        SCOPED_TRACE(i);
        EXPECT_TENSOR_NEAR(got[i], expected[i], kTol);
      }
    }
  }

  // 2. vmap(jvp) with batched tangents for every argument, the batch dim first and last.
  if (!(c.skip & kVmapOfJvp)) {
    SCOPED_TRACE("vmap(jvp)");
    TensorList jargs = args.batched;  // {xs, shared..., tangents...}
    for (size_t i = 0; i < n; ++i) {
      std::vector<int64_t> shape = {kBatch};
      for (int64_t d : args.one[i].sizes()) shape.push_back(d);
      jargs.push_back(Rand(shape, seed + 20 + i));
    }
    const TensorListFn tangent_of = [f, n](const TensorList& a) {
      const TensorList primals(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n));
      const TensorList tangents(a.begin() + static_cast<std::ptrdiff_t>(n), a.end());
      const TensorListFn fl = [f](const TensorList& p) { return TensorList{f(p)}; };
      return jvp(fl, primals, tangents).tangents;
    };
    std::vector<std::optional<int64_t>> in_dims = FirstBatched(n, 0);
    for (size_t i = 0; i < n; ++i) in_dims.push_back(0);
    const Tensor expected = testing::LoopVmap(tangent_of, jargs, in_dims, {0})[0];
    const Tensor got = vmap(tangent_of, Dims(in_dims), 0, c.randomness)(jargs)[0];
    EXPECT_TENSOR_NEAR(got, expected, kTol);
    // The batch dim last in the first primal and in every tangent.
    TensorList last_args = jargs;
    std::vector<std::optional<int64_t>> last_dims = FirstBatched(n, -1);
    last_args[0] = movedim(last_args[0], 0, -1);
    for (size_t i = n; i < 2 * n; ++i) {
      last_args[i] = movedim(last_args[i], 0, -1);
      last_dims.push_back(-1);
    }
    const Tensor got_last = vmap(tangent_of, Dims(last_dims), 0, c.randomness)(last_args)[0];
    EXPECT_TENSOR_NEAR(got_last, expected, kTol);
  }

  // 3. grad(vmap(f)): the batch's examples are independent, so the gradient w.r.t. the
  // batched argument is the stack of per-example gradients, and w.r.t. a shared argument
  // their sum.
  if (!(c.skip & kGradOfVmap)) {
    SCOPED_TRACE("grad(vmap)");
    const TensorListFn fl = [f](const TensorList& a) { return TensorList{f(a)}; };
    const TensorListFn vf = vmap(fl, Dims(FirstBatched(n, 0)), 0, c.randomness);
    const ScalarFn sb = [vf, w](const TensorList& a) { return sum(vf(a)[0] * w); };
    const TensorList g = grad(sb, argnums)(args.batched);
    ASSERT_EQ(g.size(), n);
    EXPECT_TENSOR_NEAR(g[0], per_grads[0], kTol);
    for (size_t i = 1; i < n; ++i) {
      SCOPED_TRACE(i);
      EXPECT_TENSOR_NEAR(g[i], sum(per_grads[i], {0}), kTol);
    }
    // The batch dim last: the gradient comes back in the argument's (moved) layout.
    const TensorListFn vf_last = vmap(fl, Dims(FirstBatched(n, -1)), 0, c.randomness);
    const ScalarFn sb_last = [vf_last, w](const TensorList& a) { return sum(vf_last(a)[0] * w); };
    TensorList last_args = args.batched;
    last_args[0] = movedim(last_args[0], 0, -1);
    const TensorList g_last = grad(sb_last, argnums)(last_args);
    ASSERT_EQ(g_last.size(), n);
    EXPECT_TENSOR_NEAR(movedim(g_last[0], -1, 0), per_grads[0], kTol);
    for (size_t i = 1; i < n; ++i) {
      SCOPED_TRACE(i);
      EXPECT_TENSOR_NEAR(g_last[i], sum(per_grads[i], {0}), kTol);
    }
  }

  // 4. jacfwd == jacrev on one example.
  if (!(c.skip & kJacfwdVsJacrev)) {
    SCOPED_TRACE("jacfwd vs jacrev");
    const TensorList fwd = jacfwd(f, argnums, c.randomness)(args.one);
    const TensorList rev = jacrev(f, argnums)(args.one);
    ASSERT_EQ(fwd.size(), n);
    ASSERT_EQ(rev.size(), n);
    for (size_t i = 0; i < n; ++i) {
      SCOPED_TRACE(i);
      EXPECT_TENSOR_NEAR(fwd[i], rev[i], kTol);
    }
  }
}

// Check 5, after the others: see the header comment.
TEST_P(TransformsSweep, JitReplaysOnNewArguments) {
  const OpCase& c = Table()[GetParam()];
  if (c.randomness != Randomness::kError) GTEST_SKIP() << "random ops are not replayed";
  const uint64_t seed = 1000 + 10 * GetParam();
  const size_t n = c.args.size();
  const Args args = MakeArgs(c, seed);
  const Args other = MakeArgs(c, seed + 500);
  const std::vector<int64_t> argnums = AllArgnums(n);
  const Fn f = c.fn;
  const Tensor w = Rand(f(args.one).sizes(), seed + 7);
  const ScalarFn s = [f, w](const TensorList& a) { return sum(f(a) * w); };
  {
    SCOPED_TRACE("jit(vmap(grad))");
    JitFunction per_sample = jit(vmap(grad(s, argnums), Dims(FirstBatched(n, 0)), 0));
    per_sample(args.batched);
    ASSERT_NE(per_sample.program(other.batched), nullptr)
        << per_sample.untraceable_reason(other.batched);
    const TensorList expected = testing::LoopVmap(grad(s, argnums), other.batched,
                                                  FirstBatched(n, 0), std::vector<int64_t>(n, 0));
    const TensorList got = per_sample(other.batched);
    ASSERT_EQ(got.size(), n);
    for (size_t i = 0; i < n; ++i) {
      SCOPED_TRACE(i);
      EXPECT_TENSOR_NEAR(got[i], expected[i], kTol);
    }
    EXPECT_EQ(per_sample.stats().replays, 1);
  }
  {
    SCOPED_TRACE("jit(jacrev)");
    JitFunction jac = jit(jacrev(f, argnums));
    jac(args.one);
    const TensorList expected = jacrev(f, argnums)(other.one);
    const TensorList got = jac(other.one);
    ASSERT_EQ(got.size(), n);
    for (size_t i = 0; i < n; ++i) {
      SCOPED_TRACE(i);
      EXPECT_TENSOR_NEAR(got[i], expected[i], kTol);
    }
    EXPECT_EQ(jac.stats().replays, 1) << jac.untraceable_reason(other.one);
  }
}

// Check 6: functionalize of the entry computes what the entry computes, alone, under vmap and
// under grad (functionalize's rules for in-place and view ops, and its pass-through for every
// other op); and an entry whose op returns a view of its first argument eagerly names an op
// functionalize knows as a view (a view op without a rule would lose writes through it).
TEST_P(TransformsSweep, Functionalize) {
  const OpCase& c = Table()[GetParam()];
  const uint64_t seed = 2000 + 10 * GetParam();
  const size_t n = c.args.size();
  const Args args = MakeArgs(c, seed);
  const std::vector<int64_t> argnums = AllArgnums(n);
  const Fn f = c.fn;
  const Tensor eager = f(args.one);
  EXPECT_TENSOR_NEAR(functionalize(f)(args.one), eager, kTol);
  if (eager.data_storage().is_same(args.one[0].data_storage())) {
    const Operator& op = OpRegistry::Global().Get(c.op);
    EXPECT_TRUE(op.has_rule(TransformType::kFunctionalize))
        << c.op << " returned a view of its argument but has no functionalize rule";
  }
  {
    SCOPED_TRACE("vmap(functionalize)");
    const TensorListFn fl = [f](const TensorList& a) { return TensorList{f(a)}; };
    const Tensor expected = vmap(fl, Dims(FirstBatched(n, 0)), 0, c.randomness)(args.batched)[0];
    const Tensor got =
        vmap(functionalize(fl), Dims(FirstBatched(n, 0)), 0, c.randomness)(args.batched)[0];
    EXPECT_TENSOR_NEAR(got, expected, kTol);
  }
  {
    SCOPED_TRACE("grad(functionalize)");
    const Tensor w = Rand(eager.sizes(), seed + 7);
    const ScalarFn s = [f, w](const TensorList& a) { return sum(f(a) * w); };
    const TensorList expected = grad(s, argnums)(args.one);
    const TensorList got = grad(functionalize(s), argnums)(args.one);
    ASSERT_EQ(got.size(), n);
    for (size_t i = 0; i < n; ++i) {
      SCOPED_TRACE(i);
      EXPECT_TENSOR_NEAR(got[i], expected[i], kTol);
    }
  }
}

std::vector<size_t> AllCases() {
  std::vector<size_t> r;
  for (size_t i = 0; i < Table().size(); ++i) r.push_back(i);
  return r;
}

INSTANTIATE_TEST_SUITE_P(Ops, TransformsSweep, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return Table()[info.param].op;
                         });

// Every built-in differentiable op has a sweep entry (adding an op without one fails here),
// and every entry names a registered differentiable op.
TEST(TransformsSweepCompleteness, EveryDifferentiableBuiltinOpHasAnEntry) {
  autograd::RegisterDerivatives();
  OpRegistry& registry = OpRegistry::Global();
  std::set<std::string> names;
  for (const OpCase& c : Table()) {
    EXPECT_TRUE(names.insert(c.op).second) << "duplicate entry " << c.op;
    const Operator* op = registry.Find(c.op);
    ASSERT_NE(op, nullptr) << "entry " << c.op << " names no registered op";
    EXPECT_FALSE(autograd::IsNonDifferentiable(*op)) << c.op;
  }
  std::vector<std::string> missing;
  int differentiable = 0;
  for (const Operator* op : registry.ops()) {
    if (!registry.is_builtin(*op) || autograd::IsNonDifferentiable(*op)) continue;
    ++differentiable;
    if (names.count(op->name()) == 0) missing.push_back(op->name());
  }
  EXPECT_TRUE(missing.empty()) << "differentiable ops without a sweep entry: "
                               << ::testing::PrintToString(missing);
  EXPECT_EQ(differentiable, static_cast<int>(Table().size()));
}

}  // namespace
}  // namespace ft

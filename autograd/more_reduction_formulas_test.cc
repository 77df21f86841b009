// The vjp formulas of more_reduction_formulas.cc against independent oracles: float64 central
// differences (GradCheck), closed forms (ties, zeros, dropout's mask), and loops of grad for
// vmap(grad).
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "dispatch/ops.h"
#include "gtest/gtest.h"
#include "interpreters/grad/gradcheck.h"
#include "interpreters/grad/grad.h"
#include "interpreters/vmap/vmap.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"

namespace ft {
namespace {

Tensor Rand(IntArrayRef shape, uint64_t seed, double low = -1.0, double high = 1.0) {
  Generator g(seed);
  return rand_like(zeros(shape, kFloat64), &g) * (high - low) + low;
}

// GradCheck: ft::gradcheck (interpreters/grad/gradcheck.h) as a gtest assertion.
::testing::AssertionResult GradCheck(const std::function<Tensor(const TensorList&)>& op,
                                     const TensorList& args, double tol = 1e-6,
                                     std::vector<int64_t> argnums = {}) {
  const GradcheckResult r = gradcheck(op, args, std::move(argnums), tol, tol);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

// The dim / keepdim combinations used for the reductions over a [2, 3, 4] input.
struct DimsCase {
  Shape dims;
  bool keepdim;
};
const std::vector<DimsCase>& Cases() {
  static const auto* cases = new std::vector<DimsCase>{
      {{}, false}, {{}, true},     {{0}, false},  {{1}, true},
      {{-1}, false}, {{-1}, true}, {{0, 2}, false}, {{-3, -2}, true}};
  return *cases;
}

std::string Describe(const DimsCase& c) {
  std::string s = "dims [";
  for (int64_t d : c.dims) s += std::to_string(d) + " ";
  return s + "] keepdim " + (c.keepdim ? "true" : "false");
}

// LoopGrad stacks grad(f)(xs[i]) over the leading dim (the vmap(grad) oracle).
Tensor LoopGrad(const TensorFn& f, const Tensor& xs) {
  TensorList per;
  for (int64_t i = 0; i < xs.size(0); ++i) per.push_back(grad(f)(select(xs, 0, i)));
  return stack(per, 0);
}

TEST(MoreReductionGrad, ProdWithoutZeros) {
  Tensor x = Rand({2, 3, 4}, 1, 0.5, 1.5) * sign(Rand({2, 3, 4}, 2));  // negatives too
  for (const DimsCase& c : Cases()) {
    SCOPED_TRACE(Describe(c));
    EXPECT_TRUE(GradCheck([&](const TensorList& a) { return prod(a[0], c.dims, c.keepdim); },
                          {x}));
  }
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return prod(a[0]); },
                        {scalar_tensor(-1.5, kFloat64)}));
}

TEST(MoreReductionGrad, ProdWithZeros) {
  // Row 0: no zero; row 1: one zero; row 2: two zeros; row 3: all zeros.
  Tensor x = tensor({2.0, -3.0, 0.5, 1.5, 0.0, -2.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0}, {4, 3});
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return prod(a[0], {1}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return prod(a[0], {-1}, true); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return prod(a[0], {0}); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return prod(a[0]); }, {x}));
  // Closed form for the product of a row: the product of the others.
  Tensor g = grad(TensorFn([](const Tensor& t) { return sum(prod(t, {1})); }))(x);
  EXPECT_TENSOR_NEAR(g,
                     tensor({-1.5, 1.0, -6.0, 0.0, -3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
                            {4, 3}),
                     1e-14);
  // Second order (prod is a polynomial): the hessian-vector product through the formula
  // against central differences of the gradient.
  Tensor y = tensor({2.0, 0.0, -3.0});
  auto gfn = grad(TensorFn([](const Tensor& t) { return prod(t); }));
  Tensor h = grad(TensorFn([&](const Tensor& t) { return sum(gfn(t) * tensor({1.0, 2.0, 3.0})); }))(y);
  // d/dy_j sum_i v_i prod_{k != i} y_k = sum_{i != j} v_i prod_{k != i, j} y_k.
  EXPECT_TENSOR_NEAR(h, tensor({2.0 * -3.0 + 3.0 * 0.0, 1.0 * -3.0 + 3.0 * 2.0, 1.0 * 0.0 + 2.0 * 2.0}),
                     1e-14);
}

TEST(MoreReductionGrad, AmaxAminWithoutTies) {
  Tensor x = Rand({2, 3, 4}, 3);
  for (const DimsCase& c : Cases()) {
    SCOPED_TRACE(Describe(c));
    EXPECT_TRUE(GradCheck([&](const TensorList& a) { return amax(a[0], c.dims, c.keepdim); },
                          {x}));
    EXPECT_TRUE(GradCheck([&](const TensorList& a) { return amin(a[0], c.dims, c.keepdim); },
                          {x}));
  }
}

TEST(MoreReductionGrad, AmaxAminTiesSplitEvenly) {
  Tensor x = tensor({1.0, 3.0, 3.0, 2.0, 2.0, 2.0}, {2, 3});
  Tensor gmax = grad(TensorFn([](const Tensor& t) { return sum(amax(t, {1})); }))(x);
  EXPECT_TENSOR_NEAR(gmax, tensor({0.0, 0.5, 0.5, 1.0 / 3, 1.0 / 3, 1.0 / 3}, {2, 3}), 1e-15);
  Tensor gall = grad(TensorFn([](const Tensor& t) { return amax(t); }))(x);
  EXPECT_TENSOR_NEAR(gall, tensor({0.0, 0.5, 0.5, 0.0, 0.0, 0.0}, {2, 3}), 1e-15);
  Tensor gmin = grad(TensorFn([](const Tensor& t) { return sum(amin(t, {0}, true) * 2.0); }))(x);
  EXPECT_TENSOR_NEAR(gmin, tensor({2.0, 0.0, 0.0, 0.0, 2.0, 2.0}, {2, 3}), 1e-15);
}

TEST(MoreReductionGrad, VarAndStd) {
  Tensor x = Rand({2, 3, 4}, 4);
  for (int64_t correction : {0, 1}) {
    for (const DimsCase& c : Cases()) {
      SCOPED_TRACE(Describe(c) + " correction " + std::to_string(correction));
      EXPECT_TRUE(GradCheck(
          [&](const TensorList& a) { return var(a[0], c.dims, correction, c.keepdim); }, {x}));
      EXPECT_TRUE(GradCheck(
          [&](const TensorList& a) { return std(a[0], c.dims, correction, c.keepdim); }, {x}));
    }
  }
  // A zero standard deviation gives a zero gradient (PyTorch).
  Tensor flat = full({3}, 2.0, kFloat64);
  EXPECT_TENSOR_EQ(grad(TensorFn([](const Tensor& t) { return std(t); }))(flat),
                   zeros({3}, kFloat64));
}

TEST(MoreReductionGrad, Norm) {
  Tensor x = Rand({2, 3, 4}, 5);
  const double inf = std::numeric_limits<double>::infinity();
  for (double p : {1.0, 2.0, 3.0, 1.5, 0.5, inf, -inf}) {
    for (const DimsCase& c : Cases()) {
      SCOPED_TRACE(Describe(c) + " p " + std::to_string(p));
      EXPECT_TRUE(GradCheck(
          [&](const TensorList& a) { return norm(a[0], p, c.dims, c.keepdim); }, {x}, 1e-5));
    }
  }
  // p = 0 counts nonzeros: zero gradient.
  EXPECT_TENSOR_EQ(grad(TensorFn([](const Tensor& t) { return norm(t, 0.0); }))(x),
                   zeros({2, 3, 4}, kFloat64));
  // A zero norm gives a zero gradient for every p.
  for (double p : {1.0, 2.0, 3.0, 0.5, inf}) {
    SCOPED_TRACE(p);
    Tensor z = zeros({2, 2}, kFloat64);
    Tensor g = grad(TensorFn([p](const Tensor& t) { return sum(norm(t, p, {1})); }))(z);
    EXPECT_TENSOR_EQ(g, zeros({2, 2}, kFloat64));
  }
  // Closed form: 2-norm gradient is x / |x|; inf-norm with a tie in |x| splits evenly.
  Tensor v = tensor({3.0, -4.0});
  EXPECT_TENSOR_NEAR(grad(TensorFn([](const Tensor& t) { return norm(t); }))(v),
                     tensor({0.6, -0.8}), 1e-15);
  Tensor tie = tensor({-2.0, 1.0, 2.0});
  EXPECT_TENSOR_NEAR(grad(TensorFn([inf](const Tensor& t) { return norm(t, inf); }))(tie),
                     tensor({-0.5, 0.0, 0.5}), 1e-15);
}

TEST(MoreReductionGrad, Cumsum) {
  Tensor x = Rand({2, 3, 4}, 6);
  for (int64_t dim : {0, 1, 2, -1, -2, -3}) {
    SCOPED_TRACE(dim);
    EXPECT_TRUE(GradCheck([dim](const TensorList& a) { return cumsum(a[0], dim); }, {x}));
  }
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return cumsum(a[0], 0); },
                        {scalar_tensor(0.5, kFloat64)}));
  // Closed form: d sum(cumsum(x)) / dx_i = n - i.
  EXPECT_TENSOR_EQ(grad(TensorFn([](const Tensor& t) { return sum(cumsum(t, 0)); }))(
                       tensor({1.0, 2.0, 3.0})),
                   tensor({3.0, 2.0, 1.0}));
}

TEST(MoreReductionGrad, SumToSize) {
  Tensor x = Rand({2, 3, 4}, 7);
  for (const Shape& size : std::vector<Shape>{{3, 4}, {3, 1}, {1, 4}, {2, 1, 4}, {1}, {2, 3, 4}}) {
    SCOPED_TRACE(size.size());
    EXPECT_TRUE(GradCheck([&](const TensorList& a) { return sum_to_size(a[0], size); }, {x}));
  }
}

TEST(MoreReductionGrad, SortAndTopk) {
  Tensor x = Rand({2, 3, 4}, 8);
  for (int64_t dim : {0, 1, 2, -1, -2}) {
    for (bool descending : {false, true}) {
      SCOPED_TRACE(std::to_string(dim) + (descending ? " descending" : " ascending"));
      EXPECT_TRUE(GradCheck(
          [&](const TensorList& a) { return std::get<0>(sort(a[0], dim, descending)); }, {x}));
    }
  }
  for (int64_t dim : {0, 1, -1}) {
    for (bool largest : {true, false}) {
      for (bool sorted : {true, false}) {
        SCOPED_TRACE(std::to_string(dim) + " largest " + std::to_string(largest) + " sorted " +
                     std::to_string(sorted));
        EXPECT_TRUE(GradCheck(
            [&](const TensorList& a) {
              return std::get<0>(topk(a[0], 2, dim, largest, sorted));
            },
            {x}));
      }
    }
  }
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return std::get<0>(topk(a[0], 4, -1)); }, {x}));
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return std::get<0>(sort(a[0], 0)); },
                        {scalar_tensor(0.25, kFloat64)}));
  // Closed form: the top-2 of [0.1, 0.9, 0.5, 0.7] get the gradient.
  Tensor v = tensor({0.1, 0.9, 0.5, 0.7});
  EXPECT_TENSOR_EQ(
      grad(TensorFn([](const Tensor& t) { return sum(std::get<0>(topk(t, 2))); }))(v),
      tensor({0.0, 1.0, 0.0, 1.0}));
}

TEST(MoreReductionGrad, DropoutUsesItsMask) {
  Tensor x = Rand({4, 5}, 9, 0.5, 1.5);  // no exact zeros
  Tensor w = Rand({4, 5}, 10);
  for (double p : {0.2, 0.5, 0.8}) {
    SCOPED_TRACE(p);
    auto f = TensorFn([&](const Tensor& t) {
      Generator gen(77);
      return sum(dropout(t, p, true, &gen) * w);
    });
    Generator same(77);
    Tensor out = dropout(x, p, true, &same);
    Tensor mask = to(ne(out, 0.0), kFloat64);
    EXPECT_GT(sum(mask).item<double>(), 0.0);
    EXPECT_LT(sum(mask).item<double>(), 20.0);
    EXPECT_TENSOR_NEAR(grad(f)(x), w * mask / (1.0 - p), 1e-14);
    EXPECT_TRUE(GradCheck(
        [p](const TensorList& a) {
          Generator gen(77);
          return dropout(a[0], p, true, &gen);
        },
        {x}));
  }
  // Identity when dropout returned x (eval mode or p == 0); zeros when p == 1.
  auto with = [&](double p, bool train) {
    return grad(TensorFn([&, p, train](const Tensor& t) {
      Generator gen(3);
      return sum(dropout(t, p, train, &gen) * w);
    }))(x);
  };
  EXPECT_TENSOR_EQ(with(0.5, false), w);
  EXPECT_TENSOR_EQ(with(0.0, true), w);
  EXPECT_TENSOR_EQ(with(1.0, true), zeros({4, 5}, kFloat64));
}

TEST(MoreReductionGrad, BernoulliIsNonDifferentiable) {
  Tensor x = Rand({3, 4}, 11);
  auto f = TensorFn([](const Tensor& t) {
    Generator gen(5);
    return sum(t * bernoulli(sigmoid(t), &gen));
  });
  Generator gen(5);
  Tensor b = bernoulli(sigmoid(x), &gen);
  EXPECT_TENSOR_EQ(grad(f)(x), b);
}

// CheckVmapOfGrad: vmap(grad(f)) against a loop of grad(f), for each named f.
void CheckVmapOfGrad(const std::vector<std::pair<const char*, TensorFn>>& fns,
                     const Tensor& xs) {
  for (const auto& [name, f] : fns) {
    SCOPED_TRACE(name);
    try {
      EXPECT_TENSOR_NEAR(vmap(grad(f))(xs), LoopGrad(f, xs), 1e-12);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

Tensor VmapInput() { return Rand({5, 3, 4}, 12, 0.5, 1.5) * sign(Rand({5, 3, 4}, 13)); }

// Ops whose non-tensor arguments are ints / bools / doubles, and reductions over all dims.
TEST(MoreReductionGrad, VmapOfGradMatchesLoop) {
  const Tensor xs = VmapInput();
  const std::vector<std::pair<const char*, TensorFn>> fns = {
      {"prod", [](const Tensor& t) { return prod(t) * 2.0; }},
      {"amax", [](const Tensor& t) { return amax(t); }},
      {"amin", [](const Tensor& t) { return amin(t); }},
      {"var", [](const Tensor& t) { return var(t, {}, 0); }},
      {"std", [](const Tensor& t) { return std(t); }},
      {"norm3", [](const Tensor& t) { return norm(t, 3.0); }},
      {"norminf", [](const Tensor& t) { return norm(t, std::numeric_limits<double>::infinity()); }},
      {"cumsum", [](const Tensor& t) { return sum(square(cumsum(t, 1))); }},
      {"sort", [](const Tensor& t) { return sum(std::get<0>(sort(t, 0)) * t); }},
      {"topk", [](const Tensor& t) { return sum(square(std::get<0>(topk(t, 2, -1)))); }},
  };
  CheckVmapOfGrad(fns, xs);
  // With zeros inside prod's input: examples 1, 2, 3 have one, two and twelve zeros.
  std::vector<bool> zero(60, false);
  zero[12 + 5] = true;
  zero[24 + 0] = zero[24 + 11] = true;
  for (int i = 36; i < 48; ++i) zero[i] = true;
  const Tensor zs = where(tensor(zero, {5, 3, 4}), 0.0, xs);
  CheckVmapOfGrad({fns[0]}, zs);
}

// Reductions over a list of dims under vmap(grad): the formulas read the dims list the grad
// interpreter saved, which the vmap level below must leave intact (a regression test for the
// vmap interpreter once moving non-tensor arguments out of the list it was given).
TEST(MoreReductionGrad, VmapOfGradOverDimListsMatchesLoop) {
  const Tensor xs = VmapInput();
  CheckVmapOfGrad(
      {
          {"sum", [](const Tensor& t) { return sum(sum(t, {-1}) * tensor({1.0, -2.0, 3.0})); }},
          {"prod", [](const Tensor& t) { return sum(prod(t, {-1}) * tensor({1.0, -2.0, 3.0})); }},
          {"amax",
           [](const Tensor& t) { return sum(amax(t, {0}) * tensor({1.0, 2.0, 3.0, 4.0})); }},
          {"std", [](const Tensor& t) { return sum(std(t, {1}, 1, true) * t); }},
          {"norm3", [](const Tensor& t) { return sum(norm(t, 3.0, {0})); }},
      },
      xs);
}

}  // namespace
}  // namespace ft

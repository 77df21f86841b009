// The vjp and jvp formulas of more_reduction_formulas.cc against independent oracles: float64
// central differences (GradCheck, JvpCheck, GradGradCheck; JvpCheck also checks the
// transposition <J v, w> = <v, J^T w> against the vjp), closed forms (ties, zeros, dropout's
// mask), jacfwd against jacrev, and loops of grad / jvp for vmap(grad) / vmap(jvp).
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "interpreters/grad/grad.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::Rand;
using testing::GradCheck;
using testing::JvpCheck;
using testing::GradGradCheck;

// Tangent: the forward-mode derivative of the one-output f at x along v.
Tensor Tangent(const TensorFn& f, const Tensor& x, const Tensor& v) {
  return jvp([&f](const TensorList& a) { return TensorList{f(a[0])}; }, {x}, {v}).tangents[0];
}

// Layouts: x itself, a non-contiguous copy (stride 2) and a transposed view with x's values
// and shape (the jvp formulas must not assume contiguous tangents or inputs).
std::vector<Tensor> Layouts(const Tensor& x) {
  std::vector<Tensor> out = {x, ::ft::testing::NonContiguousCopy(x)};
  if (x.dim() >= 2) out.push_back(transpose(contiguous(transpose(x, 0, -1)), 0, -1));
  return out;
}

// Broadcast: a [2, 3, 4] input expanded from [1, 3, 1] (stride 0; many ties, so only for ops
// that are smooth there).
Tensor Broadcast(uint64_t seed) { return expand(Rand({1, 3, 1}, seed, 0.5, 1.5), {2, 3, 4}); }

// The dim / keepdim combinations used for the reductions over a [2, 3, 4] input.
struct DimsCase {
  Shape dims;
  bool keepdim;
};
const std::vector<DimsCase>& Cases() {
  static const auto* cases =
      new std::vector<DimsCase>{{{}, false},   {{}, true},   {{0}, false},    {{1}, true},
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

// JvpCheckAll: JvpCheck of f at each of `inputs` (layouts of one tensor).
void JvpCheckAll(const TensorFnOfList& f, const std::vector<Tensor>& inputs, double tol = 1e-6) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE("layout " + std::to_string(i));
    EXPECT_TRUE(JvpCheck(f, {inputs[i]}, tol));
  }
}

TEST(MoreReductionGrad, ProdWithoutZeros) {
  Tensor x = Rand({2, 3, 4}, 1, 0.5, 1.5) * sign(Rand({2, 3, 4}, 2));  // negatives too
  std::vector<Tensor> inputs = Layouts(x);
  inputs.push_back(Broadcast(14));
  for (const DimsCase& c : Cases()) {
    SCOPED_TRACE(Describe(c));
    auto f = [&](const TensorList& a) { return prod(a[0], c.dims, c.keepdim); };
    EXPECT_TRUE(GradCheck(f, {x}));
    JvpCheckAll(f, inputs);
    EXPECT_TRUE(GradGradCheck(f, {x}));
  }
  auto all = [](const TensorList& a) { return prod(a[0]); };
  const Tensor s = scalar_tensor(-1.5, kFloat64);
  EXPECT_TRUE(GradCheck(all, {s}));
  EXPECT_TRUE(JvpCheck(all, {s}));
  EXPECT_TRUE(GradGradCheck(all, {s}));
}

TEST(MoreReductionGrad, ProdWithZeros) {
  // Row 0: no zero; row 1: one zero; row 2: two zeros; row 3: all zeros.
  Tensor x = tensor({2.0, -3.0, 0.5, 1.5, 0.0, -2.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0}, {4, 3});
  const std::vector<TensorFnOfList> fns = {
      [](const TensorList& a) { return prod(a[0], {1}); },
      [](const TensorList& a) { return prod(a[0], {-1}, true); },
      [](const TensorList& a) { return prod(a[0], {0}); },
      [](const TensorList& a) { return prod(a[0]); },
  };
  for (size_t i = 0; i < fns.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(GradCheck(fns[i], {x}));
    JvpCheckAll(fns[i], Layouts(x));
  }
  // Closed form for the product of a row: the product of the others.
  Tensor g = grad(TensorFn([](const Tensor& t) { return sum(prod(t, {1})); }))(x);
  EXPECT_TENSOR_NEAR(
      g, tensor({-1.5, 1.0, -6.0, 0.0, -3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, {4, 3}), 1e-14);
  // The same by forward mode along ones: per row, the sum of those products.
  EXPECT_TENSOR_NEAR(Tangent([](const Tensor& t) { return prod(t, {1}); }, x, ones_like(x)),
                     tensor({-6.5, -3.0, 0.0, 0.0}), 1e-14);
  // Second order (prod is a polynomial): the hessian-vector product through the formula
  // against central differences of the gradient.
  Tensor y = tensor({2.0, 0.0, -3.0});
  auto gfn = grad(TensorFn([](const Tensor& t) { return prod(t); }));
  Tensor h = grad(TensorFn([&](const Tensor& t) {
    return sum(gfn(t) * tensor({1.0, 2.0, 3.0}));
  }))(y);
  // d/dy_j sum_i v_i prod_{k != i} y_k = sum_{i != j} v_i prod_{k != i, j} y_k.
  const Tensor hv = tensor({2.0 * -3.0 + 3.0 * 0.0, 1.0 * -3.0 + 3.0 * 2.0, 1.0 * 0.0 + 2.0 * 2.0});
  EXPECT_TENSOR_NEAR(h, hv, 1e-14);
  // Forward-over-reverse gives the same product (the Hessian is symmetric).
  EXPECT_TENSOR_NEAR(Tangent(gfn, y, tensor({1.0, 2.0, 3.0})), hv, 1e-14);
}

TEST(MoreReductionGrad, AmaxAminWithoutTies) {
  Tensor x = Rand({2, 3, 4}, 3);
  for (const DimsCase& c : Cases()) {
    SCOPED_TRACE(Describe(c));
    auto fmax = [&](const TensorList& a) { return amax(a[0], c.dims, c.keepdim); };
    auto fmin = [&](const TensorList& a) { return amin(a[0], c.dims, c.keepdim); };
    EXPECT_TRUE(GradCheck(fmax, {x}));
    EXPECT_TRUE(GradCheck(fmin, {x}));
    JvpCheckAll(fmax, Layouts(x));
    JvpCheckAll(fmin, Layouts(x));
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
  // Forward mode at the ties: the mean of the tangents of the tied extremes.
  Tensor v = tensor({10.0, 20.0, 40.0, 1.0, 2.0, 6.0}, {2, 3});
  EXPECT_TENSOR_NEAR(Tangent([](const Tensor& t) { return amax(t, {1}); }, x, v),
                     tensor({30.0, 3.0}), 1e-14);
  EXPECT_TENSOR_NEAR(Tangent([](const Tensor& t) { return amax(t); }, x, v),
                     scalar_tensor(30.0, kFloat64), 1e-14);
  EXPECT_TENSOR_NEAR(Tangent([](const Tensor& t) { return amin(t, {0}, true); }, x, v),
                     tensor({10.0, 2.0, 6.0}, {1, 3}), 1e-14);
  // ... which is the transpose of the even split: jacfwd == jacrev at the ties.
  const std::vector<TensorFnOfList> fns = {
      [](const TensorList& a) { return amax(a[0], {1}); },
      [](const TensorList& a) { return amax(a[0]); },
      [](const TensorList& a) { return amin(a[0], {0}, true); },
      [](const TensorList& a) {
        return amin(a[0], {-1, 0});
      },
  };
  for (size_t i = 0; i < fns.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_TENSOR_NEAR(jacfwd(fns[i])({x})[0], jacrev(fns[i])({x})[0], 1e-15);
  }
}

TEST(MoreReductionGrad, VarAndStd) {
  Tensor x = Rand({2, 3, 4}, 4);
  std::vector<Tensor> var_inputs = Layouts(x);
  var_inputs.push_back(Broadcast(15));  // zero variance along the broadcast dims: still smooth
  for (int64_t correction : {0, 1}) {
    for (const DimsCase& c : Cases()) {
      SCOPED_TRACE(Describe(c) + " correction " + std::to_string(correction));
      auto fvar = [&](const TensorList& a) { return var(a[0], c.dims, correction, c.keepdim); };
      auto fstd = [&](const TensorList& a) { return std(a[0], c.dims, correction, c.keepdim); };
      EXPECT_TRUE(GradCheck(fvar, {x}));
      EXPECT_TRUE(GradCheck(fstd, {x}));
      JvpCheckAll(fvar, var_inputs);
      JvpCheckAll(fstd, Layouts(x));
      EXPECT_TRUE(GradGradCheck(fvar, {x}));
      EXPECT_TRUE(GradGradCheck(fstd, {x}));
    }
  }
  // A zero standard deviation gives a zero gradient and a zero tangent (PyTorch).
  Tensor flat = full({3}, 2.0, kFloat64);
  EXPECT_TENSOR_EQ(grad(TensorFn([](const Tensor& t) { return std(t); }))(flat),
                   zeros({3}, kFloat64));
  EXPECT_TENSOR_EQ(Tangent([](const Tensor& t) { return std(t); }, flat, tensor({1.0, -2.0, 4.0})),
                   scalar_tensor(0.0, kFloat64));
  // Closed form: d var(x) along v = 2 <x - mean, v> / (N - 1); d std = d var / (2 std).
  Tensor a = tensor({1.0, 2.0, 6.0});    // mean 3, var 7
  Tensor va = tensor({1.0, 0.0, -1.0});  // <x - mean, v> = -2 - 3 = -5
  EXPECT_TENSOR_NEAR(Tangent([](const Tensor& t) { return var(t); }, a, va),
                     scalar_tensor(-5.0, kFloat64), 1e-14);
  EXPECT_TENSOR_NEAR(Tangent([](const Tensor& t) { return std(t); }, a, va),
                     scalar_tensor(-5.0 / (2.0 * std::sqrt(7.0)), kFloat64), 1e-14);
  // float32 in, float32 tangent out.
  EXPECT_TENSOR_NEAR(
      Tangent([](const Tensor& t) { return var(t); }, to(a, kFloat32), to(va, kFloat32)),
      scalar_tensor(-5.0, kFloat32), 1e-5);
}

TEST(MoreReductionGrad, Norm) {
  Tensor x = Rand({2, 3, 4}, 5);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Tensor> smooth_inputs = Layouts(x);
  smooth_inputs.push_back(Broadcast(16));
  for (double p : {1.0, 2.0, 3.0, 1.5, 0.5, inf, -inf}) {
    for (const DimsCase& c : Cases()) {
      SCOPED_TRACE(Describe(c) + " p " + std::to_string(p));
      auto f = [&](const TensorList& a) { return norm(a[0], p, c.dims, c.keepdim); };
      EXPECT_TRUE(GradCheck(f, {x}, 1e-5));
      const bool smooth = p == 2.0 || p == 3.0;
      JvpCheckAll(f, smooth ? smooth_inputs : Layouts(x), 1e-5);
      if (smooth) {
        EXPECT_TRUE(GradGradCheck(f, {x}));
      }
    }
  }
  // p = 0 counts nonzeros: zero gradient and zero tangent.
  EXPECT_TENSOR_EQ(grad(TensorFn([](const Tensor& t) { return norm(t, 0.0); }))(x),
                   zeros({2, 3, 4}, kFloat64));
  EXPECT_TENSOR_EQ(Tangent([](const Tensor& t) { return norm(t, 0.0); }, x, ones_like(x)),
                   scalar_tensor(0.0, kFloat64));
  // A zero norm gives a zero gradient and a zero tangent for every p.
  for (double p : {1.0, 2.0, 3.0, 0.5, inf}) {
    SCOPED_TRACE(p);
    Tensor z = zeros({2, 2}, kFloat64);
    Tensor g = grad(TensorFn([p](const Tensor& t) { return sum(norm(t, p, {1})); }))(z);
    EXPECT_TENSOR_EQ(g, zeros({2, 2}, kFloat64));
    EXPECT_TENSOR_EQ(Tangent([p](const Tensor& t) { return norm(t, p, {1}); }, z, ones_like(z)),
                     zeros({2}, kFloat64));
  }
  // Closed form: 2-norm gradient is x / |x|; inf-norm with a tie in |x| splits evenly.
  Tensor v = tensor({3.0, -4.0});
  EXPECT_TENSOR_NEAR(grad(TensorFn([](const Tensor& t) { return norm(t); }))(v),
                     tensor({0.6, -0.8}), 1e-15);
  Tensor tie = tensor({-2.0, 1.0, 2.0});
  EXPECT_TENSOR_NEAR(grad(TensorFn([inf](const Tensor& t) { return norm(t, inf); }))(tie),
                     tensor({-0.5, 0.0, 0.5}), 1e-15);
  // ... and their tangents: <x, t> / |x|, and the mean of sign(x) t over the tie.
  EXPECT_TENSOR_NEAR(Tangent([](const Tensor& t) { return norm(t); }, v, tensor({1.0, 1.0})),
                     scalar_tensor(-0.2, kFloat64), 1e-15);
  EXPECT_TENSOR_NEAR(
      Tangent([inf](const Tensor& t) { return norm(t, inf); }, tie, tensor({1.0, 5.0, 3.0})),
      scalar_tensor(1.0, kFloat64), 1e-15);
}

TEST(MoreReductionGrad, Cumsum) {
  Tensor x = Rand({2, 3, 4}, 6);
  std::vector<Tensor> inputs = Layouts(x);
  inputs.push_back(Broadcast(17));
  for (int64_t dim : {0, 1, 2, -1, -2, -3}) {
    SCOPED_TRACE(dim);
    auto f = [dim](const TensorList& a) { return cumsum(a[0], dim); };
    EXPECT_TRUE(GradCheck(f, {x}));
    JvpCheckAll(f, inputs);
    EXPECT_TRUE(
        GradGradCheck([dim](const TensorList& a) { return square(cumsum(a[0], dim)); }, {x}));
  }
  auto f0 = [](const TensorList& a) { return cumsum(a[0], 0); };
  EXPECT_TRUE(GradCheck(f0, {scalar_tensor(0.5, kFloat64)}));
  EXPECT_TRUE(JvpCheck(f0, {scalar_tensor(0.5, kFloat64)}));
  // Closed form: d sum(cumsum(x)) / dx_i = n - i; the tangent is the running sum of t.
  EXPECT_TENSOR_EQ(
      grad(TensorFn([](const Tensor& t) { return sum(cumsum(t, 0)); }))(tensor({1.0, 2.0, 3.0})),
      tensor({3.0, 2.0, 1.0}));
  EXPECT_TENSOR_EQ(Tangent([](const Tensor& t) { return cumsum(t, 0); }, tensor({1.0, 2.0, 3.0}),
                           tensor({1.0, 2.0, 3.0})),
                   tensor({1.0, 3.0, 6.0}));
}

// Every derivative of a product is a product of some of its factors: the fourth derivative
// of x0 x1 x2 x3 is 1 where i, j, k, l are distinct and 0 elsewhere, the third the remaining
// factor. Computed through prod's formula (prefix and suffix cumprods, no division) they
// are exact, zeros of x included, in float32 as in float64 (a formula dividing by x, or
// branching on the number of zeros, is exact at first order only).
TEST(MoreReductionJvp, ProdDerivativesAreExactAtEveryOrder) {
  for (DType dtype : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dtype));
    const std::vector<double> v = {2.0, 0.0, -3.0, 0.0};
    const Tensor x = to(tensor(v), dtype);
    using Fn = std::function<Tensor(const TensorList&)>;
    const Fn p = [](const TensorList& a) { return prod(a[0]); };
    const Fn first = [p](const TensorList& a) { return jacrev(p)(a)[0]; };
    const Fn second = [first](const TensorList& a) { return jacfwd(first)(a)[0]; };
    const Fn third_fn = [second](const TensorList& a) { return jacfwd(second)(a)[0]; };
    const TensorListFn third = jacfwd(second);
    const TensorListFn fourth = jacfwd(third_fn);
    std::vector<double> want3(64, 0.0), want4(256, 0.0);
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        for (int k = 0; k < 4; ++k) {
          if (i == j || j == k || i == k) continue;
          want3[static_cast<size_t>(16 * i + 4 * j + k)] = v[static_cast<size_t>(6 - i - j - k)];
          for (int l = 0; l < 4; ++l) {
            if (l != i && l != j && l != k) want4[static_cast<size_t>(64 * i + 16 * j + 4 * k + l)] = 1.0;
          }
        }
      }
    }
    EXPECT_TENSOR_EQ(third({x})[0], to(tensor(want3, {4, 4, 4}), dtype));
    EXPECT_TENSOR_EQ(fourth({x})[0], to(tensor(want4, {4, 4, 4, 4}), dtype));
    // Over two of three dims, with keepdim: the same products per slice.
    const Tensor m = to(tensor({0.0, 2.0, 0.0, -1.5, 3.0, 0.5}, {2, 1, 3}), dtype);
    const Tensor h = hessian([](const TensorList& a) { return sum(prod(a[0], {0, 2}, true)); })({m})[0];
    std::vector<double> want_h(36, 0.0);
    const std::vector<double> mv = {0.0, 2.0, 0.0, -1.5, 3.0, 0.5};
    for (int i = 0; i < 6; ++i) {
      for (int j = 0; j < 6; ++j) {
        if (i == j) continue;
        double others = 1.0;
        for (int k = 0; k < 6; ++k) {
          if (k != i && k != j) others *= mv[static_cast<size_t>(k)];
        }
        want_h[static_cast<size_t>(6 * i + j)] = others;
      }
    }
    EXPECT_TENSOR_EQ(h, to(tensor(want_h, {2, 1, 3, 2, 1, 3}), dtype));
  }
}

TEST(MoreReductionGrad, Cumprod) {
  const Tensor x = Rand({2, 3, 4}, 8, -1.5, 1.5);
  // Exact zeros: the derivatives are polynomials, so differences are exact there too.
  const Tensor z = tensor({0.5, 0.0, 2.0, -1.0, 0.0, 0.0, 1.5, -2.0, 0.0, 3.0, 1.0, 0.0}, {3, 4});
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(dim);
    auto f = [dim](const TensorList& a) { return cumprod(a[0], dim); };
    EXPECT_TRUE(GradCheck(f, {x}));
    JvpCheckAll(f, Layouts(x));
    EXPECT_TRUE(
        GradGradCheck([dim](const TensorList& a) { return square(cumprod(a[0], dim)); }, {x}));
  }
  for (int64_t dim : {0, 1}) {
    auto f = [dim](const TensorList& a) { return cumprod(a[0], dim); };
    EXPECT_TRUE(GradCheck(f, {z}));
    EXPECT_TRUE(JvpCheck(f, {z}));
    EXPECT_TRUE(GradGradCheck(f, {z}));
  }
  EXPECT_TRUE(GradCheck([](const TensorList& a) { return cumprod(a[0], 0); },
                        {scalar_tensor(0.5, kFloat64)}));
  // Closed form: sum(cumprod(x)) = x0 + x0 x1 + x0 x1 x2, at x = [2, 0, 3]: the gradient is
  // [1 + x1 + x1 x2, x0 + x0 x2, x0 x1] = [1, 8, 0]; the tangent along t is
  // [t0, t0 x1 + x0 t1, ...] = [1, 2, 6] for t = [1, 1, 1].
  EXPECT_TENSOR_EQ(
      grad(TensorFn([](const Tensor& t) { return sum(cumprod(t, 0)); }))(tensor({2.0, 0.0, 3.0})),
      tensor({1.0, 8.0, 0.0}));
  EXPECT_TENSOR_EQ(Tangent([](const Tensor& t) { return cumprod(t, 0); }, tensor({2.0, 0.0, 3.0}),
                           tensor({1.0, 1.0, 1.0})),
                   tensor({1.0, 2.0, 6.0}));
  // A size-0 scanned dim: empty gradients, no error.
  EXPECT_EQ(grad(TensorFn([](const Tensor& t) { return sum(cumprod(t, 1)); }))(zeros({2, 0}, kFloat64))
                .sizes(),
            Shape({2, 0}));
}

TEST(MoreReductionGrad, Logcumsumexp) {
  const Tensor x = Rand({2, 3, 4}, 9, -2.0, 2.0);
  for (int64_t dim : {0, 1, 2, -1}) {
    SCOPED_TRACE(dim);
    auto f = [dim](const TensorList& a) { return logcumsumexp(a[0], dim); };
    EXPECT_TRUE(GradCheck(f, {x}));
    JvpCheckAll(f, Layouts(x));
    EXPECT_TRUE(GradGradCheck(
        [dim](const TensorList& a) { return square(logcumsumexp(a[0], dim)); }, {x}));
  }
  // Huge values: logcumsumexp(x - c) = logcumsumexp(x) - c, so the derivatives at x and at
  // x - 1000 agree, and both are finite (a formula through exp(x) would overflow).
  const Tensor small = Rand({5}, 10, -1.0, 1.0);
  const Tensor big = small + 1000.0;
  auto g = [](const Tensor& t) { return sum(logcumsumexp(t, 0) * arange(1.0, 6.0, 1.0, kFloat64)); };
  EXPECT_TENSOR_NEAR(grad(TensorFn(g))(big), grad(TensorFn(g))(small), 1e-12);
  const std::function<Tensor(const TensorList&)> gl = [g](const TensorList& a) { return g(a[0]); };
  EXPECT_TENSOR_NEAR(hessian(gl)({big})[0], hessian(gl)({small})[0], 1e-12);
  // Closed form: d y_i / d x_j = softmax of the prefix x[0..i] at j.
  const Tensor jac = jacrev([](const TensorList& a) { return logcumsumexp(a[0], 0); })({small})[0];
  for (int64_t i = 0; i < 5; ++i) {
    const Tensor prefix = softmax(narrow(small, 0, 0, i + 1), 0);
    EXPECT_TENSOR_NEAR(narrow(select(jac, 0, i), 0, 0, i + 1), prefix, 1e-14);
    if (i < 4) {
      EXPECT_TENSOR_EQ(narrow(select(jac, 0, i), 0, i + 1, 4 - i), zeros({4 - i}, kFloat64));
    }
  }
}

TEST(MoreReductionGrad, LinearRecurrence) {
  struct Case {
    Shape a, b;
    int64_t dim;
  };
  for (const Case& c : std::vector<Case>{{{3, 4}, {3, 4}, 1},
                                         {{4}, {3, 4}, -1},
                                         {{3, 1}, {1, 4}, 0},
                                         {{3, 4}, {4}, 0},
                                         {{}, {5}, 0}}) {
    SCOPED_TRACE("a " + ShapeToString(c.a) + " b " + ShapeToString(c.b));
    const Tensor a = Rand(c.a, 11, -1.2, 1.2);
    const Tensor b = Rand(c.b, 12);
    const int64_t dim = c.dim;
    auto f = [dim](const TensorList& t) { return linear_recurrence(t[0], t[1], dim); };
    EXPECT_TRUE(GradCheck(f, {a, b}));
    EXPECT_TRUE(JvpCheck(f, {a, b}));
    EXPECT_TRUE(GradGradCheck(
        [dim](const TensorList& t) { return square(linear_recurrence(t[0], t[1], dim)); }, {a, b}));
  }
  // With a = 1 it is cumsum, and its transpose (the vjp) is the reversed cumsum.
  const Tensor g = Rand({6}, 13);
  const Tensor ones6 = ones({6}, kFloat64);
  const TensorList vj =
      vjp([](const TensorList& t) { return TensorList{linear_recurrence(t[0], t[1], 0)}; },
          {ones6, Rand({6}, 14)})
          .vjp_fn({g});
  EXPECT_TENSOR_NEAR(vj[1], flip(cumsum(flip(g, {0}), 0), {0}), 1e-14);
}

TEST(MoreReductionGrad, SumToSize) {
  Tensor x = Rand({2, 3, 4}, 7);
  std::vector<Tensor> inputs = Layouts(x);
  inputs.push_back(Broadcast(18));
  for (const Shape& size : std::vector<Shape>{{3, 4}, {3, 1}, {1, 4}, {2, 1, 4}, {1}, {2, 3, 4}}) {
    SCOPED_TRACE(size.size());
    auto f = [&](const TensorList& a) { return sum_to_size(a[0], size); };
    EXPECT_TRUE(GradCheck(f, {x}));
    JvpCheckAll(f, inputs);
  }
}

TEST(MoreReductionGrad, SortAndTopk) {
  Tensor x = Rand({2, 3, 4}, 8);
  for (int64_t dim : {0, 1, 2, -1, -2}) {
    for (bool descending : {false, true}) {
      SCOPED_TRACE(std::to_string(dim) + (descending ? " descending" : " ascending"));
      auto f = [&](const TensorList& a) { return std::get<0>(sort(a[0], dim, descending)); };
      EXPECT_TRUE(GradCheck(f, {x}));
      JvpCheckAll(f, Layouts(x));
    }
  }
  for (int64_t dim : {0, 1, -1}) {
    for (bool largest : {true, false}) {
      for (bool sorted : {true, false}) {
        SCOPED_TRACE(std::to_string(dim) + " largest " + std::to_string(largest) + " sorted " +
                     std::to_string(sorted));
        auto f = [&](const TensorList& a) {
          return std::get<0>(topk(a[0], 2, dim, largest, sorted));
        };
        EXPECT_TRUE(GradCheck(f, {x}));
        JvpCheckAll(f, Layouts(x));
      }
    }
  }
  auto top4 = [](const TensorList& a) { return std::get<0>(topk(a[0], 4, -1)); };
  EXPECT_TRUE(GradCheck(top4, {x}));
  JvpCheckAll(top4, Layouts(x));
  auto sort0 = [](const TensorList& a) { return std::get<0>(sort(a[0], 0)); };
  EXPECT_TRUE(GradCheck(sort0, {scalar_tensor(0.25, kFloat64)}));
  EXPECT_TRUE(JvpCheck(sort0, {scalar_tensor(0.25, kFloat64)}));
  // Closed form: the top-2 of [0.1, 0.9, 0.5, 0.7] get the gradient; the tangents of the
  // values are t read at the indices.
  Tensor v = tensor({0.1, 0.9, 0.5, 0.7});
  EXPECT_TENSOR_EQ(grad(TensorFn([](const Tensor& t) { return sum(std::get<0>(topk(t, 2))); }))(v),
                   tensor({0.0, 1.0, 0.0, 1.0}));
  const Tensor t = tensor({1.0, 2.0, 3.0, 4.0});
  EXPECT_TENSOR_EQ(Tangent([](const Tensor& a) { return std::get<0>(topk(a, 2)); }, v, t),
                   tensor({2.0, 4.0}));
  EXPECT_TENSOR_EQ(Tangent([](const Tensor& a) { return std::get<0>(sort(a)); }, v, t),
                   tensor({1.0, 3.0, 4.0, 2.0}));
  // The int64 indices carry no tangent: jvp reports zeros of their dtype.
  const JvpResult r = jvp(
      [](const TensorList& a) {
        auto [values, indices] = topk(a[0], 3, 0, false);
        return TensorList{values, indices};
      },
      {v}, {t});
  EXPECT_TENSOR_EQ(r.outputs[1], tensor({0, 2, 3}, {3}));
  EXPECT_TENSOR_EQ(r.tangents[0], tensor({1.0, 3.0, 4.0}));
  EXPECT_TENSOR_EQ(r.tangents[1], zeros({3}, kInt64));
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
    auto drop = [p](const TensorList& a) {
      Generator gen(77);
      return dropout(a[0], p, true, &gen);
    };
    EXPECT_TRUE(GradCheck(drop, {x}));
    JvpCheckAll(drop, Layouts(x));
    // The tangent uses the same mask and scale.
    EXPECT_TENSOR_NEAR(Tangent([&](const Tensor& t) { return drop({t}); }, x, w),
                       w * mask / (1.0 - p), 1e-14);
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
  auto tangent_with = [&](double p, bool train) {
    return Tangent(
        [p, train](const Tensor& t) {
          Generator gen(3);
          return dropout(t, p, train, &gen);
        },
        x, w);
  };
  EXPECT_TENSOR_EQ(tangent_with(0.5, false), w);
  EXPECT_TENSOR_EQ(tangent_with(0.0, true), w);
  EXPECT_TENSOR_EQ(tangent_with(1.0, true), zeros({4, 5}, kFloat64));
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
  // Forward mode: the samples carry no tangent either.
  Tensor v = Rand({3, 4}, 19);
  EXPECT_TENSOR_EQ(Tangent(
                       [](const Tensor& t) {
                         Generator g(5);
                         return t * bernoulli(sigmoid(t), &g);
                       },
                       x, v),
                   v * b);
}

// jacfwd (vmap of jvp over a basis) against jacrev (vmap of vjp), through zeros and ties.
TEST(MoreReductionJvp, JacfwdMatchesJacrev) {
  const Tensor x = Rand({3, 4}, 20);
  const Tensor with_zeros =
      tensor({2.0, -3.0, 0.5, 0.0, 1.5, 0.0, -2.0, 1.0, 0.0, 4.0, 0.0, 0.5}, {3, 4});
  const Tensor ties =
      tensor({1.0, 3.0, 3.0, -3.0, 2.0, 2.0, 2.0, 2.0, 0.5, -1.0, 0.5, 1.0}, {3, 4});
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<const char*, TensorFnOfList>> fns = {
      {"prod", [](const TensorList& a) { return prod(a[0], {1}); }},
      {"prod_all", [](const TensorList& a) { return prod(a[0]); }},
      {"amax", [](const TensorList& a) { return amax(a[0], {-1}, true); }},
      {"amin", [](const TensorList& a) { return amin(a[0], {0}); }},
      {"var", [](const TensorList& a) { return var(a[0], {0}); }},
      {"std", [](const TensorList& a) { return std(a[0], {1}, 0, true); }},
      {"norm3", [](const TensorList& a) { return norm(a[0], 3.0, {1}); }},
      {"norminf", [inf](const TensorList& a) { return norm(a[0], inf, {1}); }},
      {"cumsum", [](const TensorList& a) { return cumsum(a[0], 1); }},
      {"sum_to_size",
       [](const TensorList& a) {
         return sum_to_size(a[0], {1, 4});
       }},
      {"sort", [](const TensorList& a) { return std::get<0>(sort(a[0], 0, true)); }},
      {"topk", [](const TensorList& a) { return std::get<0>(topk(a[0], 3, 1, false)); }},
  };
  for (const auto& [name, f] : fns) {
    for (const Tensor& in : {x, with_zeros, ties}) {
      SCOPED_TRACE(name);
      try {
        EXPECT_TENSOR_NEAR(jacfwd(f)({in})[0], jacrev(f)({in})[0], 1e-13);
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    }
  }
}

// hessian (jacfwd of jacrev) of prod through a zero, in closed form: H_jk = prod_{i != j, k}
// y_i off the diagonal, 0 on it.
TEST(MoreReductionJvp, HessianOfProdThroughAZero) {
  const Tensor y = tensor({2.0, 0.0, -3.0});
  const Tensor h = hessian([](const TensorList& a) { return prod(a[0]); })({y})[0];
  EXPECT_TENSOR_NEAR(h, tensor({0.0, -3.0, 0.0, -3.0, 0.0, 2.0, 0.0, 2.0, 0.0}, {3, 3}), 1e-14);
}

// LoopJvp: the vmap(jvp) oracle: a stack of jvp tangents, one per example; a nullopt dim
// shares that input across the examples.
Tensor LoopJvp(const TensorFn& f, const Tensor& xs, const Tensor& ts, std::optional<int64_t> xd,
               std::optional<int64_t> td, int64_t n) {
  TensorList per;
  for (int64_t i = 0; i < n; ++i) {
    per.push_back(Tangent(f, xd ? select(xs, *xd, i) : xs, td ? select(ts, *td, i) : ts));
  }
  return stack(per, 0);
}

// CheckVmapOfJvp: vmap over (primal, tangent) of f's jvp against LoopJvp, for in_dims 0,
// last and none, batch sizes 1 and 4.
void CheckVmapOfJvp(const std::vector<std::pair<const char*, TensorFn>>& fns, const Tensor& x,
                    const Tensor& t) {
  const int64_t last = x.dim();
  const std::vector<std::pair<std::optional<int64_t>, std::optional<int64_t>>> in_dims = {
      {0, 0}, {0, std::nullopt}, {std::nullopt, 0}, {last, last}, {last, 0}};
  for (const auto& [name, f] : fns) {
    for (int64_t n : {1, 4}) {
      for (const auto& [xd, td] : in_dims) {
        SCOPED_TRACE(std::string(name) + " batch " + std::to_string(n) + " in_dims " +
                     (xd ? std::to_string(*xd) : "none") + ", " +
                     (td ? std::to_string(*td) : "none"));
        // Batched inputs: n perturbed copies of x / t stacked at the batch dim.
        TensorList xs_list, ts_list;
        for (int64_t i = 0; i < n; ++i) {
          xs_list.push_back(x * (1.0 + 0.1 * static_cast<double>(i)));
          ts_list.push_back(t + static_cast<double>(i));
        }
        const Tensor xs = xd ? stack(xs_list, *xd) : x;
        const Tensor ts = td ? stack(ts_list, *td) : t;
        TensorListFn jf = [f = f](const TensorList& a) {
          return TensorList{Tangent(f, a[0], a[1])};
        };
        try {
          Tensor batched = vmap(jf, Dims{xd, td})({xs, ts})[0];
          EXPECT_TENSOR_NEAR(batched, LoopJvp(f, xs, ts, xd, td, n), 1e-12);
        } catch (const std::exception& e) {
          ADD_FAILURE() << e.what();
        }
      }
    }
  }
}

TEST(MoreReductionJvp, VmapOfJvpMatchesLoop) {
  const Tensor x = Rand({3, 4}, 21, 0.5, 1.5) * sign(Rand({3, 4}, 22));
  const Tensor t = Rand({3, 4}, 23);
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<const char*, TensorFn>> fns = {
      {"prod", [](const Tensor& a) { return prod(a, {-1}); }},
      {"prod_all", [](const Tensor& a) { return prod(a); }},
      {"amax", [](const Tensor& a) { return amax(a, {0}); }},
      {"amin", [](const Tensor& a) { return amin(a, {-1}, true); }},
      {"var", [](const Tensor& a) { return var(a, {1}, 0); }},
      {"std",
       [](const Tensor& a) {
         return std(a, {0, 1}, 1, true);
       }},
      {"norm3", [](const Tensor& a) { return norm(a, 3.0, {0}); }},
      {"norminf", [inf](const Tensor& a) { return norm(a, inf); }},
      {"cumsum", [](const Tensor& a) { return cumsum(a, 1); }},
      {"sum_to_size",
       [](const Tensor& a) {
         return sum_to_size(a, {3, 1});
       }},
      {"sort", [](const Tensor& a) { return std::get<0>(sort(a, 0)); }},
      {"topk", [](const Tensor& a) { return std::get<0>(topk(a, 2, -1)); }},
  };
  CheckVmapOfJvp(fns, x, t);
  // prod with zeros in the input.
  const Tensor zs = where(
      tensor({false, true, false, false, true, true, false, false, true, true, true, true}, {3, 4}),
      0.0, x);
  CheckVmapOfJvp({fns[0], fns[1]}, zs, t);
}

// CheckVmapOfGrad: vmap(grad(f)) against a loop of grad(f), for each named f.
void CheckVmapOfGrad(const std::vector<std::pair<const char*, TensorFn>>& fns, const Tensor& xs) {
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
          {"sum",
           [](const Tensor& t) {
             return sum(sum(t, {-1}) * tensor({1.0, -2.0, 3.0}));
           }},
          {"prod",
           [](const Tensor& t) {
             return sum(prod(t, {-1}) * tensor({1.0, -2.0, 3.0}));
           }},
          {"amax",
           [](const Tensor& t) {
             return sum(amax(t, {0}) * tensor({1.0, 2.0, 3.0, 4.0}));
           }},
          {"std", [](const Tensor& t) { return sum(std(t, {1}, 1, true) * t); }},
          {"norm3", [](const Tensor& t) { return sum(norm(t, 3.0, {0})); }},
      },
      xs);
}

}  // namespace
}  // namespace ft

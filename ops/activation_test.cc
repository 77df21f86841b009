// Activations: values and derivatives against PyTorch fixtures (tools/torch_fixtures/
// activation.py) and closed forms, dtypes, shapes, layouts, kinks and errors.
#include "ops/activation.h"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interop/npy.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jvp/jvp.h"
#include "ops/ops.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor Fixture(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string root = srcdir != nullptr ? std::string(srcdir) + "/" +
                                                   (workspace != nullptr ? workspace : "ft") + "/"
                                             : "";
  return LoadNpy(root + "tests/fixtures/torch/activation/" + name + ".npy");
}

using Fn = std::function<Tensor(const Tensor&)>;

struct FixtureCase {
  const char* name;
  Fn fn;
  double tol = 1e-12;
};

std::vector<FixtureCase> FixtureCases() {
  return {
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, "tanh"); }},
      {"silu", [](const Tensor& x) { return silu(x); }},
      {"mish", [](const Tensor& x) { return mish(x); }},
      {"softplus", [](const Tensor& x) { return softplus(x); }},
      {"softplus_beta", [](const Tensor& x) { return softplus(x, 2.0, 3.0); }},
      {"elu", [](const Tensor& x) { return elu(x); }},
      {"elu_alpha", [](const Tensor& x) { return elu(x, 0.5); }},
      {"selu", [](const Tensor& x) { return selu(x); }},
      {"celu", [](const Tensor& x) { return celu(x); }},
      {"celu_alpha", [](const Tensor& x) { return celu(x, 2.5); }},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x); }},
      {"leaky_relu_slope", [](const Tensor& x) { return leaky_relu(x, 0.2); }},
      {"hardtanh", [](const Tensor& x) { return hardtanh(x); }},
      {"hardtanh_bounds", [](const Tensor& x) { return hardtanh(x, -0.5, 1.5); }},
      {"hardswish", [](const Tensor& x) { return hardswish(x); }},
      {"hardsigmoid", [](const Tensor& x) { return hardsigmoid(x); }},
      {"logsigmoid", [](const Tensor& x) { return logsigmoid(x); }},
      {"softsign", [](const Tensor& x) { return softsign(x); }},
      {"erf", [](const Tensor& x) { return erf(x); }},
      {"erfc", [](const Tensor& x) { return erfc(x); }},
      {"erfinv", [](const Tensor& x) { return erfinv(x); }},
      {"lgamma", [](const Tensor& x) { return lgamma(x); }},
      {"digamma", [](const Tensor& x) { return digamma(x); }},
      // torch 1.13's trigamma (polygamma(1, .)) sums 6 terms and a short asymptotic series:
      // good to ~1e-9 relative; ft sums the Hurwitz zeta series to ~1e-16.
      {"polygamma1", [](const Tensor& x) { return polygamma(1, x); }, 1e-8},
      {"polygamma2", [](const Tensor& x) { return polygamma(2, x); }},
      {"polygamma3", [](const Tensor& x) { return polygamma(3, x); }},
  };
}

// Relative-and-absolute comparison: |a - e| <= tol (1 + |e|) elementwise.
::testing::AssertionResult RelNear(const Tensor& actual, const Tensor& expected, double tol) {
  const Tensor err = abs(actual - expected) / (abs(expected) + 1.0);
  const double worst = amax(err, {}, false).item<double>();
  if (worst <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "relative error " << worst << " > " << tol;
}

TEST(ActivationOps, MatchTorchValuesVjpAndJvp) {
  for (const FixtureCase& c : FixtureCases()) {
    SCOPED_TRACE(c.name);
    const std::string n = c.name;
    const Tensor x = Fixture(n + ".x");
    EXPECT_TRUE(RelNear(c.fn(x), Fixture(n + ".y"), c.tol));
    const TensorListFn f = [&c](const TensorList& a) { return TensorList{c.fn(a[0])}; };
    const VjpResult r = vjp(f, {x});
    // The polygammas' vjps are the next order's values: torch's trigamma bounds them too.
    // torch's hardsigmoid backward multiplies by a float32 1/6 (~5e-9 relative off).
    const double dtol = n == "digamma" || n == "polygamma1" || n == "hardsigmoid" ? 1e-8 : c.tol;
    EXPECT_TRUE(RelNear(r.vjp_fn({Fixture(n + ".gy")})[0], Fixture(n + ".gx"), dtol));
    if (n != "hardsigmoid") {
      const JvpResult j = jvp(f, {x}, {Fixture(n + ".tx")});
      EXPECT_TRUE(RelNear(j.tangents[0], Fixture(n + ".ty"), dtol));
    }
  }
}

TEST(ActivationOps, Float32MatchesFloat64) {
  for (const FixtureCase& c : FixtureCases()) {
    SCOPED_TRACE(c.name);
    const Tensor x = Fixture(std::string(c.name) + ".x");
    const Tensor y32 = c.fn(to(x, kFloat32));
    EXPECT_EQ(y32.dtype(), kFloat32);
    EXPECT_TRUE(RelNear(to(y32, kFloat64), c.fn(to(to(x, kFloat32), kFloat64)), 1e-5));
  }
}

TEST(ActivationOps, Int64ComputesInFloat32AndBoolThrows) {
  const Tensor i = tensor(std::vector<int64_t>{-2, 1, 3}, {3});
  const Tensor f = tensor(std::vector<float>{-2, 1, 3}, {3});
  const Tensor b = gt(i, 0);
  for (const FixtureCase& c : FixtureCases()) {
    const std::string n = c.name;
    SCOPED_TRACE(n);
    EXPECT_FT_ERROR(c.fn(b), "not supported for bool");
    // erfinv is NaN outside [-1, 1]; the gamma family has poles at -2.
    if (n == "erfinv" || n == "lgamma" || n == "digamma" || n.rfind("polygamma", 0) == 0) {
      EXPECT_EQ(c.fn(i).dtype(), kFloat32);
      continue;
    }
    const Tensor y = c.fn(i);
    EXPECT_EQ(y.dtype(), kFloat32);
    EXPECT_TENSOR_NEAR(y, c.fn(f), 0.0);
  }
  EXPECT_EQ(erfinv(tensor(std::vector<int64_t>{0}, {1})).dtype(), kFloat32);
  EXPECT_FT_ERROR(gelu(b), "gelu: not supported for bool");
  EXPECT_FT_ERROR(leaky_relu(b), "leaky_relu: not supported for bool");
  EXPECT_FT_ERROR(polygamma(1, b), "polygamma: not supported for bool");
}

TEST(ActivationOps, ShapesLayoutsAndEmpty) {
  for (const FixtureCase& c : FixtureCases()) {
    SCOPED_TRACE(c.name);
    const Tensor x = Fixture(std::string(c.name) + ".x");  // [3, 4]
    const Tensor y = c.fn(x);
    // Non-contiguous and transposed inputs give the same values.
    EXPECT_TENSOR_NEAR(c.fn(testing::NonContiguousCopy(x)), y, 0.0);
    EXPECT_TENSOR_NEAR(transpose(c.fn(transpose(x, 0, 1)), 0, 1), y, 0.0);
    // Size-0 and size-1 dims, and rank 0.
    EXPECT_EQ(c.fn(zeros({0, 3}, kFloat64)).sizes(), (IntArrayRef{0, 3}));
    EXPECT_EQ(c.fn(zeros({1, 0}, kFloat32)).dtype(), kFloat32);
    const Tensor row = narrow(x, 0, 1, 1);
    EXPECT_TENSOR_NEAR(c.fn(row), narrow(y, 0, 1, 1), 0.0);
    const Tensor s = select(select(x, 0, 2), 0, 3);
    EXPECT_EQ(c.fn(s).dim(), 0);
    EXPECT_TENSOR_NEAR(c.fn(s), select(select(y, 0, 2), 0, 3), 0.0);
    // An expanded (stride-0) input.
    EXPECT_TENSOR_NEAR(c.fn(expand(row, {3, 4})), expand(narrow(y, 0, 1, 1), {3, 4}), 0.0);
  }
}

double At(const Tensor& t) { return t.item<double>(); }
Tensor S(double v) { return scalar_tensor(v, kFloat64); }

TEST(ActivationOps, ClosedFormsAndSpecialValues) {
  const double pi = 3.14159265358979323846, euler = 0.57721566490153286061;
  EXPECT_NEAR(At(gelu(S(1.0))), 0.5 * (1.0 + std::erf(1.0 / std::sqrt(2.0))), 1e-15);
  EXPECT_EQ(At(gelu(S(-40.0))), 0.0);
  EXPECT_EQ(At(softplus(S(1000.0))), 1000.0);
  EXPECT_NEAR(At(softplus(S(-1000.0))), 0.0, 1e-300);
  EXPECT_NEAR(At(softplus(S(2.0), 2.0, 3.0)), 2.0, 0.0);  // beta x = 4 > 3: x itself
  EXPECT_NEAR(At(softplus(S(1.0), 2.0, 3.0)), std::log1p(std::exp(2.0)) / 2.0, 1e-15);
  EXPECT_EQ(At(logsigmoid(S(-1000.0))), -1000.0);
  EXPECT_EQ(At(logsigmoid(S(1000.0))), 0.0);
  EXPECT_EQ(At(silu(S(-1000.0))), 0.0);
  EXPECT_EQ(At(mish(S(1000.0))), 1000.0);
  EXPECT_NEAR(At(selu(S(-kInf))), -1.0507009873554805 * 1.6732632423543772, 1e-15);
  EXPECT_NEAR(At(celu(S(-1.0), 2.0)), 2.0 * std::expm1(-0.5), 1e-15);
  EXPECT_NEAR(At(celu(S(-1.0), -2.0)), -2.0 * std::expm1(0.5), 1e-15);
  EXPECT_EQ(At(leaky_relu(S(-2.0), 0.1)), -0.2);
  EXPECT_EQ(At(hardtanh(S(3.0), 1.0, -1.0)), -1.0);  // min_val > max_val: max_val
  EXPECT_EQ(At(hardtanh(S(-3.0), 1.0, -1.0)), -1.0);
  EXPECT_EQ(At(hardswish(S(1.0))), 4.0 / 6.0);
  EXPECT_EQ(At(hardsigmoid(S(-4.0))), 0.0);
  EXPECT_EQ(At(softsign(S(-3.0))), -0.75);
  for (const FixtureCase& c : FixtureCases()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(std::isnan(At(c.fn(S(std::nan(""))))));
  }
  // erfinv: the inverse of erf, also near +-1; +-inf at +-1 and NaN outside.
  const Tensor y = tensor({-0.999999, -0.9, -0.3, 1e-10, 0.5, 0.7, 0.99, 1.0 - 1e-12}, {8});
  EXPECT_TRUE(RelNear(erf(erfinv(y)), y, 1e-15));
  EXPECT_TRUE(RelNear(erfc(erfinv(narrow(y, 0, 4, 4))), 1.0 - narrow(y, 0, 4, 4), 1e-12));
  EXPECT_EQ(At(erfinv(S(1.0))), kInf);
  EXPECT_EQ(At(erfinv(S(-1.0))), -kInf);
  EXPECT_TRUE(std::isnan(At(erfinv(S(1.5)))));
  EXPECT_TRUE(std::signbit(At(erfinv(S(-0.0)))));
  EXPECT_NEAR(At(erfc(S(10.0))), 2.088487583762545e-45, 1e-58);
  // Gamma family.
  EXPECT_NEAR(At(lgamma(S(0.5))), 0.5 * std::log(pi), 1e-15);
  EXPECT_EQ(At(lgamma(S(-2.0))), kInf);
  EXPECT_NEAR(At(digamma(S(1.0))), -euler, 1e-15);
  EXPECT_NEAR(At(digamma(S(0.5))), -euler - 2.0 * std::log(2.0), 1e-15);
  EXPECT_NEAR(At(digamma(S(-0.5))), -euler - 2.0 * std::log(2.0) + 2.0, 1e-14);
  EXPECT_NEAR(At(digamma(S(1e6))), std::log(1e6) - 0.5e-6, 1e-12);
  EXPECT_EQ(At(digamma(S(0.0))), -kInf);
  EXPECT_EQ(At(digamma(S(-0.0))), kInf);
  EXPECT_TRUE(std::isnan(At(digamma(S(-3.0)))));
  EXPECT_NEAR(At(polygamma(0, S(1.0))), -euler, 1e-15);
  EXPECT_NEAR(At(polygamma(1, S(1.0))), pi * pi / 6.0, 1e-15);
  EXPECT_NEAR(At(polygamma(1, S(0.5))), pi * pi / 2.0, 1e-14);
  EXPECT_NEAR(At(polygamma(2, S(1.0))), -2.0 * 1.2020569031595942854, 1e-14);
  EXPECT_NEAR(At(polygamma(3, S(1.0))), std::pow(pi, 4) / 15.0, 1e-13);
  // Reflection: psi1(x) + psi1(1 - x) = pi^2 / sin^2(pi x).
  EXPECT_NEAR(At(polygamma(1, S(-0.3)) + polygamma(1, S(1.3))),
              pi * pi / std::pow(std::sin(0.3 * pi), 2), 1e-12);
  EXPECT_EQ(At(polygamma(1, S(0.0))), kInf);
  EXPECT_EQ(At(polygamma(2, S(-2.0))), -kInf);  // (-1)^(n+1) inf at the poles, as torch
  EXPECT_EQ(At(polygamma(3, S(-0.0))), kInf);
}

// The derivative at x of f (through grad).
double D(const Fn& f, double x) { return At(grad(TensorFn(f))(S(x))); }

TEST(ActivationOps, DerivativesAtKinksFollowTorch) {
  EXPECT_EQ(D([](const Tensor& x) { return leaky_relu(x, 0.2); }, 0.0), 0.2);
  EXPECT_EQ(D([](const Tensor& x) { return elu(x, 0.5); }, 0.0), 0.5);
  EXPECT_EQ(D([](const Tensor& x) { return celu(x, 0.5); }, 0.0), 1.0);
  EXPECT_NEAR(D([](const Tensor& x) { return selu(x); }, 0.0),
              1.0507009873554805 * 1.6732632423543772, 1e-15);
  EXPECT_EQ(D([](const Tensor& x) { return hardtanh(x, -0.5, 1.5); }, -0.5), 0.0);
  EXPECT_EQ(D([](const Tensor& x) { return hardtanh(x, -0.5, 1.5); }, 1.5), 0.0);
  EXPECT_EQ(D([](const Tensor& x) { return hardtanh(x, -0.5, 1.5); }, 1.0), 1.0);
  EXPECT_EQ(D([](const Tensor& x) { return hardswish(x); }, -3.0), -0.5);
  EXPECT_EQ(D([](const Tensor& x) { return hardswish(x); }, 3.0), 1.5);
  EXPECT_EQ(D([](const Tensor& x) { return hardswish(x); }, 4.0), 1.0);
  EXPECT_EQ(D([](const Tensor& x) { return hardsigmoid(x); }, 3.0), 0.0);
  EXPECT_EQ(D([](const Tensor& x) { return hardsigmoid(x); }, 0.0), 1.0 / 6.0);
  EXPECT_EQ(D([](const Tensor& x) { return softplus(x, 2.0, 3.0); }, 2.0), 1.0);
  // Large positive x: the elu family's second derivative stays 0, not 0 * inf.
  const Fn d_elu = [](const Tensor& x) {
    return grad(TensorFn([](const Tensor& t) { return elu(t); }))(x);
  };
  EXPECT_EQ(D(d_elu, 1000.0), 0.0);
  EXPECT_EQ(D(d_elu, -1.0), std::exp(-1.0));
}

TEST(ActivationOps, HigherOrderSpecialFunctions) {
  // d/dx lgamma = digamma, d2 = trigamma, d3 = polygamma(2).
  const TensorFn d1 = grad(TensorFn([](const Tensor& x) { return lgamma(x); }));
  const TensorFn d2 = grad(d1);
  const TensorFn d3 = grad(d2);
  const Tensor x = S(1.7);
  EXPECT_NEAR(At(d1(x)), At(digamma(x)), 1e-15);
  EXPECT_NEAR(At(d2(x)), At(polygamma(1, x)), 1e-15);
  EXPECT_NEAR(At(d3(x)), At(polygamma(2, x)), 1e-15);
  // erfinv'(y) = sqrt(pi)/2 exp(erfinv(y)^2), and erfinv'' by the chain rule.
  const TensorFn e1 = grad(TensorFn([](const Tensor& t) { return erfinv(t); }));
  const double r = At(erfinv(S(0.4))), k = std::sqrt(3.14159265358979323846) / 2.0;
  EXPECT_NEAR(At(e1(S(0.4))), k * std::exp(r * r), 1e-14);
  EXPECT_NEAR(At(grad(e1)(S(0.4))), 2.0 * r * k * k * std::exp(2.0 * r * r), 1e-13);
}

// Found by nn_fuzzer (tests/fuzz/corpus/nn_fuzzer/regression-polygamma-far-negative): the
// Hurwitz zeta behind polygamma summed about -x terms for a negative x, so a float64 like
// -1e15 - 0.5 never returned. The reflection psi1(x) + psi1(1 - x) = pi^2 / sin^2(pi x) checks
// the values far left of 0.
TEST(ActivationOps, PolygammaFarLeftOfZeroIsFastAndExact) {
  const double pi2 = M_PI * M_PI;
  auto trigamma = [](double x) { return polygamma(1, tensor({x}, {1})).item<double>(); };
  EXPECT_NEAR(trigamma(-1e15 - 0.5), pi2, 1e-12);
  EXPECT_NEAR(trigamma(-10000.25), 2 * pi2 - trigamma(10001.25), 1e-9);
  EXPECT_NEAR(trigamma(-123456.75), 2 * pi2 - trigamma(123457.75), 1e-9);
  // polygamma(2, .) is odd in the same sense: psi2(x) - psi2(1 - x) = -2 pi^3 cos / sin^3.
  const double x = -20000.25;
  const double psi2 = polygamma(2, tensor({x}, {1})).item<double>();
  const double psi2_reflected = polygamma(2, tensor({1.0 - x}, {1})).item<double>();
  const double c = std::cos(M_PI * x), sn = std::sin(M_PI * x);
  EXPECT_NEAR(psi2 - psi2_reflected, -2.0 * pi2 * M_PI * c / (sn * sn * sn), 1e-7);
}

TEST(ActivationOps, Errors) {
  const Tensor x = tensor({0.5, -0.5}, {2});
  EXPECT_FT_ERROR(gelu(x, "exact"),
                  "gelu: approximate must be \"none\" or \"tanh\", got \"exact\"");
  EXPECT_FT_ERROR(celu(x, 0.0), "celu: alpha cannot be 0");
  EXPECT_FT_ERROR(polygamma(-1, x), "polygamma: n must be a non-negative integer, got n = -1");
}

}  // namespace
}  // namespace ft

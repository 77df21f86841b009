#include "ops/unary.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interop/npy.h"
#include "interpreters/vmap/vmap.h"
#include "ops/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using UnaryFn = Tensor (*)(const Tensor&);

struct UnaryCase {
  const char* name;
  UnaryFn op;
  double (*reference)(double);
  std::vector<double> inputs;  // inside the op's domain
};

double RefSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double RefRelu(double x) { return x > 0 ? x : 0.0; }
double RefSign(double x) { return (x > 0) - (x < 0); }
double RefRsqrt(double x) { return 1.0 / std::sqrt(x); }
double RefSquare(double x) { return x * x; }
double RefReciprocal(double x) { return 1.0 / x; }
double RefNeg(double x) { return -x; }
double RefRound(double x) { return std::nearbyint(x); }

const std::vector<double> kAny = {-2.5, -1.0, -0.5, 0.0, 0.25, 1.5, 3.0};
const std::vector<double> kPositive = {0.1, 0.5, 1.0, 2.0, 7.5};

std::vector<UnaryCase> Cases() {
  return {
      {"neg", &neg, &RefNeg, kAny},
      {"abs", &abs, [](double x) { return std::fabs(x); }, kAny},
      {"sign", &sign, &RefSign, kAny},
      {"exp", &exp, [](double x) { return std::exp(x); }, kAny},
      {"expm1", &expm1, [](double x) { return std::expm1(x); }, kAny},
      {"log", &log, [](double x) { return std::log(x); }, kPositive},
      {"log1p", &log1p, [](double x) { return std::log1p(x); }, kPositive},
      {"sin", &sin, [](double x) { return std::sin(x); }, kAny},
      {"cos", &cos, [](double x) { return std::cos(x); }, kAny},
      {"tan", &tan, [](double x) { return std::tan(x); }, {-1.0, -0.3, 0.0, 0.7, 1.2}},
      {"tanh", &tanh, [](double x) { return std::tanh(x); }, kAny},
      {"sigmoid", &sigmoid, &RefSigmoid, kAny},
      {"relu", &relu, &RefRelu, kAny},
      {"sqrt", &sqrt, [](double x) { return std::sqrt(x); }, kPositive},
      {"rsqrt", &rsqrt, &RefRsqrt, kPositive},
      {"square", &square, &RefSquare, kAny},
      {"reciprocal", &reciprocal, &RefReciprocal, kPositive},
      {"floor", &floor, [](double x) { return std::floor(x); }, kAny},
      {"round", &round, &RefRound, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6}},
  };
}

Tensor Reference(const UnaryCase& c, const std::vector<double>& xs, IntArrayRef shape,
                 DType dtype) {
  std::vector<double> ys;
  for (double x : xs) ys.push_back(c.reference(x));
  Tensor out = tensor(ys, shape);
  return dtype == kFloat64 ? out : kernels::to(out, dtype);
}

TEST(UnaryOps, MatchStdMathFloat32AndFloat64) {
  for (const UnaryCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    for (DType dtype : {kFloat32, kFloat64}) {
      const int64_t n = static_cast<int64_t>(c.inputs.size());
      Tensor x = kernels::to(tensor(c.inputs, {n}), dtype);
      const double tol = dtype == kFloat32 ? 1e-5 : 1e-12;
      EXPECT_TRUE(testing::TensorNear(c.op(x), Reference(c, c.inputs, {n}, dtype), tol, tol));
    }
  }
}

TEST(UnaryOps, NonContiguousRankZeroAndEmpty) {
  for (const UnaryCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    // A 2x3 matrix stored with stride 2 in its last dim.
    std::vector<double> xs;
    for (int i = 0; i < 6; ++i) xs.push_back(c.inputs[i % c.inputs.size()]);
    Tensor dense = tensor(xs, {2, 3});
    Tensor strided = testing::NonContiguousCopy(dense);
    ASSERT_FALSE(strided.is_contiguous());
    EXPECT_TRUE(
        testing::TensorNear(c.op(strided), Reference(c, xs, {2, 3}, kFloat64), 1e-12, 1e-12));
    // Broadcast view: stride 0.
    Tensor row = tensor(std::vector<double>{c.inputs[1]}, {1});
    Tensor expanded = MakeDense(row.storage(), kFloat64, {4}, {0}, 0);
    EXPECT_TRUE(testing::TensorNear(
        c.op(expanded), Reference(c, std::vector<double>(4, c.inputs[1]), {4}, kFloat64), 1e-12,
        1e-12));
    // Rank 0.
    Tensor s = scalar_tensor(c.inputs[0], kFloat64);
    Tensor r = c.op(s);
    EXPECT_EQ(r.dim(), 0);
    EXPECT_NEAR(r.item<double>(), c.reference(c.inputs[0]), 1e-12);
    // Size 0 and size-1 dims.
    EXPECT_EQ(c.op(zeros({0, 3})).numel(), 0);
    EXPECT_EQ(c.op(ones({1, 1, 2})).sizes(), (IntArrayRef{1, 1, 2}));
  }
}

TEST(UnaryOps, DtypeRules) {
  Tensor i = tensor(std::vector<int64_t>{-2, 0, 3});
  EXPECT_EQ(sin(i).dtype(), kFloat32);
  EXPECT_EQ(sqrt(abs(i)).dtype(), kFloat32);
  EXPECT_TENSOR_EQ(neg(i), tensor(std::vector<int64_t>{2, 0, -3}));
  EXPECT_TENSOR_EQ(abs(i), tensor(std::vector<int64_t>{2, 0, 3}));
  EXPECT_TENSOR_EQ(relu(i), tensor(std::vector<int64_t>{0, 0, 3}));
  EXPECT_TENSOR_EQ(square(i), tensor(std::vector<int64_t>{4, 0, 9}));
  EXPECT_TENSOR_EQ(floor(i), i);
  EXPECT_FALSE(floor(i).is_same(i));
  Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_TENSOR_EQ(sign(b), b);
}

TEST(UnaryOps, BoolInputsAreRejected) {
  Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_FT_ERROR(sin(b), "sin: not supported for bool tensors");
  EXPECT_FT_ERROR(neg(b), "neg: not supported for bool");
  EXPECT_FT_ERROR(-b, "neg: not supported for bool");
  EXPECT_FT_ERROR(floor(b), "floor: not supported for bool");
}

TEST(UnaryOps, ExpInPlaceBumpsVersionAndReturnsSelf) {
  Tensor x = tensor(std::vector<double>{0.0, 1.0});
  const int64_t v0 = x.version();
  Tensor r = exp_(x);
  EXPECT_TRUE(r.is_same(x));
  EXPECT_EQ(x.version(), v0 + 1);
  EXPECT_TENSOR_NEAR(x, tensor(std::vector<double>{1.0, std::exp(1.0)}), 1e-12);
  EXPECT_FT_ERROR(exp_(tensor(std::vector<int64_t>{1})), "exp_: expected a floating point");
  Tensor one = ones({1});
  Tensor expanded = MakeDense(one.storage(), kFloat32, {3}, {0}, 0);
  EXPECT_FT_ERROR(exp_(expanded),
                  "exp_: cannot write in place into a tensor whose elements overlap");
}

TEST(UnaryOps, ExtremeValues) {
  const float inf = std::numeric_limits<float>::infinity();
  // Eigen's vectorized exp clamps its argument; ours flushes to 0 below the clamp.
  Tensor big = tensor({-inf, -1000.0f, -100.0f, 0.0f, 1.0f, -inf, -200.0f, 2.0f});
  std::vector<float> e = exp(big).to_vector<float>();
  EXPECT_EQ(e[0], 0.0f);
  EXPECT_EQ(e[1], 0.0f);
  EXPECT_LT(e[2], 1e-38f);
  EXPECT_EQ(e[5], 0.0f);
  EXPECT_EQ(e[6], 0.0f);
  EXPECT_NEAR(e[7], std::exp(2.0f), 1e-5);
  const double dinf = std::numeric_limits<double>::infinity();
  std::vector<double> ed = exp(tensor({-dinf, -800.0, -1.0, 0.0})).to_vector<double>();
  EXPECT_EQ(ed[0], 0.0);
  EXPECT_EQ(ed[1], 0.0);
  EXPECT_NEAR(ed[2], std::exp(-1.0), 1e-15);
  // Eigen's fast float sqrt gave nan for inf and 0 for denormals.
  std::vector<float> s =
      sqrt(tensor({inf, 1e-40f, 4.0f, 9.0f, 16.0f, 0.0f, 2.0f, inf})).to_vector<float>();
  EXPECT_EQ(s[0], inf);
  EXPECT_NEAR(s[1], std::sqrt(1e-40f), 1e-24);
  EXPECT_EQ(s[2], 2.0f);
  EXPECT_EQ(s[7], inf);
}

// Found by //tests/fuzz:ops_fuzzer (corpus/ops_fuzzer/regression-int64-neg-abs-square):
// -INT64_MIN and INT64_MAX * INT64_MAX were signed overflow (UB). int64 wraps around, as
// add, sub and mul do (and PyTorch does).
TEST(UnaryOps, Int64NegAbsSquareWrap) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  auto i64 = [](std::vector<int64_t> v) { return tensor(v); };
  EXPECT_TENSOR_EQ(neg(i64({min, max, -3, 0})), i64({min, -max, 3, 0}));
  EXPECT_TENSOR_EQ(-i64({min}), i64({min}));
  EXPECT_TENSOR_EQ(abs(i64({min, -max, -3, 4})), i64({min, max, 3, 4}));
  EXPECT_TENSOR_EQ(square(i64({max, min, -3})), i64({1, 0, 9}));
  // Non-contiguous int64 input (the strided loop).
  EXPECT_TENSOR_EQ(neg(slice(i64({min, 1, max, 2}), 0, std::nullopt, std::nullopt, 2)),
                   i64({min, -max}));
}

TEST(UnaryOps, UnaryMinusIsNeg) {
  Tensor x = tensor({1.0f, -2.0f});
  EXPECT_TENSOR_EQ(-x, tensor({-1.0f, 2.0f}));
}

// ---- The eight dtypes of issue 43 against torch 1.13 (tools/torch_fixtures/unary_dtypes.py) ----
//
// Tolerances: integer results exactly; float16 and bfloat16 within one step of the 16-bit
// format (most are bit-exact, see NewDTypesMatchTorch); float32 results of integer inputs
// within 4 float32 ulp; complex within 8 ulp of the dtype relative to |expected|, after
// torch's values were checked against NumPy by the script.

std::string FixturePath(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string root = srcdir != nullptr ? std::string(srcdir) + "/" +
                                                   (workspace != nullptr ? workspace : "ft") + "/"
                                             : "";
  return root + "tests/fixtures/torch/unary_dtypes/" + name + ".npy";
}

bool FixtureExists(const std::string& name) { return std::ifstream(FixturePath(name)).good(); }

// FromStored: a fixture's float64 values as a tensor of `dtype` (complex: [n, 2] pairs).
Tensor FromStored(const Tensor& stored, DType dtype) {
  if (!IsComplex(dtype)) return kernels::to(stored, dtype);
  const std::vector<double> v = stored.to_vector<double>();
  std::vector<std::complex<double>> z;
  for (size_t i = 0; i + 1 < v.size(); i += 2) z.emplace_back(v[i], v[i + 1]);
  return kernels::to(tensor(z), dtype);
}

// Ordered16: a 16-bit floating pattern as an integer that counts representable steps, with
// -0 one step below +0 (so that a zero of the other sign counts as a difference).
int Ordered16(uint16_t bits) {
  return (bits & 0x8000) != 0 ? -(bits & 0x7FFF) - 1 : (bits & 0x7FFF);
}

template <typename T>
::testing::AssertionResult Within16BitStep(const Tensor& got, const Tensor& expected,
                                           int64_t* off_by_one) {
  const Tensor g = kernels::contiguous(got);
  const Tensor e = kernels::contiguous(expected);
  const T* pg = g.data<T>();
  const T* pe = e.data<T>();
  for (int64_t i = 0; i < g.numel(); ++i) {
    const float a = pg[i], b = pe[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    const int d = std::abs(Ordered16(pg[i].bits) - Ordered16(pe[i].bits));
    if (d == 1) ++*off_by_one;
    if (d > 1) {
      return ::testing::AssertionFailure() << "element " << i << ": got " << a << ", torch " << b;
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult MatchesTorch(const Tensor& got, const Tensor& expected,
                                        int64_t* off_by_one) {
  if (got.dtype() != expected.dtype() || got.sizes() != expected.sizes()) {
    return ::testing::AssertionFailure()
           << "got " << got.DebugString() << ", torch " << expected.DebugString();
  }
  const DType dtype = got.dtype();
  if (dtype == kFloat16) return Within16BitStep<Half>(got, expected, off_by_one);
  if (dtype == kBFloat16) return Within16BitStep<BFloat16>(got, expected, off_by_one);
  if (IsIntegral(dtype, /*include_bool=*/true)) {
    if (got.to_vector<int64_t>() == expected.to_vector<int64_t>()) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "integer results differ";
  }
  const double eps = (dtype == kFloat32 || dtype == kComplex64)
                         ? std::numeric_limits<float>::epsilon()
                         : std::numeric_limits<double>::epsilon();
  const double ulps = IsComplex(dtype) ? 8 : 4;
  const auto g = got.to_vector<std::complex<double>>();
  const auto e = expected.to_vector<std::complex<double>>();
  for (size_t i = 0; i < g.size(); ++i) {
    auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
    if (same(g[i].real(), e[i].real()) && same(g[i].imag(), e[i].imag())) continue;
    // ft's float32 sigmoid(x) for x in [-103, -89] is e^x, a subnormal, where torch's is 0
    // (its exp(-x) overflows to inf): differences below float32's smallest normal pass.
    const double tiny = std::numeric_limits<float>::min();
    if (std::abs(g[i] - e[i]) <= ulps * eps * std::abs(e[i]) + tiny) continue;
    return ::testing::AssertionFailure()
           << "element " << i << ": got " << g[i] << ", torch " << e[i];
  }
  return ::testing::AssertionSuccess();
}

struct NamedOp {
  const char* name;
  UnaryFn op;
};

std::vector<NamedOp> AllUnaryOps() {
  return {{"neg", &neg},
          {"abs", &abs},
          {"sign", &sign},
          {"exp", &exp},
          {"expm1", &expm1},
          {"log", &log},
          {"log1p", &log1p},
          {"sin", &sin},
          {"cos", &cos},
          {"tan", &tan},
          {"tanh", &tanh},
          {"sigmoid", &sigmoid},
          {"relu", &relu},
          {"sqrt", &sqrt},
          {"rsqrt", &rsqrt},
          {"square", &square},
          {"reciprocal", &reciprocal},
          {"floor", &floor},
          {"round", &round}};
}

// Every op on every dtype that torch 1.13 computes (float16 where torch has no kernel:
// torch's float32 function rounded once, "<op>.float16_via_float32"), through the dispatcher.
TEST(UnaryOps, NewDTypesMatchTorch) {
  const std::vector<std::pair<std::string, DType>> dtypes = {{"float16", kFloat16},
                                                             {"float16_via_float32", kFloat16},
                                                             {"bfloat16", kBFloat16},
                                                             {"complex64", kComplex64},
                                                             {"complex128", kComplex128},
                                                             {"int8", kInt8},
                                                             {"int16", kInt16},
                                                             {"int32", kInt32},
                                                             {"uint8", kUInt8}};
  int cases = 0;
  for (const NamedOp& op : AllUnaryOps()) {
    for (const auto& [label, dtype] : dtypes) {
      const std::string name = std::string(op.name) + "." + label;
      if (!FixtureExists(name + ".x")) continue;
      SCOPED_TRACE(name);
      ++cases;
      const Tensor x = FromStored(LoadNpy(FixturePath(name + ".x")), dtype);
      const Tensor y = op.op(x);
      const DType out_dtype = y.dtype();
      if (IsIntegral(dtype, false) && IsFloating(out_dtype)) {
        EXPECT_EQ(out_dtype, kFloat32);
      }
      const Tensor expected = FromStored(LoadNpy(FixturePath(name + ".y")), out_dtype);
      int64_t off_by_one = 0;
      EXPECT_TRUE(MatchesTorch(y, expected, &off_by_one));
      if (off_by_one > 0) {
        std::cout << name << ": " << off_by_one << " of " << x.numel()
                  << " one 16-bit step from torch\n";
      }
    }
  }
  // 19 ops x (float16 or its float32 stand-in, bfloat16, 4 integer dtypes) + 13 complex ops
  // x 2: every file the script writes.
  EXPECT_EQ(cases, 19 * 6 + 13 * 2);
}

TEST(UnaryOps, NewDTypeResultDTypes) {
  const Tensor c = tensor(std::vector<std::complex<float>>{{3.0f, 4.0f}});
  EXPECT_EQ(abs(c).dtype(), kFloat32);
  EXPECT_EQ(abs(c).item<float>(), 5.0f);
  EXPECT_EQ(abs(kernels::to(c, kComplex128)).dtype(), kFloat64);
  EXPECT_EQ(exp(c).dtype(), kComplex64);
  EXPECT_EQ(sqrt(kernels::to(c, kComplex128)).dtype(), kComplex128);
  for (DType d : {kInt8, kInt16, kInt32, kUInt8}) {
    const Tensor i = kernels::to(tensor(std::vector<int64_t>{1, 2}), d);
    EXPECT_EQ(sin(i).dtype(), kFloat32);
    EXPECT_EQ(reciprocal(i).dtype(), kFloat32);
    EXPECT_EQ(neg(i).dtype(), d);
    EXPECT_EQ(floor(i).dtype(), d);
  }
  EXPECT_EQ(exp(zeros({2}, kFloat16)).dtype(), kFloat16);
  EXPECT_EQ(exp(zeros({2}, kBFloat16)).dtype(), kBFloat16);
}

// torch 1.13 refuses these on CPU; ft says so by name.
TEST(UnaryOps, NewDTypeRefusalsNameTheOp) {
  for (DType d : {kComplex64, kComplex128}) {
    const Tensor c = zeros({2}, d);
    EXPECT_FT_ERROR(sign(c), "sign: not supported for complex tensors");
    EXPECT_FT_ERROR(relu(c), "relu: not supported for complex tensors");
    EXPECT_FT_ERROR(floor(c), "floor: not supported for complex tensors");
    EXPECT_FT_ERROR(round(c), "round: not supported for complex tensors");
    EXPECT_FT_ERROR(expm1(c), "expm1: not supported for complex tensors");
    EXPECT_FT_ERROR(log1p(c), "log1p: not supported for complex tensors");
  }
  EXPECT_FT_ERROR(exp_(zeros({2}, kInt8)),
                  "exp_: the result of exp of int8 is float32, which cannot be written");
  EXPECT_FT_ERROR(sin(zeros({2}, kBool)), "sin: not supported for bool tensors");
}

TEST(UnaryOps, ExpInPlaceOfNewDTypes) {
  Tensor c = tensor(std::vector<std::complex<double>>{{0.0, 0.0}, {1.0, M_PI}});
  const int64_t v0 = c.version();
  EXPECT_TRUE(exp_(c).is_same(c));
  EXPECT_EQ(c.version(), v0 + 1);
  const auto z = c.to_vector<std::complex<double>>();
  EXPECT_EQ(z[0], std::complex<double>(1.0, 0.0));
  EXPECT_NEAR(z[1].real(), -std::exp(1.0), 1e-15);
  EXPECT_NEAR(z[1].imag(), 0.0, 1e-15);
  // A strided float16 view: only its elements change.
  Tensor h = kernels::to(tensor(std::vector<double>{0.0, 5.0, 1.0, 5.0}), kFloat16);
  exp_(slice(h, 0, std::nullopt, std::nullopt, 2));
  EXPECT_EQ(h.to_vector<float>(),
            (std::vector<float>{1.0f, 5.0f, static_cast<float>(Half(std::exp(1.0f))), 5.0f}));
}

// Under vmap (the pointwise rule runs the kernel on the batched tensor): in_dims 0 and last,
// and abs of complex giving the real dtype per example.
TEST(UnaryOps, NewDTypesUnderVmap) {
  const Tensor c = tensor(
      std::vector<std::complex<float>>{{3, 4}, {1, 0}, {0, 2}, {-1, -1}, {2, 2}, {5, 12}}, {2, 3});
  const Tensor a = vmap(TensorFn([](const Tensor& x) { return abs(x); }))(c);
  EXPECT_EQ(a.dtype(), kFloat32);
  EXPECT_TENSOR_EQ(a, abs(c));
  const Tensor b =
      kernels::to(tensor(std::vector<double>{0.5, -1.0, 2.0, 0.0, 3.0, -0.25}, {2, 3}), kBFloat16);
  EXPECT_TENSOR_EQ(vmap(TensorFn([](const Tensor& x) { return exp(x); }), 1)(b),
                   kernels::contiguous(transpose(exp(b), 0, 1)));
  const Tensor i = kernels::to(tensor(std::vector<int64_t>{-128, 5, 127, 0}, {2, 2}), kInt8);
  EXPECT_TENSOR_EQ(vmap(TensorFn([](const Tensor& x) { return neg(x); }))(i), neg(i));
}

}  // namespace
}  // namespace ft

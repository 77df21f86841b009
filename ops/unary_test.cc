#include "ops/unary.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
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
    EXPECT_TRUE(testing::TensorNear(c.op(strided), Reference(c, xs, {2, 3}, kFloat64), 1e-12,
                                    1e-12));
    // Broadcast view: stride 0.
    Tensor row = tensor(std::vector<double>{c.inputs[1]}, {1});
    Tensor expanded = MakeDense(row.storage(), kFloat64, {4}, {0}, 0);
    EXPECT_TRUE(testing::TensorNear(
        c.op(expanded), Reference(c, std::vector<double>(4, c.inputs[1]), {4}, kFloat64),
        1e-12, 1e-12));
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
  EXPECT_FT_ERROR(exp_(expanded), "exp_: cannot write in place into a tensor whose elements overlap");
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
  std::vector<float> s = sqrt(tensor({inf, 1e-40f, 4.0f, 9.0f, 16.0f, 0.0f, 2.0f, inf}))
                             .to_vector<float>();
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

}  // namespace
}  // namespace ft

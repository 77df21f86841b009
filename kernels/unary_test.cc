// Direct tests of the unary kernels (kernels/unary.h): neg ... round, exp_ and
// internal::VecMathUnary on dense tensors, without dispatch. Covers values, IEEE special
// values, the dtype rules (int64 computes the floating functions in float32 and keeps its
// dtype in the sign-preserving ones, wrapping around like PyTorch; bool throws, except sign),
// layouts (transposed, stepped, offset and stride-0 views), rank 0, size-0 and size-1 dims,
// inputs past the intra-op threading threshold, and exp_ writing through views.
//
// Oracle: each element recomputed from the input's own values (to_vector<double>()) with
// <cmath> in double (std::exp, std::nearbyint, ...) and rounded to the result dtype, within a
// few ulps of it; the exact functions (neg, abs, sign, relu, square, reciprocal, floor, round)
// against a hand-written rule in the element type, bit for bit (signed zeros included); int64
// wraparound against the same arithmetic done by hand in uint64.
#include "kernels/unary.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/vecmath.h"
#include "gtest/gtest.h"
#include "kernels/test_helpers.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::ScopedThreads;
using ::ft::testing::SteppedView;
using ::ft::testing::TransposedView;
using ::ft::testing::Uniform;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// Enough elements for two chunks of the intra-op split (ParallelRun splits from two grains of
// kElementwiseGrain = 65536, tensor/loops.h), and not a multiple of a vector.
constexpr int64_t kLarge = 2 * 65536 + 123;

using UnaryFn = Tensor (*)(const Tensor&);
using Oracle = std::function<double(double)>;

// ---- Views built by hand (MakeDense), so the layouts do not depend on another kernel ----

// ExpandedRows: `rows` copies of the 1-D t, stride 0 along the new leading dim.
Tensor ExpandedRows(const Tensor& t, int64_t rows) {
  return MakeDense(t.storage(), t.dtype(), {rows, t.size(0)}, {0, t.stride(0)}, t.storage_offset());
}

// ---- Comparison with the oracle ----

double Epsilon(DType dtype) {
  return dtype == kFloat32 ? std::numeric_limits<float>::epsilon()
                           : std::numeric_limits<double>::epsilon();
}

// RoundTo: v as the nearest value of `dtype` (float32 overflows to inf, underflows to 0).
double RoundTo(double v, DType dtype) {
  return dtype == kFloat32 ? static_cast<double>(static_cast<float>(v)) : v;
}

// ExpectOracle: `got` is a new contiguous tensor of x's shape and dtype `dtype`, and each
// element is f of x's element (first converted to `dtype`, as the kernel computes), rounded to
// `dtype`, within `ulps` units of that dtype's epsilon relative to it. A NaN must be NaN, an
// infinity exactly itself. Subnormal results may be a few of the smallest steps off.
void ExpectOracle(const Tensor& got, const Tensor& x, DType dtype, const Oracle& f, double ulps,
                  const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(got.defined());
  ASSERT_EQ(got.dtype(), dtype);
  ASSERT_EQ(got.sizes(), x.sizes());
  EXPECT_TRUE(got.is_contiguous());
  if (x.numel() > 0) {
    EXPECT_NE(got.impl()->raw_data(), x.impl()->raw_data()) << "the result aliases the input";
  }
  const std::vector<double> xs = x.to_vector<double>();
  const std::vector<double> ys = got.to_vector<double>();
  const double tiny = dtype == kFloat32 ? std::numeric_limits<float>::denorm_min()
                                        : std::numeric_limits<double>::denorm_min();
  int failures = 0;
  for (size_t i = 0; i < xs.size() && failures < 5; ++i) {
    const double in = RoundTo(xs[i], dtype);
    const double want = RoundTo(f(in), dtype);
    const double y = ys[i];
    bool ok;
    if (std::isnan(want)) {
      ok = std::isnan(y);
    } else if (std::isinf(want)) {
      ok = y == want;
    } else {
      ok = std::fabs(y - want) <= ulps * Epsilon(dtype) * std::fabs(want) + 4 * tiny;
    }
    if (!ok) {
      ++failures;
      ADD_FAILURE() << "element " << i << ": f(" << in << ") = " << y << ", want " << want;
    }
  }
}

// SameBitsOrBothNaN: a and b have the same bytes (so -0 differs from +0), or are both NaN.
template <typename T>
bool SameBitsOrBothNaN(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// ---- The floating functions (SLEEF's, within a few ulps) ----

struct FloatingCase {
  const char* name;
  UnaryFn fn;
  Oracle f;
  double lo, hi;                // random points in [lo, hi]
  std::vector<double> special;  // IEEE special values and domain edges
};

std::vector<FloatingCase> FloatingCases() {
  const std::vector<double> common = {0.0, -0.0, kInf, -kInf, kNaN};
  auto with = [&](std::vector<double> extra) {
    extra.insert(extra.end(), common.begin(), common.end());
    return extra;
  };
  return {
      {"exp", &exp, [](double x) { return std::exp(x); }, -80, 80,
       with({1.0, -1.0, 100.0, -110.0, 700.0, -750.0})},
      {"expm1", &expm1, [](double x) { return std::expm1(x); }, -30, 30,
       with({1e-10, -1e-10, 1e-30, 100.0, -100.0})},
      {"log", &log, [](double x) { return std::log(x); }, 1e-3, 1e3,
       with({1.0, -1.0, 1e-30, 1e-310, 1e300})},
      {"log1p", &log1p, [](double x) { return std::log1p(x); }, -0.999, 100,
       with({-1.0, -2.0, 1e-12, -1e-12, 1e30})},
      {"sin", &sin, [](double x) { return std::sin(x); }, -20, 20, with({1e6, 3.0e4, 1e-20})},
      {"cos", &cos, [](double x) { return std::cos(x); }, -20, 20, with({1e6, 3.0e4, 1e-20})},
      {"tan", &tan, [](double x) { return std::tan(x); }, -1.5, 1.5, with({1e5, 1e-20, 1.57})},
      {"tanh", &tanh, [](double x) { return std::tanh(x); }, -20, 20,
       with({1e-20, -1e-20, 0.5, 100.0, -100.0})},
      {"sigmoid", &sigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -50, 50,
       with({-100.0, 100.0, -700.0, -1000.0})},
      {"sqrt", &sqrt, [](double x) { return std::sqrt(x); }, 0, 1e4,
       with({-1.0, 1e-40, 1e-310, 2.0, 1e300})},
      {"rsqrt", &rsqrt, [](double x) { return 1.0 / std::sqrt(x); }, 1e-3, 1e4,
       with({-1.0, 1e-30, 4.0, 1e300})},
  };
}

std::vector<double> Points(const FloatingCase& c, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(c.lo, c.hi);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(u(rng));
  v.insert(v.end(), c.special.begin(), c.special.end());
  return v;
}

// Each SLEEF function is within 1 ulp (sigmoid 2.5, rsqrt 1.5; docs/api.md); the oracle's own
// rounding to the dtype adds half an ulp, and the ulp of a value is up to twice eps * |value|.
constexpr double kUlps = 6;

TEST(UnaryKernels, FloatingFunctionsMatchStdMathInFloat32AndFloat64) {
  for (const FloatingCase& c : FloatingCases()) {
    const std::vector<double> v = Points(c, 300, 1);
    const int64_t n = static_cast<int64_t>(v.size());
    for (DType dtype : {kFloat32, kFloat64}) {
      const Tensor x = to(tensor(v, {n}), dtype);
      ExpectOracle(c.fn(x), x, dtype, c.f, kUlps, std::string(c.name) + " " + DTypeName(dtype));
    }
  }
}

// Hand-checked values, independent of any std:: function.
TEST(UnaryKernels, FloatingFunctionsAtExactlyKnownPoints) {
  const Tensor x = tensor({0.0, 1.0, 4.0, 0.25});
  EXPECT_TENSOR_NEAR(sqrt(x), tensor({0.0, 1.0, 2.0, 0.5}), 0.0);
  EXPECT_TENSOR_NEAR(rsqrt(tensor({1.0, 4.0, 0.25, 0.0})), tensor({1.0, 0.5, 2.0, kInf}), 0.0);
  EXPECT_TENSOR_NEAR(exp(tensor({0.0, -kInf, kInf})), tensor({1.0, 0.0, kInf}), 0.0);
  EXPECT_TENSOR_NEAR(log(tensor({1.0, 0.0, -0.0})), tensor({0.0, -kInf, -kInf}), 0.0);
  EXPECT_TENSOR_NEAR(sigmoid(tensor({0.0, kInf, -kInf})), tensor({0.5, 1.0, 0.0}), 0.0);
  EXPECT_TENSOR_NEAR(tanh(tensor({kInf, -kInf})), tensor({1.0, -1.0}), 0.0);
  EXPECT_TENSOR_NEAR(expm1(tensor({-kInf})), tensor({-1.0}), 0.0);
  EXPECT_TENSOR_NEAR(log1p(tensor({-1.0})), tensor({-kInf}), 0.0);
  // sqrt(-0) is -0 (IEEE), so rsqrt(-0) = 1 / -0 = -inf.
  EXPECT_TRUE(std::signbit(sqrt(tensor({-0.0})).item<double>()));
  EXPECT_EQ(rsqrt(tensor({-0.0f})).item<float>(), -std::numeric_limits<float>::infinity());
  // Out of the domain: NaN.
  for (const Tensor& r : {sqrt(tensor({-1.0})), log(tensor({-1.0})), log1p(tensor({-2.0})),
                          sin(tensor({kInf})), cos(tensor({-kInf})), tan(tensor({kInf}))}) {
    EXPECT_TRUE(std::isnan(r.item<double>()));
  }
}

// ---- The exact functions, bit for bit ----

template <typename T>
std::vector<T> ExactPoints() {
  using L = std::numeric_limits<T>;
  return {T(0),     T(-0.0),       T(1),          T(-1),           T(0.5),
          T(-0.5),  T(1.5),        T(-1.5),       T(2.5),          T(-2.5),
          T(-0.4),  T(0.49999997), T(-3.7),       T(3.7),          T(8388607.5),
          T(1e20),  T(-1e20),      T(1e-40),      L::denorm_min(), -L::denorm_min(),
          L::max(), L::lowest(),   L::infinity(), -L::infinity(),  L::quiet_NaN()};
}

struct ExactCase {
  const char* name;
  UnaryFn fn;
  std::function<float(float)> f32;
  std::function<double(double)> f64;
};

// Each rule once per type, so that the oracle rounds in the element type as the kernel does.
#define FT_EXACT_CASE(name, expr)                                                                \
  ExactCase {                                                                                    \
#name, &name, [](float x) -> float { return expr; }, [](double x) -> double { return expr; } \
  }

std::vector<ExactCase> ExactCases() {
  return {
      FT_EXACT_CASE(neg, -x),
      FT_EXACT_CASE(abs, std::fabs(x)),
      // docs/api.md: NaN stays NaN, either zero gives +0.
      FT_EXACT_CASE(sign, std::isnan(x) ? x : static_cast<decltype(x)>((x > 0) - (x < 0))),
      // x < 0 ? 0 : x: -0 and NaN stay themselves.
      FT_EXACT_CASE(relu, x < 0 ? static_cast<decltype(x)>(0) : x),
      FT_EXACT_CASE(square, x * x),
      FT_EXACT_CASE(reciprocal, static_cast<decltype(x)>(1) / x),
      FT_EXACT_CASE(floor, std::floor(x)),
      // Halves to even, as torch.round.
      FT_EXACT_CASE(round, std::nearbyint(x)),
  };
}
#undef FT_EXACT_CASE

template <typename T>
void CheckExact(const ExactCase& c, const std::function<T(T)>& f) {
  const std::vector<T> v = ExactPoints<T>();
  const Tensor x = tensor(v);
  const Tensor y = c.fn(x);
  ASSERT_EQ(y.dtype(), x.dtype());
  ASSERT_EQ(y.sizes(), x.sizes());
  const std::vector<T> got = y.template to_vector<T>();
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_TRUE(SameBitsOrBothNaN(got[i], f(v[i])))
        << c.name << "(" << v[i] << ") = " << got[i] << ", want " << f(v[i]);
  }
}

TEST(UnaryKernels, ExactFunctionsGiveTheHandWrittenRuleBitForBit) {
  for (const ExactCase& c : ExactCases()) {
    SCOPED_TRACE(c.name);
    CheckExact<float>(c, c.f32);
    CheckExact<double>(c, c.f64);
  }
}

TEST(UnaryKernels, RoundTakesHalvesToEvenAndKeepsTheSignOfZero) {
  const Tensor y = round(tensor({0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -0.2, 0.2}));
  EXPECT_TENSOR_EQ(y, tensor({0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 4.0, -0.0, 0.0}));
  const std::vector<double> v = y.to_vector<double>();
  EXPECT_FALSE(std::signbit(v[0]));
  EXPECT_TRUE(std::signbit(v[3]));
  EXPECT_TRUE(std::signbit(v[7]));
  EXPECT_FALSE(std::signbit(v[8]));
}

// ---- Dtype rules ----

TEST(UnaryKernels, FloatingFunctionsComputeInt64InFloat32) {
  // 2^24 + 1 is not a float: it is computed as 2^24.
  const std::vector<int64_t> v = {-3, -1, 0, 1, 2, 5, 100, (int64_t{1} << 24) + 1};
  const Tensor x = tensor(v);
  for (const FloatingCase& c : FloatingCases()) {
    ExpectOracle(c.fn(x), x, kFloat32, c.f, kUlps, std::string(c.name) + " of int64");
  }
  EXPECT_TENSOR_EQ(sqrt(tensor(std::vector<int64_t>{0, 4, 9})), tensor({0.0f, 2.0f, 3.0f}));
  EXPECT_TENSOR_EQ(reciprocal(tensor(std::vector<int64_t>{2, 0, -4})),
                   tensor({0.5f, std::numeric_limits<float>::infinity(), -0.25f}));
}

// ExpectInt64: an int64 tensor of `shape` holding exactly `want` (compared as int64:
// EXPECT_TENSOR_EQ goes through double, which cannot tell INT64_MIN from INT64_MIN + 1).
void ExpectInt64(const Tensor& got, const std::vector<int64_t>& want, IntArrayRef shape) {
  ASSERT_EQ(got.dtype(), kInt64);
  ASSERT_EQ(got.sizes(), shape);
  EXPECT_TRUE(got.is_contiguous());
  EXPECT_EQ(got.to_vector<int64_t>(), want);
}

// The int64 results of neg, abs and square wrap around as PyTorch's do: the arithmetic done
// by hand in uint64 (which wraps by definition).
int64_t WrapNegRef(int64_t v) { return static_cast<int64_t>(~static_cast<uint64_t>(v) + 1); }
int64_t WrapSquareRef(int64_t v) {
  const uint64_t u = static_cast<uint64_t>(v);
  return static_cast<int64_t>(u * u);
}

TEST(UnaryKernels, SignPreservingFunctionsKeepInt64AndWrapAround) {
  const std::vector<int64_t> v = {0,
                                  1,
                                  -1,
                                  7,
                                  -7,
                                  3037000499,
                                  3037000500,
                                  -3037000500,
                                  kInt64Max,
                                  kInt64Min,
                                  int64_t{1} << 32,
                                  -(int64_t{1} << 40)};
  const Tensor x = tensor(v);
  std::vector<int64_t> neg_want, abs_want, sign_want, relu_want, square_want;
  for (int64_t e : v) {
    neg_want.push_back(WrapNegRef(e));
    abs_want.push_back(e < 0 ? WrapNegRef(e) : e);
    sign_want.push_back((e > 0) - (e < 0));
    relu_want.push_back(e > 0 ? e : 0);
    square_want.push_back(WrapSquareRef(e));
  }
  const IntArrayRef shape = x.sizes();
  ExpectInt64(neg(x), neg_want, shape);
  ExpectInt64(abs(x), abs_want, shape);
  ExpectInt64(sign(x), sign_want, shape);
  ExpectInt64(relu(x), relu_want, shape);
  ExpectInt64(square(x), square_want, shape);
  ExpectInt64(floor(x), v, shape);
  ExpectInt64(round(x), v, shape);
  // The two ends, spelled out: -INT64_MIN and |INT64_MIN| stay INT64_MIN, -INT64_MAX is
  // INT64_MIN + 1, and 2^32 squared is 2^64 = 0.
  EXPECT_EQ(neg(tensor(std::vector<int64_t>{kInt64Min})).item<int64_t>(), kInt64Min);
  EXPECT_EQ(abs(tensor(std::vector<int64_t>{kInt64Min})).item<int64_t>(), kInt64Min);
  EXPECT_EQ(neg(tensor(std::vector<int64_t>{kInt64Max})).item<int64_t>(), kInt64Min + 1);
  EXPECT_EQ(square(tensor(std::vector<int64_t>{int64_t{1} << 32})).item<int64_t>(), 0);
}

TEST(UnaryKernels, FloorAndRoundOfInt64AreFreshCopies) {
  const Tensor x = tensor(std::vector<int64_t>{4, -5, 6});
  for (UnaryFn fn : {&floor, &round}) {
    const Tensor y = fn(x);
    ExpectInt64(y, {4, -5, 6}, {3});
    EXPECT_FALSE(y.is_same(x));
    EXPECT_NE(y.impl()->raw_data(), x.impl()->raw_data());
    y.data<int64_t>()[0] = 99;
    EXPECT_EQ(x.to_vector<int64_t>()[0], 4);
  }
}

TEST(UnaryKernels, SignOfBoolIsAFreshBoolCopy) {
  const Tensor b = tensor(std::vector<bool>{true, false, true});
  const Tensor y = sign(b);
  EXPECT_TENSOR_EQ(y, b);
  EXPECT_EQ(y.dtype(), kBool);
  EXPECT_NE(y.impl()->raw_data(), b.impl()->raw_data());
  // Non-contiguous bool: a contiguous copy of the values.
  const Tensor strided = testing::NonContiguousCopy(tensor(std::vector<bool>{false, true}));
  const Tensor s = sign(strided);
  EXPECT_TRUE(s.is_contiguous());
  EXPECT_EQ(s.to_vector<bool>(), (std::vector<bool>{false, true}));
}

TEST(UnaryKernels, BoolInputsThrowNamingTheOp) {
  const Tensor b = tensor(std::vector<bool>{true, false});
  const std::vector<std::pair<const char*, UnaryFn>> fns = {
      {"neg", &neg},     {"abs", &abs},     {"exp", &exp},         {"expm1", &expm1},
      {"log", &log},     {"log1p", &log1p}, {"sin", &sin},         {"cos", &cos},
      {"tan", &tan},     {"tanh", &tanh},   {"sigmoid", &sigmoid}, {"relu", &relu},
      {"sqrt", &sqrt},   {"rsqrt", &rsqrt}, {"square", &square},   {"reciprocal", &reciprocal},
      {"floor", &floor}, {"round", &round}};
  for (const auto& named_fn : fns) {
    // Not a structured binding: clang 14 cannot capture one in EXPECT_FT_ERROR's lambda.
    const UnaryFn fn = named_fn.second;
    EXPECT_FT_ERROR(fn(b),
                    std::string(named_fn.first) + ": not supported for bool tensors (shape [2])");
  }
  // Rank 0 and empty bool tensors are rejected too.
  EXPECT_FT_ERROR(exp(scalar_tensor(true)), "exp: not supported for bool tensors (shape [])");
  EXPECT_FT_ERROR(neg(empty({0, 2}, kBool)), "neg: not supported for bool tensors (shape [0, 2])");
}

// ---- Layouts and shapes ----

// Every kernel with an oracle, for the layout and shape tests: the floating functions and
// the exact ones (the latter compared within 0 ulps).
struct AnyCase {
  std::string name;
  UnaryFn fn;
  Oracle f;
  double lo, hi;
  double ulps;
};

std::vector<AnyCase> AllCases() {
  std::vector<AnyCase> all;
  for (const FloatingCase& c : FloatingCases()) {
    all.push_back({c.name, c.fn, c.f, c.lo, c.hi, kUlps});
  }
  for (const ExactCase& c : ExactCases()) {
    // f64's rule applied to a value already rounded to float and then rounded to float again
    // is f32's (each is exact or one correctly rounded step).
    all.push_back({c.name, c.fn, c.f64, -10, 10, 0});
  }
  return all;
}

// RandomMatrix: a [rows, cols] tensor of `dtype` with seeded values uniform in [c.lo, c.hi).
Tensor RandomMatrix(const AnyCase& c, int64_t rows, int64_t cols, DType dtype, uint32_t seed) {
  return Uniform({rows, cols}, dtype, seed, c.lo, c.hi);
}

TEST(UnaryKernels, NonContiguousInputsGiveContiguousResultsOfTheRightValues) {
  for (const AnyCase& c : AllCases()) {
    for (DType dtype : {kFloat32, kFloat64}) {
      const std::string what = c.name + " " + DTypeName(dtype);
      const Tensor base = RandomMatrix(c, 6, 5, dtype, 2);
      const std::vector<double> before = base.to_vector<double>();
      const std::vector<std::pair<std::string, Tensor>> views = {
          {"transposed", TransposedView(base)},
          {"every other column", SteppedView(base, 1, 1, 2)},
          {"every third row", SteppedView(base, 0, 1, 3)},
          // Rows 2 and 3: contiguous, at a storage offset.
          {"offset rows", MakeDense(base.storage(), dtype, {2, 5}, {5, 1}, 10)},
          // Column 2, repeated 4 times along dim 1 (stride 0 innermost).
          {"expanded column", MakeDense(base.storage(), dtype, {6, 4}, {5, 0}, 2)},
          {"expanded row", ExpandedRows(MakeDense(base.storage(), dtype, {5}, {1}, 5), 3)},
          {"stride-2 3-D copy",
           testing::NonContiguousCopy(MakeDense(base.storage(), dtype, {3, 2, 5}, {10, 5, 1}, 0))},
      };
      for (const auto& [layout, view] : views) {
        ASSERT_FALSE(view.is_contiguous() && view.storage_offset() == 0) << layout;
        ExpectOracle(c.fn(view), view, dtype, c.f, c.ulps, what + " " + layout);
      }
      EXPECT_EQ(base.to_vector<double>(), before) << what << ": the input was written";
    }
  }
}

TEST(UnaryKernels, NonContiguousInt64InputsOfTheSameTypeFunctions) {
  const Tensor base = tensor(std::vector<int64_t>{-6, 5, -4, 3, kInt64Min, 1, 0, -2, 9}, {3, 3});
  const std::vector<Tensor> views = {
      TransposedView(base), SteppedView(base, 1, 0, 2),
      ExpandedRows(MakeDense(base.storage(), kInt64, {3}, {3}, 1), 4),
      MakeDense(base.storage(), kInt64, {3, 2}, {3, 0}, 2)};
  for (const Tensor& view : views) {
    std::vector<int64_t> neg_want, abs_want, sign_want, relu_want, square_want;
    for (int64_t e : view.to_vector<int64_t>()) {
      neg_want.push_back(WrapNegRef(e));
      abs_want.push_back(e < 0 ? WrapNegRef(e) : e);
      sign_want.push_back((e > 0) - (e < 0));
      relu_want.push_back(e > 0 ? e : 0);
      square_want.push_back(WrapSquareRef(e));
    }
    const IntArrayRef shape = view.sizes();
    ExpectInt64(neg(view), neg_want, shape);
    ExpectInt64(abs(view), abs_want, shape);
    ExpectInt64(sign(view), sign_want, shape);
    ExpectInt64(relu(view), relu_want, shape);
    ExpectInt64(square(view), square_want, shape);
    ExpectInt64(floor(view), view.to_vector<int64_t>(), shape);
    ExpectInt64(round(view), view.to_vector<int64_t>(), shape);
    ExpectOracle(
        exp(view), view, kFloat32, [](double v) { return std::exp(v); }, kUlps,
        "exp of a non-contiguous int64 view");
  }
}

TEST(UnaryKernels, RankZeroSizeZeroAndSizeOneDims) {
  for (const AnyCase& c : AllCases()) {
    SCOPED_TRACE(c.name);
    for (DType dtype : {kFloat32, kFloat64}) {
      const double v = 0.5 * (c.lo + c.hi) + 0.25;
      const Tensor s = scalar_tensor(v, dtype);
      const Tensor r = c.fn(s);
      EXPECT_EQ(r.dim(), 0);
      ExpectOracle(r, s, dtype, c.f, c.ulps, "rank 0");
      for (const Shape& shape : {Shape{0}, Shape{0, 3}, Shape{3, 0, 2}}) {
        const Tensor y = c.fn(empty(shape, dtype));
        EXPECT_EQ(y.sizes(), IntArrayRef(shape));
        EXPECT_EQ(y.dtype(), dtype);
      }
      const Tensor ones_like = full({1, 1, 2, 1}, v, dtype);
      ExpectOracle(c.fn(ones_like), ones_like, dtype, c.f, c.ulps, "size-1 dims");
    }
  }
  // int64: rank 0 and empty, in both dtype groups.
  EXPECT_EQ(exp(scalar_tensor(int64_t{2})).dtype(), kFloat32);
  EXPECT_EQ(exp(scalar_tensor(int64_t{2})).dim(), 0);
  EXPECT_EQ(neg(scalar_tensor(int64_t{2})).item<int64_t>(), -2);
  EXPECT_EQ(exp(empty({0, 4}, kInt64)).dtype(), kFloat32);
  EXPECT_EQ(exp(empty({0, 4}, kInt64)).sizes(), (IntArrayRef{0, 4}));
  EXPECT_EQ(square(empty({2, 0}, kInt64)).dtype(), kInt64);
  EXPECT_EQ(sign(empty({0}, kBool)).dtype(), kBool);
}

// Four threads, so that at least two chunks run on pool threads whatever the machine.
TEST(UnaryKernels, InputsPastTheThreadingThresholdMatchTheOracle) {
  ScopedThreads threads(4);
  for (const AnyCase& c : AllCases()) {
    // One kernel per path: SLEEF's functions (exp), the exact ones (neg).
    if (c.name != "exp" && c.name != "neg") continue;
    for (DType dtype : {kFloat32, kFloat64}) {
      const Tensor x = RandomMatrix(c, 1, kLarge, dtype, 5);
      ExpectOracle(c.fn(x), x, dtype, c.f, c.ulps, c.name + " large " + DTypeName(dtype));
    }
  }
  // Transposed, with inner runs of 700 elements: gathered a 256-element block at a time.
  const Tensor t = TransposedView(RandomMatrix(AllCases()[0], 10, 700, kFloat32, 6));
  ExpectOracle(
      exp(t), t, kFloat32, [](double v) { return std::exp(v); }, kUlps,
      "exp transposed, long runs");
  // int64: the Eigen loop of the same-type functions, split over the threads.
  std::vector<int64_t> v(static_cast<size_t>(kLarge));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i * 2654435761u) - (1 << 30);
  const Tensor xi = tensor(v);
  std::vector<int64_t> square_want;
  for (int64_t e : v) square_want.push_back(WrapSquareRef(e));
  ExpectInt64(square(xi), square_want, xi.sizes());
}

// ---- exp_ ----

TEST(UnaryKernels, ExpInPlaceWritesSelfBumpsTheVersionAndReturnsSelf) {
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = to(tensor({0.0, 1.0, -2.0, -kInf, 3.5, 80.0}, {2, 3}), dtype);
    const Tensor original = clone(x);
    const void* data = x.impl()->raw_data();
    const int64_t v0 = x.version();
    const Tensor r = exp_(x);
    EXPECT_TRUE(r.is_same(x));
    EXPECT_EQ(x.impl()->raw_data(), data);
    EXPECT_EQ(x.version(), v0 + 1);
    ExpectOracle(
        clone(x), original, dtype, [](double v) { return std::exp(v); }, kUlps, "exp_ contiguous");
    const Tensor s = scalar_tensor(2.0, dtype);
    exp_(s);
    EXPECT_NEAR(s.item<double>(), std::exp(2.0), 1e-6 * std::exp(2.0));
  }
}

// exp_ on views writes the viewed elements of the base and nothing else, and bumps the
// shared storage's version.
TEST(UnaryKernels, ExpInPlaceWritesThroughViews) {
  std::vector<double> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = -1.0 + 0.1 * static_cast<double>(i);
  auto expected = [&](const std::function<bool(int64_t)>& written) {
    std::vector<double> e = v;
    for (size_t i = 0; i < e.size(); ++i) {
      if (written(static_cast<int64_t>(i))) e[i] = std::exp(e[i]);
    }
    return tensor(e, {4, 6});
  };
  {  // Transposed: every element.
    const Tensor base = tensor(v, {4, 6});
    const int64_t v0 = base.version();
    const Tensor t = TransposedView(base);
    EXPECT_TRUE(exp_(t).is_same(t));
    EXPECT_EQ(base.version(), v0 + 1);
    EXPECT_TENSOR_NEAR(base, expected([](int64_t) { return true; }), 1e-14);
  }
  {  // Every other column: only the odd columns.
    const Tensor base = tensor(v, {4, 6});
    exp_(SteppedView(base, 1, 1, 2));
    EXPECT_TENSOR_NEAR(base, expected([](int64_t i) { return i % 2 == 1; }), 1e-14);
  }
  {  // Rows 1 and 2: contiguous at an offset.
    const Tensor base = tensor(v, {4, 6});
    const Tensor rows = MakeDense(base.storage(), kFloat64, {2, 6}, {6, 1}, 6);
    ASSERT_TRUE(rows.is_contiguous());
    exp_(rows);
    EXPECT_TENSOR_NEAR(base, expected([](int64_t i) { return i >= 6 && i < 18; }), 1e-14);
  }
  {  // A size-1 dim with stride 0 does not overlap: allowed.
    const Tensor base = tensor(v, {4, 6});
    exp_(MakeDense(base.storage(), kFloat64, {1, 6}, {0, 1}, 0));
    EXPECT_TENSOR_NEAR(base, expected([](int64_t i) { return i < 6; }), 1e-14);
  }
  {  // Empty: nothing to write.
    const Tensor e = empty({0, 3}, kFloat32);
    EXPECT_TRUE(exp_(e).is_same(e));
  }
}

TEST(UnaryKernels, ExpInPlacePastTheThreadingThreshold) {
  ScopedThreads threads(4);
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor x = RandomMatrix(AllCases()[0], 1, kLarge, dtype, 8);
    const Tensor original = clone(x);
    exp_(x);
    ExpectOracle(
        clone(x), original, dtype, [](double v) { return std::exp(v); }, kUlps,
        std::string("exp_ large ") + DTypeName(dtype));
  }
}

TEST(UnaryKernels, ExpInPlaceRejectsNonFloatingAndOverlappingTargetsWithoutWriting) {
  const Tensor i = tensor(std::vector<int64_t>{1, 2});
  EXPECT_FT_ERROR(exp_(i),
                  "exp_: expected a floating point tensor (float32 or float64), got int64 of "
                  "shape [2]");
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_FT_ERROR(exp_(tensor(std::vector<bool>{true})),
                  "exp_: expected a floating point tensor (float32 or float64), got bool");
  const Tensor one = tensor({0.5f});
  const Tensor expanded = MakeDense(one.storage(), kFloat32, {3}, {0}, 0);
  const int64_t v0 = one.version();
  EXPECT_FT_ERROR(exp_(expanded),
                  "exp_: cannot write in place into a tensor whose elements overlap (shape [3], "
                  "strides [0]: dim 0 is broadcast)");
  EXPECT_EQ(one.item<float>(), 0.5f);
  EXPECT_EQ(one.version(), v0);
}

// ---- internal::VecMathUnary ----

TEST(UnaryKernels, VecMathUnaryAppliesTheGivenFunctionWithTheDtypeRules) {
  const Tensor x = tensor({0.0, 0.25, 2.0, 9.0, -1.0});
  ExpectOracle(
      internal::VecMathUnary("probe", x, vecmath::Fn::kSqrt), x, kFloat64,
      [](double v) { return std::sqrt(v); }, kUlps, "kSqrt float64");
  const Tensor t = TransposedView(to(tensor({0.5, 1.0, 1.5, 2.0, 2.5, 3.0}, {2, 3}), kFloat32));
  ExpectOracle(
      internal::VecMathUnary("probe", t, vecmath::Fn::kLog), t, kFloat32,
      [](double v) { return std::log(v); }, kUlps, "kLog float32 transposed");
  const Tensor i = tensor(std::vector<int64_t>{1, 2, 3});
  ExpectOracle(
      internal::VecMathUnary("probe", i, vecmath::Fn::kExp), i, kFloat32,
      [](double v) { return std::exp(v); }, kUlps, "kExp int64");
  EXPECT_FT_ERROR(
      internal::VecMathUnary("probe", tensor(std::vector<bool>{true}), vecmath::Fn::kExp),
      "probe: not supported for bool tensors");
}

// ---- The dtypes of issue 43 (NOTE: [Unary kernels of the new dtypes] in unary.cc) ----
//
// Oracles: float16 and bfloat16 against ft's float32 kernel rounded once by the casting copy,
// bit for bit over every 16-bit pattern; the narrow integers against the rule computed in
// int64 and wrapped by the casting copy; complex against <complex> element by element; every
// layout against the same op on a contiguous copy, bit for bit. Values against torch are in
// ops/unary_test.cc (NewDTypesMatchTorch).

struct NamedKernel {
  std::string name;
  UnaryFn fn;
  bool complex;  // computes complex inputs (else refuses them, as torch 1.13)
};

std::vector<NamedKernel> NewDTypeKernels() {
  return {{"neg", &neg, true},
          {"abs", &abs, true},
          {"sign", &sign, false},
          {"exp", &exp, true},
          {"expm1", &expm1, false},
          {"log", &log, true},
          {"log1p", &log1p, false},
          {"sin", &sin, true},
          {"cos", &cos, true},
          {"tan", &tan, true},
          {"tanh", &tanh, true},
          {"sigmoid", &sigmoid, true},
          {"relu", &relu, false},
          {"sqrt", &sqrt, true},
          {"rsqrt", &rsqrt, true},
          {"square", &square, true},
          {"reciprocal", &reciprocal, true},
          {"floor", &floor, false},
          {"round", &round, false}};
}

constexpr DType kNewDTypes[] = {kComplex64, kComplex128, kBFloat16, kFloat16,
                                kInt8,      kInt16,      kInt32,    kUInt8};

template <typename T>
Tensor AllPatterns() {
  std::vector<T> v(65536);
  for (size_t i = 0; i < v.size(); ++i) v[i] = T::FromBits(static_cast<uint16_t>(i));
  return tensor(v);
}

template <typename T>
std::vector<uint16_t> Bits16(const Tensor& t) {
  const Tensor c = contiguous(t);
  std::vector<uint16_t> bits;
  for (int64_t i = 0; i < c.numel(); ++i) bits.push_back(c.data<T>()[i].bits);
  return bits;
}

template <typename T>
void ExpectFloat32RoundedOnce(const NamedKernel& k) {
  SCOPED_TRACE(k.name + " " + DTypeName(DTypeOf<T>()));
  const Tensor x = AllPatterns<T>();
  const Tensor got = k.fn(x);
  ASSERT_EQ(got.dtype(), DTypeOf<T>());
  const Tensor in_float32 = to(x, kFloat32);
  const Tensor out_float32 = k.fn(in_float32);
  std::vector<float> want = out_float32.to_vector<float>();
  if (k.name == "sign") {  // torch's (0 < x) - (x < 0): NaN gives 0
    const std::vector<float> xs = x.to_vector<float>();
    for (size_t i = 0; i < xs.size(); ++i) want[i] = (0.0f < xs[i]) - (xs[i] < 0.0f);
  }
  const std::vector<uint16_t> bits = Bits16<T>(got);
  int wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const T w = want[i];
    const bool ok = std::isnan(want[i]) ? std::isnan(static_cast<float>(T::FromBits(bits[i])))
                                        : bits[i] == w.bits;
    if (!ok && ++wrong <= 3) {
      ADD_FAILURE() << "pattern " << i << ": got bits " << bits[i] << ", want " << w.bits;
    }
  }
  EXPECT_EQ(wrong, 0);
}

TEST(UnaryKernels, SixteenBitFloatsAreTheFloat32FunctionRoundedOnceOnEveryPattern) {
  for (const NamedKernel& k : NewDTypeKernels()) {
    ExpectFloat32RoundedOnce<Half>(k);
    ExpectFloat32RoundedOnce<BFloat16>(k);
  }
}

TEST(UnaryKernels, NarrowIntegersKeepTheirDTypeAndWrapAsTorch) {
  for (DType dtype : {kInt8, kInt16, kInt32, kUInt8}) {
    SCOPED_TRACE(DTypeName(dtype));
    std::vector<int64_t> v;
    if (ItemSize(dtype) == 1) {
      for (int64_t i = dtype == kInt8 ? -128 : 0; i <= (dtype == kInt8 ? 127 : 255); ++i) {
        v.push_back(i);
      }
    } else {
      // Squares past the dtype's range: 182^2 for int16, 46341^2 and 65536^2 for int32.
      const int64_t max = dtype == kInt16 ? 32767 : 2147483647;
      const int64_t big = dtype == kInt16 ? 182 : 46341;
      v = {-max - 1, -max, -big, -181, -2, -1, 0, 1, 2, 181, big, 3 * big, max - 1, max};
      if (dtype == kInt32) v.push_back(65536);
    }
    const Tensor x = to(tensor(v), dtype);
    std::vector<int64_t> neg_want, abs_want, sign_want, square_want, relu_want;
    for (int64_t e : v) {
      neg_want.push_back(-e);
      abs_want.push_back(e < 0 ? -e : e);
      sign_want.push_back((e > 0) - (e < 0));
      square_want.push_back(e * e);
      relu_want.push_back(e > 0 ? e : 0);
    }
    // The casting copy keeps the low bits: -(-128) is int8 -128, 200 * 200 is uint8 64.
    auto wrapped = [&](const std::vector<int64_t>& w) { return to(tensor(w), dtype); };
    EXPECT_TENSOR_EQ(neg(x), wrapped(neg_want));
    EXPECT_TENSOR_EQ(abs(x), wrapped(abs_want));
    EXPECT_TENSOR_EQ(sign(x), wrapped(sign_want));
    EXPECT_TENSOR_EQ(square(x), wrapped(square_want));
    EXPECT_TENSOR_EQ(relu(x), wrapped(relu_want));
    EXPECT_TENSOR_EQ(floor(x), x);
    EXPECT_TENSOR_EQ(round(x), x);
    EXPECT_FALSE(floor(x).is_same(x));
    // The floating functions: float32 of the values, then the float32 kernel.
    for (UnaryFn fn : {&exp, &sin, &sqrt, &sigmoid, &reciprocal, &log1p}) {
      const Tensor y = fn(x);
      EXPECT_EQ(y.dtype(), kFloat32);
      const std::vector<float> got = y.to_vector<float>();
      const std::vector<float> want = fn(to(x, kFloat32)).to_vector<float>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_TRUE(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))) << i;
      }
    }
  }
}

template <typename C>
void ExpectComplexIsStdComplex(const NamedKernel& k) {
  using R = typename C::value_type;
  SCOPED_TRACE(k.name + " " + DTypeName(DTypeOf<C>()));
  std::vector<C> z;
  for (double re : {-3.0, -0.5, 0.0, 0.75, 2.0}) {
    for (double im : {-2.0, -0.25, 0.0, 1.5})
      z.emplace_back(static_cast<R>(re), static_cast<R>(im));
  }
  const Tensor x = tensor(z);
  if (!k.complex) {
    EXPECT_FT_ERROR(k.fn(x), k.name + ": not supported for complex tensors (" +
                                 DTypeName(DTypeOf<C>()) + " of shape [20])");
    return;
  }
  const Tensor y = k.fn(x);
  std::vector<C> want;
  for (C v : z) {
    if (k.name == "neg") want.push_back(-v);
    if (k.name == "abs") want.push_back(C(std::abs(v)));
    if (k.name == "exp") want.push_back(std::exp(v));
    if (k.name == "log") want.push_back(std::log(v));
    if (k.name == "sin") want.push_back(std::sin(v));
    if (k.name == "cos") want.push_back(std::cos(v));
    if (k.name == "tan") want.push_back(std::tan(v));
    if (k.name == "tanh") want.push_back(std::tanh(v));
    if (k.name == "sigmoid") want.push_back(C(1) / (C(1) + std::exp(-v)));
    if (k.name == "sqrt") want.push_back(std::sqrt(v));
    if (k.name == "rsqrt") want.push_back(C(1) / std::sqrt(v));
    if (k.name == "square") want.push_back(v * v);
    if (k.name == "reciprocal") want.push_back(C(1) / v);
  }
  ASSERT_EQ(want.size(), z.size());
  if (k.name == "abs") {
    ASSERT_EQ(y.dtype(), ToRealDType(DTypeOf<C>()));
    const std::vector<R> got = y.to_vector<R>();
    for (size_t i = 0; i < z.size(); ++i) EXPECT_EQ(got[i], want[i].real()) << i;
    return;
  }
  ASSERT_EQ(y.dtype(), DTypeOf<C>());
  const std::vector<C> got = y.to_vector<C>();
  for (size_t i = 0; i < z.size(); ++i) {
    auto same = [](R a, R b) { return a == b || (std::isnan(a) && std::isnan(b)); };
    EXPECT_TRUE(same(got[i].real(), want[i].real()) && same(got[i].imag(), want[i].imag()))
        << "z = " << z[i] << ": got " << got[i] << ", want " << want[i];
  }
}

TEST(UnaryKernels, ComplexFunctionsAreStdComplexOrRefusedByName) {
  for (const NamedKernel& k : NewDTypeKernels()) {
    ExpectComplexIsStdComplex<std::complex<float>>(k);
    ExpectComplexIsStdComplex<std::complex<double>>(k);
  }
  EXPECT_FT_ERROR(sign(zeros({2}, kComplex64)), "torch.sign refuses complex");
  EXPECT_FT_ERROR(internal::VecMathUnary("erf", zeros({3}, kComplex128), vecmath::Fn::kErf),
                  "erf: not supported for complex tensors (complex128 of shape [3])");
}

// AsComplex128: any tensor's values as complex128 (exact for every dtype), for comparisons.
std::vector<std::complex<double>> AsComplex128(const Tensor& t) {
  return t.to_vector<std::complex<double>>();
}

TEST(UnaryKernels, NewDTypesGiveTheSameBitsOnEveryLayout) {
  for (DType dtype : kNewDTypes) {
    // Values in every op's domain (positive, away from tan's poles) and exact in every dtype.
    std::vector<double> v;
    std::vector<std::complex<double>> z;
    const double unit = IsIntegral(dtype, false) ? 1.0 : 0.25;
    for (int i = 0; i < 30; ++i) {
      v.push_back(unit * (1 + i % 7));
      z.emplace_back(v.back(), 0.5 * (i % 3) - 0.5);
    }
    const Tensor base =
        IsComplex(dtype) ? to(tensor(z, {6, 5}), dtype) : to(tensor(v, {6, 5}), dtype);
    const std::vector<std::pair<std::string, Tensor>> views = {
        {"transposed", TransposedView(base)},
        {"every other column", SteppedView(base, 1, 1, 2)},
        {"expanded column", MakeDense(base.storage(), dtype, {6, 4}, {5, 0}, 2)},
        {"expanded row", ExpandedRows(MakeDense(base.storage(), dtype, {5}, {1}, 5), 3)},
        {"offset rows", MakeDense(base.storage(), dtype, {2, 5}, {5, 1}, 10)}};
    for (const NamedKernel& k : NewDTypeKernels()) {
      if (IsComplex(dtype) && !k.complex) continue;
      for (const auto& [layout, view] : views) {
        SCOPED_TRACE(k.name + " " + DTypeName(dtype) + " " + layout);
        const Tensor got = k.fn(view);
        EXPECT_TRUE(got.is_contiguous());
        const Tensor want = k.fn(contiguous(view));
        EXPECT_EQ(got.dtype(), want.dtype());
        EXPECT_EQ(got.sizes(), want.sizes());
        EXPECT_EQ(AsComplex128(got), AsComplex128(want));
      }
    }
  }
}

TEST(UnaryKernels, NewDTypesRankZeroAndSizeZero) {
  for (DType dtype : kNewDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor s = to(scalar_tensor(2.0, kFloat64), dtype);
    EXPECT_EQ(exp(s).dim(), 0);
    EXPECT_EQ(neg(s).dim(), 0);
    EXPECT_EQ(abs(s).dim(), 0);
    EXPECT_EQ(abs(s).item<double>(), 2.0);
    for (UnaryFn fn : {&neg, &abs, &exp, &sqrt, &square}) {
      const Tensor y = fn(empty({3, 0}, dtype));
      EXPECT_EQ(y.sizes(), (IntArrayRef{3, 0}));
    }
  }
}

// Four threads, so that at least two chunks run on pool threads whatever the machine.
TEST(UnaryKernels, NewDTypesPastTheThreadingThreshold) {
  ScopedThreads threads(4);
  const Tensor x32 = Uniform({kLarge}, kFloat32, 7, -3.0, 3.0);
  for (DType dtype : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = to(x32, dtype);
    EXPECT_TENSOR_EQ(exp(x), to(exp(to(x, kFloat32)), dtype));
    EXPECT_TENSOR_EQ(neg(x), to(neg(to(x, kFloat32)), dtype));
  }
  std::vector<std::complex<float>> z;
  const std::vector<float> re = x32.to_vector<float>();
  for (size_t i = 0; i < re.size(); ++i) z.emplace_back(re[i], re[re.size() - 1 - i]);
  const std::vector<std::complex<float>> got = exp(tensor(z)).to_vector<std::complex<float>>();
  for (size_t i = 0; i < z.size(); ++i) {
    if (got[i] != std::exp(z[i])) {
      ADD_FAILURE() << i << ": " << got[i] << " vs " << std::exp(z[i]);
      break;
    }
  }
  const Tensor i8 = to(tensor(std::vector<int64_t>(static_cast<size_t>(kLarge), -128)), kInt8);
  EXPECT_TENSOR_EQ(neg(i8), i8);
}

TEST(UnaryKernels, ExpInPlaceOfNewDTypes) {
  const Tensor b = to(tensor({0.0, 1.0, -2.0}), kBFloat16);
  const Tensor want = exp(b);
  const int64_t v0 = b.version();
  EXPECT_TRUE(exp_(b).is_same(b));
  EXPECT_EQ(b.version(), v0 + 1);
  EXPECT_TENSOR_EQ(b, want);
  // Every other element of a complex128 vector.
  const Tensor c = tensor(std::vector<std::complex<double>>{{0, 1}, {7, 7}, {1, 0}, {7, 7}});
  exp_(SteppedView(c, 0, 0, 2));
  const auto z = c.to_vector<std::complex<double>>();
  EXPECT_EQ(z[0], std::exp(std::complex<double>(0, 1)));
  EXPECT_EQ(z[1], std::complex<double>(7, 7));
  EXPECT_EQ(z[2], std::exp(std::complex<double>(1, 0)));
  for (DType d : {kInt8, kInt16, kInt32, kUInt8}) {
    const Tensor i = zeros({2}, d);
    EXPECT_FT_ERROR(exp_(i), std::string("exp_: the result of exp of ") + DTypeName(d) +
                                 " is float32, which cannot be written into self");
    EXPECT_EQ(i.version(), 0);
  }
}

}  // namespace
}  // namespace ft::kernels

// Tests of the binary family's kernels (kernels/binary.h) called directly: arithmetic,
// comparisons, logical ops, where, clamp and the in-place writes (add_ ... zero_).
//
// Oracle: every expected value is computed by a hand-written loop in double precision over
// the inputs' values (read through their strides, at broadcast indices, by BroadcastValues;
// the operands first rounded to the compute dtype, as PyTorch converts them once), with std::
// math for pow and atan2, or by a closed form worked out by hand (int64 wraparound, dtype
// promotion, overlap cases). float32 +, -, *, / computed in double and rounded once give the
// correctly rounded float32 result, so those comparisons are exact; pow and atan2 (vecmath's
// 1-ulp functions) are compared with a relative tolerance. Layouts covered: rank 0, size-0
// and size-1 dims, broadcasting, transposed, step-sliced and expanded (stride 0) operands,
// in-place writes through views, and inputs large enough to run on the intra-op threads.
#include "kernels/binary.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/test_helpers.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::NumelOf;
using ::ft::testing::ScopedThreads;
using ::ft::testing::SmallInts;
using ::ft::testing::TransposedCopy;
using ::ft::testing::Uniform;
using ::ft::testing::Values;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

// Enough elements that an elementwise kernel splits over the intra-op threads (two grains
// of 65536).
constexpr int64_t kLarge = 140000;

using BinaryKernel = Tensor (*)(const Tensor&, const Tensor&);
using DoubleFn = std::function<double(double, double)>;

Tensor F64(const std::vector<double>& v, IntArrayRef shape) { return tensor(v, shape); }
Tensor F64(const std::vector<double>& v) { return tensor(v); }
Tensor F32(const std::vector<float>& v, IntArrayRef shape) { return tensor(v, shape); }
Tensor F32(const std::vector<float>& v) { return tensor(v); }
Tensor I64(const std::vector<int64_t>& v, IntArrayRef shape) { return tensor(v, shape); }
Tensor I64(const std::vector<int64_t>& v) { return tensor(v); }
Tensor Bools(const std::vector<bool>& v, IntArrayRef shape) { return tensor(v, shape); }
Tensor Bools(const std::vector<bool>& v) { return tensor(v); }

// BroadcastValues: t's values (through its strides, in row-major order) read at every index
// of `out` by numpy's rule (missing leading dims, size-1 dims repeated).
template <typename T>
std::vector<T> BroadcastValues(const Tensor& t, IntArrayRef out) {
  const std::vector<T> v = Values<T>(t);
  const std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  if (std::equal(sizes.begin(), sizes.end(), out.begin(), out.end())) return v;
  const int64_t rank = static_cast<int64_t>(out.size());
  const int64_t lead = rank - static_cast<int64_t>(sizes.size());
  const int64_t total = NumelOf(out);
  std::vector<T> result;
  result.reserve(static_cast<size_t>(total));
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t src = 0;
    for (size_t d = 0; d < sizes.size(); ++d) {
      src = src * sizes[d] + (sizes[d] == 1 ? 0 : index[lead + d]);
    }
    result.push_back(v[src]);
    for (int64_t d = rank - 1; d >= 0; --d) {  // odometer step
      if (++index[d] < out[d]) break;
      index[d] = 0;
    }
  }
  return result;
}

// RoundTo: v as the compute dtype holds it (the operand's one conversion).
double RoundTo(double v, DType dtype) {
  switch (dtype) {
    case kFloat32:
      return static_cast<double>(static_cast<float>(v));
    case kInt64:
      return static_cast<double>(static_cast<int64_t>(v));
    case kBool:
      return v != 0 ? 1.0 : 0.0;
    default:
      break;  // float64, and the dtypes these tests do not draw
  }
  return v;
}

// Expected: f over a and b broadcast to `shape`, each operand first rounded to `compute`,
// the double result converted to `out_dtype`.
Tensor Expected(const DoubleFn& f, const Tensor& a, const Tensor& b, IntArrayRef shape,
                DType compute, DType out_dtype) {
  const std::vector<double> va = BroadcastValues<double>(a, shape);
  const std::vector<double> vb = BroadcastValues<double>(b, shape);
  std::vector<double> r(va.size());
  for (size_t i = 0; i < va.size(); ++i) r[i] = f(RoundTo(va[i], compute), RoundTo(vb[i], compute));
  return to(tensor(r, shape), out_dtype);
}

Tensor Expected(const DoubleFn& f, const Tensor& a, const Tensor& b, IntArrayRef shape,
                DType dtype) {
  return Expected(f, a, b, shape, dtype, dtype);
}

::testing::AssertionResult Near(const Tensor& actual, const Tensor& expected, double atol,
                                double rtol) {
  return ::ft::testing::TensorNear(actual, expected, atol, rtol);
}

// FastNear: TensorNear's rule (same shape and dtype; NaN matches NaN; |a - e| <= atol +
// rtol * |e|) over Values(), for the large inputs, where TensorNear's to_vector dominates
// the test's time in fastbuild.
::testing::AssertionResult FastNear(const Tensor& actual, const Tensor& expected, double atol = 0,
                                    double rtol = 0) {
  if (actual.dtype() != expected.dtype()) {
    return ::testing::AssertionFailure() << "dtype " << DTypeName(actual.dtype()) << " != expected "
                                         << DTypeName(expected.dtype());
  }
  if (actual.sizes() != expected.sizes()) {
    return ::testing::AssertionFailure() << "shape " << ShapeToString(actual.sizes())
                                         << " != expected " << ShapeToString(expected.sizes());
  }
  const std::vector<double> a = Values<double>(actual), e = Values<double>(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    if ((std::isnan(a[i]) && std::isnan(e[i])) || a[i] == e[i]) continue;
    if (!(std::fabs(a[i] - e[i]) <= atol + rtol * std::fabs(e[i]))) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << a[i] << " vs expected " << e[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// StepSliced: a view with the values of t read every second element of its last dim.
Tensor StepSliced(const Tensor& t) {
  Shape big(t.sizes().begin(), t.sizes().end());
  big.back() = 2 * big.back();
  Tensor storage = zeros(big, t.dtype());
  Tensor view = slice(storage, -1, 0, std::nullopt, 2);
  copy_into(view, t);
  return view;
}

struct ArithCase {
  const char* name;
  BinaryKernel kernel;
  DoubleFn ref;
};

double MaximumRef(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  return a > b ? a : b;
}
double MinimumRef(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  return a < b ? a : b;
}

std::vector<ArithCase> ExactArithmetic() {
  return {{"add", add, [](double a, double b) { return a + b; }},
          {"sub", sub, [](double a, double b) { return a - b; }},
          {"mul", mul, [](double a, double b) { return a * b; }},
          {"div", div, [](double a, double b) { return a / b; }},
          {"maximum", maximum, MaximumRef},
          {"minimum", minimum, MinimumRef}};
}

std::vector<ArithCase> Comparisons() {
  return {{"eq", eq, [](double a, double b) { return a == b ? 1.0 : 0.0; }},
          {"ne", ne, [](double a, double b) { return a != b ? 1.0 : 0.0; }},
          {"lt", lt, [](double a, double b) { return a < b ? 1.0 : 0.0; }},
          {"le", le, [](double a, double b) { return a <= b ? 1.0 : 0.0; }},
          {"gt", gt, [](double a, double b) { return a > b ? 1.0 : 0.0; }},
          {"ge", ge, [](double a, double b) { return a >= b ? 1.0 : 0.0; }}};
}

// ---- Arithmetic ----

TEST(BinaryArithmeticTest, MatchesDoubleLoopForEveryBroadcastPattern) {
  struct Shapes {
    Shape a, b, out;
  };
  const std::vector<Shapes> patterns = {
      {{3, 4, 5}, {3, 4, 5}, {3, 4, 5}},  // same shape
      {{3, 4, 5}, {5}, {3, 4, 5}},        // b repeats along the leading dims
      {{5}, {3, 4, 5}, {3, 4, 5}},        // a repeats
      {{3, 4, 5}, {4, 1}, {3, 4, 5}},     // b broadcast inside (stride 0 runs)
      {{2, 1, 3}, {4, 1}, {2, 4, 3}},     // both grow
      {{3, 1}, {1, 3}, {3, 3}},           // outer product
      {{3, 4}, {}, {3, 4}},               // rank-0 b
      {{}, {3, 4}, {3, 4}},               // rank-0 a
      {{}, {}, {}},                       // both rank 0
      {{1, 1}, {2, 3}, {2, 3}},           // one-element a of higher rank
      {{0, 3}, {1, 3}, {0, 3}},           // size 0
      {{3, 1}, {0}, {3, 0}},              // size 0 by broadcasting
  };
  uint32_t seed = 1;
  for (DType dtype : {kFloat32, kFloat64}) {
    for (const Shapes& p : patterns) {
      const Tensor a = Uniform(p.a, dtype, seed++);
      const Tensor b = Uniform(p.b, dtype, seed++, 0.25, 3.0);  // nonzero divisors
      for (const ArithCase& c : ExactArithmetic()) {
        SCOPED_TRACE(std::string(c.name) + " " + DTypeName(dtype) + " " + ShapeToString(p.a) +
                     " with " + ShapeToString(p.b));
        EXPECT_TENSOR_EQ(c.kernel(a, b), Expected(c.ref, a, b, p.out, dtype));
      }
    }
  }
}

TEST(BinaryArithmeticTest, NonContiguousOperandsMatchDoubleLoop) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    const bool is_int = dtype == kInt64;
    const Tensor m = is_int ? SmallInts({4, 5}, dtype, 7, 1, 9) : Uniform({4, 5}, dtype, 7);
    const Tensor n = is_int ? SmallInts({4, 5}, dtype, 8, 1, 9) : Uniform({4, 5}, dtype, 8, 0.5);
    const Tensor row = is_int ? SmallInts({5}, dtype, 9, 1, 9) : Uniform({5}, dtype, 9, 0.5);
    const std::vector<std::pair<Tensor, Tensor>> layouts = {
        {TransposedCopy(m), n},                  // transposed a
        {m, TransposedCopy(n)},                  // transposed b
        {TransposedCopy(m), TransposedCopy(n)},  // both transposed: strided output order
        {StepSliced(m), n},                      // step slice
        {m, StepSliced(n)},                      // step slice b
        {::ft::testing::NonContiguousCopy(m), expand(row, {4, 5})},  // expanded (stride 0)
        {expand(row, {4, 5}), TransposedCopy(n)},                    // expanded with transposed
        {TransposedCopy(m), row},  // transposed with a repeating row
    };
    for (const ArithCase& c : ExactArithmetic()) {
      if (is_int && std::string(c.name) == "div") continue;  // float result: BinaryDivTest
      for (size_t i = 0; i < layouts.size(); ++i) {
        SCOPED_TRACE(std::string(c.name) + " " + DTypeName(dtype) + " layout " + std::to_string(i));
        const auto& [a, b] = layouts[i];
        EXPECT_TENSOR_EQ(c.kernel(a, b), Expected(c.ref, a, b, {4, 5}, dtype));
      }
    }
  }
}

TEST(BinaryArithmeticTest, ResultsAreNewContiguousTensorsOfTheBroadcastShape) {
  const Tensor a = TransposedCopy(Uniform({3, 4}, kFloat32, 3));
  const Tensor out = add(a, Uniform({4}, kFloat32, 4));
  EXPECT_TRUE(out.is_contiguous());
  EXPECT_EQ(out.sizes(), IntArrayRef({3, 4}));
  EXPECT_FALSE(out.storage().is_same(a.storage()));
}

TEST(BinaryArithmeticTest, PromotesLikeTorchResultType) {
  const Tensor i3 = I64({1, -2, 3});
  const Tensor f3 = F32({0.5f, 0.25f, -1.5f});
  const Tensor d3 = F64({0.5, 0.25, -1.5});
  const Tensor b3 = Bools({true, false, true});
  const Tensor d0 = scalar_tensor(0.1, kFloat64);
  const Tensor i0 = scalar_tensor(int64_t{2});
  const Tensor f0 = scalar_tensor(0.5, kFloat32);
  struct Case {
    Tensor a, b;
    DType dtype;
  };
  const std::vector<Case> cases = {
      {i3, f3, kFloat32},  // int64 + float32 -> float32
      {f3, d3, kFloat64},  // float32 + float64 -> float64
      {b3, i3, kInt64},    // bool + int64 -> int64
      {b3, f3, kFloat32},  // bool + float32 -> float32
      {f3, d0, kFloat32},  // a dimensioned float32 beats a 0-dim float64
      {i3, d0, kFloat64},  // a 0-dim tensor of a higher category decides with its own dtype
      {b3, i0, kInt64},    // bool [3] + int64 0-dim -> int64
      {i3, f0, kFloat32},  // int64 [3] + float32 0-dim -> float32
      {d0, f0, kFloat64},  // two 0-dim tensors: ordinary promotion
      {i0, f3, kFloat32},  // 0-dim int64 + float32 [3]
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const Case& c = cases[i];
    const Shape shape = c.a.dim() > 0 ? Shape{3} : (c.b.dim() > 0 ? Shape{3} : Shape{});
    EXPECT_TENSOR_EQ(add(c.a, c.b),
                     Expected([](double x, double y) { return x + y; }, c.a, c.b, shape, c.dtype));
    EXPECT_TENSOR_EQ(mul(c.a, c.b),
                     Expected([](double x, double y) { return x * y; }, c.a, c.b, shape, c.dtype));
  }
  // The 0-dim float64 operand is converted to float32 before the add (0.1f, not 0.1).
  EXPECT_EQ(add(F32({0.0f}), d0).item<float>(), 0.1f);
  // Big integers are converted to float32 before the arithmetic.
  EXPECT_EQ(add(I64({16777217}), F32({0.5f})).item<float>(), 16777216.0f);
}

TEST(BinaryArithmeticTest, Int64IsExactAndWrapsAroundOnOverflow) {
  const int64_t big = (int64_t{1} << 53) + 1;  // not representable in double
  EXPECT_TENSOR_EQ(add(I64({big, kI64Max, kI64Min, -5}), I64({2, 1, -1, 3})),
                   I64({big + 2, kI64Min, kI64Max, -2}));
  EXPECT_TENSOR_EQ(sub(I64({big, kI64Min, kI64Max}), I64({-2, 1, -1})),
                   I64({big + 2, kI64Max, kI64Min}));
  EXPECT_TENSOR_EQ(mul(I64({big, int64_t{1} << 62, kI64Max, -7}), I64({3, 4, 2, 6})),
                   I64({3 * big, 0, -2, -42}));
  EXPECT_TENSOR_EQ(maximum(I64({big, -big, kI64Min}), I64({big - 1, -big + 1, kI64Max})),
                   I64({big, -big + 1, kI64Max}));
  EXPECT_TENSOR_EQ(minimum(I64({big, -big, kI64Min}), I64({big - 1, -big + 1, kI64Max})),
                   I64({big - 1, -big, kI64Min}));
  // Broadcast and a 0-dim operand keep int64.
  EXPECT_TENSOR_EQ(
      add(I64({1, 2, 3, 4, 5, 6}, {2, 3}), scalar_tensor(kI64Max)),
      I64({kI64Min, kI64Min + 1, kI64Min + 2, kI64Min + 3, kI64Min + 4, kI64Min + 5}, {2, 3}));
}

TEST(BinaryArithmeticTest, TwoBoolsAddIsOrMulIsAndMaximumIsOrMinimumIsAnd) {
  const Tensor a = Bools({false, false, true, true});
  const Tensor b = Bools({false, true, false, true});
  EXPECT_TENSOR_EQ(add(a, b), Bools({false, true, true, true}));
  EXPECT_TENSOR_EQ(mul(a, b), Bools({false, false, false, true}));
  EXPECT_TENSOR_EQ(maximum(a, b), Bools({false, true, true, true}));
  EXPECT_TENSOR_EQ(minimum(a, b), Bools({false, false, false, true}));
  // Broadcast: a column against a row.
  EXPECT_TENSOR_EQ(add(Bools({false, true}, {2, 1}), Bools({false, true}, {1, 2})),
                   Bools({false, true, true, true}, {2, 2}));
}

TEST(BinaryArithmeticTest, SubRejectsBoolOperands) {
  const Tensor b = Bools({true, false});
  EXPECT_FT_ERROR(sub(b, b), "sub: subtraction with two bool tensors is not supported");
  EXPECT_FT_ERROR(sub(b, F32({1.0f, 2.0f})),
                  "sub: subtraction with a bool tensor is not supported");
  EXPECT_FT_ERROR(sub(I64({1, 2}), b), "sub: subtraction with a bool tensor is not supported");
}

TEST(BinaryArithmeticTest, BroadcastErrorsNameTheOp) {
  const Tensor a = zeros({2, 3});
  const Tensor b = zeros({4});
  EXPECT_FT_ERROR(add(a, b), "add: shapes [2, 3] and [4] cannot be broadcast together");
  EXPECT_FT_ERROR(sub(a, b), "sub: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(mul(a, b), "mul: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(div(a, b), "div: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(pow(a, b), "pow: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(maximum(a, b), "maximum: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(minimum(a, b), "minimum: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(atan2(a, b), "atan2: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(eq(a, b), "eq: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(ne(a, b), "ne: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(lt(a, b), "lt: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(le(a, b), "le: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(gt(a, b), "gt: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(ge(a, b), "ge: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(logical_and(a, b), "logical_and: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(logical_or(a, b), "logical_or: shapes [2, 3] and [4]");
}

// ---- div ----

TEST(BinaryDivTest, IsTrueDivisionInFloat32ForIntegerAndBoolOperands) {
  EXPECT_TENSOR_EQ(div(I64({7, -7, 1, -1, 0, 6}), I64({2, 2, 0, 0, 0, -4})),
                   F32({3.5f, -3.5f, INFINITY, -INFINITY, NAN, -1.5f}));
  EXPECT_TENSOR_EQ(div(Bools({true, false, true}), Bools({true, true, false})),
                   F32({1.0f, 0.0f, INFINITY}));
  // int64 / 0-dim float64 -> float64 (the 0-dim operand's higher category).
  EXPECT_TENSOR_EQ(div(I64({1, 3}), scalar_tensor(4.0, kFloat64)), F64({0.25, 0.75}));
}

TEST(BinaryDivTest, FloatDivisionByZeroFollowsIeee) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor a = to(F64({1.0, -1.0, 0.0, 1.0, kInf, kNaN}), dtype);
    const Tensor b = to(F64({0.0, 0.0, 0.0, -0.0, kInf, 1.0}), dtype);
    const Tensor out = div(a, b);
    EXPECT_TENSOR_EQ(out, to(F64({kInf, -kInf, kNaN, -kInf, kNaN, kNaN}), dtype));
  }
}

// ---- pow ----

TEST(BinaryPowTest, FloatMatchesStdPowWithinAnUlp) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const double rtol = dtype == kFloat32 ? 1e-6 : 1e-14;
    const Tensor base = Uniform({6, 7}, dtype, 11, 0.05, 4.0);
    const Tensor exponent = Uniform({6, 7}, dtype, 12, -3.0, 3.0);
    const DoubleFn ref = [](double a, double b) { return std::pow(a, b); };
    EXPECT_TRUE(Near(pow(base, exponent), Expected(ref, base, exponent, {6, 7}, dtype), 0, rtol));
    // Negative bases with integral exponents, broadcast, and non-contiguous operands.
    const Tensor neg = Uniform({6, 1}, dtype, 13, -3.0, -0.1);
    const Tensor ints = to(F64({-3, -2, -1, 0, 1, 2, 3}), dtype);
    EXPECT_TRUE(Near(pow(neg, ints), Expected(ref, neg, ints, {6, 7}, dtype), 0, rtol));
    EXPECT_TRUE(Near(pow(TransposedCopy(base), StepSliced(TransposedCopy(exponent))),
                     Expected(ref, base, exponent, {6, 7}, dtype), 0, rtol));
    const Tensor row = Uniform({7}, dtype, 14, 0.1, 2.0);
    EXPECT_TRUE(Near(pow(expand(row, {6, 7}), exponent),
                     Expected(ref, row, exponent, {6, 7}, dtype), 0, rtol));
    EXPECT_TRUE(Near(pow(base, scalar_tensor(2.5, dtype)),
                     Expected(ref, base, scalar_tensor(2.5, dtype), {6, 7}, dtype), 0, rtol));
  }
}

TEST(BinaryPowTest, SpecialValuesFollowC99Pow) {
  // (base, exponent) pairs whose results C99 Annex F fixes exactly.
  const std::vector<double> base = {2.0,  kNaN, 1.0,  -8.0, 0.0,   -0.0, -2.0,
                                    -1.0, 2.0,  kInf, 0.0,  -kInf, 0.5,  4.0};
  const std::vector<double> exponent = {0.0,  0.0,   kNaN, 1.0 / 3.0, -1.0, -1.0, 3.0,
                                        kInf, -kInf, -1.0, 0.0,       3.0,  kInf, 0.5};
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor a = to(F64(base), dtype);
    const Tensor b = to(F64(exponent), dtype);
    const Tensor out = pow(a, b);
    const std::vector<double> got = out.to_vector<double>();
    const std::vector<double> va = a.to_vector<double>(), vb = b.to_vector<double>();
    ASSERT_EQ(out.dtype(), dtype);
    for (size_t i = 0; i < base.size(); ++i) {
      const double want = std::pow(va[i], vb[i]);
      SCOPED_TRACE("pow(" + std::to_string(va[i]) + ", " + std::to_string(vb[i]) + ")");
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << got[i];
      } else {
        EXPECT_EQ(got[i], want);
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want));
      }
    }
  }
}

uint64_t PowByRepeatedMultiplication(int64_t base, int64_t exponent) {
  uint64_t r = 1;
  for (int64_t i = 0; i < exponent; ++i) r *= static_cast<uint64_t>(base);
  return r;
}

TEST(BinaryPowTest, Int64StaysInt64AndWraps) {
  const std::vector<int64_t> base = {2, -2, 3, 0, 0, 7, -1, 2, 2, 5, 1};
  const std::vector<int64_t> exponent = {10, 3, 40, 0, 5, 1, 13, 63, 64, 0, 100};
  std::vector<int64_t> want;
  for (size_t i = 0; i < base.size(); ++i) {
    want.push_back(static_cast<int64_t>(PowByRepeatedMultiplication(base[i], exponent[i])));
  }
  EXPECT_TENSOR_EQ(pow(I64(base), I64(exponent)), I64(want));
  EXPECT_EQ(pow(I64({2}), I64({63})).item<int64_t>(), kI64Min);
  // A huge exponent of -1 (exponentiation by squaring, not a loop).
  EXPECT_TENSOR_EQ(pow(I64({-1, -1}), I64({1000000000000000000, 1000000000000000001})),
                   I64({1, -1}));
  // bool bases and exponents compute in int64 against an int64 operand.
  EXPECT_TENSOR_EQ(pow(Bools({true, false, false}), I64({5, 0, 2})), I64({1, 1, 0}));
  EXPECT_TENSOR_EQ(pow(I64({3, 3}), Bools({false, true})), I64({1, 3}));
  // Mixed with floating: the floating dtype.
  EXPECT_TRUE(Near(pow(I64({2, 4}), F32({-1.0f, 0.5f})), F32({0.5f, 2.0f}), 0, 1e-6));
  EXPECT_TRUE(Near(pow(F64({2.0, 4.0}), I64({-1, -2})), F64({0.5, 0.0625}), 0, 1e-14));
}

TEST(BinaryPowTest, RejectsNegativeIntegerExponentsAndTwoBools) {
  EXPECT_FT_ERROR(pow(I64({2, 3}), I64({1, -1})),
                  "pow: Integers to negative integer powers are not allowed");
  // Found wherever it is: a broadcast exponent, a strided view, a bool base.
  EXPECT_FT_ERROR(pow(I64({2, 3, 4, 5}, {2, 2}), scalar_tensor(int64_t{-2})),
                  "pow: Integers to negative integer powers are not allowed");
  EXPECT_FT_ERROR(pow(I64({1, 2, 3}), StepSliced(I64({0, 1, -4}))),
                  "pow: Integers to negative integer powers are not allowed");
  EXPECT_FT_ERROR(pow(I64({1, 2, 3}), StepSliced(I64({0, 1, -4}))), "contains -4");
  EXPECT_FT_ERROR(pow(Bools({true}), I64({-1})),
                  "pow: Integers to negative integer powers are not allowed");
  EXPECT_FT_ERROR(pow(Bools({true}), Bools({false})), "pow: not supported for two bool tensors");
  // A negative exponent is fine once the base is floating, a 0-dim one included.
  EXPECT_TENSOR_EQ(pow(F32({2.0f}), I64({-1})), F32({0.5f}));
  EXPECT_TRUE(Near(pow(scalar_tensor(2.0, kFloat64), I64({-1, 2})), F64({0.5, 4.0}), 0, 1e-15));
}

// ---- atan2 ----

TEST(BinaryAtan2Test, MatchesStdAtan2InEveryQuadrant) {
  const DoubleFn ref = [](double y, double x) { return std::atan2(y, x); };
  for (DType dtype : {kFloat32, kFloat64}) {
    const double rtol = dtype == kFloat32 ? 1e-6 : 1e-14;
    const Tensor y = Uniform({5, 6}, dtype, 21);
    const Tensor x = Uniform({5, 6}, dtype, 22);
    EXPECT_TRUE(Near(atan2(y, x), Expected(ref, y, x, {5, 6}, dtype), 0, rtol));
    const Tensor x_row = Uniform({6}, dtype, 23);
    EXPECT_TRUE(
        Near(atan2(TransposedCopy(y), x_row), Expected(ref, y, x_row, {5, 6}, dtype), 0, rtol));
    // Axes and signed zeros: atan2(+-0, -1) = +-pi, atan2(+-0, +0) = +-0.
    const Tensor ys = to(F64({0.0, -0.0, 0.0, -0.0, 1.0, -1.0, kInf, 1.0}), dtype);
    const Tensor xs = to(F64({-1.0, -1.0, 0.0, 0.0, 0.0, 0.0, kInf, -kInf}), dtype);
    const Tensor out = atan2(ys, xs);
    EXPECT_TRUE(Near(out, Expected(ref, ys, xs, {8}, dtype), 0, rtol));
    EXPECT_TRUE(std::signbit(out.to_vector<double>()[1]));
    EXPECT_TRUE(std::signbit(out.to_vector<double>()[3]));
  }
  // Integer and bool inputs compute in float32.
  const Tensor out = atan2(I64({1, -1, 0}), Bools({true, true, false}));
  EXPECT_TRUE(Near(out,
                   F32({static_cast<float>(std::atan2(1.0, 1.0)),
                        static_cast<float>(std::atan2(-1.0, 1.0)), 0.0f}),
                   0, 1e-6));
}

// ---- maximum / minimum ----

TEST(BinaryMaximumMinimumTest, PropagateNaNFromEitherSideInEveryLayout) {
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor a = to(F64({kNaN, 1.0, kNaN, -kInf, 2.0, 3.0}), dtype);
    const Tensor b = to(F64({1.0, kNaN, kNaN, kInf, 2.0, -3.0}), dtype);
    EXPECT_TENSOR_EQ(maximum(a, b), to(F64({kNaN, kNaN, kNaN, kInf, 2.0, 3.0}), dtype));
    EXPECT_TENSOR_EQ(minimum(a, b), to(F64({kNaN, kNaN, kNaN, -kInf, 2.0, -3.0}), dtype));
    // Strided operands (the scalar Eigen form) keep the same rule.
    EXPECT_TENSOR_EQ(maximum(StepSliced(a), StepSliced(b)),
                     to(F64({kNaN, kNaN, kNaN, kInf, 2.0, 3.0}), dtype));
    EXPECT_TENSOR_EQ(minimum(StepSliced(a), b),
                     to(F64({kNaN, kNaN, kNaN, -kInf, 2.0, -3.0}), dtype));
    // A broadcast NaN (scalar and stride-0 column) poisons everything it meets.
    const Tensor nan0 = scalar_tensor(kNaN, dtype);
    EXPECT_TENSOR_EQ(maximum(b, nan0), to(F64({kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}), dtype));
    const Tensor col = to(F64({kNaN, 0.0}, {2, 1}), dtype);
    const Tensor row = to(F64({-1.0, 1.0, kNaN}, {1, 3}), dtype);
    EXPECT_TENSOR_EQ(maximum(col, row), to(F64({kNaN, kNaN, kNaN, 0.0, 1.0, kNaN}, {2, 3}), dtype));
    EXPECT_TENSOR_EQ(minimum(col, row),
                     to(F64({kNaN, kNaN, kNaN, -1.0, 0.0, kNaN}, {2, 3}), dtype));
  }
  // Mixed dtypes promote: int64 and float32 -> float32.
  EXPECT_TENSOR_EQ(maximum(I64({1, 5}), F32({2.5f, NAN})), F32({2.5f, NAN}));
}

// ---- Comparisons ----

TEST(BinaryCompareTest, MatchDoubleLoopWithTiesBroadcastAndLayouts) {
  struct Operands {
    Tensor a, b;
    Shape out;
  };
  for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    const int64_t lo = dtype == kBool ? 0 : -2, hi = dtype == kBool ? 1 : 2;
    const Tensor m = SmallInts({4, 5}, dtype, 31, lo, hi);
    const Tensor n = SmallInts({4, 5}, dtype, 32, lo, hi);
    const Tensor row = SmallInts({5}, dtype, 33, lo, hi);
    const Tensor col = SmallInts({4, 1}, dtype, 34, lo, hi);
    const std::vector<Operands> cases = {
        {m, n, {4, 5}},
        {m, row, {4, 5}},
        {row, m, {4, 5}},
        {col, row, {4, 5}},
        {m, scalar_tensor(int64_t{1}, dtype), {4, 5}},
        {TransposedCopy(SmallInts({4, 5}, dtype, 35, lo, hi)), StepSliced(n), {4, 5}},
        {expand(row, {4, 5}), TransposedCopy(SmallInts({4, 5}, dtype, 36, lo, hi)), {4, 5}},
        {zeros({0, 5}, dtype), row, {0, 5}},
        {scalar_tensor(int64_t{0}, dtype), scalar_tensor(int64_t{1}, dtype), {}},
    };
    for (const ArithCase& c : Comparisons()) {
      for (size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE(std::string(c.name) + " " + DTypeName(dtype) + " case " + std::to_string(i));
        const Operands& o = cases[i];
        EXPECT_TENSOR_EQ(c.kernel(o.a, o.b), Expected(c.ref, o.a, o.b, o.out, dtype, kBool));
      }
    }
  }
}

TEST(BinaryCompareTest, NaNIsUnorderedAndUnequal) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor a = to(F64({kNaN, kNaN, 1.0, kInf}), dtype);
    const Tensor b = to(F64({1.0, kNaN, kNaN, kInf}), dtype);
    EXPECT_TENSOR_EQ(eq(a, b), Bools({false, false, false, true}));
    EXPECT_TENSOR_EQ(ne(a, b), Bools({true, true, true, false}));
    EXPECT_TENSOR_EQ(lt(a, b), Bools({false, false, false, false}));
    EXPECT_TENSOR_EQ(le(a, b), Bools({false, false, false, true}));
    EXPECT_TENSOR_EQ(gt(a, b), Bools({false, false, false, false}));
    EXPECT_TENSOR_EQ(ge(a, b), Bools({false, false, false, true}));
    // -0.0 == +0.0.
    EXPECT_TENSOR_EQ(eq(to(F64({-0.0}), dtype), to(F64({0.0}), dtype)), Bools({true}));
  }
}

TEST(BinaryCompareTest, ComparesInThePromotedDtype) {
  // 2^24 + 1 becomes 2^24 in float32, so it equals the float32 2^24.
  EXPECT_TENSOR_EQ(eq(I64({16777217}), F32({16777216.0f})), Bools({true}));
  // A float32 tensor against a 0-dim float64: compared in float32 (0.1f == float(0.1)).
  EXPECT_TENSOR_EQ(eq(F32({0.1f}), scalar_tensor(0.1, kFloat64)), Bools({true}));
  // Two float64 tensors: 0.1f widened is not 0.1.
  EXPECT_TENSOR_EQ(eq(F64({static_cast<double>(0.1f)}), scalar_tensor(0.1, kFloat64)),
                   Bools({false}));
  // int64 [n] against 0-dim floating tensors: the floating dtype decides.
  EXPECT_TENSOR_EQ(lt(I64({0, 1, 2, 3}), scalar_tensor(2.5, kFloat64)),
                   Bools({true, true, true, false}));
  EXPECT_TENSOR_EQ(ge(I64({0, 1}), scalar_tensor(0.5, kFloat32)), Bools({false, true}));
  // bool against int64: bool is 0 / 1.
  EXPECT_TENSOR_EQ(eq(Bools({true, false, true}), I64({1, 0, 2})), Bools({true, true, false}));
  // Big int64 values compare exactly (no detour through double).
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_TENSOR_EQ(gt(I64({big, kI64Max}), I64({big - 1, kI64Max - 1})), Bools({true, true}));
}

// ---- Logical ----

double Truth(double v) { return v != 0.0 ? 1.0 : 0.0; }  // NaN != 0 is true

TEST(BinaryLogicalTest, NonzeroIsTrueForEveryDtype) {
  const DoubleFn and_ref = [](double a, double b) { return Truth(a) * Truth(b); };
  const DoubleFn or_ref = [](double a, double b) { return Truth(a) + Truth(b) > 0 ? 1.0 : 0.0; };
  const std::vector<std::pair<Tensor, Tensor>> cases = {
      {Bools({false, false, true, true}), Bools({false, true, false, true})},
      {I64({0, 5, -3, 0, kI64Min}), I64({0, 0, 2, 7, 1})},
      {F32({0.0f, -0.0f, NAN, 0.5f, INFINITY}), F32({1.0f, 1.0f, 1.0f, 0.0f, 1.0f})},
      {F64({0.0, -0.0, kNaN, 1e-300, -kInf}), F64({kNaN, 1.0, 0.0, 1.0, 1.0})},
      {I64({0, 3, 0}), F32({0.0f, 0.0f, 2.5f})},           // int64 with float32
      {Bools({true, true, false}), F64({0.0, 0.5, 1.0})},  // bool with float64
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const auto& [a, b] = cases[i];
    const Shape shape = {a.size(0)};
    EXPECT_TENSOR_EQ(logical_and(a, b), Expected(and_ref, a, b, shape, kFloat64, kBool));
    EXPECT_TENSOR_EQ(logical_or(a, b), Expected(or_ref, a, b, shape, kFloat64, kBool));
    // Broadcast: a column against b as a row, and non-contiguous operands.
    const Tensor col = reshape(a, {a.size(0), 1});
    const Shape square = {a.size(0), b.size(0)};
    EXPECT_TENSOR_EQ(logical_and(col, b), Expected(and_ref, col, b, square, kFloat64, kBool));
    EXPECT_TENSOR_EQ(logical_or(StepSliced(a), StepSliced(b)),
                     Expected(or_ref, a, b, shape, kFloat64, kBool));
  }
}

TEST(BinaryLogicalTest, PromotionKeepsTinyAndHugeValuesTrue) {
  // float32 with float64 promotes to float64, where 1e-50 (0 in float32) is still nonzero;
  // int64 with float32 computes in float32, where no nonzero int64 becomes 0.
  EXPECT_TENSOR_EQ(logical_and(F32({1.0f, 0.0f}), F64({1e-50, 1e-50})), Bools({true, false}));
  EXPECT_TENSOR_EQ(logical_or(F64({1e-320, 0.0}), F32({0.0f, 0.0f})), Bools({true, false}));
  EXPECT_TENSOR_EQ(logical_and(I64({kI64Max, kI64Min, 1}), F32({1e-30f, 1.0f, 1e30f})),
                   Bools({true, true, true}));
}

TEST(BinaryLogicalTest, LogicalNotIsEqualToZeroForEveryDtypeAndLayout) {
  EXPECT_TENSOR_EQ(logical_not(F32({0.0f, -0.0f, NAN, 2.0f, -INFINITY})),
                   Bools({true, true, false, false, false}));
  EXPECT_TENSOR_EQ(logical_not(F64({0.0, 1e-300, kNaN})), Bools({true, false, false}));
  EXPECT_TENSOR_EQ(logical_not(I64({0, 3, -1, kI64Min})), Bools({true, false, false, false}));
  EXPECT_TENSOR_EQ(logical_not(Bools({true, false})), Bools({false, true}));
  EXPECT_TENSOR_EQ(logical_not(scalar_tensor(int64_t{0})), tensor(std::vector<bool>{true}, {}));
  EXPECT_TENSOR_EQ(logical_not(zeros({0, 2})), Bools({}, {0, 2}));
  // Transposed and expanded inputs: read through their strides.
  const Tensor m = I64({0, 1, 2, 0, 0, 5}, {2, 3});
  EXPECT_TENSOR_EQ(logical_not(TransposedCopy(m)),
                   Bools({true, false, false, true, true, false}, {2, 3}));
  EXPECT_TENSOR_EQ(logical_not(transpose(m, 0, 1)),
                   Bools({true, true, false, true, false, false}, {3, 2}));
  EXPECT_TENSOR_EQ(logical_not(expand(I64({0, 2}, {2, 1}), {2, 3})),
                   Bools({true, true, true, false, false, false}, {2, 3}));
}

// ---- where ----

Tensor WhereExpected(const Tensor& c, const Tensor& a, const Tensor& b, IntArrayRef shape,
                     DType dtype) {
  const std::vector<double> vc = BroadcastValues<double>(c, shape);
  const std::vector<double> va = BroadcastValues<double>(a, shape);
  const std::vector<double> vb = BroadcastValues<double>(b, shape);
  std::vector<double> r(vc.size());
  for (size_t i = 0; i < r.size(); ++i) {
    r[i] = vc[i] != 0 ? RoundTo(va[i], dtype) : RoundTo(vb[i], dtype);
  }
  return to(tensor(r, shape), dtype);
}

Tensor RandomMask(IntArrayRef shape, uint32_t seed) {
  return to(SmallInts(shape, kInt64, seed, 0, 1), kBool);
}

TEST(BinaryWhereTest, SelectsAcrossThreeWayBroadcastsAndLayouts) {
  struct Case {
    Tensor c, a, b;
    Shape out;
  };
  for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    const auto vals = [&](IntArrayRef s, uint32_t seed) { return SmallInts(s, dtype, seed, 0, 9); };
    const std::vector<Case> cases = {
        {RandomMask({3, 4}, 41), vals({3, 4}, 42), vals({3, 4}, 43), {3, 4}},
        {RandomMask({2, 1, 1}, 44), vals({1, 3, 1}, 45), vals({4}, 46), {2, 3, 4}},
        {RandomMask({3, 1}, 47), vals({3, 4}, 48), vals({3, 4}, 49), {3, 4}},  // per-row pick
        {RandomMask({3, 1, 1}, 50), vals({3, 2, 4}, 51), vals({3, 2, 4}, 52), {3, 2, 4}},
        {RandomMask({4, 1}, 53), TransposedCopy(vals({4, 3}, 54)), vals({4, 3}, 55), {4, 3}},
        {RandomMask({4, 1}, 56),
         StepSliced(vals({4, 3}, 57)),
         expand(vals({3}, 58), {4, 3}),
         {4, 3}},
        {StepSliced(RandomMask({4, 5}, 59)), vals({4, 5}, 60), vals({5}, 61), {4, 5}},
        {TransposedCopy(RandomMask({5, 4}, 62)),
         TransposedCopy(vals({5, 4}, 63)),
         vals({}, 64),
         {5, 4}},
        {tensor(std::vector<bool>{true}, {}), vals({}, 65), vals({2}, 66), {2}},
        {RandomMask({0, 3}, 67), vals({3}, 68), vals({1, 3}, 69), {0, 3}},
        // A per-row condition whose picked side is a broadcast scalar (stride 0) or a
        // repeating row (unit stride), next to a full operand.
        {RandomMask({4, 1}, 76), TransposedCopy(vals({4, 3}, 77)), vals({}, 78), {4, 3}},
        {RandomMask({3, 1}, 79), vals({3, 4}, 80), vals({4}, 81), {3, 4}},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " case " + std::to_string(i));
      const Case& k = cases[i];
      EXPECT_TENSOR_EQ(where(k.c, k.a, k.b), WhereExpected(k.c, k.a, k.b, k.out, dtype));
    }
  }
}

TEST(BinaryWhereTest, PromotesTheBranchesLikeAdd) {
  const Tensor c = Bools({true, false});
  EXPECT_TENSOR_EQ(where(c, I64({1, 2}), F32({0.5f, 0.25f})), F32({1.0f, 0.25f}));
  EXPECT_TENSOR_EQ(where(c, F32({0.5f, 0.25f}), scalar_tensor(0.1, kFloat64)), F32({0.5f, 0.1f}));
  EXPECT_TENSOR_EQ(where(c, I64({1, 2}), scalar_tensor(0.1, kFloat64)), F64({1.0, 0.1}));
  EXPECT_TENSOR_EQ(where(c, Bools({true, true}), I64({7, 8})), I64({1, 8}));
  EXPECT_TENSOR_EQ(where(c, F64({kNaN, 1.0}), F64({2.0, kNaN})), F64({kNaN, kNaN}));
}

TEST(BinaryWhereTest, RejectsNonBoolConditionsAndBadShapes) {
  EXPECT_FT_ERROR(where(I64({1, 0}), zeros({2}), zeros({2})),
                  "where: expected condition to be a bool tensor, got int64");
  EXPECT_FT_ERROR(where(F32({1.0f}), zeros({1}), zeros({1})),
                  "where: expected condition to be a bool tensor, got float32");
  EXPECT_FT_ERROR(where(Bools({true, false}), zeros({2}), zeros({3})),
                  "where: shapes [2] and [3] cannot be broadcast together");
  EXPECT_FT_ERROR(where(Bools({true, false, true, false}), zeros({3}), zeros({3})),
                  "where: shapes [4] and [3] cannot be broadcast together");
}

// ---- clamp / clamp_ ----

// ClampRef: PyTorch's clamp as a closed form: NaN anywhere is NaN, else min(max(x, lo), hi)
// (so lo > hi gives hi); an absent bound is infinite.
double ClampRef(double x, std::optional<double> lo, std::optional<double> hi) {
  const double l = lo.value_or(-kInf), h = hi.value_or(kInf);
  if (std::isnan(x) || std::isnan(l) || std::isnan(h)) return kNaN;
  return std::min(std::max(x, l), h);
}

Tensor ClampExpected(const Tensor& x, std::optional<double> lo, std::optional<double> hi,
                     DType dtype) {
  const Shape shape(x.sizes().begin(), x.sizes().end());
  const std::vector<double> v = Values<double>(x);
  if (lo) lo = RoundTo(*lo, dtype);
  if (hi) hi = RoundTo(*hi, dtype);
  std::vector<double> r;
  for (double e : v) r.push_back(ClampRef(RoundTo(e, dtype), lo, hi));
  return to(tensor(r, shape), dtype);
}

std::optional<Scalar> AsScalar(std::optional<double> v) {
  if (!v) return std::nullopt;
  return Scalar(*v);
}

struct Bounds {
  std::optional<double> lo, hi;
};

std::vector<Bounds> BoundCases() {
  return {{-0.5, 0.5}, {-0.5, std::nullopt}, {std::nullopt, 0.3}, {1.0, -1.0},
          {kNaN, 1.0}, {0.0, kNaN},          {0.1, 0.1},          {-kInf, kInf}};
}

TEST(BinaryClampTest, FloatMatchesClosedFormIncludingNaNAndCrossedBounds) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor x =
        to(F64({-2.0, -0.5, -0.1, 0.0, 0.1, 0.7, kNaN, kInf, -kInf, 1.5}, {2, 5}), dtype);
    const std::vector<Tensor> layouts = {x,
                                         TransposedCopy(TransposedCopy(x)),
                                         StepSliced(x),
                                         TransposedCopy(contiguous(transpose(x, 0, 1))),
                                         expand(to(F64({0.2, -3.0, kNaN}), dtype), {2, 3}),
                                         scalar_tensor(0.9, dtype),
                                         zeros({0, 4}, dtype)};
    for (const Bounds& b : BoundCases()) {
      for (size_t i = 0; i < layouts.size(); ++i) {
        SCOPED_TRACE(std::string(DTypeName(dtype)) + " layout " + std::to_string(i) + " [" +
                     (b.lo ? std::to_string(*b.lo) : "none") + ", " +
                     (b.hi ? std::to_string(*b.hi) : "none") + "]");
        EXPECT_TENSOR_EQ(clamp(layouts[i], AsScalar(b.lo), AsScalar(b.hi)),
                         ClampExpected(layouts[i], b.lo, b.hi, dtype));
      }
    }
  }
}

TEST(BinaryClampTest, IntegerAndBoolInputsFollowThePythonScalarRule) {
  const Tensor x = I64({-10, -3, 0, 5, kI64Max, kI64Min});
  // int64 with int bounds: int64, exact.
  EXPECT_TENSOR_EQ(clamp(x, int64_t{-3}, int64_t{4}), I64({-3, -3, 0, 4, 4, -3}));
  EXPECT_TENSOR_EQ(clamp(x, int64_t{2}, std::nullopt), I64({2, 2, 2, 5, kI64Max, 2}));
  EXPECT_TENSOR_EQ(clamp(x, std::nullopt, kI64Max - 1), I64({-10, -3, 0, 5, kI64Max - 1, kI64Min}));
  EXPECT_TENSOR_EQ(clamp(x, int64_t{4}, int64_t{-4}), I64({-4, -4, -4, -4, -4, -4}));
  EXPECT_TENSOR_EQ(clamp(TransposedCopy(I64({1, 9, 4, 6}, {2, 2})), int64_t{3}, int64_t{5}),
                   I64({3, 5, 4, 5}, {2, 2}));
  // A floating bound makes the result float32.
  EXPECT_TENSOR_EQ(clamp(I64({-3, 0, 7}), 0.5, std::nullopt), F32({0.5f, 0.5f, 7.0f}));
  EXPECT_TENSOR_EQ(clamp(I64({-3, 0, 7}), int64_t{-1}, 2.5), F32({-1.0f, 0.0f, 2.5f}));
  // float32 with int bounds stays float32; bool with an int bound becomes int64.
  EXPECT_TENSOR_EQ(clamp(F32({-3.5f, 0.5f}), int64_t{0}, int64_t{1}), F32({0.0f, 0.5f}));
  EXPECT_TENSOR_EQ(clamp(Bools({true, false}), int64_t{0}, int64_t{0}), I64({0, 0}));
}

TEST(BinaryClampTest, BoundsBeyondFloat32RangeSaturate) {
  const Tensor x = F32({1.0f, -1.0f, INFINITY, -INFINITY});
  EXPECT_TENSOR_EQ(clamp(x, std::nullopt, 1e39), x);
  EXPECT_TENSOR_EQ(clamp(x, -1e39, std::nullopt), x);
  EXPECT_TENSOR_EQ(clamp(x, 1e39, std::nullopt), F32({INFINITY, INFINITY, INFINITY, INFINITY}));
  Tensor y = clone(x);
  clamp_(y, -1e39, 1e39);
  EXPECT_TENSOR_EQ(y, x);
}

TEST(BinaryClampTest, Errors) {
  EXPECT_FT_ERROR(clamp(zeros({2}), std::nullopt, std::nullopt),
                  "clamp: at least one of min or max must be given");
  EXPECT_FT_ERROR(clamp(Bools({true}), true, std::nullopt),
                  "clamp: not supported for bool tensors");
  EXPECT_FT_ERROR(clamp_(zeros({2}), std::nullopt, std::nullopt),
                  "clamp_: at least one of min or max must be given");
  EXPECT_FT_ERROR(clamp_(Bools({true}), false, true), "clamp_: not supported for bool tensors");
  EXPECT_FT_ERROR(clamp_(Bools({true}), int64_t{0}, std::nullopt),
                  "clamp_: result type int64 can't be cast to the desired output type bool");
  EXPECT_FT_ERROR(clamp_(expand(zeros({1}), {3}), 0.0, 1.0),
                  "clamp_: cannot write in place into a tensor whose elements overlap");
  // A failed clamp_ writes nothing and keeps the version.
  const Tensor x = I64({-5, 5});
  const int64_t version = x.version();
  EXPECT_FT_ERROR(clamp_(x, 0.5, std::nullopt),
                  "clamp_: result type float32 can't be cast to the desired output type int64");
  EXPECT_TENSOR_EQ(x, I64({-5, 5}));
  EXPECT_EQ(x.version(), version);
}

TEST(BinaryClampTest, InPlaceMatchesClosedFormThroughViews) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    const bool is_int = dtype == kInt64;
    std::vector<Bounds> bounds = BoundCases();
    if (is_int) bounds = {{-1.0, 1.0}, {0.0, std::nullopt}, {std::nullopt, -2.0}, {2.0, -2.0}};
    for (const Bounds& b : bounds) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " [" + (b.lo ? std::to_string(*b.lo) : "none") +
                   ", " + (b.hi ? std::to_string(*b.hi) : "none") + "]");
      const auto scalar = [&](std::optional<double> v) -> std::optional<Scalar> {
        if (!v) return std::nullopt;
        return is_int ? Scalar(static_cast<int64_t>(*v)) : Scalar(*v);
      };
      // Clamp the odd columns of a [3, 6] base, seen as a step-sliced view.
      const Tensor base = is_int ? SmallInts({3, 6}, dtype, 71) : Uniform({3, 6}, dtype, 71);
      if (!is_int) copy_into(select(select(base, 0, 1), 0, 3), scalar_tensor(kNaN, dtype));
      const Tensor before = clone(base);
      const Tensor view = slice(base, 1, 1, std::nullopt, 2);
      const int64_t version = base.version();
      const Tensor result = clamp_(view, scalar(b.lo), scalar(b.hi));
      EXPECT_TRUE(result.is_same(view));
      EXPECT_EQ(base.version(), version + 1);
      EXPECT_TENSOR_EQ(view,
                       ClampExpected(slice(before, 1, 1, std::nullopt, 2), b.lo, b.hi, dtype));
      EXPECT_TENSOR_EQ(slice(base, 1, 0, std::nullopt, 2),
                       slice(before, 1, 0, std::nullopt, 2));  // untouched
      // A transposed view of another base.
      const Tensor base2 = is_int ? SmallInts({4, 3}, dtype, 72) : Uniform({4, 3}, dtype, 72);
      const Tensor before2 = clone(base2);
      clamp_(transpose(base2, 0, 1), scalar(b.lo), scalar(b.hi));
      EXPECT_TENSOR_EQ(base2, ClampExpected(before2, b.lo, b.hi, dtype));
    }
  }
}

// ---- In-place arithmetic ----

struct InPlaceCase {
  const char* name;
  BinaryKernel kernel;
  DoubleFn ref;
};

std::vector<InPlaceCase> InPlaceOps() {
  return {{"add_", add_, [](double a, double b) { return a + b; }},
          {"sub_", sub_, [](double a, double b) { return a - b; }},
          {"mul_", mul_, [](double a, double b) { return a * b; }},
          {"div_", div_, [](double a, double b) { return a / b; }}};
}

TEST(BinaryInPlaceTest, MatchesDoubleLoopReturnsSelfAndBumpsTheVersionOnce) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const std::vector<Tensor> others = {Uniform({3, 4}, dtype, 81, 0.5, 2.0),
                                        Uniform({4}, dtype, 82, 0.5, 2.0),
                                        Uniform({3, 1}, dtype, 83, 0.5, 2.0),
                                        scalar_tensor(1.75, dtype),
                                        TransposedCopy(Uniform({3, 4}, dtype, 84, 0.5, 2.0)),
                                        StepSliced(Uniform({3, 4}, dtype, 85, 0.5, 2.0)),
                                        expand(Uniform({4}, dtype, 86, 0.5, 2.0), {3, 4})};
    for (const InPlaceCase& c : InPlaceOps()) {
      for (size_t i = 0; i < others.size(); ++i) {
        SCOPED_TRACE(std::string(c.name) + " " + DTypeName(dtype) + " other " + std::to_string(i));
        const Tensor self = Uniform({3, 4}, dtype, 87);
        const Tensor expected = Expected(c.ref, self, others[i], {3, 4}, dtype);
        const int64_t version = self.version();
        const Tensor result = c.kernel(self, others[i]);
        EXPECT_TRUE(result.is_same(self));
        EXPECT_EQ(self.version(), version + 1);
        EXPECT_TENSOR_EQ(self, expected);
      }
    }
  }
}

TEST(BinaryInPlaceTest, WritesThroughStepSlicedAndTransposedViews) {
  for (const InPlaceCase& c : InPlaceOps()) {
    SCOPED_TRACE(c.name);
    // The odd columns of a [4, 6] base.
    const Tensor base = Uniform({4, 6}, kFloat64, 91);
    const Tensor before = clone(base);
    const Tensor other = Uniform({3}, kFloat64, 92, 0.5, 2.0);
    const Tensor view = slice(base, 1, 1, std::nullopt, 2);
    c.kernel(view, other);
    EXPECT_TENSOR_EQ(
        view, Expected(c.ref, slice(before, 1, 1, std::nullopt, 2), other, {4, 3}, kFloat64));
    EXPECT_TENSOR_EQ(slice(base, 1, 0, std::nullopt, 2), slice(before, 1, 0, std::nullopt, 2));
    // A transposed view: base2[j][i] op= other2[i][j].
    const Tensor base2 = Uniform({3, 4}, kFloat32, 93);
    const Tensor before2 = clone(base2);
    const Tensor other2 = Uniform({4, 3}, kFloat32, 94, 0.5, 2.0);
    c.kernel(transpose(base2, 0, 1), other2);
    EXPECT_TENSOR_EQ(base2, Expected(c.ref, before2, transpose(other2, 0, 1), {3, 4}, kFloat32));
  }
}

TEST(BinaryInPlaceTest, ComputesInThePromotedDtypeThenCastsToSelf) {
  // float32 self with a dimensioned float64 other computes in float64 (PyTorch): 1 + 2^-24
  // + 2^-50 rounds up to 1 + 2^-23 in float32, whereas float32 arithmetic (other rounded to
  // 2^-24 first) would tie to even at 1.
  const double tiny = std::ldexp(1.0, -24) + std::ldexp(1.0, -50);
  Tensor x = F32({1.0f});
  add_(x, F64({tiny}));
  EXPECT_EQ(x.item<float>(), 1.0f + std::ldexp(1.0f, -23));
  // A 0-dim float64 other does not widen the computation: float32 arithmetic.
  Tensor y = F32({1.0f});
  add_(y, scalar_tensor(tiny, kFloat64));
  EXPECT_EQ(y.item<float>(), 1.0f);
  // int64 and bool others into floating self; bool into int64.
  Tensor f = F32({0.5f, 1.5f});
  mul_(f, I64({3, -2}));
  EXPECT_TENSOR_EQ(f, F32({1.5f, -3.0f}));
  Tensor d = F64({0.5, 1.5});
  add_(d, Bools({true, false}));
  EXPECT_TENSOR_EQ(d, F64({1.5, 1.5}));
  Tensor i = I64({4, 5});
  add_(i, Bools({true, true}));
  EXPECT_TENSOR_EQ(i, I64({5, 6}));
  div_(f, I64({3, 2}));
  EXPECT_TENSOR_EQ(f, F32({0.5f, -1.5f}));
}

TEST(BinaryInPlaceTest, Int64WrapsAndBoolAddIsOr) {
  Tensor i = I64({kI64Max, kI64Min, 3});
  add_(i, I64({1}));
  EXPECT_TENSOR_EQ(i, I64({kI64Min, kI64Min + 1, 4}));
  sub_(i, I64({1, 2, 10}));
  EXPECT_TENSOR_EQ(i, I64({kI64Max, kI64Max, -6}));
  mul_(i, scalar_tensor(int64_t{2}));
  EXPECT_TENSOR_EQ(i, I64({-2, -2, -12}));
  Tensor b = Bools({false, false, true, true});
  add_(b, Bools({false, true, false, true}));
  EXPECT_TENSOR_EQ(b, Bools({false, true, true, true}));
  mul_(b, Bools({true, false, true, true}));
  EXPECT_TENSOR_EQ(b, Bools({false, false, true, true}));
}

TEST(BinaryInPlaceTest, OverlappingOtherIsReadBeforeSelfIsWritten) {
  // x[1:] += x[:-1]: every sum uses the old values.
  Tensor x = F64({1, 2, 3, 4, 5});
  add_(slice(x, 0, 1, std::nullopt, 1), slice(x, 0, 0, 4, 1));
  EXPECT_TENSOR_EQ(x, F64({1, 3, 5, 7, 9}));
  // x[:-1] -= x[1:].
  Tensor y = F64({1, 2, 4, 8, 16});
  sub_(slice(y, 0, 0, 4, 1), slice(y, 0, 1, std::nullopt, 1));
  EXPECT_TENSOR_EQ(y, F64({-1, -2, -4, -8, 16}));
  // x += x^T on a square matrix.
  Tensor m = F32({1, 2, 3, 4}, {2, 2});
  add_(m, transpose(m, 0, 1));
  EXPECT_TENSOR_EQ(m, F32({2, 5, 5, 8}, {2, 2}));
  // x *= x[0] broadcast (stride 0 over the same storage).
  Tensor z = I64({2, 3, 4});
  mul_(z, expand(slice(z, 0, 0, 1, 1), {3}));
  EXPECT_TENSOR_EQ(z, I64({4, 6, 8}));
  // x[::2] /= x[:3] (interleaved overlap).
  Tensor w = F64({2, 4, 8, 16, 32});
  div_(slice(w, 0, 0, std::nullopt, 2), slice(w, 0, 0, 3, 1));
  EXPECT_TENSOR_EQ(w, F64({1, 4, 2, 16, 4}));
  // The very same view is fine elementwise.
  Tensor v = F64({1, -2, 3});
  mul_(v, v);
  EXPECT_TENSOR_EQ(v, F64({1, 4, 9}));
  sub_(v, v);
  EXPECT_TENSOR_EQ(v, F64({0, 0, 0}));
}

TEST(BinaryInPlaceTest, ErrorsLeaveSelfAndItsVersionUntouched) {
  struct Case {
    std::function<Tensor(const Tensor&)> run;
    Tensor self;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](const Tensor& s) {
         return add_(s, F32({0.5f, 0.5f}));
       },
       I64({1, 2}), "add_: result type float32 can't be cast to the desired output type int64"},
      {[](const Tensor& s) { return sub_(s, scalar_tensor(0.5, kFloat64)); }, I64({1, 2}),
       "sub_: result type float64 can't be cast to the desired output type int64"},
      {[](const Tensor& s) {
         return mul_(s, I64({1, 2}));
       },
       Bools({true, false}),
       "mul_: result type int64 can't be cast to the desired output type bool"},
      {[](const Tensor& s) {
         return div_(s, I64({1, 2}));
       },
       I64({1, 2}), "div_: result type float32 can't be cast to the desired output type int64"},
      {[](const Tensor& s) {
         return div_(s, Bools({true, true}));
       },
       Bools({true, false}),
       "div_: result type float32 can't be cast to the desired output type bool"},
      {[](const Tensor& s) {
         return sub_(s, Bools({true, false}));
       },
       Bools({true, false}), "sub_: subtraction with two bool tensors is not supported"},
      {[](const Tensor& s) {
         return sub_(s, Bools({true, false}));
       },
       F32({1.0f, 2.0f}), "sub_: subtraction with a bool tensor is not supported"},
      {[](const Tensor& s) {
         return add_(s, zeros({2, 2}));
       },
       F32({1.0f, 2.0f}), "add_: output with shape [2] doesn't match the broadcast shape [2, 2]"},
      {[](const Tensor& s) { return mul_(s, zeros({3})); }, F32({1.0f, 2.0f}),
       "mul_: shapes [2] and [3] cannot be broadcast together"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    const Tensor before = clone(c.self);
    const int64_t version = c.self.version();
    EXPECT_FT_ERROR(c.run(c.self), c.message);
    EXPECT_TENSOR_EQ(c.self, before);
    EXPECT_EQ(c.self.version(), version);
  }
  const Tensor broadcast = expand(zeros({1}), {3});
  EXPECT_FT_ERROR(add_(broadcast, zeros({3})),
                  "add_: cannot write in place into a tensor whose elements overlap");
  EXPECT_FT_ERROR(sub_(broadcast, zeros({3})), "sub_: cannot write in place");
  EXPECT_FT_ERROR(mul_(broadcast, zeros({3})), "mul_: cannot write in place");
  EXPECT_FT_ERROR(div_(broadcast, zeros({3})), "div_: cannot write in place");
}

TEST(BinaryInPlaceTest, RankZeroAndSizeZeroSelf) {
  Tensor s = scalar_tensor(3.0, kFloat64);
  add_(s, scalar_tensor(0.5, kFloat64));
  EXPECT_EQ(s.item<double>(), 3.5);
  Tensor e = zeros({0, 3});
  const int64_t version = e.version();
  EXPECT_TRUE(mul_(e, ones({3})).is_same(e));
  EXPECT_EQ(e.version(), version + 1);
  EXPECT_EQ(e.sizes(), IntArrayRef({0, 3}));
}

// ---- copy_ ----

TEST(BinaryCopyTest, CastsLikeTorch) {
  Tensor i = zeros({6}, kInt64);
  copy_(i, F64({2.7, -2.7, 0.5, -0.5, kNaN, 1e30}));
  EXPECT_TENSOR_EQ(i, I64({2, -2, 0, 0, kI64Min, kI64Min}));
  Tensor b = zeros({5}, kBool);
  copy_(b, F64({0.5, -0.0, kNaN, 0.0, -3.0}));
  EXPECT_TENSOR_EQ(b, Bools({true, false, true, false, true}));
  Tensor f = zeros({4});
  copy_(f, I64({16777217, -3, 0, 1}));
  EXPECT_TENSOR_EQ(f, F32({16777216.0f, -3.0f, 0.0f, 1.0f}));
  copy_(f, F64({1e300, -1e300, 0.1, kNaN}));
  EXPECT_TENSOR_EQ(f, F32({INFINITY, -INFINITY, 0.1f, NAN}));
  Tensor d = zeros({2}, kFloat64);
  copy_(d, Bools({true, false}));
  EXPECT_TENSOR_EQ(d, F64({1.0, 0.0}));
}

TEST(BinaryCopyTest, BroadcastsAndReadsAndWritesAnyLayout) {
  const Tensor row = F64({1, 2, 3});
  Tensor m = zeros({2, 3}, kFloat64);
  const int64_t version = m.version();
  EXPECT_TRUE(copy_(m, row).is_same(m));
  EXPECT_EQ(m.version(), version + 1);
  EXPECT_TENSOR_EQ(m, F64({1, 2, 3, 1, 2, 3}, {2, 3}));
  copy_(m, F64({7, 8}, {2, 1}));
  EXPECT_TENSOR_EQ(m, F64({7, 7, 7, 8, 8, 8}, {2, 3}));
  copy_(m, scalar_tensor(int64_t{5}));
  EXPECT_TENSOR_EQ(m, F64({5, 5, 5, 5, 5, 5}, {2, 3}));
  copy_(m, TransposedCopy(F64({1, 2, 3, 4, 5, 6}, {2, 3})));
  EXPECT_TENSOR_EQ(m, F64({1, 2, 3, 4, 5, 6}, {2, 3}));
  // Into a step-sliced view: only the odd columns change.
  Tensor base = zeros({2, 6}, kFloat32);
  copy_(slice(base, 1, 1, std::nullopt, 2), transpose(F64({1, 2, 3, 4, 5, 6}, {3, 2}), 0, 1));
  EXPECT_TENSOR_EQ(base, F32({0, 1, 0, 3, 0, 5, 0, 2, 0, 4, 0, 6}, {2, 6}));
  // Into a transposed view.
  Tensor t = zeros({3, 2}, kInt64);
  copy_(transpose(t, 0, 1), I64({1, 2, 3, 4, 5, 6}, {2, 3}));
  EXPECT_TENSOR_EQ(t, I64({1, 4, 2, 5, 3, 6}, {3, 2}));
  // Rank 0 and size 0.
  Tensor s = scalar_tensor(0.0, kFloat64);
  copy_(s, F64({9.5}, {}));
  EXPECT_EQ(s.item<double>(), 9.5);
  Tensor e = zeros({0, 3});
  copy_(e, F64({1, 2, 3}));
  EXPECT_EQ(e.numel(), 0);
}

TEST(BinaryCopyTest, OverlappingSourceIsReadFirst) {
  Tensor x = F64({0, 1, 2, 3, 4, 5});
  copy_(slice(x, 0, 1, std::nullopt, 1), slice(x, 0, 0, 5, 1));  // shift right
  EXPECT_TENSOR_EQ(x, F64({0, 0, 1, 2, 3, 4}));
  Tensor y = F64({0, 1, 2, 3, 4, 5});
  copy_(slice(y, 0, 0, 5, 1), slice(y, 0, 1, std::nullopt, 1));  // shift left
  EXPECT_TENSOR_EQ(y, F64({1, 2, 3, 4, 5, 5}));
  Tensor m = I64({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  copy_(m, transpose(m, 0, 1));
  EXPECT_TENSOR_EQ(m, I64({1, 4, 7, 2, 5, 8, 3, 6, 9}, {3, 3}));
  Tensor v = F32({1.0f, 2.0f});
  const int64_t version = v.version();
  copy_(v, v);
  EXPECT_TENSOR_EQ(v, F32({1.0f, 2.0f}));
  EXPECT_EQ(v.version(), version + 1);
}

TEST(BinaryCopyTest, Errors) {
  Tensor x = zeros({3});
  const int64_t version = x.version();
  EXPECT_FT_ERROR(copy_(x, zeros({2, 3})),
                  "copy_: source of shape [2, 3] cannot be broadcast to the destination shape [3]");
  EXPECT_FT_ERROR(copy_(x, zeros({4})), "copy_: shapes [3] and [4] cannot be broadcast together");
  EXPECT_FT_ERROR(copy_(expand(zeros({1}), {3}), zeros({3})),
                  "copy_: cannot write in place into a tensor whose elements overlap");
  EXPECT_EQ(x.version(), version);
  EXPECT_TENSOR_EQ(x, zeros({3}));
}

// ---- fill_ / zero_ ----

TEST(BinaryFillTest, ConvertsTheValueToEveryDtype) {
  Tensor f = zeros({3});
  const int64_t version = f.version();
  EXPECT_TRUE(fill_(f, 0.1).is_same(f));
  EXPECT_EQ(f.version(), version + 1);
  EXPECT_TENSOR_EQ(f, F32({0.1f, 0.1f, 0.1f}));
  fill_(f, kInf);
  EXPECT_TENSOR_EQ(f, F32({INFINITY, INFINITY, INFINITY}));
  fill_(f, kNaN);
  EXPECT_TENSOR_EQ(f, F32({NAN, NAN, NAN}));
  fill_(f, static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_EQ(f.to_vector<float>()[0], std::numeric_limits<float>::max());
  fill_(f, int64_t{-7});
  EXPECT_TENSOR_EQ(f, F32({-7.0f, -7.0f, -7.0f}));
  Tensor d = zeros({2}, kFloat64);
  fill_(d, 1e300);
  EXPECT_TENSOR_EQ(d, F64({1e300, 1e300}));
  Tensor i = zeros({2}, kInt64);
  fill_(i, 2.7);
  EXPECT_TENSOR_EQ(i, I64({2, 2}));
  fill_(i, -2.7);
  EXPECT_TENSOR_EQ(i, I64({-2, -2}));
  fill_(i, -9223372036854775808.0);  // -2^63 fits
  EXPECT_TENSOR_EQ(i, I64({kI64Min, kI64Min}));
  fill_(i, kI64Max);
  EXPECT_TENSOR_EQ(i, I64({kI64Max, kI64Max}));
  fill_(i, true);
  EXPECT_TENSOR_EQ(i, I64({1, 1}));
  Tensor b = zeros({2}, kBool);
  fill_(b, 2.5);
  EXPECT_TENSOR_EQ(b, Bools({true, true}));
  fill_(b, 0.0);
  EXPECT_TENSOR_EQ(b, Bools({false, false}));
  fill_(b, int64_t{-1});
  EXPECT_TENSOR_EQ(b, Bools({true, true}));
  fill_(b, false);
  fill_(b, kNaN);  // NaN is nonzero
  EXPECT_TENSOR_EQ(b, Bools({true, true}));
}

TEST(BinaryFillTest, FillsOnlyTheViewsElements) {
  Tensor base = zeros({3, 4}, kInt64);
  fill_(slice(base, 1, 1, std::nullopt, 2), int64_t{7});
  EXPECT_TENSOR_EQ(base, I64({0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7}, {3, 4}));
  fill_(transpose(slice(base, 0, 0, 2, 1), 0, 1), int64_t{-1});
  EXPECT_TENSOR_EQ(base, I64({-1, -1, -1, -1, -1, -1, -1, -1, 0, 7, 0, 7}, {3, 4}));
  Tensor s = scalar_tensor(0.0, kFloat64);
  fill_(s, 4.25);
  EXPECT_EQ(s.item<double>(), 4.25);
  Tensor e = zeros({0, 5});
  const int64_t version = e.version();
  fill_(e, 1.0);
  EXPECT_EQ(e.version(), version + 1);
}

TEST(BinaryFillTest, OverflowingValuesAndOverlappingSelfThrowBeforeWriting) {
  Tensor i = I64({1, 2});
  Tensor f = F32({1.0f, 2.0f});
  const int64_t vi = i.version(), vf = f.version();
  EXPECT_FT_ERROR(fill_(i, 9.3e18),
                  "fill_: value 9.3e+18 cannot be converted to int64 without overflow");
  EXPECT_FT_ERROR(fill_(i, 9223372036854775808.0), "cannot be converted to int64 without overflow");
  EXPECT_FT_ERROR(fill_(i, kNaN), "fill_: value nan cannot be converted to int64 without overflow");
  EXPECT_FT_ERROR(fill_(i, -kInf), "fill_: value -inf cannot be converted to int64");
  EXPECT_FT_ERROR(fill_(f, 1e39),
                  "fill_: value 1e+39 cannot be converted to float32 without overflow");
  EXPECT_FT_ERROR(fill_(f, -1e39), "fill_: value -1e+39 cannot be converted to float32");
  EXPECT_TENSOR_EQ(i, I64({1, 2}));
  EXPECT_TENSOR_EQ(f, F32({1.0f, 2.0f}));
  EXPECT_EQ(i.version(), vi);
  EXPECT_EQ(f.version(), vf);
  const Tensor broadcast = expand(zeros({2, 1}), {2, 3});
  EXPECT_FT_ERROR(fill_(broadcast, 1.0),
                  "fill_: cannot write in place into a tensor whose elements overlap");
  EXPECT_FT_ERROR(zero_(broadcast),
                  "zero_: cannot write in place into a tensor whose elements overlap");
}

TEST(BinaryZeroTest, ZeroesEveryDtypeAndView) {
  Tensor f = Uniform({2, 3}, kFloat32, 101);
  const int64_t version = f.version();
  EXPECT_TRUE(zero_(f).is_same(f));
  EXPECT_EQ(f.version(), version + 1);
  EXPECT_TENSOR_EQ(f, zeros({2, 3}));
  Tensor i = I64({1, 2, 3, 4}, {2, 2});
  zero_(select(i, 1, 0));
  EXPECT_TENSOR_EQ(i, I64({0, 2, 0, 4}, {2, 2}));
  Tensor b = Bools({true, true});
  zero_(b);
  EXPECT_TENSOR_EQ(b, Bools({false, false}));
  Tensor d = F64({-1.5}, {});
  zero_(d);
  EXPECT_EQ(d.item<double>(), 0.0);
  EXPECT_FALSE(std::signbit(d.item<double>()));
}

// ---- Large inputs: the intra-op threaded paths ----

TEST(BinaryLargeInputTest, ElementwiseKernelsOnThreadsMatchDoubleLoop) {
  ScopedThreads threads(3);
  const DoubleFn plus = [](double x, double y) { return x + y; };
  const DoubleFn times = [](double x, double y) { return x * y; };
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor a = Uniform({kLarge}, dtype, 111);
    const Tensor b = Uniform({kLarge}, dtype, 112, 0.25, 3.0);
    const Tensor a2 = reshape(a, {700, 200});
    const Tensor row = Uniform({200}, dtype, 113, 0.25, 3.0);
    const Tensor s = scalar_tensor(1.25, dtype);
    // float64 takes the same (templated) layout code as float32, only vecmath's element
    // functions differ: the contiguous layout checks them, the other layouts run for float32
    // only, which keeps the test fast in fastbuild.
    const bool all_layouts = dtype == kFloat32;
    for (const ArithCase& c : ExactArithmetic()) {
      SCOPED_TRACE(c.name);
      EXPECT_TRUE(FastNear(c.kernel(a, b), Expected(c.ref, a, b, {kLarge}, dtype)));
      if (!all_layouts) continue;
      EXPECT_TRUE(FastNear(c.kernel(s, b), Expected(c.ref, s, b, {kLarge}, dtype)));
      EXPECT_TRUE(FastNear(c.kernel(a2, row), Expected(c.ref, a2, row, {700, 200}, dtype)));
      EXPECT_TRUE(FastNear(c.kernel(TransposedCopy(a2), StepSliced(reshape(b, {700, 200}))),
                           Expected(c.ref, a2, reshape(b, {700, 200}), {700, 200}, dtype)));
    }
    const double rtol = dtype == kFloat32 ? 1e-6 : 1e-14;
    EXPECT_TRUE(
        FastNear(pow(b, a),
                 Expected([](double x, double y) { return std::pow(x, y); }, b, a, {kLarge}, dtype),
                 0, rtol));
    EXPECT_TRUE(FastNear(
        atan2(a, b),
        Expected([](double x, double y) { return std::atan2(x, y); }, a, b, {kLarge}, dtype), 1e-30,
        rtol));
    const Tensor ties = SmallInts({kLarge}, dtype, 114);
    const Tensor ties2 = SmallInts({kLarge}, dtype, 115);
    for (const ArithCase& c : Comparisons()) {
      SCOPED_TRACE(c.name);
      if (all_layouts) {
        EXPECT_TRUE(FastNear(c.kernel(ties, s), Expected(c.ref, ties, s, {kLarge}, dtype, kBool)));
      }
      EXPECT_TRUE(
          FastNear(c.kernel(ties, ties2), Expected(c.ref, ties, ties2, {kLarge}, dtype, kBool)));
    }
    const Tensor mask = RandomMask({kLarge}, 116);
    EXPECT_TRUE(FastNear(where(mask, a, b), WhereExpected(mask, a, b, {kLarge}, dtype)));
    EXPECT_TRUE(FastNear(clamp(a, -0.5, 0.75), ClampExpected(a, -0.5, 0.75, dtype)));
    Tensor self = clone(a);
    add_(self, b);
    EXPECT_TRUE(FastNear(self, Expected(plus, a, b, {kLarge}, dtype)));
    Tensor strided = StepSliced(a);
    mul_(strided, s);
    EXPECT_TRUE(FastNear(contiguous(strided), Expected(times, a, s, {kLarge}, dtype)));
  }
  const Tensor ints = SmallInts({kLarge}, kInt64, 117, -1000, 1000);
  const Tensor small = SmallInts({kLarge}, kInt64, 118, 0, 5);
  EXPECT_TRUE(FastNear(add(ints, small), Expected(plus, ints, small, {kLarge}, kInt64)));
  EXPECT_TRUE(FastNear(logical_and(ints, small),
                       Expected([](double x, double y) { return Truth(x) * Truth(y); }, ints, small,
                                {kLarge}, kFloat64, kBool)));
  EXPECT_TRUE(
      FastNear(logical_not(small), Expected([](double x, double) { return x == 0 ? 1.0 : 0.0; },
                                            small, small, {kLarge}, kFloat64, kBool)));
}

// ---- The dtypes beyond the original four (NOTE: [Binary kernels of the new dtypes]) ----
// Oracles: int8 wrap by closed form, bfloat16 as float rounded once, through views.

TEST(BinaryNewDTypes, InPlaceThroughStridedViews) {
  // self: every other element of an int8 buffer; other: a transposed int8 view.
  Tensor base = to(tensor(std::vector<int64_t>{100, 0, 120, 0, -128, 0, 127, 0}), kInt8);
  Tensor self = slice(base, 0, 0, std::nullopt, 2);  // 100, 120, -128, 127
  const Tensor other =
      reshape(transpose(to(tensor(std::vector<int64_t>{100, 1, 10, 127}, {2, 2}), kInt8), 0, 1),
              {4});  // 100, 10, 1, 127 (a copy)
  add_(self, other);
  // 200 -> -56, 130 -> -126, -127, 254 -> -2 (mod 256); the gaps untouched.
  EXPECT_EQ(to(base, kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{-56, 0, -126, 0, -127, 0, -2, 0}));
  const Tensor m = to(tensor(std::vector<double>{1.0 / 3, 2, 3, 4, 5, 6}, {2, 3}), kBFloat16);
  const Tensor t = transpose(m, 0, 1);  // [3, 2], strides [1, 3]
  const Tensor got = mul(t, to(tensor(std::vector<double>{0.1, 10}), kBFloat16));
  const std::vector<float> g = to(got, kFloat32).to_vector<float>();
  const std::vector<float> tv = to(contiguous(t), kFloat32).to_vector<float>();
  const float scale[2] = {static_cast<float>(BFloat16(0.1f)), 10.0f};
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_EQ(g[i], static_cast<float>(BFloat16(tv[i] * scale[i % 2]))) << i;
  }
}

TEST(BinaryNewDTypes, WhereAndLogicalNotOfViews) {
  using C = std::complex<float>;
  const Tensor z = tensor(std::vector<C>{{1, 2}, {0, 0}, {3, -1}, {0, 5}}, {2, 2});
  const Tensor zt = transpose(z, 0, 1);  // {1+2i, 3-i}, {0, 5i}
  const Tensor cond = tensor(std::vector<bool>{true, false});
  const std::vector<C> w =
      where(cond, zt, to(tensor(std::vector<double>{7}), kComplex64)).to_vector<C>();
  EXPECT_EQ(w, (std::vector<C>{{1, 2}, {7, 0}, {0, 0}, {7, 0}}));
  EXPECT_EQ(logical_not(zt).to_vector<bool>(), (std::vector<bool>{false, false, true, false}));
}

TEST(BinaryNewDTypes, OpsWithoutANewDTypeRuleRefuse) {
  const Tensor h = to(tensor(std::vector<double>{1, 2}), kFloat16);
  EXPECT_FT_ERROR(pow(h, h), "float16");
  EXPECT_FT_ERROR(atan2(h, h), "float16");
}

}  // namespace
}  // namespace ft::kernels

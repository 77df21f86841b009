#include "ops/binary.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "dispatch/dispatch.h"
#include "gtest/gtest.h"
#include "interop/npy.h"
#include "kernels/binary.h"
#include "kernels/view.h"
#include "ops/unary.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const double kPi = std::acos(-1.0);

// ---- Reference machinery: plain loops over std::vector, independent of the ops. ----

// BroadcastValues returns t's values (row-major) read at every index of `out` (numpy
// broadcasting: leading dims missing, size-1 dims repeated).
std::vector<double> BroadcastValues(const Tensor& t, IntArrayRef out) {
  const std::vector<double> v = t.to_vector<double>();
  const int64_t rank = static_cast<int64_t>(out.size());
  const int64_t lead = rank - t.dim();
  std::vector<double> result;
  for (int64_t linear = 0; linear < Numel(out); ++linear) {
    int64_t rest = linear;
    std::vector<int64_t> index(rank);
    for (int64_t d = rank - 1; d >= 0; --d) {
      index[d] = rest % out[d];
      rest /= out[d];
    }
    int64_t src = 0;
    for (int64_t d = 0; d < t.dim(); ++d) {
      const int64_t i = t.sizes()[d] == 1 ? 0 : index[lead + d];
      src = src * t.sizes()[d] + i;
    }
    result.push_back(v[src]);
  }
  return result;
}

Tensor Reference(double (*f)(double, double), const Tensor& a, const Tensor& b, Shape shape,
                 DType dtype) {
  const std::vector<double> va = BroadcastValues(a, shape);
  const std::vector<double> vb = BroadcastValues(b, shape);
  std::vector<double> r;
  for (size_t i = 0; i < va.size(); ++i) r.push_back(f(va[i], vb[i]));
  return kernels::to(tensor(r, shape), dtype);
}

// Transposed returns a non-contiguous [rows, cols] tensor equal to the contiguous matrix m
// (its transpose is stored, viewed with swapped strides).
Tensor Transposed(const Tensor& m) {
  const int64_t rows = m.size(0), cols = m.size(1);
  const std::vector<double> v = m.to_vector<double>();
  std::vector<double> t;
  for (int64_t j = 0; j < cols; ++j) {
    for (int64_t i = 0; i < rows; ++i) t.push_back(v[i * cols + j]);
  }
  Tensor stored = kernels::to(tensor(t, {cols, rows}), m.dtype());
  return MakeDense(stored.storage(), m.dtype(), {rows, cols}, {1, rows}, 0);
}

// ExpandedRows views a [n] tensor as [rows, n] with stride 0 over the rows.
Tensor ExpandedRows(const Tensor& row, int64_t rows) {
  return MakeDense(row.storage(), row.dtype(), {rows, row.size(0)}, {0, 1}, 0);
}

Tensor F64(std::vector<double> v, Shape shape) { return tensor(v, shape); }
Tensor I64(std::vector<int64_t> v) { return tensor(v); }
Tensor Bools(std::vector<bool> v) { return tensor(v); }

double RefAdd(double x, double y) { return x + y; }
double RefSub(double x, double y) { return x - y; }
double RefMul(double x, double y) { return x * y; }
double RefDiv(double x, double y) { return x / y; }
double RefPow(double x, double y) { return std::pow(x, y); }
double RefMax(double x, double y) { return x > y ? x : y; }
double RefMin(double x, double y) { return x < y ? x : y; }
double RefAtan2(double x, double y) { return std::atan2(x, y); }
double RefEq(double x, double y) { return x == y; }
double RefNe(double x, double y) { return x != y; }
double RefLt(double x, double y) { return x < y; }
double RefLe(double x, double y) { return x <= y; }
double RefGt(double x, double y) { return x > y; }
double RefGe(double x, double y) { return x >= y; }
double RefAnd(double x, double y) { return x != 0 && y != 0; }
double RefOr(double x, double y) { return x != 0 || y != 0; }

struct BinaryCase {
  const char* name;
  BinaryFn op;
  double (*ref)(double, double);
  bool predicate;    // bool result
  DType int_result;  // result dtype for two int64 operands
};

std::vector<BinaryCase> Cases() {
  return {
      {"add", &add, &RefAdd, false, kInt64},
      {"sub", &sub, &RefSub, false, kInt64},
      {"mul", &mul, &RefMul, false, kInt64},
      {"div", &div, &RefDiv, false, kFloat32},
      {"pow", &pow, &RefPow, false, kInt64},
      {"maximum", &maximum, &RefMax, false, kInt64},
      {"minimum", &minimum, &RefMin, false, kInt64},
      {"atan2", &atan2, &RefAtan2, false, kFloat32},
      {"eq", &eq, &RefEq, true, kBool},
      {"ne", &ne, &RefNe, true, kBool},
      {"lt", &lt, &RefLt, true, kBool},
      {"le", &le, &RefLe, true, kBool},
      {"gt", &gt, &RefGt, true, kBool},
      {"ge", &ge, &RefGe, true, kBool},
      {"logical_and", &logical_and, &RefAnd, true, kBool},
      {"logical_or", &logical_or, &RefOr, true, kBool},
  };
}

// a: [2, 3] with entries equal to b's in row 0 (exercises eq/le/ge), a zero (logical ops)
// and a negative base (pow gives NaN, like std::pow).
const std::vector<double> kA = {0.5, -2.0, 2.0, 3.0, 0.0, 1.5};
const std::vector<double> kB = {0.5, -2.0, 1.5};

TEST(BinaryOps, MatchReferenceWithBroadcastingFloat32AndFloat64) {
  for (const BinaryCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    for (DType dtype : {kFloat32, kFloat64}) {
      const DType out = c.predicate ? kBool : dtype;
      const double tol = dtype == kFloat32 ? 1e-5 : 1e-12;
      Tensor a = kernels::to(F64(kA, {2, 3}), dtype);
      Tensor b = kernels::to(F64(kB, {3}), dtype);
      Tensor col = kernels::to(F64({1.5, -0.5}, {2, 1}), dtype);
      EXPECT_TRUE(testing::TensorNear(c.op(a, b), Reference(c.ref, a, b, {2, 3}, out), tol, tol));
      EXPECT_TRUE(testing::TensorNear(c.op(b, a), Reference(c.ref, b, a, {2, 3}, out), tol, tol));
      EXPECT_TRUE(
          testing::TensorNear(c.op(a, col), Reference(c.ref, a, col, {2, 3}, out), tol, tol));
      EXPECT_TRUE(
          testing::TensorNear(c.op(col, b), Reference(c.ref, col, b, {2, 3}, out), tol, tol));
    }
  }
}

TEST(BinaryOps, NonContiguousRankZeroSizeZeroAndSizeOne) {
  for (const BinaryCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const DType out = c.predicate ? kBool : kFloat64;
    Tensor a = F64(kA, {2, 3});
    Tensor b = F64(kB, {3});
    Tensor expected = Reference(c.ref, a, b, {2, 3}, out);
    // Transposed (strides [1, 2]) and stride-2 layouts, and a stride-0 expanded operand.
    Tensor at = Transposed(a);
    ASSERT_FALSE(at.is_contiguous());
    EXPECT_TRUE(testing::TensorNear(c.op(at, b), expected, 1e-12, 1e-12));
    Tensor as = testing::NonContiguousCopy(a);
    ASSERT_FALSE(as.is_contiguous());
    EXPECT_TRUE(testing::TensorNear(c.op(as, ExpandedRows(b, 2)), expected, 1e-12, 1e-12));
    EXPECT_TRUE(
        testing::TensorNear(c.op(at, testing::NonContiguousCopy(b)), expected, 1e-12, 1e-12));
    // Rank 0 with rank 0, and rank 0 with rank 1.
    Tensor s = scalar_tensor(1.5, kFloat64);
    Tensor r = c.op(scalar_tensor(0.5, kFloat64), s);
    EXPECT_EQ(r.dim(), 0);
    EXPECT_EQ(r.dtype(), out);
    EXPECT_NEAR(r.item<double>(), c.ref(0.5, 1.5), 1e-12);
    EXPECT_TRUE(testing::TensorNear(c.op(b, s), Reference(c.ref, b, s, {3}, out), 1e-12, 1e-12));
    EXPECT_TRUE(testing::TensorNear(c.op(s, b), Reference(c.ref, s, b, {3}, out), 1e-12, 1e-12));
    // Size-0 dims broadcast against size 1 and stay empty.
    Tensor empty = c.op(zeros({0, 3}, kFloat64), b);
    EXPECT_EQ(empty.sizes(), (IntArrayRef{0, 3}));
    EXPECT_EQ(empty.dtype(), out);
    EXPECT_EQ(c.op(zeros({0}, kFloat64), ones({1}, kFloat64)).sizes(), (IntArrayRef{0}));
    // Size-1 dims on both sides.
    Tensor row = F64({1.0, 2.0, 3.0}, {1, 3});
    Tensor col = F64({0.5, 4.0}, {2, 1});
    EXPECT_TRUE(
        testing::TensorNear(c.op(row, col), Reference(c.ref, row, col, {2, 3}, out), 1e-12, 1e-12));
    // Broadcast errors name the op and both shapes.
    EXPECT_FT_ERROR(c.op(ones({2}), ones({3})),
                    std::string(c.name) + ": shapes [2] and [3] cannot be broadcast");
  }
}

TEST(BinaryOps, Int64Operands) {
  Tensor a = I64({3, -2, 0, 5, 1, -4});
  Tensor b = I64({2, 0, 3, 1, 2, 3});
  for (const BinaryCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    Tensor expected = Reference(c.ref, a, b, {6}, c.int_result);
    EXPECT_TRUE(testing::TensorNear(c.op(a, b), expected, 1e-6, 1e-6));
    Tensor a2 = kernels::contiguous(MakeDense(a.storage(), kInt64, {2, 3}, {3, 1}, 0));
    EXPECT_TRUE(testing::TensorNear(c.op(Transposed(a2), ExpandedRows(I64({1, 2, 0}), 2)),
                                    Reference(c.ref, a2, I64({1, 2, 0}), {2, 3}, c.int_result),
                                    1e-6, 1e-6));
  }
}

TEST(BinaryOps, Int64ArithmeticIsExactAndWraps) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_TENSOR_EQ(add(I64({big, 1}), I64({1, 2})), I64({std::numeric_limits<int64_t>::min(), 3}));
  EXPECT_TENSOR_EQ(sub(I64({std::numeric_limits<int64_t>::min()}), I64({1})), I64({big}));
  EXPECT_TENSOR_EQ(mul(I64({big, -3}), I64({2, 4})), I64({-2, -12}));
  // Values beyond double's exact range stay exact.
  EXPECT_TENSOR_EQ(add(I64({(int64_t{1} << 53) + 1}), I64({2})), I64({(int64_t{1} << 53) + 3}));
  EXPECT_TENSOR_EQ(pow(I64({2, -3, 0, 5, -1, 7}), I64({10, 3, 0, 1, 5, 0})),
                   I64({1024, -27, 1, 5, -1, 1}));
  EXPECT_TENSOR_EQ(pow(I64({3}), I64({41})), mul(I64({3}), pow(I64({3}), I64({40}))));
  EXPECT_TENSOR_EQ(maximum(I64({big, -5}), I64({0, -6})), I64({big, -5}));
  EXPECT_TENSOR_EQ(minimum(I64({big, -5}), I64({0, -6})), I64({0, -6}));
}

TEST(BinaryOps, PowIntegerRules) {
  EXPECT_FT_ERROR(pow(I64({2, 3}), I64({1, -1})),
                  "pow: Integers to negative integer powers are not allowed");
  EXPECT_FT_ERROR(pow(I64({2}), -2), "pow: Integers to negative integer powers");
  EXPECT_FT_ERROR(pow(2, I64({-1})), "pow: Integers to negative integer powers");
  EXPECT_FT_ERROR(pow(Bools({true}), Bools({false})), "pow: not supported for two bool tensors");
  // A floating operand makes the result floating, and negative exponents fine.
  EXPECT_TENSOR_NEAR(pow(I64({4, 2}), tensor({0.5f, -1.0f})), tensor({2.0f, 0.5f}), 1e-6);
  EXPECT_TENSOR_NEAR(pow(I64({4}), 0.5), tensor({2.0f}), 1e-6);
  EXPECT_TENSOR_EQ(pow(I64({3, -2}), 2), I64({9, 4}));
  EXPECT_TENSOR_EQ(pow(2, I64({0, 3})), I64({1, 8}));
  EXPECT_TENSOR_NEAR(pow(2.0, tensor({0.5f, 3.0f})), tensor({std::sqrt(2.0f), 8.0f}), 1e-6);
  EXPECT_TENSOR_NEAR(pow(tensor({-2.0, 9.0}), 2), F64({4.0, 81.0}, {2}), 1e-12);
  EXPECT_TENSOR_EQ(pow(Bools({true, false}), I64({3, 2})), I64({1, 0}));
}

TEST(BinaryOps, DivAndAtan2AreFloating) {
  Tensor q = div(I64({7, -7, 1, 0}), I64({2, 2, 0, 0}));
  EXPECT_TENSOR_EQ(q, tensor({3.5f, -3.5f, static_cast<float>(kInf), static_cast<float>(kNan)}));
  EXPECT_TENSOR_EQ(div(Bools({true, false}), Bools({true, true})), tensor({1.0f, 0.0f}));
  EXPECT_TENSOR_EQ(div(I64({3}), 2), tensor({1.5f}));
  EXPECT_TENSOR_NEAR(atan2(I64({1, 0}), I64({0, -1})),
                     tensor({static_cast<float>(kPi / 2), static_cast<float>(kPi)}), 1e-6);
  EXPECT_EQ(atan2(Bools({true}), Bools({true})).dtype(), kFloat32);
  EXPECT_TENSOR_NEAR(atan2(tensor({1.0f}), 1), tensor({static_cast<float>(kPi / 4)}), 1e-6);
}

TEST(BinaryOps, MaximumMinimumPropagateNan) {
  Tensor a = F64({kNan, 1.0, 2.0, kNan}, {4});
  Tensor b = F64({1.0, kNan, 3.0, kNan}, {4});
  EXPECT_TENSOR_EQ(maximum(a, b), F64({kNan, kNan, 3.0, kNan}, {4}));
  EXPECT_TENSOR_EQ(minimum(a, b), F64({kNan, kNan, 2.0, kNan}, {4}));
  // float32, long enough to take the vectorized path.
  std::vector<float> xs(37, 1.0f), ys(37, 2.0f);
  xs[5] = std::numeric_limits<float>::quiet_NaN();
  ys[30] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> mx(37, 2.0f), mn(37, 1.0f);
  mx[5] = mn[5] = mx[30] = mn[30] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TENSOR_EQ(maximum(tensor(xs), tensor(ys)), tensor(mx));
  EXPECT_TENSOR_EQ(minimum(tensor(xs), tensor(ys)), tensor(mn));
  EXPECT_TENSOR_EQ(maximum(tensor({-1.0f, 2.0f}), 0), tensor({0.0f, 2.0f}));
  EXPECT_TENSOR_EQ(minimum(tensor({-1.0f, 2.0f}), 0), tensor({-1.0f, 0.0f}));
}

TEST(BinaryOps, PromotionTable) {
  Tensor i = I64({1, 2, 3});
  Tensor f = tensor({1.0f, 2.0f, 3.0f});
  Tensor d = F64({1.0, 2.0, 3.0}, {3});
  Tensor b = Bools({true, false, true});
  EXPECT_TENSOR_EQ(i * 2.5, tensor({2.5f, 5.0f, 7.5f}));
  EXPECT_TENSOR_EQ(f * 2, tensor({2.0f, 4.0f, 6.0f}));
  EXPECT_TENSOR_EQ(i * 2, I64({2, 4, 6}));
  EXPECT_TENSOR_EQ(b + 1, I64({2, 1, 2}));
  EXPECT_EQ(add(f, scalar_tensor(1.0, kFloat64)).dtype(), kFloat32);
  EXPECT_TENSOR_EQ(add(i, scalar_tensor(0.5, kFloat64)), F64({1.5, 2.5, 3.5}, {3}));
  EXPECT_EQ(add(f, d).dtype(), kFloat64);
  EXPECT_EQ(add(d, f).dtype(), kFloat64);
  EXPECT_EQ(add(i, f).dtype(), kFloat32);
  EXPECT_EQ(add(b, i).dtype(), kInt64);
  EXPECT_EQ(add(b, b).dtype(), kBool);
  EXPECT_EQ(add(b, 2.5).dtype(), kFloat32);
  EXPECT_EQ(add(b, true).dtype(), kBool);
  EXPECT_EQ(mul(d, 2.5).dtype(), kFloat64);
  EXPECT_EQ(mul(scalar_tensor(int64_t{3}, kInt64), 2.5).dtype(), kFloat32);
  EXPECT_EQ(add(scalar_tensor(1.0, kFloat32), scalar_tensor(1.0, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ(add(i, scalar_tensor(true, kBool)).dtype(), kInt64);
  // A float64 0-dim tensor does not widen float32, but its value is used exactly.
  EXPECT_TENSOR_EQ(mul(f, scalar_tensor(0.5, kFloat64)), tensor({0.5f, 1.0f, 1.5f}));
  // Comparisons compute in the promoted type.
  EXPECT_TENSOR_EQ(lt(i, 2.5), Bools({true, true, false}));
  EXPECT_TENSOR_EQ(eq(i, 2.0), Bools({false, true, false}));
  EXPECT_TENSOR_EQ(gt(i, f), Bools({false, false, false}));
  EXPECT_TENSOR_EQ(ge(b, 1), Bools({true, false, true}));
}

TEST(BinaryOps, BoolRules) {
  Tensor p = Bools({true, true, false, false});
  Tensor q = Bools({true, false, true, false});
  EXPECT_TENSOR_EQ(add(p, q), Bools({true, true, true, false}));
  EXPECT_TENSOR_EQ(mul(p, q), Bools({true, false, false, false}));
  EXPECT_TENSOR_EQ(maximum(p, q), Bools({true, true, true, false}));
  EXPECT_TENSOR_EQ(minimum(p, q), Bools({true, false, false, false}));
  EXPECT_TENSOR_EQ(div(p, Bools({true, true, true, true})), tensor({1.0f, 1.0f, 0.0f, 0.0f}));
  EXPECT_TENSOR_EQ(lt(p, q), Bools({false, false, true, false}));
  EXPECT_TENSOR_EQ(eq(p, q), Bools({true, false, false, true}));
  EXPECT_FT_ERROR(sub(p, q),
                  "sub: subtraction with two bool tensors is not supported; use "
                  "logical_xor / ~");
  EXPECT_FT_ERROR(p - q, "sub: subtraction with two bool tensors");
  EXPECT_FT_ERROR(sub(p, I64({1, 1, 1, 1})), "sub: subtraction with a bool tensor");
  EXPECT_FT_ERROR(1 - p, "sub: subtraction with a bool tensor");
  EXPECT_FT_ERROR(sub_(p, q), "sub_: subtraction with two bool tensors");
}

TEST(BinaryOps, ComparisonsWithNanAndMixedDtypes) {
  Tensor a = F64({kNan, 1.0, kNan}, {3});
  Tensor b = F64({kNan, kNan, 1.0}, {3});
  EXPECT_TENSOR_EQ(eq(a, b), Bools({false, false, false}));
  EXPECT_TENSOR_EQ(ne(a, b), Bools({true, true, true}));
  EXPECT_TENSOR_EQ(lt(a, b), Bools({false, false, false}));
  EXPECT_TENSOR_EQ(ge(a, b), Bools({false, false, false}));
  Tensor i = I64({1, 2, 3});
  EXPECT_TENSOR_EQ(le(i, tensor({1.5f, 2.0f, 2.5f})), Bools({true, true, false}));
  EXPECT_TENSOR_EQ(ne(i, 2), Bools({true, false, true}));
  EXPECT_TENSOR_EQ(gt(tensor({0.1f}), 0.1), Bools({false}));  // 0.1 rounds like the tensor
  EXPECT_TENSOR_EQ(le(tensor({0.1f}), 0.1), Bools({true}));
}

TEST(BinaryOps, LogicalOps) {
  Tensor f = tensor({0.0f, 1.5f, std::numeric_limits<float>::quiet_NaN(), -2.0f});
  Tensor i = I64({0, 0, 3, 1});
  EXPECT_TENSOR_EQ(logical_and(f, i), Bools({false, false, true, true}));
  EXPECT_TENSOR_EQ(logical_or(f, i), Bools({false, true, true, true}));
  EXPECT_TENSOR_EQ(logical_and(Bools({true, true}), Bools({true, false})), Bools({true, false}));
  EXPECT_TENSOR_EQ(logical_or(Bools({false, false}), F64({0.0, 1e-300}, {2})),
                   Bools({false, true}));
  EXPECT_TENSOR_EQ(logical_and(I64({1 << 30}), F64({1e-300}, {1})), Bools({true}));
  EXPECT_TENSOR_EQ(logical_not(f), Bools({true, false, false, false}));
  EXPECT_TENSOR_EQ(logical_not(i), Bools({true, true, false, false}));
  EXPECT_TENSOR_EQ(logical_not(Bools({true, false})), Bools({false, true}));
  EXPECT_TENSOR_EQ(logical_not(F64({0.0, 2.0, -0.0}, {3})), Bools({true, false, true}));
  // logical_not layouts: non-contiguous, expanded, rank 0, size 0.
  Tensor m = F64({0.0, 1.0, 2.0, 0.0, 0.0, 3.0}, {2, 3});
  Tensor expected = tensor(std::vector<bool>{true, false, false, true, true, false}, {2, 3});
  EXPECT_TENSOR_EQ(logical_not(Transposed(m)), expected);
  EXPECT_TENSOR_EQ(logical_not(testing::NonContiguousCopy(m)), expected);
  EXPECT_TENSOR_EQ(logical_not(ExpandedRows(F64({0.0, 1.0}, {2}), 2)),
                   tensor(std::vector<bool>{true, false, true, false}, {2, 2}));
  Tensor r = logical_not(scalar_tensor(0.0, kFloat32));
  EXPECT_EQ(r.dim(), 0);
  EXPECT_TRUE(r.item<bool>());
  EXPECT_EQ(logical_not(zeros({0, 2})).sizes(), (IntArrayRef{0, 2}));
  EXPECT_EQ(logical_not(zeros({0, 2})).dtype(), kBool);
}

TEST(BinaryOps, Where) {
  Tensor cond = tensor(std::vector<bool>{true, false}, {2, 1});
  Tensor a = tensor({1.0f, 2.0f, 3.0f});
  Tensor b = scalar_tensor(-1.0, kFloat64);
  // Three-way broadcast to [2, 3]; float32 [3] with a float64 0-dim stays float32.
  EXPECT_TENSOR_EQ(where(cond, a, b), tensor({1.0f, 2.0f, 3.0f, -1.0f, -1.0f, -1.0f}, {2, 3}));
  // Promotion between the branches.
  EXPECT_TENSOR_EQ(where(Bools({true, false}), I64({1, 2}), F64({0.5, 0.25}, {2})),
                   F64({1.0, 0.25}, {2}));
  EXPECT_TENSOR_EQ(where(Bools({true, false}), I64({1, 2}), Bools({false, true})), I64({1, 1}));
  EXPECT_TENSOR_EQ(where(Bools({false, true}), Bools({true, true}), Bools({false, false})),
                   Bools({false, true}));
  // Scalar branches follow the python-scalar rule.
  EXPECT_TENSOR_EQ(where(Bools({true, false}), tensor({5.0f, 6.0f}), 0.0), tensor({5.0f, 0.0f}));
  EXPECT_TENSOR_EQ(where(Bools({true, false}), 7, I64({1, 2})), I64({7, 2}));
  EXPECT_EQ(where(Bools({true}), I64({1}), 0.5).dtype(), kFloat32);
  // Non-contiguous condition and branches.
  Tensor c2 = tensor(std::vector<bool>{true, false, false, true, true, false}, {2, 3});
  Tensor x = F64({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = F64({-1, -2, -3}, {3});
  Tensor expected = F64({1, -2, -3, 4, 5, -3}, {2, 3});
  EXPECT_TENSOR_EQ(where(Transposed(c2), testing::NonContiguousCopy(x), ExpandedRows(y, 2)),
                   expected);
  EXPECT_TENSOR_EQ(where(testing::NonContiguousCopy(c2), Transposed(x), y), expected);
  // One condition per row (vmap's per-example selection): whole rows copied from either
  // side, contiguous, transposed or broadcast; against the elementwise definition.
  Tensor rows = tensor(std::vector<bool>{true, false, true}, {3, 1});
  Tensor p = F64({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4});
  Tensor q = F64({-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12}, {3, 4});
  Tensor by_rows = F64({1, 2, 3, 4, -5, -6, -7, -8, 9, 10, 11, 12}, {3, 4});
  EXPECT_TENSOR_EQ(where(rows, p, q), by_rows);
  EXPECT_TENSOR_EQ(where(rows, Transposed(p), q), by_rows);
  EXPECT_TENSOR_EQ(where(rows, p, ExpandedRows(F64({0, 0, 0, 0}, {4}), 3)),
                   F64({1, 2, 3, 4, 0, 0, 0, 0, 9, 10, 11, 12}, {3, 4}));
  EXPECT_TENSOR_EQ(where(rows, testing::NonContiguousCopy(p), testing::NonContiguousCopy(q)),
                   by_rows);
  // One condition per leading index over several trailing dims ([2, 3, 1, 1] over
  // [2, 3, 2, 2]), in int64 and float, against the elementwise definition.
  const std::vector<bool> picks = {true, false, false, true, true, false};
  std::vector<int64_t> av(24), bv(24), want(24);
  std::vector<float> af(24), bf(24), wantf(24);
  for (int i = 0; i < 24; ++i) {
    av[i] = i, bv[i] = -i - 100, want[i] = picks[i / 4] ? av[i] : bv[i];
    af[i] = 0.5f * i, bf[i] = -0.25f * i, wantf[i] = picks[i / 4] ? af[i] : bf[i];
  }
  const Tensor blocks = tensor(picks, {2, 3, 1, 1});
  EXPECT_TENSOR_EQ(where(blocks, tensor(av, {2, 3, 2, 2}), tensor(bv, {2, 3, 2, 2})),
                   tensor(want, {2, 3, 2, 2}));
  EXPECT_TENSOR_EQ(where(blocks, tensor(af, {2, 3, 2, 2}), tensor(bf, {2, 3, 2, 2})),
                   tensor(wantf, {2, 3, 2, 2}));
  // Rank 0 and size 0.
  Tensor r = where(scalar_tensor(false, kBool), scalar_tensor(1.0, kFloat64),
                   scalar_tensor(2.0, kFloat64));
  EXPECT_EQ(r.dim(), 0);
  EXPECT_EQ(r.item<double>(), 2.0);
  EXPECT_EQ(where(tensor(std::vector<bool>{}, {0, 1}), ones({3}), zeros({1})).sizes(),
            (IntArrayRef{0, 3}));
  // Errors.
  EXPECT_FT_ERROR(where(ones({2}), ones({2}), ones({2})),
                  "where: expected condition to be a bool tensor, got float32");
  EXPECT_FT_ERROR(where(Bools({true, false}), ones({3}), ones({3})),
                  "where: shapes [2] and [3] cannot be broadcast");
  EXPECT_FT_ERROR(where(Bools({true}), ones({2}), ones({3})), "where: shapes [2] and [3]");
}

TEST(BinaryOps, Clamp) {
  Tensor x = F64({-2.0, -0.5, 0.0, 0.5, 2.0, kNan}, {6});
  EXPECT_TENSOR_EQ(clamp(x, -1, 1), F64({-1.0, -0.5, 0.0, 0.5, 1.0, kNan}, {6}));
  EXPECT_TENSOR_EQ(clamp(x, 0.0), F64({0.0, 0.0, 0.0, 0.5, 2.0, kNan}, {6}));
  EXPECT_TENSOR_EQ(clamp(x, std::nullopt, 0.25), F64({-2.0, -0.5, 0.0, 0.25, 0.25, kNan}, {6}));
  // min > max: every element becomes max.
  EXPECT_TENSOR_EQ(clamp(x, 1, -1), F64({-1.0, -1.0, -1.0, -1.0, -1.0, kNan}, {6}));
  // NaN bound propagates.
  EXPECT_TENSOR_EQ(clamp(F64({1.0}, {1}), kNan), F64({kNan}, {1}));
  // dtypes: int64 stays int64 with int bounds; a floating bound makes it float32.
  Tensor i = I64({-5, 0, 7});
  EXPECT_TENSOR_EQ(clamp(i, 0, 3), I64({0, 0, 3}));
  EXPECT_TENSOR_EQ(clamp(i, 0.5), tensor({0.5f, 0.5f, 7.0f}));
  EXPECT_TENSOR_EQ(clamp(tensor({1.0f, -1.0f}), std::nullopt, 1e300), tensor({1.0f, -1.0f}));
  EXPECT_TENSOR_EQ(clamp(tensor({1.0f, -1.0f}), -1e300), tensor({1.0f, -1.0f}));
  // Layouts.
  Tensor m = F64({-3, -1, 0, 1, 2, 5}, {2, 3});
  Tensor expected = F64({-2, -1, 0, 1, 2, 2}, {2, 3});
  EXPECT_TENSOR_EQ(clamp(Transposed(m), -2, 2), expected);
  EXPECT_TENSOR_EQ(clamp(testing::NonContiguousCopy(m), -2, 2), expected);
  EXPECT_TENSOR_EQ(clamp(ExpandedRows(F64({-9, 9}, {2}), 2), -2, 2), F64({-2, 2, -2, 2}, {2, 2}));
  EXPECT_EQ(clamp(scalar_tensor(5.0, kFloat32), 0, 1).item<float>(), 1.0f);
  EXPECT_EQ(clamp(scalar_tensor(5.0, kFloat32), 0, 1).dim(), 0);
  EXPECT_EQ(clamp(zeros({0, 4}), 0, 1).sizes(), (IntArrayRef{0, 4}));
  EXPECT_TENSOR_EQ(clamp(ones({1, 1}, kFloat64), 2), F64({2.0}, {1, 1}));
  // Errors.
  EXPECT_FT_ERROR(clamp(x), "clamp: at least one of min or max must be given");
  EXPECT_FT_ERROR(clamp(x, std::nullopt, std::nullopt), "clamp: at least one of min or max");
  EXPECT_FT_ERROR(clamp(Bools({true}), false, true), "clamp: not supported for bool");
}

TEST(BinaryOps, ClampInPlace) {
  Tensor x = F64({-2.0, 0.5, 3.0}, {3});
  const int64_t v0 = x.version();
  Tensor r = clamp_(x, -1, 1);
  EXPECT_TRUE(r.is_same(x));
  EXPECT_EQ(x.version(), v0 + 1);
  EXPECT_TENSOR_EQ(x, F64({-1.0, 0.5, 1.0}, {3}));
  // Writes through a non-contiguous view only touch the viewed elements.
  Tensor base = F64({-5, 0, 5, 0, -5, 0}, {6});
  Tensor view = MakeDense(base.storage(), kFloat64, {3}, {2}, 0);
  clamp_(view, std::nullopt, 1);
  EXPECT_TENSOR_EQ(base, F64({-5, 0, 1, 0, -5, 0}, {6}));
  Tensor i = I64({-5, 7});
  clamp_(i, 0, 3);
  EXPECT_TENSOR_EQ(i, I64({0, 3}));
  EXPECT_FT_ERROR(clamp_(i, 0.5),
                  "clamp_: result type float32 can't be cast to the desired output type int64");
  EXPECT_FT_ERROR(clamp_(x), "clamp_: at least one of min or max must be given");
  EXPECT_FT_ERROR(clamp_(ExpandedRows(F64({1, 2}, {2}), 3), 0, 1),
                  "clamp_: cannot write in place into a tensor whose elements overlap");
  EXPECT_EQ(i.version(), 1);  // failed calls did not bump
}

TEST(BinaryOps, InPlaceArithmetic) {
  using InPlaceFn = Tensor (*)(const Tensor&, const Tensor&);
  struct Case {
    const char* name;
    InPlaceFn op;
    double (*ref)(double, double);
  };
  const std::vector<Case> cases = {{"add_", &add_, &RefAdd},
                                   {"sub_", &sub_, &RefSub},
                                   {"mul_", &mul_, &RefMul},
                                   {"div_", &div_, &RefDiv}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (DType dtype : {kFloat32, kFloat64}) {
      Tensor self = kernels::to(F64(kA, {2, 3}), dtype);
      Tensor other = kernels::to(F64({0.5, -2.0, 4.0}, {3}), dtype);
      Tensor expected = Reference(c.ref, self, other, {2, 3}, dtype);
      const int64_t v0 = self.version();
      Tensor r = c.op(self, other);
      EXPECT_TRUE(r.is_same(self));
      EXPECT_EQ(self.version(), v0 + 1);
      EXPECT_TRUE(testing::TensorNear(self, expected, 1e-6, 1e-6));
    }
    // Non-contiguous self (only the viewed elements change) and expanded other.
    Tensor base = F64({1, 0, 2, 0, 3, 0, 4, 0}, {8});
    Tensor view = MakeDense(base.storage(), kFloat64, {2, 2}, {4, 2}, 0);
    c.op(view, ExpandedRows(F64({2.0, 4.0}, {2}), 2));
    EXPECT_TENSOR_NEAR(
        base, F64({c.ref(1, 2), 0, c.ref(2, 4), 0, c.ref(3, 2), 0, c.ref(4, 4), 0}, {8}), 1e-12);
    // Rank 0 self with a rank 0 other; size-0 self.
    Tensor s = scalar_tensor(3.0, kFloat64);
    c.op(s, scalar_tensor(2.0, kFloat32));
    EXPECT_EQ(s.item<double>(), c.ref(3.0, 2.0));
    Tensor e = zeros({0, 2});
    EXPECT_TRUE(c.op(e, ones({2})).is_same(e));
    // Errors: other may not grow self; self may not overlap itself; int64 self.
    const std::string n = c.name;
    EXPECT_FT_ERROR(c.op(ones({3}), ones({2, 3})),
                    n + ": output with shape [3] doesn't match the broadcast shape [2, 3]");
    EXPECT_FT_ERROR(c.op(ones({3}), ones({2})), n + ": shapes [3] and [2] cannot be broadcast");
    EXPECT_FT_ERROR(c.op(ExpandedRows(ones({2}), 2), ones({2})),
                    n + ": cannot write in place into a tensor whose elements overlap");
    EXPECT_FT_ERROR(c.op(I64({1, 2}), tensor({1.0f, 2.0f})),
                    n + ": result type float32 can't be cast to the desired output type int64");
  }
}

TEST(BinaryOps, InPlaceDtypeRules) {
  // float32 self with a float64 other: computed in float64, written as float32.
  Tensor f = tensor({1.5f, 2.0f});
  add_(f, F64({2.25, 1e-12}, {2}));
  EXPECT_TENSOR_EQ(f, tensor({3.75f, 2.0f}));
  Tensor i = I64({1, 2});
  add_(i, Bools({true, false}));
  EXPECT_TENSOR_EQ(i, I64({2, 2}));
  mul_(i, 3);
  EXPECT_TENSOR_EQ(i, I64({6, 6}));
  EXPECT_FT_ERROR(add_(i, 2.5),
                  "add_: result type float32 can't be cast to the desired output type int64");
  EXPECT_FT_ERROR(div_(i, 2),
                  "div_: result type float32 can't be cast to the desired output "
                  "type int64");
  EXPECT_TENSOR_EQ(i, I64({6, 6}));
  Tensor b = Bools({true, false});
  add_(b, Bools({false, false}));
  EXPECT_TENSOR_EQ(b, Bools({true, false}));
  EXPECT_FT_ERROR(add_(b, I64({1, 1})),
                  "add_: result type int64 can't be cast to the desired output type bool");
  Tensor d = F64({1.0, 2.0}, {2});
  div_(d, I64({2, 4}));
  EXPECT_TENSOR_EQ(d, F64({0.5, 0.5}, {2}));
  sub_(d, 0.25);
  EXPECT_TENSOR_EQ(d, F64({0.25, 0.25}, {2}));
  div_(d, 0.5);
  EXPECT_TENSOR_EQ(d, F64({0.5, 0.5}, {2}));
  add_(d, 1);
  EXPECT_TENSOR_EQ(d, F64({1.5, 1.5}, {2}));
}

TEST(BinaryOps, InPlaceWithAliasedOther) {
  // other is self itself: fine elementwise.
  Tensor x = F64({1, 2, 3}, {3});
  add_(x, x);
  EXPECT_TENSOR_EQ(x, F64({2, 4, 6}, {3}));
  // other is row 0 of self, broadcast over both rows: row 0 is read before it is written.
  Tensor m = F64({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor row0 = MakeDense(m.storage(), kFloat64, {3}, {1}, 0);
  add_(m, row0);
  EXPECT_TENSOR_EQ(m, F64({2, 4, 6, 5, 7, 9}, {2, 3}));
  // other is self transposed.
  Tensor s = F64({1, 2, 3, 4}, {2, 2});
  mul_(s, MakeDense(s.storage(), kFloat64, {2, 2}, {1, 2}, 0));
  EXPECT_TENSOR_EQ(s, F64({1, 6, 6, 16}, {2, 2}));
}

TEST(BinaryOps, CopyInPlace) {
  Tensor dst = zeros({2, 3}, kInt64);
  const int64_t v0 = dst.version();
  Tensor r = copy_(dst, tensor({1.7f, -2.7f, 3.0f}));  // broadcast and truncating cast
  EXPECT_TRUE(r.is_same(dst));
  EXPECT_EQ(dst.version(), v0 + 1);
  EXPECT_TENSOR_EQ(dst, tensor(std::vector<int64_t>{1, -2, 3, 1, -2, 3}, {2, 3}));
  // Non-contiguous destination and source.
  Tensor base = zeros({6}, kFloat64);
  Tensor view = MakeDense(base.storage(), kFloat64, {3}, {2}, 0);
  copy_(view, testing::NonContiguousCopy(F64({7, 8, 9}, {3})));
  EXPECT_TENSOR_EQ(base, F64({7, 0, 8, 0, 9, 0}, {6}));
  Tensor m = zeros({2, 2}, kFloat64);
  copy_(m, Transposed(F64({1, 2, 3, 4}, {2, 2})));
  EXPECT_TENSOR_EQ(m, F64({1, 2, 3, 4}, {2, 2}));
  // Bool destination: nonzero -> true.
  Tensor bd = Bools({false, false, true});
  copy_(bd, F64({0.5, 0.0, 0.0}, {3}));
  EXPECT_TENSOR_EQ(bd, Bools({true, false, false}));
  // Rank 0 and size 0.
  Tensor s = scalar_tensor(0.0, kFloat32);
  copy_(s, scalar_tensor(int64_t{4}, kInt64));
  EXPECT_EQ(s.item<float>(), 4.0f);
  Tensor e = zeros({0, 3});
  EXPECT_TRUE(copy_(e, ones({3})).is_same(e));
  EXPECT_EQ(e.version(), 1);
  // Overlapping source: shift a buffer right by one.
  Tensor buf = F64({0, 1, 2, 3, 4}, {5});
  copy_(MakeDense(buf.storage(), kFloat64, {4}, {1}, 1),
        MakeDense(buf.storage(), kFloat64, {4}, {1}, 0));
  EXPECT_TENSOR_EQ(buf, F64({0, 0, 1, 2, 3}, {5}));
  // src transposed view of dst.
  Tensor sq = F64({1, 2, 3, 4}, {2, 2});
  copy_(sq, MakeDense(sq.storage(), kFloat64, {2, 2}, {1, 2}, 0));
  EXPECT_TENSOR_EQ(sq, F64({1, 3, 2, 4}, {2, 2}));
  // copy_ of self onto itself is a no-op (but a write).
  Tensor same = F64({1, 2}, {2});
  copy_(same, same);
  EXPECT_TENSOR_EQ(same, F64({1, 2}, {2}));
  EXPECT_EQ(same.version(), 1);
  // Errors.
  EXPECT_FT_ERROR(copy_(zeros({3}), zeros({2, 3})),
                  "copy_: source of shape [2, 3] cannot be broadcast to the destination shape [3]");
  EXPECT_FT_ERROR(copy_(zeros({0}), zeros({2})), "copy_: shapes [0] and [2] cannot be broadcast");
  EXPECT_FT_ERROR(copy_(ExpandedRows(zeros({2}), 2), ones({2, 2})),
                  "copy_: cannot write in place into a tensor whose elements overlap");
}

TEST(BinaryOps, FillAndZero) {
  Tensor base = zeros({2, 6}, kFloat64);
  Tensor view = MakeDense(base.storage(), kFloat64, {2, 3}, {6, 2}, 0);
  const int64_t v0 = base.version();
  Tensor r = fill_(view, 7);
  EXPECT_TRUE(r.is_same(view));
  EXPECT_EQ(base.version(), v0 + 1);
  EXPECT_TENSOR_EQ(base, F64({7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0}, {2, 6}));
  Tensor t = Transposed(F64({1, 2, 3, 4, 5, 6}, {2, 3}));
  fill_(t, 2.5);
  EXPECT_TENSOR_EQ(kernels::contiguous(t), F64({2.5, 2.5, 2.5, 2.5, 2.5, 2.5}, {2, 3}));
  Tensor i = zeros({3}, kInt64);
  fill_(i, 2.7);
  EXPECT_TENSOR_EQ(i, I64({2, 2, 2}));
  fill_(i, -2.7);
  EXPECT_TENSOR_EQ(i, I64({-2, -2, -2}));
  Tensor b = zeros({2}, kBool);
  fill_(b, 0.5);
  EXPECT_TENSOR_EQ(b, Bools({true, true}));
  Tensor f = zeros({2});
  fill_(f, true);
  EXPECT_TENSOR_EQ(f, tensor({1.0f, 1.0f}));
  fill_(f, kInf);
  EXPECT_TENSOR_EQ(f, tensor({static_cast<float>(kInf), static_cast<float>(kInf)}));
  Tensor s = scalar_tensor(1.0, kFloat64);
  fill_(s, -1);
  EXPECT_EQ(s.item<double>(), -1.0);
  Tensor e = zeros({0});
  EXPECT_TRUE(fill_(e, 1).is_same(e));
  // zero_.
  Tensor z = F64({1, 2, 3, 4}, {2, 2});
  const int64_t zv = z.version();
  EXPECT_TRUE(zero_(z).is_same(z));
  EXPECT_EQ(z.version(), zv + 1);
  EXPECT_TENSOR_EQ(z, zeros({2, 2}, kFloat64));
  Tensor zi = I64({5, 6});
  zero_(MakeDense(zi.storage(), kInt64, {1}, {1}, 1));
  EXPECT_TENSOR_EQ(zi, I64({5, 0}));
  // Errors (and no partial write).
  EXPECT_FT_ERROR(fill_(i, 1e30),
                  "fill_: value 1e+30 cannot be converted to int64 without overflow");
  EXPECT_FT_ERROR(fill_(i, kNan), "fill_: value nan cannot be converted to int64");
  EXPECT_FT_ERROR(fill_(f, 1e300), "fill_: value 1e+300 cannot be converted to float32");
  EXPECT_TENSOR_EQ(i, I64({-2, -2, -2}));
  EXPECT_FT_ERROR(fill_(ExpandedRows(zeros({2}), 2), 1),
                  "fill_: cannot write in place into a tensor whose elements overlap");
  EXPECT_FT_ERROR(zero_(ExpandedRows(zeros({2}), 2)),
                  "zero_: cannot write in place into a tensor whose elements overlap");
}

TEST(BinaryOps, ScalarOverloadsAndOperators) {
  Tensor x = tensor({1.0f, 2.0f, 4.0f});
  EXPECT_TENSOR_EQ(x * 2, tensor({2.0f, 4.0f, 8.0f}));
  EXPECT_TENSOR_EQ(2.0 * x, tensor({2.0f, 4.0f, 8.0f}));
  EXPECT_TENSOR_EQ(x / x, tensor({1.0f, 1.0f, 1.0f}));
  EXPECT_TENSOR_EQ(x + x, tensor({2.0f, 4.0f, 8.0f}));
  EXPECT_TENSOR_EQ(x - x, tensor({0.0f, 0.0f, 0.0f}));
  EXPECT_TENSOR_EQ(x * x, tensor({1.0f, 4.0f, 16.0f}));
  EXPECT_TENSOR_EQ(x + 1, tensor({2.0f, 3.0f, 5.0f}));
  EXPECT_TENSOR_EQ(1 + x, tensor({2.0f, 3.0f, 5.0f}));
  EXPECT_TENSOR_EQ(x - 1, tensor({0.0f, 1.0f, 3.0f}));
  EXPECT_TENSOR_EQ(1 - x, tensor({0.0f, -1.0f, -3.0f}));
  EXPECT_TENSOR_EQ(x / 2, tensor({0.5f, 1.0f, 2.0f}));
  EXPECT_TENSOR_EQ(4 / x, tensor({4.0f, 2.0f, 1.0f}));
  EXPECT_TENSOR_EQ(x * 0.5f, tensor({0.5f, 1.0f, 2.0f}));
  EXPECT_TENSOR_EQ(-x + 1, tensor({0.0f, -1.0f, -3.0f}));
  EXPECT_TENSOR_EQ(add(x, 1), tensor({2.0f, 3.0f, 5.0f}));
  EXPECT_TENSOR_EQ(sub(x, 1), tensor({0.0f, 1.0f, 3.0f}));
  EXPECT_TENSOR_EQ(sub(10, x), tensor({9.0f, 8.0f, 6.0f}));
  EXPECT_TENSOR_EQ(mul(3, x), tensor({3.0f, 6.0f, 12.0f}));
  EXPECT_TENSOR_EQ(div(8, x), tensor({8.0f, 4.0f, 2.0f}));
  EXPECT_TENSOR_EQ(add(1.5, x), tensor({2.5f, 3.5f, 5.5f}));
  EXPECT_TENSOR_EQ(pow(x, 2), tensor({1.0f, 4.0f, 16.0f}));
  EXPECT_TENSOR_EQ(pow(2, x), tensor({2.0f, 4.0f, 16.0f}));
  EXPECT_TENSOR_EQ(eq(x, 2), Bools({false, true, false}));
  EXPECT_TENSOR_EQ(ne(x, 2), Bools({true, false, true}));
  EXPECT_TENSOR_EQ(lt(x, 2), Bools({true, false, false}));
  EXPECT_TENSOR_EQ(le(x, 2), Bools({true, true, false}));
  EXPECT_TENSOR_EQ(gt(x, 2), Bools({false, false, true}));
  EXPECT_TENSOR_EQ(ge(x, 2), Bools({false, true, true}));
  // Integer tensors with integer scalars stay int64; division is true division.
  Tensor i = I64({3, 6});
  EXPECT_TENSOR_EQ(i * 2, I64({6, 12}));
  EXPECT_TENSOR_EQ(10 - i, I64({7, 4}));
  EXPECT_TENSOR_EQ(i / 2, tensor({1.5f, 3.0f}));
  EXPECT_TENSOR_EQ(i * 0.5, tensor({1.5f, 3.0f}));
  // A float32 tensor times a huge double: inf, like a float32 computation.
  EXPECT_TENSOR_EQ(tensor({1.0f}) * 1e300, tensor({static_cast<float>(kInf)}));
  // Compound assignment writes in place.
  Tensor y = kernels::clone(x);
  const Tensor alias = y;
  y += x;
  y -= 1;
  y *= 2;
  y /= x;
  EXPECT_TRUE(y.is_same(alias));
  EXPECT_TENSOR_EQ(alias, tensor({2.0f, 3.0f, 3.5f}));
  EXPECT_EQ(alias.version(), 4);
  y += tensor({1.0f, 1.0f, 1.0f});
  y -= tensor({0.5f, 0.5f, 0.5f});
  y *= tensor({2.0f, 2.0f, 2.0f});
  y /= tensor({5.0f, 5.0f, 5.0f});
  EXPECT_TENSOR_EQ(alias, tensor({1.0f, 1.4f, 1.6f}));
}

TEST(BinaryOps, ContiguousFloat32FastPathsAreExact) {
  // Long enough for vectorized Eigen paths, with the scalar on either side.
  const int64_t n = 1001;
  std::vector<float> xs(n), ys(n);
  for (int64_t k = 0; k < n; ++k) {
    xs[k] = 0.25f * static_cast<float>(k) - 100.0f;
    ys[k] = 1.0f + static_cast<float>(k % 7);
  }
  Tensor x = tensor(xs), y = tensor(ys);
  std::vector<float> sum(n), scaled(n), rdiv(n);
  for (int64_t k = 0; k < n; ++k) {
    sum[k] = xs[k] + ys[k];
    scaled[k] = xs[k] * 0.9f;
    rdiv[k] = 2.0f / ys[k];
  }
  EXPECT_TENSOR_EQ(x + y, tensor(sum));
  EXPECT_TENSOR_EQ(x * 0.9, tensor(scaled));
  EXPECT_TENSOR_EQ(2 / y, tensor(rdiv));
}

TEST(BinaryOps, RegisteredWithSchemas) {
  EXPECT_EQ(OpFor<&kernels::add>().name(), "add");
  EXPECT_EQ(OpFor<&kernels::where>().schema().args.size(), 3u);
  EXPECT_FALSE(OpFor<&kernels::clamp>().schema().mutated_arg.has_value());
  for (const Operator* op :
       {&OpFor<&kernels::add_>(), &OpFor<&kernels::sub_>(), &OpFor<&kernels::mul_>(),
        &OpFor<&kernels::div_>(), &OpFor<&kernels::clamp_>(), &OpFor<&kernels::copy_>(),
        &OpFor<&kernels::fill_>(), &OpFor<&kernels::zero_>()}) {
    SCOPED_TRACE(op->name());
    ASSERT_TRUE(op->schema().mutated_arg.has_value());
    EXPECT_EQ(*op->schema().mutated_arg, 0);
  }
}

}  // namespace
}  // namespace ft

namespace ft {
namespace {

TEST(BinaryOpsRegression, EmptyTensorWithAHugeStride) {
  // An empty view may carry any stride (ops_fuzzer reached one of INT64_MAX through
  // reshape and chunk of a [0, 3] tensor); the kernels used to multiply it by the item size,
  // a signed overflow UBSan reports. Nothing is read or written either way.
  const Tensor base = zeros({0, 3});
  const Tensor odd = MakeDense(base.storage(), kFloat32, {0, 3},
                               {std::numeric_limits<int64_t>::max(), 1}, 0);
  fill_(odd, 2.0);
  EXPECT_EQ((odd + odd).sizes(), IntArrayRef({0, 3}));
  EXPECT_EQ((odd * zeros({3})).numel(), 0);
  EXPECT_EQ(neg(odd).numel(), 0);
}

}  // namespace
}  // namespace ft

// ---- The dtypes beyond the original four (issue 43) ----
//
// Fixtures: torch 1.13's results for every case tools/torch_fixtures/binary_dtypes.py
// writes (each checked there against an oracle without torch), on 64-element vectors, and
// again through transposed and sliced views of the same values. Then oracles of our own:
// integer wrap in closed form, float16/bfloat16 as the float result rounded once, torch's
// complex formulas, mixed-dtype promotion, and the errors.
namespace ft {
namespace {

const std::string& DTypeFixtureDir() {
  static const std::string dir = [] {
    const char* srcdir = std::getenv("TEST_SRCDIR");
    const char* workspace = std::getenv("TEST_WORKSPACE");
    const std::string root = srcdir != nullptr ? std::string(srcdir) + "/" +
                                                     (workspace != nullptr ? workspace : "ft") + "/"
                                               : "";
    return root + "tests/fixtures/torch/binary_dtypes/";
  }();
  return dir;
}

Tensor Stored(const std::string& case_name, const std::string& what) {
  return LoadNpy(DTypeFixtureDir() + case_name + "." + what + ".npy");
}

DType DTypeNamed(const std::string& name) {
  for (DType d : kAllDTypes) {
    if (name == DTypeName(d)) return d;
  }
  ADD_FAILURE() << "no dtype named " << name;
  return kFloat32;
}

// FromStored: a fixture array (float64 or int64 values, complex as [n, 2]) as a `dtype`
// tensor (exact: the values are the dtype's own).
Tensor FromStored(const Tensor& stored, DType dtype) {
  if (!IsComplex(dtype)) return kernels::to(stored, dtype);
  const std::vector<double> v = stored.to_vector<double>();
  std::vector<std::complex<double>> z;
  for (size_t i = 0; i + 1 < v.size(); i += 2) z.emplace_back(v[i], v[i + 1]);
  return kernels::to(tensor(z, {static_cast<int64_t>(z.size())}), dtype);
}

bool SameValue(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

// ExpectMatchesStored: `got` has the fixture's dtype and values, NaN matching NaN and zeros
// matching in sign.
void ExpectMatchesStored(const Tensor& got, const std::string& case_name) {
  const auto want_dtype = static_cast<DType>(Stored(case_name, "dtype").to_vector<int64_t>().at(0));
  ASSERT_EQ(got.dtype(), want_dtype);
  const Tensor want = Stored(case_name, "out");
  if (want.dtype() == kBool) {
    EXPECT_EQ(got.to_vector<bool>(), want.to_vector<bool>());
    return;
  }
  if (want.dtype() == kInt64) {
    EXPECT_EQ(kernels::to(got, kInt64).to_vector<int64_t>(), want.to_vector<int64_t>());
    return;
  }
  std::vector<double> g;
  if (IsComplex(got.dtype())) {
    for (const std::complex<double>& z :
         kernels::to(got, kComplex128).to_vector<std::complex<double>>()) {
      g.push_back(z.real());
      g.push_back(z.imag());
    }
  } else {
    g = kernels::to(got, kFloat64).to_vector<double>();
  }
  const std::vector<double> w = want.to_vector<double>();
  ASSERT_EQ(g.size(), w.size());
  int mismatches = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    if (!SameValue(g[i], w[i]) && ++mismatches <= 3) {
      ADD_FAILURE() << "element " << i << ": ft " << g[i] << ", torch " << w[i];
    }
  }
}

Scalar StoredScalar(const std::string& kind, const Tensor& b) {
  const std::vector<double> v = b.to_vector<double>();
  if (kind == "bool") return Scalar(v.at(0) != 0);
  if (kind == "int") return Scalar(static_cast<int64_t>(v.at(0)));
  if (kind == "float") return Scalar(v.at(0));
  return Scalar(std::complex<double>(v.at(0), v.at(1)));
}

// Views: the same values as `t` (1-D, even length) through a transposed [2, n/2] view and
// a stride-2 slice of a larger buffer, each flattened back by the caller's reshape.
Tensor Strided(const Tensor& t) {
  const int64_t n = t.numel();
  Tensor wide = zeros({n, 2}, t.dtype());
  kernels::copy_into(kernels::select(wide, 1, 0), t);
  return kernels::select(wide, 1, 0);  // stride 2
}

Tensor RunCase(const std::string& op, const std::string& kind, DType da, const Tensor& a,
               const std::string& b_name, const Tensor& b_stored) {
  static const std::map<std::string, BinaryFn> kBinary = {
      {"add", static_cast<BinaryFn>(&add)},
      {"sub", static_cast<BinaryFn>(&sub)},
      {"mul", static_cast<BinaryFn>(&mul)},
      {"div", static_cast<BinaryFn>(&div)},
      {"maximum", static_cast<BinaryFn>(&maximum)},
      {"minimum", static_cast<BinaryFn>(&minimum)},
      {"eq", static_cast<BinaryFn>(&eq)},
      {"ne", static_cast<BinaryFn>(&ne)},
      {"lt", static_cast<BinaryFn>(&lt)},
      {"le", static_cast<BinaryFn>(&le)},
      {"gt", static_cast<BinaryFn>(&gt)},
      {"ge", static_cast<BinaryFn>(&ge)},
      {"logical_and", &logical_and},
      {"logical_or", &logical_or}};
  using ScalarFn = Tensor (*)(const Tensor&, Scalar);
  static const std::map<std::string, ScalarFn> kScalar = {
      {"add_scalar", static_cast<ScalarFn>(&add)}, {"sub_scalar", static_cast<ScalarFn>(&sub)},
      {"mul_scalar", static_cast<ScalarFn>(&mul)}, {"div_scalar", static_cast<ScalarFn>(&div)},
      {"eq_scalar", static_cast<ScalarFn>(&eq)},   {"lt_scalar", static_cast<ScalarFn>(&lt)}};
  static const std::map<std::string, BinaryFn> kInPlace = {{"add_", static_cast<BinaryFn>(&add_)},
                                                           {"sub_", static_cast<BinaryFn>(&sub_)},
                                                           {"mul_", static_cast<BinaryFn>(&mul_)},
                                                           {"div_", static_cast<BinaryFn>(&div_)}};
  (void)da;
  if (kScalar.count(op)) return kScalar.at(op)(a, StoredScalar(kind, b_stored));
  if (op == "clamp") {
    const std::vector<double> bounds = b_stored.to_vector<double>();
    if (kind == "int") {
      return clamp(a, Scalar(static_cast<int64_t>(bounds[0])),
                   Scalar(static_cast<int64_t>(bounds[1])));
    }
    return clamp(a, Scalar(bounds[0]), Scalar(bounds[1]));
  }
  const Tensor b = FromStored(b_stored, DTypeNamed(b_name));
  if (kBinary.count(op)) return kBinary.at(op)(a, b);
  if (kInPlace.count(op)) {
    Tensor self = kernels::clone(a);
    kInPlace.at(op)(self, b);
    return self;
  }
  if (op == "where") {
    std::vector<bool> c;
    for (int64_t i = 0; i < a.numel(); ++i) c.push_back(i % 3 == 0);
    return where(tensor(c, {a.numel()}), a, b);
  }
  ADD_FAILURE() << "unknown fixture op " << op;
  return a;
}

TEST(BinaryDTypes, MatchTorchFixtures) {
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(DTypeFixtureDir())) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".out.npy";
    if (file.size() <= suffix.size() ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string case_name = file.substr(0, file.size() - suffix.size());
    const std::vector<std::string> parts = absl::StrSplit(case_name, '.');
    ASSERT_EQ(parts.size(), 3u) << case_name;
    SCOPED_TRACE(case_name);
    const DType da = DTypeNamed(parts[1]);
    const Tensor a = FromStored(Stored(case_name, "a"), da);
    const Tensor b_stored = Stored(case_name, "b");
    ExpectMatchesStored(RunCase(parts[0], parts[2], da, a, parts[2], b_stored), case_name);
    // The same values through a strided view (the plain loops' ForEachStrided path).
    if (parts[0] != "where" && parts[0].back() != '_') {
      ExpectMatchesStored(RunCase(parts[0], parts[2], da, Strided(a), parts[2], b_stored),
                          case_name);
    }
    ++cases;
  }
  EXPECT_GT(cases, 500);
}

Tensor Of(DType dtype, const std::vector<double>& v) { return kernels::to(tensor(v), dtype); }

// Integer arithmetic wraps modulo 2^bits (closed form: the int64 result reduced to the width).
TEST(BinaryDTypes, IntegersWrapLikeTorch) {
  struct Width {
    DType dtype;
    int64_t lo, hi;
  };
  for (const Width& w : {Width{kInt8, -128, 127}, Width{kInt16, -32768, 32767},
                         Width{kInt32, INT32_MIN, INT32_MAX}, Width{kUInt8, 0, 255}}) {
    SCOPED_TRACE(DTypeName(w.dtype));
    const int64_t span = w.hi - w.lo + 1;
    auto wrap = [&](int64_t v) { return ((v - w.lo) % span + span) % span + w.lo; };
    const std::vector<double> xs = {static_cast<double>(w.hi),
                                    static_cast<double>(w.lo),
                                    1,
                                    0,
                                    static_cast<double>(w.hi - 1),
                                    3};
    const std::vector<double> ys = {
        static_cast<double>(w.hi), static_cast<double>(w.lo), static_cast<double>(w.hi), 5, 2,
        static_cast<double>(w.lo)};
    const Tensor x = Of(w.dtype, xs), y = Of(w.dtype, ys);
    const std::vector<int64_t> s = kernels::to(x + y, kInt64).to_vector<int64_t>();
    const std::vector<int64_t> d = kernels::to(x - y, kInt64).to_vector<int64_t>();
    const std::vector<int64_t> p = kernels::to(x * y, kInt64).to_vector<int64_t>();
    for (size_t i = 0; i < xs.size(); ++i) {
      const auto a = static_cast<int64_t>(xs[i]), b = static_cast<int64_t>(ys[i]);
      EXPECT_EQ(s[i], wrap(a + b)) << i;
      EXPECT_EQ(d[i], wrap(a - b)) << i;
      EXPECT_EQ(p[i], wrap(a * b)) << i;
    }
    EXPECT_EQ((x + y).dtype(), w.dtype);
    // In place with a wider integer: computed wide, then wrapped into self.
    Tensor self = kernels::clone(x);
    add_(self, kernels::to(y, kInt64));
    EXPECT_EQ(kernels::to(self, kInt64).to_vector<int64_t>(), s);
  }
}

// float16 and bfloat16: the float result of the float values, rounded once.
TEST(BinaryDTypes, HalfAndBFloat16RoundOnce) {
  for (DType dtype : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Of(dtype, {1.0 / 3, 3.14159, -2.5e3, 6.0e4, 1e-5, 7.0, -0.0});
    const Tensor y = Of(dtype, {0.1, 2.71828, 7.0, 3.0e4, 3.0, 0.0, 0.0});
    const std::vector<float> fx = kernels::to(x, kFloat32).to_vector<float>();
    const std::vector<float> fy = kernels::to(y, kFloat32).to_vector<float>();
    struct Case {
      BinaryFn op;
      float (*f)(float, float);
    };
    for (const Case& c :
         {Case{static_cast<BinaryFn>(&add), [](float a, float b) { return a + b; }},
          Case{static_cast<BinaryFn>(&sub), [](float a, float b) { return a - b; }},
          Case{static_cast<BinaryFn>(&mul), [](float a, float b) { return a * b; }},
          Case{static_cast<BinaryFn>(&div), [](float a, float b) { return a / b; }}}) {
      const Tensor got = c.op(x, y);
      ASSERT_EQ(got.dtype(), dtype);
      const std::vector<float> g = kernels::to(got, kFloat32).to_vector<float>();
      for (size_t i = 0; i < fx.size(); ++i) {
        const float r = c.f(fx[i], fy[i]);
        const float want =
            dtype == kFloat16 ? static_cast<float>(Half(r)) : static_cast<float>(BFloat16(r));
        EXPECT_TRUE(SameValue(g[i], want)) << i << ": " << g[i] << " vs " << want;
      }
    }
  }
  // 6e4 + 3e4 overflows float16 (inf) but not bfloat16.
  EXPECT_EQ((Of(kFloat16, {6.0e4}) + Of(kFloat16, {3.0e4})).item<float>(),
            std::numeric_limits<float>::infinity());
}

TEST(BinaryDTypes, ComplexFormulasAreTorchs) {
  using C = std::complex<double>;
  const Tensor a = tensor(std::vector<C>{{1, 2}, {3, -4}, {1e200, 1e200}, {1, 1}});
  const Tensor b = tensor(std::vector<C>{{3, 4}, {0.5, 0.25}, {1e200, 1e200}, {0, 0}});
  const std::vector<C> q = div(a, b).to_vector<C>();
  // (1+2i)/(3+4i) = (11 + 2i)/25; (3-4i)/(0.5+0.25i) = (0.5 - 2.75i)/0.3125.
  EXPECT_EQ(q[0], C(11.0 / 25, 2.0 / 25));
  EXPECT_EQ(q[1], C((3 * 0.5 - 4 * 0.25) / 0.3125, (-4 * 0.5 - 3 * 0.25) / 0.3125));
  // torch's unscaled formula: c*c + d*d overflows to inf, so 1e200(1+i)/1e200(1+i) is
  // nan (inf/inf), where std::complex's scaled division gives 1.
  EXPECT_TRUE(std::isnan(q[2].real()));
  // Division by 0: (1*0 + 1*0)/0 is nan.
  EXPECT_TRUE(std::isnan(q[3].real()) && std::isnan(q[3].imag()));
  EXPECT_EQ(mul(a, b).to_vector<C>()[0], C(1 * 3 - 2 * 4, 1 * 4 + 2 * 3));
  // a + b is torch's a + alpha * b: an infinite part of b makes the other part NaN.
  const Tensor inf = tensor(std::vector<C>{{std::numeric_limits<double>::infinity(), 1}});
  const C s = (inf + inf).item<C>();
  EXPECT_EQ(s.real(), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(s.imag()));
  // complex64 computes in float.
  const Tensor a64 = kernels::to(a, kComplex64);
  EXPECT_EQ((a64 * a64).dtype(), kComplex64);
  EXPECT_EQ(eq(a64, a64).to_vector<bool>(), (std::vector<bool>{true, true, true, true}));
}

TEST(BinaryDTypes, PromotionOfMixedDTypes) {
  const Tensor i8 = Of(kInt8, {-1, 2}), u8 = Of(kUInt8, {255, 2}), i32 = Of(kInt32, {1, 2});
  const Tensor h = Of(kFloat16, {1.5, 2}), bf = Of(kBFloat16, {1.5, 2});
  EXPECT_EQ((i8 + u8).dtype(), kInt16);
  EXPECT_EQ(kernels::to(i8 + u8, kInt64).to_vector<int64_t>(), (std::vector<int64_t>{254, 4}));
  EXPECT_EQ((h + bf).dtype(), kFloat32);
  EXPECT_EQ((i32 + h).dtype(), kFloat16);
  EXPECT_EQ((i8 * 2.5).dtype(), kFloat32);
  EXPECT_EQ((h * 2.5).dtype(), kFloat16);
  EXPECT_EQ((i8 / i8).dtype(), kFloat32);  // true division
  // An integer scalar divides as itself, not wrapped to the tensor's width first.
  EXPECT_EQ(div(Of(kUInt8, {150}), 300).item<float>(), 0.5f);
  EXPECT_EQ(div(-3, Of(kInt8, {2})).item<float>(), -1.5f);
  EXPECT_EQ(div(i32, Of(kInt32, {0, 4})).to_vector<float>()[0],
            std::numeric_limits<float>::infinity());
  EXPECT_EQ((u8 * std::complex<double>(0, 1)).dtype(), kComplex64);
  EXPECT_EQ((h * std::complex<double>(0, 1)).dtype(), kComplex64);  // torch: complex32
  // A zero-dim tensor of the same category does not widen a dimensioned one.
  EXPECT_EQ((i8 + scalar_tensor(Scalar(int64_t{1000}))).dtype(), kInt8);
  EXPECT_EQ(kernels::to(i8 + 1000, kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{-25, -22}));  // 1000 wraps to -24 in int8
  // uint8 == 257: 257 wraps to 1 (torch).
  EXPECT_EQ(eq(Of(kUInt8, {1, 2}), 257).to_vector<bool>(), (std::vector<bool>{true, false}));
  // Bool: add is or, mul is and.
  const Tensor t = tensor(std::vector<bool>{true, false});
  EXPECT_EQ(logical_and(Of(kComplex64, {0, 1}), Of(kInt8, {5, 5})).to_vector<bool>(),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(logical_not(Of(kBFloat16, {0, kNan})).to_vector<bool>(),
            (std::vector<bool>{true, false}));
  EXPECT_EQ(where(t, i8, h).dtype(), kFloat16);
  EXPECT_EQ(maximum(i8, h).dtype(), kFloat16);
}

TEST(BinaryDTypes, Errors) {
  const Tensor z = Of(kComplex64, {1, 2});
  const Tensor i8 = Of(kInt8, {1, 2});
  for (BinaryFn op : {static_cast<BinaryFn>(&maximum), static_cast<BinaryFn>(&minimum),
                      static_cast<BinaryFn>(&lt), static_cast<BinaryFn>(&le),
                      static_cast<BinaryFn>(&gt), static_cast<BinaryFn>(&ge)}) {
    EXPECT_FT_ERROR(op(z, i8), "not supported for complex tensors (complex64");
  }
  EXPECT_FT_ERROR(lt(z, z), "lt: not supported for complex");
  EXPECT_FT_ERROR(clamp(z, 0, 1), "clamp: not supported for complex types");
  EXPECT_FT_ERROR(clamp(Of(kFloat32, {1}), std::complex<double>(0, 1), std::nullopt),
                  "clamp: not supported for complex types");
  const Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_FT_ERROR(sub(i8, b), "sub: subtraction with a bool tensor");
  // In place refuses what CanCast refuses.
  Tensor self = kernels::clone(i8);
  EXPECT_FT_ERROR(add_(self, Of(kFloat16, {1, 1})),
                  "add_: result type float16 can't be cast to the desired output type "
                  "int8");
  EXPECT_FT_ERROR(div_(self, i8), "div_: result type float32 can't be cast");
  Tensor h = Of(kFloat16, {1, 2});
  EXPECT_FT_ERROR(mul_(h, z), "mul_: result type complex64 can't be cast");
  EXPECT_EQ(kernels::to(self, kInt64).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  // fill_ and clamp bounds: torch's overflow check.
  EXPECT_FT_ERROR(fill_(self, 300), "fill_: value 300 cannot be converted to int8");
  EXPECT_FT_ERROR(fill_(h, 65519.0), "cannot be converted to float16 without overflow");
  EXPECT_FT_ERROR(fill_(Of(kFloat32, {1}), std::complex<double>(1, 2)), "complex value");
  EXPECT_FT_ERROR(clamp(i8, std::nullopt, 300), "clamp: value 300 cannot be converted");
  EXPECT_FT_ERROR(fill_(Of(kUInt8, {1}), 256), "cannot be converted to uint8");
}

TEST(BinaryDTypes, FillZeroCopyClamp) {
  Tensor u8 = Of(kUInt8, {1, 2, 3});
  fill_(u8, -1);  // torch: wraps to 255
  EXPECT_EQ(kernels::to(u8, kInt64).to_vector<int64_t>(), (std::vector<int64_t>{255, 255, 255}));
  fill_(u8, -129);
  EXPECT_EQ(kernels::to(u8, kInt64).to_vector<int64_t>(), (std::vector<int64_t>{127, 127, 127}));
  Tensor z = Of(kComplex128, {1, 2});
  fill_(z, std::complex<double>(1, -2));
  EXPECT_EQ(z.to_vector<std::complex<double>>()[1], std::complex<double>(1, -2));
  zero_(z);
  EXPECT_EQ(z.to_vector<std::complex<double>>()[0], std::complex<double>(0, 0));
  Tensor h = zeros({2, 3}, kFloat16);
  copy_(kernels::transpose(h, 0, 1), kernels::reshape(Of(kInt32, {1, 2, 3, 4, 5, 6}), {3, 2}));
  EXPECT_EQ(kernels::to(h, kFloat64).to_vector<double>(), (std::vector<double>{1, 3, 5, 2, 4, 6}));
  // clamp: bounds rounded to the dtype, then compared; min > max gives max; NaN propagates.
  const Tensor bf = Of(kBFloat16, {1, kNan, 3, -7});
  const std::vector<double> c = kernels::to(clamp(bf, 2, 1), kFloat64).to_vector<double>();
  EXPECT_EQ(c[0], 1);
  EXPECT_TRUE(std::isnan(c[1]));
  EXPECT_EQ(c[2], 1);
  EXPECT_EQ(kernels::to(clamp(Of(kUInt8, {0, 200}), -1, std::nullopt), kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{255, 255}));  // -1 -> 255 as torch's
  EXPECT_EQ(clamp(Of(kInt8, {1, 2}), 1.5, std::nullopt).dtype(), kFloat32);
  Tensor i16 = Of(kInt16, {-5, 50, 500});
  clamp_(i16, 0, 100);
  EXPECT_EQ(kernels::to(i16, kInt64).to_vector<int64_t>(), (std::vector<int64_t>{0, 50, 100}));
  // float16 clamp (torch 1.13 has no CPU kernel for it; ft clamps in float as for bfloat16).
  EXPECT_EQ(kernels::to(clamp(Of(kFloat16, {-1, 0.5, 9}), 0, 1), kFloat64).to_vector<double>(),
            (std::vector<double>{0, 0.5, 1}));
}

TEST(BinaryDTypes, LargeInputsRunOnThreads) {
  // Enough elements for ParallelRun's split, plus a broadcast scalar operand.
  const int64_t n = 300000;
  const Tensor x = kernels::to(arange(n), kInt32);
  const std::vector<int32_t> s = (x * 3 + x).to_vector<int32_t>();
  for (int64_t i = 0; i < n; i += 997) EXPECT_EQ(s[i], static_cast<int32_t>(4 * i));
  const Tensor h = kernels::to(arange(n), kFloat16);
  const std::vector<float> q = kernels::to(div(h, 4.0), kFloat32).to_vector<float>();
  const std::vector<float> hv = kernels::to(h, kFloat32).to_vector<float>();
  for (int64_t i = 0; i < n; i += 997) EXPECT_EQ(q[i], static_cast<float>(Half(hv[i] / 4.0f)));
}

}  // namespace
}  // namespace ft

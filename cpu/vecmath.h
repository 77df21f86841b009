// ft/cpu/vecmath.h  (internal: the kernels in //tensor and jit's fused steps call it)
//
// Vectorized math over arrays of float or double: SLEEF 3.5 (Debian's libsleef, the library
// PyTorch's CPU kernels use) on the vector unit ActiveCpuCapability() names, SSE2, AVX2 or
// AVX-512, chosen on every call. docs/performance.md says why SLEEF and not Highway.
//
// Each function is element by element and the same code runs every element: an array's tail
// shorter than a vector is padded into one vector and computed there, not by a scalar
// fallback. So a result depends only on the element's value and the capability, never on
// where a chunk or a thread's range begins, which is what lets ft::jit's fused steps (which
// call Apply on chunks) match the eager kernels (which call it on whole arrays) bit for bit.
//
// Accuracy (maximum error in ulp, measured over >= 10^6 points per function and dtype by
// vecmath_test against a long double reference, and stated in docs/api.md): SLEEF's bounds
// of 1.0 ulp (1.5 for erfc) hold for exp, expm1, log, log1p, sin, cos, tan, tanh, erf, erfc
// and lgamma (away from lgamma's zeros, where only an absolute bound makes sense); sqrt is
// correctly rounded; rsqrt (1 / sqrt) and sigmoid (1 / (1 + exp(-x))) compose two or three
// rounded steps. IEEE special values follow C's <cmath>: exp(-inf) = 0, log(0) = -inf,
// sin(inf) = nan, tanh(+-inf) = +-1, and nan in gives nan out. The second group of Fn is
// exact (neg, abs, sign, relu, floor, round), correctly rounded (square, reciprocal), or two
// or three rounded steps (softsign and hardsigmoid 1.5 ulp, hardswish 2.5 ulp, which is inf
// above max / 6, where x * 6 overflows, as in torch's formula); ParamFn, Compare, Arithmetic
// and Outer give a scalar loop's bits.
//
// Example:
//   std::vector<float> x = ..., y(x.size());
//   ft::vecmath::Apply(ft::vecmath::Fn::kTanh, x.data(), y.data(), x.size());  // in == out ok
#ifndef FT_CPU_VECMATH_H_
#define FT_CPU_VECMATH_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "cpu/cpu_capability.h"

namespace ft::vecmath {

// Named for the ops they implement (kernels::exp applies kExp, and so on).
enum class Fn : uint8_t {
  kExp,
  kExpm1,
  kLog,
  kLog1p,
  kSin,
  kCos,
  kTan,
  kTanh,
  kSigmoid,
  kSqrt,
  kRsqrt,
  kErf,
  kErfc,
  kLgamma,
  // Exact or nearly so: the same few IEEE steps at every level and in scalar code.
  kNeg,         // -x (the sign bit flipped, NaN included)
  kAbs,         // |x| (the sign bit cleared, NaN included)
  kSign,        // 1, -1 or +0 (for either zero); NaN stays itself
  kRelu,        // x < 0 ? 0 : x (-0 and NaN stay themselves)
  kSquare,      // x * x
  kReciprocal,  // 1 / x
  kFloor,       // floor(x), -0 kept
  kRound,       // rint(x): halves to even, the sign of a zero result kept
  kSoftsign,    // x / (1 + |x|)
  kHardsigmoid, // min(max(x + 3, 0), 6) / 6 (NaN stays NaN)
  kHardswish,   // x * min(max(x + 3, 0), 6) / 6 (NaN stays NaN)
};
inline constexpr int kNumFns = static_cast<int>(Fn::kHardswish) + 1;

// The op's name ("exp", "sigmoid", ...).
absl::string_view FnName(Fn fn);

// out[i] = fn(in[i]) for i in [0, n). `in` may equal `out`; other overlaps are not allowed.
void Apply(Fn fn, const float* in, float* out, int64_t n);
void Apply(Fn fn, const double* in, double* out, int64_t n);

// out[i] = pow(a[i], b[i]) (SLEEF's 1.0-ulp pow; C's special cases: pow(x, 0) = 1,
// pow(1, y) = 1, pow(negative, non-integer) = nan).
void Pow(const float* a, const float* b, float* out, int64_t n);
void Pow(const double* a, const double* b, double* out, int64_t n);

// out[i] = atan2(a[i], b[i]), the angle of the point (b[i], a[i]) in [-pi, pi] (SLEEF's
// 1.0-ulp atan2; C's special cases: signed zeros pick the half-plane, atan2(+-inf, +-inf) =
// +-pi/4 or +-3pi/4, NaN in either gives NaN).
void Atan2(const float* a, const float* b, float* out, int64_t n);
void Atan2(const double* a, const double* b, double* out, int64_t n);

// The sum of x[0..n) (0 for n == 0), in vector accumulators, blocked by 4096 elements so
// that a lane adds up n / 4096 block partials rather than n / lanes elements in sequence
// (a plain vector sum of 10^7 floats loses digits). The order of the additions is fixed for a given
// n and capability, so the result is deterministic; it differs from a sequential sum by
// rounding only (and is usually closer to the exact sum).
float Sum(const float* x, int64_t n);
double Sum(const double* x, int64_t n);

// out[r] = Sum(x + r * n, n) for each of `rows` contiguous rows of n elements: Sum's bits
// row by row, in one call (a matrix's row sums pay one dispatch, not one per row).
void SumRows(const float* x, int64_t rows, int64_t n, float* out);
void SumRows(const double* x, int64_t rows, int64_t n, double* out);

// out[c] = x[c] + x[ld + c] + ... + x[(rows - 1) * ld + c] for c in [0, cols): the column
// sums of a rows x cols matrix whose rows are ld elements apart, each added in row order
// starting from the first row, so every column has a sequential loop's bits at every
// capability, however the columns are split. With no rows, every sum is 0.
void SumColumns(const float* x, int64_t rows, int64_t cols, int64_t ld, float* out);
void SumColumns(const double* x, int64_t rows, int64_t cols, int64_t ld, double* out);

// The largest / smallest of x[0..n), n >= 1, NaN when any element is NaN (torch.amax and
// amin). Which of +0 and -0 comes back when both are the extreme is unspecified.
float Max(const float* x, int64_t n);
double Max(const double* x, int64_t n);
float Min(const float* x, int64_t n);
double Min(const double* x, int64_t n);

// out[c] = the largest / smallest of column c (x[c], x[ld + c], ..., rows >= 1), NaN when any
// of its elements is NaN, taken in row order as SumColumns adds: the result of a column
// does not depend on how the columns are split. rows < 1 writes NaN (no extreme).
void MaxColumns(const float* x, int64_t rows, int64_t cols, int64_t ld, float* out);
void MaxColumns(const double* x, int64_t rows, int64_t cols, int64_t ld, double* out);
void MinColumns(const float* x, int64_t rows, int64_t cols, int64_t ld, float* out);
void MinColumns(const double* x, int64_t rows, int64_t cols, int64_t ld, double* out);

// The ops of Arithmetic, named for the ops they implement. kMaximum / kMinimum are
// torch.maximum / minimum: a NaN operand is the result (a's when both are), and of two equal
// values (-0 and +0 included) b is.
enum class Arith : uint8_t { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum };
inline constexpr int kNumArith = static_cast<int>(Arith::kMinimum) + 1;

// The rule of kMaximum / kMinimum on one pair: Arithmetic applies it to GCC vector types and
// scalars, and code outside vecmath that must agree element for element (strided kernels,
// jit's fused steps) calls it too.
template <typename T>
T MaximumOf(T a, T b) {
  return a != a ? a : (b != b ? b : (b < a ? a : b));
}
template <typename T>
T MinimumOf(T a, T b) {
  return a != a ? a : (b != b ? b : (a < b ? a : b));
}

// out[i] = a[i * a_step] op b[i * b_step] for i in [0, n), each step 1 (an array) or 0 (the
// one value a[0] or b[0], broadcast). The same bits as a scalar loop at every capability
// (IEEE rounds each +, -, *, / alike at any width; maximum and minimum only select). `out`
// may equal an array operand.
void Arithmetic(Arith op, const float* a, int64_t a_step, const float* b, int64_t b_step,
                float* out, int64_t n);
void Arithmetic(Arith op, const double* a, int64_t a_step, const double* b, int64_t b_step,
                double* out, int64_t n);

// The outer product out[r * n + j] = a[r * a_step] * b[j] for r < m, j < n (a column of a,
// elements a_step apart, times the row b[0, n)): the m * n products of a per-example weight
// gradient, each one IEEE product (Arithmetic's bits), in one call.
void Outer(const float* a, int64_t a_step, int64_t m, const float* b, int64_t n, float* out);
void Outer(const double* a, int64_t a_step, int64_t m, const double* b, int64_t n,
           double* out);

// Elementwise functions of x and two scalar parameters p and q, each the same select steps at
// every level and in scalar code (exact, apart from leaky_relu's one product).
enum class ParamFn : uint8_t {
  kLeakyRelu,  // x > 0 ? x : x * p (p: negative_slope)
  kHardtanh,   // NaN stays NaN, else min(max(x, p), q) with std::max / std::min (q when p > q)
  kClamp,      // torch.clamp: x < p or p NaN gives p, then > q or q NaN gives q (an absent bound
               // is an infinity, which nothing passes)
};
inline constexpr int kNumParamFns = static_cast<int>(ParamFn::kClamp) + 1;

// out[i] = fn(in[i]; p, q) for i in [0, n). `in` may equal `out`.
void Apply(ParamFn fn, float p, float q, const float* in, float* out, int64_t n);
void Apply(ParamFn fn, double p, double q, const double* in, double* out, int64_t n);

// Comparisons: out[i] = a[i * a_step] op b[i * b_step] (steps as Arithmetic's), as bools.
// NaN compares unequal and unordered (only kNe holds), as in C++.
enum class Cmp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
inline constexpr int kNumCmp = static_cast<int>(Cmp::kGe) + 1;
void Compare(Cmp op, const float* a, int64_t a_step, const float* b, int64_t b_step, bool* out,
             int64_t n);
void Compare(Cmp op, const double* a, int64_t a_step, const double* b, int64_t b_step,
             bool* out, int64_t n);

// The product of x[0..n) (1 for n == 0): four vector accumulators over whole vectors, their
// lanes multiplied in a fixed tree, then the last elements (fewer than a vector) one by one.
// The order is fixed for a given n and capability, so the result is deterministic; it differs
// from a sequential product by rounding only.
float Prod(const float* x, int64_t n);
double Prod(const double* x, int64_t n);

// out[c] = x[c] * x[ld + c] * ... (rows >= 1), each column multiplied in row order from the
// first row, so every column has a sequential loop's bits at every capability (SumColumns'
// rule). With no rows, every product is 1.
void ProdColumns(const float* x, int64_t rows, int64_t cols, int64_t ld, float* out);
void ProdColumns(const double* x, int64_t rows, int64_t cols, int64_t ld, double* out);

// How many calls of the functions above (Apply, Pow, ..., Arithmetic, Outer, Prod) ran on
// each capability since the process began: tests use it to prove that a kernel took the
// vector path of the level they set, not a scalar fallback.
int64_t CallCount(CpuCapability capability);

}  // namespace ft::vecmath

#endif  // FT_CPU_VECMATH_H_

#include "cpu/vecmath.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "cpu/capability_counter.h"
#include "cpu/vecmath_table.h"

namespace ft::vecmath {
namespace {

struct VecmathCalls {};  // CapabilityCounter's tag for this family
using Counter = ::ft::internal::CapabilityCounter<VecmathCalls>;

// The table of the active capability, counting the call.
const internal::Table& Active() {
  const CpuCapability capability = ActiveCpuCapability();
  Counter::Count(capability);
  switch (capability) {
    case CpuCapability::kAvx512:
      return internal::kAvx512Table;
    case CpuCapability::kAvx2:
      return internal::kAvx2Table;
    case CpuCapability::kSse2:
      break;
  }
  return internal::kSse2Table;
}

}  // namespace

absl::string_view FnName(Fn fn) {
  static constexpr absl::string_view kNames[kNumFns] = {
      "exp", "expm1", "log",     "log1p", "sin", "cos",  "tan",
      "tanh", "sigmoid", "sqrt", "rsqrt", "erf", "erfc", "lgamma",
      "neg", "abs", "sign", "relu", "square", "reciprocal", "floor", "round", "softsign",
      "hardsigmoid", "hardswish"};
  return kNames[static_cast<int>(fn)];
}

void Apply(Fn fn, const float* in, float* out, int64_t n) {
  if (n > 0) Active().f32[static_cast<int>(fn)](in, out, n);
}
void Apply(Fn fn, const double* in, double* out, int64_t n) {
  if (n > 0) Active().f64[static_cast<int>(fn)](in, out, n);
}
void Pow(const float* a, const float* b, float* out, int64_t n) {
  if (n > 0) Active().pow_f32(a, b, out, n);
}
void Pow(const double* a, const double* b, double* out, int64_t n) {
  if (n > 0) Active().pow_f64(a, b, out, n);
}
void Atan2(const float* a, const float* b, float* out, int64_t n) {
  if (n > 0) Active().atan2_f32(a, b, out, n);
}
void Atan2(const double* a, const double* b, double* out, int64_t n) {
  if (n > 0) Active().atan2_f64(a, b, out, n);
}

float Sum(const float* x, int64_t n) { return n > 0 ? Active().sum_f32(x, n) : 0.0f; }
double Sum(const double* x, int64_t n) { return n > 0 ? Active().sum_f64(x, n) : 0.0; }

void SumRows(const float* x, int64_t rows, int64_t n, float* out) {
  if (rows <= 0) return;
  if (n <= 0) {
    std::fill_n(out, rows, 0.0f);
    return;
  }
  Active().sum_rows_f32(x, rows, n, out);
}
void SumRows(const double* x, int64_t rows, int64_t n, double* out) {
  if (rows <= 0) return;
  if (n <= 0) {
    std::fill_n(out, rows, 0.0);
    return;
  }
  Active().sum_rows_f64(x, rows, n, out);
}

void SumColumns(const float* x, int64_t rows, int64_t cols, int64_t ld, float* out) {
  if (cols <= 0) return;
  if (rows <= 0) {
    std::fill_n(out, cols, 0.0f);
    return;
  }
  Active().sum_columns_f32(x, rows, cols, ld, out);
}
void SumColumns(const double* x, int64_t rows, int64_t cols, int64_t ld, double* out) {
  if (cols <= 0) return;
  if (rows <= 0) {
    std::fill_n(out, cols, 0.0);
    return;
  }
  Active().sum_columns_f64(x, rows, cols, ld, out);
}

// n < 1 has no extreme: NaN rather than a read of x[0].
float Max(const float* x, int64_t n) {
  return n > 0 ? Active().extreme_f32[0](x, n) : std::numeric_limits<float>::quiet_NaN();
}
double Max(const double* x, int64_t n) {
  return n > 0 ? Active().extreme_f64[0](x, n) : std::numeric_limits<double>::quiet_NaN();
}
float Min(const float* x, int64_t n) {
  return n > 0 ? Active().extreme_f32[1](x, n) : std::numeric_limits<float>::quiet_NaN();
}
double Min(const double* x, int64_t n) {
  return n > 0 ? Active().extreme_f64[1](x, n) : std::numeric_limits<double>::quiet_NaN();
}

namespace {
// FoldColumns runs a table's column function (max, min or product); with no rows every
// output is `no_rows` (NaN: no extreme; 1: the empty product).
template <typename T, typename Fn>
void FoldColumns(Fn fn, T no_rows, const T* x, int64_t rows, int64_t cols, int64_t ld,
                 T* out) {
  if (cols <= 0) return;
  if (rows <= 0) {
    std::fill_n(out, cols, no_rows);
    return;
  }
  fn(x, rows, cols, ld, out);
}
}  // namespace

void MaxColumns(const float* x, int64_t rows, int64_t cols, int64_t ld, float* out) {
  FoldColumns(Active().extreme_columns_f32[0], std::numeric_limits<float>::quiet_NaN(), x, rows,
              cols, ld, out);
}
void MaxColumns(const double* x, int64_t rows, int64_t cols, int64_t ld, double* out) {
  FoldColumns(Active().extreme_columns_f64[0], std::numeric_limits<double>::quiet_NaN(), x, rows,
              cols, ld, out);
}
void MinColumns(const float* x, int64_t rows, int64_t cols, int64_t ld, float* out) {
  FoldColumns(Active().extreme_columns_f32[1], std::numeric_limits<float>::quiet_NaN(), x, rows,
              cols, ld, out);
}
void MinColumns(const double* x, int64_t rows, int64_t cols, int64_t ld, double* out) {
  FoldColumns(Active().extreme_columns_f64[1], std::numeric_limits<double>::quiet_NaN(), x, rows,
              cols, ld, out);
}

void Arithmetic(Arith op, const float* a, int64_t a_step, const float* b, int64_t b_step,
                float* out, int64_t n) {
  if (n > 0) Active().arith_f32[static_cast<int>(op)](a, a_step, b, b_step, out, n);
}

void Arithmetic(Arith op, const double* a, int64_t a_step, const double* b, int64_t b_step,
                double* out, int64_t n) {
  if (n > 0) Active().arith_f64[static_cast<int>(op)](a, a_step, b, b_step, out, n);
}

void Apply(ParamFn fn, float p, float q, const float* in, float* out, int64_t n) {
  if (n > 0) Active().param_f32[static_cast<int>(fn)](p, q, in, out, n);
}
void Apply(ParamFn fn, double p, double q, const double* in, double* out, int64_t n) {
  if (n > 0) Active().param_f64[static_cast<int>(fn)](p, q, in, out, n);
}

void Compare(Cmp op, const float* a, int64_t a_step, const float* b, int64_t b_step, bool* out,
             int64_t n) {
  if (n > 0) Active().compare_f32[static_cast<int>(op)](a, a_step, b, b_step, out, n);
}
void Compare(Cmp op, const double* a, int64_t a_step, const double* b, int64_t b_step,
             bool* out, int64_t n) {
  if (n > 0) Active().compare_f64[static_cast<int>(op)](a, a_step, b, b_step, out, n);
}

void Outer(const float* a, int64_t a_step, int64_t m, const float* b, int64_t n, float* out) {
  if (m > 0 && n > 0) Active().outer_f32(a, a_step, m, b, n, out);
}
void Outer(const double* a, int64_t a_step, int64_t m, const double* b, int64_t n,
           double* out) {
  if (m > 0 && n > 0) Active().outer_f64(a, a_step, m, b, n, out);
}

float Prod(const float* x, int64_t n) { return n > 0 ? Active().prod_f32(x, n) : 1.0f; }
double Prod(const double* x, int64_t n) { return n > 0 ? Active().prod_f64(x, n) : 1.0; }


void ProdColumns(const float* x, int64_t rows, int64_t cols, int64_t ld, float* out) {
  FoldColumns(Active().prod_columns_f32, 1.0f, x, rows, cols, ld, out);
}
void ProdColumns(const double* x, int64_t rows, int64_t cols, int64_t ld, double* out) {
  FoldColumns(Active().prod_columns_f64, 1.0, x, rows, cols, ld, out);
}

int64_t CallCount(CpuCapability capability) { return Counter::Total(capability); }

}  // namespace ft::vecmath

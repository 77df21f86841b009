// ft/cpu/vecmath_table.h  (internal to //cpu:vecmath)
//
// One table of array functions per capability. Each table lives in a translation unit of its
// own, compiled for its vector unit (vecmath_sse2.cc, vecmath_avx2.cc, vecmath_avx512.cc);
// vecmath.cc, compiled for baseline x86-64, picks a table at run time. Only the tables cross
// the boundary, so no AVX instruction can reach code that runs on a machine without AVX.
#ifndef FT_CPU_VECMATH_TABLE_H_
#define FT_CPU_VECMATH_TABLE_H_

#include <cstdint>

#include "cpu/vecmath.h"

namespace ft::vecmath::internal {

using UnaryF32 = void (*)(const float* in, float* out, int64_t n);
using UnaryF64 = void (*)(const double* in, double* out, int64_t n);
using BinaryF32 = void (*)(const float* a, const float* b, float* out, int64_t n);
using BinaryF64 = void (*)(const double* a, const double* b, double* out, int64_t n);
using SumF32 = float (*)(const float* x, int64_t n);
using SumF64 = double (*)(const double* x, int64_t n);
using SumRowsF32 = void (*)(const float* x, int64_t rows, int64_t n, float* out);
using SumRowsF64 = void (*)(const double* x, int64_t rows, int64_t n, double* out);
using SumColumnsF32 = void (*)(const float* x, int64_t rows, int64_t cols, int64_t ld,
                               float* out);
using SumColumnsF64 = void (*)(const double* x, int64_t rows, int64_t cols, int64_t ld,
                               double* out);
using ArithF32 = void (*)(const float* a, int64_t a_step, const float* b, int64_t b_step,
                          float* out, int64_t n);
using ArithF64 = void (*)(const double* a, int64_t a_step, const double* b, int64_t b_step,
                          double* out, int64_t n);

using ParamF32 = void (*)(float p, float q, const float* in, float* out, int64_t n);
using ParamF64 = void (*)(double p, double q, const double* in, double* out, int64_t n);
using CompareF32 = void (*)(const float* a, int64_t a_step, const float* b, int64_t b_step,
                            bool* out, int64_t n);
using CompareF64 = void (*)(const double* a, int64_t a_step, const double* b, int64_t b_step,
                            bool* out, int64_t n);

using OuterF32 = void (*)(const float* a, int64_t a_step, int64_t m, const float* b, int64_t n,
                          float* out);
using OuterF64 = void (*)(const double* a, int64_t a_step, int64_t m, const double* b,
                          int64_t n, double* out);

struct Table {
  UnaryF32 f32[kNumFns];  // indexed by Fn
  UnaryF64 f64[kNumFns];
  BinaryF32 pow_f32;
  BinaryF64 pow_f64;
  BinaryF32 atan2_f32;
  BinaryF64 atan2_f64;
  SumF32 sum_f32;
  SumF64 sum_f64;
  SumRowsF32 sum_rows_f32;
  SumRowsF64 sum_rows_f64;
  SumColumnsF32 sum_columns_f32;
  SumColumnsF64 sum_columns_f64;
  SumF32 extreme_f32[2];  // {max, min}
  SumF64 extreme_f64[2];
  SumColumnsF32 extreme_columns_f32[2];  // {max, min}
  SumColumnsF64 extreme_columns_f64[2];
  ArithF32 arith_f32[kNumArith];  // indexed by Arith
  ArithF64 arith_f64[kNumArith];
  ParamF32 param_f32[kNumParamFns];  // indexed by ParamFn
  ParamF64 param_f64[kNumParamFns];
  CompareF32 compare_f32[kNumCmp];  // indexed by Cmp
  CompareF64 compare_f64[kNumCmp];
  SumF32 prod_f32;
  SumF64 prod_f64;
  SumColumnsF32 prod_columns_f32;
  SumColumnsF64 prod_columns_f64;
  OuterF32 outer_f32;
  OuterF64 outer_f64;
};

extern const Table kSse2Table;
extern const Table kAvx2Table;
extern const Table kAvx512Table;

}  // namespace ft::vecmath::internal

#endif  // FT_CPU_VECMATH_TABLE_H_

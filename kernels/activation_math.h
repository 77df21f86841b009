// ft/kernels/activation_math.h
//
// The activations, clamp and the scalar special functions as strip functions over arrays:
// Apply(fn, params, in, out, n) writes out[i] = fn(in[i]) for i < n. This is the one
// definition of each function's arithmetic: kernels::gelu and the others run it over a tensor
// (kernels/activation.h), and jit's fused steps run it on their chunks
// (interpreters/jit/fused_kernel.h), so a fused activation has the eager kernel's bits by
// construction rather than by a second copy kept in step.
//
// Invariants:
// - out[i] depends on in[i], `params` and the active CPU capability alone, never on n, on
//   where the arrays begin or on i: a tensor may be cut into strips anywhere (threads,
//   chunks, strided blocks) and give the same bits.
// - `in` may equal `out` (each element is read before it is written); otherwise the arrays
//   do not overlap.
// - Functions made of exp, expm1, log1p, tanh or erfc (gelu, silu, mish, softplus, elu, selu,
//   celu, logsigmoid) call cpu/vecmath.h's vector code on strips that stay in the L1
//   cache, so they take the capability's vector path and are as accurate as those functions;
//   the piecewise-linear ones (leaky_relu, hardtanh, hardswish, hardsigmoid, softsign, clamp)
//   are vecmath's own vector functions; erfinv, digamma and polygamma are scalar code.
// - Params are checked by the caller (celu's alpha != 0, polygamma's n >= 0).
//
// Example:
//   float x[4] = {-1, 0, 1, 2}, y[4];
//   ft::activation::Apply(ft::activation::Fn::kSoftplus, {/*a=beta*/ 1.0, /*b=threshold*/ 20.0},
//                         x, y, 4);  // y = log(1 + e^x)
#ifndef FT_KERNELS_ACTIVATION_MATH_H_
#define FT_KERNELS_ACTIVATION_MATH_H_

#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/strings/string_view.h"

namespace ft::activation {

// One per public op (ops/activation.h documents each); the comment names what the
// op's scalar arguments become in Params.
enum class Fn : uint8_t {
  kGelu,        // a: 1 for the tanh approximation, 0 for the exact form
  kSilu,
  kMish,
  kSoftplus,    // a: beta, b: threshold
  kElu,         // a: alpha
  kSelu,
  kCelu,        // a: alpha (nonzero)
  kLeakyRelu,   // a: negative_slope
  kHardtanh,    // a: min_val, b: max_val
  kHardswish,
  kHardsigmoid,
  kLogsigmoid,
  kSoftsign,
  kErfinv,
  kDigamma,
  kPolygamma,   // n: the order (>= 0)
  kClamp,       // a: min (-inf when absent), b: max (+inf when absent); a NaN bound is the
                // result everywhere, min > max gives max; bounds beyond T's range saturate
};
inline constexpr int kNumFns = static_cast<int>(Fn::kClamp) + 1;

struct Params {
  double a = 0.0;
  double b = 0.0;
  int64_t n = 0;
};

// FnName: the op's name ("gelu", "leaky_relu", ...).
absl::string_view FnName(Fn fn);

void Apply(Fn fn, const Params& params, const float* in, float* out, int64_t n);
void Apply(Fn fn, const Params& params, const double* in, double* out, int64_t n);

// ClampBound: a clamp bound `d` in the floating type T. A finite bound beyond T's range
// saturates to +-inf (a plain conversion would round one just past the largest float down
// to it, and clamp(inf, max=3.4028235e38) must stay inf). kClamp and kernels::clamp_ both
// convert through it.
template <typename T>
T ClampBound(double d) {
  if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<T>::max())) {
    return d > 0 ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
  }
  return static_cast<T>(d);
}

}  // namespace ft::activation

#endif  // FT_KERNELS_ACTIVATION_MATH_H_

#include "kernels/activation.h"

#include <type_traits>

#include "cpu/vecmath.h"
#include "kernels/activation_math.h"
#include "kernels/unary.h"
#include "tensor/copy.h"
#include "tensor/loops.h"

namespace ft::kernels {
namespace {

// FloatingActivation holds the dtype rules every activation here shares: int64 computes in
// float32 (PyTorch's int-to-float promotion), bool is rejected. loop(tag, out, in) fills the
// contiguous `out` from `in` of a floating dtype (tag's type).
template <typename Loop>
Tensor FloatingActivation(const char* op, const Tensor& x, Loop loop) {
  if (x.dtype() == kBool) {
    ThrowError(op, ": not supported for bool tensors (shape ", ShapeToString(x.sizes()),
               "); convert with to(kFloat32) first");
  }
  Tensor converted;
  const Tensor& in = IsFloating(x.dtype()) ? x : (converted = kernels::to(x, kDefaultFloat));
  Tensor out = EmptyContiguous(in.sizes(), in.dtype());
  VisitDType(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) loop(tag, out, in);
  });
  return out;
}

// Strips runs activation_math's `fn` over every element of x (StripLoop: one call per
// thread's contiguous range, strided data a block at a time). Its results depend on each
// element alone, so every layout and thread count gives the same bits, which are also what
// jit's fused steps compute (they call the same function on their chunks).
Tensor Strips(const char* op, const Tensor& x, activation::Fn fn,
              activation::Params params = {}) {
  return FloatingActivation(op, x, [fn, &params](auto tag, const Tensor& out, const Tensor& in) {
    using T = typename decltype(tag)::type;
    internal::StripLoop<T>(out, in, [fn, &params](const T* a, T* o, int64_t n) {
      activation::Apply(fn, params, a, o, n);
    });
  });
}

}  // namespace

// The arithmetic of each function is kernels/activation_math.h's.
using activation::Fn;

Tensor gelu(const Tensor& x, bool tanh_approximation) {
  return Strips("gelu", x, Fn::kGelu, {tanh_approximation ? 1.0 : 0.0});
}
Tensor silu(const Tensor& x) { return Strips("silu", x, Fn::kSilu); }
Tensor mish(const Tensor& x) { return Strips("mish", x, Fn::kMish); }
Tensor softplus(const Tensor& x, double beta, double threshold) {
  return Strips("softplus", x, Fn::kSoftplus, {beta, threshold});
}
Tensor elu(const Tensor& x, double alpha) { return Strips("elu", x, Fn::kElu, {alpha}); }
Tensor selu(const Tensor& x) { return Strips("selu", x, Fn::kSelu); }
Tensor celu(const Tensor& x, double alpha) {
  if (alpha == 0.0) ThrowError("celu: alpha cannot be 0 (it divides x)");
  return Strips("celu", x, Fn::kCelu, {alpha});
}
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return Strips("leaky_relu", x, Fn::kLeakyRelu, {negative_slope});
}
Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  return Strips("hardtanh", x, Fn::kHardtanh, {min_val, max_val});
}
Tensor hardswish(const Tensor& x) { return Strips("hardswish", x, Fn::kHardswish); }
Tensor hardsigmoid(const Tensor& x) { return Strips("hardsigmoid", x, Fn::kHardsigmoid); }
Tensor logsigmoid(const Tensor& x) { return Strips("logsigmoid", x, Fn::kLogsigmoid); }
Tensor softsign(const Tensor& x) { return Strips("softsign", x, Fn::kSoftsign); }

Tensor erf(const Tensor& x) { return internal::VecMathUnary("erf", x, vecmath::Fn::kErf); }
Tensor erfc(const Tensor& x) { return internal::VecMathUnary("erfc", x, vecmath::Fn::kErfc); }
Tensor erfinv(const Tensor& x) { return Strips("erfinv", x, Fn::kErfinv); }
Tensor lgamma(const Tensor& x) {
  return internal::VecMathUnary("lgamma", x, vecmath::Fn::kLgamma);
}
Tensor digamma(const Tensor& x) { return Strips("digamma", x, Fn::kDigamma); }
Tensor polygamma(int64_t n, const Tensor& x) {
  if (n < 0) {
    ThrowError("polygamma: n must be a non-negative integer, got n = ", n);
  }
  activation::Params params;
  params.n = n;
  return Strips("polygamma", x, Fn::kPolygamma, params);
}

}  // namespace ft::kernels

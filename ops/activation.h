// ft/ops/activation.h
//
// Activations: the public ops, with torch.nn.functional's (and torch.special's) names,
// argument order and defaults. Each dispatches (dispatch.h) to its base kernel in
// kernels/activation.h, so every op works under every transform (vmap, grad, jvp,
// jacrev, jacfwd, hessian, functionalize, jit) to any order.
//
// All are elementwise: the result has x's shape, is a new contiguous tensor, and keeps x's
// dtype for float32 and float64; int64 computes in float32 (like exp); bool inputs throw an
// ft::Error naming the op. NaN propagates.
//
// Derivatives at the kinks follow PyTorch: leaky_relu and elu/selu/celu take the negative
// side's slope at x == 0; hardtanh's derivative is 0 at min_val and max_val; hardsigmoid's is 0
// at -3 and 3; hardswish's is x/3 + 1/2 on [-3, 3]; softplus's is 1 past the threshold.
//
// Example:
//   Tensor h = ft::gelu(ft::linear(x, w, b));            // exact gelu
//   Tensor g = ft::gelu(x, "tanh");                      // tanh approximation
//   Tensor y = ft::softplus(x, /*beta=*/2.0);
//   Tensor t = ft::polygamma(1, x);                      // trigamma
#ifndef FT_OPS_ACTIVATION_H_
#define FT_OPS_ACTIVATION_H_

#include <cstdint>
#include <string_view>

#include "tensor/tensor.h"

namespace ft {

class OpRegistry;

// gelu: x * Phi(x), Phi the standard normal CDF; approximate "tanh" computes
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). Any other string throws. Under transforms
// it is the op "gelu" with a bool argument (true for "tanh").
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
// silu (swish): x * sigmoid(x).
Tensor silu(const Tensor& x);
// mish: x * tanh(softplus(x)).
Tensor mish(const Tensor& x);
// softplus: log(1 + exp(beta x)) / beta, and x itself where beta x > threshold.
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
// elu: x for x > 0, alpha (exp(x) - 1) otherwise.
Tensor elu(const Tensor& x, double alpha = 1.0);
// selu: scale * elu(x, alpha) with torch's constants alpha = 1.6732632423543772,
// scale = 1.0507009873554805.
Tensor selu(const Tensor& x);
// celu: x for x > 0, alpha (exp(x / alpha) - 1) otherwise; alpha == 0 throws.
Tensor celu(const Tensor& x, double alpha = 1.0);
// leaky_relu: x for x > 0, negative_slope * x otherwise.
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
// hardtanh: min(max(x, min_val), max_val) (min_val > max_val gives max_val everywhere, as
// torch).
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
// hardswish: x * min(max(x + 3, 0), 6) / 6.
Tensor hardswish(const Tensor& x);
// hardsigmoid: min(max(x + 3, 0), 6) / 6.
Tensor hardsigmoid(const Tensor& x);
// logsigmoid: log(sigmoid(x)) = -softplus(-x), computed without overflow.
Tensor logsigmoid(const Tensor& x);
// softsign: x / (1 + |x|).
Tensor softsign(const Tensor& x);

// erf, erfc = 1 - erf (accurate where erf is near 1), and erfinv, the inverse of erf on
// [-1, 1] (+-inf at +-1, NaN outside).
Tensor erf(const Tensor& x);
Tensor erfc(const Tensor& x);
Tensor erfinv(const Tensor& x);
// lgamma: log |Gamma(x)| (+inf at 0 and the negative integers).
Tensor lgamma(const Tensor& x);
// digamma: Gamma'(x) / Gamma(x); -inf at +0, +inf at -0, NaN at the negative integers.
Tensor digamma(const Tensor& x);
// polygamma: the n-th derivative of digamma (n = 0 is digamma, n = 1 trigamma, ...), the
// torch.special.polygamma(n, x) argument order. n < 0 throws. For n >= 1 the poles (0 and the
// negative integers) give (-1)^(n+1) inf, as torch.
Tensor polygamma(int64_t n, const Tensor& x);

// RegisterActivationOps adds this family to the op table (called by RegisterAllOps).
void RegisterActivationOps(OpRegistry& registry);

}  // namespace ft

#endif  // FT_OPS_ACTIVATION_H_

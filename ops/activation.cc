#include "ops/activation.h"

#include <string>

#include "dispatch/dispatch.h"
#include "kernels/activation.h"
#include "tensor/error.h"

namespace ft {

Tensor gelu(const Tensor& x, std::string_view approximate) {
  // The op table boxes no strings, so the mode travels as a bool.
  if (approximate != "none" && approximate != "tanh") {
    ThrowError("gelu: approximate must be \"none\" or \"tanh\", got \"", std::string(approximate),
               "\" (x of shape ", ShapeToString(x.sizes()), ")");
  }
  return Call<&kernels::gelu>(x, approximate == "tanh");
}
Tensor silu(const Tensor& x) { return Call<&kernels::silu>(x); }
Tensor mish(const Tensor& x) { return Call<&kernels::mish>(x); }
Tensor softplus(const Tensor& x, double beta, double threshold) {
  return Call<&kernels::softplus>(x, beta, threshold);
}
Tensor elu(const Tensor& x, double alpha) { return Call<&kernels::elu>(x, alpha); }
Tensor selu(const Tensor& x) { return Call<&kernels::selu>(x); }
Tensor celu(const Tensor& x, double alpha) { return Call<&kernels::celu>(x, alpha); }
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return Call<&kernels::leaky_relu>(x, negative_slope);
}
Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  return Call<&kernels::hardtanh>(x, min_val, max_val);
}
Tensor hardswish(const Tensor& x) { return Call<&kernels::hardswish>(x); }
Tensor hardsigmoid(const Tensor& x) { return Call<&kernels::hardsigmoid>(x); }
Tensor logsigmoid(const Tensor& x) { return Call<&kernels::logsigmoid>(x); }
Tensor softsign(const Tensor& x) { return Call<&kernels::softsign>(x); }
Tensor erf(const Tensor& x) { return Call<&kernels::erf>(x); }
Tensor erfc(const Tensor& x) { return Call<&kernels::erfc>(x); }
Tensor erfinv(const Tensor& x) { return Call<&kernels::erfinv>(x); }
Tensor lgamma(const Tensor& x) { return Call<&kernels::lgamma>(x); }
Tensor digamma(const Tensor& x) { return Call<&kernels::digamma>(x); }
Tensor polygamma(int64_t n, const Tensor& x) { return Call<&kernels::polygamma>(n, x); }

void RegisterActivationOps(OpRegistry& r) {
  RegisterOp<&kernels::gelu>(r, "gelu", {"self", "tanh_approximation"});
  RegisterOp<&kernels::silu>(r, "silu", {"self"});
  RegisterOp<&kernels::mish>(r, "mish", {"self"});
  RegisterOp<&kernels::softplus>(r, "softplus", {"self", "beta", "threshold"});
  RegisterOp<&kernels::elu>(r, "elu", {"self", "alpha"});
  RegisterOp<&kernels::selu>(r, "selu", {"self"});
  RegisterOp<&kernels::celu>(r, "celu", {"self", "alpha"});
  RegisterOp<&kernels::leaky_relu>(r, "leaky_relu", {"self", "negative_slope"});
  RegisterOp<&kernels::hardtanh>(r, "hardtanh", {"self", "min_val", "max_val"});
  RegisterOp<&kernels::hardswish>(r, "hardswish", {"self"});
  RegisterOp<&kernels::hardsigmoid>(r, "hardsigmoid", {"self"});
  RegisterOp<&kernels::logsigmoid>(r, "logsigmoid", {"self"});
  RegisterOp<&kernels::softsign>(r, "softsign", {"self"});
  RegisterOp<&kernels::erf>(r, "erf", {"self"});
  RegisterOp<&kernels::erfc>(r, "erfc", {"self"});
  RegisterOp<&kernels::erfinv>(r, "erfinv", {"self"});
  RegisterOp<&kernels::lgamma>(r, "lgamma", {"self"});
  RegisterOp<&kernels::digamma>(r, "digamma", {"self"});
  RegisterOp<&kernels::polygamma>(r, "polygamma", {"n", "self"});
}

}  // namespace ft

#include "dispatch/linalg_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/linalg_kernels.h"

namespace ft {

Tensor matmul(const Tensor& a, const Tensor& b) { return Call<&kernels::matmul>(a, b); }
Tensor mm(const Tensor& a, const Tensor& b) { return Call<&kernels::mm>(a, b); }
Tensor bmm(const Tensor& a, const Tensor& b) { return Call<&kernels::bmm>(a, b); }
Tensor dot(const Tensor& a, const Tensor& b) { return Call<&kernels::dot>(a, b); }
Tensor outer(const Tensor& a, const Tensor& b) { return Call<&kernels::outer>(a, b); }
Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  return Call<&kernels::linear>(x, weight, bias);
}

void RegisterLinalgOps(OpRegistry& r) {
  RegisterOp<&kernels::matmul>(r, "matmul", {"self", "other"});
  RegisterOp<&kernels::mm>(r, "mm", {"self", "mat2"});
  RegisterOp<&kernels::bmm>(r, "bmm", {"self", "mat2"});
  RegisterOp<&kernels::dot>(r, "dot", {"self", "tensor"});
  RegisterOp<&kernels::outer>(r, "outer", {"self", "vec2"});
  RegisterOp<&kernels::linear>(r, "linear", {"input", "weight", "bias"});
}

}  // namespace ft

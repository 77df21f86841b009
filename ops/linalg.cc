#include "ops/linalg.h"

#include "dispatch/dispatch.h"
#include "kernels/linalg.h"

namespace ft {

Tensor matmul(const Tensor& a, const Tensor& b) { return Call<&kernels::matmul>(a, b); }
Tensor mm(const Tensor& a, const Tensor& b) { return Call<&kernels::mm>(a, b); }
Tensor bmm(const Tensor& a, const Tensor& b) { return Call<&kernels::bmm>(a, b); }
Tensor dot(const Tensor& a, const Tensor& b) { return Call<&kernels::dot>(a, b); }
Tensor outer(const Tensor& a, const Tensor& b) { return Call<&kernels::outer>(a, b); }
Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  return Call<&kernels::linear>(x, weight, bias);
}

Tensor linalg_solve(const Tensor& a, const Tensor& b) {
  return Call<&kernels::linalg_solve>(a, b);
}
Tensor linalg_solve_triangular(const Tensor& a, const Tensor& b, bool upper) {
  return Call<&kernels::linalg_solve_triangular>(a, b, upper);
}
Tensor cholesky(const Tensor& a) { return Call<&kernels::cholesky>(a); }
Tensor inverse(const Tensor& a) { return Call<&kernels::inverse>(a); }
std::tuple<Tensor, Tensor> slogdet(const Tensor& a) { return Call<&kernels::slogdet>(a); }
Tensor logdet(const Tensor& a) { return Call<&kernels::logdet>(a); }

void RegisterLinalgOps(OpRegistry& r) {
  RegisterOp<&kernels::matmul>(r, "matmul", {"self", "other"});
  RegisterOp<&kernels::mm>(r, "mm", {"self", "mat2"});
  RegisterOp<&kernels::bmm>(r, "bmm", {"self", "mat2"});
  RegisterOp<&kernels::dot>(r, "dot", {"self", "tensor"});
  RegisterOp<&kernels::outer>(r, "outer", {"self", "vec2"});
  RegisterOp<&kernels::linear>(r, "linear", {"input", "weight", "bias"});
  RegisterOp<&kernels::linalg_solve>(r, "linalg_solve", {"A", "B"});
  RegisterOp<&kernels::linalg_solve_triangular>(r, "linalg_solve_triangular",
                                                {"A", "B", "upper"});
  RegisterOp<&kernels::cholesky>(r, "cholesky", {"A"});
  RegisterOp<&kernels::inverse>(r, "inverse", {"A"});
  RegisterOp<&kernels::slogdet>(r, "slogdet", {"A"});
  RegisterOp<&kernels::logdet>(r, "logdet", {"A"});
}

}  // namespace ft

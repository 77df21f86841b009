#include "ops/reduction.h"

#include "dispatch/dispatch.h"
#include "kernels/reduction.h"

namespace ft {

Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return Call<&kernels::sum>(x, dims, keepdim);
}
Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return Call<&kernels::mean>(x, dims, keepdim);
}
Tensor prod(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return Call<&kernels::prod>(x, dims, keepdim);
}
Tensor amax(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return Call<&kernels::amax>(x, dims, keepdim);
}
Tensor amin(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return Call<&kernels::amin>(x, dims, keepdim);
}
Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return Call<&kernels::logsumexp>(x, dims, keepdim);
}
Tensor var(const Tensor& x, IntArrayRef dims, int64_t correction, bool keepdim) {
  return Call<&kernels::var>(x, dims, correction, keepdim);
}
Tensor std(const Tensor& x, IntArrayRef dims, int64_t correction, bool keepdim) {
  return Call<&kernels::std>(x, dims, correction, keepdim);
}
Tensor norm(const Tensor& x, double p, IntArrayRef dims, bool keepdim) {
  return Call<&kernels::norm>(x, p, dims, keepdim);
}
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return Call<&kernels::argmax>(x, dim, keepdim);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return Call<&kernels::argmin>(x, dim, keepdim);
}
Tensor softmax(const Tensor& x, int64_t dim) { return Call<&kernels::softmax>(x, dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return Call<&kernels::log_softmax>(x, dim); }
Tensor cumsum(const Tensor& x, int64_t dim) { return Call<&kernels::cumsum>(x, dim); }
Tensor cumprod(const Tensor& x, int64_t dim) { return Call<&kernels::cumprod>(x, dim); }
Tensor logcumsumexp(const Tensor& x, int64_t dim) {
  return Call<&kernels::logcumsumexp>(x, dim);
}
Tensor linear_recurrence(const Tensor& a, const Tensor& b, int64_t dim) {
  return Call<&kernels::linear_recurrence>(a, b, dim);
}
Tensor sum_to_size(const Tensor& x, IntArrayRef size) {
  return Call<&kernels::sum_to_size>(x, size);
}

void RegisterReductionOps(OpRegistry& r) {
  RegisterOp<&kernels::sum>(r, "sum", {"self", "dim", "keepdim"});
  RegisterOp<&kernels::mean>(r, "mean", {"self", "dim", "keepdim"});
  RegisterOp<&kernels::prod>(r, "prod", {"self", "dim", "keepdim"});
  RegisterOp<&kernels::amax>(r, "amax", {"self", "dim", "keepdim"});
  RegisterOp<&kernels::amin>(r, "amin", {"self", "dim", "keepdim"});
  RegisterOp<&kernels::logsumexp>(r, "logsumexp", {"self", "dim", "keepdim"});
  RegisterOp<&kernels::var>(r, "var", {"self", "dim", "correction", "keepdim"});
  RegisterOp<&kernels::std>(r, "std", {"self", "dim", "correction", "keepdim"});
  RegisterOp<&kernels::norm>(r, "norm", {"self", "p", "dim", "keepdim"});
  RegisterOp<&kernels::argmax>(r, "argmax", {"self", "dim", "keepdim"});
  RegisterOp<&kernels::argmin>(r, "argmin", {"self", "dim", "keepdim"});
  RegisterOp<&kernels::softmax>(r, "softmax", {"self", "dim"});
  RegisterOp<&kernels::log_softmax>(r, "log_softmax", {"self", "dim"});
  RegisterOp<&kernels::cumsum>(r, "cumsum", {"self", "dim"});
  RegisterOp<&kernels::cumprod>(r, "cumprod", {"self", "dim"});
  RegisterOp<&kernels::logcumsumexp>(r, "logcumsumexp", {"self", "dim"});
  RegisterOp<&kernels::linear_recurrence>(r, "linear_recurrence", {"a", "b", "dim"});
  RegisterOp<&kernels::sum_to_size>(r, "sum_to_size", {"self", "size"});
}

}  // namespace ft

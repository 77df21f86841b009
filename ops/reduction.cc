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
Tensor logcumsumexp(const Tensor& x, int64_t dim) { return Call<&kernels::logcumsumexp>(x, dim); }
Tensor linear_recurrence(const Tensor& a, const Tensor& b, int64_t dim) {
  return Call<&kernels::linear_recurrence>(a, b, dim);
}
Tensor sum_to_size(const Tensor& x, IntArrayRef size) {
  return Call<&kernels::sum_to_size>(x, size);
}

void RegisterReductionOps(OpRegistry& r) {
  // The dtypes each kernel is written and tested for (kernels/reduction.h lists the rules).
  constexpr DTypeSet kReal = kEveryDType - DTypeSet{kComplex64, kComplex128};
  constexpr DTypeSet kIntegral = {kUInt8, kInt8, kInt16, kInt32, kInt64, kBool};
  RegisterOp<&kernels::sum>(r, "sum", {"self", "dim", "keepdim"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::mean>(r, "mean", {"self", "dim", "keepdim"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::prod>(r, "prod", {"self", "dim", "keepdim"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::amax>(r, "amax", {"self", "dim", "keepdim"}, {.dtypes = kReal});
  RegisterOp<&kernels::amin>(r, "amin", {"self", "dim", "keepdim"}, {.dtypes = kReal});
  RegisterOp<&kernels::logsumexp>(r, "logsumexp", {"self", "dim", "keepdim"},
                                  {.dtypes = kOriginalDTypes | kIntegral});
  RegisterOp<&kernels::var>(r, "var", {"self", "dim", "correction", "keepdim"});
  RegisterOp<&kernels::std>(r, "std", {"self", "dim", "correction", "keepdim"});
  RegisterOp<&kernels::norm>(r, "norm", {"self", "p", "dim", "keepdim"});
  RegisterOp<&kernels::argmax>(r, "argmax", {"self", "dim", "keepdim"}, {.dtypes = kReal});
  RegisterOp<&kernels::argmin>(r, "argmin", {"self", "dim", "keepdim"}, {.dtypes = kReal});
  RegisterOp<&kernels::softmax>(r, "softmax", {"self", "dim"});
  RegisterOp<&kernels::log_softmax>(r, "log_softmax", {"self", "dim"});
  RegisterOp<&kernels::cumsum>(r, "cumsum", {"self", "dim"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::cumprod>(r, "cumprod", {"self", "dim"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::logcumsumexp>(r, "logcumsumexp", {"self", "dim"});
  RegisterOp<&kernels::linear_recurrence>(r, "linear_recurrence", {"a", "b", "dim"});
  RegisterOp<&kernels::sum_to_size>(r, "sum_to_size", {"self", "size"}, {.dtypes = kEveryDType});
}

}  // namespace ft

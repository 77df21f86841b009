#include "ops/random.h"

#include "dispatch/dispatch.h"
#include "kernels/random.h"

namespace ft {

Tensor zeros_like(const Tensor& x) { return Call<&kernels::zeros_like>(x); }
Tensor zeros_like(const Tensor& x, DType dtype) { return full_like(x, 0, dtype); }
Tensor ones_like(const Tensor& x) { return Call<&kernels::ones_like>(x); }
Tensor ones_like(const Tensor& x, DType dtype) { return full_like(x, 1, dtype); }
Tensor full_like(const Tensor& x, Scalar value) { return Call<&kernels::full_like>(x, value); }
Tensor full_like(const Tensor& x, Scalar value, DType dtype) {
  return Call<&kernels::full_like_dtype>(x, value, dtype);
}

Tensor rand_like(const Tensor& x, Generator* gen) { return Call<&kernels::rand_like>(x, gen); }
Tensor randn_like(const Tensor& x, Generator* gen) { return Call<&kernels::randn_like>(x, gen); }
Tensor bernoulli(const Tensor& p, Generator* gen) { return Call<&kernels::bernoulli>(p, gen); }
Tensor dropout(const Tensor& x, double p, bool train, Generator* gen) {
  return Call<&kernels::dropout>(x, p, train, gen);
}
Tensor randint(int64_t low, int64_t high, IntArrayRef shape, Generator* gen) {
  return Call<&kernels::randint>(low, high, shape, gen);
}
Tensor randint(int64_t high, IntArrayRef shape, Generator* gen) {
  return randint(0, high, shape, gen);
}

namespace {
// Spelled out in full: `{.random = true}` alone trips GCC 12's -Wmissing-field-initializers
// (mutated_arg has no default member initializer).
constexpr OpOptions kRandom{.mutated_arg = std::nullopt, .random = true};
// rand_like and randn_like also draw float16, bfloat16 and complex values.
constexpr OpOptions kRandomEveryDType{
    .mutated_arg = std::nullopt, .random = true, .dtypes = kEveryDType};
constexpr OpOptions kEveryDTypeOp{.mutated_arg = std::nullopt, .dtypes = kEveryDType};
}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  RegisterOp<&kernels::zeros_like>(r, "zeros_like", {"self"}, kEveryDTypeOp);
  RegisterOp<&kernels::ones_like>(r, "ones_like", {"self"}, kEveryDTypeOp);
  RegisterOp<&kernels::full_like>(r, "full_like", {"self", "fill_value"}, kEveryDTypeOp);
  RegisterOp<&kernels::full_like_dtype>(r, "full_like_dtype", {"self", "fill_value", "dtype"},
                                        kEveryDTypeOp);
  RegisterOp<&kernels::rand_like>(r, "rand_like", {"self", "generator"}, kRandomEveryDType);
  RegisterOp<&kernels::randn_like>(r, "randn_like", {"self", "generator"}, kRandomEveryDType);
  RegisterOp<&kernels::bernoulli>(r, "bernoulli", {"self", "generator"}, kRandom);
  RegisterOp<&kernels::dropout>(r, "dropout", {"self", "p", "train", "generator"}, kRandom);
  RegisterOp<&kernels::randint>(r, "randint", {"low", "high", "size", "generator"}, kRandom);
}

}  // namespace ft

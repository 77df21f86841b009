#include "ops/unary.h"

#include "dispatch/dispatch.h"
#include "kernels/unary.h"

namespace ft {

Tensor neg(const Tensor& x) { return Call<&kernels::neg>(x); }
Tensor abs(const Tensor& x) { return Call<&kernels::abs>(x); }
Tensor sign(const Tensor& x) { return Call<&kernels::sign>(x); }
Tensor exp(const Tensor& x) { return Call<&kernels::exp>(x); }
Tensor expm1(const Tensor& x) { return Call<&kernels::expm1>(x); }
Tensor log(const Tensor& x) { return Call<&kernels::log>(x); }
Tensor log1p(const Tensor& x) { return Call<&kernels::log1p>(x); }
Tensor sin(const Tensor& x) { return Call<&kernels::sin>(x); }
Tensor cos(const Tensor& x) { return Call<&kernels::cos>(x); }
Tensor tan(const Tensor& x) { return Call<&kernels::tan>(x); }
Tensor tanh(const Tensor& x) { return Call<&kernels::tanh>(x); }
Tensor sigmoid(const Tensor& x) { return Call<&kernels::sigmoid>(x); }
Tensor relu(const Tensor& x) { return Call<&kernels::relu>(x); }
Tensor sqrt(const Tensor& x) { return Call<&kernels::sqrt>(x); }
Tensor rsqrt(const Tensor& x) { return Call<&kernels::rsqrt>(x); }
Tensor square(const Tensor& x) { return Call<&kernels::square>(x); }
Tensor reciprocal(const Tensor& x) { return Call<&kernels::reciprocal>(x); }
Tensor floor(const Tensor& x) { return Call<&kernels::floor>(x); }
Tensor round(const Tensor& x) { return Call<&kernels::round>(x); }
Tensor exp_(const Tensor& self) { return Call<&kernels::exp_>(self); }

Tensor operator-(const Tensor& x) { return neg(x); }

// Every unary op is written for all twelve dtypes (kernels/unary.h gives the rules); the
// kernels refuse what torch 1.13 refuses (bool for most, complex for sign, relu, floor, round,
// expm1 and log1p) with an ft::Error naming the op.
void RegisterUnaryOps(OpRegistry& r) {
  RegisterOp<&kernels::neg>(r, "neg", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::abs>(r, "abs", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::sign>(r, "sign", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::exp>(r, "exp", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::expm1>(r, "expm1", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::log>(r, "log", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::log1p>(r, "log1p", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::sin>(r, "sin", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::cos>(r, "cos", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::tan>(r, "tan", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::tanh>(r, "tanh", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::sigmoid>(r, "sigmoid", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::relu>(r, "relu", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::sqrt>(r, "sqrt", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::rsqrt>(r, "rsqrt", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::square>(r, "square", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::reciprocal>(r, "reciprocal", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::floor>(r, "floor", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::round>(r, "round", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::exp_>(r, "exp_", {"self"}, {.mutated_arg = 0, .dtypes = kEveryDType});
}

}  // namespace ft

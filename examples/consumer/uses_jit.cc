// jit alone (@ft//interpreters/jit): trace once, replay on new values, same results as eager.
#include "check.h"
#include "interpreters/jit/jit.h"
#include "ops/ops.h"
#include "tensor/allclose.h"
#include "tensor/factories.h"

int main() {
  auto f = [](const ft::TensorList& a) {
    return ft::TensorList{ft::exp(a[0]) * 2.0 + ft::sin(a[0])};
  };
  const ft::JitFunction jf = ft::jit(f);
  const ft::Tensor x = ft::linspace(-1.0, 1.0, 7, ft::kFloat64);
  const ft::Tensor y = x * 3.0;
  CHECK_TRUE(ft::allclose(jf({x})[0], f({x})[0], 0, 0));
  CHECK_TRUE(ft::allclose(jf({y})[0], f({y})[0], 0, 0));
  CHECK_TRUE(jf.stats().traces == 1);
  return Finish("uses_jit");
}

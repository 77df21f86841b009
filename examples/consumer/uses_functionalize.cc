// functionalize alone (@ft//interpreters/functionalize): in-place code becomes pure, and the
// write to the argument reaches the caller once.
#include "check.h"
#include "interpreters/functionalize/functionalize.h"
#include "ops/ops.h"
#include "tensor/factories.h"

int main() {
  auto f = [](const ft::TensorList& a) {
    ft::Tensor x = a[0];
    ft::mul_(ft::narrow(x, 0, 0, 2), 10.0);  // scale the first two elements in place
    return ft::TensorList{ft::sum(x)};
  };
  ft::Tensor x = ft::tensor({1.0, 2.0, 3.0});
  const ft::Tensor total = ft::functionalize(ft::TensorListFn(f))({x})[0];
  CHECK_NEAR(total.item<double>(), 33.0, 1e-12);
  CHECK_NEAR(x.to_vector<double>()[1], 20.0, 1e-12);  // the caller sees the write
  return Finish("uses_functionalize");
}

// Everything through the umbrella header: hessian of a quadratic, vmap(grad) of it.
#include "check.h"
#include "ft.h"

int main() {
  // f(x) = 0.5 x^T A x with A symmetric: grad = A x, hessian = A.
  const ft::Tensor a = ft::tensor({2.0, 1.0, 1.0, 3.0}, {2, 2});
  auto f = [a](const ft::TensorList& in) {
    return ft::sum(in[0] * ft::matmul(a, in[0])) * 0.5;
  };
  const ft::Tensor x = ft::tensor({1.0, -2.0});
  const ft::Tensor h = ft::hessian(f)({x})[0];
  CHECK_NEAR(h.to_vector<double>()[0], 2.0, 1e-12);
  CHECK_NEAR(h.to_vector<double>()[1], 1.0, 1e-12);
  CHECK_NEAR(h.to_vector<double>()[3], 3.0, 1e-12);
  // Per-example gradients of a batch of two points: rows A x_i.
  const ft::Tensor batch = ft::tensor({1.0, 0.0, 0.0, 1.0}, {2, 2});
  const ft::Tensor g = ft::vmap(ft::grad(ft::ScalarFn(f)))({batch})[0];
  CHECK_TRUE(ft::allclose(g, a));
  return Finish("uses_ft");
}

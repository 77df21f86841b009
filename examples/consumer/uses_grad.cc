// grad, vjp and jacrev alone (@ft//interpreters/grad), against closed forms.
#include <cmath>

#include "check.h"
#include "interpreters/grad/grad.h"
#include "ops/ops.h"
#include "tensor/factories.h"

int main() {
  // d/dx sum(sin(x) * x) = cos(x) x + sin(x).
  const ft::Tensor x = ft::tensor({0.3, -1.2, 2.0});
  const ft::Tensor g =
      ft::grad(ft::TensorFn([](const ft::Tensor& t) { return ft::sum(ft::sin(t) * t); }))(x);
  const std::vector<double> xv = x.to_vector<double>(), gv = g.to_vector<double>();
  for (size_t i = 0; i < xv.size(); ++i) {
    CHECK_NEAR(gv[i], std::cos(xv[i]) * xv[i] + std::sin(xv[i]), 1e-12);
  }
  // The Jacobian of exp is diagonal, exp(x) on it.
  const ft::Tensor j = ft::jacrev([](const ft::TensorList& a) { return ft::exp(a[0]); })({x})[0];
  CHECK_NEAR(j.to_vector<double>()[4], std::exp(-1.2), 1e-12);
  CHECK_NEAR(j.to_vector<double>()[1], 0.0, 0.0);
  return Finish("uses_grad");
}

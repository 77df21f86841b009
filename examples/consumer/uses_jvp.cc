// jvp and jacfwd alone (@ft//interpreters/jvp): forward mode against closed forms.
#include <cmath>

#include "check.h"
#include "interpreters/jvp/jvp.h"
#include "ops/ops.h"
#include "tensor/factories.h"

int main() {
  const ft::Tensor x = ft::tensor({0.5, 1.5});
  const ft::Tensor t = ft::tensor({1.0, 2.0});
  // d tanh = (1 - tanh^2) dt.
  ft::JvpResult r = ft::jvp([](const ft::TensorList& a) { return ft::TensorList{ft::tanh(a[0])}; },
                            {x}, {t});
  const std::vector<double> out = r.tangents[0].to_vector<double>();
  CHECK_NEAR(out[0], 1.0 * (1 - std::pow(std::tanh(0.5), 2)), 1e-12);
  CHECK_NEAR(out[1], 2.0 * (1 - std::pow(std::tanh(1.5), 2)), 1e-12);
  const ft::Tensor j = ft::jacfwd([](const ft::TensorList& a) { return ft::square(a[0]); })({x})[0];
  CHECK_NEAR(j.to_vector<double>()[3], 3.0, 1e-12);
  return Finish("uses_jvp");
}

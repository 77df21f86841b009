// The op set alone (@ft//ops, which brings the op table @ft//dispatch): eager ops,
// broadcasting, views and reductions.
#include <cmath>

#include "check.h"
#include "ops/ops.h"
#include "tensor/factories.h"

int main() {
  const ft::Tensor m = ft::reshape(ft::arange(6.0), {2, 3});
  const ft::Tensor row_sums = ft::sum(m, {1});
  CHECK_NEAR(row_sums.to_vector<double>()[0], 3.0, 1e-12);
  CHECK_NEAR(row_sums.to_vector<double>()[1], 12.0, 1e-12);
  const ft::Tensor gram = ft::matmul(m, ft::transpose(m, 0, 1));
  CHECK_NEAR(gram.to_vector<double>()[3], 9.0 + 16.0 + 25.0, 1e-12);
  const ft::Tensor s = ft::sin(ft::tensor({0.5}));
  CHECK_NEAR(s.to_vector<double>()[0], std::sin(0.5), 1e-15);
  return Finish("uses_ops");
}

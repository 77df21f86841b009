// Kernel families alone (@ft//kernels:linalg, @ft//kernels:unary) with the CPU backend's
// settings (@ft//cpu): dense computation without the op table, as a project that brings its
// own dispatch would use it.
#include <cmath>

#include "check.h"
#include "cpu/cpu_capability.h"
#include "cpu/parallel.h"
#include "kernels/linalg.h"
#include "kernels/unary.h"
#include "tensor/factories.h"

int main() {
  ft::SetNumThreads(1);
  const ft::Tensor m = ft::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  const ft::Tensor v = ft::tensor({1.0, 0.5, -1.0});
  const ft::Tensor mv = ft::kernels::matmul(m, v);  // [1 + 1 - 3, 4 + 2.5 - 6]
  CHECK_NEAR(mv.to_vector<double>()[0], -1.0, 1e-12);
  CHECK_NEAR(mv.to_vector<double>()[1], 0.5, 1e-12);
  const ft::Tensor s = ft::kernels::sin(v);
  CHECK_NEAR(s.to_vector<double>()[1], std::sin(0.5), 1e-15);
  CHECK_TRUE(!ft::CpuCapabilityName(ft::ActiveCpuCapability()).empty());
  return Finish("uses_kernels");
}

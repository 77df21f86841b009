// The tensor library alone (@ft//tensor): factories, views sharing storage, printing.
#include <sstream>

#include "check.h"
#include "tensor/factories.h"
#include "tensor/print.h"
#include "tensor/tensor.h"

int main() {
  ft::Tensor t = ft::arange(6.0);
  CHECK_TRUE(t.numel() == 6);
  CHECK_NEAR(t.to_vector<double>()[5], 5.0, 0.0);
  ft::Tensor z = ft::zeros({2, 3});
  CHECK_TRUE(z.dim() == 2 && z.sizes()[1] == 3);
  std::ostringstream out;
  out << ft::eye(2);
  CHECK_TRUE(out.str().find("tensor(") == 0);
  return Finish("uses_tensor");
}

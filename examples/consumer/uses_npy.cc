// NumPy .npy files alone (@ft//interop:npy): a round trip of float64 and int64 arrays.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"
#include "interop/npy.h"
#include "tensor/factories.h"

int main() {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string base = std::string(dir != nullptr ? dir : "/tmp") + "/uses_npy";
  const ft::Tensor x = ft::tensor(std::vector<double>{1.5, -2.0, 0.25, 8.0, 0.0, 3.0}, {2, 3});
  ft::SaveNpy(base + "_f8.npy", x);
  const ft::Tensor back = ft::LoadNpy(base + "_f8.npy");
  CHECK_TRUE(back.sizes() == x.sizes());
  CHECK_TRUE(back.to_vector<double>() == x.to_vector<double>());
  const ft::Tensor i = ft::tensor(std::vector<int64_t>{7, -1, 0});
  ft::SaveNpy(base + "_i8.npy", i);
  CHECK_TRUE(ft::LoadNpy(base + "_i8.npy").to_vector<int64_t>() == i.to_vector<int64_t>());
  return Finish("uses_npy");
}

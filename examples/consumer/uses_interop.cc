// The interop umbrella alone (@ft//interop, both libraries): zero-copy views
// both ways, and a .npy round trip.
#include <cstdlib>
#include <string>

#include "Eigen/Core"
#include "check.h"
#include "interop/eigen.h"
#include "interop/npy.h"
#include "tensor/factories.h"

int main() {
  // An Eigen view of an ft tensor: a write through it is seen by the tensor.
  ft::Tensor t = ft::zeros({2, 3});
  auto view = ft::MapRowMajor<float>(t);
  view(1, 2) = 5.0f;
  CHECK_NEAR(t.to_vector<float>()[5], 5.0, 0);
  // An ft tensor over an Eigen matrix (column-major): the caller keeps `e` alive.
  Eigen::MatrixXd e = Eigen::MatrixXd::Zero(2, 2);
  e(0, 1) = 7.0;
  const ft::Tensor borrowed = ft::BorrowEigen(e);
  CHECK_NEAR(borrowed.to_vector<double>()[1], 7.0, 0);  // element [0, 1]
  e(1, 0) = 3.0;
  CHECK_NEAR(borrowed.to_vector<double>()[2], 3.0, 0);  // no copy: the change shows
  // .npy: save and load back.
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/uses_interop.npy";
  ft::SaveNpy(path, borrowed);
  const ft::Tensor loaded = ft::LoadNpy(path);
  CHECK_TRUE(loaded.sizes() == borrowed.sizes());
  CHECK_NEAR(loaded.to_vector<double>()[1], 7.0, 0);
  CHECK_NEAR(loaded.to_vector<double>()[2], 3.0, 0);
  return Finish("uses_interop");
}

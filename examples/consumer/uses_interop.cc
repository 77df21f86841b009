// The interop umbrella alone (@ft//interop, both libraries together): an Eigen matrix saved
// as a NumPy .npy file through a zero-copy tensor view, loaded back, and copied into Eigen.
#include <cstdlib>
#include <string>

#include "Eigen/Core"
#include "check.h"
#include "interop/eigen.h"
#include "interop/npy.h"

int main() {
  Eigen::MatrixXf weights(2, 3);  // column-major, as Eigen's default
  weights << 1.5f, -2.0f, 0.25f, 4.0f, 0.0f, -8.5f;
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/uses_interop.npy";
  ft::SaveNpy(path, ft::BorrowEigen(weights));  // no copy on the way out
  const Eigen::MatrixXf back = ft::ToEigen<Eigen::MatrixXf>(ft::LoadNpy(path));
  CHECK_TRUE(back.rows() == 2 && back.cols() == 3);
  CHECK_NEAR((back - weights).cwiseAbs().maxCoeff(), 0.0, 0);
  return Finish("uses_interop");
}

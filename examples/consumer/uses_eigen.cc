// Eigen interop alone (@ft//interop:eigen): zero-copy views both ways.
#include "Eigen/Core"
#include "check.h"
#include "interop/eigen.h"
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
  // A copy out: independent of the tensor afterwards.
  Eigen::MatrixXd copied = ft::ToEigen<Eigen::MatrixXd>(borrowed);
  e(1, 1) = 9.0;
  CHECK_NEAR(copied(1, 1), 0.0, 0);
  return Finish("uses_eigen");
}

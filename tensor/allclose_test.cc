#include "tensor/allclose.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

TEST(Allclose, ToleranceFormula) {
  Tensor b = tensor({1.0, 100.0});
  // |a - b| <= atol + rtol * |b|: 1e-3 off at 100 passes with rtol 1e-5? 1e-3 <= 1e-8 + 1e-3.
  EXPECT_TRUE(allclose(tensor({1.0, 100.001}), b, 1e-5, 1e-8));
  EXPECT_FALSE(allclose(tensor({1.0, 100.002}), b, 1e-5, 1e-8));
  EXPECT_TRUE(allclose(tensor({1.5, 100.0}), b, 0.0, 0.5));
  EXPECT_FALSE(allclose(tensor({1.5, 100.0}), b, 0.0, 0.49));
}

TEST(Allclose, BroadcastsMixedDtypesAndLayouts) {
  EXPECT_TRUE(allclose(full({2, 3}, 2.0f), scalar_tensor(int64_t{2})));
  EXPECT_TRUE(allclose(tensor(std::vector<int64_t>{1, 2}), tensor({1.0f, 2.0f})));
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  Tensor xt = MakeDense(x.storage(), kFloat64, {2, 2}, {1, 2}, 0);  // transpose view
  EXPECT_TRUE(allclose(xt, tensor({1.0, 3.0, 2.0, 4.0}, {2, 2})));
  EXPECT_FALSE(allclose(xt, x));
  EXPECT_TRUE(allclose(zeros({0, 3}), zeros({3})));
}

TEST(Allclose, NanAndInf) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(allclose(tensor({nan}), tensor({nan})));
  EXPECT_TRUE(allclose(tensor({nan}), tensor({nan}), 1e-5, 1e-8, /*equal_nan=*/true));
  EXPECT_TRUE(allclose(tensor({inf}), tensor({inf})));
  EXPECT_FALSE(allclose(tensor({inf}), tensor({-inf})));
}

TEST(Allclose, Errors) {
  EXPECT_FT_ERROR(allclose(zeros({2}), zeros({3})), "allclose: shapes [2] and [3] cannot be broadcast");
  EXPECT_FT_ERROR(allclose(zeros({2}), zeros({2}), -1.0), "allclose: tolerances must be non-negative");
}

}  // namespace
}  // namespace ft

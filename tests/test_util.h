// ft/tests/test_util.h  (testonly)
//
// Assertions shared by every test: compare a tensor with expected values (computed
// independently: closed form, std:: math, hand-written loops), and check that a call throws
// an ft::Error whose message contains a fragment.
//
// Example:
//   EXPECT_TENSOR_NEAR(ft::sin(x), ft::tensor({0.0f, 1.0f}), 1e-6);
//   EXPECT_FT_ERROR(ft::sin(b), "sin: not supported for bool");
#ifndef FT_TESTS_TEST_UTIL_H_
#define FT_TESTS_TEST_UTIL_H_

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "cpu/cpu_capability.h"
#include "gtest/gtest.h"
#include "tensor/error.h"
#include "tensor/print.h"
#include "tensor/tensor.h"

namespace ft::testing {

// ScopedCpuCapability: sets the CPU capability kernels use (cpu/cpu_capability.h) and
// restores the previous one on scope exit, however the test leaves (a failed ASSERT too).
class ScopedCpuCapability {
 public:
  explicit ScopedCpuCapability(CpuCapability capability) : previous_(ActiveCpuCapability()) {
    SetCpuCapability(capability);
  }
  ~ScopedCpuCapability() { SetCpuCapability(previous_); }
  ScopedCpuCapability(const ScopedCpuCapability&) = delete;
  ScopedCpuCapability& operator=(const ScopedCpuCapability&) = delete;

 private:
  CpuCapability previous_;
};

// TensorNear: same shape, same dtype, and every element within atol + rtol*|expected|
// (NaNs must match NaNs).
::testing::AssertionResult TensorNear(const Tensor& actual, const Tensor& expected,
                                      double atol, double rtol = 0.0);

// TensorEqual: same shape, dtype and exactly equal values.
::testing::AssertionResult TensorEqual(const Tensor& actual, const Tensor& expected);

// ThrowsFtError: fn() throws ft::Error whose what() contains `fragment`.
::testing::AssertionResult ThrowsFtError(const std::function<void()>& fn,
                                         const std::string& fragment);

// NonContiguousCopy returns a non-contiguous tensor with t's values: they are stored every
// other element (stride 2 in the last dim), for layout tests. Rank 0 returns a clone.
Tensor NonContiguousCopy(const Tensor& t);

}  // namespace ft::testing

#define EXPECT_TENSOR_NEAR(actual, expected, atol) \
  EXPECT_TRUE(::ft::testing::TensorNear((actual), (expected), (atol)))
#define EXPECT_TENSOR_EQ(actual, expected) \
  EXPECT_TRUE(::ft::testing::TensorEqual((actual), (expected)))
#define EXPECT_FT_ERROR(stmt, fragment) \
  EXPECT_TRUE(::ft::testing::ThrowsFtError([&] { (void)(stmt); }, (fragment)))

#endif  // FT_TESTS_TEST_UTIL_H_

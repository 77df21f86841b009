// ft/tests/derivative_checks.h  (testonly)
//
// What the derivative tests share: float64 random inputs from a fixed seed, and the check
// helpers of interpreters/gradcheck/gradcheck.h as gtest assertions, so a failure prints
// which argument and element disagreed.
//
// Example:
//   EXPECT_TRUE(GradCheck([](const TensorList& a) { return tanh(a[0]); }, {Rand({3}, 1)}));
#ifndef FT_TESTS_DERIVATIVE_CHECKS_H_
#define FT_TESTS_DERIVATIVE_CHECKS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"

namespace ft::testing {

// Rand: float64, uniform in [low, high), the same for the same seed.
inline Tensor Rand(IntArrayRef shape, uint64_t seed, double low = -1.0, double high = 1.0) {
  Generator g(seed);
  return rand_like(zeros(shape, kFloat64), &g) * (high - low) + low;
}

inline ::testing::AssertionResult AsAssertion(const GradcheckResult& r) {
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

using CheckedFn = std::function<Tensor(const TensorList&)>;

// GradCheck: ft::gradcheck (grad vs central differences).
inline ::testing::AssertionResult GradCheck(const CheckedFn& f, const TensorList& args,
                                            double tol = 1e-6, std::vector<int64_t> argnums = {}) {
  return AsAssertion(gradcheck(f, args, std::move(argnums), tol, tol));
}

// JvpCheck: ft::jvpcheck (jvp vs central differences, and <J v, w> == <v, J^T w> against
// vjp). It gives each argument in `argnums` in turn a random tangent and the others zero
// ones; to reach a formula's undefined-tangent path, capture the constant in `f`.
inline ::testing::AssertionResult JvpCheck(const CheckedFn& f, const TensorList& args,
                                           double tol = 1e-6, std::vector<int64_t> argnums = {}) {
  return AsAssertion(jvpcheck(f, args, std::move(argnums), tol, tol));
}

// GradGradCheck: ft::gradgradcheck (grad of grad and jvp of grad vs differences of grad).
inline ::testing::AssertionResult GradGradCheck(const CheckedFn& f, const TensorList& args,
                                                double tol = 1e-5,
                                                std::vector<int64_t> argnums = {}) {
  return AsAssertion(gradgradcheck(f, args, std::move(argnums), tol, tol));
}

// Layouts: x, a non-contiguous copy of it and, for rank >= 1 with elements, a broadcast
// tensor of x's shape (x's first slice along dim 0 expanded: stride 0), each with a name for
// SCOPED_TRACE: the layouts a formula test runs each input in.
inline std::vector<std::pair<std::string, Tensor>> Layouts(const Tensor& x) {
  std::vector<std::pair<std::string, Tensor>> r = {{"contiguous", x},
                                                   {"non-contiguous", NonContiguousCopy(x)}};
  if (x.dim() > 0 && x.size(0) > 0) {
    r.emplace_back("broadcast", expand(narrow(x, 0, 0, 1), x.sizes()));
  }
  return r;
}

}  // namespace ft::testing

#endif  // FT_TESTS_DERIVATIVE_CHECKS_H_

// vmap of every activation (each argument mode) against the loop-and-stack oracle, at every
// in_dim, batch sizes 0, 1 and 3, nested, with non-contiguous inputs; and the ops' errors
// under vmap.
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"
#include "tests/vmap_check.h"

namespace ft {
namespace {

using testing::ArgSpec;
using testing::CheckVmap;
using testing::UniformMaker;

struct Case {
  const char* name;
  std::function<Tensor(const Tensor&)> fn;
  double low = -4.0, high = 4.0;  // wide: both sides of every kink and threshold
};

std::vector<Case> Cases() {
  return {
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, "tanh"); }},
      {"silu", [](const Tensor& x) { return silu(x); }},
      {"mish", [](const Tensor& x) { return mish(x); }},
      {"softplus", [](const Tensor& x) { return softplus(x); }},
      {"softplus_beta", [](const Tensor& x) { return softplus(x, 2.0, 3.0); }},
      {"elu", [](const Tensor& x) { return elu(x, 0.5); }},
      {"selu", [](const Tensor& x) { return selu(x); }},
      {"celu", [](const Tensor& x) { return celu(x, 2.0); }},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.2); }},
      {"hardtanh", [](const Tensor& x) { return hardtanh(x, -0.5, 2.0); }},
      {"hardswish", [](const Tensor& x) { return hardswish(x); }},
      {"hardsigmoid", [](const Tensor& x) { return hardsigmoid(x); }},
      {"logsigmoid", [](const Tensor& x) { return logsigmoid(x); }},
      {"softsign", [](const Tensor& x) { return softsign(x); }},
      {"erf", [](const Tensor& x) { return erf(x); }},
      {"erfc", [](const Tensor& x) { return erfc(x); }},
      {"erfinv", [](const Tensor& x) { return erfinv(x); }, -0.99, 0.99},
      {"lgamma", [](const Tensor& x) { return lgamma(x); }, 0.1, 5.0},
      {"digamma", [](const Tensor& x) { return digamma(x); }, -2.9, 5.0},
      {"polygamma1", [](const Tensor& x) { return polygamma(1, x); }, -2.9, 5.0},
      {"polygamma3", [](const Tensor& x) { return polygamma(3, x); }, 0.1, 5.0},
  };
}

TEST(ActivationRules, EveryOpAgainstTheLoop) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    auto f = [fn = c.fn](const TensorList& a) { return TensorList{fn(a[0])}; };
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{2, 3}, UniformMaker(c.low, c.high)}}, 1e-12));
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{}, UniformMaker(c.low, c.high)}}, 1e-12));
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{4}, UniformMaker(c.low, c.high, kFloat32)}}, 1e-6));
    // Mixed with an unbatched argument: the activation's result broadcast against it.
    auto g = [fn = c.fn](const TensorList& a) { return TensorList{fn(a[0]) * a[1]}; };
    EXPECT_TRUE(CheckVmap(
        g, {ArgSpec{{2, 3}, UniformMaker(c.low, c.high)}, ArgSpec{{3}, UniformMaker(0.5, 1.0)}},
        1e-12));
  }
}

TEST(ActivationRules, BatchSizeZeroAndOne) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const TensorFn f = c.fn;
    EXPECT_EQ(vmap(f)(zeros({0, 2, 3}, kFloat64)).sizes(), (IntArrayRef{0, 2, 3}));
    EXPECT_EQ(vmap(f, 1)(zeros({2, 0, 3}, kFloat64)).sizes(), (IntArrayRef{0, 2, 3}));
    EXPECT_EQ(vmap(f, -1, 1)(zeros({2, 0}, kFloat32)).dtype(), kFloat32);
    const Tensor one = tensor({0.25, 0.5, 0.75}, {1, 3});
    EXPECT_TENSOR_NEAR(vmap(f)(one), c.fn(one), 0.0);
  }
}

TEST(ActivationRules, ErrorsReadAsForOneExample) {
  const Tensor xs = zeros({3, 2}, kFloat64);
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) { return celu(x, 0.0); }))(xs),
                  "celu: alpha cannot be 0");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) { return polygamma(-2, x); }))(xs),
                  "polygamma: n must be a non-negative integer, got n = -2");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) { return gelu(x, "erf"); }))(xs),
                  "gelu: approximate must be");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) { return silu(gt(x, 0.0)); }))(xs),
                  "silu: not supported for bool");
}

}  // namespace
}  // namespace ft

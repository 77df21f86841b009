// Every built-in op has a vjp and a jvp formula, or is marked non-differentiable: no op
// silently breaks grad, jvp or their compositions (the vjp and jvp columns of
// docs/coverage.md).
#include <string>
#include <vector>

#include "autograd/formulas.h"
#include "dispatch/dispatch.h"
#include "dispatch/operator.h"
#include "gtest/gtest.h"

namespace ft {
namespace {

TEST(Derivatives, EveryBuiltinOpHasBothFormulasOrIsNonDifferentiable) {
  autograd::RegisterDerivatives();
  OpRegistry& registry = OpRegistry::Global();
  std::vector<std::string> no_vjp, no_jvp;
  for (const Operator* op : registry.ops()) {
    if (!registry.is_builtin(*op) || autograd::IsNonDifferentiable(*op)) continue;
    if (autograd::GetVjp(*op) == nullptr) no_vjp.push_back(op->name());
    if (autograd::GetJvp(*op) == nullptr) no_jvp.push_back(op->name());
  }
  EXPECT_GT(registry.size(), 100);
  EXPECT_TRUE(no_vjp.empty()) << "ops without a vjp formula: " << ::testing::PrintToString(no_vjp);
  EXPECT_TRUE(no_jvp.empty()) << "ops without a jvp formula: " << ::testing::PrintToString(no_jvp);
}

}  // namespace
}  // namespace ft

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

// FindDerivatives (the grad level's one lookup per recorded op) tells the same as the
// accessors, op by op, including their defaults for ops the table never saw.
TEST(Derivatives, FindDerivativesAgreesWithTheAccessors) {
  autograd::RegisterDerivatives();
  int with_entry = 0;
  for (const Operator* op : OpRegistry::Global().ops()) {
    const autograd::OpDerivatives* d = autograd::FindDerivatives(*op);
    if (d == nullptr) {
      EXPECT_EQ(autograd::GetVjp(*op), nullptr) << op->name();
      EXPECT_EQ(autograd::GetJvp(*op), nullptr) << op->name();
      EXPECT_FALSE(autograd::IsNonDifferentiable(*op)) << op->name();
      EXPECT_TRUE(autograd::ReadsInputValues(*op)) << op->name();
      EXPECT_FALSE(autograd::ReadsOutputValues(*op)) << op->name();
      continue;
    }
    ++with_entry;
    EXPECT_EQ(d->vjp ? &d->vjp : nullptr, autograd::GetVjp(*op)) << op->name();
    EXPECT_EQ(d->jvp ? &d->jvp : nullptr, autograd::GetJvp(*op)) << op->name();
    EXPECT_EQ(d->nondifferentiable, autograd::IsNonDifferentiable(*op)) << op->name();
    EXPECT_EQ(d->reads_input_values, autograd::ReadsInputValues(*op)) << op->name();
    EXPECT_EQ(d->reads_output_values, autograd::ReadsOutputValues(*op)) << op->name();
    if (d->vjp) {
      EXPECT_EQ(&d->backward_name, &autograd::BackwardName(*op)) << op->name();
    }
  }
  EXPECT_GT(with_entry, 100);
  const autograd::OpDerivatives* mul = autograd::FindDerivatives(OpRegistry::Global().Get("mul"));
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->backward_name, "MulBackward");
  EXPECT_TRUE(mul->reads_input_values);
  const autograd::OpDerivatives* add = autograd::FindDerivatives(OpRegistry::Global().Get("add"));
  ASSERT_NE(add, nullptr);
  EXPECT_FALSE(add->reads_input_values);
  const autograd::OpDerivatives* exp = autograd::FindDerivatives(OpRegistry::Global().Get("exp"));
  ASSERT_NE(exp, nullptr);
  EXPECT_TRUE(exp->reads_output_values);
}

}  // namespace
}  // namespace ft

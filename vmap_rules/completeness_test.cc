// No silent slow paths: every built-in op in the registry has a real batching rule (the loop
// fallback is only for ops users register themselves, NOTE: [Loop fallback]).
#include <string>
#include <vector>

#include "dispatch/dispatch.h"
#include "dispatch/operator.h"
#include "gtest/gtest.h"
#include "vmap_rules/register.h"

namespace ft {
namespace {

TEST(VmapRules, EveryBuiltinOpHasABatchingRule) {
  RegisterAllOps();
  RegisterVmapRules();
  OpRegistry& registry = OpRegistry::Global();
  std::vector<std::string> missing;
  for (const Operator* op : registry.ops()) {
    if (registry.is_builtin(*op) && !op->has_rule(TransformType::kVmap)) {
      missing.push_back(op->name());
    }
  }
  EXPECT_GT(registry.size(), 100);
  EXPECT_TRUE(missing.empty()) << "ops without a vmap rule: " << ::testing::PrintToString(missing);
}

}  // namespace
}  // namespace ft

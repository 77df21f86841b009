// coverage: prints, from the op registry, a Markdown table with one row per op and one
// column per transform rule: `| op | base | vmap |`, each cell `yes` or `no`.
//   ./bazelw run //tools:coverage
// Later transforms add their columns here (vjp, jvp, functionalize).
#include <cstdio>

#include "dispatch/dispatch.h"
#include "dispatch/operator.h"
#include "vmap_rules/register.h"

int main() {
  ft::RegisterAllOps();
  ft::RegisterVmapRules();
  ft::OpRegistry& registry = ft::OpRegistry::Global();
  std::printf("| op | base | vmap |\n|---|---|---|\n");
  int with_vmap = 0, total = 0;
  for (const ft::Operator* op : registry.ops()) {
    if (!registry.is_builtin(*op)) continue;
    const bool vmap = op->has_rule(ft::TransformType::kVmap);
    std::printf("| %s | yes | %s |\n", op->name().c_str(), vmap ? "yes" : "no");
    ++total;
    with_vmap += vmap ? 1 : 0;
  }
  std::printf("\n%d ops: base %d/%d, vmap %d/%d\n", total, total, total, with_vmap, total);
  return 0;
}

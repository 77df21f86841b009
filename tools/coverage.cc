// coverage: prints, from the op registry, a Markdown table with one row per op and one
// column per transform rule: `| op | base | vmap | vjp | jvp | functionalize |`, each cell
// `yes` or `no` (`nondiff` in the vjp and jvp columns for an op whose outputs carry no
// gradient; in the functionalize column `inplace` for an in-place op's out-of-place rule,
// `view` for a view op's rule, `pass` for an op that passes through after its arguments sync).
//   ./bazelw run //tools:coverage
#include <cstdio>

#include "autograd/formulas.h"
#include "dispatch/dispatch.h"
#include "dispatch/operator.h"
#include "interpreters/functionalize/functionalize_interpreter.h"
#include "vmap_rules/register.h"

int main() {
  ft::RegisterAllOps();
  ft::RegisterVmapRules();
  ft::autograd::RegisterDerivatives();
  ft::RegisterFunctionalizeRules();
  ft::OpRegistry& registry = ft::OpRegistry::Global();
  std::printf("| op | base | vmap | vjp | jvp | functionalize |\n|---|---|---|---|---|---|\n");
  int with_vmap = 0, with_vjp = 0, with_jvp = 0, inplace = 0, views = 0, total = 0;
  for (const ft::Operator* op : registry.ops()) {
    if (!registry.is_builtin(*op)) continue;
    const bool vmap = op->has_rule(ft::TransformType::kVmap);
    const bool nondiff = ft::autograd::IsNonDifferentiable(*op);
    const bool vjp = ft::autograd::GetVjp(*op) != nullptr;
    const bool jvp = ft::autograd::GetJvp(*op) != nullptr;
    const bool mutates = op->schema().mutated_arg.has_value();
    const bool functionalize = op->has_rule(ft::TransformType::kFunctionalize);
    std::printf("| %s | yes | %s | %s | %s | %s |\n", op->name().c_str(), vmap ? "yes" : "no",
                nondiff ? "nondiff" : (vjp ? "yes" : "no"),
                nondiff ? "nondiff" : (jvp ? "yes" : "no"),
                functionalize ? (mutates ? "inplace" : "view") : (mutates ? "no" : "pass"));
    inplace += functionalize && mutates ? 1 : 0;
    views += functionalize && !mutates ? 1 : 0;
    ++total;
    with_vmap += vmap ? 1 : 0;
    with_vjp += (vjp || nondiff) ? 1 : 0;
    with_jvp += (jvp || nondiff) ? 1 : 0;
  }
  std::printf("\n%d ops: base %d/%d, vmap %d/%d, vjp (or nondiff) %d/%d, jvp (or nondiff) %d/%d, "
              "functionalize: %d in-place rules, %d view rules, %d pass through\n",
              total, total, total, with_vmap, total, with_vjp, total, with_jvp, total, inplace,
              views, total - inplace - views);
  return 0;
}

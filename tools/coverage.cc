// coverage: prints, from the op registry, a Markdown table with one row per op and one
// column per transform rule: `| op | base | vmap | vjp | jvp | functionalize |`, each cell
// `yes` or `no` (`nondiff` in the vjp and jvp columns for an op whose outputs carry no
// gradient; in the functionalize column `inplace` for an in-place op's out-of-place rule,
// `view` for a view op's rule, `pass` for an op that passes through after its arguments sync),
// and the dtypes its kernel is written for (DTypesCell).
//   ./bazelw run //tools:coverage
#include <cstdio>
#include <string>

#include "autograd/formulas.h"
#include "dispatch/dispatch.h"
#include "dispatch/operator.h"
#include "interpreters/functionalize/functionalize_interpreter.h"
#include "vmap_rules/register.h"

namespace {

// DTypesCell: the dtypes an op's kernel is written for (OpSchema::dtypes), short: "all" for
// the twelve, "orig" for float32, float64, int64 and bool, else "orig" and the others added
// ("orig + c64 c128").
std::string DTypesCell(ft::DTypeSet dtypes) {
  static const char* const kShort[ft::kNumDTypes] = {"f32", "f64", "i64",  "bool", "c64", "c128",
                                                     "bf16", "f16", "i8", "i16",  "i32", "u8"};
  if (dtypes == ft::kEveryDType) return "all";
  std::string cell;
  ft::DTypeSet rest = dtypes;
  if ((dtypes - ft::kOriginalDTypes) != dtypes && (ft::kOriginalDTypes - dtypes).empty()) {
    cell = "orig";
    rest = dtypes - ft::kOriginalDTypes;
    if (!rest.empty()) cell += " +";
  }
  for (int i = 0; i < ft::kNumDTypes; ++i) {
    if (!rest.contains(static_cast<ft::DType>(i))) continue;
    if (!cell.empty()) cell += " ";
    cell += kShort[i];
  }
  return cell;
}

}  // namespace

int main() {
  ft::RegisterAllOps();
  ft::RegisterVmapRules();
  ft::autograd::RegisterDerivatives();
  ft::RegisterFunctionalizeRules();
  ft::OpRegistry& registry = ft::OpRegistry::Global();
  std::printf(
      "| op | base | vmap | vjp | jvp | functionalize | dtypes |\n|---|---|---|---|---|---|---|\n");
  int with_vmap = 0, with_vjp = 0, with_jvp = 0, inplace = 0, views = 0, total = 0;
  int every_dtype = 0, beyond_original = 0;
  for (const ft::Operator* op : registry.ops()) {
    if (!registry.is_builtin(*op)) continue;
    const bool vmap = op->has_rule(ft::TransformType::kVmap);
    const bool nondiff = ft::autograd::IsNonDifferentiable(*op);
    const bool vjp = ft::autograd::GetVjp(*op) != nullptr;
    const bool jvp = ft::autograd::GetJvp(*op) != nullptr;
    const bool mutates = op->schema().mutated_arg.has_value();
    const bool functionalize = op->has_rule(ft::TransformType::kFunctionalize);
    std::printf("| %s | yes | %s | %s | %s | %s | %s |\n", op->name().c_str(),
                vmap ? "yes" : "no", nondiff ? "nondiff" : (vjp ? "yes" : "no"),
                nondiff ? "nondiff" : (jvp ? "yes" : "no"),
                functionalize ? (mutates ? "inplace" : "view") : (mutates ? "no" : "pass"),
                DTypesCell(op->schema().dtypes).c_str());
    every_dtype += op->schema().dtypes == ft::kEveryDType ? 1 : 0;
    beyond_original += op->schema().dtypes != ft::kOriginalDTypes ? 1 : 0;
    inplace += functionalize && mutates ? 1 : 0;
    views += functionalize && !mutates ? 1 : 0;
    ++total;
    with_vmap += vmap ? 1 : 0;
    with_vjp += (vjp || nondiff) ? 1 : 0;
    with_jvp += (jvp || nondiff) ? 1 : 0;
  }
  std::printf("\n%d ops: base %d/%d, vmap %d/%d, vjp (or nondiff) %d/%d, jvp (or nondiff) %d/%d, "
              "functionalize: %d in-place rules, %d view rules, %d pass through; dtypes: %d ops "
              "take all twelve, %d more than the original four\n",
              total, total, total, with_vmap, total, with_vjp, total, with_jvp, total, inplace,
              views, total - inplace - views, every_dtype, beyond_original);
  return 0;
}

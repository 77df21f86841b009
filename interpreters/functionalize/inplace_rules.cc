// The functionalize rules of the in-place ops: each one's result computed out of place, from
// the synced values one level down (FunctionalizeInterpreter::InPlace checks the sizes and
// casts to self's dtype, as the in-place kernel would). Written with public ops, so the
// levels below see ordinary out-of-place ops: vmap batches them (a buffer made inside the
// function may take batched values), grad records them.
#include <optional>

#include "dispatch/dispatch.h"
#include "interpreters/functionalize/functionalize_interpreter.h"
#include "interpreters/functionalize/rules.h"
#include "ops/ops.h"

namespace ft::functionalize_rules {
namespace {

using FunctionalOp = FunctionalizeInterpreter::FunctionalOp;

std::optional<Scalar> OptScalar(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return v.scalar();
}

// copy_: src broadcast to self's shape and converted to its dtype, in a buffer of its own (a
// view of src would change when src is later written in place).
Tensor FunctionalCopy(const ValueList& v) {
  const Tensor& self = v[0].tensor();
  const Tensor& src = v[1].tensor();
  const Shape shape = BroadcastShapes("copy_", self.sizes(), src.sizes());
  if (shape != Shape(self.sizes().begin(), self.sizes().end())) {
    ThrowError("copy_: source of shape ", ShapeToString(src.sizes()),
               " cannot be broadcast to the destination shape ", ShapeToString(self.sizes()));
  }
  const Tensor cast = src.dtype() == self.dtype() ? src : to(src, self.dtype());
  return clone(cast.sizes() == self.sizes() ? cast : expand(cast, self.sizes()));
}

struct InPlaceOp {
  const char* name;
  Tensor (*functional)(const ValueList& v);
};

const InPlaceOp kInPlaceOps[] = {
    {"add_", [](const ValueList& v) { return add(v[0].tensor(), v[1].tensor()); }},
    {"sub_", [](const ValueList& v) { return sub(v[0].tensor(), v[1].tensor()); }},
    {"mul_", [](const ValueList& v) { return mul(v[0].tensor(), v[1].tensor()); }},
    {"div_", [](const ValueList& v) { return div(v[0].tensor(), v[1].tensor()); }},
    {"clamp_",
     [](const ValueList& v) { return clamp(v[0].tensor(), OptScalar(v[1]), OptScalar(v[2])); }},
    {"exp_", [](const ValueList& v) { return exp(v[0].tensor()); }},
    {"copy_", &FunctionalCopy},
    {"fill_", [](const ValueList& v) { return full_like(v[0].tensor(), v[1].scalar()); }},
    {"zero_", [](const ValueList& v) { return zeros_like(v[0].tensor()); }},
};

}  // namespace

void RegisterInPlaceRules() {
  OpRegistry& registry = OpRegistry::Global();
  for (const InPlaceOp& entry : kInPlaceOps) {
    Operator& op = registry.Get(entry.name);
    FT_CHECK(op.schema().mutated_arg == 0);
    const FunctionalOp functional = entry.functional;
    op.SetRule(TransformType::kFunctionalize,
               [functional](Interpreter& interpreter, const Operator& op, ValueList& args) {
                 return static_cast<FunctionalizeInterpreter&>(interpreter).InPlace(op, args,
                                                                                    functional);
               });
  }
}

}  // namespace ft::functionalize_rules

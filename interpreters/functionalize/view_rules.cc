// The functionalize rules of the view ops: how a view is replayed on a new base, and how a
// value written through it goes back into its parent, out of place (NOTE: [Functional
// wrappers] in functional_tensor.h). Each inverse is written with public ops, so the levels
// below functionalize differentiate and batch it like any other op.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "dispatch/dispatch.h"
#include "interpreters/functionalize/functional_tensor.h"
#include "interpreters/functionalize/functionalize_interpreter.h"
#include "interpreters/functionalize/rules.h"
#include "ops/ops.h"

namespace ft::functionalize_rules {
namespace {

// An inverse: `parent` with the region `step` views replaced by `view`.
using Inverse = Tensor (*)(const ViewStep& step, const Tensor& parent, const Tensor& view);

std::optional<int64_t> OptInt(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_int();
}

// Views that only rearrange or relabel the parent's elements, one to one, in the same
// order (reshape and friends; contiguous and `to` when they alias): the written view,
// reshaped back, is the new parent.
Tensor ReshapeBack(const ViewStep&, const Tensor& parent, const Tensor& view) {
  if (view.sizes() == parent.sizes()) return view;
  return reshape(view, parent.sizes());
}

Tensor PermuteBack(const ViewStep& step, const Tensor& parent, const Tensor& view) {
  const Shape dims = WrapDims("permute", step.args[1].shape(), parent.dim(), false);
  Shape inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[static_cast<size_t>(dims[i])] = static_cast<int64_t>(i);
  return permute(view, inverse);
}

Tensor MovedimBack(const ViewStep& step, const Tensor&, const Tensor& view) {
  return movedim(view, step.args[2].shape(), step.args[1].shape());
}

Tensor TransposeBack(const ViewStep& step, const Tensor&, const Tensor& view) {
  return transpose(view, step.args[1].to_int(), step.args[2].to_int());
}

Tensor TBack(const ViewStep&, const Tensor&, const Tensor& view) { return t(view); }

Tensor SelectBack(const ViewStep& step, const Tensor& parent, const Tensor& view) {
  return select_scatter(parent, view, step.args[1].to_int(), step.args[2].to_int());
}

Tensor NarrowBack(const ViewStep& step, const Tensor& parent, const Tensor& view) {
  const int64_t d = WrapDim("narrow", step.args[1].to_int(), parent.dim());
  int64_t start = step.args[2].to_int();
  if (start < 0) start += parent.size(d);
  return slice_scatter(parent, view, d, start, start + step.args[3].to_int(), 1);
}

Tensor SliceBack(const ViewStep& step, const Tensor& parent, const Tensor& view) {
  return slice_scatter(parent, view, step.args[1].to_int(), OptInt(step.args[2]),
                       OptInt(step.args[3]), step.args[4].to_int());
}

Tensor DiagonalBack(const ViewStep& step, const Tensor& parent, const Tensor& view) {
  return diagonal_scatter(parent, view, step.args[1].to_int(), step.args[2].to_int(),
                          step.args[3].to_int());
}

// A piece of split / split_with_sizes / chunk (each has its dim at argument 2): the slice of
// the parent's dim where the piece starts.
Tensor PieceBack(const ViewStep& step, const Tensor& parent, const Tensor& view) {
  const int64_t d = WrapDim(step.op->name(), step.args[2].to_int(), parent.dim());
  return slice_scatter(parent, view, d, step.piece_start, step.piece_start + view.size(d), 1);
}

struct ViewOp {
  const char* name;
  Inverse inverse;
};

// Every built-in op whose result can share memory with its first argument.
constexpr ViewOp kViewOps[] = {
    {"reshape", &ReshapeBack},     {"view", &ReshapeBack},
    {"flatten", &ReshapeBack},     {"unflatten", &ReshapeBack},
    {"expand", &ReshapeBack},      {"unsqueeze", &ReshapeBack},
    {"squeeze", &ReshapeBack},     {"squeeze_dim", &ReshapeBack},
    {"squeeze_dims", &ReshapeBack}, {"contiguous", &ReshapeBack},
    {"to", &ReshapeBack},          {"movedim", &MovedimBack},
    {"permute", &PermuteBack},     {"transpose", &TransposeBack},
    {"t", &TBack},                 {"select", &SelectBack},
    {"narrow", &NarrowBack},       {"slice", &SliceBack},
    {"diagonal", &DiagonalBack},   {"split", &PieceBack},
    {"split_with_sizes", &PieceBack}, {"chunk", &PieceBack},
};

// The inverses by op id, filled once by RegisterViewRules.
absl::flat_hash_map<int, Inverse>& InverseTable() {
  static auto* table = new absl::flat_hash_map<int, Inverse>();
  return *table;
}

const Operator& ReshapeOp() {
  static const Operator* op = &OpRegistry::Global().Get("reshape");
  return *op;
}

}  // namespace

bool IsViewOp(const Operator& op) { return InverseTable().contains(op.id()); }

bool IsWritableView(const Operator& op, const Tensor& meta) {
  if (!IsViewOp(op)) return false;
  if (op.name() != "expand") return true;
  for (int64_t d = 0; d < meta.dim(); ++d) {
    if (meta.strides()[d] == 0 && meta.sizes()[d] > 1) return false;
  }
  return true;
}

std::optional<TensorList> EagerViewMetas(const Operator& op, const ValueList& values,
                                         const Tensor& meta, const ValueList& outputs) {
  const std::string& name = op.name();
  if (name == "reshape" || name == "view" || name == "flatten") {
    // A view exactly when the eager strides allow one; the sizes are the call's.
    static const Operator& view_op = OpRegistry::Global().Get("view");
    ValueList view_args = {Value(meta), Value(Shape(outputs[0].tensor().sizes().begin(),
                                                    outputs[0].tensor().sizes().end()))};
    try {
      return TensorList{view_op.CallBaseKernel(view_args)[0].tensor()};
    } catch (const Error&) {
      if (name == "view") throw;
      return std::nullopt;
    }
  }
  if (name == "contiguous") {
    if (!meta.is_contiguous()) return std::nullopt;
    return TensorList{meta};
  }
  if (name == "to") {
    if (values[1].dtype() != meta.dtype()) return std::nullopt;
    return TensorList{meta};
  }
  // Always a view: the kernel on the geometry alone.
  ValueList args = values;
  args[0] = Value(meta);
  ValueList out = op.CallBaseKernel(args);
  TensorList metas;
  for (const Value& v : out) {
    if (v.is_tensor()) {
      metas.push_back(v.tensor());
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.tensor_list()) metas.push_back(t);
    }
  }
  return metas;
}

void RegisterViewRules() {
  OpRegistry& registry = OpRegistry::Global();
  for (const ViewOp& v : kViewOps) {
    Operator& op = registry.Get(v.name);
    InverseTable()[op.id()] = v.inverse;
    op.SetRule(TransformType::kFunctionalize,
               [](Interpreter& interpreter, const Operator& op, ValueList& args) {
                 return static_cast<FunctionalizeInterpreter&>(interpreter).PassThrough(op, args);
               });
  }
}

}  // namespace ft::functionalize_rules

namespace ft {

Tensor ReplayView(const ViewStep& step, const Tensor& parent) {
  ValueList args = step.args;
  args[0] = Value(parent);
  // `view` succeeds only on layouts that allow it; a written base may have another layout
  // than the one traced, and the values are what matters one level down.
  const Operator& op = step.op->name() == "view" ? functionalize_rules::ReshapeOp() : *step.op;
  ValueList out = DispatchBoxed(op, args);
  if (step.output_index < 0) return out[0].tensor();
  return out[0].tensor_list()[static_cast<size_t>(step.output_index)];
}

Tensor WriteThroughView(const ViewStep& step, const Tensor& parent, const Tensor& new_view) {
  FT_CHECK(step.writable);
  const auto& table = functionalize_rules::InverseTable();
  auto it = table.find(step.op->id());
  FT_CHECK(it != table.end());
  return it->second(step, parent, new_view);
}

}  // namespace ft

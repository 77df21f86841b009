#include "interpreters/functionalize/functionalize_interpreter.h"

#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dispatch/dispatch.h"
#include "interpreters/functionalize/rules.h"
#include "ops/ops.h"

namespace ft {

const char* FunctionalizeRemoveName(FunctionalizeRemove remove) {
  switch (remove) {
    case FunctionalizeRemove::kMutations:
      return "mutations";
    case FunctionalizeRemove::kMutationsAndViews:
      return "mutations_and_views";
  }
  return "?";
}

FunctionalizeInterpreter::FunctionalizeInterpreter(int64_t level, FunctionalizeRemove remove)
    : Interpreter(TransformType::kFunctionalize, level), remove_(remove) {}

std::string FunctionalizeInterpreter::DebugString() const {
  return absl::StrCat("Functionalize(level=", level(), ", remove=",
                      FunctionalizeRemoveName(remove_), ")");
}

Tensor FunctionalizeInterpreter::Wrap(Tensor value) const {
  return MakeFunctional(std::move(value), level(), alive_flag(), copy_views());
}

ValueList SyncAndUnwrap(const ValueList& args, int64_t level) {
  return MapTensorArgs(args, [level](const Tensor& t) -> Tensor {
    if (const FunctionalTensorImpl* f = MaybeFunctionalAt(t, level)) return f->value();
    return t;
  });
}

ValueList FunctionalizeInterpreter::Process(const Operator& op, ValueList& args) {
  if (const TransformRule* rule = op.rule(TransformType::kFunctionalize)) {
    return (*rule)(*this, op, args);
  }
  if (const std::optional<int> mutated = op.schema().mutated_arg) {
    // A user's in-place op: functionalize cannot know its out-of-place result.
    if (MaybeFunctionalAt(args[static_cast<size_t>(*mutated)].tensor(), level()) != nullptr) {
      ThrowError("functionalize: the in-place op '", op.name(), "' has no functionalize rule ",
                 "(level ", level(), "), so its write into a tensor made inside the function ",
                 "cannot be made out of place; register one with Operator::SetRule(",
                 "TransformType::kFunctionalize, ...) or use an out-of-place op");
    }
    return InPlace(op, args, nullptr);
  }
  return PassThrough(op, args);
}

ValueList FunctionalizeInterpreter::PassThrough(const Operator& op, ValueList& args) {
  ValueList values = SyncAndUnwrap(args, level());
  // `view` of a tensor functionalize owns: whether the eager call can view is decided from
  // the eager geometry (WrapOutputs); one level down the value's layout may differ (a written
  // value is a new tensor), and reshape gives the same values.
  static const Operator& view_op = OpRegistry::Global().Get("view");
  static const Operator& reshape_op = OpRegistry::Global().Get("reshape");
  const bool owned_view = &op == &view_op && MaybeFunctionalAt(args[0].tensor(), level());
  ValueList outputs;
  {
    LowerGuard lower(this);
    outputs = DispatchBoxed(owned_view ? reshape_op : op, values);
  }
  return WrapOutputs(&op, args, values, std::move(outputs));
}

namespace {

// NotWritableReason names the step of `w`'s recipe that cannot be written through.
std::string NotWritableReason(const FunctionalTensorImpl& w) {
  for (const ViewStep& step : w.recipe()) {
    if (step.writable) continue;
    if (step.op->name() == "expand") {
      return "it is a broadcasting expand (several of its elements are one element of its "
             "base); clone() it first";
    }
    return absl::StrCat("it was made by '", step.op->name(), "', which functionalize cannot ",
                        "write through; clone() it first");
  }
  return "";
}

}  // namespace

ValueList FunctionalizeInterpreter::InPlace(const Operator& op, ValueList& args,
                                            const FunctionalOp& functional) {
  const size_t m = static_cast<size_t>(*op.schema().mutated_arg);
  const Tensor& self = args[m].tensor();
  FunctionalTensorImpl* w = MaybeFunctionalAt(self, level());
  ValueList values = SyncAndUnwrap(args, level());
  ValueList out;
  out.push_back(args[m]);  // the very object that was passed, as eagerly
  if (w == nullptr) {
    // A tensor functionalize does not own (captured from outside the function): it is
    // written in place, as it would be without functionalize.
    LowerGuard lower(this);
    DispatchBoxed(op, values);
    return out;
  }
  // Eagerly, a tensor whose elements overlap (an expanded input) refuses in-place writes.
  const Tensor& meta = w->meta();
  for (int64_t d = 0; d < meta.dim(); ++d) {
    if (meta.strides()[d] == 0 && meta.sizes()[d] > 1) {
      ThrowError(op.name(), ": cannot write in place into a tensor whose elements overlap ",
                 "(shape ", ShapeToString(meta.sizes()), ", strides ",
                 ShapeToString(meta.strides()), ": dim ", d, " is broadcast); clone() it first");
    }
  }
  if (!w->writable()) {
    ThrowError(op.name(), ": cannot write in place into this view of shape ",
               ShapeToString(self.sizes()), " under functionalize (level ", level(), "): ",
               NotWritableReason(*w));
  }
  Tensor result;
  {
    LowerGuard lower(this);
    result = functional(values);
    if (result.sizes() != self.sizes()) {
      ThrowError(op.name(), ": output with shape ", ShapeToString(self.sizes()),
                 " doesn't match the broadcast shape ", ShapeToString(result.sizes()));
    }
    if (result.dtype() != self.dtype()) {
      // As the in-place kernels: floating results do not go into integral tensors, nor
      // integral ones into bool tensors.
      const DType from = result.dtype(), into = self.dtype();
      if ((IsFloating(from) && !IsFloating(into)) || (from == kInt64 && into == kBool)) {
        ThrowError(op.name(), ": result type ", DTypeName(from), " can't be cast to the ",
                   "desired output type ", DTypeName(into), " (in-place op on a tensor of ",
                   "shape ", ShapeToString(self.sizes()), ")");
      }
      result = to(result, into);
    }
  }
  w->Write(std::move(result));
  return out;
}

ValueList FunctionalizeInterpreter::WrapOutputs(const Operator* op, const ValueList& args,
                                                const ValueList& values,
                                                ValueList outputs) const {
  // The first tensor argument: the tensor a view op views.
  size_t self_index = args.size();
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_tensor() && args[i].tensor().defined()) {
      self_index = i;
      break;
    }
  }
  const FunctionalTensorImpl* self =
      self_index < args.size() ? MaybeFunctionalAt(args[self_index].tensor(), level()) : nullptr;
  const Tensor* self_value = self != nullptr ? &values[self_index].tensor() : nullptr;
  // A view op on a tensor functionalize owns: views exactly where the eager op gives views.
  const bool view_op = op != nullptr && self != nullptr && functionalize_rules::IsViewOp(*op);
  std::optional<TensorList> metas;
  if (view_op) {
    metas = functionalize_rules::EagerViewMetas(*op, values, self->meta(), outputs);
    // contiguous and `to` return their argument itself when they view it.
    if (metas && (op->name() == "contiguous" || op->name() == "to")) {
      ValueList same;
      same.push_back(args[self_index]);
      return same;
    }
  }
  size_t next_meta = 0;
  int64_t piece_start = 0;  // where the next element of a list output starts (split, ...)
  // In kMutationsAndViews mode no value one level down shares another's memory.
  auto copied = [&](const Tensor& t) {
    LowerBelowGuard lower(level());
    return clone(t);
  };
  auto private_value = [&](const Tensor& t) {
    if (!copy_views() || self_value == nullptr ||
        !t.data_storage().is_same(self_value->data_storage())) {
      return t;
    }
    return copied(t);
  };
  auto make_view = [&](const Tensor& t, Tensor meta, int output_index) -> Tensor {
    ViewStep step;
    step.op = op;
    step.args = values;
    step.args[self_index] = Value();
    step.output_index = output_index;
    step.writable = view_op && functionalize_rules::IsWritableView(*op, meta);
    if (view_op && output_index >= 0) {
      // A piece of split, split_with_sizes or chunk: each has its dim at argument 2.
      const int64_t d = WrapDim(op->name(), values[2].to_int(), self_value->dim());
      step.piece_start = piece_start;
      piece_start += t.size(d);
    }
    auto recipe = std::make_shared<ViewRecipe>(self->recipe());
    recipe->push_back(std::move(step));
    return Tensor(std::make_shared<FunctionalTensorImpl>(*self, std::move(recipe),
                                                         private_value(t), std::move(meta)));
  };
  auto wrap = [&](const Tensor& t, int output_index) -> Tensor {
    if (!t.defined()) return t;
    if (view_op) {
      if (metas) return make_view(t, (*metas)[next_meta++], output_index);
      return Wrap(private_value(t));  // the eager op copies: a new base
    }
    // The very object an input holds: that input, as eagerly.
    for (size_t i = 0; i < args.size(); ++i) {
      if (values[i].is_tensor() && values[i].tensor().defined() &&
          values[i].tensor().is_same(t)) {
        return args[i].tensor();
      }
    }
    const Storage& storage = t.data_storage();
    for (size_t i = 0; i < values.size(); ++i) {
      const Value& v = values[i];
      if (!v.is_tensor() || !v.tensor().defined() || !v.tensor().data_storage().is_same(storage)) {
        continue;
      }
      // Memory of a tensor functionalize does not own: writes through the result must reach
      // it, as eagerly.
      const FunctionalTensorImpl* owner = MaybeFunctionalAt(args[i].tensor(), level());
      if (owner == nullptr) return t;
      // An op functionalize does not know as a view (a user's op) viewing its first
      // argument: a view it can replay but not write through.
      if (op != nullptr && owner == self) return make_view(t, MetaOf(t), output_index);
      // Anything else sharing an owned value's memory (a custom Function returning a view
      // of its input): a base of its own, so that no write ever reaches the value in place.
      return Wrap(copy_views() ? copied(t) : t);
    }
    return Wrap(t);
  };
  for (Value& v : outputs) {
    if (v.is_tensor()) {
      v = Value(wrap(v.tensor(), -1));
    } else if (v.is_tensor_list()) {
      TensorList& list = v.mutable_tensor_list();
      for (size_t k = 0; k < list.size(); ++k) list[k] = wrap(list[k], static_cast<int>(k));
    }
  }
  return outputs;
}

void RegisterFunctionalizeRules() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterAllOps();
    functionalize_rules::RegisterViewRules();
    functionalize_rules::RegisterInPlaceRules();
  });
}

}  // namespace ft

#include "interpreters/grad/grad_interpreter.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "dispatch/dispatch.h"
#include "dispatch/ops.h"
#include "tensor/block_pool.h"
#include "tensor/print.h"

namespace ft {

GradWrapperImpl::GradWrapperImpl(Tensor value, int64_t level, std::shared_ptr<const bool> alive,
                                 autograd::Edge grad_edge)
    : TensorImpl(TensorKind::kGradWrapper, value.dtype(), value.sizes(), -1),
      value_(std::move(value)),
      level_(level),
      alive_(std::move(alive)),
      grad_edge_(std::move(grad_edge)),
      recorded_version_(value_.data_version()) {}

void GradWrapperImpl::set_history(autograd::Edge grad_edge) {
  grad_edge_ = std::move(grad_edge);
  recorded_version_ = value_.data_version();
}

std::string GradWrapperImpl::WrapperRepr() const {
  std::string inner = value_.is_dense() ? ToString(value_) : value_.impl()->WrapperRepr();
  return absl::StrCat("GradTrackingTensor(lvl=", level_, ", value=", inner, ")");
}

Tensor MakeGradWrapper(Tensor value, int64_t level, std::shared_ptr<const bool> alive,
                       autograd::Edge grad_edge) {
  return Tensor(std::allocate_shared<GradWrapperImpl>(internal::PoolAllocator<GradWrapperImpl>(),
                                                      std::move(value), level, std::move(alive),
                                                      std::move(grad_edge)));
}

GradWrapperImpl* MaybeGradWrapperAt(const Tensor& t, int64_t level) {
  if (!t.defined() || t.kind() != TensorKind::kGradWrapper) return nullptr;
  auto* w = static_cast<GradWrapperImpl*>(t.impl());
  return w->level() == level ? w : nullptr;
}

GradInterpreter::GradInterpreter(int64_t level, bool prev_grad_mode)
    : Interpreter(TransformType::kGrad, level), prev_grad_mode_(prev_grad_mode) {}

namespace {

// GradientSlots: one per output tensor, TensorList outputs (split, chunk, ...) expanded
// element by element, so a formula gets one gradient per piece.
int GradientSlots(const ValueList& outputs) {
  int n = 0;
  for (const Value& v : outputs) {
    n += v.is_tensor_list() ? static_cast<int>(v.tensor_list().size()) : 1;
  }
  return n;
}

// OpNode: the backward of one op call: the op's vjp formula over the values it saved (one
// level down). Inputs that carry no gradient at the recording level are skipped
// (VjpContext::needs); missing output gradients become zeros of the output's shape.
class OpNode : public autograd::Node {
 public:
  // `d` is op's derivative entry, with a formula (checked by the caller).
  OpNode(autograd::EdgeList edges, int num_slots, const Operator& op,
         const autograd::OpDerivatives& d, ValueList inputs, ValueList outputs)
      : Node(std::move(edges), num_slots),
        op_(op),
        derivatives_(d),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)) {
    // NOTE: [Saved tensor versions] Remember the version of every dense input the formula
    // may read, so that an in-place write after the op ran (e.g. to a constant buffer made
    // inside the function) is an error at backward time, not a silently wrong gradient.
    // Ops whose formula reads only shapes are exempt (autograd::MarkInputValuesUnused).
    // Outputs likewise, for formulas that read them (exp: g * y).
    if (d.reads_output_values) {
      for (size_t i = 0; i < outputs_.size(); ++i) {
        if (outputs_[i].is_tensor() && outputs_[i].tensor().defined()) {
          output_versions_.push_back({i, outputs_[i].tensor().data_version()});
        }
      }
    }
    if (!d.reads_input_values) return;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i].is_tensor() && inputs_[i].tensor().defined()) {
        versions_.push_back({i, inputs_[i].tensor().data_version()});
      }
    }
  }

  std::string name() const override { return derivatives_.backward_name; }

  TensorList Apply(TensorList g) override {
    for (const auto& [i, version] : output_versions_) {
      const int64_t now = outputs_[i].tensor().data_version();
      if (now != version) {
        ThrowError("grad: output ", i, " of '", op_.name(), "', which its backward needs, was ",
                   "modified by an in-place operation after '", op_.name(), "' ran (its ",
                   "version went from ", version, " to ", now, "); clone it before modifying it");
      }
    }
    for (const auto& [i, version] : versions_) {
      const int64_t now = inputs_[i].tensor().data_version();
      if (now != version) {
        ThrowError("grad: argument '", op_.schema().args[i].name, "' of '", op_.name(),
                   "', which its backward needs, was modified by an in-place operation after ",
                   "'", op_.name(), "' ran (its version went from ", version, " to ", now,
                   "); clone it before modifying it");
      }
    }
    g.resize(static_cast<size_t>(num_inputs()));
    size_t slot = 0;
    for (const Value& v : outputs_) {
      if (v.is_tensor_list()) {
        for (const Tensor& t : v.tensor_list()) {
          if (!g[slot].defined()) g[slot] = zeros_like(t);
          ++slot;
        }
        continue;
      }
      if (!g[slot].defined() && v.is_tensor()) g[slot] = zeros_like(v.tensor());
      ++slot;
    }
    // An empty needs_grad means "all" (the common case: every input carries a gradient),
    // which spares building the mask.
    absl::InlinedVector<bool, 6> needs;
    const autograd::EdgeList& edges = next_edges();
    if (!std::all_of(edges.begin(), edges.end(), [](const auto& e) { return e.valid(); })) {
      for (const autograd::Edge& e : edges) needs.push_back(e.valid());
    }
    TensorList result =
        derivatives_.vjp(autograd::VjpContext{op_, inputs_, outputs_, std::move(needs)}, g);
    if (result.size() != next_edges().size()) {
      ThrowError("grad: the derivative formula of '", op_.name(), "' returned ", result.size(),
                 " gradients for ", next_edges().size(), " tensor inputs");
    }
    return result;
  }

 private:
  const Operator& op_;
  const autograd::OpDerivatives& derivatives_;  // the registry's entry: lives forever
  ValueList inputs_;
  ValueList outputs_;
  // Inline: one allocation fewer per recorded op (most ops save one or two tensors).
  absl::InlinedVector<std::pair<size_t, int64_t>, 2> versions_;  // (input index, version)
  absl::InlinedVector<std::pair<size_t, int64_t>, 1> output_versions_;  // likewise, outputs
};

}  // namespace

void CheckHistoryCurrent(const GradWrapperImpl& w, absl::string_view user) {
  if (!w.requires_grad() || !w.is_stale()) return;
  ThrowError("grad: '", user, "' got a tensor of shape ", ShapeToString(w.value().sizes()),
             " whose value was modified in place through a view or another alias ",
             "after its gradient history was recorded at level ", w.level(),
             "; in-place ops on views of tensors that carry a gradient are not ",
             "supported, clone the view first or differentiate ft::functionalize(f)");
}

// NOTE: [In-place under grad]
// An in-place op whose `self` is a wrapper of this level writes the value one level down in
// place and then rebases the wrapper's history: a new node of the op (its vjp formula is the
// out-of-place op's, over the value before the write, cloned first when the formula reads
// it) takes the wrapper's old edge as its `self` edge, and the wrapper now points at it.
// Other wrappers sharing the storage (views) keep their old history, so their value and
// history disagree: NOTE: [Stale history] turns their next use into an error instead of a
// silently wrong gradient. Refused with an ft::Error, as in functorch:
//   - a gradient-carrying value written into a tensor that is not a wrapper of this level
//     (functorch's "captured Tensor": the level cannot give that object a history);
//   - an in-place write into an input being differentiated, or a view of one: it would
//     modify the caller's tensor (PyTorch refuses leaves that require grad and their views).
ValueList GradInterpreter::Process(const Operator& op, ValueList& args) {
  // Unwrap this level: values one level down, and where each input's gradient goes.
  autograd::EdgeList edges;
  bool tracked = false;
  auto unwrap = [&](const Tensor& t) {
    if (const GradWrapperImpl* w = MaybeGradWrapperAt(t, level())) {
      CheckHistoryCurrent(*w, op.name());
      edges.push_back(w->grad_edge());
      tracked = tracked || w->requires_grad();
      return w->value();
    }
    edges.emplace_back();
    return t;
  };
  ValueList inner = MapTensorArgs(args, unwrap);
  // Ops run with grad mode off are not recorded (NOTE in autograd/grad_mode.h).
  tracked = tracked && GradMode::is_enabled();
  // A level entered with grad mode off passes its ops down with grad mode off.
  auto lower_and_run = [&](ValueList& values) {
    LowerGuard lower(this);
    std::optional<NoGradGuard> no_grad;
    if (!prev_grad_mode_) no_grad.emplace();
    return DispatchBoxed(op, values);
  };
  // One lookup for everything recording needs (formula, node name, flags).
  const autograd::OpDerivatives* derivatives = autograd::FindDerivatives(op);
  const bool nondifferentiable = derivatives != nullptr && derivatives->nondifferentiable;
  auto formula_for = [&]() -> const autograd::OpDerivatives& {
    if (derivatives == nullptr || !derivatives->vjp) {
      ThrowError("grad: no derivative formula for '", op.name(), "' (level ", level(), ")");
    }
    return *derivatives;
  };
  if (const std::optional<int> mutated = op.schema().mutated_arg) {
    const size_t m = static_cast<size_t>(*mutated);
    const Tensor& self = args[m].tensor();
    GradWrapperImpl* w = MaybeGradWrapperAt(self, level());
    ValueList out;
    out.push_back(args[m]);  // the very object that was passed
    if (!tracked || nondifferentiable) {
      lower_and_run(inner);
      if (w != nullptr) w->set_history(w->grad_edge());  // a constant change: no new history
      return out;
    }
    if (w == nullptr) {
      ThrowError("grad: in-place op '", op.name(), "' would write a value that carries a ",
                 "gradient at level ", level(), " into a tensor that is not tracked by this ",
                 "transform (its argument 'self' of shape ", ShapeToString(self.sizes()),
                 " was captured from outside the function, or made by a factory inside it), ",
                 "so it would mutate a captured Tensor. This is not supported; pass the tensor ",
                 "to the function as an input, use the out-of-place op, or differentiate "
                 "ft::functionalize(f), which makes the write out of place");
    }
    if (AliasesInput(w->value())) {
      ThrowError("grad: in-place op '", op.name(), "' on an input being differentiated or a ",
                 "view of one (shape ", ShapeToString(self.sizes()), ", level ", level(),
                 ") would modify the caller's tensor; clone it first (y = clone(x)) or use the ",
                 "out-of-place op");
    }
    const autograd::OpDerivatives& d = formula_for();
    ValueList saved = inner;
    if (d.reads_input_values) {
      LowerGuard lower(this);
      saved[m] = Value(clone(w->value()));
    }
    ValueList outputs = lower_and_run(inner);
    auto node = std::allocate_shared<OpNode>(internal::PoolAllocator<OpNode>(), std::move(edges),
                                             1, op, d, std::move(saved), std::move(outputs));
    w->set_history(autograd::Edge{node, 0});
    return out;
  }
  ValueList outputs = lower_and_run(inner);
  if (!tracked || nondifferentiable) return outputs;  // constants here
  const autograd::OpDerivatives& d = formula_for();
  const int num_slots = GradientSlots(outputs);
  auto node = std::allocate_shared<OpNode>(internal::PoolAllocator<OpNode>(), std::move(edges),
                                           num_slots, op, d, std::move(inner), outputs);
  int slot = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].is_tensor_list()) {
      TensorList wrapped;
      for (const Tensor& t : outputs[i].tensor_list()) {
        wrapped.push_back(IsFloating(t.dtype()) ? MakeGradWrapper(t, level(), alive_flag(),
                                                                  autograd::Edge{node, slot})
                                                : t);
        ++slot;
      }
      outputs[i] = Value(std::move(wrapped));
      continue;
    }
    const int this_slot = slot++;
    if (!outputs[i].is_tensor() || !IsFloating(outputs[i].tensor().dtype())) continue;
    Tensor& t = outputs[i].mutable_tensor();  // the node holds its own copy
    t = MakeGradWrapper(std::move(t), level(), alive_flag(), autograd::Edge{node, this_slot});
  }
  return outputs;
}

}  // namespace ft

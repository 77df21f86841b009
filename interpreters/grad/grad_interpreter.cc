#include "interpreters/grad/grad_interpreter.h"

#include <cctype>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/formulas.h"
#include "dispatch/dispatch.h"
#include "dispatch/ops.h"
#include "tensor/print.h"

namespace ft {

GradWrapperImpl::GradWrapperImpl(Tensor value, int64_t level, std::shared_ptr<const bool> alive,
                                 autograd::Edge grad_edge)
    : TensorImpl(TensorKind::kGradWrapper, value.dtype(),
                 Shape(value.sizes().begin(), value.sizes().end())),
      value_(std::move(value)),
      level_(level),
      alive_(std::move(alive)),
      grad_edge_(std::move(grad_edge)) {}

std::string GradWrapperImpl::WrapperRepr() const {
  std::string inner = value_.is_dense() ? ToString(value_) : value_.impl()->WrapperRepr();
  return absl::StrCat("GradTrackingTensor(lvl=", level_, ", value=", inner, ")");
}

Tensor MakeGradWrapper(Tensor value, int64_t level, std::shared_ptr<const bool> alive,
                       autograd::Edge grad_edge) {
  return Tensor(std::make_shared<GradWrapperImpl>(std::move(value), level, std::move(alive),
                                                  std::move(grad_edge)));
}

const GradWrapperImpl* MaybeGradWrapperAt(const Tensor& t, int64_t level) {
  if (!t.defined() || t.kind() != TensorKind::kGradWrapper) return nullptr;
  const auto* w = static_cast<const GradWrapperImpl*>(t.impl());
  return w->level() == level ? w : nullptr;
}

GradInterpreter::GradInterpreter(int64_t level) : Interpreter(TransformType::kGrad, level) {}

namespace {

// "log_softmax" -> "LogSoftmaxBackward".
std::string NodeName(const std::string& op) {
  std::string name;
  bool upper = true;
  for (char c : op) {
    if (c == '_') {
      upper = true;
      continue;
    }
    name.push_back(upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
    upper = false;
  }
  return name + "Backward";
}

}  // namespace

ValueList GradInterpreter::Process(const Operator& op, ValueList& args) {
  // Unwrap this level: values one level down, and where each input's gradient goes.
  ValueList inner;
  std::vector<autograd::Edge> edges;
  bool tracked = false;
  auto unwrap = [&](const Tensor& t) {
    if (const GradWrapperImpl* w = MaybeGradWrapperAt(t, level())) {
      edges.push_back(w->grad_edge());
      tracked = tracked || w->requires_grad();
      return w->value();
    }
    edges.emplace_back();
    return t;
  };
  for (const Value& v : args) {
    if (v.is_tensor()) {
      inner.emplace_back(unwrap(v.tensor()));
    } else if (v.is_tensor_list()) {
      TensorList values;
      for (const Tensor& t : v.tensor_list()) values.push_back(unwrap(t));
      inner.emplace_back(std::move(values));
    } else {
      inner.push_back(v);
    }
  }
  const std::optional<int> mutated = op.schema().mutated_arg;
  if (mutated) {
    if (tracked) {
      ThrowError("grad: in-place op '", op.name(), "' on tensors that carry a gradient at level ",
                 level(), " is not supported yet; use the out-of-place op");
    }
    {
      LowerGuard lower(this);
      DispatchBoxed(op, inner);
    }
    ValueList out;
    out.push_back(args[*mutated]);  // the very object that was passed
    return out;
  }
  ValueList outputs;
  {
    LowerGuard lower(this);
    outputs = DispatchBoxed(op, inner);
  }
  if (!tracked || autograd::IsNonDifferentiable(op)) return outputs;  // constants here
  const autograd::VjpFormula* formula = autograd::GetVjp(op);
  if (formula == nullptr) {
    ThrowError("grad: no derivative formula for '", op.name(), "' (level ", level(), ")");
  }
  std::vector<bool> needs_grad(edges.size());
  for (size_t k = 0; k < edges.size(); ++k) needs_grad[k] = edges[k].valid();
  // Gradient slots: one per output tensor, TensorList outputs (split, chunk, ...) expanded
  // element by element, so a formula gets one gradient per piece.
  TensorList slot_values;
  for (const Value& v : outputs) {
    if (v.is_tensor()) {
      slot_values.push_back(v.tensor());
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.tensor_list()) slot_values.push_back(t);
    } else {
      slot_values.emplace_back();
    }
  }
  auto node = std::make_shared<autograd::FunctionNode>(
      NodeName(op.name()), edges, static_cast<int>(slot_values.size()),
      [&op, formula = *formula, inputs = inner, outs = outputs, slot_values, needs_grad,
       num_edges = edges.size()](const TensorList& grads) {
        TensorList g = grads;
        g.resize(slot_values.size());
        for (size_t i = 0; i < g.size(); ++i) {
          if (!g[i].defined() && slot_values[i].defined()) g[i] = zeros_like(slot_values[i]);
        }
        TensorList result = formula(autograd::VjpContext{op, inputs, outs, needs_grad}, g);
        if (result.size() != num_edges) {
          ThrowError("grad: the derivative formula of '", op.name(), "' returned ",
                     result.size(), " gradients for ", num_edges, " tensor inputs");
        }
        return result;
      });
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
    outputs[i] = Value(MakeGradWrapper(outputs[i].tensor(), level(), alive_flag(),
                                       autograd::Edge{node, this_slot}));
  }
  return outputs;
}

}  // namespace ft

#include "interpreters/jvp/jvp_interpreter.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "dispatch/dispatch.h"
#include "ops/ops.h"
#include "tensor/block_pool.h"
#include "tensor/print.h"

namespace ft {

DualImpl::DualImpl(Tensor primal, Tensor tangent, int64_t level,
                   std::shared_ptr<const bool> alive)
    : TensorImpl(TensorKind::kDual, primal.dtype(), primal.sizes(), -1),
      primal_(std::move(primal)),
      tangent_(std::move(tangent)),
      level_(level),
      alive_(std::move(alive)),
      recorded_version_(primal_.data_version()) {
  // As GradWrapperImpl: no complex tangents before the complex derivative rules exist.
  if (IsComplex(dtype())) {
    ThrowError("jvp: a ", DTypeName(dtype()), " value of shape ", ShapeToString(sizes()),
               " reached a jvp level (", level_,
               "): differentiating complex functions is not supported yet");
  }
}

void DualImpl::set_tangent(Tensor tangent) {
  tangent_ = std::move(tangent);
  recorded_version_ = primal_.data_version();
}

std::string DualImpl::WrapperRepr() const {
  auto repr = [](const Tensor& t) {
    return t.is_dense() ? ToString(t) : t.impl()->WrapperRepr();
  };
  return absl::StrCat("DualTensor(lvl=", level_, ", primal=", repr(primal_),
                      ", tangent=", repr(tangent_), ")");
}

Tensor MakeDual(Tensor primal, Tensor tangent, int64_t level, std::shared_ptr<const bool> alive) {
  return Tensor(std::allocate_shared<DualImpl>(internal::PoolAllocator<DualImpl>(),
                                               std::move(primal), std::move(tangent), level,
                                               std::move(alive)));
}

DualImpl* MaybeDualAt(const Tensor& t, int64_t level) {
  if (!t.defined() || t.kind() != TensorKind::kDual) return nullptr;
  auto* d = static_cast<DualImpl*>(t.impl());
  return d->level() == level ? d : nullptr;
}

JvpInterpreter::JvpInterpreter(int64_t level, bool prev_fwd_grad_mode)
    : Interpreter(TransformType::kJvp, level), prev_fwd_grad_mode_(prev_fwd_grad_mode) {}

namespace {

// FitTangent: a formula's tangent broadcast to its output's shape and converted to its dtype
// (formulas may return `ta + tb` for a broadcasting op, or a tangent of a wider dtype).
Tensor FitTangent(const Operator& op, Tensor t, const Tensor& out) {
  if (!std::equal(t.sizes().begin(), t.sizes().end(), out.sizes().begin(), out.sizes().end())) {
    if (!IsExpandableTo(t.sizes(), out.sizes())) {
      ThrowError("jvp: the forward-mode formula of '", op.name(), "' returned a tangent of shape ",
                 ShapeToString(t.sizes()), " for an output of shape ", ShapeToString(out.sizes()));
    }
    t = expand(t, out.sizes());
  }
  if (t.dtype() != out.dtype()) t = to(t, out.dtype());
  return t;
}

}  // namespace

void CheckTangentCurrent(const DualImpl& d, absl::string_view user) {
  if (!d.is_stale()) return;
  ThrowError("jvp: '", user, "' got a tensor of shape ", ShapeToString(d.primal().sizes()),
             " whose value was modified in place through a view or another alias after ",
             "its tangent was computed at level ", d.level(), "; in-place ops on views of ",
             "tensors that carry a tangent are not supported, clone the view first or "
             "differentiate ft::functionalize(f)");
}

ValueList JvpInterpreter::Process(const Operator& op, ValueList& args) {
  // Unwrap this level: primals one level down, and one tangent per tensor input.
  TensorList tangents;
  bool any_tangent = false;
  auto unwrap = [&](const Tensor& t) {
    if (DualImpl* d = MaybeDualAt(t, level())) {
      CheckTangentCurrent(*d, op.name());
      tangents.push_back(d->tangent());
      any_tangent = true;
      return d->primal();
    }
    tangents.emplace_back();
    return t;
  };
  ValueList inner = MapTensorArgs(args, unwrap);
  any_tangent = any_tangent && FwdGradMode::is_enabled();
  // Everything below runs one level down; a level entered with forward grad off keeps it off.
  LowerGuard lower(this);
  std::optional<NoFwdGradGuard> no_fwd_grad;
  if (!prev_fwd_grad_mode_) no_fwd_grad.emplace();

  auto tangent_formula = [&]() -> const autograd::JvpFormula& {
    const autograd::JvpFormula* formula = autograd::GetJvp(op);
    if (formula == nullptr) {
      ThrowError("jvp: no forward-mode formula for '", op.name(), "' (level ", level(), ")");
    }
    return *formula;
  };

  if (const std::optional<int> mutated = op.schema().mutated_arg) {
    const Tensor& self = args[static_cast<size_t>(*mutated)].tensor();
    DualImpl* dual = MaybeDualAt(self, level());
    if (!any_tangent || autograd::IsNonDifferentiable(op)) {
      DispatchBoxed(op, inner);
      if (dual != nullptr) dual->set_tangent(dual->tangent());  // a constant change
    } else if (dual == nullptr) {
      ThrowError("jvp: in-place op '", op.name(), "' would write a value carrying a tangent at ",
                 "level ", level(), " into a tensor captured from outside the transformed ",
                 "function (its argument 'self' of shape ", ShapeToString(self.sizes()),
                 " is not a dual tensor of this level). This is not supported; pass the ",
                 "tensor to the function as an input, use the out-of-place op, or "
                 "differentiate ft::functionalize(f)");
    } else if (AliasesInput(dual->primal())) {
      ThrowError("jvp: in-place op '", op.name(), "' on an input of the transform or a view of ",
                 "one (shape ", ShapeToString(self.sizes()), ", level ", level(), ") would ",
                 "modify the caller's tensor; clone it first or use the out-of-place op");
    } else {
      const autograd::JvpFormula& formula = tangent_formula();
      // The formula sees the value before the write (its input) and after (its output).
      ValueList before = inner;
      if (autograd::ReadsInputValues(op)) {
        before[static_cast<size_t>(*mutated)] = Value(clone(dual->primal()));
      }
      ValueList outputs = DispatchBoxed(op, inner);
      TensorList t = formula(autograd::JvpContext{op, before, outputs}, tangents);
      if (t.size() != 1) {
        ThrowError("jvp: the forward-mode formula of '", op.name(), "' returned ", t.size(),
                   " tangents for 1 output");
      }
      dual->set_tangent(t[0].defined() ? FitTangent(op, t[0], dual->primal())
                                       : zeros_like(dual->primal()));
    }
    ValueList out;
    out.push_back(args[static_cast<size_t>(*mutated)]);  // the very object that was passed
    return out;
  }

  ValueList outputs = DispatchBoxed(op, inner);
  if (!any_tangent || autograd::IsNonDifferentiable(op)) return outputs;  // constants here
  TensorList out_tangents =
      tangent_formula()(autograd::JvpContext{op, inner, outputs}, tangents);
  size_t slot = 0;
  auto wrap = [&](const Tensor& out) {
    const size_t this_slot = slot++;
    // A complex output of an op with tangents in: its tangent would need the complex rules
    // (a real formula may even leave it undefined, a silent zero), so refuse it by name.
    if (IsComplex(out.dtype())) [[unlikely]] {
      ThrowError("jvp: ", op.name(), " made a ", DTypeName(out.dtype()), " value of shape ",
                 ShapeToString(out.sizes()), " at a jvp level (", level(),
                 "): differentiating complex functions is not supported yet");
    }
    if (this_slot >= out_tangents.size() || !out_tangents[this_slot].defined() ||
        !IsDifferentiable(out.dtype())) {
      return out;
    }
    return MakeDual(out, FitTangent(op, out_tangents[this_slot], out), level(), alive_flag());
  };
  for (Value& v : outputs) {
    if (v.is_tensor_list()) {
      TensorList wrapped;
      for (const Tensor& t : v.tensor_list()) wrapped.push_back(wrap(t));
      v = Value(std::move(wrapped));
    } else if (v.is_tensor()) {
      v = Value(wrap(v.tensor()));
    } else {
      ++slot;
    }
  }
  if (out_tangents.size() != slot) {
    ThrowError("jvp: the forward-mode formula of '", op.name(), "' returned ",
               out_tangents.size(), " tangents for ", slot, " outputs");
  }
  return outputs;
}

}  // namespace ft

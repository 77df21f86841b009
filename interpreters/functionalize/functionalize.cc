#include "interpreters/functionalize/functionalize.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/dispatch.h"
#include "interpreters/functionalize/functional_tensor.h"
#include "ops/ops.h"
#include "tensor/factories.h"

namespace ft {
namespace {

// AdoptFactoryResults: the FactoryResultHook a functionalize call installs. A tensor a
// factory makes while some functionalize level is active (its function, or anything it
// calls) belongs to the innermost such level, so that in-place writes into it become that
// level's (`buf = zeros({3}); add_(buf, x)`). Outside of every functionalize level (while
// they are all lowered, e.g. inside a base kernel) factory results stay plain.
class AdoptFactoryResults : public FactoryResultHook {
 public:
  Tensor Adopt(Tensor t) override {
    for (int i = LayerStack::size() - 1; i >= 0; --i) {
      Interpreter* layer = LayerStack::At(i);
      if (layer->key() != TransformType::kFunctionalize) continue;
      if (auto* f = dynamic_cast<FunctionalizeInterpreter*>(layer)) return f->Wrap(std::move(t));
    }
    return t;
  }
};

// One argument tensor of the call: the caller's tensor and the wrapper f gets.
struct Input {
  Tensor caller;
  Tensor wrapper;
};

ValueList FunctionalizeCall(const std::function<ValueList(const ValueList&)>& f,
                            const ValueList& args, FunctionalizeOptions options) {
  RegisterFunctionalizeRules();
  CheckDefined("functionalize", "argument", args);
  FunctionalizeInterpreter interp(LayerStack::NewLevel(), options.remove);
  const int64_t level = interp.level();
  std::vector<Input> inputs;
  // The same tensor passed twice is one tensor for f.
  auto wrap_input = [&](const Tensor& t) -> Tensor {
    if (!t.defined()) return t;
    for (const Input& in : inputs) {
      if (in.caller.is_same(t)) return in.wrapper;
    }
    inputs.push_back(Input{t, interp.Wrap(t)});
    return inputs.back().wrapper;
  };
  ValueList wrapped = MapTensorArgs(args, wrap_input);
  ValueList outputs;
  {
    InterpreterScope scope(&interp);
    AdoptFactoryResults adopt;
    FactoryResultHookScope hook(&adopt);
    outputs = f(wrapped);
  }
  CheckDefined("functionalize", "f's output", outputs);

  // Write back every input f wrote, once.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto* w = static_cast<const FunctionalTensorImpl*>(inputs[i].wrapper.impl());
    if (!w->storage()->mutated()) continue;
    for (size_t j = 0; j < inputs.size(); ++j) {
      if (j != i && inputs[j].caller.data_storage().is_same(inputs[i].caller.data_storage())) {
        ThrowError("functionalize: an input of shape ", ShapeToString(inputs[i].caller.sizes()),
                   " was written in place and shares memory with another input of shape ",
                   ShapeToString(inputs[j].caller.sizes()), " (level ", level,
                   "); functionalize treats its inputs as separate tensors, so pass the base ",
                   "once and take the views inside the function");
      }
    }
    const Tensor& value = w->storage()->base();
    if (!value.is_same(inputs[i].caller)) copy_(inputs[i].caller, value);
  }

  // Unwrap the outputs.
  const bool copy_views = interp.copy_views();
  auto aliases_an_input = [&](const Tensor& t) {
    for (const Input& in : inputs) {
      if (in.caller.data_storage().is_same(t.data_storage())) return true;
    }
    return false;
  };
  auto unwrap = [&](const Tensor& t) -> Tensor {
    const FunctionalTensorImpl* w = MaybeFunctionalAt(t, level);
    if (w == nullptr) {
      if (copy_views && t.defined() && aliases_an_input(t)) return clone(t);
      return t;
    }
    if (!copy_views) {
      // A view of an input (or the input itself) is a view of the caller's tensor, which
      // now holds the written values, as it would eagerly.
      for (const Input& in : inputs) {
        const auto* iw = static_cast<const FunctionalTensorImpl*>(in.wrapper.impl());
        if (iw->storage() != w->storage()) continue;
        Tensor v = in.caller;
        for (const ViewStep& step : w->recipe()) v = ReplayView(step, v);
        return v;
      }
      return w->value();
    }
    const Tensor& value = w->value();
    return aliases_an_input(value) ? clone(value) : value;
  };
  return MapTensorArgs(outputs, unwrap);
}

}  // namespace

std::function<ValueList(const ValueList&)> functionalize(
    std::function<ValueList(const ValueList&)> f, FunctionalizeOptions options) {
  return [f = std::move(f), options](const ValueList& args) {
    return FunctionalizeCall(f, args, options);
  };
}

std::function<TensorList(const TensorList&)> functionalize(
    std::function<TensorList(const TensorList&)> f, FunctionalizeOptions options) {
  return [f = std::move(f), options](const TensorList& args) {
    ValueList boxed(args.begin(), args.end());
    ValueList out = FunctionalizeCall(
        [&f](const ValueList& a) {
          TensorList ts;
          ts.reserve(a.size());
          for (const Value& v : a) ts.push_back(v.tensor());
          TensorList r = f(ts);
          return ValueList(r.begin(), r.end());
        },
        boxed, options);
    TensorList result;
    result.reserve(out.size());
    for (Value& v : out) result.push_back(std::move(v.mutable_tensor()));
    return result;
  };
}

std::function<Tensor(const TensorList&)> functionalize(std::function<Tensor(const TensorList&)> f,
                                                       FunctionalizeOptions options) {
  auto g = functionalize(
      std::function<TensorList(const TensorList&)>(
          [f = std::move(f)](const TensorList& a) { return TensorList{f(a)}; }),
      options);
  return [g = std::move(g)](const TensorList& a) { return g(a)[0]; };
}

std::function<Tensor(const Tensor&)> functionalize(std::function<Tensor(const Tensor&)> f,
                                                   FunctionalizeOptions options) {
  auto g = functionalize(
      std::function<TensorList(const TensorList&)>(
          [f = std::move(f)](const TensorList& a) { return TensorList{f(a[0])}; }),
      options);
  return [g = std::move(g)](const Tensor& x) { return g({x})[0]; };
}

}  // namespace ft

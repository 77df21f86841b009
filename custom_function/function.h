// ft/custom_function/function.h
//
// ft::Function: the C++ autograd.Function. A user defines a Function as a type with static
// members, and its own derivative rules (backward, jvp) and batching rule (vmap) then hold
// under every transform: grad, vjp, jvp, jacrev, jacfwd, hessian and vmap, nested in any
// order (functorch's custom_function_call, NOTE: [custom_function_call] in
// custom_function_call.h).
//
// A Function `F : ft::Function<F>` defines:
//   static R forward(Args...);             no ctx; Args are tensors and non-tensors
//                                          (const Tensor&, const TensorList&, int64_t,
//                                          double, bool, Shape; a TensorList's tensors
//                                          are constants for the Function, as in torch);
//                                          R is Tensor or std::tuple of Tensor / int64_t /
//                                          double / bool (several outputs, non-tensors too)
//   static void setup_context(FunctionCtx& ctx, const std::tuple<Args...>& inputs,
//                             const R& output);   saves what backward and jvp need
//   static TensorList backward(FunctionCtx& ctx, const TensorList& grads);
//                                          optional; one grad per output in, one per
//                                          forward argument out (undefined = none)
//   static TensorList jvp(FunctionCtx& ctx, const TensorList& tangents);
//                                          optional; one tangent per argument in, one per
//                                          output out
//   static std::pair<R, OutDims> vmap(const VmapInfo& info, const InDims& in_dims, Args...);
//                                          optional batching rule: in_dims has one entry per
//                                          argument (nullopt: not batched at this level; a
//                                          TensorList's has one dim per element); a template
//                                          (`template <typename... A> static auto vmap(...)`)
//                                          works too
//   static constexpr bool generate_vmap_rule = true;     optional (see the decision table)
//   static constexpr bool once_differentiable = true;    optional
//   static constexpr const char* name = "MyCube";         optional (default: the type name)
//   static constexpr auto defaults = std::tuple{...};     optional: values of the trailing
//                                          forward arguments a call may leave out
// and is called with F::apply(args...), which returns an R.
//
// Checks: a Function without setup_context does not compile, and neither does one whose
// backward, jvp or vmap member cannot be called with the signature above (a static_assert
// says which signature is expected): a rule is never silently ignored. At run time, a
// backward or jvp returning the wrong number of results or a result of the wrong shape, a
// vmap whose out_dims do not fit its outputs, or a transform needing a rule the Function
// lacks, is an ft::Error naming the Function.
//
// The ctx (custom_function_call.h): save_for_backward / save_for_forward, mark_dirty,
// mark_non_differentiable, set_materialize_grads(false) and set_materialize_tangents(false)
// (undefined instead of zero grads / tangents), needs_input_grad(i), and user state:
// ctx.state<T>() (one per type) or ctx.state<T>("name") (one per name).
//
// Example (x^3 with its own derivatives, usable under vmap(grad(...))):
//   struct Cube : ft::Function<Cube> {
//     static constexpr const char* name = "Cube";
//     static constexpr bool generate_vmap_rule = true;
//     static ft::Tensor forward(const ft::Tensor& x) { return x * x * x; }
//     static void setup_context(ft::FunctionCtx& ctx, const std::tuple<ft::Tensor>& in,
//                               const ft::Tensor&) {
//       ctx.save_for_backward({std::get<0>(in)});
//       ctx.save_for_forward({std::get<0>(in)});
//     }
//     static ft::TensorList backward(ft::FunctionCtx& ctx, const ft::TensorList& g) {
//       const ft::Tensor& x = ctx.saved_tensors()[0];
//       return {g[0] * 3.0 * x * x};
//     }
//     static ft::TensorList jvp(ft::FunctionCtx& ctx, const ft::TensorList& t) {
//       const ft::Tensor& x = ctx.saved_tensors()[0];
//       return {t[0] * 3.0 * x * x};
//     }
//   };
//   ft::Tensor y = Cube::apply(x);
//   ft::Tensor g = ft::grad(ft::TensorFn([](const ft::Tensor& t) {
//     return ft::sum(Cube::apply(t));
//   }))(x);                                              // 3x^2, by Cube::backward
#ifndef FT_CUSTOM_FUNCTION_FUNCTION_H_
#define FT_CUSTOM_FUNCTION_FUNCTION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

#include "custom_function/custom_function_call.h"
#include "dispatch/value.h"
#include "tensor/tensor.h"

namespace ft {

namespace internal {

// ---- Typed <-> boxed conversions of Function arguments and outputs ----

template <typename T>
Value ToValue(const T& v) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, int>) {
    return Value(static_cast<int64_t>(v));
  } else if constexpr (std::is_same_v<D, std::vector<int64_t>>) {
    return Value(Shape(v.begin(), v.end()));
  } else {
    return Value(v);
  }
}

template <typename T>
T FromValue(const Value& v, const std::string& function, size_t index) {
  using D = std::decay_t<T>;
  auto mismatch = [&](const char* want) {
    ThrowError(function, ": argument ", index, " should be ", want, ", got ", v.ToString());
  };
  if constexpr (std::is_same_v<D, Tensor>) {
    if (!v.is_tensor()) mismatch("a Tensor");
    return v.tensor();
  } else if constexpr (std::is_same_v<D, TensorList>) {
    if (!v.is_tensor_list()) mismatch("a TensorList");
    return v.tensor_list();
  } else if constexpr (std::is_same_v<D, bool>) {
    if (v.tag() != Value::Tag::kBool) mismatch("a bool");
    return v.to_bool();
  } else if constexpr (std::is_integral_v<D>) {
    if (v.tag() != Value::Tag::kInt) mismatch("an integer");
    return static_cast<D>(v.to_int());
  } else if constexpr (std::is_floating_point_v<D>) {
    if (v.tag() != Value::Tag::kDouble) mismatch("a double");
    return static_cast<D>(v.to_double());
  } else if constexpr (std::is_same_v<D, Shape> || std::is_same_v<D, std::vector<int64_t>>) {
    if (v.tag() != Value::Tag::kShape) mismatch("a dim list");
    return D(v.shape().begin(), v.shape().end());
  } else {
    static_assert(sizeof(D) == 0, "unsupported Function argument type");
  }
}

template <typename F>
struct ForwardTraits;
template <typename R, typename... Args>
struct ForwardTraits<R (*)(Args...)> {
  using Result = R;
  using Inputs = std::tuple<std::decay_t<Args>...>;
  static constexpr size_t kArity = sizeof...(Args);
};

template <typename T>
struct IsTuple : std::false_type {};
template <typename... Ts>
struct IsTuple<std::tuple<Ts...>> : std::true_type {};

// Outputs: R flattened to one Value per output (a tuple's elements, or the single tensor).
template <typename R>
ValueList FlattenOutput(const R& r) {
  ValueList out;
  if constexpr (IsTuple<R>::value) {
    std::apply([&](const auto&... e) { (out.push_back(ToValue(e)), ...); }, r);
  } else {
    out.push_back(ToValue(r));
  }
  return out;
}

template <typename R>
R UnflattenOutput(const ValueList& values, const std::string& function) {
  if constexpr (IsTuple<R>::value) {
    constexpr size_t n = std::tuple_size_v<R>;
    if (values.size() != n) {
      ThrowError(function, ": expected ", n, " outputs, got ", values.size());
    }
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return R{FromValue<std::tuple_element_t<I, R>>(values[I], function, I)...};
    }(std::make_index_sequence<n>());
  } else {
    if (values.size() != 1) ThrowError(function, ": expected 1 output, got ", values.size());
    return FromValue<R>(values[0], function, 0);
  }
}

template <typename Tuple>
Tuple ToInputs(const ValueList& values, const std::string& function) {
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return Tuple{FromValue<std::tuple_element_t<I, Tuple>>(values[I], function, I)...};
  }(std::make_index_sequence<std::tuple_size_v<Tuple>>());
}

std::string DemangledName(const std::type_info& type);

// ---- What a Function type defines ----
template <typename F>
concept HasSetupContext = requires { &F::setup_context; };
template <typename F>
concept HasBackward = requires(FunctionCtx& ctx, const TensorList& g) {
  { F::backward(ctx, g) } -> std::convertible_to<TensorList>;
};
template <typename F>
concept HasJvp = requires(FunctionCtx& ctx, const TensorList& t) {
  { F::jvp(ctx, t) } -> std::convertible_to<TensorList>;
};
// Declares<Member>: whether F declares a member of that name of any kind (a function, a
// template, an overload set, a variable), by the member-detector idiom: in a class deriving
// from F and from a probe that declares all three names, a name F also declares is ambiguous.
// A member that exists but cannot be called as a rule is then a compile-time error (the
// static_asserts in SpecFor), never a rule silently ignored.
struct RuleNameProbe {
  int backward;
  int jvp;
  int vmap;
};
template <typename F>
struct RuleNameLookup : F, RuleNameProbe {};
template <typename F>
constexpr bool DeclaresRule(int which) {
  // A final class cannot be derived from: there, only a plain (non-template) member is seen.
  if constexpr (std::is_final_v<F>) {
    return which == 0 ? requires { F::backward; }
                      : which == 1 ? requires { F::jvp; } : requires { F::vmap; };
  } else {
    return which == 0 ? !requires { &RuleNameLookup<F>::backward; }
                      : which == 1 ? !requires { &RuleNameLookup<F>::jvp; }
                                   : !requires { &RuleNameLookup<F>::vmap; };
  }
}
template <typename F>
concept DeclaresBackward = DeclaresRule<F>(0);
template <typename F>
concept DeclaresJvp = DeclaresRule<F>(1);
template <typename F>
concept DeclaresVmap = DeclaresRule<F>(2);
// HasVmap<F, R, Inputs>: F::vmap can be called as a vmap rule with forward's arguments
// (`Inputs`, the tuple of their decayed types) and returns a pair of forward's result R and
// out_dims. A template rule qualifies as well as a plain one.
template <typename F, typename... Args>
using VmapResult = decltype(F::vmap(std::declval<const VmapInfo&>(),
                                    std::declval<const InDims&>(),
                                    std::declval<const Args&>()...));
template <typename F, typename R, typename... Args>
concept VmapRuleFor = requires(VmapResult<F, Args...> result) {
  R(std::get<0>(result));
  OutDims(std::get<1>(result));
};
template <typename F, typename R, typename Inputs>
struct HasVmapFor : std::false_type {};
template <typename F, typename R, typename... Args>
struct HasVmapFor<F, R, std::tuple<Args...>>
    : std::bool_constant<VmapRuleFor<F, R, Args...>> {};
template <typename F, typename R, typename Inputs>
concept HasVmap = HasVmapFor<F, R, Inputs>::value;
template <typename F>
concept HasName = requires { F::name; };
template <typename F>
concept HasDefaults = requires { F::defaults; };

template <typename F>
constexpr bool GenerateVmapRule() {
  if constexpr (requires { F::generate_vmap_rule; }) {
    return F::generate_vmap_rule;
  } else {
    return false;
  }
}
template <typename F>
constexpr bool OnceDifferentiable() {
  if constexpr (requires { F::once_differentiable; }) {
    return F::once_differentiable;
  } else {
    return false;
  }
}

// SpecFor: the boxed description of F, built once.
template <typename F>
const std::shared_ptr<const FunctionSpec>& SpecFor() {
  static const std::shared_ptr<const FunctionSpec> spec = [] {
    using Traits = ForwardTraits<decltype(&F::forward)>;
    using R = typename Traits::Result;
    using Inputs = typename Traits::Inputs;
    static_assert(std::is_same_v<R, Tensor> || IsTuple<R>::value,
                  "a Function's forward returns a Tensor, or a std::tuple of tensors and "
                  "int64_t / double / bool for several outputs");
    auto s = std::make_shared<FunctionSpec>();
    if constexpr (HasName<F>) {
      s->name = F::name;
    } else {
      s->name = DemangledName(typeid(F));
    }
    s->num_args = Traits::kArity;
    const std::string name = s->name;
    s->forward = [name](const ValueList& args) {
      return FlattenOutput<R>(std::apply([](const auto&... a) { return F::forward(a...); },
                                         ToInputs<Inputs>(args, name)));
    };
    s->setup_context = [name](FunctionCtx& ctx, const ValueList& inputs,
                              const ValueList& outputs) {
      F::setup_context(ctx, ToInputs<Inputs>(inputs, name), UnflattenOutput<R>(outputs, name));
    };
    s->forward_with_context = [name](FunctionCtx& ctx, const ValueList& args) {
      const Inputs inputs = ToInputs<Inputs>(args, name);
      R out = std::apply([](const auto&... a) { return F::forward(a...); }, inputs);
      F::setup_context(ctx, inputs, out);
      return FlattenOutput<R>(out);
    };
    static_assert(HasBackward<F> || !DeclaresBackward<F>,
                  "this Function's backward cannot be called as a backward rule: write "
                  "static ft::TensorList backward(ft::FunctionCtx& ctx, "
                  "const ft::TensorList& grads)");
    static_assert(HasJvp<F> || !DeclaresJvp<F>,
                  "this Function's jvp cannot be called as a jvp rule: write "
                  "static ft::TensorList jvp(ft::FunctionCtx& ctx, "
                  "const ft::TensorList& tangents)");
    static_assert(HasVmap<F, R, Inputs> || !DeclaresVmap<F>,
                  "this Function's vmap cannot be called as a vmap rule: write static "
                  "std::pair<R, ft::OutDims> vmap(const ft::VmapInfo& info, const ft::InDims& "
                  "in_dims, Args... args), with forward's result type R and forward's "
                  "argument types (a template taking those works too)");
    if constexpr (HasBackward<F>) {
      s->backward = [](FunctionCtx& ctx, const TensorList& g) -> TensorList {
        return F::backward(ctx, g);
      };
    }
    if constexpr (HasJvp<F>) {
      s->jvp = [](FunctionCtx& ctx, const TensorList& t) -> TensorList { return F::jvp(ctx, t); };
    }
    if constexpr (HasVmap<F, R, Inputs>) {
      s->vmap = [name](const VmapInfo& info, const InDims& in_dims, const ValueList& args) {
        auto [out, out_dims] = std::apply(
            [&](const auto&... a) { return F::vmap(info, in_dims, a...); },
            ToInputs<Inputs>(args, name));
        return std::pair<ValueList, OutDims>{FlattenOutput<R>(out), OutDims(out_dims)};
      };
    }
    s->generate_vmap_rule = GenerateVmapRule<F>();
    s->once_differentiable = OnceDifferentiable<F>();
    return std::shared_ptr<const FunctionSpec>(std::move(s));
  }();
  return spec;
}

}  // namespace internal

// Function<F>: the base a user's Function derives from (CRTP); it provides F::apply.
template <typename F>
class Function {
 public:
  template <typename... Args>
  static auto apply(const Args&... args) {
    static_assert(internal::HasSetupContext<F>,
                  "an ft::Function must define static setup_context(FunctionCtx&, inputs, "
                  "output); save what backward and jvp need there");
    using Traits = internal::ForwardTraits<decltype(&F::forward)>;
    using R = typename Traits::Result;
    constexpr size_t arity = Traits::kArity;
    static_assert(sizeof...(Args) <= arity, "too many arguments for forward");
    ValueList operands;
    (operands.push_back(internal::ToValue(args)), ...);
    if constexpr (sizeof...(Args) < arity) {
      static_assert(internal::HasDefaults<F>,
                    "too few arguments for forward, and the Function has no `defaults`");
      constexpr size_t num_defaults = std::tuple_size_v<std::decay_t<decltype(F::defaults)>>;
      static_assert(sizeof...(Args) + num_defaults >= arity,
                    "too few arguments for forward, even with the Function's defaults");
      // defaults holds the values of the last num_defaults arguments.
      [&]<size_t... I>(std::index_sequence<I...>) {
        (operands.push_back(internal::ToValue(
             std::get<num_defaults - (arity - sizeof...(Args)) + I>(F::defaults))),
         ...);
      }(std::make_index_sequence<arity - sizeof...(Args)>());
    }
    const std::shared_ptr<const FunctionSpec>& spec = internal::SpecFor<F>();
    return internal::UnflattenOutput<R>(CallCustomFunction(spec, operands), spec->name);
  }
};

}  // namespace ft

#endif  // FT_CUSTOM_FUNCTION_FUNCTION_H_

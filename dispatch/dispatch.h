// ft/dispatch/dispatch.h
//
// dispatch(): how a public op reaches its kernel or the active transform.
//
// Every public op is a one-liner over its typed base kernel:
//   Tensor sin(const Tensor& x) { return Call<&kernels::sin>(x); }
// Call checks one thing on the fast path: no transform is active (and no argument is a
// wrapper). Then the kernel runs directly with its typed arguments: one branch and the
// kernel, no boxing. Otherwise the arguments are boxed into a ValueList and handed to
// DispatchBoxed, which asks the interpreter on top of the stack to Process the op.
//
// Registering an op (once, from RegisterAllOps):
//   RegisterOp<&kernels::sin>(registry, "sin", {"self"});
// derives the schema's argument and result kinds from the kernel's C++ signature and builds
// the boxed base kernel. Kernels must have distinct addresses (one kernel, one op).
//
// NOTE: [Wrappers never reach kernels]
// Base kernels only ever see dense tensors. With an empty stack, DispatchBoxed first replaces
// wrappers of dead levels (NOTE: [Dead wrappers] in tensor/tensor.h) and then throws if any
// wrapper remains, naming the op; interpreters peel their own wrappers before lowering.
//
// Supported kernel parameter types: const Tensor&, const std::optional<Tensor>&,
// const TensorList&, Scalar, std::optional<Scalar>, int64_t, std::optional<int64_t>, double,
// std::optional<double>, bool, IntArrayRef, DType, Generator*. Results: Tensor, TensorList,
// std::tuple<Tensor...>.
#ifndef FT_DISPATCH_DISPATCH_H_
#define FT_DISPATCH_DISPATCH_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "dispatch/interpreter.h"
#include "dispatch/operator.h"
#include "dispatch/value.h"

namespace ft {

// DispatchBoxed runs `op` on boxed arguments at the current position of the layer stack:
// the top interpreter's Process, or the base kernel when the stack is empty. Interpreters
// call it (under a LowerGuard) to pass an op to the levels below. The only change it makes
// to `args` is replacing wrappers of dead levels by their values; callers may keep using
// the list afterwards (the grad interpreter saves it for the backward).
ValueList DispatchBoxed(const Operator& op, ValueList& args);

// BaseCallObserver sees every base-kernel call on this thread while a BaseCallObserverScope
// installs it: the calls that reach the bottom of the layer stack (or run with no transform
// at all), with their dense boxed arguments. ft::jit's tracer records a function this way.
// While one is installed, the typed fast path of Call is closed, so no op can bypass it.
class BaseCallObserver {
 public:
  // RunBaseKernel must run op.CallBaseKernel(args) once and return its outputs.
  virtual ValueList RunBaseKernel(const Operator& op, ValueList& args) = 0;

 protected:
  ~BaseCallObserver() = default;
};

namespace internal {
extern constinit thread_local BaseCallObserver* tls_base_call_observer;
}  // namespace internal

// BaseCallObserverScope installs `observer` for a scope (the previous one, if any, is
// restored afterwards, exceptions included). nullptr uninstalls for the scope.
class BaseCallObserverScope {
 public:
  explicit BaseCallObserverScope(BaseCallObserver* observer)
      : saved_(internal::tls_base_call_observer) {
    internal::tls_base_call_observer = observer;
  }
  ~BaseCallObserverScope() { internal::tls_base_call_observer = saved_; }
  BaseCallObserverScope(const BaseCallObserverScope&) = delete;
  BaseCallObserverScope& operator=(const BaseCallObserverScope&) = delete;

 private:
  BaseCallObserver* saved_;
};

inline BaseCallObserver* CurrentBaseCallObserver() { return internal::tls_base_call_observer; }

// DispatchArgumentHook sees, on this thread while a DispatchArgumentHookScope installs it,
// the ops the code issues at the position of the layer stack where it was installed: the
// user's ops in a region of code, not the calls interpreters pass down from levels above or
// below (those run under a lowering guard), nor ops of transforms entered inside.
// BeforeOp may replace tensor arguments (it runs with the hook that was installed before
// this one, so ops it issues see that one); AfterOp sees the outputs. //control_flow masks
// the tensors a branch captured this way (NOTE: [Masking captured tensors] in
// control_flow/control_flow.cc). Higher-order operators (a custom Function, cond) are not
// ops: the hook sees the ops they issue at its depth. Only boxed dispatch is seen: with an
// empty stack an op takes the typed fast path, so install hooks under a transform.
class DispatchArgumentHook {
 public:
  virtual void BeforeOp(const Operator& op, ValueList& args) = 0;
  virtual void AfterOp(const Operator& op, const ValueList& outputs) = 0;

 protected:
  ~DispatchArgumentHook() = default;
};

namespace internal {
struct DispatchHookState {
  DispatchArgumentHook* hook = nullptr;
  int depth = -1;
  int lowerings = -1;
  const DispatchHookState* previous = nullptr;  // the state the installing scope saved
};
extern constinit thread_local DispatchHookState tls_dispatch_hook;
}  // namespace internal

// DispatchArgumentHookScope installs `hook` at the current depth of the layer stack for a
// scope, and restores the previous hook afterwards (exceptions included).
class DispatchArgumentHookScope {
 public:
  explicit DispatchArgumentHookScope(DispatchArgumentHook* hook)
      : saved_(internal::tls_dispatch_hook) {
    internal::tls_dispatch_hook = {hook, LayerStack::size(), internal::tls_lowerings, &saved_};
  }
  ~DispatchArgumentHookScope() { internal::tls_dispatch_hook = saved_; }
  DispatchArgumentHookScope(const DispatchArgumentHookScope&) = delete;
  DispatchArgumentHookScope& operator=(const DispatchArgumentHookScope&) = delete;

 private:
  internal::DispatchHookState saved_;
};

// RegisterAllOps registers every built-in op (idempotent, thread-safe). Code that walks the
// registry (tables, completeness tests) calls it first; op calls do it on their own. It is
// defined by //ops (ops/register.cc), the built-in op set: this package holds the table's
// machinery and no op, so a program that calls an op links //ops, which defines it.
void RegisterAllOps();

namespace internal {

template <typename T>
struct ArgTraits;

template <>
struct ArgTraits<const Tensor&> {
  static constexpr ArgKind kKind = ArgKind::kTensor;
  static const Tensor& From(const Value& v) { return v.tensor(); }
  static Value To(const Tensor& t) { return Value(t); }
  static bool Direct(const Tensor& t) { return t.is_dense() && IsOriginalDType(t.dtype()); }
};
template <>
struct ArgTraits<const std::optional<Tensor>&> {
  static constexpr ArgKind kKind = ArgKind::kOptionalTensor;
  static std::optional<Tensor> From(const Value& v) {
    if (v.is_none()) return std::nullopt;
    return v.tensor();
  }
  static Value To(const std::optional<Tensor>& t) { return t ? Value(*t) : Value(); }
  static bool Direct(const std::optional<Tensor>& t) {
    return !t || (t->is_dense() && IsOriginalDType(t->dtype()));
  }
};
template <>
struct ArgTraits<const TensorList&> {
  static constexpr ArgKind kKind = ArgKind::kTensorList;
  static const TensorList& From(const Value& v) { return v.tensor_list(); }
  static Value To(const TensorList& ts) { return Value(ts); }
  static bool Direct(const TensorList& ts) {
    for (const Tensor& t : ts) {
      if (!t.is_dense() || !IsOriginalDType(t.dtype())) return false;
    }
    return true;
  }
};

// Non-tensor arguments: From/To convert, Direct is true (a DType's says otherwise).
template <typename T, ArgKind K>
struct PlainArg {
  static constexpr ArgKind kKind = K;
  static bool Direct(const T&) { return true; }
};
template <>
struct ArgTraits<Scalar> : PlainArg<Scalar, ArgKind::kScalar> {
  static Scalar From(const Value& v) { return v.scalar(); }
  static Value To(Scalar s) { return Value(s); }
};
template <>
struct ArgTraits<std::optional<Scalar>> : PlainArg<std::optional<Scalar>, ArgKind::kOptionalScalar> {
  static std::optional<Scalar> From(const Value& v) {
    if (v.is_none()) return std::nullopt;
    return v.scalar();
  }
  static Value To(std::optional<Scalar> s) { return s ? Value(*s) : Value(); }
};
template <>
struct ArgTraits<int64_t> : PlainArg<int64_t, ArgKind::kInt> {
  static int64_t From(const Value& v) { return v.to_int(); }
  static Value To(int64_t i) { return Value(i); }
};
template <>
struct ArgTraits<std::optional<int64_t>> : PlainArg<std::optional<int64_t>, ArgKind::kOptionalInt> {
  static std::optional<int64_t> From(const Value& v) {
    if (v.is_none()) return std::nullopt;
    return v.to_int();
  }
  static Value To(std::optional<int64_t> i) { return i ? Value(*i) : Value(); }
};
template <>
struct ArgTraits<double> : PlainArg<double, ArgKind::kDouble> {
  static double From(const Value& v) { return v.to_double(); }
  static Value To(double d) { return Value(d); }
};
template <>
struct ArgTraits<std::optional<double>>
    : PlainArg<std::optional<double>, ArgKind::kOptionalDouble> {
  static std::optional<double> From(const Value& v) {
    if (v.is_none()) return std::nullopt;
    return v.to_double();
  }
  static Value To(std::optional<double> d) { return d ? Value(*d) : Value(); }
};
template <>
struct ArgTraits<bool> : PlainArg<bool, ArgKind::kBool> {
  static bool From(const Value& v) { return v.to_bool(); }
  static Value To(bool b) { return Value(b); }
};
template <>
struct ArgTraits<IntArrayRef> : PlainArg<IntArrayRef, ArgKind::kIntList> {
  static IntArrayRef From(const Value& v) { return v.shape(); }
  static Value To(IntArrayRef s) { return Value(Shape(s.begin(), s.end())); }
};
template <>
struct ArgTraits<DType> : PlainArg<DType, ArgKind::kDType> {
  static DType From(const Value& v) { return v.dtype(); }
  static Value To(DType d) { return Value(d); }
  static bool Direct(DType d) { return IsOriginalDType(d); }
};
template <>
struct ArgTraits<Generator*> : PlainArg<Generator*, ArgKind::kGenerator> {
  static Generator* From(const Value& v) { return v.is_none() ? nullptr : v.generator(); }
  static Value To(Generator* g) { return g ? Value(g) : Value(); }
};

// Result conversion.
template <typename R>
struct ResultTraits;
template <>
struct ResultTraits<Tensor> {
  static std::vector<ArgKind> Kinds() { return {ArgKind::kTensor}; }
  static ValueList To(Tensor t) {
    ValueList out;
    out.emplace_back(std::move(t));
    return out;
  }
  static Tensor From(ValueList& v) { return std::move(v[0].mutable_tensor()); }
};
template <>
struct ResultTraits<TensorList> {
  static std::vector<ArgKind> Kinds() { return {ArgKind::kTensorList}; }
  static ValueList To(TensorList t) {
    ValueList out;
    out.emplace_back(std::move(t));
    return out;
  }
  static TensorList From(ValueList& v) { return std::move(v[0].mutable_tensor_list()); }
};
template <typename... Ts>
struct ResultTraits<std::tuple<Ts...>> {
  static std::vector<ArgKind> Kinds() { return {(static_cast<void>(sizeof(Ts*)), ArgKind::kTensor)...}; }
  static ValueList To(std::tuple<Ts...> t) {
    ValueList out;
    std::apply([&](auto&... ts) { (out.emplace_back(std::move(ts)), ...); }, t);
    return out;
  }
  static std::tuple<Ts...> From(ValueList& v) {
    return FromImpl(v, std::index_sequence_for<Ts...>{});
  }
  template <size_t... I>
  static std::tuple<Ts...> FromImpl(ValueList& v, std::index_sequence<I...>) {
    return std::tuple<Ts...>(std::move(v[I].mutable_tensor())...);
  }
};

template <typename F>
struct FunctionTraits;
template <typename R, typename... P>
struct FunctionTraits<R (*)(P...)> {
  using Return = R;
  using Params = std::tuple<P...>;
  static constexpr size_t kArity = sizeof...(P);
};

template <auto Kernel>
using KernelTraits = FunctionTraits<decltype(Kernel)>;
template <auto Kernel, size_t I>
using KernelParam = std::tuple_element_t<I, typename KernelTraits<Kernel>::Params>;

// OpHandle<Kernel> is the Operator registered for Kernel (set by RegisterOp).
template <auto Kernel>
struct OpHandle {
  static inline const Operator* op = nullptr;
  static const Operator& Get() {
    if (op == nullptr) RegisterAllOps();
    FT_CHECK(op != nullptr);
    return *op;
  }
};

template <auto Kernel, size_t... I>
ValueList BoxedCallImpl(ValueList& args, std::index_sequence<I...>) {
  using R = typename KernelTraits<Kernel>::Return;
  return ResultTraits<R>::To(Kernel(ArgTraits<KernelParam<Kernel, I>>::From(args[I])...));
}

template <auto Kernel>
ValueList BoxedCall(ValueList& args) {
  FT_CHECK(args.size() == KernelTraits<Kernel>::kArity);
  return BoxedCallImpl<Kernel>(args, std::make_index_sequence<KernelTraits<Kernel>::kArity>{});
}

// DirectCall<Kernel>: Kernel's DirectKernel (operator.h). DirectArg reads one argument
// where the caller keeps it; DirectResults stores the results.
template <typename P>
struct DirectArg {
  static constexpr bool kSupported = true;
  static decltype(auto) Get(const Value& fixed, const Tensor*) { return ArgTraits<P>::From(fixed); }
};
template <>
struct DirectArg<const Tensor&> {
  static constexpr bool kSupported = true;
  static const Tensor& Get(const Value&, const Tensor* t) { return *t; }
};
template <>
struct DirectArg<const std::optional<Tensor>&> {
  static constexpr bool kSupported = true;
  static std::optional<Tensor> Get(const Value&, const Tensor* t) {
    return t == nullptr ? std::nullopt : std::optional<Tensor>(*t);
  }
};
template <>
struct DirectArg<const TensorList&> {
  static constexpr bool kSupported = false;
};
template <typename R>
struct DirectResults {
  static constexpr bool kSupported = false;
};
template <>
struct DirectResults<Tensor> {
  static constexpr bool kSupported = true;
  static void Store(Tensor r, Tensor* results) { results[0] = std::move(r); }
};
template <typename... Ts>
struct DirectResults<std::tuple<Ts...>> {
  static constexpr bool kSupported = true;
  static void Store(std::tuple<Ts...> r, Tensor* results) {
    std::apply([&](auto&... ts) {
      int j = 0;
      ((results[j++] = std::move(ts)), ...);
    }, r);
  }
};

template <auto Kernel, size_t... I>
void DirectCallImpl(const Value* fixed, const Tensor* const* tensors, Tensor* results,
                    std::index_sequence<I...>) {
  using R = typename KernelTraits<Kernel>::Return;
  DirectResults<R>::Store(Kernel(DirectArg<KernelParam<Kernel, I>>::Get(fixed[I], tensors[I])...),
                          results);
}

template <auto Kernel>
void DirectCall(const Value* fixed, const Tensor* const* tensors, Tensor* results) {
  DirectCallImpl<Kernel>(fixed, tensors, results,
                         std::make_index_sequence<KernelTraits<Kernel>::kArity>{});
}

template <auto Kernel>
constexpr DirectKernel DirectKernelFor() {
  using Traits = KernelTraits<Kernel>;
  constexpr bool supported = []<size_t... I>(std::index_sequence<I...>) {
    return (DirectArg<KernelParam<Kernel, I>>::kSupported && ... &&
            DirectResults<typename Traits::Return>::kSupported);
  }(std::make_index_sequence<Traits::kArity>{});
  if constexpr (supported) {
    return &DirectCall<Kernel>;
  } else {
    return nullptr;
  }
}

// ThrowNamed: an AllocationError (a result too large to represent or to allocate) raised by
// op's kernel, thrown again as an AllocationError whose message starts with the op's name.
[[noreturn, gnu::noinline, gnu::cold]] void ThrowNamed(const Operator& op,
                                                      const AllocationError& e);

template <auto Kernel, typename... Args, size_t... I>
bool AllDirectImpl(std::index_sequence<I...>, const Args&... args) {
  return (ArgTraits<KernelParam<Kernel, I>>::Direct(args) && ...);
}

template <auto Kernel, typename... Args, size_t... I>
[[gnu::noinline]] typename KernelTraits<Kernel>::Return CallSlow(std::index_sequence<I...>,
                                                                 const Args&... args) {
  using R = typename KernelTraits<Kernel>::Return;
  const Operator& op = OpHandle<Kernel>::Get();
  ValueList boxed;
  (boxed.push_back(ArgTraits<KernelParam<Kernel, I>>::To(args)), ...);
  ValueList out = DispatchBoxed(op, boxed);
  return ResultTraits<R>::From(out);
}

}  // namespace internal

// Call runs Kernel's op: directly when no transform is active, no BaseCallObserver is
// installed and every tensor argument is dense and of an original dtype (kOriginalDTypes,
// which every op supports), otherwise through DispatchBoxed, which checks the dtypes against
// the op's OpSchema::dtypes. Arguments
// must already have the kernel's parameter types (the public op function's signature does
// that).
template <auto Kernel, typename... Args>
inline typename internal::KernelTraits<Kernel>::Return Call(const Args&... args) {
  static_assert(sizeof...(Args) == internal::KernelTraits<Kernel>::kArity,
                "Call<Kernel>: wrong number of arguments");
  using Seq = std::make_index_sequence<sizeof...(Args)>;
  if (LayerStack::empty() && internal::tls_base_call_observer == nullptr &&
      internal::AllDirectImpl<Kernel>(Seq{}, args...)) [[likely]] {
    try {
      return Kernel(args...);
    } catch (const AllocationError& e) {
      internal::ThrowNamed(internal::OpHandle<Kernel>::Get(), e);
    }
  }
  return internal::CallSlow<Kernel>(Seq{}, args...);
}

// OpOptions: schema facts that the signature cannot tell.
struct OpOptions {
  std::optional<int> mutated_arg = std::nullopt;  // index of the argument an in-place op writes
  bool random = false;             // draws from a Generator
  bool ordered_effect = false;     // OpSchema::ordered_effect (a collective)
  int axis_arg = -1;               // OpSchema::axis_arg and makes_invariant (a collective)
  bool makes_invariant = false;
  DTypeSet dtypes = kOriginalDTypes;  // OpSchema::dtypes: what the kernel is written for
};

// RegisterOp adds Kernel's op to `registry` with argument names `arg_names` (one per kernel
// parameter; FT_CHECKed) and returns it.
template <auto Kernel>
Operator& RegisterOp(OpRegistry& registry, std::string name,
                     std::initializer_list<const char*> arg_names, OpOptions options = {}) {
  using Traits = internal::KernelTraits<Kernel>;
  FT_CHECK(arg_names.size() == Traits::kArity);
  OpSchema schema;
  schema.name = std::move(name);
  [&]<size_t... I>(std::index_sequence<I...>) {
    const char* const* names = arg_names.begin();
    (schema.args.push_back(
         ArgSpec{names[I], internal::ArgTraits<internal::KernelParam<Kernel, I>>::kKind}),
     ...);
  }(std::make_index_sequence<Traits::kArity>{});
  schema.returns = internal::ResultTraits<typename Traits::Return>::Kinds();
  schema.mutated_arg = options.mutated_arg;
  schema.random = options.random;
  schema.ordered_effect = options.ordered_effect;
  schema.axis_arg = options.axis_arg;
  schema.makes_invariant = options.makes_invariant;
  schema.dtypes = options.dtypes;
  Operator& op = registry.Register(std::move(schema), &internal::BoxedCall<Kernel>,
                                   internal::DirectKernelFor<Kernel>());
  FT_CHECK(internal::OpHandle<Kernel>::op == nullptr);
  internal::OpHandle<Kernel>::op = &op;
  return op;
}

// OpFor returns the Operator registered for Kernel (registering all ops if needed).
template <auto Kernel>
const Operator& OpFor() {
  return internal::OpHandle<Kernel>::Get();
}

}  // namespace ft

#endif  // FT_DISPATCH_DISPATCH_H_

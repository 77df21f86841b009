// ft/custom_function/custom_function_call.h
//
// The boxed machinery under ft::Function (function.h): FunctionCtx, FunctionSpec (a Function
// with its types erased) and the custom_function_call higher-order operator.
//
// NOTE: [custom_function_call]
// A Function call is one call of the custom_function_call operator (dispatch/
// higher_order_operator.h), which has one rule per transform, like any op:
//   - no transform active: forward, then setup_context (the plain apply);
//   - grad and jvp (grad_rule.cc): the level builds a single-level Function of its own
//     ("<Name>Generated", its backward node "<Name>GeneratedBackward"): it unwraps its level,
//     calls custom_function_call again one level down (so the user's forward runs exactly
//     once, at the bottom), wraps the outputs keeping the identity of outputs that are inputs
//     (mark_dirty), runs setup_context with this level's tensors, and routes backward / jvp
//     to the user's. Because those run with the ops the user wrote, the levels outside see
//     them: grad of grad, jvp of grad, jacfwd of jacfwd all use the user's rules.
//   - vmap (vmap_rule.cc): the seed's decision table; see there.
//
// Invariants: FunctionCtx is per call and per level; saved tensors are the values of the
// level that saved them. A FunctionSpec outlives every graph node that uses it (shared_ptr).
#ifndef FT_CUSTOM_FUNCTION_CUSTOM_FUNCTION_CALL_H_
#define FT_CUSTOM_FUNCTION_CUSTOM_FUNCTION_CALL_H_

#include <any>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "dispatch/value.h"
#include "interpreters/vmap/vmap_interpreter.h"
#include "tensor/tensor.h"

namespace ft {

// VmapInfo: what a user vmap rule learns about the vmap level (torch's VmapInfo).
struct VmapInfo {
  int64_t batch_size;
  Randomness randomness;
};

// InDim: where one argument is batched at a vmap level. For a tensor it behaves like a
// std::optional<int64_t> (nullopt: not batched at this level, or not a tensor); for a
// TensorList argument `elements` has one such dim per element (torch's in_dims have the
// pytree structure of the arguments: `(0, [0, 0])` for `(x, [x, x])`).
struct InDim {
  InDim() = default;
  InDim(std::nullopt_t) {}                                  // NOLINT
  InDim(std::optional<int64_t> d) : dim(d) {}               // NOLINT
  InDim(int64_t d) : dim(d) {}                              // NOLINT
  InDim(int d) : dim(int64_t{d}) {}                         // NOLINT
  static InDim List(std::vector<std::optional<int64_t>> elements) {
    InDim d;
    d.is_list = true;
    d.elements = std::move(elements);
    return d;
  }

  bool has_value() const { return dim.has_value(); }
  explicit operator bool() const { return dim.has_value(); }
  int64_t operator*() const { return *dim; }
  operator std::optional<int64_t>() const { return dim; }  // NOLINT
  bool operator==(const InDim&) const = default;

  std::optional<int64_t> dim;
  bool is_list = false;
  std::vector<std::optional<int64_t>> elements;
};

// InDims / OutDims: one entry per argument / output.
using InDims = std::vector<InDim>;
using OutDims = std::vector<std::optional<int64_t>>;

// SavedTensors: what a ctx saved; a few tensors are kept inline (no allocation per call).
// An absl::InlinedVector whose operator[] checks the index: reading a tensor that was not
// saved (jvp reading saved_tensors()[0] when setup_context only called save_for_backward) is
// an ft::Error, "saved_tensors: index 0 is out of range, 0 tensors were saved ...", not a read
// past the end.
class SavedTensors : public absl::InlinedVector<Tensor, 4> {
 public:
  using absl::InlinedVector<Tensor, 4>::InlinedVector;
  const Tensor& operator[](size_t i) const {
    if (i >= size()) [[unlikely]] ThrowOutOfRange(i);
    return data()[i];
  }
  Tensor& operator[](size_t i) {
    if (i >= size()) [[unlikely]] ThrowOutOfRange(i);
    return data()[i];
  }

 private:
  [[noreturn, gnu::cold]] void ThrowOutOfRange(size_t i) const;
};

// FunctionCtx: what setup_context fills and backward / jvp read.
class FunctionCtx {
 public:
  // save_for_backward: the tensors backward reads back as saved_tensors().
  void save_for_backward(std::initializer_list<Tensor> tensors) { for_backward_ = tensors; }
  void save_for_backward(const TensorList& tensors) {
    for_backward_.assign(tensors.begin(), tensors.end());
  }
  void save_for_backward(SavedTensors tensors) { for_backward_ = std::move(tensors); }
  // save_for_forward: the tensors jvp reads back as saved_tensors().
  void save_for_forward(std::initializer_list<Tensor> tensors) { for_forward_ = tensors; }
  void save_for_forward(const TensorList& tensors) {
    for_forward_.assign(tensors.begin(), tensors.end());
  }
  void save_for_forward(SavedTensors tensors) { for_forward_ = std::move(tensors); }
  // saved_tensors: in backward, what save_for_backward saved; in jvp, what save_for_forward
  // saved (empty if nothing was). Index it like a list: ctx.saved_tensors()[0].
  const SavedTensors& saved_tensors() const;

  // mark_dirty: inputs forward modified in place and returned (as the same objects).
  void mark_dirty(TensorList tensors) { dirty_ = std::move(tensors); }
  // mark_non_differentiable: outputs that carry no gradient (e.g. indices).
  void mark_non_differentiable(TensorList tensors) { non_differentiable_ = std::move(tensors); }
  // set_materialize_grads(false): backward gets undefined tensors (not zeros) for outputs
  // that received no gradient.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  bool materialize_grads() const { return materialize_grads_; }
  // needs_input_grad(i): whether forward argument i carries a gradient at the level running
  // backward (false for non-tensors and constants).
  bool needs_input_grad(size_t i) const {
    return i < needs_input_grad_.size() && needs_input_grad_[i];
  }

  // set_materialize_tangents(false): jvp gets undefined tensors (not zeros) for floating
  // arguments that carry no tangent, the forward-mode counterpart of set_materialize_grads;
  // a jvp can then skip the terms of arguments that do not vary. Call it in setup_context.
  void set_materialize_tangents(bool value) { materialize_tangents_ = value; }
  bool materialize_tangents() const { return materialize_tangents_; }

  // state<T>(): user state of type T stored on the ctx (default-constructed on first use),
  // e.g. a shape setup_context records for backward (Python's `ctx.x_shape = ...`). One slot
  // per type; for two values of one type, name them.
  template <typename T>
  T& state() {
    return keyed_state<T>(nullptr);
  }
  // state<T>(name): named user state, one slot per name, so two shapes do not collide
  // (Python's `ctx.in_shape = ...; ctx.out_shape = ...`):
  //   ctx.state<Shape>("in_shape") = ...;   ctx.state<Shape>("out_shape") = ...;
  // The first use of a name fixes its type (default-constructed); asking for it later as
  // another type is an ft::Error naming the name and both types.
  template <typename T>
  T& state(std::string_view name) {
    if (named_state_ == nullptr) named_state_ = std::make_unique<NamedStateMap>();
    auto it = named_state_->find(name);
    if (it == named_state_->end()) {
      it = named_state_->emplace(std::string(name), std::any()).first;
      it->second.emplace<T>();
    }
    T* value = std::any_cast<T>(&it->second);
    if (value == nullptr) ThrowStateTypeMismatch(name, it->second.type(), typeid(T));
    return *value;
  }

  // ---- for the transforms' rules ----
  // keyed_state<T>(key): like state<T>() but one per key (the generated vmap rule keys its
  // records by its Vmapped spec, so nested Vmapped levels sharing a ctx keep theirs apart).
  template <typename T>
  T& keyed_state(const void* key) {
    // Allocated on first use: most contexts hold no state, and a call under vmap builds and
    // drops one per Function call.
    if (state_ == nullptr) state_ = std::make_unique<StateMap>();
    std::any& slot = (*state_)[{std::type_index(typeid(T)), key}];
    if (!slot.has_value()) slot.emplace<T>();
    return *std::any_cast<T>(&slot);
  }
  const SavedTensors& saved_for_backward() const { return for_backward_; }
  const SavedTensors& saved_for_forward() const { return for_forward_; }
  const TensorList& dirty() const { return dirty_; }
  const TensorList& non_differentiable() const { return non_differentiable_; }
  // Which list saved_tensors() returns while a rule runs backward or jvp; an override
  // replaces it (the generated vmap rule hands backward re-batched saved tensors).
  enum class Phase { kBackward, kForward };
  void set_phase(Phase phase) { phase_ = phase; }
  void set_saved_override(const SavedTensors* saved) { saved_override_ = saved; }
  const SavedTensors* saved_override() const { return saved_override_; }
  void set_needs_input_grad(std::vector<bool> needs) { needs_input_grad_ = std::move(needs); }

 private:
  SavedTensors for_backward_;
  SavedTensors for_forward_;
  TensorList dirty_;
  TensorList non_differentiable_;
  bool materialize_grads_ = true;
  bool materialize_tangents_ = true;
  std::vector<bool> needs_input_grad_;
  Phase phase_ = Phase::kBackward;
  const SavedTensors* saved_override_ = nullptr;
  // state<T>() and keyed_state<T>(key), by type and key (nullptr for state<T>()).
  using StateMap = std::map<std::pair<std::type_index, const void*>, std::any>;
  std::unique_ptr<StateMap> state_;
  // state<T>(name), by name.
  using NamedStateMap = std::map<std::string, std::any, std::less<>>;
  std::unique_ptr<NamedStateMap> named_state_;

  [[noreturn]] static void ThrowStateTypeMismatch(std::string_view name,
                                                  const std::type_info& held,
                                                  const std::type_info& asked);
};

// FunctionSpec: a Function with its types erased (boxed arguments and outputs). Built from a
// Function type by function.h, and by the transforms for the Functions they generate.
struct FunctionSpec {
  std::string name;
  size_t num_args = 0;
  std::function<ValueList(const ValueList& args)> forward;
  std::function<void(FunctionCtx& ctx, const ValueList& inputs, const ValueList& outputs)>
      setup_context;
  std::function<TensorList(FunctionCtx& ctx, const TensorList& grads)> backward;  // optional
  std::function<TensorList(FunctionCtx& ctx, const TensorList& tangents)> jvp;    // optional
  std::function<std::pair<ValueList, OutDims>(const VmapInfo& info, const InDims& in_dims,
                                              const ValueList& args)>
      vmap;  // optional
  // Optional: forward and setup_context together, for a call with no transform active (whose
  // ctx nobody reads afterwards). A generated Vmapped<Name> runs both under one vmap level.
  std::function<ValueList(const ValueList& args)> plain_apply;
  // Optional: forward, then setup_context on `ctx` with the same inputs and forward's outputs,
  // unboxing the arguments once and handing setup_context the typed outputs (function.h
  // sets it). Where present, it replaces the forward and setup_context pair.
  std::function<ValueList(FunctionCtx& ctx, const ValueList& args)> forward_with_context;
  bool generate_vmap_rule = false;
  bool once_differentiable = false;
  // For a generated Vmapped<Name>: where its forward left each output's batch dim.
  std::shared_ptr<const OutDims> setup_context_out_dims;
};

using FunctionSpecPtr = std::shared_ptr<const FunctionSpec>;

// CallCustomFunction: one call of the custom_function_call operator (NOTE above). `args` has
// one Value per forward argument, defaults filled.
ValueList CallCustomFunction(const FunctionSpecPtr& spec, ValueList& args);

}  // namespace ft

#endif  // FT_CUSTOM_FUNCTION_CUSTOM_FUNCTION_CALL_H_

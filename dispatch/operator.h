// ft/dispatch/operator.h
//
// Operator: one entry of the op table. It has a name, a schema (the kinds and names of its
// arguments and results, which argument an in-place op mutates, whether it draws random
// numbers), a boxed base kernel (the Eigen implementation in //tensor, run when no
// transform is active), and one rule slot per TransformType that the transform packages
// fill (vmap batching rules, derivative formulas, ...).
//
// OpRegistry owns every Operator. Ops are looked up by integer id (Operator::id()) or by the
// typed handle the public op functions hold; strings are used only to register and in
// messages. Built-in ops are registered by RegisterAllOps() (dispatch.h), an explicit call
// that the op functions make on their slow path and that code walking the registry makes
// first: registration never relies on static initializers surviving the linker.
//
// Invariants: operators are never removed or moved (pointers stay valid for the process);
// names are unique; rule slots are filled before the rules are used (registration happens at
// start-up, single-threaded; reading is lock-free afterwards).
//
// Example:
//   RegisterAllOps();
//   const Operator* sin = OpRegistry::Global().Find("sin");
//   sin->schema().args[0].name == "self";
//   sin->has_rule(TransformType::kVmap);   // true once //vmap_rules is registered
#ifndef FT_DISPATCH_OPERATOR_H_
#define FT_DISPATCH_OPERATOR_H_

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "dispatch/interpreter.h"
#include "dispatch/value.h"
#include "tensor/dtype.h"

namespace ft {

// ArgKind: what a schema argument or result holds. Optional kinds accept None.
enum class ArgKind : uint8_t {
  kTensor,
  kOptionalTensor,
  kTensorList,
  kScalar,
  kOptionalScalar,
  kInt,
  kOptionalInt,
  kDouble,
  kBool,
  kIntList,
  kDType,
  kGenerator,
  kOptionalDouble,
};

const char* ArgKindName(ArgKind kind);

struct ArgSpec {
  std::string name;
  ArgKind kind;
};

struct OpSchema {
  std::string name;
  std::vector<ArgSpec> args;
  std::vector<ArgKind> returns;
  // The argument an in-place op writes (and returns), if any.
  std::optional<int> mutated_arg;
  // Whether the op draws from a Generator (vmap's randomness setting applies).
  bool random = false;
  // An ordered effect (a collective, //distributed): ft::jit keeps every call, in order,
  // and never folds, reuses or drops one, whether or not its result is used.
  bool ordered_effect = false;
  // A collective over a named axis (dispatch/named_axes.h): the argument holding the axis
  // name's id (-1: not a collective), and whether its result is invariant over that axis
  // (psum, all_gather) or varies over it (psum_scatter, axis_index). The grad level reads
  // both (NOTE: [Gradients across named axes] in interpreters/grad/grad_interpreter.h).
  int axis_arg = -1;
  bool makes_invariant = false;
  // The dtypes the base kernel is written for: DispatchBoxed refuses a tensor argument, or
  // a DType argument (a factory's), of any other dtype with an ft::Error naming the op, the
  // argument and this set, before any transform or kernel sees it. Every op supports
  // kOriginalDTypes (float32, float64, int64, bool), and many refuse some of those in their
  // own checks (sin of a bool tensor); issue 43 adds the other dtypes op by op.
  DTypeSet dtypes = kOriginalDTypes;

  // ToString: e.g. "add_(Tensor self, Tensor other) -> Tensor  [mutates self]"; dtypes
  // other than the original four show as "[every dtype]" or "[dtypes: float32, ...]".
  std::string ToString() const;
};

// BoxedKernel runs an op on boxed arguments. Base kernels are generated from the typed
// kernel by dispatch.h (BoxKernel<Kernel>).
using BoxedKernel = ValueList (*)(ValueList& args);

// DirectKernel runs the same base kernel without boxing, for a caller that keeps its
// arguments apart (ft::jit's replay): argument i is *tensors[i] when it is a tensor
// (tensors[i] == nullptr for an absent optional tensor) and fixed[i] otherwise (fixed[i] of
// a tensor argument is not read). Result j is written to results[j]. dispatch.h generates
// one for every kernel without TensorList arguments or results (others have none). It
// saves building and destroying two ValueLists per call: a replayed 16x16 Jacobian of five
// kernels took 7% less time.
using DirectKernel = void (*)(const Value* fixed, const Tensor* const* tensors, Tensor* results);

// TransformRule: what a transform registers for an op. It receives the interpreter that is
// processing the call (on top of the stack) and the boxed arguments.
using TransformRule =
    std::function<ValueList(Interpreter& interpreter, const class Operator& op, ValueList& args)>;

class Operator {
 public:
  Operator(int id, OpSchema schema, BoxedKernel base_kernel, DirectKernel direct_kernel);

  int id() const { return id_; }
  const std::string& name() const { return schema_.name; }
  const OpSchema& schema() const { return schema_; }

  // CallBaseKernel runs the base kernel on boxed, dense arguments.
  ValueList CallBaseKernel(ValueList& args) const { return base_kernel_(args); }
  // direct_kernel: the unboxed entry to the same kernel (see DirectKernel), or nullptr.
  DirectKernel direct_kernel() const { return direct_kernel_; }

  // SetRule fills the slot for `transform` (replacing any previous rule).
  void SetRule(TransformType transform, TransformRule rule);
  bool has_rule(TransformType transform) const {
    return rules_[static_cast<int>(transform)] != nullptr;
  }
  // rule returns the rule or nullptr.
  const TransformRule* rule(TransformType transform) const {
    return rules_[static_cast<int>(transform)].get();
  }

 private:
  int id_;
  OpSchema schema_;
  BoxedKernel base_kernel_;
  DirectKernel direct_kernel_;
  std::array<std::unique_ptr<TransformRule>, kNumTransformTypes> rules_;
};

class OpRegistry {
 public:
  // Global returns the process-wide registry. Call RegisterAllOps() (dispatch.h) first to
  // see the built-in ops.
  static OpRegistry& Global();

  // Register adds an op; FT_CHECKs that the name is new. Returns the stable Operator.
  Operator& Register(OpSchema schema, BoxedKernel base_kernel,
                     DirectKernel direct_kernel = nullptr);

  // Find returns the op named `name` or nullptr. Get throws ft::Error for an unknown name.
  Operator* Find(absl::string_view name);
  Operator& Get(absl::string_view name);
  Operator& ById(int id) { return ops_[id]; }

  int size() const { return static_cast<int>(ops_.size()); }

  // is_builtin: registered by RegisterAllOps (ft's own op set), as opposed to an op a user
  // registered. Transforms give built-in ops real rules; a user op may fall back to a
  // slower generic rule (e.g. vmap's loop-and-stack fallback).
  bool is_builtin(const Operator& op) const { return op.id() < builtin_count_; }
  // MarkBuiltins: every op registered so far is built-in (called once by RegisterAllOps).
  void MarkBuiltins() { builtin_count_ = size(); }
  // ops: every operator in registration order (stable, for tables and completeness tests).
  std::vector<Operator*> ops();

 private:
  OpRegistry() = default;
  std::deque<Operator> ops_;
  int builtin_count_ = 0;
  absl::flat_hash_map<std::string, int> by_name_;
};

}  // namespace ft

#endif  // FT_DISPATCH_OPERATOR_H_

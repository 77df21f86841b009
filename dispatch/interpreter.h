// ft/dispatch/interpreter.h
//
// Interpreter: one active transform (vmap, grad, jvp, functionalize) at one level, and the
// thread-local LayerStack of them.
//
// Every op call asks the interpreter on top of the stack to Process it (dispatch.h). An
// interpreter unwraps the arguments wrapped at its own level, lowers itself (Lower() pops it
// for the duration of a scope), calls the op again so the levels below see it, and wraps the
// result at its level. With an empty stack the base kernel runs.
//
// NOTE: [Levels]
// Each transform call takes a fresh level from a per-thread counter that only grows, so an
// inner transform always has a higher level than the ones around it, and a level number is
// never reused: a wrapper whose level died can always be told apart from a live one.
// Liveness is also recorded in a flag the interpreter shares with its wrappers (is_alive()).
//
// Invariants: the stack is per thread; every change goes through an RAII guard with a
// noexcept destructor (InterpreterScope to enter a transform, LowerGuard to lower), so the
// stack is as it was after any exception. Depth is limited to kMaxDepth layers.
//
// Example (a transform's entry point):
//   auto interp = std::make_shared<MyInterpreter>(LayerStack::NewLevel());
//   InterpreterScope scope(interp.get());    // pushed, alive
//   ... run the user's function ...          // ops reach interp->Process
//   // scope's destructor pops and marks the level dead, also on exceptions
#ifndef FT_DISPATCH_INTERPRETER_H_
#define FT_DISPATCH_INTERPRETER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "dispatch/value.h"
#include "tensor/error.h"

namespace ft {

class Operator;

// TransformType names a kind of interpreter and the rule slot it uses in every Operator.
enum class TransformType : uint8_t { kVmap, kGrad, kJvp, kFunctionalize };
inline constexpr int kNumTransformTypes = 4;

// TransformTypeName: "Vmap", "Grad", "Jvp", "Functionalize" (DebugString's spelling).
// TransformName: "vmap", "grad", "jvp", "functionalize" (the user's spelling, for messages).
const char* TransformTypeName(TransformType t);
const char* TransformName(TransformType t);

class Interpreter {
 public:
  Interpreter(TransformType key, int64_t level);
  virtual ~Interpreter();

  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  TransformType key() const { return key_; }
  int64_t level() const { return level_; }

  // name: the public transform that made this level, as error messages name it (NOTE:
  // [Transform stack in errors] in tensor/error.h): "vjp", "jacrev", "jacfwd", ...; by default
  // the kind's TransformName ("vmap", "grad", "jvp", "functionalize"). set_name takes a
  // string that outlives the interpreter (a literal); call it before the level is entered.
  const char* name() const { return name_; }
  void set_name(const char* name) { name_ = name; }

  // is_alive is true from the first push to the final pop (InterpreterScope). Wrappers hold
  // alive_flag() to tell, after the transform returned, that their level is dead.
  bool is_alive() const { return *alive_; }
  const std::shared_ptr<const bool> alive_flag() const { return alive_; }

  // Process runs `op` on boxed `args` at this level and returns the boxed outputs. Called by
  // the dispatcher only while this interpreter is on top of the stack.
  virtual ValueList Process(const Operator& op, ValueList& args) = 0;

  // DebugString: e.g. "Vmap(level=1, batch_size=3)". Subclasses add their fields.
  virtual std::string DebugString() const;

  // A transform's entry point registers the storage of each input it differentiates: an
  // in-place write into one of them, or into a view of one, would modify the caller's
  // tensor, and the grad and jvp levels refuse it. AliasesInput(value) tells whether
  // `value` (through any wrapper layers) shares storage with such an input.
  void AddInputStorage(Storage storage) { input_storages_.push_back(std::move(storage)); }
  bool AliasesInput(const Tensor& value) const;

 private:
  friend class InterpreterScope;
  TransformType key_;
  int64_t level_;
  const char* name_;
  std::shared_ptr<bool> alive_;
  std::vector<Storage> input_storages_;
};

// LayerStack: the calling thread's stack of active interpreters (bottom = outermost).
class LayerStack {
 public:
  static constexpr int kMaxDepth = 64;

  // empty: no transform is active (or all are lowered). The fast path of every op.
  static bool empty();
  static int size();
  // Top: the innermost interpreter, or nullptr when empty.
  static Interpreter* Top();
  // At(i): layer i from the bottom.
  static Interpreter* At(int i);

  // Push and Pop are for the guards below; prefer them. Push throws ft::Error when the
  // depth would exceed kMaxDepth; Pop FT_CHECKs that the stack is not empty.
  static void Push(Interpreter* interpreter);
  static Interpreter* Pop();

  // NewLevel returns a level no transform on this thread has used (see NOTE: [Levels]).
  static int64_t NewLevel();

  // DebugString: e.g. "[Vmap(level=1, batch_size=3), Grad(level=2)]".
  static std::string DebugString();
};

// InterpreterScope pushes an interpreter and marks it alive; its destructor pops it and marks
// it dead. This is how a transform is entered. While it lives, every ft::Error raised on this
// thread names the level (its name() and level()) in its transform stack, also while the
// level is lowered (NOTE: [Transform stack in errors] in tensor/error.h). Throws like
// LayerStack::Push.
class InterpreterScope {
 public:
  explicit InterpreterScope(Interpreter* interpreter);
  ~InterpreterScope();
  InterpreterScope(const InterpreterScope&) = delete;
  InterpreterScope& operator=(const InterpreterScope&) = delete;

 private:
  Interpreter* interpreter_;
  ErrorContextScope context_;  // entered once the push succeeded
};

// LowerGuard pops `interpreter` (which must be on top: FT_CHECK) and pushes it back when the
// guard dies, exceptions included. Inside, ops are seen by the levels below.
class LowerGuard {
 public:
  explicit LowerGuard(Interpreter* interpreter);
  ~LowerGuard();
  LowerGuard(const LowerGuard&) = delete;
  LowerGuard& operator=(const LowerGuard&) = delete;

 private:
  Interpreter* interpreter_;
};

// ExcludeAllGuard empties the stack for a scope (every layer popped, restored after). Used
// where work must run on plain tensors whatever transforms are active.
class ExcludeAllGuard {
 public:
  ExcludeAllGuard();
  ~ExcludeAllGuard();
  ExcludeAllGuard(const ExcludeAllGuard&) = delete;
  ExcludeAllGuard& operator=(const ExcludeAllGuard&) = delete;

 private:
  Interpreter* saved_[LayerStack::kMaxDepth];
  int depth_;
};

// LowerBelowGuard pops, for a scope, every layer whose level is `level` or higher (the
// interpreter of that level and every transform entered inside it) and restores them after,
// exceptions included. Work on the values a wrapper of `level` holds (one level down) runs
// inside it wherever the wrapper is met, even under transforms nested inside its own:
// functionalize regenerates a stale view this way. With no such layer it changes nothing.
class LowerBelowGuard {
 public:
  explicit LowerBelowGuard(int64_t level);
  ~LowerBelowGuard();
  LowerBelowGuard(const LowerBelowGuard&) = delete;
  LowerBelowGuard& operator=(const LowerBelowGuard&) = delete;

 private:
  Interpreter* saved_[LayerStack::kMaxDepth];
  int depth_;  // the depth before the guard
  int kept_;   // the layers below `level`, which stay
};

// CheckDefined: a transform's entry point refuses undefined (default-constructed) tensors
// among the tensors it is given or its function returns, naming the transform, the role and
// the position: "vmap: argument 1 is an undefined tensor (a default-constructed ft::Tensor)",
// "grad: output 0 of f is ...". The ValueList form looks into TensorList values too
// ("argument 2, element 0"); other values are not tensors and pass.
void CheckDefined(absl::string_view transform, absl::string_view role,
                  absl::Span<const Tensor> tensors);
void CheckDefined(absl::string_view transform, absl::string_view role, const ValueList& values);

namespace internal {
// The stack's storage: trivially initialized thread-locals so LayerStack::empty() is one
// TLS load (no lazy-init wrapper).
extern constinit thread_local int tls_layer_depth;
// How many lowering guards (LowerGuard, LowerBelowGuard, ExcludeAllGuard) are active: an op
// issued at some depth with the count unchanged is the code's own, not one an interpreter
// passed down from a level above (dispatch.h's DispatchArgumentHook tells them apart so).
extern constinit thread_local int tls_lowerings;
}  // namespace internal

inline bool LayerStack::empty() { return internal::tls_layer_depth == 0; }
inline int LayerStack::size() { return internal::tls_layer_depth; }

}  // namespace ft

#endif  // FT_DISPATCH_INTERPRETER_H_

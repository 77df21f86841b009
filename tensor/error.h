// ft/tensor/error.h
//
// Error: the one exception type ft throws for misuse (bad shapes, dims, dtypes, transform
// misuse). FT_CHECK: the internal-invariant check that aborts; it is never used on user input.
// ErrorContextScope: names, for a scope, an active transform in every Error raised inside it.
//
// Invariant: every message starts with the name of the op or transform that rejected the
// input, then gives the shapes, dims, dtypes or levels involved, e.g.
//   "matmul: size mismatch, got [2, 3] @ [4, 5]: dim 1 of the first (3) must equal dim 0 of
//    the second (4)".
// Raised while transforms are active, the message ends with the stack of them, innermost
// first (NOTE: [Transform stack in errors]):
//   "mm: size mismatch, got [2, 3] @ [4, 5]: ... (in vmap (level 2) inside grad (level 1))".
//
// Example:
//   try { ft::neg(ft::ones({2}, ft::kBool)); }
//   catch (const ft::Error& e) { std::cerr << e.what(); }  // "neg: not supported for bool ..."
#ifndef FT_TENSOR_ERROR_H_
#define FT_TENSOR_ERROR_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ft {

namespace internal {
[[noreturn]] inline void CheckFailed(const char* cond, const char* file, int line) {
  std::fprintf(stderr, "FT_CHECK failed: %s at %s:%d\n", cond, file, line);
  std::abort();
}
}  // namespace internal

}  // namespace ft

// FT_CHECK(cond) aborts with the condition's text when an internal invariant is broken.
// User input is validated with ThrowError instead.
#define FT_CHECK(cond)                                              \
  do {                                                              \
    if (__builtin_expect(!(cond), 0)) {                             \
      ::ft::internal::CheckFailed(#cond, __FILE__, __LINE__);       \
    }                                                               \
  } while (0)

namespace ft {

// NOTE: [Transform stack in errors]
// An Error raised while transforms are active names all of them after its own words, from
// the innermost to the outermost: "... (in vmap (level 2) inside grad (level 1))". Each
// active transform is an ErrorContextScope on a per-thread chain: InterpreterScope holds one
// for the level it pushes (named after the public transform that made the level: "vmap",
// "grad", "vjp", "jacrev", "jvp", "jacfwd", "linearize", "functionalize"), and the backward
// of a grad transform, which runs after its level was popped (in grad, or in a vjp_fn called
// later), holds one of phase kBackward ("the backward of vjp (level 1)"). The Error's
// constructor appends the chain, so:
// - the stack is named once, where the error is raised, whatever catches and rethrows it on
//   the way out (`throw;` keeps the object, its message and its derived type);
// - it names every transform that was entered, also the levels lowered at that moment (a
//   batching rule runs with its vmap level popped, a kernel with every level popped): the
//   chain changes only when a transform is entered or left, never when a level is lowered;
// - nothing is built unless an Error is made: entering a scope is two thread-local stores.
// An Error that restates another (a rename adding the op's name) is built from the other's
// message() and gets the same stack again, once. With no transform active nothing is added.
class ErrorContextScope {
 public:
  enum class Phase : uint8_t {
    kRunning,   // "vmap (level 2)": the transform's function runs
    kBackward,  // "the backward of vjp (level 1)": its backward runs (the level is popped)
  };

  // `transform` must outlive the scope (a string literal); `level` is the transform's level.
  ErrorContextScope(const char* transform, int64_t level, Phase phase = Phase::kRunning) noexcept;
  ~ErrorContextScope();
  ErrorContextScope(const ErrorContextScope&) = delete;
  ErrorContextScope& operator=(const ErrorContextScope&) = delete;

  // Describe: the calling thread's chain, innermost first, as Error appends it:
  // " (in vmap (level 2) inside grad (level 1))"; empty when no scope is active. Past 16
  // scopes, the 8 innermost and 8 outermost are named and the others counted ("inside 48
  // more").
  static std::string Describe();

 private:
  const char* transform_;
  int64_t level_;
  Phase phase_;
  const ErrorContextScope* outer_;
};

namespace internal {
// The innermost ErrorContextScope of the calling thread (null: none).
extern constinit thread_local const ErrorContextScope* tls_error_context;
}  // namespace internal

inline ErrorContextScope::ErrorContextScope(const char* transform, int64_t level,
                                            Phase phase) noexcept
    : transform_(transform), level_(level), phase_(phase), outer_(internal::tls_error_context) {
  internal::tls_error_context = this;
}

inline ErrorContextScope::~ErrorContextScope() {
  FT_CHECK(internal::tls_error_context == this);  // scopes nest
  internal::tls_error_context = outer_;
}

// Error is thrown for every user-facing failure. It derives from std::runtime_error so
// generic handlers catch it. what() is message() followed by transform_stack().
class Error : public std::runtime_error {
 public:
  // Error: `message` must start with the op or transform name. The active transforms, if
  // any, are appended (NOTE: [Transform stack in errors]).
  explicit Error(const std::string& message) : Error(message, ErrorContextScope::Describe()) {}

  // message: the op's or transform's own words, without the transform stack.
  absl::string_view message() const { return absl::string_view(what(), message_size_); }
  // transform_stack: " (in vmap (level 2) inside grad (level 1))", or empty when the error was
  // raised with no transform active.
  absl::string_view transform_stack() const {
    return absl::string_view(what()).substr(message_size_);
  }

 private:
  Error(const std::string& message, const std::string& stack)
      : std::runtime_error(message + stack), message_size_(message.size()) {}
  size_t message_size_;
};

// AllocationError: a tensor's memory could not be had: its element or byte count overflows,
// or the machine cannot satisfy the request. Thrown by the allocation itself (which knows the
// shape, dtype and bytes, not the op); the dispatcher and the factories catch it and throw an
// AllocationError whose message starts with the op's name, as every ft::Error does.
class AllocationError : public Error {
 public:
  explicit AllocationError(const std::string& message) : Error(message) {}
};

// ThrowError builds the message with absl::StrCat and throws an ft::Error.
template <typename... Args>
[[noreturn]] void ThrowError(const Args&... args) {
  throw Error(absl::StrCat(args...));
}

}  // namespace ft

#endif  // FT_TENSOR_ERROR_H_

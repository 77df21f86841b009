// ft/tensor/error.h
//
// Error: the one exception type ft throws for misuse (bad shapes, dims, dtypes, transform
// misuse). FT_CHECK: the internal-invariant check that aborts; it is never used on user input.
//
// Invariant: every message starts with the name of the op or transform that rejected the
// input, then gives the shapes, dims, dtypes or levels involved, e.g.
//   "matmul: size mismatch, got [2, 3] @ [4, 5]: dim 1 of the first (3) must equal dim 0 of
//    the second (4)".
//
// Example:
//   try { ft::sin(ft::ones({2}, ft::kBool)); }
//   catch (const ft::Error& e) { std::cerr << e.what(); }  // "sin: expected a floating ..."
#ifndef FT_TENSOR_ERROR_H_
#define FT_TENSOR_ERROR_H_

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ft {

// Error is thrown for every user-facing failure. It derives from std::runtime_error so
// generic handlers catch it.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// ThrowError builds the message with absl::StrCat and throws an ft::Error.
template <typename... Args>
[[noreturn]] void ThrowError(const Args&... args) {
  throw Error(absl::StrCat(args...));
}

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

#endif  // FT_TENSOR_ERROR_H_

#include "tensor/error.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace ft {
namespace internal {
constinit thread_local const ErrorContextScope* tls_error_context = nullptr;
}  // namespace internal

std::string ErrorContextScope::Describe() {
  // A stack deeper than kShown names its kShown / 2 innermost and outermost scopes and counts
  // the ones between (a depth error names 64 levels otherwise).
  constexpr int kShown = 16;
  int depth = 0;
  for (const ErrorContextScope* s = internal::tls_error_context; s != nullptr; s = s->outer_) {
    ++depth;
  }
  std::string out;
  int i = 0;
  for (const ErrorContextScope* s = internal::tls_error_context; s != nullptr;
       s = s->outer_, ++i) {
    if (depth > kShown && i >= kShown / 2 && i < depth - kShown / 2) {
      if (i == kShown / 2) absl::StrAppend(&out, " inside ", depth - kShown, " more");
      continue;
    }
    absl::StrAppend(&out, i == 0 ? " (in " : " inside ",
                    s->phase_ == Phase::kBackward ? "the backward of " : "", s->transform_,
                    " (level ", s->level_, ")");
  }
  if (!out.empty()) out += ")";
  return out;
}

}  // namespace ft

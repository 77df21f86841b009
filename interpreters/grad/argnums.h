// ft/interpreters/grad/argnums.h  (internal to the transforms' entry points)
//
// argnums handling shared by grad, jacrev, jacfwd and hessian: validation (range, repeats,
// negative numbers wrap) and reordering results into the caller's argnums order.
#ifndef FT_INTERPRETERS_GRAD_ARGNUMS_H_
#define FT_INTERPRETERS_GRAD_ARGNUMS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/factories.h"
#include "tensor/tensor.h"

namespace ft::internal {

// ArgMask validates argnums (range, repeats) for `n` arguments and returns which arguments
// are differentiated plus argnums wrapped to non-negative, in the caller's order.
inline std::pair<std::vector<bool>, std::vector<int64_t>> ArgMask(const char* api,
                                                           const std::vector<int64_t>& argnums,
                                                           size_t n_args) {
  if (argnums.empty()) ThrowError(api, ": argnums must name at least one argument");
  const int64_t n = static_cast<int64_t>(n_args);
  std::vector<bool> wrap(n_args, false);
  std::vector<int64_t> order;
  for (int64_t a : argnums) {
    if (a < -n || a >= n) {
      ThrowError(api, ": argnums ", a, " is out of range for a function of ", n,
                 " arguments (expected -", n, " <= argnum < ", n, ")");
    }
    const int64_t w = a < 0 ? a + n : a;
    if (wrap[static_cast<size_t>(w)]) ThrowError(api, ": argnums contains ", w, " twice");
    wrap[static_cast<size_t>(w)] = true;
    order.push_back(w);
  }
  return {wrap, order};
}

// InArgnumsOrder maps gradients (one per wrapped argument, in argument order) to argnums order,
// filling zeros for arguments no gradient reached.
inline TensorList InArgnumsOrder(const TensorList& grads, const std::vector<bool>& wrap,
                          const std::vector<int64_t>& order, const TensorList& args) {
  TensorList by_arg(args.size());
  size_t k = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!wrap[i]) continue;
    by_arg[i] = grads[k].defined() ? grads[k] : zeros_like(args[i]);
    ++k;
  }
  TensorList result;
  for (int64_t w : order) result.push_back(by_arg[static_cast<size_t>(w)]);
  return result;
}

}  // namespace ft::internal

#endif  // FT_INTERPRETERS_GRAD_ARGNUMS_H_

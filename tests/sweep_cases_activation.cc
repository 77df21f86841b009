// Transforms-sweep entries (tests/sweep_cases.h): activations. One entry per op (the sweep
// names its tests by op), each summing the op's argument modes and both sides of its kinks,
// with the arguments drawn away from the kinks (0 for the relu-like ops, the hardtanh bounds,
// +-3 for the hard ones, softplus's threshold) and inside the special functions' domains.
#include "ops/ops.h"
#include "tests/sweep_cases.h"

namespace ft::sweep {

std::vector<OpCase> ActivationCases() {
  using L = const TensorList&;
  return {
      {"gelu", [](L a) { return gelu(a[0]) + gelu(a[0], "tanh"); }, {{{3, 4}, -2.0, 2.0}}},
      {"silu", [](L a) { return silu(a[0]); }, {{{3, 4}, -3.0, 3.0}}},
      {"mish", [](L a) { return mish(a[0]); }, {{{3, 4}, -3.0, 3.0}}},
      // beta x in [-2, 2] (the log1p branch) and in [4, 8] (past the threshold 3).
      {"softplus",
       [](L a) {
         return softplus(a[0]) + softplus(a[0], 2.0, 3.0) + softplus(a[0] + 3.0, 2.0, 3.0);
       },
       {{{3, 4}, -1.0, 1.0}}},
      {"elu", [](L a) { return elu(a[0], 0.5) + elu(neg(a[0])); }, {{{3, 4}, 0.1, 2.0}}},
      {"selu", [](L a) { return selu(a[0]) + selu(neg(a[0])); }, {{{3, 4}, 0.1, 2.0}}},
      {"celu", [](L a) { return celu(a[0], 2.0) + celu(neg(a[0])); }, {{{3, 4}, 0.1, 2.0}}},
      {"leaky_relu",
       [](L a) { return leaky_relu(a[0], 0.2) + leaky_relu(neg(a[0])); },
       {{{3, 4}, 0.1, 2.0}}},
      {"hardtanh",
       [](L a) { return hardtanh(a[0], -0.5, 0.5) + hardtanh(a[0] + 2.0) + hardtanh(neg(a[0])); },
       {{{3, 4}, -0.4, 0.4}}},
      {"hardswish",
       [](L a) { return hardswish(a[0]) + hardswish(a[0] + 5.0) + hardswish(a[0] - 5.0); },
       {{{3, 4}, -1.5, 1.5}}},
      {"hardsigmoid",
       [](L a) { return hardsigmoid(a[0]) + hardsigmoid(a[0] + 5.0) + hardsigmoid(a[0] - 5.0); },
       {{{3, 4}, -1.5, 1.5}}},
      {"logsigmoid", [](L a) { return logsigmoid(a[0]); }, {{{3, 4}, -3.0, 3.0}}},
      {"softsign",
       [](L a) { return softsign(a[0]) + softsign(neg(a[0]) * 2.0); },
       {{{3, 4}, 0.1, 2.0}}},
      {"erf", [](L a) { return erf(a[0]); }, {{{3, 4}, -2.0, 2.0}}},
      {"erfc", [](L a) { return erfc(a[0]); }, {{{3, 4}, -2.0, 2.0}}},
      {"erfinv", [](L a) { return erfinv(a[0]); }, {{{3, 4}, -0.9, 0.9}}},
      {"lgamma", [](L a) { return lgamma(a[0]); }, {{{3, 4}, 0.5, 3.0}}},
      {"digamma", [](L a) { return digamma(a[0]); }, {{{3, 4}, 0.5, 3.0}}},
      // n = 0 (digamma), 1 and 2, the last at negative x between the poles -2 and -1.
      {"polygamma",
       [](L a) { return polygamma(0, a[0]) + polygamma(1, a[0]) + polygamma(2, a[0] - 2.3); },
       {{{3, 4}, 0.5, 0.9}}},
  };
}

}  // namespace ft::sweep

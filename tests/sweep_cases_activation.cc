// Transforms-sweep entries (tests/sweep_cases.h): activations.
#include "dispatch/ops.h"
#include "tests/sweep_cases.h"

namespace ft::sweep {

std::vector<OpCase> ActivationCases() { return {}; }

}  // namespace ft::sweep

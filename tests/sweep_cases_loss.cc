// Transforms-sweep entries (tests/sweep_cases.h): losses.
#include "dispatch/ops.h"
#include "tests/sweep_cases.h"

namespace ft::sweep {

std::vector<OpCase> LossCases() { return {}; }

}  // namespace ft::sweep

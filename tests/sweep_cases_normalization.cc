// Transforms-sweep entries (tests/sweep_cases.h): normalization.
#include "dispatch/ops.h"
#include "tests/sweep_cases.h"

namespace ft::sweep {

std::vector<OpCase> NormalizationCases() { return {}; }

}  // namespace ft::sweep

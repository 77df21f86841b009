// Transforms-sweep entries (tests/sweep_cases.h): attention and contractions.
#include "dispatch/ops.h"
#include "tests/sweep_cases.h"

namespace ft::sweep {

std::vector<OpCase> AttentionCases() { return {}; }

}  // namespace ft::sweep

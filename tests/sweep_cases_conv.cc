// Transforms-sweep entries (tests/sweep_cases.h): convolution and pooling.
#include "dispatch/ops.h"
#include "tests/sweep_cases.h"

namespace ft::sweep {

std::vector<OpCase> ConvCases() { return {}; }

}  // namespace ft::sweep

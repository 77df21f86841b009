// Transforms-sweep entries (tests/sweep_cases.h): indexing and shape ops for models.
#include "dispatch/ops.h"
#include "tests/sweep_cases.h"

namespace ft::sweep {

std::vector<OpCase> NnIndexingCases() { return {}; }

}  // namespace ft::sweep

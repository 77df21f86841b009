// vjp and jvp formulas: indexing and shape ops for models (embedding, masked_fill, index_add, index_put, tril, triu, roll, pixel_shuffle, interpolate).
#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "dispatch/ops.h"

namespace ft::autograd {

void RegisterNnIndexingFormulas() {}

}  // namespace ft::autograd

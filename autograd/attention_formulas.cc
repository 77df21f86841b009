// vjp and jvp formulas: attention and contractions (scaled_dot_product_attention, baddbmm, addmm, einsum).
#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "dispatch/ops.h"

namespace ft::autograd {

void RegisterAttentionFormulas() {}

}  // namespace ft::autograd

// vjp and jvp formulas: losses (cross_entropy, nll_loss, mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy, binary_cross_entropy_with_logits, kl_div).
#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "dispatch/ops.h"

namespace ft::autograd {

void RegisterLossFormulas() {}

}  // namespace ft::autograd

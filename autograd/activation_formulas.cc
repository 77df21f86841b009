// vjp and jvp formulas: activations (gelu, silu, mish, softplus, elu, selu, celu, leaky_relu, hardtanh, hardswish, hardsigmoid, logsigmoid, softsign, erf, erfc, erfinv, lgamma, digamma).
#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "dispatch/ops.h"

namespace ft::autograd {

void RegisterActivationFormulas() {}

}  // namespace ft::autograd

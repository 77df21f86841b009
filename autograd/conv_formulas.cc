// vjp and jvp formulas: convolution and pooling (conv1d/2d/3d, conv_transpose1d/2d, unfold, fold, max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d, adaptive_max_pool2d).
#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "dispatch/ops.h"

namespace ft::autograd {

void RegisterConvFormulas() {}

}  // namespace ft::autograd

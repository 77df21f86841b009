// vjp and jvp formulas: normalization (layer_norm, group_norm, batch_norm, instance_norm, rms_norm, normalize).
#include "autograd/formula_util.h"
#include "autograd/formulas.h"
#include "dispatch/ops.h"

namespace ft::autograd {

void RegisterNormalizationFormulas() {}

}  // namespace ft::autograd

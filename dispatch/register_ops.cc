// RegisterBuiltinOps: the one list of op families. A family added to the tree is added here.
#include "dispatch/activation_ops.h"
#include "dispatch/attention_ops.h"
#include "dispatch/binary_ops.h"
#include "dispatch/conv_ops.h"
#include "dispatch/dispatch.h"
#include "dispatch/index_ops.h"
#include "dispatch/linalg_ops.h"
#include "dispatch/loss_ops.h"
#include "dispatch/nn_indexing_ops.h"
#include "dispatch/normalization_ops.h"
#include "dispatch/random_ops.h"
#include "dispatch/reduction_ops.h"
#include "dispatch/sort_ops.h"
#include "dispatch/unary_ops.h"
#include "dispatch/view_ops.h"

namespace ft {

void RegisterBuiltinOps(OpRegistry& registry) {
  RegisterUnaryOps(registry);
  RegisterBinaryOps(registry);
  RegisterReductionOps(registry);
  RegisterViewOps(registry);
  RegisterIndexOps(registry);
  RegisterLinalgOps(registry);
  RegisterSortOps(registry);
  RegisterRandomOps(registry);
  // The model families (issue 21).
  RegisterActivationOps(registry);
  RegisterLossOps(registry);
  RegisterNormalizationOps(registry);
  RegisterNnIndexingOps(registry);
  RegisterConvOps(registry);
  RegisterAttentionOps(registry);
}

}  // namespace ft

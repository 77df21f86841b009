// RegisterBuiltinOps: the one list of op families. A family added to the tree is added here.
#include "dispatch/binary_ops.h"
#include "dispatch/dispatch.h"
#include "dispatch/index_ops.h"
#include "dispatch/linalg_ops.h"
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
}

}  // namespace ft

// RegisterAllOps (declared in dispatch/dispatch.h, which the op table's machinery calls on
// first use) and the one list of op families it registers. A family added to the tree is
// added here.
#include <mutex>

#include "dispatch/dispatch.h"
#include "dispatch/operator.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/binary.h"
#include "ops/conv.h"
#include "ops/index.h"
#include "ops/linalg.h"
#include "ops/loss.h"
#include "ops/nn_indexing.h"
#include "ops/normalization.h"
#include "ops/random.h"
#include "ops/reduction.h"
#include "ops/sort.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace ft {
namespace {

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

}  // namespace

void RegisterAllOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterBuiltinOps(OpRegistry::Global());
    OpRegistry::Global().MarkBuiltins();
  });
}

}  // namespace ft

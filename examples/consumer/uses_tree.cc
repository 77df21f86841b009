// trees alone (@ft//tree, @ft//tree:transforms, @ft//tree:optim): a struct of parameters
// through grad, one SGD step over it, against the closed form.
#include "check.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tree/optim.h"
#include "tree/transforms.h"
#include "tree/tree.h"

struct Line {
  ft::Tensor slope, intercept;
};
FT_TREE(Line, slope, intercept);

ft::Tensor SquaredError(const Line& p, const ft::Tensor& x, const ft::Tensor& y) {
  ft::Tensor d = p.slope * x + p.intercept - y;
  return d * d;
}

int main() {
  const Line p{ft::full({}, 2.0, ft::kFloat64), ft::full({}, 1.0, ft::kFloat64)};
  const ft::Tensor x = ft::full({}, 3.0, ft::kFloat64), y = ft::full({}, 4.0, ft::kFloat64);
  // d = 2 * 3 + 1 - 4 = 3: d/dslope = 2 d x = 18, d/dintercept = 2 d = 6.
  const Line g = ft::grad(&SquaredError)(p, x, y);
  CHECK_NEAR(g.slope.item<double>(), 18.0, 1e-12);
  CHECK_NEAR(g.intercept.item<double>(), 6.0, 1e-12);
  const ft::optim::Sgd sgd{.lr = 0.1};
  auto [updates, state] = sgd.update(g, sgd.init(p), p);
  const Line next = ft::optim::apply_updates(p, updates);
  CHECK_NEAR(next.slope.item<double>(), 2.0 - 1.8, 1e-12);
  CHECK_NEAR(next.intercept.item<double>(), 1.0 - 0.6, 1e-12);
  return Finish("uses_tree");
}

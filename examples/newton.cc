// newton: L2-regularized logistic regression minimized by Newton's method, with the Hessian
// from ft::hessian and the step from ft::linalg_solve.
//   ./bazelw run //examples:newton
// The loss is smooth and strongly convex, so Newton's method converges quadratically: the
// gradient norm falls from ~1e-1 to ~1e-15 in a handful of steps. The result is checked
// against a long run of plain gradient descent from the same start (a different algorithm,
// using only grad), and the Hessian against its closed form X^T diag(p (1 - p)) X / n + lam I.
// Exits non-zero when Newton does not converge or the two minimizers disagree.
#include <cmath>
#include <cstdio>

#include "ft.h"

namespace {

constexpr int64_t kSamples = 400, kFeatures = 5;
constexpr double kLambda = 0.1;

// loss(w) = mean_i log(1 + exp(-y_i x_i . w)) + lam / 2 |w|^2, labels y_i in {-1, +1}.
ft::Tensor Loss(const ft::Tensor& w, const ft::Tensor& x, const ft::Tensor& y) {
  const ft::Tensor margins = y * ft::matmul(x, w);
  return ft::mean(ft::log1p(ft::exp(ft::neg(margins)))) + ft::sum(ft::square(w)) * (kLambda / 2);
}

double Norm(const ft::Tensor& v) { return ft::norm(v).item<double>(); }

}  // namespace

int main() {
  ft::Generator gen(11);
  // Data from a known separating direction, with label noise so the minimizer is finite.
  const ft::Tensor x = ft::to(ft::randn_like(ft::zeros({kSamples, kFeatures}), &gen), ft::kFloat64);
  const ft::Tensor truth = ft::tensor({1.5, -2.0, 0.5, 0.0, 1.0});
  const ft::Tensor noise = ft::to(ft::randn_like(ft::zeros({kSamples}), &gen), ft::kFloat64);
  const ft::Tensor y = ft::where(ft::gt(ft::matmul(x, truth) + noise, 0.0),
                                     ft::ones({kSamples}, ft::kFloat64), -1.0);

  // grad and hessian of Loss with respect to its first argument, w; x and y ride along.
  const auto gradient = ft::grad(&Loss);  // (w, x, y) -> d loss / d w, [features]
  const auto hess = ft::hessian(&Loss);   // (w, x, y) -> d2 loss / d w2, [features, features]

  // Newton: w <- w - H^{-1} g, the step solved, never an explicit inverse.
  ft::Tensor w = ft::zeros({kFeatures}, ft::kFloat64);
  std::printf("Newton's method on regularized logistic regression (%lld samples, %lld features)\n",
              static_cast<long long>(kSamples), static_cast<long long>(kFeatures));
  int iterations = 0;
  double gnorm = Norm(gradient(w, x, y));
  std::printf("  iter 0: loss %.12f, |grad| %.3e\n", Loss(w, x, y).item<double>(), gnorm);
  while (gnorm > 1e-12 && iterations < 20) {
    const ft::Tensor g = gradient(w, x, y);
    const ft::Tensor h = hess(w, x, y);
    w = w - ft::linalg_solve(h, g);
    ++iterations;
    gnorm = Norm(gradient(w, x, y));
    std::printf("  iter %d: loss %.12f, |grad| %.3e\n", iterations, Loss(w, x, y).item<double>(),
                gnorm);
  }
  bool ok = gnorm <= 1e-12 && iterations <= 10;

  // The Hessian at the minimizer against its closed form.
  const ft::Tensor p = ft::sigmoid(ft::matmul(x, w));  // P(y = +1 | x) at w
  const ft::Tensor closed = ft::matmul(ft::transpose(x, 0, 1) * (p * (1.0 - p)), x) / kSamples +
                            ft::eye(kFeatures, ft::kFloat64) * kLambda;
  const double hessian_gap = ft::amax(ft::abs(hess(w, x, y) - closed)).item<double>();
  std::printf("hessian vs X^T diag(p(1-p)) X / n + lam I: max |diff| = %.1e\n", hessian_gap);
  ok = ok && hessian_gap < 1e-12;

  // Gradient descent with step 1/L, where L = |X|_F^2 / 4n + lam bounds the Hessian's
  // largest eigenvalue (p (1 - p) <= 1/4, and the Frobenius norm bounds the spectral one).
  const double lipschitz = std::pow(Norm(x), 2) / (4.0 * kSamples) + kLambda;
  ft::Tensor v = ft::zeros({kFeatures}, ft::kFloat64);
  int gd_steps = 0;
  while (Norm(gradient(v, x, y)) > 1e-10 && gd_steps < 100000) {
    v = v - gradient(v, x, y) / lipschitz;
    ++gd_steps;
  }
  const double gap = ft::amax(ft::abs(w - v)).item<double>();
  std::printf("gradient descent: %d steps to |grad| < 1e-10; max |w_newton - w_gd| = %.1e\n",
              gd_steps, gap);
  std::printf("minimizer w = %s\n", ft::ToString(w).c_str());
  ok = ok && gap < 1e-8;
  if (!ok) {
    std::printf("FAILED\n");
    return 1;
  }
  return 0;
}

// ode_while_loop: an adaptive-step ODE integrator written with ft::while_loop, differentiated
// through its data-dependent number of steps, per example.
//   ./bazelw run //examples:ode_while_loop
//
// dy/dt = -k y + sin(t), y(0) = y0, integrated to t = T by Heun's method with an embedded
// Euler step for the error estimate: a step is accepted when the two agree within `tol`, and
// the next step size follows the error. How many steps that takes depends on k, so the loop
// is a while_loop; grad differentiates the steps it actually took. The program checks the
// gradient d y(T) / dk against (1) central finite differences of the same integrator and
// (2) the exact solution's derivative, and (3) that vmap(grad) over several k, whose trip
// counts differ, equals a loop of single gradients. It exits non-zero otherwise.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <utility>

#include "ft.h"

namespace {

constexpr double kEnd = 2.0, kTol = 1e-4;

ft::Tensor Rhs(const ft::Tensor& t, const ft::Tensor& y, const ft::Tensor& k) {
  return ft::neg(k * y) + ft::sin(t);
}

// The integrator's state, while_loop's carry: the time t, y(t), the next step size h
// (float64 scalars) and the number of steps tried so far (int64).
struct State {
  ft::Tensor t, y, h, steps;
};
FT_TREE(State, t, y, h, steps);

// One step of size s.h from s, accepted (t and y advance) or not; the next size follows the
// error either way.
State Step(const State& s, const ft::Tensor& k) {
  ft::Tensor k1 = Rhs(s.t, s.y, k);
  ft::Tensor euler = s.y + s.h * k1;
  ft::Tensor heun = s.y + s.h * 0.5 * (k1 + Rhs(s.t + s.h, euler, k));
  ft::Tensor err = ft::abs(heun - euler) + 1e-300;
  ft::Tensor accept = ft::le(err, kTol);
  ft::Tensor t_next = ft::where(accept, s.t + s.h, s.t);
  ft::Tensor factor = ft::clamp(ft::sqrt(kTol / err) * 0.9, 0.2, 5.0);
  return {.t = t_next,
          .y = ft::where(accept, heun, s.y),
          .h = ft::minimum(s.h * factor, kEnd - t_next),
          .steps = s.steps + 1};
}

// Integrates from y0 at t = 0 to kEnd; the final state holds y(kEnd) and the steps tried.
State Integrate(const ft::Tensor& k, const ft::Tensor& y0) {
  const State start{.t = ft::zeros({}, ft::kFloat64),
                    .y = y0,
                    .h = ft::full({}, 0.01, ft::kFloat64),
                    .steps = ft::zeros({}, ft::kInt64)};
  return ft::while_loop([](const State& s) { return ft::lt(s.t, kEnd - 1e-12); },
                        [&k](const State& s) { return Step(s, k); }, start);
}

// The exact y(kEnd): y0 e^{-kT} + (k sin T - cos T + e^{-kT}) / (k^2 + 1).
ft::Tensor Exact(const ft::Tensor& k, const ft::Tensor& y0) {
  ft::Tensor decay = ft::exp(k * -kEnd);
  return y0 * decay + (k * std::sin(kEnd) - std::cos(kEnd) + decay) / (k * k + 1.0);
}

}  // namespace

int main() {
  const ft::Tensor y0 = ft::scalar_tensor(1.0, ft::kFloat64);
  const ft::Tensor k = ft::scalar_tensor(0.7, ft::kFloat64);
  const ft::TensorFn y_end = [&y0](const ft::Tensor& rate) { return Integrate(rate, y0).y; };
  const ft::TensorFn dy_dk = ft::grad(y_end);

  const State result = Integrate(k, y0);
  const double y = result.y.item<double>();
  std::printf("y(%.1f) = %.8f in %lld steps (exact %.8f)\n", kEnd, y,
              static_cast<long long>(result.steps.item<int64_t>()), Exact(k, y0).item<double>());

  // (1) The gradient through the steps taken, against central differences of the integrator.
  const double g = dy_dk(k).item<double>();
  const double eps = 1e-6;
  const double fd = (y_end(k + eps).item<double>() - y_end(k - eps).item<double>()) / (2 * eps);
  // (2) Against the exact solution's derivative (the integrator's global error is ~10 tol).
  const double exact =
      ft::grad(ft::TensorFn([&y0](const ft::Tensor& rate) { return Exact(rate, y0); }))(k)
          .item<double>();
  std::printf("dy/dk: while_loop grad %.8f, finite differences %.8f, exact %.8f\n", g, fd,
              exact);
  const bool fd_ok = std::abs(g - fd) <= 1e-6 * (1 + std::abs(fd));
  const bool exact_ok = std::abs(g - exact) <= 10 * kTol;

  // (3) Per-example gradients for several k: each example takes its own number of steps.
  const ft::Tensor ks = ft::tensor({0.2, 0.7, 3.0, 9.0});
  const auto [grads, steps] = ft::vmap([&](const ft::Tensor& rate) {
    return std::pair{dy_dk(rate), Integrate(rate, y0).steps};
  })(ks);
  std::cout << "steps per k " << steps << "\n";
  bool batch_ok = true;
  for (int64_t i = 0; i < ks.size(0); ++i) {
    const ft::Tensor ki = ft::select(ks, 0, i);
    const double gi = dy_dk(ki).item<double>();
    batch_ok = batch_ok && std::abs(ft::select(grads, 0, i).item<double>() - gi) <= 1e-12;
    batch_ok = batch_ok && ft::select(steps, 0, i).item<int64_t>() ==
                               Integrate(ki, y0).steps.item<int64_t>();
  }
  std::printf("finite differences agree: %s; exact derivative agrees: %s; vmap(grad) == loop: "
              "%s\n", fd_ok ? "yes" : "NO", exact_ok ? "yes" : "NO", batch_ok ? "yes" : "NO");
  return fd_ok && exact_ok && batch_ok ? 0 : 1;
}

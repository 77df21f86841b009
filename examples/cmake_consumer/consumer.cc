// A program built against an installed ft, by CMake (find_package(ft), ft::ft and
// ft::ft_static) and by pkg-config (run.sh). It checks every result against a closed form or
// a loop and exits 1 if any check fails: vmap, grad, vmap(grad), jvp, jit, a custom Function
// under grad and vmap(grad), cond and while_loop under vmap and grad, and Eigen interop.
#include <cmath>
#include <cstdio>
#include <tuple>
#include <vector>

#include <ft/ft.h>  // or "ft.h": both PREFIX/include and PREFIX/include/ft are include dirs

#include "interop/eigen.h"  // ft's headers by their path in ft's tree

namespace {

int g_failures = 0;

void CheckNear(const char* what, double actual, double expected, double tol) {
  if (!(std::fabs(actual - expected) <= tol)) {
    std::fprintf(stderr, "FAIL %s: %.17g, expected %.17g\n", what, actual, expected);
    ++g_failures;
  }
}

void CheckTrue(const char* what, bool ok) {
  if (!ok) {
    std::fprintf(stderr, "FAIL %s\n", what);
    ++g_failures;
  }
}

int g_backward_calls = 0;

// Cube: x^3 with its own backward, 3 x^2 g (counted, so the check sees it ran); vmap runs
// it per example through the generated rule.
struct Cube : ft::Function<Cube> {
  static constexpr const char* name = "Cube";
  static constexpr bool generate_vmap_rule = true;
  static ft::Tensor forward(const ft::Tensor& x) { return x * x * x; }
  static void setup_context(ft::FunctionCtx& ctx, const std::tuple<ft::Tensor>& in,
                            const ft::Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
  }
  static ft::TensorList backward(ft::FunctionCtx& ctx, const ft::TensorList& g) {
    ++g_backward_calls;
    const ft::Tensor& x = ctx.saved_tensors()[0];
    return {g[0] * 3.0 * x * x};
  }
};

ft::Tensor SumSinTimesX(const ft::Tensor& v) { return ft::sum(ft::sin(v) * v); }

}  // namespace

int main(int argc, char** argv) {
  const ft::Tensor xs = ft::tensor({0.3, -1.2, 2.0, 0.7, -0.4, 1.5}, {2, 3});  // float64
  const std::vector<double> x = xs.to_vector<double>();

  // grad: d/dx sum(sin(x) x) = sin(x) + x cos(x); vmap(grad): the same per row.
  const ft::Tensor g = ft::grad(ft::TensorFn(SumSinTimesX))(ft::select(xs, 0, 0));
  const std::vector<double> gs =
      ft::vmap(ft::grad(ft::TensorFn(SumSinTimesX)))(xs).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    const double expected = std::sin(x[i]) + x[i] * std::cos(x[i]);
    if (i < 3) CheckNear("grad", g.to_vector<double>()[i], expected, 1e-12);
    CheckNear("vmap(grad)", gs[i], expected, 1e-12);
  }

  // vmap against a loop over the rows.
  const std::vector<double> per_row = ft::vmap(ft::TensorFn(SumSinTimesX))(xs).to_vector<double>();
  for (int64_t r = 0; r < 2; ++r) {
    CheckNear("vmap", per_row[r], SumSinTimesX(ft::select(xs, 0, r)).item<double>(), 1e-12);
  }

  // jvp: d tanh(x)[t] = (1 - tanh(x)^2) t.
  const ft::Tensor p = ft::tensor({0.5, 1.5});
  const ft::Tensor t = ft::tensor({1.0, 2.0});
  const std::vector<double> tangent =
      ft::jvp([](const ft::TensorList& a) { return ft::TensorList{ft::tanh(a[0])}; }, {p}, {t})
          .tangents[0]
          .to_vector<double>();
  CheckNear("jvp", tangent[0], 1.0 * (1 - std::pow(std::tanh(0.5), 2)), 1e-12);
  CheckNear("jvp", tangent[1], 2.0 * (1 - std::pow(std::tanh(1.5), 2)), 1e-12);

  // jit: traced once, replayed on new values, equal to eager.
  auto f = [](const ft::TensorList& a) {
    return ft::TensorList{ft::exp(a[0]) * 2.0 + ft::sin(a[0])};
  };
  const ft::JitFunction jf = ft::jit(f);
  const ft::Tensor y = xs * 3.0;
  CheckTrue("jit == eager", ft::allclose(jf({xs})[0], f({xs})[0], 0, 0));
  CheckTrue("jit replay == eager", ft::allclose(jf({y})[0], f({y})[0], 0, 0));
  CheckTrue("jit traced once", jf.stats().traces == 1);

  // A custom Function: its own backward under grad, and under vmap(grad) per row.
  auto sum_cube = ft::TensorFn([](const ft::Tensor& v) { return ft::sum(Cube::apply(v)); });
  const std::vector<double> cube_grads = ft::vmap(ft::grad(sum_cube))(xs).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    CheckNear("vmap(grad(Cube))", cube_grads[i], 3.0 * x[i] * x[i], 1e-12);
  }
  CheckTrue("Cube's backward ran", g_backward_calls > 0);

  // cond with a per-row predicate under vmap(grad): sqrt where the row sums to > 0, else
  // square; gradients 0.5 / sqrt(x) and 2x.
  auto branchy = ft::TensorFn([](const ft::Tensor& v) {
    return ft::sum(ft::cond(
        ft::gt(ft::sum(v), 0.0),
        [](const ft::TensorList& a) { return ft::TensorList{ft::sqrt(ft::abs(a[0]))}; },
        [](const ft::TensorList& a) { return ft::TensorList{a[0] * a[0]}; }, {v})[0]);
  });
  const ft::Tensor rows = ft::tensor({1.0, 4.0, -3.0, -2.0}, {2, 2});
  const std::vector<double> cond_grads = ft::vmap(ft::grad(branchy))(rows).to_vector<double>();
  CheckNear("cond, true row", cond_grads[0], 0.5, 1e-12);
  CheckNear("cond, true row", cond_grads[1], 0.25, 1e-12);
  CheckNear("cond, false row", cond_grads[2], -6.0, 1e-12);
  CheckNear("cond, false row", cond_grads[3], -4.0, 1e-12);

  // while_loop under grad: double until the sum reaches 10; from sum 1.5 that is 3 steps,
  // so the result is 8 x and its gradient 8.
  auto doubling = ft::TensorFn([](const ft::Tensor& v) {
    return ft::sum(ft::while_loop(
        [](const ft::TensorList& c) { return ft::lt(ft::sum(c[0]), 10.0); },
        [](const ft::TensorList& c) { return ft::TensorList{c[0] * 2.0}; }, {v})[0]);
  });
  const ft::Tensor start = ft::tensor({1.0, 0.5});
  CheckNear("while_loop", doubling(start).item<double>(), 12.0, 1e-12);
  const std::vector<double> loop_grad = ft::grad(doubling)(start).to_vector<double>();
  CheckNear("grad(while_loop)", loop_grad[0], 8.0, 1e-12);
  CheckNear("grad(while_loop)", loop_grad[1], 8.0, 1e-12);

  // Eigen interop: a tensor over an Eigen matrix without a copy, and a copy back.
  Eigen::MatrixXd m = Eigen::MatrixXd::Identity(2, 2);
  const ft::Tensor borrowed = ft::BorrowEigen(m);
  m(0, 1) = 7.0;
  CheckNear("BorrowEigen", borrowed.to_vector<double>()[1], 7.0, 0);
  CheckNear("ToEigen", ft::ToEigen<Eigen::MatrixXd>(borrowed * 2.0)(0, 1), 14.0, 0);

  std::printf("%s: %s\n", argc > 0 ? argv[0] : "consumer", g_failures == 0 ? "ok" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}

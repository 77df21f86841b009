// quickstart: a first tour of ft's eager tensor library.
//   ./bazelw run //examples:quickstart
// Every op below goes through ft's op table; with no transform active each one is a single
// branch and then an Eigen kernel. vmap, grad and jvp build on exactly this, and take your
// own structs of tensors (trees) as well as tensors.
// Each result is also checked against its closed form (the program exits 1 on a mismatch).
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "ft.h"

namespace {

int g_failures = 0;

// Expect: `got` equals `want` (a closed form computed without ft's transforms) to 1e-5.
void Expect(const char* what, const ft::Tensor& got, const ft::Tensor& want) {
  if (got.sizes() != want.sizes() || !ft::allclose(got, ft::to(want, got.dtype()), 1e-5, 1e-5)) {
    std::cout << "MISMATCH in " << what << ": got " << got << ", want " << want << "\n";
    ++g_failures;
  }
}

// A tree: a struct of tensors, declared with FT_TREE, is a value every transform takes and
// returns (the parameters of a model, by name rather than by position in a list).
struct Line {
  ft::Tensor slope, intercept;
};
FT_TREE(Line, slope, intercept);

// The squared error of the line at one point (x, y).
ft::Tensor SquaredError(const Line& line, const ft::Tensor& x, const ft::Tensor& y) {
  const ft::Tensor residual = line.slope * x + line.intercept - y;
  return residual * residual;
}

}  // namespace

int main() {
  // Factories and printing (PyTorch's format).
  ft::Tensor x = ft::linspace(-1.0, 1.0, 5);
  std::cout << "x = " << x << "\n";

  // Elementwise ops with broadcasting and Python-style scalars.
  ft::Tensor y = ft::sin(x) * 2.0 + 1.0;
  std::cout << "sin(x) * 2 + 1 = " << y << "\n";
  Expect("sin(x) * 2 + 1", y,
         ft::tensor({2 * std::sin(-1.0) + 1, 2 * std::sin(-0.5) + 1, 1.0,
                     2 * std::sin(0.5) + 1, 2 * std::sin(1.0) + 1}));

  // Views share storage: a transpose is free, and reshape copies only when it must.
  ft::Tensor m = ft::reshape(ft::arange(6.0), {2, 3});
  ft::Tensor mt = ft::transpose(m, 0, 1);
  std::cout << "m =\n" << m << "\nm^T is a view: " << mt.DebugString() << "\n";

  // Linear algebra and reductions.
  ft::Tensor g = ft::matmul(m, mt);
  std::cout << "m @ m^T =\n" << g << "\n";
  std::cout << "row sums = " << ft::sum(m, {1}) << ", softmax(row 0) = "
            << ft::softmax(ft::select(m, 0, 0), 0) << "\n";
  Expect("m @ m^T", g, ft::tensor({5.0, 14.0, 14.0, 50.0}, {2, 2}));
  Expect("row sums", ft::sum(m, {1}), ft::tensor({3.0, 12.0}));
  const double z = 1 + std::exp(1.0) + std::exp(2.0);
  Expect("softmax", ft::softmax(ft::select(m, 0, 0), 0),
         ft::tensor({1 / z, std::exp(1.0) / z, std::exp(2.0) / z}));

  // Reproducible randomness from an explicit, counter-based generator.
  ft::Generator gen(42);
  ft::Tensor noise = ft::randn_like(ft::zeros({3}), &gen);
  std::cout << "randn (seed 42) = " << noise << "\n";

  // vmap: write a function for one example, run it on a whole batch. Each op inside runs
  // once on the batched data (its batching rule), not once per example.
  auto energy = [](const ft::Tensor& v) { return ft::sum(ft::square(v)) * 0.5; };
  ft::Tensor batch = ft::randn_like(ft::zeros({4, 3}), &gen);
  std::cout << "vmap(energy) over 4 examples = " << ft::vmap(ft::TensorFn(energy))(batch)
            << "\n";
  Expect("vmap(energy)", ft::vmap(ft::TensorFn(energy))(batch),
         ft::sum(batch * batch, {1}) * 0.5);  // the same math, batched by hand
  // in_dims, one per argument: map the rows of m, share the vector w.
  auto project = ft::vmap(
      [](const ft::Tensor& row, const ft::Tensor& w) { return ft::dot(row, w); },
      {0, std::nullopt});
  std::cout << "vmap(dot) over rows of m = " << project(m, ft::ones({3})) << "\n";
  Expect("vmap(dot)", project(m, ft::ones({3})), ft::tensor({3.0, 12.0}));

  // grad: d/dv energy(v) = v; vmap(grad(...)) gives every example's gradient at once.
  std::cout << "vmap(grad(energy)) =\n"
            << ft::vmap(ft::grad(ft::TensorFn(energy)))(batch) << "\n(equals the batch itself)\n";
  Expect("vmap(grad(energy))", ft::vmap(ft::grad(ft::TensorFn(energy)))(batch), batch);
  // jacrev: the Jacobian of an elementwise tanh is diagonal. jacrev, jvp, jacfwd and hessian
  // take a function of one tensor, as here, of trees (below), or of a TensorList (docs/api.md).
  auto act = [](const ft::Tensor& a) { return ft::tanh(a); };
  std::cout << "jacrev(tanh)([0, 1]) =\n" << ft::jacrev(act)(ft::tensor({0.0f, 1.0f})) << "\n";
  const double sech2_1 = 1 - std::tanh(1.0) * std::tanh(1.0);
  const ft::Tensor tanh_jacobian = ft::tensor({1.0, 0.0, 0.0, sech2_1}, {2, 2});
  Expect("jacrev(tanh)", ft::jacrev(act)(ft::tensor({0.0f, 1.0f})), tanh_jacobian);
  // Forward mode: jvp pushes a tangent through in the same pass; jacfwd gives the same
  // Jacobian by columns; hessian is forward over reverse.
  ft::Tensor p = ft::tensor({0.5f, -1.0f});
  const ft::Tensor dir = ft::jvp(act, p, ft::ones_like(p)).tangents;
  std::cout << "jvp(tanh) along ones = " << dir << " (1 - tanh^2)\n";
  std::cout << "jacfwd(tanh)([0, 1]) =\n" << ft::jacfwd(act)(ft::tensor({0.0f, 1.0f})) << "\n";
  Expect("jvp(tanh)", dir,
         ft::tensor({1 - std::pow(std::tanh(0.5), 2), 1 - std::pow(std::tanh(-1.0), 2)}));
  Expect("jacfwd(tanh)", ft::jacfwd(act)(ft::tensor({0.0f, 1.0f})), tanh_jacobian);
  auto cube = [](const ft::Tensor& a) { return ft::sum(a * a * a); };
  std::cout << "hessian(sum x^3)([1, 2]) =\n" << ft::hessian(cube)(ft::tensor({1.0f, 2.0f}))
            << "\n(diag(6x))\n";
  Expect("hessian", ft::hessian(cube)(ft::tensor({1.0f, 2.0f})),
         ft::tensor({6.0, 0.0, 0.0, 12.0}, {2, 2}));

  // Trees: grad of a function of a Line returns a Line of derivatives, and vmap's in_dims is
  // a prefix of the arguments: the Line shared (nullopt), the points mapped (0).
  const Line line{.slope = ft::scalar_tensor(2.0), .intercept = ft::scalar_tensor(0.5)};
  const ft::Tensor px = ft::tensor({1.0, 2.0, 3.0}), py = ft::tensor({2.0, 5.0, 6.0});
  const Line per_point = ft::vmap(ft::grad(&SquaredError), {std::nullopt, 0, 0})(line, px, py);
  std::cout << "per-point gradients of the line: d/dslope = " << per_point.slope
            << ", d/dintercept = " << per_point.intercept << "\n";
  // residuals r = 2 x + 0.5 - y = [0.5, -0.5, 0.5]: d/dslope = 2 r x, d/dintercept = 2 r.
  Expect("vmap(grad) of a Line, slope", per_point.slope, ft::tensor({1.0, -2.0, 3.0}));
  Expect("vmap(grad) of a Line, intercept", per_point.intercept, ft::tensor({1.0, -1.0, 1.0}));
  // tree_map: a function of the leaves, field by field; here a gradient-descent step.
  const Line stepped = ft::tree_map(
      [](const ft::Tensor& p, const ft::Tensor& g) { return p - ft::mean(g) * 0.3; }, line,
      per_point);
  std::cout << "one step on the mean gradient: slope " << stepped.slope << ", intercept "
            << stepped.intercept << "\n";
  Expect("tree_map step, slope", stepped.slope, ft::scalar_tensor(1.8));
  Expect("tree_map step, intercept", stepped.intercept, ft::scalar_tensor(0.4));

  // Bad input is an ft::Error that names the op and the shapes.
  bool refused = false;
  try {
    ft::matmul(m, m);
  } catch (const ft::Error& e) {
    std::cout << "error: " << e.what() << "\n";
    refused = true;
  }
  if (!refused) {
    std::cout << "MISMATCH: matmul of [2, 3] by [2, 3] was not refused\n";
    ++g_failures;
  }
  if (g_failures > 0) {
    std::cout << g_failures << " result(s) differ from their closed form\n";
    return EXIT_FAILURE;
  }
  std::cout << "every result above matches its closed form\n";
  return EXIT_SUCCESS;
}

// quickstart: a first tour of ft's eager tensor library.
//   ./bazelw run //examples:quickstart
// Every op below goes through ft's op table; with no transform active each one is a single
// branch and then an Eigen kernel. vmap, grad and jvp build on exactly this.
#include <iostream>

#include "ft.h"

int main() {
  // Factories and printing (PyTorch's format).
  ft::Tensor x = ft::linspace(-1.0, 1.0, 5);
  std::cout << "x = " << x << "\n";

  // Elementwise ops with broadcasting and Python-style scalars.
  ft::Tensor y = ft::sin(x) * 2.0 + 1.0;
  std::cout << "sin(x) * 2 + 1 = " << y << "\n";

  // Views share storage: a transpose is free, and reshape copies only when it must.
  ft::Tensor m = ft::reshape(ft::arange(6.0), {2, 3});
  ft::Tensor mt = ft::transpose(m, 0, 1);
  std::cout << "m =\n" << m << "\nm^T is a view: " << mt.DebugString() << "\n";

  // Linear algebra and reductions.
  ft::Tensor g = ft::matmul(m, mt);
  std::cout << "m @ m^T =\n" << g << "\n";
  std::cout << "row sums = " << ft::sum(m, {1}) << ", softmax(row 0) = "
            << ft::softmax(ft::select(m, 0, 0), 0) << "\n";

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
  // in_dims: map the rows of m, share the vector w.
  auto project = ft::vmap(ft::TensorListFn([](const ft::TensorList& a) {
                            return ft::TensorList{ft::dot(a[0], a[1])};
                          }),
                          {0, std::nullopt});
  std::cout << "vmap(dot) over rows of m = " << project({m, ft::ones({3})})[0] << "\n";

  // grad: d/dv energy(v) = v; vmap(grad(...)) gives every example's gradient at once.
  std::cout << "vmap(grad(energy)) =\n"
            << ft::vmap(ft::grad(ft::TensorFn(energy)))(batch) << "\n(equals the batch itself)\n";
  // jacrev: the Jacobian of an elementwise tanh is diagonal.
  auto act = ft::TensorFnOfList([](const ft::TensorList& a) { return ft::tanh(a[0]); });
  std::cout << "jacrev(tanh)([0, 1]) =\n" << ft::jacrev(act)({ft::tensor({0.0f, 1.0f})})[0]
            << "\n";
  // Forward mode: jvp pushes a tangent through in the same pass; jacfwd gives the same
  // Jacobian by columns; hessian is forward over reverse.
  ft::Tensor p = ft::tensor({0.5f, -1.0f});
  ft::JvpResult dir = ft::jvp([](const ft::TensorList& a) { return ft::TensorList{ft::tanh(a[0])}; },
                              {p}, {ft::ones_like(p)});
  std::cout << "jvp(tanh) along ones = " << dir.tangents[0] << " (1 - tanh^2)\n";
  std::cout << "jacfwd(tanh)([0, 1]) =\n" << ft::jacfwd(act)({ft::tensor({0.0f, 1.0f})})[0]
            << "\n";
  auto cube = ft::TensorFnOfList([](const ft::TensorList& a) { return ft::sum(a[0] * a[0] * a[0]); });
  std::cout << "hessian(sum x^3)([1, 2]) =\n" << ft::hessian(cube)({ft::tensor({1.0f, 2.0f})})[0]
            << "\n(diag(6x))\n";

  // Bad input is an ft::Error that names the op and the shapes.
  try {
    ft::matmul(m, m);
  } catch (const ft::Error& e) {
    std::cout << "error: " << e.what() << "\n";
  }
  return 0;
}

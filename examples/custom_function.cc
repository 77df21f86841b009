// custom_function: a Function a user would really write, and the transforms keeping its rules.
//   ./bazelw run //examples:custom_function
//
// softplus(x) = log(1 + e^x) overflows for large x when written naively; the stable form is
// max(x, 0) + log1p(e^-|x|). Its derivative is sigmoid(x), which the ops' own derivatives
// would also give, but through max and abs: here the Function states it once, exactly, for
// reverse mode (backward) and forward mode (jvp), and lets ft generate its batching rule.
// Then per-example gradients of a logistic-style loss are one vmap(grad(...)) call.
#include <iostream>

#include "ft.h"

struct Softplus : ft::Function<Softplus> {
  static constexpr const char* name = "Softplus";
  static constexpr bool generate_vmap_rule = true;

  static ft::Tensor forward(const ft::Tensor& x) {
    return ft::relu(x) + ft::log1p(ft::exp(ft::neg(ft::abs(x))));
  }
  static void setup_context(ft::FunctionCtx& ctx, const std::tuple<ft::Tensor>& inputs,
                            const ft::Tensor&) {
    ctx.save_for_backward({std::get<0>(inputs)});
    ctx.save_for_forward({std::get<0>(inputs)});
  }
  // d/dx softplus(x) = sigmoid(x); written with ft ops, so it is differentiable again.
  static ft::TensorList backward(ft::FunctionCtx& ctx, const ft::TensorList& grads) {
    return {grads[0] * ft::sigmoid(ctx.saved_tensors()[0])};
  }
  static ft::TensorList jvp(ft::FunctionCtx& ctx, const ft::TensorList& tangents) {
    return {tangents[0] * ft::sigmoid(ctx.saved_tensors()[0])};
  }
};

int main() {
  // Large inputs: the stable form stays finite where log(1 + e^x) would overflow.
  ft::Tensor big = ft::tensor({-100.0f, 0.0f, 100.0f});
  std::cout << "softplus([-100, 0, 100]) = " << Softplus::apply(big) << "\n";

  // The loss of one example (x, y) for weights w: softplus(-y * <w, x>).
  auto loss = [](const ft::Tensor& w, const ft::Tensor& x, const ft::Tensor& y) {
    return ft::sum(Softplus::apply(ft::neg(y * ft::sum(w * x))));
  };
  ft::Generator gen(0);
  ft::Tensor w = ft::randn_like(ft::zeros({3}), &gen);
  ft::Tensor xs = ft::randn_like(ft::zeros({4, 3}), &gen);
  ft::Tensor ys = ft::tensor({1.0f, -1.0f, 1.0f, -1.0f});

  // Per-example gradients w.r.t. w: vmap over (x, y), w shared. The gradient runs
  // Softplus::backward; vmap runs the generated rule (Softplus vmapped by ft).
  auto per_example = ft::vmap(ft::grad(loss), {std::nullopt, 0, 0});
  ft::Tensor grads = per_example(w, xs, ys);
  std::cout << "per-example gradients (4 x 3) =\n" << grads << "\n";

  // The closed form, -y * sigmoid(-y <w, x>) * x, for comparison.
  ft::Tensor margin = ft::neg(ys * ft::sum(xs * w, {1}));
  ft::Tensor closed = ft::unsqueeze(ft::neg(ys) * ft::sigmoid(margin), 1) * xs;
  const bool agrees = ft::allclose(grads, closed, 1e-5, 1e-6);
  std::cout << "closed form agrees: " << (agrees ? "yes" : "no") << "\n";

  // Forward mode uses Softplus::jvp; second derivatives go through backward's own ops.
  ft::Tensor x = ft::tensor({-1.0f, 0.5f, 2.0f});
  auto softplus = [](const ft::Tensor& v) { return Softplus::apply(v); };
  std::cout << "jvp along ones = " << ft::jvp(softplus, x, ft::ones_like(x)).tangents
            << " (sigmoid(x))\n";
  auto total = [](const ft::Tensor& v) { return ft::sum(Softplus::apply(v)); };
  std::cout << "hessian diagonal = " << ft::diagonal(ft::hessian(total)(x))
            << " (sigmoid(x) (1 - sigmoid(x)))\n";
  return agrees ? 0 : 1;
}

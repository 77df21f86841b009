// A custom Function (@ft//custom_function) with its own backward, under grad.
#include "check.h"
#include "custom_function/function.h"
#include "interpreters/grad/grad.h"
#include "ops/ops.h"
#include "tensor/factories.h"

namespace {

int g_backward_calls = 0;

// Cube: x^3, whose backward is its own (3 x^2 g), counted so the test sees it ran.
struct Cube : ft::Function<Cube> {
  static constexpr const char* name = "Cube";
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

}  // namespace

int main() {
  const ft::Tensor x = ft::tensor({1.0, -2.0});
  const ft::Tensor g =
      ft::grad(ft::TensorFn([](const ft::Tensor& t) { return ft::sum(Cube::apply(t)); }))(x);
  CHECK_NEAR(g.to_vector<double>()[0], 3.0, 1e-12);
  CHECK_NEAR(g.to_vector<double>()[1], 12.0, 1e-12);
  CHECK_TRUE(g_backward_calls == 1);
  return Finish("uses_custom_function");
}

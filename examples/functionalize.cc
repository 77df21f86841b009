// functionalize: three programs written with in-place ops that the transforms refuse as they
// are, and that work once functionalize makes them pure. Each is checked against the same
// program written out of place; the process exits non-zero on a mismatch.
//   ./bazelw run //examples:functionalize
#include <cstdlib>
#include <iostream>
#include <string>
#include <tuple>

#include "ft.h"

namespace {

bool Check(const std::string& what, const ft::Tensor& got, const ft::Tensor& expected) {
  const bool ok = ft::allclose(got, expected, 1e-6, 1e-6);
  std::cout << (ok ? "  ok  " : "  MISMATCH  ") << what << "\n";
  if (!ok) std::cout << "got\n" << got << "\nexpected\n" << expected << "\n";
  return ok;
}

// 1. A function that builds a buffer and fills it in place: running features of x into a
//    [4] buffer. vmap refuses it (batched values into an unbatched buffer).
ft::Tensor Features(const ft::Tensor& x) {
  ft::Tensor buf = ft::zeros({4});
  ft::fill_(ft::select(buf, 0, 0), 1.0);             // a bias feature
  ft::copy_(ft::narrow(buf, 0, 1, 3), x);            // the input itself
  ft::mul_(ft::narrow(buf, 0, 2, 2), ft::narrow(x, 0, 0, 2));  // two products, in place
  return buf;
}

ft::Tensor FeaturesOutOfPlace(const ft::Tensor& x) {
  const ft::Tensor ones = ft::ones({1});
  const ft::Tensor rest = ft::narrow(x, 0, 1, 2) * ft::narrow(x, 0, 0, 2);
  return ft::cat({ones, ft::narrow(x, 0, 0, 1), rest}, 0);
}

// 2. An in-place update of a view of a tensor that carries a gradient: the second row of h
//    is damped in place. Plain grad refuses the next use of h.
ft::Tensor Loss(const ft::Tensor& w, const ft::Tensor& v) {
  ft::Tensor h = ft::tanh(ft::matmul(w, v));   // [3, 2]
  ft::mul_(ft::select(h, 0, 1), 0.5);
  return ft::sum(h * h);
}

ft::Tensor LossOutOfPlace(const ft::Tensor& w, const ft::Tensor& v) {
  const ft::Tensor h = ft::tanh(ft::matmul(w, v));
  const ft::Tensor scale = ft::reshape(ft::tensor({1.0f, 0.5f, 1.0f}), {3, 1});
  const ft::Tensor d = h * scale;
  return ft::sum(d * d);
}

// 3. A custom Function that writes its input in place (mark_dirty), with its own backward.
struct ScaleInPlace : ft::Function<ScaleInPlace> {
  static constexpr const char* name = "ScaleInPlace";
  static ft::Tensor forward(const ft::Tensor& x) { return ft::mul_(x, 3.0); }
  static void setup_context(ft::FunctionCtx& ctx, const std::tuple<ft::Tensor>& in,
                            const ft::Tensor&) {
    ctx.mark_dirty({std::get<0>(in)});
  }
  static ft::TensorList backward(ft::FunctionCtx&, const ft::TensorList& g) {
    return {g[0] * 3.0};
  }
  static std::pair<ft::Tensor, ft::OutDims> vmap(const ft::VmapInfo&, const ft::InDims& in_dims,
                                                 const ft::Tensor& x) {
    return {ScaleInPlace::apply(x), {in_dims[0]}};
  }
};

ft::Tensor UsesTheFunction(const ft::Tensor& x) {
  ft::Tensor buf = ft::zeros({3});
  ft::copy_(buf, x);
  ScaleInPlace::apply(buf);                           // writes buf in place
  ScaleInPlace::apply(ft::select(x, 0, 0));           // and the input, through a view
  return ft::sum(buf * x);
}

}  // namespace

int main() {
  bool ok = true;
  ft::Generator gen(0);
  const ft::Tensor xs = ft::randn_like(ft::zeros({5, 3}), &gen);

  std::cout << "1. vmap of a function that fills a buffer in place\n";
  try {
    ft::vmap(ft::TensorFn(Features))(xs);
    std::cout << "  (plain vmap ran it?)\n";
    ok = false;
  } catch (const ft::Error& e) {
    std::cout << "  plain vmap refuses: " << std::string(e.what()).substr(0, 72) << "...\n";
  }
  ok &= Check("vmap(functionalize(f)) == vmap(out-of-place f)",
              ft::vmap(ft::functionalize(ft::TensorFn(Features)))(xs),
              ft::vmap(ft::TensorFn(FeaturesOutOfPlace))(xs));

  std::cout << "2. grad through an in-place update of a view\n";
  const ft::Tensor w = ft::randn_like(ft::zeros({3, 4}), &gen);
  const ft::Tensor v = ft::randn_like(ft::zeros({4, 2}), &gen);
  try {
    ft::grad(&Loss)(w, v);
    std::cout << "  (plain grad ran it?)\n";
    ok = false;
  } catch (const ft::Error& e) {
    std::cout << "  plain grad refuses: " << std::string(e.what()).substr(0, 72) << "...\n";
  }
  // Both arguments differentiated: a tuple of the gradients wrt w and wrt v.
  const auto [gw, gv] = ft::grad(ft::functionalize(&Loss), ft::argnums<0, 1>)(w, v);
  const auto [gw_twin, gv_twin] = ft::grad(&LossOutOfPlace, ft::argnums<0, 1>)(w, v);
  ok &= Check("grad(functionalize(loss)) wrt W == grad(out-of-place loss)", gw, gw_twin);
  ok &= Check("grad(functionalize(loss)) wrt V == grad(out-of-place loss)", gv, gv_twin);

  std::cout << "3. a Function that mutates its input, under functionalize\n";
  ft::Tensor x = ft::randn_like(ft::zeros({3}), &gen);
  const ft::Tensor x0 = ft::clone(x);
  const ft::Tensor y = ft::functionalize(ft::TensorFn(UsesTheFunction))(x);
  const ft::Tensor x_written = ft::cat({ft::narrow(x0, 0, 0, 1) * 3.0, ft::narrow(x0, 0, 1, 2)}, 0);
  ok &= Check("the result == the out-of-place program", y, ft::sum(x0 * 3.0 * x_written));
  ok &= Check("the write reached the caller's tensor", x, x_written);
  // Per example, and differentiated: the Function's own vmap rule and backward run.
  ft::Tensor batch = ft::clone(xs);
  const ft::Tensor per_example = ft::vmap(ft::functionalize(ft::TensorFn(UsesTheFunction)))(batch);
  const ft::Tensor rows_written =
      ft::cat({ft::narrow(xs, 1, 0, 1) * 3.0, ft::narrow(xs, 1, 1, 2)}, 1);
  ok &= Check("vmap(functionalize(f)) per example", per_example,
              ft::sum(xs * 3.0 * rows_written, {1}));
  const ft::Tensor gx = ft::grad(ft::functionalize(ft::TensorFn([](const ft::Tensor& t) {
    ft::Tensor buf = t * 1.0;
    ScaleInPlace::apply(buf);
    return ft::sum(buf * buf);
  })))(x0);
  ok &= Check("grad through the Function: d/dx sum((3x)^2) = 18x", gx, x0 * 18.0);

  std::cout << (ok ? "all checks passed\n" : "SOME CHECKS FAILED\n");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

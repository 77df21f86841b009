// ft/interpreters/gradcheck/gradcheck.h
//
// gradcheck: checks ft::grad against float64 central differences, for users writing their
// own ops or formulas and for ft's tests; jvpcheck does the same for forward mode (ft::jvp)
// and gradgradcheck for second derivatives. numerical_grad is the oracle on its own.
//
// gradcheck(f, args) probes f (any output shape) through the scalar sum(f(args) * w) with a
// fixed pseudo-random w (so every output element matters with a different weight), and
// compares ft::grad of it with central differences for each argument in `argnums` (all
// when empty). Use float64 inputs away from kinks; the result says which argument and
// element disagreed.
//
// Example:
//   GradcheckResult r = gradcheck([](const TensorList& a) { return ft::tanh(a[0]); }, {x});
//   if (!r.ok) std::cerr << r.message;
#ifndef FT_INTERPRETERS_GRADCHECK_GRADCHECK_H_
#define FT_INTERPRETERS_GRADCHECK_GRADCHECK_H_

#include <string>
#include <vector>

#include "interpreters/grad/grad.h"

namespace ft {

// numerical_grad: central differences (step eps) of the scalar f w.r.t. args[arg], in
// float64, shaped like args[arg].
Tensor numerical_grad(const ScalarFn& f, TensorList args, size_t arg, double eps = 1e-6);

struct GradcheckResult {
  bool ok = true;
  std::string message;  // empty when ok
};

GradcheckResult gradcheck(const TensorFnOfList& f, const TensorList& args,
                          std::vector<int64_t> argnums = {}, double atol = 1e-6,
                          double rtol = 1e-6, double eps = 1e-6);

// jvpcheck: checks forward mode. For each argument in `argnums` (all when empty) it takes a
// fixed pseudo-random direction v and compares ft::jvp's output tangent with the central
// difference (f(args + eps v) - f(args - eps v)) / 2 eps. It also checks that jvp's primal
// output equals f(args), and that <J v, w> from jvp equals <v, J^T w> from vjp (the
// transposition identity, which ties forward and reverse formulas together).
GradcheckResult jvpcheck(const TensorFnOfList& f, const TensorList& args,
                         std::vector<int64_t> argnums = {}, double atol = 1e-6,
                         double rtol = 1e-6, double eps = 1e-6);

// gradgradcheck: checks second derivatives of s(args) = sum(f(args) * w). For each argument
// pair it compares, along a pseudo-random direction v, the Hessian-vector products
// reverse-over-reverse (grad of <grad s, v>) and forward-over-reverse (jvp of grad s) with
// central differences of grad s. Use it on smooth ops, away from kinks.
GradcheckResult gradgradcheck(const TensorFnOfList& f, const TensorList& args,
                              std::vector<int64_t> argnums = {}, double atol = 1e-5,
                              double rtol = 1e-5, double eps = 1e-5);

}  // namespace ft

#endif  // FT_INTERPRETERS_GRADCHECK_GRADCHECK_H_

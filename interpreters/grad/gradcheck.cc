#include "interpreters/grad/gradcheck.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "dispatch/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tensor/print.h"

namespace ft {

Tensor numerical_grad(const ScalarFn& f, TensorList args, size_t arg, double eps) {
  const Tensor x = clone(args[arg]);
  const std::vector<double> values = x.to_vector<double>();
  std::vector<double> grad(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    auto eval = [&](double v) {
      std::vector<double> moved = values;
      moved[i] = v;
      args[arg] = tensor(moved, x.sizes());
      return f(args).item<double>();
    };
    grad[i] = (eval(values[i] + eps) - eval(values[i] - eps)) / (2 * eps);
  }
  return tensor(grad, x.sizes());
}

GradcheckResult gradcheck(const TensorFnOfList& f, const TensorList& args,
                          std::vector<int64_t> argnums, double atol, double rtol, double eps) {
  const Tensor probe = f(args);
  Generator gen(99);
  const Tensor w = rand_like(zeros(probe.sizes(), kFloat64), &gen) * 2.0 - 1.0;
  ScalarFn scalar = [&](const TensorList& a) { return sum(f(a) * w); };
  if (argnums.empty()) {
    for (size_t i = 0; i < args.size(); ++i) argnums.push_back(static_cast<int64_t>(i));
  }
  const TensorList analytic = grad(scalar, argnums)(args);
  GradcheckResult result;
  for (size_t k = 0; k < argnums.size(); ++k) {
    const size_t arg = static_cast<size_t>(argnums[k]);
    const std::vector<double> a = analytic[k].to_vector<double>();
    const Tensor numeric = numerical_grad(scalar, args, arg, eps);
    const std::vector<double> n = numeric.to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::fabs(a[i] - n[i]) <= atol + rtol * std::fabs(n[i])) continue;
      result.ok = false;
      result.message = absl::StrCat("gradcheck: argument ", arg, ", element ", i, ": analytic ",
                                    a[i], " vs numerical ", n[i], "\nanalytic:\n",
                                    ToString(analytic[k]), "\nnumerical:\n", ToString(numeric));
      return result;
    }
  }
  return result;
}

}  // namespace ft

#include "interpreters/gradcheck/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "interpreters/jvp/jvp.h"
#include "ops/ops.h"
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

namespace {

// RandomLike: a fixed pseudo-random float64 tensor in [-1, 1) shaped like t.
Tensor RandomLike(const Tensor& t, uint64_t seed) {
  Generator gen(seed);
  return rand_like(zeros(t.sizes(), kFloat64), &gen) * 2.0 - 1.0;
}

double Dot(const Tensor& a, const Tensor& b) { return sum(a * b).item<double>(); }

bool Close(double a, double b, double atol, double rtol) {
  return std::fabs(a - b) <= atol + rtol * std::fabs(b);
}

// FirstMismatch: the first element where `analytic` and `numeric` differ beyond tolerance,
// described, or "" when they agree.
std::string FirstMismatch(const char* what, size_t arg, const Tensor& analytic,
                          const Tensor& numeric, double atol, double rtol) {
  const std::vector<double> a = to(analytic, kFloat64).to_vector<double>();
  const std::vector<double> n = to(numeric, kFloat64).to_vector<double>();
  if (a.size() != n.size()) {
    return absl::StrCat(what, ": argument ", arg, ": analytic has ", a.size(),
                        " elements, numerical ", n.size());
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (Close(a[i], n[i], atol, rtol)) continue;
    return absl::StrCat(what, ": argument ", arg, ", element ", i, ": analytic ", a[i],
                        " vs numerical ", n[i], "\nanalytic:\n", ToString(analytic),
                        "\nnumerical:\n", ToString(numeric));
  }
  return "";
}

std::vector<int64_t> AllIfEmpty(std::vector<int64_t> argnums, size_t n) {
  if (argnums.empty()) {
    for (size_t i = 0; i < n; ++i) argnums.push_back(static_cast<int64_t>(i));
  }
  return argnums;
}

GradcheckResult Fail(std::string message) { return GradcheckResult{false, std::move(message)}; }

}  // namespace

GradcheckResult jvpcheck(const TensorFnOfList& f, const TensorList& args,
                         std::vector<int64_t> argnums, double atol, double rtol, double eps) {
  argnums = AllIfEmpty(std::move(argnums), args.size());
  const Tensor value = f(args);
  const Tensor w = RandomLike(value, 97);
  TensorListFn as_list = [&f](const TensorList& a) { return TensorList{f(a)}; };
  for (int64_t argnum : argnums) {
    const size_t arg = static_cast<size_t>(argnum);
    const Tensor v = to(RandomLike(args[arg], 98 + arg), args[arg].dtype());
    TensorList tangents;
    for (size_t i = 0; i < args.size(); ++i) {
      tangents.push_back(i == arg ? v : zeros_like(args[i]));
    }
    const JvpResult r = jvp(as_list, args, tangents);
    std::string m = FirstMismatch("jvpcheck (primal output)", arg, r.outputs[0], value, 0, 0);
    if (!m.empty()) return Fail(m);
    TensorList plus = args, minus = args;
    plus[arg] = args[arg] + v * eps;
    minus[arg] = args[arg] - v * eps;
    const Tensor numeric = (to(f(plus), kFloat64) - to(f(minus), kFloat64)) / (2 * eps);
    m = FirstMismatch("jvpcheck (tangent)", arg, r.tangents[0], numeric, atol, rtol);
    if (!m.empty()) return Fail(m);
    // Transposition: <J v, w> == <v, J^T w>.
    const VjpResult back = vjp(as_list, args);
    const Tensor jtw = back.vjp_fn({to(w, value.dtype())})[arg];
    const double forward = Dot(to(r.tangents[0], kFloat64), w);
    const double reverse = Dot(to(jtw, kFloat64), to(v, kFloat64));
    if (!Close(forward, reverse, atol, rtol)) {
      return Fail(absl::StrCat("jvpcheck: argument ", arg, ": <J v, w> = ", forward,
                               " from jvp but <v, J^T w> = ", reverse, " from vjp"));
    }
  }
  return GradcheckResult{};
}

GradcheckResult gradgradcheck(const TensorFnOfList& f, const TensorList& args,
                              std::vector<int64_t> argnums, double atol, double rtol,
                              double eps) {
  argnums = AllIfEmpty(std::move(argnums), args.size());
  const Tensor w = RandomLike(f(args), 96);
  ScalarFn scalar = [&](const TensorList& a) { return sum(f(a) * to(w, a[0].dtype())); };
  // g(a): the gradients of s w.r.t. every argument in argnums.
  TensorListFn g = grad(scalar, argnums);
  for (int64_t argnum : argnums) {
    const size_t arg = static_cast<size_t>(argnum);
    const Tensor v = to(RandomLike(args[arg], 95 + arg), args[arg].dtype());
    TensorList plus = args, minus = args;
    plus[arg] = args[arg] + v * eps;
    minus[arg] = args[arg] - v * eps;
    const TensorList gp = g(plus), gm = g(minus);
    // Forward over reverse: H v = jvp of g along v.
    TensorList tangents;
    for (size_t i = 0; i < args.size(); ++i) {
      tangents.push_back(i == arg ? v : zeros_like(args[i]));
    }
    const JvpResult fwd = jvp(g, args, tangents);
    for (size_t k = 0; k < argnums.size(); ++k) {
      const Tensor numeric = (to(gp[k], kFloat64) - to(gm[k], kFloat64)) / (2 * eps);
      std::string m = FirstMismatch("gradgradcheck (jvp of grad)", static_cast<size_t>(argnums[k]),
                                    fwd.tangents[k], numeric, atol, rtol);
      if (!m.empty()) return Fail(m);
      // Reverse over reverse: d/d args[argnums[k]] <g_arg(a), v> = (H v) block k, by symmetry.
      ScalarFn hv = [&](const TensorList& a) {
        return sum(g(a)[static_cast<size_t>(std::find(argnums.begin(), argnums.end(), argnum) -
                                            argnums.begin())] * v);
      };
      const Tensor rev = grad(hv, {argnums[k]})(args)[0];
      m = FirstMismatch("gradgradcheck (grad of grad)", static_cast<size_t>(argnums[k]), rev,
                        numeric, atol, rtol);
      if (!m.empty()) return Fail(m);
    }
  }
  return GradcheckResult{};
}

}  // namespace ft

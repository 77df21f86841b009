#include "tests/property/stack.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dispatch/interpreter.h"
#include "interpreters/functionalize/functionalize.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jit/jit.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/factories.h"
#include "tests/vmap_oracle.h"

namespace ft::property {

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kVmap:
      return "vmap";
    case Kind::kGrad:
      return "grad";
    case Kind::kVjp:
      return "vjp";
    case Kind::kJvp:
      return "jvp";
    case Kind::kJacrev:
      return "jacrev";
    case Kind::kJacfwd:
      return "jacfwd";
    case Kind::kHessian:
      return "hessian";
    case Kind::kJit:
      return "jit";
    case Kind::kFunctionalize:
      return "functionalize";
  }
  return "?";
}

bool IsDerivative(Kind kind) {
  return kind != Kind::kVmap && kind != Kind::kJit && kind != Kind::kFunctionalize;
}

namespace {

std::string ShowDims(const std::vector<std::optional<int64_t>>& dims, const char* none) {
  std::vector<std::string> parts;
  for (const auto& d : dims) parts.push_back(d ? absl::StrCat(*d) : none);
  return absl::StrJoin(parts, ", ");
}
std::string ShowChunk(const std::optional<int64_t>& c) {
  return c ? absl::StrCat(*c) : "std::nullopt";
}
const char* KindEnum(Kind kind) {
  switch (kind) {
    case Kind::kVmap:
      return "Kind::kVmap";
    case Kind::kGrad:
      return "Kind::kGrad";
    case Kind::kVjp:
      return "Kind::kVjp";
    case Kind::kJvp:
      return "Kind::kJvp";
    case Kind::kJacrev:
      return "Kind::kJacrev";
    case Kind::kJacfwd:
      return "Kind::kJacfwd";
    case Kind::kHessian:
      return "Kind::kHessian";
    case Kind::kJit:
      return "Kind::kJit";
    case Kind::kFunctionalize:
      return "Kind::kFunctionalize";
  }
  return "?";
}

}  // namespace

Layer Layer::Vmap(std::vector<std::optional<int64_t>> in_dims, std::vector<int64_t> out_dims,
                  int64_t batch, std::optional<int64_t> chunk_size) {
  Layer l;
  l.kind = Kind::kVmap;
  l.in_dims = std::move(in_dims);
  l.out_dims = std::move(out_dims);
  l.batch = batch;
  l.chunk_size = chunk_size;
  return l;
}

Layer Layer::Of(Kind kind, std::vector<int64_t> argnums, std::optional<int64_t> chunk_size) {
  Layer l;
  l.kind = kind;
  l.argnums = std::move(argnums);
  l.chunk_size = chunk_size;
  return l;
}

Layer Layer::Functionalize(bool remove_views) {
  Layer l;
  l.kind = Kind::kFunctionalize;
  l.remove_views = remove_views;
  return l;
}

std::string Layer::ToCpp() const {
  if (kind == Kind::kFunctionalize) {
    return absl::StrCat("Layer::Functionalize(", remove_views ? "true" : "false", ")");
  }
  if (kind == Kind::kVmap) {
    return absl::StrCat("Layer::Vmap({", ShowDims(in_dims, "std::nullopt"), "}, {",
                        absl::StrJoin(out_dims, ", "), "}, ", batch, ", ", ShowChunk(chunk_size),
                        ")");
  }
  return absl::StrCat("Layer::Of(", KindEnum(kind), ", {", absl::StrJoin(argnums, ", "), "}, ",
                      ShowChunk(chunk_size), ")");
}

std::string Layer::Describe() const {
  std::string s = KindName(kind);
  if (kind == Kind::kFunctionalize) {
    return s + (remove_views ? "(remove=mutations_and_views)" : "(remove=mutations)");
  }
  if (kind == Kind::kVmap) {
    absl::StrAppend(&s, "(in_dims=[", ShowDims(in_dims, "none"), "], out_dims=[",
                    absl::StrJoin(out_dims, ", "), "], B=", batch);
  } else if (!argnums.empty()) {
    absl::StrAppend(&s, "(argnums=[", absl::StrJoin(argnums, ", "), "]");
  } else {
    return s;
  }
  if (chunk_size) absl::StrAppend(&s, ", chunk_size=", *chunk_size);
  return s + ")";
}

Tensor Tangent(const Tensor& like) {
  return Constant(like, Shape(like.sizes().begin(), like.sizes().end()), 202);
}

namespace {

// s = Σ_o sum(out_o * Weight(out_o)): every output element counts with its own weight.
Tensor Scalarize(const TensorList& outs) {
  Tensor s;
  for (const Tensor& o : outs) {
    Tensor term = sum(o * Weight(o));
    s = s.defined() ? s + term : term;
  }
  return s;
}

TensorList Concat(TensorList a, const TensorList& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

Fn Transform(const Layer& layer, Fn inner) {
  switch (layer.kind) {
    case Kind::kVmap: {
      std::vector<std::optional<int64_t>> out(layer.out_dims.begin(), layer.out_dims.end());
      return vmap(TensorListFn(std::move(inner)), Dims(layer.in_dims), Dims(out),
                  Randomness::kError, layer.chunk_size);
    }
    case Kind::kGrad:
      return grad(ScalarFn([inner](const TensorList& a) { return Scalarize(inner(a)); }),
                  layer.argnums);
    case Kind::kVjp:
      return [inner](const TensorList& a) {
        VjpResult r = vjp(inner, a);
        TensorList cotangents;
        for (const Tensor& o : r.outputs) cotangents.push_back(Weight(o));
        return Concat(r.outputs, r.vjp_fn(cotangents));
      };
    case Kind::kJvp:
      return [inner](const TensorList& a) {
        TensorList tangents;
        for (const Tensor& x : a) tangents.push_back(Tangent(x));
        JvpResult r = jvp(inner, a, tangents);
        return Concat(r.outputs, r.tangents);
      };
    case Kind::kJacrev:
      return jacrev([inner](const TensorList& a) { return inner(a)[0]; }, layer.argnums,
                    layer.chunk_size);
    case Kind::kJacfwd:
      return jacfwd([inner](const TensorList& a) { return inner(a)[0]; }, layer.argnums,
                    Randomness::kError, layer.chunk_size);
    case Kind::kHessian:
      return hessian([inner](const TensorList& a) { return Scalarize(inner(a)); }, layer.argnums);
    case Kind::kJit: {
      auto j = std::make_shared<JitFunction>(jit(std::move(inner)));
      return [j](const TensorList& a) { return (*j)(a); };
    }
    case Kind::kFunctionalize:
      return functionalize(std::function<TensorList(const TensorList&)>(std::move(inner)),
                           layer.remove_views ? FunctionalizeRemove::kMutationsAndViews
                                              : FunctionalizeRemove::kMutations);
  }
  return inner;
}

Fn Compose(const std::vector<Layer>& stack, Fn f) {
  for (size_t i = stack.size(); i-- > 0;) f = Transform(stack[i], std::move(f));
  return f;
}

std::vector<InputSpec> OuterInputs(const std::vector<InputSpec>& example,
                                   const std::vector<Layer>& stack) {
  std::vector<InputSpec> specs = example;
  for (size_t l = stack.size(); l-- > 0;) {
    const Layer& layer = stack[l];
    if (layer.kind != Kind::kVmap) continue;
    for (size_t i = 0; i < specs.size() && i < layer.in_dims.size(); ++i) {
      if (!layer.in_dims[i]) continue;
      const int64_t rank = static_cast<int64_t>(specs[i].shape.size());
      int64_t d = *layer.in_dims[i];
      if (d < 0) d += rank + 1;
      d = std::clamp<int64_t>(d, 0, rank);  // an out-of-range in_dim fails in vmap itself
      specs[i].shape.insert(specs[i].shape.begin() + d, layer.batch);
    }
  }
  return specs;
}

// ---------------------------------------------------------------------------------------
// Oracles.
// ---------------------------------------------------------------------------------------

namespace {

// Float64 contiguous copies (the oracles perturb elements of their own copies).
std::vector<std::vector<double>> Values(const TensorList& xs) {
  std::vector<std::vector<double>> v;
  for (const Tensor& x : xs) v.push_back(to(x, kFloat64).to_vector<double>());
  return v;
}
TensorList FromValues(const std::vector<std::vector<double>>& v, const TensorList& like) {
  TensorList r;
  for (size_t i = 0; i < v.size(); ++i) r.push_back(tensor(v[i], like[i].sizes()));
  return r;
}

constexpr double kStep = 1e-6;         // first derivatives
constexpr double kHessianStep = 1e-4;  // second derivatives

double ScalarOf(const Fn& f, const std::vector<std::vector<double>>& v, const TensorList& like) {
  return Scalarize(f(FromValues(v, like))).item<double>();
}

// Central differences of s = Scalarize(f) for every element of input k.
Tensor NumericalGrad(const Fn& f, const TensorList& inputs, size_t k, double step) {
  std::vector<std::vector<double>> v = Values(inputs);
  std::vector<double> g(v[k].size());
  for (size_t e = 0; e < v[k].size(); ++e) {
    const double x = v[k][e];
    v[k][e] = x + step;
    const double plus = ScalarOf(f, v, inputs);
    v[k][e] = x - step;
    const double minus = ScalarOf(f, v, inputs);
    v[k][e] = x;
    g[e] = (plus - minus) / (2 * step);
  }
  return tensor(g, inputs[k].sizes());
}

// f(x + h * dir) - f(x - h * dir), over 2h, output by output.
TensorList Directional(const Fn& f, const TensorList& inputs,
                       const std::vector<std::vector<double>>& dir, double step) {
  std::vector<std::vector<double>> v = Values(inputs), plus = v, minus = v;
  for (size_t i = 0; i < v.size(); ++i) {
    for (size_t e = 0; e < v[i].size(); ++e) {
      plus[i][e] += step * dir[i][e];
      minus[i][e] -= step * dir[i][e];
    }
  }
  TensorList hi = f(FromValues(plus, inputs)), lo = f(FromValues(minus, inputs));
  TensorList r;
  for (size_t o = 0; o < hi.size(); ++o) {
    r.push_back((to(hi[o], kFloat64) - to(lo[o], kFloat64)) / (2 * step));
  }
  return r;
}

// The Jacobian of f's first output w.r.t. input k: out.shape + input.shape.
Tensor NumericalJacobian(const Fn& f, const TensorList& inputs, size_t k, double step) {
  std::vector<std::vector<double>> dir;
  for (const Tensor& x : inputs) dir.emplace_back(static_cast<size_t>(x.numel()), 0.0);
  const Tensor out = f(inputs)[0];
  Shape shape(out.sizes().begin(), out.sizes().end());
  shape.insert(shape.end(), inputs[k].sizes().begin(), inputs[k].sizes().end());
  std::vector<double> jac(static_cast<size_t>(out.numel() * inputs[k].numel()));
  const size_t cols = static_cast<size_t>(inputs[k].numel());
  for (size_t e = 0; e < cols; ++e) {
    dir[k][e] = 1.0;
    const std::vector<double> column = Directional(f, inputs, dir, step)[0].to_vector<double>();
    dir[k][e] = 0.0;
    for (size_t row = 0; row < column.size(); ++row) jac[row * cols + e] = column[row];
  }
  return tensor(jac, shape);
}

// The Hessian block d2 s / d input a d input b by second-order central differences.
Tensor NumericalHessian(const Fn& f, const TensorList& inputs, size_t a, size_t b, double step) {
  std::vector<std::vector<double>> v = Values(inputs);
  const size_t na = v[a].size(), nb = v[b].size();
  std::vector<double> h(na * nb);
  for (size_t i = 0; i < na; ++i) {
    for (size_t j = 0; j < nb; ++j) {
      auto at = [&](double si, double sj) {
        std::vector<std::vector<double>> w = v;
        w[a][i] += si * step;
        w[b][j] += sj * step;
        return ScalarOf(f, w, inputs);
      };
      h[i * nb + j] = (at(1, 1) - at(1, -1) - at(-1, 1) + at(-1, -1)) / (4 * step * step);
    }
  }
  Shape shape(inputs[a].sizes().begin(), inputs[a].sizes().end());
  shape.insert(shape.end(), inputs[b].sizes().begin(), inputs[b].sizes().end());
  return tensor(h, shape);
}

// Oracle: layer's reference result; the derivative oracles use steps kStep * step_scale
// (kHessianStep * step_scale for hessian).
TensorList Oracle(const Layer& layer, const Fn& inner, const TensorList& inputs,
                  double step_scale) {
  const double h = kStep * step_scale;
  switch (layer.kind) {
    case Kind::kVmap:
      return testing::LoopVmap(inner, inputs, layer.in_dims, layer.out_dims);
    case Kind::kGrad: {
      TensorList r;
      for (int64_t k : layer.argnums)
        r.push_back(NumericalGrad(inner, inputs, static_cast<size_t>(k), h));
      return r;
    }
    case Kind::kVjp: {
      TensorList r = inner(inputs);
      for (size_t k = 0; k < inputs.size(); ++k) r.push_back(NumericalGrad(inner, inputs, k, h));
      return r;
    }
    case Kind::kJvp: {
      std::vector<std::vector<double>> dir;
      for (const Tensor& x : inputs) dir.push_back(to(Tangent(x), kFloat64).to_vector<double>());
      return Concat(inner(inputs), Directional(inner, inputs, dir, h));
    }
    case Kind::kJacrev:
    case Kind::kJacfwd: {
      TensorList r;
      for (int64_t k : layer.argnums) {
        r.push_back(NumericalJacobian(inner, inputs, static_cast<size_t>(k), h));
      }
      return r;
    }
    case Kind::kHessian: {
      TensorList r;
      for (int64_t a : layer.argnums) {
        for (int64_t b : layer.argnums) {
          r.push_back(NumericalHessian(inner, inputs, static_cast<size_t>(a),
                                       static_cast<size_t>(b), kHessianStep * step_scale));
        }
      }
      return r;
    }
    case Kind::kJit:
    case Kind::kFunctionalize:
      return inner(inputs);
  }
  return {};
}

// The comparison of one check: exact, or within tol * max(1, max |expected|).
struct Tolerance {
  bool exact = false;
  double tol = 0.0;
};

Tolerance ToleranceFor(Kind kind, DType dtype) {
  const bool f32 = dtype == kFloat32;
  switch (kind) {
    case Kind::kJit:
      return {true, 0.0};
    case Kind::kFunctionalize:
      // To rounding: functionalize replays writes out of place and (remove=mutations_and_views)
      // views as copies, so a kernel may see a contiguous operand where eager code saw a
      // strided one and take its vectorized path (one ulp apart: soak seed 1024957, -c opt).
      return {false, f32 ? 1e-6 : 1e-13};
    case Kind::kVmap:
      return {false, f32 ? 1e-4 : 1e-9};
    case Kind::kHessian:
      return {false, f32 ? 5e-3 : 1e-4};
    default:
      return {false, f32 ? 2e-3 : 1e-5};
  }
}

std::string ShapeString(const Tensor& t) {
  return absl::StrCat("[", absl::StrJoin(t.sizes(), ", "), "]");
}

// "" when actual matches expected, else what differs.
std::string Compare(const TensorList& actual, const TensorList& expected, Tolerance tol) {
  if (actual.size() != expected.size()) {
    return absl::StrCat("got ", actual.size(), " outputs, the oracle ", expected.size());
  }
  for (size_t o = 0; o < actual.size(); ++o) {
    const Tensor& a = actual[o];
    const Tensor& e = expected[o];
    if (!a.defined() || !e.defined()) {
      return absl::StrCat("output ", o, ": undefined (", a.defined(), " vs ", e.defined(), ")");
    }
    if (!std::equal(a.sizes().begin(), a.sizes().end(), e.sizes().begin(), e.sizes().end())) {
      return absl::StrCat("output ", o, ": shape ", ShapeString(a), ", the oracle's ",
                          ShapeString(e));
    }
    if (tol.exact && a.dtype() != e.dtype()) {
      return absl::StrCat("output ", o, ": dtype ", DTypeName(a.dtype()), ", the oracle's ",
                          DTypeName(e.dtype()));
    }
    const std::vector<double> av = to(a, kFloat64).to_vector<double>();
    const std::vector<double> ev = to(e, kFloat64).to_vector<double>();
    double scale = 1.0;
    for (double x : ev) {
      if (std::isfinite(x)) scale = std::max(scale, std::abs(x));
    }
    for (size_t i = 0; i < av.size(); ++i) {
      const bool both_nan = std::isnan(av[i]) && std::isnan(ev[i]);
      if (both_nan || (std::isinf(av[i]) && av[i] == ev[i])) continue;
      const bool same = tol.exact ? av[i] == ev[i] : std::abs(av[i] - ev[i]) <= tol.tol * scale;
      if (!same) {
        return absl::StrCat("output ", o, " ", ShapeString(a), " element ", i, ": ", av[i],
                            ", the oracle's ", ev[i], " (|diff| ", std::abs(av[i] - ev[i]),
                            ", allowed ", tol.exact ? 0.0 : tol.tol * scale, ")");
      }
    }
  }
  return "";
}

// InRange: every value finite and at most 1e8 in magnitude (float32 programs are checked
// against float64 differences, which stay finite where float32 overflows).
bool InRange(const TensorList& ts) {
  for (const Tensor& t : ts) {
    for (double v : to(t, kFloat64).to_vector<double>()) {
      if (!std::isfinite(v) || std::abs(v) > 1e8) return false;
    }
  }
  return true;
}

double Dot(const TensorList& a, const TensorList& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::vector<double> x = to(a[i], kFloat64).to_vector<double>();
    const std::vector<double> y = to(b[i], kFloat64).to_vector<double>();
    for (size_t e = 0; e < x.size(); ++e) s += x[e] * y[e];
  }
  return s;
}

Outcome Rejected(const std::string& where, const Error& e) {
  return {Outcome::kRejected, absl::StrCat(where, ": ", e.what())};
}
Outcome Mismatch(std::string message) { return {Outcome::kMismatch, std::move(message)}; }

Outcome CheckUnbalanced(Outcome o) {
  if (!LayerStack::empty()) {
    return Mismatch(absl::StrCat("the layer stack holds ", LayerStack::size(),
                                 " levels after the check (", o.message, ")"));
  }
  return o;
}

Outcome CheckOnce(const Fn& f, const std::optional<Fn>& plain,
                  const std::vector<InputSpec>& example, DType dtype, uint64_t input_seed,
                  const std::vector<Layer>& stack) {
  const std::vector<InputSpec> specs = OuterInputs(example, stack);
  const TensorList inputs = MakeInputs(specs, dtype, input_seed);
  const Layer& outer = stack.front();
  const Fn inner = Compose(std::vector<Layer>(stack.begin() + 1, stack.end()), f);
  TensorList actual;
  try {
    const Fn transformed = Transform(outer, inner);
    // jit: the trace is taken on other inputs of the same layout, so this call replays it.
    if (outer.kind == Kind::kJit) transformed(MakeInputs(specs, dtype, input_seed + 1));
    actual = transformed(inputs);
  } catch (const Error& e) {
    return Rejected(KindName(outer.kind), e);
  }
  TensorList expected;
  const Tolerance tolerance = ToleranceFor(outer.kind, dtype);
  try {
    expected = Oracle(outer, inner, inputs, 1.0);
    if (IsDerivative(outer.kind)) {
      // Central differences are an oracle only where they have settled: with half the
      // step they must agree with themselves (a fast oscillation, cos(exp(8x^3)), or values
      // near float32's range, do not; the case is then out of the oracle's reach).
      if (!InRange(expected)) {
        return {Outcome::kRejected, "oracle: values beyond what central differences resolve"};
      }
      const TensorList finer = Oracle(outer, inner, inputs, 0.5);
      if (!Compare(finer, expected, tolerance).empty()) {
        return {Outcome::kRejected, "oracle: central differences do not settle (step h vs h/2)"};
      }
      expected = finer;
    }
  } catch (const Error& e) {
    return Rejected("oracle", e);
  }
  const std::string diff = Compare(actual, expected, tolerance);
  if (!diff.empty()) return Mismatch(absl::StrCat(outer.Describe(), " vs its oracle: ", diff));

  // <J t, c> == <t, Jᵀ c>: jvp's tangents against vjp's cotangent products (no differences).
  if (outer.kind == Kind::kJvp) {
    try {
      const size_t n = actual.size() / 2;
      const TensorList outs(actual.begin(), actual.begin() + static_cast<ptrdiff_t>(n));
      const TensorList jt(actual.begin() + static_cast<ptrdiff_t>(n), actual.end());
      const TensorList vjp_side = Transform(Layer::Of(Kind::kVjp), inner)(inputs);
      const TensorList jtc(vjp_side.begin() + static_cast<ptrdiff_t>(n), vjp_side.end());
      TensorList cot, tangents;
      for (const Tensor& o : outs) cot.push_back(Weight(o));
      for (const Tensor& x : inputs) tangents.push_back(Tangent(x));
      const double lhs = Dot(jt, cot), rhs = Dot(tangents, jtc);
      const double tol =
          (dtype == kFloat32 ? 1e-4 : 1e-9) * std::max({1.0, std::abs(lhs), std::abs(rhs)});
      if (std::abs(lhs - rhs) > tol) {
        return Mismatch(absl::StrCat("<jvp t, c> = ", lhs, " but <t, vjp c> = ", rhs));
      }
    } catch (const Error& e) {
      return Rejected("vjp (transposition)", e);
    }
  }

  // A custom Function step against the same math in built-in ops, under the whole stack.
  if (plain) {
    TensorList with_functions, with_plain;
    try {
      with_functions = Compose(stack, f)(inputs);
    } catch (const Error& e) {
      return Rejected("the whole stack with custom Functions", e);
    }
    try {
      with_plain = Compose(stack, *plain)(inputs);
    } catch (const Error& e) {
      return Rejected("the whole stack on the plain twin", e);
    }
    const Tolerance tol{false, dtype == kFloat32 ? 1e-4 : 1e-9};
    const std::string fn_diff = Compare(with_functions, with_plain, tol);
    if (!fn_diff.empty())
      return Mismatch("custom Functions vs the same math in plain ops: " + fn_diff);
  }
  return {};
}

}  // namespace

Outcome CheckFunction(const Fn& f, const std::optional<Fn>& plain,
                      const std::vector<InputSpec>& example, DType dtype, uint64_t input_seed,
                      const std::vector<Layer>& stack) {
  // GenerateCase gives up after 21 draws and may then return a case whose innermost layer
  // already failed on sample inputs: no layer at all.
  if (stack.empty()) return {Outcome::kRejected, "no transform stack could be drawn"};
  return CheckUnbalanced(CheckOnce(f, plain, example, dtype, input_seed, stack));
}

namespace {

Fn ProgramFn(const Program& p, bool plain) {
  return [p, plain](const TensorList& x) { return p.Run(x, plain); };
}

Kind DrawKind(Rng& r) {
  const int64_t roll = r.Below(100);
  if (roll < 30) return Kind::kVmap;
  if (roll < 42) return Kind::kGrad;
  if (roll < 52) return Kind::kVjp;
  if (roll < 64) return Kind::kJvp;
  if (roll < 74) return Kind::kJacrev;
  if (roll < 84) return Kind::kJacfwd;
  if (roll < 88) return Kind::kHessian;
  if (roll < 96) return Kind::kJit;
  return Kind::kFunctionalize;
}

std::vector<int64_t> DrawArgnums(Rng& r, size_t inputs) {
  std::vector<int64_t> all(inputs);
  for (size_t i = 0; i < inputs; ++i) all[i] = static_cast<int64_t>(i);
  for (size_t i = all.size(); i > 1; --i) {
    std::swap(all[i - 1], all[static_cast<size_t>(r.Below(static_cast<int64_t>(i)))]);
  }
  all.resize(static_cast<size_t>(r.Between(1, static_cast<int64_t>(inputs))));
  return all;
}

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Draws the parameters of a layer of `kind` over a function with these per-level input
// shapes and output ranks.
Layer DrawLayer(Rng& r, Kind kind, const std::vector<InputSpec>& level_inputs,
                const std::vector<int64_t>& output_ranks) {
  Layer l;
  l.kind = kind;
  if (kind == Kind::kVmap) {
    l.batch = r.Between(1, 3);
    bool mapped = false;
    for (const InputSpec& in : level_inputs) {
      const int64_t rank = static_cast<int64_t>(in.shape.size());
      if (r.Chance(70)) {
        l.in_dims.push_back(r.Between(-(rank + 1), rank));
        mapped = true;
      } else {
        l.in_dims.push_back(std::nullopt);
      }
    }
    if (!mapped) l.in_dims[0] = 0;
    for (int64_t rank : output_ranks) l.out_dims.push_back(r.Between(-(rank + 1), rank));
    if (r.Chance(30)) l.chunk_size = r.Between(1, l.batch);
  } else if (kind == Kind::kFunctionalize) {
    l.remove_views = r.Chance(50);
  } else if (kind == Kind::kGrad || kind == Kind::kJacrev || kind == Kind::kJacfwd ||
             kind == Kind::kHessian) {
    l.argnums = DrawArgnums(r, level_inputs.size());
    if ((kind == Kind::kJacrev || kind == Kind::kJacfwd) && r.Chance(30)) {
      l.chunk_size = r.Between(1, 3);
    }
  }
  return l;
}

// The inner evaluations a derivative oracle makes, bounded so that a case stays fast.
bool OracleAffordable(const Layer& outer, const std::vector<InputSpec>& inputs) {
  int64_t n = 0;
  const std::vector<int64_t> all = [&] {
    std::vector<int64_t> v;
    for (size_t i = 0; i < inputs.size(); ++i) v.push_back(static_cast<int64_t>(i));
    return v;
  }();
  const std::vector<int64_t>& args = outer.kind == Kind::kVjp ? all : outer.argnums;
  for (int64_t k : args) n += Numel(inputs[static_cast<size_t>(k)].shape);
  if (outer.kind == Kind::kHessian) return n <= 6;
  return n <= 24;
}

}  // namespace

Case GenerateCase(uint64_t seed, std::vector<std::string>* rejected_stacks) {
  Rng r(seed * 0x2545F4914F6CDD1DULL + 17);
  Case c;
  c.seed = seed;
  c.input_seed = seed + 1000003;
  for (int attempt = 0;; ++attempt) {
    const int64_t roll = r.Below(100);
    const int64_t depth = roll < 30 ? 1 : roll < 75 ? 2 : 3;
    std::vector<Kind> kinds;
    for (int64_t i = 0; i < depth; ++i) kinds.push_back(DrawKind(r));
    GenerateOptions options;
    options.smooth_only = IsDerivative(kinds.front());
    c.program = Generate(r.Next(), options);
    c.stack.clear();
    // Layers from the innermost out, each run on sample inputs to learn its output ranks.
    std::vector<Layer> built;  // innermost first
    std::string why;
    for (size_t i = kinds.size(); i-- > 0 && why.empty();) {
      std::vector<Layer> stack(built.rbegin(), built.rend());
      const std::vector<InputSpec> level = OuterInputs(c.program.inputs, stack);
      std::vector<int64_t> ranks;
      try {
        const TensorList sample = MakeInputs(level, c.program.dtype, 5);
        for (const Tensor& o : Compose(stack, ProgramFn(c.program, false))(sample)) {
          ranks.push_back(o.dim());
        }
      } catch (const Error& e) {
        why = absl::StrCat("inner stack: ", e.what());
        break;
      }
      built.push_back(DrawLayer(r, kinds[i], level, ranks));
    }
    if (why.empty()) {
      c.stack.assign(built.rbegin(), built.rend());
      const std::vector<InputSpec> outer = OuterInputs(c.program.inputs, c.stack);
      if (IsDerivative(c.stack.front().kind) && !OracleAffordable(c.stack.front(), outer)) {
        why = "oracle too costly";
      } else {
        try {
          int64_t numel = 0;
          for (const Tensor& o : Compose(
                   c.stack, ProgramFn(c.program, false))(MakeInputs(outer, c.program.dtype, 5))) {
            numel += o.numel();
          }
          if (numel > 2000) why = "outputs too large";
        } catch (const Error& e) {
          why = absl::StrCat("stack: ", e.what());
        }
      }
    }
    if (why.empty() || attempt >= 20) return c;
    if (std::getenv("FT_PROPERTY_DEBUG")) {
      Case shown = c;
      shown.stack.assign(built.rbegin(), built.rend());
      std::fprintf(stderr, "REDRAW %s\n%s\n", why.c_str(), RegressionTest(shown, {}).c_str());
    }
    if (rejected_stacks) rejected_stacks->push_back(why);
  }
}

Outcome Check(const Case& c) {
  std::optional<Fn> plain;
  if (c.program.HasFunctions()) plain = ProgramFn(c.program, true);
  return CheckFunction(ProgramFn(c.program, false), plain, c.program.inputs, c.program.dtype,
                       c.input_seed, c.stack);
}

// ---------------------------------------------------------------------------------------
// Shrinking.
// ---------------------------------------------------------------------------------------

namespace {

bool StillFails(const Case& c) {
  if (c.stack.empty()) return false;
  return Check(c).status == Outcome::kMismatch;
}

// RefitOutDims: after the program's outputs changed, each vmap layer gets one out_dim (0)
// per output of the function it maps (when that function runs at all).
void RefitOutDims(Case& c) {
  for (size_t i = c.stack.size(); i-- > 0;) {
    if (c.stack[i].kind != Kind::kVmap) continue;
    const std::vector<Layer> inner(c.stack.begin() + static_cast<ptrdiff_t>(i) + 1, c.stack.end());
    try {
      const TensorList sample =
          MakeInputs(OuterInputs(c.program.inputs, inner), c.program.dtype, 5);
      const size_t n = Compose(inner, ProgramFn(c.program, false))(sample).size();
      c.stack[i].out_dims.assign(n, 0);
    } catch (const Error&) {
      return;
    }
  }
}

// Candidate simplifications of c, smallest first.
std::vector<Case> Candidates(const Case& c) {
  std::vector<Case> out;
  // Fewer layers.
  for (size_t i = 0; i < c.stack.size() && c.stack.size() > 1; ++i) {
    Case d = c;
    d.stack.erase(d.stack.begin() + static_cast<ptrdiff_t>(i));
    out.push_back(d);
  }
  // Fewer outputs, or an earlier value as the output.
  const int values = static_cast<int>(c.program.inputs.size() + c.program.steps.size());
  if (c.program.outputs.size() > 1) {
    for (size_t o = 0; o < c.program.outputs.size(); ++o) {
      Case d = c;
      d.program.outputs = {c.program.outputs[o]};
      d.program = DeadCodeEliminated(d.program);
      RefitOutDims(d);
      out.push_back(d);
    }
  }
  for (int v = static_cast<int>(c.program.inputs.size()); v < values; ++v) {
    if (c.program.outputs.size() != 1 || c.program.outputs[0] == v) continue;
    Case d = c;
    d.program.outputs = {v};
    d.program = DeadCodeEliminated(d.program);
    RefitOutDims(d);
    out.push_back(d);
  }
  // Bypass a step: its users read its first argument instead.
  for (size_t s = 0; s < c.program.steps.size(); ++s) {
    const int id = static_cast<int>(c.program.inputs.size() + s);
    const int replacement = c.program.steps[s].args[0];
    Case d = c;
    for (Step& later : d.program.steps) {
      for (int& a : later.args) {
        if (a == id) a = replacement;
      }
    }
    for (int& o : d.program.outputs) {
      if (o == id) o = replacement;
    }
    d.program = DeadCodeEliminated(d.program);
    if (d.program.steps.size() < c.program.steps.size()) out.push_back(d);
  }
  // Simpler parameters and layouts.
  for (size_t i = 0; i < c.stack.size(); ++i) {
    if (c.stack[i].chunk_size) {
      Case d = c;
      d.stack[i].chunk_size.reset();
      out.push_back(d);
    }
    for (size_t k = 0; k < c.stack[i].out_dims.size(); ++k) {
      if (c.stack[i].out_dims[k] != 0) {
        Case d = c;
        d.stack[i].out_dims[k] = 0;
        out.push_back(d);
      }
    }
    for (size_t k = 0; k < c.stack[i].in_dims.size(); ++k) {
      if (c.stack[i].in_dims[k] && *c.stack[i].in_dims[k] != 0) {
        Case d = c;
        d.stack[i].in_dims[k] = 0;
        out.push_back(d);
      }
    }
  }
  for (size_t i = 0; i < c.program.inputs.size(); ++i) {
    if (c.program.inputs[i].layout != Layout::kContiguous) {
      Case d = c;
      d.program.inputs[i].layout = Layout::kContiguous;
      out.push_back(d);
    }
  }
  if (c.program.dtype != kFloat64) {
    Case d = c;
    d.program.dtype = kFloat64;
    out.push_back(d);
  }
  return out;
}

}  // namespace

Case Shrink(const Case& c) {
  Case best = c;
  int budget = 300;  // checks; each is a full case, so this bounds the time a failure costs
  for (bool progress = true; progress && budget > 0;) {
    progress = false;
    for (const Case& d : Candidates(best)) {
      if (--budget <= 0) break;
      if (StillFails(d)) {
        best = d;
        progress = true;
        break;
      }
    }
  }
  return best;
}

std::string RegressionTest(const Case& c, const Outcome& o) {
  std::vector<std::string> layers;
  for (const Layer& l : c.stack) layers.push_back(l.ToCpp());
  std::vector<std::string> specs;
  for (const InputSpec& s : c.program.inputs) {
    specs.push_back(
        absl::StrCat("{{", absl::StrJoin(s.shape, ", "), "}, Layout::", LayoutName(s.layout), "}"));
  }
  std::string plain = "std::nullopt";
  if (c.program.HasFunctions()) plain = absl::StrCat("Fn(", c.program.ToCpp(true), ")");
  return absl::StrCat(
      "// Found by the property test, seed ", c.seed, ": ", o.message, "\n",
      "TEST(PropertyRegression, Seed", c.seed, ") {\n", "  const Fn f = ", c.program.ToCpp(false),
      ";\n", "  const std::optional<Fn> plain = ", plain, ";\n",
      "  const std::vector<Layer> stack = {", absl::StrJoin(layers, ", "), "};\n",
      "  const Outcome o = CheckFunction(f, plain, {", absl::StrJoin(specs, ", "), "}, ",
      c.program.dtype == kFloat32 ? "kFloat32" : "kFloat64", ", ", c.input_seed, ", stack);\n",
      "  EXPECT_NE(o.status, Outcome::kMismatch) << o.message;\n", "}\n");
}

}  // namespace ft::property

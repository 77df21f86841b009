#include "tests/property/program.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/factories.h"
#include "tests/custom_function_db.h"

namespace ft::property {

// ---------------------------------------------------------------------------------------
// Rng, inputs, constants.
// ---------------------------------------------------------------------------------------

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
int64_t Rng::Below(int64_t n) { return static_cast<int64_t>(Next() % static_cast<uint64_t>(n)); }
int64_t Rng::Between(int64_t lo, int64_t hi) { return lo + Below(hi - lo + 1); }
bool Rng::Chance(int percent) { return Below(100) < percent; }

const char* LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kContiguous:
      return "kContiguous";
    case Layout::kTransposed:
      return "kTransposed";
    case Layout::kStrided:
      return "kStrided";
    case Layout::kExpanded:
      return "kExpanded";
  }
  return "?";
}

namespace {

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<double> Uniform(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = static_cast<double>(rng.Next() >> 11) * 0x1.0p-53 * 2.0 - 1.0;
  return v;
}

Tensor Laid(const Shape& shape, Layout layout, DType dtype, uint64_t seed) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (layout == Layout::kTransposed && rank >= 2) {
    Shape reversed(shape.rbegin(), shape.rend());
    Tensor base = to(tensor(Uniform(Numel(shape), seed), reversed), dtype);
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    std::iota(perm.rbegin(), perm.rend(), 0);
    return permute(base, perm);
  }
  if (layout == Layout::kStrided && rank >= 1) {
    Shape wide = shape;
    wide.back() *= 2;
    Tensor base = to(tensor(Uniform(Numel(wide), seed), wide), dtype);
    return slice(base, -1, 0, std::nullopt, 2);
  }
  if (layout == Layout::kExpanded && rank >= 1 && shape[0] > 1) {
    Shape one = shape;
    one[0] = 1;
    Tensor base = to(tensor(Uniform(Numel(one), seed), one), dtype);
    return expand(base, shape);
  }
  return to(tensor(Uniform(Numel(shape), seed), shape), dtype);
}

}  // namespace

TensorList MakeInputs(const std::vector<InputSpec>& specs, DType dtype, uint64_t seed) {
  TensorList r;
  for (size_t i = 0; i < specs.size(); ++i) {
    r.push_back(Laid(specs[i].shape, specs[i].layout, dtype, seed * 7919 + i));
  }
  return r;
}

Tensor Constant(const Tensor& like, const Shape& shape, int64_t salt) {
  std::vector<double> v(static_cast<size_t>(Numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = 0.6 * std::sin(0.7 * static_cast<double>(i) + 1.3 * static_cast<double>(salt) + 0.2);
  }
  return to(tensor(v, shape), like.dtype());
}

Tensor Index(const Shape& shape, int64_t high, int64_t salt) {
  std::vector<int64_t> v(static_cast<size_t>(Numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = (static_cast<int64_t>(i) * 7 + salt * 3 + 1) % high;
  }
  return tensor(v, shape);
}

Tensor Weight(const Tensor& like) {
  return Constant(like, Shape(like.sizes().begin(), like.sizes().end()), 101);
}

Tensor Spd(const Tensor& x) {
  const Tensor t = tanh(x);
  const int64_t m = x.size(-2);
  return matmul(t, transpose(t, -2, -1)) + to(eye(m), x.dtype()) * static_cast<double>(m);
}

Tensor WellConditioned(const Tensor& x) {
  const int64_t m = x.size(-2);
  return Spd(x) + Constant(x, {m, m}, 7) * 0.5;
}

Tensor MulNarrow_(const Tensor& x, int64_t dim, int64_t start, int64_t length, double factor) {
  Tensor c = clone(x);
  mul_(narrow(c, dim, start, length), factor);
  return c;
}
Tensor FillSelect_(const Tensor& x, int64_t dim, int64_t index, double value) {
  Tensor c = clone(x);
  fill_(select(c, dim, index), value);
  return c;
}
Tensor AddTranspose_(const Tensor& x, int64_t dim0, int64_t dim1, const Tensor& other) {
  Tensor c = clone(x);
  add_(transpose(c, dim0, dim1), other);
  return c;
}
Tensor ZeroDiagonal_(const Tensor& x) {
  Tensor c = clone(x);
  zero_(diagonal(c, 0, -2, -1));
  return c;
}
Tensor OneHotArgmax(const Tensor& x) { return to(one_hot(argmax(x, -1), x.size(-1)), x.dtype()); }

// ---------------------------------------------------------------------------------------
// Sym: the catalog's bodies are generic over the value type. With Tensor they compute; with
// Sym they print the same expression as C++ (so a program prints exactly what it runs).
// The Sym overloads live in their own namespace, found by argument-dependent lookup only, so
// that with Tensor arguments a body calls ft's ops and the helpers above.
// ---------------------------------------------------------------------------------------

namespace sym {

struct Sym {
  explicit Sym(std::string e) : expr(std::move(e)) {}
  std::string expr;
  Sym dtype() const { return Sym(expr + ".dtype()"); }
};
struct SymList {
  std::string expr;
  Sym operator[](int64_t i) const { return Sym(absl::StrCat(expr, "[", i, "]")); }
};

std::string Show(const Sym& s) { return s.expr; }
std::string Show(int64_t v) { return absl::StrCat(v); }
std::string Show(int v) { return absl::StrCat(v); }
std::string Show(bool v) { return v ? "true" : "false"; }
std::string Show(double v) {
  std::string s = absl::StrCat(v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}
std::string Show(const Shape& v) { return absl::StrCat("{", absl::StrJoin(v, ", "), "}"); }
std::string Show(const std::vector<Sym>& v) {
  std::vector<std::string> parts;
  for (const Sym& s : v) parts.push_back(s.expr);
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}
std::string Show(DType d) { return d == kFloat32 ? "kFloat32" : "kFloat64"; }

template <typename... A>
std::string Args(const A&... a) {
  std::vector<std::string> parts = {Show(a)...};
  return absl::StrJoin(parts, ", ");
}
template <typename... A>
Sym Call(const char* name, const A&... a) {
  return Sym(absl::StrCat(name, "(", Args(a...), ")"));
}

#define FT_PROPERTY_SYM(fn)                              \
  template <typename... A>                               \
  [[maybe_unused]] Sym fn(const Sym& x, const A&... a) { \
    return Call(#fn, x, a...);                           \
  }
FT_PROPERTY_SYM(neg)
FT_PROPERTY_SYM(abs)
FT_PROPERTY_SYM(sign)
FT_PROPERTY_SYM(exp)
FT_PROPERTY_SYM(expm1)
FT_PROPERTY_SYM(log)
FT_PROPERTY_SYM(log1p)
FT_PROPERTY_SYM(sin)
FT_PROPERTY_SYM(cos)
FT_PROPERTY_SYM(tan)
FT_PROPERTY_SYM(tanh)
FT_PROPERTY_SYM(sigmoid)
FT_PROPERTY_SYM(relu)
FT_PROPERTY_SYM(sqrt)
FT_PROPERTY_SYM(rsqrt)
FT_PROPERTY_SYM(square)
FT_PROPERTY_SYM(reciprocal)
FT_PROPERTY_SYM(floor)
FT_PROPERTY_SYM(round)
FT_PROPERTY_SYM(stop_gradient)
FT_PROPERTY_SYM(exp_)
FT_PROPERTY_SYM(add)
FT_PROPERTY_SYM(sub)
FT_PROPERTY_SYM(mul)
FT_PROPERTY_SYM(div)
FT_PROPERTY_SYM(pow)
FT_PROPERTY_SYM(maximum)
FT_PROPERTY_SYM(minimum)
FT_PROPERTY_SYM(atan2)
FT_PROPERTY_SYM(eq)
FT_PROPERTY_SYM(ne)
FT_PROPERTY_SYM(lt)
FT_PROPERTY_SYM(le)
FT_PROPERTY_SYM(gt)
FT_PROPERTY_SYM(ge)
FT_PROPERTY_SYM(logical_and)
FT_PROPERTY_SYM(logical_or)
FT_PROPERTY_SYM(logical_not)
FT_PROPERTY_SYM(where)
FT_PROPERTY_SYM(clamp)
FT_PROPERTY_SYM(add_)
FT_PROPERTY_SYM(sub_)
FT_PROPERTY_SYM(mul_)
FT_PROPERTY_SYM(div_)
FT_PROPERTY_SYM(clamp_)
FT_PROPERTY_SYM(copy_)
FT_PROPERTY_SYM(sum)
FT_PROPERTY_SYM(mean)
FT_PROPERTY_SYM(prod)
FT_PROPERTY_SYM(amax)
FT_PROPERTY_SYM(amin)
FT_PROPERTY_SYM(logsumexp)
FT_PROPERTY_SYM(var)
FT_PROPERTY_SYM(std)
FT_PROPERTY_SYM(norm)
FT_PROPERTY_SYM(softmax)
FT_PROPERTY_SYM(log_softmax)
FT_PROPERTY_SYM(cumsum)
FT_PROPERTY_SYM(cumprod)
FT_PROPERTY_SYM(logcumsumexp)
FT_PROPERTY_SYM(linear_recurrence)
FT_PROPERTY_SYM(sum_to_size)
FT_PROPERTY_SYM(reshape)
FT_PROPERTY_SYM(view)
FT_PROPERTY_SYM(flatten)
FT_PROPERTY_SYM(unflatten)
FT_PROPERTY_SYM(expand)
FT_PROPERTY_SYM(unsqueeze)
FT_PROPERTY_SYM(squeeze)
FT_PROPERTY_SYM(squeeze_dim)
FT_PROPERTY_SYM(squeeze_dims)
FT_PROPERTY_SYM(movedim)
FT_PROPERTY_SYM(permute)
FT_PROPERTY_SYM(transpose)
FT_PROPERTY_SYM(t)
FT_PROPERTY_SYM(select)
FT_PROPERTY_SYM(narrow)
FT_PROPERTY_SYM(slice)
FT_PROPERTY_SYM(diagonal)
FT_PROPERTY_SYM(select_scatter)
FT_PROPERTY_SYM(slice_scatter)
FT_PROPERTY_SYM(diagonal_scatter)
FT_PROPERTY_SYM(contiguous)
FT_PROPERTY_SYM(clone)
FT_PROPERTY_SYM(flip)
FT_PROPERTY_SYM(index_select)
FT_PROPERTY_SYM(gather)
FT_PROPERTY_SYM(scatter_add)
FT_PROPERTY_SYM(take_along_dim)
FT_PROPERTY_SYM(repeat)
FT_PROPERTY_SYM(pad)
FT_PROPERTY_SYM(to)
FT_PROPERTY_SYM(matmul)
FT_PROPERTY_SYM(mm)
FT_PROPERTY_SYM(bmm)
FT_PROPERTY_SYM(dot)
FT_PROPERTY_SYM(outer)
FT_PROPERTY_SYM(linear)
FT_PROPERTY_SYM(linalg_solve)
FT_PROPERTY_SYM(linalg_solve_triangular)
FT_PROPERTY_SYM(cholesky)
FT_PROPERTY_SYM(inverse)
FT_PROPERTY_SYM(logdet)
FT_PROPERTY_SYM(Spd)
FT_PROPERTY_SYM(WellConditioned)
FT_PROPERTY_SYM(argsort)
FT_PROPERTY_SYM(argmax)
FT_PROPERTY_SYM(argmin)
FT_PROPERTY_SYM(zeros_like)
FT_PROPERTY_SYM(ones_like)
FT_PROPERTY_SYM(full_like)
FT_PROPERTY_SYM(MulNarrow_)
FT_PROPERTY_SYM(FillSelect_)
FT_PROPERTY_SYM(AddTranspose_)
FT_PROPERTY_SYM(ZeroDiagonal_)
FT_PROPERTY_SYM(OneHotArgmax)
// ---- Activations (issue 21). ----
FT_PROPERTY_SYM(silu)
FT_PROPERTY_SYM(mish)
FT_PROPERTY_SYM(softplus)
FT_PROPERTY_SYM(elu)
FT_PROPERTY_SYM(selu)
FT_PROPERTY_SYM(celu)
FT_PROPERTY_SYM(leaky_relu)
FT_PROPERTY_SYM(hardtanh)
FT_PROPERTY_SYM(hardswish)
FT_PROPERTY_SYM(hardsigmoid)
FT_PROPERTY_SYM(logsigmoid)
FT_PROPERTY_SYM(softsign)
FT_PROPERTY_SYM(erf)
FT_PROPERTY_SYM(erfc)
FT_PROPERTY_SYM(erfinv)
FT_PROPERTY_SYM(lgamma)
FT_PROPERTY_SYM(digamma)
// gelu's string mode and polygamma's leading n print by hand (Show has no string overload,
// and a const char* would convert to Show(bool)).
[[maybe_unused]] Sym gelu(const Sym& x) { return Call("gelu", x); }
[[maybe_unused]] Sym gelu(const Sym& x, const char* approximate) {
  return Sym(absl::StrCat("gelu(", x.expr, ", \"", approximate, "\")"));
}
[[maybe_unused]] Sym polygamma(int64_t n, const Sym& x) { return Call("polygamma", n, x); }
// ---- Losses (issue 21). ----
FT_PROPERTY_SYM(mse_loss)
FT_PROPERTY_SYM(l1_loss)
FT_PROPERTY_SYM(smooth_l1_loss)
FT_PROPERTY_SYM(huber_loss)
FT_PROPERTY_SYM(kl_div)
// The losses whose third argument, an optional weight, the catalog passes as std::nullopt.
#define FT_PROPERTY_SYM_LOSS(fn)                                                           \
  template <typename... A>                                                                 \
  [[maybe_unused]] Sym fn(const Sym& x, const Sym& t, std::nullopt_t, const A&... a) {     \
    return Sym(absl::StrCat(#fn "(", Args(x, t), ", std::nullopt, ", Args(a...), ")"));    \
  }
FT_PROPERTY_SYM_LOSS(binary_cross_entropy)
FT_PROPERTY_SYM_LOSS(binary_cross_entropy_with_logits)
FT_PROPERTY_SYM_LOSS(nll_loss)
FT_PROPERTY_SYM_LOSS(cross_entropy)
#undef FT_PROPERTY_SYM_LOSS
// ---- Normalization (issue 21). ----
FT_PROPERTY_SYM(layer_norm)
FT_PROPERTY_SYM(rms_norm)
FT_PROPERTY_SYM(normalize)
FT_PROPERTY_SYM(group_norm)
// batch_norm / instance_norm return a NormResult; the catalog reads its output field.
struct SymNormResult {
  Sym output;
};
template <typename... A>
SymNormResult batch_norm(const Sym& x, const A&... a) {
  return {Sym(Call("batch_norm", x, a...).expr + ".output")};
}
template <typename... A>
SymNormResult instance_norm(const Sym& x, const A&... a) {
  return {Sym(Call("instance_norm", x, a...).expr + ".output")};
}
// ---- Indexing and shape ops for models (issue 21). ----
FT_PROPERTY_SYM(embedding)
FT_PROPERTY_SYM(masked_fill)
FT_PROPERTY_SYM(index_add)
FT_PROPERTY_SYM(tril)
FT_PROPERTY_SYM(triu)
FT_PROPERTY_SYM(roll)
FT_PROPERTY_SYM(pixel_shuffle)
FT_PROPERTY_SYM(pixel_unshuffle)
FT_PROPERTY_SYM(gather_nd)
FT_PROPERTY_SYM(index_put_nd)
// ---- Convolution and pooling (issue 21). ----
FT_PROPERTY_SYM(conv1d)
FT_PROPERTY_SYM(conv2d)
FT_PROPERTY_SYM(conv3d)
FT_PROPERTY_SYM(conv_transpose1d)
FT_PROPERTY_SYM(conv_transpose2d)
FT_PROPERTY_SYM(conv_weight_grad)
FT_PROPERTY_SYM(conv_transpose3d)
FT_PROPERTY_SYM(unfold)
FT_PROPERTY_SYM(fold)
FT_PROPERTY_SYM(max_pool1d)
FT_PROPERTY_SYM(max_pool2d)
FT_PROPERTY_SYM(avg_pool1d)
FT_PROPERTY_SYM(avg_pool2d)
FT_PROPERTY_SYM(adaptive_avg_pool1d)
FT_PROPERTY_SYM(adaptive_avg_pool2d)
FT_PROPERTY_SYM(upsample_nearest)
FT_PROPERTY_SYM(upsample_nearest_backward)
FT_PROPERTY_SYM(upsample_linear)
FT_PROPERTY_SYM(upsample_linear_backward)
// The (values, indices) pools print as std::get of the call.
#define FT_PROPERTY_SYM_PAIR(fn)                                               \
  template <typename... A>                                                     \
  [[maybe_unused]] std::tuple<Sym, Sym> fn(const Sym& x, const A&... a) {      \
    const std::string e = Call(#fn, x, a...).expr;                             \
    return {Sym("std::get<0>(" + e + ")"), Sym("std::get<1>(" + e + ")")};     \
  }
FT_PROPERTY_SYM_PAIR(max_pool1d_with_indices)
FT_PROPERTY_SYM_PAIR(max_pool2d_with_indices)
FT_PROPERTY_SYM_PAIR(adaptive_max_pool2d)
#undef FT_PROPERTY_SYM_PAIR
// ---- Attention and contractions (issue 21). ----
FT_PROPERTY_SYM(addmm)
FT_PROPERTY_SYM(baddbmm)
Sym einsum(const char* equation, const std::vector<Sym>& operands) {
  return Sym(absl::StrCat("einsum(\"", equation, "\", ", Show(operands), ")"));
}
Sym scaled_dot_product_attention(const Sym& q, const Sym& k, const Sym& v, std::nullopt_t,
                                 double dropout_p, bool is_causal) {
  return Sym(absl::StrCat("scaled_dot_product_attention(", Args(q, k, v), ", std::nullopt, ",
                          Args(dropout_p, is_causal), ")"));
}
Sym scaled_dot_product_attention(const Sym& q, const Sym& k, const Sym& v, const Sym& mask,
                                 double dropout_p, bool is_causal, double scale) {
  return Call("scaled_dot_product_attention", q, k, v, mask, dropout_p, is_causal, scale);
}
#undef FT_PROPERTY_SYM

// Names that take no leading Sym (or return several values) get their own overloads.
Sym Constant(const Sym& like, const Shape& shape, int64_t salt) {
  return Call("Constant", like, shape, salt);
}
Sym IndexFor(const Sym&, const Shape& shape, int64_t high, int64_t salt) {
  return Sym(absl::StrCat("Index(", Args(shape, high, salt), ")"));
}
std::vector<Sym> List(const Sym& a, const Sym& b) { return {a, b}; }
Sym cat(const std::vector<Sym>& v, int64_t dim) {
  return Sym(absl::StrCat("cat(", Args(v, dim), ")"));
}
Sym stack(const std::vector<Sym>& v, int64_t dim) {
  return Sym(absl::StrCat("stack(", Args(v, dim), ")"));
}
SymList split(const Sym& x, int64_t size, int64_t dim) {
  return {Call("split", x, size, dim).expr};
}
SymList split_with_sizes(const Sym& x, const Shape& sizes, int64_t dim) {
  return {Call("split_with_sizes", x, sizes, dim).expr};
}
SymList chunk(const Sym& x, int64_t n, int64_t dim) { return {Call("chunk", x, n, dim).expr}; }
std::tuple<Sym, Sym> sort(const Sym& x, int64_t dim, bool descending) {
  const std::string e = Call("sort", x, dim, descending).expr;
  return {Sym("std::get<0>(" + e + ")"), Sym("std::get<1>(" + e + ")")};
}
std::tuple<Sym, Sym> slogdet(const Sym& x) {
  const std::string e = Call("slogdet", x).expr;
  return {Sym("std::get<0>(" + e + ")"), Sym("std::get<1>(" + e + ")")};
}
std::tuple<Sym, Sym> topk(const Sym& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  const std::string e = Call("topk", x, k, dim, largest, sorted).expr;
  return {Sym("std::get<0>(" + e + ")"), Sym("std::get<1>(" + e + ")")};
}
Sym operator+(const Sym& a, const Sym& b) { return Sym("(" + a.expr + " + " + b.expr + ")"); }
Sym operator*(const Sym& a, const Sym& b) { return Sym("(" + a.expr + " * " + b.expr + ")"); }
Sym operator+(const Sym& a, double b) { return Sym("(" + a.expr + " + " + Show(b) + ")"); }
Sym operator*(const Sym& a, double b) { return Sym("(" + a.expr + " * " + Show(b) + ")"); }

// Custom Functions: the call printed with its namespace.
template <typename F, typename... A>
Sym ApplyFn(const Sym& x, const A&... a) {
  return Sym(absl::StrCat("function_db::", F::name, "::apply(", Args(x, a...), ")"));
}
template <size_t I, typename F, typename... A>
Sym ApplyFnOutput(const Sym& x, const A&... a) {
  return Sym(
      absl::StrCat("std::get<", I, ">(function_db::", F::name, "::apply(", Args(x, a...), "))"));
}

}  // namespace sym

using sym::Sym;

namespace {

// The Tensor sides of the Sym-only helpers.
Tensor IndexFor(const Tensor&, const Shape& shape, int64_t high, int64_t salt) {
  return Index(shape, high, salt);
}
TensorList List(const Tensor& a, const Tensor& b) { return {a, b}; }
template <typename F, typename... A>
Tensor ApplyFn(const Tensor& x, const A&... a) {
  return F::apply(x, a...);
}
// Output I of a Function with several outputs.
template <size_t I, typename F, typename... A>
Tensor ApplyFnOutput(const Tensor& x, const A&... a) {
  return std::get<I>(F::apply(x, a...));
}

// ---------------------------------------------------------------------------------------
// The catalog.
// ---------------------------------------------------------------------------------------

using Params = std::vector<int64_t>;
using Propose = std::function<bool(Rng&, const std::vector<Shape>&, Params&)>;

enum Flags : unsigned {
  kSmooth = 1u << 0,    // differentiable at random points (central differences hold)
  kFunction = 1u << 1,  // calls a custom Function (has a plain twin)
};

struct Entry {
  std::string name;
  int arity = 1;
  unsigned flags = 0;
  std::vector<std::string> ops;  // registry ops it exercises
  Propose propose;
  std::function<Tensor(const TensorList&, const Params&, bool)> run;
  std::function<Sym(const std::vector<Sym>&, const Params&, bool)> show;
};

// Def: one generic body serves both run and show.
template <typename Body>
Entry Def(std::string name, int arity, unsigned flags, std::vector<std::string> ops,
          Propose propose, Body body) {
  Entry e;
  e.name = std::move(name);
  e.arity = arity;
  e.flags = flags;
  e.ops = std::move(ops);
  e.propose = std::move(propose);
  e.run = [body](const TensorList& a, const Params& p, bool plain) -> Tensor {
    return body(a, p, plain);
  };
  e.show = [body](const std::vector<Sym>& a, const Params& p, bool plain) -> Sym {
    return body(a, p, plain);
  };
  return e;
}

int64_t Rank(const Shape& s) { return static_cast<int64_t>(s.size()); }
bool AnyRank(Rng&, const std::vector<Shape>&, Params&) { return true; }

// A dim of a rank-r tensor, negative half of the time (r >= 1).
int64_t DrawDim(Rng& r, int64_t rank) {
  const int64_t d = r.Below(rank);
  return r.Chance(50) ? d - rank : d;
}

// Broadcast result of a and b, or false.
bool BroadcastShape(const Shape& a, const Shape& b, Shape* out) {
  const size_t n = std::max(a.size(), b.size());
  Shape r(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    r[i] = x == 1 ? y : x;
  }
  if (out) *out = r;
  return true;
}
bool Broadcastable(Rng&, const std::vector<Shape>& s, Params&) {
  return BroadcastShape(s[0], s[1], nullptr);
}
// b broadcasts to a's shape (an in-place op's operand).
bool BroadcastsInto(Rng&, const std::vector<Shape>& s, Params&) {
  Shape r;
  return BroadcastShape(s[0], s[1], &r) && r == s[0];
}
bool NeedRank(const std::vector<Shape>& s, int64_t lo, int64_t hi = 8) {
  return Rank(s[0]) >= lo && Rank(s[0]) <= hi;
}

// Reduction parameters: p[0] a bitmask of dims (0 = all dims), p[1] keepdim.
bool ReduceDims(Rng& r, const std::vector<Shape>& s, Params& p) {
  const int64_t rank = Rank(s[0]);
  p = {rank == 0 ? 0 : r.Below(int64_t{1} << rank), r.Below(2)};
  return true;
}
Shape DimsOf(const Params& p, int64_t mask_index = 0) {
  Shape dims;
  for (int64_t d = 0; d < 8; ++d) {
    if (p[static_cast<size_t>(mask_index)] & (int64_t{1} << d)) dims.push_back(d);
  }
  return dims;
}
// Elements reduced by dims (all when empty).
int64_t ReducedCount(const Shape& s, const Shape& dims) {
  if (dims.empty()) return Numel(s);
  int64_t n = 1;
  for (int64_t d : dims) n *= s[static_cast<size_t>(d)];
  return n;
}

// A (dim, index) pair that select accepts: both may be negative.
bool SelectAny(Rng& r, const std::vector<Shape>& s, Params& p) {
  if (Rank(s[0]) == 0) return false;
  const int64_t d = DrawDim(r, Rank(s[0]));
  const int64_t size = s[0][static_cast<size_t>(d < 0 ? d + Rank(s[0]) : d)];
  if (size == 0) return false;
  p = {d, r.Between(-size, size - 1)};
  return true;
}

// Two operands that broadcast, and a dim of their broadcast shape (rank >= 1).
bool BroadcastOneDim(Rng& r, const std::vector<Shape>& s, Params& p) {
  Shape shape;
  if (!BroadcastShape(s[0], s[1], &shape) || shape.empty()) return false;
  p = {DrawDim(r, Rank(shape))};
  return true;
}

bool OneDim(Rng& r, const std::vector<Shape>& s, Params& p) {
  if (Rank(s[0]) == 0) return false;
  p = {DrawDim(r, Rank(s[0]))};
  return true;
}

// A reshape target: a random regrouping of the shape's sizes, with one -1 sometimes.
Shape RandomRegroup(Rng& r, const Shape& s) {
  Shape flat;
  for (int64_t d : s) {
    if (d == 1 && r.Chance(50)) continue;  // drop some size-1 dims
    flat.push_back(d);
  }
  Shape out;
  for (size_t i = 0; i < flat.size(); ++i) {
    if (!out.empty() && r.Chance(35)) {
      out.back() *= flat[i];
    } else {
      out.push_back(flat[i]);
    }
  }
  if (r.Chance(25)) out.insert(out.begin() + r.Below(Rank(out) + 1), 1);
  const int64_t numel = Numel(s);
  if (!out.empty() && numel > 0 && r.Chance(30)) out[static_cast<size_t>(r.Below(Rank(out)))] = -1;
  return out;
}

void PushShape(Params& p, const Shape& s) {
  p.push_back(Rank(s));
  p.insert(p.end(), s.begin(), s.end());
}
Shape ReadShape(const Params& p, size_t at) {
  const auto n = static_cast<size_t>(p[at]);
  return Shape(p.begin() + static_cast<ptrdiff_t>(at + 1),
               p.begin() + static_cast<ptrdiff_t>(at + 1 + n));
}

// Reduction dims over at least one element (mean, logsumexp, amax of nothing are not finite).
bool ReduceNonEmpty(Rng& r, const std::vector<Shape>& s, Params& p) {
  return ReduceDims(r, s, p) && ReducedCount(s[0], DimsOf(p)) > 0;
}

// A reshape target (RandomRegroup) as the parameters.
bool RegroupShape(Rng& r, const std::vector<Shape>& s, Params& p) {
  PushShape(p, RandomRegroup(r, s[0]));
  return true;
}

// A dim of the result of inserting one dim (unsqueeze, stack).
bool NewDim(Rng& r, const std::vector<Shape>& s, Params& p) {
  p = {DrawDim(r, Rank(s[0]) + 1)};
  return true;
}

// A bitmask of dims (squeeze_dims, flip).
bool DimMask(Rng& r, const std::vector<Shape>& s, Params& p) {
  p = {Rank(s[0]) == 0 ? 0 : r.Below(int64_t{1} << Rank(s[0]))};
  return true;
}

// Two dims, each possibly negative (movedim, transpose).
bool TwoDims(Rng& r, const std::vector<Shape>& s, Params& p) {
  if (Rank(s[0]) == 0) return false;
  p = {DrawDim(r, Rank(s[0])), DrawDim(r, Rank(s[0]))};
  return true;
}

// slice's (dim, start, end, step): bounds out of range too (slice clamps them).
bool SliceArgs(Rng& r, const std::vector<Shape>& s, Params& p) {
  if (Rank(s[0]) == 0) return false;
  p = {DrawDim(r, Rank(s[0])), r.Between(-4, 4), r.Between(-4, 5), r.Between(1, 3)};
  return true;
}

// diagonal's (offset, dim1, dim2) with distinct dims.
bool DiagonalArgs(Rng& r, const std::vector<Shape>& s, Params& p) {
  if (Rank(s[0]) < 2) return false;
  int64_t d1 = DrawDim(r, Rank(s[0])), d2 = DrawDim(r, Rank(s[0]));
  if ((d1 - d2) % Rank(s[0]) == 0) return false;
  p = {r.Between(-2, 2), d1, d2};
  return true;
}

// The custom Function entries, one template per shape of Function; `plain` runs the twin.
template <typename F>
Entry MulFunction() {  // x * y with broadcasting
  return Def(F::name, 2, kSmooth | kFunction, {"mul"}, Broadcastable,
             [](const auto& a, const Params&, bool plain) {
               return plain ? a[0] * a[1] : ApplyFn<F>(a[0], a[1]);
             });
}
template <typename F>
Entry CubeFunction() {  // output p[0] of (x^3, 3x^2)
  return Def(
      F::name, 1, kSmooth | kFunction, {"mul"},
      [](Rng& r, const std::vector<Shape>&, Params& p) {
        p = {r.Below(2)};
        return true;
      },
      [](const auto& a, const Params& p, bool plain) {
        if (plain) return p[0] ? a[0] * a[0] * 3.0 : a[0] * a[0] * a[0];
        return p[0] ? ApplyFnOutput<1, F>(a[0]) : ApplyFnOutput<0, F>(a[0]);
      });
}
template <typename F>
Entry SortFunction() {  // the sorted values along p[0]
  return Def(F::name, 1, kFunction, {"sort", "argsort", "take_along_dim"}, OneDim,
             [](const auto& a, const Params& p, bool plain) {
               return plain ? std::get<0>(sort(a[0], p[0], false))
                            : ApplyFnOutput<0, F>(a[0], p[0]);
             });
}
template <typename F>
Entry SelectFunction() {  // x[p[0]] along dim 0
  return Def(
      F::name, 1, kSmooth | kFunction, {"select"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0 || s[0][0] == 0) return false;
        p = {r.Between(-s[0][0], s[0][0] - 1)};
        return true;
      },
      [](const auto& a, const Params& p, bool plain) {
        return plain ? select(a[0], 0, p[0]) : ApplyFn<F>(a[0], p[0]);
      });
}

std::vector<Entry> BuildCatalog() {
  std::vector<Entry> c;
  // ---- Unary elementwise, with arguments kept in each op's domain. ----
  c.push_back(Def("neg", 1, kSmooth, {"neg"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return neg(a[0]); }));
  c.push_back(Def("exp", 1, kSmooth, {"exp"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return exp(a[0]); }));
  c.push_back(Def("expm1", 1, kSmooth, {"expm1"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return expm1(a[0]); }));
  c.push_back(Def("log", 1, kSmooth, {"log", "square", "add"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return log(square(a[0]) + 0.5); }));
  c.push_back(Def("log1p", 1, kSmooth, {"log1p", "square"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return log1p(square(a[0])); }));
  c.push_back(Def("sin", 1, kSmooth, {"sin"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return sin(a[0]); }));
  c.push_back(Def("cos", 1, kSmooth, {"cos"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return cos(a[0]); }));
  c.push_back(Def("tan", 1, kSmooth, {"tan", "tanh"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return tan(tanh(a[0])); }));
  c.push_back(Def("sigmoid", 1, kSmooth, {"sigmoid"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return sigmoid(a[0]); }));
  c.push_back(Def("sqrt", 1, kSmooth, {"sqrt", "square", "add"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return sqrt(square(a[0]) + 0.5); }));
  c.push_back(Def("rsqrt", 1, kSmooth, {"rsqrt", "square", "add"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return rsqrt(square(a[0]) + 0.5); }));
  c.push_back(
      Def("reciprocal", 1, kSmooth, {"reciprocal", "square", "add"}, AnyRank,
          [](const auto& a, const Params&, bool) { return reciprocal(square(a[0]) + 0.5); }));
  c.push_back(Def("abs", 1, 0, {"abs"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return abs(a[0]); }));
  c.push_back(Def("sign_mul", 1, 0, {"sign", "mul"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return a[0] * sign(a[0]); }));
  // x * stop_gradient(x): the derivative is x, not 2x (not smooth in the sense of central
  // differences, which see x^2).
  c.push_back(Def("stop_gradient_mul", 1, 0, {"stop_gradient", "mul"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return a[0] * stop_gradient(a[0]); }));
  c.push_back(Def("relu", 1, 0, {"relu"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return relu(a[0]); }));
  c.push_back(Def(
      "floor_round", 1, 0, {"floor", "round", "mul", "add"}, AnyRank,
      [](const auto& a, const Params&, bool) { return floor(a[0] * 3.0) + round(a[0] * 2.0); }));
  c.push_back(Def("clamp", 1, 0, {"clamp"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return clamp(a[0], -0.5, 0.5); }));
  c.push_back(Def("exp_", 1, kSmooth, {"exp_", "clone"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return exp_(clone(a[0])); }));
  c.push_back(
      Def("clamp_", 1, 0, {"clamp_", "clone"}, AnyRank,
          [](const auto& a, const Params&, bool) { return clamp_(clone(a[0]), -0.4, 0.6); }));
  // ---- Binary elementwise with broadcasting. ----
  c.push_back(Def("add", 2, kSmooth, {"add"}, Broadcastable,
                  [](const auto& a, const Params&, bool) { return add(a[0], a[1]); }));
  c.push_back(Def("sub", 2, kSmooth, {"sub"}, Broadcastable,
                  [](const auto& a, const Params&, bool) { return sub(a[0], a[1]); }));
  c.push_back(Def("mul", 2, kSmooth, {"mul"}, Broadcastable,
                  [](const auto& a, const Params&, bool) { return mul(a[0], a[1]); }));
  c.push_back(
      Def("div", 2, kSmooth, {"div", "square", "add"}, Broadcastable,
          [](const auto& a, const Params&, bool) { return div(a[0], square(a[1]) + 0.5); }));
  c.push_back(
      Def("pow", 2, kSmooth, {"pow", "square", "add"}, Broadcastable,
          [](const auto& a, const Params&, bool) { return pow(square(a[0]) + 0.5, a[1]); }));
  c.push_back(
      Def("atan2", 2, kSmooth, {"atan2", "square", "add"}, Broadcastable,
          [](const auto& a, const Params&, bool) { return atan2(a[0], square(a[1]) + 0.5); }));
  c.push_back(Def("maximum", 2, 0, {"maximum"}, Broadcastable,
                  [](const auto& a, const Params&, bool) { return maximum(a[0], a[1]); }));
  c.push_back(Def("minimum", 2, 0, {"minimum"}, Broadcastable,
                  [](const auto& a, const Params&, bool) { return minimum(a[0], a[1]); }));
  c.push_back(
      Def("where_gt", 2, 0, {"where", "gt"}, Broadcastable,
          [](const auto& a, const Params&, bool) { return where(gt(a[0], a[1]), a[0], a[1]); }));
  c.push_back(Def("where_logic", 2, 0,
                  {"where", "le", "ge", "lt", "logical_or", "logical_and", "logical_not"},
                  Broadcastable, [](const auto& a, const Params&, bool) {
                    return where(logical_or(le(a[0], a[1] * 0.5),
                                            logical_and(logical_not(ge(a[1], 0.2)), lt(a[0], 0.7))),
                                 a[0], a[1] * 2.0);
                  }));
  c.push_back(Def("where_eq", 2, 0, {"where", "eq", "ne", "logical_and"}, Broadcastable,
                  [](const auto& a, const Params&, bool) {
                    return where(logical_and(eq(a[0], a[0]), ne(a[0], a[1])), a[0], a[1]);
                  }));
  // ---- In-place, on a clone (the operand broadcasts into it). ----
  c.push_back(Def("add_", 2, kSmooth, {"add_", "clone"}, BroadcastsInto,
                  [](const auto& a, const Params&, bool) { return add_(clone(a[0]), a[1]); }));
  c.push_back(Def("sub_", 2, kSmooth, {"sub_", "clone"}, BroadcastsInto,
                  [](const auto& a, const Params&, bool) { return sub_(clone(a[0]), a[1]); }));
  c.push_back(Def("mul_", 2, kSmooth, {"mul_", "clone"}, BroadcastsInto,
                  [](const auto& a, const Params&, bool) { return mul_(clone(a[0]), a[1]); }));
  c.push_back(Def(
      "div_", 2, kSmooth, {"div_", "clone", "square", "add"}, BroadcastsInto,
      [](const auto& a, const Params&, bool) { return div_(clone(a[0]), square(a[1]) + 0.5); }));
  c.push_back(Def("copy_", 2, kSmooth, {"copy_", "clone"}, BroadcastsInto,
                  [](const auto& a, const Params&, bool) { return copy_(clone(a[0]), a[1]); }));
  c.push_back(Def(
      "mul_narrow_", 1, kSmooth, {"mul_", "narrow", "clone"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0) return false;
        const int64_t d = r.Below(Rank(s[0]));
        const int64_t size = s[0][static_cast<size_t>(d)];
        const int64_t start = r.Between(0, size);
        p = {d, start, r.Between(0, size - start)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return MulNarrow_(a[0], p[0], p[1], p[2], 2.5);
      }));
  c.push_back(Def(
      "fill_select_", 1, 0, {"fill_", "select", "clone"}, SelectAny,
      [](const auto& a, const Params& p, bool) { return FillSelect_(a[0], p[0], p[1], 0.25); }));
  c.push_back(Def(
      "add_transpose_", 2, kSmooth, {"add_", "transpose", "clone"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) < 2) return false;
        p = {DrawDim(r, Rank(s[0])), DrawDim(r, Rank(s[0]))};
        Shape ts = s[0];
        const auto w = [&](int64_t d) { return static_cast<size_t>(d < 0 ? d + Rank(s[0]) : d); };
        std::swap(ts[w(p[0])], ts[w(p[1])]);
        Shape out;
        return BroadcastShape(ts, s[1], &out) && out == ts;
      },
      [](const auto& a, const Params& p, bool) { return AddTranspose_(a[0], p[0], p[1], a[1]); }));
  c.push_back(Def(
      "zero_diagonal_", 1, 0, {"zero_", "diagonal", "clone"},
      [](Rng&, const std::vector<Shape>& s, Params&) { return NeedRank(s, 2); },
      [](const auto& a, const Params&, bool) { return ZeroDiagonal_(a[0]); }));
  // ---- Reductions. ----
  c.push_back(Def("sum", 1, kSmooth, {"sum"}, ReduceDims, [](const auto& a, const Params& p, bool) {
    return sum(a[0], DimsOf(p), p[1] != 0);
  }));
  c.push_back(
      Def("mean", 1, kSmooth, {"mean"}, ReduceNonEmpty,
          [](const auto& a, const Params& p, bool) { return mean(a[0], DimsOf(p), p[1] != 0); }));
  c.push_back(
      Def("prod", 1, kSmooth, {"prod"}, ReduceDims,
          [](const auto& a, const Params& p, bool) { return prod(a[0], DimsOf(p), p[1] != 0); }));
  c.push_back(Def(
      "logsumexp", 1, kSmooth, {"logsumexp"}, ReduceNonEmpty,
      [](const auto& a, const Params& p, bool) { return logsumexp(a[0], DimsOf(p), p[1] != 0); }));
  c.push_back(Def(
      "var", 1, kSmooth, {"var"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!ReduceDims(r, s, p)) return false;
        const int64_t n = ReducedCount(s[0], DimsOf(p));
        p.push_back(n >= 2 ? 1 : 0);  // the correction
        return n > 0;
      },
      [](const auto& a, const Params& p, bool) { return var(a[0], DimsOf(p), p[2], p[1] != 0); }));
  c.push_back(Def(
      "std", 1, 0, {"std"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!ReduceDims(r, s, p)) return false;
        const int64_t n = ReducedCount(s[0], DimsOf(p));
        p.push_back(n >= 2 ? 1 : 0);
        return n > 0;
      },
      [](const auto& a, const Params& p, bool) { return std(a[0], DimsOf(p), p[2], p[1] != 0); }));
  c.push_back(Def("norm", 1, 0, {"norm"}, ReduceDims, [](const auto& a, const Params& p, bool) {
    return norm(a[0], 2, DimsOf(p), p[1] != 0);
  }));
  c.push_back(Def("amax", 1, 0, {"amax"}, ReduceNonEmpty, [](const auto& a, const Params& p, bool) {
    return amax(a[0], DimsOf(p), p[1] != 0);
  }));
  c.push_back(Def("amin", 1, 0, {"amin"}, ReduceNonEmpty, [](const auto& a, const Params& p, bool) {
    return amin(a[0], DimsOf(p), p[1] != 0);
  }));
  c.push_back(Def("softmax", 1, kSmooth, {"softmax"}, OneDim,
                  [](const auto& a, const Params& p, bool) { return softmax(a[0], p[0]); }));
  c.push_back(Def("log_softmax", 1, kSmooth, {"log_softmax"}, OneDim,
                  [](const auto& a, const Params& p, bool) { return log_softmax(a[0], p[0]); }));
  c.push_back(Def("cumsum", 1, kSmooth, {"cumsum"}, OneDim,
                  [](const auto& a, const Params& p, bool) { return cumsum(a[0], p[0]); }));
  c.push_back(Def("cumprod", 1, kSmooth, {"cumprod"}, OneDim,
                  [](const auto& a, const Params& p, bool) { return cumprod(a[0], p[0]); }));
  c.push_back(Def("logcumsumexp", 1, kSmooth, {"logcumsumexp"}, OneDim,
                  [](const auto& a, const Params& p, bool) { return logcumsumexp(a[0], p[0]); }));
  // tanh keeps |a| < 1, so the recurrence's values stay of the order of b's.
  c.push_back(Def("linear_recurrence", 2, kSmooth, {"linear_recurrence", "tanh"},
                  BroadcastOneDim, [](const auto& a, const Params& p, bool) {
                    return linear_recurrence(tanh(a[0]), a[1], p[0]);
                  }));
  c.push_back(Def(
      "sum_to_size", 1, kSmooth, {"sum_to_size"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        Shape target = s[0];
        for (int64_t& d : target) {
          if (r.Chance(40)) d = 1;
        }
        while (!target.empty() && r.Chance(30)) target.erase(target.begin());
        PushShape(p, target);
        return true;
      },
      [](const auto& a, const Params& p, bool) { return sum_to_size(a[0], ReadShape(p, 0)); }));
  c.push_back(Def(
      "one_hot_argmax", 1, 0, {"one_hot", "argmax", "to"},
      [](Rng&, const std::vector<Shape>& s, Params&) { return NeedRank(s, 1) && s[0].back() > 0; },
      [](const auto& a, const Params&, bool) { return OneHotArgmax(a[0]) * a[0]; }));
  c.push_back(Def("argmin_take", 1, 0, {"argmin", "unsqueeze", "take_along_dim"}, OneDim,
                  [](const auto& a, const Params& p, bool) {
                    return take_along_dim(a[0], unsqueeze(argmin(a[0], p[0]), p[0]), p[0]);
                  }));
  // ---- Views and copies. ----
  c.push_back(
      Def("reshape", 1, kSmooth, {"reshape"}, RegroupShape,
          [](const auto& a, const Params& p, bool) { return reshape(a[0], ReadShape(p, 0)); }));
  c.push_back(Def("view", 1, kSmooth, {"view", "contiguous"}, RegroupShape,
                  [](const auto& a, const Params& p, bool) {
                    return view(contiguous(a[0]), ReadShape(p, 0));
                  }));
  c.push_back(Def(
      "flatten", 1, kSmooth, {"flatten"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        const int64_t rank = std::max<int64_t>(Rank(s[0]), 1);
        const int64_t a = r.Below(rank), b = r.Below(rank);
        p = {std::min(a, b), std::max(a, b) - (r.Chance(50) ? rank : 0)};
        return true;
      },
      [](const auto& a, const Params& p, bool) { return flatten(a[0], p[0], p[1]); }));
  c.push_back(Def(
      "unflatten", 1, kSmooth, {"unflatten"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0) return false;
        const int64_t d = DrawDim(r, Rank(s[0]));
        const int64_t size = s[0][static_cast<size_t>(d < 0 ? d + Rank(s[0]) : d)];
        Shape divisors;
        for (int64_t k = 1; k <= std::max<int64_t>(size, 1); ++k) {
          if (size % k == 0) divisors.push_back(k);
        }
        const int64_t k = size == 0 ? 1 : divisors[static_cast<size_t>(r.Below(Rank(divisors)))];
        p = {d, k, size == 0 ? 0 : (r.Chance(30) ? -1 : size / k)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return unflatten(a[0], p[0], Shape{p[1], p[2]});
      }));
  c.push_back(Def(
      "expand", 1, kSmooth, {"expand"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        Shape target;
        if (r.Chance(30)) target.push_back(r.Between(1, 2));
        for (int64_t d : s[0]) {
          target.push_back(d == 1 && r.Chance(60) ? r.Between(2, 3) : (r.Chance(30) ? -1 : d));
        }
        if (Numel(target) > 64) return false;
        PushShape(p, target);
        return true;
      },
      [](const auto& a, const Params& p, bool) { return expand(a[0], ReadShape(p, 0)); }));
  c.push_back(Def("unsqueeze", 1, kSmooth, {"unsqueeze"}, NewDim,
                  [](const auto& a, const Params& p, bool) { return unsqueeze(a[0], p[0]); }));
  c.push_back(Def("squeeze", 1, kSmooth, {"squeeze"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return squeeze(a[0]); }));
  c.push_back(Def("squeeze_dim", 1, kSmooth, {"squeeze_dim"}, OneDim,
                  [](const auto& a, const Params& p, bool) { return squeeze_dim(a[0], p[0]); }));
  c.push_back(
      Def("squeeze_dims", 1, kSmooth, {"squeeze_dims"}, DimMask,
          [](const auto& a, const Params& p, bool) { return squeeze_dims(a[0], DimsOf(p)); }));
  c.push_back(Def("movedim", 1, kSmooth, {"movedim"}, TwoDims,
                  [](const auto& a, const Params& p, bool) { return movedim(a[0], p[0], p[1]); }));
  c.push_back(Def(
      "permute", 1, kSmooth, {"permute"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        Shape perm(s[0].size());
        std::iota(perm.begin(), perm.end(), 0);
        for (size_t i = perm.size(); i > 1; --i) {
          std::swap(perm[i - 1], perm[static_cast<size_t>(r.Below(static_cast<int64_t>(i)))]);
        }
        for (int64_t& d : perm) {
          if (r.Chance(30)) d -= Rank(s[0]);
        }
        PushShape(p, perm);
        return true;
      },
      [](const auto& a, const Params& p, bool) { return permute(a[0], ReadShape(p, 0)); }));
  c.push_back(
      Def("transpose", 1, kSmooth, {"transpose"}, TwoDims,
          [](const auto& a, const Params& p, bool) { return transpose(a[0], p[0], p[1]); }));
  c.push_back(Def(
      "t", 1, kSmooth, {"t"},
      [](Rng&, const std::vector<Shape>& s, Params&) { return NeedRank(s, 0, 2); },
      [](const auto& a, const Params&, bool) { return t(a[0]); }));
  c.push_back(Def("select", 1, kSmooth, {"select"}, SelectAny,
                  [](const auto& a, const Params& p, bool) { return select(a[0], p[0], p[1]); }));
  c.push_back(Def(
      "narrow", 1, kSmooth, {"narrow"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0) return false;
        const int64_t d = DrawDim(r, Rank(s[0]));
        const int64_t size = s[0][static_cast<size_t>(d < 0 ? d + Rank(s[0]) : d)];
        const int64_t start = r.Between(0, size);
        p = {d, start, r.Between(0, size - start)};
        return true;
      },
      [](const auto& a, const Params& p, bool) { return narrow(a[0], p[0], p[1], p[2]); }));
  c.push_back(Def(
      "slice", 1, kSmooth, {"slice"}, SliceArgs,
      [](const auto& a, const Params& p, bool) { return slice(a[0], p[0], p[1], p[2], p[3]); }));
  c.push_back(
      Def("diagonal", 1, kSmooth, {"diagonal"}, DiagonalArgs,
          [](const auto& a, const Params& p, bool) { return diagonal(a[0], p[0], p[1], p[2]); }));
  c.push_back(Def("contiguous", 1, kSmooth, {"contiguous"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return contiguous(a[0]); }));
  c.push_back(Def("flip", 1, kSmooth, {"flip"}, DimMask,
                  [](const auto& a, const Params& p, bool) { return flip(a[0], DimsOf(p)); }));
  c.push_back(Def("to_float64", 1, kSmooth, {"to"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return to(a[0], kFloat64); }));
  // ---- Scatters: a view's region replaced by new values computed from it. ----
  c.push_back(Def("select_scatter", 1, kSmooth, {"select_scatter", "select", "sin"}, SelectAny,
                  [](const auto& a, const Params& p, bool) {
                    return select_scatter(a[0], sin(select(a[0], p[0], p[1])), p[0], p[1]);
                  }));
  c.push_back(Def("slice_scatter", 1, kSmooth, {"slice_scatter", "slice", "cos"}, SliceArgs,
                  [](const auto& a, const Params& p, bool) {
                    return slice_scatter(a[0], cos(slice(a[0], p[0], p[1], p[2], p[3])), p[0], p[1],
                                         p[2], p[3]);
                  }));
  c.push_back(Def("diagonal_scatter", 1, kSmooth, {"diagonal_scatter", "diagonal", "square"},
                  DiagonalArgs, [](const auto& a, const Params& p, bool) {
                    return diagonal_scatter(a[0], square(diagonal(a[0], p[0], p[1], p[2])), p[0],
                                            p[1], p[2]);
                  }));
  // ---- Indexing, joining, tiling. ----
  c.push_back(Def(
      "index_select", 1, kSmooth, {"index_select"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0) return false;
        const int64_t d = DrawDim(r, Rank(s[0]));
        const int64_t size = s[0][static_cast<size_t>(d < 0 ? d + Rank(s[0]) : d)];
        if (size == 0) return false;
        p = {d, r.Between(0, 4), size, r.Below(5)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return index_select(a[0], p[0], IndexFor(a[0], {p[1]}, p[2], p[3]));
      }));
  // gather / scatter_add / take_along_dim: an index of a's shape with dim d resized to k.
  const Propose index_like = [](Rng& r, const std::vector<Shape>& s, Params& p) {
    if (Rank(s[0]) == 0) return false;
    const int64_t d = r.Below(Rank(s[0]));
    const int64_t size = s[0][static_cast<size_t>(d)];
    if (size == 0) return false;
    Shape shape = s[0];
    shape[static_cast<size_t>(d)] = r.Between(0, 3);
    p = {d - (r.Chance(50) ? Rank(s[0]) : 0), size, r.Below(5)};
    PushShape(p, shape);
    return true;
  };
  c.push_back(
      Def("gather", 1, kSmooth, {"gather"}, index_like, [](const auto& a, const Params& p, bool) {
        return gather(a[0], p[0], IndexFor(a[0], ReadShape(p, 3), p[1], p[2]));
      }));
  c.push_back(Def("scatter_add", 1, kSmooth, {"scatter_add", "gather", "mul"}, index_like,
                  [](const auto& a, const Params& p, bool) {
                    return scatter_add(
                        a[0], p[0], IndexFor(a[0], ReadShape(p, 3), p[1], p[2]),
                        gather(a[0], p[0], IndexFor(a[0], ReadShape(p, 3), p[1], p[2])) * 0.5);
                  }));
  c.push_back(Def("take_along_dim", 1, kSmooth, {"take_along_dim"}, index_like,
                  [](const auto& a, const Params& p, bool) {
                    return take_along_dim(a[0], IndexFor(a[0], ReadShape(p, 3), p[1], p[2]), p[0]);
                  }));
  c.push_back(Def(
      "cat", 2, kSmooth, {"cat"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0 || Rank(s[0]) != Rank(s[1])) return false;
        const int64_t d = r.Below(Rank(s[0]));
        for (int64_t i = 0; i < Rank(s[0]); ++i) {
          if (i != d && s[0][static_cast<size_t>(i)] != s[1][static_cast<size_t>(i)]) return false;
        }
        p = {d - (r.Chance(50) ? Rank(s[0]) : 0)};
        return true;
      },
      [](const auto& a, const Params& p, bool) { return cat(List(a[0], a[1]), p[0]); }));
  c.push_back(
      Def("stack", 1, kSmooth, {"stack", "cos"}, NewDim,
          [](const auto& a, const Params& p, bool) { return stack(List(a[0], cos(a[0])), p[0]); }));
  c.push_back(Def(
      "split", 1, kSmooth, {"split"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0) return false;
        const int64_t d = DrawDim(r, Rank(s[0]));
        const int64_t size = s[0][static_cast<size_t>(d < 0 ? d + Rank(s[0]) : d)];
        if (size == 0) return false;
        const int64_t piece = r.Between(1, size);
        p = {piece, d, r.Below((size + piece - 1) / piece)};
        return true;
      },
      [](const auto& a, const Params& p, bool) { return split(a[0], p[0], p[1])[p[2]]; }));
  c.push_back(Def(
      "split_with_sizes", 1, kSmooth, {"split_with_sizes"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0) return false;
        const int64_t d = DrawDim(r, Rank(s[0]));
        const int64_t size = s[0][static_cast<size_t>(d < 0 ? d + Rank(s[0]) : d)];
        const int64_t first = r.Between(0, size);
        p = {d, r.Below(2)};
        PushShape(p, Shape{first, size - first});
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return split_with_sizes(a[0], ReadShape(p, 2), p[0])[p[1]];
      }));
  c.push_back(Def(
      "chunk", 1, kSmooth, {"chunk"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0) return false;
        const int64_t d = DrawDim(r, Rank(s[0]));
        const int64_t size = s[0][static_cast<size_t>(d < 0 ? d + Rank(s[0]) : d)];
        if (size == 0) return false;
        const int64_t n = r.Between(1, 3);
        const int64_t each = (size + n - 1) / n;
        p = {n, d, r.Below((size + each - 1) / each)};
        return true;
      },
      [](const auto& a, const Params& p, bool) { return chunk(a[0], p[0], p[1])[p[2]]; }));
  c.push_back(Def(
      "repeat", 1, kSmooth, {"repeat"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        Shape reps;
        const int64_t extra = r.Below(2);
        for (int64_t i = 0; i < Rank(s[0]) + extra; ++i) reps.push_back(r.Between(1, 2));
        PushShape(p, reps);
        return Numel(s[0]) * Numel(reps) <= 64;
      },
      [](const auto& a, const Params& p, bool) { return repeat(a[0], ReadShape(p, 0)); }));
  c.push_back(Def(
      "pad", 1, kSmooth, {"pad"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0) return false;
        Shape pads;
        const int64_t pairs = r.Between(1, std::min<int64_t>(Rank(s[0]), 2));
        for (int64_t i = 0; i < pairs; ++i) {
          const int64_t size = s[0][static_cast<size_t>(Rank(s[0]) - 1 - i)];
          const int64_t left = r.Between(size > 0 ? -1 : 0, 1);
          const int64_t right = r.Between(size + left > 0 ? -1 : 0, 1);
          pads.push_back(left);
          pads.push_back(right);
        }
        PushShape(p, pads);
        return true;
      },
      [](const auto& a, const Params& p, bool) { return pad(a[0], ReadShape(p, 0), 0.3); }));
  // ---- Matrix products. ----
  c.push_back(Def(
      "matmul", 2, kSmooth, {"matmul"},
      [](Rng&, const std::vector<Shape>& s, Params&) {
        const Shape& a = s[0];
        const Shape& b = s[1];
        if (a.empty() || b.empty()) return false;
        const int64_t inner_b = b.size() == 1 ? b[0] : b[b.size() - 2];
        if (a.back() != inner_b) return false;
        if (a.size() <= 2 || b.size() <= 2) return true;
        return BroadcastShape(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2),
                              nullptr);
      },
      [](const auto& a, const Params&, bool) { return matmul(a[0], a[1]); }));
  c.push_back(Def(
      "matmul_const", 1, kSmooth, {"matmul"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0) return false;
        p = {s[0].back(), r.Between(0, 3), r.Below(2), r.Below(5)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return p[2] ? matmul(a[0], Constant(a[0], {p[0], p[1]}, p[3]))
                    : matmul(a[0], Constant(a[0], {p[0]}, p[3]));
      }));
  c.push_back(Def(
      "mm", 1, kSmooth, {"mm", "t"},
      [](Rng&, const std::vector<Shape>& s, Params&) { return NeedRank(s, 2, 2); },
      [](const auto& a, const Params&, bool) { return mm(a[0], t(a[0])); }));
  c.push_back(Def(
      "bmm", 1, kSmooth, {"bmm", "transpose"},
      [](Rng&, const std::vector<Shape>& s, Params&) { return NeedRank(s, 3, 3); },
      [](const auto& a, const Params&, bool) { return bmm(a[0], transpose(a[0], 1, 2)); }));
  c.push_back(Def(
      "dot", 2, kSmooth, {"dot"},
      [](Rng&, const std::vector<Shape>& s, Params&) { return Rank(s[0]) == 1 && s[1] == s[0]; },
      [](const auto& a, const Params&, bool) { return dot(a[0], a[1]); }));
  c.push_back(Def(
      "outer", 2, kSmooth, {"outer"},
      [](Rng&, const std::vector<Shape>& s, Params&) { return Rank(s[0]) == 1 && Rank(s[1]) == 1; },
      [](const auto& a, const Params&, bool) { return outer(a[0], a[1]); }));
  c.push_back(Def(
      "linear", 1, kSmooth, {"linear"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0) return false;
        p = {s[0].back(), r.Between(1, 3), r.Below(5)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return linear(a[0], Constant(a[0], {p[1], p[0]}, p[2]), Constant(a[0], {p[1]}, p[2] + 1));
      }));
  // ---- Solves, factorizations, determinants: of Spd / WellConditioned matrices made from
  // the argument (rank >= 2, any values), or with the argument as the right-hand side. ----
  c.push_back(Def(
      "linalg_solve", 1, kSmooth, {"linalg_solve"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!NeedRank(s, 2)) return false;
        p = {s[0][s[0].size() - 2], r.Between(1, 3), r.Below(5)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return linalg_solve(WellConditioned(a[0]), Constant(a[0], {p[0], p[1]}, p[2]));
      }));
  c.push_back(Def(
      "linalg_solve_rhs", 1, kSmooth, {"linalg_solve"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0) return false;
        // B [n] (a vector) or [..., n, k] with A a constant [n, n].
        p = {Rank(s[0]) == 1 ? s[0][0] : s[0][s[0].size() - 2], r.Below(5)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return linalg_solve(WellConditioned(Constant(a[0], {p[0], p[0]}, p[1])), a[0]);
      }));
  c.push_back(Def(
      "linalg_solve_triangular", 1, kSmooth, {"linalg_solve_triangular"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!NeedRank(s, 2)) return false;
        p = {s[0][s[0].size() - 2], r.Between(1, 3), r.Below(5), r.Below(2)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return linalg_solve_triangular(WellConditioned(a[0]), Constant(a[0], {p[0], p[1]}, p[2]),
                                       p[3] != 0);
      }));
  c.push_back(Def("cholesky", 1, kSmooth, {"cholesky"},
                  [](Rng&, const std::vector<Shape>& s, Params&) { return NeedRank(s, 2); },
                  [](const auto& a, const Params&, bool) { return cholesky(Spd(a[0])); }));
  c.push_back(Def("inverse", 1, kSmooth, {"inverse"},
                  [](Rng&, const std::vector<Shape>& s, Params&) { return NeedRank(s, 2); },
                  [](const auto& a, const Params&, bool) {
                    return inverse(WellConditioned(a[0]));
                  }));
  c.push_back(Def("slogdet", 1, kSmooth, {"slogdet"},
                  [](Rng&, const std::vector<Shape>& s, Params&) { return NeedRank(s, 2); },
                  [](const auto& a, const Params&, bool) {
                    return std::get<1>(slogdet(WellConditioned(a[0])));
                  }));
  c.push_back(Def("logdet", 1, kSmooth, {"logdet"},
                  [](Rng&, const std::vector<Shape>& s, Params&) { return NeedRank(s, 2); },
                  [](const auto& a, const Params&, bool) { return logdet(Spd(a[0])); }));
  // ---- Sorting. ----
  c.push_back(Def(
      "sort", 1, 0, {"sort"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        p = {Rank(s[0]) == 0 ? 0 : DrawDim(r, Rank(s[0])), r.Below(2)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return std::get<0>(sort(a[0], p[0], p[1] != 0));
      }));
  c.push_back(Def(
      "topk", 1, 0, {"topk"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (Rank(s[0]) == 0) return false;
        const int64_t d = DrawDim(r, Rank(s[0]));
        const int64_t size = s[0][static_cast<size_t>(d < 0 ? d + Rank(s[0]) : d)];
        p = {r.Between(0, size), d, r.Below(2), r.Below(2)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return std::get<0>(topk(a[0], p[0], p[1], p[2] != 0, p[3] != 0));
      }));
  c.push_back(Def("argsort_take", 1, 0, {"argsort", "take_along_dim"}, OneDim,
                  [](const auto& a, const Params& p, bool) {
                    return take_along_dim(a[0], argsort(a[0], p[0]), p[0]);
                  }));
  // ---- Factories of a tensor's shape. ----
  c.push_back(Def("like_factories", 1, kSmooth,
                  {"zeros_like", "ones_like", "full_like", "full_like_dtype", "mul", "add"},
                  AnyRank, [](const auto& a, const Params&, bool) {
                    return a[0] * full_like(a[0], 1.5) + ones_like(a[0]) + zeros_like(a[0]) +
                           full_like(a[0], 0.25, a[0].dtype());
                  }));
  // ---- Custom Functions (tests/custom_function_db.h) and their plain twins. ----
  // Each pair: the user vmap rule and the generated one.
  c.push_back(MulFunction<function_db::NumpyMul>());
  c.push_back(MulFunction<function_db::MulGenVmap>());
  c.push_back(CubeFunction<function_db::NumpyCube>());
  c.push_back(CubeFunction<function_db::CubeGenVmap>());
  c.push_back(Def("NumpyExp_", 1, kSmooth | kFunction, {"exp_", "clone"}, AnyRank,
                  [](const auto& a, const Params&, bool plain) {
                    return plain ? exp(a[0]) : ApplyFn<function_db::NumpyExp_>(clone(a[0]));
                  }));
  c.push_back(SortFunction<function_db::NumpySort>());
  c.push_back(SortFunction<function_db::SortGenVmap>());
  c.push_back(SelectFunction<function_db::Select>());
  c.push_back(SelectFunction<function_db::SelectGenVmap>());
  // ---- Activations (issue 21). ----
  c.push_back(Def("gelu", 1, kSmooth, {"gelu"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return gelu(a[0]); }));
  c.push_back(Def("gelu_tanh", 1, kSmooth, {"gelu"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return gelu(a[0], "tanh"); }));
  c.push_back(Def("silu", 1, kSmooth, {"silu"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return silu(a[0]); }));
  c.push_back(Def("mish", 1, kSmooth, {"mish"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return mish(a[0]); }));
  c.push_back(Def("softplus", 1, kSmooth, {"softplus"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return softplus(a[0], 2.0, 20.0); }));
  c.push_back(Def("elu", 1, 0, {"elu"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return elu(a[0], 0.5); }));
  c.push_back(Def("selu", 1, 0, {"selu"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return selu(a[0]); }));
  c.push_back(Def("celu", 1, 0, {"celu"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return celu(a[0], 2.0); }));
  c.push_back(Def("leaky_relu", 1, 0, {"leaky_relu"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return leaky_relu(a[0], 0.2); }));
  c.push_back(Def("hardtanh", 1, 0, {"hardtanh"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return hardtanh(a[0], -0.5, 0.5); }));
  c.push_back(Def("hardswish", 1, 0, {"hardswish", "mul"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return hardswish(a[0] * 4.0); }));
  c.push_back(Def("hardsigmoid", 1, 0, {"hardsigmoid", "mul"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return hardsigmoid(a[0] * 4.0); }));
  c.push_back(Def("logsigmoid", 1, kSmooth, {"logsigmoid"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return logsigmoid(a[0]); }));
  c.push_back(Def("softsign", 1, kSmooth, {"softsign"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return softsign(a[0]); }));
  c.push_back(Def("erf", 1, kSmooth, {"erf"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return erf(a[0]); }));
  c.push_back(Def("erfc", 1, kSmooth, {"erfc"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return erfc(a[0]); }));
  c.push_back(Def("erfinv", 1, kSmooth, {"erfinv", "tanh", "mul"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return erfinv(tanh(a[0]) * 0.9); }));
  c.push_back(Def("lgamma", 1, kSmooth, {"lgamma", "square", "add"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return lgamma(square(a[0]) + 0.5); }));
  c.push_back(Def("digamma", 1, kSmooth, {"digamma", "square", "add"}, AnyRank,
                  [](const auto& a, const Params&, bool) { return digamma(square(a[0]) + 0.5); }));
  c.push_back(
      Def("polygamma", 1, kSmooth, {"polygamma", "square", "add"}, AnyRank,
          [](const auto& a, const Params&, bool) { return polygamma(1, square(a[0]) + 0.5); }));
  // ---- Losses (issue 21). ----
  {
    // p[0] is the reduction (none, mean, sum) of every loss entry.
    const Propose broadcast_loss = [](Rng& r, const std::vector<Shape>& s, Params& p) {
      if (!BroadcastShape(s[0], s[1], nullptr)) return false;
      p = {r.Below(3)};
      return true;
    };
    const Propose same_shape_loss = [](Rng& r, const std::vector<Shape>& s, Params& p) {
      if (s[0] != s[1]) return false;
      p = {r.Below(3)};
      return true;
    };
    // Class losses: p = {reduction, C, salt, ignore_index, label_smoothing in tenths, target
    // shape}: input [C] with a 0-dim target, or [N, C, d...] with target [N, d...].
    const Propose class_loss = [](Rng& r, const std::vector<Shape>& s, Params& p) {
      if (Rank(s[0]) == 0) return false;
      const int64_t classes = s[0][Rank(s[0]) == 1 ? 0 : 1];
      if (classes == 0) return false;
      Shape target;
      if (Rank(s[0]) >= 2) {
        target.push_back(s[0][0]);
        target.insert(target.end(), s[0].begin() + 2, s[0].end());
      }
      p = {r.Below(3), classes, r.Below(5), r.Chance(30) ? r.Below(classes) : -100, r.Below(4)};
      PushShape(p, target);
      return true;
    };
    const auto mode = [](const Params& p) { return static_cast<Reduction::Mode>(p[0]); };
    c.push_back(Def("mse_loss", 2, kSmooth, {"mse_loss"}, broadcast_loss,
                    [mode](const auto& a, const Params& p, bool) {
                      return mse_loss(a[0], a[1], mode(p));
                    }));
    c.push_back(Def("l1_loss", 2, 0, {"l1_loss"}, broadcast_loss,
                    [mode](const auto& a, const Params& p, bool) {
                      return l1_loss(a[0], a[1], mode(p));
                    }));
    c.push_back(Def("smooth_l1_loss", 2, 0, {"smooth_l1_loss"}, broadcast_loss,
                    [mode](const auto& a, const Params& p, bool) {
                      return smooth_l1_loss(a[0], a[1], mode(p), 0.5);
                    }));
    c.push_back(Def("huber_loss", 2, 0, {"huber_loss"}, broadcast_loss,
                    [mode](const auto& a, const Params& p, bool) {
                      return huber_loss(a[0], a[1], mode(p), 0.5);
                    }));
    c.push_back(Def("kl_div", 2, kSmooth, {"kl_div", "square", "add"}, broadcast_loss,
                    [mode](const auto& a, const Params& p, bool) {
                      return kl_div(a[0], square(a[1]) + 0.1, mode(p));
                    }));
    c.push_back(Def("binary_cross_entropy", 2, kSmooth, {"binary_cross_entropy", "sigmoid"},
                    same_shape_loss, [mode](const auto& a, const Params& p, bool) {
                      return binary_cross_entropy(sigmoid(a[0]), sigmoid(a[1]), std::nullopt,
                                                  mode(p));
                    }));
    c.push_back(Def("binary_cross_entropy_with_logits", 2, kSmooth,
                    {"binary_cross_entropy_with_logits", "sigmoid"}, same_shape_loss,
                    [mode](const auto& a, const Params& p, bool) {
                      return binary_cross_entropy_with_logits(a[0], sigmoid(a[1]), std::nullopt,
                                                              mode(p));
                    }));
    c.push_back(Def("nll_loss", 1, kSmooth, {"nll_loss"}, class_loss,
                    [mode](const auto& a, const Params& p, bool) {
                      return nll_loss(a[0], IndexFor(a[0], ReadShape(p, 5), p[1], p[2]),
                                      std::nullopt, p[3], mode(p));
                    }));
    c.push_back(Def("cross_entropy", 1, kSmooth, {"cross_entropy"}, class_loss,
                    [mode](const auto& a, const Params& p, bool) {
                      return cross_entropy(a[0], IndexFor(a[0], ReadShape(p, 5), p[1], p[2]),
                                           std::nullopt, p[3], mode(p),
                                           static_cast<double>(p[4]) / 10.0);
                    }));
    c.push_back(Def("cross_entropy_probs", 2, kSmooth, {"cross_entropy", "softmax"},
                    [](Rng& r, const std::vector<Shape>& s, Params& p) {
                      if (s[0] != s[1] || Rank(s[0]) == 0) return false;
                      p = {r.Below(3), Rank(s[0]) == 1 ? 0 : 1};
                      return true;
                    },
                    [mode](const auto& a, const Params& p, bool) {
                      return cross_entropy(a[0], softmax(a[1], p[1]), std::nullopt, -100,
                                           mode(p));
                    }));
  }
  // ---- Normalization (issue 21). ----
  // Params: the normalized (trailing) shape.
  c.push_back(Def(
      "layer_norm", 1, kSmooth, {"layer_norm"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!NeedRank(s, 1)) return false;
        const int64_t k = std::min<int64_t>(Rank(s[0]), 1 + r.Below(2));
        PushShape(p, Shape(s[0].end() - k, s[0].end()));
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        const Shape ns = ReadShape(p, 0);
        return layer_norm(a[0], ns, Constant(a[0], ns, 1), Constant(a[0], ns, 2));
      }));
  c.push_back(Def(
      "rms_norm", 1, kSmooth, {"rms_norm"},
      [](Rng&, const std::vector<Shape>& s, Params& p) {
        // Over one element rms_norm is x / sqrt(x^2 + eps), a smoothed sign(x): its slope is
        // eps / (x^2 + eps)^1.5, which float32 computes as r (1 - z^2) with z = x r within an
        // ulp of 1, so its tangent is rounding noise times r, not a smooth function's (seed 823:
        // 0.04 where float64 gives 0). Normalize over at least two elements.
        // eps is explicit: its default is the dtype's machine epsilon, so a float32 program
        // and its float64 oracle would compute different functions wherever mean(x^2) is
        // near 1e-7 (seed 298332: a row of a weight gradient, -1.47 against 0.76).
        if (!NeedRank(s, 1) || s[0].back() < 2) return false;
        PushShape(p, Shape{s[0].back()});
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        const Shape ns = ReadShape(p, 0);
        return rms_norm(a[0], ns, Constant(a[0], ns, 3), 1e-5);
      }));
  c.push_back(Def("normalize", 1, kSmooth, {"normalize"},
                  [](Rng& r, const std::vector<Shape>& s, Params& p) {
                    // Over one element normalize is x / max(|x|, eps) = sign(x): flat, so its
                    // higher derivatives are float32 rounding noise that differs between
                    // equal programs (seed 250291: 2.2e-4 at fifth order). Two or more.
                    if (!OneDim(r, s, p)) return false;
                    const int64_t d = p[0] < 0 ? p[0] + Rank(s[0]) : p[0];
                    return s[0][static_cast<size_t>(d)] >= 2;
                  },
                  [](const auto& a, const Params& p, bool) { return normalize(a[0], 2.0, p[0]); }));
  // Params: num_groups (a divisor of C), C.
  c.push_back(Def(
      "group_norm", 1, kSmooth, {"group_norm"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!NeedRank(s, 2)) return false;
        const int64_t ch = s[0][1];
        int64_t groups = ch == 0 ? 1 : 1 + r.Below(ch);
        while (ch % groups != 0) --groups;
        p = {groups, ch};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return group_norm(a[0], p[0], Constant(a[0], Shape{p[1]}, 4),
                          Constant(a[0], Shape{p[1]}, 5));
      }));
  // Params: training (batch_norm) or use_input_stats (instance_norm), C. The running
  // variances are positive.
  c.push_back(Def(
      "batch_norm", 1, kSmooth, {"batch_norm"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!NeedRank(s, 2)) return false;
        const int64_t count = Numel(s[0]) / std::max<int64_t>(s[0][1], 1);
        p = {count == 1 || s[0][1] == 0 ? 0 : r.Below(2), s[0][1]};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        const Shape ch = {p[1]};
        const auto rv = Constant(a[0], ch, 7) * Constant(a[0], ch, 7) + 0.5;
        return batch_norm(a[0], Constant(a[0], ch, 6), rv, Constant(a[0], ch, 8),
                          Constant(a[0], ch, 9), p[0] != 0)
            .output;
      }));
  c.push_back(Def(
      "instance_norm", 1, kSmooth, {"instance_norm"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!NeedRank(s, 2)) return false;
        int64_t spatial = 1;
        for (size_t d = 2; d < s[0].size(); ++d) spatial *= s[0][d];
        p = {spatial == 1 ? 0 : r.Below(2), s[0][1]};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        const Shape ch = {p[1]};
        const auto rv = Constant(a[0], ch, 11) * Constant(a[0], ch, 11) + 0.5;
        return instance_norm(a[0], Constant(a[0], ch, 10), rv, Constant(a[0], ch, 12),
                             Constant(a[0], ch, 13), p[0] != 0)
            .output;
      }));
  // ---- Indexing and shape ops for models (issue 21). ----
  // embedding: a [k, cols] table (a viewed as rows of its last dim) read at a [2, 2] index.
  // No padding_idx: its row is a constant to the derivatives, so the finite-difference
  // oracles would disagree (//ops:nn_indexing_test checks it against torch).
  c.push_back(Def("embedding", 1, kSmooth, {"embedding", "reshape"},
                  [](Rng& r, const std::vector<Shape>& s, Params& p) {
                    const int64_t n = Numel(s[0]);
                    if (Rank(s[0]) == 0 || n == 0) return false;
                    const int64_t cols = s[0].back();
                    p = {n / cols, cols, r.Below(5)};
                    return true;
                  },
                  [](const auto& a, const Params& p, bool) {
                    return embedding(IndexFor(a[0], {2, 2}, p[0], p[2]),
                                     reshape(a[0], Shape{p[0], p[1]}));
                  }));
  c.push_back(Def("masked_fill", 1, kSmooth, {"masked_fill", "gt", "sum"}, AnyRank,
                  [](const auto& a, const Params&, bool) {
                    return masked_fill(masked_fill(a[0], gt(a[0], 0.4), -0.5), gt(a[0], -0.3),
                                       sum(a[0]));
                  }));
  // index_add: rows of a along dim d (picked by one index) added at other rows.
  c.push_back(Def("index_add", 1, kSmooth, {"index_add", "index_select"},
                  [](Rng& r, const std::vector<Shape>& s, Params& p) {
                    if (Rank(s[0]) == 0) return false;
                    const int64_t d = DrawDim(r, Rank(s[0]));
                    const int64_t size = s[0][static_cast<size_t>(d < 0 ? d + Rank(s[0]) : d)];
                    if (size == 0) return false;
                    p = {d, r.Between(0, 3), size, r.Below(5)};
                    return true;
                  },
                  [](const auto& a, const Params& p, bool) {
                    return index_add(
                        a[0], p[0], IndexFor(a[0], {p[1]}, p[2], p[3]),
                        index_select(a[0], p[0], IndexFor(a[0], {p[1]}, p[2], p[3] + 1)), 0.5);
                  }));
  c.push_back(Def("tril_triu", 1, kSmooth, {"tril", "triu"},
                  [](Rng& r, const std::vector<Shape>& s, Params& p) {
                    if (!NeedRank(s, 2)) return false;
                    p = {r.Between(-2, 2), r.Between(-2, 2)};
                    return true;
                  },
                  [](const auto& a, const Params& p, bool) {
                    return tril(a[0], p[0]) + triu(a[0], p[1]);
                  }));
  // roll along one dim, or (p[1] == 99) the flattened tensor.
  c.push_back(Def("roll", 1, kSmooth, {"roll"},
                  [](Rng& r, const std::vector<Shape>& s, Params& p) {
                    const bool flat = Rank(s[0]) == 0 || r.Chance(30);
                    p = {r.Between(-5, 5), flat ? 99 : DrawDim(r, Rank(s[0]))};
                    return true;
                  },
                  [](const auto& a, const Params& p, bool) {
                    return p[1] == 99 ? roll(a[0], Shape{p[0]}, Shape{})
                                      : roll(a[0], Shape{p[0]}, Shape{p[1]});
                  }));
  // pixel_shuffle then pixel_unshuffle with factor 2 when the channels allow, else 1.
  c.push_back(Def("pixel_shuffle", 1, kSmooth, {"pixel_shuffle", "pixel_unshuffle", "sin"},
                  [](Rng&, const std::vector<Shape>& s, Params& p) {
                    if (!NeedRank(s, 3)) return false;
                    p = {s[0][s[0].size() - 3] % 4 == 0 ? 2 : 1};
                    return true;
                  },
                  [](const auto& a, const Params& p, bool) {
                    return pixel_unshuffle(sin(pixel_shuffle(a[0], p[0])), p[0]);
                  }));
  // gather_nd then index_put_nd at the same rows (k = 1 or 2 coordinates per row, repeats
  // likely): rows read, transformed and written back, added with accumulate (p[4]).
  c.push_back(Def("gather_index_put_nd", 1, kSmooth, {"gather_nd", "index_put_nd", "sin"},
                  [](Rng& r, const std::vector<Shape>& s, Params& p) {
                    if (Rank(s[0]) == 0) return false;
                    const int64_t k = Rank(s[0]) >= 2 && r.Chance(50) ? 2 : 1;
                    int64_t high = s[0][0];
                    if (k == 2) high = std::min(high, s[0][1]);
                    if (high == 0) return false;
                    p = {k, r.Between(1, 4), high, r.Below(5), r.Chance(50) ? 1 : 0};
                    return true;
                  },
                  [](const auto& a, const Params& p, bool) {
                    const auto idx = IndexFor(a[0], {p[1], p[0]}, p[2], p[3]);
                    return index_put_nd(a[0], idx, sin(gather_nd(a[0], idx)), p[4] == 1);
                  }));
  // ---- Convolution and pooling (issue 21). ----
  {
    // Inputs of n spatial dims ([N, C, *] or [C, *], spatial sizes >= 1); one kernel size,
    // stride, padding and dilation for every spatial dim, drawn so that windows fit.
    const auto fits = [](const Shape& s, int64_t n) {
      if (Rank(s) != n + 1 && Rank(s) != n + 2) return false;
      for (int64_t i = Rank(s) - n; i < Rank(s); ++i) {
        if (s[static_cast<size_t>(i)] < 1) return false;
      }
      return true;
    };
    const auto min_spatial = [](const Shape& s, int64_t n) {
      int64_t m = s.back();
      for (int64_t i = Rank(s) - n; i < Rank(s); ++i) m = std::min(m, s[static_cast<size_t>(i)]);
      return m;
    };
    // p = {C, O, k, stride, padding, dilation, salt}: weight [O, C, k...], bias [O].
    const auto conv_propose = [=](int64_t n) -> Propose {
      return [=](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!fits(s[0], n)) return false;
        const int64_t m = min_spatial(s[0], n);
        const int64_t pad = r.Below(2), dil = r.Between(1, 2);
        const int64_t k = r.Between(1, 3);
        if (m + 2 * pad < dil * (k - 1) + 1) return false;
        p = {s[0][s[0].size() - n - 1], r.Between(1, 3), k, r.Between(1, 2), pad, dil,
             r.Below(5)};
        return true;
      };
    };
    const auto wshape = [](const Params& p, int64_t n) {
      Shape w = {p[1], p[0]};
      for (int64_t i = 0; i < n; ++i) w.push_back(p[2]);
      return w;
    };
    c.push_back(Def("conv1d", 1, kSmooth, {"conv1d"}, conv_propose(1),
                    [=](const auto& a, const Params& p, bool) {
                      return conv1d(a[0], Constant(a[0], wshape(p, 1), p[6]),
                                    Constant(a[0], {p[1]}, p[6] + 1), Shape{p[3]}, Shape{p[4]},
                                    Shape{p[5]}, int64_t{1});
                    }));
    c.push_back(Def("conv2d", 1, kSmooth, {"conv2d"}, conv_propose(2),
                    [=](const auto& a, const Params& p, bool) {
                      return conv2d(a[0], Constant(a[0], wshape(p, 2), p[6]),
                                    Constant(a[0], {p[1]}, p[6] + 1), Shape{p[3]}, Shape{p[4]},
                                    Shape{p[5]}, int64_t{1});
                    }));
    c.push_back(Def("conv3d", 1, kSmooth, {"conv3d"}, conv_propose(3),
                    [=](const auto& a, const Params& p, bool) {
                      return conv3d(a[0], Constant(a[0], wshape(p, 3), p[6]),
                                    Constant(a[0], {p[1]}, p[6] + 1), Shape{p[3]}, Shape{p[4]},
                                    Shape{p[5]}, int64_t{1});
                    }));
    // The weight gradient of conv2d for the output gradient sin(conv2d(x, W)): bilinear in
    // (x, that gradient), so both of its derivative paths are drawn.
    c.push_back(Def("conv_weight_grad", 1, kSmooth, {"conv_weight_grad", "conv2d", "sin"},
                    conv_propose(2), [=](const auto& a, const Params& p, bool) {
                      const auto y = conv2d(a[0], Constant(a[0], wshape(p, 2), p[6]),
                                            Constant(a[0], {p[1]}, p[6] + 1), Shape{p[3]},
                                            Shape{p[4]}, Shape{p[5]}, int64_t{1});
                      return conv_weight_grad(a[0], wshape(p, 2), sin(y), Shape{p[3]},
                                              Shape{p[4]}, Shape{p[5]}, int64_t{1});
                    }));
    // p = {C, O, k, stride, padding, output_padding, dilation, salt}: weight [C, O, k...].
    const auto convt_propose = [=](int64_t n) -> Propose {
      return [=](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!fits(s[0], n)) return false;
        const int64_t m = min_spatial(s[0], n);
        const int64_t k = r.Between(1, 3), st = r.Between(1, 2), dil = r.Between(1, 2);
        const int64_t pad = r.Below(2), op = r.Below(std::max(st, dil));
        if ((m - 1) * st - 2 * pad + dil * (k - 1) + op + 1 <= 0) return false;
        p = {s[0][s[0].size() - n - 1], r.Between(1, 3), k, st, pad, op, dil, r.Below(5)};
        return true;
      };
    };
    const auto wtshape = [](const Params& p, int64_t n) {
      Shape w = {p[0], p[1]};
      for (int64_t i = 0; i < n; ++i) w.push_back(p[2]);
      return w;
    };
    c.push_back(Def("conv_transpose1d", 1, kSmooth, {"conv_transpose1d"}, convt_propose(1),
                    [=](const auto& a, const Params& p, bool) {
                      return conv_transpose1d(a[0], Constant(a[0], wtshape(p, 1), p[7]),
                                              Constant(a[0], {p[1]}, p[7] + 1), Shape{p[3]},
                                              Shape{p[4]}, Shape{p[5]}, int64_t{1}, Shape{p[6]});
                    }));
    c.push_back(Def("conv_transpose2d", 1, kSmooth, {"conv_transpose2d"}, convt_propose(2),
                    [=](const auto& a, const Params& p, bool) {
                      return conv_transpose2d(a[0], Constant(a[0], wtshape(p, 2), p[7]),
                                              Constant(a[0], {p[1]}, p[7] + 1), Shape{p[3]},
                                              Shape{p[4]}, Shape{p[5]}, int64_t{1}, Shape{p[6]});
                    }));
    c.push_back(Def("conv_transpose3d", 1, kSmooth, {"conv_transpose3d"}, convt_propose(3),
                    [=](const auto& a, const Params& p, bool) {
                      return conv_transpose3d(a[0], Constant(a[0], wtshape(p, 3), p[7]),
                                              Constant(a[0], {p[1]}, p[7] + 1), Shape{p[3]},
                                              Shape{p[4]}, Shape{p[5]}, int64_t{1}, Shape{p[6]});
                    }));
    // p = {k, stride, padding, dilation, ceil_mode}: at least one window per dim.
    const auto pool_propose = [=](int64_t n, bool dilated) -> Propose {
      return [=](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!fits(s[0], n)) return false;
        const int64_t m = min_spatial(s[0], n);
        const int64_t k = r.Between(1, 3), pad = r.Below(k / 2 + 1);
        const int64_t dil = dilated ? r.Between(1, 2) : 1;
        if (m + 2 * pad < dil * (k - 1) + 1) return false;
        p = {k, r.Between(1, 2), pad, dil, r.Below(2)};
        return true;
      };
    };
    c.push_back(Def("max_pool1d", 1, 0, {"max_pool1d"}, pool_propose(1, true),
                    [](const auto& a, const Params& p, bool) {
                      return max_pool1d(a[0], Shape{p[0]}, Shape{p[1]}, Shape{p[2]},
                                        Shape{p[3]}, p[4] != 0);
                    }));
    c.push_back(Def("max_pool2d", 1, 0, {"max_pool2d"}, pool_propose(2, true),
                    [](const auto& a, const Params& p, bool) {
                      return max_pool2d(a[0], Shape{p[0]}, Shape{p[1]}, Shape{p[2]},
                                        Shape{p[3]}, p[4] != 0);
                    }));
    c.push_back(Def("max_pool1d_with_indices", 1, 0, {"max_pool1d_with_indices"},
                    pool_propose(1, true), [](const auto& a, const Params& p, bool) {
                      return std::get<0>(max_pool1d_with_indices(
                          a[0], Shape{p[0]}, Shape{p[1]}, Shape{p[2]}, Shape{p[3]}, p[4] != 0));
                    }));
    c.push_back(Def("max_pool2d_with_indices", 1, 0, {"max_pool2d_with_indices"},
                    pool_propose(2, true), [](const auto& a, const Params& p, bool) {
                      return std::get<0>(max_pool2d_with_indices(
                          a[0], Shape{p[0]}, Shape{p[1]}, Shape{p[2]}, Shape{p[3]}, p[4] != 0));
                    }));
    c.push_back(Def("avg_pool1d", 1, kSmooth, {"avg_pool1d"}, pool_propose(1, false),
                    [](const auto& a, const Params& p, bool) {
                      return avg_pool1d(a[0], Shape{p[0]}, Shape{p[1]}, Shape{p[2]}, p[4] != 0,
                                        p[0] % 2 == 0);
                    }));
    c.push_back(Def("avg_pool2d", 1, kSmooth, {"avg_pool2d"}, pool_propose(2, false),
                    [](const auto& a, const Params& p, bool) {
                      return avg_pool2d(a[0], Shape{p[0]}, Shape{p[1]}, Shape{p[2]}, p[4] != 0,
                                        p[1] == 1);
                    }));
    // p = {out_h, out_w}.
    const auto adaptive_propose = [=](int64_t n) -> Propose {
      return [=](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!fits(s[0], n)) return false;
        p = {r.Between(1, 4), r.Between(1, 4)};
        return true;
      };
    };
    c.push_back(Def("adaptive_avg_pool1d", 1, kSmooth, {"adaptive_avg_pool1d"},
                    adaptive_propose(1), [](const auto& a, const Params& p, bool) {
                      return adaptive_avg_pool1d(a[0], Shape{p[0]});
                    }));
    c.push_back(Def("adaptive_avg_pool2d", 1, kSmooth, {"adaptive_avg_pool2d"},
                    adaptive_propose(2), [](const auto& a, const Params& p, bool) {
                      return adaptive_avg_pool2d(a[0], Shape{p[0], p[1]});
                    }));
    c.push_back(Def("adaptive_max_pool2d", 1, 0, {"adaptive_max_pool2d"}, adaptive_propose(2),
                    [](const auto& a, const Params& p, bool) {
                      return std::get<0>(adaptive_max_pool2d(a[0], Shape{p[0], p[1]}));
                    }));
    // interpolate's primitives: resizing [N, C, *spatial] to drawn sizes, then the adjoint
    // back to the input's shape (p = {n, out_1..out_n, align_corners, input shape...}).
    const auto resize_propose = [](Rng& r, const std::vector<Shape>& s, Params& p) {
      const int64_t rank = Rank(s[0]);
      if (rank < 3 || rank > 5) return false;
      for (int64_t d = 1; d < rank; ++d) {
        if (s[0][static_cast<size_t>(d)] == 0) return false;
      }
      p = {rank - 2};
      for (int64_t d = 2; d < rank; ++d) p.push_back(r.Between(1, 5));
      p.push_back(r.Chance(50) ? 1 : 0);
      p.insert(p.end(), s[0].begin(), s[0].end());
      return true;
    };
    const auto out_of = [](const Params& p) { return Shape(p.begin() + 1, p.begin() + 1 + p[0]); };
    const auto in_of = [](const Params& p) { return Shape(p.begin() + 2 + p[0], p.end()); };
    c.push_back(Def("upsample_nearest", 1, kSmooth,
                    {"upsample_nearest", "upsample_nearest_backward", "sin"}, resize_propose,
                    [=](const auto& a, const Params& p, bool) {
                      return upsample_nearest_backward(sin(upsample_nearest(a[0], out_of(p))),
                                                       out_of(p), in_of(p));
                    }));
    c.push_back(Def("upsample_linear", 1, kSmooth,
                    {"upsample_linear", "upsample_linear_backward", "sin"}, resize_propose,
                    [=](const auto& a, const Params& p, bool) {
                      const bool align = p[static_cast<size_t>(1 + p[0])] == 1;
                      return upsample_linear_backward(
                          sin(upsample_linear(a[0], out_of(p), align)), out_of(p), in_of(p),
                          align);
                    }));
    // unfold, and fold back to the input's spatial size
    // (p = {k, stride, padding, dilation, ceil_mode (unused), H, W}).
    const auto pool2 = pool_propose(2, true);
    c.push_back(Def("unfold_fold", 1, kSmooth, {"unfold", "fold"},
                    [=](Rng& r, const std::vector<Shape>& s, Params& p) {
                      if (!pool2(r, s, p)) return false;
                      p.push_back(s[0][s[0].size() - 2]);
                      p.push_back(s[0].back());
                      return true;
                    },
                    [](const auto& a, const Params& p, bool) {
                      const Shape k = {p[0]}, s = {p[1]}, pad = {p[2]}, d = {p[3]};
                      return fold(unfold(a[0], k, d, pad, s), Shape{p[5], p[6]}, k, d, pad, s);
                    }));
  }
  // ---- Attention and contractions (issue 21). ----
  c.push_back(Def(
      "addmm", 1, kSmooth, {"addmm"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!NeedRank(s, 2, 2)) return false;
        p = {s[0][1], r.Between(0, 3), r.Below(5)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return addmm(Constant(a[0], {p[1]}, p[2]), a[0], Constant(a[0], {p[0], p[1]}, p[2] + 1),
                     0.5, -1.5);
      }));
  c.push_back(Def(
      "baddbmm", 1, kSmooth, {"baddbmm"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!NeedRank(s, 3, 3)) return false;
        p = {s[0][0], s[0][2], r.Between(0, 3), r.Below(5)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return baddbmm(Constant(a[0], {1, p[2]}, p[3]), a[0],
                       Constant(a[0], {p[0], p[1], p[2]}, p[3] + 1), 2.0, 0.7);
      }));
  // einsum: a product with a constant over the last dim (ellipsis batch), a batched dot
  // product of two arguments (ellipses broadcast), and diagonals / traces.
  c.push_back(Def(
      "einsum_const", 1, kSmooth, {"einsum"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!NeedRank(s, 1)) return false;
        p = {s[0].back(), r.Between(0, 3), r.Below(5)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return einsum("...j,jk->...k", List(a[0], Constant(a[0], {p[0], p[1]}, p[2])));
      }));
  c.push_back(Def(
      "einsum_dot", 2, kSmooth, {"einsum"},
      [](Rng&, const std::vector<Shape>& s, Params&) {
        if (Rank(s[0]) == 0 || Rank(s[1]) == 0 || s[0].back() != s[1].back()) return false;
        return BroadcastShape(s[0], s[1], nullptr);
      },
      [](const auto& a, const Params&, bool) {
        return einsum("...i,...i->...", List(a[0], a[1]));
      }));
  c.push_back(Def(
      "einsum_diag", 1, kSmooth, {"einsum"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!NeedRank(s, 2) || s[0][s[0].size() - 1] != s[0][s[0].size() - 2]) return false;
        p = {r.Below(2)};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        return p[0] ? einsum("...ii->...i", std::vector{a[0]}) : einsum("...ii", std::vector{a[0]});
      }));
  // scaled_dot_product_attention of the argument as the queries [..., L, E] with constant
  // keys and values: plain, causal, or with a float mask and a scale.
  c.push_back(Def(
      "scaled_dot_product_attention", 1, kSmooth, {"scaled_dot_product_attention"},
      [](Rng& r, const std::vector<Shape>& s, Params& p) {
        if (!NeedRank(s, 2) || s[0].back() == 0) return false;
        p = {s[0].back(), r.Between(1, 3), r.Between(0, 2), r.Below(3), r.Below(5),
             s[0][s[0].size() - 2]};
        return true;
      },
      [](const auto& a, const Params& p, bool) {
        const auto k = Constant(a[0], {p[1], p[0]}, p[4]);
        const auto v = Constant(a[0], {p[1], p[2]}, p[4] + 1);
        if (p[3] == 2) {
          return scaled_dot_product_attention(a[0], k, v, Constant(a[0], {p[5], p[1]}, p[4] + 2),
                                              0.0, false, 0.7);
        }
        return scaled_dot_product_attention(a[0], k, v, std::nullopt, 0.0, p[3] == 1);
      }));
  return c;
}

const std::vector<Entry>& Catalog() {
  static const std::vector<Entry>* catalog = new std::vector<Entry>(BuildCatalog());
  return *catalog;
}

}  // namespace

int CatalogSize() { return static_cast<int>(Catalog().size()); }
const char* CatalogName(int op) { return Catalog()[static_cast<size_t>(op)].name.c_str(); }
std::vector<std::string> CatalogOps(int op) { return Catalog()[static_cast<size_t>(op)].ops; }

// ---------------------------------------------------------------------------------------
// Program.
// ---------------------------------------------------------------------------------------

TensorList Program::Run(const TensorList& inputs, bool plain) const {
  TensorList values = inputs;
  for (const Step& s : steps) {
    TensorList args;
    for (int a : s.args) args.push_back(values[static_cast<size_t>(a)]);
    values.push_back(Catalog()[static_cast<size_t>(s.op)].run(args, s.params, plain));
  }
  TensorList r;
  for (int o : outputs) r.push_back(values[static_cast<size_t>(o)]);
  return r;
}

bool Program::HasFunctions() const {
  for (const Step& s : steps) {
    if (Catalog()[static_cast<size_t>(s.op)].flags & kFunction) return true;
  }
  return false;
}

std::string Program::ToCpp(bool plain) const {
  std::vector<Sym> values;
  for (size_t i = 0; i < inputs.size(); ++i) values.emplace_back(absl::StrCat("x[", i, "]"));
  std::string body;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    std::vector<Sym> args;
    for (int a : s.args) args.push_back(values[static_cast<size_t>(a)]);
    const std::string name = absl::StrCat("v", inputs.size() + i);
    absl::StrAppend(&body, "  Tensor ", name, " = ",
                    Catalog()[static_cast<size_t>(s.op)].show(args, s.params, plain).expr, ";\n");
    values.emplace_back(name);
  }
  std::vector<std::string> outs;
  for (int o : outputs) outs.push_back(values[static_cast<size_t>(o)].expr);
  return absl::StrCat("[](const TensorList& x) -> TensorList {\n", body, "  return {",
                      absl::StrJoin(outs, ", "), "};\n}");
}

std::string Program::Summary() const {
  std::vector<std::string> names;
  for (const Step& s : steps) names.push_back(Catalog()[static_cast<size_t>(s.op)].name);
  return absl::StrJoin(names, ", ");
}

namespace {

// Finite and at most 1e4 in magnitude (the derivative oracles resolve such values).
bool Tame(const Tensor& t) {
  if (t.dtype() != kFloat32 && t.dtype() != kFloat64) return false;
  for (double v : to(t, kFloat64).to_vector<double>()) {
    if (!std::isfinite(v) || std::abs(v) > 1e4) return false;
  }
  return true;
}

Shape SizesOf(const Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end()); }

}  // namespace

Program Generate(uint64_t seed, const GenerateOptions& options) {
  Rng r(seed);
  Program p;
  p.dtype = options.allow_float32 && r.Chance(25) ? kFloat32 : kFloat64;
  const int64_t num_inputs = r.Between(1, 3);
  for (int64_t i = 0; i < num_inputs; ++i) {
    InputSpec spec;
    const int64_t rank = r.Between(0, 4);
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t roll = r.Below(20);
      spec.shape.push_back(roll == 0 ? 0 : roll < 6 ? 1 : roll < 14 ? 2 : 3);
    }
    while (Numel(spec.shape) > options.max_input_numel) {
      for (int64_t& d : spec.shape) d = std::max<int64_t>(1, d - 1);
    }
    // Broadcast partners: a later input often takes a suffix of the first one's shape.
    if (i > 0 && r.Chance(50)) {
      const Shape& first = p.inputs[0].shape;
      spec.shape = Shape(first.begin() + r.Below(Rank(first) + 1), first.end());
    }
    p.inputs.push_back(spec);
  }
  std::vector<InputSpec> contiguous_specs = p.inputs;
  TensorList values = MakeInputs(contiguous_specs, p.dtype, seed);
  std::vector<int> candidates;
  const std::vector<Entry>& catalog = Catalog();
  for (int op = 0; op < static_cast<int>(catalog.size()); ++op) {
    if (!options.smooth_only || (catalog[static_cast<size_t>(op)].flags & kSmooth)) {
      candidates.push_back(op);
    }
  }
  const int64_t steps = r.Between(1, options.max_steps);
  for (int64_t k = 0; k < steps; ++k) {
    for (int attempt = 0; attempt < 30; ++attempt) {
      Step s;
      s.op = candidates[static_cast<size_t>(r.Below(static_cast<int64_t>(candidates.size())))];
      const Entry& e = catalog[static_cast<size_t>(s.op)];
      std::vector<Shape> shapes;
      for (int a = 0; a < e.arity; ++a) {
        // The newest value half of the time: programs build chains, not only fans.
        const int64_t n = static_cast<int64_t>(values.size());
        const int v = static_cast<int>(a == 0 && r.Chance(50) ? n - 1 : r.Below(n));
        s.args.push_back(v);
        shapes.push_back(SizesOf(values[static_cast<size_t>(v)]));
      }
      if (!e.propose(r, shapes, s.params)) continue;
      TensorList args;
      for (int a : s.args) args.push_back(values[static_cast<size_t>(a)]);
      Tensor out;
      try {
        out = e.run(args, s.params, false);
      } catch (const Error&) {
        continue;  // a parameter this shape does not allow; draw again
      }
      if (!Tame(out) || out.numel() > 64) continue;
      p.steps.push_back(s);
      values.push_back(out);
      break;
    }
  }
  p.outputs.push_back(static_cast<int>(values.size()) - 1);
  if (values.size() > 2 && r.Chance(30)) {
    const int other = static_cast<int>(r.Below(static_cast<int64_t>(values.size()) - 1));
    p.outputs.push_back(other);
  }
  for (InputSpec& spec : p.inputs) {
    const int64_t roll = r.Below(10);
    spec.layout = roll < 5   ? Layout::kContiguous
                  : roll < 7 ? Layout::kTransposed
                  : roll < 9 ? Layout::kStrided
                             : Layout::kExpanded;
  }
  return p;
}

Program DeadCodeEliminated(const Program& p) {
  const size_t n_in = p.inputs.size();
  std::vector<bool> live(n_in + p.steps.size(), false);
  for (int o : p.outputs) live[static_cast<size_t>(o)] = true;
  for (size_t i = p.steps.size(); i-- > 0;) {
    if (!live[n_in + i]) continue;
    for (int a : p.steps[i].args) live[static_cast<size_t>(a)] = true;
  }
  std::vector<int> renumber(live.size(), -1);
  for (size_t i = 0; i < n_in; ++i) renumber[i] = static_cast<int>(i);
  Program q = p;
  q.steps.clear();
  for (size_t i = 0; i < p.steps.size(); ++i) {
    if (!live[n_in + i]) continue;
    Step s = p.steps[i];
    for (int& a : s.args) a = renumber[static_cast<size_t>(a)];
    renumber[n_in + i] = static_cast<int>(n_in + q.steps.size());
    q.steps.push_back(s);
  }
  for (int& o : q.outputs) o = renumber[static_cast<size_t>(o)];
  return q;
}

}  // namespace ft::property

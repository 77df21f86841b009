// The §3.1 Functions (tests/custom_function_db.h) under the transform matrix of §3.2.
//
// Oracles never use the Function under vmap: a "twin" lambda computes the same math with
// built-in ops, and every vmap is replaced by a loop of per-example calls
// (tests/vmap_oracle.h). ScaleGradGenVmap and ZeroGradientsGenVmap have derivatives no
// composition of ops has, so their oracles are closed forms and loops of the Function.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/custom_function_db.h"
#include "tests/test_util.h"
#include "tests/vmap_oracle.h"

namespace ft::function_db {
namespace {

#define EXPECT_CLOSE(actual, expected) \
  EXPECT_TRUE(::ft::testing::TensorNear((actual), (expected), kTol, kTol))

using Fn = std::function<TensorList(const TensorList&)>;

// ---------------------------------------------------------------------------------------
// The transform matrix.
// ---------------------------------------------------------------------------------------

using DimList = std::vector<std::optional<int64_t>>;
// A vmap implementation: ft::vmap, or the loop-and-stack oracle. out_dims are 0.
using VmapImpl = std::function<Fn(Fn, DimList)>;

Fn RealVmap(Fn f, DimList dims) { return vmap(TensorListFn(std::move(f)), Dims(dims), 0); }
Fn LoopMap(Fn f, DimList dims) {
  return [f = std::move(f), dims = std::move(dims)](const TensorList& a) {
    return testing::LoopVmap(f, a, dims, std::vector<int64_t>(16, 0));
  };
}

template <typename T>
std::vector<T> Cat(std::vector<T> a, const std::vector<T>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
TensorList Part(const TensorList& a, size_t begin, size_t end) {
  return TensorList(a.begin() + static_cast<int64_t>(begin), a.begin() + static_cast<int64_t>(end));
}
DimList Zeros(size_t n) { return DimList(n, int64_t{0}); }
std::vector<int64_t> AllArgs(size_t n) {
  std::vector<int64_t> r;
  for (size_t i = 0; i < n; ++i) r.push_back(static_cast<int64_t>(i));
  return r;
}
// Reduce: the smooth scalar of grad and hessian, sum over outputs of sum(sin(out)).
Tensor Reduce(const TensorList& outs) {
  Tensor s = sum(sin(outs[0]));
  for (size_t k = 1; k < outs.size(); ++k) s = s + sum(sin(outs[k]));
  return s;
}
ScalarFn Reduced(Fn f) {
  return [f = std::move(f)](const TensorList& a) { return Reduce(f(a)); };
}

struct Case {
  std::string name;
  std::vector<Shape> shapes;  // per-example argument shapes
  Fn fn;                      // uses the Function (floating outputs only)
  Fn twin;                    // the same math with built-in ops; empty: none exists
  bool forward_ad = true;     // jvp-based compositions
  double low = -1.0, high = 1.0;
};

// Data: inputs of one in_dims combination (dims: where the inner vmap maps each argument).
struct Data {
  size_t n = 0;
  TensorList a, t, c, dd;  // per example: arguments, tangents, output cotangents, arg-shaped
  TensorList ab, tb, ub, vb, cb, cb2, db;  // batched at dims (outputs batched at 0)
  TensorList abb, tbb, cbb;                // plus an outer batch dim at 0
};

Shape WithBatch(IntArrayRef s, std::optional<int64_t> d) {
  Shape r(s.begin(), s.end());
  if (d && *d == 0) r.insert(r.begin(), kB);
  if (d && *d == -1) r.push_back(kB);
  return r;
}
Shape Outer(Shape s) {
  s.insert(s.begin(), kB);
  return s;
}

Data MakeData(const Case& c, const DimList& dims, uint64_t seed) {
  Data d;
  d.n = c.shapes.size();
  auto rnd = [&seed](const Shape& s) { return Rand(s, ++seed); };
  auto arg = [&seed, &c](const Shape& s) { return Rand(s, ++seed, c.low, c.high); };
  for (size_t i = 0; i < d.n; ++i) {
    const Shape& s = c.shapes[i];
    const Shape b = WithBatch(s, dims[i]);
    d.a.push_back(arg(s));
    d.t.push_back(rnd(s));
    d.dd.push_back(rnd(s));
    d.ab.push_back(arg(b));
    d.tb.push_back(rnd(b));
    d.ub.push_back(rnd(b));
    d.vb.push_back(rnd(b));
    d.db.push_back(rnd(b));
    d.abb.push_back(arg(Outer(b)));
    d.tbb.push_back(rnd(Outer(b)));
  }
  for (const Tensor& o : c.fn(d.a)) {
    const Shape s(o.sizes().begin(), o.sizes().end());
    d.c.push_back(rnd(s));
    d.cb.push_back(rnd(Outer(s)));
    d.cb2.push_back(rnd(Outer(s)));
    d.cbb.push_back(rnd(Outer(Outer(s))));
  }
  return d;
}

struct Composition {
  const char* name;
  bool forward_ad;  // needs the Function's jvp
  bool batched;     // uses vmap (else compared with the twin only)
  std::function<TensorList(const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims)>
      run;
};

// vjp of f at prims, then its vjp_fn at cots: what vjp∘... compositions differentiate.
Fn VjpOf(Fn f, size_t n) {
  return [f = std::move(f), n](const TensorList& a) {
    return vjp(f, Part(a, 0, n)).vjp_fn(Part(a, n, a.size()));
  };
}
// jvp of f at (prims, tangents): outputs then tangents.
Fn JvpOf(Fn f, size_t n) {
  return [f = std::move(f), n](const TensorList& a) {
    JvpResult r = jvp(f, Part(a, 0, n), Part(a, n, a.size()));
    return Cat(r.outputs, r.tangents);
  };
}
TensorList JacobiansOf(const Fn& f, const TensorList& a, bool forward) {
  TensorList result;
  const size_t outs = f(a).size();
  for (size_t k = 0; k < outs; ++k) {
    TensorFnOfList fk = [f, k](const TensorList& x) { return f(x)[k]; };
    result = Cat(result, forward ? jacfwd(fk, AllArgs(a.size()))(a)
                                 : jacrev(fk, AllArgs(a.size()))(a));
  }
  return result;
}

const std::vector<Composition>& Compositions() {
  static const std::vector<Composition> kAll = {
      // ---- single transforms and vjp∘vjp (against the twin) ----
      {"grad", false, false,
       [](const Fn& f, const VmapImpl&, const Data& d, const DimList&) {
         return grad(Reduced(f), AllArgs(d.n))(d.a);
       }},
      {"vjp", false, false,
       [](const Fn& f, const VmapImpl&, const Data& d, const DimList&) {
         VjpResult r = vjp(f, d.a);
         return Cat(r.outputs, r.vjp_fn(d.c));
       }},
      {"jvp", true, false,
       [](const Fn& f, const VmapImpl&, const Data& d, const DimList&) {
         return JvpOf(f, d.n)(Cat(d.a, d.t));
       }},
      {"jacrev", false, false,
       [](const Fn& f, const VmapImpl&, const Data& d, const DimList&) {
         return JacobiansOf(f, d.a, false);
       }},
      {"jacfwd", true, false,
       [](const Fn& f, const VmapImpl&, const Data& d, const DimList&) {
         return JacobiansOf(f, d.a, true);
       }},
      {"hessian", true, false,
       [](const Fn& f, const VmapImpl&, const Data& d, const DimList&) {
         return hessian(Reduced(f), AllArgs(d.n))(d.a);
       }},
      {"vjp∘vjp", false, false,
       [](const Fn& f, const VmapImpl&, const Data& d, const DimList&) {
         VjpResult r = vjp(VjpOf(f, d.n), Cat(d.a, d.c));
         return Cat(r.outputs, r.vjp_fn(d.dd));
       }},
      // ---- with vmap (against loops) ----
      {"vmap", false, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         return vm(f, dims)(d.ab);
       }},
      {"vmap∘grad", false, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         return vm(grad(Reduced(f), AllArgs(d.n)), dims)(d.ab);
       }},
      {"grad∘vmap", false, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         return grad(Reduced(vm(f, dims)), AllArgs(d.n))(d.ab);
       }},
      {"vmap∘vjp", false, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         return vm(VjpOf(f, d.n), Cat(dims, Zeros(d.cb.size())))(Cat(d.ab, d.cb));
       }},
      {"vjp∘vmap", false, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         VjpResult r = vjp(vm(f, dims), d.ab);
         return Cat(r.outputs, r.vjp_fn(d.cb));
       }},
      {"vmap∘jvp", true, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         return vm(JvpOf(f, d.n), Cat(dims, dims))(Cat(d.ab, d.tb));
       }},
      {"vmap∘vjp∘vmap", false, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         return vm(VjpOf(vm(f, dims), d.n), Zeros(d.n + d.cbb.size()))(Cat(d.abb, d.cbb));
       }},
      {"vjp∘vmap∘vmap", false, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         VjpResult r = vjp(vm(vm(f, dims), Zeros(d.n)), d.abb);
         return Cat(r.outputs, r.vjp_fn(d.cbb));
       }},
      {"vjp∘vjp∘vmap", false, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         VjpResult r = vjp(VjpOf(vm(f, dims), d.n), Cat(d.ab, d.cb));
         return Cat(r.outputs, r.vjp_fn(d.db));
       }},
      {"jvp∘vmap", true, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         return JvpOf(vm(f, dims), d.n)(Cat(d.ab, d.tb));
       }},
      {"jvp∘vmap∘vmap", true, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         return JvpOf(vm(vm(f, dims), Zeros(d.n)), d.n)(Cat(d.abb, d.tbb));
       }},
      {"vmap∘jvp∘vmap", true, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         return vm(JvpOf(vm(f, dims), d.n), Zeros(2 * d.n))(Cat(d.abb, d.tbb));
       }},
      {"jvp∘jvp∘vmap", true, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         Fn inner = JvpOf(vm(f, dims), d.n);
         JvpResult r = jvp(inner, Cat(d.ab, d.tb), Cat(d.ub, d.vb));
         return Cat(r.outputs, r.tangents);
       }},
      {"jvp∘vjp∘vmap", true, true,
       [](const Fn& f, const VmapImpl& vm, const Data& d, const DimList& dims) {
         Fn inner = VjpOf(vm(f, dims), d.n);
         JvpResult r = jvp(inner, Cat(d.ab, d.cb), Cat(d.tb, d.cb2));
         return Cat(r.outputs, r.tangents);
       }},
  };
  return kAll;
}

std::string DimsString(const DimList& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ", ";
    s += dims[i] ? std::to_string(*dims[i]) : "nullopt";
  }
  return s + ")";
}

// Every in_dims combination of n arguments from {0, -1, nullopt}, not all nullopt.
std::vector<DimList> Combos(size_t n) {
  std::vector<DimList> all{{}};
  for (size_t i = 0; i < n; ++i) {
    std::vector<DimList> next;
    for (const DimList& p : all) {
      for (std::optional<int64_t> d : {std::optional<int64_t>(0), std::optional<int64_t>(-1),
                                       std::optional<int64_t>()}) {
        DimList q = p;
        q.push_back(d);
        next.push_back(q);
      }
    }
    all = next;
  }
  std::vector<DimList> result;
  for (const DimList& p : all) {
    bool any = false;
    for (const auto& d : p) any = any || d.has_value();
    if (any) result.push_back(p);
  }
  return result;
}

// Compare runs both sides; an exception on either side is a failure naming the cell.
void Compare(const std::string& label, const std::function<TensorList()>& actual,
             const std::function<TensorList()>& expected) {
  TensorList want, got;
  try {
    want = expected();
  } catch (const std::exception& e) {
    ADD_FAILURE() << label << ": the oracle threw: " << e.what();
    return;
  }
  try {
    got = actual();
  } catch (const std::exception& e) {
    ADD_FAILURE() << label << ": threw: " << e.what();
    EXPECT_TRUE(LayerStack::empty()) << label;
    return;
  }
  ASSERT_EQ(got.size(), want.size()) << label;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(testing::TensorNear(got[i], want[i], kTol, kTol)) << label << ", result " << i;
  }
  EXPECT_TRUE(LayerStack::empty()) << label;
}

// RunMatrix: every composition of §3.2 for one Function, for every in_dims combination.
void RunMatrix(const Case& c) {
  const VmapImpl real = RealVmap, loop = LoopMap;
  const Fn& oracle_fn = c.twin ? c.twin : c.fn;
  uint64_t seed = 100;
  const std::vector<DimList> combos = Combos(c.shapes.size());
  for (const DimList& dims : combos) {
    const Data d = MakeData(c, dims, seed += 1000);
    for (const Composition& comp : Compositions()) {
      if (comp.forward_ad && !c.forward_ad) continue;
      // Unbatched compositions: once, against the twin.
      if (!comp.batched && (!c.twin || dims != combos.front())) continue;
      const std::string cell = std::string(comp.name) + " " + DimsString(dims);
      Compare(c.name + ": " + cell, [&] { return comp.run(c.fn, real, d, dims); },
              [&] { return comp.run(oracle_fn, loop, d, dims); });
    }
  }
}

Fn Unary(std::function<TensorList(const Tensor&)> f) {
  return [f = std::move(f)](const TensorList& a) { return f(a[0]); };
}

Case NumpyCubeCase() {
  return {"NumpyCube", {{3}}, Unary([](const Tensor& x) {
            auto [y, dy] = NumpyCube::apply(x);
            return TensorList{y, dy};
          }),
          Unary([](const Tensor& x) { return TensorList{x * x * x, x * x * 3.0}; }), true, 0.8,
          2.0};
}
Case CubeGenVmapCase() {
  return {"CubeGenVmap", {{3}}, Unary([](const Tensor& x) {
            auto [y, dy] = CubeGenVmap::apply(x);
            return TensorList{y, dy};
          }),
          Unary([](const Tensor& x) { return TensorList{x * x * x, x * x * 3.0}; }), true, 0.8,
          2.0};
}
Case NumpyMulCase() {
  return {"NumpyMul", {{4}, {3, 4}},
          [](const TensorList& a) { return TensorList{NumpyMul::apply(a[0], a[1])}; },
          [](const TensorList& a) { return TensorList{a[0] * a[1]}; }};
}
Case MulGenVmapCase() {
  return {"MulGenVmap", {{4}, {3, 4}},
          [](const TensorList& a) { return TensorList{MulGenVmap::apply(a[0], a[1])}; },
          [](const TensorList& a) { return TensorList{a[0] * a[1]}; }};
}
// No forward mode for NumpyExp_ (§3.2: jvp of an in-place Function, pytorch#91280).
Case NumpyExpCase() {
  return {"NumpyExp_", {{3}},
          Unary([](const Tensor& x) { return TensorList{NumpyExp_::apply(clone(x))}; }),
          Unary([](const Tensor& x) { return TensorList{exp(x)}; }), false};
}

Fn SortValues(int64_t dim, bool generated) {
  return Unary([dim, generated](const Tensor& x) {
    return TensorList{generated ? std::get<0>(SortGenVmap::apply(x, dim))
                                : std::get<0>(NumpySort::apply(x, dim))};
  });
}
Fn SortTwin(int64_t dim) {
  return Unary([dim](const Tensor& x) { return TensorList{std::get<0>(sort(x, dim))}; });
}
// No forward mode for NumpySort / NumpyTake (§3.2: supports_forward_ad False).
Case SortCase(int64_t dim, bool generated) {
  return {std::string(generated ? "SortGenVmap" : "NumpySort") + " dim " + std::to_string(dim),
          {{3, 4}}, SortValues(dim, generated), SortTwin(dim), generated};
}

// Take with fixed (captured) indices: a permutation along `dim` of a [3, 4] example.
Case TakeCase(int64_t dim, bool generated) {
  const Tensor ind = argsort(Rand({3, 4}, 7), dim);
  const Tensor ind_inv = argsort(ind, dim);
  return {std::string(generated ? "TakeGenVmap" : "NumpyTake") + " dim " + std::to_string(dim),
          {{3, 4}}, Unary([=](const Tensor& x) {
            return TensorList{generated ? TakeGenVmap::apply(x, ind, ind_inv, dim)
                                        : NumpyTake::apply(x, ind, ind_inv, dim)};
          }),
          Unary([=](const Tensor& x) { return TensorList{take_along_dim(x, ind, dim)}; }),
          generated};
}

Fn SelectTwin() {
  return Unary([](const Tensor& x) { return TensorList{select(x, 0, 2)}; });
}
Case SelectCase() {
  return {"Select", {{3, 2}},
          Unary([](const Tensor& x) { return TensorList{Select::apply(x, 2)}; }), SelectTwin()};
}
Case SelectGenVmapCase() {
  return {"SelectGenVmap", {{3, 2}},
          Unary([](const Tensor& x) { return TensorList{SelectGenVmap::apply(x, 2)}; }),
          SelectTwin()};
}
Case DefaultArgsCase() {
  return {"ForwardHasDefaultArgs", {{3, 2}},
          Unary([](const Tensor& x) { return TensorList{ForwardHasDefaultArgs::apply(x)}; }),
          SelectTwin()};
}
// No twin (no composition of ops has these derivatives): loops of the Function are the
// oracle of the batched compositions; the others have closed forms below.
Case ScaleGradCase() {
  return {"ScaleGradGenVmap", {{2}},
          Unary([](const Tensor& x) { return TensorList{ScaleGradGenVmap::apply(x)}; }), Fn()};
}
Case ZeroGradientsCase() {
  return {"ZeroGradientsGenVmap", {{4}, {3}},
          [](const TensorList& a) {
            auto [u, v] = ZeroGradientsGenVmap::apply(a[0], a[1]);
            return TensorList{u, v};
          },
          Fn()};
}

TEST(Matrix, NumpyCube) { RunMatrix(NumpyCubeCase()); }
TEST(Matrix, CubeGenVmap) { RunMatrix(CubeGenVmapCase()); }
TEST(Matrix, NumpyMul) { RunMatrix(NumpyMulCase()); }
TEST(Matrix, MulGenVmap) {
  RunMatrix(MulGenVmapCase());
}
TEST(Matrix, NumpyExpInplace) { RunMatrix(NumpyExpCase()); }
TEST(Matrix, NumpySort) {
  for (int64_t dim : {1, -1, 0}) RunMatrix(SortCase(dim, false));
}
TEST(Matrix, SortGenVmap) {
  for (int64_t dim : {1, -1, 0}) RunMatrix(SortCase(dim, true));
}
TEST(Matrix, NumpyTake) {
  for (int64_t dim : {1, -1}) RunMatrix(TakeCase(dim, false));
}
TEST(Matrix, TakeGenVmap) {
  for (int64_t dim : {1, -1}) RunMatrix(TakeCase(dim, true));
}
TEST(Matrix, Select) { RunMatrix(SelectCase()); }
TEST(Matrix, SelectGenVmap) { RunMatrix(SelectGenVmapCase()); }
TEST(Matrix, ForwardHasDefaultArgs) { RunMatrix(DefaultArgsCase()); }

// ScaleGradGenVmap and ZeroGradientsGenVmap: batched compositions against loops of the
// Function, the others against closed forms.
TEST(Matrix, ScaleGradGenVmap) {
  const Fn f = ScaleGradCase().fn;
  RunMatrix(ScaleGradCase());
  const Tensor x = Rand({2}, 40), c = Rand({2}, 41), t = Rand({2}, 42), dd = Rand({2}, 43);
  const Tensor eye2 = eye(2, kFloat64);
  EXPECT_CLOSE(grad(Reduced(f))({x})[0], cos(x) * kScale);
  VjpResult r = vjp(f, {x});
  EXPECT_CLOSE(r.outputs[0], x);
  EXPECT_CLOSE(r.vjp_fn({c})[0], c * kScale);
  EXPECT_CLOSE(jvp(f, {x}, {t}).tangents[0], t * kScale);
  EXPECT_CLOSE(JacobiansOf(f, {x}, false)[0], eye2 * kScale);
  EXPECT_CLOSE(JacobiansOf(f, {x}, true)[0], eye2 * kScale);
  // hessian: jacfwd of x -> kScale cos(F(x)), forward mode through F scales again.
  EXPECT_CLOSE(hessian(Reduced(f))({x})[0], eye2 * sin(x) * (-kScale * kScale));
  // vjp∘vjp: h(x, c) = kScale c.
  VjpResult rr = vjp(VjpOf(f, 1), {x, c});
  EXPECT_CLOSE(rr.outputs[0], c * kScale);
  TensorList g2 = rr.vjp_fn({dd});
  EXPECT_CLOSE(g2[0], zeros_like(x));
  EXPECT_CLOSE(g2[1], dd * kScale);
}

TEST(Matrix, ZeroGradientsGenVmap) {
  const Fn f = ZeroGradientsCase().fn;
  RunMatrix(ZeroGradientsCase());
  const Tensor x = Rand({4}, 50), y = Rand({3}, 51);
  const TensorList g = grad(Reduced(f), {0, 1})({x, y});
  EXPECT_CLOSE(g[0], zeros_like(x));
  EXPECT_CLOSE(g[1], zeros_like(y));
  VjpResult r = vjp(f, {x, y});
  EXPECT_CLOSE(r.outputs[0], x);
  EXPECT_CLOSE(r.outputs[1], y);
  const TensorList gv = r.vjp_fn({Rand({4}, 52), Rand({3}, 53)});
  EXPECT_CLOSE(gv[0], zeros_like(x));
  EXPECT_CLOSE(gv[1], zeros_like(y));
  const TensorList tv = jvp(f, {x, y}, {Rand({4}, 54), Rand({3}, 55)}).tangents;
  EXPECT_CLOSE(tv[0], zeros_like(x));
  EXPECT_CLOSE(tv[1], zeros_like(y));
  // Jacobian blocks (out k, arg i) are zeros of shape out_k.shape + arg_i.shape.
  for (bool forward : {false, true}) {
    const TensorList j = JacobiansOf(f, {x, y}, forward);
    ASSERT_EQ(j.size(), 4u);
    EXPECT_CLOSE(j[0], zeros({4, 4}, kFloat64));
    EXPECT_CLOSE(j[1], zeros({4, 3}, kFloat64));
    EXPECT_CLOSE(j[2], zeros({3, 4}, kFloat64));
    EXPECT_CLOSE(j[3], zeros({3, 3}, kFloat64));
  }
  const TensorList h = hessian(Reduced(f), {0, 1})({x, y});
  ASSERT_EQ(h.size(), 4u);
  EXPECT_CLOSE(h[0], zeros({4, 4}, kFloat64));
  EXPECT_CLOSE(h[3], zeros({3, 3}, kFloat64));
  VjpResult rr = vjp(VjpOf(f, 2), {x, y, Rand({4}, 56), Rand({3}, 57)});
  for (const Tensor& g2 : rr.vjp_fn({Rand({4}, 58), Rand({3}, 59)})) {
    EXPECT_CLOSE(g2, zeros_like(g2));
  }
}

// vmap of the sort / take Functions with every output (indices included) and batched
// index arguments, every in_dims combination, against loops.
TEST(Matrix, SortAndTakeAllOutputsAndBatchedIndices) {
  for (bool generated : {false, true}) {
    for (int64_t dim : {1, -1}) {
      const std::string name = std::string(generated ? "Gen" : "Numpy") + " dim " +
                               std::to_string(dim);
      Fn sort_all = Unary([=](const Tensor& x) {
        auto [v, i, ii] = generated ? SortGenVmap::apply(x, dim) : NumpySort::apply(x, dim);
        return TensorList{v, i, ii};
      });
      for (const DimList& dims : Combos(1)) {
        const Tensor xb = Rand(WithBatch({3, 4}, dims[0]), 60);
        Compare("sort " + name + " " + DimsString(dims),
                [&] { return RealVmap(sort_all, dims)({xb}); },
                [&] { return LoopMap(sort_all, dims)({xb}); });
      }
      Fn take = [=](const TensorList& a) {
        return TensorList{generated ? TakeGenVmap::apply(a[0], a[1], a[2], dim)
                                    : NumpyTake::apply(a[0], a[1], a[2], dim)};
      };
      Fn twin = [=](const TensorList& a) { return TensorList{take_along_dim(a[0], a[1], dim)}; };
      const int64_t pdim = dim < 0 ? dim + 2 : dim;
      for (const DimList& dims : Combos(3)) {
        const Tensor x = Rand(WithBatch({3, 4}, dims[0]), 61);
        const Tensor ind = argsort(Rand(WithBatch({3, 4}, dims[1]), 62),
                                   dims[1] && *dims[1] == 0 ? pdim + 1 : pdim);
        const Tensor ind_inv = argsort(ind, dims[1] && *dims[1] == 0 ? pdim + 1 : pdim);
        // ind_inv: the inverse of ind when batched alike; otherwise any index tensor of
        // the right layout (forward does not read it, so only vmap is compared then).
        const bool inverse = dims[2] == dims[1];
        const Tensor inv =
            inverse ? ind_inv
                    : argsort(Rand(WithBatch({3, 4}, dims[2]), 63),
                              dims[2] && *dims[2] == 0 ? pdim + 1 : pdim);
        Compare("take " + name + " " + DimsString(dims),
                [&] { return RealVmap(take, dims)({x, ind, inv}); },
                [&] { return LoopMap(twin, dims)({x, ind, inv}); });
        if (!inverse) continue;
        // And under grad∘vmap (indices batched or not).
        Compare("grad∘vmap take " + name + " " + DimsString(dims),
                [&] {
                  return grad(ScalarFn([&](const TensorList& a) {
                    return Reduce(RealVmap(take, dims)({a[0], ind, inv}));
                  }))({x});
                },
                [&] {
                  return grad(ScalarFn([&](const TensorList& a) {
                    return Reduce(LoopMap(twin, dims)({a[0], ind, inv}));
                  }))({x});
                });
      }
    }
  }
}

}  // namespace
}  // namespace ft::function_db

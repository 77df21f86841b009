// Every example in docs/api.md, compiled and checked: the docs stay true.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "distributed/collectives.h"
#include "distributed/testing.h"
#include "ft.h"
#include "gtest/gtest.h"
#include "interop/eigen.h"
#include "interop/npy.h"
#include "tensor/block_pool.h"
#include "tensor/copy.h"
#include "tests/test_util.h"

namespace ft {
namespace {

TEST(Readme, Taste) {
  ft::Tensor x = ft::linspace(-1.0, 1.0, 5);
  ft::Tensor y = ft::sin(x) * 2.0 + 1.0;
  ft::Tensor m = ft::reshape(ft::arange(6.0), {2, 3});
  ft::Tensor g = ft::matmul(m, ft::transpose(m, 0, 1));
  EXPECT_EQ(x.dtype(), kFloat32);
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_EQ(ft::ToString(ft::sum(g, {1})), "tensor([19., 64.])");
  auto f = [](const ft::Tensor& v) { return ft::sum(ft::sin(v) * v); };
  ft::Tensor per_example = ft::vmap(ft::TensorFn(f))(m);
  EXPECT_TENSOR_NEAR(per_example, ft::sum(ft::sin(m) * m, {1}), 1e-5);
  ft::Tensor grads = ft::vmap(ft::grad(ft::TensorFn(f)))(m);
  EXPECT_TENSOR_NEAR(grads, ft::sin(m) + m * ft::cos(m), 1e-5);
  ft::Tensor hv = ft::jvp(ft::grad(ft::TensorFn(f)), x, ft::ones_like(x)).tangents;
  ft::Tensor H = ft::hessian(f)(x);
  const ft::Tensor second = ft::cos(x) * 2.0 - x * ft::sin(x);   // d2/dv2 of sin(v) v
  EXPECT_TENSOR_NEAR(hv, second, 1e-5);
  int traced = 0;
  auto counted = [f, &traced](const ft::Tensor& v) {
    ++traced;
    return f(v);
  };
  auto fast_hessian = ft::jit(ft::hessian(counted));
  ft::Tensor H2 = fast_hessian(x);
  EXPECT_TENSOR_NEAR(H2, H, 0);
  const ft::Tensor x2 = x * 0.5;
  EXPECT_TENSOR_NEAR(fast_hessian(x2), ft::hessian(f)(x2), 1e-6);
  EXPECT_EQ(traced, 1);  // the second call replayed
  EXPECT_TENSOR_NEAR(H, ft::eye(5) * second, 1e-5);
}

TEST(DocsApi, Tensors) {
  ft::Tensor m = ft::reshape(ft::arange(6.0), {2, 3});
  ft::Tensor mt = ft::transpose(m, 0, 1);
  EXPECT_EQ(mt.sizes(), (IntArrayRef{3, 2}));
  EXPECT_EQ(mt.strides(), (IntArrayRef{1, 3}));
  EXPECT_TRUE(mt.storage().is_same(m.storage()));
  EXPECT_EQ(ft::ToString(m), "tensor([[0., 1., 2.],\n        [3., 4., 5.]])");
  EXPECT_EQ(m.DebugString(),
            "Tensor(shape=[2, 3], dtype=float32, strides=[3, 1], offset=0, dense)");
  EXPECT_TRUE(ft::allclose(mt, ft::tensor({0.0f, 3.0f, 1.0f, 4.0f, 2.0f, 5.0f}, {3, 2})));
}

TEST(DocsApi, Factories) {
  ft::Tensor a = ft::zeros({2, 3});
  ft::Tensor b = ft::full({2}, 7);
  ft::Tensor c = ft::arange(0.0, 1.0, 0.25);
  ft::Tensor d = ft::tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  EXPECT_EQ(a.dtype(), kFloat32);
  EXPECT_EQ(b.dtype(), kInt64);
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_EQ(d.dtype(), kFloat64);
}

TEST(DocsApi, Ops) {
  ft::Tensor x = ft::tensor({1.0f, 2.0f, 3.0f});
  ft::Tensor y = ft::sin(x) * 2.0 + 1.0;
  EXPECT_TENSOR_NEAR(y, ft::tensor({2 * std::sin(1.0f) + 1, 2 * std::sin(2.0f) + 1,
                                    2 * std::sin(3.0f) + 1}),
                     1e-6);
  ft::Tensor s = ft::sum(ft::reshape(ft::arange(6.0), {2, 3}), {1});
  EXPECT_TENSOR_EQ(s, ft::tensor({3.0f, 12.0f}));
  auto [values, indices] = ft::sort(ft::tensor({3.0f, 1.0f, 2.0f}));
  EXPECT_TENSOR_EQ(values, ft::tensor({1.0f, 2.0f, 3.0f}));
  EXPECT_TENSOR_EQ(indices, ft::tensor(std::vector<int64_t>{1, 2, 0}));
  ft::Tensor p = ft::matmul(ft::ones({4, 2, 3}), ft::ones({3, 5}));
  EXPECT_TENSOR_EQ(p, ft::full({4, 2, 5}, 3.0f));
  ft::Tensor w = ft::zeros({3});
  ft::Tensor r = ft::add_(w, x);
  EXPECT_TRUE(r.is_same(w));
  EXPECT_TENSOR_EQ(w, x);
  // The scatter ops' paragraph.
  ft::Tensor m = ft::reshape(ft::arange(6.0), {2, 3});
  EXPECT_TENSOR_EQ(ft::select_scatter(m, ft::zeros({3}), 0, 1),
                   ft::tensor({0.0f, 1.0f, 2.0f, 0.0f, 0.0f, 0.0f}, {2, 3}));
  EXPECT_TENSOR_EQ(m, ft::tensor({0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f}, {2, 3}));
}

TEST(DocsApi, LinearAlgebraForSecondOrderWork) {
  ft::Tensor a = ft::tensor({4.0, 2.0, 2.0, 3.0}, {2, 2});
  ft::Tensor b = ft::tensor({2.0, 1.0});
  ft::Tensor x = ft::linalg_solve(a, b);
  EXPECT_TENSOR_NEAR(x, ft::tensor({0.5, 0.0}), 1e-12);
  ft::Tensor l = ft::cholesky(a);
  EXPECT_TENSOR_NEAR(l, ft::tensor({2.0, 0.0, 1.0, std::sqrt(2.0)}, {2, 2}), 1e-12);
  ft::Tensor z = ft::linalg_solve_triangular(l, ft::reshape(b, {2, 1}), /*upper=*/false);
  EXPECT_TENSOR_NEAR(z, ft::tensor({1.0, 0.0}, {2, 1}), 1e-12);
  ft::Tensor inv = ft::inverse(a);
  EXPECT_TENSOR_NEAR(inv, ft::tensor({0.375, -0.25, -0.25, 0.5}, {2, 2}), 1e-12);
  auto [sign, logabs] = ft::slogdet(a);
  EXPECT_EQ(sign.item<double>(), 1.0);
  EXPECT_NEAR(logabs.item<double>(), std::log(8.0), 1e-12);
  auto nll = [b](const ft::TensorList& p) {
    return (ft::dot(b, ft::linalg_solve(p[0], b)) + ft::logdet(p[0])) * 0.5;
  };
  ft::Tensor g = ft::grad(nll)({a})[0];
  EXPECT_TENSOR_NEAR(g, ft::tensor({0.0625, -0.125, -0.125, 0.25}, {2, 2}), 1e-12);
  ft::Tensor h = ft::hessian(nll)({a})[0];
  ASSERT_EQ(h.sizes(), ft::IntArrayRef(ft::Shape{2, 2, 2, 2}));
  EXPECT_TENSOR_NEAR(h, ft::permute(h, {2, 3, 0, 1}), 1e-12);
  // The errors quoted in the section.
  EXPECT_FT_ERROR(ft::linalg_solve(ft::eye(3), ft::ones({4, 2})),
                  "linalg_solve: size mismatch, got A [3, 3] and B [4, 2]: dim -2 of B (4) "
                  "must equal n (3)");
  EXPECT_FT_ERROR(ft::inverse(ft::stack({ft::eye(2), ft::zeros({2, 2})}, 0)),
                  "inverse: A is singular: pivot 0 of its LU factorization is zero (matrix 1 "
                  "of the batch of A [2, 2, 2]); it has no inverse");
}

TEST(DocsApi, Promotion) {
  ft::Tensor i = ft::tensor(std::vector<int64_t>{1, 2});
  EXPECT_EQ((i * 2).dtype(), kInt64);
  EXPECT_EQ((i * 2.5).dtype(), kFloat32);
  EXPECT_EQ((i / i).dtype(), kFloat32);
  EXPECT_EQ((ft::ones({2}) + ft::scalar_tensor(1.0, ft::kFloat64)).dtype(), kFloat32);
}

TEST(DocsApi, FloatToIntegerConversion) {
  const ft::Tensor i =
      ft::to(ft::tensor(std::vector<double>{2.7, -2.7, NAN, INFINITY, 1e19}), ft::kInt64);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{2, -2, kMin, kMin, kMin}));
}

TEST(DocsApi, Randomness) {
  ft::Generator g(42);
  ft::Tensor a = ft::randn_like(ft::zeros({3}), &g);
  g.manual_seed(42);
  ft::Tensor b = ft::randn_like(ft::zeros({3}), &g);
  EXPECT_TENSOR_EQ(a, b);
}

TEST(DocsApi, Memory) {
  if (!internal::kRecycleMemory) GTEST_SKIP() << "AddressSanitizer builds cache nothing";
  ft::ReleaseCachedMemory();
  ft::Tensor big = ft::zeros({1 << 20});
  big = ft::Tensor();
  ft::CachedMemoryStats s = ft::GetCachedMemoryStats();
  EXPECT_EQ(s.held_bytes, int64_t{4} << 20);
  ft::Tensor again = ft::ones({1 << 20});
  EXPECT_EQ(ft::GetCachedMemoryStats().hits, s.hits + 1);
  again = ft::Tensor();
  ft::ReleaseCachedMemory();
  EXPECT_EQ(ft::GetCachedMemoryStats().held_bytes, 0);
}

TEST(DocsApi, Threads) {
  const int saved = ft::GetNumThreads();
  ft::SetNumThreads(1);
  ft::Tensor one = ft::exp(ft::linspace(0.0, 1.0, 1 << 20));
  ft::SetNumThreads(2);
  ft::Tensor two = ft::exp(ft::linspace(0.0, 1.0, 1 << 20));
  EXPECT_TRUE(testing::TensorEqual(one, two));
  EXPECT_EQ(ft::GetNumThreads(), 2);
  ft::SetNumThreads(saved);
}

TEST(DocsApi, Errors) {
  std::string message;
  try {
    ft::matmul(ft::ones({2, 3}), ft::ones({2, 3}));
  } catch (const ft::Error& e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind("matmul: size mismatch, got [2, 3] @ [2, 3]: dim -1 of the first (3) "
                          "must equal dim -2 of the second (2)",
                          0),
            0u);
}

TEST(DocsApi, Vmap) {
  auto f = [](const ft::Tensor& x) { return ft::sum(ft::sin(x) * x); };
  ft::Tensor xs = ft::rand_like(ft::zeros({64, 5}));
  ft::Tensor ys = ft::vmap(ft::TensorFn(f))(xs);
  EXPECT_EQ(ys.sizes(), (IntArrayRef{64}));
  EXPECT_TENSOR_NEAR(ys, ft::sum(ft::sin(xs) * xs, {1}), 1e-5);

  auto g = ft::vmap(ft::TensorListFn([](const ft::TensorList& a) {
                      return ft::TensorList{ft::matmul(a[1], a[0])};
                    }),
                    {0, std::nullopt});
  ft::Tensor out = g({xs, ft::ones({3, 5})})[0];
  EXPECT_EQ(out.sizes(), (IntArrayRef{64, 3}));
  EXPECT_TENSOR_NEAR(out, ft::matmul(xs, ft::transpose(ft::ones({3, 5}), 0, 1)), 1e-5);

  auto mul =
      ft::TensorListFn([](const ft::TensorList& a) { return ft::TensorList{a[0] * a[1]}; });
  auto outer = ft::vmap(ft::vmap(mul, {0, std::nullopt}), {std::nullopt, 0});
  EXPECT_TENSOR_EQ(outer({ft::tensor({1.0, 2.0, 3.0}), ft::tensor({10.0, 20.0})})[0],
                   ft::tensor({10.0, 20.0, 30.0, 20.0, 40.0, 60.0}, {2, 3}));

  auto noisy = ft::TensorFn([](const ft::Tensor& x) { return x + ft::randn_like(x); });
  ft::manual_seed(7);
  ft::Tensor a = ft::vmap(noisy, 0, 0, ft::Randomness::kDifferent)(xs);
  ft::manual_seed(7);
  ft::Tensor b = ft::vmap(noisy, 0, 0, ft::Randomness::kDifferent, /*chunk_size=*/16)(xs);
  EXPECT_TENSOR_EQ(a, b);
  EXPECT_FALSE(ft::allclose(ft::select(a - xs, 0, 0), ft::select(a - xs, 0, 1)));
}

// The docs' user-op example: an elementwise kernel with its own batching rule.
ft::Tensor MyKernel(const ft::Tensor& x) { return ft::kernels::clone(x); }
ft::Tensor my_op(const ft::Tensor& x) { return ft::Call<&MyKernel>(x); }

TEST(DocsApi, UserBatchRule) {
  ft::RegisterAllOps();
  static const bool registered = [] {
    ft::RegisterOp<&MyKernel>(ft::OpRegistry::Global(), "docs_my_op", {"self"});
    ft::SetBatchRule(ft::OpFor<&MyKernel>(), [](const ft::VmapContext& ctx, ft::BatchedArgs& a) {
      return ft::BatchedResult{{ft::Value(my_op(a.tensor(0)))}, {a.bdim(0)}};
    });
    return true;
  }();
  (void)registered;
  ft::SetVmapFallbackMode(ft::VmapFallbackMode::kError);  // proves the rule, not the loop, ran
  ft::Tensor x = ft::rand_like(ft::zeros({4, 3}));
  EXPECT_TENSOR_EQ(ft::vmap(ft::TensorFn(&my_op), 1)(x), ft::transpose(x, 0, 1));
  ft::SetVmapFallbackMode(ft::VmapFallbackMode::kWarn);
}

TEST(DocsApi, GradAndVjp) {
  ft::Tensor x = ft::tensor({0.3, -1.2, 2.0}), w = ft::tensor({1.5, 0.5, -2.0});
  auto f = [](const ft::TensorList& a) { return ft::sum(ft::sin(a[0]) * a[1]); };
  ft::TensorList g = ft::grad(ft::ScalarFn(f), {0, 1})({x, w});
  EXPECT_TENSOR_NEAR(g[0], ft::cos(x) * w, 1e-15);
  EXPECT_TENSOR_NEAR(g[1], ft::sin(x), 1e-15);

  auto x4 = ft::TensorFn([](const ft::Tensor& t) { return t * t * t * t; });
  EXPECT_NEAR(ft::grad(ft::grad(x4))(ft::scalar_tensor(1.5, ft::kFloat64)).item<double>(), 27.0,
              1e-12);

  auto loss = ft::ScalarFn([](const ft::TensorList& a) {
    return ft::square(ft::sum(a[1] * a[0]) - a[2]);
  });
  ft::Tensor wv = ft::tensor({1.0, 2.0});
  ft::Tensor xs = ft::tensor({1.0, 0.0, 0.0, 1.0, 1.0, 1.0}, {3, 2});
  ft::Tensor ts = ft::tensor({0.0, 1.0, 2.0});
  ft::Tensor per_example = ft::vmap(ft::grad(loss, {0}), {std::nullopt, 0, 0})({wv, xs, ts})[0];
  EXPECT_TENSOR_NEAR(per_example, ft::tensor({2.0, 0.0, 0.0, 2.0, 2.0, 2.0}, {3, 2}), 1e-15);

  ft::VjpResult r = ft::vjp(ft::TensorListFn([](const ft::TensorList& a) {
                              return ft::TensorList{ft::tanh(a[0])};
                            }),
                            {x});
  ft::Tensor gx = r.vjp_fn({ft::ones_like(x)})[0];
  EXPECT_TENSOR_NEAR(gx, 1.0 - ft::square(ft::tanh(x)), 1e-15);

  ft::Tensor W = ft::reshape(ft::linspace(-1.0, 1.0, 9, ft::kFloat64), {3, 3});
  auto f2 = ft::TensorFnOfList([](const ft::TensorList& a) {
    return ft::sin(ft::matmul(a[1], a[0])) + a[0];
  });
  ft::Tensor jac = ft::jacrev(f2)({x, W})[0];
  EXPECT_TENSOR_NEAR(jac, ft::unsqueeze(ft::cos(ft::matmul(W, x)), 1) * W + ft::eye(3, ft::kFloat64),
                     1e-14);
}

TEST(DocsApi, InPlaceUnderGrad) {
  ft::Tensor x = ft::tensor({0.3, -1.2, 2.0});
  auto f = ft::TensorFn([](const ft::Tensor& x) {
    ft::Tensor y = x * 2.0;
    ft::add_(y, 1.0);
    ft::mul_(y, x);
    return ft::sum(y);
  });
  EXPECT_TENSOR_NEAR(ft::grad(f)(x), x * 4.0 + 1.0, 1e-15);
}

TEST(DocsApi, ForwardMode) {
  ft::Tensor x = ft::tensor({0.3, -1.2, 2.0}), w = ft::tensor({1.5, 0.5, -2.0});
  ft::Tensor v = ft::tensor({1.0, -1.0, 0.5});
  auto g = [](const ft::TensorList& a) { return ft::TensorList{ft::sin(a[0]) * a[1]}; };
  ft::JvpResult r = ft::jvp(g, {x, w}, {ft::ones_like(x), ft::zeros_like(w)});
  EXPECT_TENSOR_NEAR(r.outputs[0], ft::sin(x) * w, 1e-15);
  EXPECT_TENSOR_NEAR(r.tangents[0], ft::cos(x) * w, 1e-15);

  ft::Tensor W = ft::reshape(ft::linspace(-1.0, 1.0, 9, ft::kFloat64), {3, 3});
  auto f2 = ft::TensorFnOfList([](const ft::TensorList& a) {
    return ft::sin(ft::matmul(a[1], a[0])) + a[0];
  });
  ft::Tensor jf = ft::jacfwd(f2)({x, W})[0];
  EXPECT_TENSOR_NEAR(jf, ft::jacrev(f2)({x, W})[0], 1e-14);
  auto cube =
      ft::TensorFnOfList([](const ft::TensorList& a) { return ft::sum(a[0] * a[0] * a[0]); });
  ft::Tensor h = ft::hessian(cube)({x})[0];
  EXPECT_TENSOR_NEAR(h, ft::unsqueeze(x * 6.0, 1) * ft::eye(3, ft::kFloat64), 1e-14);
  auto grad_cube = [cube](const ft::TensorList& a) { return ft::grad(ft::ScalarFn(cube))(a); };
  ft::Tensor hv = ft::jvp(grad_cube, {x}, {v}).tangents[0];
  EXPECT_TENSOR_NEAR(hv, x * 6.0 * v, 1e-14);
}

struct Cube : ft::Function<Cube> {
  static constexpr const char* name = "Cube";
  static constexpr bool generate_vmap_rule = true;
  static ft::Tensor forward(const ft::Tensor& x) { return x * x * x; }
  static void setup_context(ft::FunctionCtx& ctx, const std::tuple<ft::Tensor>& in,
                            const ft::Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
    ctx.save_for_forward({std::get<0>(in)});
  }
  static ft::TensorList backward(ft::FunctionCtx& ctx, const ft::TensorList& g) {
    const ft::Tensor& x = ctx.saved_tensors()[0];
    return {g[0] * 3.0 * x * x};
  }
  static ft::TensorList jvp(ft::FunctionCtx& ctx, const ft::TensorList& t) {
    const ft::Tensor& x = ctx.saved_tensors()[0];
    return {t[0] * 3.0 * x * x};
  }
};

TEST(DocsApi, CustomFunctions) {
  ft::Tensor x = ft::tensor({0.5, -1.0, 2.0});
  ft::Tensor xs = ft::reshape(ft::linspace(-1.0, 1.0, 6, ft::kFloat64), {2, 3});
  ft::Tensor y = Cube::apply(x);
  EXPECT_TENSOR_NEAR(y, x * x * x, 1e-15);
  auto total = ft::TensorFn([](const ft::Tensor& t) { return ft::sum(Cube::apply(t)); });
  ft::Tensor per_example = ft::vmap(ft::grad(total))(xs);
  EXPECT_TENSOR_NEAR(per_example, xs * xs * 3.0, 1e-15);
  ft::Tensor second = ft::grad(ft::TensorFn([total](const ft::Tensor& t) {
    return ft::sum(ft::grad(total)(t));
  }))(x);
  EXPECT_TENSOR_NEAR(second, x * 6.0, 1e-15);
}

}  // namespace (docs: trees)

struct DocsMlp {
  ft::Tensor w1, b1, w2, b2;
};
FT_TREE(DocsMlp, w1, b1, w2, b2);

struct Doubling {
  ft::Tensor value, steps;
};
FT_TREE(Doubling, value, steps);

namespace {

TEST(DocsApi, ControlFlowOverTrees) {
  Doubling end = ft::while_loop([](const Doubling& d) { return ft::le(d.value, 10.0); },
                                [](const Doubling& d) {
                                  return Doubling{d.value * 2.0, d.steps + 1.0};
                                },
                                Doubling{ft::full({}, 0.75, ft::kFloat64),
                                         ft::zeros({}, ft::kFloat64)});
  EXPECT_EQ(end.value.item<double>(), 12.0);
  EXPECT_EQ(end.steps.item<double>(), 4.0);
}

ft::Tensor DocsLoss(const DocsMlp& p, const ft::Tensor& x, const ft::Tensor& y) {
  ft::Tensor h = ft::tanh(ft::matmul(x, p.w1) + p.b1);
  ft::Tensor d = ft::matmul(h, p.w2) + p.b2 - y;
  return ft::sum(d * d);
}

TEST(DocsApi, TreesAndOptimizers) {
  ft::Generator gen(3);
  auto r = [&gen](ft::Shape s) { return ft::randn_like(ft::zeros(s, ft::kFloat64), &gen); };
  DocsMlp params{r({3, 4}), r({4}), r({4, 2}), r({2})};
  ft::Tensor x = r({3}), y = r({2}), xs = r({5, 3}), ys = r({5, 2});
  DocsMlp g = ft::grad(&DocsLoss)(params, x, y);
  auto [gp, gx] = ft::grad(&DocsLoss, ft::argnums<0, 1>)(params, x, y);
  DocsMlp per_example = ft::vmap(ft::grad(&DocsLoss), {std::nullopt, 0, 0})(params, xs, ys);
  DocsMlp half = ft::tree_map([](const ft::Tensor& t) { return t * 0.5; }, g);
  EXPECT_TENSOR_NEAR(gp.w2, g.w2, 0);
  EXPECT_EQ(gx.sizes(), x.sizes());
  EXPECT_EQ(per_example.w1.sizes(), (ft::Shape{5, 3, 4}));
  EXPECT_TENSOR_NEAR(half.b2, g.b2 * 0.5, 0);
  const double before = DocsLoss(params, x, y).item<double>();
  ft::optim::Adam opt{.lr = 1e-2};
  auto state = opt.init(params);
  for (int step = 0; step < 100; ++step) {
    auto [updates, next] = opt.update(ft::grad(&DocsLoss)(params, x, y), state, params);
    params = ft::optim::apply_updates(params, updates);
    state = next;
  }
  EXPECT_LT(DocsLoss(params, x, y).item<double>(), before * 0.5);
}

// Sum to a scalar, broadcast to `like`'s shape: backward needs two shapes.
struct SumAndExpand : ft::Function<SumAndExpand> {
  static ft::Tensor forward(const ft::Tensor& x, const ft::Tensor& like) {
    return ft::expand(ft::sum(x), like.sizes());
  }
  static void setup_context(ft::FunctionCtx& ctx, const std::tuple<ft::Tensor, ft::Tensor>& in,
                            const ft::Tensor& out) {
    const ft::Tensor& x = std::get<0>(in);
    ctx.state<ft::Shape>("in_shape") = ft::Shape(x.sizes().begin(), x.sizes().end());
    ctx.state<ft::Shape>("out_shape") = ft::Shape(out.sizes().begin(), out.sizes().end());
    ctx.set_materialize_tangents(false);  // `like` never has a tangent worth zeros
  }
  static ft::TensorList backward(ft::FunctionCtx& ctx, const ft::TensorList& g) {
    return {ft::expand(ft::sum(g[0]), ctx.state<ft::Shape>("in_shape")), ft::Tensor()};
  }
  static ft::TensorList jvp(ft::FunctionCtx& ctx, const ft::TensorList& t) {
    if (!t[0].defined()) return {ft::Tensor()};                  // x does not vary
    return {ft::expand(ft::sum(t[0]), ctx.state<ft::Shape>("out_shape"))};
  }
};

TEST(DocsApi, CustomFunctionCtxNamedStateAndLazyTangents) {
  ft::Tensor x = ft::reshape(ft::linspace(-1.0, 1.0, 6, ft::kFloat64), {2, 3});
  ft::Tensor like = ft::zeros({4}, ft::kFloat64), w = ft::tensor({1.0, 2.0, 3.0, 4.0});
  ft::Tensor g = ft::grad(ft::TensorFn([&](const ft::Tensor& t) {
    return ft::sum(SumAndExpand::apply(t, like) * w);
  }))(x);
  EXPECT_TENSOR_NEAR(g, ft::full({2, 3}, 10.0, ft::kFloat64), 0);
  // Only `like` varies: jvp sees an undefined tangent for x, and the output's tangent is 0.
  ft::JvpResult r = ft::jvp(
      [&x](const ft::TensorList& a) { return ft::TensorList{SumAndExpand::apply(x, a[0])}; },
      {like}, {ft::ones_like(like)});
  EXPECT_TENSOR_NEAR(r.tangents[0], ft::zeros({4}, ft::kFloat64), 0);
  ft::JvpResult rx = ft::jvp(
      [&like](const ft::TensorList& a) { return ft::TensorList{SumAndExpand::apply(a[0], like)}; },
      {x}, {ft::ones_like(x)});
  EXPECT_TENSOR_NEAR(rx.tangents[0], ft::full({4}, 6.0, ft::kFloat64), 0);
}

TEST(DocsApi, Jit) {
  ft::Generator gen(5);
  ft::Tensor w = ft::randn_like(ft::zeros({16, 16}), &gen);
  ft::Tensor x = ft::randn_like(ft::zeros({16}), &gen), y = ft::randn_like(x, &gen);
  ft::JitFunction jac = ft::jit(ft::jacrev([&w](const ft::TensorList& a) {
    return ft::sin(ft::matmul(w, a[0])) + a[0];
  }));
  ft::Tensor j1 = jac({x})[0];
  ft::Tensor j2 = jac({y})[0];
  EXPECT_EQ(jac.stats().replays, 1);
  const std::string listing = jac.program({y})->DebugString();
  EXPECT_NE(listing.find("matmul("), std::string::npos) << listing;
  EXPECT_EQ(jac.program({y})->num_steps(), 4) << listing;
  EXPECT_TENSOR_NEAR(j1, ft::unsqueeze(ft::cos(ft::matmul(w, x)), 1) * w + ft::eye(16), 1e-5);
  EXPECT_TENSOR_NEAR(j2, ft::unsqueeze(ft::cos(ft::matmul(w, y)), 1) * w + ft::eye(16), 1e-5);

  ft::ScalarFn loss = [](const ft::TensorList& a) { return ft::sum(ft::square(a[0] * a[1])); };
  ft::JitFunction per_sample = ft::jit([&](const ft::TensorList& a) {
    return ft::vmap(ft::grad(loss, {0}), {std::nullopt, 0})(a);   // weights, batch
  });
  const ft::Tensor batch = ft::randn_like(ft::zeros({4, 16}), &gen);
  per_sample({x, batch});
  EXPECT_TENSOR_NEAR(per_sample({y, batch})[0], 2.0 * y * ft::square(batch), 1e-5);
  EXPECT_EQ(per_sample.stats().replays, 1);
}

TEST(DocsApi, Functionalize) {
  ft::Generator gen(3);
  const ft::Tensor vs = ft::randn_like(ft::zeros({4, 3}), &gen);
  auto fill = ft::TensorFn([](const ft::Tensor& v) {
    ft::Tensor m = ft::zeros({3, 3});
    ft::copy_(ft::diagonal(m), v);  // a write through a view
    return m;
  });
  ft::Tensor diags = ft::vmap(ft::functionalize(fill))(vs);
  for (int64_t b = 0; b < 4; ++b) {
    EXPECT_TENSOR_EQ(ft::select(diags, 0, b), ft::reshape(ft::select(vs, 0, b), {3, 1}) *
                                                  ft::eye(3));
  }

  auto loss = ft::ScalarFn([](const ft::TensorList& a) {
    ft::Tensor y = a[0] * 2.0;
    ft::mul_(ft::select(y, 0, 1), 3.0);  // y[1] *= 3
    return ft::sum(y * y);
  });
  const ft::Tensor x = ft::tensor({1.0, 2.0, 3.0});
  ft::Tensor g = ft::grad(ft::functionalize(loss))({x})[0];
  EXPECT_TENSOR_NEAR(g, ft::tensor({8.0, 144.0, 24.0}), 1e-12);  // d/dx of 4x0^2 + 36x1^2 + 4x2^2

  auto chain = [](const ft::TensorList& a) {
    ft::Tensor buf = ft::zeros({a[0].numel()});
    ft::add_(buf, a[0]);
    ft::mul_(buf, 2.0);
    ft::sub_(buf, 1.0);
    return ft::TensorList{buf};
  };
  ft::JitFunction fast = ft::jit(ft::functionalize(ft::TensorListFn(chain)));
  const ft::Tensor z = ft::randn_like(ft::zeros({8}), &gen);
  fast({z});
  EXPECT_TENSOR_EQ(fast({z})[0], z * 2.0 - 1.0);
  EXPECT_NE(fast.program({z})->DebugString().find("fused["), std::string::npos);
}

TEST(DocsApi, GradMode) {
  auto f = ft::TensorFn([](const ft::Tensor& x) {
    ft::Tensor c;
    {
      ft::NoGradGuard no_grad;
      c = x * x;
    }
    return x * x - c;
  });
  EXPECT_NEAR(ft::grad(f)(ft::scalar_tensor(1.5, ft::kFloat64)).item<double>(), 3.0, 1e-15);
}

class Logger : public ft::Interpreter {
 public:
  explicit Logger(std::vector<std::string>* log)
      : Interpreter(ft::TransformType::kFunctionalize, ft::LayerStack::NewLevel()), log_(log) {}
  ft::ValueList Process(const ft::Operator& op, ft::ValueList& args) override {
    log_->push_back(op.name());
    ft::LowerGuard lower(this);
    return ft::DispatchBoxed(op, args);
  }

 private:
  std::vector<std::string>* log_;
};

TEST(DocsApi, Interpreter) {
  std::vector<std::string> log;
  Logger logger(&log);
  {
    ft::InterpreterScope scope(&logger);
    ft::exp(ft::sin(ft::ones({2})));
  }
  EXPECT_EQ(log, (std::vector<std::string>{"sin", "exp"}));
  EXPECT_TRUE(ft::LayerStack::empty());
}

TEST(DocsApi, InteropEigen) {
  ft::Tensor t = ft::zeros({2, 3});
  auto m = ft::MapRowMajor<float>(t);
  m(1, 2) = 5;
  EXPECT_EQ(ft::select(ft::select(t, 0, 1), 0, 2).item<float>(), 5);
  ft::Tensor tt = ft::transpose(t, 0, 1);
  auto mt = ft::MapColMajor<float>(tt);
  EXPECT_EQ(mt(2, 1), 5);
  Eigen::MatrixXd e = Eigen::MatrixXd::Identity(3, 3);
  ft::Tensor borrowed = ft::BorrowEigen(e);
  EXPECT_EQ(borrowed.strides(), (IntArrayRef{1, 3}));
  ft::mul_(borrowed, 2.0);
  EXPECT_EQ(e(0, 0), 2);
  ft::Tensor owned = ft::CopyFromEigen(e);
  EXPECT_TRUE(owned.is_contiguous());
  e(0, 0) = 7;
  EXPECT_EQ(owned.to_vector<double>()[0], 2);
  Eigen::MatrixXf back = ft::ToEigen<Eigen::MatrixXf>(t);
  EXPECT_EQ(back(1, 2), 5);
  EXPECT_FT_ERROR(ft::MapRowMajor<float>(tt),
                  "MapRowMajor: cannot map a float32 tensor of sizes [3, 2] and strides [1, 3] "
                  "as a row-major matrix: its rows are not contiguous (stride(1) must be 1); ");
}

TEST(DocsApi, InteropNpy) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/w.npy";
  ft::Tensor w = ft::reshape(ft::arange(6.0), {2, 3});
  ft::SaveNpy(path, ft::transpose(w, 0, 1));
  ft::Tensor back = ft::LoadNpy(path);
  EXPECT_EQ(back.dtype(), kFloat32);
  EXPECT_TENSOR_EQ(back, ft::tensor({0.0f, 3.0f, 1.0f, 4.0f, 2.0f, 5.0f}, {3, 2}));
}

TEST(DocsApi, Interpolate) {
  ft::Tensor x = ft::ones({8, 3, 28, 28});
  ft::Tensor up = ft::interpolate(x, {56});
  ft::Tensor bl = ft::interpolate(x, {}, {1.5}, "bilinear", /*align_corners=*/true);
  EXPECT_EQ(up.sizes(), IntArrayRef({8, 3, 56, 56}));
  EXPECT_EQ(bl.sizes(), IntArrayRef({8, 3, 42, 42}));
  EXPECT_TENSOR_NEAR(bl, ft::ones({8, 3, 42, 42}), 1e-6);
  // The header's example (ops/conv.h).
  ft::Tensor h = ft::ones({8, 3, 14, 14});
  EXPECT_EQ(ft::interpolate(h, {28}).sizes(), IntArrayRef({8, 3, 28, 28}));
  EXPECT_EQ(ft::interpolate(h, {}, {1.5}, "bilinear", true).sizes(),
            IntArrayRef({8, 3, 21, 21}));
}

TEST(DocsApi, AdvancedIndexing) {
  Tensor x = ft::reshape(ft::arange(0, 12, 1, ft::kFloat64), {3, 4});
  EXPECT_TENSOR_EQ(ft::index(x, {ft::tensor<int64_t>({2, -3})}),
                   ft::tensor({8.0, 9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 3.0}, {2, 4}));
  EXPECT_TENSOR_EQ(ft::index(x, {std::nullopt, ft::tensor<int64_t>({1, 1})}),
                   ft::tensor({1.0, 1.0, 5.0, 5.0, 9.0, 9.0}, {3, 2}));
  EXPECT_TENSOR_EQ(ft::index(x, {ft::tensor<int64_t>({0, 2}), ft::tensor<int64_t>({3, 0})}),
                   ft::tensor({3.0, 8.0}));
  EXPECT_TENSOR_EQ(ft::index_put(ft::zeros({3}, ft::kFloat64), {ft::tensor<int64_t>({0, 2, 0})},
                                 ft::tensor({1.0, 2.0, 3.0}), /*accumulate=*/true),
                   ft::tensor({4.0, 0.0, 2.0}));
  EXPECT_TENSOR_EQ(ft::gather_nd(x, ft::tensor<int64_t>({0, 1, 2, 3}, {2, 2})),
                   ft::tensor({1.0, 11.0}));
  // The header's example (ops/nn_indexing.h).
  EXPECT_TENSOR_EQ(ft::index_put(ft::zeros({3}), {ft::tensor<int64_t>({0, 2, 0})},
                                 ft::tensor({1.0f, 2.0f, 3.0f}), true),
                   ft::tensor({4.0f, 0.0f, 2.0f}));
}

// docs/api.md, "Control flow and checkpoint".
TEST(ApiControlFlow, HostReadsAndPerExampleBranchesAndLoops) {
  const ft::Tensor x = ft::tensor({0.5, -0.25, 1.0});
  auto f = [](const ft::Tensor& v) {
    return ft::sum(v).item<double>() > 0 ? ft::sum(v * v) : ft::sum(v * v * v);
  };
  ft::Tensor g = ft::grad(ft::TensorFn(f))(x);   // 2x where sum(x) > 0, else 3x^2
  EXPECT_TENSOR_NEAR(g, x * 2.0, 1e-15);

  const ft::Tensor xs = ft::tensor({0.5, 0.9, 0.1, 0.2, 1.0, 2.0, 0.3, 0.1}, {2, 4});
  auto loss = [](const ft::TensorList& a) {
    ft::TensorList out = ft::cond(
        ft::gt(ft::sum(a[0]), 2.0),
        [](const ft::TensorList& b) { return ft::TensorList{ft::sqrt(b[0])}; },
        [](const ft::TensorList& b) { return ft::TensorList{b[0] * b[0]}; }, {a[0]});
    return ft::sum(out[0]);
  };
  ft::Tensor per_example = ft::vmap(ft::grad(ft::ScalarFn(loss)))({xs})[0];
  EXPECT_TENSOR_NEAR(ft::select(per_example, 0, 0), ft::select(xs, 0, 0) * 2.0, 1e-15);
  EXPECT_TENSOR_NEAR(ft::select(per_example, 0, 1), 0.5 / ft::sqrt(ft::select(xs, 0, 1)),
                     1e-15);  // row 0 sums to 1.7 (x^2), row 1 to 3.4 (sqrt)

  auto doubling = [](const ft::TensorList& a) {
    ft::TensorList r = ft::while_loop(
        [](const ft::TensorList& c) { return ft::le(ft::sum(c[0]), 10.0); },
        [](const ft::TensorList& c) { return ft::TensorList{c[0] * 2.0}; }, {a[0]});
    return ft::sum(r[0] * a[0]);
  };
  ft::Tensor g2 = ft::vmap(ft::grad(ft::ScalarFn(doubling)))({xs})[0];   // 2^(k+1) x per row
  // Row 0 sums to 1.7: 3 doublings to 13.6; row 1 sums to 3.4: 2 doublings to 13.6.
  EXPECT_TENSOR_NEAR(ft::select(g2, 0, 0), ft::select(xs, 0, 0) * 16.0, 1e-15);
  EXPECT_TENSOR_NEAR(ft::select(g2, 0, 1), ft::select(xs, 0, 1) * 8.0, 1e-15);

  const ft::Tensor w = ft::eye(3, ft::kFloat64) * 0.5, u = ft::ones({2, 3}, ft::kFloat64);
  const ft::Tensor h0 = ft::zeros({3}, ft::kFloat64), seq = ft::ones({4, 2}, ft::kFloat64);
  ft::ScanResult r = ft::scan(
      [&](const ft::TensorList& h, const ft::TensorList& x) {
        ft::Tensor next = ft::tanh(ft::matmul(h[0], w) + ft::matmul(x[0], u));
        return std::pair(ft::TensorList{next}, ft::TensorList{ft::sum(next)});
      },
      {h0}, {seq});
  EXPECT_EQ(r.ys[0].sizes(), ft::IntArrayRef({4}));
  EXPECT_TENSOR_NEAR(ft::select(r.ys[0], 0, 0), ft::scalar_tensor(3 * std::tanh(2.0), ft::kFloat64),
                     1e-15);

  const ft::Tensor xm = ft::tensor({0.3, -0.2, 0.1}, {1, 3});
  ft::TensorListFn block = ft::checkpoint([&](const ft::TensorList& a) {
    return ft::TensorList{ft::tanh(ft::matmul(a[0], w))};   // w captured: gets its gradient too
  });
  ft::Tensor gx = ft::grad(ft::ScalarFn([&](const ft::TensorList& a) {
    return ft::sum(block(block(a))[0]);
  }))({xm})[0];
  ft::Tensor plain = ft::grad(ft::ScalarFn([&](const ft::TensorList& a) {
    ft::Tensor h = ft::tanh(ft::matmul(ft::tanh(ft::matmul(a[0], w)), w));
    return ft::sum(h);
  }))({xm})[0];
  EXPECT_TENSOR_NEAR(gx, plain, 1e-15);
}

}  // namespace
}  // namespace ft

namespace ft {
namespace {

TEST(DocsApi, NamedAxesAndCollectives) {
  const ft::Tensor xs = ft::reshape(ft::arange(1.0, 7.0), {3, 2});
  auto normalize = [](const ft::Tensor& x) { return x / ft::psum(ft::sum(x), "batch"); };
  ft::Tensor ys = ft::vmap(ft::TensorFn(normalize), ft::VmapOptions{.axis_name = "batch"})(xs);
  EXPECT_TENSOR_NEAR(ys, xs / 21.0, 1e-6);

  auto loss = [](const ft::Tensor& w, const ft::Tensor& x) {
    ft::Tensor r = ft::sum(w * x) - 1.0;
    return r * r;
  };
  auto mean_grad = ft::vmap(ft::grad(ft::ScalarFn([&](const ft::TensorList& a) {
                              return ft::pmean(loss(a[0], a[1]), "batch");
                            })),
                            ft::VmapOptions{.in_dims = {std::nullopt, 0}, .axis_name = "batch"});
  const ft::Tensor w = ft::tensor({0.5f, -0.25f});
  ft::Tensor g = mean_grad({w, xs})[0];
  // Closed form: mean over examples of 2 (w.x - 1) x.
  ft::Tensor r = ft::sum(xs * w, {1}, true) - 1.0;
  EXPECT_TENSOR_NEAR(g, ft::expand(ft::mean(2.0 * r * xs, {0}, true), {3, 2}), 1e-5);

  // The process-group snippet, on one process (a thread of this test).
  dist::testing::RunOnThreads(1, [&](dist::ProcessGroup& group) {
    auto binding = ft::dist::bind_axis(
        "dp", std::shared_ptr<dist::ProcessGroup>(&group, [](dist::ProcessGroup*) {}));
    const ft::Tensor b = ft::zeros({});
    auto local_loss = [&](const ft::TensorList& p, const ft::Tensor& x, const ft::Tensor& y) {
      return ft::mean(ft::square(ft::sum(x * p[0], {1}) + p[1] - y));
    };
    const ft::Tensor y_shard = ft::ones({3});
    ft::TensorList grads = ft::grad(ft::ScalarFn([&](const ft::TensorList& p) {
      return ft::pmean(local_loss(p, xs, y_shard), "dp");
    }), {0, 1})({w, b});
    ft::TensorList local = ft::grad(ft::ScalarFn([&](const ft::TensorList& p) {
      return local_loss(p, xs, y_shard);
    }), {0, 1})({w, b});
    EXPECT_TENSOR_NEAR(grads[0], local[0], 1e-6);
    EXPECT_TENSOR_NEAR(grads[1], local[1], 1e-6);
  });
}

}  // namespace
}  // namespace ft

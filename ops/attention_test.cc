// addmm, baddbmm, einsum and scaled_dot_product_attention: values, vjps and jvps against
// PyTorch fixtures (tests/fixtures/torch/attention, written by tools/torch_fixtures/
// attention.py) and against closed forms in other ft ops (torch 1.13 has no
// scaled_dot_product_attention); every argument mode, float32 and float64, size-0 and size-1
// dims, non-contiguous inputs, second order, and every error.
#include "ops/attention.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interop/npy.h"
#include "interpreters/grad/grad.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::NonContiguousCopy;

Tensor Fixture(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string root = srcdir != nullptr
                               ? std::string(srcdir) + "/" + (workspace ? workspace : "ft") + "/"
                               : "";
  return LoadNpy(root + "tests/fixtures/torch/attention/" + name + ".npy");
}

// Uniform in [-1, 1), float64 (or dtype), reproducible from `seed`.
Tensor Uniform(IntArrayRef shape, uint64_t seed, DType dtype = kFloat64) {
  Generator g(seed);
  return to(rand_like(zeros(shape, kFloat64), &g) * 2.0 - 1.0, dtype);
}

// A torch fixture case: inputs in0.., output, cotangent and vjp g0.., tangents t0.. and jvp.
struct Case {
  TensorList inputs, grads, tangents;
  Tensor out, ct, jv;
};

Case Load(const std::string& name, int n) {
  Case c;
  for (int i = 0; i < n; ++i) {
    const std::string k = std::to_string(i);
    c.inputs.push_back(Fixture(name + ".in" + k));
    c.grads.push_back(Fixture(name + ".g" + k));
    c.tangents.push_back(Fixture(name + ".t" + k));
  }
  c.out = Fixture(name + ".out");
  c.ct = Fixture(name + ".ct");
  c.jv = Fixture(name + ".jv");
  return c;
}

// CheckCase: f's value, vjp and jvp against the fixture.
void CheckCase(const std::string& name, int n, const TensorListFn& f) {
  SCOPED_TRACE(name);
  const Case c = Load(name, n);
  const VjpResult r = vjp(f, c.inputs);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_TENSOR_NEAR(r.outputs[0], c.out, 1e-12);
  const TensorList g = r.vjp_fn({c.ct});
  ASSERT_EQ(g.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) EXPECT_TENSOR_NEAR(g[i], c.grads[i], 1e-12);
  const JvpResult j = jvp(f, c.inputs, c.tangents);
  EXPECT_TENSOR_NEAR(j.tangents[0], c.jv, 1e-12);
}

TensorListFn Addmm(Scalar beta, Scalar alpha) {
  return [=](const TensorList& a) { return TensorList{addmm(a[0], a[1], a[2], beta, alpha)}; };
}
TensorListFn Baddbmm(Scalar beta, Scalar alpha) {
  return [=](const TensorList& a) { return TensorList{baddbmm(a[0], a[1], a[2], beta, alpha)}; };
}

// ---- addmm / baddbmm ----

TEST(Addmm, MatchesTorch) {
  CheckCase("addmm_default", 3, Addmm(1, 1));
  CheckCase("addmm_scaled", 3, Addmm(0.5, -2.0));
  CheckCase("addmm_beta0", 3, Addmm(0.0, 1.5));
  CheckCase("baddbmm_default", 3, Baddbmm(1, 1));
  CheckCase("baddbmm_scaled", 3, Baddbmm(2.0, 0.3));
}

TEST(Addmm, ClosedFormFloat32NonContiguous) {
  const Tensor in = Uniform({1, 3}, 1, kFloat32);
  const Tensor a = NonContiguousCopy(Uniform({2, 4}, 2, kFloat32));
  const Tensor b = t(Uniform({3, 4}, 3, kFloat32));  // a transposed view
  const Tensor y = addmm(in, a, b, 0.25, 3.0);
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_TENSOR_NEAR(y, in * 0.25 + matmul(a, b) * 3.0, 1e-5);
  const Tensor bi = Uniform({2, 1, 3}, 4, kFloat32);
  const Tensor b1 = NonContiguousCopy(Uniform({2, 2, 4}, 5, kFloat32));
  const Tensor b2 = transpose(Uniform({2, 3, 4}, 6, kFloat32), 1, 2);
  EXPECT_TENSOR_NEAR(baddbmm(bi, b1, b2, -1, 0.5), bi * -1.0 + bmm(b1, b2) * 0.5, 1e-5);
}

TEST(Addmm, DtypesAndBetaZero) {
  // int64 with integer scalars stays int64; mixed dtypes promote.
  const Tensor i = tensor<int64_t>({1, 2, 3, 4}, {2, 2});
  EXPECT_TENSOR_EQ(addmm(i, i, i, 2, 3), i * 2 + matmul(i, i) * 3);
  EXPECT_EQ(addmm(Uniform({2}, 1, kFloat32), Uniform({2, 2}, 2), i).dtype(), kFloat64);
  // beta == 0 ignores the input's values: nan does not propagate.
  const Tensor nan = full({2, 2}, std::numeric_limits<double>::quiet_NaN(), kFloat64);
  const Tensor a = Uniform({2, 2}, 3);
  EXPECT_TENSOR_NEAR(addmm(nan, a, a, 0.0, 1.0), matmul(a, a), 1e-12);
  EXPECT_TENSOR_NEAR(baddbmm(unsqueeze(nan, 0), unsqueeze(a, 0), unsqueeze(a, 0), 0, 2),
                     unsqueeze(matmul(a, a) * 2.0, 0), 1e-12);
  // A new tensor even when nothing but the product is computed.
  const Tensor y = addmm(zeros({2, 2}, kFloat64), a, eye(2, kFloat64), 0, 1);
  EXPECT_NE(y.storage().id(), a.storage().id());
}

TEST(Addmm, SizeZeroAndOne) {
  // Inner size 0: an empty sum, so beta * input.
  const Tensor in = Uniform({2, 3}, 1);
  EXPECT_TENSOR_NEAR(addmm(in, zeros({2, 0}, kFloat64), zeros({0, 3}, kFloat64), 2, 1), in * 2.0,
                     1e-12);
  EXPECT_EQ(addmm(zeros({0}, kFloat64), zeros({0, 2}, kFloat64), zeros({2, 0}, kFloat64)).sizes(),
            (Shape{0, 0}));
  EXPECT_EQ(baddbmm(zeros({1}, kFloat64), zeros({0, 2, 2}, kFloat64), zeros({0, 2, 1}, kFloat64))
                .sizes(),
            (Shape{0, 2, 1}));
  const Tensor a = Uniform({1, 1}, 2);
  EXPECT_TENSOR_NEAR(addmm(a, a, a), a + a * a, 1e-12);
}

TEST(Addmm, SecondOrder) {
  const TensorList args = {Uniform({3}, 1), Uniform({2, 4}, 2), Uniform({4, 3}, 3)};
  auto f = [](const TensorList& a) { return addmm(a[0], a[1] * a[1], a[2], 0.5, -1.5); };
  EXPECT_TRUE(gradcheck(f, args).ok);
  EXPECT_TRUE(jvpcheck(f, args).ok);
  EXPECT_TRUE(gradgradcheck(f, args).ok);
  auto g = [](const TensorList& a) { return baddbmm(a[0], a[1], sin(a[2]), 2, 0.5); };
  const TensorList bargs = {Uniform({2, 1, 3}, 4), Uniform({2, 2, 2}, 5), Uniform({2, 2, 3}, 6)};
  EXPECT_TRUE(gradgradcheck(g, bargs).ok);
  EXPECT_TRUE(jvpcheck(g, bargs).ok);
}

TEST(Addmm, Errors) {
  const Tensor m = Uniform({2, 3}, 1);
  const Tensor n = Uniform({3, 4}, 2);
  EXPECT_FT_ERROR(addmm(zeros({4}), Uniform({3}, 1), n), "addmm: expected matrices");
  EXPECT_FT_ERROR(addmm(zeros({4}), m, m), "addmm: size mismatch");
  EXPECT_FT_ERROR(addmm(zeros({3}), m, n), "does not broadcast to the product's shape [2, 4]");
  EXPECT_FT_ERROR(addmm(zeros({5, 2, 4}), m, n), "input of shape [5, 2, 4]");
  EXPECT_FT_ERROR(addmm(zeros({4}, kBool), m, n), "addmm: bool tensors are not supported");
  const Tensor i = tensor<int64_t>({1, 2, 3, 4}, {2, 2});
  EXPECT_FT_ERROR(addmm(i, i, i, 0.5, 1), "beta and alpha must be integers for int64");
  EXPECT_FT_ERROR(baddbmm(zeros({1}), m, n), "baddbmm: expected 3-D batches");
  EXPECT_FT_ERROR(baddbmm(zeros({1}), zeros({2, 2, 3}), zeros({3, 3, 2})),
                  "baddbmm: batch sizes differ");
  EXPECT_FT_ERROR(baddbmm(zeros({1}), zeros({2, 2, 3}), zeros({2, 2, 2})),
                  "baddbmm: size mismatch");
}

// ---- einsum ----

struct EinsumFixture {
  const char* name;
  const char* equation;
  int operands;
};

TEST(Einsum, MatchesTorch) {
  const EinsumFixture cases[] = {
      {"einsum_matmul", "ij,jk->ik", 2},
      {"einsum_implicit", "ij,jk", 2},
      {"einsum_implicit_order", "ba", 1},
      {"einsum_trace", "ii", 1},
      {"einsum_diag", "ii->i", 1},
      {"einsum_diag_contract", "iij,jk->ik", 2},
      {"einsum_batch", "bij,bjk->bik", 2},
      {"einsum_ellipsis", "...ij,...jk->...ik", 2},
      {"einsum_ellipsis_sum", "i...->i", 1},
      {"einsum_ellipsis_implicit", "...ij", 1},
      {"einsum_outer", "i,j->ij", 2},
      {"einsum_sum_all", "ijk->", 1},
      {"einsum_chain", "ij,jk,kl->il", 3},
      {"einsum_bilinear", "bn,anm,bm->ba", 3},
      {"einsum_upper", "Aa,aB->AB", 2},
      {"einsum_broadcast_one", "ij,ij->ij", 2},
      {"einsum_spaces", " i j , j -> i", 2},
      {"einsum_unused", "ij,k->i", 2},
  };
  for (const EinsumFixture& c : cases) {
    const std::string eq = c.equation;
    CheckCase(c.name, c.operands, [eq](const TensorList& a) { return TensorList{einsum(eq, a)}; });
  }
}

TEST(Einsum, ClosedForms) {
  const Tensor a = Uniform({3, 4}, 1);
  const Tensor b = Uniform({4, 2}, 2);
  const Tensor sq = Uniform({3, 3}, 3);
  EXPECT_TENSOR_NEAR(einsum("ij,jk->ik", {a, b}), matmul(a, b), 1e-12);
  EXPECT_TENSOR_NEAR(einsum("ij->ji", {a}), t(a), 0.0);
  EXPECT_TENSOR_NEAR(einsum("ii->", {sq}), sum(diagonal(sq), {}), 1e-12);
  EXPECT_TENSOR_NEAR(einsum("ij->", {a}), sum(a, {}), 1e-12);
  const Tensor u = Uniform({4}, 8);
  EXPECT_TENSOR_NEAR(einsum("i,i", {u, u}), dot(u, u), 1e-12);
  // Rank 0 operands and a rank-0 result.
  const Tensor s = scalar_tensor(2.5, kFloat64);
  EXPECT_TENSOR_NEAR(einsum(",ij->ij", {s, a}), a * 2.5, 1e-12);
  EXPECT_TENSOR_NEAR(einsum("", {s}), s, 0.0);
  // A copy, never a view, also when the equation is the identity.
  const Tensor c = einsum("ij->ij", {a});
  EXPECT_NE(c.storage().id(), a.storage().id());
  EXPECT_TRUE(c.is_contiguous());
  // Four operands, a letter only one uses (summed), the same letter three times.
  const Tensor v = Uniform({4}, 4);
  EXPECT_TENSOR_NEAR(einsum("ij,j,jk,x->ik", {a, v, b, Uniform({2}, 5) * 0.0 + 1.0}),
                     matmul(a * v, b) * 2.0, 1e-12);
  const Tensor cube = Uniform({2, 2, 2}, 6);
  EXPECT_TENSOR_NEAR(einsum("iii->i", {cube}),
                     stack({select(select(select(cube, 0, 0), 0, 0), 0, 0),
                            select(select(select(cube, 0, 1), 0, 1), 0, 1)},
                           0),
                     0.0);
}

TEST(Einsum, DtypesLayoutsAndSizes) {
  const Tensor a = Uniform({3, 4}, 1, kFloat32);
  const Tensor b = Uniform({4, 2}, 2);
  const Tensor r = einsum("ij,jk->ik", {a, b});
  EXPECT_EQ(r.dtype(), kFloat64);  // promoted
  EXPECT_TENSOR_NEAR(r, matmul(a, b), 1e-6);
  EXPECT_EQ(einsum("ij,jk->ik", {a, to(b, kFloat32)}).dtype(), kFloat32);
  const Tensor i = tensor<int64_t>({1, 2, 3, 4}, {2, 2});
  EXPECT_TENSOR_EQ(einsum("ij,jk", {i, i}), matmul(i, i));
  // Non-contiguous operands.
  const Tensor nc = NonContiguousCopy(Uniform({3, 4}, 3));
  EXPECT_TENSOR_NEAR(einsum("ij,kj->ik", {nc, t(b)}), matmul(nc, b), 1e-12);
  // Size 0: an empty contraction gives zeros, an empty free dim an empty result.
  EXPECT_TENSOR_EQ(einsum("ij,jk->ik", {zeros({2, 0}, kFloat64), zeros({0, 3}, kFloat64)}),
                   zeros({2, 3}, kFloat64));
  EXPECT_EQ(einsum("ij,jk->ik", {zeros({0, 2}, kFloat64), zeros({2, 3}, kFloat64)}).sizes(),
            (Shape{0, 3}));
  // Size 1 broadcasts against a larger size, and against 0.
  const Tensor one = Uniform({3, 1}, 4);
  EXPECT_TENSOR_NEAR(einsum("ij,ij->ij", {one, Uniform({3, 4}, 5)}), one * Uniform({3, 4}, 5),
                     1e-12);
  EXPECT_EQ(einsum("ij,ij->ij", {one, zeros({3, 0}, kFloat64)}).sizes(), (Shape{3, 0}));
}

TEST(Einsum, SecondOrder) {
  const TensorList args = {Uniform({2, 2, 3}, 1), Uniform({1, 3, 2}, 2), Uniform({2}, 3)};
  auto f = [](const TensorList& a) { return einsum("iij,...jk,l->...ik", {a[0], a[1], a[2]}); };
  EXPECT_TRUE(gradcheck(f, args).ok);
  EXPECT_TRUE(jvpcheck(f, args).ok);
  auto g = [](const TensorList& a) { return einsum("ij,jk,ki->i", {a[0], sin(a[1]), a[0]}); };
  const TensorList sq = {Uniform({3, 3}, 4), Uniform({3, 3}, 5)};
  EXPECT_TRUE(gradgradcheck(g, sq).ok);
  // hessian of a quadratic form x^T A x is A + A^T.
  const Tensor a = Uniform({3, 3}, 6);
  const auto quadratic = [a](const TensorList& x) { return einsum("i,ij,j", {x[0], a, x[0]}); };
  const TensorList h = hessian(quadratic)({Uniform({3}, 7)});
  EXPECT_TENSOR_NEAR(h[0], a + t(a), 1e-12);
}

TEST(Einsum, Errors) {
  const Tensor a = Uniform({2, 3}, 1);
  EXPECT_FT_ERROR(einsum("ij", TensorList{}), "einsum(): must provide at least one operand");
  EXPECT_FT_ERROR(einsum("ij,jk->ik", {a}), "the equation has 2 input term(s) but 1 operand(s)");
  EXPECT_FT_ERROR(einsum("ijk", {a}), "operand 0 has 2 dimension(s) but its term \"ijk\"");
  EXPECT_FT_ERROR(einsum("ijk...", {a}), "fewer than the 3 subscript(s)");
  EXPECT_FT_ERROR(einsum("i1", {a}), "invalid subscript '1' at index 1");
  EXPECT_FT_ERROR(einsum("i.j", {a}), "found '.' at index 1 that is not part of an ellipsis");
  EXPECT_FT_ERROR(einsum("...i...", {a}), "found more than one ellipsis (...) for operand 0");
  EXPECT_FT_ERROR(einsum("ii", {a}), "subscript i is repeated for operand 0 but the sizes");
  EXPECT_FT_ERROR(einsum("ij,ij", {a, Uniform({2, 2}, 2)}),
                  "subscript j has size 2 for operand 1 which does not broadcast");
  EXPECT_FT_ERROR(einsum("...i,...i", {Uniform({4, 3}, 3), Uniform({2, 3}, 4)}),
                  "the dims the ellipsis covers do not broadcast");
  EXPECT_FT_ERROR(einsum("ij->k", {a}), "output subscript k does not appear");
  EXPECT_FT_ERROR(einsum("ij->ii", {a}), "output subscript i appears more than once");
  EXPECT_FT_ERROR(einsum("ij->i-", {a}), "invalid subscript '-'");
  EXPECT_FT_ERROR(einsum("ij", {zeros({2, 3}, kBool)}), "bool tensors are not supported");
  // Messages name the equation and the shapes.
  EXPECT_FT_ERROR(einsum("ij,jk", {a, a}), "(equation \"ij,jk\", operands [2, 3], [2, 3])");
}

// ---- scaled_dot_product_attention ----

// The definition in ft ops: softmax(q k^T * scale + mask) v.
Tensor Reference(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& bias,
                 double scale) {
  return matmul(softmax(matmul(q, transpose(k, -2, -1)) * scale + bias, -1), v);
}

Tensor CausalBias(int64_t l, int64_t s) {
  std::vector<double> b;
  for (int64_t i = 0; i < l; ++i) {
    for (int64_t j = 0; j < s; ++j) b.push_back(j <= i ? 0.0 : -INFINITY);
  }
  return tensor(b, {l, s});
}

TEST(Attention, MatchesDefinition) {
  const Tensor q = Uniform({2, 3, 4}, 1);
  const Tensor k = Uniform({2, 5, 4}, 2);
  const Tensor v = Uniform({2, 5, 3}, 3);
  const double dflt = 1.0 / std::sqrt(4.0);
  EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v),
                     Reference(q, k, v, zeros({1}, kFloat64), dflt), 1e-12);
  EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, false, 0.3),
                     Reference(q, k, v, zeros({1}, kFloat64), 0.3), 1e-12);
  const Tensor fmask = Uniform({3, 5}, 4);
  EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v, fmask),
                     Reference(q, k, v, fmask, dflt), 1e-12);
  const Tensor bmask = gt(Uniform({2, 1, 5}, 5), -0.5);
  EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v, bmask),
                     Reference(q, k, v, where(bmask, 0.0, zeros({1}, kFloat64) - INFINITY), dflt),
                     1e-12);
  EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, true),
                     Reference(q, k, v, CausalBias(3, 5), dflt), 1e-12);
  // Batch dims broadcast (heads of keys shared by a batch of queries).
  const Tensor q4 = Uniform({2, 2, 3, 4}, 6);
  EXPECT_TENSOR_NEAR(scaled_dot_product_attention(q4, k, v),
                     Reference(q4, k, v, zeros({1}, kFloat64), dflt), 1e-12);
}

TEST(Attention, Float32NonContiguousAndSizes) {
  const Tensor q = NonContiguousCopy(Uniform({3, 4}, 1, kFloat32));
  const Tensor k = transpose(Uniform({4, 2}, 2, kFloat32), 0, 1);
  const Tensor v = Uniform({2, 3}, 3, kFloat32);
  const Tensor y = scaled_dot_product_attention(q, k, v);
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_TENSOR_NEAR(y, Reference(q, k, v, zeros({1}), 0.5), 1e-6);
  EXPECT_EQ(scaled_dot_product_attention(q, k, to(v, kFloat64)).dtype(), kFloat64);
  // L = 0 gives an empty result; one key gives that key's value for every query.
  EXPECT_EQ(scaled_dot_product_attention(zeros({0, 4}), k, v).sizes(), (Shape{0, 3}));
  const Tensor v1 = Uniform({1, 3}, 4);
  EXPECT_TENSOR_NEAR(scaled_dot_product_attention(Uniform({2, 4}, 5), Uniform({1, 4}, 6), v1),
                     expand(v1, {2, 3}), 1e-12);
  // A fully masked row is nan, as torch's math implementation.
  const Tensor none = tensor(std::vector<bool>{false, false}, {1, 2});
  const Tensor r = scaled_dot_product_attention(Uniform({1, 4}, 7), Uniform({2, 4}, 8),
                                                Uniform({2, 3}, 9), none);
  EXPECT_TRUE(std::isnan(select(r, 1, 0).item<double>()));
}

TEST(Attention, Dropout) {
  const Tensor q = Uniform({2, 3, 4}, 1);
  const Tensor k = Uniform({2, 5, 4}, 2);
  const Tensor v = Uniform({2, 5, 3}, 3);
  // The same counters as ft::dropout of the weights.
  Generator g1(11), g2(11);
  const Tensor y = scaled_dot_product_attention(q, k, v, std::nullopt, 0.3, false, std::nullopt,
                                                &g1);
  const Tensor w = softmax(matmul(q, transpose(k, -2, -1)) * 0.5, -1);
  EXPECT_TENSOR_NEAR(y, matmul(dropout(w, 0.3, true, &g2), v), 1e-12);
  EXPECT_EQ(g1.offset(), g2.offset());
  // p == 1: zeros, nothing drawn.
  Generator g3(5);
  EXPECT_TENSOR_EQ(scaled_dot_product_attention(q, k, v, std::nullopt, 1.0, false, std::nullopt,
                                                &g3),
                   zeros({2, 3, 3}, kFloat64));
  EXPECT_EQ(g3.offset(), 0u);
  // The gradient uses the same dropout factors (a fresh generator per call).
  auto f = [](const TensorList& a) {
    Generator g(3);
    return scaled_dot_product_attention(a[0], a[1], a[2], std::nullopt, 0.4, true, std::nullopt,
                                        &g);
  };
  EXPECT_TRUE(gradcheck(f, {q, k, v}).ok);
  EXPECT_TRUE(jvpcheck(f, {q, k, v}).ok);
  // Under vmap: randomness "error" throws, "same" and "different" are covered by the
  // batching-rule tests.
  EXPECT_FT_ERROR(vmap(TensorListFn([](const TensorList& a) {
                    return TensorList{scaled_dot_product_attention(a[0], a[0], a[0], std::nullopt,
                                                                   0.5)};
                  }))({Uniform({2, 3, 4}, 4)}),
                  "random operation 'scaled_dot_product_attention_dropout'");
  // dropout_p == 0 is deterministic: vmap in randomness "error" mode accepts it.
  EXPECT_NO_THROW(vmap(TensorListFn([](const TensorList& a) {
                    return TensorList{scaled_dot_product_attention(a[0], a[0], a[0])};
                  }))({Uniform({2, 3, 4}, 4)}));
}

TEST(Attention, SecondOrder) {
  const TensorList args = {Uniform({2, 3}, 1), Uniform({4, 3}, 2), Uniform({4, 2}, 3),
                           Uniform({2, 4}, 4)};
  auto f = [](const TensorList& a) {
    return scaled_dot_product_attention(a[0], a[1], a[2], a[3], 0.0, false, 0.9);
  };
  EXPECT_TRUE(gradcheck(f, args).ok);
  EXPECT_TRUE(jvpcheck(f, args).ok);
  EXPECT_TRUE(gradgradcheck(f, args).ok);
  auto causal = [](const TensorList& a) {
    return scaled_dot_product_attention(a[0], a[1], a[2], std::nullopt, 0.0, true);
  };
  const TensorList cargs = {Uniform({3, 2}, 5), Uniform({3, 2}, 6), Uniform({3, 2}, 7)};
  EXPECT_TRUE(gradgradcheck(causal, cargs).ok);
  // A bool mask gets no gradient (and does not break the others').
  const Tensor mask = gt(Uniform({2, 4}, 8), -0.5);
  auto masked = [mask](const TensorList& a) {
    return scaled_dot_product_attention(a[0], a[1], a[2], mask);
  };
  EXPECT_TRUE(gradcheck(masked, {args[0], args[1], args[2]}).ok);
  EXPECT_TRUE(jvpcheck(masked, {args[0], args[1], args[2]}).ok);
}

TEST(Attention, Errors) {
  const Tensor q = Uniform({3, 4}, 1);
  const Tensor k = Uniform({5, 4}, 2);
  const Tensor v = Uniform({5, 2}, 3);
  const char* op = "scaled_dot_product_attention: ";
  EXPECT_FT_ERROR(scaled_dot_product_attention(Uniform({4}, 1), k, v),
                  std::string(op) + "query, key and value need at least 2 dimensions");
  EXPECT_FT_ERROR(scaled_dot_product_attention(to(q, kInt64), k, v), "must be float32 or float64");
  EXPECT_FT_ERROR(scaled_dot_product_attention(q, Uniform({5, 3}, 2), v),
                  "must have the same last size (E), got 4 and 3");
  EXPECT_FT_ERROR(scaled_dot_product_attention(q, k, Uniform({4, 2}, 3)),
                  "must have the same sequence length (dim -2), got 5 and 4");
  EXPECT_FT_ERROR(scaled_dot_product_attention(Uniform({2, 3, 4}, 1), Uniform({3, 5, 4}, 2), v),
                  "the batch dims of query and key do not broadcast");
  EXPECT_FT_ERROR(scaled_dot_product_attention(Uniform({3, 3, 4}, 1), Uniform({3, 5, 4}, 2),
                                               Uniform({2, 5, 2}, 3)),
                  "the batch dims of query, key and value do not broadcast");
  EXPECT_FT_ERROR(scaled_dot_product_attention(q, k, v, Uniform({2, 5}, 4)),
                  "attn_mask of shape [2, 5] does not broadcast to the attention weights' shape "
                  "[3, 5]");
  EXPECT_FT_ERROR(scaled_dot_product_attention(q, k, v, zeros({3, 5}, kInt64)),
                  "attn_mask must be bool or floating");
  EXPECT_FT_ERROR(scaled_dot_product_attention(q, k, v, zeros({3, 5}), 0.0, true),
                  "attn_mask must not be given when is_causal is true");
  EXPECT_FT_ERROR(scaled_dot_product_attention(q, k, v, std::nullopt, 1.5),
                  "dropout_p must be in [0, 1], got 1.5");
  EXPECT_FT_ERROR(scaled_dot_product_attention(q, k, v, std::nullopt, -0.5),
                  "dropout_p must be in [0, 1]");
  EXPECT_FT_ERROR(scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, false, INFINITY),
                  "scale must be finite");
  // Errors come before any counter is drawn.
  Generator g(1);
  EXPECT_FT_ERROR(scaled_dot_product_attention(q, k, Uniform({4, 2}, 3), std::nullopt, 0.5,
                                               false, std::nullopt, &g),
                  "same sequence length");
  EXPECT_EQ(g.offset(), 0u);
}

}  // namespace
}  // namespace ft

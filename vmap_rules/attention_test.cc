// vmap of addmm, baddbmm, einsum and scaled_dot_product_attention against the loop-and-stack
// oracle (every in_dim, batch sizes 0, 1 and 3, batched and unbatched mixes), their errors
// under vmap (the op's messages for one example), and the dropout form's randomness modes
// (checked by their defining properties: "same" is every example drawing from one generator
// state, "different" a loop drawing from one generator in turn).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"
#include "tests/vmap_check.h"

namespace ft {
namespace {

using testing::ArgSpec;
using testing::CheckVmap;
using testing::UniformMaker;

// The message of the ft::Error fn throws, without the transform stack vmap appends.
std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return std::string(e.message());
  }
  return "<no error>";
}

// Batch size 0: vmap over an empty batch gives an empty batch of results.
void ExpectEmptyBatch(const TensorListFn& f, const TensorList& one) {
  TensorList batched;
  for (const Tensor& t : one) {
    Shape s = {0};
    s.insert(s.end(), t.sizes().begin(), t.sizes().end());
    batched.push_back(zeros(s, t.dtype()));
  }
  const TensorList out = vmap(f)(batched);
  const TensorList ref = f(one);
  ASSERT_EQ(out.size(), ref.size());
  for (size_t i = 0; i < out.size(); ++i) {
    Shape s = {0};
    s.insert(s.end(), ref[i].sizes().begin(), ref[i].sizes().end());
    EXPECT_EQ(out[i].sizes(), s);
  }
}

TEST(AttentionRules, Addmm) {
  for (Shape in : {Shape{3}, Shape{2, 3}, Shape{2, 1}, Shape{}}) {
    SCOPED_TRACE(ShapeToString(in));
    EXPECT_TRUE(CheckVmap([](const TensorList& a) { return TensorList{addmm(a[0], a[1], a[2])}; },
                          {ArgSpec{in}, ArgSpec{{2, 4}}, ArgSpec{{4, 3}}}));
    EXPECT_TRUE(CheckVmap(
        [](const TensorList& a) { return TensorList{addmm(a[0], a[1], a[2], 0.5, -2)}; },
        {ArgSpec{in}, ArgSpec{{2, 4}}, ArgSpec{{4, 3}}}));
    EXPECT_TRUE(CheckVmap(
        [](const TensorList& a) { return TensorList{addmm(a[0], a[1], a[2], 0, 2)}; },
        {ArgSpec{in}, ArgSpec{{2, 4}}, ArgSpec{{4, 3}}}));
  }
  ExpectEmptyBatch([](const TensorList& a) { return TensorList{addmm(a[0], a[1], a[2])}; },
                   {zeros({3}), zeros({2, 4}), zeros({4, 3})});
}

TEST(AttentionRules, Baddbmm) {
  for (Shape in : {Shape{3}, Shape{2, 2, 3}, Shape{2, 1, 3}, Shape{1, 2, 1}}) {
    SCOPED_TRACE(ShapeToString(in));
    EXPECT_TRUE(CheckVmap(
        [](const TensorList& a) { return TensorList{baddbmm(a[0], a[1], a[2], 2, 0.5)}; },
        {ArgSpec{in}, ArgSpec{{2, 2, 4}}, ArgSpec{{2, 4, 3}}}));
  }
  ExpectEmptyBatch([](const TensorList& a) { return TensorList{baddbmm(a[0], a[1], a[2])}; },
                   {zeros({3}), zeros({2, 2, 4}), zeros({2, 4, 3})});
}

TEST(AttentionRules, Einsum) {
  struct C {
    const char* equation;
    std::vector<Shape> shapes;
  };
  const std::vector<C> cases = {
      {"ij,jk->ik", {{2, 3}, {3, 4}}},
      {"ij,jk", {{2, 3}, {3, 4}}},            // implicit output
      {"ba", {{2, 3}}},                       // implicit transposition
      {"ii", {{3, 3}}},                       // trace
      {"ii->i", {{3, 3}}},                    // diagonal
      {"iij,jk->ik", {{2, 2, 3}, {3, 2}}},
      {"...ij,...jk->...ik", {{2, 1, 2, 3}, {3, 3, 2}}},
      {"i...->i", {{2, 3, 2}}},               // ellipsis summed
      {"...ij", {{2, 2, 3}}},
      {"i,j->ij", {{3}, {4}}},
      {"ijk->", {{2, 3, 2}}},
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}},
      {"bn,anm,bm->ba", {{2, 3}, {2, 3, 4}, {2, 4}}},
      {"ij,ij->ij", {{2, 1}, {2, 3}}},        // size-1 broadcast
      {"ij,k->i", {{2, 3}, {2}}},             // a letter only one operand has
      {",i->i", {{}, {3}}},                   // a rank-0 operand
  };
  for (const C& c : cases) {
    SCOPED_TRACE(c.equation);
    std::vector<ArgSpec> specs;
    for (const Shape& s : c.shapes) specs.push_back(ArgSpec{s});
    const std::string eq = c.equation;
    EXPECT_TRUE(CheckVmap([eq](const TensorList& a) { return TensorList{einsum(eq, a)}; }, specs));
  }
  ExpectEmptyBatch(
      [](const TensorList& a) { return TensorList{einsum("ij,jk->ik", a)}; },
      {zeros({2, 3}), zeros({3, 4})});
}

TEST(AttentionRules, Attention) {
  using Fn = std::function<Tensor(const TensorList&)>;
  const std::vector<std::pair<std::string, Fn>> fns = {
      {"plain",
       [](const TensorList& a) { return scaled_dot_product_attention(a[0], a[1], a[2]); }},
      {"causal",
       [](const TensorList& a) {
         return scaled_dot_product_attention(a[0], a[1], a[2], std::nullopt, 0.0, true, 0.7);
       }},
  };
  // Query, key and value of different ranks: batch dims broadcast.
  const std::vector<std::vector<Shape>> shapes = {
      {{3, 4}, {5, 4}, {5, 2}},
      {{2, 3, 4}, {5, 4}, {2, 5, 2}},
      {{3, 4}, {2, 5, 4}, {5, 2}},
      {{1, 3, 4}, {2, 5, 4}, {2, 1, 5, 2}},
  };
  for (const auto& [name, f] : fns) {
    for (const auto& s : shapes) {
      SCOPED_TRACE(name + " " + ShapeToString(s[0]) + ShapeToString(s[1]) + ShapeToString(s[2]));
      EXPECT_TRUE(CheckVmap([fn = f](const TensorList& a) { return TensorList{fn(a)}; },
                            {ArgSpec{s[0]}, ArgSpec{s[1]}, ArgSpec{s[2]}}));
    }
  }
  // Masks, batched or not: float (added) and bool (kept where true, mostly true here).
  for (Shape m : {Shape{3, 5}, Shape{5}, Shape{2, 1, 5}}) {
    SCOPED_TRACE(ShapeToString(m));
    EXPECT_TRUE(CheckVmap(
        [](const TensorList& a) {
          return TensorList{scaled_dot_product_attention(a[0], a[1], a[2], a[3])};
        },
        {ArgSpec{{2, 3, 4}}, ArgSpec{{5, 4}}, ArgSpec{{5, 2}}, ArgSpec{m}}));
    EXPECT_TRUE(CheckVmap(
        [](const TensorList& a) {
          return TensorList{scaled_dot_product_attention(a[0], a[1], a[2], gt(a[3], -0.8))};
        },
        {ArgSpec{{2, 3, 4}}, ArgSpec{{5, 4}}, ArgSpec{{5, 2}}, ArgSpec{m}}));
  }
  // Only the mask batched (query, key and value shared): the weights must become batched.
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) {
        return TensorList{scaled_dot_product_attention(a[0], a[1], a[2], a[3])};
      },
      {ArgSpec{{3, 4}, UniformMaker(), false}, ArgSpec{{5, 4}, UniformMaker(), false},
       ArgSpec{{5, 2}, UniformMaker(), false}, ArgSpec{{3, 5}}}));
  ExpectEmptyBatch(
      [](const TensorList& a) {
        return TensorList{scaled_dot_product_attention(a[0], a[1], a[2])};
      },
      {zeros({3, 4}), zeros({5, 4}), zeros({5, 2})});
}

TEST(AttentionRules, ErrorsReadLikeTheOp) {
  const auto same = [](const std::function<Tensor(const TensorList&)>& f, const TensorList& one,
                       std::vector<std::optional<int64_t>> in_dims) {
    const std::string want = ErrorOf([&] { f(one); });
    ASSERT_NE(want, "<no error>");
    TensorList batched;
    for (size_t i = 0; i < one.size(); ++i) {
      batched.push_back(in_dims[i] ? stack({one[i], one[i]}, *in_dims[i]) : one[i]);
    }
    EXPECT_EQ(ErrorOf([&] {
                vmap(TensorListFn([f](const TensorList& a) { return TensorList{f(a)}; }),
                     Dims(in_dims))(batched);
              }),
              want);
  };
  const Tensor m = zeros({2, 3}, kFloat64);
  same([](const TensorList& a) { return addmm(a[0], a[1], a[2]); }, {zeros({3}), m, m},
       {0, std::nullopt, 0});
  same([](const TensorList& a) { return addmm(a[0], a[1], a[2]); },
       {zeros({4}), m, zeros({3, 3})}, {0, 0, std::nullopt});
  same([](const TensorList& a) { return baddbmm(a[0], a[1], a[2]); }, {zeros({1}), m, m},
       {std::nullopt, 1, 0});
  same([](const TensorList& a) { return einsum("ij,jk->ik", a); }, {m, m}, {0, 1});
  same([](const TensorList& a) { return einsum("ii", a); }, {m}, {1});
  same([](const TensorList& a) { return einsum("ij,i", a); }, {m, zeros({3})}, {std::nullopt, 0});
  same([](const TensorList& a) { return scaled_dot_product_attention(a[0], a[1], a[2]); },
       {zeros({3, 4}), zeros({5, 3}), zeros({5, 2})}, {0, std::nullopt, 1});
  same([](const TensorList& a) { return scaled_dot_product_attention(a[0], a[1], a[2], a[3]); },
       {zeros({3, 4}), zeros({5, 4}), zeros({5, 2}), zeros({2, 5})}, {std::nullopt, 0, 0, 0});
}

// ---- The dropout form under randomness "same" and "different" ----

constexpr uint64_t kSeed = 77;

Tensor Sdpa(const Tensor& q, const Tensor& k, const Tensor& v, Generator* g) {
  return scaled_dot_product_attention(q, k, v, std::nullopt, 0.4, false, std::nullopt, g);
}

TEST(AttentionRules, DropoutSameSharesOneDraw) {
  const Tensor qs = UniformMaker()({3, 2, 4}, 1);
  const Tensor k = UniformMaker()({5, 4}, 2);
  const Tensor vs = UniformMaker()({3, 5, 2}, 3);
  Generator g(kSeed);
  const TensorList out = vmap(
      TensorListFn([&](const TensorList& a) { return TensorList{Sdpa(a[0], k, a[1], &g)}; }),
      {0, 0}, 0, Randomness::kSame)({qs, vs});
  for (int64_t b = 0; b < 3; ++b) {
    Generator one(kSeed);
    EXPECT_TENSOR_NEAR(select(out[0], 0, b), Sdpa(select(qs, 0, b), k, select(vs, 0, b), &one),
                       1e-12);
    EXPECT_EQ(g.offset(), one.offset());  // the batch consumed one example's counters
  }
  // Nothing batched but the randomness: one unbatched draw, the same for every example.
  Generator g2(kSeed);
  const TensorList shared = vmap(
      TensorListFn([&](const TensorList& a) { return TensorList{Sdpa(k, k, k, &g2) + a[0]}; }),
      {0}, 0, Randomness::kSame)({zeros({3, 1})});
  Generator one(kSeed);
  const Tensor ref = Sdpa(k, k, k, &one);
  for (int64_t b = 0; b < 3; ++b) EXPECT_TENSOR_NEAR(select(shared[0], 0, b), ref, 1e-12);
}

TEST(AttentionRules, DropoutDifferentIsASequentialLoop) {
  const Tensor qs = UniformMaker()({3, 2, 4}, 1);
  const Tensor k = UniformMaker()({5, 4}, 2);
  const Tensor v = UniformMaker()({5, 2}, 3);
  for (std::optional<int64_t> chunk : {std::optional<int64_t>(), std::optional<int64_t>(2)}) {
    Generator g(kSeed);
    const TensorList out = vmap(
        TensorListFn([&](const TensorList& a) { return TensorList{Sdpa(a[0], k, v, &g)}; }), {0},
        0, Randomness::kDifferent, chunk)({qs});
    Generator loop(kSeed);
    for (int64_t b = 0; b < 3; ++b) {
      EXPECT_TENSOR_NEAR(select(out[0], 0, b), Sdpa(select(qs, 0, b), k, v, &loop), 1e-12);
    }
    EXPECT_EQ(g.offset(), loop.offset());
  }
  // Unbatched operands still draw one set of factors per example.
  Generator g(kSeed);
  const TensorList out = vmap(
      TensorListFn([&](const TensorList& a) { return TensorList{Sdpa(k, k, v, &g) + a[0]}; }),
      {0}, 0, Randomness::kDifferent)({zeros({3, 1})});
  Generator loop(kSeed);
  for (int64_t b = 0; b < 3; ++b) {
    EXPECT_TENSOR_NEAR(select(out[0], 0, b), Sdpa(k, k, v, &loop), 1e-12);
  }
  // p == 1 draws nothing.
  Generator z(kSeed);
  vmap(TensorListFn([&](const TensorList& a) {
         return TensorList{scaled_dot_product_attention(a[0], k, v, std::nullopt, 1.0, false,
                                                         std::nullopt, &z)};
       }),
       {0}, 0, Randomness::kDifferent)({qs});
  EXPECT_EQ(z.offset(), 0u);
}

}  // namespace
}  // namespace ft

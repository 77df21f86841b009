// vmap of the random ops and the *_like factories.
//
// The *_like factories are checked against the loop-and-stack oracle (CheckVmap). The random
// ops cannot be (a loop draws other counters than one batched draw), so they are checked by
// their defining properties, with expected numbers computed independently: from
// Generator::Uniform / Normal of the counters, or from unbatched calls on a generator set to
// the offset example b must use.
#include <cmath>
#include <limits>
#include <set>
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
using testing::IndexMaker;
using testing::TensorEqual;
using testing::UniformMaker;

constexpr uint64_t kSeed = 1234;
constexpr std::nullopt_t kNone = std::nullopt;

// Uniform values in [low, high) of `shape`, from a generator the tests do not otherwise use.
Tensor Values(IntArrayRef shape, double low = 0.0, double high = 1.0, DType dtype = kFloat64,
              uint64_t seed = 99) {
  return UniformMaker(low, high, dtype)(shape, seed);
}

// Example b of a result stacked at dim 0, contiguous.
Tensor Example(const Tensor& out, int64_t b) { return contiguous(select(out, 0, b)); }

// A generator of kSeed positioned at `offset`.
Generator At(uint64_t offset) {
  Generator g(kSeed);
  g.set_offset(offset);
  return g;
}

// Counters first, first+1, ... of kSeed through Generator::Uniform / Normal, as a float64
// tensor of `shape`.
Tensor CounterTensor(IntArrayRef shape, uint64_t first, bool normal) {
  std::vector<double> v(static_cast<size_t>(Numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = normal ? Generator::Normal(kSeed, first + i) : Generator::Uniform(kSeed, first + i);
  }
  return tensor(v, shape);
}

// All values of the float tensors, to check that samples never repeat.
size_t CountDistinct(const TensorList& ts) {
  std::set<double> seen;
  size_t n = 0;
  for (const Tensor& t : ts) {
    Tensor c = contiguous(to(t, kFloat64));
    const double* d = c.data<double>();
    for (int64_t i = 0; i < c.numel(); ++i, ++n) seen.insert(d[i]);
  }
  EXPECT_EQ(seen.size(), n) << "some samples repeat";
  return seen.size();
}

// ---- *_like factories ----

TEST(RandomRules, LikeFactoriesFollowTheBatch) {
  using F = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<const char*, F>> ops = {
      {"zeros_like", [](const Tensor& x) { return zeros_like(x); }},
      {"ones_like", [](const Tensor& x) { return ones_like(x); }},
      {"full_like", [](const Tensor& x) { return full_like(x, 2.5); }},
      {"zeros_like(bool)", [](const Tensor& x) { return zeros_like(x, kBool); }},
      {"ones_like(float32)", [](const Tensor& x) { return ones_like(x, kFloat32); }},
      {"full_like(int64)", [](const Tensor& x) { return full_like(x, -2.7, kInt64); }}};
  for (const auto& [name, op] : ops) {
    SCOPED_TRACE(name);
    // Added to x so that a wrong batch dim would misplace values, not only shapes.
    auto f = [op = op](const TensorList& a) { return TensorList{op(a[0]), op(a[0]) + a[0]}; };
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{2, 3}}}));
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{}}}));
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{4, 1, 2}}}));
  }
  // Integer input keeps its dtype; the value is converted.
  EXPECT_TRUE(CheckVmap([](const TensorList& a) { return TensorList{full_like(a[0], 7)}; },
                        {ArgSpec{{3, 2}, IndexMaker(10)}}));
  // Two arguments, one unbatched: the factory of the unbatched one stays unbatched.
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) { return TensorList{ones_like(a[0]) * a[1], zeros_like(a[1])}; },
      {ArgSpec{{2, 3}}, ArgSpec{{3}}}));
}

TEST(RandomRules, LikeFactoryErrorsUnderVmap) {
  auto f = vmap([](const Tensor& x) { return full_like(x, std::nan(""), kInt64); });
  EXPECT_FT_ERROR(f(zeros({3, 2})), "cannot be converted to int64 without overflow");
  auto g = vmap([](const Tensor& x) { return full_like(x, 1e300); });
  EXPECT_FT_ERROR(g(zeros({3, 2}, kFloat32)), "cannot be converted to float32 without overflow");
}

// ---- randomness = error ----

TEST(RandomRules, ErrorModeThrowsForEveryRandomOp) {
  Generator g(kSeed);
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> ops = {
      {"rand_like", [&](const Tensor& x) { return rand_like(x, &g); }},
      {"randn_like", [&](const Tensor& x) { return randn_like(x, &g); }},
      {"bernoulli", [&](const Tensor& x) { return bernoulli(x, &g); }},
      {"dropout", [&](const Tensor& x) { return dropout(x, 0.5, true, &g); }},
      {"randint", [&](const Tensor& x) { return randint(0, 5, {2}, &g) + x; }}};
  for (const auto& named_op : ops) {
    // Not a structured binding: EXPECT_FT_ERROR's lambda captures op, and clang 14 cannot
    // capture bindings.
    const char* name = named_op.first;
    const auto& op = named_op.second;
    SCOPED_TRACE(name);
    EXPECT_FT_ERROR(vmap(op)(Values({3, 2})),
                    std::string("vmap: called random operation '") + name +
                        "' while in randomness error mode");
  }
  EXPECT_EQ(g.offset(), 0u);
  // Also when the op's input is not batched (the draw could still vary per example).
  auto unbatched = vmap([&](const TensorList& a) { return TensorList{rand_like(a[1], &g) + a[0]}; },
                        {0, kNone});
  EXPECT_FT_ERROR(unbatched({Values({3, 2}), Values({2})}), "called random operation 'rand_like'");
}

// ---- rand_like / randn_like ----

TEST(RandomRules, SameDrawsTheLogicalShapeOnce) {
  for (bool normal : {false, true}) {
    for (DType dtype : {kFloat64, kFloat32}) {
      SCOPED_TRACE(std::string(normal ? "randn_like " : "rand_like ") + DTypeName(dtype));
      auto draw = [normal](const Tensor& x, Generator* g) {
        return normal ? randn_like(x, g) : rand_like(x, g);
      };
      Generator ref = At(5);
      const Tensor expected = draw(zeros({2, 3}, dtype), &ref);
      for (int64_t in_dim : {0, 1, -1}) {
        Generator g = At(5);
        Shape shape = {2, 3};
        shape.insert(shape.begin() + (in_dim < 0 ? 2 : in_dim), 4);
        Tensor out = vmap([&](const Tensor& x) { return draw(x, &g); }, in_dim, 0,
                          Randomness::kSame)(Values(shape, 0, 1, dtype));
        ASSERT_EQ(out.sizes(), (Shape{4, 2, 3}));
        for (int64_t b = 0; b < 4; ++b) EXPECT_TRUE(TensorEqual(Example(out, b), expected));
        EXPECT_EQ(g.offset(), 5u + 6u) << "one draw of the logical shape";
      }
      // The input is not batched at all (another argument is).
      Generator g = At(5);
      TensorList outs = vmap([&](const TensorList& a) { return TensorList{draw(a[1], &g), a[0]}; },
                             {0, kNone}, 0, Randomness::kSame)({Values({4}), zeros({2, 3}, dtype)});
      for (int64_t b = 0; b < 4; ++b) EXPECT_TRUE(TensorEqual(Example(outs[0], b), expected));
      EXPECT_EQ(g.offset(), 11u);
    }
  }
}

TEST(RandomRules, DifferentGivesExampleBTheCountersAfterBTimesTheExample) {
  for (bool normal : {false, true}) {
    SCOPED_TRACE(normal ? "randn_like" : "rand_like");
    auto f = [normal](Generator* g) {
      return [g, normal](const Tensor& x) { return normal ? randn_like(x, g) : rand_like(x, g); };
    };
    for (int64_t in_dim : {0, 2}) {
      Generator g = At(10);
      Tensor x = in_dim == 0 ? Values({3, 2, 4}) : Values({2, 4, 3});
      Tensor out = vmap(f(&g), in_dim, 0, Randomness::kDifferent)(x);
      ASSERT_EQ(out.sizes(), (Shape{3, 2, 4}));
      for (int64_t b = 0; b < 3; ++b) {
        EXPECT_TRUE(TensorEqual(Example(out, b), CounterTensor({2, 4}, 10 + 8 * b, normal)));
      }
      EXPECT_EQ(g.offset(), 10u + 3u * 8u);
      EXPECT_FALSE(TensorEqual(Example(out, 0), Example(out, 1)));
      // Reproducible from the seed.
      Generator again = At(10);
      EXPECT_TRUE(TensorEqual(vmap(f(&again), in_dim, 0, Randomness::kDifferent)(x), out));
    }
    // float32: the loop draw with the generator advanced by b * per_example.
    Generator g(kSeed);
    Tensor out = vmap(f(&g), 0, 0, Randomness::kDifferent)(zeros({3, 5}, kFloat32));
    for (int64_t b = 0; b < 3; ++b) {
      Generator ref = At(5 * b);
      EXPECT_TRUE(TensorEqual(Example(out, b), f(&ref)(zeros({5}, kFloat32))));
    }
    // Unbatched input: still one sample per example.
    Generator h(kSeed);
    TensorList outs = vmap([&](const TensorList& a) { return TensorList{f(&h)(a[1])}; },
                           {0, kNone}, 0, Randomness::kDifferent)({Values({3}), zeros({2}, kFloat64)});
    for (int64_t b = 0; b < 3; ++b) {
      EXPECT_TRUE(TensorEqual(Example(outs[0], b), CounterTensor({2}, 2 * b, normal)));
    }
  }
}

TEST(RandomRules, DefaultGeneratorAndDtypeErrors) {
  manual_seed(kSeed);
  Tensor out = vmap([](const Tensor& x) { return rand_like(x); }, 0, 0,
                    Randomness::kDifferent)(zeros({2, 3}, kFloat64));
  EXPECT_TRUE(TensorEqual(out, CounterTensor({2, 3}, 0, false)));
  EXPECT_EQ(DefaultGenerator().offset(), 6u);
  Generator g(kSeed);
  for (Randomness r : {Randomness::kSame, Randomness::kDifferent}) {
    EXPECT_FT_ERROR(vmap([&](const Tensor& x) { return rand_like(x, &g); }, 0, 0, r)(
                        zeros({2, 3}, kInt64)),
                    "rand_like: expected a floating point or complex dtype, got int64 (input "
                    "of shape [3])");
    EXPECT_FT_ERROR(vmap([&](const Tensor& x) { return randn_like(x, &g); }, 0, 0, r)(
                        zeros({2, 3}, kBool)),
                    "randn_like: expected a floating point or complex dtype, got bool");
  }
  EXPECT_EQ(g.offset(), 0u);
}

// ---- randint ----

TEST(RandomRules, Randint) {
  Generator ref(kSeed);
  const Tensor once = randint(-3, 100, {2, 2}, &ref);
  Generator g(kSeed);
  auto f = [&](const Tensor& x) { return randint(-3, 100, {2, 2}, &g) + sum(x) * 0; };
  Tensor same = vmap(f, 0, 0, Randomness::kSame)(ones({4, 3}, kInt64));
  for (int64_t b = 0; b < 4; ++b) EXPECT_TRUE(TensorEqual(Example(same, b), once));
  EXPECT_EQ(g.offset(), 4u);

  g = At(7);
  Tensor diff = vmap(f, 0, 0, Randomness::kDifferent)(ones({4, 3}, kInt64));
  for (int64_t b = 0; b < 4; ++b) {
    Generator loop = At(7 + 4 * b);
    EXPECT_TRUE(TensorEqual(Example(diff, b), randint(-3, 100, {2, 2}, &loop)));
  }
  EXPECT_EQ(g.offset(), 7u + 16u);

  // The full int64 range and a rank-0 shape.
  g = At(0);
  Tensor full = vmap([&](const Tensor&) {
    return randint(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), {},
                   &g);
  }, 0, 0, Randomness::kDifferent)(zeros({3}));
  for (int64_t b = 0; b < 3; ++b) {
    Generator loop = At(b);
    EXPECT_TRUE(TensorEqual(Example(full, b),
                            randint(std::numeric_limits<int64_t>::min(),
                                    std::numeric_limits<int64_t>::max(), {}, &loop)));
  }

  // Errors name the logical arguments and consume nothing.
  g = At(3);
  for (Randomness r : {Randomness::kSame, Randomness::kDifferent}) {
    EXPECT_FT_ERROR(vmap([&](const Tensor&) { return randint(5, 5, {2}, &g); }, 0, 0, r)(
                        zeros({3})),
                    "randint: expected low < high, got low=5 and high=5");
    EXPECT_FT_ERROR(vmap([&](const Tensor&) { return randint(0, 5, {2, -1}, &g); }, 0, 0, r)(
                        zeros({3})),
                    "randint: negative size in shape [2, -1]");
  }
  EXPECT_EQ(g.offset(), 3u);
}

// ---- bernoulli ----

TEST(RandomRules, BernoulliSameSharesTheUniforms) {
  for (DType dtype : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dtype));
    // Example b: probabilities that differ per example (in_dim 1: p is [3, B=4]).
    const Tensor p = Values({3, 4}, 0.0, 1.0, dtype);
    Generator g = At(2);
    Tensor out = vmap([&](const Tensor& q) { return bernoulli(q, &g); }, 1, 0,
                      Randomness::kSame)(p);
    ASSERT_EQ(out.sizes(), (Shape{4, 3}));
    EXPECT_EQ(out.dtype(), dtype);
    for (int64_t b = 0; b < 4; ++b) {
      Generator loop = At(2);  // the same counters for every example
      EXPECT_TRUE(TensorEqual(Example(out, b), bernoulli(contiguous(select(p, 1, b)), &loop)));
    }
    EXPECT_EQ(g.offset(), 2u + 3u);
  }
  // Probabilities 0 and 1 are exact; the uniforms are shared, so a larger p never gives fewer
  // ones than a smaller p at the same position.
  Generator g(kSeed);
  Tensor p = tensor({0.0, 0.0, 0.0, 0.3, 0.3, 0.3, 0.7, 0.7, 0.7, 1.0, 1.0, 1.0}, {4, 3});
  Tensor out = vmap([&](const Tensor& q) { return bernoulli(q, &g); }, 0, 0,
                    Randomness::kSame)(p);
  EXPECT_TRUE(TensorEqual(Example(out, 0), zeros({3}, kFloat64)));
  EXPECT_TRUE(TensorEqual(Example(out, 3), ones({3}, kFloat64)));
  EXPECT_TRUE(TensorEqual(le(Example(out, 1), Example(out, 2)), ones({3}, kBool)));

  // Unbatched p: one draw, unbatched.
  Generator h(kSeed);
  const Tensor q = Values({5});
  TensorList outs = vmap([&](const TensorList& a) { return TensorList{bernoulli(a[1], &h)}; },
                         {0, kNone}, 0, Randomness::kSame)({Values({3}), q});
  Generator ref(kSeed);
  const Tensor once = bernoulli(q, &ref);
  for (int64_t b = 0; b < 3; ++b) EXPECT_TRUE(TensorEqual(Example(outs[0], b), once));
  EXPECT_EQ(h.offset(), 5u);
}

TEST(RandomRules, BernoulliDifferent) {
  const Tensor p = Values({4, 3});
  Generator g = At(1);
  Tensor out = vmap([&](const Tensor& q) { return bernoulli(q, &g); }, 0, 0,
                    Randomness::kDifferent)(p);
  for (int64_t b = 0; b < 4; ++b) {
    Generator loop = At(1 + 3 * b);
    EXPECT_TRUE(TensorEqual(Example(out, b), bernoulli(Example(p, b), &loop)));
  }
  EXPECT_EQ(g.offset(), 1u + 12u);
  // Unbatched p: the same probabilities, other counters per example.
  const Tensor q = full({50}, 0.5, kFloat64);
  Generator h(kSeed);
  TensorList outs = vmap([&](const TensorList& a) { return TensorList{bernoulli(a[1], &h)}; },
                         {0, kNone}, 0, Randomness::kDifferent)({Values({3}), q});
  for (int64_t b = 0; b < 3; ++b) {
    Generator loop = At(50 * b);
    EXPECT_TRUE(TensorEqual(Example(outs[0], b), bernoulli(q, &loop)));
  }
  EXPECT_FALSE(TensorEqual(Example(outs[0], 0), Example(outs[0], 1)));
}

TEST(RandomRules, BernoulliErrorsConsumeNothing) {
  Generator g = At(4);
  Tensor bad = Values({3, 2});
  bad = where(eq(reshape(arange(6), {3, 2}), 3), 1.5, bad);  // example 1 has p = 1.5
  for (Randomness r : {Randomness::kSame, Randomness::kDifferent}) {
    SCOPED_TRACE(RandomnessName(r));
    EXPECT_FT_ERROR(vmap([&](const Tensor& q) { return bernoulli(q, &g); }, 0, 0, r)(bad),
                    "bernoulli: probabilities must be in [0, 1], got 1.5");
    Tensor nan = where(eq(reshape(arange(6), {3, 2}), 0), std::nan(""), Values({3, 2}));
    EXPECT_FT_ERROR(vmap([&](const Tensor& q) { return bernoulli(q, &g); }, 0, 0, r)(nan),
                    "bernoulli: probabilities must be in [0, 1], got nan");
    EXPECT_FT_ERROR(vmap([&](const Tensor& q) { return bernoulli(q, &g); }, 0, 0, r)(
                        zeros({3, 2}, kInt64)),
                    "bernoulli: expected a floating point dtype, got int64 (input of shape [2])");
  }
  EXPECT_EQ(g.offset(), 4u);
}

// ---- dropout ----

TEST(RandomRules, DropoutSameSharesTheMask) {
  for (DType dtype : {kFloat64, kFloat32}) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = Values({4, 6}, -2.0, 2.0, dtype);
    x = where(eq(reshape(arange(24), {4, 6}), 7), std::numeric_limits<double>::infinity(), x);
    Generator g = At(3);
    Tensor out = vmap([&](const Tensor& v) { return dropout(v, 0.4, true, &g); }, 0, 0,
                      Randomness::kSame)(x);
    ASSERT_EQ(out.dtype(), dtype);
    for (int64_t b = 0; b < 4; ++b) {
      Generator loop = At(3);
      EXPECT_TRUE(TensorEqual(Example(out, b), dropout(Example(x, b), 0.4, true, &loop)));
    }
    EXPECT_EQ(g.offset(), 3u + 6u);
    // The same elements are dropped in every example.
    const Tensor kept = ne(out, 0.0);
    for (int64_t b = 1; b < 4; ++b) EXPECT_TRUE(TensorEqual(Example(kept, b), Example(kept, 0)));
  }
  // Unbatched x: one draw, unbatched.
  Generator h(kSeed);
  const Tensor x = Values({5}, 1.0, 2.0);
  TensorList outs = vmap(
      [&](const TensorList& a) { return TensorList{dropout(a[1], 0.5, true, &h)}; }, {0, kNone}, 0,
      Randomness::kSame)({Values({3}), x});
  Generator ref(kSeed);
  const Tensor once = dropout(x, 0.5, true, &ref);
  for (int64_t b = 0; b < 3; ++b) EXPECT_TRUE(TensorEqual(Example(outs[0], b), once));
}

TEST(RandomRules, DropoutDifferent) {
  const Tensor x = Values({5, 3}, 1.0, 2.0);  // batched at dim 1: [5, B=3]
  Generator g = At(9);
  Tensor out = vmap([&](const Tensor& v) { return dropout(v, 0.25, true, &g); }, 1, 0,
                    Randomness::kDifferent)(x);
  for (int64_t b = 0; b < 3; ++b) {
    Generator loop = At(9 + 5 * b);
    EXPECT_TRUE(TensorEqual(Example(out, b),
                            dropout(contiguous(select(x, 1, b)), 0.25, true, &loop)));
  }
  EXPECT_EQ(g.offset(), 9u + 15u);
  // Unbatched x.
  const Tensor y = Values({40}, 1.0, 2.0);
  Generator h(kSeed);
  TensorList outs = vmap(
      [&](const TensorList& a) { return TensorList{dropout(a[1], 0.5, true, &h)}; }, {0, kNone}, 0,
      Randomness::kDifferent)({Values({3}), y});
  for (int64_t b = 0; b < 3; ++b) {
    Generator loop = At(40 * b);
    EXPECT_TRUE(TensorEqual(Example(outs[0], b), dropout(y, 0.5, true, &loop)));
  }
  EXPECT_FALSE(TensorEqual(Example(outs[0], 0), Example(outs[0], 1)));
}

TEST(RandomRules, DropoutWithoutDrawsAndErrors) {
  Generator g(kSeed);
  for (Randomness r : {Randomness::kSame, Randomness::kDifferent}) {
    SCOPED_TRACE(RandomnessName(r));
    auto f = [&](double p, bool train) {
      return [&g, p, train](const TensorList& a) {
        return TensorList{dropout(a[0], p, train, &g), dropout(a[1], p, train, &g)};
      };
    };
    // eval mode and p == 0 give x; p == 1 gives zeros; nothing is drawn.
    const Tensor x = Values({3, 2});
    const Tensor y = Values({4});
    for (auto [p, train] : std::vector<std::pair<double, bool>>{{0.5, false}, {0.0, true}}) {
      TensorList out = vmap(f(p, train), {0, kNone}, 0, r)({x, y});
      EXPECT_TRUE(TensorEqual(out[0], x));
      EXPECT_TRUE(TensorEqual(Example(out[1], 2), y));
    }
    TensorList out = vmap(f(1.0, true), {1, kNone}, 0, r)({x, y});
    EXPECT_TRUE(TensorEqual(out[0], zeros({2, 3}, kFloat64)));
    EXPECT_TRUE(TensorEqual(out[1], zeros({2, 4}, kFloat64)));
    EXPECT_EQ(g.offset(), 0u);

    EXPECT_FT_ERROR(vmap(f(1.5, true), 0, 0, r)({x, x}), "dropout: p must be in [0, 1], got 1.5");
    EXPECT_FT_ERROR(vmap(f(-0.5, false), 0, 0, r)({x, x}), "dropout: p must be in [0, 1]");
    EXPECT_FT_ERROR(vmap(f(0.5, true), 0, 0, r)({ones({3, 2}, kInt64), x}),
                    "dropout: expected a floating point dtype, got int64 (input of shape [2])");
    EXPECT_EQ(g.offset(), 0u);
  }
}

// ---- chunks ----

TEST(RandomRules, ChunkedEqualsUnchunkedWithSeveralRandomCalls) {
  const Tensor x = Values({5, 3}, 0.0, 1.0);
  const Tensor p = Values({3, 5}, 0.0, 1.0, kFloat64, 7);  // batched at dim 1
  auto run = [&](Randomness r, std::optional<int64_t> chunk, Generator* g) {
    auto f = [g](const TensorList& a) {
      return TensorList{rand_like(a[0], g), randn_like(a[0], g), bernoulli(a[1], g),
                        dropout(a[0], 0.3, true, g), randint(0, 1000, {2}, g), rand_like(a[2], g)};
    };
    return vmap(f, {0, 1, kNone}, 0, r, chunk)({x, p, zeros({2, 2})});
  };
  for (Randomness r : {Randomness::kDifferent, Randomness::kSame}) {
    SCOPED_TRACE(RandomnessName(r));
    Generator whole = At(11);
    const TensorList expected = run(r, std::nullopt, &whole);
    for (int64_t chunk : {1, 2, 3, 4, 5, 8}) {
      SCOPED_TRACE(chunk);
      Generator g = At(11);
      const TensorList got = run(r, chunk, &g);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(TensorEqual(got[i], expected[i])) << i;
      EXPECT_EQ(g.offset(), whole.offset());
    }
  }
  // kDifferent: example b of the first draw is counters 11 + 3b + i; the whole batch is claimed
  // by each call in turn.
  Generator g = At(11);
  const TensorList got = run(Randomness::kDifferent, 2, &g);
  for (int64_t b = 0; b < 5; ++b) {
    EXPECT_TRUE(TensorEqual(Example(got[0], b), CounterTensor({3}, 11 + 3 * b, false)));
    EXPECT_TRUE(TensorEqual(Example(got[1], b), CounterTensor({3}, 26 + 3 * b, true)));
  }
  EXPECT_EQ(g.offset(), 11u + 15u * 4u + 10u + 20u);
}

TEST(RandomRules, ChunksMustMakeTheSameRandomCalls) {
  // The first chunk draws rand_like(x) (3 numbers per example); the later chunks draw
  // something else, more often, or not at all. Each is an error under both randomness
  // modes that replay the first chunk's draws, and the layer stack is left empty.
  Generator g(kSeed);
  struct Later {
    const char* what;  // in the message
    std::function<Tensor(const Tensor&)> draw;
  };
  const std::vector<Later> later = {
      {"this call draws 1 numbers per example; the first chunk's call 0 drew 3",
       [&](const Tensor& x) { return rand_like(sum(x, {0}, true), &g) + x; }},
      {"this chunk makes random call 1 but the first chunk made only 1",
       [&](const Tensor& x) {
         Tensor a = rand_like(x, &g);  // sequenced: the second call is the extra one
         return a + rand_like(x, &g);
       }},
      {"the chunk at example 2 made 0 random calls, the first chunk 1",
       [&](const Tensor& x) { return x * 2.0; }},
  };
  for (const Later& l : later) {
    for (Randomness r : {Randomness::kDifferent, Randomness::kSame}) {
      SCOPED_TRACE(std::string(l.what) + " " + RandomnessName(r));
      int calls = 0;
      auto f = [&](const Tensor& x) { return ++calls == 1 ? rand_like(x, &g) : l.draw(x); };
      EXPECT_FT_ERROR(vmap(f, 0, 0, r, 2)(zeros({4, 3})),
                      std::string("', every chunk must make the same random calls (") + l.what);
      EXPECT_TRUE(LayerStack::empty()) << LayerStack::DebugString();
    }
  }
  // The same calls in every chunk pass.
  auto same = [&](const Tensor& x) { return rand_like(x, &g) + rand_like(sum(x, {0}, true), &g); };
  EXPECT_EQ(vmap(same, 0, 0, Randomness::kDifferent, 2)(zeros({5, 3})).sizes(), Shape({5, 3}));
}

// ---- nested vmap ----

TEST(RandomRules, NestedDifferentGivesDistinctValuesEverywhere) {
  const Tensor x = zeros({2, 3, 4}, kFloat64);
  auto nested = [](Generator* g, std::optional<int64_t> inner_chunk,
                   std::optional<int64_t> outer_chunk) {
    TensorListFn inner = vmap(
        [g](const TensorList& a) { return TensorList{rand_like(a[0], g), randn_like(a[0], g)}; },
        0, 0, Randomness::kDifferent, inner_chunk);
    return vmap(inner, 0, 0, Randomness::kDifferent, outer_chunk);
  };
  Generator g(kSeed);
  const TensorList whole = nested(&g, std::nullopt, std::nullopt)({x});
  ASSERT_EQ(whole[0].sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(CountDistinct({whole[0]}), 24u);
  EXPECT_EQ(CountDistinct({whole[1]}), 24u);
  // The two calls use disjoint counters: their uniforms never coincide.
  Generator u(kSeed);
  const Tensor uniforms = nested(&u, std::nullopt, std::nullopt)({x})[0];
  EXPECT_EQ(g.offset(), 48u);
  Generator again(kSeed);
  const Tensor twice = vmap(vmap([&](const Tensor& v) { return rand_like(rand_like(v, &again), &again); },
                                 0, 0, Randomness::kDifferent),
                            0, 0, Randomness::kDifferent)(x);
  EXPECT_EQ(CountDistinct({uniforms, twice}), 48u);
  EXPECT_EQ(again.offset(), 48u);

  // Chunking the outer level reproduces the unchunked numbers and generator position.
  for (int64_t chunk : {1, 3}) {
    SCOPED_TRACE(chunk);
    Generator c(kSeed);
    const TensorList got = nested(&c, std::nullopt, chunk)({x});
    EXPECT_TRUE(TensorEqual(got[0], whole[0]));
    EXPECT_TRUE(TensorEqual(got[1], whole[1]));
    EXPECT_EQ(c.offset(), g.offset());
  }
  // Chunking the inner level keeps every sample distinct.
  for (auto [inner, outer] : std::vector<std::pair<int64_t, std::optional<int64_t>>>{
           {1, std::nullopt}, {2, std::nullopt}, {2, 1}}) {
    Generator c(kSeed);
    const TensorList got = nested(&c, inner, outer)({x});
    EXPECT_EQ(CountDistinct({got[0]}), 24u);
    EXPECT_EQ(CountDistinct({got[1]}), 24u);
    EXPECT_GE(c.offset(), 48u);
  }
}

TEST(RandomRules, NestedMixedRandomness) {
  const Tensor x = zeros({2, 3, 4}, kFloat64);
  // Inner kSame inside outer kDifferent: equal along the inner batch, different across the
  // outer one; example b1 is the draw at counters 4 * b1.
  Generator g(kSeed);
  Tensor out = vmap(vmap([&](const Tensor& v) { return rand_like(v, &g); }, 0, 0,
                         Randomness::kSame),
                    0, 0, Randomness::kDifferent)(x);
  for (int64_t b1 = 0; b1 < 2; ++b1) {
    for (int64_t b2 = 0; b2 < 3; ++b2) {
      EXPECT_TRUE(TensorEqual(contiguous(select(Example(out, b1), 0, b2)),
                              CounterTensor({4}, 4 * b1, false)));
    }
  }
  EXPECT_EQ(g.offset(), 8u);
  // bernoulli with p batched at both levels, kSame at both: one set of uniforms (p is wrapped
  // at the lower level when the inner rule runs).
  const Tensor p = Values({2, 3, 4});
  Generator h(kSeed);
  auto same2 = [&](Randomness outer) {
    return vmap(vmap([&](const Tensor& q) { return bernoulli(q, &h); }, 0, 0, Randomness::kSame),
                0, 0, outer);
  };
  out = same2(Randomness::kSame)(p);
  for (int64_t b1 = 0; b1 < 2; ++b1) {
    for (int64_t b2 = 0; b2 < 3; ++b2) {
      Generator loop(kSeed);
      EXPECT_TRUE(TensorEqual(contiguous(select(Example(out, b1), 0, b2)),
                              bernoulli(contiguous(select(Example(p, b1), 0, b2)), &loop)));
    }
  }
  EXPECT_EQ(h.offset(), 4u);
  // Inner kSame, outer kDifferent: example (b1, b2) uses counters 4 * b1 + i.
  h = Generator(kSeed);
  out = same2(Randomness::kDifferent)(p);
  for (int64_t b1 = 0; b1 < 2; ++b1) {
    for (int64_t b2 = 0; b2 < 3; ++b2) {
      Generator loop = At(4 * b1);
      EXPECT_TRUE(TensorEqual(contiguous(select(Example(out, b1), 0, b2)),
                              bernoulli(contiguous(select(Example(p, b1), 0, b2)), &loop)));
    }
  }
  EXPECT_EQ(h.offset(), 8u);
  // Invalid probabilities are found through the lower level too, and consume nothing.
  h = Generator(kSeed);
  const Tensor bad = where(eq(reshape(arange(24), {2, 3, 4}), 17), -0.25, p);
  EXPECT_FT_ERROR(same2(Randomness::kSame)(bad), "bernoulli: probabilities must be in [0, 1]");
  EXPECT_FT_ERROR(same2(Randomness::kDifferent)(bad), "bernoulli: probabilities must be in [0, 1]");
  EXPECT_EQ(h.offset(), 0u);
}

}  // namespace
}  // namespace ft

#include "ops/random.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "dispatch/dispatch.h"
#include "dispatch/operator.h"
#include "gtest/gtest.h"
#include "kernels/random.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tests/test_util.h"

namespace ft {
namespace {

constexpr int64_t kSamples = 100000;
const std::vector<DType> kAllDTypes = {kFloat32, kFloat64, kInt64, kBool};
const std::vector<DType> kFloatDTypes = {kFloat32, kFloat64};

struct Moments {
  double mean;
  double var;
};

// Two-pass sample mean and (population) variance.
Moments ComputeMoments(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  double sq = 0.0;
  for (double x : v) sq += (x - mean) * (x - mean);
  return {mean, sq / static_cast<double>(v.size())};
}

// A 2x3 tensor viewed transposed: MakeDense over a 3x2 buffer with swapped strides.
Tensor Transposed(const std::vector<double>& row_major_2x3, DType dtype) {
  const std::vector<double>& v = row_major_2x3;
  Tensor base = kernels::to(tensor({v[0], v[3], v[1], v[4], v[2], v[5]}, {3, 2}), dtype);
  Tensor t = MakeDense(base.storage(), dtype, {2, 3}, {1, 2}, 0);
  EXPECT_FALSE(t.is_contiguous());
  return t;
}

// An expanded view: one value broadcast to `n` elements with stride 0.
Tensor Expanded(double value, int64_t n, DType dtype) {
  Tensor one = kernels::to(tensor({value}), dtype);
  return MakeDense(one.storage(), dtype, {n}, {0}, 0);
}

// The float32 value rand_like draws from counter c: the top 24 of the 53 uniform bits.
double UniformFloat32(uint64_t seed, uint64_t c) {
  return std::ldexp(std::floor(std::ldexp(Generator::Uniform(seed, c), 24)), -24);
}

// ---------------------------------------------------------------------------------------
// *_like factories

TEST(LikeFactories, ValuesShapesAndDtypes) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = kernels::to(tensor({1.0, 0.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}), dtype);
    EXPECT_TENSOR_EQ(zeros_like(x), zeros({2, 3}, dtype));
    EXPECT_TENSOR_EQ(ones_like(x), ones({2, 3}, dtype));
    EXPECT_TENSOR_EQ(full_like(x, 1), ones({2, 3}, dtype));
    // A fresh tensor, never x or a view of it.
    Tensor z = zeros_like(x);
    EXPECT_FALSE(z.is_same(x));
    EXPECT_NE(z.impl()->raw_data(), x.impl()->raw_data());
    EXPECT_TRUE(z.is_contiguous());
  }
}

TEST(LikeFactories, FullLikeConvertsLikePyTorch) {
  Tensor i = tensor(std::vector<int64_t>{1, 2, 3});
  EXPECT_TENSOR_EQ(full_like(i, 2.7), tensor(std::vector<int64_t>{2, 2, 2}));
  EXPECT_TENSOR_EQ(full_like(i, -2.7), tensor(std::vector<int64_t>{-2, -2, -2}));
  EXPECT_TENSOR_EQ(full_like(i, -0x1p63), full({3}, std::numeric_limits<int64_t>::min(), kInt64));
  Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_TENSOR_EQ(full_like(b, 0.5), tensor(std::vector<bool>{true, true}));
  EXPECT_TENSOR_EQ(full_like(b, 0), tensor(std::vector<bool>{false, false}));
  EXPECT_TENSOR_EQ(full_like(b, int64_t{-7}), tensor(std::vector<bool>{true, true}));
  Tensor f = tensor({1.0f, 2.0f});
  EXPECT_TENSOR_EQ(full_like(f, 1.5), tensor({1.5f, 1.5f}));
  EXPECT_TENSOR_EQ(full_like(f, 3), tensor({3.0f, 3.0f}));
  EXPECT_TENSOR_EQ(full_like(f, true), tensor({1.0f, 1.0f}));
  // Non-finite floats are representable in floating dtypes.
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(full_like(f, inf).to_vector<double>(), (std::vector<double>{inf, inf}));
  EXPECT_TRUE(std::isnan(full_like(f, std::nan("")).to_vector<double>()[0]));
  Tensor d = tensor({1.0, 2.0});
  EXPECT_TENSOR_EQ(full_like(d, 1e300), tensor({1e300, 1e300}));
}

TEST(LikeFactories, DtypeOverloads) {
  Tensor x = tensor({1.0f, 2.0f, 3.0f}, {3, 1});
  EXPECT_TENSOR_EQ(zeros_like(x, kBool), tensor(std::vector<bool>{false, false, false}, {3, 1}));
  EXPECT_TENSOR_EQ(ones_like(x, kInt64), tensor(std::vector<int64_t>{1, 1, 1}, {3, 1}));
  EXPECT_TENSOR_EQ(full_like(x, 2.5, kFloat64), tensor({2.5, 2.5, 2.5}, {3, 1}));
  EXPECT_TENSOR_EQ(full_like(x, 2.5, kInt64), tensor(std::vector<int64_t>{2, 2, 2}, {3, 1}));
  EXPECT_TENSOR_EQ(zeros_like(x, kFloat32), zeros({3, 1}));
  Tensor i = tensor(std::vector<int64_t>{4});
  EXPECT_TENSOR_EQ(ones_like(i, kFloat32), tensor({1.0f}));
}

TEST(LikeFactories, NonContiguousRankZeroSizeZeroAndSizeOne) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const std::vector<double> v = {1.0, 2.0, 0.0, 4.0, 5.0, 6.0};
    for (const Tensor& x : {Transposed(v, dtype),
                            testing::NonContiguousCopy(kernels::to(tensor(v, {2, 3}), dtype))}) {
      ASSERT_FALSE(x.is_contiguous());
      Tensor z = zeros_like(x);
      EXPECT_TRUE(z.is_contiguous());
      EXPECT_TENSOR_EQ(z, zeros({2, 3}, dtype));
      EXPECT_TENSOR_EQ(ones_like(x), ones({2, 3}, dtype));
      EXPECT_TENSOR_EQ(full_like(x, 1, kFloat64), ones({2, 3}, kFloat64));
    }
    Tensor e = Expanded(2.0, 4, dtype);
    Tensor o = ones_like(e);
    EXPECT_EQ(o.strides(), (IntArrayRef{1}));
    EXPECT_TENSOR_EQ(o, ones({4}, dtype));
    // Rank 0.
    Tensor s = kernels::to(scalar_tensor(3.0), dtype);
    EXPECT_EQ(zeros_like(s).dim(), 0);
    EXPECT_TENSOR_EQ(full_like(s, 1), ones({}, dtype));
    // Size 0 and size-1 dims.
    Tensor empty0 = zeros({0, 3}, dtype);
    EXPECT_EQ(zeros_like(empty0).sizes(), (IntArrayRef{0, 3}));
    EXPECT_EQ(ones_like(empty0).numel(), 0);
    EXPECT_EQ(full_like(empty0, 5, kFloat64).sizes(), (IntArrayRef{0, 3}));
    EXPECT_TENSOR_EQ(ones_like(zeros({1, 1, 2}, dtype)), ones({1, 1, 2}, dtype));
  }
}

TEST(LikeFactories, FullLikeRejectsValuesThatOverflow) {
  Tensor i = tensor(std::vector<int64_t>{1});
  EXPECT_FT_ERROR(full_like(i, std::nan("")), "full_like: value nan cannot be converted to int64");
  EXPECT_FT_ERROR(full_like(i, std::numeric_limits<double>::infinity()),
                  "full_like: value inf cannot be converted to int64 without overflow");
  EXPECT_FT_ERROR(full_like(i, -std::numeric_limits<double>::infinity()),
                  "full_like: value -inf cannot be converted to int64");
  EXPECT_FT_ERROR(full_like(i, 0x1p63), "cannot be converted to int64 without overflow");
  EXPECT_FT_ERROR(full_like(i, -1e19), "full_like: value -1e+19 cannot be converted to int64");
  Tensor f = tensor({1.0f});
  EXPECT_FT_ERROR(full_like(f, 1e39), "full_like: value 1e+39 cannot be converted to float32");
  EXPECT_FT_ERROR(full_like(f, -1e39), "full_like: value -1e+39 cannot be converted to float32");
  // The dtype overload checks the requested dtype, not x's.
  EXPECT_FT_ERROR(full_like(f, 1e30, kInt64),
                  "full_like: value 1e+30 cannot be converted to int64");
  EXPECT_FT_ERROR(full_like(tensor({1.0}), 1e300, kFloat32), "cannot be converted to float32");
  EXPECT_FT_ERROR(full_like(f, std::nan(""), kInt64), "full_like: value nan");
}

// ---------------------------------------------------------------------------------------
// rand_like / randn_like

TEST(RandLike, ElementIUsesCounterOffsetPlusI) {
  Generator g(123);
  g.set_offset(10);
  Tensor r = rand_like(zeros({3, 4}, kFloat64), &g);
  EXPECT_EQ(g.offset(), 22u);
  ASSERT_EQ(r.dtype(), kFloat64);
  ASSERT_EQ(r.sizes(), (IntArrayRef{3, 4}));
  const std::vector<double> v = r.to_vector<double>();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(v[i], Generator::Uniform(123, 10 + i)) << i;

  g.set_offset(10);
  Tensor f = rand_like(zeros({3, 4}), &g);
  ASSERT_EQ(f.dtype(), kFloat32);
  const std::vector<double> fv = f.to_vector<double>();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(fv[i], UniformFloat32(123, 10 + i)) << i;
}

TEST(RandnLike, ElementIUsesCounterOffsetPlusI) {
  Generator g(5);
  g.set_offset(3);
  Tensor r = randn_like(zeros({2, 3}, kFloat64), &g);
  EXPECT_EQ(g.offset(), 9u);
  const std::vector<double> v = r.to_vector<double>();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(v[i], Generator::Normal(5, 3 + i)) << i;
  g.set_offset(3);
  Tensor f = randn_like(zeros({2, 3}), &g);
  ASSERT_EQ(f.dtype(), kFloat32);
  const std::vector<float> fv = f.to_vector<float>();
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(fv[i], static_cast<float>(Generator::Normal(5, 3 + i))) << i;
  }
}

TEST(RandLike, UniformStatistics) {
  // U[0, 1): mean 1/2, variance 1/12. With n = 1e5, the standard error of the mean is
  // sqrt(1/12 / n) = 9.1e-4 and that of the variance sqrt((mu4 - sigma^4) / n) with
  // mu4 = 1/80, i.e. 2.4e-4. Bounds are 5 standard errors. Each of 10 histogram bins holds
  // a fraction 0.1 with standard error sqrt(0.09 / n) = 9.5e-4.
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Generator g(2024);
    const std::vector<double> v = rand_like(zeros({kSamples}, dtype), &g).to_vector<double>();
    const Moments m = ComputeMoments(v);
    EXPECT_NEAR(m.mean, 0.5, 5 * 9.1e-4);
    EXPECT_NEAR(m.var, 1.0 / 12.0, 5 * 2.4e-4);
    std::vector<int64_t> bins(10, 0);
    for (double x : v) {
      ASSERT_GE(x, 0.0);
      ASSERT_LT(x, 1.0);
      ++bins[static_cast<size_t>(x * 10)];
    }
    for (int64_t b : bins) EXPECT_NEAR(static_cast<double>(b) / kSamples, 0.1, 5 * 9.5e-4);
  }
}

TEST(RandnLike, NormalStatistics) {
  // N(0, 1): standard error of the mean 1/sqrt(n) = 3.2e-3, of the variance sqrt(2/n) =
  // 4.5e-3; P(|z| < 1) = 0.6827 with standard error sqrt(0.6827 * 0.3173 / n) = 1.5e-3.
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Generator g(77);
    const std::vector<double> v = randn_like(zeros({kSamples}, dtype), &g).to_vector<double>();
    const Moments m = ComputeMoments(v);
    EXPECT_NEAR(m.mean, 0.0, 5 * 3.2e-3);
    EXPECT_NEAR(m.var, 1.0, 5 * 4.5e-3);
    int64_t within = 0;
    for (double x : v) {
      ASSERT_TRUE(std::isfinite(x));
      within += std::fabs(x) < 1.0;
    }
    EXPECT_NEAR(static_cast<double>(within) / kSamples, 0.6827, 5 * 1.5e-3);
  }
}

TEST(RandLike, LayoutRankZeroSizeZeroAndSizeOne) {
  using RandFn = Tensor (*)(const Tensor&, Generator*);
  for (RandFn op : {static_cast<RandFn>(&rand_like), static_cast<RandFn>(&randn_like)}) {
    for (DType dtype : kFloatDTypes) {
      SCOPED_TRACE(DTypeName(dtype));
      const std::vector<double> v = {1, 2, 3, 4, 5, 6};
      Tensor dense = kernels::to(tensor(v, {2, 3}), dtype);
      Generator g(9);
      Tensor expected = op(dense, &g);
      // Only x's shape and dtype matter: any layout gives the same draw.
      for (const Tensor& x : {Transposed(v, dtype), testing::NonContiguousCopy(dense)}) {
        g.set_offset(0);
        Tensor r = op(x, &g);
        EXPECT_TRUE(r.is_contiguous());
        EXPECT_TENSOR_EQ(r, expected);
      }
      g.set_offset(0);
      Tensor from_expanded = op(Expanded(1.0, 6, dtype), &g);
      EXPECT_EQ(from_expanded.to_vector<double>(), expected.to_vector<double>());
      // Rank 0: one counter.
      g.set_offset(0);
      Tensor s = op(kernels::to(scalar_tensor(1.0), dtype), &g);
      EXPECT_EQ(s.dim(), 0);
      EXPECT_EQ(s.item<double>(), expected.to_vector<double>()[0]);
      EXPECT_EQ(g.offset(), 1u);
      // Size 0: nothing drawn.
      Tensor e = op(zeros({0, 3}, dtype), &g);
      EXPECT_EQ(e.sizes(), (IntArrayRef{0, 3}));
      EXPECT_EQ(e.dtype(), dtype);
      EXPECT_EQ(g.offset(), 1u);
      // Size-1 dims.
      g.set_offset(0);
      Tensor one = op(zeros({1, 1, 2}, dtype), &g);
      EXPECT_EQ(one.sizes(), (IntArrayRef{1, 1, 2}));
      const std::vector<double> ev = expected.to_vector<double>();
      EXPECT_EQ(one.to_vector<double>(), (std::vector<double>{ev[0], ev[1]}));
    }
  }
}

TEST(RandLike, RejectsNonFloatingInputsWithoutDrawing) {
  Generator g(1);
  EXPECT_FT_ERROR(rand_like(tensor(std::vector<int64_t>{1, 2}), &g),
                  "rand_like: expected a floating point or complex dtype, got int64");
  EXPECT_FT_ERROR(rand_like(tensor(std::vector<bool>{true}), &g),
                  "rand_like: expected a floating point or complex dtype, got bool");
  EXPECT_FT_ERROR(randn_like(tensor(std::vector<int64_t>{1, 2}), &g),
                  "randn_like: expected a floating point or complex dtype, got int64");
  EXPECT_FT_ERROR(randn_like(tensor(std::vector<bool>{true}), &g),
                  "randn_like: expected a floating point or complex dtype, got bool");
  EXPECT_EQ(g.offset(), 0u);
}

// ---------------------------------------------------------------------------------------
// Reproducibility and the chunking contract (NOTE: [Random counters])

TEST(Randomness, SameSeedSameValuesDifferentSeedsAndDrawsDiffer) {
  Tensor x = zeros({4, 5}, kFloat64);
  Generator a(11), b(11), c(12);
  Tensor ra = rand_like(x, &a);
  EXPECT_TENSOR_EQ(rand_like(x, &b), ra);
  Tensor rc = rand_like(x, &c);
  Tensor ra2 = rand_like(x, &a);
  const std::vector<double> va = ra.to_vector<double>();
  const std::vector<double> vc = rc.to_vector<double>();
  const std::vector<double> va2 = ra2.to_vector<double>();
  for (size_t i = 0; i < va.size(); ++i) {
    EXPECT_NE(va[i], vc[i]) << i;   // a different seed
    EXPECT_NE(va[i], va2[i]) << i;  // the next draw on the same generator
  }
  // manual_seed resets the offset too.
  a.manual_seed(11);
  EXPECT_TENSOR_EQ(rand_like(x, &a), ra);
  // The other ops reproduce as well.
  Generator d(3), e(3);
  EXPECT_TENSOR_EQ(randn_like(x, &d), randn_like(x, &e));
  EXPECT_TENSOR_EQ(bernoulli(full_like(x, 0.5), &d), bernoulli(full_like(x, 0.5), &e));
  EXPECT_TENSOR_EQ(dropout(ones_like(x), 0.5, true, &d), dropout(ones_like(x), 0.5, true, &e));
  EXPECT_TENSOR_EQ(randint(0, 1000, {4, 5}, &d), randint(0, 1000, {4, 5}, &e));
  EXPECT_FALSE(testing::TensorEqual(randint(0, 1000, {4, 5}, &d), randint(0, 1000, {4, 5}, &d)));
}

TEST(Randomness, NullGeneratorUsesTheThreadDefault) {
  Tensor x = zeros({3, 2});
  manual_seed(2718);
  Tensor a = rand_like(x);
  EXPECT_EQ(DefaultGenerator().offset(), 6u);
  Tensor a_next = rand_like(x);
  EXPECT_FALSE(testing::TensorEqual(a, a_next));
  manual_seed(2718);
  EXPECT_TENSOR_EQ(rand_like(x, nullptr), a);
  Generator g(2718);
  EXPECT_TENSOR_EQ(rand_like(x, &g), a);
  manual_seed(5);
  Tensor n = randn_like(x);
  Tensor bern = bernoulli(full_like(x, 0.5));
  Tensor drop = dropout(ones_like(x), 0.5);
  Tensor ints = randint(10, {3, 2});
  Generator h(5);
  EXPECT_TENSOR_EQ(randn_like(x, &h), n);
  EXPECT_TENSOR_EQ(bernoulli(full_like(x, 0.5), &h), bern);
  EXPECT_TENSOR_EQ(dropout(ones_like(x), 0.5, true, &h), drop);
  EXPECT_TENSOR_EQ(randint(0, 10, {3, 2}, &h), ints);
  EXPECT_EQ(DefaultGenerator().offset(), h.offset());
}

// Drawing [6, 5] at once equals drawing [2, 5] then [4, 5] from the same offset.
void ExpectChunksMatch(const std::function<Tensor(int64_t rows, Generator*)>& draw) {
  Generator g(31337);
  g.set_offset(100);
  const std::vector<double> whole = draw(6, &g).to_vector<double>();
  EXPECT_EQ(g.offset(), 130u);
  g.set_offset(100);
  std::vector<double> chunks = draw(2, &g).to_vector<double>();
  const std::vector<double> rest = draw(4, &g).to_vector<double>();
  chunks.insert(chunks.end(), rest.begin(), rest.end());
  EXPECT_EQ(g.offset(), 130u);
  EXPECT_EQ(chunks, whole);
}

TEST(Randomness, ChunkedDrawsEqualOneDraw) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    ExpectChunksMatch([&](int64_t rows, Generator* g) {
      return rand_like(zeros({rows, 5}, dtype), g);
    });
    ExpectChunksMatch([&](int64_t rows, Generator* g) {
      return randn_like(zeros({rows, 5}, dtype), g);
    });
    ExpectChunksMatch([&](int64_t rows, Generator* g) {
      return bernoulli(full_like(zeros({rows, 5}, dtype), 0.5), g);
    });
    ExpectChunksMatch([&](int64_t rows, Generator* g) {
      return dropout(ones({rows, 5}, dtype), 0.3, true, g);
    });
  }
  ExpectChunksMatch([](int64_t rows, Generator* g) { return randint(-50, 50, {rows, 5}, g); });
  // A transposed (non-contiguous) batch chunked along its logical rows.
  Tensor p_base = rand_like(zeros({5, 6}, kFloat64));
  Tensor p = MakeDense(p_base.storage(), kFloat64, {6, 5}, {1, 6}, 0);
  ExpectChunksMatch([&](int64_t rows, Generator* g) {
    // rows 0..1 then 2..5, or all 6: slice the logical rows of the transposed view.
    const int64_t start = rows == 4 ? 2 : 0;
    return bernoulli(MakeDense(p.storage(), kFloat64, {rows, 5}, {1, 6}, start), g);
  });
}

// ---------------------------------------------------------------------------------------
// bernoulli

TEST(Bernoulli, ElementIIsUniformCounterBelowP) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const std::vector<double> probs = {0.0, 0.1, 0.25, 0.5, 0.5, 0.75, 0.9, 1.0, 0.33, 0.66};
    Tensor p = kernels::to(tensor(probs, {2, 5}), dtype);
    Generator g(8);
    g.set_offset(40);
    Tensor r = bernoulli(p, &g);
    EXPECT_EQ(g.offset(), 50u);
    ASSERT_EQ(r.dtype(), dtype);
    ASSERT_EQ(r.sizes(), (IntArrayRef{2, 5}));
    const std::vector<double> v = r.to_vector<double>();
    const std::vector<double> pv = p.to_vector<double>();
    for (int i = 0; i < 10; ++i) {
      EXPECT_EQ(v[i], Generator::Uniform(8, 40 + i) < pv[i] ? 1.0 : 0.0) << i;
    }
  }
}

TEST(Bernoulli, ExtremesAndStatistics) {
  Generator g(4);
  EXPECT_TENSOR_EQ(bernoulli(zeros({1000}), &g), zeros({1000}));
  EXPECT_TENSOR_EQ(bernoulli(ones({1000}, kFloat64), &g), ones({1000}, kFloat64));
  // Bernoulli(0.3): standard error of the mean sqrt(0.3 * 0.7 / n) = 1.45e-3; the sample
  // variance is m(1 - m), within 5 SE of 0.21 when m is.
  for (DType dtype : kFloatDTypes) {
    const std::vector<double> v = bernoulli(full({kSamples}, 0.3, dtype), &g).to_vector<double>();
    for (double x : v) ASSERT_TRUE(x == 0.0 || x == 1.0);
    const Moments m = ComputeMoments(v);
    EXPECT_NEAR(m.mean, 0.3, 5 * 1.45e-3);
    EXPECT_NEAR(m.var, 0.21, 5 * 1.45e-3 * 0.4);  // |d(m(1-m))/dm| = |1 - 2m| = 0.4
  }
  // Per-element probabilities: alternating 0.2 / 0.7 over 2 * 5e4 elements. Standard errors
  // sqrt(0.16 / 5e4) = 1.8e-3 and sqrt(0.21 / 5e4) = 2.05e-3.
  std::vector<double> probs(kSamples);
  for (int64_t i = 0; i < kSamples; ++i) probs[i] = i % 2 == 0 ? 0.2 : 0.7;
  const std::vector<double> v = bernoulli(tensor(probs), &g).to_vector<double>();
  double even = 0.0, odd = 0.0;
  for (int64_t i = 0; i < kSamples; ++i) (i % 2 == 0 ? even : odd) += v[i];
  EXPECT_NEAR(even / (kSamples / 2), 0.2, 5 * 1.8e-3);
  EXPECT_NEAR(odd / (kSamples / 2), 0.7, 5 * 2.05e-3);
}

TEST(Bernoulli, LayoutRankZeroSizeZeroAndSizeOne) {
  const std::vector<double> probs = {0.1, 0.9, 0.5, 0.3, 0.7, 0.5};
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor dense = kernels::to(tensor(probs, {2, 3}), dtype);
    Generator g(21);
    Tensor expected = bernoulli(dense, &g);
    for (const Tensor& p : {Transposed(probs, dtype), testing::NonContiguousCopy(dense)}) {
      ASSERT_FALSE(p.is_contiguous());
      g.set_offset(0);
      Tensor r = bernoulli(p, &g);
      EXPECT_TRUE(r.is_contiguous());
      EXPECT_TENSOR_EQ(r, expected);
    }
    // Expanded probabilities: element i still uses counter i.
    g.set_offset(0);
    const std::vector<double> ev = bernoulli(Expanded(0.5, 6, dtype), &g).to_vector<double>();
    for (int i = 0; i < 6; ++i) EXPECT_EQ(ev[i], Generator::Uniform(21, i) < 0.5 ? 1.0 : 0.0);
    // Rank 0, size 0, size-1 dims.
    g.set_offset(0);
    Tensor s = bernoulli(kernels::to(scalar_tensor(0.5), dtype), &g);
    EXPECT_EQ(s.dim(), 0);
    EXPECT_EQ(s.item<double>(), Generator::Uniform(21, 0) < 0.5 ? 1.0 : 0.0);
    Tensor e = bernoulli(zeros({3, 0}, dtype), &g);
    EXPECT_EQ(e.sizes(), (IntArrayRef{3, 0}));
    EXPECT_EQ(g.offset(), 1u);
    EXPECT_TENSOR_EQ(bernoulli(ones({1, 2, 1}, dtype), &g), ones({1, 2, 1}, dtype));
  }
}

TEST(Bernoulli, RejectsBadInputsWithoutDrawing) {
  Generator g(1);
  EXPECT_FT_ERROR(bernoulli(tensor(std::vector<int64_t>{0, 1}), &g),
                  "bernoulli: expected a floating point dtype, got int64");
  EXPECT_FT_ERROR(bernoulli(tensor(std::vector<bool>{true}), &g),
                  "bernoulli: expected a floating point dtype, got bool");
  EXPECT_FT_ERROR(bernoulli(tensor({0.5, 1.5}), &g),
                  "bernoulli: probabilities must be in [0, 1], got 1.5");
  EXPECT_FT_ERROR(bernoulli(tensor({-0.5f}), &g),
                  "bernoulli: probabilities must be in [0, 1], got -0.5");
  EXPECT_FT_ERROR(bernoulli(tensor({0.5, std::nan("")}), &g),
                  "bernoulli: probabilities must be in [0, 1], got nan");
  // A bad value hidden in a non-contiguous layout is found too.
  EXPECT_FT_ERROR(bernoulli(Transposed({0.1, 0.2, 0.3, 0.4, 0.5, 2.0}, kFloat64), &g),
                  "got 2 (probabilities of shape [2, 3])");
  EXPECT_EQ(g.offset(), 0u);
}

// ---------------------------------------------------------------------------------------
// dropout

TEST(Dropout, EvalModeAndPZeroReturnXItselfPOneGivesZeros) {
  Generator g(6);
  Tensor x = tensor({1.0f, -2.0f, 3.0f});
  EXPECT_TRUE(dropout(x, 0.5, false, &g).is_same(x));
  EXPECT_TRUE(dropout(x, 0.0, true, &g).is_same(x));
  EXPECT_TRUE(dropout(x, 1.0, false, &g).is_same(x));
  Tensor t = Transposed({1, 2, 3, 4, 5, 6}, kFloat64);
  EXPECT_TRUE(dropout(t, 0.3, false, &g).is_same(t));
  Tensor z = dropout(x, 1.0, true, &g);
  EXPECT_FALSE(z.is_same(x));
  EXPECT_TENSOR_EQ(z, zeros({3}));
  EXPECT_TENSOR_EQ(dropout(t, 1.0, true, &g), zeros({2, 3}, kFloat64));
  EXPECT_EQ(g.offset(), 0u);  // none of these draw
}

TEST(Dropout, ZeroesWithProbabilityPAndScalesSurvivors) {
  const double p = 0.25;
  const std::vector<double> xs = {1.5, -2.0, 3.25, 0.0, 7.0, -0.5};
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor dense = kernels::to(tensor(xs, {2, 3}), dtype);
    Generator g(99);
    g.set_offset(7);
    const std::vector<double> v = dropout(dense, p, true, &g).to_vector<double>();
    EXPECT_EQ(g.offset(), 13u);
    const double keep = dtype == kFloat32 ? static_cast<float>(0.75) : 0.75;
    for (int i = 0; i < 6; ++i) {
      const bool kept = Generator::Uniform(99, 7 + i) < keep;
      const double expected =
          dtype == kFloat32
              ? static_cast<double>(static_cast<float>(xs[i]) * static_cast<float>(1.0 / 0.75))
              : xs[i] / 0.75;
      EXPECT_EQ(v[i], kept ? expected : 0.0) << i;
    }
    // Any layout gives the same result as the contiguous input.
    for (const Tensor& x : {Transposed(xs, dtype), testing::NonContiguousCopy(dense)}) {
      g.set_offset(7);
      Tensor r = dropout(x, p, true, &g);
      EXPECT_TRUE(r.is_contiguous());
      EXPECT_EQ(r.to_vector<double>(), v);
    }
    g.set_offset(7);
    const std::vector<double> ev =
        dropout(Expanded(2.0, 6, dtype), p, true, &g).to_vector<double>();
    const double two_scaled =
        dtype == kFloat32 ? static_cast<double>(2.0f * static_cast<float>(1.0 / 0.75)) : 2.0 / 0.75;
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(ev[i], Generator::Uniform(99, 7 + i) < keep ? two_scaled : 0.0);
    }
  }
}

TEST(Dropout, EqualsXTimesBernoulliMaskTimesScale) {
  // The decomposition a gradient rule can use: same counters, same values.
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    for (double p : {0.1, 0.3, 0.5, 0.9}) {
      Generator g(1234);
      Tensor x = randn_like(zeros({50, 40}, dtype), &g);
      const uint64_t start = g.offset();
      const std::vector<double> out = dropout(x, p, true, &g).to_vector<double>();
      g.set_offset(start);
      const std::vector<double> mask = bernoulli(full_like(x, 1.0 - p), &g).to_vector<double>();
      const std::vector<double> xv = x.to_vector<double>();
      for (size_t i = 0; i < out.size(); ++i) {
        const double expected =
            dtype == kFloat32
                ? static_cast<double>(static_cast<float>(xv[i]) * static_cast<float>(mask[i]) *
                                      static_cast<float>(1.0 / (1.0 - p)))
                : xv[i] * mask[i] * (1.0 / (1.0 - p));
        ASSERT_EQ(out[i], expected) << i << " p=" << p;
      }
    }
  }
}

TEST(Dropout, Statistics) {
  // dropout(ones, p = 0.25): the zero fraction has standard error sqrt(p(1-p)/n) = 1.37e-3;
  // the output (0 or 4/3) has mean 1 and variance p/(1-p) = 1/3, standard error of the
  // mean sqrt(1/3 / n) = 1.83e-3; the variance's is |d(p/(1-p))/dp| * 1.37e-3 = 2.43e-3.
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Generator g(55);
    const std::vector<double> v =
        dropout(ones({kSamples}, dtype), 0.25, true, &g).to_vector<double>();
    int64_t dropped = 0;
    for (double x : v) {
      ASSERT_TRUE(x == 0.0 || std::fabs(x - 4.0 / 3.0) < 1e-6) << x;
      dropped += x == 0.0;
    }
    EXPECT_NEAR(static_cast<double>(dropped) / kSamples, 0.25, 5 * 1.37e-3);
    const Moments m = ComputeMoments(v);
    EXPECT_NEAR(m.mean, 1.0, 5 * 1.83e-3);
    EXPECT_NEAR(m.var, 1.0 / 3.0, 5 * 2.43e-3);
  }
}

TEST(Dropout, RankZeroSizeZeroAndSizeOne) {
  Generator g(3);
  Tensor s = dropout(scalar_tensor(2.0, kFloat64), 0.5, true, &g);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), Generator::Uniform(3, 0) < 0.5 ? 4.0 : 0.0);
  Tensor e = dropout(zeros({0, 4}), 0.5, true, &g);
  EXPECT_EQ(e.sizes(), (IntArrayRef{0, 4}));
  EXPECT_EQ(g.offset(), 1u);
  EXPECT_EQ(dropout(ones({1, 3, 1}), 0.5, true, &g).sizes(), (IntArrayRef{1, 3, 1}));
}

TEST(Dropout, RejectsBadInputsInEveryModeWithoutDrawing) {
  Generator g(1);
  Tensor x = tensor({1.0f, 2.0f});
  EXPECT_FT_ERROR(dropout(x, 1.5, true, &g), "dropout: p must be in [0, 1], got 1.5");
  EXPECT_FT_ERROR(dropout(x, -0.1, false, &g), "dropout: p must be in [0, 1], got -0.1");
  EXPECT_FT_ERROR(dropout(x, std::nan(""), true, &g), "dropout: p must be in [0, 1], got nan");
  EXPECT_FT_ERROR(dropout(tensor(std::vector<int64_t>{1}), 0.5, true, &g),
                  "dropout: expected a floating point dtype, got int64");
  EXPECT_FT_ERROR(dropout(tensor(std::vector<bool>{true}), 0.5, false, &g),
                  "dropout: expected a floating point dtype, got bool");
  EXPECT_EQ(g.offset(), 0u);
}

// ---------------------------------------------------------------------------------------
// randint

TEST(Randint, RangeAndStatistics) {
  // Uniform on {-3, ..., 6} (k = 10 values): mean 1.5, variance (k^2 - 1)/12 = 8.25,
  // fourth central moment (k^2 - 1)(3k^2 - 7)/240 = 120.8625. Standard errors: mean
  // sqrt(8.25/n) = 9.1e-3, variance sqrt((120.8625 - 8.25^2)/n) = 2.3e-2, each value's
  // frequency sqrt(0.09/n) = 9.5e-4.
  Generator g(777);
  Tensor r = randint(-3, 7, {kSamples}, &g);
  ASSERT_EQ(r.dtype(), kInt64);
  const std::vector<int64_t> v = r.to_vector<int64_t>();
  std::vector<int64_t> counts(10, 0);
  std::vector<double> d;
  for (int64_t x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 7);
    ++counts[static_cast<size_t>(x + 3)];
    d.push_back(static_cast<double>(x));
  }
  for (int64_t c : counts) EXPECT_NEAR(static_cast<double>(c) / kSamples, 0.1, 5 * 9.5e-4);
  const Moments m = ComputeMoments(d);
  EXPECT_NEAR(m.mean, 1.5, 5 * 9.1e-3);
  EXPECT_NEAR(m.var, 8.25, 5 * 2.3e-2);
  // A one-value range.
  EXPECT_TENSOR_EQ(randint(5, 6, {4}, &g), full({4}, 5, kInt64));
}

TEST(Randint, FullInt64RangeDoesNotOverflow) {
  // high - low does not fit in int64 here. Half of the values should be negative (standard
  // error sqrt(0.25/n) = 1.6e-3), and values spread over the whole range.
  Generator g(12);
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> v = randint(lo, hi, {kSamples}, &g).to_vector<int64_t>();
  int64_t negative = 0, huge = 0;
  for (int64_t x : v) {
    ASSERT_LT(x, hi);
    negative += x < 0;
    huge += x > (int64_t{1} << 62) || x < -(int64_t{1} << 62);
  }
  EXPECT_NEAR(static_cast<double>(negative) / kSamples, 0.5, 5 * 1.6e-3);
  EXPECT_NEAR(static_cast<double>(huge) / kSamples, 0.5, 5 * 1.6e-3);
}

TEST(Randint, ShapesAndTheHighOnlyOverload) {
  Generator g(3), h(3);
  Tensor a = randint(10, {2, 3}, &g);
  EXPECT_TENSOR_EQ(a, randint(0, 10, {2, 3}, &h));
  Tensor s = randint(0, 4, {}, &g);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(g.offset(), 7u);
  Tensor e = randint(0, 4, {2, 0, 3}, &g);
  EXPECT_EQ(e.sizes(), (IntArrayRef{2, 0, 3}));
  EXPECT_EQ(e.dtype(), kInt64);
  EXPECT_EQ(g.offset(), 7u);
  EXPECT_EQ(randint(0, 4, {1, 1}, &g).sizes(), (IntArrayRef{1, 1}));
}

TEST(Randint, RejectsBadArgumentsWithoutDrawing) {
  Generator g(1);
  EXPECT_FT_ERROR(randint(5, 5, {3}, &g), "randint: expected low < high, got low=5 and high=5");
  EXPECT_FT_ERROR(randint(5, -1, {3}, &g), "randint: expected low < high, got low=5 and high=-1");
  EXPECT_FT_ERROR(randint(0, {2}, &g), "randint: expected low < high, got low=0 and high=0");
  EXPECT_FT_ERROR(randint(0, 4, {2, -1}, &g), "randint");
  EXPECT_EQ(g.offset(), 0u);
}

// ---------------------------------------------------------------------------------------
// Registration

TEST(RandomOps, RegisteredWithRandomFlagAndBoxedCallsWork) {
  RegisterAllOps();
  OpRegistry& r = OpRegistry::Global();
  for (const char* name : {"rand_like", "randn_like", "bernoulli", "dropout", "randint"}) {
    SCOPED_TRACE(name);
    const Operator* op = r.Find(name);
    ASSERT_NE(op, nullptr);
    EXPECT_TRUE(op->schema().random);
    EXPECT_FALSE(op->schema().mutated_arg.has_value());
  }
  for (const char* name : {"zeros_like", "ones_like", "full_like", "full_like_dtype"}) {
    SCOPED_TRACE(name);
    const Operator* op = r.Find(name);
    ASSERT_NE(op, nullptr);
    EXPECT_FALSE(op->schema().random);
  }
  EXPECT_EQ(&OpFor<&kernels::dropout>(), r.Find("dropout"));
  EXPECT_EQ(r.Get("dropout").schema().args.size(), 4u);
  EXPECT_EQ(r.Get("dropout").schema().args[3].kind, ArgKind::kGenerator);

  // Boxed: an explicit generator, and None meaning the default generator.
  Tensor x = zeros({2, 2}, kFloat64);
  Generator g(8);
  ValueList args;
  args.emplace_back(x);
  args.emplace_back(&g);
  const std::vector<double> boxed =
      r.Get("rand_like").CallBaseKernel(args)[0].tensor().to_vector<double>();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(boxed[i], Generator::Uniform(8, i));
  EXPECT_EQ(g.offset(), 4u);
  manual_seed(8);
  ValueList none_args;
  none_args.emplace_back(x);
  none_args.emplace_back(Value());
  EXPECT_EQ(r.Get("rand_like").CallBaseKernel(none_args)[0].tensor().to_vector<double>(), boxed);
  ValueList fill;
  fill.emplace_back(x);
  fill.emplace_back(Scalar(2.5));
  fill.emplace_back(kInt64);
  EXPECT_TENSOR_EQ(r.Get("full_like_dtype").CallBaseKernel(fill)[0].tensor(),
                   full({2, 2}, 2, kInt64));
}

}  // namespace
}  // namespace ft

// The random kernels (kernels/random.h): the *_like factories (values, dtypes, the
// conversion rules and errors of full_like), rand_like, randn_like, bernoulli, dropout and
// randint. Oracles: closed forms for the factories; for the samplers, statistics over large
// samples (means, variances, frequencies) checked against their exact expectations within
// 6 standard errors (a Philox stream with a fixed seed is deterministic, so these cannot
// flake, and 6 sigma is wide only against chance, not against a wrong distribution); the
// counter contract of NOTE [Random counters] (element i of the output is a pure function of
// counter offset + i: Generator::Uniform / Normal, read directly); the Generator's offset;
// ranges; dtype rules; and every documented error, which must leave the Generator untouched.
#include "kernels/random.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/test_helpers.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tensor/generator.h"
#include "tensor/tensor.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::TransposedCopy;
using ::ft::testing::Values;

constexpr int64_t kN = 200000;  // the sample size of the statistical tests
const std::vector<DType> kAllDTypes = {kFloat32, kFloat64, kInt64, kBool};
const std::vector<DType> kFloatDTypes = {kFloat32, kFloat64};

struct Moments {
  double mean;
  double var;  // population variance
};

Moments MomentsOf(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  const double mean = s / static_cast<double>(v.size());
  double sq = 0;
  for (double x : v) sq += (x - mean) * (x - mean);
  return {mean, sq / static_cast<double>(v.size())};
}

// The values of a large contiguous floating sample, read straight from its buffer (to_vector
// computes every element's offset, which dominates a fastbuild run at this size).
std::vector<double> Samples(const Tensor& t) {
  EXPECT_TRUE(t.is_contiguous());
  return Values<double>(t);
}

std::vector<int64_t> IntSamples(const Tensor& t) {
  EXPECT_TRUE(t.is_contiguous());
  return Values<int64_t>(t);
}

// Six standard errors of the mean of n draws of a variable of variance `var`.
double SixSigma(double var, int64_t n) { return 6 * std::sqrt(var / static_cast<double>(n)); }

// The float32 value rand_like documents for counter c: the float64 draw truncated to its top
// 24 bits.
double Float32Draw(uint64_t seed, uint64_t c) {
  return std::floor(Generator::Uniform(seed, c) * 0x1p24) * 0x1p-24;
}

// Layouts of a [2, 3] tensor of values v (row-major): contiguous, transposed storage, every
// other element, and rows 1..2 of a [4, 3] (contiguous, at a storage offset).
std::vector<Tensor> Layouts2x3(const std::vector<double>& v, DType dtype) {
  const Tensor c = to(tensor(v, {2, 3}), dtype);
  const Tensor tr = TransposedCopy(c);
  const Tensor strided = testing::NonContiguousCopy(c);
  std::vector<double> padded(3, 0.0);
  padded.insert(padded.end(), v.begin(), v.end());
  padded.insert(padded.end(), 3, 0.0);
  const Tensor offset = narrow(to(tensor(padded, {4, 3}), dtype), 0, 1, 2);
  EXPECT_FALSE(tr.is_contiguous());
  EXPECT_FALSE(strided.is_contiguous());
  EXPECT_TRUE(offset.is_contiguous());
  EXPECT_EQ(offset.storage_offset(), 3);
  return {c, tr, strided, offset};
}

// ---------------------------------------------------------------------------------------
// zeros_like / ones_like / full_like / full_like_dtype

TEST(LikeFactoriesTest, FillShapeAndDtypeOfXInEveryDtype) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    for (const Tensor& x : Layouts2x3({1, 0, 3, 4, 5, 6}, dtype)) {
      const Tensor z = zeros_like(x), o = ones_like(x), f = full_like(x, 1);
      for (const Tensor& t : {z, o, f}) {
        EXPECT_EQ(t.dtype(), dtype);
        EXPECT_EQ(t.sizes(), x.sizes());
        EXPECT_TRUE(t.is_contiguous());
        EXPECT_NE(t.impl()->raw_data(), x.impl()->raw_data());  // never x's storage
      }
      EXPECT_EQ(z.to_vector<double>(), std::vector<double>(6, 0.0));
      EXPECT_EQ(o.to_vector<double>(), std::vector<double>(6, 1.0));
      EXPECT_EQ(f.to_vector<double>(), std::vector<double>(6, 1.0));
    }
  }
}

TEST(LikeFactoriesTest, RankZeroSizeZeroAndExpandedInputs) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor s = to(scalar_tensor(5.0, kFloat64), dtype);
    EXPECT_EQ(zeros_like(s).sizes(), IntArrayRef{});
    EXPECT_EQ(ones_like(s).to_vector<double>(), std::vector<double>{1.0});
    EXPECT_EQ(full_like(s, 0).to_vector<double>(), std::vector<double>{0.0});
    const Tensor e = zeros({0, 3}, dtype);
    for (const Tensor& t :
         {zeros_like(e), ones_like(e), full_like(e, 1), full_like_dtype(e, 2, kFloat64)}) {
      EXPECT_EQ(t.sizes(), (Shape{0, 3}));
      EXPECT_EQ(t.numel(), 0);
    }
    // An expanded (stride 0) x: the result is a fresh contiguous [4, 3], writable everywhere.
    const Tensor ex = expand(to(tensor({1.0, 2.0, 3.0}, {1, 3}), dtype), {4, 3});
    const Tensor z = zeros_like(ex);
    EXPECT_TRUE(z.is_contiguous());
    EXPECT_EQ(z.strides(), (Shape{3, 1}));
    EXPECT_EQ(z.to_vector<double>(), std::vector<double>(12, 0.0));
  }
}

TEST(LikeFactoriesTest, FullLikeConvertsTheValueLikePyTorch) {
  const Tensor i = tensor(std::vector<int64_t>{1, 2, 3});
  EXPECT_TENSOR_EQ(full_like(i, 2.7), tensor(std::vector<int64_t>{2, 2, 2}));
  EXPECT_TENSOR_EQ(full_like(i, -2.7), tensor(std::vector<int64_t>{-2, -2, -2}));
  EXPECT_TENSOR_EQ(full_like(i, -0x1p63), full({3}, std::numeric_limits<int64_t>::min(), kInt64));
  EXPECT_TENSOR_EQ(full_like(i, std::numeric_limits<int64_t>::max()),
                   full({3}, std::numeric_limits<int64_t>::max(), kInt64));
  const Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_TENSOR_EQ(full_like(b, 0.5), tensor(std::vector<bool>{true, true}));
  EXPECT_TENSOR_EQ(full_like(b, 0.0), tensor(std::vector<bool>{false, false}));
  EXPECT_TENSOR_EQ(full_like(b, int64_t{-7}), tensor(std::vector<bool>{true, true}));
  const Tensor f = tensor({1.0f, 2.0f});
  EXPECT_TENSOR_EQ(full_like(f, 1.5), tensor({1.5f, 1.5f}));
  EXPECT_TENSOR_EQ(full_like(f, true), tensor({1.0f, 1.0f}));
  // 0.1 rounds to the nearest float32.
  EXPECT_EQ(full_like(f, 0.1).to_vector<float>(), (std::vector<float>{0.1f, 0.1f}));
  // Non-finite values and float32's largest finite value are representable in float32.
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(full_like(f, -inf).to_vector<double>(), (std::vector<double>{-inf, -inf}));
  EXPECT_TRUE(std::isnan(full_like(f, std::nan("")).to_vector<double>()[1]));
  const double fmax = std::numeric_limits<float>::max();
  EXPECT_EQ(full_like(f, fmax).to_vector<double>(), (std::vector<double>{fmax, fmax}));
  EXPECT_EQ(full_like(tensor({0.0}), 1e300).to_vector<double>(), std::vector<double>{1e300});
}

TEST(LikeFactoriesTest, FullLikeDtypeTakesTheGivenDtype) {
  const Tensor x = tensor({1.0f, 2.0f, 3.0f}, {3, 1});
  EXPECT_TENSOR_EQ(full_like_dtype(x, 2.5, kFloat64), tensor({2.5, 2.5, 2.5}, {3, 1}));
  EXPECT_TENSOR_EQ(full_like_dtype(x, 2.5, kInt64), tensor(std::vector<int64_t>{2, 2, 2}, {3, 1}));
  EXPECT_TENSOR_EQ(full_like_dtype(x, 0, kBool),
                   tensor(std::vector<bool>{false, false, false}, {3, 1}));
  EXPECT_TENSOR_EQ(full_like_dtype(tensor(std::vector<int64_t>{4}), 7, kFloat32), tensor({7.0f}));
  EXPECT_TENSOR_EQ(full_like_dtype(tensor(std::vector<bool>{true}), -1.5, kFloat32),
                   tensor({-1.5f}));
}

TEST(LikeFactoriesTest, FullLikeRejectsValuesTheDtypeCannotHold) {
  const Tensor i = zeros({2}, kInt64);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FT_ERROR(full_like(i, 0x1p63),
                  "full_like: value 9.22337e+18 cannot be converted to "
                  "int64 without overflow");
  EXPECT_FT_ERROR(full_like(i, -0x1p63 * 1.0000001), "full_like: value");
  EXPECT_FT_ERROR(full_like(i, std::nan("")), "cannot be converted to int64 without overflow");
  EXPECT_FT_ERROR(full_like(i, inf), "full_like: value inf cannot be converted to int64");
  EXPECT_FT_ERROR(full_like(i, -inf), "full_like: value -inf cannot be converted to int64");
  const Tensor f = zeros({2}, kFloat32);
  EXPECT_FT_ERROR(full_like(f, 1e39),
                  "full_like: value 1e+39 cannot be converted to float32 "
                  "without overflow");
  EXPECT_FT_ERROR(full_like(f, -1e300), "cannot be converted to float32 without overflow");
  // full_like_dtype checks against the requested dtype, not x's.
  const Tensor d = zeros({2}, kFloat64);
  EXPECT_FT_ERROR(full_like_dtype(d, 1e39, kFloat32),
                  "full_like: value 1e+39 cannot be "
                  "converted to float32");
  EXPECT_FT_ERROR(full_like_dtype(f, inf, kInt64),
                  "full_like: value inf cannot be converted "
                  "to int64");
  EXPECT_NO_THROW(full_like_dtype(f, 1e39, kFloat64));
  EXPECT_NO_THROW(full_like_dtype(i, inf, kFloat32));
}

// The dtypes of issue 43: the *_like factories make every dtype, and full_like refuses what
// torch refuses (c10's overflows rule, tensor/scalar_check.h).
TEST(LikeFactoriesTest, EveryNewDTypeAndItsOverflowRule) {
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType dtype = static_cast<DType>(d);
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = zeros({2, 3}, dtype);
    EXPECT_EQ(ones_like(x).to_vector<double>(), std::vector<double>(6, 1.0));
    EXPECT_EQ(full_like(x, 1).dtype(), dtype);
    EXPECT_EQ(full_like_dtype(zeros({2}), true, dtype).to_vector<double>(),
              std::vector<double>(2, 1.0));
  }
  // torch.full_like(torch.zeros(1, dtype=...), v) on torch 1.13:
  EXPECT_FT_ERROR(full_like(zeros({1}, kInt8), 300),
                  "full_like: value 300 cannot be converted to int8 without overflow");
  EXPECT_FT_ERROR(full_like(zeros({1}, kInt8), 127.9), "to int8 without overflow");
  EXPECT_EQ(full_like(zeros({1}, kUInt8), -1).item<int64_t>(), 255);  // a - b as a + 255b
  EXPECT_FT_ERROR(full_like(zeros({1}, kUInt8), -256), "to uint8 without overflow");
  EXPECT_FT_ERROR(full_like(zeros({1}, kUInt8), 255.5), "to uint8 without overflow");
  EXPECT_FT_ERROR(full_like(zeros({1}, kFloat16), 1e5), "to float16 without overflow");
  EXPECT_FT_ERROR(full_like(zeros({1}, kFloat16), 65519.0), "to float16 without overflow");
  EXPECT_FT_ERROR(full_like(zeros({1}, kBFloat16), 1e39), "to bfloat16 without overflow");
  EXPECT_FT_ERROR(full_like(zeros({1}, kInt32), int64_t{1} << 31), "to int32 without overflow");
  EXPECT_FT_ERROR(full_like(zeros({1}, kComplex64), 1e39), "to complex64 without overflow");
  EXPECT_FT_ERROR(full_like(zeros({1}, kInt16), std::nan("")), "to int16 without overflow");
  EXPECT_TRUE(full_like(zeros({1}, kBool), 2).item<bool>());
  EXPECT_EQ(full_like(zeros({1}, kFloat16), std::numeric_limits<double>::infinity()).item<float>(),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(full_like(zeros({1}, kInt16), -32768).item<int64_t>(), -32768);
  EXPECT_EQ(
      full_like(zeros({1}, kComplex128), std::complex<double>(1, -2)).item<std::complex<double>>(),
      std::complex<double>(1, -2));
  EXPECT_FT_ERROR(full_like(zeros({1}), std::complex<double>(1, 1)),
                  "full_like: value (1+1j) cannot be converted to float32 without overflow");
}

// ---------------------------------------------------------------------------------------
// rand_like

TEST(RandLikeTest, ElementIIsTheUniformDrawOfCounterOffsetPlusI) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Generator g(1234);
    g.set_offset(77);
    for (const Tensor& x : Layouts2x3({1, 2, 3, 4, 5, 6}, dtype)) {
      const uint64_t first = g.offset();
      const Tensor r = rand_like(x, &g);
      EXPECT_EQ(g.offset(), first + 6);
      EXPECT_EQ(r.dtype(), dtype);
      EXPECT_EQ(r.sizes(), (Shape{2, 3}));
      EXPECT_TRUE(r.is_contiguous());
      const std::vector<double> v = r.to_vector<double>();
      for (uint64_t i = 0; i < 6; ++i) {
        const double want =
            dtype == kFloat32 ? Float32Draw(1234, first + i) : Generator::Uniform(1234, first + i);
        EXPECT_EQ(v[i], want) << "element " << i;
      }
    }
  }
}

// float16 and bfloat16 draws keep the top 11 and 8 bits of the float64 draw (multiples of
// 2^-11 and 2^-8 in [0, 1), as torch's); a complex element takes two counters, real part
// first, each part drawn as its real dtype would be.
TEST(RandLikeTest, SixteenBitAndComplexDrawsFromTheirCounters) {
  Generator g(99);
  g.set_offset(5);
  for (const auto& [dtype, digits] : {std::pair{kFloat16, 11}, std::pair{kBFloat16, 8}}) {
    const uint64_t first = g.offset();
    const std::vector<double> v = rand_like(zeros({3, 4}, dtype), &g).to_vector<double>();
    EXPECT_EQ(g.offset(), first + 12);
    for (uint64_t i = 0; i < 12; ++i) {
      const double steps = std::ldexp(1.0, digits);
      EXPECT_EQ(v[i], std::floor(Generator::Uniform(99, first + i) * steps) / steps);
    }
  }
  const uint64_t first = g.offset();
  const std::vector<std::complex<double>> z =
      rand_like(zeros({5}, kComplex128), &g).to_vector<std::complex<double>>();
  EXPECT_EQ(g.offset(), first + 10);
  for (uint64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(z[i], std::complex<double>(Generator::Uniform(99, first + 2 * i),
                                         Generator::Uniform(99, first + 2 * i + 1)));
  }
  const std::vector<std::complex<double>> z64 =
      rand_like(zeros({2}, kComplex64), &g).to_vector<std::complex<double>>();
  EXPECT_EQ(z64[1].imag(), Float32Draw(99, first + 10 + 3));
}

TEST(RandLikeTest, UniformOnZeroOneWithTheRightMomentsAndBins) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Generator g(2024);
    const std::vector<double> v = Samples(rand_like(zeros({kN}, dtype), &g));
    EXPECT_EQ(g.offset(), static_cast<uint64_t>(kN));
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    EXPECT_GE(*lo, 0.0);
    EXPECT_LT(*hi, 1.0);
    const Moments m = MomentsOf(v);
    // U[0, 1): mean 1/2, variance 1/12; the sample variance has variance (mu4 - s^4) / n with
    // mu4 = 1/80, so (1/80 - 1/144) / n = 1 / (180 n).
    EXPECT_NEAR(m.mean, 0.5, SixSigma(1.0 / 12, kN));
    EXPECT_NEAR(m.var, 1.0 / 12, SixSigma(1.0 / 180, kN));
    // Ten equal bins, each a binomial count with p = 0.1.
    std::vector<int64_t> bins(10, 0);
    for (double x : v) ++bins[static_cast<size_t>(x * 10)];
    for (int64_t c : bins) {
      EXPECT_NEAR(static_cast<double>(c) / kN, 0.1, SixSigma(0.1 * 0.9, kN));
    }
  }
}

TEST(RandLikeTest, Float32DrawIsTheFloat64DrawTruncatedAndStaysBelowOne) {
  Generator g32(9), g64(9);
  const std::vector<double> a = rand_like(zeros({4096}, kFloat32), &g32).to_vector<double>();
  const std::vector<double> b = rand_like(zeros({4096}, kFloat64), &g64).to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_LE(a[i], b[i]);
    ASSERT_LT(b[i] - a[i], 0x1p-24);
    ASSERT_LT(a[i], 1.0);
  }
}

TEST(RandLikeTest, DeterministicForASeedAndOffsetAndChunkable) {
  Generator g1(5), g2(5);
  const Tensor a = rand_like(zeros({6, 5}), &g1);
  const Tensor b = rand_like(zeros({6, 5}), &g2);
  EXPECT_TENSOR_EQ(a, b);
  // A second draw continues the stream: different values.
  const Tensor c = rand_like(zeros({6, 5}), &g1);
  EXPECT_NE(a.to_vector<float>(), c.to_vector<float>());
  // Another seed: a different stream.
  Generator other(6);
  EXPECT_NE(a.to_vector<float>(), rand_like(zeros({6, 5}), &other).to_vector<float>());
  // [6, 5] at once equals [2, 5] then [4, 5] from the same offset.
  Generator chunks(5);
  std::vector<float> joined = rand_like(zeros({2, 5}), &chunks).to_vector<float>();
  const std::vector<float> rest = rand_like(zeros({4, 5}), &chunks).to_vector<float>();
  joined.insert(joined.end(), rest.begin(), rest.end());
  EXPECT_EQ(joined, a.to_vector<float>());
  // Rewinding the offset replays the draw.
  g1.set_offset(0);
  EXPECT_TENSOR_EQ(rand_like(zeros({6, 5}), &g1), a);
}

TEST(RandLikeTest, RankZeroAndSizeZero) {
  Generator g(3);
  const Tensor s = rand_like(scalar_tensor(0.0, kFloat64), &g);
  EXPECT_EQ(s.sizes(), IntArrayRef{});
  EXPECT_EQ(s.item<double>(), Generator::Uniform(3, 0));
  EXPECT_EQ(g.offset(), 1u);
  const Tensor e = rand_like(zeros({3, 0}), &g);
  EXPECT_EQ(e.sizes(), (Shape{3, 0}));
  EXPECT_EQ(g.offset(), 1u);  // nothing drawn
}

TEST(RandLikeTest, NullGeneratorUsesTheThreadsDefaultGenerator) {
  manual_seed(321);
  const Tensor a = rand_like(zeros({8}, kFloat64), nullptr);
  EXPECT_EQ(DefaultGenerator().offset(), 8u);
  Generator g(321);
  EXPECT_TENSOR_EQ(a, rand_like(zeros({8}, kFloat64), &g));
}

TEST(RandLikeTest, NonFloatingInputThrowsAndDrawsNothing) {
  Generator g(1);
  g.set_offset(10);
  EXPECT_FT_ERROR(
      rand_like(zeros({2, 3}, kInt64), &g),
      "rand_like: expected a floating point or complex dtype, got int64 (input of shape [2, 3])");
  EXPECT_FT_ERROR(rand_like(zeros({}, kBool), &g),
                  "rand_like: expected a floating point or complex dtype, "
                  "got bool");
  EXPECT_EQ(g.offset(), 10u);
}

// ---------------------------------------------------------------------------------------
// randn_like

TEST(RandnLikeTest, ElementIIsTheNormalDrawOfCounterOffsetPlusI) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Generator g(42);
    g.set_offset(1000);
    for (const Tensor& x : Layouts2x3({1, 2, 3, 4, 5, 6}, dtype)) {
      const uint64_t first = g.offset();
      const Tensor r = randn_like(x, &g);
      EXPECT_EQ(g.offset(), first + 6);
      EXPECT_EQ(r.dtype(), dtype);
      EXPECT_EQ(r.sizes(), (Shape{2, 3}));
      const std::vector<double> v = r.to_vector<double>();
      for (uint64_t i = 0; i < 6; ++i) {
        const double n = Generator::Normal(42, first + i);
        EXPECT_EQ(v[i], dtype == kFloat32 ? static_cast<double>(static_cast<float>(n)) : n);
      }
    }
  }
}

// torch's complex normal: each part N(0, 1/2), so E|z|^2 = 1; the parts are the normal
// draws of counters 2i and 2i + 1 scaled by 1/sqrt(2).
TEST(RandnLikeTest, ComplexPartsHaveVarianceOneHalf) {
  Generator g(7);
  const uint64_t first = g.offset();
  const int64_t n = 200000;
  const std::vector<std::complex<double>> z =
      randn_like(zeros({n}, kComplex128), &g).to_vector<std::complex<double>>();
  EXPECT_EQ(g.offset(), first + 2 * static_cast<uint64_t>(n));
  EXPECT_EQ(z[3], std::complex<double>(Generator::Normal(7, first + 6) * M_SQRT1_2,
                                       Generator::Normal(7, first + 7) * M_SQRT1_2));
  double re2 = 0, im2 = 0, re_im = 0;
  for (const auto& v : z) {
    re2 += v.real() * v.real();
    im2 += v.imag() * v.imag();
    re_im += v.real() * v.imag();
  }
  // Standard error of a variance estimate of N(0, 1/2) over n draws: 0.5 * sqrt(2 / n).
  const double se = 0.5 * std::sqrt(2.0 / static_cast<double>(n));
  EXPECT_NEAR(re2 / n, 0.5, 5 * se);
  EXPECT_NEAR(im2 / n, 0.5, 5 * se);
  EXPECT_NEAR(re_im / n, 0.0, 5 * se);
  // float16: the float64 draw rounded once through float.
  const uint64_t h_first = g.offset();
  const std::vector<float> h = randn_like(zeros({4}, kFloat16), &g).to_vector<float>();
  for (uint64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(h[i],
              static_cast<float>(Half(static_cast<float>(Generator::Normal(7, h_first + i)))));
  }
}

TEST(RandnLikeTest, StandardNormalMomentsAndOneSigmaMass) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Generator g(77);
    const std::vector<double> v = Samples(randn_like(zeros({kN}, dtype), &g));
    for (double x : v) ASSERT_TRUE(std::isfinite(x));
    const Moments m = MomentsOf(v);
    // N(0, 1): mean 0 (variance 1 / n), variance 1 (its estimate has variance 2 / n).
    EXPECT_NEAR(m.mean, 0.0, SixSigma(1.0, kN));
    EXPECT_NEAR(m.var, 1.0, SixSigma(2.0, kN));
    // P(|X| < 1) = erf(1 / sqrt(2)); P(X > 2) = erfc(2 / sqrt(2)) / 2.
    const double p1 = std::erf(1 / std::sqrt(2.0));
    const double p2 = std::erfc(2 / std::sqrt(2.0)) / 2;
    const double in1 = static_cast<double>(std::count_if(
                           v.begin(), v.end(), [](double x) { return std::fabs(x) < 1; })) /
                       kN;
    const double above2 =
        static_cast<double>(std::count_if(v.begin(), v.end(), [](double x) { return x > 2; })) / kN;
    EXPECT_NEAR(in1, p1, SixSigma(p1 * (1 - p1), kN));
    EXPECT_NEAR(above2, p2, SixSigma(p2 * (1 - p2), kN));
  }
}

TEST(RandnLikeTest, DeterministicChunkableAndAdvancesTheGenerator) {
  Generator g1(8), g2(8);
  const Tensor a = randn_like(zeros({3, 4}, kFloat64), &g1);
  EXPECT_TENSOR_EQ(a, randn_like(zeros({3, 4}, kFloat64), &g2));
  EXPECT_EQ(g1.offset(), 12u);
  Generator chunks(8);
  std::vector<double> joined = randn_like(zeros({1, 4}, kFloat64), &chunks).to_vector<double>();
  const std::vector<double> rest = randn_like(zeros({2, 4}, kFloat64), &chunks).to_vector<double>();
  joined.insert(joined.end(), rest.begin(), rest.end());
  EXPECT_EQ(joined, a.to_vector<double>());
  const Tensor s = randn_like(scalar_tensor(1.0f, kFloat32), &g1);
  EXPECT_EQ(s.sizes(), IntArrayRef{});
  EXPECT_EQ(g1.offset(), 13u);
  EXPECT_EQ(randn_like(zeros({0}), &g1).numel(), 0);
  EXPECT_EQ(g1.offset(), 13u);
}

TEST(RandnLikeTest, NonFloatingInputThrowsAndDrawsNothing) {
  Generator g(1);
  EXPECT_FT_ERROR(
      randn_like(zeros({4}, kInt64), &g),
      "randn_like: expected a floating point or complex dtype, got int64 (input of shape [4])");
  EXPECT_FT_ERROR(randn_like(zeros({1}, kBool), &g),
                  "randn_like: expected a floating point or complex "
                  "dtype, got bool");
  EXPECT_EQ(g.offset(), 0u);
}

// ---------------------------------------------------------------------------------------
// bernoulli

TEST(BernoulliTest, FrequencyOfOnesIsP) {
  for (DType dtype : kFloatDTypes) {
    for (double p : {0.1, 0.5, 0.9}) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " p=" << p);
      Generator g(11);
      const Tensor b = bernoulli(full_like_dtype(zeros({kN}), p, dtype), &g);
      EXPECT_EQ(b.dtype(), dtype);
      EXPECT_EQ(g.offset(), static_cast<uint64_t>(kN));
      const std::vector<double> v = Samples(b);
      for (double x : v) ASSERT_TRUE(x == 0.0 || x == 1.0);
      // The probability as stored in the dtype.
      const double q = dtype == kFloat32 ? static_cast<double>(static_cast<float>(p)) : p;
      EXPECT_NEAR(MomentsOf(v).mean, q, SixSigma(q * (1 - q), kN));
    }
  }
}

TEST(BernoulliTest, ZeroAndOneAreCertain) {
  Generator g(3);
  EXPECT_TENSOR_EQ(bernoulli(zeros({1000}, kFloat64), &g), zeros({1000}, kFloat64));
  EXPECT_TENSOR_EQ(bernoulli(ones({1000}), &g), ones({1000}));
  EXPECT_EQ(g.offset(), 2000u);
}

TEST(BernoulliTest, PerElementProbabilitiesInEveryLayoutUseLogicalCounters) {
  // Element i is 1 exactly when uniform counter (first + i) < p[i], p read in logical
  // (row-major) order whatever its layout.
  const std::vector<double> pv = {0.05, 0.5, 0.95, 0.25, 0.75, 0.6};
  for (DType dtype : kFloatDTypes) {
    std::vector<Tensor> layouts = Layouts2x3(pv, dtype);
    layouts.push_back(expand(to(tensor({0.3, 0.7, 0.5}, {1, 3}), dtype), {2, 3}));
    for (size_t l = 0; l < layouts.size(); ++l) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " layout " << l);
      const Tensor& p = layouts[l];
      const std::vector<double> probs = p.to_vector<double>();
      for (uint64_t offset : {0u, 5u, 123u}) {
        Generator g(99);
        g.set_offset(offset);
        const Tensor b = bernoulli(p, &g);
        EXPECT_EQ(b.sizes(), (Shape{2, 3}));
        EXPECT_TRUE(b.is_contiguous());
        EXPECT_EQ(g.offset(), offset + 6);
        const std::vector<double> v = b.to_vector<double>();
        for (uint64_t i = 0; i < 6; ++i) {
          EXPECT_EQ(v[i], Generator::Uniform(99, offset + i) < probs[i] ? 1.0 : 0.0)
              << "element " << i;
        }
      }
    }
  }
}

TEST(BernoulliTest, MixedProbabilitiesOverALargeTransposedTensor) {
  // Rows of p = 0.2 and p = 0.7, laid out transposed: each row's frequency is its own p.
  const int64_t cols = 50000;
  const Tensor base = zeros({cols, 2}, kFloat64);
  copy_into(select(base, 1, 0), scalar_tensor(0.2, kFloat64));
  copy_into(select(base, 1, 1), scalar_tensor(0.7, kFloat64));
  const Tensor p = transpose(base, 0, 1);  // [2, cols], strides [1, 2]
  ASSERT_FALSE(p.is_contiguous());
  Generator g(17);
  const std::vector<double> v = Samples(bernoulli(p, &g));
  for (int r = 0; r < 2; ++r) {
    const double want = r == 0 ? 0.2 : 0.7;
    double s = 0;
    for (int64_t j = 0; j < cols; ++j) s += v[static_cast<size_t>(r * cols + j)];
    EXPECT_NEAR(s / cols, want, SixSigma(want * (1 - want), cols)) << "row " << r;
  }
}

TEST(BernoulliTest, RankZeroAndSizeZero) {
  Generator g(4);
  const Tensor s = bernoulli(scalar_tensor(1.0, kFloat64), &g);
  EXPECT_EQ(s.sizes(), IntArrayRef{});
  EXPECT_EQ(s.item<double>(), 1.0);
  EXPECT_EQ(g.offset(), 1u);
  EXPECT_EQ(bernoulli(zeros({2, 0}), &g).sizes(), (Shape{2, 0}));
  EXPECT_EQ(g.offset(), 1u);
}

TEST(BernoulliTest, InvalidProbabilitiesThrowAndDrawNothing) {
  Generator g(5);
  g.set_offset(3);
  EXPECT_FT_ERROR(bernoulli(tensor({0.5, 1.5}), &g),
                  "bernoulli: probabilities must be in [0, 1], got 1.5 (probabilities of shape "
                  "[2])");
  EXPECT_FT_ERROR(bernoulli(tensor({-0.25f}), &g),
                  "bernoulli: probabilities must be in [0, 1], "
                  "got -0.25");
  EXPECT_FT_ERROR(bernoulli(tensor({0.0, std::nan("")}), &g),
                  "bernoulli: probabilities must be in [0, 1], got nan");
  // The bad value in a non-contiguous layout is found too.
  EXPECT_FT_ERROR(bernoulli(testing::NonContiguousCopy(tensor({0.1, 0.2, 2.0}, {1, 3})), &g),
                  "bernoulli: probabilities must be in [0, 1], got 2");
  EXPECT_FT_ERROR(bernoulli(zeros({2}, kInt64), &g),
                  "bernoulli: expected a floating point dtype, got int64 (input of shape [2])");
  EXPECT_FT_ERROR(bernoulli(zeros({2}, kBool), &g),
                  "bernoulli: expected a floating point "
                  "dtype, got bool");
  EXPECT_EQ(g.offset(), 3u);
}

// ---------------------------------------------------------------------------------------
// dropout

TEST(DropoutTest, EvalModeAndPZeroReturnXItselfAndDrawNothing) {
  Generator g(1);
  for (const Tensor& x : Layouts2x3({1, 2, 3, 4, 5, 6}, kFloat32)) {
    EXPECT_TRUE(dropout(x, 0.5, /*train=*/false, &g).is_same(x));
    EXPECT_TRUE(dropout(x, 1.0, /*train=*/false, &g).is_same(x));
    EXPECT_TRUE(dropout(x, 0.0, /*train=*/true, &g).is_same(x));
  }
  EXPECT_EQ(g.offset(), 0u);
}

TEST(DropoutTest, POneGivesNewZerosAndDrawsNothing) {
  for (DType dtype : kFloatDTypes) {
    Generator g(1);
    for (const Tensor& x : Layouts2x3({1, -2, 3, 4, 5, 6}, dtype)) {
      const Tensor d = dropout(x, 1.0, true, &g);
      EXPECT_FALSE(d.is_same(x));
      EXPECT_TENSOR_EQ(d, zeros({2, 3}, dtype));
    }
    EXPECT_EQ(g.offset(), 0u);
  }
}

TEST(DropoutTest, KeepsElementIExactlyWhenItsUniformCounterIsBelowOneMinusP) {
  const std::vector<double> xv = {1.5, -2, 3, 0.25, -5, 6};
  for (DType dtype : kFloatDTypes) {
    for (double p : {0.3, 0.5, 0.8}) {
      for (const Tensor& x : Layouts2x3(xv, dtype)) {
        SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " p=" << p);
        Generator g(2718);
        g.set_offset(40);
        const Tensor d = dropout(x, p, true, &g);
        EXPECT_EQ(g.offset(), 46u);
        EXPECT_EQ(d.dtype(), dtype);
        EXPECT_TRUE(d.is_contiguous());
        const double keep =
            dtype == kFloat32 ? static_cast<double>(static_cast<float>(1 - p)) : 1 - p;
        const std::vector<double> v = d.to_vector<double>();
        for (uint64_t i = 0; i < 6; ++i) {
          const bool kept = Generator::Uniform(2718, 40 + i) < keep;
          const double want = kept ? xv[i] / (1 - p) : 0.0;
          EXPECT_NEAR(v[i], want, dtype == kFloat32 ? 1e-5 * std::fabs(want) : 1e-14)
              << "element " << i;
        }
      }
    }
  }
}

TEST(DropoutTest, DropsAFractionPAndPreservesTheMean) {
  for (DType dtype : kFloatDTypes) {
    for (double p : {0.1, 0.5, 0.75}) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " p=" << p);
      Generator g(31);
      const std::vector<double> v = Samples(dropout(ones({kN}, dtype), p, true, &g));
      const double scale = 1 / (1 - p);
      int64_t dropped = 0;
      double s = 0;
      for (double x : v) {
        if (x == 0) {
          ++dropped;
        } else {
          ASSERT_NEAR(x, scale, 1e-6 * scale);
        }
        s += x;
      }
      EXPECT_NEAR(static_cast<double>(dropped) / kN, p, SixSigma(p * (1 - p), kN));
      // E[out] = x = 1; Var[out] = scale^2 p (1 - p).
      EXPECT_NEAR(s / kN, 1.0, SixSigma(scale * scale * p * (1 - p), kN));
    }
  }
}

TEST(DropoutTest, MatchesBernoulliOfOneMinusPOnTheSameCounters) {
  // The documented identity: dropout == x * bernoulli(full_like(x, 1 - p)) / (1 - p).
  const Tensor x = to(reshape(arange(1.0, 61.0, 1.0), {6, 10}), kFloat32);
  Generator gd(12), gb(12);
  const std::vector<float> d = dropout(x, 0.4, true, &gd).to_vector<float>();
  const std::vector<float> m = bernoulli(full_like(x, 0.6), &gb).to_vector<float>();
  for (size_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(d[i] != 0.0f, m[i] == 1.0f) << "element " << i;
  }
  EXPECT_EQ(gd.offset(), gb.offset());
}

TEST(DropoutTest, RankZeroAndSizeZero) {
  Generator g(2);
  const Tensor s = dropout(scalar_tensor(4.0, kFloat64), 0.5, true, &g);
  EXPECT_EQ(s.sizes(), IntArrayRef{});
  const double v = s.item<double>();
  EXPECT_EQ(v, Generator::Uniform(2, 0) < 0.5 ? 8.0 : 0.0);
  EXPECT_EQ(g.offset(), 1u);
  EXPECT_EQ(dropout(zeros({0, 4}), 0.5, true, &g).sizes(), (Shape{0, 4}));
  EXPECT_EQ(g.offset(), 1u);
}

TEST(DropoutTest, InvalidArgumentsThrowInEveryModeAndDrawNothing) {
  Generator g(6);
  const Tensor x = ones({3});
  for (bool train : {true, false}) {
    SCOPED_TRACE(train);
    EXPECT_FT_ERROR(dropout(x, -0.1, train, &g), "dropout: p must be in [0, 1], got -0.1");
    EXPECT_FT_ERROR(dropout(x, 1.5, train, &g), "dropout: p must be in [0, 1], got 1.5");
    EXPECT_FT_ERROR(dropout(x, std::nan(""), train, &g), "dropout: p must be in [0, 1], got nan");
    EXPECT_FT_ERROR(dropout(zeros({3}, kInt64), 0.5, train, &g),
                    "dropout: expected a floating point dtype, got int64 (input of shape [3])");
    EXPECT_FT_ERROR(dropout(zeros({3}, kBool), 0.0, train, &g),
                    "dropout: expected a floating point dtype, got bool");
  }
  EXPECT_EQ(g.offset(), 0u);
}

// ---------------------------------------------------------------------------------------
// randint

TEST(RandintTest, Int64ValuesInRangeWithUniformFrequencies) {
  Generator g(13);
  const Tensor r = randint(-3, 7, {kN}, &g);
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_EQ(r.sizes(), (Shape{kN}));
  EXPECT_EQ(g.offset(), static_cast<uint64_t>(kN));
  std::vector<int64_t> counts(10, 0);
  for (int64_t v : IntSamples(r)) {
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 7);
    ++counts[static_cast<size_t>(v + 3)];
  }
  for (int64_t c : counts) {
    EXPECT_NEAR(static_cast<double>(c) / kN, 0.1, SixSigma(0.1 * 0.9, kN));
  }
}

TEST(RandintTest, RangesAtTheEdgesOfInt64) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Generator g(21);
  // A range of one value.
  EXPECT_TENSOR_EQ(randint(5, 6, {4}, &g), full({4}, 5, kInt64));
  EXPECT_TENSOR_EQ(randint(kMin, kMin + 1, {2}, &g), full({2}, kMin, kInt64));
  // Just below the top: [kMax - 2, kMax) holds two values, both drawn.
  std::vector<int64_t> top = randint(kMax - 2, kMax, {1000}, &g).to_vector<int64_t>();
  for (int64_t v : top) ASSERT_TRUE(v == kMax - 2 || v == kMax - 1);
  EXPECT_NE(std::count(top.begin(), top.end(), kMax - 2), 0);
  EXPECT_NE(std::count(top.begin(), top.end(), kMax - 1), 0);
  // The full range [kMin, kMax): v / 2^63 is uniform on [-1, 1) (mean 0, variance 1/3).
  const std::vector<int64_t> all = IntSamples(randint(kMin, kMax, {kN}, &g));
  double s = 0, s2 = 0;
  int64_t negative = 0;
  for (int64_t v : all) {
    ASSERT_LT(v, kMax);
    const double u = static_cast<double>(v) * 0x1p-63;
    s += u;
    s2 += u * u;
    negative += v < 0;
  }
  EXPECT_NEAR(s / kN, 0.0, SixSigma(1.0 / 3, kN));
  EXPECT_NEAR(s2 / kN, 1.0 / 3, SixSigma(4.0 / 45, kN));  // Var[u^2] = 1/5 - 1/9
  EXPECT_NEAR(static_cast<double>(negative) / kN, 0.5, SixSigma(0.25, kN));
}

TEST(RandintTest, DeterministicChunkableAndShapes) {
  Generator g1(50), g2(50);
  const Tensor a = randint(0, 1000, {6, 5}, &g1);
  EXPECT_TENSOR_EQ(a, randint(0, 1000, {6, 5}, &g2));
  EXPECT_EQ(g1.offset(), 30u);
  Generator chunks(50);
  std::vector<int64_t> joined = randint(0, 1000, {2, 5}, &chunks).to_vector<int64_t>();
  const std::vector<int64_t> rest = randint(0, 1000, {4, 5}, &chunks).to_vector<int64_t>();
  joined.insert(joined.end(), rest.begin(), rest.end());
  EXPECT_EQ(joined, a.to_vector<int64_t>());
  // Rank 0 and size 0.
  const Tensor s = randint(0, 10, {}, &g1);
  EXPECT_EQ(s.sizes(), IntArrayRef{});
  EXPECT_EQ(g1.offset(), 31u);
  const Tensor e = randint(0, 10, {0, 3}, &g1);
  EXPECT_EQ(e.sizes(), (Shape{0, 3}));
  EXPECT_EQ(e.dtype(), kInt64);
  EXPECT_EQ(g1.offset(), 31u);
  // The default generator.
  manual_seed(50);
  EXPECT_TENSOR_EQ(randint(0, 1000, {6, 5}, nullptr), a);
  EXPECT_EQ(DefaultGenerator().offset(), 30u);
}

TEST(RandintTest, EmptyRangeOrNegativeSizeThrowsAndDrawsNothing) {
  Generator g(7);
  EXPECT_FT_ERROR(randint(5, 5, {2}, &g),
                  "randint: expected low < high, got low=5 and high=5 "
                  "(the range [low, high) is empty)");
  EXPECT_FT_ERROR(randint(3, -1, {2}, &g), "randint: expected low < high, got low=3 and high=-1");
  EXPECT_FT_ERROR(randint(0, 4, {2, -1}, &g), "randint: negative size in shape [2, -1]");
  EXPECT_EQ(g.offset(), 0u);
}

}  // namespace
}  // namespace ft::kernels

// Tests of ft::Half and ft::BFloat16 (tensor/half.h): every 16-bit pattern widened, every tie
// between neighbouring values with the floats on either side, 10^6 random float32 bit patterns,
// chosen edges and doubles that round twice, each against torch 1.13's results
// (tests/fixtures/torch/dtypes, made by tools/torch_fixtures/dtypes.py) and, independently of torch
// and of ft's bit arithmetic, against a rounding oracle that searches the sorted list of the
// format's values.
#include "tensor/half.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "interop/npy.h"
#include "tensor/tensor.h"

namespace ft {
namespace {

Tensor Fixture(const std::string &name) {
  const char *srcdir = std::getenv("TEST_SRCDIR");
  const char *workspace = std::getenv("TEST_WORKSPACE");
  const std::string root = srcdir != nullptr ? std::string(srcdir) + "/" +
                                                   (workspace != nullptr ? workspace : "ft") + "/"
                                             : "";
  return LoadNpy(root + "tests/fixtures/torch/dtypes/" + name + ".npy");
}

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
float FromBits(uint32_t b) { return std::bit_cast<float>(b); }

// Format: what the tests need of one 16-bit format.
struct Format {
  std::string name;     // the fixture prefix: "half" or "bfloat16"
  uint16_t largest;     // the largest finite positive pattern
  double past_largest;  // the first value past it (2^16 or 2^128): rounding ends there
  uint16_t (*round)(float);
  float (*widen)(uint16_t);
  bool nan_keeps_sign;  // Half's NaN keeps the sign; BFloat16's is always 0x7FC0
};

const Format kHalf = {"half",
                      0x7BFF,
                      65536.0,
                      [](float f) { return Half(f).bits; },
                      [](uint16_t b) { return static_cast<float>(Half::FromBits(b)); },
                      true};
const Format kBFloat16 = {"bfloat16",
                          0x7F7F,
                          std::ldexp(1.0, 128),
                          [](float f) { return BFloat16(f).bits; },
                          [](uint16_t b) { return static_cast<float>(BFloat16::FromBits(b)); },
                          false};

// Widened: torch's float32 for every pattern of the format (index = pattern).
std::vector<float> Widened(const Format &fmt) {
  return Fixture(fmt.name + ".widened").to_vector<float>();
}

bool IsNan16(const Format &fmt, uint16_t b) {
  return fmt.name == "half" ? (b & 0x7C00) == 0x7C00 && (b & 0x03FF) != 0
                            : (b & 0x7F80) == 0x7F80 && (b & 0x007F) != 0;
}

// Oracle: the pattern nearest to x by IEEE rounding (ties to the even pattern, past the midpoint
// above the largest value to infinity), found by binary search over torch's sorted non-negative
// values: independent of ft's bit tricks.
class Oracle {
 public:
  Oracle(const Format &fmt, const std::vector<float> &widened) : fmt_(fmt) {
    for (uint32_t p = 0; p <= fmt.largest; ++p) values_.push_back(widened[p]);
  }

  uint16_t Round(float x) const {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    if (std::isnan(x)) return fmt_.nan_keeps_sign ? static_cast<uint16_t>(sign | 0x7E00) : 0x7FC0;
    const double a = std::fabs(static_cast<double>(x));
    const double largest = values_.back();
    if (a >= (largest + fmt_.past_largest) / 2) {
      return static_cast<uint16_t>(sign | (fmt_.largest + 1));  // infinity follows the largest
    }
    // values_ is increasing; the first value >= a and the one before it bracket a.
    const auto it = std::lower_bound(values_.begin(), values_.end(), a,
                                     [](float v, double target) { return v < target; });
    if (it == values_.end())
      return static_cast<uint16_t>(sign | fmt_.largest);  // below the midpoint
    const auto hi = static_cast<uint32_t>(it - values_.begin());
    if (values_[hi] == a || hi == 0) return static_cast<uint16_t>(sign | hi);
    const uint32_t lo = hi - 1;
    const double below = a - values_[lo], above = values_[hi] - a;
    uint32_t pick = below < above ? lo : above < below ? hi : (lo % 2 == 0 ? lo : hi);
    return static_cast<uint16_t>(sign | pick);
  }

 private:
  const Format &fmt_;
  std::vector<float> values_;
};

// Ties: the inputs tools/torch_fixtures/dtypes.py's ties() builds, in its order.
std::vector<float> Ties(const Format &fmt, const std::vector<float> &widened) {
  std::vector<float> pos;
  for (uint32_t p = 0; p <= fmt.largest; ++p) {
    const double lo = widened[p];
    const double hi = p < fmt.largest ? static_cast<double>(widened[p + 1]) : fmt.past_largest;
    const auto mid = static_cast<float>((lo + hi) / 2);
    pos.push_back(std::nextafter(mid, -std::numeric_limits<float>::infinity()));
    pos.push_back(mid);
    pos.push_back(std::nextafter(mid, std::numeric_limits<float>::infinity()));
  }
  std::vector<float> all = pos;
  for (float v : pos) all.push_back(-v);
  return all;
}

// LcgFloats: dtypes.py's lcg_floats(n, seed).
std::vector<float> LcgFloats(size_t n, uint64_t seed) {
  std::vector<float> out(n);
  uint64_t state = seed;
  for (size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    out[i] = FromBits(static_cast<uint32_t>(state >> 32));
  }
  return out;
}

// Fnv1a64 over the little-endian bytes of the results, a bfloat16 NaN written as 0x7FC0 (as
// dtypes.py hashes torch's, whose bfloat16 NaN bits depend on the path).
uint64_t Fnv1a64(const Format &fmt, const std::vector<uint16_t> &bits) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (uint16_t b : bits) {
    if (!fmt.nan_keeps_sign && IsNan16(fmt, b)) b = 0x7FC0;
    for (const uint8_t byte : {static_cast<uint8_t>(b & 0xFF), static_cast<uint8_t>(b >> 8)}) {
      h = (h ^ byte) * 0x100000001B3ULL;
    }
  }
  return h;
}

// ExpectRoundsLikeTorchAndOracle: ft's results on `inputs` hash to torch's, and each equals the
// oracle's (the first few mismatches are named).
void ExpectRoundsLikeTorchAndOracle(const Format &fmt, const std::vector<float> &inputs,
                                    const std::string &hash_fixture) {
  const Oracle oracle(fmt, Widened(fmt));
  std::vector<uint16_t> got(inputs.size());
  int mismatches = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    got[i] = fmt.round(inputs[i]);
    const uint16_t want = oracle.Round(inputs[i]);
    if (got[i] != want && ++mismatches <= 5) {
      ADD_FAILURE() << fmt.name << " of float bits " << absl::StrFormat("0x%08x", Bits(inputs[i]))
                    << " (" << inputs[i] << "): ft " << absl::StrFormat("0x%04x", got[i])
                    << ", oracle " << absl::StrFormat("0x%04x", want);
    }
  }
  EXPECT_EQ(mismatches, 0) << fmt.name;
  const auto torch_hash =
      static_cast<uint64_t>(Fixture(fmt.name + "." + hash_fixture).to_vector<int64_t>().at(0));
  EXPECT_EQ(Fnv1a64(fmt, got), torch_hash) << fmt.name << " " << hash_fixture;
}

class HalfFormats : public ::testing::TestWithParam<Format> {};

// Every pattern widens to torch's float, bit for bit (a Half NaN quieted, payload and sign kept; a
// BFloat16 NaN unchanged), and every non-NaN pattern rounds back to itself.
TEST_P(HalfFormats, EveryPatternWidensLikeTorchAndRoundTrips) {
  const Format &fmt = GetParam();
  const std::vector<float> widened = Widened(fmt);
  ASSERT_EQ(widened.size(), 65536u);
  int failures = 0;
  for (uint32_t p = 0; p < 65536; ++p) {
    const auto b = static_cast<uint16_t>(p);
    const float f = fmt.widen(b);
    if (Bits(f) != Bits(widened[p]) && ++failures <= 5) {
      ADD_FAILURE() << fmt.name
                    << absl::StrFormat(" pattern 0x%04x: ft 0x%08x, torch 0x%08x", p, Bits(f),
                                       Bits(widened[p]));
    }
    if (!IsNan16(fmt, b) && fmt.round(f) != b && ++failures <= 5) {
      ADD_FAILURE() << fmt.name << absl::StrFormat(" pattern 0x%04x does not round-trip", p);
    }
  }
  EXPECT_EQ(failures, 0);
}

// Every midpoint between neighbouring values, and the floats just either side: ties go to the even
// pattern, the rest to the nearer one, the midpoint above the largest to infinity.
TEST_P(HalfFormats, TiesAndTheirNeighboursRoundLikeTorch) {
  const Format &fmt = GetParam();
  ExpectRoundsLikeTorchAndOracle(fmt, Ties(fmt, Widened(fmt)), "ties_hash");
}

// 10^6 random float bit patterns: every exponent, subnormals, infinities and NaNs.
TEST_P(HalfFormats, RandomFloatBitPatternsRoundLikeTorch) {
  ExpectRoundsLikeTorchAndOracle(GetParam(), LcgFloats(1000000, 42), "random_hash");
}

// The chosen edges, compared pattern by pattern with torch's (a bfloat16 NaN by NaN-ness: torch's
// bits for it depend on the path; ft's are 0x7FC0).
TEST_P(HalfFormats, EdgesRoundLikeTorch) {
  const Format &fmt = GetParam();
  const std::vector<float> edges = Fixture(fmt.name + ".edges").to_vector<float>();
  const std::vector<int64_t> want = Fixture(fmt.name + ".edges_rounded").to_vector<int64_t>();
  ASSERT_EQ(edges.size(), want.size());
  for (size_t i = 0; i < edges.size(); ++i) {
    const uint16_t got = fmt.round(edges[i]);
    const auto torch = static_cast<uint16_t>(want[i]);
    const std::string what =
        absl::StrFormat("%s of float bits 0x%08x (%g): ft 0x%04x, torch 0x%04x", fmt.name,
                        Bits(edges[i]), edges[i], got, torch);
    if (!fmt.nan_keeps_sign && std::isnan(edges[i])) {
      EXPECT_EQ(got, 0x7FC0) << what;
      EXPECT_TRUE(IsNan16(fmt, torch)) << what;
    } else {
      EXPECT_EQ(got, torch) << what;
    }
  }
}

// A double rounds to float first and then to 16 bits, as torch's casts do: a double just past a tie
// that float cannot tell from the tie goes to even.
TEST_P(HalfFormats, DoublesRoundThroughFloatLikeTorch) {
  const Format &fmt = GetParam();
  const std::vector<double> in = Fixture(fmt.name + ".double_edges").to_vector<double>();
  const std::vector<int64_t> want =
      Fixture(fmt.name + ".double_edges_rounded").to_vector<int64_t>();
  ASSERT_EQ(in.size(), want.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const uint16_t got = fmt.name == "half" ? Half(in[i]).bits : BFloat16(in[i]).bits;
    EXPECT_EQ(got, static_cast<uint16_t>(want[i]))
        << fmt.name << " of double " << absl::StrFormat("%.17g", in[i]);
  }
  // The case the doubles were chosen for: 1 + 2^-11 + 2^-40 is nearer 1 + 2^-10 in Half, but float
  // rounds it to the tie 1 + 2^-11, which goes to the even 1.
  EXPECT_EQ(Half(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)).bits, 0x3C00);
}

INSTANTIATE_TEST_SUITE_P(Formats, HalfFormats, ::testing::Values(kHalf, kBFloat16),
                         [](const auto &info) { return info.param.name; });

TEST(HalfLimits, AreTheFormatsValues) {
  using HL = std::numeric_limits<Half>;
  using BL = std::numeric_limits<BFloat16>;
  EXPECT_EQ(static_cast<float>(HL::max()), 65504.0f);
  EXPECT_EQ(static_cast<float>(HL::lowest()), -65504.0f);
  EXPECT_EQ(static_cast<float>(HL::min()), std::ldexp(1.0f, -14));
  EXPECT_EQ(static_cast<float>(HL::denorm_min()), std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(HL::epsilon()), std::ldexp(1.0f, -10));
  EXPECT_EQ(static_cast<float>(Half(1.0f + static_cast<float>(HL::epsilon()))),
            1.0f + std::ldexp(1.0f, -10));
  EXPECT_TRUE(std::isinf(static_cast<float>(HL::infinity())));
  EXPECT_TRUE(std::isnan(static_cast<float>(HL::quiet_NaN())));
  EXPECT_TRUE(std::isnan(static_cast<float>(HL::signaling_NaN())));
  EXPECT_EQ(static_cast<float>(BL::max()), FromBits(0x7F7F0000));
  EXPECT_EQ(static_cast<float>(BL::lowest()), -FromBits(0x7F7F0000));
  EXPECT_EQ(static_cast<float>(BL::min()), std::numeric_limits<float>::min());
  EXPECT_EQ(static_cast<float>(BL::denorm_min()), std::ldexp(1.0f, -133));
  EXPECT_EQ(static_cast<float>(BL::epsilon()), std::ldexp(1.0f, -7));
  EXPECT_TRUE(std::isinf(static_cast<float>(BL::infinity())));
  EXPECT_TRUE(std::isnan(static_cast<float>(BL::quiet_NaN())));
  EXPECT_TRUE(std::isnan(static_cast<float>(BL::signaling_NaN())));
  // The digits: epsilon is 2^(1 - digits).
  EXPECT_EQ(static_cast<float>(HL::epsilon()), std::ldexp(1.0f, 1 - HL::digits));
  EXPECT_EQ(static_cast<float>(BL::epsilon()), std::ldexp(1.0f, 1 - BL::digits));
}

// The conversions are constexpr: a table of constants costs nothing at run time.
TEST(HalfConstexpr, ConvertsAtCompileTime) {
  static_assert(Half(1.0f).bits == 0x3C00);
  static_assert(Half(-2.0f).bits == 0xC000);
  static_assert(BFloat16(1.0f).bits == 0x3F80);
  static_assert(static_cast<float>(Half::FromBits(0x3555)) == 0.333251953125f);
  static_assert(static_cast<float>(BFloat16::FromBits(0x4049)) == 3.140625f);
  EXPECT_EQ(Half(0.1f).bits, 0x2E66);
}

}  // namespace
}  // namespace ft

// ft/tensor/half.h
//
// The two 16-bit floating element types: ft::Half (IEEE 754 binary16, torch.float16) and
// ft::BFloat16 (the top half of a float32, torch.bfloat16). Each is two bytes holding the
// format's bit pattern; ops compute in float and round once at the end, as torch's CPU
// kernels do, so the types carry no arithmetic of their own: they convert to float
// implicitly and are built from float implicitly.
//
// Invariants, each checked bit for bit against torch 1.13 (tensor/half_test.cc):
// - float -> Half and float -> BFloat16 round to nearest, ties to even. Past the largest
//   finite value (65504 for Half, about 3.39e38 for BFloat16) a value rounds to infinity
//   exactly when IEEE rounding says so; subnormals of both formats are produced and kept.
// - A NaN becomes a quiet NaN: Half keeps the sign and drops the payload (0x7E00 | sign);
//   BFloat16 gives 0x7FC0 whatever the sign and payload (torch's choice, kept).
// - Half -> float and BFloat16 -> float are exact. A Half NaN keeps its sign and payload and
//   is quieted (x86's conversion, which torch's uses); a BFloat16 NaN keeps all its bits.
// - A double converts through float (double -> float -> 16 bits, two roundings), as torch's
//   casts do: a double just past a tie between two Half values can round to the tie in
//   float, and the tie then goes to even.
//
// Example:
//   ft::Half h = 1.0f / 3.0f;             // 0x3555, the nearest binary16 to 1/3
//   float f = h;                          // 0.333251953125
//   ft::BFloat16 b = 1e39f;               // rounds past the largest finite value: inf
//   ft::Half s = ft::Half::FromBits(0x0001);  // 2^-24, the smallest subnormal
#ifndef FT_TENSOR_HALF_H_
#define FT_TENSOR_HALF_H_

#include <bit>
#include <cstdint>
#include <limits>

namespace ft {

namespace half_internal {

// FloatToHalfBits: the binary16 nearest to f (ties to even), as a bit pattern.
constexpr uint16_t FloatToHalfBits(float f) {
  const uint32_t w = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((w >> 16) & 0x8000u);
  const uint32_t a = w & 0x7FFFFFFFu;  // the bits of |f|, compared as integers below
  if (a > 0x7F800000u) {
    return static_cast<uint16_t>(sign | 0x7E00u);  // NaN: quiet, payload dropped
  }
  // 65520 = 0x477FF000 is halfway between 65504 (odd mantissa) and 2^16: it and everything
  // above round to infinity.
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
  if (a >= 0x38800000u) {  // |f| >= 2^-14: a normal binary16
    // Rebias the exponent (127 -> 15) in place, then drop 13 mantissa bits with rounding;
    // a carry out of the mantissa moves into the exponent, which is the right result.
    const uint32_t rebiased = a - (112u << 23);
    const uint32_t round = 0x0FFFu + ((rebiased >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rebiased + round) >> 13));
  }
  // A subnormal binary16 k * 2^-24, k in [0, 1024] (1024 is the smallest normal, whose
  // encoding follows on). |f| = mantissa * 2^(e - 150), so k = mantissa >> (126 - e).
  const uint32_t e = a >> 23;
  if (e < 102) return sign;  // |f| < 2^-25, at most half the smallest subnormal: to zero
  const uint32_t mantissa = (a & 0x007FFFFFu) | 0x00800000u;
  const uint32_t shift = 126 - e;  // 14 .. 24
  uint32_t k = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (k & 1u))) ++k;
  return static_cast<uint16_t>(sign | k);
}

// HalfBitsToFloat: the float equal to the binary16 `h` (exact; a NaN is quieted).
constexpr float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x03FFu;
  if (exponent == 0x1F) {  // infinity, or a NaN made quiet
    const uint32_t quiet = mantissa != 0 ? 0x00400000u : 0u;
    return std::bit_cast<float>(sign | 0x7F800000u | quiet | (mantissa << 13));
  }
  if (exponent != 0) {
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  }
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal: shift the leading one up to the implicit bit's place, lowering the exponent.
  uint32_t float_exponent = 113;  // the exponent of 2^-14 in float, before normalising
  while ((mantissa & 0x0400u) == 0) {
    mantissa <<= 1;
    --float_exponent;
  }
  return std::bit_cast<float>(sign | (float_exponent << 23) | ((mantissa & 0x03FFu) << 13));
}

// FloatToBFloat16Bits: the bfloat16 nearest to f (ties to even), as a bit pattern.
constexpr uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t w = std::bit_cast<uint32_t>(f);
  if ((w & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0u;  // any NaN (torch drops the sign)
  // Round the low 16 bits away, ties to even; a carry ripples into the exponent, and from
  // the largest finite float into infinity, as IEEE rounding wants.
  const uint32_t round = 0x7FFFu + ((w >> 16) & 1u);
  return static_cast<uint16_t>((w + round) >> 16);
}

constexpr float BFloat16BitsToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

}  // namespace half_internal

// Half: an IEEE 754 binary16 (torch.float16): 1 sign bit, 5 exponent bits, 10 mantissa bits.
struct Half {
  uint16_t bits = 0;

  constexpr Half() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): an element type converts like a float.
  constexpr Half(float value) : bits(half_internal::FloatToHalfBits(value)) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  constexpr operator float() const { return half_internal::HalfBitsToFloat(bits); }

  static constexpr Half FromBits(uint16_t pattern) {
    Half h;
    h.bits = pattern;
    return h;
  }
};

// BFloat16: the upper 16 bits of a float32 (torch.bfloat16): float's 8 exponent bits and 7
// mantissa bits, so float's range at 2-3 significant digits.
struct BFloat16 {
  uint16_t bits = 0;

  constexpr BFloat16() = default;
  // NOLINTNEXTLINE(google-explicit-constructor)
  constexpr BFloat16(float value) : bits(half_internal::FloatToBFloat16Bits(value)) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  constexpr operator float() const { return half_internal::BFloat16BitsToFloat(bits); }

  static constexpr BFloat16 FromBits(uint16_t pattern) {
    BFloat16 b;
    b.bits = pattern;
    return b;
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit element types");

}  // namespace ft

// numeric_limits for both, so that generic code (a reduction's identity, a clamp's bounds,
// an epsilon) treats them as the floating types they are.
template <>
class std::numeric_limits<ft::Half> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr bool is_iec559 = true;
  static constexpr bool is_bounded = true;
  static constexpr int digits = 11;
  static constexpr int digits10 = 3;
  static constexpr int max_digits10 = 5;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -13;
  static constexpr int max_exponent = 16;
  static constexpr float_round_style round_style = round_to_nearest;
  static constexpr ft::Half min() { return ft::Half::FromBits(0x0400); }  // 2^-14
  static constexpr ft::Half lowest() { return ft::Half::FromBits(0xFBFF); }
  static constexpr ft::Half max() { return ft::Half::FromBits(0x7BFF); }          // 65504
  static constexpr ft::Half epsilon() { return ft::Half::FromBits(0x1400); }      // 2^-10
  static constexpr ft::Half round_error() { return ft::Half::FromBits(0x3800); }  // 0.5
  static constexpr ft::Half infinity() { return ft::Half::FromBits(0x7C00); }
  static constexpr ft::Half quiet_NaN() { return ft::Half::FromBits(0x7E00); }
  static constexpr ft::Half signaling_NaN() { return ft::Half::FromBits(0x7D00); }
  static constexpr ft::Half denorm_min() { return ft::Half::FromBits(0x0001); }  // 2^-24
};

template <>
class std::numeric_limits<ft::BFloat16> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr int digits = 8;
  static constexpr int digits10 = 2;
  static constexpr int max_digits10 = 4;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -125;
  static constexpr int max_exponent = 128;
  static constexpr float_round_style round_style = round_to_nearest;
  static constexpr ft::BFloat16 min() { return ft::BFloat16::FromBits(0x0080); }  // 2^-126
  static constexpr ft::BFloat16 lowest() { return ft::BFloat16::FromBits(0xFF7F); }
  static constexpr ft::BFloat16 max() { return ft::BFloat16::FromBits(0x7F7F); }
  static constexpr ft::BFloat16 epsilon() { return ft::BFloat16::FromBits(0x3C00); }  // 2^-7
  static constexpr ft::BFloat16 round_error() { return ft::BFloat16::FromBits(0x3F00); }
  static constexpr ft::BFloat16 infinity() { return ft::BFloat16::FromBits(0x7F80); }
  static constexpr ft::BFloat16 quiet_NaN() { return ft::BFloat16::FromBits(0x7FC0); }
  static constexpr ft::BFloat16 signaling_NaN() { return ft::BFloat16::FromBits(0x7F80 | 1); }
  static constexpr ft::BFloat16 denorm_min() { return ft::BFloat16::FromBits(0x0001); }
};

#endif  // FT_TENSOR_HALF_H_

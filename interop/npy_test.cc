// Tests for interop/npy.h: round trips of every dtype bit for bit (NaN payloads, -0,
// subnormals), 0-d, empty and non-contiguous tensors; files written by NumPy itself
// (interop/testdata, made by make_fixtures.py) read back against closed forms, and SaveNpy's
// bytes equal to np.save's; bfloat16 as ml_dtypes writes it ('<V2', NOTE: [bfloat16 in .npy
// files]); and every documented error.
#include "interop/npy.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

// Fixture: a file of interop/testdata in the test's runfiles (Bazel's `data`).
std::string Fixture(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const std::string root = srcdir != nullptr ? std::string(srcdir) + "/ft/" : "";
  return root + "interop/testdata/" + name;
}

// TempPath: a file name in the test's private temporary directory.
std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// V1File: a version 1.0 file with `header` (unpadded) followed by `data`.
std::string V1File(const std::string& header, const std::string& data) {
  std::string file("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  return file + header + data;
}

// FromValues: a contiguous tensor of T's dtype holding exactly the bytes of `values`.
template <typename T>
Tensor FromValues(const std::vector<T>& values, IntArrayRef shape) {
  Tensor t = empty(shape, DTypeOf<T>());
  if (!values.empty()) std::memcpy(t.data<T>(), values.data(), values.size() * sizeof(T));
  return t;
}
template <typename T>
Tensor FromValues(const std::vector<T>& values) {
  return FromValues(values, {static_cast<int64_t>(values.size())});
}

// FromBits: a float16 or bfloat16 tensor of the given bit patterns.
template <typename T>
Tensor FromBits(const std::vector<uint16_t>& bits, IntArrayRef shape) {
  std::vector<T> values;
  for (uint16_t b : bits) values.push_back(T::FromBits(b));
  return FromValues(values, shape);
}

// Bytes: t's elements in row-major order, as raw bytes.
std::string Bytes(const Tensor& t) {
  const Tensor c = contiguous(t);
  return std::string(static_cast<const char*>(c.impl()->raw_data()),
                     static_cast<size_t>(c.numel() * ItemSize(c.dtype())));
}

// SameBits: same dtype, same shape and the same bytes (so NaN payloads and -0 count).
::testing::AssertionResult SameBits(const Tensor& actual, const Tensor& expected) {
  if (actual.dtype() != expected.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << DTypeName(actual.dtype()) << " != " << DTypeName(expected.dtype());
  }
  if (actual.sizes() != expected.sizes()) {
    return ::testing::AssertionFailure() << "shape " << ShapeToString(actual.sizes())
                                         << " != " << ShapeToString(expected.sizes());
  }
  if (Bytes(actual) != Bytes(expected)) {
    return ::testing::AssertionFailure() << "the bytes differ:\n" << actual << "\nvs\n" << expected;
  }
  return ::testing::AssertionSuccess();
}

// RoundTrip: t saved and loaded again.
Tensor RoundTrip(const Tensor& t, const std::string& name) {
  const std::string path = TempPath(name);
  SaveNpy(path, t);
  return LoadNpy(path);
}

TEST(Npy, HeaderExample) {
  Tensor w = reshape(arange(6.0), {2, 3});
  const std::string path = TempPath("w.npy");
  SaveNpy(path, transpose(w, 0, 1));
  Tensor back = LoadNpy(path);
  EXPECT_EQ(back.dtype(), kFloat32);
  EXPECT_TRUE(back.is_contiguous());
  EXPECT_TENSOR_EQ(back, tensor({0.0f, 3.0f, 1.0f, 4.0f, 2.0f, 5.0f}, {3, 2}));
}

// ---- round trips ----

TEST(Npy, RoundTripsEveryDType) {
  const Tensor f4 = tensor({1.5f, -0.0f, 3.4e38f, 1e-45f, -7.0f, 0.25f}, {2, 3});
  const Tensor f8 = tensor({0.1, -1e308, 5e-324, 2.0}, {4, 1});
  const Tensor i8 = tensor(std::vector<int64_t>{INT64_MIN, -1, 0, INT64_MAX}, {2, 2});
  const Tensor b1 = tensor({true, false, false, true, true}, {5});
  EXPECT_TENSOR_EQ(RoundTrip(f4, "f4.npy"), f4);
  EXPECT_TENSOR_EQ(RoundTrip(f8, "f8.npy"), f8);
  EXPECT_TENSOR_EQ(RoundTrip(i8, "i8.npy"), i8);
  EXPECT_TENSOR_EQ(RoundTrip(b1, "b1.npy"), b1);
}

// Bit patterns of every kind: zeros of both signs, the smallest and largest subnormals, the
// largest finite values, infinities, quiet and signaling NaNs with payloads and signs.
const std::vector<uint32_t> kFloat32Bits = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00800000u, 0x3F800000u, 0xC0200000u,
    0x7F7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x7FA00001u, 0xFFC12345u, 0xFF800001u};
const std::vector<uint64_t> kFloat64Bits = {
    0x0000000000000000u, 0x8000000000000000u, 0x0000000000000001u, 0x800FFFFFFFFFFFFFu,
    0x7FEFFFFFFFFFFFFFu, 0x7FF0000000000000u, 0xFFF0000000000000u, 0x7FF8000000000000u,
    0x7FF4000000000001u, 0xFFF8000000000ABCu, 0x3FB999999999999Au, 0xC004000000000000u};

// EveryDTypeSamples: for each of the twelve dtypes, a tensor of telling bit patterns: every
// pattern of the 1- and 2-byte dtypes (bool: 0 and 1), the specials above for the floating
// and complex ones (a complex element pairs two of them), the extremes for the integers.
std::vector<Tensor> EveryDTypeSamples() {
  std::vector<Tensor> out;
  std::vector<uint16_t> all16(65536);
  for (size_t i = 0; i < all16.size(); ++i) all16[i] = static_cast<uint16_t>(i);
  std::vector<int8_t> all_i8(256);
  std::vector<uint8_t> all_u8(256);
  for (int i = 0; i < 256; ++i) {
    all_i8[i] = static_cast<int8_t>(i - 128);
    all_u8[i] = static_cast<uint8_t>(i);
  }
  std::vector<int16_t> all_i16(65536);
  for (size_t i = 0; i < all_i16.size(); ++i) all_i16[i] = static_cast<int16_t>(all16[i]);
  std::vector<float> f4(kFloat32Bits.size());
  std::memcpy(f4.data(), kFloat32Bits.data(), f4.size() * 4);
  std::vector<double> f8(kFloat64Bits.size());
  std::memcpy(f8.data(), kFloat64Bits.data(), f8.size() * 8);
  // Pairs of the same bit patterns as complex parts (a complex is its two parts in order).
  std::vector<std::complex<float>> c8;
  for (size_t i = 0; i + 1 < f4.size(); i += 2) c8.emplace_back(f4[i], f4[i + 1]);
  std::vector<std::complex<double>> c16;
  for (size_t i = 0; i + 1 < f8.size(); i += 2) c16.emplace_back(f8[i], f8[i + 1]);
  out.push_back(FromValues(f4, {2, 7}));
  out.push_back(FromValues(f8, {3, 2, 2}));
  out.push_back(FromValues(std::vector<int64_t>{INT64_MIN, -1, 0, 1, INT64_MAX}));
  out.push_back(tensor({true, false, false, true, true}));
  out.push_back(FromValues(c8, {7}));
  out.push_back(FromValues(c16, {2, 3}));
  out.push_back(FromBits<BFloat16>(all16, {256, 256}));
  out.push_back(FromBits<Half>(all16, {65536}));
  out.push_back(FromValues(all_i8, {16, 16}));
  out.push_back(FromValues(all_i16, {65536}));
  out.push_back(FromValues(std::vector<int32_t>{INT32_MIN, -1, 0, 1, 1 << 24, INT32_MAX}, {3, 2}));
  out.push_back(FromValues(all_u8, {2, 128}));
  return out;
}

TEST(Npy, RoundTripsEveryDTypeBitForBit) {
  const std::vector<Tensor> samples = EveryDTypeSamples();
  DTypeSet seen;
  for (const Tensor& t : samples) {
    SCOPED_TRACE(DTypeName(t.dtype()));
    seen = seen | DTypeSet{t.dtype()};
    EXPECT_TRUE(SameBits(RoundTrip(t, "bits.npy"), t));
    // A non-contiguous view (every other element, reversed dims) writes the same bits.
    const Tensor view = t.dim() == 2 ? transpose(t, 0, 1) : testing::NonContiguousCopy(t);
    ASSERT_FALSE(view.is_contiguous());
    const Tensor back = RoundTrip(view, "view_bits.npy");
    EXPECT_TRUE(back.is_contiguous());
    EXPECT_TRUE(SameBits(back, view));
  }
  EXPECT_EQ(seen, kEveryDType);
}

TEST(Npy, RoundTripsRankZeroEmptyAndSizeOne) {
  const Tensor scalar = scalar_tensor(2.5);
  const Tensor back = RoundTrip(scalar, "0d.npy");
  EXPECT_EQ(back.dim(), 0);
  EXPECT_TENSOR_EQ(back, scalar);
  for (const Tensor& empty : {zeros({0}), zeros({2, 0, 3}, kInt64), zeros({0, 0}, kBool)}) {
    const Tensor e = RoundTrip(empty, "empty.npy");
    EXPECT_EQ(e.sizes(), empty.sizes());
    EXPECT_EQ(e.dtype(), empty.dtype());
  }
  const Tensor ones_ = ones({1, 1, 1}, kFloat64);
  EXPECT_TENSOR_EQ(RoundTrip(ones_, "ones.npy"), ones_);
}

TEST(Npy, SavesNonContiguousTensorsInCOrder) {
  const Tensor base = reshape(arange(int64_t{24}), {2, 3, 4});
  const Tensor permuted = permute(base, {2, 0, 1});               // [4, 2, 3]
  const Tensor sliced = slice(slice(base, 2, 0, 4, 3), 1, 1, 3);  // [2, 2, 2], steps
  const Tensor broadcast = expand(tensor({1.0f, 2.0f}, {2, 1}), {2, 3});
  const Tensor non_contiguous = testing::NonContiguousCopy(tensor({1.0, 2.0, 3.0}));
  for (const Tensor& t : {permuted, sliced, broadcast, non_contiguous}) {
    ASSERT_FALSE(t.is_contiguous());
    const Tensor back = RoundTrip(t, "view.npy");
    EXPECT_TRUE(back.is_contiguous());
    EXPECT_TENSOR_EQ(back, contiguous(t));
  }
  // Saving a view writes the same bytes as saving its contiguous copy.
  SaveNpy(TempPath("a.npy"), permuted);
  SaveNpy(TempPath("b.npy"), clone(permuted));
  EXPECT_EQ(ReadBytes(TempPath("a.npy")), ReadBytes(TempPath("b.npy")));
}

// ---- files NumPy wrote ----

TEST(NpyFixtures, SaveNpyWritesWhatNpSaveWrites) {
  struct Case {
    const char* file;
    Tensor t;
  };
  const std::vector<Case> cases = {
      {"f4_2x3.npy", tensor({-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}, {2, 3})},
      {"f8_1d.npy", tensor({0.1, -2.5, 1e300, 5e-324})},
      {"i8_2x2.npy", tensor(std::vector<int64_t>{-3, 0, int64_t{1} << 40, 7}, {2, 2})},
      {"b1_2x3.npy", tensor({true, false, true, false, false, true}, {2, 3})},
      {"f8_0d.npy", scalar_tensor(3.25, kFloat64)},
      {"f4_0x3.npy", zeros({0, 3})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const Tensor loaded = LoadNpy(Fixture(c.file));
    EXPECT_TENSOR_EQ(loaded, c.t);
    const std::string ours = TempPath(c.file);
    SaveNpy(ours, c.t);
    EXPECT_EQ(ReadBytes(ours), ReadBytes(Fixture(c.file)));
  }
}

TEST(NpyFixtures, FortranOrder) {
  const Tensor f8 = LoadNpy(Fixture("f8_fortran_3x2.npy"));
  EXPECT_TRUE(f8.is_contiguous());
  EXPECT_TENSOR_EQ(f8, reshape(arange(0, 6, 1, kFloat64), {3, 2}));
  // Element [i, j, k] = 100 i + 10 j + k.
  const Tensor i8 = LoadNpy(Fixture("i8_fortran_2x3x4.npy"));
  ASSERT_EQ(i8.sizes(), (IntArrayRef{2, 3, 4}));
  EXPECT_TRUE(i8.is_contiguous());
  const std::vector<int64_t> v = i8.to_vector<int64_t>();
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(v[(i * 3 + j) * 4 + k], 100 * i + 10 * j + k);
    }
  }
}

TEST(NpyFixtures, BigEndianIsByteSwapped) {
  EXPECT_TENSOR_EQ(LoadNpy(Fixture("f8_big_endian.npy")), tensor({1.5, -2.0, 3.0}));
  EXPECT_TENSOR_EQ(LoadNpy(Fixture("f4_big_endian.npy")), tensor({0.25f, 8.0f}, {1, 2}));
  EXPECT_TENSOR_EQ(LoadNpy(Fixture("i8_big_endian_fortran_2x3.npy")),
                   tensor(std::vector<int64_t>{1, 2, 3, -4, 5, int64_t{1} << 33}, {2, 3}));
}

TEST(NpyFixtures, Versions2And3) {
  EXPECT_TENSOR_EQ(LoadNpy(Fixture("f4_v2.npy")), tensor({1.0f, 2.0f, 3.0f}));
  EXPECT_TENSOR_EQ(LoadNpy(Fixture("f4_v3.npy")), tensor({4.0f, 5.0f}, {2, 1}));
}

TEST(NpyFixtures, UnsupportedDTypes) {
  EXPECT_FT_ERROR(LoadNpy(Fixture("object.npy")),
                  "object.npy': unsupported dtype '|O' (Python objects, pickled: ft cannot "
                  "read them); ft reads bool ('|b1'), uint8 ('|u1'), int8 ('|i1'), int16 "
                  "('<i2'), int32 ('<i4'), int64 ('<i8'), float16 ('<f2'), float32 ('<f4'), "
                  "float64 ('<f8'), complex64 ('<c8'), complex128 ('<c16') and bfloat16 ('<V2', "
                  "ml_dtypes' descr), little- or big-endian");
  EXPECT_FT_ERROR(LoadNpy(Fixture("unicode.npy")), "unsupported dtype '<U2' (unicode strings)");
  EXPECT_FT_ERROR(LoadNpy(Fixture("u2.npy")),
                  "u2.npy': unsupported dtype '<u2' (an unsigned integer width ft does not "
                  "have: ft's one unsigned type is uint8; convert with a.astype(np.int64))");
  EXPECT_FT_ERROR(LoadNpy(Fixture("u8.npy")), "unsupported dtype '<u8' (an unsigned integer");
  EXPECT_FT_ERROR(LoadNpy(Fixture("f16.npy")),
                  "unsupported dtype '<f16' (a float width ft does not have: convert with "
                  "a.astype(np.float64))");
  EXPECT_FT_ERROR(LoadNpy(Fixture("c32.npy")),
                  "unsupported dtype '<c32' (a complex width ft does not have: convert with "
                  "a.astype(np.complex128))");
  EXPECT_FT_ERROR(LoadNpy(Fixture("v3.npy")),
                  "unsupported dtype '|V3' (raw bytes or a custom dtype: of the 'V' descrs ft "
                  "reads only 'V2', ml_dtypes' bfloat16)");
  EXPECT_FT_ERROR(LoadNpy(Fixture("structured.npy")),
                  "malformed header: unsupported dtype: a structured array");
}

// ---- files NumPy wrote, the dtypes of issue 43 ----

TEST(NpyFixtures, NewDTypesReadAsNpSaveWroteThemAndSaveTheSameBytes) {
  struct Case {
    const char* file;
    Tensor t;  // the closed form of make_fixtures.py
  };
  std::vector<std::complex<float>> c8;
  std::vector<Half> f2;
  for (int k = 0; k < 6; ++k) {
    c8.emplace_back(static_cast<float>(k - 2), k / 4.0f);
    f2.push_back(Half(k * 0.5f - 1.0f));
  }
  const std::vector<Case> cases = {
      {"c8_2x3.npy", FromValues(c8, {2, 3})},
      {"c16_1d.npy",
       FromValues(std::vector<std::complex<double>>{{0.1, -2.5}, {1e300, 5e-324}, {-0.0, 0.0}})},
      {"f2_2x3.npy", FromValues(f2, {2, 3})},
      {"i1_1d.npy", FromValues(std::vector<int8_t>{-128, -1, 0, 1, 127})},
      {"i2_1d.npy", FromValues(std::vector<int16_t>{-32768, -1, 0, 256, 32767})},
      {"i4_2x3.npy",
       FromValues(std::vector<int32_t>{INT32_MIN, -1, 0, 1, (1 << 24) + 1, INT32_MAX}, {2, 3})},
      {"u1_1x5.npy", FromValues(std::vector<uint8_t>{0, 1, 127, 128, 255}, {1, 5})},
      {"i4.npy", FromValues(std::vector<int32_t>{0, 1, 2})},
      {"u1.npy", FromValues(std::vector<uint8_t>{0, 1, 2})},
      {"c8_0d.npy", FromValues(std::vector<std::complex<float>>{{1.5f, -0.5f}}, {})},
      {"i1_0.npy", FromValues(std::vector<int8_t>{}, {0})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    EXPECT_TRUE(SameBits(LoadNpy(Fixture(c.file)), c.t));
    const std::string ours = TempPath(c.file);
    SaveNpy(ours, c.t);
    EXPECT_EQ(ReadBytes(ours), ReadBytes(Fixture(c.file)));
  }
  // The values through ft's own reads, against the closed forms.
  const Tensor c16 = LoadNpy(Fixture("c16_1d.npy"));
  EXPECT_EQ(c16.to_vector<std::complex<double>>()[1], std::complex<double>(1e300, 5e-324));
  EXPECT_TRUE(std::signbit(c16.to_vector<std::complex<double>>()[2].real()));
  EXPECT_EQ(LoadNpy(Fixture("c8_2x3.npy")).to_vector<std::complex<float>>()[5],
            std::complex<float>(3.0f, 1.25f));
  EXPECT_EQ(LoadNpy(Fixture("f2_2x3.npy")).to_vector<float>(),
            (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
}

// The float16 and bfloat16 bit patterns of make_fixtures.py (F2_BITS, V2_BITS).
const std::vector<uint16_t> kF2Bits = {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0xC100,
                                       0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7D01, 0xFE3F};
const std::vector<uint16_t> kV2Bits = {0x0000, 0x8000, 0x3F80, 0xC020, 0x7F7F, 0x0001,
                                       0x0080, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0xFFC1};

TEST(NpyFixtures, Float16SpecialsKeepTheirBits) {
  const Tensor t = LoadNpy(Fixture("f2_specials.npy"));
  EXPECT_TRUE(SameBits(t, FromBits<Half>(kF2Bits, {13})));
  const std::vector<float> v = t.to_vector<float>();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_FALSE(std::signbit(v[0]));
  EXPECT_TRUE(std::signbit(v[1]) && v[1] == 0.0f);
  EXPECT_EQ(v[2], std::ldexp(1.0f, -24));         // the smallest subnormal
  EXPECT_EQ(v[3], 1023 * std::ldexp(1.0f, -24));  // the largest subnormal
  EXPECT_EQ(v[4], std::ldexp(1.0f, -14));         // the smallest normal
  EXPECT_EQ(v[5], 1.0f);
  EXPECT_EQ(v[6], -2.5f);
  EXPECT_EQ(v[7], 65504.0f);
  EXPECT_EQ(v[8], inf);
  EXPECT_EQ(v[9], -inf);
  for (int i = 10; i < 13; ++i) EXPECT_TRUE(std::isnan(v[i])) << i;
  EXPECT_TRUE(std::signbit(v[12]));
  SaveNpy(TempPath("f2.npy"), t);
  EXPECT_EQ(ReadBytes(TempPath("f2.npy")), ReadBytes(Fixture("f2_specials.npy")));
}

// NOTE: [bfloat16 in .npy files]: SaveNpy writes '<V2' as np.save does for an
// ml_dtypes.bfloat16 array (JAX's bfloat16), and LoadNpy reads every 2-byte void as bfloat16.
TEST(NpyFixtures, BFloat16IsTheTwoByteVoidOfMlDtypes) {
  const Tensor t = LoadNpy(Fixture("bf16_ml_dtypes.npy"));
  EXPECT_TRUE(SameBits(t, FromBits<BFloat16>(kV2Bits, {12})));
  const std::vector<float> v = t.to_vector<float>();
  EXPECT_TRUE(v[1] == 0.0f && std::signbit(v[1]));
  EXPECT_EQ(v[2], 1.0f);
  EXPECT_EQ(v[3], -2.5f);
  EXPECT_EQ(v[4], std::ldexp(255.0f, 120));  // the largest: (2 - 2^-7) * 2^127
  EXPECT_EQ(v[5], std::ldexp(1.0f, -133));   // the smallest subnormal
  EXPECT_EQ(v[6], std::ldexp(1.0f, -126));
  EXPECT_EQ(v[7], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[8], -std::numeric_limits<float>::infinity());
  for (int i = 9; i < 12; ++i) EXPECT_TRUE(std::isnan(v[i])) << i;
  // SaveNpy writes the ml_dtypes file byte for byte.
  SaveNpy(TempPath("bf16.npy"), t);
  EXPECT_EQ(ReadBytes(TempPath("bf16.npy")), ReadBytes(Fixture("bf16_ml_dtypes.npy")));
  // NumPy's own void ('|V2', an ml_dtypes file loaded and saved again without ml_dtypes) and
  // big-endian '>V2' read as bfloat16 too.
  EXPECT_TRUE(SameBits(LoadNpy(Fixture("bf16_numpy_void.npy")),
                       FromBits<BFloat16>({0x0000, 0x8000, 0x3F80, 0xC020}, {4})));
  EXPECT_TRUE(
      SameBits(LoadNpy(Fixture("bf16_big_endian.npy")),
               FromBits<BFloat16>({0x0000, 0x8000, 0x3F80, 0xC020, 0x7F7F, 0x0001}, {2, 3})));
  // NumPy's float32 view of the file is exact: save ft::to(x, kFloat32) for floats.
  EXPECT_TENSOR_EQ(RoundTrip(to(t, kFloat32), "bf16_as_f4.npy"), to(t, kFloat32));
}

TEST(NpyFixtures, NewDTypesBigEndianAndFortranOrder) {
  EXPECT_TRUE(SameBits(LoadNpy(Fixture("c16_big_endian.npy")),
                       FromValues(std::vector<std::complex<double>>{{1.5, -2.0}, {-0.0, 3e-310}})));
  EXPECT_TRUE(SameBits(
      LoadNpy(Fixture("c8_big_endian.npy")),
      FromValues(std::vector<std::complex<float>>{{0.25f, 8.0f}, {-1.0f, -0.5f}}, {2, 1})));
  EXPECT_TRUE(SameBits(LoadNpy(Fixture("f2_big_endian.npy")), FromBits<Half>(kF2Bits, {13})));
  EXPECT_TRUE(SameBits(LoadNpy(Fixture("i2_big_endian.npy")),
                       FromValues(std::vector<int16_t>{-2, 258, 32767})));
  EXPECT_TRUE(SameBits(LoadNpy(Fixture("i4_big_endian.npy")),
                       FromValues(std::vector<int32_t>{-2, (1 << 24) + 3, INT32_MIN})));
  // Element [i, j, k] = 100 i + 10 j + k, and -k as the imaginary part.
  std::vector<std::complex<double>> c16;
  std::vector<int16_t> i2;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        c16.emplace_back(100 * i + 10 * j + k, -k);
        i2.push_back(static_cast<int16_t>(100 * i + 10 * j + k));
      }
    }
  }
  const Tensor c = LoadNpy(Fixture("c16_fortran_2x3x4.npy"));
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_TRUE(SameBits(c, FromValues(c16, {2, 3, 4})));
  EXPECT_TRUE(SameBits(LoadNpy(Fixture("i2_fortran_2x3x4.npy")), FromValues(i2, {2, 3, 4})));
}

TEST(NpyFixtures, Truncated) {
  EXPECT_FT_ERROR(LoadNpy(Fixture("truncated.npy")),
                  "truncated.npy': truncated: shape (2, 3) of float32 ('<f4') needs 24 bytes of "
                  "data but the file has 19");
  // The new dtypes count bytes by their own sizes: a complex128 file short of 3 bytes, a
  // bfloat16 one short of its last byte.
  const std::string path = TempPath("short.npy");
  const std::string c16 = ReadBytes(Fixture("c16_1d.npy"));
  WriteBytes(path, c16.substr(0, c16.size() - 3));
  EXPECT_FT_ERROR(LoadNpy(path),
                  "': truncated: shape (3,) of complex128 ('<c16') needs 48 bytes "
                  "of data but the file has 45");
  const std::string bf16 = ReadBytes(Fixture("bf16_ml_dtypes.npy"));
  WriteBytes(path, bf16.substr(0, bf16.size() - 1));
  EXPECT_FT_ERROR(LoadNpy(path),
                  "truncated: shape (12,) of bfloat16 ('<V2') needs 24 bytes of "
                  "data but the file has 23");
}

// ---- errors ----

TEST(NpyErrors, MissingFileAndBadMagic) {
  const std::string missing = TempPath("no_such_file.npy");
  EXPECT_FT_ERROR(LoadNpy(missing),
                  "LoadNpy: '" + missing + "': cannot open the file: No such file or directory");
  const std::string text = TempPath("text.npy");
  WriteBytes(text, "hello, not numpy\n");
  EXPECT_FT_ERROR(LoadNpy(text), "LoadNpy: '" + text +
                                     "': not a .npy file: bad magic string (the file starts "
                                     "with \"hello, n\", 17 bytes in all");
  WriteBytes(text, "");
  EXPECT_FT_ERROR(LoadNpy(text), "bad magic string (the file starts with \"\", 0 bytes in all");
  WriteBytes(text, std::string("\x93NUMPY\x01", 7));
  EXPECT_FT_ERROR(LoadNpy(text), "truncated: the file ends inside the preamble (7 bytes)");
  WriteBytes(text, std::string("\x93NUM", 4));
  EXPECT_FT_ERROR(LoadNpy(text), "bad magic string (the file starts with \"\\x93NUM\", 4 bytes");
}

TEST(NpyErrors, VersionsAndTruncatedHeaders) {
  const std::string path = TempPath("bad.npy");
  std::string file = ReadBytes(Fixture("f4_2x3.npy"));
  file[6] = 4;
  WriteBytes(path, file);
  EXPECT_FT_ERROR(LoadNpy(path), "unsupported .npy format version 4.0 (ft reads 1.0, 2.0 and 3.0)");
  WriteBytes(path, std::string("\x93NUMPY\x02\x00\x10", 9));
  EXPECT_FT_ERROR(LoadNpy(path), "truncated: the file ends inside the preamble (9 bytes)");
  WriteBytes(path, ReadBytes(Fixture("f4_2x3.npy")).substr(0, 40));
  EXPECT_FT_ERROR(LoadNpy(path),
                  "truncated: the header is 118 bytes but the file has only 30 after the preamble");
}

TEST(NpyErrors, MalformedHeaders) {
  const std::string path = TempPath("header.npy");
  const std::string four_bytes(4, '\0');
  struct Case {
    std::string header, message;
  };
  const std::vector<Case> cases = {
      {"{'descr': '<f4', 'fortran_order': False}", "the header lacks one of the keys"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}", "expected True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
       "expected a size (a non-negative integer)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
       "unexpected key 'extra'"},
      {"['descr']", "expected '{'"},
      {"{'descr': '<f4", "an unterminated string"},
      {"{'descr': '<f4' 'shape': (1,)}", "expected ',' or '}' after a value"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
       "a size does not fit in int64"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header);
    WriteBytes(path, V1File(c.header, four_bytes));
    EXPECT_FT_ERROR(LoadNpy(path), "LoadNpy: '" + path + "': malformed header: " + c.message);
  }
  // A shape whose elements the data cannot hold, in the new dtypes' sizes.
  WriteBytes(path, V1File("{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), }",
                          std::string(6, '\0')));
  EXPECT_FT_ERROR(LoadNpy(path),
                  "truncated: shape (2, 2) of int16 ('<i2') needs 8 bytes of data "
                  "but the file has 6");
  WriteBytes(path, V1File("{'descr': '>c8', 'fortran_order': True, 'shape': (3,), }",
                          std::string(16, '\0')));
  EXPECT_FT_ERROR(LoadNpy(path), "shape (3,) of complex64 ('>c8') needs 24 bytes");
  // Descrs that name no dtype.
  for (const char* descr : {"<x4", "", "<", "f", "<c4", "<V", "<i3", "|b2"}) {
    SCOPED_TRACE(descr);
    WriteBytes(path, V1File(std::string("{'descr': '") + descr +
                                "', 'fortran_order': False, 'shape': (1,), }",
                            four_bytes));
    EXPECT_FT_ERROR(LoadNpy(path), "LoadNpy: '" + path + "': unsupported dtype '" + descr + "'");
  }
  WriteBytes(path, V1File("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, "
                          "4611686018427387904)}",
                          ""));
  EXPECT_FT_ERROR(LoadNpy(path), "has more bytes than int64 can count");
}

TEST(NpyErrors, LenientHeaders) {
  // Double quotes, keys in another order, no trailing comma, Python 2 longs, native order.
  const std::string path = TempPath("lenient.npy");
  const std::string data("\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00", 16);
  WriteBytes(path,
             V1File("{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"=i8\"}\n", data));
  EXPECT_TENSOR_EQ(LoadNpy(path), tensor(std::vector<int64_t>{1, 2}));
  // Bytes other than 0 and 1 in a bool array read as true.
  WriteBytes(path, V1File("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                          std::string("\x00\x07\x01", 3)));
  EXPECT_TENSOR_EQ(LoadNpy(path), tensor({false, true, true}));
  // Extra bytes after the data are ignored, as np.load does.
  WriteBytes(path, V1File("{'descr': '<i8', 'fortran_order': True, 'shape': (2,), }", data + "xx"));
  EXPECT_TENSOR_EQ(LoadNpy(path), tensor(std::vector<int64_t>{1, 2}));
}

TEST(NpyErrors, SaveErrors) {
  const std::string dir_missing = TempPath("no_such_dir/x.npy");
  EXPECT_FT_ERROR(SaveNpy(dir_missing, zeros({2})),
                  "SaveNpy: '" + dir_missing +
                      "': cannot open the file for writing: No such file or directory");
  EXPECT_FT_ERROR(SaveNpy(TempPath("u.npy"), Tensor()),
                  "SaveNpy: '" + TempPath("u.npy") + "': the tensor is undefined");
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) {
                    SaveNpy(TempPath("batched.npy"), x);
                    return x;
                  }))(zeros({2, 3})),
                  "': cannot save a ");
}

}  // namespace
}  // namespace ft

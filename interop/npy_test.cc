// Tests for interop/npy.h: round trips of every dtype, 0-d, empty and non-contiguous
// tensors; files written by NumPy itself (interop/testdata, made by make_fixtures.py) read
// back, and SaveNpy's bytes equal to np.save's; and every documented error.
#include "interop/npy.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
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
                  "read them); ft reads float32 ('<f4'), float64 ('<f8'), int64 ('<i8') and "
                  "bool ('|b1')");
  EXPECT_FT_ERROR(LoadNpy(Fixture("unicode.npy")), "unsupported dtype '<U2' (unicode strings)");
  EXPECT_FT_ERROR(LoadNpy(Fixture("i4.npy")),
                  "unsupported dtype '<i4' (an integer type ft does not have: convert with "
                  "a.astype(np.int64))");
  EXPECT_FT_ERROR(LoadNpy(Fixture("u1.npy")), "unsupported dtype '|u1'");
  EXPECT_FT_ERROR(LoadNpy(Fixture("structured.npy")),
                  "malformed header: unsupported dtype: a structured array");
}

TEST(NpyFixtures, Truncated) {
  EXPECT_FT_ERROR(LoadNpy(Fixture("truncated.npy")),
                  "truncated.npy': truncated: shape (2, 3) of float32 ('<f4') needs 24 bytes of "
                  "data but the file has 19");
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

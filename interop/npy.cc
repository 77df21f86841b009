#include "interop/npy.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "tensor/copy.h"
#include "tensor/error.h"
#include "tensor/shape.h"
#include "tensor/storage.h"

namespace ft {

namespace {

// Elements are copied as raw bytes between the file and ft's buffers, which are in the
// machine's order; the file's is little-endian (SaveNpy) or named by the descr (LoadNpy).
static_assert(std::endian::native == std::endian::little,
              "interop/npy.cc assumes a little-endian machine");

constexpr absl::string_view kMagic("\x93NUMPY", 6);
constexpr size_t kAlign = 64;  // np.save pads the header so the data starts at a multiple

// Printable: up to `max` bytes of `bytes` with non-printable ones as \xNN.
std::string Printable(absl::string_view bytes, size_t max = 16) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (bytes.size() > max) out += "...";
  return out;
}

std::string PyShape(IntArrayRef shape) {
  if (shape.size() == 1) return absl::StrCat("(", shape[0], ",)");
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

// ---- the header: a Python dict literal ----

// HeaderParser reads {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }: the three
// keys np.save writes, in any order, single or double quotes, optional trailing commas,
// Python 2's long suffix in shapes ((3L, 4L)). Errors name the path and the header.
class HeaderParser {
 public:
  HeaderParser(const std::string& path, absl::string_view header) : path_(path), header_(header) {}

  struct Header {
    std::string descr;
    bool fortran_order = false;
    Shape shape;
  };

  Header Parse() {
    Header h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    Expect('{');
    while (true) {
      SkipSpace();
      if (Peek() == '}') break;
      const std::string key = String();
      SkipSpace();
      Expect(':');
      SkipSpace();
      if (key == "descr") {
        if (Peek() == '[') {
          Fail(absl::StrCat("unsupported dtype: a structured array (descr ",
                            Printable(header_.substr(pos_), 40),
                            "); ft reads arrays of one numeric dtype"));
        }
        h.descr = String();
        seen_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = Bool();
        seen_order = true;
      } else if (key == "shape") {
        h.shape = Tuple();
        seen_shape = true;
      } else {
        Fail(absl::StrCat("unexpected key '", key, "' in the header"));
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      SkipSpace();
      if (Peek() != '}') Fail("expected ',' or '}' after a value");
    }
    if (!seen_descr || !seen_order || !seen_shape) {
      Fail("the header lacks one of the keys 'descr', 'fortran_order' and 'shape'");
    }
    return h;
  }

 private:
  [[noreturn]] void Fail(const std::string& why) const {
    ThrowError("LoadNpy: '", path_, "': malformed header: ", why, " (at byte ", pos_,
               " of the header \"", Printable(header_, 120), "\")");
  }
  char Peek() const { return pos_ < header_.size() ? header_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < header_.size() && (header_[pos_] == ' ' || header_[pos_] == '\t' ||
                                     header_[pos_] == '\n' || header_[pos_] == '\r')) {
      ++pos_;
    }
  }
  void Expect(char c) {
    SkipSpace();
    if (Peek() != c) Fail(absl::StrCat("expected '", std::string(1, c), "'"));
    ++pos_;
  }
  std::string String() {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') Fail("expected a quoted string");
    const size_t end = header_.find(quote, pos_ + 1);
    if (end == absl::string_view::npos) Fail("an unterminated string");
    std::string s(header_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  bool Bool() {
    if (header_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (header_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    Fail("expected True or False");
  }
  Shape Tuple() {
    Expect('(');
    Shape shape;
    while (true) {
      SkipSpace();
      if (Peek() == ')') break;
      if (Peek() < '0' || Peek() > '9') Fail("expected a size (a non-negative integer)");
      int64_t v = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, Peek() - '0', &v)) {
          Fail("a size does not fit in int64");
        }
        ++pos_;
      }
      if (Peek() == 'L') ++pos_;  // Python 2 longs
      shape.push_back(v);
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != ')') {
        Fail("expected ',' or ')' in the shape");
      }
    }
    ++pos_;
    return shape;
  }

  const std::string& path_;
  absl::string_view header_;
  size_t pos_ = 0;
};

// ---- dtypes ----

// kReadList: what LoadNpy reads, for the error of an unsupported descr.
constexpr absl::string_view kReadList =
    "ft reads bool ('|b1'), uint8 ('|u1'), int8 ('|i1'), int16 ('<i2'), int32 ('<i4'), int64 "
    "('<i8'), float16 ('<f2'), float32 ('<f4'), float64 ('<f8'), complex64 ('<c8'), complex128 "
    "('<c16') and bfloat16 ('<V2', ml_dtypes' descr), little- or big-endian";

struct FileDType {
  DType dtype;
  bool big_endian;
};

// ParseDescr maps a descr ('<f4') to ft's dtype, or throws naming what it is. The type
// codes are NumPy's array-protocol ones (kind and size in bytes); see NOTE: [bfloat16 in
// .npy files] in npy.h for 'V2'.
FileDType ParseDescr(const std::string& path, const std::string& descr) {
  const char order = descr.empty() ? '\0' : descr[0];
  const bool has_order = order == '<' || order == '>' || order == '|' || order == '=';
  const std::string type = has_order ? descr.substr(1) : descr;
  struct Code {
    const char* type;
    DType dtype;
  };
  static constexpr Code kCodes[] = {
      {"b1", kBool},     {"?", kBool},     {"u1", kUInt8},     {"i1", kInt8},
      {"i2", kInt16},    {"i4", kInt32},   {"i8", kInt64},     {"f2", kFloat16},
      {"f4", kFloat32},  {"f8", kFloat64}, {"c8", kComplex64}, {"c16", kComplex128},
      {"V2", kBFloat16},
  };
  for (const Code& code : kCodes) {
    if (type == code.type) return FileDType{code.dtype, order == '>'};
  }
  const char kind = type.empty() ? '\0' : type[0];
  const char* what = "";
  switch (kind) {
    case 'O':
      what = " (Python objects, pickled: ft cannot read them)";
      break;
    case 'U':
      what = " (unicode strings)";
      break;
    case 'S':
    case 'a':
      what = " (byte strings)";
      break;
    case 'u':
      what =
          " (an unsigned integer width ft does not have: ft's one unsigned type is uint8; "
          "convert with a.astype(np.int64))";
      break;
    case 'i':
      what = " (an integer width ft does not have: convert with a.astype(np.int64))";
      break;
    case 'f':
      what = " (a float width ft does not have: convert with a.astype(np.float64))";
      break;
    case 'c':
      what = " (a complex width ft does not have: convert with a.astype(np.complex128))";
      break;
    case 'M':
    case 'm':
      what = " (datetimes)";
      break;
    case 'V':
      what =
          " (raw bytes or a custom dtype: of the 'V' descrs ft reads only 'V2', ml_dtypes' "
          "bfloat16)";
      break;
  }
  ThrowError("LoadNpy: '", path, "': unsupported dtype '", descr, "'", what, "; ", kReadList);
}

// Descr: the descr np.save writes for `dtype` (little-endian; '|' where the size is one
// byte), and '<V2' for bfloat16 (NOTE: [bfloat16 in .npy files] in npy.h).
const char* Descr(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat64:
      return "<f8";
    case DType::kInt64:
      return "<i8";
    case DType::kBool:
      return "|b1";
    case DType::kComplex64:
      return "<c8";
    case DType::kComplex128:
      return "<c16";
    case DType::kBFloat16:
      return "<V2";
    case DType::kFloat16:
      return "<f2";
    case DType::kInt8:
      return "|i1";
    case DType::kInt16:
      return "<i2";
    case DType::kInt32:
      return "<i4";
    case DType::kUInt8:
      return "|u1";
  }
  FT_CHECK(false && "a dtype without a descr");
  return nullptr;
}

// ByteSwap reverses the bytes of each of `count` units of `unit` bytes (a complex element
// is two units: its parts are swapped one by one, as NumPy stores them).
void ByteSwap(char* data, int64_t count, int64_t unit) {
  for (int64_t i = 0; i < count; ++i) {
    char* e = data + i * unit;
    for (int64_t a = 0, b = unit - 1; a < b; ++a, --b) std::swap(e[a], e[b]);
  }
}

uint32_t LittleEndian(absl::string_view bytes) {
  uint32_t v = 0;
  for (size_t i = bytes.size(); i-- > 0;) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  return v;
}

}  // namespace

Tensor LoadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ThrowError("LoadNpy: '", path, "': cannot open the file: ", std::strerror(errno));
  }
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) ThrowError("LoadNpy: '", path, "': cannot read the file: ", std::strerror(errno));
  const absl::string_view bytes(file);

  if (bytes.substr(0, kMagic.size()) != kMagic) {
    ThrowError("LoadNpy: '", path, "': not a .npy file: bad magic string (the file starts with \"",
               Printable(bytes.substr(0, 8)), "\", ", bytes.size(),
               " bytes in all; a .npy file starts with \"\\x93NUMPY\")");
  }
  if (bytes.size() < 8) {
    ThrowError("LoadNpy: '", path, "': truncated: the file ends inside the preamble (",
               bytes.size(), " bytes)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    ThrowError("LoadNpy: '", path, "': unsupported .npy format version ", major, ".", minor,
               " (ft reads 1.0, 2.0 and 3.0)");
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + length_bytes) {
    ThrowError("LoadNpy: '", path, "': truncated: the file ends inside the preamble (",
               bytes.size(), " bytes)");
  }
  const size_t header_size = LittleEndian(bytes.substr(8, length_bytes));
  const size_t data_start = 8 + length_bytes + header_size;
  if (bytes.size() < data_start) {
    ThrowError("LoadNpy: '", path, "': truncated: the header is ", header_size,
               " bytes but the file has only ", bytes.size() - 8 - length_bytes,
               " after the preamble");
  }
  const HeaderParser::Header header =
      HeaderParser(path, bytes.substr(8 + length_bytes, header_size)).Parse();
  const FileDType file_dtype = ParseDescr(path, header.descr);
  const DType dtype = file_dtype.dtype;
  const int64_t itemsize = ItemSize(dtype);

  int64_t numel = 1, nbytes = 0;
  for (int64_t s : header.shape) {
    if (numel < 0) break;
    if (__builtin_mul_overflow(numel, s, &numel)) numel = -1;
  }
  if (std::find(header.shape.begin(), header.shape.end(), 0) != header.shape.end()) numel = 0;
  if (numel < 0 || __builtin_mul_overflow(numel, itemsize, &nbytes)) {
    ThrowError("LoadNpy: '", path, "': the shape ", PyShape(header.shape), " of ", DTypeName(dtype),
               " elements has more bytes than int64 can count");
  }
  const size_t available = bytes.size() - data_start;
  if (available < static_cast<size_t>(nbytes)) {
    ThrowError("LoadNpy: '", path, "': truncated: shape ", PyShape(header.shape), " of ",
               DTypeName(dtype), " ('", header.descr, "') needs ", nbytes,
               " bytes of data but the file has ", available);
  }

  // Read in the file's element order: C order is the shape's row-major order; Fortran
  // order is the row-major order of the reversed shape.
  Shape file_shape = header.shape;
  if (header.fortran_order) std::reverse(file_shape.begin(), file_shape.end());
  Tensor raw = EmptyContiguous(file_shape, dtype);
  if (nbytes > 0) {
    char* const data = static_cast<char*>(raw.storage().data());
    std::memcpy(data, bytes.data() + data_start, static_cast<size_t>(nbytes));
    if (file_dtype.big_endian) {
      const int64_t parts = IsComplex(dtype) ? 2 : 1;
      ByteSwap(data, numel * parts, itemsize / parts);
    }
    if (dtype == kBool) {  // a bool must hold 0 or 1; NumPy writes those, others read as true
      for (int64_t i = 0; i < numel; ++i) data[i] = data[i] != 0;
    }
  }
  if (!header.fortran_order || header.shape.size() < 2) return raw;
  // The Fortran-order array is the transpose (all dims reversed) of what was read.
  Shape strides(raw.strides().begin(), raw.strides().end());
  std::reverse(strides.begin(), strides.end());
  return kernels::contiguous(MakeDense(raw.storage(), dtype, header.shape, strides, 0));
}

void SaveNpy(const std::string& path, const Tensor& t) {
  if (!t.defined()) {
    ThrowError("SaveNpy: '", path, "': the tensor is undefined (a default-constructed ft::Tensor)");
  }
  if (!t.is_dense()) {
    ThrowError("SaveNpy: '", path, "': cannot save a ", TensorKindName(t.kind()),
               " tensor (a transform's wrapper, of logical sizes ", ShapeToString(t.sizes()),
               "): it has no storage of its own; save outside the transform");
  }
  const Tensor c = kernels::contiguous(t);
  std::string header =
      absl::StrCat("{'descr': '", Descr(c.dtype()),
                   "', 'fortran_order': False, 'shape': ", PyShape(c.sizes()), ", }");
  // Pad with spaces and a final '\n' so the data starts at a multiple of kAlign, as np.save
  // does. Version 1.0 counts the header in 2 bytes; a longer one needs 2.0's 4 bytes.
  auto padded = [&](size_t prefix) {
    return (prefix + header.size() + 1 + kAlign - 1) / kAlign * kAlign - prefix;
  };
  const size_t version1_prefix = kMagic.size() + 2 + 2;
  const bool version2 = padded(version1_prefix) > 65535;
  const size_t header_size = padded(version2 ? version1_prefix + 2 : version1_prefix);
  header.append(header_size - header.size() - 1, ' ');
  header += '\n';

  std::string preamble(kMagic);
  preamble += static_cast<char>(version2 ? 2 : 1);
  preamble += '\0';
  for (size_t i = 0; i < (version2 ? 4u : 2u); ++i) {
    preamble += static_cast<char>((header_size >> (8 * i)) & 0xff);
  }

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    ThrowError("SaveNpy: '", path, "': cannot open the file for writing: ", std::strerror(errno));
  }
  out.write(preamble.data(), static_cast<std::streamsize>(preamble.size()));
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  const int64_t nbytes = c.numel() * ItemSize(c.dtype());
  if (nbytes > 0) {
    out.write(static_cast<const char*>(c.impl()->raw_data()), static_cast<std::streamsize>(nbytes));
  }
  out.close();
  if (!out) {
    ThrowError("SaveNpy: '", path, "': writing the file failed: ", std::strerror(errno));
  }
}

}  // namespace ft

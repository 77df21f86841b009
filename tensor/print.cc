#include "tensor/print.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

// The layout follows PyTorch's torch/_tensor_str.py with its default print options, step by
// step: one _Formatter (mode and column width) over the printed elements, _vector_str
// (line wrapping at 80 columns), _tensor_str_with_formatter (nesting, blank lines between
// blocks), summarization of tensors over 1000 elements to 3 edge items per dim, and
// _add_suffixes (", dtype=..." moves to its own line when the last line would pass 80).
// The only intended difference: dtypes print as "float64", sizes as "[2, 0]".

namespace ft {
namespace {

constexpr int64_t kThreshold = 1000;  // more elements than this are summarized
constexpr int64_t kEdgeItems = 3;     // elements kept at each end of a summarized dim
constexpr int64_t kLineWidth = 80;

// Part: which number of an element a Formatter formats: the element itself, or the real or
// imaginary part of a complex element (torch formats the two parts with one formatter each).
enum class Part { kValue, kReal, kImag };

// Formatter is PyTorch's _Formatter: it picks integer ("2."), fixed ("2.5000") or scientific
// ("2.5000e+00") mode for floats from the nonzero finite values, and the width every element
// is right-aligned to. Integers and bools are read in their own type (an int64 above 2^53
// must print exactly).
class Formatter {
 public:
  Formatter(const TensorImpl& impl, const std::vector<int64_t>& indices, Part part)
      : impl_(impl),
        part_(part),
        floating_(IsFloating(impl.dtype()) || IsComplex(impl.dtype())) {
    if (!floating_) {
      for (int64_t i : indices) max_width_ = std::max(max_width_, Raw(i).size());
      return;
    }
    std::vector<double> vals;
    for (int64_t i : indices) {
      const double v = Read(i);
      if (std::isfinite(v) && v != 0) vals.push_back(v);
    }
    if (vals.empty()) return;  // only zeros / nan / inf: integer mode, width 1
    double min_abs = INFINITY, max_abs = 0;
    for (double v : vals) {
      min_abs = std::min(min_abs, std::fabs(v));
      max_abs = std::max(max_abs, std::fabs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    sci_mode_ = max_abs / min_abs > 1000.0 || max_abs > 1.0e8 || (!int_mode_ && min_abs < 1.0e-4);
    // The width counts only nonzero finite values: "nan" next to "1." is not padded to.
    for (double v : vals) max_width_ = std::max(max_width_, FormatDouble(v).size());
  }

  size_t width() const { return max_width_; }

  // Format returns element `linear` (row-major index) padded on the left to width().
  std::string Format(int64_t linear) const {
    std::string s = Raw(linear);
    if (s.size() < max_width_) s.insert(0, max_width_ - s.size(), ' ');
    return s;
  }

 private:
  // Read: this formatter's number of element `linear`, as a double.
  double Read(int64_t linear) const {
    if (part_ == Part::kValue) return internal::ReadElement<double>(impl_, linear);
    const auto z = internal::ReadElement<std::complex<double>>(impl_, linear);
    return part_ == Part::kReal ? z.real() : z.imag();
  }

  std::string Raw(int64_t linear) const {
    if (impl_.dtype() == kBool) {
      return internal::ReadElement<bool>(impl_, linear) ? "True" : "False";
    }
    if (!floating_) return absl::StrCat(internal::ReadElement<int64_t>(impl_, linear));
    return FormatDouble(Read(linear));
  }

  std::string FormatDouble(double v) const {
    // Python prints every NaN as "nan" (printf would print "-nan" for a negative one).
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci_mode_) return absl::StrFormat("%.4e", v);
    if (int_mode_) return absl::StrFormat("%.0f.", v);
    return absl::StrFormat("%.4f", v);
  }

  const TensorImpl& impl_;
  Part part_;
  bool floating_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t max_width_ = 1;
};

// ElementFormatter formats whole elements: one Formatter, or for a complex tensor one for the
// real parts and one for the imaginary parts, joined as Python writes complex numbers
// ("1.5000+2.0000j", "1.-2.j"; _vector_str's _val_formatter).
class ElementFormatter {
 public:
  ElementFormatter(const TensorImpl& impl, const std::vector<int64_t>& indices)
      : value_(impl, indices, IsComplex(impl.dtype()) ? Part::kReal : Part::kValue) {
    if (IsComplex(impl.dtype())) imag_.emplace(impl, indices, Part::kImag);
  }

  // width: _vector_str's element length without its ", ": both parts and the "j".
  size_t width() const { return value_.width() + (imag_ ? imag_->width() + 1 : 0); }

  std::string Format(int64_t linear) const {
    std::string s = value_.Format(linear);
    if (!imag_) return s;
    std::string imag = imag_->Format(linear) + "j";
    imag.erase(0, imag.find_first_not_of(' '));
    if (imag[0] != '-' && imag[0] != '+') s += "+";
    return s + imag;
  }

 private:
  Formatter value_;
  std::optional<Formatter> imag_;
};

// Printer walks the tensor like _tensor_str_with_formatter. `base` is the row-major linear
// index of the current sub-tensor's first element.
class Printer {
 public:
  explicit Printer(const TensorImpl& impl)
      : impl_(impl), sizes_(impl.sizes()), summarize_(impl.numel() > kThreshold) {
    block_.assign(sizes_.size() + 1, 1);
    for (int64_t d = static_cast<int64_t>(sizes_.size()) - 1; d >= 0; --d) {
      block_[d] = block_[d + 1] * sizes_[d];
    }
  }

  std::string Print(int64_t indent) {
    // The formatter sees only what is printed (get_summarized_data).
    std::vector<int64_t> shown;
    Collect(0, 0, &shown);
    formatter_.emplace(impl_, shown);
    return Dims(0, 0, indent);
  }

 private:
  // Elided reports whether dim `d` is summarized to its edge items.
  bool Elided(size_t d) const { return summarize_ && sizes_[d] > 2 * kEdgeItems; }

  // Indices returns the indices of dim `d` that are printed (-1 marks the "..." gap).
  std::vector<int64_t> Indices(size_t d) const {
    std::vector<int64_t> out;
    if (!Elided(d)) {
      for (int64_t i = 0; i < sizes_[d]; ++i) out.push_back(i);
      return out;
    }
    for (int64_t i = 0; i < kEdgeItems; ++i) out.push_back(i);
    out.push_back(-1);
    for (int64_t i = sizes_[d] - kEdgeItems; i < sizes_[d]; ++i) out.push_back(i);
    return out;
  }

  void Collect(size_t d, int64_t base, std::vector<int64_t>* shown) const {
    if (d == sizes_.size()) {
      shown->push_back(base);
      return;
    }
    for (int64_t i : Indices(d)) {
      if (i >= 0) Collect(d + 1, base + i * block_[d + 1], shown);
    }
  }

  std::string Dims(size_t d, int64_t base, int64_t indent) const {
    const ElementFormatter& f = *formatter_;
    if (d == sizes_.size()) return f.Format(base);  // rank 0
    if (d + 1 == sizes_.size()) {
      // _vector_str: as many elements per line as fit in 80 columns after the indent.
      const int64_t element_length = static_cast<int64_t>(f.width()) + 2;
      const int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / element_length);
      std::vector<std::string> data;
      for (int64_t i : Indices(d)) data.push_back(i < 0 ? " ..." : f.Format(base + i));
      std::string out = "[";
      for (size_t i = 0; i < data.size(); ++i) {
        if (i > 0) {
          out += i % per_line == 0 ? absl::StrCat(",\n", std::string(indent + 1, ' ')) : ", ";
        }
        out += data[i];
      }
      return out + "]";
    }
    // Slices are separated by one newline per remaining dim (a blank line between 2-D
    // blocks of a 3-D tensor) and aligned one column right of this dim's "[".
    const std::string sep =
        absl::StrCat(",", std::string(sizes_.size() - d - 1, '\n'), std::string(indent + 1, ' '));
    std::string out = "[";
    bool first = true;
    for (int64_t i : Indices(d)) {
      if (!first) out += sep;
      first = false;
      out += i < 0 ? "..." : Dims(d + 1, base + i * block_[d + 1], indent + 1);
    }
    return out + "]";
  }

  const TensorImpl& impl_;
  IntArrayRef sizes_;
  bool summarize_;
  std::vector<int64_t> block_;          // block_[d]: elements in one index step of dim d - 1
  std::optional<ElementFormatter> formatter_;  // set by Print
};

// AddSuffixes is _add_suffixes: each suffix goes after ", " unless the last line would pass
// the line width, then on a new line aligned with the contents.
std::string AddSuffixes(std::string s, const std::vector<std::string>& suffixes, int64_t indent) {
  // PyTorch's arithmetic, including its +1 (and +2 without a newline, as rfind gives -1).
  const size_t nl = s.rfind('\n');
  int64_t last_line_len = static_cast<int64_t>(s.size()) -
                          (nl == std::string::npos ? -1 : static_cast<int64_t>(nl)) + 1;
  for (const std::string& suffix : suffixes) {
    const int64_t len = static_cast<int64_t>(suffix.size());
    if (last_line_len + len + 2 > kLineWidth) {
      absl::StrAppend(&s, ",\n", std::string(indent, ' '), suffix);
      last_line_len = indent + len;
    } else {
      absl::StrAppend(&s, ", ", suffix);
      last_line_len += len + 2;
    }
  }
  return s + ")";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << ToString(t); }

std::string ToString(const Tensor& t) {
  if (!t.defined()) return "tensor(undefined)";
  if (!t.is_dense()) return t.impl()->WrapperRepr();
  const std::string prefix = "tensor(";
  const int64_t indent = static_cast<int64_t>(prefix.size());
  std::vector<std::string> suffixes;
  std::string body;
  if (t.numel() == 0) {
    // No element shows the dtype or (beyond 1-D) the shape, so both are spelled out.
    if (t.dim() != 1) suffixes.push_back(absl::StrCat("size=", ShapeToString(t.sizes())));
    if (t.dtype() != kDefaultFloat)
      suffixes.push_back(absl::StrCat("dtype=", DTypeName(t.dtype())));
    body = "[]";
  } else {
    // float32, complex64, int64 and bool are the defaults torch recognizes from the
    // elements; every other dtype is spelled out.
    const DType d = t.dtype();
    if (d != kFloat32 && d != kComplex64 && d != kInt64 && d != kBool) {
      suffixes.push_back(absl::StrCat("dtype=", DTypeName(d)));
    }
    body = Printer(*t.impl()).Print(indent);
  }
  return AddSuffixes(prefix + body, suffixes, indent);
}

}  // namespace ft

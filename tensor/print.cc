#include "tensor/print.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "absl/strings/str_format.h"

namespace ft {
namespace {

enum class FloatMode { kInteger, kFixed, kScientific };

struct Formatter {
  DType dtype;
  FloatMode mode = FloatMode::kFixed;
  size_t width = 0;

  std::string Format(double v) const {
    if (dtype == kBool) return v != 0 ? "True" : "False";
    if (dtype == kInt64) return absl::StrFormat("%d", static_cast<int64_t>(v));
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    switch (mode) {
      case FloatMode::kInteger:
        return absl::StrFormat("%.0f.", v);
      case FloatMode::kFixed:
        return absl::StrFormat("%.4f", v);
      case FloatMode::kScientific:
        return absl::StrFormat("%.4e", v);
    }
    return "";
  }
};

Formatter MakeFormatter(const std::vector<double>& values, DType dtype) {
  Formatter f{dtype};
  if (IsFloating(dtype)) {
    bool all_integral = true;
    double max_abs = 0, min_abs = INFINITY;
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      if (v != std::trunc(v)) all_integral = false;
      const double a = std::fabs(v);
      max_abs = std::max(max_abs, a);
      if (a != 0) min_abs = std::min(min_abs, a);
    }
    if (all_integral) {
      f.mode = max_abs >= 1e8 ? FloatMode::kScientific : FloatMode::kInteger;
    } else if (max_abs >= 1e8 || (min_abs != INFINITY && (max_abs / min_abs > 1e3 || max_abs < 1e-4))) {
      f.mode = FloatMode::kScientific;
    }
  }
  for (double v : values) f.width = std::max(f.width, f.Format(v).size());
  return f;
}

void PrintDims(std::ostream& os, const std::vector<double>& values, IntArrayRef sizes,
               size_t dim, int64_t offset, const Formatter& f, int indent) {
  if (dim == sizes.size()) {
    std::string s = f.Format(values[offset]);
    os << std::string(f.width - s.size(), ' ') << s;
    return;
  }
  int64_t block = 1;
  for (size_t d = dim + 1; d < sizes.size(); ++d) block *= sizes[d];
  os << "[";
  for (int64_t i = 0; i < sizes[dim]; ++i) {
    if (i > 0) {
      os << ",";
      if (dim + 1 == sizes.size()) {
        os << " ";
      } else {
        os << std::string(sizes.size() - dim - 1, '\n') << std::string(indent + 1, ' ');
      }
    }
    PrintDims(os, values, sizes, dim + 1, offset + i * block, f, indent + 1);
  }
  os << "]";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  if (!t.is_dense()) return os << t.impl()->WrapperRepr();
  std::vector<double> values = t.to_vector<double>();
  Formatter f = MakeFormatter(values, t.dtype());
  os << "tensor(";
  if (t.numel() == 0) {
    os << "[]";
    if (t.dim() > 1) os << ", size=" << ShapeToString(t.sizes());
  } else {
    PrintDims(os, values, t.sizes(), 0, 0, f, 7);
  }
  if (t.dtype() == kFloat64 || (t.numel() == 0 && t.dtype() != kDefaultFloat)) {
    os << ", dtype=" << DTypeName(t.dtype());
  }
  return os << ")";
}

std::string ToString(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

}  // namespace ft

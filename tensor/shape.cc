#include "tensor/shape.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tensor/error.h"

namespace ft {

std::string ShapeToString(IntArrayRef shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

int64_t Numel(IntArrayRef shape) {
  for (int64_t s : shape) {
    if (s == 0) return 0;
  }
  int64_t n = 1;
  for (int64_t s : shape) n = SaturatingMul(n, s);
  return n;
}

Shape ContiguousStrides(IntArrayRef shape) {
  Shape strides(shape.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    strides[i] = acc;
    acc = SaturatingMul(acc, std::max<int64_t>(shape[i], 1));
  }
  return strides;
}

int64_t WriteContiguousStrides(IntArrayRef shape, int64_t* strides) {
  int64_t stride = 1;
  bool positive = true;  // every size >= 1: numel is the last (saturated) stride
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    positive = positive && shape[i] >= 1;
    stride = SaturatingMul(stride, std::max<int64_t>(shape[i], 1));
  }
  return positive ? stride : Numel(shape);
}

bool IsContiguous(IntArrayRef shape, IntArrayRef strides) {
  // A tensor without elements is contiguous whatever its strides (PyTorch's rule); checking
  // this first matters when the size-0 dim is not the innermost one.
  if (Numel(shape) == 0) return true;
  int64_t expected = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

int64_t WrapDim(absl::string_view op, int64_t dim, int64_t rank) {
  const int64_t effective = std::max<int64_t>(rank, 1);
  if (dim < -effective || dim >= effective) {
    ThrowError(op, ": dim ", dim, " is out of range for a tensor of rank ", rank,
               " (expected a dim in [", -effective, ", ", effective - 1, "])");
  }
  return dim < 0 ? dim + effective : dim;
}

Shape WrapDims(absl::string_view op, IntArrayRef dims, int64_t rank, bool empty_means_all) {
  Shape out;
  if (dims.empty() && empty_means_all) {
    for (int64_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  bool saw_scalar_dim = false;
  for (int64_t d : dims) {
    int64_t w = WrapDim(op, d, rank);
    if (rank == 0) {
      // Rank 0: dims 0 and -1 both name the (absent) only dim, so the result stays empty,
      // but naming it twice is still a repeat (PyTorch rejects sum(scalar, dim=(0, -1))).
      if (saw_scalar_dim) {
        ThrowError(op, ": dim ", w, " appears more than once in the dim list ",
                   ShapeToString(dims));
      }
      saw_scalar_dim = true;
      continue;
    }
    if (std::find(out.begin(), out.end(), w) != out.end()) {
      ThrowError(op, ": dim ", w, " appears more than once in the dim list ",
                 ShapeToString(dims));
    }
    out.push_back(w);
  }
  return out;
}

bool IsExpandableTo(IntArrayRef shape, IntArrayRef target) {
  if (shape.size() > target.size()) return false;
  const size_t lead = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != 1 && shape[i] != target[lead + i]) return false;
  }
  return true;
}

Shape BroadcastShapes(absl::string_view op, IntArrayRef a, IntArrayRef b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      ThrowError(op, ": shapes ", ShapeToString(a), " and ", ShapeToString(b),
                 " cannot be broadcast together (dim ", i, " of the broadcast shape: ", da,
                 " vs ", db, ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::optional<Shape> TryInferSize(absl::string_view op, IntArrayRef shape, int64_t numel) {
  Shape out(shape.begin(), shape.end());
  std::optional<size_t> infer;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer) {
        ThrowError(op, ": only one dimension can be inferred, got shape ", ShapeToString(shape));
      }
      infer = i;
    } else if (shape[i] < 0) {
      ThrowError(op, ": invalid shape dimension ", shape[i], " in shape ", ShapeToString(shape));
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      ThrowError(op, ": shape ", ShapeToString(shape), " has too many elements (int64 overflow)");
    }
  }
  if (infer) {
    if (known == 0 || numel % known != 0) return std::nullopt;
    out[*infer] = numel / known;
  } else if (known != numel) {
    return std::nullopt;
  }
  return out;
}

int64_t CheckedNumel(absl::string_view op, IntArrayRef shape) {
  int64_t n = 1;
  for (int64_t s : shape) {
    if (__builtin_mul_overflow(n, s, &n)) {
      ThrowError(op, ": shape ", ShapeToString(shape), " has too many elements (int64 overflow)");
    }
  }
  return n;
}

void CheckShapeValid(absl::string_view op, IntArrayRef shape) {
  for (int64_t s : shape) {
    if (s < 0) ThrowError(op, ": negative size in shape ", ShapeToString(shape));
  }
  CheckedNumel(op, shape);
}

}  // namespace ft

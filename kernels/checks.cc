#include "kernels/checks.h"

#include "tensor/error.h"
#include "tensor/shape.h"

namespace ft::kernels::internal {

void CheckFloating(absl::string_view op, const Tensor& t) {
  if (!IsFloating(t.dtype())) {
    ThrowError(op, ": expected a floating point tensor (float32 or float64), got ",
               DTypeName(t.dtype()), " of shape ", ShapeToString(t.sizes()));
  }
}

void CheckWritable(absl::string_view op, const Tensor& self) {
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.strides()[d] == 0 && self.sizes()[d] > 1) {
      ThrowError(op, ": cannot write in place into a tensor whose elements overlap (shape ",
                 ShapeToString(self.sizes()), ", strides ", ShapeToString(self.strides()),
                 ": dim ", d, " is broadcast); clone() it first");
    }
  }
}

void CheckNotBool(absl::string_view op, const Tensor& t) {
  if (t.dtype() == kBool) {
    ThrowError(op, ": not supported for bool tensors (shape ", ShapeToString(t.sizes()), ")");
  }
}

// PerDim: a per-spatial-dim argument with one value per dim (a single value repeats).
Shape PerDim(const char* op, const char* name, IntArrayRef v, int64_t n) {
  if (static_cast<int64_t>(v.size()) == n) return Shape(v.begin(), v.end());
  if (v.size() == 1) return Shape(static_cast<size_t>(n), v[0]);
  ThrowError(op, ": ", name, " must have 1 or ", n, " values, got ", ShapeToString(v));
}

void CheckPositive(const char* op, const char* name, IntArrayRef v) {
  for (int64_t x : v) {
    if (x <= 0) ThrowError(op, ": ", name, " must be positive, got ", ShapeToString(v));
  }
}
void CheckNonNegative(const char* op, const char* name, IntArrayRef v) {
  for (int64_t x : v) {
    if (x < 0) ThrowError(op, ": ", name, " must be non-negative, got ", ShapeToString(v));
  }
}

// CheckInputRank: an input of n spatial dims, with (n + 2) or without (n + 1) the batch dim.
// Returns whether it is batched.
bool CheckInputRank(const char* op, int64_t n, IntArrayRef input) {
  const int64_t r = static_cast<int64_t>(input.size());
  if (r != n + 1 && r != n + 2) {
    ThrowError(op, ": expected a ", n + 1, "-D (unbatched) or ", n + 2,
               "-D (batched) input, got shape ", ShapeToString(input));
  }
  return r == n + 2;
}


// WindowRoom: in + 2 * p - d * (k - 1) - 1, what one dilated window of k leaves of a dim of
// size in padded by p on each side (negative: not even one window fits), for k, d >= 1 and
// in, p >= 0. Parameters so large that this overflows int64 (no tensor has such a dim) throw
// an ft::Error naming op, rather than wrapping into a plausible size.
int64_t WindowRoom(const char* op, int64_t in, int64_t k, int64_t p, int64_t d) {
  int64_t extent = 0, padded = 0, room = 0;
  if (__builtin_mul_overflow(d, k - 1, &extent) || __builtin_mul_overflow(p, 2, &padded) ||
      __builtin_add_overflow(in, padded, &padded) ||
      __builtin_sub_overflow(padded - 1, extent, &room)) {
    ThrowError(op, ": kernel size ", k, " with dilation ", d, " and padding ", p,
               " on a dim of size ", in, " overflows int64");
  }
  return room;
}

}  // namespace ft::kernels::internal

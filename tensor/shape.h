// ft/tensor/shape.h
//
// Shape and stride vocabulary shared by every package: Shape (an inlined vector of int64
// sizes), IntArrayRef (a borrowed view of one), and the helpers every op uses to validate
// dims and broadcast shapes.
//
// Invariants: sizes are >= 0; strides are in elements (not bytes); a stride of 0 means the
// dim is broadcast (every index reads the same element). Rank-0 tensors have an empty shape
// and one element.
//
// Example:
//   Shape s = BroadcastShapes("add", {2, 1, 3}, {4, 3});   // [2, 4, 3]
//   int64_t d = WrapDim("sum", -1, 3);                       // 2
#ifndef FT_TENSOR_SHAPE_H_
#define FT_TENSOR_SHAPE_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ft {

using Shape = absl::InlinedVector<int64_t, 6>;
using IntArrayRef = absl::Span<const int64_t>;

// ShapeToString formats sizes like "[2, 3]".
std::string ShapeToString(IntArrayRef shape);

// SaturatingMul returns a * b, or INT64_MAX when that overflows: a size no check lets
// through, never signed overflow (UB). Sizes of zero-element tensors may be huge
// ([2^62, 0, 2^62]: the fuzzer), so products of sizes use it where a zero may follow.
inline int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

// Numel returns the product of the sizes (1 for rank 0; 0 when a size is 0, however large
// the others; INT64_MAX when the product overflows, which every size check rejects).
int64_t Numel(IntArrayRef shape);

// ContiguousStrides returns row-major strides in elements for `shape` (saturating at
// INT64_MAX, reached only by zero-element shapes with huge sizes).
Shape ContiguousStrides(IntArrayRef shape);

// WriteContiguousStrides writes ContiguousStrides(shape) to strides[0, shape.size()) and
// returns Numel(shape): no Shape built, for the tensor constructors every op runs.
int64_t WriteContiguousStrides(IntArrayRef shape, int64_t* strides);

// IsContiguous reports whether (shape, strides) is row-major contiguous. Size-1 dims may
// carry any stride; tensors with zero elements are contiguous.
bool IsContiguous(IntArrayRef shape, IntArrayRef strides);

// WrapDim turns a possibly negative dim into [0, rank). Throws ft::Error naming `op` when
// dim is outside [-rank, rank). For rank 0, dims -1 and 0 are accepted (PyTorch's rule).
int64_t WrapDim(absl::string_view op, int64_t dim, int64_t rank);

// WrapDims wraps each dim and throws if one repeats. An empty list means "all dims" only
// when `empty_means_all` is set.
Shape WrapDims(absl::string_view op, IntArrayRef dims, int64_t rank, bool empty_means_all);

// BroadcastShapes returns the broadcast of two shapes (numpy rules). Throws naming `op` and
// both shapes when a dim is neither equal nor 1.
Shape BroadcastShapes(absl::string_view op, IntArrayRef a, IntArrayRef b);

// IsExpandableTo: whether `shape` broadcasts to exactly `target` (numpy rules, `target`
// unchanged): what expand accepts and what sum_to_size can undo.
bool IsExpandableTo(IntArrayRef shape, IntArrayRef target);

// TryInferSize resolves the (at most one) -1 in `shape` so that the result holds `numel`
// elements (PyTorch's infer_size). It throws naming `op` for malformed shapes (two -1s, sizes
// below -1, int64 overflow) and returns nullopt when the shape cannot hold `numel` elements;
// a -1 next to a size-0 dim is ambiguous and also yields nullopt, as in PyTorch. Used by
// reshape/view and by their batching rules (which apply it per example).
std::optional<Shape> TryInferSize(absl::string_view op, IntArrayRef shape, int64_t numel);

// CheckedNumel is Numel for shapes that come from users (or are computed from theirs): it
// throws an ft::Error naming `op` and the shape when the count overflows int64, where Numel
// would be undefined behavior.
int64_t CheckedNumel(absl::string_view op, IntArrayRef shape);

// CheckShapeValid throws naming `op` if a size is negative or the element count overflows.
void CheckShapeValid(absl::string_view op, IntArrayRef shape);

}  // namespace ft

#endif  // FT_TENSOR_SHAPE_H_

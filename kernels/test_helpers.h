// ft/kernels/test_helpers.h  (testonly)
//
// Helpers shared by the tests of the kernel families (kernels/<family>_test.cc): seeded
// random inputs, the multi-index arithmetic of the tests' loop oracles, a fast reader of a
// tensor's values, and builders of non-contiguous layouts that hold given values. The
// assertions are tests/test_util.h's; a helper only one family needs stays in its test.
//
// Example: a row-sum oracle over a non-contiguous input.
//   using ::ft::testing::Ravel;
//   const Tensor x = ft::testing::TransposedCopy(ft::testing::Uniform({4, 5}, kFloat64, 7));
//   const std::vector<double> v = ft::testing::Values<double>(x);  // row-major
//   std::vector<double> want(4, 0.0);
//   ft::testing::ForEachIndex({4, 5}, [&](const Shape& i) { want[i[0]] += v[Ravel(i, {4, 5})]; });
//   EXPECT_TENSOR_NEAR(kernels::sum(x, {1}, false), tensor(want), 1e-12);
#ifndef FT_KERNELS_TEST_HELPERS_H_
#define FT_KERNELS_TEST_HELPERS_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft::testing {

// ---- Threads ----

// ScopedThreads: sets the intra-op thread count (cpu/parallel.h) for a scope and restores the
// previous one on exit, so that a kernel's threaded paths run even on a one-core machine.
class ScopedThreads {
 public:
  explicit ScopedThreads(int n);
  ~ScopedThreads();
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int previous_;
};

// ---- Seeded random inputs (std::mt19937, values drawn in row-major order) ----

// Uniform: a `shape` tensor of `dtype` whose values are drawn uniform in [lo, hi) in double
// from std::mt19937(seed), then converted to `dtype`.
Tensor Uniform(IntArrayRef shape, DType dtype, uint32_t seed, double lo = -2.0, double hi = 2.0);

// Rand: a `shape` tensor of `dtype` drawn from `rng`: integers uniform in [-4, 4] for int64
// (sums of their products are exact), otherwise uniform in [-1, 1) in double, converted.
Tensor Rand(IntArrayRef shape, DType dtype, std::mt19937& rng);

// Rand: the same, drawn from std::mt19937(seed).
Tensor Rand(IntArrayRef shape, DType dtype, uint32_t seed);

// RandomInts: n integers uniform in [lo, hi) (half-open) from std::mt19937(seed).
std::vector<int64_t> RandomInts(int64_t n, int64_t lo, int64_t hi, uint32_t seed);

// SmallInts: a `shape` tensor of `dtype` holding integers uniform in [lo, hi] (closed; ties
// are common, which comparisons want): RandomInts(numel, lo, hi + 1, seed), converted.
Tensor SmallInts(IntArrayRef shape, DType dtype, uint32_t seed, int64_t lo = -3, int64_t hi = 3);

// RandomValues: n values exactly representable in `dtype`: r uniform in [-3, 3) from
// std::mt19937(seed), then r > 0 for bool, floor(10 r) for int64, r rounded to float for
// float32.
std::vector<double> RandomValues(int64_t n, DType dtype, uint32_t seed);

// ---- Multi-indices (row-major) ----

// NumelOf: the product of the sizes in `shape` (1 for rank 0).
int64_t NumelOf(IntArrayRef shape);

// Unravel: the multi-index of the element at row-major position `linear` of `shape`.
std::vector<int64_t> Unravel(int64_t linear, IntArrayRef shape);

// Ravel: the row-major position of the multi-index `index` in `shape` (Unravel's inverse).
int64_t Ravel(IntArrayRef index, IntArrayRef shape);

// BroadcastIndex: the row-major position in `own` of the element that broadcasting maps to
// row-major position i of `full` (`own` right-aligned to `full`, its size-1 dims broadcast).
int64_t BroadcastIndex(IntArrayRef own, IntArrayRef full, int64_t i);

// ForEachIndex: calls f(index) with every multi-index of `sizes` (a const Shape&) in
// row-major order: once for rank 0, never when a size is 0.
template <typename F>
void ForEachIndex(IntArrayRef sizes, F&& f) {
  for (int64_t v : sizes) {
    if (v <= 0) return;
  }
  Shape idx(sizes.size(), 0);
  while (true) {
    f(idx);
    int64_t i = static_cast<int64_t>(sizes.size()) - 1;
    for (; i >= 0; --i) {
      if (++idx[static_cast<size_t>(i)] < sizes[static_cast<size_t>(i)]) break;
      idx[static_cast<size_t>(i)] = 0;
    }
    if (i < 0) return;
  }
}

// ---- Values in and out ----

// Values: t's values in row-major order as T (each converted by ConvertElement). A contiguous
// tensor is read straight from memory: to_vector's per-element index arithmetic is slow in
// fastbuild at 10^5 elements.
template <typename T>
std::vector<T> Values(const Tensor& t) {
  if (!t.is_contiguous()) return t.to_vector<T>();
  std::vector<T> out(static_cast<size_t>(t.numel()));
  VisitDType(t.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S* p = static_cast<const S*>(t.impl()->raw_data());
    for (size_t i = 0; i < out.size(); ++i) out[i] = ConvertElement<T>(p[i]);
  });
  return out;
}

// FromDoubles: a new contiguous `shape` tensor of `dtype` holding v in row-major order, each
// value converted by static_cast (int64 truncates) or as v != 0 (bool). The shape is taken by
// reference, not as an IntArrayRef, so that it is read in the call: FromDoubles(Oracle(x,
// &shape), shape, dtype) sees the shape the oracle wrote.
Tensor FromDoubles(const std::vector<double>& v, const std::vector<int64_t>& shape, DType dtype);

// ShapeOf: t's sizes as a Shape.
Shape ShapeOf(const Tensor& t);

// ---- Non-contiguous layouts of given values ----

// Strided: the view of base's storage with these sizes, strides and storage offset, made by
// hand (MakeDense), so that the layout does not depend on the view kernels.
Tensor Strided(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset);

// TransposedView: the [n, m] view of a 2-D [m, n] tensor with its strides swapped, made by
// hand (MakeDense) on t's storage.
Tensor TransposedView(const Tensor& t);

// SteppedView: every `step`-th element of dim `d` of t from `start` (t[..., start::step, ...]),
// a view made by hand on t's storage.
Tensor SteppedView(const Tensor& t, int64_t d, int64_t start, int64_t step);

// TransposedCopy: t's values (rank >= 2) with its last two dims stored transposed: t's shape,
// the strides of those dims swapped (a batch of column-major matrices). Made by transpose and
// contiguous, so it is t itself when that order is already contiguous (a size-1 dim).
Tensor TransposedCopy(const Tensor& t);

// TransposedLayout: t's values (rank >= 2) stored by hand with the last two dims swapped in
// memory, at storage offset 3: unlike TransposedCopy, never contiguous and never at offset 0,
// and made without the view and copy kernels the test may be checking.
Tensor TransposedLayout(const Tensor& t);

// Layouts: t itself and copies of it in non-contiguous layouts, each holding t's values and
// named for the failure message: "contiguous", "stride 2" (rank >= 1, NonContiguousCopy) and
// "transposed" (rank >= 2, TransposedLayout).
std::vector<std::pair<std::string, Tensor>> Layouts(const Tensor& t);

// IsNewContiguous: `out` is contiguous and does not share `input`'s storage (a kernel that
// must return a fresh tensor did).
::testing::AssertionResult IsNewContiguous(const Tensor& out, const Tensor& input);

}  // namespace ft::testing

#endif  // FT_KERNELS_TEST_HELPERS_H_

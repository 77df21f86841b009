// ft/tests/fuzz/fuzz_input.h
//
// What the fuzz targets share: FuzzInput reads a fuzzer's bytes as the small integers, dims,
// sizes, scalars and tensors the public API takes; MakeTensor builds an input tensor from
// them; RunInput runs one input and checks what must hold after every input (the only
// outcomes are a value or an ft::Error, and no transform is left on the layer stack).
//
// Decoding never fails: past the end of the input every read returns 0, so any byte string,
// also a short or empty one, is a valid input. The decoders lean towards values the API
// accepts (dims in range of either sign, sizes 0-5) but also give the edge cases (dims out of
// range, negative and huge sizes, NaN and infinities, extreme integers), so a mutated input
// crosses the validation boundary both ways.
//
// Decode into named locals, one read per function argument list: two reads in the
// arguments of one call are unsequenced, GCC and clang order them differently, and a corpus
// file would then take one path in the GCC replay tests and another in the fuzzer.
//
// Huge sizes are 2^42 and more: with any other factor they overflow int64 or ask for more
// memory than AddressSanitizer or the machine will give, so they end in an ft::Error and
// never in an allocation a fuzzer's -rss_limit_mb reports.
//
// Example (a target):
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
//     ft::fuzz::RunInput([&] {
//       ft::fuzz::FuzzInput in(data, size);
//       ft::Tensor x = ft::fuzz::MakeTensor(in);
//       ft::sum(x, in.DimList(x.dim(), 2), in.Bool());
//     });
//     return 0;
//   }
#ifndef FT_TESTS_FUZZ_FUZZ_INPUT_H_
#define FT_TESTS_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "tensor/dtype.h"
#include "tensor/scalar.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft::fuzz {

// kMaxNumel: a tensor a target keeps to use again has at most this many elements, so one
// input's work stays far below a millisecond per op.
inline constexpr int64_t kMaxNumel = 256;
// kHuge: the smallest huge size the decoders give (see the header comment).
inline constexpr int64_t kHuge = int64_t{1} << 42;

// FuzzInput reads the input front to back.
class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool exhausted() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool Bool() { return (Byte() & 1) != 0; }
  // Below: a number in [0, n) (0 when n <= 1); n is at most 256. Reads one byte whatever n
  // is, so an input's layout does not depend on the values decoded before.
  int64_t Below(int64_t n) {
    const uint8_t b = Byte();
    return n <= 1 ? 0 : b % n;
  }
  // Take: the next `n` bytes (fewer at the end), for a decoder run later (FuzzInput over them).
  std::vector<uint8_t> Take(size_t n);

  // Dim: a dim of a rank-`rank` tensor: mostly in [-rank, rank), sometimes out of range
  // (rank, -rank - 1, 64, INT64_MIN, ...).
  int64_t Dim(int64_t rank);
  // OptionalDim: Dim or nullopt.
  std::optional<int64_t> OptionalDim(int64_t rank);
  // Size: a size or count: mostly 0-5, sometimes -1, -2 or huge.
  int64_t Size();
  // Index: an index into a dim of `size` elements: mostly in [-size, size), sometimes just
  // outside or huge.
  int64_t Index(int64_t size);
  // Double: a value from a table (0, -0, 1, 0.5, 1e30, NaN, +-inf, a denormal, ...) or small.
  double Double();
  // AnyScalar: an integer (INT64_MIN and INT64_MAX included), a double or a bool Scalar.
  Scalar AnyScalar();
  DType AnyDType();
  DType FloatDType() { return Bool() ? kFloat64 : kFloat32; }

  // SizeList: up to max_len Size()s. DimList: up to max_len Dim(rank)s (repeats possible).
  Shape SizeList(int64_t max_len);
  std::vector<int64_t> DimList(int64_t rank, int64_t max_len);
  // ShapeFor: a target shape for reshape/view/expand of x (x's own sizes permuted, with a -1,
  // flattened, or a SizeList).
  Shape ShapeFor(const Tensor& x);

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

struct TensorOptions {
  int64_t max_rank = 4;
  int64_t max_size = 5;
  bool floating_only = false;
};

// MakeTensor: a dense tensor of rank 0..max_rank, sizes 0..max_size, a dtype (float32,
// float64, int64, bool), seeded values with special ones mixed in, and a layout: contiguous,
// transposed, a step-2 slice, an expanded size-1 dim, a select or a narrow of a bigger tensor,
// or dims permuted.
Tensor MakeTensor(FuzzInput& in, const TensorOptions& options = {});
// MakeIndex: an int64 tensor of `shape` with values for a dim of `bound` elements (mostly in
// [0, bound), sometimes negative or past the end).
Tensor MakeIndex(FuzzInput& in, IntArrayRef shape, int64_t bound);

// CheckLayout aborts unless every element of a dense t lies inside its storage.
void CheckLayout(const Tensor& t);

// RunInput runs one input: reseeds the default generator, calls body, swallows an ft::Error
// (any other exception escapes to the fuzzer: a finding), then aborts unless the layer stack
// is empty and grad / forward-grad modes are as before.
void RunInput(absl::FunctionRef<void()> body);

// Verbose: FT_FUZZ_VERBOSE is set: targets print what they decode (for triage).
bool Verbose();

}  // namespace ft::fuzz

#endif  // FT_TESTS_FUZZ_FUZZ_INPUT_H_

#include "tests/fuzz/fuzz_input.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

#include "autograd/grad_mode.h"
#include "dispatch/interpreter.h"
#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/factories.h"
#include "tensor/generator.h"

namespace ft::fuzz {

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace

std::vector<uint8_t> FuzzInput::Take(size_t n) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i < n && pos_ < size_; ++i) out.push_back(data_[pos_++]);
  return out;
}

int64_t FuzzInput::Dim(int64_t rank) {
  const uint8_t b = Byte();
  if (b < 224) {
    if (rank <= 0) return (b & 1) ? -1 : 0;
    const int64_t d = (b >> 1) % rank;
    return (b & 1) ? d - rank : d;
  }
  const int64_t odd[] = {rank, -rank - 1, rank + 1, 64, -65, kI64Min, kI64Max, 1};
  return odd[b % 8];
}

std::optional<int64_t> FuzzInput::OptionalDim(int64_t rank) {
  if (Below(4) == 0) return std::nullopt;
  return Dim(rank);
}

int64_t FuzzInput::Size() {
  static constexpr int64_t kSizes[] = {0, 1, 2, 3, 4, 5, 1, 2, 3, 1, 2, 0,
                                       -1, -2, kHuge, int64_t{1} << 62, kI64Max, kI64Min};
  return kSizes[Below(std::size(kSizes))];
}

int64_t FuzzInput::Index(int64_t size) {
  const uint8_t b = Byte();
  if (b < 224 && size > 0) {
    const int64_t i = (b >> 1) % size;
    return (b & 1) ? i - size : i;
  }
  const int64_t odd[] = {size, -size - 1, 0, -1, kHuge, kI64Min, kI64Max, size + 1};
  return odd[b % 8];
}

double FuzzInput::Double() {
  static constexpr double kValues[] = {0.0,
                                       -0.0,
                                       1.0,
                                       -1.0,
                                       0.5,
                                       2.0,
                                       -2.5,
                                       3.0,
                                       100.0,
                                       1e-30,
                                       1e30,
                                       -1e300,
                                       4.9e-324,
                                       9.3e18,
                                       std::numeric_limits<double>::infinity(),
                                       -std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::quiet_NaN()};
  const uint8_t b = Byte();
  if (b < 128) return (static_cast<double>(b) - 64.0) / 8.0;
  return kValues[b % std::size(kValues)];
}

Scalar FuzzInput::AnyScalar() {
  switch (Below(6)) {
    case 0:
      return Scalar(Bool());
    case 1: {
      const int64_t odd[] = {kI64Max, kI64Min, -1, 0, 2, 1 << 20};
      return Scalar(odd[Below(std::size(odd))]);
    }
    case 2:
    case 3:
      return Scalar(static_cast<int64_t>(Byte() % 16) - 8);
    default:
      return Scalar(Double());
  }
}

DType FuzzInput::AnyDType() {
  static constexpr DType kDTypes[] = {kFloat32, kFloat32, kFloat32, kFloat64,
                                      kFloat64, kInt64,   kInt64,   kBool};
  return kDTypes[Below(std::size(kDTypes))];
}

Shape FuzzInput::SizeList(int64_t max_len) {
  Shape s(static_cast<size_t>(Below(max_len + 1)));
  for (int64_t& v : s) v = Size();
  return s;
}

std::vector<int64_t> FuzzInput::DimList(int64_t rank, int64_t max_len) {
  std::vector<int64_t> d(static_cast<size_t>(Below(max_len + 1)));
  for (int64_t& v : d) v = Dim(rank);
  return d;
}

Shape FuzzInput::ShapeFor(const Tensor& x) {
  Shape own(x.sizes().begin(), x.sizes().end());
  switch (Below(5)) {
    case 0:
      std::reverse(own.begin(), own.end());
      return own;
    case 1:
      if (!own.empty()) own[static_cast<size_t>(Below(static_cast<int64_t>(own.size())))] = -1;
      return own;
    case 2:
      return Shape{-1};
    case 3:
      own.insert(own.begin() + Below(static_cast<int64_t>(own.size()) + 1), Bool() ? 1 : -1);
      return own;
    default:
      return SizeList(4);
  }
}

namespace {

// Fill: a contiguous tensor of `sizes` with seeded values and a few special ones.
Tensor Fill(FuzzInput& in, const Shape& sizes, DType dtype) {
  Generator gen(in.Byte());
  Tensor t;
  switch (dtype) {
    case kFloat32:
    case kFloat64: {
      static constexpr double kScales[] = {1.0, 1.0, 3.0, 1e-3, 1e20};
      t = randn_like(zeros(sizes, dtype), &gen) * kScales[in.Below(std::size(kScales))];
      break;
    }
    case kInt64:
      t = randint(-3, 6, sizes, &gen);
      break;
    case kBool:
      t = to(randint(0, 2, sizes, &gen), kBool);
      break;
    default:
      ThrowDTypeNotSupportedYet(dtype);  // the fuzzers draw the first four dtypes
  }
  const int64_t specials = t.numel() == 0 ? 0 : in.Below(4);
  for (int64_t k = 0; k < specials; ++k) {
    const int64_t at = in.Below(256) % t.numel();
    switch (dtype) {
      case kFloat32:
        t.data<float>()[at] = static_cast<float>(in.Double());
        break;
      case kFloat64:
        t.data<double>()[at] = in.Double();
        break;
      case kInt64: {
        const int64_t odd[] = {kI64Max, kI64Min, -1, 1 << 30};
        t.data<int64_t>()[at] = odd[in.Below(std::size(odd))];
        break;
      }
      case kBool:
        t.data<bool>()[at] = in.Bool();
        break;
      default:
        break;
    }
  }
  return t;
}

}  // namespace

Tensor MakeTensor(FuzzInput& in, const TensorOptions& options) {
  const int64_t rank = in.Below(options.max_rank + 1);
  Shape sizes(static_cast<size_t>(rank));
  for (int64_t& s : sizes) s = in.Below(options.max_size + 1);
  const DType dtype = options.floating_only ? in.FloatDType() : in.AnyDType();
  const int64_t layout = in.Below(7);
  const int64_t d = rank == 0 ? 0 : in.Below(rank);
  const int64_t e = rank == 0 ? 0 : in.Below(rank);
  Shape base = sizes;
  const size_t du = static_cast<size_t>(d), eu = static_cast<size_t>(e);
  switch (layout) {
    case 1:  // transposed
      if (rank >= 2) std::swap(base[du], base[eu]);
      return rank >= 2 ? transpose(Fill(in, base, dtype), d, e) : Fill(in, base, dtype);
    case 2:  // every other element of dim d
      if (rank == 0) break;
      base[du] = 2 * sizes[du];
      return slice(Fill(in, base, dtype), d, std::nullopt, std::nullopt, 2);
    case 3:  // dim d broadcast from size 1
      if (rank == 0) break;
      base[du] = 1;
      return expand(Fill(in, base, dtype), sizes);
    case 4: {  // one row of a bigger tensor
      base.insert(base.begin(), 2 + in.Below(2));
      const Tensor big = Fill(in, base, dtype);
      return select(big, 0, in.Below(base[0]));
    }
    case 5: {  // an offset window of dim d
      if (rank == 0) break;
      const int64_t start = 1 + in.Below(2);
      base[du] = sizes[du] + start + in.Below(2);
      return narrow(Fill(in, base, dtype), d, start, sizes[du]);
    }
    case 6: {  // dims reversed
      std::reverse(base.begin(), base.end());
      std::vector<int64_t> order(static_cast<size_t>(rank));
      for (int64_t i = 0; i < rank; ++i) order[static_cast<size_t>(i)] = rank - 1 - i;
      return permute(Fill(in, base, dtype), order);
    }
    default:
      break;
  }
  return Fill(in, base, dtype);
}

Tensor MakeIndex(FuzzInput& in, IntArrayRef shape, int64_t bound) {
  Generator gen(in.Byte());
  const int64_t b = std::max<int64_t>(bound, 1);
  switch (in.Below(8)) {
    case 0:
      return randint(-b, b, shape, &gen);  // negative indices
    case 1:
      return randint(0, b + 1, shape, &gen);  // one past the end
    case 2:
      return full(shape, in.Index(bound), kInt64);
    default:
      return randint(0, b, shape, &gen);
  }
}

void CheckLayout(const Tensor& t) {
  if (!t.defined() || !t.is_dense() || t.numel() == 0) return;
  int64_t lo = t.storage_offset(), hi = t.storage_offset();
  for (int64_t i = 0; i < t.dim(); ++i) {
    const int64_t span = (t.sizes()[static_cast<size_t>(i)] - 1) * t.strides()[static_cast<size_t>(i)];
    (span < 0 ? lo : hi) += span;
  }
  const int64_t capacity = static_cast<int64_t>(t.storage().nbytes()) / ItemSize(t.dtype());
  if (lo < 0 || hi >= capacity) {
    Fail("a tensor reaches outside its storage: " + t.DebugString() + ", storage of " +
         std::to_string(capacity) + " elements");
  }
}

void RunInput(absl::FunctionRef<void()> body) {
  const bool grad_mode = GradMode::is_enabled();
  const bool fwd_grad_mode = FwdGradMode::is_enabled();
  manual_seed(0);
  try {
    body();
  } catch (const Error& e) {
    if (Verbose()) std::fprintf(stderr, "ft::Error: %s\n", e.what());
  }
  if (!LayerStack::empty()) {
    Fail("the layer stack is not empty after the input: " + LayerStack::DebugString());
  }
  if (GradMode::is_enabled() != grad_mode || FwdGradMode::is_enabled() != fwd_grad_mode) {
    Fail("grad mode or forward grad mode changed across the input");
  }
}

bool Verbose() {
  static const bool verbose = std::getenv("FT_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

}  // namespace ft::fuzz

// Under AddressSanitizer a request the allocator cannot satisfy aborts the process unless it
// may return null, which is what malloc does without it (and what ft reports as an ft::Error).
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

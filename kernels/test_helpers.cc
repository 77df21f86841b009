#include "kernels/test_helpers.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cpu/parallel.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft::testing {

ScopedThreads::ScopedThreads(int n) : previous_(GetNumThreads()) { SetNumThreads(n); }

ScopedThreads::~ScopedThreads() { SetNumThreads(previous_); }

Tensor Uniform(IntArrayRef shape, DType dtype, uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(NumelOf(shape)));
  for (double& e : v) e = u(rng);
  return kernels::to(tensor(v, shape), dtype);
}

Tensor Rand(IntArrayRef shape, DType dtype, std::mt19937& rng) {
  std::vector<double> v(static_cast<size_t>(NumelOf(shape)));
  if (dtype == kInt64) {
    std::uniform_int_distribution<int> d(-4, 4);
    for (double& e : v) e = d(rng);
  } else {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (double& e : v) e = d(rng);
  }
  return kernels::to(tensor(v, shape), dtype);
}

Tensor Rand(IntArrayRef shape, DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  return Rand(shape, dtype, rng);
}

std::vector<int64_t> RandomInts(int64_t n, int64_t lo, int64_t hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> u(lo, hi - 1);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t& e : v) e = u(rng);
  return v;
}

Tensor SmallInts(IntArrayRef shape, DType dtype, uint32_t seed, int64_t lo, int64_t hi) {
  return kernels::to(tensor(RandomInts(NumelOf(shape), lo, hi + 1, seed), shape), dtype);
}

std::vector<double> RandomValues(int64_t n, DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& e : v) {
    const double r = u(rng);
    e = dtype == kBool ? (r > 0) : dtype == kInt64 ? std::floor(r * 10) : r;
    if (dtype == kFloat32) e = static_cast<float>(e);
  }
  return v;
}

int64_t NumelOf(IntArrayRef shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::vector<int64_t> Unravel(int64_t linear, IntArrayRef shape) {
  std::vector<int64_t> idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = linear % shape[d];
    linear /= shape[d];
  }
  return idx;
}

int64_t Ravel(IntArrayRef index, IntArrayRef shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d) linear = linear * shape[d] + index[d];
  return linear;
}

int64_t BroadcastIndex(IntArrayRef own, IntArrayRef full, int64_t i) {
  int64_t index = 0, scale = 1;
  for (int64_t d = static_cast<int64_t>(full.size()) - 1; d >= 0; --d) {
    const int64_t idx = i % full[d];
    i /= full[d];
    const int64_t od = d - static_cast<int64_t>(full.size() - own.size());
    if (od < 0) continue;
    if (own[od] != 1) index += idx * scale;
    scale *= own[od];
  }
  return index;
}

Tensor FromDoubles(const std::vector<double>& v, const std::vector<int64_t>& shape, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return tensor(std::vector<float>(v.begin(), v.end()), shape);
    case DType::kFloat64:
      return tensor(v, shape);
    case DType::kInt64: {
      std::vector<int64_t> w;
      for (double e : v) w.push_back(static_cast<int64_t>(e));
      return tensor(w, shape);
    }
    case DType::kBool: {
      std::vector<bool> w;
      for (double e : v) w.push_back(e != 0);
      return tensor(w, shape);
    }
    default:
      break;
  }
  ThrowDTypeNotSupportedYet(dtype);
}

Shape ShapeOf(const Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end()); }

Tensor Strided(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return MakeDense(base.storage(), base.dtype(), Shape(sizes.begin(), sizes.end()),
                   Shape(strides.begin(), strides.end()), offset);
}

Tensor TransposedView(const Tensor& t) {
  return MakeDense(t.storage(), t.dtype(), {t.size(1), t.size(0)}, {t.stride(1), t.stride(0)},
                   t.storage_offset());
}

Tensor SteppedView(const Tensor& t, int64_t d, int64_t start, int64_t step) {
  Shape sizes(t.sizes().begin(), t.sizes().end());
  Shape strides(t.strides().begin(), t.strides().end());
  sizes[d] = (sizes[d] - start + step - 1) / step;
  strides[d] *= step;
  return MakeDense(t.storage(), t.dtype(), sizes, strides,
                   t.storage_offset() + start * t.stride(d));
}

Tensor TransposedCopy(const Tensor& t) {
  return kernels::transpose(kernels::contiguous(kernels::transpose(t, -2, -1)), -2, -1);
}

Tensor TransposedLayout(const Tensor& t) {
  const std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
  const size_t r = shape.size();
  std::vector<int64_t> stored = shape;
  std::swap(stored[r - 1], stored[r - 2]);
  const std::vector<double> v = t.to_vector<double>();
  std::vector<double> buf(v.size() + 3, 0.0);
  for (size_t i = 0; i < v.size(); ++i) {
    std::vector<int64_t> idx = Unravel(static_cast<int64_t>(i), shape);
    std::swap(idx[r - 1], idx[r - 2]);
    buf[static_cast<size_t>(3 + Ravel(idx, stored))] = v[i];
  }
  const Tensor storage = FromDoubles(buf, {static_cast<int64_t>(buf.size())}, t.dtype());
  std::vector<int64_t> strides(r);
  int64_t acc = 1;
  for (size_t d = r; d-- > 0;) {
    strides[d] = acc;
    acc *= stored[d];
  }
  std::swap(strides[r - 1], strides[r - 2]);
  return Strided(storage, shape, strides, 3);
}

std::vector<std::pair<std::string, Tensor>> Layouts(const Tensor& t) {
  std::vector<std::pair<std::string, Tensor>> out = {{"contiguous", t}};
  if (t.dim() >= 1) out.push_back({"stride 2", NonContiguousCopy(t)});
  if (t.dim() >= 2) out.push_back({"transposed", TransposedLayout(t)});
  return out;
}

::testing::AssertionResult IsNewContiguous(const Tensor& out, const Tensor& input) {
  if (out.storage().is_same(input.storage())) {
    return ::testing::AssertionFailure() << "aliases the input";
  }
  if (!out.is_contiguous()) return ::testing::AssertionFailure() << "not contiguous";
  return ::testing::AssertionSuccess();
}

}  // namespace ft::testing

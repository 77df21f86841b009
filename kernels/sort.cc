#include "kernels/sort.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensor/loops.h"

namespace ft::kernels {
namespace {

// What to do with each slice once its (key, index) pairs are ordered.
enum class Select {
  kAll,        // a full sort: k == n
  kTopSorted,  // the first k of the order, in order
  kTopByIndex  // the first k of the order, by increasing original index (topk sorted=false)
};

// KeyLess is the key order: < with NaN above everything (NaNs are equal to each other).
template <typename T>
inline bool KeyLess(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(b)) return !std::isnan(a);
    return a < b;
  } else {
    return a < b;
  }
}

// OrderSlices orders every slice of `x` along `dim` and writes the first k entries of each
// to the contiguous outputs (shape of x with dim resized to k). `values` may be null
// (argsort). The comparator breaks key ties by index, so std::sort / nth_element, which are
// not stable, yield exactly the stable order.
template <typename T, bool kDescending>
void OrderSlices(const Tensor& x, int64_t dim, int64_t k, Select select, T* values,
                 int64_t* indices) {
  const int64_t n = x.sizes()[dim];
  const int64_t s = x.strides()[dim];
  Shape rest_sizes;
  Shape rest_strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d == dim) continue;
    rest_sizes.push_back(x.sizes()[d]);
    rest_strides.push_back(x.strides()[d]);
  }
  const int64_t slices = Numel(rest_sizes);
  if (slices == 0 || n == 0 || k == 0) return;
  // Only now: an empty tensor's other sizes may be huge ([2^42, 0, 2^42]), and their product
  // would overflow; x has elements here, so every product of its sizes fits.
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.sizes()[d];

  using Entry = std::pair<T, int64_t>;
  const auto before = [](const Entry& a, const Entry& b) {
    const bool lt = kDescending ? KeyLess(b.first, a.first) : KeyLess(a.first, b.first);
    if (lt) return true;
    const bool gt = kDescending ? KeyLess(a.first, b.first) : KeyLess(b.first, a.first);
    return !gt && a.second < b.second;
  };
  std::vector<Entry> buf(static_cast<size_t>(n));
  const T* base = static_cast<const T*>(x.impl()->raw_data());
  const int64_t rank = static_cast<int64_t>(rest_sizes.size());
  Shape index(rest_sizes.size(), 0);
  int64_t in_off = 0;
  for (int64_t r = 0; r < slices; ++r) {
    const T* p = base + in_off;
    for (int64_t j = 0; j < n; ++j) buf[j] = Entry(p[j * s], j);
    if (select == Select::kTopByIndex) {
      if (k < n) {  // (with k == n, buf is already in index order)
        std::nth_element(buf.begin(), buf.begin() + (k - 1), buf.end(), before);
        std::sort(buf.begin(), buf.begin() + k,
                  [](const Entry& a, const Entry& b) { return a.second < b.second; });
      }
    } else if (k == n) {
      std::sort(buf.begin(), buf.end(), before);
    } else {
      // nth_element puts the k-th entry in place and the k - 1 before it ahead of it.
      std::nth_element(buf.begin(), buf.begin() + (k - 1), buf.end(), before);
      std::sort(buf.begin(), buf.begin() + (k - 1), before);
    }
    const int64_t out_off = (r / inner) * k * inner + r % inner;
    if (values != nullptr) {
      T* v = values + out_off;
      for (int64_t j = 0; j < k; ++j) v[j * inner] = buf[j].first;
    }
    int64_t* ix = indices + out_off;
    for (int64_t j = 0; j < k; ++j) ix[j * inner] = buf[j].second;
    for (int64_t d = rank - 1; d >= 0; --d) {  // odometer step over the other dims
      if (++index[d] < rest_sizes[d]) {
        in_off += rest_strides[d];
        break;
      }
      index[d] = 0;
      in_off -= rest_strides[d] * (rest_sizes[d] - 1);
    }
  }
}

// AsAtLeast1D views a rank-0 tensor as shape [1] (the sort of one element).
Tensor AsAtLeast1D(const Tensor& x) {
  if (x.dim() > 0) return x;
  return MakeDense(x.storage(), x.dtype(), {1}, {1}, x.storage_offset());
}

// AsRank0 views a one-element contiguous result as rank 0.
Tensor AsRank0(const Tensor& t) { return MakeDense(t.storage(), t.dtype(), {}, {}, 0); }

// Order runs the kernel shared by sort, argsort and topk. Returns (values, indices); values
// is undefined when want_values is false.
std::pair<Tensor, Tensor> Order(const Tensor& x_in, int64_t dim, int64_t k, bool descending,
                                Select select, bool want_values) {
  const bool rank0 = x_in.dim() == 0;
  const Tensor x = AsAtLeast1D(x_in);
  Shape out_shape(x.sizes().begin(), x.sizes().end());
  out_shape[dim] = k;
  Tensor values = want_values ? EmptyContiguous(out_shape, x.dtype()) : Tensor();
  Tensor indices = EmptyContiguous(out_shape, kInt64);
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* v = want_values ? values.data<T>() : nullptr;
    int64_t* ix = indices.data<int64_t>();
    if (descending) {
      OrderSlices<T, true>(x, dim, k, select, v, ix);
    } else {
      OrderSlices<T, false>(x, dim, k, select, v, ix);
    }
  });
  if (rank0) {
    if (want_values) values = AsRank0(values);
    indices = AsRank0(indices);
  }
  return {values, indices};
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  const int64_t d = WrapDim("sort", dim, x.dim());
  const int64_t n = x.dim() == 0 ? 1 : x.sizes()[d];
  auto [values, indices] = Order(x, d, n, descending, Select::kAll, true);
  return {values, indices};
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  const int64_t d = WrapDim("argsort", dim, x.dim());
  const int64_t n = x.dim() == 0 ? 1 : x.sizes()[d];
  return Order(x, d, n, descending, Select::kAll, false).second;
}

std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
  const int64_t d = WrapDim("topk", dim, x.dim());
  if (x.dim() == 0) {
    if (k != 1) {
      ThrowError("topk: k (", k, ") is out of range for a rank-0 tensor, which holds exactly ",
                 "one element (k must be 1)");
    }
  } else if (k < 0 || k > x.sizes()[d]) {
    ThrowError("topk: k (", k, ") is out of range for dimension ", d, " of size ",
               x.sizes()[d], " (shape ", ShapeToString(x.sizes()), ")");
  }
  const Select select = sorted ? Select::kTopSorted : Select::kTopByIndex;
  auto [values, indices] = Order(x, d, k, largest, select, true);
  return {values, indices};
}

}  // namespace ft::kernels

#include "kernels/view.h"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>
#include <vector>

#include "tensor/loops.h"

namespace ft::kernels {
namespace {

using internal::OffsetAdd;
using internal::StrideMul;

// Alias is the one way every view is made: same storage and dtype, new geometry. It never
// touches the elements or the version counter.
Tensor Alias(const Tensor& x, Shape sizes, Shape strides, int64_t offset) {
  return MakeDense(x.storage(), x.dtype(), std::move(sizes), std::move(strides), offset);
}

Tensor Alias(const Tensor& x) {
  return Alias(x, Shape(x.sizes().begin(), x.sizes().end()),
               Shape(x.strides().begin(), x.strides().end()), x.storage_offset());
}

Shape InferSize(absl::string_view op, IntArrayRef shape, int64_t numel) {
  std::optional<Shape> out = TryInferSize(op, shape, numel);
  if (!out) {
    ThrowError(op, ": shape ", ShapeToString(shape), " is invalid for input of size ", numel);
  }
  return *std::move(out);
}

// ComputeStride is PyTorch's computeStride (aten/src/ATen/TensorUtils.cpp): the strides that
// let a tensor of (old_sizes, old_strides) be viewed as new_sizes, or nullopt when no such
// strides exist. The old dims are cut into "chunks" of dims that are contiguous with respect
// to each other (size-1 dims never cut a chunk); a view is possible exactly when the new
// dims can be grouped into the same chunks (each chunk's numel matched by consecutive new
// dims), and the new strides inside a chunk are contiguous from the chunk's innermost
// stride.
std::optional<Shape> ComputeStride(IntArrayRef old_sizes, IntArrayRef old_strides,
                                   IntArrayRef new_sizes) {
  const int64_t new_rank = static_cast<int64_t>(new_sizes.size());
  if (old_sizes.empty()) return Shape(new_sizes.size(), 1);
  const int64_t numel = Numel(old_sizes);
  Shape new_strides(new_sizes.size());
  if (numel == 0) {
    if (std::equal(old_sizes.begin(), old_sizes.end(), new_sizes.begin(), new_sizes.end())) {
      return Shape(old_strides.begin(), old_strides.end());
    }
    // No element is ever addressed: any strides do; use contiguous ones.
    return ContiguousStrides(new_sizes);
  }
  int64_t view_d = new_rank - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0;
       --tensor_d) {
    tensor_numel *= old_sizes[tensor_d];
    // A chunk ends at dim 0 or where the next outer dim is not contiguous with this one.
    if (tensor_d == 0 || (old_sizes[tensor_d - 1] != 1 &&
                          old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

void CheckNotScalar(absl::string_view op, const Tensor& x) {
  if (x.dim() == 0) ThrowError(op, ": cannot be applied to a 0-dim tensor");
}

// Permuted is the view of x with dims reordered: result dim i is x's dim order[i].
Tensor Permuted(const Tensor& x, IntArrayRef order) {
  Shape sizes(order.size());
  Shape strides(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    sizes[i] = x.sizes()[order[i]];
    strides[i] = x.strides()[order[i]];
  }
  return Alias(x, std::move(sizes), std::move(strides), x.storage_offset());
}

// FlipRun copies the elements of one run; a negative input stride walks backwards.
template <typename T>
void FlipRun(char* out, char* in, int64_t out_stride, int64_t in_stride, int64_t n) {
  constexpr int64_t kItem = sizeof(T);
  T* o = reinterpret_cast<T*>(out);
  const T* a = reinterpret_cast<const T*>(in);
  if (out_stride == kItem && in_stride == -kItem) {
    // The common case (flipping the innermost dim of a contiguous tensor): a vectorized
    // reverse of the run that ends at `a`.
    internal::ArrayMap<T>(o, n) = internal::ConstArrayMap<T>(a - (n - 1), n).reverse();
    return;
  }
  if (out_stride == kItem && in_stride == kItem) {
    std::copy(a, a + n, o);
    return;
  }
  const int64_t os = out_stride / kItem;
  const int64_t is = in_stride / kItem;
  for (int64_t i = 0; i < n; ++i) o[i * os] = a[i * is];
}

// ScatterThroughView is the three scatter ops: `region` maps a tensor to the view the op
// writes (select / slice / diagonal with the op's arguments). Taking the view of self first
// runs the view's argument checks, so every error comes before anything is allocated; then
// src goes into the same view of a copy of self, with the strided copy every kernel uses.
template <typename Region>
Tensor ScatterThroughView(absl::string_view op, const Tensor& self, const Tensor& src,
                          const Region& region) {
  CheckScatterSrc(op, region(self).sizes(), src.sizes(), self.dtype(), src.dtype());
  Tensor out = clone(self);
  copy_into(region(out), src);
  return out;
}

}  // namespace

Tensor reshape(const Tensor& x, IntArrayRef shape) {
  const Shape sizes = InferSize("reshape", shape, x.numel());
  if (std::optional<Shape> strides = ComputeStride(x.sizes(), x.strides(), sizes)) {
    return Alias(x, sizes, std::move(*strides), x.storage_offset());
  }
  // Not expressible with strides: copy to row-major order, then view the copy.
  Tensor copy = clone(x);
  return Alias(copy, sizes, ContiguousStrides(sizes), 0);
}

Tensor view(const Tensor& x, IntArrayRef shape) {
  const Shape sizes = InferSize("view", shape, x.numel());
  std::optional<Shape> strides = ComputeStride(x.sizes(), x.strides(), sizes);
  if (!strides) {
    ThrowError("view: size is not compatible with input tensor's size and stride (at least one "
               "dimension spans across two contiguous subspaces). Use reshape(...) instead. "
               "(input shape ", ShapeToString(x.sizes()), ", strides ",
               ShapeToString(x.strides()), ", requested shape ", ShapeToString(shape), ")");
  }
  return Alias(x, sizes, std::move(*strides), x.storage_offset());
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  const int64_t start = WrapDim("flatten", start_dim, x.dim());
  const int64_t end = WrapDim("flatten", end_dim, x.dim());
  if (start > end) {
    ThrowError("flatten: start_dim ", start_dim, " cannot come after end_dim ", end_dim,
               " (tensor of shape ", ShapeToString(x.sizes()), ")");
  }
  if (x.dim() == 0) return reshape(x, {1});
  Shape sizes;
  for (int64_t d = 0; d < start; ++d) sizes.push_back(x.sizes()[d]);
  // Only an empty tensor can have sizes whose product overflows ([2^40, 2^40, 0]); a run
  // that holds one of its 0 sizes merges to 0, however large the other sizes are.
  const auto first = x.sizes().begin() + start;
  const auto last = x.sizes().begin() + end + 1;
  int64_t merged = std::find(first, last, 0) != last ? 0 : 1;
  for (int64_t d = start; merged != 0 && d <= end; ++d) {
    if (__builtin_mul_overflow(merged, x.sizes()[d], &merged)) {
      ThrowError("flatten: dims ", start, " to ", end, " of shape ", ShapeToString(x.sizes()),
                 " hold more elements than int64 can count");
    }
  }
  sizes.push_back(merged);
  for (int64_t d = end + 1; d < x.dim(); ++d) sizes.push_back(x.sizes()[d]);
  return reshape(x, sizes);
}

Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes) {
  CheckNotScalar("unflatten", x);
  const int64_t d = WrapDim("unflatten", dim, x.dim());
  if (sizes.empty()) ThrowError("unflatten: sizes must be non-empty");
  const int64_t size = x.sizes()[d];
  std::optional<Shape> maybe_inner = TryInferSize("unflatten", sizes, size);
  if (!maybe_inner) {
    ThrowError("unflatten: provided sizes ", ShapeToString(sizes), " don't multiply up to the ",
               "size of dim ", dim, " (", size, ") of the tensor of shape ",
               ShapeToString(x.sizes()));
  }
  const Shape& inner = *maybe_inner;
  // Splitting one dim is always expressible with strides.
  Shape new_sizes(x.sizes().begin(), x.sizes().begin() + d);
  Shape new_strides(x.strides().begin(), x.strides().begin() + d);
  const Shape inner_strides = ContiguousStrides(inner);
  for (size_t i = 0; i < inner.size(); ++i) {
    new_sizes.push_back(inner[i]);
    new_strides.push_back(StrideMul(inner_strides[i], x.strides()[d]));
  }
  for (int64_t k = d + 1; k < x.dim(); ++k) {
    new_sizes.push_back(x.sizes()[k]);
    new_strides.push_back(x.strides()[k]);
  }
  return Alias(x, std::move(new_sizes), std::move(new_strides), x.storage_offset());
}

Tensor expand(const Tensor& x, IntArrayRef sizes) {
  const int64_t rank = static_cast<int64_t>(sizes.size());
  if (rank < x.dim()) {
    ThrowError("expand: the number of sizes provided (", rank,
               ") must be greater or equal to the number of dimensions in the tensor (",
               x.dim(), "); target sizes ", ShapeToString(sizes), ", tensor sizes ",
               ShapeToString(x.sizes()));
  }
  Shape out_sizes(sizes.size());
  Shape out_strides(sizes.size());
  const int64_t lead = rank - x.dim();
  for (int64_t i = rank - 1; i >= 0; --i) {
    const int64_t target = sizes[i];
    if (i < lead) {
      if (target < 0) {
        ThrowError("expand: the expanded size ", target, " is not allowed in a leading, ",
                   "non-existing dimension ", i, "; target sizes ", ShapeToString(sizes),
                   ", tensor sizes ", ShapeToString(x.sizes()));
      }
      out_sizes[i] = target;
      out_strides[i] = 0;
      continue;
    }
    const int64_t size = x.sizes()[i - lead];
    const int64_t stride = x.strides()[i - lead];
    if (target == -1 || target == size) {
      out_sizes[i] = size;
      out_strides[i] = stride;
    } else if (target < 0) {
      ThrowError("expand: invalid size ", target, " at dimension ", i, "; target sizes ",
                 ShapeToString(sizes), ", tensor sizes ", ShapeToString(x.sizes()));
    } else if (size == 1) {
      out_sizes[i] = target;
      out_strides[i] = 0;
    } else {
      ThrowError("expand: the expanded size of the tensor (", target,
                 ") must match the existing size (", size, ") at non-singleton dimension ", i,
                 ". Target sizes: ", ShapeToString(sizes), ". Tensor sizes: ",
                 ShapeToString(x.sizes()));
    }
  }
  CheckedNumel("expand", out_sizes);
  return Alias(x, std::move(out_sizes), std::move(out_strides), x.storage_offset());
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  const int64_t d = WrapDim("unsqueeze", dim, x.dim() + 1);
  Shape sizes(x.sizes().begin(), x.sizes().end());
  Shape strides(x.strides().begin(), x.strides().end());
  // The new dim's stride is irrelevant (size 1); PyTorch's choice keeps the result
  // contiguous whenever x is.
  const int64_t stride = d >= x.dim() ? 1 : StrideMul(x.sizes()[d], x.strides()[d]);
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return Alias(x, std::move(sizes), std::move(strides), x.storage_offset());
}

Tensor squeeze(const Tensor& x) {
  Shape sizes;
  Shape strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (x.sizes()[d] == 1) continue;
    sizes.push_back(x.sizes()[d]);
    strides.push_back(x.strides()[d]);
  }
  return Alias(x, std::move(sizes), std::move(strides), x.storage_offset());
}

Tensor squeeze_dim(const Tensor& x, int64_t dim) {
  const int64_t d = WrapDim("squeeze", dim, x.dim());
  if (x.dim() == 0 || x.sizes()[d] != 1) return Alias(x);
  Shape sizes(x.sizes().begin(), x.sizes().end());
  Shape strides(x.strides().begin(), x.strides().end());
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return Alias(x, std::move(sizes), std::move(strides), x.storage_offset());
}

Tensor squeeze_dims(const Tensor& x, IntArrayRef dims) {
  const Shape wrapped = WrapDims("squeeze", dims, x.dim(), /*empty_means_all=*/false);
  Shape sizes;
  Shape strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const bool listed = std::find(wrapped.begin(), wrapped.end(), d) != wrapped.end();
    if (listed && x.sizes()[d] == 1) continue;
    sizes.push_back(x.sizes()[d]);
    strides.push_back(x.strides()[d]);
  }
  return Alias(x, std::move(sizes), std::move(strides), x.storage_offset());
}

Tensor movedim(const Tensor& x, IntArrayRef source, IntArrayRef destination) {
  if (source.size() != destination.size()) {
    ThrowError("movedim: invalid source or destination dims: source ", ShapeToString(source),
               " and destination ", ShapeToString(destination),
               " must have the same number of elements");
  }
  const Shape src = WrapDims("movedim", source, x.dim(), /*empty_means_all=*/false);
  const Shape dst = WrapDims("movedim", destination, x.dim(), /*empty_means_all=*/false);
  const int64_t rank = x.dim();
  // order[i] = the source dim that lands at position i. Listed dims go to their destination;
  // the others fill the remaining positions in their original order.
  Shape order(rank, -1);
  std::vector<bool> used(rank, false);
  for (size_t i = 0; i < src.size(); ++i) {
    order[dst[i]] = src[i];
    used[src[i]] = true;
  }
  int64_t next = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (order[i] != -1) continue;
    while (used[next]) ++next;
    order[i] = next++;
  }
  return Permuted(x, order);
}

Tensor permute(const Tensor& x, IntArrayRef dims) {
  if (static_cast<int64_t>(dims.size()) != x.dim()) {
    ThrowError("permute: number of dims don't match: got ", ShapeToString(dims),
               " for a tensor of shape ", ShapeToString(x.sizes()), " (rank ", x.dim(), ")");
  }
  // WrapDims rejects repeats; with as many dims as the rank that makes it a permutation.
  const Shape order = WrapDims("permute", dims, x.dim(), /*empty_means_all=*/false);
  return Permuted(x, order);
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  const int64_t a = WrapDim("transpose", dim0, x.dim());
  const int64_t b = WrapDim("transpose", dim1, x.dim());
  Shape sizes(x.sizes().begin(), x.sizes().end());
  Shape strides(x.strides().begin(), x.strides().end());
  if (x.dim() > 0) {
    std::swap(sizes[a], sizes[b]);
    std::swap(strides[a], strides[b]);
  }
  return Alias(x, std::move(sizes), std::move(strides), x.storage_offset());
}

Tensor t(const Tensor& x) {
  if (x.dim() > 2) {
    ThrowError("t: expects a tensor with <= 2 dimensions, but self is ", x.dim(), "D (shape ",
               ShapeToString(x.sizes()), "); use transpose or mT");
  }
  return x.dim() == 2 ? transpose(x, 0, 1) : Alias(x);
}

DimAndIndex CheckSelectArgs(IntArrayRef sizes, int64_t dim, int64_t index) {
  if (sizes.empty()) ThrowError("select: cannot be applied to a 0-dim tensor");
  const int64_t d = WrapDim("select", dim, static_cast<int64_t>(sizes.size()));
  const int64_t size = sizes[d];
  if (index < -size || index >= size) {
    ThrowError("select: index ", index, " out of range for tensor of size ",
               ShapeToString(sizes), " at dimension ", dim);
  }
  return {d, index < 0 ? index + size : index};
}

DimAndIndex CheckNarrowArgs(IntArrayRef sizes, int64_t dim, int64_t start, int64_t length) {
  if (sizes.empty()) ThrowError("narrow: cannot be applied to a 0-dim tensor");
  const int64_t d = WrapDim("narrow", dim, static_cast<int64_t>(sizes.size()));
  const int64_t size = sizes[d];
  if (start < -size || start > size) {
    ThrowError("narrow: start ", start, " is out of range for dimension ", dim, " of size ",
               size, " (expected start in [", -size, ", ", size, "])");
  }
  const int64_t s = start < 0 ? start + size : start;
  if (length < 0 || length > size - s) {
    ThrowError("narrow: start (", s, ") + length (", length, ") exceeds dimension size (", size,
               ") of dimension ", dim, " (or length is negative); tensor shape ",
               ShapeToString(sizes));
  }
  return {d, s};
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  const auto [d, i] = CheckSelectArgs(x.sizes(), dim, index);
  Shape sizes(x.sizes().begin(), x.sizes().end());
  Shape strides(x.strides().begin(), x.strides().end());
  const int64_t offset = OffsetAdd(x.storage_offset(), StrideMul(i, strides[d]));
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return Alias(x, std::move(sizes), std::move(strides), offset);
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  const auto [d, s] = CheckNarrowArgs(x.sizes(), dim, start, length);
  Shape sizes(x.sizes().begin(), x.sizes().end());
  Shape strides(x.strides().begin(), x.strides().end());
  sizes[d] = length;
  const int64_t offset = OffsetAdd(x.storage_offset(), StrideMul(s, strides[d]));
  return Alias(x, std::move(sizes), std::move(strides), offset);
}

Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> end, int64_t step) {
  CheckNotScalar("slice", x);
  const int64_t d = WrapDim("slice", dim, x.dim());
  if (step <= 0) ThrowError("slice: step must be positive, got ", step);
  const int64_t size = x.sizes()[d];
  // Python slicing: negative bounds count from the end, then both clamp to [0, size].
  auto normalize = [size](int64_t v) {
    if (v < 0) v = v < -size ? 0 : v + size;
    return std::min(v, size);
  };
  const int64_t b = start ? normalize(*start) : 0;
  const int64_t e = std::max(end ? normalize(*end) : size, b);
  // (e - b + step - 1) / step could overflow for a huge step.
  const int64_t length = e == b ? 0 : (e - b - 1) / step + 1;
  Shape sizes(x.sizes().begin(), x.sizes().end());
  Shape strides(x.strides().begin(), x.strides().end());
  sizes[d] = length;
  // b <= size, so the offset stays within the dim's extent (one past it when empty).
  const int64_t offset = OffsetAdd(x.storage_offset(), StrideMul(b, strides[d]));
  // With length >= 2, step < size so the product stays within the dim's extent.
  if (length > 1) strides[d] = StrideMul(strides[d], step);
  return Alias(x, std::move(sizes), std::move(strides), offset);
}

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  if (x.dim() < 2) {
    ThrowError("diagonal: expected a tensor with at least 2 dimensions, got shape ",
               ShapeToString(x.sizes()));
  }
  const int64_t d1 = WrapDim("diagonal", dim1, x.dim());
  const int64_t d2 = WrapDim("diagonal", dim2, x.dim());
  if (d1 == d2) {
    ThrowError("diagonal: dim1 and dim2 cannot be the same dimension, got ", dim1, " and ",
               dim2, " for a tensor of shape ", ShapeToString(x.sizes()));
  }
  const int64_t n1 = x.sizes()[d1];
  const int64_t n2 = x.sizes()[d2];
  // offset > 0 is above the main diagonal (starts at column `offset`), < 0 below it.
  int64_t diag = offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2);
  diag = std::max<int64_t>(diag, 0);
  int64_t storage_offset = x.storage_offset();
  if (diag > 0) {
    storage_offset = OffsetAdd(storage_offset, offset >= 0 ? StrideMul(offset, x.strides()[d2])
                                                           : StrideMul(-offset, x.strides()[d1]));
  }
  Shape sizes;
  Shape strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    sizes.push_back(x.sizes()[d]);
    strides.push_back(x.strides()[d]);
  }
  sizes.push_back(diag);
  strides.push_back(OffsetAdd(x.strides()[d1], x.strides()[d2]));
  return Alias(x, std::move(sizes), std::move(strides), storage_offset);
}

Tensor flip(const Tensor& x, IntArrayRef dims) {
  const Shape wrapped = WrapDims("flip", dims, x.dim(), /*empty_means_all=*/false);
  Tensor out = EmptyContiguous(x.sizes(), x.dtype());
  if (x.numel() == 0) return out;
  // Read x backwards along the flipped dims: start at the last index of each and negate its
  // stride, then run the ordinary strided copy loop (which only does pointer arithmetic).
  std::array<internal::Operand, 2> ops = {internal::MakeOperand(out, out.sizes()),
                                          internal::MakeOperand(x, x.sizes())};
  for (int64_t d : wrapped) {
    int64_t& stride = ops[1].byte_strides[d];
    ops[1].data += (x.sizes()[d] - 1) * stride;
    stride = -stride;
  }
  internal::VisitElementBytes(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    internal::ForEachStrided<2>(
        out.sizes(), ops,
        [](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
          FlipRun<T>(p[0], p[1], s[0], s[1], n);
        });
  });
  return out;
}

void CheckScatterSrc(absl::string_view op, IntArrayRef region, IntArrayRef src_sizes,
                     DType self_dtype, DType src_dtype) {
  if (!std::equal(region.begin(), region.end(), src_sizes.begin(), src_sizes.end())) {
    ThrowError(op, ": expected src to have a size equal to the slice of self. src size = ",
               ShapeToString(src_sizes), ", slice size = ", ShapeToString(region));
  }
  if (src_dtype != self_dtype) {
    ThrowError(op, ": expected src to have the same dtype as self, got src dtype ",
               DTypeName(src_dtype), " and self dtype ", DTypeName(self_dtype));
  }
}

Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  return ScatterThroughView("select_scatter", self, src,
                            [&](const Tensor& t) { return select(t, dim, index); });
}

Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim,
                     std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  return ScatterThroughView("slice_scatter", self, src,
                            [&](const Tensor& t) { return slice(t, dim, start, end, step); });
}

Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset, int64_t dim1,
                        int64_t dim2) {
  return ScatterThroughView("diagonal_scatter", self, src,
                            [&](const Tensor& t) { return diagonal(t, offset, dim1, dim2); });
}

}  // namespace ft::kernels

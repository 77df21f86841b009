#include "kernels/index.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "tensor/copy.h"
#include "tensor/loops.h"

namespace ft::kernels {
namespace {

using internal::ForEachStrided;
using internal::OffsetAdd;
using internal::Operand;
using internal::StrideMul;

// PyTorch's ensure_nonempty_dim: the index ops treat a rank-0 tensor as shape [1], so that
// gather/scatter_add/take_along_dim need no special case for scalars.
Shape NonemptySizes(const Tensor& t) {
  if (t.dim() == 0) return Shape{1};
  return Shape(t.sizes().begin(), t.sizes().end());
}
Shape NonemptyStrides(const Tensor& t) {
  if (t.dim() == 0) return Shape{0};
  return Shape(t.strides().begin(), t.strides().end());
}

// Scaled converts element strides to byte strides.
Shape Scaled(IntArrayRef strides, int64_t item) {
  Shape out(strides.begin(), strides.end());
  for (int64_t& s : out) s *= item;
  return out;
}

// RawOperand views `t`'s data with caller-chosen byte strides (the loop shape may differ
// from t's own shape: gathered dims get stride 0, broadcast dims stride 0).
Operand RawOperand(const Tensor& t, Shape byte_strides) {
  return Operand{static_cast<char*>(t.impl()->raw_data()), std::move(byte_strides)};
}

Shape Dims(const Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end()); }

void CheckInt64(const char* op, const Tensor& t, const char* what) {
  if (t.dtype() != kInt64) {
    ThrowError(op, ": expected an int64 ", what, " tensor, got ", DTypeName(t.dtype()),
               " of shape ", ShapeToString(t.sizes()));
  }
}

// FirstOutside returns the first value of the int64 tensor `t` (row-major order) outside
// [lo, hi), if any.
std::optional<int64_t> FirstOutside(const Tensor& t, int64_t lo, int64_t hi) {
  std::optional<int64_t> bad;
  ForEachStrided<1>(t.sizes(), {internal::MakeOperand(t, t.sizes())},
                    [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s,
                        int64_t n) {
                      if (bad) return;
                      const char* ip = p[0];
                      for (int64_t k = 0; k < n; ++k) {
                        const int64_t v = *reinterpret_cast<const int64_t*>(ip + k * s[0]);
                        if (v < lo || v >= hi) {
                          bad = v;
                          return;
                        }
                      }
                    });
  return bad;
}

// CheckIndexValues throws for the first index value outside [0, size) of dimension `dim`.
void CheckIndexValues(const char* op, const Tensor& index, int64_t dim, int64_t size) {
  if (std::optional<int64_t> bad = FirstOutside(index, 0, size)) {
    ThrowError(op, ": index ", *bad, " is out of bounds for dimension ", dim, " with size ",
               size, *bad < 0 ? " (negative indices are not supported)" : "");
  }
}

// CheckSameRank: PyTorch's rule for gather/scatter, with rank 0 counting as rank 1.
void CheckSameRank(const char* op, const Tensor& x, const Tensor& other, const char* what) {
  if (std::max<int64_t>(x.dim(), 1) != std::max<int64_t>(other.dim(), 1)) {
    ThrowError(op, ": ", what, " must have the same number of dims as the input, got ", what,
               " shape ", ShapeToString(other.sizes()), " and input shape ",
               ShapeToString(x.sizes()));
  }
}

// GatherLoop: for every position p of `shape`, out[p] = src[p + index[p] * src_dim_stride],
// where `src` has byte stride 0 along the gathered dim. When the index is constant across a
// run (index_select's inner block) the run is one memcpy or one strided copy.
template <typename T>
void GatherLoop(IntArrayRef shape, const Operand& out, const Operand& index, const Operand& src,
                int64_t src_dim_stride) {
  constexpr int64_t kItem = sizeof(T);
  const int64_t dim_bytes = src_dim_stride * kItem;
  ForEachStrided<3>(shape, {out, index, src},
                    [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s,
                        int64_t n) {
                      char* o = p[0];
                      const char* ip = p[1];
                      const char* sp = p[2];
                      if (s[1] == 0) {
                        const char* base = sp + *reinterpret_cast<const int64_t*>(ip) * dim_bytes;
                        if (s[0] == kItem && s[2] == kItem) {
                          std::memcpy(o, base, static_cast<size_t>(n * kItem));
                          return;
                        }
                        for (int64_t k = 0; k < n; ++k) {
                          *reinterpret_cast<T*>(o + k * s[0]) =
                              *reinterpret_cast<const T*>(base + k * s[2]);
                        }
                        return;
                      }
                      for (int64_t k = 0; k < n; ++k) {
                        const int64_t i = *reinterpret_cast<const int64_t*>(ip + k * s[1]);
                        *reinterpret_cast<T*>(o + k * s[0]) =
                            *reinterpret_cast<const T*>(sp + k * s[2] + i * dim_bytes);
                      }
                    });
}

// ScatterAddLoop: for every position p of `shape` in row-major order,
// out[p + index[p] * out_dim_stride] += src[p], where `out` has byte stride 0 along dim.
template <typename T>
void ScatterAddLoop(IntArrayRef shape, const Operand& out, const Operand& index,
                    const Operand& src, int64_t out_dim_stride) {
  const int64_t dim_bytes = out_dim_stride * static_cast<int64_t>(sizeof(T));
  ForEachStrided<3>(shape, {out, index, src},
                    [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s,
                        int64_t n) {
                      for (int64_t k = 0; k < n; ++k) {
                        const int64_t i = *reinterpret_cast<const int64_t*>(p[1] + k * s[1]);
                        T& dst = *reinterpret_cast<T*>(p[0] + k * s[0] + i * dim_bytes);
                        const T v = *reinterpret_cast<const T*>(p[2] + k * s[2]);
                        if constexpr (std::is_same_v<T, bool>) {
                          dst = dst || v;  // bool addition saturates (logical or), as in PyTorch
                        } else if constexpr (std::is_integral_v<T>) {
                          // Wrap on overflow like PyTorch, without signed-overflow UB.
                          dst = static_cast<T>(static_cast<uint64_t>(dst) +
                                               static_cast<uint64_t>(v));
                        } else {
                          dst += v;
                        }
                      }
                    });
}

void RunGather(DType dtype, IntArrayRef shape, const Operand& out, const Operand& index,
               const Operand& src, int64_t src_dim_stride) {
  internal::VisitElementBytes(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    GatherLoop<T>(shape, out, index, src, src_dim_stride);
  });
}

// PromoteAll folds PromoteTypes over a non-empty list.
DType PromoteAll(const TensorList& tensors) {
  DType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) dtype = PromoteTypes(dtype, t.dtype());
  return dtype;
}

// SplitViews returns views of x along dim d with the given sizes (which sum to x.size(d)).
TensorList SplitViews(const Tensor& x, IntArrayRef sizes, int64_t d) {
  TensorList out;
  out.reserve(sizes.size());
  const Shape strides(x.strides().begin(), x.strides().end());
  int64_t start = 0;
  for (int64_t s : sizes) {
    Shape view_sizes = Dims(x);
    view_sizes[d] = s;
    // Saturating: the pieces of a tensor without elements may carry strides near INT64_MAX.
    out.push_back(MakeDense(x.storage(), x.dtype(), view_sizes, strides,
                            OffsetAdd(x.storage_offset(), StrideMul(start, x.strides()[d]))));
    start += s;
  }
  return out;
}

void CheckSplittable(const char* op, const Tensor& x) {
  if (x.dim() == 0) {
    ThrowError(op, ": expected a tensor with at least one dim, got a rank-0 tensor");
  }
}

// A split returns one tensor handle per piece; more than kMaxPieces of them (tens of GiB of
// handles and views) is refused before the list is allocated, as a tensor this machine cannot
// hold is. A dim that long exists only as a view with stride 0 (expand).
constexpr int64_t kMaxPieces = (int64_t{1} << 31) - 1;

void CheckPieceCount(const char* op, const Tensor& x, int64_t d, int64_t pieces) {
  if (pieces > kMaxPieces) {
    ThrowError(op, ": cannot split dimension ", d, " of shape ", ShapeToString(x.sizes()),
               " into ", pieces, " pieces (at most ", kMaxPieces, ")");
  }
}

// SplitEqual cuts dim d into pieces of split_size (the last one smaller; at least one piece,
// also for an empty dim). split_size > 0, or 0 with an empty dim (checked by the caller).
TensorList SplitEqual(const char* op, const Tensor& x, int64_t split_size, int64_t d) {
  const int64_t n = x.sizes()[d];
  int64_t num = 1;
  if (split_size != 0) num = std::max<int64_t>(n / split_size + (n % split_size != 0), 1);
  CheckPieceCount(op, x, d, num);
  Shape sizes(static_cast<size_t>(num), split_size);
  sizes.back() = n - split_size * (num - 1);
  return SplitViews(x, sizes, d);
}

// Fill sets every element of the contiguous `out` to value (converted to out's dtype).
void Fill(const Tensor& out, Scalar value) {
  VisitEveryDType(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::fill_n(out.data<T>(), out.numel(), value.to<T>());
  });
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  const char* op = "index_select";
  CheckInt64(op, index, "index");
  if (index.dim() > 1) {
    ThrowError(op, ": index must be a rank-0 or 1-D tensor, got shape ",
               ShapeToString(index.sizes()));
  }
  const int64_t d = WrapDim(op, dim, x.dim());
  const int64_t m = index.numel();
  if (x.dim() == 0 && m != 1) {
    ThrowError(op, ": selecting from a rank-0 tensor takes exactly one index, got ", m);
  }
  const Shape xs = NonemptySizes(x);
  const Shape xst = NonemptyStrides(x);
  CheckIndexValues(op, index, d, xs[d]);
  Shape out_sizes = Dims(x);
  if (x.dim() > 0) out_sizes[d] = m;
  Tensor out = EmptyContiguous(out_sizes, x.dtype());
  if (out.numel() == 0) return out;
  const int64_t item = ItemSize(x.dtype());
  Shape iter = xs;
  iter[d] = m;
  Shape idx_b(iter.size(), 0);
  if (index.dim() == 1) idx_b[d] = index.strides()[0] * ItemSize(kInt64);
  Shape src_b = Scaled(xst, item);
  src_b[d] = 0;
  RunGather(x.dtype(), iter, RawOperand(out, Scaled(ContiguousStrides(iter), item)),
            RawOperand(index, idx_b), RawOperand(x, src_b), xst[d]);
  return out;
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  const char* op = "gather";
  CheckInt64(op, index, "index");
  const int64_t d = WrapDim(op, dim, x.dim());
  CheckSameRank(op, x, index, "index");
  const Shape xs = NonemptySizes(x);
  const Shape is = NonemptySizes(index);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (static_cast<int64_t>(i) != d && is[i] > xs[i]) {
      ThrowError(op, ": index shape ", ShapeToString(index.sizes()), " exceeds input shape ",
                 ShapeToString(x.sizes()), " in dim ", i, " (", is[i], " > ", xs[i],
                 "); only dim ", d, " may be larger");
    }
  }
  CheckIndexValues(op, index, d, xs[d]);
  Tensor out = EmptyContiguous(index.sizes(), x.dtype());
  if (out.numel() == 0) return out;
  const int64_t item = ItemSize(x.dtype());
  const Shape xst = NonemptyStrides(x);
  Shape src_b = Scaled(xst, item);
  src_b[d] = 0;
  RunGather(x.dtype(), is, RawOperand(out, Scaled(ContiguousStrides(is), item)),
            RawOperand(index, Scaled(NonemptyStrides(index), ItemSize(kInt64))),
            RawOperand(x, src_b), xst[d]);
  return out;
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  const char* op = "scatter_add";
  CheckInt64(op, index, "index");
  if (src.dtype() != x.dtype()) {
    ThrowError(op, ": src dtype ", DTypeName(src.dtype()), " must match the input dtype ",
               DTypeName(x.dtype()));
  }
  const int64_t d = WrapDim(op, dim, x.dim());
  CheckSameRank(op, x, index, "index");
  CheckSameRank(op, x, src, "src");
  const Shape xs = NonemptySizes(x);
  const Shape is = NonemptySizes(index);
  const Shape ss = NonemptySizes(src);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (is[i] > ss[i]) {
      ThrowError(op, ": index shape ", ShapeToString(index.sizes()), " exceeds src shape ",
                 ShapeToString(src.sizes()), " in dim ", i, " (", is[i], " > ", ss[i], ")");
    }
    if (static_cast<int64_t>(i) != d && is[i] > xs[i]) {
      ThrowError(op, ": index shape ", ShapeToString(index.sizes()), " exceeds input shape ",
                 ShapeToString(x.sizes()), " in dim ", i, " (", is[i], " > ", xs[i],
                 "); only dim ", d, " may be larger");
    }
  }
  CheckIndexValues(op, index, d, xs[d]);
  Tensor out = clone(x);
  if (index.numel() == 0) return out;
  const int64_t item = ItemSize(x.dtype());
  const Shape out_strides = ContiguousStrides(xs);
  Shape out_b = Scaled(out_strides, item);
  out_b[d] = 0;
  const Operand out_op = RawOperand(out, out_b);
  const Operand idx_op = RawOperand(index, Scaled(NonemptyStrides(index), ItemSize(kInt64)));
  const Operand src_op = RawOperand(src, Scaled(NonemptyStrides(src), item));
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ScatterAddLoop<T>(is, out_op, idx_op, src_op, out_strides[d]);
  });
  return out;
}

Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim) {
  const char* op = "take_along_dim";
  CheckInt64(op, indices, "indices");
  const int64_t item = ItemSize(x.dtype());
  if (!dim) {
    // Both flattened: out[i] = x.flatten()[indices.flatten()[i]]. Iterate over indices' own
    // shape (no copy of it) with a contiguous x.
    CheckIndexValues(op, indices, 0, x.numel());
    Tensor out = EmptyContiguous({indices.numel()}, x.dtype());
    if (out.numel() == 0) return out;
    const Tensor xc = contiguous(x);
    const Shape is = NonemptySizes(indices);
    RunGather(x.dtype(), is, RawOperand(out, Scaled(ContiguousStrides(is), item)),
              RawOperand(indices, Scaled(NonemptyStrides(indices), ItemSize(kInt64))),
              RawOperand(xc, Shape(is.size(), 0)), 1);
    return out;
  }
  if (x.dim() != indices.dim()) {
    ThrowError(op, ": input and indices must have the same number of dims, got input shape ",
               ShapeToString(x.sizes()), " and indices shape ", ShapeToString(indices.sizes()));
  }
  const int64_t d = WrapDim(op, *dim, x.dim());
  const Shape xs = NonemptySizes(x);
  const Shape xst = NonemptyStrides(x);
  const Shape is = NonemptySizes(indices);
  const Shape ist = NonemptyStrides(indices);
  // Broadcast every dim but d (where the indices' size wins), like torch.take_along_dim.
  Shape self_sizes = xs;
  self_sizes[d] = is[d];
  const Shape b = BroadcastShapes(op, self_sizes, is);
  // Every index value is read when the result is non-empty (broadcasting only repeats).
  if (Numel(b) > 0) CheckIndexValues(op, indices, d, xs[d]);
  Tensor out = EmptyContiguous(x.dim() == 0 ? Shape{} : b, x.dtype());
  if (out.numel() == 0) return out;
  Shape idx_b(b.size(), 0);
  Shape src_b(b.size(), 0);
  for (size_t i = 0; i < b.size(); ++i) {
    if (is[i] == b[i]) idx_b[i] = ist[i] * ItemSize(kInt64);
    if (static_cast<int64_t>(i) != d && xs[i] == b[i]) src_b[i] = xst[i] * item;
  }
  RunGather(x.dtype(), b, RawOperand(out, Scaled(ContiguousStrides(b), item)),
            RawOperand(indices, idx_b), RawOperand(x, src_b), xst[d]);
  return out;
}

Tensor cat(const TensorList& tensors, int64_t dim) {
  const char* op = "cat";
  if (tensors.empty()) ThrowError(op, ": expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].dim() == 0) {
      ThrowError(op, ": tensor ", i, " is rank 0 and cannot be concatenated (use stack)");
    }
  }
  const DType dtype = PromoteAll(tensors);
  // PyTorch's legacy rule: 1-D tensors of shape [0] are skipped whatever the other shapes.
  auto skipped = [](const Tensor& t) { return t.dim() == 1 && t.sizes()[0] == 0; };
  size_t ref = 0;
  while (ref < tensors.size() && skipped(tensors[ref])) ++ref;
  if (ref == tensors.size()) {
    WrapDim(op, dim, 1);
    return EmptyContiguous({0}, dtype);
  }
  const Tensor& r = tensors[ref];
  const int64_t d = WrapDim(op, dim, r.dim());
  Shape out_sizes = Dims(r);
  out_sizes[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped(t)) continue;
    bool match = t.dim() == r.dim();
    for (int64_t j = 0; match && j < r.dim(); ++j) {
      if (j != d && t.sizes()[j] != r.sizes()[j]) match = false;
    }
    if (!match) {
      ThrowError(op, ": shapes must match except in dim ", d, ", but tensor ", i, " has shape ",
                 ShapeToString(t.sizes()), " and tensor ", ref, " has shape ",
                 ShapeToString(r.sizes()));
    }
    out_sizes[d] += t.sizes()[d];
  }
  Tensor out = EmptyContiguous(out_sizes, dtype);
  if (out.numel() == 0) return out;
  const Shape out_strides(out.strides().begin(), out.strides().end());
  int64_t start = 0;
  for (const Tensor& t : tensors) {
    if (skipped(t)) continue;
    if (t.numel() > 0) {
      copy_into(MakeDense(out.storage(), dtype, Dims(t), out_strides, start * out_strides[d]),
                t);
    }
    start += t.sizes()[d];
  }
  return out;
}

Tensor stack(const TensorList& tensors, int64_t dim) {
  const char* op = "stack";
  if (tensors.empty()) ThrowError(op, ": expected a non-empty list of tensors");
  const Tensor& r = tensors[0];
  for (size_t i = 1; i < tensors.size(); ++i) {
    const IntArrayRef s = tensors[i].sizes();
    if (!std::equal(s.begin(), s.end(), r.sizes().begin(), r.sizes().end())) {
      ThrowError(op, ": expected all tensors to have the same shape, but tensor ", i,
                 " has shape ", ShapeToString(s), " and tensor 0 has shape ",
                 ShapeToString(r.sizes()));
    }
  }
  const int64_t rank = r.dim();
  if (dim < -rank - 1 || dim > rank) {
    ThrowError(op, ": dim ", dim, " is out of range for stacking tensors of rank ", rank,
               " (expected a dim in [", -rank - 1, ", ", rank, "])");
  }
  const int64_t d = dim < 0 ? dim + rank + 1 : dim;
  const DType dtype = PromoteAll(tensors);
  Shape out_sizes = Dims(r);
  out_sizes.insert(out_sizes.begin() + d, static_cast<int64_t>(tensors.size()));
  Tensor out = EmptyContiguous(out_sizes, dtype);
  if (out.numel() == 0) return out;
  Shape strides(out.strides().begin(), out.strides().end());
  const int64_t step = strides[d];
  strides.erase(strides.begin() + d);
  for (size_t i = 0; i < tensors.size(); ++i) {
    copy_into(MakeDense(out.storage(), dtype, Dims(r), strides, static_cast<int64_t>(i) * step),
              tensors[i]);
  }
  return out;
}

TensorList split(const Tensor& x, int64_t split_size, int64_t dim) {
  const char* op = "split";
  CheckSplittable(op, x);
  const int64_t d = WrapDim(op, dim, x.dim());
  if (split_size < 0) ThrowError(op, ": split_size must be non-negative, got ", split_size);
  const int64_t n = x.sizes()[d];
  if (split_size == 0 && n != 0) {
    ThrowError(op, ": split_size 0 is only allowed when the split dim is empty, but dimension ",
               d, " has size ", n);
  }
  return SplitEqual(op, x, split_size, d);
}

TensorList split_with_sizes(const Tensor& x, IntArrayRef sizes, int64_t dim) {
  const char* op = "split_with_sizes";
  CheckSplittable(op, x);
  const int64_t d = WrapDim(op, dim, x.dim());
  int64_t sum = 0;
  bool overflow = false;
  for (int64_t s : sizes) {
    if (s < 0) {
      ThrowError(op, ": sizes ", ShapeToString(sizes), " contain the negative size ", s);
    }
    overflow = overflow || __builtin_add_overflow(sum, s, &sum);
  }
  const int64_t n = x.sizes()[d];
  if (overflow || sum != n) {
    ThrowError(op, ": sizes ", ShapeToString(sizes), " sum to ",
               overflow ? std::string("more than 2^63") : absl::StrCat(sum), " but dimension ",
               d, " has size ", n);
  }
  return SplitViews(x, sizes, d);
}

TensorList chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  const char* op = "chunk";
  CheckSplittable(op, x);
  const int64_t d = WrapDim(op, dim, x.dim());
  if (chunks <= 0) ThrowError(op, ": chunks must be positive, got ", chunks);
  const int64_t n = x.sizes()[d];
  const int64_t split_size = n / chunks + (n % chunks != 0);
  // An empty dim splits into `chunks` empty chunks (split would return just one), as in
  // PyTorch.
  if (n == 0) CheckPieceCount(op, x, d, chunks);
  if (n == 0) return SplitViews(x, Shape(static_cast<size_t>(chunks), 0), d);
  return SplitEqual(op, x, split_size, d);
}

Tensor repeat(const Tensor& x, IntArrayRef repeats) {
  const char* op = "repeat";
  const int64_t k = static_cast<int64_t>(repeats.size());
  if (k < x.dim()) {
    ThrowError(op, ": got ", k, " repeats ", ShapeToString(repeats),
               " but need at least one per dim of the input (shape ", ShapeToString(x.sizes()),
               ", rank ", x.dim(), ")");
  }
  const int64_t lead = k - x.dim();
  Shape out_sizes(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) {
    if (repeats[i] < 0) {
      ThrowError(op, ": repeats ", ShapeToString(repeats), " contain the negative value ",
                 repeats[i]);
    }
    const int64_t s = i < lead ? 1 : x.sizes()[i - lead];
    if (__builtin_mul_overflow(s, repeats[i], &out_sizes[i])) {
      ThrowError(op, ": repeating dim ", i, " of size ", s, " ", repeats[i],
                 " times overflows int64");
    }
  }
  Tensor out = EmptyContiguous(out_sizes, x.dtype());
  if (out.numel() == 0) return out;
  // View out as [r0, s0, r1, s1, ...] and x as the same shape with stride 0 on each repeat
  // dim: one strided copy writes every repetition.
  Shape view_sizes, dst_strides, src_strides;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t s = i < lead ? 1 : x.sizes()[i - lead];
    const int64_t os = out.strides()[i];
    view_sizes.insert(view_sizes.end(), {repeats[i], s});
    dst_strides.insert(dst_strides.end(), {s * os, os});
    src_strides.insert(src_strides.end(), {0, i < lead ? 0 : x.strides()[i - lead]});
  }
  copy_into(MakeDense(out.storage(), x.dtype(), view_sizes, dst_strides, 0),
            MakeDense(x.storage(), x.dtype(), view_sizes, src_strides, x.storage_offset()));
  return out;
}

Tensor pad(const Tensor& x, IntArrayRef pads, Scalar value) {
  const char* op = "pad";
  const int64_t rank = x.dim();
  const int64_t pairs = static_cast<int64_t>(pads.size()) / 2;
  if (pads.size() % 2 != 0) {
    ThrowError(op, ": padding ", ShapeToString(pads), " must have an even length, got ",
               pads.size(), " values");
  }
  if (pairs > rank) {
    ThrowError(op, ": padding ", ShapeToString(pads), " has ", pairs,
               " (left, right) pairs but the input has only ", rank, " dims (shape ",
               ShapeToString(x.sizes()), ")");
  }
  Shape out_sizes = Dims(x);
  Shape src_start(static_cast<size_t>(rank), 0), dst_start(static_cast<size_t>(rank), 0);
  Shape overlap = Dims(x);
  bool any_overlap = true;
  for (int64_t p = 0; p < pairs; ++p) {
    const int64_t d = rank - 1 - p;
    const int64_t left = pads[2 * p], right = pads[2 * p + 1], s = x.sizes()[d];
    int64_t size = 0;
    // INT64_MIN has no negation, and the crop below negates a negative padding.
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    if (left == kMin || right == kMin || __builtin_add_overflow(s, left, &size) ||
        __builtin_add_overflow(size, right, &size)) {
      ThrowError(op, ": padding (", left, ", ", right, ") of dim ", d, " overflows int64");
    }
    if (size < 0) {
      ThrowError(op, ": padding (", left, ", ", right, ") of dim ", d, " (size ", s,
                 ") gives the negative size ", size);
    }
    out_sizes[d] = size;
    src_start[d] = std::max<int64_t>(0, -left);
    dst_start[d] = std::max<int64_t>(0, left);
    // What survives of x along d after cropping (<= 0: nothing).
    const int64_t keep = s - src_start[d] - std::max<int64_t>(0, -right);
    if (keep <= 0) any_overlap = false;
    overlap[d] = std::max<int64_t>(keep, 0);
  }
  Tensor out = EmptyContiguous(out_sizes, x.dtype());
  if (out.numel() == 0) return out;
  Fill(out, value);
  if (!any_overlap || Numel(overlap) == 0) return out;
  int64_t src_offset = x.storage_offset(), dst_offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    src_offset += src_start[d] * x.strides()[d];
    dst_offset += dst_start[d] * out.strides()[d];
  }
  const Shape x_strides(x.strides().begin(), x.strides().end());
  const Shape out_strides(out.strides().begin(), out.strides().end());
  copy_into(MakeDense(out.storage(), x.dtype(), overlap, out_strides, dst_offset),
            MakeDense(x.storage(), x.dtype(), overlap, x_strides, src_offset));
  return out;
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  const char* op = "one_hot";
  CheckInt64(op, indices, "indices");
  if (num_classes < -1) {
    ThrowError(op, ": num_classes must be -1 (infer) or non-negative, got ", num_classes);
  }
  if (num_classes == -1) {
    NoteValueDependentShape(op);
    if (indices.numel() == 0) {
      ThrowError(op, ": cannot infer num_classes from an empty tensor (shape ",
                 ShapeToString(indices.sizes()), "); pass num_classes explicitly");
    }
    if (std::optional<int64_t> bad =
            FirstOutside(indices, 0, std::numeric_limits<int64_t>::max())) {
      if (*bad < 0) ThrowError(op, ": class values must be non-negative, got ", *bad);
      ThrowError(op, ": class value ", *bad, " is too large to infer num_classes");
    }
    int64_t max_value = 0;
    ForEachStrided<1>(indices.sizes(), {internal::MakeOperand(indices, indices.sizes())},
                      [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s,
                          int64_t n) {
                        for (int64_t k = 0; k < n; ++k) {
                          max_value = std::max(
                              max_value, *reinterpret_cast<const int64_t*>(p[0] + k * s[0]));
                        }
                      });
    num_classes = max_value + 1;
  } else if (std::optional<int64_t> bad = FirstOutside(indices, 0, num_classes)) {
    ThrowError(op, ": class value ", *bad, " is out of range [0, ", num_classes,
               ") for num_classes ", num_classes);
  }
  Shape out_sizes = Dims(indices);
  out_sizes.push_back(num_classes);
  Tensor out = EmptyContiguous(out_sizes, kInt64);
  int64_t* o = static_cast<int64_t*>(out.impl()->raw_data());
  std::fill_n(o, out.numel(), int64_t{0});
  if (out.numel() == 0) return out;
  int64_t row = 0;
  ForEachStrided<1>(indices.sizes(), {internal::MakeOperand(indices, indices.sizes())},
                    [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s,
                        int64_t n) {
                      for (int64_t k = 0; k < n; ++k, ++row) {
                        o[row * num_classes + *reinterpret_cast<const int64_t*>(p[0] + k * s[0])] =
                            1;
                      }
                    });
  return out;
}

}  // namespace ft::kernels

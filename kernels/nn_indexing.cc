#include "kernels/nn_indexing.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "kernels/binary.h"
#include "kernels/index.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/loops.h"

namespace ft::kernels {
namespace {

Shape Dims(IntArrayRef s) { return Shape(s.begin(), s.end()); }

// Int64Values: the values of an int64 tensor in row-major order (after its dtype check).
std::vector<int64_t> Int64Values(const Tensor& t) {
  const Tensor c = contiguous(t);
  const int64_t* p = c.data<const int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

void CheckInt64(const char* op, DType dtype, IntArrayRef sizes, const char* what) {
  if (dtype != kInt64) {
    ThrowError(op, ": expected an int64 ", what, " tensor, got ", DTypeName(dtype), " of shape ",
               ShapeToString(sizes));
  }
}

// ScalarTensor: a rank-0 tensor of `dtype` holding `value` (converted like Scalar::to).
Tensor ScalarTensor(Scalar value, DType dtype) {
  Tensor t = EmptyContiguous({}, dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    *static_cast<T*>(t.impl()->raw_data()) = value.to<T>();
  });
  return t;
}

// ZeroTriangle: a contiguous copy of x (rank >= 2) with every element (i, j) of each matrix
// for which zero(j - i) holds set to zero (all-zero bytes are zero in every dtype).
template <typename Pred>
Tensor ZeroTriangle(const char* op, const Tensor& x, Pred zero) {
  TriangleCheck(op, x.sizes());
  Tensor out = clone(x);
  if (out.numel() == 0) return out;
  const int64_t rows = x.size(-2), cols = x.size(-1);
  const int64_t item = ItemSize(x.dtype());
  const int64_t mats = out.numel() / (rows * cols);
  char* base = static_cast<char*>(out.impl()->raw_data());
  for (int64_t m = 0; m < mats; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      char* row = base + (m * rows + i) * cols * item;
      for (int64_t j = 0; j < cols; ++j) {
        if (zero(j - i)) std::memset(row + j * item, 0, static_cast<size_t>(item));
      }
    }
  }
  return out;
}

// Leading: x's sizes before the last three (the pixel ops' batch dims).
Shape Leading(IntArrayRef x) { return Shape(x.begin(), x.end() - 3); }

}  // namespace

// ---- Shape checks ----

Shape EmbeddingCheck(IntArrayRef input, DType input_dtype, IntArrayRef weight,
                     std::optional<int64_t> padding_idx) {
  const char* op = "embedding";
  CheckInt64(op, input_dtype, input, "input (indices)");
  if (weight.size() != 2) {
    ThrowError(op, ": weight must be 2-D [num_embeddings, embedding_dim], got shape ",
               ShapeToString(weight));
  }
  const int64_t num = weight[0];
  if (padding_idx && (*padding_idx < -num || *padding_idx >= num)) {
    ThrowError(op, ": padding_idx ", *padding_idx, " must be within num_embeddings ", num,
               " (in [", -num, ", ", num, "))");
  }
  Shape out = Dims(input);
  out.push_back(weight[1]);
  return out;
}

Shape MaskedFillCheck(IntArrayRef x, IntArrayRef mask, DType mask_dtype, IntArrayRef value) {
  const char* op = "masked_fill";
  if (mask_dtype != kBool) {
    ThrowError(op, ": expected a bool mask, got ", DTypeName(mask_dtype), " of shape ",
               ShapeToString(mask));
  }
  if (!value.empty()) {
    ThrowError(op, ": value must be a 0-dim tensor, got shape ", ShapeToString(value));
  }
  return BroadcastShapes(op, x, mask);
}

int64_t IndexAddCheck(IntArrayRef x, DType x_dtype, int64_t dim, IntArrayRef index,
                      DType index_dtype, IntArrayRef source, DType source_dtype) {
  const char* op = "index_add";
  CheckInt64(op, index_dtype, index, "index");
  if (index.size() > 1) {
    ThrowError(op, ": index must be a rank-0 or 1-D tensor, got shape ", ShapeToString(index));
  }
  if (source_dtype != x_dtype) {
    ThrowError(op, ": source dtype ", DTypeName(source_dtype), " must match the input dtype ",
               DTypeName(x_dtype));
  }
  const int64_t d = WrapDim(op, dim, static_cast<int64_t>(x.size()));
  // Rank 0 counts as [1] for both tensors (torch's rule).
  const Shape xs = x.empty() ? Shape{1} : Dims(x);
  const Shape ss = source.empty() ? Shape{1} : Dims(source);
  if (xs.size() != ss.size()) {
    ThrowError(op, ": source must have the input's number of dims, got source shape ",
               ShapeToString(source), " and input shape ", ShapeToString(x));
  }
  const int64_t m = Numel(index);
  if (ss[d] != m) {
    ThrowError(op, ": the number of indices (", m, ") must equal source.size(", d, ") (", ss[d],
               "), source shape ", ShapeToString(source));
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    if (static_cast<int64_t>(i) != d && xs[i] != ss[i]) {
      ThrowError(op, ": source shape ", ShapeToString(source), " must match input shape ",
                 ShapeToString(x), " in every dim but ", d, " (dim ", i, ": ", ss[i], " != ",
                 xs[i], ")");
    }
  }
  return d;
}

void TriangleCheck(const char* op, IntArrayRef x) {
  if (x.size() < 2) {
    ThrowError(op, ": expected a tensor of at least 2 dims (a batch of matrices), got shape ",
               ShapeToString(x));
  }
}

Shape RollCheck(IntArrayRef x, IntArrayRef shifts, IntArrayRef dims) {
  const char* op = "roll";
  if (shifts.empty()) ThrowError(op, ": shifts must not be empty");
  if (dims.empty()) {
    if (shifts.size() != 1) {
      ThrowError(op, ": with no dims the flattened tensor is rolled, so shifts must hold one "
                 "value, got ", shifts.size(), " shifts");
    }
    return {};
  }
  if (shifts.size() != dims.size()) {
    ThrowError(op, ": shifts and dims must have the same length, got ", shifts.size(),
               " shifts and ", dims.size(), " dims");
  }
  if (x.empty()) {
    ThrowError(op, ": dim ", dims[0], " is out of range for a rank-0 tensor (give no dims "
               "to roll its single element)");
  }
  Shape wrapped;
  for (int64_t dim : dims) wrapped.push_back(WrapDim(op, dim, static_cast<int64_t>(x.size())));
  return wrapped;
}

Shape PixelShuffleCheck(IntArrayRef x, int64_t upscale_factor) {
  const char* op = "pixel_shuffle";
  const int64_t r = upscale_factor;
  if (x.size() < 3) {
    ThrowError(op, ": expected an input of at least 3 dims [*, C * r^2, H, W], got shape ",
               ShapeToString(x));
  }
  if (r <= 0) ThrowError(op, ": upscale_factor must be positive, got ", r);
  const size_t n = x.size();
  const int64_t c = x[n - 3], h = x[n - 2], w = x[n - 1];
  int64_t rr = 0, hr = 0, wr = 0;
  if (__builtin_mul_overflow(r, r, &rr) || c % rr != 0) {
    ThrowError(op, ": the channel dim (size(-3) = ", c, ") must be divisible by upscale_factor^2 ",
               "(upscale_factor ", r, "), input shape ", ShapeToString(x));
  }
  if (__builtin_mul_overflow(h, r, &hr) || __builtin_mul_overflow(w, r, &wr)) {
    ThrowError(op, ": the output size overflows for input shape ", ShapeToString(x),
               " and upscale_factor ", r);
  }
  Shape out = Leading(x);
  for (int64_t s : {c / rr, hr, wr}) out.push_back(s);
  return out;
}

Shape PixelUnshuffleCheck(IntArrayRef x, int64_t downscale_factor) {
  const char* op = "pixel_unshuffle";
  const int64_t r = downscale_factor;
  if (x.size() < 3) {
    ThrowError(op, ": expected an input of at least 3 dims [*, C, H * r, W * r], got shape ",
               ShapeToString(x));
  }
  if (r <= 0) ThrowError(op, ": downscale_factor must be positive, got ", r);
  const size_t n = x.size();
  const int64_t c = x[n - 3], h = x[n - 2], w = x[n - 1];
  if (h % r != 0 || w % r != 0) {
    ThrowError(op, ": height and width (size(-2) = ", h, ", size(-1) = ", w,
               ") must be divisible by downscale_factor ", r, ", input shape ",
               ShapeToString(x));
  }
  int64_t rr = 0, crr = 0;
  if (__builtin_mul_overflow(r, r, &rr) || __builtin_mul_overflow(c, rr, &crr)) {
    ThrowError(op, ": the output size overflows for input shape ", ShapeToString(x),
               " and downscale_factor ", r);
  }
  Shape out = Leading(x);
  for (int64_t s : {crr, h / r, w / r}) out.push_back(s);
  return out;
}

// ---- Kernels ----

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx) {
  const Shape out = EmbeddingCheck(input.sizes(), input.dtype(), weight.sizes(), padding_idx);
  const int64_t num = weight.size(0);
  for (int64_t v : Int64Values(input)) {
    if (v < 0 || v >= num) {
      ThrowError("embedding: index ", v, " is out of range for an embedding table of ", num,
                 " rows (weight shape ", ShapeToString(weight.sizes()), ")");
    }
  }
  const Tensor rows = index_select(weight, 0, reshape(input, {input.numel()}));
  return reshape(rows, out);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  MaskedFillCheck(x.sizes(), mask.sizes(), mask.dtype(), value.sizes());
  return where(mask, to(value, x.dtype()), x);
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha) {
  const int64_t d = IndexAddCheck(x.sizes(), x.dtype(), dim, index.sizes(), index.dtype(),
                                  source.sizes(), source.dtype());
  const Shape xs = x.dim() == 0 ? Shape{1} : Dims(x.sizes());
  const Shape ss = source.dim() == 0 ? Shape{1} : Dims(source.sizes());
  for (int64_t v : Int64Values(index)) {
    if (v < 0 || v >= xs[d]) {
      ThrowError("index_add: index ", v, " is out of bounds for dimension ", d, " with size ",
                 xs[d]);
    }
  }
  Shape view(xs.size(), 1);
  view[d] = index.numel();
  const Tensor idx = expand(reshape(index, view), ss);
  Tensor src = reshape(source, ss);
  if (alpha.is_floating() || alpha.to<int64_t>() != 1) {
    src = mul(src, ScalarTensor(alpha, x.dtype()));
  }
  return reshape(scatter_add(reshape(x, xs), d, idx, src), x.sizes());
}

Tensor tril(const Tensor& x, int64_t diagonal) {
  return ZeroTriangle("tril", x, [diagonal](int64_t off) { return off > diagonal; });
}

Tensor triu(const Tensor& x, int64_t diagonal) {
  return ZeroTriangle("triu", x, [diagonal](int64_t off) { return off < diagonal; });
}

Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims) {
  const Shape wrapped = RollCheck(x.sizes(), shifts, dims);
  if (dims.empty()) {
    const int64_t zero[] = {0};
    return reshape(roll(reshape(x, {x.numel()}), shifts, zero), x.sizes());
  }
  Tensor out = x;
  for (size_t k = 0; k < wrapped.size(); ++k) {
    const int64_t d = wrapped[k];
    const int64_t n = x.size(d);
    if (n == 0) continue;
    int64_t s = shifts[k] % n;
    if (s < 0) s += n;
    if (s == 0) continue;
    out = cat({narrow(out, d, n - s, s), narrow(out, d, 0, n - s)}, d);
  }
  return out.impl() == x.impl() ? clone(x) : out;  // never alias the input
}

Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor) {
  const Shape out = PixelShuffleCheck(x.sizes(), upscale_factor);
  const int64_t r = upscale_factor;
  const Shape lead = Leading(x.sizes());
  const int64_t l = static_cast<int64_t>(lead.size());
  Shape split = lead;
  for (int64_t s : {x.size(-3) / (r * r), r, r, x.size(-2), x.size(-1)}) split.push_back(s);
  Shape perm;
  for (int64_t i = 0; i < l; ++i) perm.push_back(i);
  for (int64_t i : {0, 3, 1, 4, 2}) perm.push_back(l + i);
  return reshape(clone(permute(reshape(x, split), perm)), out);
}

Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor) {
  const Shape out = PixelUnshuffleCheck(x.sizes(), downscale_factor);
  const int64_t r = downscale_factor;
  const Shape lead = Leading(x.sizes());
  const int64_t l = static_cast<int64_t>(lead.size());
  Shape split = lead;
  for (int64_t s : {x.size(-3), x.size(-2) / r, r, x.size(-1) / r, r}) split.push_back(s);
  Shape perm;
  for (int64_t i = 0; i < l; ++i) perm.push_back(i);
  for (int64_t i : {0, 2, 4, 1, 3}) perm.push_back(l + i);
  return reshape(clone(permute(reshape(x, split), perm)), out);
}

// ---- gather_nd / index_put_nd ----

Shape GatherNdCheck(const char* op, IntArrayRef x, IntArrayRef index, DType index_dtype) {
  CheckInt64(op, index_dtype, index, "index");
  if (index.empty()) {
    ThrowError(op, ": index must have at least one dim (its last holds the coordinates), got "
               "a rank-0 index");
  }
  const int64_t k = index.back();
  if (k > static_cast<int64_t>(x.size())) {
    ThrowError(op, ": index of shape ", ShapeToString(index), " has ", k,
               " coordinates per row, but x of shape ", ShapeToString(x), " has only ",
               x.size(), " dims");
  }
  Shape out(index.begin(), index.end() - 1);
  out.insert(out.end(), x.begin() + k, x.end());
  return out;
}

void IndexPutNdCheck(IntArrayRef x, DType x_dtype, IntArrayRef index, DType index_dtype,
                     IntArrayRef values, DType values_dtype) {
  const char* op = "index_put_nd";
  const Shape target = GatherNdCheck(op, x, index, index_dtype);
  if (values_dtype != x_dtype) {
    ThrowError(op, ": values must have x's dtype ", DTypeName(x_dtype), ", got ",
               DTypeName(values_dtype));
  }
  if (!IsExpandableTo(values, target)) {
    ThrowError(op, ": values of shape ", ShapeToString(values),
               " cannot be broadcast to the indexed shape ", ShapeToString(target));
  }
}

namespace {

// RowOffsets: for each row of index [*, k], the element offset of x[row...] in a contiguous
// x, negative coordinates counting from the end (torch's advanced indexing). Every
// coordinate is checked against its dim before anything is allocated.
std::vector<int64_t> RowOffsets(const char* op, IntArrayRef x, const Tensor& index) {
  const int64_t k = index.size(-1);
  const std::vector<int64_t> coords = Int64Values(index);
  const int64_t rows = k == 0 ? Numel(index.sizes().subspan(0, index.dim() - 1))
                              : static_cast<int64_t>(coords.size()) / k;
  const Shape strides = ContiguousStrides(x);
  std::vector<int64_t> offsets(static_cast<size_t>(rows), 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = coords[static_cast<size_t>(r * k + j)];
      const int64_t size = x[static_cast<size_t>(j)];
      if (v < -size || v >= size) {
        ThrowError(op, ": index ", v, " is out of bounds for dimension ", j, " with size ",
                   size);
      }
      if (v < 0) v += size;
      off += v * strides[static_cast<size_t>(j)];
    }
    offsets[static_cast<size_t>(r)] = off;
  }
  return offsets;
}

}  // namespace

Tensor gather_nd(const Tensor& x, const Tensor& index) {
  const char* op = "gather_nd";
  const Shape out_shape = GatherNdCheck(op, x.sizes(), index.sizes(), index.dtype());
  const std::vector<int64_t> offsets = RowOffsets(op, x.sizes(), index);
  Tensor out = EmptyContiguous(out_shape, x.dtype());
  if (out.numel() == 0) return out;
  const Tensor xc = contiguous(x);
  const int64_t item = ItemSize(x.dtype());
  const int64_t row_bytes = out.numel() / static_cast<int64_t>(offsets.size()) * item;
  const char* src = static_cast<const char*>(xc.impl()->raw_data());
  char* dst = static_cast<char*>(out.impl()->raw_data());
  for (size_t r = 0; r < offsets.size(); ++r) {
    std::memcpy(dst + static_cast<int64_t>(r) * row_bytes, src + offsets[r] * item,
                static_cast<size_t>(row_bytes));
  }
  return out;
}

Tensor index_put_nd(const Tensor& x, const Tensor& index, const Tensor& values, bool accumulate) {
  const char* op = "index_put_nd";
  IndexPutNdCheck(x.sizes(), x.dtype(), index.sizes(), index.dtype(), values.sizes(),
                  values.dtype());
  const std::vector<int64_t> offsets = RowOffsets(op, x.sizes(), index);
  Tensor out = clone(x);
  const Shape target = GatherNdCheck(op, x.sizes(), index.sizes(), index.dtype());
  const int64_t n = Numel(target);
  if (n == 0) return out;
  const Tensor v = contiguous(expand(values, target));
  const int64_t row = n / static_cast<int64_t>(offsets.size());
  char* dst = static_cast<char*>(out.impl()->raw_data());
  const char* src = static_cast<const char*>(v.impl()->raw_data());
  const int64_t item = ItemSize(x.dtype());
  // Rows are written in order, so with repeated coordinates and accumulate false the last
  // row wins (torch leaves that order unspecified; ft's derivatives rely on it).
  for (size_t r = 0; r < offsets.size(); ++r) {
    char* d = dst + offsets[r] * item;
    const char* s = src + static_cast<int64_t>(r) * row * item;
    if (!accumulate) {
      std::memcpy(d, s, static_cast<size_t>(row * item));
    } else if (x.dtype() == kBool) {
      for (int64_t i = 0; i < row; ++i) d[i] = static_cast<char>(d[i] || s[i]);
    } else {
      VisitDType(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* dt = reinterpret_cast<T*>(d);
        const T* st = reinterpret_cast<const T*>(s);
        for (int64_t i = 0; i < row; ++i) {
          if constexpr (std::is_integral_v<T>) {
            // int64 wraps on overflow like PyTorch (and scatter_add), without signed UB.
            dt[i] = static_cast<T>(static_cast<uint64_t>(dt[i]) + static_cast<uint64_t>(st[i]));
          } else {
            dt[i] += st[i];
          }
        }
      });
    }
  }
  return out;
}

}  // namespace ft::kernels

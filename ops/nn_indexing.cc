#include "ops/nn_indexing.h"

#include <algorithm>

#include <string>
#include <string_view>

#include "dispatch/dispatch.h"
#include "kernels/nn_indexing.h"
#include "ops/index.h"
#include "ops/view.h"

namespace ft {
namespace {

// ValueTensor: masked_fill's fill value as a rank-0 constant of x's dtype (no gradient), so
// that one op serves the Scalar and the Tensor overloads.
Tensor ValueTensor(Scalar value, DType dtype) {
  Tensor t = EmptyContiguous({}, dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    *static_cast<T*>(t.impl()->raw_data()) = value.to<T>();
  });
  return t;
}

// Lowered: torch-style indices as gather_nd / index_put_nd see them. x's indexed dims are
// permuted to the front (x_front = permute(x, perm)), the index tensors broadcast to B and
// stacked into `index` [*B, k]. The primitives give B + kept dims; torch puts B at `b_at`
// among the kept dims instead (the first indexed dim when those are adjacent, else 0).
struct Lowered {
  Tensor x_front;
  Tensor index;
  Shape perm;
  int64_t b_rank = 0;
  int64_t b_at = 0;
  Shape dims;  // the indexed dims, for messages
};

Lowered Lower(const char* op, const Tensor& x, const TensorIndices& indices) {
  const int64_t rank = x.dim();
  if (static_cast<int64_t>(indices.size()) > rank) {
    ThrowError(op, ": too many indices for a tensor of shape ", ShapeToString(x.sizes()), ": ",
               indices.size(), " given");
  }
  Lowered l;
  TensorList tensors;
  Shape b;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i]) continue;
    const Tensor& t = *indices[i];
    if (t.dtype() == kBool) {
      ThrowError(op, ": the index for dim ", i, " is a boolean mask (shape ",
                 ShapeToString(t.sizes()), "), whose result shape depends on its values; it is "
                 "not supported: use masked_fill or where");
    }
    if (t.dtype() != kInt64) {
      ThrowError(op, ": the index for dim ", i, " must be int64, got ", DTypeName(t.dtype()));
    }
    b = tensors.empty() ? Shape(t.sizes().begin(), t.sizes().end())
                        : BroadcastShapes(op, b, t.sizes());
    tensors.push_back(t);
    l.dims.push_back(static_cast<int64_t>(i));
  }
  bool adjacent = true;
  for (size_t j = 1; j < l.dims.size(); ++j) adjacent &= l.dims[j] == l.dims[j - 1] + 1;
  l.perm = l.dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(l.dims.begin(), l.dims.end(), d) == l.dims.end()) l.perm.push_back(d);
  }
  l.x_front = permute(x, l.perm);
  if (tensors.empty()) {
    l.index = EmptyContiguous({0}, kInt64);  // [k = 0]: one row that indexes nothing
  } else {
    for (Tensor& t : tensors) t = expand(t, b);
    l.index = stack(tensors, -1);
  }
  l.b_rank = static_cast<int64_t>(b.size());
  l.b_at = adjacent && !l.dims.empty() ? l.dims[0] : 0;
  return l;
}

// BToTorchPlace: the permutation that moves B (the first b_rank dims of a primitive's
// result) to b_at among the kept dims.
Shape BToTorchPlace(const Lowered& l, int64_t rank) {
  Shape p;
  for (int64_t i = 0; i < l.b_at; ++i) p.push_back(l.b_rank + i);
  for (int64_t i = 0; i < l.b_rank; ++i) p.push_back(i);
  for (int64_t i = l.b_rank + l.b_at; i < rank; ++i) p.push_back(i);
  return p;
}

Shape Inverse(IntArrayRef p) {
  Shape inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return inv;
}

// Restated: the primitive's out-of-range message names dims of the permuted x; it is restated
// for x and the dims the caller indexed.
template <typename F>
Tensor Restated(const char* op, const Tensor& x, const Lowered& l, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.message().find("out of bounds") == std::string_view::npos) throw;
    ThrowError(op, ": an index is out of range for x of shape ", ShapeToString(x.sizes()),
               " indexed at dims ", ShapeToString(l.dims), " (", e.message(), ")");
  }
}

}  // namespace

Tensor index(const Tensor& x, const TensorIndices& indices) {
  const char* op = "index";
  const Lowered l = Lower(op, x, indices);
  const Tensor r = Restated(op, x, l, [&] { return gather_nd(l.x_front, l.index); });
  return l.b_at == 0 ? r : permute(r, BToTorchPlace(l, r.dim()));
}

Tensor index_put(const Tensor& x, const TensorIndices& indices, const Tensor& values,
                 bool accumulate) {
  const char* op = "index_put";
  const Lowered l = Lower(op, x, indices);
  if (values.dtype() != x.dtype()) {
    ThrowError(op, ": values must have x's dtype ", DTypeName(x.dtype()), ", got ",
               DTypeName(values.dtype()));
  }
  // The shape index(x, indices) has, in torch's order.
  Shape front(l.index.sizes().begin(), l.index.sizes().end() - 1);
  front.insert(front.end(), l.x_front.sizes().begin() + l.index.size(-1),
               l.x_front.sizes().end());
  const int64_t rank = static_cast<int64_t>(front.size());
  const Shape to_torch = BToTorchPlace(l, rank);
  Shape target;
  for (int64_t d : to_torch) target.push_back(front[static_cast<size_t>(d)]);
  if (!IsExpandableTo(values.sizes(), target)) {
    ThrowError(op, ": values of shape ", ShapeToString(values.sizes()),
               " cannot be broadcast to the indexed shape ", ShapeToString(target));
  }
  Shape padded(static_cast<size_t>(rank - values.dim()), 1);
  padded.insert(padded.end(), values.sizes().begin(), values.sizes().end());
  const Tensor v = permute(reshape(values, padded), Inverse(to_torch));
  const Tensor out = Restated(op, x, l, [&] {
    return index_put_nd(l.x_front, l.index, v, accumulate);
  });
  return permute(out, Inverse(l.perm));
}

Tensor gather_nd(const Tensor& x, const Tensor& index) {
  return Call<&kernels::gather_nd>(x, index);
}
Tensor index_put_nd(const Tensor& x, const Tensor& index, const Tensor& values,
                    bool accumulate) {
  return Call<&kernels::index_put_nd>(x, index, values, accumulate);
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx) {
  return Call<&kernels::embedding>(input, weight, padding_idx);
}
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  return Call<&kernels::masked_fill>(x, mask, value);
}
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  return masked_fill(x, mask, ValueTensor(value, x.dtype()));
}
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha) {
  return Call<&kernels::index_add>(x, dim, index, source, alpha);
}
Tensor tril(const Tensor& x, int64_t diagonal) { return Call<&kernels::tril>(x, diagonal); }
Tensor triu(const Tensor& x, int64_t diagonal) { return Call<&kernels::triu>(x, diagonal); }
Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims) {
  return Call<&kernels::roll>(x, shifts, dims);
}
Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor) {
  return Call<&kernels::pixel_shuffle>(x, upscale_factor);
}
Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor) {
  return Call<&kernels::pixel_unshuffle>(x, downscale_factor);
}

void RegisterNnIndexingOps(OpRegistry& r) {
  RegisterOp<&kernels::embedding>(r, "embedding", {"input", "weight", "padding_idx"});
  RegisterOp<&kernels::masked_fill>(r, "masked_fill", {"self", "mask", "value"});
  RegisterOp<&kernels::index_add>(r, "index_add", {"self", "dim", "index", "source", "alpha"});
  RegisterOp<&kernels::tril>(r, "tril", {"self", "diagonal"});
  RegisterOp<&kernels::triu>(r, "triu", {"self", "diagonal"});
  RegisterOp<&kernels::roll>(r, "roll", {"self", "shifts", "dims"});
  RegisterOp<&kernels::pixel_shuffle>(r, "pixel_shuffle", {"self", "upscale_factor"});
  RegisterOp<&kernels::pixel_unshuffle>(r, "pixel_unshuffle", {"self", "downscale_factor"});
  RegisterOp<&kernels::gather_nd>(r, "gather_nd", {"self", "index"});
  RegisterOp<&kernels::index_put_nd>(r, "index_put_nd",
                                     {"self", "index", "values", "accumulate"});
}

}  // namespace ft

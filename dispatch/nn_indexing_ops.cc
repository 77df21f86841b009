#include "dispatch/nn_indexing_ops.h"

#include "dispatch/dispatch.h"
#include "tensor/nn_indexing_kernels.h"

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

}  // namespace

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
}

}  // namespace ft

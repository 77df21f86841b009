#include "ops/index.h"

#include "dispatch/dispatch.h"
#include "kernels/index.h"
#include "tensor/copy.h"

namespace ft {

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  return Call<&kernels::index_select>(x, dim, index);
}
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  return Call<&kernels::gather>(x, dim, index);
}
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return Call<&kernels::scatter_add>(x, dim, index, src);
}
Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim) {
  return Call<&kernels::take_along_dim>(x, indices, dim);
}
Tensor cat(const TensorList& tensors, int64_t dim) { return Call<&kernels::cat>(tensors, dim); }
Tensor stack(const TensorList& tensors, int64_t dim) { return Call<&kernels::stack>(tensors, dim); }
TensorList split(const Tensor& x, int64_t split_size, int64_t dim) {
  return Call<&kernels::split>(x, split_size, dim);
}
TensorList split_with_sizes(const Tensor& x, IntArrayRef sizes, int64_t dim) {
  return Call<&kernels::split_with_sizes>(x, sizes, dim);
}
TensorList chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  return Call<&kernels::chunk>(x, chunks, dim);
}
Tensor repeat(const Tensor& x, IntArrayRef repeats) { return Call<&kernels::repeat>(x, repeats); }
Tensor pad(const Tensor& x, IntArrayRef pads, Scalar value) {
  return Call<&kernels::pad>(x, pads, value);
}
Tensor to(const Tensor& x, DType dtype) { return Call<&kernels::to>(x, dtype); }
Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  return Call<&kernels::one_hot>(indices, num_classes);
}

void RegisterIndexOps(OpRegistry& r) {
  RegisterOp<&kernels::index_select>(r, "index_select", {"self", "dim", "index"},
                                     {.dtypes = kEveryDType});
  RegisterOp<&kernels::gather>(r, "gather", {"self", "dim", "index"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::scatter_add>(r, "scatter_add", {"self", "dim", "index", "src"});
  RegisterOp<&kernels::take_along_dim>(r, "take_along_dim", {"self", "indices", "dim"},
                                       {.dtypes = kEveryDType});
  RegisterOp<&kernels::cat>(r, "cat", {"tensors", "dim"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::stack>(r, "stack", {"tensors", "dim"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::split>(r, "split", {"self", "split_size", "dim"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::split_with_sizes>(r, "split_with_sizes", {"self", "split_sizes", "dim"},
                                         {.dtypes = kEveryDType});
  RegisterOp<&kernels::chunk>(r, "chunk", {"self", "chunks", "dim"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::repeat>(r, "repeat", {"self", "repeats"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::pad>(r, "pad", {"self", "pad", "value"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::to>(r, "to", {"self", "dtype"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::one_hot>(r, "one_hot", {"self", "num_classes"});
}

}  // namespace ft

#include "ops/view.h"

#include "dispatch/dispatch.h"
#include "kernels/view.h"

namespace ft {

Tensor reshape(const Tensor& x, IntArrayRef shape) { return Call<&kernels::reshape>(x, shape); }
Tensor view(const Tensor& x, IntArrayRef shape) { return Call<&kernels::view>(x, shape); }
Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  return Call<&kernels::flatten>(x, start_dim, end_dim);
}
Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes) {
  return Call<&kernels::unflatten>(x, dim, sizes);
}
Tensor expand(const Tensor& x, IntArrayRef sizes) { return Call<&kernels::expand>(x, sizes); }
Tensor expand_as(const Tensor& x, const Tensor& other) { return expand(x, other.sizes()); }
Tensor unsqueeze(const Tensor& x, int64_t dim) { return Call<&kernels::unsqueeze>(x, dim); }
Tensor squeeze(const Tensor& x) { return Call<&kernels::squeeze>(x); }
Tensor squeeze_dim(const Tensor& x, int64_t dim) { return Call<&kernels::squeeze_dim>(x, dim); }
Tensor squeeze_dims(const Tensor& x, IntArrayRef dims) {
  return Call<&kernels::squeeze_dims>(x, dims);
}
Tensor movedim(const Tensor& x, IntArrayRef source, IntArrayRef destination) {
  return Call<&kernels::movedim>(x, source, destination);
}
Tensor movedim(const Tensor& x, int64_t source, int64_t destination) {
  return movedim(x, IntArrayRef(&source, 1), IntArrayRef(&destination, 1));
}
Tensor permute(const Tensor& x, IntArrayRef dims) { return Call<&kernels::permute>(x, dims); }
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  return Call<&kernels::transpose>(x, dim0, dim1);
}
Tensor t(const Tensor& x) { return Call<&kernels::t>(x); }
Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  return Call<&kernels::select>(x, dim, index);
}
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  return Call<&kernels::narrow>(x, dim, start, length);
}
Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step) {
  return Call<&kernels::slice>(x, dim, start, end, step);
}
Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  return Call<&kernels::diagonal>(x, offset, dim1, dim2);
}
Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  return Call<&kernels::select_scatter>(self, src, dim, index);
}
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim,
                     std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  return Call<&kernels::slice_scatter>(self, src, dim, start, end, step);
}
Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset, int64_t dim1,
                        int64_t dim2) {
  return Call<&kernels::diagonal_scatter>(self, src, offset, dim1, dim2);
}
Tensor contiguous(const Tensor& x) { return Call<&kernels::contiguous>(x); }
Tensor clone(const Tensor& x) { return Call<&kernels::clone>(x); }
Tensor stop_gradient(const Tensor& x) { return Call<&kernels::stop_gradient>(x); }
Tensor flip(const Tensor& x, IntArrayRef dims) { return Call<&kernels::flip>(x, dims); }

void RegisterViewOps(OpRegistry& r) {
  RegisterOp<&kernels::reshape>(r, "reshape", {"self", "shape"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::view>(r, "view", {"self", "size"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::flatten>(r, "flatten", {"self", "start_dim", "end_dim"},
                                {.dtypes = kEveryDType});
  RegisterOp<&kernels::unflatten>(r, "unflatten", {"self", "dim", "sizes"},
                                  {.dtypes = kEveryDType});
  RegisterOp<&kernels::expand>(r, "expand", {"self", "size"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::unsqueeze>(r, "unsqueeze", {"self", "dim"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::squeeze>(r, "squeeze", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::squeeze_dim>(r, "squeeze_dim", {"self", "dim"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::squeeze_dims>(r, "squeeze_dims", {"self", "dims"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::movedim>(r, "movedim", {"self", "source", "destination"},
                                {.dtypes = kEveryDType});
  RegisterOp<&kernels::permute>(r, "permute", {"self", "dims"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::transpose>(r, "transpose", {"self", "dim0", "dim1"},
                                  {.dtypes = kEveryDType});
  RegisterOp<&kernels::t>(r, "t", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::select>(r, "select", {"self", "dim", "index"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::narrow>(r, "narrow", {"self", "dim", "start", "length"},
                               {.dtypes = kEveryDType});
  RegisterOp<&kernels::slice>(r, "slice", {"self", "dim", "start", "end", "step"},
                              {.dtypes = kEveryDType});
  RegisterOp<&kernels::diagonal>(r, "diagonal", {"self", "offset", "dim1", "dim2"},
                                 {.dtypes = kEveryDType});
  RegisterOp<&kernels::select_scatter>(r, "select_scatter", {"self", "src", "dim", "index"},
                                       {.dtypes = kEveryDType});
  RegisterOp<&kernels::slice_scatter>(
      r, "slice_scatter", {"self", "src", "dim", "start", "end", "step"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::diagonal_scatter>(
      r, "diagonal_scatter", {"self", "src", "offset", "dim1", "dim2"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::contiguous>(r, "contiguous", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::clone>(r, "clone", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::stop_gradient>(r, "stop_gradient", {"self"}, {.dtypes = kEveryDType});
  RegisterOp<&kernels::flip>(r, "flip", {"self", "dims"}, {.dtypes = kEveryDType});
}

}  // namespace ft

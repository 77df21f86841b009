// ft/tensor/copy.h
//
// Base kernels that move elements between layouts and dtypes: the strided, casting copy
// every other kernel falls back on. Dense tensors only (see tensor.h).
//
// Example:
//   Tensor t = ...;                     // a transposed view
//   Tensor c = kernels::contiguous(t);  // row-major copy (t itself when already contiguous)
#ifndef FT_TENSOR_COPY_H_
#define FT_TENSOR_COPY_H_

#include "tensor/tensor.h"

namespace ft::kernels {

// copy_into writes src into dst elementwise, broadcasting src to dst's shape and casting to
// dst's dtype, any of the twelve to any, as ConvertElement (tensor/dtype.h) converts one
// element (float -> int truncates toward zero; nonzero -> true). Does not bump dst's
// version (the in-place op copy_ does). Throws when src does not broadcast to dst.
void copy_into(const Tensor& dst, const Tensor& src);

// contiguous returns `t` itself when it is contiguous, else a row-major copy.
Tensor contiguous(const Tensor& t);

// clone returns a new contiguous tensor with t's values (never aliases t).
Tensor clone(const Tensor& t);

// stop_gradient is the base kernel of ft::stop_gradient: a new contiguous copy, like clone
// (the op differs from clone only in its derivative rules, which have none).
Tensor stop_gradient(const Tensor& t);

// to returns `t` itself when it already has `dtype`, else a contiguous converted copy.
Tensor to(const Tensor& t, DType dtype);

}  // namespace ft::kernels

#endif  // FT_TENSOR_COPY_H_

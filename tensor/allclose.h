// ft/tensor/allclose.h
//
// allclose: whether two dense tensors are elementwise equal within a tolerance, like
// torch.allclose: |a - b| <= atol + rtol * |b| for every element of the broadcast of a and b.
// NaNs compare equal only when `equal_nan` is set. Any dtypes may be compared (values are
// compared as float64). It reads values, so it is for eager code and tests, not for use
// inside a transformed function (a wrapper argument throws, as item() does).
//
// Example:
//   ft::allclose(ft::sin(x), expected)            // rtol 1e-5, atol 1e-8
//   ft::allclose(a, b, /*rtol=*/0, /*atol=*/1e-12)
#ifndef FT_TENSOR_ALLCLOSE_H_
#define FT_TENSOR_ALLCLOSE_H_

#include "tensor/tensor.h"

namespace ft {

// allclose throws ft::Error when the shapes do not broadcast or a tolerance is negative.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);

}  // namespace ft

#endif  // FT_TENSOR_ALLCLOSE_H_

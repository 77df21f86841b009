// ft/kernels/checks.h  (internal to //kernels)
//
// The input checks kernels share, each an ft::Error whose message starts with the op's name
// and gives the offending dtype or shape (house style rule 15). A kernel validates its
// inputs with these before it allocates or writes anything.
//
// Example (a kernel's entry):
//   internal::CheckFloating("digamma", x);   // "digamma: expected a floating point tensor
//                                             //  (float32 or float64), got int64 of shape [3]"
#ifndef FT_KERNELS_CHECKS_H_
#define FT_KERNELS_CHECKS_H_

#include "absl/strings/string_view.h"
#include "tensor/tensor.h"

namespace ft::kernels::internal {

// CheckFloating throws "<op>: expected a floating point tensor, got <dtype>".
void CheckFloating(absl::string_view op, const Tensor& t);
// CheckWritable throws when `self` (the target of an in-place op) has overlapping elements
// (a broadcast dim: stride 0 with size > 1), like PyTorch's "unsupported operation".
void CheckWritable(absl::string_view op, const Tensor& self);
// CheckNotBool throws "<op>: not supported for bool tensors".
void CheckNotBool(absl::string_view op, const Tensor& t);

}  // namespace ft::kernels::internal

#endif  // FT_KERNELS_CHECKS_H_

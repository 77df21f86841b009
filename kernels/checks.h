// ft/kernels/checks.h  (internal to //kernels)
//
// The input checks kernels share, each an ft::Error whose message starts with the op's name
// and gives the offending dtype or shape (house style rule 15): dtypes, in-place targets,
// and the per-spatial-dim window arguments of convolution, pooling and unfold. A kernel
// validates its inputs with these before it allocates or writes anything.
//
// Example (a kernel's entry):
//   internal::CheckFloating("digamma", x);   // "digamma: expected a floating point tensor
//                                             //  (float32 or float64), got int64 of shape [3]"
#ifndef FT_KERNELS_CHECKS_H_
#define FT_KERNELS_CHECKS_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft::kernels::internal {

// CheckFloating throws "<op>: expected a floating point tensor, got <dtype>".
void CheckFloating(absl::string_view op, const Tensor& t);
// CheckWritable throws when `self` (the target of an in-place op) has overlapping elements
// (a broadcast dim: stride 0 with size > 1), like PyTorch's "unsupported operation".
void CheckWritable(absl::string_view op, const Tensor& self);
// CheckNotBool throws "<op>: not supported for bool tensors".
void CheckNotBool(absl::string_view op, const Tensor& t);

// Window arguments (conv, pooling, unfold/fold). `op` and `name` appear in the messages.
// PerDim: a per-spatial-dim argument with one value per dim (a single value repeats);
// throws unless v has 1 or n values.
Shape PerDim(const char* op, const char* name, IntArrayRef v, int64_t n);
// CheckPositive / CheckNonNegative: every value of the argument `name` is > 0 / >= 0.
void CheckPositive(const char* op, const char* name, IntArrayRef v);
void CheckNonNegative(const char* op, const char* name, IntArrayRef v);
// CheckInputRank: an input of n spatial dims, with (n + 2) or without (n + 1) the batch dim.
// Returns whether it is batched.
bool CheckInputRank(const char* op, int64_t n, IntArrayRef input);
// WindowRoom: in + 2 * p - d * (k - 1) - 1, what one dilated window of k leaves of a dim of
// size in padded by p on each side (negative: not even one window fits), for k, d >= 1 and
// in, p >= 0. Parameters so large that this overflows int64 throw an ft::Error naming op.
int64_t WindowRoom(const char* op, int64_t in, int64_t k, int64_t p, int64_t d);

}  // namespace ft::kernels::internal

#endif  // FT_KERNELS_CHECKS_H_

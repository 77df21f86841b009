// ft/tensor/view_kernels.h  (being written)
#ifndef FT_TENSOR_VIEW_KERNELS_H_
#define FT_TENSOR_VIEW_KERNELS_H_

#include "tensor/tensor.h"

namespace ft::kernels {}  // namespace ft::kernels

#endif  // FT_TENSOR_VIEW_KERNELS_H_

// ft/tensor/print.h
//
// Printing tensors the way PyTorch does:
//   tensor([[1., 2.],
//           [3., 4.]])
//   tensor([1.5000, 2.2500], dtype=float64)
//   tensor([1, 2, 3])                     // int64 needs no dtype suffix
//   tensor([True, False])
// Floats print with 4 decimals, in integer form ("2.") when every value is integral, and in
// scientific notation when magnitudes span more than 1e3 or exceed 1e8 (torch/_tensor_str.py's
// rules). Lines wrap at 80 columns, and tensors over 1000 elements are summarised with "..."
// (three leading and trailing items per dim). Wrapper tensors print through
// TensorImpl::WrapperRepr. Tensor::DebugString (tensor.h) shows the layout instead.
#ifndef FT_TENSOR_PRINT_H_
#define FT_TENSOR_PRINT_H_

#include <ostream>
#include <string>

#include "tensor/tensor.h"

namespace ft {

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ToString returns what operator<< prints.
std::string ToString(const Tensor& t);

}  // namespace ft

#endif  // FT_TENSOR_PRINT_H_

#include "tensor/normalization_kernels.h"

namespace ft::kernels {}  // namespace ft::kernels

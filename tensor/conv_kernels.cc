#include "tensor/conv_kernels.h"

namespace ft::kernels {}  // namespace ft::kernels

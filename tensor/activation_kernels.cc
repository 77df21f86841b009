#include "tensor/activation_kernels.h"

namespace ft::kernels {}  // namespace ft::kernels

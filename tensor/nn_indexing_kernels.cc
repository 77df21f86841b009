#include "tensor/nn_indexing_kernels.h"

namespace ft::kernels {}  // namespace ft::kernels

#include "tensor/loss_kernels.h"

namespace ft::kernels {}  // namespace ft::kernels

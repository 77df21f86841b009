#include "tensor/attention_kernels.h"

namespace ft::kernels {}  // namespace ft::kernels

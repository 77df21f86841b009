#include "tensor/binary_kernels.h"

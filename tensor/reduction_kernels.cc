#include "tensor/reduction_kernels.h"

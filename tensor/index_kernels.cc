#include "tensor/index_kernels.h"

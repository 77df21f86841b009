#include "tensor/linalg_kernels.h"

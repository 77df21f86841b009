#include "tensor/random_kernels.h"

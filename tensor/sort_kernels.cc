#include "tensor/sort_kernels.h"

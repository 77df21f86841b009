#include "tensor/view_kernels.h"

// ft/dispatch/ops.h
//
// All public ops: include this to use every op family. See each family header for the
// ops' semantics, dtype rules and errors.
#ifndef FT_DISPATCH_OPS_H_
#define FT_DISPATCH_OPS_H_

#include "dispatch/activation_ops.h"
#include "dispatch/attention_ops.h"
#include "dispatch/binary_ops.h"
#include "dispatch/conv_ops.h"
#include "dispatch/dispatch.h"
#include "dispatch/index_ops.h"
#include "dispatch/linalg_ops.h"
#include "dispatch/loss_ops.h"
#include "dispatch/nn_indexing_ops.h"
#include "dispatch/normalization_ops.h"
#include "dispatch/random_ops.h"
#include "dispatch/reduction_ops.h"
#include "dispatch/sort_ops.h"
#include "dispatch/unary_ops.h"
#include "dispatch/view_ops.h"

#endif  // FT_DISPATCH_OPS_H_

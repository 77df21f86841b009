// ft/ops/ops.h
//
// All public ops: include this to use every op family. See each family header for the
// ops' semantics, dtype rules and errors.
#ifndef FT_OPS_OPS_H_
#define FT_OPS_OPS_H_

#include "dispatch/dispatch.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/binary.h"
#include "ops/conv.h"
#include "ops/index.h"
#include "ops/linalg.h"
#include "ops/loss.h"
#include "ops/nn_indexing.h"
#include "ops/normalization.h"
#include "ops/random.h"
#include "ops/reduction.h"
#include "ops/sort.h"
#include "ops/unary.h"
#include "ops/view.h"

#endif  // FT_OPS_OPS_H_

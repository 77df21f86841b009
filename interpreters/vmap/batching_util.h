// ft/interpreters/vmap/batching_util.h
//
// Small helpers batching rules share (the C++ functorch BatchRulesHelper's vocabulary). Each
// takes a physical value and its optional batch dim (BDim) and calls public ops, so rules
// stay pure functions of (value, bdim) pairs. Rules run with their vmap level lowered, so
// these ops are seen only by the levels below.
//
// Example (a binary elementwise rule):
//   const int64_t rank = std::max(LogicalRank(a, abd), LogicalRank(b, bbd));
//   Tensor pa = PadToLogicalRank(MoveBdimToFront(a, abd), abd, rank);
//   Tensor pb = PadToLogicalRank(MoveBdimToFront(b, bbd), bbd, rank);
//   return {{Value(ft::add(pa, pb))}, {0}};
#ifndef FT_INTERPRETERS_VMAP_BATCHING_UTIL_H_
#define FT_INTERPRETERS_VMAP_BATCHING_UTIL_H_

#include <cstdint>

#include "interpreters/vmap/vmap_interpreter.h"
#include "tensor/generator.h"
#include "tensor/tensor.h"

namespace ft {

// LogicalRank: x's rank as the user's function sees it (without the batch dim).
inline int64_t LogicalRank(const Tensor& x, BDim bdim) { return x.dim() - (bdim ? 1 : 0); }

// LogicalShape: x's sizes without its batch dim (the shape the user's function sees), for
// rules that validate or name an operand's per-example shape.
inline Shape LogicalShape(const Tensor& x, BDim bdim) {
  Shape s(x.sizes().begin(), x.sizes().end());
  if (bdim) s.erase(s.begin() + *bdim);
  return s;
}

// MoveBdimToFront: x with its batch dim at 0 (x itself when unbatched or already there).
Tensor MoveBdimToFront(const Tensor& x, BDim bdim);

// PadToLogicalRank: x (batch dim, if any, at the front) with size-1 dims inserted after the
// batch dim until its logical rank is `rank`, so that it broadcasts like the logical tensor.
Tensor PadToLogicalRank(const Tensor& x, BDim bdim, int64_t rank);

// EnsureBatchedFront: x with a batch dim of `batch_size` at the front: moved there when x is
// batched, expanded (a broadcast view, no copy) when it is not.
Tensor EnsureBatchedFront(const Tensor& x, BDim bdim, int64_t batch_size);

// PhysicalDim: the physical dim of logical dim `dim` (negative allowed; validated against
// `logical_rank`, throwing like the op would, naming `op`) once the batch dim is at 0.
int64_t PhysicalDim(const char* op, int64_t dim, int64_t logical_rank);

// BatchedDrawOffset: for a random op drawing `per_example` numbers per example from `gen`
// with randomness kDifferent, positions `gen` so that the op's draw of
// [ctx.batch_size, per_example] numbers takes exactly this chunk's slice of the whole batch's
// counters (NOTE: [Randomness and chunks] in vmap_interpreter.h), and returns the offset the
// generator must be left at after the draw (RestoreAfterDraw). Throws when a chunk's random
// calls differ from the first chunk's.
uint64_t BatchedDrawOffset(const VmapContext& ctx, Generator& gen, int64_t per_example);

}  // namespace ft

#endif  // FT_INTERPRETERS_VMAP_BATCHING_UTIL_H_

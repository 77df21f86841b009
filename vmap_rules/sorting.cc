// Batching rules: sorting (sort, argsort, topk).
//
// Each example's slices along the logical `dim` are sorted independently, so the rule moves
// the batch dim to the front and runs the op once along the physical dim (logical dim + 1).
// dim and k are validated against the LOGICAL tensor, with the op's own messages. A logical
// rank-0 tensor (one element, for which dims 0 and -1 are accepted) is sorted as a [1] slice:
// [B] -> [B, 1] along dim 1, and the size-1 dim is squeezed from the results.
#include <cstdint>
#include <tuple>

#include "dispatch/dispatch.h"
#include "interpreters/vmap/batching_util.h"
#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/shape.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

// Sortable: the input with its batch dim at 0, made at least logically 1-D, and the physical
// dim to sort along.
struct Sortable {
  Tensor x;
  int64_t dim;
  bool rank0;  // the logical input is rank 0: squeeze dim 1 from the results
};

Sortable PrepareSort(const char* op, const Tensor& x, BDim bdim, int64_t dim) {
  FT_CHECK(bdim.has_value());
  const int64_t rank = LogicalRank(x, bdim);
  const Tensor front = MoveBdimToFront(x, bdim);
  WrapDim(op, dim, rank);  // throws like the op for an out-of-range logical dim
  if (rank == 0) return {unsqueeze(front, 1), 1, true};
  return {front, PhysicalDim(op, dim, rank), false};
}

Tensor Finish(const Sortable& s, Tensor t) { return s.rank0 ? squeeze_dim(t, 1) : t; }

// The interpreter only runs a rule when the (single) tensor argument is batched at its
// level; these rules rely on that (batch dim at 0 in every output).
BatchedResult SortRule(const VmapContext&, BatchedArgs& args) {
  const Sortable s = PrepareSort("sort", args.tensor(0), args.bdim(0), args.values[1].to_int());
  auto [values, indices] = sort(s.x, s.dim, args.values[2].to_bool());
  return BatchedResult{{Value(Finish(s, values)), Value(Finish(s, indices))}, {0, 0}};
}

BatchedResult ArgsortRule(const VmapContext&, BatchedArgs& args) {
  const Sortable s =
      PrepareSort("argsort", args.tensor(0), args.bdim(0), args.values[1].to_int());
  return BatchedResult{{Value(Finish(s, argsort(s.x, s.dim, args.values[2].to_bool())))}, {0}};
}

BatchedResult TopkRule(const VmapContext&, BatchedArgs& args) {
  const int64_t k = args.values[1].to_int();
  const Sortable s = PrepareSort("topk", args.tensor(0), args.bdim(0), args.values[2].to_int());
  // k is checked against the logical slice (the physical op would name the physical dim
  // and shape).
  if (s.rank0) {
    if (k != 1) {
      ThrowError("topk: k (", k, ") is out of range for a rank-0 tensor, which holds exactly ",
                 "one element (k must be 1)");
    }
  } else {
    const int64_t n = s.x.sizes()[s.dim];
    if (k < 0 || k > n) {
      Shape logical(s.x.sizes().begin() + 1, s.x.sizes().end());
      ThrowError("topk: k (", k, ") is out of range for dimension ", s.dim - 1, " of size ", n,
                 " (shape ", ShapeToString(logical), ")");
    }
  }
  auto [values, indices] =
      topk(s.x, k, s.dim, args.values[3].to_bool(), args.values[4].to_bool());
  return BatchedResult{{Value(Finish(s, values)), Value(Finish(s, indices))}, {0, 0}};
}

}  // namespace

void RegisterSortingRules() {
  OpRegistry& r = OpRegistry::Global();
  SetBatchRule(r.Get("sort"), &SortRule);
  SetBatchRule(r.Get("argsort"), &ArgsortRule);
  SetBatchRule(r.Get("topk"), &TopkRule);
}

}  // namespace ft::vmap_rules

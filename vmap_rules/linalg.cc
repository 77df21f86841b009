// Batching rules: linear algebra (matmul, mm, bmm, dot, outer, linear; linalg_solve,
// linalg_solve_triangular, cholesky, inverse, slogdet, logdet).
//
// Every rule validates the LOGICAL (per-example) shapes first, with the same messages the
// op gives for one example (the physical op would name the batched shapes, or accept shapes
// it should reject: mm's rank check would see rank 3), and then computes the whole batch
// with one matmul on the physical tensors:
//   - batch dims go to the front; a logical 1-D operand is made a logical matrix (a row on
//     the left, a column on the right) and the added dim is squeezed from the result, so a
//     vector is never mistaken for a matrix by matmul's physical rank rules;
//   - batched operands are padded (size-1 dims after the batch dim) to the larger logical
//     rank, so that matmul's right-aligned batch broadcasting lines the examples up with an
//     unbatched operand's own batch dims. Unbatched operands broadcast as they are.
// The common case (both operands batched at dim 0, logical rank >= 2, equal ranks) is a single
// matmul call on the inputs themselves: no view, no copy.
//
// The factorization ops treat every dim before the matrix as a batch dim, so vmap's batch
// dim just becomes one more leading batch dim: it moves to the front and the op runs once.
// For the two-operand solves, operands are padded to one logical rank as for matmul, then an
// unbatched operand gets one more leading size-1 dim so that both have the same physical rank
// (linalg_solve's "B is a batch of vectors" rule compares ranks and must only ever see what
// the logical shapes decided: a logical vector B is made an [n, 1] matrix first).
#include <algorithm>
#include <optional>
#include <utility>

#include "dispatch/dispatch.h"
#include "interpreters/vmap/batching_util.h"
#include "kernels/linalg.h"
#include "ops/ops.h"
#include "tensor/dtype.h"
#include "tensor/error.h"
#include "tensor/shape.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

// An operand as the op sees it for one example (for validation and messages).
struct Logical {
  Shape shape;
  DType dtype;
  int64_t dim() const { return static_cast<int64_t>(shape.size()); }
  int64_t size(int64_t d) const { return shape[d < 0 ? d + dim() : d]; }
};

Logical LogicalOf(const BatchedArgs& args, size_t i) {
  return {LogicalShape(args.tensor(i), args.bdim(i)), args.tensor(i).dtype()};
}

// The checks below repeat the kernels' (kernels/linalg.cc) messages on logical shapes.

void CheckNotBool(const char* op, const Logical& a, const Logical& b) {
  if (a.dtype == kBool || b.dtype == kBool) {
    ThrowError(op, ": bool tensors are not supported, got ", DTypeName(a.dtype), " ",
               ShapeToString(a.shape), " and ", DTypeName(b.dtype), " ",
               ShapeToString(b.shape));
  }
}

void CheckRank(const char* op, const Logical& a, const Logical& b, int64_t rank,
               const char* what) {
  if (a.dim() != rank || b.dim() != rank) {
    ThrowError(op, ": expected ", what, " tensors, got ", ShapeToString(a.shape), " and ",
               ShapeToString(b.shape));
  }
}

void CheckInner(const char* op, const Logical& a, const Logical& b) {
  const int64_t ka = a.size(-1);
  const int64_t kb = b.size(-2);
  if (ka != kb) {
    ThrowError(op, ": size mismatch, got ", ShapeToString(a.shape), " @ ",
               ShapeToString(b.shape), ": dim ", a.dim() - 1, " of the first (", ka,
               ") must equal dim ", b.dim() - 2, " of the second (", kb, ")");
  }
}

void CheckMatmul(const Logical& a, const Logical& b) {
  if (a.dim() == 0 || b.dim() == 0) {
    ThrowError("matmul: both arguments need at least 1 dimension, got ",
               ShapeToString(a.shape), " and ", ShapeToString(b.shape));
  }
  CheckNotBool("matmul", a, b);
  const int64_t ka = a.size(-1);
  const int64_t b_k_dim = b.dim() == 1 ? -1 : -2;
  const int64_t kb = b.size(b_k_dim);
  if (ka != kb) {
    ThrowError("matmul: size mismatch, got ", ShapeToString(a.shape), " @ ",
               ShapeToString(b.shape), ": dim -1 of the first (", ka, ") must equal dim ",
               b_k_dim, " of the second (", kb, ")");
  }
  const IntArrayRef ab = a.dim() > 2 ? IntArrayRef(a.shape).subspan(0, a.dim() - 2) : IntArrayRef();
  const IntArrayRef bb = b.dim() > 2 ? IntArrayRef(b.shape).subspan(0, b.dim() - 2) : IntArrayRef();
  const size_t n = std::max(ab.size(), bb.size());
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - ab.size() ? 1 : ab[i - (n - ab.size())];
    const int64_t db = i < n - bb.size() ? 1 : bb[i - (n - bb.size())];
    if (da != db && da != 1 && db != 1) {
      ThrowError("matmul: batch dims ", ShapeToString(ab), " of ", ShapeToString(a.shape),
                 " and ", ShapeToString(bb), " of ", ShapeToString(b.shape),
                 " cannot be broadcast together (", da, " vs ", db, ")");
    }
  }
}

// BatchedMatmul: torch.matmul of the logical (validated) operands a and b, computed on their
// physical values in one matmul call; the result is batched at 0 (at least one operand is).
Tensor BatchedMatmul(Tensor a, BDim abd, Tensor b, BDim bbd) {
  const int64_t ra = LogicalRank(a, abd);
  const int64_t rb = LogicalRank(b, bbd);
  a = MoveBdimToFront(a, abd);
  b = MoveBdimToFront(b, bbd);
  if (abd) abd = 0;
  if (bbd) bbd = 0;
  if (!abd && ra == 2 && rb == 1) {
    // One matrix times a batch of vectors (a Jacobian's basis pushed through W): the rows of
    // b [B, k] times a^T is one plain GEMM, already batched at 0, with no unit dim to add
    // and squeeze and no batch of columns to gather.
    return matmul(b, transpose(a, 0, 1));
  }
  if (abd && !bbd && ra == 1 && rb == 2) {
    // A batch of vectors times one matrix (a layer applied to each example): the rows of
    // a [B, k] times b is one plain GEMM, already batched at 0, with no unit dim to add and
    // squeeze.
    return matmul(a, b);
  }
  // A logical vector becomes a logical [1, k] row / [k, 1] column (matmul's own rule, applied
  // before the batch dim could make a physical matrix of it).
  if (ra == 1) a = unsqueeze(a, abd ? 1 : 0);
  if (rb == 1) b = unsqueeze(b, -1);
  const int64_t rank = std::max<int64_t>({ra, rb, 2});
  a = PadToLogicalRank(a, abd, rank);
  b = PadToLogicalRank(b, bbd, rank);
  Tensor out = matmul(a, b);
  if (ra == 1) out = squeeze_dim(out, -2);
  if (rb == 1) out = squeeze_dim(out, -1);
  return out;
}

BatchedResult Batched0(Tensor out) { return BatchedResult{{Value(std::move(out))}, {BDim(0)}}; }

BatchedResult MatmulRule(const VmapContext&, BatchedArgs& args) {
  CheckMatmul(LogicalOf(args, 0), LogicalOf(args, 1));
  return Batched0(BatchedMatmul(args.tensor(0), args.bdim(0), args.tensor(1), args.bdim(1)));
}

BatchedResult MmRule(const VmapContext&, BatchedArgs& args) {
  const Logical a = LogicalOf(args, 0);
  const Logical b = LogicalOf(args, 1);
  CheckRank("mm", a, b, 2, "2-D");
  CheckNotBool("mm", a, b);
  CheckInner("mm", a, b);
  return Batched0(BatchedMatmul(args.tensor(0), args.bdim(0), args.tensor(1), args.bdim(1)));
}

BatchedResult BmmRule(const VmapContext&, BatchedArgs& args) {
  const Logical a = LogicalOf(args, 0);
  const Logical b = LogicalOf(args, 1);
  CheckRank("bmm", a, b, 3, "3-D");
  CheckNotBool("bmm", a, b);
  if (a.size(0) != b.size(0)) {
    ThrowError("bmm: batch sizes differ, got ", ShapeToString(a.shape), " and ",
               ShapeToString(b.shape), " (", a.size(0), " vs ", b.size(0), ")");
  }
  CheckInner("bmm", a, b);
  return Batched0(BatchedMatmul(args.tensor(0), args.bdim(0), args.tensor(1), args.bdim(1)));
}

// dot: a batch of [1, k] @ [k, 1] products (BatchedMatmul's vector . vector case).
BatchedResult DotRule(const VmapContext&, BatchedArgs& args) {
  const Logical a = LogicalOf(args, 0);
  const Logical b = LogicalOf(args, 1);
  CheckRank("dot", a, b, 1, "1-D");
  CheckNotBool("dot", a, b);
  if (a.size(0) != b.size(0)) {
    ThrowError("dot: size mismatch, got ", ShapeToString(a.shape), " and ",
               ShapeToString(b.shape), ": both vectors must have the same length");
  }
  return Batched0(BatchedMatmul(args.tensor(0), args.bdim(0), args.tensor(1), args.bdim(1)));
}

// outer: a batch of [n, 1] @ [1, m] products (inner size 1), as the kernel computes it, so
// dtype promotion and bool rejection stay the op's.
BatchedResult OuterRule(const VmapContext&, BatchedArgs& args) {
  const Logical la = LogicalOf(args, 0);
  const Logical lb = LogicalOf(args, 1);
  CheckRank("outer", la, lb, 1, "1-D");
  CheckNotBool("outer", la, lb);
  const Tensor a = unsqueeze(MoveBdimToFront(args.tensor(0), args.bdim(0)), -1);
  const Tensor b = unsqueeze(MoveBdimToFront(args.tensor(1), args.bdim(1)), args.bdim(1) ? 1 : 0);
  return Batched0(matmul(a, b));
}

void CheckLinear(const Logical& x, const Logical& w, const std::optional<Logical>& bias) {
  if (x.dim() == 0) {
    ThrowError("linear: input must have at least 1 dimension, got a rank-0 tensor");
  }
  if (w.dim() != 2) {
    ThrowError("linear: weight must be 2-D [out_features, in_features], got ",
               ShapeToString(w.shape));
  }
  CheckNotBool("linear", x, w);
  if (bias && bias->dtype == kBool) {
    ThrowError("linear: bool tensors are not supported, got a bool bias ",
               ShapeToString(bias->shape));
  }
  const int64_t in = x.size(-1);
  if (in != w.size(1)) {
    ThrowError("linear: size mismatch, input ", ShapeToString(x.shape), " has ", in,
               " features (dim -1) but weight ", ShapeToString(w.shape), " expects ",
               w.size(1), " (dim 1)");
  }
  if (bias) {
    Shape out_shape(x.shape.begin(), x.shape.end() - 1);
    out_shape.push_back(w.size(0));
    const Shape b = BroadcastShapes("linear", out_shape, bias->shape);
    if (!std::equal(b.begin(), b.end(), out_shape.begin(), out_shape.end())) {
      ThrowError("linear: bias of shape ", ShapeToString(bias->shape),
                 " does not broadcast to the output shape ", ShapeToString(out_shape));
    }
  }
}

// linear(x, W, bias) = x @ W^T + bias.
//   - Only x batched: linear itself on [B, ..., in] (its leading dims are free).
//   - W batched (per-example weights): BatchedMatmul(x, W^T) with W^T a transposed view
//     [B, in, out] (the kernel maps it column-major, no copy).
//   - bias batched: added after the product, padded to the output's logical rank.
BatchedResult LinearRule(const VmapContext&, BatchedArgs& args) {
  const bool has_bias = !args.values[2].is_none();
  std::optional<Logical> lbias;
  if (has_bias) lbias = LogicalOf(args, 2);
  const Logical lx = LogicalOf(args, 0);
  CheckLinear(lx, LogicalOf(args, 1), lbias);
  const BDim xbd = args.bdim(0);
  const BDim wbd = args.bdim(1);
  const BDim bbd = has_bias ? args.bdim(2) : std::nullopt;
  const Tensor x = MoveBdimToFront(args.tensor(0), xbd);
  std::optional<Tensor> unbatched_bias;
  if (has_bias && !bbd) unbatched_bias = args.tensor(2);
  Tensor out;
  if (!wbd) {
    out = linear(x, args.tensor(1), unbatched_bias);
  } else {
    const Tensor wt = transpose(MoveBdimToFront(args.tensor(1), wbd), 1, 2);
    out = BatchedMatmul(x, xbd ? BDim(0) : std::nullopt, wt, BDim(0));
    if (unbatched_bias) out = add(out, *unbatched_bias);
  }
  if (bbd) {
    out = add(out, PadToLogicalRank(MoveBdimToFront(args.tensor(2), bbd), BDim(0), lx.dim()));
  }
  return Batched0(std::move(out));
}

// SolveOperands: a (args 0) and b (args 1) of a solve as physical tensors of one rank whose
// leading dims broadcast like the logical batch dims; a logical vector b becomes a matrix.
std::pair<Tensor, Tensor> SolveOperands(const BatchedArgs& args, bool vector_b) {
  const BDim abd = args.bdim(0) ? BDim(0) : std::nullopt;
  const BDim bbd = args.bdim(1) ? BDim(0) : std::nullopt;
  Tensor a = MoveBdimToFront(args.tensor(0), args.bdim(0));
  Tensor b = MoveBdimToFront(args.tensor(1), args.bdim(1));
  int64_t rb = LogicalRank(b, bbd);
  if (vector_b) {
    b = unsqueeze(b, -1);
    ++rb;
  }
  const int64_t rank = std::max(LogicalRank(a, abd), rb);
  a = PadToLogicalRank(a, abd, abd ? rank : rank + 1);
  b = PadToLogicalRank(b, bbd, bbd ? rank : rank + 1);
  return {a, b};
}

BatchedResult LinalgSolveRule(const VmapContext&, BatchedArgs& args) {
  const Logical a = LogicalOf(args, 0);
  const Logical b = LogicalOf(args, 1);
  const bool vector = kernels::CheckSolveOperands("linalg_solve", a.shape, a.dtype, b.shape,
                                                  b.dtype, /*allow_vector=*/true);
  auto [pa, pb] = SolveOperands(args, vector);
  Tensor out = linalg_solve(pa, pb);
  if (vector) out = squeeze_dim(out, -1);
  return Batched0(std::move(out));
}

BatchedResult LinalgSolveTriangularRule(const VmapContext&, BatchedArgs& args) {
  const Logical a = LogicalOf(args, 0);
  const Logical b = LogicalOf(args, 1);
  kernels::CheckSolveOperands("linalg_solve_triangular", a.shape, a.dtype, b.shape, b.dtype,
                              /*allow_vector=*/false);
  auto [pa, pb] = SolveOperands(args, false);
  return Batched0(linalg_solve_triangular(pa, pb, args.values[2].to_bool()));
}

// One square-matrix operand (cholesky, inverse, logdet, slogdet): checked logically, then the
// op on the batch at the front.
Tensor SquareOperand(const char* op, const BatchedArgs& args) {
  const Logical a = LogicalOf(args, 0);
  kernels::CheckSquareMatrices(op, a.shape, a.dtype);
  return MoveBdimToFront(args.tensor(0), args.bdim(0));
}

BatchedResult CholeskyRule(const VmapContext&, BatchedArgs& args) {
  return Batched0(cholesky(SquareOperand("cholesky", args)));
}

BatchedResult InverseRule(const VmapContext&, BatchedArgs& args) {
  return Batched0(inverse(SquareOperand("inverse", args)));
}

BatchedResult LogdetRule(const VmapContext&, BatchedArgs& args) {
  return Batched0(logdet(SquareOperand("logdet", args)));
}

BatchedResult SlogdetRule(const VmapContext&, BatchedArgs& args) {
  auto [sign, logabs] = slogdet(SquareOperand("slogdet", args));
  return BatchedResult{{Value(std::move(sign)), Value(std::move(logabs))}, {0, 0}};
}

}  // namespace

void RegisterLinalgRules() {
  OpRegistry& r = OpRegistry::Global();
  SetBatchRule(r.Get("matmul"), &MatmulRule);
  SetBatchRule(r.Get("mm"), &MmRule);
  SetBatchRule(r.Get("bmm"), &BmmRule);
  SetBatchRule(r.Get("dot"), &DotRule);
  SetBatchRule(r.Get("outer"), &OuterRule);
  SetBatchRule(r.Get("linear"), &LinearRule);
  SetBatchRule(r.Get("linalg_solve"), &LinalgSolveRule);
  SetBatchRule(r.Get("linalg_solve_triangular"), &LinalgSolveTriangularRule);
  SetBatchRule(r.Get("cholesky"), &CholeskyRule);
  SetBatchRule(r.Get("inverse"), &InverseRule);
  SetBatchRule(r.Get("slogdet"), &SlogdetRule);
  SetBatchRule(r.Get("logdet"), &LogdetRule);
}

}  // namespace ft::vmap_rules

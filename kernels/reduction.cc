#include "kernels/reduction.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu/vecmath.h"
#include "kernels/checks.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/loops.h"

namespace ft::kernels {
namespace {

using internal::ArrayMap;
using internal::ConstArrayMap;
using internal::kElementwiseGrain;
using internal::ParallelBlocks;

// NaN handling of max/min: PyTorch propagates NaN through amax/amin/softmax; integers have
// no NaN, so they take Eigen's fast path.
template <typename T>
inline constexpr int kNaNMode =
    std::is_floating_point_v<T> ? Eigen::PropagateNaN : Eigen::PropagateFast;
template <typename T>
using MaxOp = Eigen::internal::scalar_max_op<T, T, kNaNMode<T>>;
template <typename T>
using MinOp = Eigen::internal::scalar_min_op<T, T, kNaNMode<T>>;

// Wrapping<T> is the type integer sums and products are computed in: unsigned, so overflow
// wraps around like PyTorch's int64 arithmetic instead of being undefined behaviour.
template <typename T>
using Wrapping = std::conditional_t<std::is_same_v<T, int64_t>, uint64_t, T>;

template <typename T>
constexpr T kInf = std::numeric_limits<T>::infinity();
template <typename T>
constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();

// Eigen 3.4.0's vectorized exp clamps its argument at -88.72 (float) / -709.78 (double), so
// below that it returns ~3e-39 / ~5e-309 (exp(-inf) included) instead of the subnormal or 0
// the true exp underflows to. Where the exact value matters (softmax probabilities, the
// logsumexp of an all -inf slice) the kernels fix those results up; elsewhere the spurious
// tiny terms are added to a sum >= 1 (the max's own exp(0)) and vanish. Above kExpClamp<T>
// (a little above Eigen's bound) the vectorized exp is accurate.
template <typename T>
constexpr T kExpClamp = std::is_same_v<T, float> ? T(-88) : T(-709);

// FixExpUnderflow recomputes y[i] = exp(x[i] - m) with std::exp where x[i] - m < kExpClamp
// (m = *m for every i when kScalarMax, else m[i]). The test is a plain loop the compiler
// vectorizes; the rare fix-up runs only when some element needs it.
template <bool kScalarMax, typename T>
void FixExpUnderflow(T* y, const T* x, const T* m, int64_t n) {
  bool any = false;
  for (int64_t i = 0; i < n; ++i) any |= x[i] - (kScalarMax ? m[0] : m[i]) < kExpClamp<T>;
  if (!any) return;
  for (int64_t i = 0; i < n; ++i) {
    const T shifted = x[i] - (kScalarMax ? m[0] : m[i]);
    if (shifted < kExpClamp<T>) y[i] = std::exp(shifted);
  }
}

// SqrtInPlace takes scalar square roots: Eigen 3.4.0's fast float32 sqrt turns inf into nan.
template <typename T>
void SqrtInPlace(T* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = std::sqrt(data[i]);
}

// ContiguousAs returns t as a contiguous tensor of `dtype`, copying at most once.
Tensor ContiguousAs(const Tensor& t, DType dtype) {
  return t.dtype() == dtype ? contiguous(t) : to(t, dtype);
}

// The layout's products use SaturatingMul (shape.h): an empty tensor may have huge sizes
// beside its zero ([0, 2^40, 2^40]), whose partial products do not fit; the zero still makes
// every product that includes it 0, and a product without it is only used when the tensor
// (or the output) has elements, when it fits.
// Layout: a contiguous input of the compute dtype viewed as [outer, reduced, inner]; the
// output is [outer, inner] in row-major order, which is the order of the kept dims.
struct Layout {
  Tensor input;
  int64_t outer = 1;
  int64_t reduced = 1;
  int64_t inner = 1;
  Shape out_shape;
  int64_t out_numel() const { return outer * inner; }
};

// PlanReduction lays x out for reducing `dims` (wrapped and distinct). The reduced dims
// form one block when, ignoring size-1 dims (which do not move any element), they are
// adjacent: then the contiguous input is used as is. Otherwise they are permuted after the
// kept dims in one copy (inner == 1).
Layout PlanReduction(const Tensor& x, IntArrayRef dims, bool keepdim, DType compute) {
  const int64_t rank = x.dim();
  const IntArrayRef sizes = x.sizes();
  absl::InlinedVector<bool, 6> reduce(static_cast<size_t>(rank), false);
  for (int64_t d : dims) reduce[d] = true;
  Layout l;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduce[d]) {
      l.out_shape.push_back(sizes[d]);
    } else if (keepdim) {
      l.out_shape.push_back(1);
    }
  }
  int64_t first = -1;
  int64_t last = -1;
  bool block = true;
  bool closed = false;  // a kept dim of size != 1 followed the block
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] == 1) continue;
    if (reduce[d]) {
      if (closed) block = false;
      if (first < 0) first = d;
      last = d;
    } else if (first >= 0) {
      closed = true;
    }
  }
  if (block) {
    l.input = ContiguousAs(x, compute);
    if (first < 0) {  // only size-1 dims (or none) are reduced
      l.outer = x.numel();
      return l;
    }
    for (int64_t d = 0; d < first; ++d) l.outer = SaturatingMul(l.outer, sizes[d]);
    for (int64_t d = first; d <= last; ++d) l.reduced = SaturatingMul(l.reduced, sizes[d]);
    for (int64_t d = last + 1; d < rank; ++d) l.inner = SaturatingMul(l.inner, sizes[d]);
    return l;
  }
  Shape psizes;
  Shape pstrides;
  for (bool reduced_pass : {false, true}) {
    for (int64_t d = 0; d < rank; ++d) {
      if (reduce[d] != reduced_pass) continue;
      psizes.push_back(sizes[d]);
      pstrides.push_back(x.strides()[d]);
      int64_t& product = reduced_pass ? l.reduced : l.outer;
      product = SaturatingMul(product, sizes[d]);
    }
  }
  l.input = ContiguousAs(MakeDense(x.storage(), x.dtype(), psizes, pstrides, x.storage_offset()),
                         compute);
  return l;
}

// CheckNonEmptyDims rejects reductions without an identity (max, min, argmax, inf norm) over
// a zero-size dim, as PyTorch does.
void CheckNonEmptyDims(const char* op, const Tensor& x, IntArrayRef dims, const char* why) {
  for (int64_t d : dims) {
    if (x.sizes()[d] == 0) {
      ThrowError(op, ": cannot reduce over a zero-size dimension (dim ", d, " of shape ",
                 ShapeToString(x.sizes()), ")", why);
    }
  }
}

// ReduceRows computes out[o, i] = reduction over r of in[o, r, i]. Requires reduced >= 1.
//   row(v):        reduces one contiguous row v of `reduced` elements (used when inner == 1);
//   init(acc, v):  starts the `inner` accumulators from row r = 0;
//   step(acc, v):  folds row r into them (vectorized over inner).
// On the intra-op threads (NOTE: [Intra-op threads] in cpu/parallel.h): several outputs
// are split by output, whole reductions per thread, so each output is the one-thread value
// bit for bit; one output row over many elements (inner == 1, outer == 1) is split only when
// the caller passes `combine` (reducing the per-chunk partials in chunk order: the same bits
// for a given thread count, not across counts), since a partial is not always an element of
// the same kind (a sum of squares).
struct NoCombine {};

template <typename In, typename Out, typename Row, typename Init, typename Step,
          typename Combine = NoCombine>
void ReduceRows(const Layout& l, const In* in, Out* out, Row&& row, Init&& init, Step&& step,
                Combine&& combine = NoCombine()) {
  const int64_t n = l.reduced;
  const int64_t inner = l.inner;
  const int64_t row_elements = std::max<int64_t>(n * inner, 1);
  if (inner == 1) {
    if constexpr (!std::is_same_v<std::decay_t<Combine>, NoCombine>) {
      const int64_t chunks = ::ft::internal::ParallelChunks(n, kElementwiseGrain);
      if (l.outer == 1 && chunks > 1) {
        Out partials[64];
        const int64_t used = std::min<int64_t>(chunks, 64);
        ::ft::internal::ParallelForChunks(n, used, 1, 0, [&](int64_t c, int64_t b, int64_t e) {
          partials[c] = row(ConstArrayMap<In>(in + b, e - b));
        });
        out[0] = combine(ConstArrayMap<Out>(partials, used));
        return;
      }
    }
    ParallelBlocks(l.outer, row_elements, [&](int64_t first, int64_t last) {
      for (int64_t o = first; o < last; ++o) out[o] = row(ConstArrayMap<In>(in + o * n, n));
    });
    return;
  }
  auto columns = [&](int64_t o, int64_t c0, int64_t c1) {
    const In* base = in + o * n * inner + c0;
    ArrayMap<Out> acc(out + o * inner + c0, c1 - c0);
    init(acc, ConstArrayMap<In>(base, c1 - c0));
    for (int64_t r = 1; r < n; ++r) step(acc, ConstArrayMap<In>(base + r * inner, c1 - c0));
  };
  if (l.outer == 1) {
    // One output row: split its columns (each column's sum runs as in one pass).
    ::ft::internal::ParallelFor(
        inner, std::max<int64_t>(16, kElementwiseGrain / std::max<int64_t>(n, 1)),
        64 / static_cast<int64_t>(sizeof(Out)), ::ft::internal::AlignmentPhase(out, sizeof(Out)),
        [&](int64_t c0, int64_t c1) { columns(0, c0, c1); });
    return;
  }
  ParallelBlocks(l.outer, row_elements, [&](int64_t first, int64_t last) {
    for (int64_t o = first; o < last; ++o) columns(o, 0, inner);
  });
}

// RunReduction allocates the output (compute dtype) and, when it is non-empty, calls
// body(TypeTag<T>, layout, out) with the compute type.
template <typename Body>
Tensor RunReduction(const Tensor& x, IntArrayRef dims, bool keepdim, DType compute, Body&& body) {
  const Layout l = PlanReduction(x, dims, keepdim, compute);
  Tensor out = EmptyContiguous(l.out_shape, compute);
  if (l.out_numel() == 0) return out;
  VisitDType(compute, [&](auto tag) { body(tag, l, out); });
  return out;
}

// RowSum: the sum of one contiguous row (an Eigen map); float and double rows go through
// vecmath's vector sum on the active capability, other types through Eigen.
template <typename Row>
auto RowSum(const Row& v) {
  using S = typename Row::Scalar;
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
    return vecmath::Sum(v.data(), v.size());
  } else {
    return v.sum();
  }
}

// RowProd: the product of one contiguous row; float and double rows through vecmath's
// vector product on the active capability, other types through Eigen.
template <typename Row>
auto RowProd(const Row& v) {
  using S = typename Row::Scalar;
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
    return vecmath::Prod(v.data(), v.size());
  } else {
    return v.prod();
  }
}

// SumRowsOnVecmath: a float or double matrix's row sums (inner == 1, several outputs) in
// whole rows per thread, one vecmath::SumRows call per thread's rows; each row gets
// RowSum's bits. Returns false (nothing written) for other layouts and types.
template <typename T>
bool SumRowsOnVecmath(const Layout& l, const T* in, T* out) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (l.inner != 1 || l.outer < 2) return false;
    const int64_t n = l.reduced;
    ParallelBlocks(l.outer, std::max<int64_t>(n, 1), [&](int64_t first, int64_t last) {
      vecmath::SumRows(in + first * n, last - first, n, out + first);
    });
    return true;
  } else {
    return false;
  }
}

// ColumnsOnVecmath: a reduction over a dim with more dims after it (inner > 1: each output is
// a column of an [reduced, inner] block) on one of vecmath's column functions (`columns`:
// SumColumns, ProdColumns, MaxColumns or MinColumns), split over threads as ReduceRows splits
// them. Each column is folded in row order from the first row, as ReduceRows' columns are
// (acc = row 0, then acc = step(acc, each next row)), so sums and products keep ReduceRows'
// bits; max and min take a
// value only when it is beyond the column's or NaN (vecmath::Max's rule: of a +0/-0 tie the
// first stays). The block's columns stay in vector registers down the rows instead of a pass
// over the accumulators per row. Returns false (nothing written) for other layouts and types.
template <typename T, typename Columns>
bool ColumnsOnVecmath(const Layout& l, const T* in, T* out, Columns columns) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (l.inner == 1 || l.reduced < 1) return false;
    const int64_t n = l.reduced, inner = l.inner;
    if (l.outer == 1) {
      ::ft::internal::ParallelFor(
          inner, std::max<int64_t>(16, kElementwiseGrain / n), 64 / static_cast<int64_t>(sizeof(T)),
          ::ft::internal::AlignmentPhase(out, sizeof(T)),
          [&](int64_t c0, int64_t c1) { columns(in + c0, n, c1 - c0, inner, out + c0); });
      return true;
    }
    ParallelBlocks(l.outer, n * inner, [&](int64_t first, int64_t last) {
      for (int64_t o = first; o < last; ++o) {
        columns(in + o * n * inner, n, inner, inner, out + o * inner);
      }
    });
    return true;
  } else {
    return false;
  }
}

template <typename T>
bool SumColumnsOnVecmath(const Layout& l, const T* in, T* out) {
  return ColumnsOnVecmath(l, in, out,
                          [](const auto* x, int64_t rows, int64_t cols, int64_t ld, auto* o) {
                            vecmath::SumColumns(x, rows, cols, ld, o);
                          });
}

// ExtremeColumnsOnVecmath: amax (kMax) or amin over leading dims on vecmath's MaxColumns /
// MinColumns, with RowExtreme's NaN rule.
template <bool kMax, typename T>
bool ExtremeColumnsOnVecmath(const Layout& l, const T* in, T* out) {
  return ColumnsOnVecmath(l, in, out,
                          [](const auto* x, int64_t rows, int64_t cols, int64_t ld, auto* o) {
                            if constexpr (kMax) {
                              vecmath::MaxColumns(x, rows, cols, ld, o);
                            } else {
                              vecmath::MinColumns(x, rows, cols, ld, o);
                            }
                          });
}

// RowExtreme: the max (kMax) or min of one contiguous row, NaN propagating; float and double
// through vecmath, other types through Eigen.
template <bool kMax, typename Row>
auto RowExtreme(const Row& v) {
  using S = typename Row::Scalar;
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
    return kMax ? vecmath::Max(v.data(), v.size()) : vecmath::Min(v.data(), v.size());
  } else if constexpr (kMax) {
    return v.template maxCoeff<kNaNMode<S>>();
  } else {
    return v.template minCoeff<kNaNMode<S>>();
  }
}

// SumDType: the dtype of a sum, product or running sum of `dtype` (torch's): integers and bool
// give int64, floating and complex dtypes keep theirs.
DType SumDType(DType dtype) { return IsFloating(dtype) || IsComplex(dtype) ? dtype : kInt64; }

// SumAs: the sum over `dims` (wrapped) computed and returned in `compute` (float32, float64
// or int64; x is converted in the one copy PlanReduction makes).
Tensor SumAs(const Tensor& x, IntArrayRef dims, bool keepdim, DType compute) {
  return RunReduction(x, dims, keepdim, compute, [](auto tag, const Layout& l, const Tensor& out) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      using A = Wrapping<T>;
      A* o = reinterpret_cast<A*>(out.data<T>());
      if (l.reduced == 0) {
        std::fill_n(o, l.out_numel(), A(0));
        return;
      }
      if (SumRowsOnVecmath(l, reinterpret_cast<const A*>(l.input.data<T>()), o)) return;
      if (SumColumnsOnVecmath(l, reinterpret_cast<const A*>(l.input.data<T>()), o)) return;
      ReduceRows(
          l, reinterpret_cast<const A*>(l.input.data<T>()), o,
          [](const auto& v) { return RowSum(v); }, [](auto& acc, const auto& v) { acc = v; },
          [](auto& acc, const auto& v) { acc += v; },
          [](const auto& partials) { return partials.sum(); });
    }
  });
}

// NOTE: [Reductions over the new dtypes]
// The kernels in this file are written for float32, float64, int64 and bool, which take them
// unchanged. The eight dtypes issue 43 added reach the same code converted, so every sum and
// product of them runs on the float32, float64 or int64 loops, and no branch of the original
// four changes:
//  - int8, int16, int32 and uint8 are summed and multiplied (sum, prod, cumsum, cumprod) in
//    int64 and give int64, torch's rule, wrapping as int64 does; amax, amin, argmax and
//    argmin compare them as int64 (exact) and amax / amin return their own dtype.
//  - float16 and bfloat16 compute in float32 and round once at the end: a sum through
//    float32's blocked vector sum (as accurate as a float32 sum, as torch's cascade sum in
//    float is), a mean as that float32 sum divided in float32, a cumsum or cumprod as the
//    running float32 value rounded at each output (torch's acc_type). amax, amin, argmax
//    and argmin compare them as float32 (exact, NaN kept). torch 1.13 rounds more often:
//    a sum over non-adjacent dims to the dtype between its steps, a mean twice (the sum,
//    then the quotient); its results can be a few units in the last place from ft's
//    once-rounded ones (tools/torch_fixtures/reduction_dtypes.py measures it).
//  - complex64 and complex128 sum and mean as real reductions over a [2, ...] view of their
//    parts (complex addition is per part), so they inherit float32's and float64's summation;
//    prod multiplies in order in their own type; cumsum and cumprod accumulate in complex128
//    (torch's acc_type for both) and round each output. amax, amin, argmax and argmin refuse
//    them: complex numbers are not ordered (torch refuses them too).

// PartsFirstView: a complex tensor's elements as a real tensor [2, ...x's shape] (the real
// parts, then the imaginary parts), sharing its storage. Reducing dims d + 1 of it reduces
// each part on its own, in the layouts (and with the blocked sums) of a real tensor.
Tensor PartsFirstView(const Tensor& x) {
  Shape sizes = {2};
  sizes.insert(sizes.end(), x.sizes().begin(), x.sizes().end());
  if (x.numel() == 0) {  // nothing is read: its strides and offset may be saturated
    return MakeDense(x.storage(), ToRealDType(x.dtype()), sizes, ContiguousStrides(sizes), 0);
  }
  Shape strides = {1};
  for (int64_t s : x.strides()) strides.push_back(2 * s);
  return MakeDense(x.storage(), ToRealDType(x.dtype()), sizes, strides, 2 * x.storage_offset());
}

// PartsDims: dims of x as dims of PartsFirstView(x).
Shape PartsDims(IntArrayRef dims) {
  Shape out;
  for (int64_t d : dims) out.push_back(d + 1);
  return out;
}

// ComplexFromParts: the complex tensor of dtype `complex` and shape parts.sizes()[1:] whose
// real and imaginary parts are parts[0] and parts[1] (a contiguous real tensor).
Tensor ComplexFromParts(const Tensor& parts, DType complex) {
  Tensor out = EmptyContiguous(parts.sizes().subspan(1), complex);
  const int64_t n = out.numel();
  if (n == 0) return out;
  VisitDType(parts.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T* re = parts.data<T>();
      std::complex<T>* o = out.data<std::complex<T>>();
      for (int64_t i = 0; i < n; ++i) o[i] = std::complex<T>(re[i], re[n + i]);
    }
  });
  return out;
}

// DivideInPlace divides every element of a new contiguous float32 or float64 tensor by n
// (0 / 0 is NaN, the mean of nothing).
void DivideInPlace(const Tensor& t, int64_t n) {
  VisitDType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      ArrayMap<T>(t.data<T>(), t.numel()) /= static_cast<T>(n);
    }
  });
}

// ReducedCount: the number of elements each output of a reduction over `dims` reduces.
int64_t ReducedCount(const Tensor& x, IntArrayRef dims) {
  int64_t n = 1;
  for (int64_t d : dims) n = SaturatingMul(n, x.sizes()[d]);
  return n;
}

// SumOrMeanNewDType: sum (or mean, kMean) over the wrapped `dims` of a dtype outside
// kOriginalDTypes (NOTE: [Reductions over the new dtypes]).
template <bool kMean>
Tensor SumOrMeanNewDType(const Tensor& x, IntArrayRef dims, bool keepdim) {
  const DType dtype = x.dtype();
  if (IsComplex(dtype)) {
    Tensor parts = SumAs(PartsFirstView(x), PartsDims(dims), keepdim, ToRealDType(dtype));
    if constexpr (kMean) DivideInPlace(parts, ReducedCount(x, dims));
    return ComplexFromParts(parts, dtype);
  }
  if (IsFloating(dtype)) {
    Tensor sum = SumAs(x, dims, keepdim, kFloat32);
    if constexpr (kMean) DivideInPlace(sum, ReducedCount(x, dims));
    return to(sum, dtype);
  }
  FT_CHECK(!kMean);
  return SumAs(x, dims, keepdim, kInt64);
}

Tensor SumImpl(const Tensor& x, IntArrayRef dims, bool keepdim) {
  if (!IsOriginalDType(x.dtype())) return SumOrMeanNewDType<false>(x, dims, keepdim);
  return SumAs(x, dims, keepdim, SumDType(x.dtype()));
}

// CheckOrdered refuses complex inputs of amax, amin, argmax and argmin, as torch does.
void CheckOrdered(const char* op, const Tensor& x) {
  if (IsComplex(x.dtype())) {
    ThrowError(op, ": not supported for ", DTypeName(x.dtype()), " tensors (shape ",
               ShapeToString(x.sizes()), "): complex numbers are not ordered");
  }
}

// OrderedComputeDType: the dtype amax, amin, argmax and argmin compare `dtype` in: bool as
// int64 0/1, the new integers as int64 and float16 / bfloat16 as float32 (all exact).
DType OrderedComputeDType(DType dtype) {
  if (IsOriginalDType(dtype)) return dtype == kBool ? kInt64 : dtype;
  return IsFloating(dtype) ? kFloat32 : kInt64;
}

template <bool kMax>
Tensor MinMax(const char* op, const Tensor& x, IntArrayRef dims, bool keepdim) {
  const Shape wrapped = WrapDims(op, dims, x.dim(), /*empty_means_all=*/true);
  CheckOrdered(op, x);
  CheckNonEmptyDims(op, x, wrapped, ": max and min have no identity");
  // bool computes as int64 0/1 (max = any, min = all) and converts back.
  const DType compute = OrderedComputeDType(x.dtype());
  Tensor out =
      RunReduction(x, wrapped, keepdim, compute, [](auto tag, const Layout& l, const Tensor& out) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, bool>) {
          using Op = std::conditional_t<kMax, MaxOp<T>, MinOp<T>>;
          if (ExtremeColumnsOnVecmath<kMax>(l, l.input.data<T>(), out.data<T>())) return;
          ReduceRows(
              l, l.input.data<T>(), out.data<T>(),
              [](const auto& v) { return RowExtreme<kMax>(v); },
              [](auto& acc, const auto& v) { acc = v; },
              [](auto& acc, const auto& v) { acc = acc.binaryExpr(v, Op()); });
        }
      });
  return compute != x.dtype() ? to(out, x.dtype()) : out;
}

template <bool kSqrt>
Tensor VarImpl(const char* op, const Tensor& x, IntArrayRef dims, int64_t correction,
               bool keepdim) {
  internal::CheckFloating(op, x);
  const Shape wrapped = WrapDims(op, dims, x.dim(), /*empty_means_all=*/true);
  return RunReduction(
      x, wrapped, keepdim, x.dtype(), [&](auto tag, const Layout& l, const Tensor& out) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T>) {
          const int64_t n = l.reduced;
          const int64_t inner = l.inner;
          const int64_t count = l.out_numel();
          T* o = out.data<T>();
          if (n == 0) {  // the mean of nothing is nan
            std::fill_n(o, count, kNaN<T>);
            return;
          }
          // Computed in double so that extreme corrections cannot overflow; a divisor of 0
          // gives inf (or nan for a zero numerator) like PyTorch.
          const T divisor = static_cast<T>(
              std::max(0.0, static_cast<double>(n) - static_cast<double>(correction)));
          const T* in = l.input.data<T>();
          // Two passes (mean, then squared deviations): accurate and deterministic.
          if (inner == 1) {
            for (int64_t i = 0; i < l.outer; ++i) {
              ConstArrayMap<T> v(in + i * n, n);
              const T mu = v.sum() / static_cast<T>(n);
              o[i] = (v - mu).square().sum() / divisor;
            }
          } else {
            std::vector<T> mean_buf(static_cast<size_t>(inner));
            ArrayMap<T> mu(mean_buf.data(), inner);
            for (int64_t i = 0; i < l.outer; ++i) {
              const T* base = in + i * n * inner;
              mu = ConstArrayMap<T>(base, inner);
              for (int64_t r = 1; r < n; ++r) mu += ConstArrayMap<T>(base + r * inner, inner);
              mu /= static_cast<T>(n);
              ArrayMap<T> acc(o + i * inner, inner);
              acc = (ConstArrayMap<T>(base, inner) - mu).square();
              for (int64_t r = 1; r < n; ++r) {
                acc += (ConstArrayMap<T>(base + r * inner, inner) - mu).square();
              }
              acc /= divisor;
            }
          }
          if constexpr (kSqrt) SqrtInPlace(o, count);
        }
      });
}

template <typename T, bool kMax>
bool Better(T v, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    // NaN beats everything (first NaN wins), as in PyTorch's argmax and argmin.
    if (std::isnan(v)) return !std::isnan(best);
  }
  if constexpr (kMax) {
    return v > best;
  } else {
    return v < best;
  }
}

// ArgLoop writes the index (along `reduced`) of the first extreme element. reduced >= 1.
template <typename T, bool kMax>
void ArgLoop(const Layout& l, int64_t* out) {
  const T* in = l.input.data<T>();
  const int64_t n = l.reduced;
  const int64_t inner = l.inner;
  if (inner == 1) {
    for (int64_t o = 0; o < l.outer; ++o) {
      const T* row = in + o * n;
      T best = row[0];
      int64_t index = 0;
      for (int64_t r = 1; r < n; ++r) {
        if (Better<T, kMax>(row[r], best)) {
          best = row[r];
          index = r;
        }
      }
      out[o] = index;
    }
    return;
  }
  std::vector<T> best(static_cast<size_t>(inner));
  for (int64_t o = 0; o < l.outer; ++o) {
    const T* base = in + o * n * inner;
    int64_t* index = out + o * inner;
    std::copy(base, base + inner, best.begin());
    std::fill_n(index, inner, int64_t{0});
    for (int64_t r = 1; r < n; ++r) {
      const T* row = base + r * inner;
      for (int64_t i = 0; i < inner; ++i) {
        if (Better<T, kMax>(row[i], best[i])) {
          best[i] = row[i];
          index[i] = r;
        }
      }
    }
  }
}

template <bool kMax>
Tensor ArgImpl(const char* op, const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  CheckOrdered(op, x);
  const DType compute = OrderedComputeDType(x.dtype());
  Layout l;
  if (!dim.has_value()) {
    if (x.numel() == 0) {
      ThrowError(op, ": cannot reduce over a zero-size dimension (the flattened input of shape ",
                 ShapeToString(x.sizes()), " is empty); pass a dim of nonzero size");
    }
    l.input = ContiguousAs(x, compute);
    l.reduced = x.numel();
    if (keepdim) l.out_shape.assign(static_cast<size_t>(x.dim()), 1);
  } else {
    const int64_t d = WrapDim(op, *dim, x.dim());
    Shape dims;
    if (x.dim() > 0) dims.push_back(d);  // rank 0: the single element is its own argmax
    CheckNonEmptyDims(op, x, dims, ": an empty slice has no extreme element");
    l = PlanReduction(x, dims, keepdim, compute);
  }
  Tensor out = EmptyContiguous(l.out_shape, kInt64);
  if (l.out_numel() == 0) return out;
  VisitDType(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) ArgLoop<T, kMax>(l, out.data<int64_t>());
  });
  return out;
}

// ScanLayout: x contiguous (compute dtype) viewed as [outer, n, inner] around one dim.
struct ScanLayout {
  Tensor input;
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

ScanLayout PlanScan(const Tensor& x, int64_t dim, DType compute) {
  ScanLayout s;
  s.input = ContiguousAs(x, compute);
  if (x.dim() == 0) return s;
  for (int64_t d = 0; d < dim; ++d) s.outer = SaturatingMul(s.outer, x.sizes()[d]);
  s.n = x.sizes()[dim];
  for (int64_t d = dim + 1; d < x.dim(); ++d) s.inner = SaturatingMul(s.inner, x.sizes()[d]);
  return s;
}

template <typename T, bool kLog>
void SoftmaxLoop(const ScanLayout& s, T* out) {
  const T* in = s.input.data<T>();
  const int64_t n = s.n;
  const int64_t inner = s.inner;
  // Subtracting the max keeps exp() finite; a row of all -inf gives nan (-inf - -inf), as in
  // PyTorch.
  if (inner == 1) {
    for (int64_t o = 0; o < s.outer; ++o) {
      ConstArrayMap<T> v(in + o * n, n);
      ArrayMap<T> y(out + o * n, n);
      const T m = v.template maxCoeff<Eigen::PropagateNaN>();
      if constexpr (kLog) {
        const T log_sum = std::log((v - m).exp().sum());
        y = (v - m) - log_sum;
      } else {
        y = (v - m).exp();
        FixExpUnderflow<true>(y.data(), v.data(), &m, n);
        y /= y.sum();
      }
    }
    return;
  }
  std::vector<T> max_buf(static_cast<size_t>(inner));
  std::vector<T> sum_buf(static_cast<size_t>(inner));
  ArrayMap<T> m(max_buf.data(), inner);
  ArrayMap<T> sum(sum_buf.data(), inner);
  for (int64_t o = 0; o < s.outer; ++o) {
    const T* x0 = in + o * n * inner;
    T* y0 = out + o * n * inner;
    m = ConstArrayMap<T>(x0, inner);
    for (int64_t r = 1; r < n; ++r)
      m = m.binaryExpr(ConstArrayMap<T>(x0 + r * inner, inner), MaxOp<T>());
    if constexpr (kLog) {
      sum = (ConstArrayMap<T>(x0, inner) - m).exp();
      for (int64_t r = 1; r < n; ++r) sum += (ConstArrayMap<T>(x0 + r * inner, inner) - m).exp();
      sum = sum.log();
      for (int64_t r = 0; r < n; ++r) {
        ArrayMap<T>(y0 + r * inner, inner) = (ConstArrayMap<T>(x0 + r * inner, inner) - m) - sum;
      }
    } else {
      sum.setZero();
      for (int64_t r = 0; r < n; ++r) {
        ArrayMap<T> y(y0 + r * inner, inner);
        y = (ConstArrayMap<T>(x0 + r * inner, inner) - m).exp();
        FixExpUnderflow<false>(y.data(), x0 + r * inner, m.data(), inner);
        sum += y;
      }
      for (int64_t r = 0; r < n; ++r) ArrayMap<T>(y0 + r * inner, inner) /= sum;
    }
  }
}

template <bool kLog>
Tensor SoftmaxImpl(const char* op, const Tensor& x, int64_t dim) {
  internal::CheckFloating(op, x);
  const int64_t d = WrapDim(op, dim, x.dim());
  const ScanLayout s = PlanScan(x, d, x.dtype());
  Tensor out = EmptyContiguous(x.sizes(), x.dtype());
  if (x.numel() == 0) return out;
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) SoftmaxLoop<T, kLog>(s, out.data<T>());
  });
  return out;
}

}  // namespace

Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return SumImpl(x, WrapDims("sum", dims, x.dim(), /*empty_means_all=*/true), keepdim);
}

Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim) {
  if (!IsFloating(x.dtype()) && !IsComplex(x.dtype())) {
    ThrowError("mean: could not infer the output dtype; input dtype must be floating point, got ",
               DTypeName(x.dtype()), " (shape ", ShapeToString(x.sizes()),
               "): mean takes floating point and complex tensors");
  }
  const Shape wrapped = WrapDims("mean", dims, x.dim(), /*empty_means_all=*/true);
  if (!IsOriginalDType(x.dtype())) return SumOrMeanNewDType<true>(x, wrapped, keepdim);
  return RunReduction(x, wrapped, keepdim, x.dtype(),
                      [](auto tag, const Layout& l, const Tensor& out) {
                        using T = typename decltype(tag)::type;
                        if constexpr (std::is_floating_point_v<T>) {
                          T* o = out.data<T>();
                          if (l.reduced == 0) {  // 0 / 0
                            std::fill_n(o, l.out_numel(), kNaN<T>);
                            return;
                          }
                          if (!SumRowsOnVecmath(l, l.input.data<T>(), o) &&
                              !SumColumnsOnVecmath(l, l.input.data<T>(), o)) {
                            ReduceRows(
                                l, l.input.data<T>(), o, [](const auto& v) { return RowSum(v); },
                                [](auto& acc, const auto& v) { acc = v; },
                                [](auto& acc, const auto& v) { acc += v; },
                                [](const auto& partials) { return partials.sum(); });
                          }
                          ArrayMap<T>(o, l.out_numel()) /= static_cast<T>(l.reduced);
                        }
                      });
}

namespace {

// ProdAs: the product over `dims` (wrapped) computed and returned in `compute` (float32,
// float64 or int64).
Tensor ProdAs(const Tensor& x, IntArrayRef wrapped, bool keepdim, DType compute) {
  return RunReduction(
      x, wrapped, keepdim, compute, [](auto tag, const Layout& l, const Tensor& out) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, bool>) {
          using A = Wrapping<T>;
          A* o = reinterpret_cast<A*>(out.data<T>());
          if (l.reduced == 0) {
            std::fill_n(o, l.out_numel(), A(1));
            return;
          }
          const A* in = reinterpret_cast<const A*>(l.input.data<T>());
          if (ColumnsOnVecmath(l, in, o,
                               [](const auto* x, int64_t rows, int64_t cols, int64_t ld, auto* po) {
                                 vecmath::ProdColumns(x, rows, cols, ld, po);
                               })) {
            return;
          }
          ReduceRows(
              l, in, o, [](const auto& v) { return RowProd(v); },
              [](auto& acc, const auto& v) { acc = v; },
              [](auto& acc, const auto& v) { acc *= v; });
        }
      });
}

// ComplexProd: the product over `dims` of a complex tensor, multiplied in order in its own
// type (the product of nothing is 1).
template <typename C>
Tensor ComplexProd(const Tensor& x, IntArrayRef wrapped, bool keepdim) {
  const Layout l = PlanReduction(x, wrapped, keepdim, x.dtype());
  Tensor out = EmptyContiguous(l.out_shape, x.dtype());
  if (l.out_numel() == 0) return out;
  const C* in = l.input.data<C>();
  C* o = out.data<C>();
  const int64_t n = l.reduced;
  const int64_t inner = l.inner;
  for (int64_t i = 0; i < l.outer; ++i) {
    C* acc = o + i * inner;
    if (n == 0) {
      std::fill_n(acc, inner, C(1));
      continue;
    }
    const C* base = in + i * n * inner;
    std::copy(base, base + inner, acc);
    for (int64_t r = 1; r < n; ++r) {
      for (int64_t k = 0; k < inner; ++k) acc[k] *= base[r * inner + k];
    }
  }
  return out;
}

}  // namespace

Tensor prod(const Tensor& x, IntArrayRef dims, bool keepdim) {
  const Shape wrapped = WrapDims("prod", dims, x.dim(), /*empty_means_all=*/true);
  // NOTE: [Reductions over the new dtypes]
  switch (x.dtype()) {
    case kComplex64:
      return ComplexProd<std::complex<float>>(x, wrapped, keepdim);
    case kComplex128:
      return ComplexProd<std::complex<double>>(x, wrapped, keepdim);
    case kFloat16:
    case kBFloat16:
      return to(ProdAs(x, wrapped, keepdim, kFloat32), x.dtype());
    default:
      return ProdAs(x, wrapped, keepdim, SumDType(x.dtype()));
  }
}

Tensor amax(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return MinMax<true>("amax", x, dims, keepdim);
}

Tensor amin(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return MinMax<false>("amin", x, dims, keepdim);
}

Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim) {
  const Shape wrapped = WrapDims("logsumexp", dims, x.dim(), /*empty_means_all=*/true);
  const DType compute = IsFloating(x.dtype()) ? x.dtype() : kDefaultFloat;
  return RunReduction(
      x, wrapped, keepdim, compute, [](auto tag, const Layout& l, const Tensor& out) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T>) {
          T* o = out.data<T>();
          const int64_t n = l.reduced;
          const int64_t inner = l.inner;
          if (n == 0) {  // log(0)
            std::fill_n(o, l.out_numel(), -kInf<T>);
            return;
          }
          const T* in = l.input.data<T>();
          // Shift by the max. An infinite max is the answer itself (+inf; or -inf when every
          // element is -inf), and shifting by it would give inf - inf = nan.
          if (inner == 1) {
            for (int64_t i = 0; i < l.outer; ++i) {
              ConstArrayMap<T> v(in + i * n, n);
              const T m = v.template maxCoeff<Eigen::PropagateNaN>();
              o[i] = std::isinf(m) ? m : std::log((v - m).exp().sum()) + m;
            }
            return;
          }
          std::vector<T> max_buf(static_cast<size_t>(inner));
          std::vector<T> shift_buf(static_cast<size_t>(inner));
          ArrayMap<T> m(max_buf.data(), inner);
          ArrayMap<T> shift(shift_buf.data(), inner);
          for (int64_t i = 0; i < l.outer; ++i) {
            const T* base = in + i * n * inner;
            m = ConstArrayMap<T>(base, inner);
            for (int64_t r = 1; r < n; ++r) {
              m = m.binaryExpr(ConstArrayMap<T>(base + r * inner, inner), MaxOp<T>());
            }
            for (int64_t j = 0; j < inner; ++j) shift[j] = std::isinf(m[j]) ? T(0) : m[j];
            ArrayMap<T> acc(o + i * inner, inner);
            acc = (ConstArrayMap<T>(base, inner) - shift).exp();
            for (int64_t r = 1; r < n; ++r)
              acc += (ConstArrayMap<T>(base + r * inner, inner) - shift).exp();
            acc = acc.log() + shift;
            for (int64_t j = 0; j < inner; ++j) {
              if (std::isinf(m[j])) acc[j] = m[j];
            }
          }
        }
      });
}

Tensor var(const Tensor& x, IntArrayRef dims, int64_t correction, bool keepdim) {
  return VarImpl<false>("var", x, dims, correction, keepdim);
}

Tensor std(const Tensor& x, IntArrayRef dims, int64_t correction, bool keepdim) {
  return VarImpl<true>("std", x, dims, correction, keepdim);
}

Tensor norm(const Tensor& x, double p, IntArrayRef dims, bool keepdim) {
  internal::CheckFloating("norm", x);
  const Shape wrapped = WrapDims("norm", dims, x.dim(), /*empty_means_all=*/true);
  if (p < 0 || p == std::numeric_limits<double>::infinity()) {
    CheckNonEmptyDims("norm", x, wrapped,
                      absl::StrCat(": the p = ", p, " norm has no identity").c_str());
  }
  return RunReduction(
      x, wrapped, keepdim, x.dtype(), [&](auto tag, const Layout& l, const Tensor& out) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T>) {
          T* o = out.data<T>();
          const int64_t count = l.out_numel();
          ArrayMap<T> all(o, count);
          if (l.reduced == 0) {  // only p >= 0 gets here: the sum of nothing is 0
            all.setZero();
            return;
          }
          const T* in = l.input.data<T>();
          const auto copy_abs = [](auto& acc, const auto& v) { acc = v.abs(); };
          if (p == kInf<double> || p == -kInf<double>) {
            if (p > 0) {
              ReduceRows(
                  l, in, o,
                  [](const auto& v) { return v.abs().template maxCoeff<Eigen::PropagateNaN>(); },
                  copy_abs,
                  [](auto& acc, const auto& v) { acc = acc.binaryExpr(v.abs(), MaxOp<T>()); });
            } else {
              ReduceRows(
                  l, in, o,
                  [](const auto& v) { return v.abs().template minCoeff<Eigen::PropagateNaN>(); },
                  copy_abs,
                  [](auto& acc, const auto& v) { acc = acc.binaryExpr(v.abs(), MinOp<T>()); });
            }
          } else if (p == 0) {  // the number of nonzeros
            ReduceRows(
                l, in, o, [](const auto& v) { return static_cast<T>((v != T(0)).count()); },
                [](auto& acc, const auto& v) { acc = (v != T(0)).template cast<T>(); },
                [](auto& acc, const auto& v) { acc += (v != T(0)).template cast<T>(); });
          } else if (p == 1) {
            ReduceRows(
                l, in, o, [](const auto& v) { return v.abs().sum(); }, copy_abs,
                [](auto& acc, const auto& v) { acc += v.abs(); });
          } else if (p == 2) {
            ReduceRows(
                l, in, o, [](const auto& v) { return v.square().sum(); },
                [](auto& acc, const auto& v) { acc = v.square(); },
                [](auto& acc, const auto& v) { acc += v.square(); });
            SqrtInPlace(o, count);
          } else {
            const T tp = static_cast<T>(p);
            ReduceRows(
                l, in, o, [tp](const auto& v) { return v.abs().pow(tp).sum(); },
                [tp](auto& acc, const auto& v) { acc = v.abs().pow(tp); },
                [tp](auto& acc, const auto& v) { acc += v.abs().pow(tp); });
            all = all.pow(static_cast<T>(1.0 / p));
          }
        }
      });
}

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return ArgImpl<true>("argmax", x, dim, keepdim);
}

Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return ArgImpl<false>("argmin", x, dim, keepdim);
}

Tensor softmax(const Tensor& x, int64_t dim) { return SoftmaxImpl<false>("softmax", x, dim); }

Tensor log_softmax(const Tensor& x, int64_t dim) {
  return SoftmaxImpl<true>("log_softmax", x, dim);
}

namespace {

// ScanRows: out[r] = step(out[r - 1], in[r]) along the scanned dim of an [outer, n, inner]
// layout, out[0] = in[0]; every element of a row is independent of its neighbours.
template <typename A, typename Step>
void ScanRows(const ScanLayout& s, const A* in, A* o, Step step) {
  const int64_t n = s.n;
  const int64_t inner = s.inner;
  for (int64_t i = 0; i < s.outer; ++i) {
    const A* x0 = in + i * n * inner;
    A* y0 = o + i * n * inner;
    for (int64_t k = 0; k < inner; ++k) y0[k] = x0[k];
    for (int64_t r = 1; r < n; ++r) {
      const A* prev = y0 + (r - 1) * inner;
      const A* x = x0 + r * inner;
      A* y = y0 + r * inner;
      for (int64_t k = 0; k < inner; ++k) y[k] = step(prev[k], x[k]);
    }
  }
}

// ComplexScan: cumsum (or cumprod, kProd) of a complex tensor along d, accumulated in
// complex128 as torch's acc_type is, each output rounded to x's dtype.
template <bool kProd>
Tensor ComplexScan(const Tensor& x, int64_t d) {
  using C = std::complex<double>;
  const ScanLayout s = PlanScan(x, d, kComplex128);
  Tensor out = EmptyContiguous(x.sizes(), kComplex128);
  if (x.numel() > 0) {
    ScanRows<C>(s, s.input.data<C>(), out.data<C>(), [](C acc, C v) {
      if constexpr (kProd) {
        return acc * v;
      } else {
        return acc + v;
      }
    });
  }
  return x.dtype() == kComplex128 ? out : to(out, x.dtype());
}

// CumsumAs: cumsum along d computed and returned in `compute` (float32, float64 or int64).
Tensor CumsumAs(const Tensor& x, int64_t d, DType compute) {
  const ScanLayout s = PlanScan(x, d, compute);
  Tensor out = EmptyContiguous(x.sizes(), compute);
  if (x.numel() == 0) return out;
  VisitDType(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      using A = Wrapping<T>;
      const A* in = reinterpret_cast<const A*>(s.input.data<T>());
      A* o = reinterpret_cast<A*>(out.data<T>());
      const int64_t n = s.n;
      const int64_t inner = s.inner;
      for (int64_t i = 0; i < s.outer; ++i) {
        const A* x0 = in + i * n * inner;
        A* y0 = o + i * n * inner;
        if (inner == 1) {
          A acc = x0[0];  // not 0 + x0[0], which would turn -0.0 into 0.0
          y0[0] = acc;
          for (int64_t r = 1; r < n; ++r) y0[r] = acc += x0[r];
        } else {
          ArrayMap<A>(y0, inner) = ConstArrayMap<A>(x0, inner);
          for (int64_t r = 1; r < n; ++r) {
            ArrayMap<A>(y0 + r * inner, inner) =
                ArrayMap<A>(y0 + (r - 1) * inner, inner) + ConstArrayMap<A>(x0 + r * inner, inner);
          }
        }
      }
    }
  });
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim) {
  const int64_t d = WrapDim("cumsum", dim, x.dim());
  if (!IsOriginalDType(x.dtype())) {  // NOTE: [Reductions over the new dtypes]
    if (IsComplex(x.dtype())) return ComplexScan<false>(x, d);
    if (IsFloating(x.dtype())) return to(CumsumAs(x, d, kFloat32), x.dtype());
  }
  return CumsumAs(x, d, SumDType(x.dtype()));
}

namespace {

// CumprodAs: cumprod along d computed and returned in `compute` (float32, float64 or int64).
Tensor CumprodAs(const Tensor& x, int64_t d, DType compute) {
  const ScanLayout s = PlanScan(x, d, compute);
  Tensor out = EmptyContiguous(x.sizes(), compute);
  if (x.numel() == 0) return out;
  VisitDType(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      using A = Wrapping<T>;  // int64 products wrap (unsigned arithmetic), as cumsum's sums
      ScanRows<A>(s, reinterpret_cast<const A*>(s.input.data<T>()),
                  reinterpret_cast<A*>(out.data<T>()), [](A acc, A v) { return A(acc * v); });
    }
  });
  return out;
}

}  // namespace

Tensor cumprod(const Tensor& x, int64_t dim) {
  const int64_t d = WrapDim("cumprod", dim, x.dim());
  if (!IsOriginalDType(x.dtype())) {  // NOTE: [Reductions over the new dtypes]
    if (IsComplex(x.dtype())) return ComplexScan<true>(x, d);
    if (IsFloating(x.dtype())) return to(CumprodAs(x, d, kFloat32), x.dtype());
  }
  return CumprodAs(x, d, SumDType(x.dtype()));
}

Tensor logcumsumexp(const Tensor& x, int64_t dim) {
  internal::CheckFloating("logcumsumexp", x);
  const int64_t d = WrapDim("logcumsumexp", dim, x.dim());
  const ScanLayout s = PlanScan(x, d, x.dtype());
  Tensor out = EmptyContiguous(x.sizes(), x.dtype());
  if (x.numel() == 0) return out;
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      // log(e^acc + e^v) = max + log1p(e^(min - max)): never overflows. Two -inf stay -inf
      // (an empty sum so far), an +inf absorbs everything, a NaN propagates.
      ScanRows<T>(s, s.input.data<T>(), out.data<T>(), [](T acc, T v) {
        if (std::isnan(acc) || std::isnan(v)) return acc + v;
        const T hi = std::max(acc, v);
        const T lo = std::min(acc, v);
        if (lo == -std::numeric_limits<T>::infinity() || hi == std::numeric_limits<T>::infinity()) {
          return hi;
        }
        return hi + std::log1p(std::exp(lo - hi));
      });
    }
  });
  return out;
}

Tensor linear_recurrence(const Tensor& a, const Tensor& b, int64_t dim) {
  const DType dtype = PromoteTypes(a.dtype(), b.dtype());
  if (!IsFloating(dtype)) {
    ThrowError("linear_recurrence: expected floating point tensors, got ", DTypeName(a.dtype()),
               " a of shape ", ShapeToString(a.sizes()), " and ", DTypeName(b.dtype()),
               " b of shape ", ShapeToString(b.sizes()));
  }
  const Shape shape = BroadcastShapes("linear_recurrence", a.sizes(), b.sizes());
  const int64_t d = WrapDim("linear_recurrence", dim, static_cast<int64_t>(shape.size()));
  const ScanLayout sa = PlanScan(expand(a, shape), d, dtype);
  const ScanLayout sb = PlanScan(expand(b, shape), d, dtype);
  Tensor out = EmptyContiguous(shape, dtype);
  if (out.numel() == 0) return out;
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T* av = sa.input.data<T>();
      const T* bv = sb.input.data<T>();
      T* o = out.data<T>();
      const int64_t n = sb.n;
      const int64_t inner = sb.inner;
      for (int64_t i = 0; i < sb.outer; ++i) {
        const int64_t base = i * n * inner;
        for (int64_t k = 0; k < inner; ++k) o[base + k] = bv[base + k];  // s_0 = b_0
        for (int64_t r = 1; r < n; ++r) {
          const int64_t row = base + r * inner;
          for (int64_t k = 0; k < inner; ++k) {
            o[row + k] = av[row + k] * o[row - inner + k] + bv[row + k];
          }
        }
      }
    }
  });
  return out;
}

Tensor sum_to_size(const Tensor& x, IntArrayRef size) {
  const int64_t rank = x.dim();
  const int64_t n = static_cast<int64_t>(size.size());
  bool expandable = n <= rank;
  Shape dims;
  if (expandable) {
    const int64_t lead = rank - n;
    for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t have = x.sizes()[lead + i];
      if (size[i] == have) continue;
      if (size[i] == 1) {
        dims.push_back(lead + i);
      } else {
        expandable = false;
      }
    }
  }
  if (!expandable) {
    ThrowError("sum_to_size: size ", ShapeToString(size), " is not expandable to size ",
               ShapeToString(x.sizes()), " (the shape of the tensor being summed)");
  }
  if (dims.empty()) {  // already `size`: a fresh copy, never an alias of x
    const DType dtype = SumDType(x.dtype());
    return x.dtype() == dtype ? clone(x) : to(x, dtype);
  }
  Tensor r = SumImpl(x, dims, /*keepdim=*/true);
  // r is contiguous with size's elements; drop the leading size-1 dims.
  return MakeDense(r.storage(), r.dtype(), Shape(size.begin(), size.end()), ContiguousStrides(size),
                   r.storage_offset());
}

}  // namespace ft::kernels

#include "kernels/linalg.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "cpu/gemm.h"
#include "cpu/parallel.h"
#include "kernels/binary.h"
#include "tensor/copy.h"
#include "tensor/loops.h"

namespace ft::kernels {
namespace {

using internal::RowMajorMatrix;

template <typename T>
using ColMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <typename T>
using ConstRowMap = Eigen::Map<const RowMajorMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <typename T>
using ConstColMap = Eigen::Map<const ColMajorMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <typename T>
using OutMap = Eigen::Map<RowMajorMatrix<T>, Eigen::Unaligned>;

// kGemmGrainWork: multiply-adds (~100 us) below which a product is not split over the
// intra-op threads (NOTE: [Intra-op threads] in cpu/parallel.h).
constexpr int64_t kGemmGrainWork = int64_t{1} << 21;

// kVectorGemm<T>: T has the vector unit's GEMM (cpu/gemm.h); other dtypes use Eigen's.
template <typename T>
inline constexpr bool kVectorGemm = std::is_same_v<T, float> || std::is_same_v<T, double>;

// RowGrain: rows of c per chunk of a product split over the intra-op threads (16 at least).
inline int64_t RowGrain(int64_t k, int64_t n) {
  return std::max<int64_t>(16, kGemmGrainWork / std::max<int64_t>(n * k, 1));
}

// Gemm: c = a * b for Eigen expressions (the integer dtypes), split by rows of c over the
// intra-op threads when the product is large. Each row block is its own Eigen product:
// deterministic for a given thread count; Eigen's blocking depends on the block's size, so
// other thread counts may round differently.
template <typename C, typename A, typename B>
void Gemm(C&& c, const A& a, const B& b) {
  const int64_t m = c.rows(), n = c.cols(), k = a.cols();
  const int64_t row_grain = RowGrain(k, n);
  if (::ft::internal::ParallelChunks(m, row_grain) <= 1) {
    c.noalias() = a * b;
    return;
  }
  ::ft::internal::ParallelFor(m, row_grain, 16, 0, [&](int64_t r0, int64_t r1) {
    c.middleRows(r0, r1 - r0).noalias() = a.middleRows(r0, r1 - r0) * b;
  });
}

// VectorGemm: c (m x n, row-major, row stride ldc) = a b for float and double, on the vector
// unit's GEMM (cpu/gemm.h; element (i, kk) of a at a[i * ars + kk * acs], of b likewise),
// split by rows of c as Gemm is, with the same determinism.
template <typename T>
void VectorGemm(int64_t m, int64_t k, int64_t n, const T* a, int64_t ars, int64_t acs,
                const T* b, int64_t brs, int64_t bcs, T* c, int64_t ldc) {
  const auto rows = [&](int64_t r0, int64_t r1) {
    internal::Gemm(r1 - r0, k, n, a + r0 * ars, ars, acs, b, brs, bcs, c + r0 * ldc, ldc);
  };
  // Under kGemmGrainWork multiply-adds m is under one grain: skip asking the pool (most
  // products of a Jacobian or a small layer are here, and each nanosecond is per-op cost).
  const int64_t row_grain = RowGrain(k, n);
  if (m * k * n < kGemmGrainWork || ::ft::internal::ParallelChunks(m, row_grain) <= 1) {
    rows(0, m);
  } else {
    ::ft::internal::ParallelFor(m, row_grain, 16, 0, rows);
  }
}

// MatrixArg describes an operand as a batch of rows x cols matrices: matrix [i0, ...] starts
// at data + sum(i_k * batch_strides[k]), element (r, c) of it is at + r * rs + c * cs
// (all in elements). `t` keeps the storage alive and has the compute dtype.
struct MatrixArg {
  Tensor t;
  Shape batch_sizes;
  Shape batch_strides;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t rs = 0;
  int64_t cs = 0;
};

// AsMatrix views `t` (rank >= 1) as matrices over its last two dims. A 1-D tensor becomes a
// single 1 x n row (as_row) or n x 1 column, as torch.matmul prepends / appends a dim.
MatrixArg AsMatrix(const Tensor& t, bool as_row) {
  MatrixArg m;
  m.t = t;
  const int64_t r = t.dim();
  if (r == 1) {
    const int64_t n = t.sizes()[0];
    const int64_t s = t.strides()[0];
    if (as_row) {
      m.rows = 1, m.cols = n, m.rs = 0, m.cs = s;
    } else {
      m.rows = n, m.cols = 1, m.rs = s, m.cs = 0;
    }
    return m;
  }
  if (r > 2) {  // a plain matrix has no batch dims: skip the (empty) copies
    m.batch_sizes.assign(t.sizes().begin(), t.sizes().end() - 2);
    m.batch_strides.assign(t.strides().begin(), t.strides().end() - 2);
  }
  m.rows = t.sizes()[r - 2];
  m.cols = t.sizes()[r - 1];
  m.rs = t.strides()[r - 2];
  m.cs = t.strides()[r - 1];
  return m;
}

enum class Layout { kRowMajor, kColMajor, kNone };

// Classify decides how Eigen can map m's matrices without a copy, and normalizes the strides
// of size-1 dims (which never matter) so that the chosen map is valid. M: MatrixArg or
// PlainMatrix (rows, cols, rs, cs).
template <typename M>
Layout Classify(M& m) {
  const bool row_ok = (m.cols <= 1 || m.cs == 1) &&
                      (m.rows <= 1 || m.rs >= std::max<int64_t>(m.cols, 1));
  if (row_ok) {
    m.cs = 1;
    if (m.rows <= 1) m.rs = std::max<int64_t>(m.cols, 1);
    return Layout::kRowMajor;
  }
  // A transposed view: consecutive rows are adjacent, columns are `cs` apart.
  const bool col_ok = (m.rows <= 1 || m.rs == 1) &&
                      (m.cols <= 1 || m.cs >= std::max<int64_t>(m.rows, 1));
  if (col_ok) {
    m.rs = 1;
    if (m.cols <= 1) m.cs = std::max<int64_t>(m.rows, 1);
    return Layout::kColMajor;
  }
  return Layout::kNone;
}

// Materialize replaces m's data by a contiguous copy (for strided-both-ways or broadcast
// matrices, which no Eigen map describes).
void Materialize(MatrixArg& m) {
  Shape sizes = m.batch_sizes;
  Shape strides = m.batch_strides;
  sizes.push_back(m.rows);
  sizes.push_back(m.cols);
  strides.push_back(m.rs);
  strides.push_back(m.cs);
  Tensor view = MakeDense(m.t.storage(), m.t.dtype(), sizes, strides, m.t.storage_offset());
  m.t = clone(view);
  const Shape contiguous = ContiguousStrides(sizes);
  m.batch_strides.assign(contiguous.begin(), contiguous.end() - 2);
  m.rs = m.cols;
  m.cs = 1;
}

// TryFoldBatch merges a row-major operand's batch dims into its rows when every matrix row
// sits at a constant distance from the previous one across batch boundaries (e.g. any
// contiguous tensor): one large GEMM instead of a loop of small ones.
//
// "Not fixed yet" is nullopt, not 0: a broadcast batch dim has stride 0, and taking 0 for
// "unset" let a later dim's stride pass as the first one, folding repeated matrices as if
// they were distinct rows (the property test found matmul wrong on expanded batches).
void TryFoldBatch(MatrixArg& m) {
  int64_t rows = m.rows;
  std::optional<int64_t> stride;  // of the innermost dim of size > 1 (rows included)
  int64_t extent = 0;
  if (m.rows > 1) {
    stride = m.rs;
    extent = m.rows * m.rs;
  }
  for (int64_t d = static_cast<int64_t>(m.batch_sizes.size()) - 1; d >= 0; --d) {
    const int64_t size = m.batch_sizes[d];
    if (size == 1) continue;
    const int64_t s = m.batch_strides[d];
    if (!stride) {
      stride = s;
    } else if (s != extent) {
      return;
    }
    extent = s * size;
    rows *= size;
  }
  // Rows would overlap (a stride-0 dim among them, or rows closer than their length).
  if (rows > 1 && stride.value_or(0) < std::max<int64_t>(m.cols, 1)) return;
  m.rows = rows;
  if (rows > 1) m.rs = *stride;
  m.batch_sizes.clear();
  m.batch_strides.clear();
}

// FoldBatchStride: when m's batch dims step through memory by one constant stride (any
// contiguous batch, or a single batch dim), returns it (0 for a batch of one matrix).
// (As in TryFoldBatch, "not fixed yet" must not be 0, which is a broadcast dim's stride.)
std::optional<int64_t> FoldBatchStride(const MatrixArg& m) {
  std::optional<int64_t> stride;  // of the innermost batch dim of size > 1
  int64_t extent = 0;
  for (int64_t d = static_cast<int64_t>(m.batch_sizes.size()) - 1; d >= 0; --d) {
    const int64_t size = m.batch_sizes[d];
    if (size == 1) continue;
    const int64_t s = m.batch_strides[d];
    if (!stride) {
      stride = s;
    } else if (s != extent) {
      return std::nullopt;
    }
    extent = s * size;
  }
  return stride.value_or(0);
}

// MatVecBatchAsGemm: out[i] = A @ b[i] for one shared matrix A and a batch of column vectors
// b[i] (b.cols == 1) whose batch folds into one stride: the vectors are the columns of one
// k x count matrix, so the batch is a single GEMM (A @ [b_0 ... b_count-1]) instead of a loop
// of matrix-vector products, and out's [count, m] layout is that GEMM's column-major result.
// Returns false when the operands do not have that shape.
template <typename T>
bool MatVecBatchAsGemm(T* out, const MatrixArg& a, Layout la, const MatrixArg& b,
                       int64_t count) {
  if (b.cols != 1 || count <= 1 || Numel(a.batch_sizes) != 1) return false;
  const std::optional<int64_t> step = FoldBatchStride(b);
  if (!step || *step == 0) return false;
  const T* pa = static_cast<const T*>(a.t.impl()->raw_data());
  const T* pb = static_cast<const T*>(b.t.impl()->raw_data());
  if constexpr (kVectorGemm<T>) {
    // out's [count, m] rows are out^T = [b_0 ... b_count-1]^T A^T: row i of the left factor
    // is vector i (element kk at pb + i * step + kk * b.rs), and A^T's (kk, r) is A's (r, kk).
    VectorGemm<T>(count, a.cols, a.rows, pb, *step, b.rows > 1 ? b.rs : 1, pa, a.cs, a.rs, out,
                  a.rows);
  } else {  // the integer dtypes: Eigen's product (not instantiated for float and double)
    using Strided = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
    Eigen::Map<const ColMajorMatrix<T>, Eigen::Unaligned, Strided> vectors(
        pb, b.rows, count, Strided(*step, b.rows > 1 ? b.rs : 1));
    Eigen::Map<ColMajorMatrix<T>> result(out, a.rows, count);
    if (la == Layout::kRowMajor) {
      Gemm(result, ConstRowMap<T>(pa, a.rows, a.cols, Eigen::OuterStride<>(a.rs)), vectors);
    } else {
      Gemm(result, ConstColMap<T>(pa, a.rows, a.cols, Eigen::OuterStride<>(a.cs)), vectors);
    }
  }
  return true;
}

// BroadcastStrides returns m's batch strides aligned to `batch` (missing and size-1 dims 0).
Shape BroadcastStrides(const MatrixArg& m, IntArrayRef batch) {
  Shape out(batch.size(), 0);
  const size_t lead = batch.size() - m.batch_sizes.size();
  for (size_t d = 0; d < m.batch_sizes.size(); ++d) {
    if (m.batch_sizes[d] != 1) out[lead + d] = m.batch_strides[d];
  }
  return out;
}

// kStreamOuterProductBytes: a batch of outer products writing at least this much (half the
// last-level cache of the machines we measure) is written with non-temporal stores: the
// rows go straight to memory instead of being read into cache first (a write-allocate read
// per line), which halves the memory traffic of per-example weight gradients (B = 1024 of a
// 784-128-10 MLP writes 400 MB) and leaves the bandwidth for a second thread.
constexpr int64_t kStreamOuterProductBytes = int64_t{16} << 20;

// StreamOuterRow writes dst[j] = s * b[j] for j < n with non-temporal stores; dst is 16-byte
// aligned. Each element is the one IEEE product Eigen's outer product computes.
#if defined(__SSE2__)
inline void StreamOuterRow(float* dst, float s, const float* b, int64_t n) {
  const __m128 vs = _mm_set1_ps(s);
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) _mm_stream_ps(dst + j, _mm_mul_ps(vs, _mm_loadu_ps(b + j)));
  for (; j < n; ++j) dst[j] = s * b[j];
}

inline void StreamOuterRow(double* dst, double s, const double* b, int64_t n) {
  const __m128d vs = _mm_set1_pd(s);
  int64_t j = 0;
  for (; j + 2 <= n; j += 2) _mm_stream_pd(dst + j, _mm_mul_pd(vs, _mm_loadu_pd(b + j)));
  for (; j < n; ++j) dst[j] = s * b[j];
}

// Non-temporal stores are weakly ordered: a fence makes them visible before what follows.
inline void StreamFence() { _mm_sfence(); }
#else
// Without SSE2: ordinary stores, the same values.
template <typename T>
void StreamOuterRow(T* dst, T s, const T* b, int64_t n) {
  for (int64_t j = 0; j < n; ++j) dst[j] = s * b[j];
}
inline void StreamFence() {}
#endif

template <typename T, bool kARow, bool kBRow>
void GemmLoop(T* out, IntArrayRef batch, const MatrixArg& a, IntArrayRef a_strides,
              const MatrixArg& b, IntArrayRef b_strides) {
  using AMap = std::conditional_t<kARow, ConstRowMap<T>, ConstColMap<T>>;
  using BMap = std::conditional_t<kBRow, ConstRowMap<T>, ConstColMap<T>>;
  const int64_t m = a.rows;
  const int64_t k = a.cols;
  const int64_t n = b.cols;
  const Eigen::OuterStride<> a_outer(kARow ? a.rs : a.cs);
  const Eigen::OuterStride<> b_outer(kBRow ? b.rs : b.cs);
  const T* a0 = static_cast<const T*>(a.t.impl()->raw_data());
  const T* b0 = static_cast<const T*>(b.t.impl()->raw_data());
  const int64_t count = Numel(batch);
  const int64_t rank = static_cast<int64_t>(batch.size());
  if (count == 1) {
    if constexpr (kVectorGemm<T>) {
      VectorGemm<T>(m, k, n, a0, a.rs, a.cs, b0, b.rs, b.cs, out, n);
    } else {
      Gemm(OutMap<T>(out, m, n), AMap(a0, m, k, a_outer), BMap(b0, k, n, b_outer));
    }
    return;
  }
  // Large batches of outer products with contiguous b rows and 16-byte aligned output rows
  // are streamed (kStreamOuterProductBytes); the values are the same products.
  constexpr bool kStreamable = std::is_same_v<T, float> || std::is_same_v<T, double>;
  const bool stream =
      kStreamable && k == 1 && (kBRow || n == 1) &&
      count * m * n * static_cast<int64_t>(sizeof(T)) >= kStreamOuterProductBytes &&
      reinterpret_cast<uintptr_t>(out) % 16 == 0 && (n * sizeof(T)) % 16 == 0;
  // Batch items [first, last): whole products per thread, each exactly as in one pass.
  const auto run = [&](int64_t first, int64_t last) {
    Shape index(batch.size(), 0);
    const T* pa = a0;
    const T* pb = b0;
    for (int64_t d = rank - 1, rest = first; d >= 0; --d) {  // the odometer at `first`
      index[d] = rest % batch[d];
      rest /= batch[d];
      pa += index[d] * a_strides[d];
      pb += index[d] * b_strides[d];
    }
    for (int64_t i = first; i < last; ++i) {
      OutMap<T> c(out + i * m * n, m, n);
      if constexpr (kStreamable) {
        if (stream) {
          const int64_t a_step = kARow ? a.rs : 1;  // a's column 0: element r at pa + r * step
          for (int64_t r = 0; r < m; ++r) StreamOuterRow(c.data() + r * n, pa[r * a_step], pb, n);
        }
      }
      if (stream) {
        // written above
      } else if (k == 1) {
        // An outer product (per-example weight gradients under vmap are batches of them):
        // written directly, without GEMM's zero fill and packing; float and double rows of
        // b on vecmath's vector unit (the same products).
        if constexpr (kStreamable) {
          if (kBRow || n == 1) {
            vecmath::Outer(pa, kARow ? a.rs : 1, m, pb, n, c.data());
          } else {
            c.noalias() = AMap(pa, m, k, a_outer).col(0) * BMap(pb, k, n, b_outer).row(0);
          }
        } else {
          c.noalias() = AMap(pa, m, k, a_outer).col(0) * BMap(pb, k, n, b_outer).row(0);
        }
      } else if constexpr (kVectorGemm<T>) {
        internal::Gemm(m, k, n, pa, a.rs, a.cs, pb, b.rs, b.cs, c.data(), n);
      } else {
        c.noalias() = AMap(pa, m, k, a_outer) * BMap(pb, k, n, b_outer);
      }
      for (int64_t d = rank - 1; d >= 0; --d) {  // odometer step over the batch dims
        if (++index[d] < batch[d]) {
          pa += a_strides[d];
          pb += b_strides[d];
          break;
        }
        index[d] = 0;
        pa -= a_strides[d] * (batch[d] - 1);
        pb -= b_strides[d] * (batch[d] - 1);
      }
    }
    if (stream) StreamFence();  // before the chunk reports done
  };
  // An outer product is memory-bound: count its m * n writes as the work.
  const int64_t item_work = std::max<int64_t>(m * n * std::max<int64_t>(k, 1), 1);
  const int64_t grain = std::max<int64_t>(1, kGemmGrainWork / item_work);
  if (count < 2 * grain) {
    run(0, count);  // small batches: a direct call
    return;
  }
  ::ft::internal::ParallelFor(count, grain, 1, 0, run);
}

// BatchedMatmul returns out[i] = a[i] @ b[i] over the broadcast batch index i, as a new
// contiguous tensor of `out_shape` (whose elements are laid out as [batch..., M, N]).
// Shapes were validated by the caller; a and b already have the compute dtype.
Tensor BatchedMatmul(MatrixArg a, MatrixArg b, IntArrayRef out_shape) {
  const DType dtype = a.t.dtype();
  FT_CHECK(b.t.dtype() == dtype && a.cols == b.rows);
  Tensor out = EmptyContiguous(out_shape, dtype);
  if (out.numel() == 0) return out;
  const Shape batch = BroadcastShapes("matmul", a.batch_sizes, b.batch_sizes);
  FT_CHECK(Numel(batch) * a.rows * b.cols == out.numel());
  VisitDType(dtype, [&](auto tag) {
    using D = typename decltype(tag)::type;
    if constexpr (std::is_same_v<D, bool>) {
      FT_CHECK(false);  // callers reject bool
    } else {
      // int64 products and sums wrap around like PyTorch's: computed in uint64 (the same
      // bits; int64 and uint64 may alias), because signed overflow is UB.
      using T = std::conditional_t<std::is_same_v<D, int64_t>, uint64_t, D>;
      T* po = reinterpret_cast<T*>(out.data<D>());
      if (a.cols == 0) {
        std::fill(po, po + out.numel(), T(0));
        return;
      }
      Layout la = Classify(a);
      if (la == Layout::kNone) {
        Materialize(a);
        la = Classify(a);
      }
      Layout lb = Classify(b);
      if (lb == Layout::kNone) {
        Materialize(b);
        lb = Classify(b);
      }
      if (MatVecBatchAsGemm<T>(po, a, la, b, Numel(batch))) return;
      Shape loop_batch = batch;
      if (Numel(b.batch_sizes) == 1) {  // b is one matrix for every batch index
        b.batch_sizes.clear();
        b.batch_strides.clear();
      }
      if (la == Layout::kRowMajor && b.batch_sizes.empty() && !a.batch_sizes.empty()) {
        TryFoldBatch(a);
        if (a.batch_sizes.empty()) loop_batch.clear();
      }
      const Shape sa = BroadcastStrides(a, loop_batch);
      const Shape sb = BroadcastStrides(b, loop_batch);
      const bool ar = la == Layout::kRowMajor;
      const bool br = lb == Layout::kRowMajor;
      if (ar && br) {
        GemmLoop<T, true, true>(po, loop_batch, a, sa, b, sb);
      } else if (ar) {
        GemmLoop<T, true, false>(po, loop_batch, a, sa, b, sb);
      } else if (br) {
        GemmLoop<T, false, true>(po, loop_batch, a, sa, b, sb);
      } else {
        GemmLoop<T, false, false>(po, loop_batch, a, sa, b, sb);
      }
    }
  });
  return out;
}

// PlainMatrix: AsMatrix's geometry of a 2-D (or 1-D column) operand and its first element,
// without the batch dims or a handle on the tensor (the caller keeps it alive), for the path
// every small product of a jit replay takes.
struct PlainMatrix {
  const void* data;
  int64_t rows, cols, rs, cs;
};

PlainMatrix AsPlainMatrix(const Tensor& t) {
  const IntArrayRef sizes = t.sizes(), strides = t.strides();
  if (t.dim() == 1) return {t.impl()->raw_data(), sizes[0], 1, strides[0], 0};
  return {t.impl()->raw_data(), sizes[0], sizes[1], strides[0], strides[1]};
}

// PlainMatmul: the common small case, a float matrix times a matrix or vector of its own
// dtype, straight to one product (no dtype aliases, no batch broadcast, no odometer):
// the vector unit's GEMM (cpu/gemm.h: SmallGemm for small products, Eigen's GEMM past
// them), or Eigen's matrix-vector product.
// The operands' layouts are Classify's. Returns nullopt when the general path must run
// (other dtypes or ranks, inner size 0 or 1, a layout no Eigen map describes).
std::optional<Tensor> PlainMatmul(const Tensor& a, const Tensor& b) {
  const DType dtype = a.dtype();
  if (a.dim() != 2 || b.dim() < 1 || b.dim() > 2 || b.dtype() != dtype ||
      (dtype != kFloat32 && dtype != kFloat64)) {
    return std::nullopt;
  }
  PlainMatrix ma = AsPlainMatrix(a);
  PlainMatrix mb = AsPlainMatrix(b);
  if (ma.cols <= 1 || ma.rows == 0 || mb.cols == 0) return std::nullopt;
  const Layout la = Classify(ma);
  const Layout lb = Classify(mb);
  if (la == Layout::kNone || lb == Layout::kNone) return std::nullopt;
  Tensor out = b.dim() == 2 ? EmptyContiguous({ma.rows, mb.cols}, dtype)
                            : EmptyContiguous({ma.rows}, dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const auto with_map = [](const PlainMatrix& m, Layout l, auto&& fn) {
        const T* p = static_cast<const T*>(m.data);
        if (l == Layout::kRowMajor) {
          fn(ConstRowMap<T>(p, m.rows, m.cols, Eigen::OuterStride<>(m.rs)));
        } else {
          fn(ConstColMap<T>(p, m.rows, m.cols, Eigen::OuterStride<>(m.cs)));
        }
      };
      T* po = static_cast<T*>(out.impl()->raw_data());
      if (mb.cols == 1) {
        // A matrix-vector product into a plain vector: Eigen then knows both vectors'
        // inner strides, so it neither copies the operand nor zeroes the result with a
        // strided scalar loop; and the result is a fresh buffer, 16-byte aligned
        // (storage.h), so zeroing it needs no run-time alignment arithmetic.
        using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
        Eigen::Map<Vector, Eigen::Aligned16> c(po, ma.rows);
        const T* pb = static_cast<const T*>(mb.data);
        with_map(ma, la, [&](const auto& am) {
          if (mb.rs == 1) {
            c.noalias() = am * Eigen::Map<const Vector>(pb, mb.rows);
          } else {
            c.noalias() = am * Eigen::Map<const Vector, Eigen::Unaligned, Eigen::InnerStride<>>(
                                   pb, mb.rows, Eigen::InnerStride<>(mb.rs));
          }
        });
        return;
      }
      VectorGemm<T>(ma.rows, ma.cols, mb.cols, static_cast<const T*>(ma.data), ma.rs, ma.cs,
                    static_cast<const T*>(mb.data), mb.rs, mb.cs, po, mb.cols);
    }
  });
  return out;
}

// ComputeDType returns the compute dtype of a linalg op, rejecting bool operands.
DType ComputeDType(const char* op, const Tensor& a, const Tensor& b) {
  if (a.dtype() == kBool || b.dtype() == kBool) {
    ThrowError(op, ": bool tensors are not supported, got ", DTypeName(a.dtype()), " ",
               ShapeToString(a.sizes()), " and ", DTypeName(b.dtype()), " ",
               ShapeToString(b.sizes()));
  }
  return PromoteTypes(a.dtype(), b.dtype());
}

void CheckInner(const char* op, const Tensor& a, const Tensor& b, int64_t a_dim,
                int64_t b_dim) {
  const int64_t ka = a.sizes()[a.dim() + a_dim];
  const int64_t kb = b.sizes()[b.dim() + b_dim];
  if (ka != kb) {
    ThrowError(op, ": size mismatch, got ", ShapeToString(a.sizes()), " @ ",
               ShapeToString(b.sizes()), ": dim ", a.dim() + a_dim, " of the first (", ka,
               ") must equal dim ", b.dim() + b_dim, " of the second (", kb, ")");
  }
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (a.dim() == 0 || b.dim() == 0) {
    ThrowError("matmul: both arguments need at least 1 dimension, got ",
               ShapeToString(a.sizes()), " and ", ShapeToString(b.sizes()));
  }
  const DType dtype = ComputeDType("matmul", a, b);
  const int64_t ka = a.sizes()[a.dim() - 1];
  const int64_t b_k_dim = b.dim() == 1 ? -1 : -2;
  const int64_t kb = b.sizes()[b.dim() + b_k_dim];
  if (ka != kb) {
    ThrowError("matmul: size mismatch, got ", ShapeToString(a.sizes()), " @ ",
               ShapeToString(b.sizes()), ": dim -1 of the first (", ka, ") must equal dim ",
               b_k_dim, " of the second (", kb, ")");
  }
  if (std::optional<Tensor> out = PlainMatmul(a, b)) return *std::move(out);
  const IntArrayRef a_batch = a.dim() > 2 ? a.sizes().subspan(0, a.dim() - 2) : IntArrayRef();
  const IntArrayRef b_batch = b.dim() > 2 ? b.sizes().subspan(0, b.dim() - 2) : IntArrayRef();
  Shape out_shape;
  {
    // Validate the batch broadcast with a message naming the full shapes.
    const size_t n = std::max(a_batch.size(), b_batch.size());
    for (size_t i = 0; i < n; ++i) {
      const int64_t da = i < n - a_batch.size() ? 1 : a_batch[i - (n - a_batch.size())];
      const int64_t db = i < n - b_batch.size() ? 1 : b_batch[i - (n - b_batch.size())];
      if (da != db && da != 1 && db != 1) {
        ThrowError("matmul: batch dims ", ShapeToString(a_batch), " of ",
                   ShapeToString(a.sizes()), " and ", ShapeToString(b_batch), " of ",
                   ShapeToString(b.sizes()), " cannot be broadcast together (", da, " vs ",
                   db, ")");
      }
      out_shape.push_back(da == 1 ? db : da);
    }
  }
  if (a.dim() >= 2) out_shape.push_back(a.sizes()[a.dim() - 2]);
  if (b.dim() >= 2) out_shape.push_back(b.sizes()[b.dim() - 1]);
  return BatchedMatmul(AsMatrix(to(a, dtype), /*as_row=*/true),
                       AsMatrix(to(b, dtype), /*as_row=*/false), out_shape);
}

Tensor mm(const Tensor& a, const Tensor& b) {
  if (a.dim() != 2 || b.dim() != 2) {
    ThrowError("mm: expected 2-D tensors, got ", ShapeToString(a.sizes()), " and ",
               ShapeToString(b.sizes()));
  }
  const DType dtype = ComputeDType("mm", a, b);
  CheckInner("mm", a, b, -1, -2);
  if (std::optional<Tensor> out = PlainMatmul(a, b)) return *std::move(out);
  return BatchedMatmul(AsMatrix(to(a, dtype), true), AsMatrix(to(b, dtype), false),
                       {a.sizes()[0], b.sizes()[1]});
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (a.dim() != 3 || b.dim() != 3) {
    ThrowError("bmm: expected 3-D tensors, got ", ShapeToString(a.sizes()), " and ",
               ShapeToString(b.sizes()));
  }
  const DType dtype = ComputeDType("bmm", a, b);
  if (a.sizes()[0] != b.sizes()[0]) {
    ThrowError("bmm: batch sizes differ, got ", ShapeToString(a.sizes()), " and ",
               ShapeToString(b.sizes()), " (", a.sizes()[0], " vs ", b.sizes()[0], ")");
  }
  CheckInner("bmm", a, b, -1, -2);
  return BatchedMatmul(AsMatrix(to(a, dtype), true), AsMatrix(to(b, dtype), false),
                       {a.sizes()[0], a.sizes()[1], b.sizes()[2]});
}

Tensor dot(const Tensor& a, const Tensor& b) {
  if (a.dim() != 1 || b.dim() != 1) {
    ThrowError("dot: expected 1-D tensors, got ", ShapeToString(a.sizes()), " and ",
               ShapeToString(b.sizes()));
  }
  const DType dtype = ComputeDType("dot", a, b);
  if (a.sizes()[0] != b.sizes()[0]) {
    ThrowError("dot: size mismatch, got ", ShapeToString(a.sizes()), " and ",
               ShapeToString(b.sizes()), ": both vectors must have the same length");
  }
  return BatchedMatmul(AsMatrix(to(a, dtype), true), AsMatrix(to(b, dtype), false), {});
}

Tensor outer(const Tensor& a, const Tensor& b) {
  if (a.dim() != 1 || b.dim() != 1) {
    ThrowError("outer: expected 1-D tensors, got ", ShapeToString(a.sizes()), " and ",
               ShapeToString(b.sizes()));
  }
  const DType dtype = ComputeDType("outer", a, b);
  // a as an n x 1 column times b as a 1 x m row: a GEMM with inner size 1.
  return BatchedMatmul(AsMatrix(to(a, dtype), false), AsMatrix(to(b, dtype), true),
                       {a.sizes()[0], b.sizes()[0]});
}

Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (x.dim() == 0) {
    ThrowError("linear: input must have at least 1 dimension, got a rank-0 tensor");
  }
  if (weight.dim() != 2) {
    ThrowError("linear: weight must be 2-D [out_features, in_features], got ",
               ShapeToString(weight.sizes()));
  }
  DType dtype = ComputeDType("linear", x, weight);
  if (bias) {
    if (bias->dtype() == kBool) {
      ThrowError("linear: bool tensors are not supported, got a bool bias ",
                 ShapeToString(bias->sizes()));
    }
    dtype = PromoteTypes(dtype, bias->dtype());
  }
  const int64_t in = x.sizes()[x.dim() - 1];
  if (in != weight.sizes()[1]) {
    ThrowError("linear: size mismatch, input ", ShapeToString(x.sizes()), " has ", in,
               " features (dim -1) but weight ", ShapeToString(weight.sizes()), " expects ",
               weight.sizes()[1], " (dim 1)");
  }
  Shape out_shape(x.sizes().begin(), x.sizes().end() - 1);
  out_shape.push_back(weight.sizes()[0]);
  if (bias) {
    const Shape b = BroadcastShapes("linear", out_shape, bias->sizes());
    if (!std::equal(b.begin(), b.end(), out_shape.begin(), out_shape.end())) {
      ThrowError("linear: bias of shape ", ShapeToString(bias->sizes()),
                 " does not broadcast to the output shape ", ShapeToString(out_shape));
    }
  }
  // x @ weight^T: the transpose is a column-major view of weight, never copied.
  MatrixArg w = AsMatrix(to(weight, dtype), true);
  std::swap(w.rows, w.cols);
  std::swap(w.rs, w.cs);
  Tensor out = BatchedMatmul(AsMatrix(to(x, dtype), true), std::move(w), out_shape);
  if (bias && out.numel() > 0) {
    const Tensor bt = to(*bias, dtype);
    VisitDType(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, int64_t>) {
        internal::BinaryLoop<T, T>(out, out, bt, [](const auto& o, const auto& v) {
          return o.binaryExpr(v, [](int64_t p, int64_t q) {  // wraps, as the product does
            return static_cast<int64_t>(static_cast<uint64_t>(p) + static_cast<uint64_t>(q));
          });
        });
      } else if constexpr (!std::is_same_v<T, bool>) {
        // add_'s vector loop (vecmath at the chosen capability: a bias row repeats along
        // the leading dims), the same sums as o + v element by element.
        kernels::add_(out, bt);
      }
    });
  }
  return out;
}

}  // namespace ft::kernels

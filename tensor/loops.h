// ft/tensor/loops.h  (internal to ft's kernels: the casting copy here, //kernels, jit;
// includes Eigen)
//
// The strided loop machinery every base kernel uses, and the casting copy of tensor/copy.h:
//   - ForEachStrided: walks K strided operands of one shape, collapsing dims that are
//     contiguous in every operand, and hands the innermost run to a callback as
//     (pointers, byte strides, length). A fully contiguous tensor is one call.
//   - UnaryLoop / BinaryLoop: Eigen array maps for one inner run, with a fast path when the
//     run is contiguous (vectorized) or a broadcast scalar (stride 0).
//   - StripLoop / VecMathLoop: array functions (cpu/vecmath.h) over strips of a tensor.
//   - ParallelRun / ParallelBlocks: the split over the intra-op threads (cpu/parallel.h)
//     that keeps every element's result independent of the thread count.
// The input checks kernels share (CheckFloating, ...) are kernels/checks.h.
//
// Invariants: operands have the output's shape already (inputs are expanded with stride 0);
// the callback never sees a wrapper tensor. Eigen types stay inside kernel .cc files
// (house style rule 17): no public header includes this one.
//
// Example (a kernel's body; `out` is contiguous, `in` of out's shape, any strides):
//   internal::UnaryLoop<float, float>(out, in, [](const auto& a) { return a.abs(); });
#ifndef FT_TENSOR_LOOPS_H_
#define FT_TENSOR_LOOPS_H_

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>

#include "Eigen/Core"
#include "cpu/parallel.h"
#include "cpu/vecmath.h"
#include "tensor/error.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace ft::kernels::internal {

// VisitElementBytes calls f(TypeTag<T>{}) with an unsigned integer type of the dtype's
// element size (std::complex<double> for 16 bytes), for kernels that only move elements
// (flip, gather): one instantiation per size serves every dtype, and moving the bits of
// an element is moving the element.
template <typename F>
decltype(auto) VisitElementBytes(DType dtype, F&& f) {
  switch (ItemSize(dtype)) {
    case 1:
      return f(TypeTag<uint8_t>{});
    case 2:
      return f(TypeTag<uint16_t>{});
    case 4:
      return f(TypeTag<uint32_t>{});
    case 8:
      return f(TypeTag<uint64_t>{});
    default:
      break;
  }
  return f(TypeTag<std::complex<double>>{});
}

template <typename T>
using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>, Eigen::Unaligned>;
template <typename T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>, Eigen::Unaligned>;
template <typename T>
using StridedMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>, Eigen::Unaligned,
                              Eigen::InnerStride<Eigen::Dynamic>>;
template <typename T>
using ConstStridedMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>, Eigen::Unaligned,
                                   Eigen::InnerStride<Eigen::Dynamic>>;
template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// StrideMul and OffsetAdd are the geometry arithmetic of views. For a tensor with elements,
// every index times its stride, and the offset plus it, stays inside the storage, so nothing
// overflows. A tensor without elements may carry any strides (none is ever followed:
// ContiguousStrides of [0, 2^62, 2^62] saturates at INT64_MAX, and a view of it multiplies
// again), so there the arithmetic saturates instead of overflowing, which is undefined
// behaviour (ops_fuzzer under UBSan; split and chunk in transforms_fuzzer). Results for
// tensors with elements are unchanged.
inline int64_t StrideMul(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}

inline int64_t OffsetAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b < 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
}

// Operand: a strided view in bytes, as ForEachStrided consumes it.
struct Operand {
  char* data;
  Shape byte_strides;
};

// MakeOperand describes `t` (dense) viewed with shape `shape` (t's own shape or a shape it
// broadcasts to: missing leading dims and size-1 dims get stride 0).
inline Operand MakeOperand(const Tensor& t, IntArrayRef shape) {
  FT_CHECK(t.is_dense());
  Operand op;
  op.data = static_cast<char*>(t.impl()->raw_data());
  op.byte_strides.assign(shape.size(), 0);
  const int64_t item = ItemSize(t.dtype());
  const size_t lead = shape.size() - static_cast<size_t>(t.dim());
  FT_CHECK(static_cast<size_t>(t.dim()) <= shape.size());
  // An empty tensor's strides are never used, and may be anything (a view of an empty
  // tensor can carry a stride near INT64_MAX, which times the item size overflows): its
  // byte strides stay 0.
  const bool empty = t.numel() == 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t size = t.sizes()[d];
    FT_CHECK(size == shape[lead + d] || size == 1);
    op.byte_strides[lead + d] = size == 1 || empty ? 0 : t.strides()[d] * item;
  }
  return op;
}

// ForEachStrided calls inner(ptrs, byte_strides, n) for every innermost run of `shape`.
// Operand 0 is conventionally the output.
template <size_t K, typename Inner>
void ForEachStrided(IntArrayRef shape, const std::array<Operand, K>& ops, Inner&& inner) {
  const int64_t total = Numel(shape);
  if (total == 0) return;
  // The fixed arrays below hold the collapsed dims: a non-empty tensor has at most 63 dims
  // of size >= 2 (2^63 elements), and size-1 dims are dropped before they are stored.
  // Collapse: drop size-1 dims, merge dim i into i+1 when every operand is contiguous
  // across the pair.
  int64_t sizes[64];
  int64_t strides[K][64];
  int rank = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (rank > 0) {
      bool mergeable = true;
      for (size_t k = 0; k < K; ++k) {
        if (strides[k][rank - 1] != ops[k].byte_strides[d] * shape[d]) mergeable = false;
      }
      if (mergeable) {
        sizes[rank - 1] *= shape[d];
        for (size_t k = 0; k < K; ++k) strides[k][rank - 1] = ops[k].byte_strides[d];
        continue;
      }
    }
    sizes[rank] = shape[d];
    for (size_t k = 0; k < K; ++k) strides[k][rank] = ops[k].byte_strides[d];
    ++rank;
  }
  std::array<char*, K> ptrs;
  std::array<int64_t, K> inner_strides;
  for (size_t k = 0; k < K; ++k) ptrs[k] = ops[k].data;
  if (rank == 0) {
    inner_strides.fill(0);
    inner(ptrs, inner_strides, int64_t{1});
    return;
  }
  const int64_t n = sizes[rank - 1];
  for (size_t k = 0; k < K; ++k) inner_strides[k] = strides[k][rank - 1];
  const int outer_rank = rank - 1;
  int64_t index[64] = {0};
  const int64_t outer_total = total / n;
  for (int64_t it = 0; it < outer_total; ++it) {
    inner(ptrs, inner_strides, n);
    // Odometer step over the outer dims.
    for (int d = outer_rank - 1; d >= 0; --d) {
      if (++index[d] < sizes[d]) {
        for (size_t k = 0; k < K; ++k) ptrs[k] += strides[k][d];
        break;
      }
      index[d] = 0;
      for (size_t k = 0; k < K; ++k) ptrs[k] -= strides[k][d] * (sizes[d] - 1);
    }
  }
}

// kElementwiseGrain: elements per chunk below which elementwise work is not split over the
// intra-op threads (NOTE: [Intra-op threads] in cpu/parallel.h): ~20 us of an add, so the
// pool's hand-off (a few us) never costs more than it saves.
inline constexpr int64_t kElementwiseGrain = 65536;

// ParallelRun calls run(begin, end) over [0, total) of a contiguous output `out`, split over
// the intra-op threads at 64-byte boundaries of `out`: every element goes through the same
// path (Eigen's packet loop, or its scalar head or tail) as in one pass, so the results are
// bit-identical to one thread. Inline below two grains.
template <typename Out, typename Run>
void ParallelRun(const Out* out, int64_t total, Run&& run) {
  if (total < 2 * kElementwiseGrain) {  // the common small op: a direct call, nothing else
    run(int64_t{0}, total);
    return;
  }
  ::ft::internal::ParallelFor(total, kElementwiseGrain, 64 / static_cast<int64_t>(sizeof(Out)),
                              ::ft::internal::AlignmentPhase(out, sizeof(Out)), run);
}

// ParallelBlocks calls run(first, last) over the blocks [0, blocks) of `block` elements
// each: whole blocks per thread, so each block is computed exactly as in one pass.
template <typename Run>
void ParallelBlocks(int64_t blocks, int64_t block, Run&& run) {
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(block, 1));
  if (blocks < 2 * grain) {
    run(int64_t{0}, blocks);
    return;
  }
  ::ft::internal::ParallelFor(blocks, grain, 1, 0, run);
}

// UnaryKernel writes out[i] = f(in)[i] for each run. `f` takes an Eigen array expression and
// returns an expression of the output type.
template <typename In, typename Out, typename F>
void UnaryLoop(const Tensor& out, const Tensor& in, F&& f) {
  // Fast path: both contiguous with the same number of elements, so element i of one is
  // element i of the other (one Eigen expression, no loop set-up).
  const int64_t total = out.numel();
  if (out.is_contiguous() && in.is_contiguous() && in.numel() == total) {
    if (total == 0) return;
    Out* po = static_cast<Out*>(out.impl()->raw_data());
    const In* pi = static_cast<const In*>(in.impl()->raw_data());
    ParallelRun(po, total, [&](int64_t b, int64_t e) {
      ArrayMap<Out>(po + b, e - b) = f(ConstArrayMap<In>(pi + b, e - b));
    });
    return;
  }
  std::array<Operand, 2> ops = {MakeOperand(out, out.sizes()), MakeOperand(in, out.sizes())};
  ForEachStrided<2>(out.sizes(), ops, [&](const std::array<char*, 2>& p,
                                          const std::array<int64_t, 2>& s, int64_t n) {
    if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      ArrayMap<Out> o(reinterpret_cast<Out*>(p[0]), n);
      ConstArrayMap<In> a(reinterpret_cast<const In*>(p[1]), n);
      o = f(a);
    } else {
      StridedMap<Out> o(reinterpret_cast<Out*>(p[0]), n,
                        Eigen::InnerStride<>(s[0] / static_cast<int64_t>(sizeof(Out))));
      ConstStridedMap<In> a(reinterpret_cast<const In*>(p[1]), n,
                            Eigen::InnerStride<>(s[1] / static_cast<int64_t>(sizeof(In))));
      o = f(a);
    }
  });
}

// StripLoop writes out = strip(in) for an elementwise `strip(const T* in, T* o, int64_t n)`
// over contiguous arrays (o[i] depends on in[i] alone; `in` may equal `o`), T float or
// double, `in` of out's shape (any strides) and `out` contiguous. Contiguous input is one
// strip call per thread's range; a strided run is gathered into a small buffer a block at a
// time. A strip whose elements take the same path whatever n and alignment (vecmath.h's
// functions do) gives results independent of the layout and the thread count.
template <typename T, typename Strip>
void StripLoop(const Tensor& out, const Tensor& in, Strip&& strip) {
  const int64_t total = out.numel();
  if (total == 0) return;
  T* po = static_cast<T*>(out.impl()->raw_data());
  if (in.is_contiguous() && in.numel() == total) {
    const T* pi = static_cast<const T*>(in.impl()->raw_data());
    ParallelRun(po, total, [&](int64_t b, int64_t e) { strip(pi + b, po + b, e - b); });
    return;
  }
  std::array<Operand, 2> ops = {MakeOperand(out, out.sizes()), MakeOperand(in, out.sizes())};
  ForEachStrided<2>(out.sizes(), ops, [&](const std::array<char*, 2>& p,
                                          const std::array<int64_t, 2>& s, int64_t n) {
    T* o = reinterpret_cast<T*>(p[0]);  // out is contiguous: its runs are too
    if (s[1] == static_cast<int64_t>(sizeof(T))) {
      strip(reinterpret_cast<const T*>(p[1]), o, n);
      return;
    }
    constexpr int64_t kBlock = 256;
    T buffer[kBlock];
    for (int64_t start = 0; start < n; start += kBlock) {
      const int64_t m = std::min(kBlock, n - start);
      const char* a = p[1] + start * s[1];
      for (int64_t i = 0; i < m; ++i) std::memcpy(&buffer[i], a + i * s[1], sizeof(T));
      strip(static_cast<const T*>(buffer), o + start, m);
    }
  });
}

// VecMathLoop writes out = fn(in) with cpu/vecmath.h's vector functions (StripLoop).
template <typename T>
void VecMathLoop(vecmath::Fn fn, const Tensor& out, const Tensor& in) {
  StripLoop<T>(out, in, [fn](const T* a, T* o, int64_t n) { vecmath::Apply(fn, a, o, n); });
}

// IsTrailingBlock: x's sizes, without leading 1s, are the trailing sizes of `sizes` (x
// broadcasts to `sizes` by repeating its whole block along the leading dims).
inline bool IsTrailingBlock(const Tensor& x, IntArrayRef sizes) {
  IntArrayRef own = x.sizes();
  while (!own.empty() && own.front() == 1) own.remove_prefix(1);
  if (own.size() > sizes.size()) return false;
  return std::equal(own.begin(), own.end(), sizes.end() - own.size());
}

// BinaryLoop writes out = f(a, b) where a and b are already of the compute type In and
// broadcast to out's shape. Fast paths: both contiguous, or one a broadcast scalar run.
template <typename In, typename Out, typename F>
void BinaryLoop(const Tensor& out, const Tensor& a, const Tensor& b, F&& f) {
  // Fast paths for contiguous operands: equal element counts mean equal layouts (a
  // broadcast operand always has fewer elements), and a one-element operand is a constant.
  const int64_t total = out.numel();
  if (out.is_contiguous() && a.is_contiguous() && b.is_contiguous()) {
    if (total == 0) return;
    Out* po = static_cast<Out*>(out.impl()->raw_data());
    const In* pa = static_cast<const In*>(a.impl()->raw_data());
    const In* pb = static_cast<const In*>(b.impl()->raw_data());
    const int64_t na = a.numel(), nb = b.numel();
    using Constant = Eigen::Array<In, Eigen::Dynamic, 1>;
    if (na == total && nb == total) {
      ParallelRun(po, total, [&](int64_t s, int64_t e) {
        ArrayMap<Out>(po + s, e - s) = f(ConstArrayMap<In>(pa + s, e - s),
                                         ConstArrayMap<In>(pb + s, e - s));
      });
      return;
    }
    if (na == total && nb == 1) {
      ParallelRun(po, total, [&](int64_t s, int64_t e) {
        ArrayMap<Out>(po + s, e - s) = f(ConstArrayMap<In>(pa + s, e - s),
                                         Constant::Constant(e - s, *pb));
      });
      return;
    }
    if (na == 1 && nb == total) {
      ParallelRun(po, total, [&](int64_t s, int64_t e) {
        ArrayMap<Out>(po + s, e - s) = f(Constant::Constant(e - s, *pa),
                                         ConstArrayMap<In>(pb + s, e - s));
      });
      return;
    }
    // One operand repeats along the leading dims (a row scale, a bias): equal trailing
    // shapes, so the output is whole copies of that operand's block, each one Eigen loop.
    if (na == total && nb > 1 && IsTrailingBlock(b, out.sizes())) {
      ParallelBlocks(total / nb, nb, [&](int64_t first, int64_t last) {
        for (int64_t r = first * nb; r < last * nb; r += nb) {
          ArrayMap<Out>(po + r, nb) = f(ConstArrayMap<In>(pa + r, nb), ConstArrayMap<In>(pb, nb));
        }
      });
      return;
    }
    if (nb == total && na > 1 && IsTrailingBlock(a, out.sizes())) {
      ParallelBlocks(total / na, na, [&](int64_t first, int64_t last) {
        for (int64_t r = first * na; r < last * na; r += na) {
          ArrayMap<Out>(po + r, na) = f(ConstArrayMap<In>(pa, na), ConstArrayMap<In>(pb + r, na));
        }
      });
      return;
    }
  }
  std::array<Operand, 3> ops = {MakeOperand(out, out.sizes()), MakeOperand(a, out.sizes()),
                                MakeOperand(b, out.sizes())};
  constexpr int64_t kIn = sizeof(In);
  constexpr int64_t kOut = sizeof(Out);
  ForEachStrided<3>(out.sizes(), ops, [&](const std::array<char*, 3>& p,
                                          const std::array<int64_t, 3>& s, int64_t n) {
    const In* pa = reinterpret_cast<const In*>(p[1]);
    const In* pb = reinterpret_cast<const In*>(p[2]);
    if (s[0] == kOut) {
      ArrayMap<Out> o(reinterpret_cast<Out*>(p[0]), n);
      if (s[1] == kIn && s[2] == kIn) {
        o = f(ConstArrayMap<In>(pa, n), ConstArrayMap<In>(pb, n));
        return;
      }
      if (s[1] == kIn && s[2] == 0) {
        o = f(ConstArrayMap<In>(pa, n), Eigen::Array<In, Eigen::Dynamic, 1>::Constant(n, *pb));
        return;
      }
      if (s[1] == 0 && s[2] == kIn) {
        o = f(Eigen::Array<In, Eigen::Dynamic, 1>::Constant(n, *pa), ConstArrayMap<In>(pb, n));
        return;
      }
    }
    StridedMap<Out> o(reinterpret_cast<Out*>(p[0]), n, Eigen::InnerStride<>(s[0] / kOut));
    o = f(ConstStridedMap<In>(pa, n, Eigen::InnerStride<>(s[1] / kIn)),
          ConstStridedMap<In>(pb, n, Eigen::InnerStride<>(s[2] / kIn)));
  });
}

}  // namespace ft::kernels::internal

#endif  // FT_TENSOR_LOOPS_H_

// ft/cpu/small_gemm.h (internal to //kernels)
//
// SmallGemm: C = A B for small float matrices, without Eigen's GEMM machinery. At sizes
// like 16 x 16 x 16 (a Jacobian's basis pushed through a 16 x 16 weight) Eigen's general
// product spends a third of its time zeroing C and packing both operands into panels; here
// B's rows are read in place and each tile of C is accumulated in registers and stored
// once. Measured on 16 x 16 x 16 float32 (-c opt, SSE2): 162-169 ns against Eigen's 231
// with B row-major, and 185-187 against 288-294 with B column-major (transposed into a
// small buffer first, in registers). With B column-major the two are level at 24 x 24 x 24
// and Eigen's cache blocking wins beyond, so kSmallGemmMaxWork is that size.
// A tall, narrow product (many rows of A through a small B: a batch of examples through a
// small layer, as vmap makes of a per-example product) stays faster here at any height,
// since B stays in the first-level cache and Eigen packs all of A: at AVX-512, 64 x 16 x 16
// takes 465 ns against Eigen's 816, 1024 x 16 x 16 7.5 us against 12.8, 512 x 32 x 32 12.3
// against 15.0; at 64 x 64 x 64 the two are level. So a B of at most kSmallGemmMaxPanel
// elements (32 x 32) takes this path whatever m is (UseSmallGemm). A batched product then
// rounds as each example's own product does.
//
// Summation order: C(i, j) = (((A(i,0) B(0,j) + A(i,1) B(1,j)) + ...) in k order, each
// product rounded then added (no fused multiply-add), the order a loop computes.
//
// Invariants: C is contiguous row-major m x n and aliases neither operand; A is any strided
// m x k matrix; B is k x n with unit column stride (SmallGemmRowB) or unit row stride
// (SmallGemmColB). T is float or double.
//
// One copy per vector unit: cpu/gemm_isa-inl.h compiles this header into each of
// gemm_{sse2,avx2}.cc with FT_SMALL_GEMM_ISA naming an inline namespace of its own, so the
// copies built for different vector units are different symbols. Because every element is
// the same k-ordered sum of rounded products at any packet width (those files are compiled
// with -ffp-contract=off), the copies agree bit for bit.
//
// Example:
//   SmallGemmRowB<float>(a, /*ars=*/16, /*acs=*/1, b, /*brs=*/16, c, 16, 16, 16);
#ifndef FT_CPU_SMALL_GEMM_H_
#define FT_CPU_SMALL_GEMM_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "Eigen/Core"

#ifndef FT_SMALL_GEMM_ISA
#define FT_SMALL_GEMM_ISA baseline
#endif

// Packet types (__m128, __m256, ...) are template arguments here; GCC warns that their
// alignment attribute is dropped there, harmlessly (Eigen's own headers silence the same).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"

namespace ft::kernels::internal {
inline namespace FT_SMALL_GEMM_ISA {

// The products the GEMM tables (gemm_isa-inl.h) give to SmallGemm: m * k * n at most this
// (24 x 24 x 24) ...
inline constexpr int64_t kSmallGemmMaxWork = 13824;
// ... and any product whose B has at most this many elements (32 x 32), whatever m is.
inline constexpr int64_t kSmallGemmMaxPanel = 1024;

inline bool UseSmallGemm(int64_t m, int64_t k, int64_t n) {
  return m * k * n <= kSmallGemmMaxWork || k * n <= kSmallGemmMaxPanel;
}

template <typename T>
using GemmPacket = typename Eigen::internal::packet_traits<T>::type;
template <typename T>
inline constexpr int64_t kGemmPacketSize = Eigen::internal::packet_traits<T>::size;

// GemmTile computes the R x (KP packets) tile of C at c from the R rows of A at a and the
// columns of B at b. Every accumulator is its own variable: GCC keeps an array of packets in
// memory, which costs 3x. R * KP = 8 or 4 independent sums hide the add latency.
template <typename T, typename P, int R, int KP>
inline void GemmTile(const T* a, int64_t ars, int64_t acs, const T* b, int64_t brs, T* c,
                     int64_t ldc, int64_t k) {
  namespace ei = Eigen::internal;
  constexpr int64_t W = ei::unpacket_traits<P>::size;
  static_assert((KP == 4 && (R == 1 || R == 2)) || (KP == 1 && (R == 1 || R == 4)));
  const P zero = ei::pset1<P>(T(0));
  if constexpr (KP == 4) {
    P c0 = zero, c1 = zero, c2 = zero, c3 = zero, d0 = zero, d1 = zero, d2 = zero, d3 = zero;
    for (int64_t kk = 0; kk < k; ++kk, b += brs) {
      const P b0 = ei::ploadu<P>(b), b1 = ei::ploadu<P>(b + W), b2 = ei::ploadu<P>(b + 2 * W),
              b3 = ei::ploadu<P>(b + 3 * W);
      const P x = ei::pset1<P>(a[kk * acs]);
      c0 = ei::padd(c0, ei::pmul(x, b0));
      c1 = ei::padd(c1, ei::pmul(x, b1));
      c2 = ei::padd(c2, ei::pmul(x, b2));
      c3 = ei::padd(c3, ei::pmul(x, b3));
      if constexpr (R == 2) {
        const P y = ei::pset1<P>(a[ars + kk * acs]);
        d0 = ei::padd(d0, ei::pmul(y, b0));
        d1 = ei::padd(d1, ei::pmul(y, b1));
        d2 = ei::padd(d2, ei::pmul(y, b2));
        d3 = ei::padd(d3, ei::pmul(y, b3));
      }
    }
    ei::pstoreu(c, c0);
    ei::pstoreu(c + W, c1);
    ei::pstoreu(c + 2 * W, c2);
    ei::pstoreu(c + 3 * W, c3);
    if constexpr (R == 2) {
      ei::pstoreu(c + ldc, d0);
      ei::pstoreu(c + ldc + W, d1);
      ei::pstoreu(c + ldc + 2 * W, d2);
      ei::pstoreu(c + ldc + 3 * W, d3);
    }
  } else {
    P c0 = zero, c1 = zero, c2 = zero, c3 = zero;
    for (int64_t kk = 0; kk < k; ++kk, b += brs) {
      const P b0 = ei::ploadu<P>(b);
      c0 = ei::padd(c0, ei::pmul(ei::pset1<P>(a[kk * acs]), b0));
      if constexpr (R == 4) {
        c1 = ei::padd(c1, ei::pmul(ei::pset1<P>(a[ars + kk * acs]), b0));
        c2 = ei::padd(c2, ei::pmul(ei::pset1<P>(a[2 * ars + kk * acs]), b0));
        c3 = ei::padd(c3, ei::pmul(ei::pset1<P>(a[3 * ars + kk * acs]), b0));
      }
    }
    ei::pstoreu(c, c0);
    if constexpr (R == 4) {
      ei::pstoreu(c + ldc, c1);
      ei::pstoreu(c + 2 * ldc, c2);
      ei::pstoreu(c + 3 * ldc, c3);
    }
  }
}

// GemmColumns computes a block of KP packets of columns of C for every row, R rows at a time.
template <typename T, typename P, int R, int KP>
inline void GemmColumns(const T* a, int64_t ars, int64_t acs, const T* b, int64_t brs, T* c,
                        int64_t ldc, int64_t m, int64_t k) {
  int64_t i = 0;
  for (; i + R <= m; i += R) {
    GemmTile<T, P, R, KP>(a + i * ars, ars, acs, b, brs, c + i * ldc, ldc, k);
  }
  for (; i < m; ++i) GemmTile<T, P, 1, KP>(a + i * ars, ars, acs, b, brs, c + i * ldc, ldc, k);
}

// SmallGemmRowB: c (m x n, row-major, contiguous) = a (element (i, kk) at a[i * ars + kk *
// acs]) times b (element (kk, j) at b[kk * brs + j]).
template <typename T>
void SmallGemmRowB(const T* a, int64_t ars, int64_t acs, const T* b, int64_t brs, T* c,
                   int64_t m, int64_t k, int64_t n) {
  using P = GemmPacket<T>;
  using Half = typename Eigen::internal::unpacket_traits<P>::half;  // P itself at SSE2
  constexpr int64_t W = kGemmPacketSize<T>;
  constexpr int64_t WH = Eigen::internal::unpacket_traits<Half>::size;
  int64_t j = 0;
  for (; j + 4 * W <= n; j += 4 * W) {
    GemmColumns<T, P, 2, 4>(a, ars, acs, b + j, brs, c + j, n, m, k);
  }
  for (; j + W <= n; j += W) GemmColumns<T, P, 4, 1>(a, ars, acs, b + j, brs, c + j, n, m, k);
  if constexpr (WH < W) {  // a half packet of columns: 4 floats at AVX2 fill a 4 x 4 product
    for (; j + WH <= n; j += WH) {
      GemmColumns<T, Half, 4, 1>(a, ars, acs, b + j, brs, c + j, n, m, k);
    }
  }
  for (; j < n; ++j) {  // the last columns, one dot product each
    for (int64_t i = 0; i < m; ++i) {
      T sum = T(0);
      for (int64_t kk = 0; kk < k; ++kk) sum += a[i * ars + kk * acs] * b[kk * brs + j];
      c[i * n + j] = sum;
    }
  }
}

// TransposeBlock stores the W x W block whose column q starts at src + q * src_stride as
// rows of dst (row q at dst + q * dst_stride). The packet indices are constants, so the
// block stays in registers: a loop over them would go through the stack.
template <typename T, size_t... Q>
inline void TransposeBlock(const T* src, int64_t src_stride, T* dst, int64_t dst_stride,
                           std::index_sequence<Q...>) {
  namespace ei = Eigen::internal;
  using P = GemmPacket<T>;
  ei::PacketBlock<P, sizeof...(Q)> block;
  ((block.packet[Q] = ei::ploadu<P>(src + static_cast<int64_t>(Q) * src_stride)), ...);
  ei::ptranspose(block);
  (ei::pstoreu(dst + static_cast<int64_t>(Q) * dst_stride, block.packet[Q]), ...);
}

// SmallGemmColB: as SmallGemmRowB, with element (kk, j) of b at b[kk + j * bcs]. B is first
// transposed, W x W packets at a time, into this thread's buffer.
template <typename T>
void SmallGemmColB(const T* a, int64_t ars, int64_t acs, const T* b, int64_t bcs, T* c,
                   int64_t m, int64_t k, int64_t n) {
  constexpr int64_t W = kGemmPacketSize<T>;
  thread_local std::vector<T> buffer;
  if (static_cast<int64_t>(buffer.size()) < k * n) buffer.resize(k * n);
  T* bt = buffer.data();  // bt[kk * n + j] = B(kk, j)
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    int64_t kk = 0;
    for (; kk + W <= k; kk += W) {
      TransposeBlock(b + j * bcs + kk, bcs, bt + kk * n + j, n,
                     std::make_index_sequence<static_cast<size_t>(W)>());
    }
    for (; kk < k; ++kk) {
      for (int64_t q = 0; q < W; ++q) bt[kk * n + j + q] = b[(j + q) * bcs + kk];
    }
  }
  for (; j < n; ++j) {
    for (int64_t kk = 0; kk < k; ++kk) bt[kk * n + j] = b[j * bcs + kk];
  }
  SmallGemmRowB(a, ars, acs, bt, n, c, m, k, n);
}

}  // namespace FT_SMALL_GEMM_ISA
}  // namespace ft::kernels::internal

#pragma GCC diagnostic pop

#endif  // FT_CPU_SMALL_GEMM_H_

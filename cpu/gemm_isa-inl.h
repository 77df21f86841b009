// ft/cpu/gemm_isa-inl.h  (internal to //cpu:gemm)
//
// The body of one capability's GEMM table, included once by each of gemm_sse2.cc,
// gemm_avx2.cc and gemm_avx512.cc, which are compiled for their vector unit. The includer
// defines:
//   FT_GEMM_ISA          the name of this copy (sse2, avx2, avx512), which is also the inline
//                        namespace of its SmallGemm (small_gemm.h);
//   FT_GEMM_TABLE        the table to define (kSse2GemmTable, ...);
//   FT_GEMM_OWN_SMALL    1 to use this file's SmallGemm, 0 to use the AVX2 file's except
//                        for outputs wide enough for this file's packets (SmallProduct);
// and, for AVX2 and AVX-512, renames Eigen's namespace (#define Eigen FtEigenAvx2) before
// this include, so that this copy's Eigen instantiations do not merge with another
// capability's at link time (where one copy would run the other's instructions).
#include <cstdint>
#include <cstring>
#include <vector>

// Angle brackets: found through Eigen's -isystem path, not Bazel's -iquote one, so Eigen's
// AVX headers count as system headers (clang warns about an unused variable in them).
#include <Eigen/Core>
#include "cpu/gemm_table.h"

#define FT_SMALL_GEMM_ISA FT_GEMM_ISA
#include "cpu/small_gemm.h"

namespace ft::kernels::internal {
inline namespace FT_GEMM_ISA {
namespace {

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ColMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <typename T>
using ConstRowMap = Eigen::Map<const RowMajorMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <typename T>
using ConstColMap = Eigen::Map<const ColMajorMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

// WithMap calls f with p's rows x cols matrix as an Eigen map with unit inner stride: rows
// (cs == 1) or columns (rs == 1) when one stride is 1 or the other dim is 1, else a
// row-major copy in `copy`.
template <typename T, typename F>
void WithMap(const T* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
             std::vector<T>& copy, F&& f) {
  if (cs == 1 || cols == 1) {
    f(ConstRowMap<T>(p, rows, cols, Eigen::OuterStride<>(rs)));
  } else if (rs == 1 || rows == 1) {
    f(ConstColMap<T>(p, rows, cols, Eigen::OuterStride<>(cs)));
  } else {
    copy.resize(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) copy[r * cols + c] = p[r * rs + c * cs];
    }
    f(ConstRowMap<T>(copy.data(), rows, cols, Eigen::OuterStride<>(cols)));
  }
}

// SmallProduct runs SmallGemm when b has a unit stride; false when it does not.
// Without a SmallGemm of its own (AVX-512), this copy's packets still serve outputs wide
// enough for them: whole packets, and at most a half packet left (n = 16, 24, 32, ... floats:
// half the tiles of 256-bit packets); narrower or odd widths go to the AVX2 copy, whose
// packets fit them. Every copy gives the same bits, so the choice changes speed only.
template <typename T>
bool SmallProduct(int64_t m, int64_t k, int64_t n, const T* a, int64_t ars, int64_t acs,
                  const T* b, int64_t brs, int64_t bcs, T* c) {
  if (bcs != 1 && brs != 1 && n != 1) return false;
#if !FT_GEMM_OWN_SMALL
  constexpr int64_t W = kGemmPacketSize<T>;
  if (n < W || n % (W / 2) != 0) {
    SmallGemmAvx2(m, k, n, a, ars, acs, b, brs, bcs, c);
    return true;
  }
#endif
  if (bcs == 1 || n == 1) {
    SmallGemmRowB(a, ars, acs, b, brs, c, m, k, n);
  } else {
    SmallGemmColB(a, ars, acs, b, bcs, c, m, k, n);
  }
  return true;
}

template <typename T>
void GemmImpl(int64_t m, int64_t k, int64_t n, const T* a, int64_t ars, int64_t acs,
              const T* b, int64_t brs, int64_t bcs, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, sizeof(T) * n);
    return;
  }
  if (UseSmallGemm(m, k, n) && ldc == n &&
      SmallProduct(m, k, n, a, ars, acs, b, brs, bcs, c)) {
    return;
  }
  Eigen::Map<RowMajorMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>> cm(
      c, m, n, Eigen::OuterStride<>(ldc));
  std::vector<T> a_copy, b_copy;
  WithMap(a, m, k, ars, acs, a_copy, [&](const auto& am) {
    WithMap(b, k, n, brs, bcs, b_copy, [&](const auto& bm) { cm.noalias() = am * bm; });
  });
}

}  // namespace
}  // namespace FT_GEMM_ISA

#if FT_GEMM_OWN_SMALL && defined(FT_GEMM_EXPORT_SMALL)
// The AVX-512 table's small products (gemm_table.h).
void SmallGemmAvx2(int64_t m, int64_t k, int64_t n, const float* a, int64_t ars, int64_t acs,
                   const float* b, int64_t brs, int64_t bcs, float* c) {
  FT_GEMM_ISA::SmallProduct(m, k, n, a, ars, acs, b, brs, bcs, c);
}
void SmallGemmAvx2(int64_t m, int64_t k, int64_t n, const double* a, int64_t ars,
                   int64_t acs, const double* b, int64_t brs, int64_t bcs, double* c) {
  FT_GEMM_ISA::SmallProduct(m, k, n, a, ars, acs, b, brs, bcs, c);
}
#endif

const GemmTable FT_GEMM_TABLE = {&FT_GEMM_ISA::GemmImpl<float>, &FT_GEMM_ISA::GemmImpl<double>};

}  // namespace ft::kernels::internal

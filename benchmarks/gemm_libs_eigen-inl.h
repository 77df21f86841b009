// ft/benchmarks/gemm_libs_eigen-inl.h: Eigen's GEMM compiled for one vector unit, included by
// gemm_libs_eigen_avx2.cc and gemm_libs_eigen_avx512.cc (see //benchmarks:gemm_libs).
//
// Each includer compiles this with its own -m flags and first renames Eigen's namespace
// (#define Eigen FtEigen<Isa>), so its template instantiations are symbols of their own: two
// copies of one inline Eigen function built for different vector units would otherwise be
// merged by the linker, and one of them would run the other's instructions.
//
// Defines, in namespace ft_bench, FT_GEMM_LIBS_NAME(F32) and FT_GEMM_LIBS_NAME(F64):
// c (m x n) = a (m x k) b (k x n), all row-major and contiguous.
#include <cstdint>

// Angle brackets: found through Eigen's -isystem path, not Bazel's -iquote one, so Eigen's
// AVX headers count as system headers (clang warns about an unused variable in them).
#include <Eigen/Core>

namespace ft_bench {
namespace {

template <typename T>
using RowMajor = FtEigenNamespace::Matrix<T, FtEigenNamespace::Dynamic, FtEigenNamespace::Dynamic,
                                          FtEigenNamespace::RowMajor>;

template <typename T>
void EigenGemm(const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n) {
  FtEigenNamespace::Map<RowMajor<T>> cm(c, m, n);
  cm.noalias() = FtEigenNamespace::Map<const RowMajor<T>>(a, m, k) *
                 FtEigenNamespace::Map<const RowMajor<T>>(b, k, n);
}

}  // namespace

void FT_GEMM_LIBS_NAME(F32)(const float* a, const float* b, float* c, int64_t m, int64_t k,
                            int64_t n) {
  EigenGemm(a, b, c, m, k, n);
}
void FT_GEMM_LIBS_NAME(F64)(const double* a, const double* b, double* c, int64_t m, int64_t k,
                            int64_t n) {
  EigenGemm(a, b, c, m, k, n);
}

}  // namespace ft_bench

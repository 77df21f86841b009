#include "cpu/gemm.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/cpu_capability.h"
#include "gtest/gtest.h"

namespace ft::kernels::internal {
namespace {

class GemmTest : public ::testing::Test {
 protected:
  void TearDown() override { SetCpuCapability(capability_); }
  CpuCapability capability_ = ActiveCpuCapability();
};

// A strided operand: rows x cols at data[r * rs + c * cs] inside `storage`.
template <typename T>
struct Strided {
  std::vector<T> storage;
  int64_t rows = 0, cols = 0, rs = 0, cs = 0;
  T at(int64_t r, int64_t c) const { return storage[r * rs + c * cs]; }
};

enum class Layout { kRowMajor, kColMajor, kPadded, kGeneral };

// MakeOperand fills a rows x cols operand of `layout` with values in [-1, 1).
template <typename T>
Strided<T> MakeOperand(int64_t rows, int64_t cols, Layout layout, std::mt19937_64& rng) {
  Strided<T> m;
  m.rows = rows;
  m.cols = cols;
  switch (layout) {
    case Layout::kRowMajor:
      m.rs = cols;
      m.cs = 1;
      break;
    case Layout::kColMajor:
      m.rs = 1;
      m.cs = rows;
      break;
    case Layout::kPadded:  // a row-major slice of a wider matrix
      m.rs = cols + 3;
      m.cs = 1;
      break;
    case Layout::kGeneral:  // every other column of a column-major matrix: no unit stride
      m.rs = 2;
      m.cs = 2 * rows + 1;
      break;
  }
  const int64_t extent = rows == 0 || cols == 0 ? 1 : (rows - 1) * m.rs + (cols - 1) * m.cs + 1;
  m.storage.assign(static_cast<size_t>(extent), T(0));
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) m.storage[r * m.rs + c * m.cs] = static_cast<T>(uniform(rng));
  }
  return m;
}

// RunAndCheck multiplies a (m x k) by b (k x n) into a c with row stride ldc and compares
// every element with a long double loop: |c - exact| <= k * 4 eps * sum |a| |b| + tiny.
// Elements of c between rows (the padding) must stay untouched.
template <typename T>
std::vector<T> RunAndCheck(const Strided<T>& a, const Strided<T>& b, int64_t ldc,
                           const std::string& what) {
  const int64_t m = a.rows, k = a.cols, n = b.cols;
  const T sentinel = static_cast<T>(12345.0);
  std::vector<T> c(static_cast<size_t>(std::max<int64_t>(m * ldc, 1)), sentinel);
  Gemm(m, k, n, a.storage.data(), a.rs, a.cs, b.storage.data(), b.rs, b.cs, c.data(), ldc);
  const long double eps = std::numeric_limits<T>::epsilon();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const T got = c[i * ldc + j];
      if (j >= n) {
        EXPECT_EQ(got, sentinel) << what << ": padding at (" << i << ", " << j << ") written";
        if (::testing::Test::HasFailure()) return c;
        continue;
      }
      long double exact = 0, magnitude = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const long double p = static_cast<long double>(a.at(i, kk)) * b.at(kk, j);
        exact += p;
        magnitude += std::fabs(p);
      }
      const long double bound = (k + 1) * 4 * eps * magnitude + 1e-30L;
      EXPECT_LE(std::fabs(got - exact), bound)
          << what << ": c(" << i << ", " << j << ") = " << got << ", exact "
          << static_cast<double>(exact);
      if (::testing::Test::HasFailure()) return c;
    }
  }
  return c;
}

constexpr Layout kLayouts[] = {Layout::kRowMajor, Layout::kColMajor, Layout::kPadded,
                               Layout::kGeneral};

template <typename T>
void RandomProductsAtEveryLevel(const char* dtype) {
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int64_t> small(0, 40), large(41, 130);
    const int64_t before = GemmCallCount(level);
    int calls = 0;
    for (int trial = 0; trial < 160; ++trial) {
      // Mostly small shapes (SmallGemm's range, every tail width), some past it (Eigen).
      const bool big = trial % 4 == 3;
      const int64_t m = big ? large(rng) : small(rng);
      const int64_t k = big ? large(rng) : small(rng);
      const int64_t n = big ? large(rng) : small(rng);
      const Layout la = kLayouts[trial % 4], lb = kLayouts[(trial / 4) % 4];
      const int64_t ldc = n + (trial % 3 == 0 ? 5 : 0);
      const std::string what = std::string(dtype) + " at " +
                               std::string(CpuCapabilityName(level)) + ", " +
                               std::to_string(m) + "x" + std::to_string(k) + "x" +
                               std::to_string(n) + ", layouts " +
                               std::to_string(static_cast<int>(la)) + "/" +
                               std::to_string(static_cast<int>(lb)) + ", ldc " +
                               std::to_string(ldc);
      const Strided<T> a = MakeOperand<T>(m, k, la, rng);
      const Strided<T> b = MakeOperand<T>(k, n, lb, rng);
      const std::vector<T> first = RunAndCheck(a, b, ldc, what);
      const std::vector<T> again = RunAndCheck(a, b, ldc, what);
      ASSERT_EQ(first, again) << what << ": not deterministic";
      calls += 2;
    }
    // Every product ran on the level set: a silent fallback to baseline code would not count.
    EXPECT_EQ(GemmCallCount(level) - before, calls) << CpuCapabilityName(level);
  }
}

TEST_F(GemmTest, RandomShapesAndLayoutsMatchALongDoubleLoopAtEveryLevel) {
  RandomProductsAtEveryLevel<float>("float32");
  RandomProductsAtEveryLevel<double>("float64");
}

TEST_F(GemmTest, InnerSizeZeroGivesZerosAndEmptyProductsWriteNothing) {
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    std::vector<float> c(12, 7.0f);
    const float a = 1, b = 1;
    Gemm(3, 0, 4, &a, 0, 1, &b, 4, 1, c.data(), 4);
    EXPECT_EQ(c, std::vector<float>(12, 0.0f)) << CpuCapabilityName(level);
    std::vector<double> d(4, 7.0);
    const double x = 1;
    Gemm(0, 5, 4, &x, 5, 1, &x, 4, 1, d.data(), 4);
    Gemm(4, 5, 0, &x, 5, 1, &x, 0, 1, d.data(), 0);
    EXPECT_EQ(d, std::vector<double>(4, 7.0)) << CpuCapabilityName(level);
  }
}

// SmallGemm sums each element's rounded products in k order at every packet width, so the
// small products agree bit for bit between capabilities (gemm.h); Eigen's blocked GEMM, with
// FMA at AVX2 and above, may not.
TEST_F(GemmTest, SmallProductsAreTheSameBitsAtEveryLevel) {
  std::mt19937_64 rng(11);
  for (const auto& [m, k, n] : std::vector<std::array<int64_t, 3>>{
           {4, 4, 4}, {8, 8, 8}, {16, 16, 16}, {24, 24, 24}, {5, 7, 3}, {17, 9, 33}, {1, 20, 9},
           // wide outputs (AVX-512's own packets) and tall, narrow products (any height)
           {16, 16, 32}, {9, 5, 24}, {70, 16, 16}, {300, 32, 32}, {129, 12, 48}}) {
    for (Layout lb : {Layout::kRowMajor, Layout::kColMajor}) {
      const Strided<float> a = MakeOperand<float>(m, k, Layout::kColMajor, rng);
      const Strided<float> b = MakeOperand<float>(k, n, lb, rng);
      std::vector<std::vector<float>> results;
      for (CpuCapability level : SupportedCpuCapabilities()) {
        SetCpuCapability(level);
        std::vector<float> c(m * n);
        Gemm(m, k, n, a.storage.data(), a.rs, a.cs, b.storage.data(), b.rs, b.cs, c.data(), n);
        results.push_back(c);
      }
      for (size_t i = 1; i < results.size(); ++i) {
        EXPECT_EQ(results[i], results[0]) << m << "x" << k << "x" << n << " level " << i;
      }
    }
  }
}

// A tall product through a small B (vmap of a per-example product) rounds each row as that
// row's own product does, at every level: batching does not change an example's bits.
TEST_F(GemmTest, EachRowOfATallNarrowProductIsItsOwnProduct) {
  std::mt19937_64 rng(12);
  for (const auto& [m, k, n] : std::vector<std::array<int64_t, 3>>{
           {64, 16, 16}, {100, 32, 32}, {40, 7, 5}, {2048, 16, 16}}) {
    const Strided<float> a = MakeOperand<float>(m, k, Layout::kRowMajor, rng);
    const Strided<float> b = MakeOperand<float>(k, n, Layout::kRowMajor, rng);
    for (CpuCapability level : SupportedCpuCapabilities()) {
      SetCpuCapability(level);
      std::vector<float> c(m * n), row(n);
      Gemm(m, k, n, a.storage.data(), a.rs, a.cs, b.storage.data(), b.rs, b.cs, c.data(), n);
      for (int64_t i = 0; i < m; i += 7) {
        Gemm(1, k, n, a.storage.data() + i * a.rs, a.rs, a.cs, b.storage.data(), b.rs, b.cs,
             row.data(), n);
        EXPECT_EQ(row, std::vector<float>(c.begin() + i * n, c.begin() + (i + 1) * n))
            << m << "x" << k << "x" << n << " row " << i << " " << CpuCapabilityName(level);
      }
    }
  }
}

}  // namespace
}  // namespace ft::kernels::internal

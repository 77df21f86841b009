// ft/benchmarks/gemm_libs.cc: ft's GEMM against the specialists Debian packages, one thread.
//
// Issue 22 asked whether ft's hand-written small GEMM (cpu/small_gemm.h) and Eigen's GEMM
// (what ft runs beyond it) should give way to libxsmm 1.17, OpenBLAS 0.3.21 or BLIS 0.9.
// Every figure "<dtype>/<m>x<k>x<n>/<lib>" times c = a b, all row-major and contiguous, on
// one thread, and the run ends with a table of GFLOP/s (2 m k n / median time) per shape:
//   ft            ft::matmul on tensors: what a user gets, framework cost included;
//   small_gemm    cpu/small_gemm.h, ft's kernel up to 24 x 24 x 24 (shapes up to 64);
//   eigen_sse2    Eigen 3.4's GEMM as ft's kernels compile it (x86-64's baseline, SSE2);
//   eigen_avx2    the same source compiled for AVX2 + FMA (gemm_libs_eigen_avx2.cc);
//   eigen_avx512  the same source compiled for AVX-512 (gemm_libs_eigen_avx512.cc);
//   onednn        oneDNN 2.6's dnnl_sgemm (float32 only; ft already links oneDNN);
//   openblas      OpenBLAS's cblas_[sd]gemm (libopenblas0-pthread, loaded with dlopen);
//   blis          BLIS's cblas_[sd]gemm (libblis4-*, loaded with dlopen);
//   libxsmm       libxsmm's JIT kernel from libxsmm_[sd]mmdispatch (up to 64 x 64 x 64,
//                 the sizes it generates kernels for).
// OpenBLAS and BLIS both export cblas_sgemm, so each is opened RTLD_LOCAL and its symbols
// are looked up in its own handle; a missing library or CPU feature skips its figures with
// the reason. Every library is limited to one thread, as ft's per-thread GEMM calls are.
//
//   ./bazelw run -c opt //benchmarks:gemm_libs        (installs OpenBLAS and BLIS if missing:
//   benchmarks/gemm_libs.sh; the binary alone skips them)
#include <dlfcn.h>
#include <libxsmm.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "benchmark/benchmark.h"
#include "benchmarks/side_by_side.h"
#include "benchmarks/workloads.h"
#include "cpu/cpu_capability.h"
#include "cpu/small_gemm.h"
#include "ft.h"
#include "oneapi/dnnl/dnnl.h"

extern "C" void omp_set_num_threads(int num_threads);

namespace ft_bench {
void EigenGemmAvx2F32(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n);
void EigenGemmAvx2F64(const double* a, const double* b, double* c, int64_t m, int64_t k,
                      int64_t n);
void EigenGemmAvx512F32(const float* a, const float* b, float* c, int64_t m, int64_t k,
                        int64_t n);
void EigenGemmAvx512F64(const double* a, const double* b, double* c, int64_t m, int64_t k,
                        int64_t n);
}  // namespace ft_bench

namespace ft::bench {
namespace {

// ---- CBLAS from a library opened on its own (OpenBLAS and BLIS share the symbol names) ----

enum CblasOrder { kCblasRowMajor = 101 };
enum CblasTranspose { kCblasNoTrans = 111 };
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*,
                         int, float, float*, int);
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double*, int,
                         const double*, int, double, double*, int);

struct Cblas {
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  std::string why_not;  // set when the library could not be used
};

// OpenCblas loads `soname` and limits it to one thread with `set_threads` (a function taking
// int, or void(int) in BLIS's API).
Cblas OpenCblas(const char* soname, const char* set_threads, const char* package) {
  Cblas lib;
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    lib.why_not = std::string(soname) + " not found (apt-get install " + package + ")";
    return lib;
  }
  lib.sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
  lib.dgemm = reinterpret_cast<DgemmFn>(dlsym(handle, "cblas_dgemm"));
  auto threads = reinterpret_cast<void (*)(int)>(dlsym(handle, set_threads));
  if (lib.sgemm == nullptr || lib.dgemm == nullptr || threads == nullptr) {
    lib.why_not = std::string(soname) + " lacks cblas_sgemm, cblas_dgemm or " + set_threads;
    lib.sgemm = nullptr;
    lib.dgemm = nullptr;
    return lib;
  }
  threads(1);
  // Which kernels the library chose for this CPU (OpenBLAS's DYNAMIC_ARCH core, BLIS's
  // configuration), printed once: the table's figures depend on it.
  if (auto core = reinterpret_cast<char* (*)()>(dlsym(handle, "openblas_get_corename"))) {
    std::printf("%s: core %s\n", soname, core());
  }
  if (auto arch = reinterpret_cast<const char* (*)(int)>(dlsym(handle, "bli_arch_string"))) {
    auto id = reinterpret_cast<int (*)()>(dlsym(handle, "bli_arch_query_id"));
    if (id != nullptr) std::printf("%s: configuration %s\n", soname, arch(id()));
  }
  return lib;
}

const Cblas& OpenBlas() {
  static const Cblas lib =
      OpenCblas("libopenblas.so.0", "openblas_set_num_threads", "libopenblas0-pthread");
  return lib;
}

const Cblas& Blis() {
  static const Cblas lib = OpenCblas("libblis.so.4", "bli_thread_set_num_threads", "libblis4-pthread or libblis4-openmp");
  return lib;
}

// ---- The figures ----

struct Shape {
  int64_t m, k, n;
};

template <typename T>
struct Operands {
  std::vector<T> a, b, c;
  explicit Operands(const Shape& s) : a(s.m * s.k), b(s.k * s.n), c(s.m * s.n) {
    uint64_t state = 12345;
    auto next = [&state] {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<T>(static_cast<double>(state >> 11) * 0x1.0p-53 - 0.5);
    };
    for (T& x : a) x = next();
    for (T& x : b) x = next();
  }
};

template <typename T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Times `gemm(a, b, c)`; skips with `why_not` when it is set.
template <typename T, typename F>
void TimeGemm(benchmark::State& state, const Shape& s, const std::string& why_not, F gemm) {
  if (!why_not.empty()) {
    state.SkipWithError(why_not.c_str());
    return;
  }
  Operands<T> x(s);
  for (auto _ : state) {
    gemm(x.a.data(), x.b.data(), x.c.data());
    benchmark::ClobberMemory();
  }
}

bool Has(CpuCapability level) { return MachineCpuCapability() >= level; }

template <typename T>
void Register(const std::string& dtype, const Shape& s) {
  const std::string fig = dtype + "/" + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" +
                          std::to_string(s.n) + "/";
  const int m = static_cast<int>(s.m), k = static_cast<int>(s.k), n = static_cast<int>(s.n);
  constexpr bool kF32 = std::is_same_v<T, float>;
  benchmark::RegisterBenchmark((fig + "ft").c_str(), [s](benchmark::State& state) {
    const DType dt = kF32 ? kFloat32 : kFloat64;
    Tensor a = to(bench::RandomTensor({s.m, s.k}, 1), dt);
    Tensor b = to(bench::RandomTensor({s.k, s.n}, 2), dt);
    for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b).impl());
  });
  if (s.m <= 64 && s.k <= 64 && s.n <= 64) {
    benchmark::RegisterBenchmark((fig + "small_gemm").c_str(), [s](benchmark::State& state) {
      TimeGemm<T>(state, s, "", [&s](const T* a, const T* b, T* c) {
        kernels::internal::SmallGemmRowB<T>(a, s.k, 1, b, s.n, c, s.m, s.k, s.n);
      });
    });
  }
  benchmark::RegisterBenchmark((fig + "eigen_sse2").c_str(), [s](benchmark::State& state) {
    TimeGemm<T>(state, s, "", [&s](const T* a, const T* b, T* c) {
      Eigen::Map<RowMajor<T>> cm(c, s.m, s.n);
      cm.noalias() = Eigen::Map<const RowMajor<T>>(a, s.m, s.k) *
                     Eigen::Map<const RowMajor<T>>(b, s.k, s.n);
    });
  });
  // Eigen's GEMM compiled for a wider unit, where the CPU has it.
  struct WiderEigen {
    const char* name;
    CpuCapability level;
    const char* missing;
    void (*f32)(const float*, const float*, float*, int64_t, int64_t, int64_t);
    void (*f64)(const double*, const double*, double*, int64_t, int64_t, int64_t);
  };
  for (const WiderEigen& e :
       {WiderEigen{"eigen_avx2", CpuCapability::kAvx2, "no AVX2", &ft_bench::EigenGemmAvx2F32,
                   &ft_bench::EigenGemmAvx2F64},
        WiderEigen{"eigen_avx512", CpuCapability::kAvx512, "no AVX-512",
                   &ft_bench::EigenGemmAvx512F32, &ft_bench::EigenGemmAvx512F64}}) {
    benchmark::RegisterBenchmark((fig + e.name).c_str(), [s, e](benchmark::State& state) {
      TimeGemm<T>(state, s, Has(e.level) ? "" : e.missing, [&s, &e](const T* a, const T* b, T* c) {
        if constexpr (kF32) {
          e.f32(a, b, c, s.m, s.k, s.n);
        } else {
          e.f64(a, b, c, s.m, s.k, s.n);
        }
      });
    });
  }
  if constexpr (kF32) {
    benchmark::RegisterBenchmark((fig + "onednn").c_str(), [s, m, k, n](benchmark::State& state) {
      omp_set_num_threads(1);
      TimeGemm<T>(state, s, "", [=](const T* a, const T* b, T* c) {
        dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
      });
    });
  }
  for (const auto& [name, lib] :
       {std::pair<std::string, const Cblas*>{"openblas", &OpenBlas()}, {"blis", &Blis()}}) {
    benchmark::RegisterBenchmark(
        (fig + name).c_str(), [s, m, k, n, lib = lib](benchmark::State& state) {
          TimeGemm<T>(state, s, lib->why_not, [=](const T* a, const T* b, T* c) {
            if constexpr (kF32) {
              lib->sgemm(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, m, n, k, 1.0f, a, k, b,
                         n, 0.0f, c, n);
            } else {
              lib->dgemm(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, m, n, k, 1.0, a, k, b, n,
                         0.0, c, n);
            }
          });
        });
  }
  if (s.m <= 64 && s.k <= 64 && s.n <= 64) {
    benchmark::RegisterBenchmark((fig + "libxsmm").c_str(), [s, m, k, n](benchmark::State&
                                                                             state) {
      // libxsmm is column-major: row-major c = a b is column-major c^T = b^T a^T, so the
      // kernel gets (n, m, k) with b first.
      const libxsmm_blasint lda = n, ldb = k, ldc = n;
      const T alpha = 1, beta = 0;
      std::string why_not;
      if constexpr (kF32) {
        libxsmm_smmfunction f =
            libxsmm_smmdispatch(n, m, k, &lda, &ldb, &ldc, &alpha, &beta, nullptr, nullptr);
        if (f == nullptr) why_not = "libxsmm generated no kernel";
        TimeGemm<T>(state, s, why_not, [f](const T* a, const T* b, T* c) { f(b, a, c); });
      } else {
        libxsmm_dmmfunction f =
            libxsmm_dmmdispatch(n, m, k, &lda, &ldb, &ldc, &alpha, &beta, nullptr, nullptr);
        if (f == nullptr) why_not = "libxsmm generated no kernel";
        TimeGemm<T>(state, s, why_not, [f](const T* a, const T* b, T* c) { f(b, a, c); });
      }
    });
  }
}

// The shapes: squares from a Jacobian's 4 x 4 to 1024 x 1024 (the matmul rows), and the
// per-sample MLP's layers (784-128-10 at B = 1024: x w1 and h w2).
std::vector<Shape> Shapes(bool f64) {
  if (SmokeTest()) return {{8, 8, 8}, {32, 16, 8}};
  std::vector<Shape> shapes;
  const std::vector<int64_t> squares =
      f64 ? std::vector<int64_t>{8, 16, 32, 64, 256, 1024}
          : std::vector<int64_t>{4, 8, 16, 24, 32, 64, 128, 256, 512, 1024};
  for (int64_t s : squares) shapes.push_back({s, s, s});
  if (!f64) {
    shapes.push_back({1024, 784, 128});
    shapes.push_back({1024, 128, 10});
  }
  return shapes;
}

// Collects each figure's median (or its single run) by shape and library.
class Table : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const std::optional<double> ns = MedianNanoseconds(run);
      if (!ns || run.error_occurred) continue;
      const std::string name = run.run_name.function_name;
      const size_t slash = name.rfind('/');
      ns_[name.substr(0, slash)][name.substr(slash + 1)] = *ns;
    }
  }

  void Print() const {
    const std::vector<std::string> libs = {"ft",         "small_gemm", "eigen_sse2",
                                           "eigen_avx2", "eigen_avx512", "onednn",
                                           "openblas",   "blis",         "libxsmm"};
    std::printf("\nGFLOP/s (2 m k n / median time), one thread\n| shape |");
    for (const std::string& lib : libs) std::printf(" %s |", lib.c_str());
    std::printf("\n|---|");
    for (size_t i = 0; i < libs.size(); ++i) std::printf("---|");
    std::printf("\n");
    for (const auto& [shape, by_lib] : ns_) {
      int64_t m = 0, k = 0, n = 0;
      std::sscanf(shape.c_str() + shape.find('/') + 1, "%ldx%ldx%ld", &m, &k, &n);
      std::printf("| %s |", shape.c_str());
      for (const std::string& lib : libs) {
        auto it = by_lib.find(lib);
        if (it == by_lib.end()) {
          std::printf(" - |");
        } else {
          std::printf(" %.1f |", 2.0 * m * k * n / it->second);
        }
      }
      std::printf("\n");
    }
  }

 private:
  std::map<std::string, std::map<std::string, double>> ns_;
};

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  ft::SetNumThreads(1);
  libxsmm_init();
  ft::bench::OpenBlas();  // load both now, so their configurations print before the figures
  ft::bench::Blis();
  for (const auto& s : ft::bench::Shapes(false)) ft::bench::Register<float>("f32", s);
  for (const auto& s : ft::bench::Shapes(true)) ft::bench::Register<double>("f64", s);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ft::bench::Table table;
  benchmark::RunSpecifiedBenchmarks(&table);
  table.Print();
  benchmark::Shutdown();
  libxsmm_finalize();
  return 0;
}

// vmap benchmarks, each beside its baseline in the same run.
//   bazel run -c opt //benchmarks:vmap
// Targets (issue "vmap"): a 10-op elementwise chain vmapped over B=1024 examples of [1000]
// float32 <= 1.2x the chain applied directly to the [1024, 1000] tensor; vmap of a 64x64
// matmul over B=256 <= 1.2x a direct batched matmul; per-op cost of a 100-op chain on
// 1-element examples with B=8 <= 0.20 us per op, and with three nested vmaps (2x2x2)
// <= 0.5 us per op (functorch on this machine: 3.1 and 4.3 us per op, ../shared/bench).
#include <string>
#include <vector>

#include "Eigen/Core"
#include "benchmark/benchmark.h"
#include "benchmarks/side_by_side.h"
#include "benchmarks/workloads.h"
#include "ft.h"
#include "interpreters/vmap/vmap.h"

namespace ft::bench {
namespace {

Tensor Random(IntArrayRef shape, uint64_t seed) { return RandomTensor(shape, seed, 0.5); }

void BM_Chain10Vmap(benchmark::State& state) {
  Tensor x = Random({1024, 1000}, 1);
  TensorFn f = vmap(TensorFn(&Chain10));
  for (auto _ : state) benchmark::DoNotOptimize(f(x).impl());
}

void BM_Chain10Direct(benchmark::State& state) {
  Tensor x = Random({1024, 1000}, 1);
  for (auto _ : state) benchmark::DoNotOptimize(Chain10(x).impl());
}

void BM_MatmulVmap(benchmark::State& state) {
  Tensor a = Random({256, 64, 64}, 1), b = Random({256, 64, 64}, 2);
  TensorListFn f = vmap(TensorListFn([](const TensorList& t) {
    return TensorList{matmul(t[0], t[1])};
  }));
  for (auto _ : state) benchmark::DoNotOptimize(f({a, b})[0].impl());
}

void BM_MatmulDirect(benchmark::State& state) {
  Tensor a = Random({256, 64, 64}, 1), b = Random({256, 64, 64}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b).impl());
}

// A chain of two 64x64 products with a tanh between, per example, the weights shared:
// vmap of it against the same products written per example in Eigen (the limit: no
// batching machinery, each example's two GEMMs straight into preallocated buffers).
void BM_MatmulChainVmap(benchmark::State& state) {
  Tensor a = Random({256, 64, 64}, 1), w1 = Random({64, 64}, 2) * 0.05,
         w2 = Random({64, 64}, 3) * 0.05;
  TensorFn f = vmap(TensorFn([&](const Tensor& m) { return matmul(tanh(matmul(m, w1)), w2); }));
  for (auto _ : state) benchmark::DoNotOptimize(f(a).impl());
}

void BM_MatmulChainEigen(benchmark::State& state) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Map = Eigen::Map<const Matrix>;
  Tensor a = Random({256, 64, 64}, 1), w1 = Random({64, 64}, 2) * 0.05,
         w2 = Random({64, 64}, 3) * 0.05;
  const Map mw1(w1.data<float>(), 64, 64), mw2(w2.data<float>(), 64, 64);
  Matrix h(64, 64);
  std::vector<Matrix> out(256, Matrix(64, 64));
  for (auto _ : state) {
    for (int64_t b = 0; b < 256; ++b) {
      h.noalias() = Map(a.data<float>() + b * 64 * 64, 64, 64) * mw1;
      h = h.array().tanh().matrix();
      out[static_cast<size_t>(b)].noalias() = h * mw2;
    }
    benchmark::DoNotOptimize(out.back().data());
  }
}

void BM_Chain100Vmap8(benchmark::State& state) {
  Tensor x = Random({8, 1}, 1);
  TensorFn f = vmap(TensorFn(&Chain100));
  for (auto _ : state) benchmark::DoNotOptimize(f(x).impl());
}

void BM_Chain100Eager8(benchmark::State& state) {
  Tensor x = Random({8, 1}, 1);
  for (auto _ : state) benchmark::DoNotOptimize(Chain100(x).impl());
}

void BM_Chain100Vmap3(benchmark::State& state) {
  Tensor x = Random({2, 2, 2, 1}, 1);
  TensorFn f = vmap(vmap(vmap(TensorFn(&Chain100))));
  for (auto _ : state) benchmark::DoNotOptimize(f(x).impl());
}

void BM_Chain100Eager222(benchmark::State& state) {
  Tensor x = Random({2, 2, 2, 1}, 1);
  for (auto _ : state) benchmark::DoNotOptimize(Chain100(x).impl());
}

void Register() {
  auto reg = [](const std::string& name, void (*fn)(benchmark::State&)) {
    benchmark::RegisterBenchmark(name.c_str(), fn)
        ->Repetitions(SmokeTest() ? 1 : kRepetitions)
        ->ReportAggregatesOnly(true)
        ->Unit(benchmark::kMicrosecond);
  };
  SetFigure("vmap_chain10_B1024x1000", "<= 1.20x");
  reg("vmap_chain10_B1024x1000/ft", BM_Chain10Vmap);
  reg("vmap_chain10_B1024x1000/baseline", BM_Chain10Direct);
  SetFigure("vmap_matmul64_B256", "<= 1.20x");
  reg("vmap_matmul64_B256/ft", BM_MatmulVmap);
  reg("vmap_matmul64_B256/baseline", BM_MatmulDirect);
  SetFigure("vmap_matmul_chain64_B256", "reported (limit: per-example Eigen GEMMs)");
  reg("vmap_matmul_chain64_B256/ft", BM_MatmulChainVmap);
  reg("vmap_matmul_chain64_B256/baseline", BM_MatmulChainEigen);
  SetFigure("vmap_chain100_B8", "<= 0.20 us per op (functorch 3.1)", 100, "op");
  reg("vmap_chain100_B8/ft", BM_Chain100Vmap8);
  reg("vmap_chain100_B8/baseline", BM_Chain100Eager8);
  SetFigure("vmap3_chain100_2x2x2", "<= 0.50 us per op (functorch 4.3)", 100, "op");
  reg("vmap3_chain100_2x2x2/ft", BM_Chain100Vmap3);
  reg("vmap3_chain100_2x2x2/baseline", BM_Chain100Eager222);
}

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  ft::bench::Register();
  return ft::bench::RunAndCompare(argc, argv);
}

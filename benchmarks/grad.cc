// Reverse-mode benchmarks, each beside its baseline in the same run.
//   bazel run -c opt //benchmarks:grad
// Targets (issue "grad, vjp, ..."): per-op cost of the 100-op chain on 1-element tensors,
// forward and backward: grad <= 0.6 us/op (functorch 11.2), vmap(grad) B=8 <= 0.8 us/op
// (functorch 13.7), grad(grad) <= 2.0 us/op (functorch 34.8). The baseline column is the
// same chain run eagerly (forward only) on the same data.
#include <string>

#include "benchmark/benchmark.h"
#include "benchmarks/compare.h"
#include "benchmarks/workloads.h"
#include "ft.h"

namespace ft::bench {
namespace {

Tensor SumChain(const Tensor& x) { return sum(Chain100(x)); }

void BM_GradFt(benchmark::State& state) {
  Tensor x = RandomTensor({1}, 1, 0.5);
  TensorFn g = grad(TensorFn(&SumChain));
  for (auto _ : state) benchmark::DoNotOptimize(g(x).impl());
}

void BM_EagerN1(benchmark::State& state) {
  Tensor x = RandomTensor({1}, 1, 0.5);
  for (auto _ : state) benchmark::DoNotOptimize(SumChain(x).impl());
}

void BM_VmapGradFt(benchmark::State& state) {
  Tensor x = RandomTensor({8, 1}, 1, 0.5);
  TensorFn g = vmap(grad(TensorFn(&SumChain)));
  for (auto _ : state) benchmark::DoNotOptimize(g(x).impl());
}

void BM_EagerB8(benchmark::State& state) {
  Tensor x = RandomTensor({8, 1}, 1, 0.5);
  for (auto _ : state) benchmark::DoNotOptimize(Chain100(x).impl());
}

void BM_GradGradFt(benchmark::State& state) {
  Tensor x = RandomTensor({1}, 1, 0.5);
  TensorFn gg = grad(TensorFn([](const Tensor& t) { return sum(grad(TensorFn(&SumChain))(t)); }));
  for (auto _ : state) benchmark::DoNotOptimize(gg(x).impl());
}

void Register() {
  auto reg = [](const std::string& name, void (*fn)(benchmark::State&)) {
    benchmark::RegisterBenchmark(name.c_str(), fn)
        ->Repetitions(SmokeTest() ? 1 : kRepetitions)
        ->ReportAggregatesOnly(true)
        ->Unit(benchmark::kMicrosecond);
  };
  SetFigure("grad_chain100_n1", "<= 0.6 us per op (functorch 11.2)", 100, "op");
  reg("grad_chain100_n1/ft", BM_GradFt);
  reg("grad_chain100_n1/baseline", BM_EagerN1);
  SetFigure("vmap_grad_chain100_B8", "<= 0.8 us per op (functorch 13.7)", 100, "op");
  reg("vmap_grad_chain100_B8/ft", BM_VmapGradFt);
  reg("vmap_grad_chain100_B8/baseline", BM_EagerB8);
  SetFigure("grad_grad_chain100_n1", "<= 2.0 us per op (functorch 34.8)", 100, "op");
  reg("grad_grad_chain100_n1/ft", BM_GradGradFt);
  reg("grad_grad_chain100_n1/baseline", BM_EagerN1);
}

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  ft::bench::Register();
  return ft::bench::RunAndCompare(argc, argv);
}

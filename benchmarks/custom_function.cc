// Custom Function benchmarks: a Function whose forward, backward and jvp are the same math as
// a chain of ft ops, against that chain, under grad, vmap, jvp and vmap(grad), on 1-element
// and 1e5-element tensors, each beside its baseline in the same run.
//   bazel run -c opt //benchmarks:custom_function
// Target (issue "custom_function"): the Function costs at most 1.3x the plain-op chain.
#include <string>

#include "benchmark/benchmark.h"
#include "benchmarks/side_by_side.h"
#include "benchmarks/workloads.h"
#include "ft.h"

namespace ft::bench {
namespace {

// y = sin(x) * 0.9 + 0.1, with its derivative stated by hand.
struct SinStep : Function<SinStep> {
  static constexpr const char* name = "SinStep";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return sin(x) * 0.9 + 0.1; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor&) {
    ctx.save_for_backward({std::get<0>(in)});
    ctx.save_for_forward({std::get<0>(in)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * cos(ctx.saved_tensors()[0]) * 0.9};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {t[0] * cos(ctx.saved_tensors()[0]) * 0.9};
  }
};

constexpr int kSteps = 20;

Tensor PlainChain(const Tensor& x) {
  Tensor y = x;
  for (int i = 0; i < kSteps; ++i) y = sin(y) * 0.9 + 0.1;
  return y;
}

Tensor FunctionChain(const Tensor& x) {
  Tensor y = x;
  for (int i = 0; i < kSteps; ++i) y = SinStep::apply(y);
  return y;
}

using Chain = Tensor (*)(const Tensor&);

void BM_Grad(benchmark::State& state, Chain chain) {
  Tensor x = RandomTensor({state.range(0)}, 1, 0.5);
  TensorFn g = grad(TensorFn([chain](const Tensor& t) { return sum(chain(t)); }));
  for (auto _ : state) benchmark::DoNotOptimize(g(x).impl());
}

void BM_Vmap(benchmark::State& state, Chain chain) {
  Tensor x = RandomTensor({8, state.range(0)}, 1, 0.5);
  TensorFn f = vmap(TensorFn(chain));
  for (auto _ : state) benchmark::DoNotOptimize(f(x).impl());
}

void BM_Jvp(benchmark::State& state, Chain chain) {
  Tensor x = RandomTensor({state.range(0)}, 1, 0.5), t = ones_like(x);
  TensorListFn f = [chain](const TensorList& a) { return TensorList{chain(a[0])}; };
  for (auto _ : state) benchmark::DoNotOptimize(jvp(f, {x}, {t}).tangents[0].impl());
}

void BM_VmapGrad(benchmark::State& state, Chain chain) {
  Tensor x = RandomTensor({8, state.range(0)}, 1, 0.5);
  TensorFn g = vmap(grad(TensorFn([chain](const Tensor& t) { return sum(chain(t)); })));
  for (auto _ : state) benchmark::DoNotOptimize(g(x).impl());
}

void Register() {
  using Bench = void (*)(benchmark::State&, Chain);
  for (const auto& [transform, bench] :
       {std::pair<std::string, Bench>{"grad", &BM_Grad}, {"vmap_B8", &BM_Vmap},
        {"jvp", &BM_Jvp}, {"vmap_grad_B8", &BM_VmapGrad}}) {
    for (int64_t n : {int64_t{1}, SmokeTest() ? int64_t{16} : int64_t{100000}}) {
      const std::string fig = "function_" + transform + "_n" + std::to_string(n);
      SetFigure(fig, "<= 1.3x");
      for (const auto& [side, chain] :
           {std::pair<std::string, Chain>{"ft", &FunctionChain}, {"baseline", &PlainChain}}) {
        benchmark::RegisterBenchmark((fig + "/" + side).c_str(), bench, chain)
            ->Arg(n)
            ->Repetitions(SmokeTest() ? 1 : kRepetitions)
            ->ReportAggregatesOnly(true)
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  ft::bench::Register();
  return ft::bench::RunAndCompare(argc, argv);
}

// functionalize benchmarks: a 20-op elementwise chain written with in-place ops on a [1e5]
// float32 buffer, each figure beside its baseline in the same run.
//   bazel run -c opt //benchmarks:functionalize
// Figures (issue "functionalize"):
//   jit_chain20_1e5:   jit(functionalize(f)) against the same chain written out of place under
//                      jit (target <= 1.1x: the functionalized trace is pure, so it fuses the
//                      same way);
//   vs_eager_chain20_1e5: jit(functionalize(f)) against eager in-place f (reported);
//   eager_chain20_1e5: functionalize(f) run eagerly against f (the transform's own cost).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "benchmark/benchmark.h"
#include "benchmarks/side_by_side.h"
#include "ft.h"

namespace ft::bench {
namespace {

constexpr int64_t kN = 100000;

// The chain, in place: 20 writes into a buffer the function makes (factory + add_).
TensorList InPlaceChain(const TensorList& a) {
  const Tensor& x = a[0];
  Tensor buf = zeros({x.numel()});
  add_(buf, x);
  for (int i = 0; i < 5; ++i) {
    mul_(buf, 0.99);
    add_(buf, x);
    sub_(buf, 0.25);
    div_(buf, 1.01);
  }
  mul_(buf, x);  // 22 writes in all: 20 in the loop, the first add_ and this one
  return TensorList{buf};
}

// The same chain out of place.
TensorList OutOfPlaceChain(const TensorList& a) {
  const Tensor& x = a[0];
  Tensor y = zeros({x.numel()}) + x;
  for (int i = 0; i < 5; ++i) {
    y = y * 0.99;
    y = y + x;
    y = y - 0.25;
    y = y / 1.01;
  }
  return TensorList{y * x};
}

Tensor Input() {
  Generator g(1);
  return rand_like(zeros({SmokeTest() ? int64_t{1000} : kN}), &g);
}

void Run(benchmark::State& state, const JitFunction::Fn& f) {
  const Tensor x = Input();
  for (auto _ : state) benchmark::DoNotOptimize(f({x})[0].impl());
}

void RunJit(benchmark::State& state, const JitFunction::Fn& f) {
  const Tensor x = Input();
  JitFunction j = jit(f);
  j({x});  // trace
  if (j.program({x}) == nullptr) {
    state.SkipWithError(("untraceable: " + j.untraceable_reason({x})).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(j({x})[0].impl());
}

void Register() {
  const JitFunction::Fn functionalized = functionalize(JitFunction::Fn(&InPlaceChain));
  // The results agree before anything is timed.
  {
    const Tensor x = Input();
    const Tensor a = jit(functionalized)({x})[0], b = InPlaceChain({x})[0];
    if (!allclose(a, b, 1e-5, 1e-6) || !allclose(OutOfPlaceChain({x})[0], b, 1e-5, 1e-6)) {
      std::fprintf(stderr, "functionalize benchmark: the chains disagree\n");
      std::exit(1);
    }
  }
  auto reg = [](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)
        ->Repetitions(SmokeTest() ? 1 : kRepetitions)
        ->ReportAggregatesOnly(true)
        ->Unit(benchmark::kMicrosecond);
  };
  SetFigure("jit_chain20_1e5", "<= 1.10x");
  reg("jit_chain20_1e5/ft", [functionalized](benchmark::State& s) { RunJit(s, functionalized); });
  reg("jit_chain20_1e5/baseline", [](benchmark::State& s) { RunJit(s, &OutOfPlaceChain); });
  SetFigure("vs_eager_chain20_1e5", "reported");
  reg("vs_eager_chain20_1e5/ft",
      [functionalized](benchmark::State& s) { RunJit(s, functionalized); });
  reg("vs_eager_chain20_1e5/baseline", [](benchmark::State& s) { Run(s, &InPlaceChain); });
  SetFigure("eager_chain20_1e5", "reported");
  reg("eager_chain20_1e5/ft", [functionalized](benchmark::State& s) { Run(s, functionalized); });
  reg("eager_chain20_1e5/baseline", [](benchmark::State& s) { Run(s, &InPlaceChain); });
}

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  ft::bench::Register();
  return ft::bench::RunAndCompare(argc, argv);
}

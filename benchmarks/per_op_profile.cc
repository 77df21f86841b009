// per_op_profile: runs one per-op workload of //benchmarks:compare (a 100-op chain under one
// transform) a given number of times, with nothing else in the process, so that a profiler
// sees only it. Instruction counts from callgrind are repeatable on a busy machine, where
// timings are not:
//   bazel build -c opt //benchmarks:per_op_profile
//   valgrind --tool=callgrind bazel-bin/benchmarks/per_op_profile vmap 2000
//   perf record -g bazel-bin/benchmarks/per_op_profile grad 200000
// Workloads: eager, vmap, vmap3, grad, vjp, vmap_grad, grad_grad, jvp (the same functions as
// benchmarks/vmap.cc and grad.cc). It prints nothing.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>

#include "benchmarks/workloads.h"
#include "ft.h"

namespace ft::bench {
namespace {

Tensor SumChain(const Tensor& x) { return sum(Chain100(x)); }

// Each entry returns the call to repeat, its inputs captured.
std::map<std::string, std::function<std::function<void()>()>> Workloads() {
  return {
      {"eager",
       [] {
         Tensor x = RandomTensor({1}, 1, 0.5);
         return [x] { SumChain(x); };
       }},
      {"vmap",
       [] {
         Tensor x = RandomTensor({8, 1}, 1, 0.5);
         TensorFn f = vmap(TensorFn(&Chain100));
         return [x, f] { f(x); };
       }},
      {"vmap3",
       [] {
         Tensor x = RandomTensor({2, 2, 2, 1}, 1, 0.5);
         TensorFn f = vmap(vmap(vmap(TensorFn(&Chain100))));
         return [x, f] { f(x); };
       }},
      {"grad",
       [] {
         Tensor x = RandomTensor({1}, 1, 0.5);
         TensorFn g = grad(TensorFn(&SumChain));
         return [x, g] { g(x); };
       }},
      {"vjp",
       [] {
         Tensor x = RandomTensor({1}, 1, 0.5);
         TensorListFn f = [](const TensorList& a) { return TensorList{Chain100(a[0])}; };
         return [x, f] {
           VjpResult r = vjp(f, {x});
           r.vjp_fn({ones_like(r.outputs[0])});
         };
       }},
      {"vmap_grad",
       [] {
         Tensor x = RandomTensor({8, 1}, 1, 0.5);
         TensorFn g = vmap(grad(TensorFn(&SumChain)));
         return [x, g] { g(x); };
       }},
      {"grad_grad",
       [] {
         Tensor x = RandomTensor({1}, 1, 0.5);
         TensorFn gg =
             grad(TensorFn([](const Tensor& t) { return sum(grad(TensorFn(&SumChain))(t)); }));
         return [x, gg] { gg(x); };
       }},
      {"jvp",
       [] {
         Tensor x = RandomTensor({1}, 1, 0.5), t = ones_like(x);
         TensorListFn f = [](const TensorList& a) { return TensorList{Chain100(a[0])}; };
         return [x, t, f] { jvp(f, {x}, {t}); };
       }},
  };
}

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  auto workloads = ft::bench::Workloads();
  if (argc != 3 || workloads.count(argv[1]) == 0) {
    std::fprintf(stderr, "usage: per_op_profile WORKLOAD CALLS\nworkloads:");
    for (const auto& [name, make] : workloads) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  const long calls = std::strtol(argv[2], nullptr, 10);
  std::function<void()> call = workloads.at(argv[1])();
  for (long i = 0; i < calls; ++i) call();
  return 0;
}

// Trees (issue 24): what writing parameters as a struct costs. One per-example-gradient
// training step of a 3-layer MLP (features 64, hidden 128 and 128, classes 10, batch 64,
// float32, one thread): vmap(grad(loss)) over the batch with the parameters shared, the mean
// gradient, and an SGD update.
//   - tree_step: the parameters an FT_TREE struct, grad and vmap over trees, the update by
//     tree_map; against the same step written positionally (a TensorList, in_dims and argnums
//     by index, the update by a loop over indices). Target <= 1.05x: flattening must not
//     cost.
//   bazel run -c opt //benchmarks:trees
#include <optional>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/side_by_side.h"
#include "benchmarks/workloads.h"
#include "ft.h"

namespace ft::bench {

struct Mlp3 {
  Tensor w1, b1, w2, b2, w3, b3;
};
FT_TREE(Mlp3, w1, b1, w2, b2, w3, b3);

namespace {

struct Sizes {
  int64_t features, hidden, classes, batch;
};
Sizes GetSizes() { return SmokeTest() ? Sizes{4, 8, 3, 2} : Sizes{64, 128, 10, 64}; }

constexpr double kLearningRate = 0.05;

Mlp3 MakeParams(const Sizes& s) {
  return {RandomTensor({s.features, s.hidden}, 1, -0.5) * 0.2, RandomTensor({s.hidden}, 2, -0.5),
          RandomTensor({s.hidden, s.hidden}, 3, -0.5) * 0.2, RandomTensor({s.hidden}, 4, -0.5),
          RandomTensor({s.hidden, s.classes}, 5, -0.5) * 0.2, RandomTensor({s.classes}, 6, -0.5)};
}

struct Batch {
  Tensor x, y;  // [batch, features], [batch, classes] one-hot
};
Batch MakeBatch(const Sizes& s) {
  Generator gen(8);
  const Tensor labels = randint(0, s.classes, {s.batch}, &gen);
  return {RandomTensor({s.batch, s.features}, 7, -0.5), to(one_hot(labels, s.classes), kFloat32)};
}

// The loss of one example, as a struct...
Tensor TreeLoss(const Mlp3& p, const Tensor& x, const Tensor& y) {
  Tensor h = tanh(matmul(x, p.w1) + p.b1);
  h = tanh(matmul(h, p.w2) + p.b2);
  return neg(sum(y * log_softmax(matmul(h, p.w3) + p.b3, -1)));
}

// ...and positionally: a = {w1, b1, w2, b2, w3, b3, x, y}.
Tensor PositionalLoss(const TensorList& a) {
  Tensor h = tanh(matmul(a[6], a[0]) + a[1]);
  h = tanh(matmul(h, a[2]) + a[3]);
  return neg(sum(a[7] * log_softmax(matmul(h, a[4]) + a[5], -1)));
}

void BM_TreeStep(benchmark::State& state) {
  SetNumThreads(1);
  const Sizes s = GetSizes();
  Mlp3 params = MakeParams(s);
  const Batch batch = MakeBatch(s);
  auto per_example = vmap(grad(&TreeLoss), {std::nullopt, 0, 0});
  for (auto _ : state) {
    const Mlp3 grads = per_example(params, batch.x, batch.y);
    params = tree_map([](const Tensor& p, const Tensor& g) {
      return p - mean(g, {0}) * kLearningRate;
    }, params, grads);
    benchmark::DoNotOptimize(params.w1.impl());
  }
}

void BM_PositionalStep(benchmark::State& state) {
  SetNumThreads(1);
  const Sizes s = GetSizes();
  const Mlp3 start = MakeParams(s);
  TensorList params = {start.w1, start.b1, start.w2, start.b2, start.w3, start.b3};
  const Batch batch = MakeBatch(s);
  const TensorListFn per_example =
      vmap(grad(ScalarFn(PositionalLoss), {0, 1, 2, 3, 4, 5}),
           {std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
            0, 0});
  for (auto _ : state) {
    const TensorList grads = per_example({params[0], params[1], params[2], params[3],
                                          params[4], params[5], batch.x, batch.y});
    for (size_t i = 0; i < params.size(); ++i) {
      params[i] = params[i] - mean(grads[i], {0}) * kLearningRate;
    }
    benchmark::DoNotOptimize(params[0].impl());
  }
}

void Register() {
  SetFigure("tree_step", "<= 1.05x");
  for (const char* name : {"tree_step/ft", "tree_step/baseline"}) {
    benchmark::RegisterBenchmark(name, name[10] == 'f' ? &BM_TreeStep : &BM_PositionalStep)
        ->Repetitions(SmokeTest() ? 1 : kRepetitions)
        ->ReportAggregatesOnly(true)
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  ft::bench::Register();
  return ft::bench::RunAndCompare(argc, argv);
}

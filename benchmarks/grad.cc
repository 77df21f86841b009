// Reverse- and forward-mode benchmarks, each beside its baseline in the same run.
//   bazel run -c opt //benchmarks:grad
// Targets (issue "grad, vjp, ..."): per-op cost of the 100-op chain on 1-element tensors,
// forward and backward: grad <= 0.6 us/op (functorch 11.2), vmap(grad) B=8 <= 0.8 us/op
// (functorch 13.7), grad(grad) <= 2.0 us/op (functorch 34.8), jvp <= 0.6 us/op (functorch
// 14.2). The baseline column is the same chain run eagerly (forward only) on the same data.
// Jacobians (jacrev, jacfwd) and Hessians (jacfwd of jacrev) against hand-written Eigen, each
// eagerly and under ft::jit (jit_* figures: traced once, kernels replayed).
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "benchmark/benchmark.h"
#include "benchmarks/roofline.h"
#include "benchmarks/side_by_side.h"
#include "benchmarks/per_sample.h"
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

void BM_JvpFt(benchmark::State& state) {
  Tensor x = RandomTensor({1}, 1, 0.5), t = ones_like(x);
  TensorListFn f = [](const TensorList& a) { return TensorList{Chain100(a[0])}; };
  for (auto _ : state) benchmark::DoNotOptimize(jvp(f, {x}, {t}).tangents[0].impl());
}

void BM_VjpFt(benchmark::State& state) {
  Tensor x = RandomTensor({1}, 1, 0.5);
  TensorListFn f = [](const TensorList& a) { return TensorList{Chain100(a[0])}; };
  for (auto _ : state) {
    VjpResult r = vjp(f, {x});
    benchmark::DoNotOptimize(r.vjp_fn({ones_like(r.outputs[0])})[0].impl());
  }
}

// ---- jvp of Chain10 (workloads.h) on 1e6 elements ----
// The limit: primal and tangent by hand in one pass over 1024-element strips (each strip's
// temporaries stay in cache), into reused output buffers.
void BM_JvpChain10Ft(benchmark::State& state) {
  Tensor x = RandomTensor({1000000}, 1, 0.5), t = ones_like(x);
  TensorListFn f = [](const TensorList& a) { return TensorList{Chain10(a[0])}; };
  for (auto _ : state) benchmark::DoNotOptimize(jvp(f, {x}, {t}).tangents[0].impl());
}

// The same jvp under ft::jit: traced once, primal and tangent replayed as fused passes.
void BM_JitJvpChain10Ft(benchmark::State& state) {
  Tensor x = RandomTensor({1000000}, 1, 0.5), t = ones_like(x);
  TensorListFn f = [](const TensorList& a) { return TensorList{Chain10(a[0])}; };
  JitFunction g = jit([f](const TensorList& a) {
    JvpResult r = jvp(f, {a[0]}, {a[1]});
    return TensorList{r.outputs[0], r.tangents[0]};
  });
  for (auto _ : state) benchmark::DoNotOptimize(g({x, t})[1].impl());
}

// The limit: primal and tangent in one hand-written pass over SLEEF's functions.
void BM_JvpChain10Limit(benchmark::State& state) {
  constexpr int64_t kN = 1000000;
  Tensor x = RandomTensor({kN}, 1, 0.5), t = ones_like(x);
  std::vector<float> out(kN), tangent(kN);
  for (auto _ : state) {
    JvpChain10Limit(x.data<float>(), t.data<float>(), out.data(), tangent.data(), kN);
    benchmark::DoNotOptimize(tangent.data());
  }
}

// ---- Jacobians and Hessians (float32) ----
// f(x) = sin(W x) + x; g(x) = sum(tanh(W x)^2). The baselines are what a transform that pushes
// a dense identity basis through W pays, hand-written in Eigen (the issue's "same Jacobian by
// basis products"): J = diag(cos(Wx)) (W I) + I by one n^3 product of W with the basis, and
// H = W^T (diag(2(1 - t^2)(1 - 3t^2)) (W I)), the basis pushed through W and pulled back.
using EigenMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using EigenVector = Eigen::Matrix<float, Eigen::Dynamic, 1>;

TensorFnOfList JacobianTarget() {
  return [](const TensorList& a) { return sin(matmul(a[1], a[0])) + a[0]; };
}

// A transform of JacobianTarget (or of the Hessian target): jacrev or jacfwd (hessian),
// eagerly or under ft::jit (traced on the first call, kernels replayed afterwards).
using JacobianTransform = TensorListFn (*)(TensorFnOfList);
TensorListFn Jacrev(TensorFnOfList f) { return jacrev(std::move(f)); }
TensorListFn Jacfwd(TensorFnOfList f) { return jacfwd(std::move(f)); }
TensorListFn Hessian(TensorFnOfList f) { return hessian(std::move(f)); }
TensorListFn JitJacrev(TensorFnOfList f) { return jit(jacrev(std::move(f))); }
TensorListFn JitJacfwd(TensorFnOfList f) { return jit(jacfwd(std::move(f))); }
TensorListFn JitHessian(TensorFnOfList f) { return jit(hessian(std::move(f))); }

void BM_JacobianFt(benchmark::State& state, JacobianTransform transform) {
  const int64_t n = state.range(0);
  Tensor w = RandomTensor({n, n}, 1, -0.5), x = RandomTensor({n}, 2, -0.5);
  TensorListFn j = transform(JacobianTarget());
  for (auto _ : state) benchmark::DoNotOptimize(j({x, w})[0].impl());
}

// linearize's jvp_fn (the tangent's arithmetic only) against a whole jvp per tangent.
void BM_LinearizedJvpFt(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor w = RandomTensor({n, n}, 1, -0.5), x = RandomTensor({n}, 2, -0.5), t = ones_like(x);
  Linearized lin = linearize(
      [&w](const TensorList& a) { return TensorList{JacobianTarget()({a[0], w})}; }, {x});
  for (auto _ : state) benchmark::DoNotOptimize(lin.jvp_fn({t})[0].impl());
}

void BM_JvpPerTangent(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor w = RandomTensor({n, n}, 1, -0.5), x = RandomTensor({n}, 2, -0.5), t = ones_like(x);
  TensorListFn f = [&w](const TensorList& a) { return TensorList{JacobianTarget()({a[0], w})}; };
  for (auto _ : state) benchmark::DoNotOptimize(jvp(f, {x}, {t}).tangents[0].impl());
}

void BM_JacobianBasisEigen(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor w = RandomTensor({n, n}, 1, -0.5), x = RandomTensor({n}, 2, -0.5);
  Eigen::Map<const EigenMatrix> mw(w.data<float>(), n, n);
  Eigen::Map<const EigenVector> mx(x.data<float>(), n);
  const EigenMatrix basis = EigenMatrix::Identity(n, n);
  for (auto _ : state) {
    const EigenVector c = (mw * mx).array().cos().matrix();
    EigenMatrix j = c.asDiagonal() * (mw * basis);  // the basis product a transform pays
    j += basis;
    benchmark::DoNotOptimize(j.data());
  }
}

void BM_HessianFt(benchmark::State& state, JacobianTransform transform) {
  const int64_t n = state.range(0);
  Tensor w = RandomTensor({n, n}, 1, -0.5), x = RandomTensor({n}, 2, -0.5);
  TensorListFn h =
      transform([&w](const TensorList& a) { return sum(square(tanh(matmul(w, a[0])))); });
  for (auto _ : state) benchmark::DoNotOptimize(h({x})[0].impl());
}

void BM_HessianEigen(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor w = RandomTensor({n, n}, 1, -0.5), x = RandomTensor({n}, 2, -0.5);
  Eigen::Map<const EigenMatrix> mw(w.data<float>(), n, n);
  Eigen::Map<const EigenVector> mx(x.data<float>(), n);
  const EigenMatrix basis = EigenMatrix::Identity(n, n);
  for (auto _ : state) {
    const Eigen::ArrayXf t = (mw * mx).array().tanh();
    const EigenVector d = (2.0f * (1.0f - t.square()) * (1.0f - 3.0f * t.square())).matrix();
    const EigenMatrix pushed = mw * basis;  // the basis product a transform pays
    EigenMatrix h = mw.transpose() * (d.asDiagonal() * pushed);
    benchmark::DoNotOptimize(h.data());
  }
}

// ---- Per-sample gradients of a tanh MLP with cross-entropy (float32) ----
// benchmarks/per_sample.h: ft's vmap(grad(loss)) and the hand-written Eigen baseline.
void BM_PerSampleFt(benchmark::State& state, std::vector<int64_t> sizes) {
  PerSampleProblem p = MakePerSampleProblem(sizes, state.range(0));
  TensorListFn per_sample = PerSampleGradsFt(p);
  for (auto _ : state) benchmark::DoNotOptimize(per_sample(p.args)[0].impl());
}

// A cold call: the large-block cache emptied before each (outside the timing), so every
// buffer is fresh memory, as on a program's first call.
void BM_PerSampleFtCold(benchmark::State& state, std::vector<int64_t> sizes) {
  PerSampleProblem p = MakePerSampleProblem(sizes, state.range(0));
  TensorListFn per_sample = PerSampleGradsFt(p);
  for (auto _ : state) {
    state.PauseTiming();
    ReleaseCachedMemory();
    state.ResumeTiming();
    benchmark::DoNotOptimize(per_sample(p.args)[0].impl());
  }
}

void BM_PerSampleEigen(benchmark::State& state, std::vector<int64_t> sizes) {
  PerSampleProblem p = MakePerSampleProblem(sizes, state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(PerSampleGradsEigen(p)[0].data());
}

// The loop a hand-written training step runs: every buffer reused from call to call.
void BM_PerSampleEigenReused(benchmark::State& state, std::vector<int64_t> sizes) {
  PerSampleProblem p = MakePerSampleProblem(sizes, state.range(0));
  PerSampleEigenWork work;
  for (auto _ : state) {
    PerSampleGradsEigenInto(p, work);
    benchmark::DoNotOptimize(work.grads[0].data());
  }
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
  SetFigure("vjp_chain100_n1", "reported (functorch 8.5 us per op)", 100, "op");
  reg("vjp_chain100_n1/ft", BM_VjpFt);
  reg("vjp_chain100_n1/baseline", BM_EagerN1);
  SetFigure("jvp_chain10_1e6", "<= 0.8x functorch (limit: one hand-written SLEEF pass)");
  reg("jvp_chain10_1e6/ft", BM_JvpChain10Ft);
  reg("jvp_chain10_1e6/baseline", BM_JvpChain10Limit);
  SetFigure("jit_jvp_chain10_1e6", "<= 0.35x functorch eager, <= 1.3x roofline");
  reg("jit_jvp_chain10_1e6/ft", BM_JitJvpChain10Ft);
  reg("jit_jvp_chain10_1e6/baseline", BM_JvpChain10Limit);
  SetFigure("jvp_chain100_n1", "<= 0.6 us per op (functorch 14.2)", 100, "op");
  reg("jvp_chain100_n1/ft", BM_JvpFt);
  reg("jvp_chain100_n1/baseline", BM_EagerN1);
  // figure_n registers one figure at size n: ft's side and the baseline, same settings.
  using Bench = std::function<void(benchmark::State&)>;
  auto figure_n = [](const std::string& fig, const std::string& target, int64_t n, Bench ft,
                     Bench baseline) {
    SetFigure(fig, target);
    for (const auto& [side, fn] : {std::pair{"/ft", ft}, std::pair{"/baseline", baseline}}) {
      benchmark::RegisterBenchmark((fig + side).c_str(), fn)
          ->Arg(n)
          ->Repetitions(SmokeTest() ? 1 : kRepetitions)
          ->ReportAggregatesOnly(true)
          ->Unit(benchmark::kMicrosecond);
    }
  };
  auto jacobian = [](JacobianTransform t) {
    return [t](benchmark::State& state) { BM_JacobianFt(state, t); };
  };
  auto hessian_of = [](JacobianTransform t) {
    return [t](benchmark::State& state) { BM_HessianFt(state, t); };
  };
  for (int64_t n : {int64_t{16}, int64_t{128}, SmokeTest() ? int64_t{16} : int64_t{512}}) {
    const std::string suffix = "_sinWx_n" + std::to_string(n);
    figure_n("jacrev" + suffix, "<= 1.5x", n, jacobian(&Jacrev), BM_JacobianBasisEigen);
    figure_n("jacfwd" + suffix, "<= 1.5x", n, jacobian(&Jacfwd), BM_JacobianBasisEigen);
    figure_n("jit_jacrev" + suffix, "<= 1.5x", n, jacobian(&JitJacrev), BM_JacobianBasisEigen);
    figure_n("jit_jacfwd" + suffix, "<= 1.5x", n, jacobian(&JitJacfwd), BM_JacobianBasisEigen);
  }
  for (int64_t n : {int64_t{16}, int64_t{128}}) {
    figure_n("linearize_jvp_fn_sinWx_n" + std::to_string(n),
             "< 1x (baseline: a whole jvp per tangent)", n, BM_LinearizedJvpFt,
             BM_JvpPerTangent);
  }
  for (const auto& [name, sizes] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"32-64-64-10", {32, 64, 64, 10}}, {"784-128-10", {784, 128, 10}}}) {
    for (int64_t batch : {int64_t{64}, SmokeTest() ? int64_t{64} : int64_t{1024}}) {
      figure_n("per_sample_grads_" + name + "_B" + std::to_string(batch), "<= 1.5x", batch,
               [sizes = sizes](benchmark::State& state) { BM_PerSampleFt(state, sizes); },
               [sizes = sizes](benchmark::State& state) { BM_PerSampleEigen(state, sizes); });
      // A cold call against Eigen allocating fresh (its allocations hit malloc's free lists).
      figure_n("per_sample_once_" + name + "_B" + std::to_string(batch),
               "reported (a cold call: ft's cache emptied first)", batch,
               [sizes = sizes](benchmark::State& state) { BM_PerSampleFtCold(state, sizes); },
               [sizes = sizes](benchmark::State& state) { BM_PerSampleEigen(state, sizes); });
      // The same ft calls against hand-written Eigen that reuses its buffers across calls.
      figure_n("per_sample_loop_" + name + "_B" + std::to_string(batch),
               "<= 1.5x (limit: Eigen reusing its buffers)", batch,
               [sizes = sizes](benchmark::State& state) { BM_PerSampleFt(state, sizes); },
               [sizes = sizes](benchmark::State& state) { BM_PerSampleEigenReused(state, sizes); });
    }
  }
  for (int64_t n : {int64_t{16}, int64_t{128}}) {
    const std::string suffix = "_tanh2_n" + std::to_string(n);
    figure_n("hessian" + suffix, "<= 1.5x", n, hessian_of(&Hessian), BM_HessianEigen);
    figure_n("jit_hessian" + suffix, "<= 1.5x", n, hessian_of(&JitHessian), BM_HessianEigen);
  }
}

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  ft::bench::Register();
  return ft::bench::RunAndCompare(argc, argv);
}

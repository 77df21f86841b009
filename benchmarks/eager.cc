// Eager (no transform) benchmarks: the framework cost of one op, elementwise throughput, and
// GEMM, each beside its hand-written baseline in the same run.
//   bazel run -c opt //benchmarks:eager
// Targets (issue "Foundation"): <= 0.10 us per op on a 100-op chain of 1-element tensors;
// elementwise ops on 1e6 float32 <= 1.15x a hand-written Eigen loop; matmul 256^2 and 1024^2
// <= 1.1x Eigen's GEMM on the same data.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "Eigen/Core"
#include "benchmark/benchmark.h"
#include "benchmarks/roofline.h"
#include "benchmarks/side_by_side.h"
#include "benchmarks/workloads.h"
#include "ft.h"

namespace ft::bench {
namespace {

using EigenArray = Eigen::Array<float, Eigen::Dynamic, 1>;
using EigenMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// ---- Framework cost: Chain100 (workloads.h): 100 ops on 1 element. ----

void BM_ChainFt(benchmark::State& state) {
  Tensor x = full({state.range(0)}, 0.5f);
  for (auto _ : state) benchmark::DoNotOptimize(Chain100(x).impl());
}

// The hand-written chain allocates every intermediate result, as an eager library must.
void BM_ChainBaseline(benchmark::State& state) {
  EigenArray x = EigenArray::Constant(state.range(0), 0.5f);
  for (auto _ : state) {
    EigenArray y = x;
    for (int i = 0; i < 25; ++i) {
      EigenArray a = y.sin();
      EigenArray b = a * 0.9f;
      EigenArray c = b + 0.1f;
      y = c * x;
    }
    benchmark::DoNotOptimize(y.data());
  }
}

// ---- Elementwise on 1e6 float32: ft allocates its result, the baseline writes a buffer. ----

constexpr int64_t kBig = 1000000;

template <Tensor (*Op)(const Tensor&)>
void BM_UnaryFt(benchmark::State& state) {
  Tensor x = RandomTensor({kBig}, 1);
  for (auto _ : state) benchmark::DoNotOptimize(Op(x).impl());
}

void BM_ExpBaseline(benchmark::State& state) {
  Tensor x = RandomTensor({kBig}, 1);
  Eigen::Map<const EigenArray> in(x.data<float>(), kBig);
  EigenArray out(kBig);
  for (auto _ : state) {
    out = in.exp();
    benchmark::DoNotOptimize(out.data());
  }
}

void BM_SinBaseline(benchmark::State& state) {
  Tensor x = RandomTensor({kBig}, 1);
  Eigen::Map<const EigenArray> in(x.data<float>(), kBig);
  EigenArray out(kBig);
  for (auto _ : state) {
    out = in.sin();
    benchmark::DoNotOptimize(out.data());
  }
}

// silu and gelu on 1e6 float32, against the same formulas as one scalar Eigen loop with
// <cmath>'s exp and erfc: ft's kernels before they moved onto vecmath. Run with
// FT_NUM_THREADS=1 to compare one thread with one thread.
float SiluScalar(float v) { return v / (1.0f + std::exp(-v)); }
float GeluScalar(float v) { return 0.5f * v * std::erfc(-v * 0.70710678f); }
Tensor GeluNone(const Tensor& x) { return gelu(x); }
// mish, softplus and logsigmoid as their kernels computed them before activation_math.h put
// them on vecmath: <cmath>'s exp, log1p and tanh one element at a time.
float SoftplusScalar(float v) { return v > 20.0f ? v : std::log1p(std::exp(v)); }
float MishScalar(float v) { return v * std::tanh(SoftplusScalar(v)); }
float LogsigmoidScalar(float v) {
  return std::min(v, 0.0f) - std::log1p(std::exp(-std::fabs(v)));
}
Tensor SoftplusDefault(const Tensor& x) { return softplus(x); }

template <float (*F)(float)>
void BM_ScalarFormula(benchmark::State& state) {
  Tensor x = RandomTensor({kBig}, 1);
  Eigen::Map<const EigenArray> in(x.data<float>(), kBig);
  EigenArray out(kBig);
  for (auto _ : state) {
    out = in.unaryExpr([](float v) { return F(v); });
    benchmark::DoNotOptimize(out.data());
  }
}

// pow of two 1e6 float32 arrays (base in [0.5, 1.5), exponent in [1, 2)): ft against the
// scalar std::pow loop its kernel ran before it moved onto vecmath's SLEEF pow.
void BM_PowFt(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1, 0.5), b = RandomTensor({kBig}, 2, 1.0);
  for (auto _ : state) benchmark::DoNotOptimize(pow(a, b).impl());
}

void BM_PowScalarLoop(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1, 0.5), b = RandomTensor({kBig}, 2, 1.0);
  Eigen::Map<const EigenArray> x(a.data<float>(), kBig), y(b.data<float>(), kBig);
  EigenArray out(kBig);
  for (auto _ : state) {
    out = x.binaryExpr(y, [](float u, float v) { return std::pow(u, v); });
    benchmark::DoNotOptimize(out.data());
  }
}

// atan2 of two 1e6 float32 arrays (both in [-0.5, 0.5)): ft against the scalar std::atan2
// loop its kernel ran before it moved onto vecmath's SLEEF atan2.
void BM_Atan2Ft(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1, -0.5), b = RandomTensor({kBig}, 2, -0.5);
  for (auto _ : state) benchmark::DoNotOptimize(atan2(a, b).impl());
}

void BM_Atan2ScalarLoop(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1, -0.5), b = RandomTensor({kBig}, 2, -0.5);
  Eigen::Map<const EigenArray> x(a.data<float>(), kBig), y(b.data<float>(), kBig);
  EigenArray out(kBig);
  for (auto _ : state) {
    out = x.binaryExpr(y, [](float u, float v) { return std::atan2(u, v); });
    benchmark::DoNotOptimize(out.data());
  }
}

void BM_AddFt(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1), b = RandomTensor({kBig}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b).impl());
}

void BM_MulFt(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1), b = RandomTensor({kBig}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(mul(a, b).impl());
}

void BM_MaximumFt(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1), b = RandomTensor({kBig}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(maximum(a, b).impl());
}

// What ft's maximum kernel ran before it moved onto vecmath: Eigen's NaN-propagating max over
// the arrays (Eigen's SSE2 packets in the default build).
void BM_MaximumEigen(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1), b = RandomTensor({kBig}, 2);
  Eigen::Map<const EigenArray> ma(a.data<float>(), kBig), mb(b.data<float>(), kBig);
  EigenArray out(kBig);
  for (auto _ : state) {
    out = ma.binaryExpr(mb, Eigen::internal::scalar_max_op<float, float, Eigen::PropagateNaN>());
    benchmark::DoNotOptimize(out.data());
  }
}

// ---- The ops moved onto vecmath with nothing else changed, each against the code ft ran
// before (Eigen's SSE2 packets in the default build, or a plain loop). ----
void BM_LtFt(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1), b = RandomTensor({kBig}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(lt(a, b).impl());
}
void BM_LtEigen(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1), b = RandomTensor({kBig}, 2);
  Eigen::Map<const EigenArray> ma(a.data<float>(), kBig), mb(b.data<float>(), kBig);
  Eigen::Array<bool, Eigen::Dynamic, 1> out(kBig);
  for (auto _ : state) {
    out = ma < mb;
    benchmark::DoNotOptimize(out.data());
  }
}
void BM_AbsFt(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1);
  for (auto _ : state) benchmark::DoNotOptimize(abs(a).impl());
}
void BM_AbsEigen(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1);
  Eigen::Map<const EigenArray> ma(a.data<float>(), kBig);
  EigenArray out(kBig);
  for (auto _ : state) {
    out = ma.abs();
    benchmark::DoNotOptimize(out.data());
  }
}
void BM_LeakyReluFt(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1);
  for (auto _ : state) benchmark::DoNotOptimize(leaky_relu(a, 0.01).impl());
}
void BM_LeakyReluLoop(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1);
  const float* in = a.data<float>();
  std::vector<float> out(kBig);
  float* o = out.data();
  const float slope = 0.01f;
  for (auto _ : state) {
    for (int64_t i = 0; i < kBig; ++i) o[i] = in[i] > 0 ? in[i] : in[i] * slope;
    benchmark::DoNotOptimize(o);
  }
}
void BM_ProdRowsFt(benchmark::State& state) {
  Tensor x = RandomTensor({1000, 1000}, 1);
  for (auto _ : state) benchmark::DoNotOptimize(prod(x, {1}).impl());
}
void BM_ProdRowsEigen(benchmark::State& state) {
  Tensor x = RandomTensor({1000, 1000}, 1);
  Eigen::Map<const EigenMatrix> in(x.data<float>(), 1000, 1000);
  Eigen::VectorXf out(1000);
  for (auto _ : state) {
    out = in.rowwise().prod();
    benchmark::DoNotOptimize(out.data());
  }
}
// a[:, 12:1012] + b, a [1000, 1024]: a narrowed view, rows 1024 apart (unit-stride runs).
void BM_AddNarrowedFt(benchmark::State& state) {
  Tensor a = RandomTensor({1000, 1024}, 1), b = RandomTensor({1000, 1000}, 2);
  Tensor narrowed = slice(a, 1, 12, 1012);
  for (auto _ : state) benchmark::DoNotOptimize(add(narrowed, b).impl());
}
void BM_AddNarrowedEigen(benchmark::State& state) {
  Tensor a = RandomTensor({1000, 1024}, 1), b = RandomTensor({1000, 1000}, 2);
  Eigen::Map<const EigenMatrix, 0, Eigen::OuterStride<>> ma(a.data<float>() + 12, 1000, 1000,
                                                           Eigen::OuterStride<>(1024));
  Eigen::Map<const EigenMatrix> mb(b.data<float>(), 1000, 1000);
  EigenMatrix out(1000, 1000);
  for (auto _ : state) {
    out = ma + mb;
    benchmark::DoNotOptimize(out.data());
  }
}
// a + b^T, 1000 x 1000: one operand read down its columns.
void BM_AddTransposedFt(benchmark::State& state) {
  Tensor a = RandomTensor({1000, 1000}, 1), b = RandomTensor({1000, 1000}, 2);
  Tensor bt = transpose(b, 0, 1);
  for (auto _ : state) benchmark::DoNotOptimize(add(a, bt).impl());
}
void BM_AddTransposedEigen(benchmark::State& state) {
  Tensor a = RandomTensor({1000, 1000}, 1), b = RandomTensor({1000, 1000}, 2);
  Eigen::Map<const EigenMatrix> ma(a.data<float>(), 1000, 1000), mb(b.data<float>(), 1000, 1000);
  EigenMatrix out(1000, 1000);
  for (auto _ : state) {
    out = ma + mb.transpose();
    benchmark::DoNotOptimize(out.data());
  }
}

template <bool kAdd>
void BM_BinaryBaseline(benchmark::State& state) {
  Tensor a = RandomTensor({kBig}, 1), b = RandomTensor({kBig}, 2);
  Eigen::Map<const EigenArray> ma(a.data<float>(), kBig), mb(b.data<float>(), kBig);
  EigenArray out(kBig);
  for (auto _ : state) {
    if (kAdd) {
      out = ma + mb;
    } else {
      out = ma * mb;
    }
    benchmark::DoNotOptimize(out.data());
  }
}

// Chain10 (workloads.h) on 1e6 elements: ten kernels, each result allocated, against the same
// math as one hand-written pass over SLEEF's vector functions (roofline.h, the limit).
void BM_Chain10Ft(benchmark::State& state) {
  Tensor x = RandomTensor({kBig}, 1, 0.5);
  for (auto _ : state) benchmark::DoNotOptimize(Chain10(x).impl());
}

// The same chain under ft::jit: traced once, then replayed as one fused pass.
void BM_JitChain10Ft(benchmark::State& state) {
  Tensor x = RandomTensor({kBig}, 1, 0.5);
  JitFunction f = jit([](const TensorList& a) { return TensorList{Chain10(a[0])}; });
  for (auto _ : state) benchmark::DoNotOptimize(f({x})[0].impl());
}

void BM_Chain10Limit(benchmark::State& state) {
  Tensor x = RandomTensor({kBig}, 1, 0.5);
  std::vector<float> out(kBig);
  for (auto _ : state) {
    Chain10Limit(x.data<float>(), out.data(), kBig);
    benchmark::DoNotOptimize(out.data());
  }
}

// The gradient of a two-layer relu network's loss under ft::jit, with pointwise fusion
// against the same trace without it (TraceOptions::fuse_pointwise off): relu's backward is
// where(gt(y, 0), g, 0), so fusion of comparisons and where leaves one pass between the
// matmuls. Rows of 128 features: the pointwise passes are a large share of the work.
TensorListFn ReluMlpGrad(const Tensor& w1, const Tensor& w2) {
  return grad(ScalarFn([w1, w2](const TensorList& a) {
    const Tensor h = relu(matmul(a[0], w1));
    return sum(square(relu(matmul(h, w2)) - 0.5f));
  }));
}

void JitReluMlpGrad(benchmark::State& state, bool fuse) {
  const int64_t rows = state.range(0);
  const Tensor x = RandomTensor({rows, 128}, 1);
  const Tensor w1 = RandomTensor({128, 128}, 2) * 0.1f, w2 = RandomTensor({128, 128}, 3) * 0.1f;
  TraceOptions options;
  options.fuse_pointwise = fuse;
  JitFunction f = jit(ReluMlpGrad(w1, w2), options);
  for (auto _ : state) benchmark::DoNotOptimize(f({x})[0].impl());
}

void BM_JitReluMlpGradFused(benchmark::State& state) { JitReluMlpGrad(state, true); }
void BM_JitReluMlpGradUnfused(benchmark::State& state) { JitReluMlpGrad(state, false); }

// JitChainOn1e6 times f under ft::jit on one 1e6 float32 input in [-0.5, 0.5), fused or with
// pointwise fusion off (the same trace, one kernel per op): the pairs below.
void JitChainOn1e6(benchmark::State& state, bool fuse, Tensor (*f)(const Tensor&)) {
  const Tensor x = RandomTensor({kBig}, 1, -0.5);
  TraceOptions options;
  options.fuse_pointwise = fuse;
  JitFunction jitted =
      jit(TensorListFn([f](const TensorList& a) { return TensorList{f(a[0])}; }), options);
  for (auto _ : state) benchmark::DoNotOptimize(jitted({x})[0].impl());
}

// A chain with powers (a soft-threshold, |x|^1.5 * sign(x) / (1 + x^2)): pow fuses since it
// runs vecmath's Pow.
Tensor PowChain(const Tensor& v) { return pow(abs(v), 1.5) * sign(v) / (pow(v, 2.0) + 1.0); }
void BM_JitPowChainFused(benchmark::State& state) { JitChainOn1e6(state, true, &PowChain); }
void BM_JitPowChainUnfused(benchmark::State& state) { JitChainOn1e6(state, false, &PowChain); }

// An MLP layer's activations: activations with constants between arithmetic, fused into one
// pass against one kernel per op.
Tensor ActivationChain(const Tensor& v) {
  return leaky_relu(gelu(v) * 2.0 - 0.5, 0.1) + softplus(v, 2.0, 20.0) * silu(v);
}
void BM_JitActivationChainFused(benchmark::State& state) {
  JitChainOn1e6(state, true, &ActivationChain);
}
void BM_JitActivationChainUnfused(benchmark::State& state) {
  JitChainOn1e6(state, false, &ActivationChain);
}

// STREAM's triad on 1e6 floats per array: the bandwidth behind the roofline column of
// //benchmarks:compare. The figure's two sides are the same loop (the ratio is noise).
void BM_Triad(benchmark::State& state) {
  std::vector<float> a(kBig), b(kBig, 1.0f), c(kBig, 2.0f);
  for (auto _ : state) {
    Triad(a.data(), b.data(), c.data(), kBig);
    benchmark::DoNotOptimize(a.data());
  }
  state.counters["GB/s"] = benchmark::Counter(TriadBytes(kBig) * 1e-9 *
                                                  static_cast<double>(state.iterations()),
                                              benchmark::Counter::kIsRate);
}

// ---- Reductions: a whole 1e6 vector, and the rows of a [1000, 1000] matrix. ----

void BM_SumAllFt(benchmark::State& state) {
  Tensor x = RandomTensor({kBig}, 1);
  for (auto _ : state) benchmark::DoNotOptimize(sum(x).impl());
}

void BM_SumAllEigen(benchmark::State& state) {
  Tensor x = RandomTensor({kBig}, 1);
  Eigen::Map<const EigenArray> in(x.data<float>(), kBig);
  for (auto _ : state) benchmark::DoNotOptimize(in.sum());
}

// Sums over one dim of a [1000, n] float32 matrix; the argument is n (0: 1000). kDim 1: the
// row sums; kDim 0: the column sums (a bias gradient's reduction over the batch). At
// n = 1000 (4 MB) the matrix streams from the last-level cache or memory; at n = 256 (1 MB)
// it stays in L2, where the adds' latency and the per-row work, not bandwidth, bound the sum.
// The baseline is Eigen's rowwise / colwise sum.
int64_t RowLength(const benchmark::State& state) {
  return state.range(0) > 0 ? state.range(0) : 1000;
}

template <int64_t kDim>
void BM_SumOverDimFt(benchmark::State& state) {
  Tensor x = RandomTensor({1000, RowLength(state)}, 1);
  for (auto _ : state) benchmark::DoNotOptimize(sum(x, {kDim}).impl());
}

template <int64_t kDim>
void BM_SumOverDimEigen(benchmark::State& state) {
  const int64_t n = RowLength(state);
  Tensor x = RandomTensor({1000, n}, 1);
  Eigen::Map<const EigenMatrix> in(x.data<float>(), 1000, n);
  Eigen::VectorXf out(kDim == 1 ? 1000 : n);
  for (auto _ : state) {
    if constexpr (kDim == 1) {
      out.noalias() = in.rowwise().sum();
    } else {
      out.noalias() = in.colwise().sum().transpose();
    }
    benchmark::DoNotOptimize(out.data());
  }
}

// amax over the rows of [1000, 256] float32 (each output a column's max: a max-pool over
// the batch), against Eigen's colwise maxCoeff.
void BM_AmaxColumnsFt(benchmark::State& state) {
  Tensor x = RandomTensor({1000, 256}, 1);
  for (auto _ : state) benchmark::DoNotOptimize(amax(x, {0}).impl());
}

void BM_AmaxColumnsEigen(benchmark::State& state) {
  Tensor x = RandomTensor({1000, 256}, 1);
  Eigen::Map<const EigenMatrix> in(x.data<float>(), 1000, 256);
  Eigen::VectorXf out(256);
  for (auto _ : state) {
    out.noalias() = in.colwise().maxCoeff().transpose();
    benchmark::DoNotOptimize(out.data());
  }
}

// ---- GEMM ----

void BM_MatmulFt(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = RandomTensor({n, n}, 1), b = RandomTensor({n, n}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b).impl());
}

void BM_MatmulBaseline(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = RandomTensor({n, n}, 1), b = RandomTensor({n, n}, 2);
  Eigen::Map<const EigenMatrix> ma(a.data<float>(), n, n), mb(b.data<float>(), n, n);
  EigenMatrix c(n, n);
  for (auto _ : state) {
    c.noalias() = ma * mb;
    benchmark::DoNotOptimize(c.data());
  }
}

void Register() {
  auto reg = [](const std::string& name, auto fn, int64_t arg) {
    benchmark::RegisterBenchmark(name.c_str(), fn)
        ->Arg(arg)
        ->Repetitions(SmokeTest() ? 1 : kRepetitions)
        ->ReportAggregatesOnly(true)
        ->Unit(benchmark::kMicrosecond);
  };
  SetFigure("chain100_n1", "<= 0.10 us per op", 100, "op");
  reg("chain100_n1/ft", BM_ChainFt, 1);
  reg("chain100_n1/baseline", BM_ChainBaseline, 1);
  SetFigure("chain10_1e6", "<= 0.8x functorch (limit: one hand-written SLEEF pass)");
  reg("chain10_1e6/ft", BM_Chain10Ft, 0);
  reg("chain10_1e6/baseline", BM_Chain10Limit, 0);
  SetFigure("jit_chain10_1e6", "<= 0.35x functorch eager, <= 1.3x roofline");
  reg("jit_chain10_1e6/ft", BM_JitChain10Ft, 0);
  reg("jit_chain10_1e6/baseline", BM_Chain10Limit, 0);
  const int64_t mlp_rows = SmokeTest() ? 64 : 8192;
  SetFigure("jit_relu_mlp_grad", "reported (baseline: the same jit without pointwise fusion)");
  reg("jit_relu_mlp_grad/ft", BM_JitReluMlpGradFused, mlp_rows);
  reg("jit_relu_mlp_grad/baseline", BM_JitReluMlpGradUnfused, mlp_rows);
  SetFigure("jit_pow_chain_1e6", "reported (baseline: the same jit without pointwise fusion)");
  reg("jit_pow_chain_1e6/ft", BM_JitPowChainFused, 0);
  reg("jit_pow_chain_1e6/baseline", BM_JitPowChainUnfused, 0);
  SetFigure("jit_activation_chain_1e6",
            "reported (baseline: the same jit without pointwise fusion)");
  reg("jit_activation_chain_1e6/ft", BM_JitActivationChainFused, 0);
  reg("jit_activation_chain_1e6/baseline", BM_JitActivationChainUnfused, 0);
  SetFigure("triad_1e6", "the machine's bandwidth (both sides the same loop)");
  reg("triad_1e6/ft", BM_Triad, 0);
  reg("triad_1e6/baseline", BM_Triad, 0);
  SetFigure("sum_1e6", "reported");
  reg("sum_1e6/ft", BM_SumAllFt, 0);
  reg("sum_1e6/baseline", BM_SumAllEigen, 0);
  SetFigure("sum_rows_1000x1000", "reported");
  reg("sum_rows_1000x1000/ft", BM_SumOverDimFt<1>, 0);
  reg("sum_rows_1000x1000/baseline", BM_SumOverDimEigen<1>, 0);
  SetFigure("sum_columns_1000x256", "reported (in L2; baseline: Eigen's colwise sum)");
  reg("sum_columns_1000x256/ft", BM_SumOverDimFt<0>, 256);
  reg("sum_columns_1000x256/baseline", BM_SumOverDimEigen<0>, 256);
  SetFigure("amax_columns_1000x256", "reported (in L2; baseline: Eigen's colwise maxCoeff)");
  reg("amax_columns_1000x256/ft", BM_AmaxColumnsFt, 0);
  reg("amax_columns_1000x256/baseline", BM_AmaxColumnsEigen, 0);
  SetFigure("sum_rows_1000x256", "reported (rows in L2)");
  reg("sum_rows_1000x256/ft", BM_SumOverDimFt<1>, 256);
  reg("sum_rows_1000x256/baseline", BM_SumOverDimEigen<1>, 256);
  SetFigure("exp_1e6", "<= 1.15x");
  reg("exp_1e6/ft", BM_UnaryFt<&exp>, 0);
  reg("exp_1e6/baseline", BM_ExpBaseline, 0);
  SetFigure("sin_1e6", "<= 1.15x");
  reg("sin_1e6/ft", BM_UnaryFt<&sin>, 0);
  reg("sin_1e6/baseline", BM_SinBaseline, 0);
  SetFigure("silu_1e6", "reported (baseline: the scalar <cmath> formula)");
  reg("silu_1e6/ft", BM_UnaryFt<&silu>, 0);
  reg("silu_1e6/baseline", BM_ScalarFormula<&SiluScalar>, 0);
  SetFigure("pow_1e6", "reported (baseline: the scalar std::pow loop)");
  reg("pow_1e6/ft", BM_PowFt, 0);
  reg("pow_1e6/baseline", BM_PowScalarLoop, 0);
  SetFigure("atan2_1e6", "reported (baseline: the scalar std::atan2 loop)");
  reg("atan2_1e6/ft", BM_Atan2Ft, 0);
  reg("atan2_1e6/baseline", BM_Atan2ScalarLoop, 0);
  SetFigure("gelu_1e6", "reported (baseline: the scalar <cmath> formula)");
  reg("gelu_1e6/ft", BM_UnaryFt<&GeluNone>, 0);
  reg("gelu_1e6/baseline", BM_ScalarFormula<&GeluScalar>, 0);
  SetFigure("mish_1e6", "reported (baseline: the scalar <cmath> formula)");
  reg("mish_1e6/ft", BM_UnaryFt<&mish>, 0);
  reg("mish_1e6/baseline", BM_ScalarFormula<&MishScalar>, 0);
  SetFigure("softplus_1e6", "reported (baseline: the scalar <cmath> formula)");
  reg("softplus_1e6/ft", BM_UnaryFt<&SoftplusDefault>, 0);
  reg("softplus_1e6/baseline", BM_ScalarFormula<&SoftplusScalar>, 0);
  SetFigure("logsigmoid_1e6", "reported (baseline: the scalar <cmath> formula)");
  reg("logsigmoid_1e6/ft", BM_UnaryFt<&logsigmoid>, 0);
  reg("logsigmoid_1e6/baseline", BM_ScalarFormula<&LogsigmoidScalar>, 0);
  SetFigure("add_1e6", "<= 1.15x");
  reg("add_1e6/ft", BM_AddFt, 0);
  reg("add_1e6/baseline", BM_BinaryBaseline<true>, 0);
  SetFigure("mul_1e6", "<= 1.15x");
  reg("mul_1e6/ft", BM_MulFt, 0);
  reg("mul_1e6/baseline", BM_BinaryBaseline<false>, 0);
  SetFigure("maximum_1e6", "reported (baseline: the Eigen kernel it replaced)");
  reg("maximum_1e6/ft", BM_MaximumFt, 0);
  reg("maximum_1e6/baseline", BM_MaximumEigen, 0);
  SetFigure("lt_1e6", "reported (baseline: the Eigen kernel it replaced)");
  reg("lt_1e6/ft", BM_LtFt, 0);
  reg("lt_1e6/baseline", BM_LtEigen, 0);
  SetFigure("abs_1e6", "reported (baseline: the Eigen kernel it replaced)");
  reg("abs_1e6/ft", BM_AbsFt, 0);
  reg("abs_1e6/baseline", BM_AbsEigen, 0);
  SetFigure("leaky_relu_1e6", "reported (baseline: the plain loop it replaced)");
  reg("leaky_relu_1e6/ft", BM_LeakyReluFt, 0);
  reg("leaky_relu_1e6/baseline", BM_LeakyReluLoop, 0);
  SetFigure("prod_rows_1000x1000", "reported (baseline: Eigen's rowwise prod, as before)");
  reg("prod_rows_1000x1000/ft", BM_ProdRowsFt, 0);
  reg("prod_rows_1000x1000/baseline", BM_ProdRowsEigen, 0);
  SetFigure("add_narrowed_1000x1000", "reported (baseline: Eigen's expression on the view)");
  reg("add_narrowed_1000x1000/ft", BM_AddNarrowedFt, 0);
  reg("add_narrowed_1000x1000/baseline", BM_AddNarrowedEigen, 0);
  SetFigure("add_transposed_1000x1000", "reported (baseline: Eigen's a + b.transpose())");
  reg("add_transposed_1000x1000/ft", BM_AddTransposedFt, 0);
  reg("add_transposed_1000x1000/baseline", BM_AddTransposedEigen, 0);
  for (int64_t n : {int64_t{256}, SmokeTest() ? int64_t{32} : int64_t{1024}}) {
    const std::string fig = "matmul_" + std::to_string(n);
    SetFigure(fig, "<= 1.10x");
    reg(fig + "/ft", BM_MatmulFt, n);
    reg(fig + "/baseline", BM_MatmulBaseline, n);
  }
}

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  ft::bench::Register();
  return ft::bench::RunAndCompare(argc, argv);
}

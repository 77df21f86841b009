// Control flow and checkpoint (issue 23), each figure beside its baseline in the same run:
//   - scan_rnn: a tanh RNN (hidden 64, T = 100, B = 32, input 64), forward + gradient of its
//     parameters, written with ft::scan, against the same model unrolled in ft ops (target
//     <= 1.3x) and against hand-written Eigen BPTT (<= 1.5x); jit of the scan version against
//     the Eigen BPTT (<= 1.1x);
//   - vmap_while: vmap(while_loop) over B = 64 examples whose trip counts are 1..64, against
//     the same call where every example takes 64 steps (<= 1.15x: finished examples cost
//     little) and against a loop over the examples one by one (<= 0.2x);
//   - checkpoint_mlp: the gradient of a 16-block residual MLP (width 1024, B = 256) with
//     checkpoint around every block, against the same without (time <= 1.4x), also with the
//     save-matmuls policy; the peak memory is measured by
//     //examples:checkpoint_mlp --width 1024 --batch 256.
//   bazel run -c opt //benchmarks:control_flow
#include <cmath>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "benchmark/benchmark.h"
#include "benchmarks/side_by_side.h"
#include "benchmarks/workloads.h"
#include "ft.h"

namespace ft::bench {
namespace {

// Uniform(shape, seed, scale): float32 uniform in [-scale, scale).
Tensor Uniform(IntArrayRef shape, uint64_t seed, double scale) {
  return RandomTensor(shape, seed, -0.5) * (2.0 * scale);
}

// ---- The RNN ----

struct RnnSizes {
  int64_t hidden, steps, batch, input;
};

RnnSizes Sizes() {
  return SmokeTest() ? RnnSizes{8, 4, 2, 8} : RnnSizes{64, 100, 32, 64};
}

struct RnnProblem {
  RnnSizes s;
  Tensor w, u, b, xs;  // w [H, H], u [D, H], b [H], xs [T, B, D]; h0 = 0
};

RnnProblem MakeRnn() {
  RnnProblem p;
  p.s = Sizes();
  p.w = Uniform({p.s.hidden, p.s.hidden}, 1, 0.1);
  p.u = Uniform({p.s.input, p.s.hidden}, 2, 0.1);
  p.b = Uniform({p.s.hidden}, 3, 0.1);
  p.xs = Uniform({p.s.steps, p.s.batch, p.s.input}, 4, 1.0);
  return p;
}

// loss = 0.5 * sum(h_T^2), h_t = tanh(h_{t-1} W + x_t U + b).
Tensor ScanLoss(const TensorList& a, const Tensor& xs, int64_t batch) {
  const Tensor &w = a[0], &u = a[1], &b = a[2];
  ScanResult r = scan(
      [&](const TensorList& h, const TensorList& x) {
        return std::pair(TensorList{tanh(matmul(h[0], w) + matmul(x[0], u) + b)}, TensorList{});
      },
      {zeros({batch, w.size(0)})}, {xs});
  return sum(square(r.carry[0])) * 0.5;
}

Tensor UnrolledLoss(const TensorList& a, const Tensor& xs, int64_t batch) {
  Tensor h = zeros({batch, a[0].size(0)});
  for (int64_t t = 0; t < xs.size(0); ++t) {
    h = tanh(matmul(h, a[0]) + matmul(select(xs, 0, t), a[1]) + a[2]);
  }
  return sum(square(h)) * 0.5;
}

using RnnLoss = Tensor (*)(const TensorList& a, const Tensor& xs, int64_t batch);

// BM_RnnGrad: the gradient of `loss` for the parameters, eagerly or (jitted) replayed.
void BM_RnnGrad(benchmark::State& state, RnnLoss loss, bool jitted) {
  RnnProblem p = MakeRnn();
  TensorListFn g = grad(ScalarFn([&p, loss](const TensorList& a) {
    return loss(a, p.xs, p.s.batch);
  }), {0, 1, 2});
  if (jitted) g = jit(g);
  for (auto _ : state) benchmark::DoNotOptimize(g({p.w, p.u, p.b})[0].impl());
}
void BM_RnnScan(benchmark::State& state) { BM_RnnGrad(state, &ScanLoss, false); }
void BM_RnnUnrolled(benchmark::State& state) { BM_RnnGrad(state, &UnrolledLoss, false); }
void BM_RnnJit(benchmark::State& state) { BM_RnnGrad(state, &ScanLoss, true); }

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Hand-written BPTT: the forward keeps every h_t; the backward walks them in reverse.
void BM_RnnEigen(benchmark::State& state) {
  RnnProblem p = MakeRnn();
  const int64_t H = p.s.hidden, D = p.s.input, B = p.s.batch, T = p.s.steps;
  Eigen::Map<const RowMatrix> w(p.w.data<float>(), H, H), u(p.u.data<float>(), D, H);
  Eigen::Map<const Eigen::RowVectorXf> b(p.b.data<float>(), H);
  const float* xs = p.xs.data<float>();
  std::vector<RowMatrix> h(T + 1, RowMatrix::Zero(B, H));
  RowMatrix dw(H, H), du(D, H), dh(B, H), dz(B, H);
  Eigen::RowVectorXf db(H);
  for (auto _ : state) {
    for (int64_t t = 0; t < T; ++t) {
      Eigen::Map<const RowMatrix> x(xs + t * B * D, B, D);
      h[t + 1].noalias() = h[t] * w;
      h[t + 1].noalias() += x * u;
      h[t + 1] = (h[t + 1].rowwise() + b).array().tanh().matrix();
    }
    dh = h[T];
    dw.setZero();
    du.setZero();
    db.setZero();
    for (int64_t t = T - 1; t >= 0; --t) {
      Eigen::Map<const RowMatrix> x(xs + t * B * D, B, D);
      dz = (dh.array() * (1.0f - h[t + 1].array().square())).matrix();
      dw.noalias() += h[t].transpose() * dz;
      du.noalias() += x.transpose() * dz;
      db += dz.colwise().sum();
      dh.noalias() = dz * w.transpose();
    }
    benchmark::DoNotOptimize(dw.data());
    benchmark::DoNotOptimize(du.data());
    benchmark::DoNotOptimize(db.data());
  }
}

// ---- vmap(while_loop) ----

constexpr int64_t kLoopDim = 16;

int64_t LoopBatch() { return SmokeTest() ? 4 : 64; }

// x <- tanh(x W) + x * 0.5 while the step counter is below the example's limit.
TensorList LoopOne(const Tensor& w, const Tensor& x, const Tensor& limit) {
  return while_loop([&limit](const TensorList& c) { return lt(c[1], limit); },
                    [&w](const TensorList& c) {
                      return TensorList{tanh(matmul(c[0], w)) + c[0] * 0.5, c[1] + 1};
                    },
                    {x, zeros({}, kInt64)});
}

struct LoopProblem {
  Tensor w, xs, ragged, full;  // ragged: limits 1..B; full: every limit B
};

LoopProblem MakeLoop() {
  const int64_t batch = LoopBatch();
  LoopProblem p;
  p.w = Uniform({kLoopDim, kLoopDim}, 5, 0.3);
  p.xs = Uniform({batch, kLoopDim}, 6, 1.0);
  p.ragged = arange(1, batch + 1, 1, kInt64);
  p.full = full({batch}, batch, kInt64);
  return p;
}

void BM_VmapWhile(benchmark::State& state, bool ragged) {
  LoopProblem p = MakeLoop();
  TensorListFn f = vmap(TensorListFn([&p](const TensorList& a) {
    return LoopOne(p.w, a[0], a[1]);
  }));
  const Tensor& limits = ragged ? p.ragged : p.full;
  for (auto _ : state) benchmark::DoNotOptimize(f({p.xs, limits})[0].impl());
}

void BM_LoopOverExamples(benchmark::State& state) {
  LoopProblem p = MakeLoop();
  for (auto _ : state) {
    TensorList outs;
    for (int64_t i = 0; i < p.xs.size(0); ++i) {
      outs.push_back(LoopOne(p.w, select(p.xs, 0, i), select(p.ragged, 0, i))[0]);
    }
    benchmark::DoNotOptimize(stack(outs, 0).impl());
  }
}

// ---- checkpoint ----

struct MlpSizes {
  int64_t depth, width, batch;
};

MlpSizes Mlp() { return SmokeTest() ? MlpSizes{2, 16, 4} : MlpSizes{16, 1024, 256}; }

Tensor MlpBlock(const Tensor& h, const Tensor& w, const Tensor& b) {
  return h + gelu(linear(layer_norm(h, {w.size(0)}), w, b));
}

// variant: 0 plain, 1 checkpoint, 2 checkpoint keeping matrix products.
void BM_CheckpointMlp(benchmark::State& state, int variant) {
  const MlpSizes s = Mlp();
  TensorList params;
  for (int64_t k = 0; k < s.depth; ++k) {
    params.push_back(Uniform({s.width, s.width}, 10 + k, 0.5 / std::sqrt(s.width)));
    params.push_back(zeros({s.width}));
  }
  const Tensor x = Uniform({s.batch, s.width}, 7, 1.0);
  const TensorListFn block = checkpoint(
      [](const TensorList& a) { return TensorList{MlpBlock(a[0], a[1], a[2])}; },
      {.policy = variant == 2 ? CheckpointPolicy::kSaveMatmuls : CheckpointPolicy::kSaveNothing});
  std::vector<int64_t> all(params.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  TensorListFn g = grad(ScalarFn([&](const TensorList& p) {
    Tensor h = x;
    for (int64_t k = 0; k < s.depth; ++k) {
      h = variant > 0 ? block({h, p[2 * k], p[2 * k + 1]})[0]
                      : MlpBlock(h, p[2 * k], p[2 * k + 1]);
    }
    return mean(square(h));
  }), all);
  for (auto _ : state) benchmark::DoNotOptimize(g(params)[0].impl());
}

void Add(const std::string& name, void (*fn)(benchmark::State&)) {
  benchmark::RegisterBenchmark(name.c_str(), fn)
      ->Repetitions(SmokeTest() ? 1 : kRepetitions)
      ->ReportAggregatesOnly(true)
      ->Unit(benchmark::kMicrosecond);
}

template <typename Arg>
void Add(const std::string& name, void (*fn)(benchmark::State&, Arg), Arg arg) {
  benchmark::RegisterBenchmark(name.c_str(), fn, arg)
      ->Repetitions(SmokeTest() ? 1 : kRepetitions)
      ->ReportAggregatesOnly(true)
      ->Unit(benchmark::kMicrosecond);
}

void Register() {
  SetFigure("scan_rnn_vs_unrolled", "<= 1.3x");
  Add("scan_rnn_vs_unrolled/ft", &BM_RnnScan);
  Add("scan_rnn_vs_unrolled/baseline", &BM_RnnUnrolled);
  SetFigure("scan_rnn_vs_eigen_bptt", "<= 1.5x");
  Add("scan_rnn_vs_eigen_bptt/ft", &BM_RnnScan);
  Add("scan_rnn_vs_eigen_bptt/baseline", &BM_RnnEigen);
  SetFigure("jit_scan_rnn_vs_eigen_bptt", "<= 1.1x");
  Add("jit_scan_rnn_vs_eigen_bptt/ft", &BM_RnnJit);
  Add("jit_scan_rnn_vs_eigen_bptt/baseline", &BM_RnnEigen);
  SetFigure("vmap_while_ragged_vs_full", "<= 1.15x");
  Add("vmap_while_ragged_vs_full/ft", &BM_VmapWhile, true);
  Add("vmap_while_ragged_vs_full/baseline", &BM_VmapWhile, false);
  SetFigure("vmap_while_vs_loop_over_examples", "<= 0.2x");
  Add("vmap_while_vs_loop_over_examples/ft", &BM_VmapWhile, true);
  Add("vmap_while_vs_loop_over_examples/baseline", &BM_LoopOverExamples);
  SetFigure("checkpoint_mlp_time", "<= 1.4x");
  Add("checkpoint_mlp_time/ft", &BM_CheckpointMlp, 1);
  Add("checkpoint_mlp_time/baseline", &BM_CheckpointMlp, 0);
  SetFigure("checkpoint_save_matmuls_mlp_time", "<= 1.4x");
  Add("checkpoint_save_matmuls_mlp_time/ft", &BM_CheckpointMlp, 2);
  Add("checkpoint_save_matmuls_mlp_time/baseline", &BM_CheckpointMlp, 0);
}

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  ft::bench::Register();
  return ft::bench::RunAndCompare(argc, argv);
}

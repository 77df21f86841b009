// The model workloads of issue 21, each figure beside its baseline in the same run
// (benchmarks/side_by_side.h):
//   - conv2d forward + backward (input, weight and bias gradients) of ResNet-like layers:
//     ft's conv2d under vjp against oneDNN 2.6 (Debian's libdnnl, the library PyTorch's CPU
//     convolutions use) running the same three primitives in its own blocked layouts, the
//     reorders into them done once outside the timing: the limit of that library;
//   - per-sample gradients of functorch's tutorial CNN (examples/tutorial_cnn.h) by
//     vmap(grad) against a loop of single-example grads;
//   - the empirical NTK of functorch's NTK-tutorial CNN (examples/ntk_cnn.h) by Jacobian
//     contraction against the loop of per-example jacrev products;
//   - per-sample gradients of a transformer block (examples/transformer_block.h; d 128,
//     4 heads, seq 64, B 32) by vmap(grad) against a loop of single-example grads.
// //benchmarks:compare runs the same workloads in functorch beside them.
#include <dnnl.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/side_by_side.h"
#include "examples/ntk_cnn.h"
#include "examples/transformer_block.h"
#include "examples/tutorial_cnn.h"
#include "ft.h"

namespace ft::bench {
namespace {

// ---- conv2d forward + backward ----

struct ConvShape {
  int64_t n, c, h, w, o, k, pad;
};

// ft: the forward and the vjp with respect to input, weight and bias, one call.
void BM_ConvFt(benchmark::State& state, ConvShape s) {
  Generator gen(1);
  const Tensor x = randn_like(zeros({s.n, s.c, s.h, s.w}), &gen);
  const Tensor w = randn_like(zeros({s.o, s.c, s.k, s.k}), &gen) * 0.05;
  const Tensor b = zeros({s.o});
  const TensorListFn f = [s](const TensorList& a) {
    return TensorList{conv2d(a[0], a[1], a[2], {1}, {s.pad})};
  };
  const Tensor g = ones_like(f({x, w, b})[0]);
  for (auto _ : state) {
    VjpResult r = vjp(f, {x, w, b});
    benchmark::DoNotOptimize(r.vjp_fn({g})[0].impl());
  }
}

// oneDNN: convolution_forward (training), backward_data and backward_weights (with bias).
void BM_ConvOneDnn(benchmark::State& state, ConvShape s) {
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  const int64_t oh = s.h + 2 * s.pad - s.k + 1, ow = s.w + 2 * s.pad - s.k + 1;
  const memory::dims src_dims = {s.n, s.c, s.h, s.w}, wei_dims = {s.o, s.c, s.k, s.k},
                     bias_dims = {s.o}, dst_dims = {s.n, s.o, oh, ow}, strides = {1, 1},
                     pad = {s.pad, s.pad};
  const memory::desc src_any(src_dims, dt::f32, tag::any), wei_any(wei_dims, dt::f32, tag::any),
      bias_md(bias_dims, dt::f32, tag::x), dst_any(dst_dims, dt::f32, tag::any);
  const convolution_forward::primitive_desc fwd_pd(
      convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                src_any, wei_any, bias_md, dst_any, strides, pad, pad),
      eng);
  const convolution_backward_data::primitive_desc bwd_data_pd(
      convolution_backward_data::desc(algorithm::convolution_direct, src_any, wei_any, dst_any,
                                      strides, pad, pad),
      eng, fwd_pd);
  const convolution_backward_weights::primitive_desc bwd_wei_pd(
      convolution_backward_weights::desc(algorithm::convolution_direct, src_any, wei_any,
                                         bias_md, dst_any, strides, pad, pad),
      eng, fwd_pd);
  // Buffers in the layouts each primitive chose, filled once (values do not change timing).
  auto filled = [&eng](const memory::desc& md, float value) {
    memory m(md, eng);
    float* p = static_cast<float*>(m.get_data_handle());
    for (size_t i = 0; i < md.get_size() / sizeof(float); ++i) p[i] = value;
    return m;
  };
  memory src = filled(fwd_pd.src_desc(), 0.5f), wei = filled(fwd_pd.weights_desc(), 0.01f),
         bias = filled(bias_md, 0.0f), dst = filled(fwd_pd.dst_desc(), 0.0f);
  memory diff_dst = filled(bwd_data_pd.diff_dst_desc(), 1.0f);
  memory diff_dst_w = filled(bwd_wei_pd.diff_dst_desc(), 1.0f);
  memory wei_b = filled(bwd_data_pd.weights_desc(), 0.01f);
  memory diff_src = filled(bwd_data_pd.diff_src_desc(), 0.0f);
  memory src_w = filled(bwd_wei_pd.src_desc(), 0.5f);
  memory diff_wei = filled(bwd_wei_pd.diff_weights_desc(), 0.0f),
         diff_bias = filled(bwd_wei_pd.diff_bias_desc(), 0.0f);
  convolution_forward fwd(fwd_pd);
  convolution_backward_data bwd_data(bwd_data_pd);
  convolution_backward_weights bwd_wei(bwd_wei_pd);
  for (auto _ : state) {
    fwd.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_BIAS, bias},
                       {DNNL_ARG_DST, dst}});
    bwd_data.execute(strm, {{DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_WEIGHTS, wei_b},
                            {DNNL_ARG_DIFF_SRC, diff_src}});
    bwd_wei.execute(strm, {{DNNL_ARG_SRC, src_w}, {DNNL_ARG_DIFF_DST, diff_dst_w},
                           {DNNL_ARG_DIFF_WEIGHTS, diff_wei}, {DNNL_ARG_DIFF_BIAS, diff_bias}});
    strm.wait();
  }
}

// ---- per-sample gradients of the tutorial CNN ----

Tensor CnnExampleLoss(const tutorial::Cnn& p, const Tensor& x, const Tensor& y) {
  return tutorial::CnnLoss(p, unsqueeze(x, 0), unsqueeze(y, 0));
}

struct CnnInputs {
  tutorial::Cnn params;
  tutorial::Mnist data;
};

CnnInputs MakeCnnInputs(int64_t batch) {
  Generator gen(0);
  CnnInputs in;
  in.params = tutorial::InitCnn(gen);
  in.data = tutorial::SyntheticMnist(batch, gen);
  return in;
}

void BM_CnnPerSampleFt(benchmark::State& state) {
  const CnnInputs in = MakeCnnInputs(state.range(0));
  const auto f = vmap(grad(&CnnExampleLoss), {std::nullopt, 0, 0});
  for (auto _ : state) benchmark::DoNotOptimize(f(in.params, in.data.x, in.data.y).conv1.w.impl());
}

void BM_CnnPerSampleLoop(benchmark::State& state) {
  const CnnInputs in = MakeCnnInputs(state.range(0));
  const auto g = grad(&CnnExampleLoss);
  for (auto _ : state) {
    for (int64_t i = 0; i < state.range(0); ++i) {
      benchmark::DoNotOptimize(
          g(in.params, select(in.data.x, 0, i), select(in.data.y, 0, i)).conv1.w.impl());
    }
  }
}

// ---- the empirical NTK of the NTK tutorial's CNN ----

// n images x1 and m images x2, each [3, size, size].
struct NtkShape {
  int64_t n, m, size;
};

struct NtkInputs {
  ntk::Cnn params;
  Tensor x1, x2;
};

NtkInputs MakeNtkInputs(NtkShape s) {
  Generator gen(2);
  NtkInputs in;
  in.params = ntk::InitParams(gen, s.size);
  in.x1 = randn_like(zeros({s.n, 3, s.size, s.size}), &gen);
  in.x2 = randn_like(zeros({s.m, 3, s.size, s.size}), &gen);
  return in;
}

void BM_NtkFt(benchmark::State& state, NtkShape s) {
  const NtkInputs in = MakeNtkInputs(s);
  for (auto _ : state) {
    benchmark::DoNotOptimize(ntk::NtkByJacobianContraction(in.params, in.x1, in.x2).impl());
  }
}

void BM_NtkLoop(benchmark::State& state, NtkShape s) {
  const NtkInputs in = MakeNtkInputs(s);
  for (auto _ : state) benchmark::DoNotOptimize(ntk::NtkByLoop(in.params, in.x1, in.x2).impl());
}

// ---- per-sample gradients of the transformer block ----

struct TransformerCase {
  transformer::BlockShape shape;
  int64_t seq, batch;
};

struct TransformerInputs {
  transformer::Block params;
  transformer::Sequences data;  // x [batch, seq, d], y [batch]
};

TransformerInputs MakeTransformerInputs(const TransformerCase& c) {
  Generator gen(0);
  TransformerInputs in;
  in.params = transformer::InitParams(c.shape, gen);
  in.data = transformer::SyntheticSequences(c.shape, c.batch, c.seq, gen);
  return in;
}

auto TransformerExampleLoss(transformer::BlockShape shape) {
  return [shape](const transformer::Block& p, const Tensor& x, const Tensor& y) {
    return transformer::ExampleLoss(shape, p, x, y);
  };
}

void BM_TransformerPerSampleFt(benchmark::State& state, TransformerCase c) {
  const TransformerInputs in = MakeTransformerInputs(c);
  const auto f = vmap(grad(TransformerExampleLoss(c.shape)), {std::nullopt, 0, 0});
  for (auto _ : state) benchmark::DoNotOptimize(f(in.params, in.data.x, in.data.y).ln1.w.impl());
}

void BM_TransformerPerSampleLoop(benchmark::State& state, TransformerCase c) {
  const TransformerInputs in = MakeTransformerInputs(c);
  const auto g = grad(TransformerExampleLoss(c.shape));
  for (auto _ : state) {
    for (int64_t i = 0; i < c.batch; ++i) {
      benchmark::DoNotOptimize(
          g(in.params, select(in.data.x, 0, i), select(in.data.y, 0, i)).ln1.w.impl());
    }
  }
}

void Register() {
  auto figure = [](const std::string& fig, const std::string& target, std::optional<int64_t> arg,
                   std::function<void(benchmark::State&)> ft,
                   std::function<void(benchmark::State&)> baseline) {
    SetFigure(fig, target);
    for (const auto& [side, fn] : {std::pair{"/ft", ft}, std::pair{"/baseline", baseline}}) {
      auto* b = benchmark::RegisterBenchmark((fig + side).c_str(), fn);
      if (arg) b->Arg(*arg);
      b->Repetitions(SmokeTest() ? 1 : kRepetitions)
          ->ReportAggregatesOnly(true)
          ->Unit(benchmark::kMillisecond);
    }
  };
  const bool smoke = SmokeTest();
  const std::vector<std::pair<std::string, ConvShape>> convs = {
      {"conv2d_3x3_64c_56_B8", smoke ? ConvShape{1, 4, 8, 8, 4, 3, 1} : ConvShape{8, 64, 56, 56, 64, 3, 1}},
      {"conv2d_1x1_256c_56_B8", smoke ? ConvShape{1, 8, 8, 8, 8, 1, 0} : ConvShape{8, 256, 56, 56, 256, 1, 0}},
      {"conv2d_3x3_1to32_28_B64", smoke ? ConvShape{2, 1, 8, 8, 4, 3, 0} : ConvShape{64, 1, 28, 28, 32, 3, 0}},
      {"conv2d_3x3_32to64_26_B64", smoke ? ConvShape{2, 4, 8, 8, 8, 3, 0} : ConvShape{64, 32, 26, 26, 64, 3, 0}},
  };
  for (const auto& [name, s] : convs) {
    figure(name + "_fwd_bwd", "reported (limit: oneDNN's three primitives)", std::nullopt,
           [s = s](benchmark::State& st) { BM_ConvFt(st, s); },
           [s = s](benchmark::State& st) { BM_ConvOneDnn(st, s); });
  }
  for (int64_t batch : {int64_t{64}, smoke ? int64_t{64} : int64_t{256}}) {
    const int64_t b = smoke ? 2 : batch;
    figure("cnn_per_sample_B" + std::to_string(batch), "<= 1.0x functorch (baseline: a loop)", b,
           BM_CnnPerSampleFt, BM_CnnPerSampleLoop);
  }
  // functorch's NTK tutorial: 20 training images against 5 test images of 32x32.
  const NtkShape ntk_shape = smoke ? NtkShape{2, 2, 9} : NtkShape{20, 5, 32};
  figure("ntk_cnn_N20_M5_S32", "<= 1.0x functorch (baseline: a loop of per-example jacrev)",
         std::nullopt, [ntk_shape](benchmark::State& st) { BM_NtkFt(st, ntk_shape); },
         [ntk_shape](benchmark::State& st) { BM_NtkLoop(st, ntk_shape); });
  const TransformerCase block = smoke ? TransformerCase{{.d = 16, .heads = 2}, 6, 4}
                                      : TransformerCase{{.d = 128, .heads = 4}, 64, 32};
  figure("transformer_per_sample_B32", "<= 1.0x functorch (baseline: a loop)", std::nullopt,
         [block](benchmark::State& st) { BM_TransformerPerSampleFt(st, block); },
         [block](benchmark::State& st) { BM_TransformerPerSampleLoop(st, block); });
}

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  // oneDNN's OpenMP runtime takes its thread count from OMP_NUM_THREADS at its start: give it
  // ft's (FT_NUM_THREADS), so both sides of a figure use the same cores.
  setenv("OMP_NUM_THREADS", std::to_string(ft::GetNumThreads()).c_str(), /*overwrite=*/1);
  ft::bench::Register();
  return ft::bench::RunAndCompare(argc, argv);
}

// ft/benchmarks/per_sample.h  (testonly)
//
// The per-sample-gradient workload of the issue: per-example gradients of a tanh MLP with
// softmax cross-entropy, float32, computed by ft (vmap(grad(loss)) with the parameters
// shared) and by hand in Eigen (forward, backprop deltas, per-example outer products), with
// results allocated each call as ft's are, or into buffers reused across calls. Shared by the timing suite (grad.cc) and the peak-memory
// measurement (peak_memory.cc) so both measure the same work.
#ifndef FT_BENCHMARKS_PER_SAMPLE_H_
#define FT_BENCHMARKS_PER_SAMPLE_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "benchmarks/workloads.h"
#include "ft.h"

namespace ft::bench {

using EigenRowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct PerSampleProblem {
  std::vector<int64_t> sizes;  // layer widths, e.g. {32, 64, 64, 10}
  int64_t batch = 0;
  TensorList args;             // W1, b1, W2, b2, ..., x [batch, in], y one-hot [batch, out]
  size_t layers() const { return sizes.size() - 1; }
};

inline PerSampleProblem MakePerSampleProblem(std::vector<int64_t> sizes, int64_t batch) {
  PerSampleProblem p{sizes, batch, {}};
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    p.args.push_back(RandomTensor({sizes[l + 1], sizes[l]}, 10 + l, -0.5) * 0.3);
    p.args.push_back(RandomTensor({sizes[l + 1]}, 20 + l, -0.5) * 0.1);
  }
  p.args.push_back(RandomTensor({batch, sizes[0]}, 3, -0.5));
  p.args.push_back(to(one_hot(randint(0, sizes.back(), {batch}), sizes.back()), kFloat32));
  return p;
}

// MlpLoss: a = params..., x, y (one example).
inline Tensor MlpLoss(const TensorList& a, size_t layers) {
  Tensor h = a[2 * layers];
  for (size_t l = 0; l < layers; ++l) {
    h = linear(h, a[2 * l], a[2 * l + 1]);
    if (l + 1 < layers) h = tanh(h);
  }
  return neg(sum(a[2 * layers + 1] * log_softmax(h, -1)));
}

// PerSampleGradsFt: vmap over (x, y) of grad w.r.t. every parameter.
inline TensorListFn PerSampleGradsFt(const PerSampleProblem& p) {
  const size_t layers = p.layers();
  std::vector<int64_t> argnums;
  for (size_t i = 0; i < 2 * layers; ++i) argnums.push_back(static_cast<int64_t>(i));
  std::vector<std::optional<int64_t>> dims(2 * layers + 2, std::nullopt);
  dims[2 * layers] = 0;
  dims[2 * layers + 1] = 0;
  return vmap(grad(ScalarFn([layers](const TensorList& a) { return MlpLoss(a, layers); }),
                   argnums),
              Dims(dims));
}

// PerSampleEigenWork: every buffer of the hand-written computation. Passing the same one to
// PerSampleGradsEigenInto call after call reuses all of them (the loop a hand-written
// training step would run: no allocation after the first call).
struct PerSampleEigenWork {
  std::vector<EigenRowMatrix> acts;    // acts[0] = x, acts[l + 1] = layer l's output
  std::vector<EigenRowMatrix> deltas;  // deltas[l]: dL/d(layer l's pre-activation)
  std::vector<EigenRowMatrix> grads;   // per-example dW (flattened rows) and db, per layer
};

// PerSampleGradsEigenInto: the same gradients as PerSampleGradsFt in closed form, into `w`:
// w.grads[2l] is [batch, out * in] (per-example dW, row-major), w.grads[2l + 1] is
// [batch, out] (per-example db).
inline void PerSampleGradsEigenInto(const PerSampleProblem& p, PerSampleEigenWork& w) {
  using Map = Eigen::Map<const EigenRowMatrix>;
  const std::vector<int64_t>& sizes = p.sizes;
  const size_t layers = p.layers();
  const int64_t batch = p.batch;
  const Tensor& x = p.args[2 * layers];
  const Tensor& y = p.args[2 * layers + 1];
  w.acts.resize(layers + 1);
  w.deltas.resize(layers);
  w.grads.resize(2 * layers);
  w.acts[0] = Map(x.data<float>(), batch, sizes[0]);
  for (size_t l = 0; l < layers; ++l) {
    Map wl(p.args[2 * l].data<float>(), sizes[l + 1], sizes[l]);
    Eigen::Map<const Eigen::RowVectorXf> b(p.args[2 * l + 1].data<float>(), sizes[l + 1]);
    EigenRowMatrix& z = w.acts[l + 1];
    z.noalias() = w.acts[l] * wl.transpose();
    z.rowwise() += b;
    if (l + 1 < layers) z = z.array().tanh().matrix();
  }
  // Softmax cross-entropy: dL/dz = softmax(z) - y, per row.
  EigenRowMatrix& last = w.deltas[layers - 1];
  last = w.acts[layers];
  for (int64_t r = 0; r < batch; ++r) {
    const float mx = last.row(r).maxCoeff();
    last.row(r) = (last.row(r).array() - mx).exp().matrix();
    last.row(r) /= last.row(r).sum();
  }
  last -= Map(y.data<float>(), batch, sizes.back());
  for (size_t l = layers; l-- > 0;) {
    const EigenRowMatrix& in = w.acts[l];
    const EigenRowMatrix& delta = w.deltas[l];
    EigenRowMatrix& gw = w.grads[2 * l];
    gw.resize(batch, sizes[l + 1] * sizes[l]);  // per-example outer products
    for (int64_t r = 0; r < batch; ++r) {
      Eigen::Map<EigenRowMatrix>(gw.row(r).data(), sizes[l + 1], sizes[l]).noalias() =
          delta.row(r).transpose() * in.row(r);
    }
    w.grads[2 * l + 1] = delta;
    if (l > 0) {
      Map wl(p.args[2 * l].data<float>(), sizes[l + 1], sizes[l]);
      EigenRowMatrix& below = w.deltas[l - 1];
      below.noalias() = delta * wl;
      below = (below.array() * (1.0f - in.array().square())).matrix();
    }
  }
}

// PerSampleGradsEigen: PerSampleGradsEigenInto with fresh buffers, the results allocated each
// call as ft's are.
inline std::vector<EigenRowMatrix> PerSampleGradsEigen(const PerSampleProblem& p) {
  PerSampleEigenWork w;
  PerSampleGradsEigenInto(p, w);
  return std::move(w.grads);
}

}  // namespace ft::bench

#endif  // FT_BENCHMARKS_PER_SAMPLE_H_

// scan_rnn: a tanh RNN written with ft::scan, trained by gradient descent, with per-sample
// gradients by vmap(grad) through the scan.
//   ./bazelw run //examples:scan_rnn
//
// The task: read a sequence of 2-d points and tell whether the first coordinates sum to more
// than zero. h_t = tanh(h_{t-1} W + x_t U + b); the logit is <h_T, v> + c. The program
// checks that (1) the scan's gradient equals the same model unrolled in plain ops, (2) the
// per-sample gradients of vmap(grad(scan)) equal a loop of single-example gradients, and
// (3) training reaches 90% accuracy. It exits non-zero otherwise.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <tuple>
#include <utility>
#include <vector>

#include "ft.h"

namespace {

constexpr int64_t kSteps = 10, kHidden = 16, kBatch = 128;

// The RNN's parameters, a tree.
struct Rnn {
  ft::Tensor w;  // [H, H]: hidden to hidden
  ft::Tensor u;  // [2, H]: input to hidden
  ft::Tensor b;  // [H]
  ft::Tensor v;  // [H]: the readout
  ft::Tensor c;  // []: its bias
};
FT_TREE(Rnn, w, u, b, v, c);

ft::Tensor Logit(const Rnn& p, const ft::Tensor& seq) {
  // One step: the carry is the hidden state h, a Tensor; x is step t of the xs, the sequence
  // [T, 2]. No output per step: y is an empty tuple.
  auto step = [&p](const ft::Tensor& h, const ft::Tensor& x) {
    ft::Tensor next = ft::tanh(ft::matmul(h, p.w) + ft::matmul(x, p.u) + p.b);
    return std::pair{next, std::tuple<>()};
  };
  const ft::Tensor h_last = ft::scan(step, ft::zeros({kHidden}, ft::kFloat64), seq).carry;
  return ft::sum(h_last * p.v) + p.c;
}

// The same model unrolled in plain ops: the oracle for the scan.
ft::Tensor LogitUnrolled(const Rnn& p, const ft::Tensor& seq) {
  ft::Tensor h = ft::zeros({kHidden}, ft::kFloat64);
  for (int64_t t = 0; t < seq.size(0); ++t) {
    h = ft::tanh(ft::matmul(h, p.w) + ft::matmul(ft::select(seq, 0, t), p.u) + p.b);
  }
  return ft::sum(h * p.v) + p.c;
}

// Binary cross-entropy of one example: softplus(-y * logit), y in {-1, 1}.
ft::Tensor Loss(const ft::Tensor& logit, const ft::Tensor& y) {
  ft::Tensor m = ft::neg(y * logit);
  return ft::relu(m) + ft::log1p(ft::exp(ft::neg(ft::abs(m))));
}

// The loss of one example (a sequence and its label), through the scan and unrolled.
ft::Tensor ExampleLoss(const Rnn& p, const ft::Tensor& seq, const ft::Tensor& y) {
  return Loss(Logit(p, seq), y);
}
ft::Tensor ExampleLossUnrolled(const Rnn& p, const ft::Tensor& seq, const ft::Tensor& y) {
  return Loss(LogitUnrolled(p, seq), y);
}

// Whether every leaf of `a` is within 1e-12 of the same leaf of `b`.
bool AllClose(const Rnn& a, const Rnn& b) {
  const ft::TensorList leaves_a = ft::tree_leaves(a), leaves_b = ft::tree_leaves(b);
  for (size_t i = 0; i < leaves_a.size(); ++i) {
    if (!ft::allclose(leaves_a[i], leaves_b[i], 1e-12, 1e-12)) return false;
  }
  return true;
}

}  // namespace

int main() {
  ft::Generator gen(7);
  auto randn = [&gen](ft::IntArrayRef shape, double scale) {
    return ft::randn_like(ft::zeros(shape, ft::kFloat64), &gen) * scale;
  };
  Rnn params{.w = randn({kHidden, kHidden}, 0.3),
             .u = randn({2, kHidden}, 0.5),
             .b = ft::zeros({kHidden}, ft::kFloat64),
             .v = randn({kHidden}, 0.3),
             .c = ft::zeros({}, ft::kFloat64)};
  const ft::Tensor seqs = randn({kBatch, kSteps, 2}, 1.0);
  const ft::Tensor labels =
      ft::to(ft::gt(ft::sum(ft::select(seqs, 2, 0), {1}), 0.0), ft::kFloat64) * 2.0 - 1.0;

  // vmap over the examples (dim 0 of the sequences and labels), the parameters shared.
  const auto per_example_loss = ft::vmap(&ExampleLoss, {std::nullopt, 0, 0});
  auto batch_loss = [&](const Rnn& p) { return ft::mean(per_example_loss(p, seqs, labels)); };

  // (1) The scan's gradient equals the unrolled model's.
  const ft::Tensor seq0 = ft::select(seqs, 0, 0), y0 = ft::select(labels, 0, 0);
  const bool ok = AllClose(ft::grad(&ExampleLoss)(params, seq0, y0),
                           ft::grad(&ExampleLossUnrolled)(params, seq0, y0));
  std::cout << "scan gradient == unrolled gradient: " << (ok ? "yes" : "NO") << "\n";

  // (2) Per-sample gradients through the scan against a loop of single-example gradients.
  const auto per_sample = ft::vmap(ft::grad(&ExampleLoss), {std::nullopt, 0, 0});
  const Rnn grads = per_sample(params, seqs, labels);  // every leaf [batch, ...]
  const std::vector<Rnn> rows = ft::tree_unstack(grads);  // rows[i]: example i's gradients
  bool per_sample_ok = true;
  for (int64_t i = 0; i < 4; ++i) {
    const Rnn g = ft::grad(&ExampleLoss)(params, ft::select(seqs, 0, i), ft::select(labels, 0, i));
    per_sample_ok = per_sample_ok && AllClose(rows[i], g);
  }
  std::cout << "per-sample gradients (" << grads.w.size(0)
            << " examples) == loop: " << (per_sample_ok ? "yes" : "NO") << "\n";

  // (3) Training: full-batch gradient descent.
  const auto step = ft::grad_and_value(batch_loss);
  double loss = 0;
  for (int it = 0; it < 300; ++it) {
    const auto [g, value] = step(params);
    loss = value.item<double>();
    params = ft::tree_map([](const ft::Tensor& p, const ft::Tensor& d) { return p - d * 0.5; },
                          params, g);
    if (it % 100 == 0) std::printf("step %3d  loss %.4f\n", it, loss);
  }
  const ft::Tensor logits = ft::vmap(&Logit, {std::nullopt, 0})(params, seqs);
  const double accuracy =
      ft::mean(ft::to(ft::eq(ft::gt(logits, 0.0), ft::gt(labels, 0.0)), ft::kFloat64))
          .item<double>();
  std::printf("final loss %.4f, training accuracy %.3f\n", loss, accuracy);
  const bool trained = accuracy >= 0.9;
  return ok && per_sample_ok && trained ? 0 : 1;
}

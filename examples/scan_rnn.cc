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

#include "ft.h"

namespace {

constexpr int64_t kSteps = 10, kHidden = 16, kBatch = 128;

// params: {W [H, H], U [2, H], b [H], v [H], c []}.
ft::Tensor Logit(const ft::TensorList& params, const ft::Tensor& seq) {
  const ft::Tensor &w = params[0], &u = params[1], &b = params[2];
  ft::ScanResult r = ft::scan(
      [&](const ft::TensorList& h, const ft::TensorList& x) {
        ft::Tensor next = ft::tanh(ft::matmul(h[0], w) + ft::matmul(x[0], u) + b);
        return std::pair(ft::TensorList{next}, ft::TensorList{});
      },
      {ft::zeros({kHidden}, ft::kFloat64)}, {seq});
  return ft::sum(r.carry[0] * params[3]) + params[4];
}

// The same model unrolled in plain ops: the oracle for the scan.
ft::Tensor LogitUnrolled(const ft::TensorList& params, const ft::Tensor& seq) {
  ft::Tensor h = ft::zeros({kHidden}, ft::kFloat64);
  for (int64_t t = 0; t < seq.size(0); ++t) {
    h = ft::tanh(ft::matmul(h, params[0]) + ft::matmul(ft::select(seq, 0, t), params[1]) +
                 params[2]);
  }
  return ft::sum(h * params[3]) + params[4];
}

// Binary cross-entropy of one example: softplus(-y * logit), y in {-1, 1}.
ft::Tensor Loss(const ft::Tensor& logit, const ft::Tensor& y) {
  ft::Tensor m = ft::neg(y * logit);
  return ft::relu(m) + ft::log1p(ft::exp(ft::neg(ft::abs(m))));
}

}  // namespace

int main() {
  ft::Generator gen(7);
  auto randn = [&gen](ft::IntArrayRef shape, double scale) {
    return ft::randn_like(ft::zeros(shape, ft::kFloat64), &gen) * scale;
  };
  ft::TensorList params = {randn({kHidden, kHidden}, 0.3), randn({2, kHidden}, 0.5),
                           ft::zeros({kHidden}, ft::kFloat64), randn({kHidden}, 0.3),
                           ft::zeros({}, ft::kFloat64)};
  const ft::Tensor seqs = randn({kBatch, kSteps, 2}, 1.0);
  const ft::Tensor labels =
      ft::to(ft::gt(ft::sum(ft::select(seqs, 2, 0), {1}), 0.0), ft::kFloat64) * 2.0 - 1.0;

  // The loss of one example, a function of the parameters (0..4), the sequence and label.
  auto example_loss = [](const ft::TensorList& a) {
    ft::TensorList p(a.begin(), a.begin() + 5);
    return Loss(Logit(p, a[5]), a[6]);
  };
  auto batch_loss = [&](const ft::TensorList& p) {
    ft::TensorList a = p;
    a.push_back(seqs);
    a.push_back(labels);
    auto per_example = ft::vmap(ft::TensorListFn([&](const ft::TensorList& b) {
      return ft::TensorList{example_loss(b)};
    }), {std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, 0, 0});
    return ft::mean(per_example(a)[0]);
  };
  const std::vector<int64_t> all = {0, 1, 2, 3, 4};

  // (1) The scan's gradient equals the unrolled model's.
  ft::TensorList one = params;
  one.push_back(ft::select(seqs, 0, 0));
  one.push_back(ft::select(labels, 0, 0));
  ft::TensorList g_scan = ft::grad(ft::ScalarFn(example_loss), all)(one);
  ft::TensorList g_unrolled = ft::grad(ft::ScalarFn([](const ft::TensorList& a) {
    ft::TensorList p(a.begin(), a.begin() + 5);
    return Loss(LogitUnrolled(p, a[5]), a[6]);
  }), all)(one);
  bool ok = true;
  for (size_t k = 0; k < g_scan.size(); ++k) {
    ok = ok && ft::allclose(g_scan[k], g_unrolled[k], 1e-12, 1e-12);
  }
  std::cout << "scan gradient == unrolled gradient: " << (ok ? "yes" : "NO") << "\n";

  // (2) Per-sample gradients through the scan against a loop of single-example gradients.
  ft::TensorListFn per_sample = ft::vmap(ft::grad(ft::ScalarFn(example_loss), all),
                                         {std::nullopt, std::nullopt, std::nullopt,
                                          std::nullopt, std::nullopt, 0, 0});
  ft::TensorList with_data = params;
  with_data.push_back(seqs);
  with_data.push_back(labels);
  ft::TensorList grads = per_sample(with_data);
  bool per_sample_ok = true;
  for (int64_t i = 0; i < 4; ++i) {
    ft::TensorList a = params;
    a.push_back(ft::select(seqs, 0, i));
    a.push_back(ft::select(labels, 0, i));
    ft::TensorList g = ft::grad(ft::ScalarFn(example_loss), all)(a);
    for (size_t k = 0; k < g.size(); ++k) {
      per_sample_ok = per_sample_ok && ft::allclose(ft::select(grads[k], 0, i), g[k], 1e-12, 1e-12);
    }
  }
  std::cout << "per-sample gradients (" << grads[0].size(0)
            << " examples) == loop: " << (per_sample_ok ? "yes" : "NO") << "\n";

  // (3) Training: full-batch gradient descent.
  auto step = ft::grad_and_value(ft::ScalarFn(batch_loss), all);
  double loss = 0;
  for (int it = 0; it < 300; ++it) {
    ft::GradAndValue gv = step(params);
    loss = gv.value.item<double>();
    for (size_t k = 0; k < params.size(); ++k) params[k] = params[k] - gv.grads[k] * 0.5;
    if (it % 100 == 0) std::printf("step %3d  loss %.4f\n", it, loss);
  }
  ft::Tensor logits = ft::vmap(ft::TensorListFn([&](const ft::TensorList& b) {
    return ft::TensorList{Logit(params, b[0])};
  }))({seqs})[0];
  const double accuracy =
      ft::mean(ft::to(ft::eq(ft::gt(logits, 0.0), ft::gt(labels, 0.0)), ft::kFloat64))
          .item<double>();
  std::printf("final loss %.4f, training accuracy %.3f\n", loss, accuracy);
  const bool trained = accuracy >= 0.9;
  return ok && per_sample_ok && trained ? 0 : 1;
}

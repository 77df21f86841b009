// dp_sgd: differentially private SGD (Abadi et al. 2016) on a small MLP, with the
// per-example gradients it needs computed by vmap(grad(loss)) in one batched pass.
//   ./bazelw run //examples:dp_sgd
// Each step: every example's gradient (vmap over the examples, parameters shared), each one
// clipped to L2 norm <= kClip over all parameters together, summed, Gaussian noise of
// standard deviation kNoise * kClip added, averaged, and a plain SGD step. Before training,
// one batch of per-example gradients is checked against a loop of grad over its examples.
// Exits non-zero when that check or the final test accuracy fails.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "ft.h"

namespace {

constexpr int64_t kFeatures = 8, kHidden = 32, kClasses = 3;
constexpr int64_t kTrain = 2048, kTest = 512, kBatch = 64, kEpochs = 8;
constexpr double kLearningRate = 0.3, kClip = 1.0, kNoise = 0.6;

// The model's parameters: W1 [hidden, features], b1, W2 [classes, hidden], b2.
ft::TensorList InitParams(ft::Generator& gen) {
  return {ft::randn_like(ft::zeros({kHidden, kFeatures}), &gen) * (1.0 / std::sqrt(kFeatures)),
          ft::zeros({kHidden}),
          ft::randn_like(ft::zeros({kClasses, kHidden}), &gen) * (1.0 / std::sqrt(kHidden)),
          ft::zeros({kClasses})};
}

ft::Tensor Logits(const ft::TensorList& params, const ft::Tensor& x) {
  return ft::linear(ft::tanh(ft::linear(x, params[0], params[1])), params[2], params[3]);
}

// Loss of ONE example: a = {W1, b1, W2, b2, x [features], y one-hot [classes]}. vmap adds
// the batch; the function never sees it.
ft::Tensor ExampleLoss(const ft::TensorList& a) {
  const ft::Tensor logits = Logits({a[0], a[1], a[2], a[3]}, a[4]);
  return ft::neg(ft::sum(a[5] * ft::log_softmax(logits, -1)));
}

// A synthetic classification set: each class a Gaussian blob around its own center in
// feature space (the centers shared by the training and test sets).
struct Dataset {
  ft::Tensor x;       // [n, features]
  ft::Tensor labels;  // [n] int64
  ft::Tensor y;       // [n, classes] one-hot, float32
};

Dataset MakeDataset(int64_t n, ft::Generator& gen, const ft::Tensor& centers) {
  Dataset d;
  d.labels = ft::randint(0, kClasses, {n}, &gen);
  d.x = ft::index_select(centers, 0, d.labels) + ft::randn_like(ft::zeros({n, kFeatures}), &gen);
  d.y = ft::to(ft::one_hot(d.labels, kClasses), ft::kFloat32);
  return d;
}

double Accuracy(const ft::TensorList& params, const Dataset& d) {
  const ft::Tensor predicted = ft::argmax(Logits(params, d.x), 1);
  return ft::mean(ft::to(ft::eq(predicted, d.labels), ft::kFloat32)).item<double>();
}

// Progress: a bar redrawn in place on a terminal, nothing between epochs otherwise (the
// per-epoch lines are printed either way).
class Progress {
 public:
  Progress() : tty_(isatty(fileno(stdout)) != 0) {}
  void Update(int64_t epoch, int64_t step, int64_t steps) const {
    if (!tty_) return;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * (step + 1) / steps);
    std::printf("\repoch %lld/%lld [%s%s] %lld/%lld", static_cast<long long>(epoch + 1),
                static_cast<long long>(kEpochs), std::string(filled, '#').c_str(),
                std::string(kWidth - filled, '.').c_str(), static_cast<long long>(step + 1),
                static_cast<long long>(steps));
    std::fflush(stdout);
  }
  void EndEpoch() const {
    if (tty_) std::printf("\r\033[K");  // clear the bar; the epoch's line takes its place
  }

 private:
  bool tty_;
};

// The largest |a - b| over two lists of tensors of the same shapes.
double MaxAbsDiff(const ft::TensorList& a, const ft::TensorList& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, ft::amax(ft::abs(a[i] - b[i])).item<double>());
  }
  return worst;
}

}  // namespace

int main() {
  ft::Generator gen(7);
  const ft::Tensor centers = ft::randn_like(ft::zeros({kClasses, kFeatures}), &gen) * 0.8;
  const Dataset train = MakeDataset(kTrain, gen, centers);
  const Dataset test = MakeDataset(kTest, gen, centers);
  ft::TensorList params = InitParams(gen);

  // grad with respect to the four parameters; vmap maps x and y (dim 0) and shares the
  // parameters (nullopt): per_example(params..., xb, yb)[p] is [batch, shape of p].
  const ft::TensorListFn per_example =
      ft::vmap(ft::grad(ft::ScalarFn(ExampleLoss), {0, 1, 2, 3}),
               {std::nullopt, std::nullopt, std::nullopt, std::nullopt, 0, 0});
  const auto batch_args = [&params](const ft::Tensor& xb, const ft::Tensor& yb) {
    return ft::TensorList{params[0], params[1], params[2], params[3], xb, yb};
  };

  // Once: the batched per-example gradients against grad run on each example in a loop.
  {
    const ft::Tensor xb = ft::narrow(train.x, 0, 0, kBatch);
    const ft::Tensor yb = ft::narrow(train.y, 0, 0, kBatch);
    const ft::TensorList batched = per_example(batch_args(xb, yb));
    const ft::TensorListFn one = ft::grad(ft::ScalarFn(ExampleLoss), {0, 1, 2, 3});
    std::vector<ft::TensorList> rows(4);
    for (int64_t i = 0; i < kBatch; ++i) {
      const ft::TensorList g = one(batch_args(ft::select(xb, 0, i), ft::select(yb, 0, i)));
      for (size_t p = 0; p < 4; ++p) rows[p].push_back(g[p]);
    }
    ft::TensorList looped;
    for (const ft::TensorList& r : rows) looped.push_back(ft::stack(r, 0));
    const double diff = MaxAbsDiff(batched, looped);
    std::printf("per-example gradients, vmap(grad) vs a loop of grad over %lld examples: "
                "max |diff| = %.2e\n",
                static_cast<long long>(kBatch), diff);
    if (!(diff < 1e-5)) {
      std::printf("MISMATCH\n");
      return 1;
    }
  }

  std::printf("DP-SGD: %lld examples, batch %lld, clip %.1f, noise multiplier %.1f\n",
              static_cast<long long>(kTrain), static_cast<long long>(kBatch), kClip, kNoise);
  const Progress progress;
  const int64_t steps = kTrain / kBatch;
  for (int64_t epoch = 0; epoch < kEpochs; ++epoch) {
    const ft::Tensor order = ft::randint(0, kTrain, {kTrain}, &gen);  // sampled with replacement
    double clipped_fraction = 0;
    for (int64_t step = 0; step < steps; ++step) {
      const ft::Tensor rows = ft::narrow(order, 0, step * kBatch, kBatch);
      const ft::TensorList grads = per_example(
          batch_args(ft::index_select(train.x, 0, rows), ft::index_select(train.y, 0, rows)));
      // Each example's gradient norm over all parameters together: [batch].
      ft::Tensor squared = ft::zeros({kBatch});
      for (const ft::Tensor& g : grads) {
        squared = squared + ft::sum(ft::square(ft::reshape(g, {kBatch, -1})), {1});
      }
      const ft::Tensor norms = ft::sqrt(squared);
      const ft::Tensor scale = ft::minimum(kClip / (norms + 1e-6), 1.0);
      clipped_fraction += ft::mean(ft::to(ft::lt(scale, 1.0), ft::kFloat32)).item<double>();
      for (size_t p = 0; p < params.size(); ++p) {
        std::vector<int64_t> shape(grads[p].dim(), 1);
        shape[0] = kBatch;  // scale broadcast over the parameter's own dims
        const ft::Tensor clipped_sum = ft::sum(grads[p] * ft::reshape(scale, shape), {0});
        const ft::Tensor noise = ft::randn_like(params[p], &gen) * (kNoise * kClip);
        params[p] = params[p] - (clipped_sum + noise) * (kLearningRate / kBatch);
      }
      progress.Update(epoch, step, steps);
    }
    progress.EndEpoch();
    const double loss =
        ft::mean(ft::neg(ft::sum(train.y * ft::log_softmax(Logits(params, train.x), -1), {1})))
            .item<double>();
    std::printf("epoch %lld: train loss %.4f, train accuracy %.3f, clipped %.0f%% of examples\n",
                static_cast<long long>(epoch + 1), loss, Accuracy(params, train),
                100.0 * clipped_fraction / steps);
  }
  const double accuracy = Accuracy(params, test);
  std::printf("test accuracy %.3f (%lld held-out examples)\n", accuracy,
              static_cast<long long>(kTest));
  if (!(accuracy > 0.8)) {
    std::printf("FAILED: expected a test accuracy above 0.8\n");
    return 1;
  }
  return 0;
}

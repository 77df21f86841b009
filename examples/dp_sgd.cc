// dp_sgd: differentially private SGD (Abadi et al. 2016) on a small MLP, with the
// per-example gradients it needs computed by vmap(grad(loss)) in one batched pass.
//   ./bazelw run //examples:dp_sgd
// The parameters are a struct, Mlp (a tree), so the per-example gradients are an Mlp too.
// Each step: every example's gradient (vmap over the examples, parameters shared), each one
// clipped to L2 norm <= kClip over all parameters together, summed, Gaussian noise of
// standard deviation kNoise * kClip added, averaged, and a plain SGD step (ft::optim::Sgd
// takes the private gradient like any other). Before training,
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

// The model's parameters, a tree: the transforms take and return an Mlp.
struct Mlp {
  ft::Tensor w1;  // [hidden, features]
  ft::Tensor b1;  // [hidden]
  ft::Tensor w2;  // [classes, hidden]
  ft::Tensor b2;  // [classes]
};
FT_TREE(Mlp, w1, b1, w2, b2);

Mlp InitParams(ft::Generator& gen) {
  auto randn = [&gen](ft::IntArrayRef shape) { return ft::randn_like(ft::zeros(shape), &gen); };
  return {.w1 = randn({kHidden, kFeatures}) * (1.0 / std::sqrt(kFeatures)),
          .b1 = ft::zeros({kHidden}),
          .w2 = randn({kClasses, kHidden}) * (1.0 / std::sqrt(kHidden)),
          .b2 = ft::zeros({kClasses})};
}

ft::Tensor Logits(const Mlp& p, const ft::Tensor& x) {
  return ft::linear(ft::tanh(ft::linear(x, p.w1, p.b1)), p.w2, p.b2);
}

// Loss of ONE example: x [features], y one-hot [classes]. vmap adds the batch; the function
// never sees it.
ft::Tensor ExampleLoss(const Mlp& p, const ft::Tensor& x, const ft::Tensor& y) {
  return ft::neg(ft::sum(y * ft::log_softmax(Logits(p, x), -1)));
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

double Accuracy(const Mlp& params, const Dataset& d) {
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

// The largest |a - b| over two trees of the same structure, every leaf compared.
double MaxAbsDiff(const Mlp& a, const Mlp& b) {
  const Mlp gaps = ft::tree_map(
      [](const ft::Tensor& u, const ft::Tensor& v) { return ft::amax(ft::abs(u - v)); }, a, b);
  double worst = 0;
  for (const ft::Tensor& gap : ft::tree_leaves(gaps)) worst = std::max(worst, gap.item<double>());
  return worst;
}

}  // namespace

int main() {
  ft::Generator gen(7);
  const ft::Tensor centers = ft::randn_like(ft::zeros({kClasses, kFeatures}), &gen) * 0.8;
  const Dataset train = MakeDataset(kTrain, gen, centers);
  const Dataset test = MakeDataset(kTest, gen, centers);
  Mlp params = InitParams(gen);

  // grad differentiates the parameters (the first argument); vmap maps x and y (dim 0) and
  // shares the parameters (nullopt): each leaf of per_example(params, xb, yb) is
  // [batch, shape of that parameter].
  const auto per_example = ft::vmap(ft::grad(&ExampleLoss), {std::nullopt, 0, 0});

  // Once: the batched per-example gradients against grad run on each example in a loop.
  {
    const ft::Tensor xb = ft::narrow(train.x, 0, 0, kBatch);
    const ft::Tensor yb = ft::narrow(train.y, 0, 0, kBatch);
    const Mlp batched = per_example(params, xb, yb);
    const std::vector<Mlp> rows = ft::tree_unstack(batched);  // rows[i]: example i's gradients
    double diff = 0;
    for (int64_t i = 0; i < kBatch; ++i) {
      const Mlp one = ft::grad(&ExampleLoss)(params, ft::select(xb, 0, i), ft::select(yb, 0, i));
      diff = std::max(diff, MaxAbsDiff(rows[i], one));
    }
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
  // The private gradient goes to a plain optimizer, like any other gradient.
  const ft::optim::Sgd sgd{.lr = kLearningRate};
  auto sgd_state = sgd.init(params);
  const int64_t steps = kTrain / kBatch;
  for (int64_t epoch = 0; epoch < kEpochs; ++epoch) {
    const ft::Tensor order = ft::randint(0, kTrain, {kTrain}, &gen);  // sampled with replacement
    double clipped_fraction = 0;
    for (int64_t step = 0; step < steps; ++step) {
      const ft::Tensor rows = ft::narrow(order, 0, step * kBatch, kBatch);
      const Mlp grads = per_example(params, ft::index_select(train.x, 0, rows),
                                    ft::index_select(train.y, 0, rows));
      // Each example's gradient norm over all parameters together: [batch].
      ft::Tensor squared = ft::zeros({kBatch});
      for (const ft::Tensor& g : ft::tree_leaves(grads)) {
        squared = squared + ft::sum(ft::square(ft::reshape(g, {kBatch, -1})), {1});
      }
      const ft::Tensor norms = ft::sqrt(squared);
      const ft::Tensor scale = ft::minimum(kClip / (norms + 1e-6), 1.0);
      clipped_fraction += ft::mean(ft::to(ft::lt(scale, 1.0), ft::kFloat32)).item<double>();
      // Per parameter: the examples' clipped gradients summed, noise added, averaged.
      const Mlp private_grad = ft::tree_map(
          [&](const ft::Tensor& g) {
            std::vector<int64_t> shape(g.dim(), 1);
            shape[0] = kBatch;  // scale broadcast over the parameter's own dims
            const ft::Tensor clipped_sum = ft::sum(g * ft::reshape(scale, shape), {0});
            const ft::Tensor noise = ft::randn_like(clipped_sum, &gen) * (kNoise * kClip);
            return (clipped_sum + noise) * (1.0 / kBatch);
          },
          grads);
      auto [updates, next] = sgd.update(private_grad, sgd_state, params);
      params = ft::optim::apply_updates(params, updates);
      sgd_state = next;
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

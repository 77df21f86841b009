// ensembles: model ensembling with vmap, as in torch.func's tutorial. The parameters of M
// models of one architecture are stacked along a new leading dim; vmap over that dim runs
// all M models in one batched pass.
//   ./bazelw run //examples:ensembles
//   1. every model on the same minibatch: the parameters are mapped, the data is shared;
//   2. every model on its own minibatch: parameters and data are mapped together;
//   3. the whole ensemble trained at once: one training step (grad, then SGD with momentum
//      from ft::optim) is a pure function of trees, and vmap of it steps every model on its
//      own bootstrap sample with its own optimizer state.
// The parameters are a struct, Mlp (a tree); the ensemble's are an Mlp whose leaves are
// stacked, and in_dims is a prefix of the arguments (0 for a whole Mlp). Each batched result
// is checked against a loop over the models; exits non-zero on a mismatch or when training
// does not lower every model's loss.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ft.h"

namespace {

constexpr int64_t kModels = 5, kFeatures = 6, kHidden = 16, kClasses = 3;
constexpr int64_t kBatch = 32, kSamples = 512, kSteps = 150;
constexpr double kLearningRate = 0.5;

// One model's parameters, a tree. The ensemble is an Mlp too, each leaf stacked along a new
// leading dim of size M (w1 [M, hidden, features], ...).
struct Mlp {
  ft::Tensor w1;  // [hidden, features]
  ft::Tensor b1;  // [hidden]
  ft::Tensor w2;  // [classes, hidden]
  ft::Tensor b2;  // [classes]
};
FT_TREE(Mlp, w1, b1, w2, b2);

// One model's forward pass.
ft::Tensor Forward(const Mlp& p, const ft::Tensor& x) {
  return ft::linear(ft::relu(ft::linear(x, p.w1, p.b1)), p.w2, p.b2);
}

// The mean cross-entropy of one model on one minibatch x [batch, features], y one-hot
// [batch, classes].
ft::Tensor Loss(const Mlp& p, const ft::Tensor& x, const ft::Tensor& y) {
  const ft::Tensor logp = ft::log_softmax(Forward(p, x), -1);
  return ft::mean(ft::neg(ft::sum(y * logp, {1})));
}

// The optimizer: SGD with momentum, whose state (a momentum buffer per parameter) is a tree
// stacked like the parameters when the ensemble trains.
const ft::optim::Sgd kSgd{.lr = kLearningRate, .momentum = 0.5};
using SgdState = ft::optim::SgdState<Mlp>;

// One training step of one model, a pure function of trees: vmap makes it the step of the
// whole ensemble, each model on its own minibatch with its own optimizer state.
std::pair<Mlp, SgdState> TrainStep(const Mlp& p, const SgdState& state, const ft::Tensor& x,
                                   const ft::Tensor& y) {
  auto [updates, next] = kSgd.update(ft::grad(&Loss)(p, x, y), state, p);
  return {ft::optim::apply_updates(p, updates), next};
}

// The shapes of a tree's leaves, "[5, 16, 6] [5, 16] ...".
template <typename T>
std::string Shapes(const T& tree) {
  std::string out;
  for (const ft::Tensor& t : ft::tree_leaves(tree)) {
    out += (out.empty() ? "" : " ") + ft::ShapeToString(t.sizes());
  }
  return out;
}

// Whether the stacked tree `batched` (every leaf [M, ...]) equals, model by model, `one(m)`;
// prints its shapes and the largest gap.
template <typename T>
bool MatchesLoop(const char* what, const T& batched, const std::function<T(int64_t)>& one) {
  const std::vector<T> models = ft::tree_unstack(batched);  // model m's slice of every leaf
  double worst = 0;
  for (int64_t m = 0; m < kModels; ++m) {
    const T gaps = ft::tree_map(
        [](const ft::Tensor& a, const ft::Tensor& b) { return ft::amax(ft::abs(a - b)); },
        models[m], one(m));
    for (const ft::Tensor& gap : ft::tree_leaves(gaps)) {
      worst = std::max(worst, gap.item<double>());
    }
  }
  std::printf("%-48s %s, max |vmap - loop| = %.1e\n", what, Shapes(batched).c_str(), worst);
  return worst < 1e-5;
}

}  // namespace

int main() {
  ft::Generator gen(3);
  // M independent initializations, stacked: w1 is [M, hidden, features], and so on.
  auto randn = [&gen](ft::IntArrayRef shape) { return ft::randn_like(ft::zeros(shape), &gen); };
  const Mlp stacked_init{.w1 = randn({kModels, kHidden, kFeatures}) * 0.4,
                         .b1 = ft::zeros({kModels, kHidden}),
                         .w2 = randn({kModels, kClasses, kHidden}) * 0.25,
                         .b2 = ft::zeros({kModels, kClasses})};
  const std::vector<Mlp> inits = ft::tree_unstack(stacked_init);  // each model's own, unstacked
  bool ok = true;

  // 1. One minibatch, M models: in_dims is a prefix of the arguments, 0 for every leaf of the
  // parameters, nullopt for the data.
  const ft::Tensor x = randn({kBatch, kFeatures});
  const auto same_data = ft::vmap(&Forward, {0, std::nullopt});
  const ft::Tensor logits = same_data(stacked_init, x);  // [M, batch, classes]
  ok &= MatchesLoop<ft::Tensor>("every model, one shared minibatch:", logits,
                                [&](int64_t m) { return Forward(inits[m], x); });

  // 2. M models, M minibatches: parameters and data mapped together (in_dims 0 for all).
  const ft::Tensor xs = randn({kModels, kBatch, kFeatures});
  const auto own_data = ft::vmap(&Forward);
  ok &= MatchesLoop<ft::Tensor>(
      "every model, its own minibatch:", own_data(stacked_init, xs),
      [&](int64_t m) { return Forward(inits[m], ft::select(xs, 0, m)); });

  // 3. Training the ensemble. A teacher labels Gaussian inputs; each model draws its own
  // bootstrap minibatch every step (indices [M, batch]). vmap(grad) gives every model's
  // gradients, stacked like the parameters; vmap(TrainStep) steps every model at once.
  const Mlp teacher{.w1 = randn({kHidden, kFeatures}),
                    .b1 = ft::zeros({kHidden}),
                    .w2 = randn({kClasses, kHidden}),
                    .b2 = ft::zeros({kClasses})};
  const ft::Tensor data_x = randn({kSamples, kFeatures});
  const ft::Tensor labels = ft::argmax(Forward(teacher, data_x), 1);
  const ft::Tensor data_y = ft::to(ft::one_hot(labels, kClasses), ft::kFloat32);
  const auto ensemble_grads = ft::vmap(ft::grad(&Loss));   // everything mapped
  const auto ensemble_step = ft::vmap(&TrainStep);         // parameters, states and data
  const auto ensemble_loss = ft::vmap(&Loss, {0, std::nullopt, std::nullopt});
  // [M]: each model's loss on the whole set.
  const ft::Tensor loss_before = ensemble_loss(stacked_init, data_x, data_y);
  Mlp params = stacked_init;
  // Each model's own optimizer state: init under vmap, so it is stacked like the parameters.
  SgdState state = ft::vmap([](const Mlp& p) { return kSgd.init(p); })(params);
  for (int64_t step = 0; step < kSteps; ++step) {
    const ft::Tensor rows = ft::randint(0, kSamples, {kModels * kBatch}, &gen);
    const ft::Tensor xb =
        ft::reshape(ft::index_select(data_x, 0, rows), {kModels, kBatch, kFeatures});
    const ft::Tensor yb =
        ft::reshape(ft::index_select(data_y, 0, rows), {kModels, kBatch, kClasses});
    auto [next_params, next_state] = ensemble_step(params, state, xb, yb);
    if (step == 0) {  // the batched gradients against grad of each model on its own batch
      const std::vector<Mlp> models = ft::tree_unstack(params);
      ok &= MatchesLoop<Mlp>("vmap(grad): each model's gradients:",
                             ensemble_grads(params, xb, yb), [&](int64_t m) {
                               return ft::grad(&Loss)(models[m], ft::select(xb, 0, m),
                                                      ft::select(yb, 0, m));
                             });
    }
    if (step == 1) {  // the batched step (momentum in play now) against each model's own
      const std::vector<Mlp> models = ft::tree_unstack(params);
      const std::vector<SgdState> states = ft::tree_unstack(state);
      ok &= MatchesLoop<Mlp>("vmap(TrainStep): each model's next parameters:", next_params,
                             [&](int64_t m) {
                               return TrainStep(models[m], states[m], ft::select(xb, 0, m),
                                                ft::select(yb, 0, m))
                                   .first;
                             });
    }
    params = std::move(next_params);
    state = std::move(next_state);
  }
  const ft::Tensor loss_after = ensemble_loss(params, data_x, data_y);
  const std::vector<float> before = loss_before.to_vector<float>();
  const std::vector<float> after = loss_after.to_vector<float>();
  // The ensemble's prediction: the mean of the models' probabilities.
  const ft::Tensor probs = ft::softmax(same_data(params, data_x), -1);  // [M, samples, classes]
  const auto accuracy = [&labels](const ft::Tensor& p) {
    return ft::mean(ft::to(ft::eq(ft::argmax(p, -1), labels), ft::kFloat32)).item<double>();
  };
  std::printf("training %lld models at once, %lld steps of vmap(TrainStep), SGD with momentum:\n",
              static_cast<long long>(kModels), static_cast<long long>(kSteps));
  for (int64_t m = 0; m < kModels; ++m) {
    std::printf("  model %lld: loss %.3f -> %.3f, accuracy %.3f\n", static_cast<long long>(m),
                before[m], after[m], accuracy(ft::select(probs, 0, m)));
    ok &= after[m] < before[m];
  }
  std::printf("  ensemble (mean of probabilities): accuracy %.3f\n",
              accuracy(ft::mean(probs, {0})));
  if (!ok) {
    std::printf("FAILED\n");
    return 1;
  }
  return 0;
}

// ensembles: model ensembling with vmap, as in torch.func's tutorial. The parameters of M
// models of one architecture are stacked along a new leading dim; vmap over that dim runs
// all M models in one batched pass.
//   ./bazelw run //examples:ensembles
//   1. every model on the same minibatch: the parameters are mapped, the data is shared;
//   2. every model on its own minibatch: parameters and data are mapped together;
//   3. the whole ensemble trained at once: vmap(grad(loss)) gives each model the gradient of
//      its own loss on its own bootstrap sample, and one update steps all of them.
// Each batched result is checked against a loop over the models; exits non-zero on a
// mismatch or when training does not lower every model's loss.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <vector>

#include "ft.h"

namespace {

constexpr int64_t kModels = 5, kFeatures = 6, kHidden = 16, kClasses = 3;
constexpr int64_t kBatch = 32, kSamples = 512, kSteps = 150;
constexpr double kLearningRate = 0.5;

// One model's forward pass: p = {W1 [hidden, features], b1, W2 [classes, hidden], b2}.
ft::Tensor Forward(const ft::TensorList& p, const ft::Tensor& x) {
  return ft::linear(ft::relu(ft::linear(x, p[0], p[1])), p[2], p[3]);
}

// a = {W1, b1, W2, b2, x [batch, features], y one-hot [batch, classes]}: the mean
// cross-entropy of one model on one minibatch.
ft::Tensor Loss(const ft::TensorList& a) {
  const ft::Tensor logp = ft::log_softmax(Forward({a[0], a[1], a[2], a[3]}, a[4]), -1);
  return ft::mean(ft::neg(ft::sum(a[5] * logp, {1})));
}

// Model m's parameters out of the stacked ones.
ft::TensorList ModelOf(const ft::TensorList& stacked, int64_t m) {
  ft::TensorList p;
  for (const ft::Tensor& t : stacked) p.push_back(ft::select(t, 0, m));
  return p;
}

// Whether `batched` [M, ...] equals, model by model, `one(m)`; prints the largest gap.
bool MatchesLoop(const char* what, const ft::Tensor& batched,
                 const std::function<ft::Tensor(int64_t)>& one) {
  double worst = 0;
  for (int64_t m = 0; m < kModels; ++m) {
    worst = std::max(worst, ft::amax(ft::abs(ft::select(batched, 0, m) - one(m))).item<double>());
  }
  std::printf("%-48s %s, max |vmap - loop| = %.1e\n", what, ft::ShapeToString(batched.sizes()).c_str(),
              worst);
  return worst < 1e-5;
}

}  // namespace

int main() {
  ft::Generator gen(3);
  // M independent initializations, stacked: W1 is [M, hidden, features], and so on.
  const ft::TensorList stacked_init = {
      ft::randn_like(ft::zeros({kModels, kHidden, kFeatures}), &gen) * 0.4,
      ft::zeros({kModels, kHidden}),
      ft::randn_like(ft::zeros({kModels, kClasses, kHidden}), &gen) * 0.25,
      ft::zeros({kModels, kClasses})};
  bool ok = true;

  // 1. One minibatch, M models: in_dims 0 for the parameters, nullopt for the data.
  const ft::Tensor x = ft::randn_like(ft::zeros({kBatch, kFeatures}), &gen);
  const ft::TensorListFn same_data = ft::vmap(
      ft::TensorListFn([](const ft::TensorList& a) {
        return ft::TensorList{Forward({a[0], a[1], a[2], a[3]}, a[4])};
      }),
      {0, 0, 0, 0, std::nullopt});
  ft::TensorList args = stacked_init;
  args.push_back(x);
  const ft::Tensor logits = same_data(args)[0];  // [M, batch, classes]
  ok &= MatchesLoop("every model, one shared minibatch:", logits,
                    [&](int64_t m) { return Forward(ModelOf(stacked_init, m), x); });

  // 2. M models, M minibatches: parameters and data mapped together.
  const ft::Tensor xs = ft::randn_like(ft::zeros({kModels, kBatch, kFeatures}), &gen);
  const ft::TensorListFn own_data = ft::vmap(ft::TensorListFn([](const ft::TensorList& a) {
    return ft::TensorList{Forward({a[0], a[1], a[2], a[3]}, a[4])};
  }));
  args = stacked_init;
  args.push_back(xs);
  ok &= MatchesLoop("every model, its own minibatch:", own_data(args)[0], [&](int64_t m) {
    return Forward(ModelOf(stacked_init, m), ft::select(xs, 0, m));
  });

  // 3. Training the ensemble. A teacher labels Gaussian inputs; each model draws its own
  // bootstrap minibatch every step (indices [M, batch]), and vmap(grad) returns every
  // model's gradients, stacked like the parameters.
  const ft::TensorList teacher = {ft::randn_like(ft::zeros({kHidden, kFeatures}), &gen),
                                  ft::zeros({kHidden}),
                                  ft::randn_like(ft::zeros({kClasses, kHidden}), &gen),
                                  ft::zeros({kClasses})};
  const ft::Tensor data_x = ft::randn_like(ft::zeros({kSamples, kFeatures}), &gen);
  const ft::Tensor labels = ft::argmax(Forward(teacher, data_x), 1);
  const ft::Tensor data_y = ft::to(ft::one_hot(labels, kClasses), ft::kFloat32);
  const ft::TensorListFn ensemble_grads =
      ft::vmap(ft::grad(ft::ScalarFn(Loss), {0, 1, 2, 3}));  // everything mapped
  const ft::TensorListFn ensemble_loss =
      ft::vmap(ft::TensorListFn([](const ft::TensorList& a) { return ft::TensorList{Loss(a)}; }),
               {0, 0, 0, 0, std::nullopt, std::nullopt});
  const auto full_loss = [&](const ft::TensorList& stacked) {
    ft::TensorList a = stacked;
    a.push_back(data_x);
    a.push_back(data_y);
    return ensemble_loss(a)[0];  // [M]: each model's loss on the whole set
  };
  const ft::Tensor loss_before = full_loss(stacked_init);
  ft::TensorList params = stacked_init;
  for (int64_t step = 0; step < kSteps; ++step) {
    const ft::Tensor rows = ft::randint(0, kSamples, {kModels * kBatch}, &gen);
    ft::TensorList a = params;
    a.push_back(ft::reshape(ft::index_select(data_x, 0, rows), {kModels, kBatch, kFeatures}));
    a.push_back(ft::reshape(ft::index_select(data_y, 0, rows), {kModels, kBatch, kClasses}));
    const ft::TensorList grads = ensemble_grads(a);
    if (step == 0) {  // the batched gradients against grad of each model on its own batch
      const ft::TensorListFn one = ft::grad(ft::ScalarFn(Loss), {0, 1, 2, 3});
      for (size_t p = 0; p < params.size(); ++p) {
        ok &= MatchesLoop(p == 0 ? "vmap(grad): dLoss/dW1 of each model:" : "  and the other parameters:",
                          grads[p], [&](int64_t m) {
                            ft::TensorList am = ModelOf(params, m);
                            am.push_back(ft::select(a[4], 0, m));
                            am.push_back(ft::select(a[5], 0, m));
                            return one(am)[p];
                          });
      }
    }
    for (size_t p = 0; p < params.size(); ++p) params[p] = params[p] - grads[p] * kLearningRate;
  }
  const ft::Tensor loss_after = full_loss(params);
  const std::vector<float> before = loss_before.to_vector<float>();
  const std::vector<float> after = loss_after.to_vector<float>();
  // The ensemble's prediction: the mean of the models' probabilities.
  args = params;
  args.push_back(data_x);
  const ft::Tensor probs = ft::softmax(same_data(args)[0], -1);  // [M, samples, classes]
  const auto accuracy = [&labels](const ft::Tensor& p) {
    return ft::mean(ft::to(ft::eq(ft::argmax(p, -1), labels), ft::kFloat32)).item<double>();
  };
  std::printf("training %lld models at once, %lld steps of vmap(grad):\n",
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

// ft/tree/optim.h
//
// Functional optimizers over trees (optax's shape): an optimizer is a value holding its
// hyperparameters; `init(params)` returns its state, a tree; `update(grads, state, params)`
// returns the updates to add to the parameters and the next state; `apply_updates(params,
// updates)` adds them. Nothing is mutated, so a training step is a pure function of (params,
// state, batch) that vmap (an ensemble trained at once), jit and grad take like any other.
//
//   Sgd{lr, momentum, dampening, weight_decay, nesterov}   torch.optim.SGD
//   Adam{lr, beta1, beta2, eps, weight_decay}               torch.optim.Adam (L2 penalty added
//                                                            to the gradient)
//   AdamW{lr, beta1, beta2, eps, weight_decay}              torch.optim.AdamW (decoupled decay)
//
// Each follows its torch.optim counterpart step for step (the tests replay torch.optim's
// recorded trajectories, tools/torch_fixtures/optim.py). States hold the step count as a
// float64 scalar tensor, not a C++ integer, so that a jit'd step is traced once rather than
// once per step. Every leaf keeps its dtype.
//
// Example:
//   ft::optim::Adam opt{.lr = 1e-3};
//   auto state = opt.init(params);                              // Mlp params
//   for (...) {
//     Mlp g = ft::grad(loss)(params, x, y);
//     auto [updates, next] = opt.update(g, state, params);
//     params = ft::optim::apply_updates(params, updates);
//     state = next;
//   }
#ifndef FT_TREE_OPTIM_H_
#define FT_TREE_OPTIM_H_

#include <utility>

#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/tensor.h"
#include "tree/tree.h"

namespace ft::optim {

// SgdState / AdamState: the optimizers' states, trees (they flatten and go through
// transforms). count: the number of updates made, a float64 scalar tensor.
template <Tree T>
struct SgdState {
  Tensor count;
  T momentum;  // the momentum buffer (zeros when momentum == 0)
};
template <Tree T>
struct AdamState {
  Tensor count;
  T mu;  // first moment
  T nu;  // second moment
};

// The states as trees (FT_TREE for class templates, written out).
template <typename T>
auto FtTreeFields(SgdState<T>& s) { return std::tie(s.count, s.momentum); }
template <typename T>
auto FtTreeFields(const SgdState<T>& s) { return std::tie(s.count, s.momentum); }
template <typename T>
constexpr const char* FtTreeFieldNames(const SgdState<T>*) { return "count, momentum"; }
template <typename T>
constexpr const char* FtTreeTypeName(const SgdState<T>*) { return "SgdState"; }
template <typename T>
auto FtTreeFields(AdamState<T>& s) { return std::tie(s.count, s.mu, s.nu); }
template <typename T>
auto FtTreeFields(const AdamState<T>& s) { return std::tie(s.count, s.mu, s.nu); }
template <typename T>
constexpr const char* FtTreeFieldNames(const AdamState<T>*) { return "count, mu, nu"; }
template <typename T>
constexpr const char* FtTreeTypeName(const AdamState<T>*) { return "AdamState"; }

// apply_updates: params + updates, leaf by leaf (the trees must have one structure).
template <Tree T>
T apply_updates(const T& params, const T& updates) {
  return tree_map([](const Tensor& p, const Tensor& u) { return p + u; }, params, updates);
}

namespace internal {
// ScalarLike: a scalar tensor `s` in x's dtype, so hyperparameter arithmetic done in
// float64 never promotes a float32 leaf.
inline Tensor ScalarLike(const Tensor& s, const Tensor& x) {
  return s.dtype() == x.dtype() ? s : to(s, x.dtype());
}
inline Tensor ZeroCount() { return zeros({}, kFloat64); }
}  // namespace internal

// Sgd: torch.optim.SGD. d = g + weight_decay * p; with momentum, the buffer is d on the first
// step and momentum * buffer + (1 - dampening) * d after; the step uses d + momentum *
// buffer (nesterov) or the buffer; the update is -lr times it.
struct Sgd {
  double lr = 1e-2;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;

  template <Tree T>
  SgdState<T> init(const T& params) const {
    return {internal::ZeroCount(), tree_map([](const Tensor& p) { return zeros_like(p); }, params)};
  }

  template <Tree T>
  std::pair<T, SgdState<T>> update(const T& grads, const SgdState<T>& state,
                                   const T& params) const {
    const Tensor first = eq(state.count, 0.0);
    T decayed = grads;
    if (weight_decay != 0.0) {
      decayed = tree_map([this](const Tensor& g, const Tensor& p) { return g + p * weight_decay; },
                         grads, params);
    }
    T buffer = state.momentum;
    T direction = decayed;
    if (momentum != 0.0) {
      buffer = tree_map(
          [&](const Tensor& d, const Tensor& b) {
            return where(first, d, b * momentum + d * (1.0 - dampening));
          },
          decayed, state.momentum);
      direction = nesterov ? tree_map([this](const Tensor& d, const Tensor& b) {
                               return d + b * momentum;
                             }, decayed, buffer)
                           : buffer;
    }
    T updates = tree_map([this](const Tensor& d) { return d * -lr; }, direction);
    return {std::move(updates), SgdState<T>{state.count + 1.0, std::move(buffer)}};
  }
};

namespace internal {

// AdamUpdate: Adam's step (torch.optim.Adam / AdamW, amsgrad off). l2: weight decay added to
// the gradient (Adam); decoupled: p * (1 - lr * weight_decay) first (AdamW).
template <Tree T>
std::pair<T, AdamState<T>> AdamUpdate(double lr, double beta1, double beta2, double eps,
                                      double l2, double decoupled, const T& grads,
                                      const AdamState<T>& state, const T& params) {
  const Tensor count = state.count + 1.0;
  const Tensor bias1 = 1.0 - pow(beta1, count);
  const Tensor bias2_sqrt = sqrt(1.0 - pow(beta2, count));
  const Tensor step_size = lr / bias1;
  T g = grads;
  if (l2 != 0.0) {
    g = tree_map([l2](const Tensor& gi, const Tensor& p) { return gi + p * l2; }, grads, params);
  }
  T mu = tree_map([beta1](const Tensor& m, const Tensor& gi) {
    return m * beta1 + gi * (1.0 - beta1);
  }, state.mu, g);
  T nu = tree_map([beta2](const Tensor& v, const Tensor& gi) {
    return v * beta2 + gi * gi * (1.0 - beta2);
  }, state.nu, g);
  T updates = tree_map(
      [&](const Tensor& m, const Tensor& v, const Tensor& p) {
        const Tensor denom = sqrt(v) / ScalarLike(bias2_sqrt, v) + eps;
        Tensor u = m / denom * neg(ScalarLike(step_size, m));
        // AdamW scales p by (1 - lr * decay) before the step: as an update, -p * lr * decay.
        if (decoupled != 0.0) u = u - p * (lr * decoupled);
        return u;
      },
      mu, nu, params);
  return {std::move(updates), AdamState<T>{count, std::move(mu), std::move(nu)}};
}

template <Tree T>
AdamState<T> AdamInit(const T& params) {
  auto zeros_of = [](const Tensor& p) { return zeros_like(p); };
  return {ZeroCount(), tree_map(zeros_of, params), tree_map(zeros_of, params)};
}

}  // namespace internal

// AdamOptimizer<kDecoupled>: Adam (false; torch.optim.Adam, weight_decay adds
// weight_decay * p to the gradient, an L2 penalty) and AdamW (true; torch.optim.AdamW,
// weight decay decoupled from the moments, default 1e-2).
template <bool kDecoupled>
struct AdamOptimizer {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = kDecoupled ? 1e-2 : 0.0;

  template <Tree T>
  AdamState<T> init(const T& params) const {
    return internal::AdamInit(params);
  }
  template <Tree T>
  std::pair<T, AdamState<T>> update(const T& grads, const AdamState<T>& state,
                                    const T& params) const {
    return internal::AdamUpdate(lr, beta1, beta2, eps, kDecoupled ? 0.0 : weight_decay,
                                kDecoupled ? weight_decay : 0.0, grads, state, params);
  }
};
using Adam = AdamOptimizer<false>;
using AdamW = AdamOptimizer<true>;

}  // namespace ft::optim

#endif  // FT_TREE_OPTIM_H_

// tutorial_cnn.h: the CNN of functorch's tutorials (per-sample gradients, model ensembling),
// written with ft's ops, for the examples cnn_per_sample_grads.cc and cnn_ensembling.cc.
//
//   conv 1 -> 32 (3x3), relu, conv 32 -> 64 (3x3), relu, max_pool 2, flatten,
//   fc 9216 -> 128, relu, fc 128 -> 10, log_softmax; the loss is nll_loss.
//
// The parameters are a tree, Cnn: four layers named as in the tutorial's module (conv1,
// conv2, fc1, fc2), each a weight and a bias, initialized like torch's Conv2d / Linear
// (uniform in +-1/sqrt(fan_in)). The data are MNIST-shaped: images [N, 1, 28, 28] (standard
// normal, seeded) and int64 labels in [0, 10).
//
// Example:
//   ft::Generator gen(0);
//   const tutorial::Cnn params = tutorial::InitCnn(gen);
//   const tutorial::Mnist data = tutorial::SyntheticMnist(64, gen);
//   const tutorial::Cnn g = ft::grad(&tutorial::CnnLoss)(params, data.x, data.y);  // g.conv1.w
#ifndef FT_EXAMPLES_TUTORIAL_CNN_H_
#define FT_EXAMPLES_TUTORIAL_CNN_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ft.h"

namespace tutorial {

// Layer: a convolution's or a linear layer's weight and bias.
struct Layer {
  ft::Tensor w, b;
};
FT_TREE(Layer, w, b);

// Cnn: one model's parameters.
struct Cnn {
  Layer conv1;  // w [32, 1, 3, 3], b [32]
  Layer conv2;  // w [64, 32, 3, 3], b [64]
  Layer fc1;    // w [128, 9216], b [128]
  Layer fc2;    // w [10, 128], b [10]
};
FT_TREE(Cnn, conv1, conv2, fc1, fc2);

// InitCnn: one model's parameters.
inline Cnn InitCnn(ft::Generator& gen) {
  auto uniform = [&gen](std::vector<int64_t> shape, double fan_in) {
    return (ft::rand_like(ft::zeros(shape), &gen) * 2.0 - 1.0) * (1.0 / std::sqrt(fan_in));
  };
  return {.conv1 = {uniform({32, 1, 3, 3}, 9), uniform({32}, 9)},
          .conv2 = {uniform({64, 32, 3, 3}, 288), uniform({64}, 288)},
          .fc1 = {uniform({128, 9216}, 9216), uniform({128}, 9216)},
          .fc2 = {uniform({10, 128}, 128), uniform({10}, 128)}};
}

// CnnLogProbs: log-probabilities [N, 10] of images x [N, 1, 28, 28].
inline ft::Tensor CnnLogProbs(const Cnn& p, const ft::Tensor& x) {
  ft::Tensor h = ft::relu(ft::conv2d(x, p.conv1.w, p.conv1.b));
  h = ft::relu(ft::conv2d(h, p.conv2.w, p.conv2.b));
  h = ft::flatten(ft::max_pool2d(h, {2}), 1);
  h = ft::relu(ft::linear(h, p.fc1.w, p.fc1.b));
  return ft::log_softmax(ft::linear(h, p.fc2.w, p.fc2.b), 1);
}

// CnnLoss: the mean nll_loss of a minibatch.
inline ft::Tensor CnnLoss(const Cnn& p, const ft::Tensor& x, const ft::Tensor& y) {
  return ft::nll_loss(CnnLogProbs(p, x), y);
}

struct Mnist {
  ft::Tensor x;  // [n, 1, 28, 28] float32
  ft::Tensor y;  // [n] int64 in [0, 10)
};

inline Mnist SyntheticMnist(int64_t n, ft::Generator& gen) {
  return {ft::randn_like(ft::zeros({n, 1, 28, 28}), &gen), ft::randint(10, {n}, &gen)};
}

// RelativeGap: max |a - b| / max(max |b|, tiny) over the leaves of two trees of one
// structure.
template <typename T>
double RelativeGap(const T& a, const T& b) {
  const ft::TensorList leaves_a = ft::tree_leaves(a), leaves_b = ft::tree_leaves(b);
  double gap = 0, scale = 1e-30;
  for (size_t i = 0; i < leaves_a.size(); ++i) {
    gap = std::max(gap, ft::amax(ft::abs(leaves_a[i] - leaves_b[i])).item<double>());
    scale = std::max(scale, ft::amax(ft::abs(leaves_b[i])).item<double>());
  }
  return gap / scale;
}

}  // namespace tutorial

#endif  // FT_EXAMPLES_TUTORIAL_CNN_H_

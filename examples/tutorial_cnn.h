// tutorial_cnn.h: the CNN of functorch's tutorials (per-sample gradients, model ensembling),
// written with ft's ops, for the examples cnn_per_sample_grads.cc and cnn_ensembling.cc.
//
//   conv 1 -> 32 (3x3), relu, conv 32 -> 64 (3x3), relu, max_pool 2, flatten,
//   fc 9216 -> 128, relu, fc 128 -> 10, log_softmax; the loss is nll_loss.
//
// The parameters are a TensorList of eight tensors {w1, b1, w2, b2, w3, b3, w4, b4},
// initialized like torch's Conv2d / Linear (uniform in +-1/sqrt(fan_in)). The data are
// MNIST-shaped: images [N, 1, 28, 28] (standard normal, seeded) and int64 labels in [0, 10).
#ifndef FT_EXAMPLES_TUTORIAL_CNN_H_
#define FT_EXAMPLES_TUTORIAL_CNN_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ft.h"

namespace tutorial {

inline constexpr int64_t kCnnParams = 8;

// InitCnn: one model's parameters.
inline ft::TensorList InitCnn(ft::Generator& gen) {
  const std::vector<std::vector<int64_t>> shapes = {{32, 1, 3, 3}, {32},   {64, 32, 3, 3},
                                                    {64},          {128, 9216}, {128},
                                                    {10, 128},     {10}};
  const std::vector<double> fan_in = {9, 9, 288, 288, 9216, 9216, 128, 128};
  ft::TensorList params;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const double bound = 1.0 / std::sqrt(fan_in[i]);
    params.push_back((ft::rand_like(ft::zeros(shapes[i]), &gen) * 2.0 - 1.0) * bound);
  }
  return params;
}

// CnnLogits: log-probabilities [N, 10] of images x [N, 1, 28, 28].
inline ft::Tensor CnnLogProbs(const ft::TensorList& p, const ft::Tensor& x) {
  ft::Tensor h = ft::relu(ft::conv2d(x, p[0], p[1]));
  h = ft::relu(ft::conv2d(h, p[2], p[3]));
  h = ft::flatten(ft::max_pool2d(h, {2}), 1);
  h = ft::relu(ft::linear(h, p[4], p[5]));
  return ft::log_softmax(ft::linear(h, p[6], p[7]), 1);
}

// CnnLoss: the mean nll_loss of a minibatch.
inline ft::Tensor CnnLoss(const ft::TensorList& p, const ft::Tensor& x, const ft::Tensor& y) {
  return ft::nll_loss(CnnLogProbs(p, x), y);
}

// Params: the first kCnnParams tensors of a (params..., data...) argument list.
inline ft::TensorList Params(const ft::TensorList& a) {
  return ft::TensorList(a.begin(), a.begin() + kCnnParams);
}

struct Mnist {
  ft::Tensor x;  // [n, 1, 28, 28] float32
  ft::Tensor y;  // [n] int64 in [0, 10)
};

inline Mnist SyntheticMnist(int64_t n, ft::Generator& gen) {
  return {ft::randn_like(ft::zeros({n, 1, 28, 28}), &gen), ft::randint(10, {n}, &gen)};
}

// RelativeGap: max |a - b| / max(max |b|, tiny) over two lists of tensors.
inline double RelativeGap(const ft::TensorList& a, const ft::TensorList& b) {
  double gap = 0, scale = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    gap = std::max(gap, ft::amax(ft::abs(a[i] - b[i])).item<double>());
    scale = std::max(scale, ft::amax(ft::abs(b[i])).item<double>());
  }
  return gap / scale;
}

}  // namespace tutorial

#endif  // FT_EXAMPLES_TUTORIAL_CNN_H_

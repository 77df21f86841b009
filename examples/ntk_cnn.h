// ntk_cnn.h: the small CNN of functorch's neural-tangent-kernel tutorial and its empirical
// NTK, written with ft's ops, for the example ntk.cc and the benchmark //benchmarks:models.
//
//   conv 3 -> 32, relu, conv 32 -> 32, relu, conv 32 -> 32, flatten, fc to 10 outputs
//   (all 3x3 convolutions, no padding), on one image [3, S, S] (S >= 7).
//
// The parameters are a tree, Cnn: four layers (conv1, conv2, conv3, fc), each a weight and a
// bias, initialized like torch's Conv2d / Linear (uniform in +-1/sqrt(fan_in)); the fc
// layer's input size, 32 (S - 6)^2, depends on S.
//
// For images x1 [N, 3, S, S] and x2 [M, 3, S, S] the NTK is [N, M, 10, 10] with
// NTK[n, m] = J(x1[n]) J(x2[m])^T, J the Jacobian of the 10 outputs with respect to every
// parameter. Example:
//   ft::Generator gen(2);
//   const ntk::Cnn params = ntk::InitParams(gen, 32);
//   const ft::Tensor x1 = ft::randn_like(ft::zeros({20, 3, 32, 32}), &gen);
//   const ft::Tensor x2 = ft::randn_like(ft::zeros({5, 3, 32, 32}), &gen);
//   const ft::Tensor kernel = ntk::NtkByJacobianContraction(params, x1, x2);  // [20, 5, 10, 10]
#ifndef FT_EXAMPLES_NTK_CNN_H_
#define FT_EXAMPLES_NTK_CNN_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "ft.h"

namespace ntk {

inline constexpr int64_t kOutputs = 10;

// Layer: a convolution's or the linear layer's weight and bias.
struct Layer {
  ft::Tensor w, b;
};
FT_TREE(Layer, w, b);

// Cnn: the network's parameters.
struct Cnn {
  Layer conv1;  // w [32, 3, 3, 3], b [32]
  Layer conv2;  // w [32, 32, 3, 3], b [32]
  Layer conv3;  // w [32, 32, 3, 3], b [32]
  Layer fc;     // w [10, 32 (S - 6)^2], b [10]
};
FT_TREE(Cnn, conv1, conv2, conv3, fc);

// InitParams: the parameters of the CNN for images of size x size pixels.
inline Cnn InitParams(ft::Generator& gen, int64_t size) {
  const int64_t flat = 32 * (size - 6) * (size - 6);
  auto uniform = [&gen](std::vector<int64_t> shape, double fan_in) {
    return (ft::rand_like(ft::zeros(shape), &gen) * 2.0 - 1.0) / std::sqrt(fan_in);
  };
  const double fc_fan_in = static_cast<double>(flat);
  return {.conv1 = {uniform({32, 3, 3, 3}, 27), uniform({32}, 27)},
          .conv2 = {uniform({32, 32, 3, 3}, 288), uniform({32}, 288)},
          .conv3 = {uniform({32, 32, 3, 3}, 288), uniform({32}, 288)},
          .fc = {uniform({kOutputs, flat}, fc_fan_in), uniform({kOutputs}, fc_fan_in)}};
}

// Forward: one image x [3, S, S] -> outputs [10].
inline ft::Tensor Forward(const Cnn& p, const ft::Tensor& x) {
  ft::Tensor h = ft::relu(ft::conv2d(ft::unsqueeze(x, 0), p.conv1.w, p.conv1.b));
  h = ft::relu(ft::conv2d(h, p.conv2.w, p.conv2.b));
  h = ft::conv2d(h, p.conv3.w, p.conv3.b);
  return ft::select(ft::linear(ft::flatten(h, 1), p.fc.w, p.fc.b), 0, 0);
}

// Jacobians: every image's Jacobian at once, vmap(jacrev) over xs [K, 3, S, S] (the
// parameters shared): a Cnn whose every leaf is [K, 10, numel of that parameter].
inline Cnn Jacobians(const Cnn& params, const ft::Tensor& xs) {
  const Cnn jac = ft::vmap(ft::jacrev(&Forward), {std::nullopt, 0})(params, xs);
  return ft::tree_map(
      [&xs](const ft::Tensor& j) { return ft::reshape(j, {xs.size(0), kOutputs, -1}); }, jac);
}

// NtkByJacobianContraction: the NTK [N, M, 10, 10] as functorch's tutorial computes it, the
// batched Jacobians of both image sets contracted by one einsum per parameter, summed.
inline ft::Tensor NtkByJacobianContraction(const Cnn& params, const ft::Tensor& x1,
                                           const ft::Tensor& x2) {
  const Cnn terms = ft::tree_map(
      [](const ft::Tensor& j1, const ft::Tensor& j2) {
        return ft::einsum("Naf,Mbf->NMab", {j1, j2});
      },
      Jacobians(params, x1), Jacobians(params, x2));
  ft::Tensor ntk;
  for (const ft::Tensor& term : ft::tree_leaves(terms)) ntk = ntk.defined() ? ntk + term : term;
  return ntk;
}

// NtkByLoop: the same NTK without vmap, the reference both for correctness and for speed:
// each image's Jacobian by jacrev alone, then every [10, 10] block as a sum over the
// parameters of J1 J2^T, the blocks stacked.
inline ft::Tensor NtkByLoop(const Cnn& params, const ft::Tensor& x1, const ft::Tensor& x2) {
  const auto jacobian_of = [&params](const ft::Tensor& x) {
    return ft::tree_map([](const ft::Tensor& j) { return ft::reshape(j, {kOutputs, -1}); },
                        ft::jacrev(&Forward)(params, x));
  };
  std::vector<Cnn> jac1, jac2;
  for (int64_t i = 0; i < x1.size(0); ++i) jac1.push_back(jacobian_of(ft::select(x1, 0, i)));
  for (int64_t j = 0; j < x2.size(0); ++j) jac2.push_back(jacobian_of(ft::select(x2, 0, j)));
  ft::TensorList rows;
  for (const Cnn& a : jac1) {
    ft::TensorList row;
    for (const Cnn& b : jac2) {
      const Cnn products = ft::tree_map(
          [](const ft::Tensor& ja, const ft::Tensor& jb) {
            return ft::matmul(ja, ft::transpose(jb, 0, 1));
          },
          a, b);
      ft::Tensor block = ft::zeros({kOutputs, kOutputs});
      for (const ft::Tensor& product : ft::tree_leaves(products)) block = block + product;
      row.push_back(block);
    }
    rows.push_back(ft::stack(row, 0));
  }
  return ft::stack(rows, 0);
}

}  // namespace ntk

#endif  // FT_EXAMPLES_NTK_CNN_H_

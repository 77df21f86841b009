// ntk_cnn.h: the small CNN of functorch's neural-tangent-kernel tutorial and its empirical
// NTK, written with ft's ops, for the example ntk.cc and the benchmark //benchmarks:models.
//
//   conv 3 -> 32, relu, conv 32 -> 32, relu, conv 32 -> 32, flatten, fc to 10 outputs
//   (all 3x3 convolutions, no padding), on one image [3, S, S] (S >= 7).
//
// The parameters are a TensorList of kParams tensors {w1, b1, w2, b2, w3, b3, w4, b4},
// initialized like torch's Conv2d / Linear (uniform in +-1/sqrt(fan_in)); the fc layer's
// input size, 32 (S - 6)^2, depends on S.
//
// For images x1 [N, 3, S, S] and x2 [M, 3, S, S] the NTK is [N, M, 10, 10] with
// NTK[n, m] = J(x1[n]) J(x2[m])^T, J the Jacobian of the 10 outputs with respect to every
// parameter. Example:
//   ft::Generator gen(2);
//   const ft::TensorList params = ntk::InitParams(gen, 32);
//   const ft::Tensor x1 = ft::randn_like(ft::zeros({20, 3, 32, 32}), &gen);
//   const ft::Tensor x2 = ft::randn_like(ft::zeros({5, 3, 32, 32}), &gen);
//   const ft::Tensor kernel = ntk::NtkByJacobianContraction(params, x1, x2);  // [20, 5, 10, 10]
#ifndef FT_EXAMPLES_NTK_CNN_H_
#define FT_EXAMPLES_NTK_CNN_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ft.h"

namespace ntk {

inline constexpr int64_t kParams = 8;
inline constexpr int64_t kOutputs = 10;

// InitParams: the parameters of the CNN for images of size x size pixels.
inline ft::TensorList InitParams(ft::Generator& gen, int64_t size) {
  const int64_t flat = 32 * (size - 6) * (size - 6);
  const std::vector<std::vector<int64_t>> shapes = {{32, 3, 3, 3},   {32}, {32, 32, 3, 3},
                                                    {32},            {32, 32, 3, 3}, {32},
                                                    {kOutputs, flat}, {kOutputs}};
  const std::vector<double> fan_in = {27, 27, 288, 288, 288, 288, static_cast<double>(flat),
                                      static_cast<double>(flat)};
  ft::TensorList params;
  for (size_t i = 0; i < shapes.size(); ++i) {
    params.push_back((ft::rand_like(ft::zeros(shapes[i]), &gen) * 2.0 - 1.0) /
                     std::sqrt(fan_in[i]));
  }
  return params;
}

// Forward: one image x [3, S, S] -> outputs [10].
inline ft::Tensor Forward(const ft::TensorList& p, const ft::Tensor& x) {
  ft::Tensor h = ft::relu(ft::conv2d(ft::unsqueeze(x, 0), p[0], p[1]));
  h = ft::relu(ft::conv2d(h, p[2], p[3]));
  h = ft::conv2d(h, p[4], p[5]);
  return ft::select(ft::linear(ft::flatten(h, 1), p[6], p[7]), 0, 0);
}

// ForwardOfArgs: Forward as one function of a = {params..., x}, the form jacrev takes.
inline ft::Tensor ForwardOfArgs(const ft::TensorList& a) {
  return Forward(ft::TensorList(a.begin(), a.begin() + kParams), a[kParams]);
}

// ParamArgnums: the argument positions of the parameters in ForwardOfArgs' list.
inline std::vector<int64_t> ParamArgnums() {
  std::vector<int64_t> r;
  for (int64_t i = 0; i < kParams; ++i) r.push_back(i);
  return r;
}

// Jacobians: every image's Jacobian at once, vmap(jacrev) over xs [K, 3, S, S]: one
// [K, 10, numel of the parameter] per parameter.
inline ft::TensorList Jacobians(const ft::TensorList& params, const ft::Tensor& xs) {
  std::vector<std::optional<int64_t>> in_dims(kParams, std::nullopt);
  in_dims.push_back(0);
  ft::TensorList args = params;
  args.push_back(xs);
  ft::TensorList jac =
      ft::vmap(ft::jacrev(std::function<ft::Tensor(const ft::TensorList&)>(ForwardOfArgs),
                          ParamArgnums()),
               ft::Dims(in_dims))(args);
  for (ft::Tensor& j : jac) j = ft::reshape(j, {xs.size(0), kOutputs, -1});
  return jac;
}

// NtkByJacobianContraction: the NTK [N, M, 10, 10] as functorch's tutorial computes it, the
// batched Jacobians of both image sets contracted by one einsum per parameter, summed.
inline ft::Tensor NtkByJacobianContraction(const ft::TensorList& params, const ft::Tensor& x1,
                                           const ft::Tensor& x2) {
  const ft::TensorList j1 = Jacobians(params, x1), j2 = Jacobians(params, x2);
  ft::Tensor ntk;
  for (int64_t p = 0; p < kParams; ++p) {
    const ft::Tensor term = ft::einsum("Naf,Mbf->NMab", {j1[p], j2[p]});
    ntk = p == 0 ? term : ntk + term;
  }
  return ntk;
}

// NtkByLoop: the same NTK without vmap, the reference both for correctness and for speed:
// each image's Jacobian by jacrev alone, then every [10, 10] block as a sum over the
// parameters of J1 J2^T, the blocks stacked.
inline ft::Tensor NtkByLoop(const ft::TensorList& params, const ft::Tensor& x1,
                            const ft::Tensor& x2) {
  const auto jacobian_of = [&params](const ft::Tensor& x) {
    ft::TensorList args = params;
    args.push_back(x);
    ft::TensorList jac = ft::jacrev(
        std::function<ft::Tensor(const ft::TensorList&)>(ForwardOfArgs), ParamArgnums())(args);
    for (ft::Tensor& j : jac) j = ft::reshape(j, {kOutputs, -1});
    return jac;
  };
  std::vector<ft::TensorList> jac1, jac2;
  for (int64_t i = 0; i < x1.size(0); ++i) jac1.push_back(jacobian_of(ft::select(x1, 0, i)));
  for (int64_t j = 0; j < x2.size(0); ++j) jac2.push_back(jacobian_of(ft::select(x2, 0, j)));
  ft::TensorList rows;
  for (const ft::TensorList& a : jac1) {
    ft::TensorList row;
    for (const ft::TensorList& b : jac2) {
      ft::Tensor block = ft::zeros({kOutputs, kOutputs});
      for (int64_t p = 0; p < kParams; ++p) {
        block = block + ft::matmul(a[p], ft::transpose(b[p], 0, 1));
      }
      row.push_back(block);
    }
    rows.push_back(ft::stack(row, 0));
  }
  return ft::stack(rows, 0);
}

}  // namespace ntk

#endif  // FT_EXAMPLES_NTK_CNN_H_

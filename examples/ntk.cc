// ntk: the empirical neural tangent kernel of a small CNN, as in functorch's NTK tutorial.
// For inputs x1 [N, 3, S, S] and x2 [M, 3, S, S] and the network's outputs f [10], the NTK is
// [N, M, 10, 10] with NTK[n, m] = J(x1[n]) J(x2[m])^T, J the Jacobian of f with respect to
// every parameter. Computed two ways:
//   1. Jacobian contraction: vmap(jacrev(f)) over each input set, then one einsum
//      "Naf,Mbf->NMab" per parameter, summed;
//   2. NTK-vector products: for each pair (vmap of vmap), vjp then jvp of the basis vectors
//      (vmap over the basis), never materializing a Jacobian.
// Both are checked against each other and against a loop of per-example jacrev products;
// exits non-zero on a mismatch.
//   ./bazelw run -c opt //examples:ntk [-- --n=20 --m=5 --size=32]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "ft.h"

namespace {

constexpr int64_t kParams = 8;

// The tutorial's CNN: conv 3 -> 32, relu, conv 32 -> 32, relu, conv 32 -> 32, flatten, fc
// to 10 outputs (all 3x3 convolutions, no padding).
ft::TensorList InitParams(ft::Generator& gen, int64_t size) {
  const int64_t flat = 32 * (size - 6) * (size - 6);
  const std::vector<std::vector<int64_t>> shapes = {{32, 3, 3, 3}, {32}, {32, 32, 3, 3}, {32},
                                                    {32, 32, 3, 3}, {32}, {10, flat}, {10}};
  const std::vector<double> fan_in = {27, 27, 288, 288, 288, 288, static_cast<double>(flat),
                                      static_cast<double>(flat)};
  ft::TensorList params;
  for (size_t i = 0; i < shapes.size(); ++i) {
    params.push_back((ft::rand_like(ft::zeros(shapes[i]), &gen) * 2.0 - 1.0) /
                     std::sqrt(fan_in[i]));
  }
  return params;
}

// One image x [3, S, S] -> outputs [10].
ft::Tensor Forward(const ft::TensorList& p, const ft::Tensor& x) {
  ft::Tensor h = ft::relu(ft::conv2d(ft::unsqueeze(x, 0), p[0], p[1]));
  h = ft::relu(ft::conv2d(h, p[2], p[3]));
  h = ft::conv2d(h, p[4], p[5]);
  return ft::select(ft::linear(ft::flatten(h, 1), p[6], p[7]), 0, 0);
}

// a = {params..., x}: the forward pass as a function of the parameters and one image.
ft::Tensor ForwardOfArgs(const ft::TensorList& a) {
  return Forward(ft::TensorList(a.begin(), a.begin() + kParams), a[kParams]);
}

std::vector<int64_t> ParamArgnums() {
  std::vector<int64_t> r;
  for (int64_t i = 0; i < kParams; ++i) r.push_back(i);
  return r;
}

// Per-example Jacobians of a set of images xs [K, ...]: one [K, 10, P_i] per parameter.
ft::TensorList Jacobians(const ft::TensorList& params, const ft::Tensor& xs) {
  std::vector<std::optional<int64_t>> in_dims(kParams, std::nullopt);
  in_dims.push_back(0);
  ft::TensorList args = params;
  args.push_back(xs);
  ft::TensorList jac =
      ft::vmap(ft::jacrev(std::function<ft::Tensor(const ft::TensorList&)>(ForwardOfArgs),
                          ParamArgnums()),
               ft::Dims(in_dims))(args);
  for (ft::Tensor& j : jac) j = ft::reshape(j, {xs.size(0), 10, -1});
  return jac;
}

ft::Tensor NtkByJacobianContraction(const ft::TensorList& params, const ft::Tensor& x1,
                                    const ft::Tensor& x2) {
  const ft::TensorList j1 = Jacobians(params, x1), j2 = Jacobians(params, x2);
  ft::Tensor ntk;
  for (int64_t p = 0; p < kParams; ++p) {
    const ft::Tensor term = ft::einsum("Naf,Mbf->NMab", {j1[p], j2[p]});
    ntk = p == 0 ? term : ntk + term;
  }
  return ntk;
}

ft::Tensor NtkByVectorProducts(const ft::TensorList& params, const ft::Tensor& x1,
                               const ft::Tensor& x2) {
  // The NTK block [10, 10] of one pair of images: J1 J2^T, as the jvp (through x2's network)
  // of each vjp (through x1's) of a basis vector.
  const ft::TensorListFn pair = [&params](const ft::TensorList& xx) {
    const ft::Tensor a = xx[0], b = xx[1];
    const ft::TensorListFn f1 = [a](const ft::TensorList& p) { return ft::TensorList{Forward(p, a)}; };
    const ft::TensorListFn f2 = [b](const ft::TensorList& p) { return ft::TensorList{Forward(p, b)}; };
    const ft::VjpResult r = ft::vjp(f1, params);
    const ft::TensorListFn slice = [&](const ft::TensorList& basis_row) {
      const ft::TensorList cotangent = r.vjp_fn({basis_row[0]});
      return ft::jvp(f2, params, cotangent).tangents;
    };
    return ft::vmap(slice)({ft::eye(10)});
  };
  // vmap over x2 inside, x1 outside: [N, M, 10, 10].
  const ft::TensorListFn over_x2 = ft::vmap(pair, {std::nullopt, 0});
  return ft::vmap(over_x2, {0, std::nullopt})({x1, x2})[0];
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 20, m = 5, size = 32;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--n=", 4) == 0) n = std::atoll(argv[i] + 4);
    if (std::strncmp(argv[i], "--m=", 4) == 0) m = std::atoll(argv[i] + 4);
    if (std::strncmp(argv[i], "--size=", 7) == 0) size = std::atoll(argv[i] + 7);
  }
  ft::Generator gen(2);
  const ft::TensorList params = InitParams(gen, size);
  const ft::Tensor x1 = ft::randn_like(ft::zeros({n, 3, size, size}), &gen);
  const ft::Tensor x2 = ft::randn_like(ft::zeros({m, 3, size, size}), &gen);

  auto start = std::chrono::steady_clock::now();
  const ft::Tensor by_jacobians = NtkByJacobianContraction(params, x1, x2);
  const double jac_seconds = Seconds(start);
  start = std::chrono::steady_clock::now();
  const ft::Tensor by_products = NtkByVectorProducts(params, x1, x2);
  const double vp_seconds = Seconds(start);

  // The oracle: each example's Jacobian by jacrev alone, and every product in a loop.
  std::vector<ft::TensorList> jac1, jac2;
  const auto jac_of = [&params](const ft::Tensor& x) {
    ft::TensorList args = params;
    args.push_back(x);
    return ft::jacrev(std::function<ft::Tensor(const ft::TensorList&)>(ForwardOfArgs),
                      ParamArgnums())(args);
  };
  for (int64_t i = 0; i < n; ++i) jac1.push_back(jac_of(ft::select(x1, 0, i)));
  for (int64_t j = 0; j < m; ++j) jac2.push_back(jac_of(ft::select(x2, 0, j)));
  ft::TensorList rows;
  for (int64_t i = 0; i < n; ++i) {
    ft::TensorList row;
    for (int64_t j = 0; j < m; ++j) {
      ft::Tensor block = ft::zeros({10, 10});
      for (int64_t p = 0; p < kParams; ++p) {
        const ft::Tensor a = ft::reshape(jac1[static_cast<size_t>(i)][p], {10, -1});
        const ft::Tensor b = ft::reshape(jac2[static_cast<size_t>(j)][p], {10, -1});
        block = block + ft::matmul(a, ft::transpose(b, 0, 1));
      }
      row.push_back(block);
    }
    rows.push_back(ft::stack(row, 0));
  }
  const ft::Tensor looped = ft::stack(rows, 0);
  const double scale = ft::amax(ft::abs(looped)).item<double>();
  const double gap_jac = ft::amax(ft::abs(by_jacobians - looped)).item<double>() / scale;
  const double gap_vp = ft::amax(ft::abs(by_products - looped)).item<double>() / scale;
  std::printf("empirical NTK of a small CNN, %lld x %lld images of %lldx%lld: %s\n",
              static_cast<long long>(n), static_cast<long long>(m), static_cast<long long>(size),
              static_cast<long long>(size), ft::ShapeToString(by_jacobians.sizes()).c_str());
  std::printf("Jacobian contraction %.3f s, NTK-vector products %.3f s\n", jac_seconds,
              vp_seconds);
  std::printf("max relative gap to the loop: contraction %.1e, vector products %.1e\n", gap_jac,
              gap_vp);
  const bool ok = gap_jac < 1e-4 && gap_vp < 1e-4;
  if (!ok) std::printf("MISMATCH\n");
  return ok ? 0 : 1;
}

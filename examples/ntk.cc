// ntk: the empirical neural tangent kernel of a small CNN (ntk_cnn.h), as in functorch's NTK
// tutorial.
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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "examples/ntk_cnn.h"
#include "ft.h"

namespace {

ft::Tensor NtkByVectorProducts(const ntk::Cnn& params, const ft::Tensor& x1,
                               const ft::Tensor& x2) {
  // The NTK block [10, 10] of one pair of images: J1 J2^T, as the jvp (through x2's network)
  // of each vjp (through x1's) of a basis vector.
  const auto pair = [&params](const ft::Tensor& a, const ft::Tensor& b) {
    const auto f1 = [a](const ntk::Cnn& p) { return ntk::Forward(p, a); };
    const auto f2 = [b](const ntk::Cnn& p) { return ntk::Forward(p, b); };
    const auto r = ft::vjp(f1, params);  // r.vjp_fn: a cotangent [10] -> a Cnn
    const ft::TensorFn row = [&](const ft::Tensor& basis_row) {
      const ntk::Cnn cotangent = r.vjp_fn(basis_row);
      return ft::jvp(f2, params, cotangent).tangents;
    };
    return ft::vmap(row)(ft::eye(ntk::kOutputs));
  };
  // vmap over x2 inside, x1 outside: [N, M, 10, 10].
  const auto over_x2 = ft::vmap(pair, {std::nullopt, 0});
  return ft::vmap(over_x2, {0, std::nullopt})(x1, x2);
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
  const ntk::Cnn params = ntk::InitParams(gen, size);
  const ft::Tensor x1 = ft::randn_like(ft::zeros({n, 3, size, size}), &gen);
  const ft::Tensor x2 = ft::randn_like(ft::zeros({m, 3, size, size}), &gen);

  auto start = std::chrono::steady_clock::now();
  const ft::Tensor by_jacobians = ntk::NtkByJacobianContraction(params, x1, x2);
  const double jac_seconds = Seconds(start);
  start = std::chrono::steady_clock::now();
  const ft::Tensor by_products = NtkByVectorProducts(params, x1, x2);
  const double vp_seconds = Seconds(start);

  // The oracle: each example's Jacobian by jacrev alone, and every product in a loop.
  const ft::Tensor looped = ntk::NtkByLoop(params, x1, x2);
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

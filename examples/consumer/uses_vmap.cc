// vmap alone (@ft//interpreters/vmap): a per-example dot product, checked against a loop.
#include "check.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"

int main() {
  const ft::Tensor xs = ft::reshape(ft::arange(12.0), {4, 3});
  const ft::Tensor w = ft::tensor({1.0, -1.0, 2.0});
  auto dot_w = ft::vmap(ft::TensorListFn([](const ft::TensorList& a) {
                          return ft::TensorList{ft::dot(a[0], a[1])};
                        }),
                        {0, std::nullopt});
  const std::vector<double> batched = dot_w({xs, w})[0].to_vector<double>();
  for (int64_t i = 0; i < 4; ++i) {
    const double loop = ft::dot(ft::select(xs, 0, i), w).item<double>();
    CHECK_NEAR(batched[static_cast<size_t>(i)], loop, 1e-12);
  }
  return Finish("uses_vmap");
}

#include "ops/sort.h"

#include "dispatch/dispatch.h"
#include "kernels/sort.h"

namespace ft {

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  return Call<&kernels::sort>(x, dim, descending);
}
Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  return Call<&kernels::argsort>(x, dim, descending);
}
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
  return Call<&kernels::topk>(x, k, dim, largest, sorted);
}

void RegisterSortOps(OpRegistry& r) {
  RegisterOp<&kernels::sort>(r, "sort", {"self", "dim", "descending"});
  RegisterOp<&kernels::argsort>(r, "argsort", {"self", "dim", "descending"});
  RegisterOp<&kernels::topk>(r, "topk", {"self", "k", "dim", "largest", "sorted"});
}

}  // namespace ft

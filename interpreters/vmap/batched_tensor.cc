#include "interpreters/vmap/batched_tensor.h"

#include "absl/strings/str_cat.h"
#include "tensor/block_pool.h"
#include "tensor/print.h"

namespace ft {
namespace {

// The level of a wrapper value (0 for dense), for the nesting invariant.
int64_t InnerLevel(const Tensor& value) {
  if (value.kind() == TensorKind::kBatched) {
    return static_cast<const BatchedTensorImpl*>(value.impl())->level();
  }
  return 0;
}

}  // namespace

BatchedTensorImpl::BatchedTensorImpl(Tensor value, int64_t bdim, int64_t level,
                                     std::shared_ptr<const bool> alive)
    : TensorImpl(TensorKind::kBatched, value.dtype(), value.sizes(), bdim),
      value_(std::move(value)),
      bdim_(bdim),
      level_(level),
      alive_(std::move(alive)) {
  FT_CHECK(bdim_ >= 0 && bdim_ < value_.dim());
  FT_CHECK(InnerLevel(value_) < level_);
}

Tensor BatchedTensorImpl::UnwrapDead(const std::string& op) const {
  ThrowError(op, ": met a BatchedTensor of vmap level ", level_,
             ", but that vmap has already returned (the tensor escaped the function being "
             "vmapped, e.g. through a global or a captured variable); return it from the "
             "function instead");
}

std::string BatchedTensorImpl::WrapperRepr() const {
  std::string inner = value_.is_dense() ? ToString(value_) : value_.impl()->WrapperRepr();
  return absl::StrCat("BatchedTensor(lvl=", level_, ", bdim=", bdim_, ", value=", inner, ")");
}

Tensor MakeBatched(Tensor value, int64_t bdim, int64_t level, std::shared_ptr<const bool> alive) {
  const int64_t wrapped = bdim < 0 ? bdim + value.dim() : bdim;
  return Tensor(std::allocate_shared<BatchedTensorImpl>(
      internal::PoolAllocator<BatchedTensorImpl>(), std::move(value), wrapped, level,
      std::move(alive)));
}

std::pair<Tensor, std::optional<int64_t>> UnwrapBatched(const Tensor& t, int64_t level) {
  if (const BatchedTensorImpl* b = MaybeBatchedAt(t, level)) return {b->value(), b->bdim()};
  return {t, std::nullopt};
}

}  // namespace ft

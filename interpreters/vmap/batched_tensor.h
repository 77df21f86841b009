// ft/interpreters/vmap/batched_tensor.h
//
// BatchedTensor: the wrapper vmap gives the tensors it maps over. It holds a physical value
// with one extra dim, the batch dim `bdim`, at one vmap level. Its logical shape, what the
// user's function sees, is the value's shape without the batch dim:
//   value [2, 3, 5] with bdim 0  ->  logical [3, 5]  (batch of 2)
//   value [3, 2, 5] with bdim 1  ->  logical [3, 5]
// Nested vmaps nest wrappers: vmap(vmap(f)) hands f a BatchedTensor(level 2) whose value is a
// BatchedTensor(level 1) whose value is dense. A wrapper's level is strictly greater than any
// level inside it (FT_CHECKed).
//
// Batching rules never see BatchedTensors: the vmap interpreter unwraps its own level into
// (value, bdim) pairs before a rule runs and wraps the results after (vmap_interpreter.h).
//
// A BatchedTensor that escapes its vmap (stored in a global, returned inside a struct) is
// dead once the vmap returns: an op that meets it throws an ft::Error naming the dead level
// (NOTE: [Dead wrappers] in tensor/tensor.h).
//
// Example:
//   Tensor b = MakeBatched(ft::zeros({4, 3}), /*bdim=*/0, level, alive);  // logical [3]
//   auto [value, bdim] = UnwrapBatched(b, level);                        // value [4, 3], 0
#ifndef FT_INTERPRETERS_VMAP_BATCHED_TENSOR_H_
#define FT_INTERPRETERS_VMAP_BATCHED_TENSOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "tensor/tensor.h"

namespace ft {

class BatchedTensorImpl : public TensorImpl {
 public:
  // Preconditions (FT_CHECKed): 0 <= bdim < value.dim(); value is dense or wrapped at a
  // lower level.
  BatchedTensorImpl(Tensor value, int64_t bdim, int64_t level, std::shared_ptr<const bool> alive);

  const Tensor& value() const { return value_; }
  const Tensor* wrapped_value() const override { return &value_; }
  int64_t bdim() const { return bdim_; }
  int64_t level() const { return level_; }
  int64_t batch_size() const { return value_.sizes()[bdim_]; }

  bool is_alive_wrapper() const override { return *alive_; }
  // Throws: a batched tensor has no meaning outside its vmap.
  Tensor UnwrapDead(const std::string& op) const override;
  // "BatchedTensor(lvl=1, bdim=0, value=tensor([...]))".
  std::string WrapperRepr() const override;

 private:
  Tensor value_;
  int64_t bdim_;
  int64_t level_;
  std::shared_ptr<const bool> alive_;
};

// MakeBatched wraps `value` with batch dim `bdim` (wrapped if negative) at `level`.
Tensor MakeBatched(Tensor value, int64_t bdim, int64_t level, std::shared_ptr<const bool> alive);

// MaybeBatchedAt returns t's BatchedTensorImpl when t is batched at exactly `level`.
// Inline: every batching rule asks it of every argument.
inline const BatchedTensorImpl* MaybeBatchedAt(const Tensor& t, int64_t level) {
  if (!t.defined() || t.kind() != TensorKind::kBatched) return nullptr;
  const auto* b = static_cast<const BatchedTensorImpl*>(t.impl());
  return b->level() == level ? b : nullptr;
}

// UnwrapBatched returns (value, bdim) when t is batched at `level`, else (t, nullopt).
std::pair<Tensor, std::optional<int64_t>> UnwrapBatched(const Tensor& t, int64_t level);

}  // namespace ft

#endif  // FT_INTERPRETERS_VMAP_BATCHED_TENSOR_H_

#include "interpreters/functionalize/functional_tensor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "dispatch/interpreter.h"
#include "ops/ops.h"
#include "tensor/print.h"

namespace ft {

FunctionalStorage::FunctionalStorage(Tensor base, int64_t level, bool copy_views)
    : base_(std::move(base)), level_(level), copy_views_(copy_views) {}

const Tensor& FunctionalStorage::base() {
  if (!pending_.empty()) ApplyPending();
  return base_;
}

void FunctionalStorage::SetBase(Tensor value) {
  // The writer synced the base first, which applied every pending write.
  FT_CHECK(pending_.empty());
  base_ = std::move(value);
  ++generation_;
  mutated_ = true;
}

void FunctionalStorage::AddViewWrite(std::shared_ptr<const ViewRecipe> recipe, Tensor value) {
  FT_CHECK(recipe != nullptr && !recipe->empty());
  pending_.push_back(PendingWrite{std::move(recipe), std::move(value)});
  ++generation_;
  mutated_ = true;
}

namespace {

// WriteThrough: `parent` with the view that recipe[i..] makes of it replaced by `value`.
Tensor WriteThrough(const ViewRecipe& recipe, size_t i, const Tensor& parent,
                    const Tensor& value) {
  if (i + 1 == recipe.size()) return WriteThroughView(recipe[i], parent, value);
  const Tensor child = ReplayView(recipe[i], parent);
  return WriteThroughView(recipe[i], parent, WriteThrough(recipe, i + 1, child, value));
}

}  // namespace

void FunctionalStorage::ApplyPending() {
  LowerBelowGuard lower(level_);
  // Committed only when every write is applied: an exception leaves the storage as it was.
  Tensor base = base_;
  for (const PendingWrite& write : pending_) base = WriteThrough(*write.recipe, 0, base, write.value);
  base_ = std::move(base);
  pending_.clear();
}

namespace {
const std::shared_ptr<const ViewRecipe>& EmptyRecipe() {
  static const auto* empty = new std::shared_ptr<const ViewRecipe>(std::make_shared<ViewRecipe>());
  return *empty;
}
}  // namespace

FunctionalTensorImpl::FunctionalTensorImpl(Tensor value, int64_t level,
                                           std::shared_ptr<const bool> alive, bool copy_views)
    : TensorImpl(TensorKind::kFunctional, value.dtype(),
                 Shape(value.sizes().begin(), value.sizes().end())),
      value_(value),
      generation_(0),
      storage_(std::make_shared<FunctionalStorage>(std::move(value), level, copy_views)),
      recipe_(EmptyRecipe()),
      meta_(MetaOf(value_)),
      level_(level),
      alive_(std::move(alive)) {}

FunctionalTensorImpl::FunctionalTensorImpl(const FunctionalTensorImpl& parent,
                                           std::shared_ptr<const ViewRecipe> recipe, Tensor value,
                                           Tensor meta)
    : TensorImpl(TensorKind::kFunctional, value.dtype(),
                 Shape(value.sizes().begin(), value.sizes().end())),
      value_(std::move(value)),
      generation_(parent.storage_->generation()),
      storage_(parent.storage_),
      recipe_(std::move(recipe)),
      meta_(std::move(meta)),
      level_(parent.level_),
      alive_(parent.alive_) {}

bool FunctionalTensorImpl::writable() const {
  for (const ViewStep& step : *recipe_) {
    if (!step.writable) return false;
  }
  return true;
}

void FunctionalTensorImpl::Sync() const {
  if (generation_ == storage_->generation()) return;
  LowerBelowGuard lower(level_);
  const Tensor& base = storage_->base();
  Tensor v = base;
  for (const ViewStep& step : *recipe_) v = ReplayView(step, v);
  if (storage_->copy_views() && is_view() && v.data_storage().is_same(base.data_storage())) {
    v = clone(v);
  }
  value_ = std::move(v);
  generation_ = storage_->generation();
}

const Tensor& FunctionalTensorImpl::value() const {
  Sync();
  return value_;
}

void FunctionalTensorImpl::Write(Tensor new_value) {
  FT_CHECK(generation_ == storage_->generation());  // the writer synced first
  if (is_view()) {
    storage_->AddViewWrite(recipe_, new_value);
  } else {
    storage_->SetBase(new_value);
  }
  value_ = std::move(new_value);
  generation_ = storage_->generation();
}

std::string FunctionalTensorImpl::WrapperRepr() const {
  const Tensor& v = value();
  const std::string inner = v.is_dense() ? ToString(v) : v.impl()->WrapperRepr();
  return absl::StrCat("FunctionalTensor(lvl=", level_, is_view() ? ", view" : "",
                      ", value=", inner, ")");
}

Tensor MetaOf(const Tensor& t) {
  const Shape sizes(t.sizes().begin(), t.sizes().end());
  if (t.is_dense()) {
    return MakeDense(Storage(), t.dtype(), sizes, Shape(t.strides().begin(), t.strides().end()),
                     t.storage_offset());
  }
  return MakeDense(Storage(), t.dtype(), sizes, ContiguousStrides(sizes), 0);
}

Tensor MakeFunctional(Tensor value, int64_t level, std::shared_ptr<const bool> alive,
                      bool copy_views) {
  return Tensor(std::make_shared<FunctionalTensorImpl>(std::move(value), level, std::move(alive),
                                                       copy_views));
}

FunctionalTensorImpl* MaybeFunctionalAt(const Tensor& t, int64_t level) {
  if (!t.defined() || t.kind() != TensorKind::kFunctional) return nullptr;
  auto* f = static_cast<FunctionalTensorImpl*>(t.impl());
  return f->level() == level ? f : nullptr;
}

}  // namespace ft

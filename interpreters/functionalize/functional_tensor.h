// ft/interpreters/functionalize/functional_tensor.h
//
// FunctionalTensorImpl: the wrapper tensor of the functionalize transform (PyTorch's
// FunctionalTensorWrapper), and FunctionalStorage, what a base and all of its views share.
//
// NOTE: [Functional wrappers]
// Under functionalize nothing one level down is ever written in place. A wrapper holds its
// current value (one level down). An in-place op on it runs the out-of-place op one level
// down and makes the result the wrapper's new value (Write). A wrapper made by a view op
// (select, transpose, ...) shares its base's FunctionalStorage and keeps its recipe: the view
// steps from the base to it. The storage holds the base's current value, the writes made
// through views and not yet applied to the base, and a generation that every write bumps.
// A wrapper whose generation is behind its storage's is stale; Sync() then folds the pending
// writes into the base, each through the inverses of its recipe's steps (select_scatter for
// select, a transpose for a transpose, ...), and regenerates the wrapper's value by replaying
// its own recipe on the new base. So a write through a view is seen by the base and by every
// other view of it, lazily, at their next use, and no kernel below ever writes in place.
//
// NOTE: [Eager geometry]
// Whether an op returns a view (and so whether later writes through its result reach its
// argument) must be decided as the eager program decides it: reshape is a view only when the
// argument's strides allow one. A wrapper's value, once written, is a new tensor whose layout
// is not the eager one, so each wrapper also keeps `meta`: a dense tensor over no storage
// with the sizes, strides and offset the eager tensor would have. View ops run their kernels
// on it (geometry only, no element is read) to decide.
//
// Invariants: a wrapper's sizes and dtype never change (an in-place op keeps them); its value
// is one level down and, once synced, equals what the eager program would hold; a storage's
// pending writes are applied in order; recipes start at the storage's base. The wrapper's
// data_version is its storage's generation, so the transforms around functionalize see every
// write through any view (NOTE: [Stale history] in interpreters/grad).
//
// Example (inside ft::functionalize, level L):
//   Tensor b = ...;                       // FunctionalTensor(lvl=L): a base
//   Tensor v = ft::select(b, 0, 1);       // a view of b: recipe [select(0, 1)]
//   ft::mul_(v, 2.0);                     // v's value := mul(v's value, 2); b is now stale
//   ft::sum(b);                           // b syncs: b's value := select_scatter(b, v, 0, 1)
#ifndef FT_INTERPRETERS_FUNCTIONALIZE_FUNCTIONAL_TENSOR_H_
#define FT_INTERPRETERS_FUNCTIONALIZE_FUNCTIONAL_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dispatch/operator.h"
#include "dispatch/value.h"
#include "tensor/tensor.h"

namespace ft {

// ViewStep: one view op of a recipe: the op, its arguments with the viewed tensor's slot
// (argument 0) left None, which output it was (-1 for a single tensor result, k for element
// k of a list result: split, chunk), and whether writing through the result is defined.
struct ViewStep {
  const Operator* op = nullptr;
  ValueList args;
  int output_index = -1;
  // For element k of a list result (split, chunk): where it starts along the split dim.
  int64_t piece_start = 0;
  // False when the view broadcasts (expand: elements of the view share one element of the
  // base) or when functionalize knows no inverse for the op: writes through it are refused.
  bool writable = true;
};

using ViewRecipe = std::vector<ViewStep>;

// ReplayView runs `step` on `parent` at the current position of the layer stack (the caller
// lowers) and returns the view.
Tensor ReplayView(const ViewStep& step, const Tensor& parent);

// WriteThroughView returns `parent` with the region `step` views from it replaced by
// `new_view`, out of place (select_scatter, slice_scatter, a transpose back, ...). FT_CHECKs
// that the step is writable.
Tensor WriteThroughView(const ViewStep& step, const Tensor& parent, const Tensor& new_view);

// FunctionalStorage: the state a base wrapper and its views share.
class FunctionalStorage {
 public:
  // `base`: the base's value one level down; `level`: the functionalize level (replays run
  // with it and everything inside it lowered); `copy_views`: functionalize's
  // kMutationsAndViews mode, where a view's value is a copy, never an alias of the base.
  FunctionalStorage(Tensor base, int64_t level, bool copy_views);

  // base: the base's value with every write applied (applies pending ones; runs ops).
  const Tensor& base();
  int64_t generation() const { return generation_; }
  bool copy_views() const { return copy_views_; }
  int64_t level() const { return level_; }
  // mutated: some write (to the base or through a view) happened since construction.
  bool mutated() const { return mutated_; }

  // SetBase replaces the base's value (a write to the base itself); AddViewWrite records a
  // write through the view of `recipe` (applied to the base lazily). Both bump the
  // generation.
  void SetBase(Tensor value);
  void AddViewWrite(std::shared_ptr<const ViewRecipe> recipe, Tensor value);

 private:
  struct PendingWrite {
    std::shared_ptr<const ViewRecipe> recipe;
    Tensor value;
  };
  void ApplyPending();

  Tensor base_;
  std::vector<PendingWrite> pending_;
  int64_t generation_ = 0;
  int64_t level_;
  bool copy_views_;
  bool mutated_ = false;
};

class FunctionalTensorImpl : public TensorImpl {
 public:
  // A base wrapper over `value` with a storage of its own. Its eager geometry is value's
  // when value is dense, else contiguous.
  FunctionalTensorImpl(Tensor value, int64_t level, std::shared_ptr<const bool> alive,
                       bool copy_views);
  // A view of `parent`'s storage: `recipe` leads from the base to it; `value` is its value
  // and `meta` its eager geometry (NOTE: [Eager geometry]).
  FunctionalTensorImpl(const FunctionalTensorImpl& parent,
                       std::shared_ptr<const ViewRecipe> recipe, Tensor value, Tensor meta);

  int64_t level() const { return level_; }
  const std::shared_ptr<FunctionalStorage>& storage() const { return storage_; }
  // recipe: the view steps from the base (empty for the base itself).
  const ViewRecipe& recipe() const { return *recipe_; }
  const std::shared_ptr<const ViewRecipe>& recipe_ptr() const { return recipe_; }
  bool is_view() const { return !recipe_->empty(); }
  // meta: the eager geometry (NOTE: [Eager geometry]); a dense tensor whose storage is
  // undefined: only its sizes, strides, offset and dtype may be read.
  const Tensor& meta() const { return meta_; }
  // writable: every step of the recipe can be written through (ViewStep::writable).
  bool writable() const;

  // Sync brings the value up to date with every write to the storage (NOTE above); value()
  // syncs first. Both run ops with the functionalize level lowered.
  void Sync() const;
  const Tensor& value() const;
  // Write makes `new_value` (of this wrapper's sizes and dtype) its value: a write to the
  // base, or through this view. Other wrappers of the storage go stale.
  void Write(Tensor new_value);

  bool is_alive_wrapper() const override { return *alive_; }
  const Tensor* wrapped_value() const override { return &value_; }
  int64_t data_version() const override { return storage_->generation(); }
  // A wrapper that outlived its functionalize call behaves like its (synced) value.
  Tensor UnwrapDead(const std::string& /*op*/) const override { return value(); }
  // "FunctionalTensor(lvl=2, value=...)" (synced).
  std::string WrapperRepr() const override;

 private:
  mutable Tensor value_;
  mutable int64_t generation_;
  std::shared_ptr<FunctionalStorage> storage_;
  std::shared_ptr<const ViewRecipe> recipe_;
  Tensor meta_;
  int64_t level_;
  std::shared_ptr<const bool> alive_;
};

// MetaOf: a dense tensor over no storage with t's geometry (dense t) or the contiguous
// geometry of its sizes (a wrapper).
Tensor MetaOf(const Tensor& t);

// MakeFunctional wraps `value` as a new base at `level`.
Tensor MakeFunctional(Tensor value, int64_t level, std::shared_ptr<const bool> alive,
                      bool copy_views);

// MaybeFunctionalAt: t's FunctionalTensorImpl when t is a functional wrapper of exactly
// `level`, else nullptr.
FunctionalTensorImpl* MaybeFunctionalAt(const Tensor& t, int64_t level);

}  // namespace ft

#endif  // FT_INTERPRETERS_FUNCTIONALIZE_FUNCTIONAL_TENSOR_H_

#include "interpreters/grad/grad_interpreter.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "dispatch/dispatch.h"
#include "dispatch/named_axes.h"
#include "ops/ops.h"
#include "tensor/block_pool.h"
#include "tensor/generator.h"
#include "tensor/print.h"

namespace ft {

GradWrapperImpl::GradWrapperImpl(Tensor value, int64_t level, std::shared_ptr<const bool> alive,
                                 autograd::Edge grad_edge, uint64_t varying)
    : TensorImpl(TensorKind::kGradWrapper, value.dtype(), value.sizes(), -1),
      value_(std::move(value)),
      level_(level),
      alive_(std::move(alive)),
      grad_edge_(std::move(grad_edge)),
      recorded_version_(value_.data_version()),
      varying_(varying) {
  // The derivative formulas are real ones: for complex values they need torch's
  // conjugations (its "Autograd for Complex Numbers" convention), which issue 43 brings next.
  // Until then a complex value refuses to be tracked rather than get a wrong gradient.
  if (IsComplex(dtype())) {
    ThrowError("grad: a ", DTypeName(dtype()), " value of shape ", ShapeToString(sizes()),
               " reached a grad or vjp level (", level_,
               "): differentiating complex functions is not supported yet");
  }
}

namespace {

uint64_t Bit(int i) { return uint64_t{1} << i; }

// PvaryBackward: the transpose of broadcasting an invariant value over the axes `missing`
// (NOTE: [Gradients across named axes]): the gradient summed over those of them the
// objective is invariant over, by psum (//distributed registers it), else passed on.
class PvaryNode : public autograd::Node {
 public:
  PvaryNode(autograd::Edge next, uint64_t missing, std::shared_ptr<AxisObjective> objective)
      : Node({std::move(next)}, 1), missing_(missing), objective_(std::move(objective)) {}
  std::string name() const override { return "PvaryBackward"; }
  TensorList Apply(TensorList grads) override {
    Tensor g = std::move(grads[0]);
    const uint64_t sum_over = missing_ & objective_->invariant;
    if (g.defined() && sum_over != 0) {
      const Operator* psum = OpRegistry::Global().Find("psum");
      FT_CHECK(psum != nullptr);  // an invariant objective came from a collective
      for (int i = 0; i < objective_->count; ++i) {
        if ((sum_over & Bit(i)) == 0) continue;
        ValueList args = {Value(std::move(g)), Value(objective_->name_ids[i])};
        ValueList out = DispatchBoxed(*psum, args);
        g = std::move(out[0].mutable_tensor());
      }
    }
    TensorList result;
    result.push_back(std::move(g));
    return result;
  }

 private:
  uint64_t missing_;
  std::shared_ptr<AxisObjective> objective_;
};

}  // namespace

autograd::Edge GradWrapperImpl::BroadcastEdge(uint64_t missing,
                                              const std::shared_ptr<AxisObjective>& objective) {
  for (const Broadcast& b : broadcasts_) {
    if (b.missing == missing && b.history == grad_edge_.node.get()) return b.edge;
  }
  objective->broadcasts |= missing;
  autograd::Edge edge{std::make_shared<PvaryNode>(grad_edge_, missing, objective), 0};
  broadcasts_.push_back(Broadcast{missing, grad_edge_.node.get(), edge});
  return edge;
}

uint64_t NamedAxisVarying(const Tensor& t, const AxisObjective& objective,
                          bool differentiated) {
  uint64_t bits = 0;
  for (int i = 0; i < objective.count; ++i) {
    const NamedAxis& axis = NamedAxes::At(i);
    bool varies = false;
    bool decided = false;
    for (const Tensor* cur = &t; cur != nullptr && cur->defined();
         cur = cur->impl()->wrapped_value()) {
      if (cur->kind() == TensorKind::kGradWrapper) {
        const auto* w = static_cast<const GradWrapperImpl*>(cur->impl());
        // An outer grad level tracks the axes named outside it: its record decides.
        if (w->level() > axis.vmap_level) {
          varies = (w->varying() & Bit(i)) != 0;
          decided = true;
          break;
        }
        continue;
      }
      if (axis.is_vmap() && axis.mapped_at != nullptr && axis.mapped_at(*cur, axis.vmap_level)) {
        varies = true;
        decided = true;
        break;
      }
    }
    if (!decided && !axis.is_vmap()) {
      if (differentiated) {
        varies = (objective.inputs_vary & Bit(i)) != 0;
      } else {
        const Storage& storage = t.data_storage();
        varies = !storage.defined() || !storage.AllocatedAfter(objective.entered);
      }
    }
    if (varies) bits |= Bit(i);
  }
  return bits;
}

uint64_t RouteAcrossNamedAxes(int64_t level, const std::shared_ptr<AxisObjective>& objective,
                              absl::Span<const Tensor* const> inputs, autograd::EdgeList& edges,
                              int64_t axis_id, bool makes_invariant) {
  const int count = objective->count;
  absl::InlinedVector<uint64_t, 4> bits(inputs.size());
  uint64_t out = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& t = *inputs[k];
    if (!t.defined()) continue;
    const GradWrapperImpl* w = MaybeGradWrapperAt(t, level);
    bits[k] = w != nullptr ? w->varying() : NamedAxisVarying(t, *objective, false);
    out |= bits[k];
  }
  // What the op's inputs must vary over: what any of them varies over, and for a
  // collective its axis too (an input every member shares is broadcast over the axis first,
  // as JAX's psum of an invariant value is pvary then psum: psum(c) == size * c).
  uint64_t required = out;
  if (axis_id >= 0) {
    const int i = NamedAxes::FindIndex(axis_id);
    if (i >= 0 && i < count) {
      required |= Bit(i);
      out = makes_invariant ? (required & ~Bit(i)) : required;
      objective->collectives |= Bit(i);
    }
  }
  for (size_t k = 0; k < inputs.size() && k < edges.size(); ++k) {
    const uint64_t missing = required & ~bits[k];
    if (missing == 0 || !edges[k].valid()) continue;
    GradWrapperImpl* w = MaybeGradWrapperAt(*inputs[k], level);
    if (w != nullptr) edges[k] = w->BroadcastEdge(missing, objective);
  }
  return out;
}

void GradWrapperImpl::set_history(autograd::Edge grad_edge) {
  grad_edge_ = std::move(grad_edge);
  recorded_version_ = value_.data_version();
}

std::string GradWrapperImpl::WrapperRepr() const {
  std::string inner = value_.is_dense() ? ToString(value_) : value_.impl()->WrapperRepr();
  return absl::StrCat("GradTrackingTensor(lvl=", level_, ", value=", inner, ")");
}

Tensor MakeGradWrapper(Tensor value, int64_t level, std::shared_ptr<const bool> alive,
                       autograd::Edge grad_edge, uint64_t varying) {
  return Tensor(std::allocate_shared<GradWrapperImpl>(internal::PoolAllocator<GradWrapperImpl>(),
                                                      std::move(value), level, std::move(alive),
                                                      std::move(grad_edge), varying));
}

GradWrapperImpl* MaybeGradWrapperAt(const Tensor& t, int64_t level) {
  if (!t.defined() || t.kind() != TensorKind::kGradWrapper) return nullptr;
  auto* w = static_cast<GradWrapperImpl*>(t.impl());
  return w->level() == level ? w : nullptr;
}

GradInterpreter::GradInterpreter(int64_t level, bool prev_grad_mode)
    : Interpreter(TransformType::kGrad, level), prev_grad_mode_(prev_grad_mode) {
  // The axes named now are outside this level (inner ones are named later, above it).
  const int count = NamedAxes::depth();
  if (count > 0) {
    objective_ = std::make_shared<AxisObjective>();
    objective_->count = count;
    objective_->entered = Storage::Mark();
    for (int i = 0; i < count; ++i) {
      const NamedAxis& axis = NamedAxes::At(i);
      objective_->name_ids[i] = axis.name_id;
      if (!axis.is_vmap()) objective_->process_axes |= Bit(i);
      if (!axis.is_vmap() && axis.inputs_vary) objective_->inputs_vary |= Bit(i);
    }
  }
}

namespace {

// GradientSlots: one per output tensor, TensorList outputs (split, chunk, ...) expanded
// element by element, so a formula gets one gradient per piece.
int GradientSlots(const ValueList& outputs) {
  int n = 0;
  for (const Value& v : outputs) {
    n += v.is_tensor_list() ? static_cast<int>(v.tensor_list().size()) : 1;
  }
  return n;
}

}  // namespace

// RematRecord: the ops one grad level saw in a RematScope, replayable (NOTE:
// [Rematerialization] in grad_interpreter.h).
class RematRecord {
 public:
  RematRecord(std::function<bool(const Operator&)> save_outputs, std::vector<std::string> names,
              bool no_grad)
      : save_outputs_(std::move(save_outputs)), names_(std::move(names)), no_grad_(no_grad) {}

  bool SavesName(const std::string& name) const {
    return std::find(names_.begin(), names_.end(), name) != names_.end();
  }

  // Keep: the replay takes `inner` (a value the region made) instead of running the op that
  // made it, when that op made nothing else.
  void Keep(const Tensor& inner) {
    auto it = producers_.find(inner.impl());
    if (it == producers_.end() || it->second.impl.lock().get() != inner.impl()) return;
    Entry& e = entries_[it->second.entry];
    if (e.num_outputs != 1 || it->second.output_elem >= 0 || e.written >= 0) return;
    e.saved_outputs = ValueList{Value(inner)};
  }

  // Record notes `op` on `inner` (the arguments one level down) before it runs; returns its
  // index. Throws when an in-place op writes a tensor the region did not make.
  int Record(const Operator& op, const ValueList& inner) {
    const int index = static_cast<int>(entries_.size());
    Entry e;
    e.op = &op;
    e.no_grad = no_grad_ || !GradMode::is_enabled();
    e.args = inner;
    const int written = op.schema().mutated_arg.value_or(-1);
    for (size_t i = 0; i < e.args.size(); ++i) {
      Value& v = e.args[i];
      if (v.is_tensor()) {
        Reference(e, v.mutable_tensor(), i, -1);
      } else if (v.is_tensor_list()) {
        TensorList& list = v.mutable_tensor_list();
        for (size_t k = 0; k < list.size(); ++k) Reference(e, list[k], i, static_cast<int>(k));
      } else if (i < op.schema().args.size() &&
                 op.schema().args[i].kind == ArgKind::kGenerator) {
        // No generator (None) is the thread's default one.
        e.generator = v.is_none() ? &DefaultGenerator() : v.generator();
        e.offset = e.generator->offset();
      }
    }
    if (written >= 0) {
      const bool self_is_ref = std::any_of(e.refs.begin(), e.refs.end(), [&](const Ref& r) {
        return r.arg == static_cast<size_t>(written) && r.elem < 0;
      });
      if (!self_is_ref) ThrowExternalWrite(op);
      e.written = written;
    }
    entries_.push_back(std::move(e));
    return index;
  }

  // Produced notes the outputs of entry `index` (the region made them).
  void Produced(int index, const ValueList& outputs) {
    Entry& e = entries_[index];
    e.num_outputs = outputs.size();
    if (save_outputs_ && save_outputs_(*e.op)) e.saved_outputs = outputs;
    for (size_t j = 0; j < outputs.size(); ++j) {
      if (outputs[j].is_tensor()) {
        Note(outputs[j].tensor(), index, j, -1);
      } else if (outputs[j].is_tensor_list()) {
        const TensorList& list = outputs[j].tensor_list();
        for (size_t k = 0; k < list.size(); ++k) Note(list[k], index, j, static_cast<int>(k));
      }
    }
  }

  void AddNode() {
    ++nodes_;
    ++total_nodes_;
  }

  // Values: entry `index`'s inputs and outputs as the forward computed them, replaying the
  // record first when it is not replayed.
  std::pair<ValueList, ValueList> Values(int index) {
    if (!replayed_) {
      Replay();
      replayed_ = true;
      pending_ = nodes_;
    }
    return {replayed_args_[index], replayed_outputs_[index]};
  }

  // Release: a node that will not run again, told by a backward that runs its graph once
  // (NOTE: [Freeing saved values] in autograd/graph.h); `ran`: it ran (and said Done). One
  // that did not run never will (no gradient reached it): the replayed values need not wait
  // for it. After the last node the record itself goes: its recorded arguments hold the
  // checkpointed function's inputs.
  void Release(bool ran) {
    if (!ran) {
      if (replayed_) {
        Done();
      } else {
        --nodes_;
      }
    }
    if (++released_ < total_nodes_) return;
    entries_.clear();
    producers_.clear();
    replayed_args_.clear();
    replayed_outputs_.clear();
    replayed_ = false;
  }

  // Done: one node finished its backward; after the last, the values are released.
  void Done() {
    if (--pending_ > 0) return;
    replayed_ = false;
    replayed_args_.clear();
    replayed_outputs_.clear();
  }

 private:
  struct Ref {
    size_t arg;
    int elem;  // -1: the argument itself; else its element in a TensorList
    int entry;
    size_t output;
    int output_elem;
  };
  struct Entry {
    const Operator* op = nullptr;
    bool no_grad = false;  // ran with grad mode off (replayed so)
    ValueList args;  // made tensors replaced by undefined ones (refs say which)
    std::vector<Ref> refs;
    std::vector<std::pair<Tensor, int64_t>> held;  // tensors from outside, their versions
    Generator* generator = nullptr;
    uint64_t offset = 0;
    int written = -1;
    size_t num_outputs = 0;
    ValueList saved_outputs;  // kept by the policy
  };
  struct Producer {
    std::weak_ptr<TensorImpl> impl;
    int entry;
    size_t output;
    int output_elem;
  };

  // Reference: `t` (argument `arg`, element `elem`) is an earlier entry's output, recorded
  // as a reference (and not held), or a tensor from outside, held with its version.
  void Reference(Entry& e, Tensor& t, size_t arg, int elem) {
    if (!t.defined()) return;
    auto it = producers_.find(t.impl());
    if (it != producers_.end() && it->second.impl.lock().get() == t.impl()) {
      e.refs.push_back({arg, elem, it->second.entry, it->second.output, it->second.output_elem});
      t = Tensor();
      return;
    }
    e.held.emplace_back(t, t.data_version());
  }

  void Note(const Tensor& t, int entry, size_t output, int elem) {
    if (t.defined()) producers_[t.impl()] = {t.impl_ptr(), entry, output, elem};
  }

  [[noreturn]] static void ThrowExternalWrite(const Operator& op) {
    ThrowError("checkpoint: in-place op '", op.name(), "' writes a tensor the checkpointed ",
               "function did not make; the backward pass replays the function's ops, so the ",
               "write would happen twice. Write into a tensor made inside (clone it first), ",
               "or use the out-of-place op");
  }

  static Tensor Get(const Value& v, int elem) {
    return elem < 0 ? v.tensor() : v.tensor_list()[elem];
  }
  static void Set(Value& v, int elem, Tensor t) {
    if (elem < 0) {
      v = Value(std::move(t));
    } else {
      v.mutable_tensor_list()[elem] = std::move(t);
    }
  }

  void Replay() {
    replayed_args_.assign(entries_.size(), {});
    replayed_outputs_.assign(entries_.size(), {});
    std::vector<std::pair<Generator*, uint64_t>> restore;
    struct RestoreGenerators {
      std::vector<std::pair<Generator*, uint64_t>>& r;
      ~RestoreGenerators() {
        for (auto it = r.rbegin(); it != r.rend(); ++it) it->first->set_offset(it->second);
      }
    } restore_generators{restore};
    for (size_t i = 0; i < entries_.size(); ++i) {
      const Entry& e = entries_[i];
      for (const auto& [held, version] : e.held) {
        if (held.data_version() != version) {
          ThrowError("checkpoint: a tensor of shape ", ShapeToString(held.sizes()), " that '",
                     e.op->name(), "' read in the checkpointed function was modified in ",
                     "place after the function ran, so the backward pass cannot recompute ",
                     "the function's values; clone it before modifying it");
        }
      }
      ValueList args = e.args;
      for (const Ref& r : e.refs) {
        Set(args[r.arg], r.elem, Get(replayed_outputs_[r.entry][r.output], r.output_elem));
      }
      if (!e.saved_outputs.empty()) {
        replayed_args_[i] = std::move(args);
        replayed_outputs_[i] = e.saved_outputs;
        continue;
      }
      if (e.written >= 0) KeepBeforeWrite(args[e.written].tensor(), i);
      if (e.generator != nullptr) {
        restore.emplace_back(e.generator, e.generator->offset());
        e.generator->set_offset(e.offset);
      }
      ValueList call_args = args;
      std::optional<NoGradGuard> no_grad;
      if (e.no_grad) no_grad.emplace();
      replayed_outputs_[i] = DispatchBoxed(*e.op, call_args);
      replayed_args_[i] = std::move(args);
    }
  }

  // KeepBeforeWrite: entry `writer` is about to write `target` in place; the entries before
  // it that read or made `target` read it before the write, so they get a copy.
  void KeepBeforeWrite(const Tensor& target, size_t writer) {
    Tensor before;
    auto swap = [&](Tensor& t) {
      if (!t.defined() || !t.is_same(target)) return;
      if (!before.defined()) before = clone(target);
      t = before;
    };
    for (size_t i = 0; i < writer; ++i) {
      for (ValueList* list : {&replayed_args_[i], &replayed_outputs_[i]}) {
        for (Value& v : *list) {
          if (v.is_tensor()) {
            swap(v.mutable_tensor());
          } else if (v.is_tensor_list()) {
            for (Tensor& t : v.mutable_tensor_list()) swap(t);
          }
        }
      }
    }
  }

  std::function<bool(const Operator&)> save_outputs_;
  std::vector<std::string> names_;
  bool no_grad_;
  std::vector<Entry> entries_;
  absl::flat_hash_map<const TensorImpl*, Producer> producers_;
  std::vector<ValueList> replayed_args_, replayed_outputs_;
  bool replayed_ = false;
  int nodes_ = 0;        // nodes that will ask for the values
  int pending_ = 0;      // of those, the ones that have not finished since the replay
  int total_nodes_ = 0;  // nodes made for this record
  int released_ = 0;     // of those, the ones released (Release)
};

RematScope::RematScope(std::function<bool(const Operator&)> save_outputs,
                       std::vector<std::string> names) {
  for (int i = 0; i < LayerStack::size(); ++i) {
    Interpreter* layer = LayerStack::At(i);
    if (layer->key() != TransformType::kGrad) continue;
    auto* grad = dynamic_cast<GradInterpreter*>(layer);
    if (grad == nullptr || grad->remat_ != nullptr) continue;
    grad->remat_ = std::make_shared<RematRecord>(save_outputs, names, !grad->prev_grad_mode());
    covered_.push_back(grad);
  }
}

RematScope::~RematScope() {
  for (GradInterpreter* grad : covered_) grad->remat_.reset();
}

void RematScope::KeepNamed(const Tensor& t, const std::string& name) {
  for (int i = 0; i < LayerStack::size(); ++i) {
    Interpreter* layer = LayerStack::At(i);
    if (layer->key() != TransformType::kGrad) continue;
    auto* grad = dynamic_cast<GradInterpreter*>(layer);
    if (grad == nullptr || grad->remat_ == nullptr || !grad->remat_->SavesName(name)) continue;
    // The value this level holds: under the wrapper of this level in t's chain.
    for (const Tensor* p = &t; p->defined() && !p->is_dense(); p = p->impl()->wrapped_value()) {
      if (const GradWrapperImpl* w = MaybeGradWrapperAt(*p, grad->level())) {
        grad->remat_->Keep(w->value());
        break;
      }
      if (p->impl()->wrapped_value() == nullptr) break;
    }
  }
}

GradInterpreter::~GradInterpreter() = default;

namespace {

// OpNode: the backward of one op call: the op's vjp formula over the values it saved (one
// level down). Inputs that carry no gradient at the recording level are skipped
// (VjpContext::needs); missing output gradients become zeros of the output's shape.
class OpNode : public autograd::Node {
 public:
  // `d` is op's derivative entry, with a formula (checked by the caller).
  OpNode(autograd::EdgeList edges, int num_slots, const Operator& op,
         const autograd::OpDerivatives& d, ValueList inputs, ValueList outputs,
         std::shared_ptr<RematRecord> remat = nullptr, int remat_entry = -1)
      : Node(std::move(edges), num_slots),
        op_(op),
        derivatives_(d),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        remat_(std::move(remat)),
        remat_entry_(remat_entry) {
    if (remat_ != nullptr) {
      remat_->AddNode();  // keeps no values: the record replays them (NOTE: [Rematerialization])
      return;
    }
    // NOTE: [Saved tensor versions] Remember the version of every dense input the formula
    // may read, so that an in-place write after the op ran (e.g. to a constant buffer made
    // inside the function) is an error at backward time, not a silently wrong gradient.
    // Ops whose formula reads only shapes are exempt (autograd::MarkInputValuesUnused).
    // Outputs likewise, for formulas that read them (exp: g * y).
    if (d.reads_output_values) {
      for (size_t i = 0; i < outputs_.size(); ++i) {
        if (outputs_[i].is_tensor() && outputs_[i].tensor().defined()) {
          output_versions_.push_back({i, outputs_[i].tensor().data_version()});
        }
      }
    }
    if (!d.reads_input_values) return;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i].is_tensor() && inputs_[i].tensor().defined()) {
        versions_.push_back({i, inputs_[i].tensor().data_version()});
      }
    }
  }

  std::string name() const override { return derivatives_.backward_name; }

  // NOTE: [Freeing saved values] in autograd/graph.h. A rematerialized node keeps nothing,
  // but its record keeps the replayed values until every node that will run has: one that
  // is released without having run tells it not to wait.
  void ReleaseSaved() override {
    if (released_) return;
    released_ = true;
    if (remat_ != nullptr) {
      remat_->Release(applied_);
      return;
    }
    inputs_.clear();
    outputs_.clear();
  }

  TensorList Apply(TensorList g) override {
    if (released_) ThrowReleased();
    applied_ = true;
    if (remat_ != nullptr) {
      auto [inputs, outputs] = remat_->Values(remat_entry_);
      TensorList result = ApplyTo(inputs, outputs, std::move(g));
      remat_->Done();
      return result;
    }
    for (const auto& [i, version] : output_versions_) {
      const int64_t now = outputs_[i].tensor().data_version();
      if (now != version) {
        ThrowError("grad: output ", i, " of '", op_.name(), "', which its backward needs, was ",
                   "modified by an in-place operation after '", op_.name(), "' ran (its ",
                   "version went from ", version, " to ", now, "); clone it before modifying it");
      }
    }
    for (const auto& [i, version] : versions_) {
      const int64_t now = inputs_[i].tensor().data_version();
      if (now != version) {
        ThrowError("grad: argument '", op_.schema().args[i].name, "' of '", op_.name(),
                   "', which its backward needs, was modified by an in-place operation after ",
                   "'", op_.name(), "' ran (its version went from ", version, " to ", now,
                   "); clone it before modifying it");
      }
    }
    return ApplyTo(inputs_, outputs_, std::move(g));
  }

 private:
  TensorList ApplyTo(const ValueList& inputs, const ValueList& outputs, TensorList g) const {
    g.resize(static_cast<size_t>(num_inputs()));
    size_t slot = 0;
    for (const Value& v : outputs) {
      if (v.is_tensor_list()) {
        for (const Tensor& t : v.tensor_list()) {
          if (!g[slot].defined()) g[slot] = zeros_like(t);
          ++slot;
        }
        continue;
      }
      if (!g[slot].defined() && v.is_tensor()) g[slot] = zeros_like(v.tensor());
      ++slot;
    }
    // An empty needs_grad means "all" (the common case: every input carries a gradient),
    // which spares building the mask.
    absl::InlinedVector<bool, 6> needs;
    const autograd::EdgeList& edges = next_edges();
    if (!std::all_of(edges.begin(), edges.end(), [](const auto& e) { return e.valid(); })) {
      for (const autograd::Edge& e : edges) needs.push_back(e.valid());
    }
    TensorList result =
        derivatives_.vjp(autograd::VjpContext{op_, inputs, outputs, std::move(needs)}, g);
    if (result.size() != next_edges().size()) {
      ThrowError("grad: the derivative formula of '", op_.name(), "' returned ", result.size(),
                 " gradients for ", next_edges().size(), " tensor inputs");
    }
    return result;
  }

  const Operator& op_;
  const autograd::OpDerivatives& derivatives_;  // the registry's entry: lives forever
  ValueList inputs_;
  ValueList outputs_;
  // Inline: one allocation fewer per recorded op (most ops save one or two tensors).
  absl::InlinedVector<std::pair<size_t, int64_t>, 2> versions_;  // (input index, version)
  absl::InlinedVector<std::pair<size_t, int64_t>, 1> output_versions_;  // likewise, outputs
  std::shared_ptr<RematRecord> remat_;  // set: the values come from the record's replay
  int remat_entry_;
  bool applied_ = false;   // Apply ran (a rematerialized node then told its record)
  bool released_ = false;  // ReleaseSaved ran: inputs_ and outputs_ are gone
};

}  // namespace

void CheckHistoryCurrent(const GradWrapperImpl& w, absl::string_view user) {
  if (!w.requires_grad() || !w.is_stale()) return;
  ThrowError("grad: '", user, "' got a tensor of shape ", ShapeToString(w.value().sizes()),
             " whose value was modified in place through a view or another alias ",
             "after its gradient history was recorded at level ", w.level(),
             "; in-place ops on views of tensors that carry a gradient are not ",
             "supported, clone the view first or differentiate ft::functionalize(f)");
}

// NOTE: [In-place under grad]
// An in-place op whose `self` is a wrapper of this level writes the value one level down in
// place and then rebases the wrapper's history: a new node of the op (its vjp formula is the
// out-of-place op's, over the value before the write, cloned first when the formula reads
// it) takes the wrapper's old edge as its `self` edge, and the wrapper now points at it.
// Other wrappers sharing the storage (views) keep their old history, so their value and
// history disagree: NOTE: [Stale history] turns their next use into an error instead of a
// silently wrong gradient. Refused with an ft::Error, as in functorch:
//   - a gradient-carrying value written into a tensor that is not a wrapper of this level
//     (functorch's "captured Tensor": the level cannot give that object a history);
//   - an in-place write into an input being differentiated, or a view of one: it would
//     modify the caller's tensor (PyTorch refuses leaves that require grad and their views).
uint64_t GradInterpreter::RouteNamedAxes(const Operator& op, const ValueList& args,
                                         absl::Span<const Tensor* const> passed,
                                         autograd::EdgeList& edges) {
  if (objective_ == nullptr) return 0;
  const int axis_arg = op.schema().axis_arg;
  const int64_t axis_id = axis_arg >= 0 ? args[static_cast<size_t>(axis_arg)].to_int() : -1;
  return RouteAcrossNamedAxes(level(), objective_, passed, edges, axis_id,
                              op.schema().makes_invariant);
}

void GradInterpreter::KeepVarying(const Operator& op, const ValueList& args,
                                  ValueList& outputs) {
  absl::InlinedVector<const Tensor*, 4> passed;
  MapTensorArgs(args, [&](const Tensor& t) {
    passed.push_back(&t);
    return Tensor();
  });
  autograd::EdgeList no_edges;
  const uint64_t varying = RouteNamedAxes(op, args, passed, no_edges);
  if ((varying & objective_->process_axes) == 0) return;
  for (Value& v : outputs) {
    if (v.is_tensor() && v.tensor().defined()) {
      v = Value(MakeGradWrapper(v.tensor(), level(), alive_flag(), autograd::Edge{}, varying));
    } else if (v.is_tensor_list()) {
      for (Tensor& t : v.mutable_tensor_list()) {
        if (t.defined()) t = MakeGradWrapper(t, level(), alive_flag(), autograd::Edge{}, varying);
      }
    }
  }
}

ValueList GradInterpreter::Process(const Operator& op, ValueList& args) {
  // Unwrap this level: values one level down, and where each input's gradient goes.
  autograd::EdgeList edges;
  bool tracked = false;
  // The inputs as passed, for the named-axis bookkeeping (only kept when axes are named).
  absl::InlinedVector<const Tensor*, 4> passed;
  auto unwrap = [&](const Tensor& t) {
    if (objective_ != nullptr) passed.push_back(&t);
    if (const GradWrapperImpl* w = MaybeGradWrapperAt(t, level())) {
      CheckHistoryCurrent(*w, op.name());
      edges.push_back(w->grad_edge());
      tracked = tracked || w->requires_grad();
      return w->value();
    }
    edges.emplace_back();
    return t;
  };
  ValueList inner = MapTensorArgs(args, unwrap);
  // In a RematScope every op is recorded for the replay, tracked or not (NOTE:
  // [Rematerialization]).
  const int remat_entry = remat_ != nullptr ? remat_->Record(op, inner) : -1;
  // Ops run with grad mode off are not recorded (NOTE in autograd/grad_mode.h).
  tracked = tracked && GradMode::is_enabled();
  // A level entered with grad mode off passes its ops down with grad mode off.
  auto lower_and_run = [&](ValueList& values) {
    LowerGuard lower(this);
    std::optional<NoGradGuard> no_grad;
    if (!prev_grad_mode_) no_grad.emplace();
    return DispatchBoxed(op, values);
  };
  // One lookup for everything recording needs (formula, node name, flags).
  const autograd::OpDerivatives* derivatives = autograd::FindDerivatives(op);
  const bool nondifferentiable = derivatives != nullptr && derivatives->nondifferentiable;
  auto formula_for = [&]() -> const autograd::OpDerivatives& {
    if (derivatives == nullptr || !derivatives->vjp) {
      ThrowError("grad: no derivative formula for '", op.name(), "' (level ", level(), ")");
    }
    return *derivatives;
  };
  if (const std::optional<int> mutated = op.schema().mutated_arg) {
    const size_t m = static_cast<size_t>(*mutated);
    const Tensor& self = args[m].tensor();
    GradWrapperImpl* w = MaybeGradWrapperAt(self, level());
    ValueList out;
    out.push_back(args[m]);  // the very object that was passed
    if (!tracked || nondifferentiable) {
      ValueList written = lower_and_run(inner);
      if (remat_ != nullptr) remat_->Produced(remat_entry, written);
      if (w != nullptr) w->set_history(w->grad_edge());  // a constant change: no new history
      return out;
    }
    if (w == nullptr) {
      ThrowError("grad: in-place op '", op.name(), "' would write a value that carries a ",
                 "gradient at level ", level(), " into a tensor that is not tracked by this ",
                 "transform (its argument 'self' of shape ", ShapeToString(self.sizes()),
                 " was captured from outside the function, or made by a factory inside it), ",
                 "so it would mutate a captured Tensor. This is not supported; pass the tensor ",
                 "to the function as an input, use the out-of-place op, or differentiate "
                 "ft::functionalize(f), which makes the write out of place");
    }
    if (AliasesInput(w->value())) {
      ThrowError("grad: in-place op '", op.name(), "' on an input being differentiated or a ",
                 "view of one (shape ", ShapeToString(self.sizes()), ", level ", level(),
                 ") would modify the caller's tensor; clone it first (y = clone(x)) or use the ",
                 "out-of-place op");
    }
    const autograd::OpDerivatives& d = formula_for();
    const uint64_t varying = RouteNamedAxes(op, args, passed, edges);
    ValueList saved = inner;
    if (d.reads_input_values) {
      LowerGuard lower(this);
      saved[m] = Value(clone(w->value()));
    }
    ValueList outputs = lower_and_run(inner);
    if (remat_ != nullptr) remat_->Produced(remat_entry, outputs);
    auto node = std::allocate_shared<OpNode>(internal::PoolAllocator<OpNode>(), std::move(edges),
                                             1, op, d, std::move(saved), std::move(outputs));
    w->set_history(autograd::Edge{node, 0});
    w->set_varying(varying);
    return out;
  }
  ValueList outputs = lower_and_run(inner);
  if (remat_ != nullptr) remat_->Produced(remat_entry, outputs);
  if (!tracked || nondifferentiable) {
    // Constants here; one computed from a process's data stays its own (NOTE: [Gradients
    // across named axes]).
    if (objective_ != nullptr && objective_->process_axes != 0) KeepVarying(op, args, outputs);
    return outputs;
  }
  const autograd::OpDerivatives& d = formula_for();
  const uint64_t varying = RouteNamedAxes(op, args, passed, edges);
  const int num_slots = GradientSlots(outputs);
  std::shared_ptr<autograd::Node> node;
  if (remat_ != nullptr) {
    node = std::allocate_shared<OpNode>(internal::PoolAllocator<OpNode>(), std::move(edges),
                                        num_slots, op, d, ValueList(), ValueList(), remat_,
                                        remat_entry);
  } else {
    node = std::allocate_shared<OpNode>(internal::PoolAllocator<OpNode>(), std::move(edges),
                                        num_slots, op, d, std::move(inner), outputs);
  }
  int slot = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].is_tensor_list()) {
      TensorList wrapped;
      for (const Tensor& t : outputs[i].tensor_list()) {
        wrapped.push_back(IsDifferentiable(t.dtype())
                              ? MakeGradWrapper(t, level(), alive_flag(),
                                                autograd::Edge{node, slot}, varying)
                              : t);
        ++slot;
      }
      outputs[i] = Value(std::move(wrapped));
      continue;
    }
    const int this_slot = slot++;
    if (!outputs[i].is_tensor() || !IsDifferentiable(outputs[i].tensor().dtype())) continue;
    Tensor& t = outputs[i].mutable_tensor();  // the node holds its own copy
    t = MakeGradWrapper(std::move(t), level(), alive_flag(), autograd::Edge{node, this_slot},
                        varying);
  }
  return outputs;
}

}  // namespace ft

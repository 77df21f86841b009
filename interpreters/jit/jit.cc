#include "interpreters/jit/jit.h"

#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "autograd/grad_mode.h"
#include "dispatch/dispatch.h"
#include "dispatch/interpreter.h"

namespace ft {

namespace {

// A signature: everything about the inputs (and the modes) that a trace's choices of kernels,
// shapes and layouts can depend on, flattened into integers.
using Signature = absl::InlinedVector<int64_t, 32>;

// VisitSignature feeds each integer of the signature of `inputs` to `sink`; returns false
// when the call must run eagerly instead (see jit.h, Semantics).
template <typename Sink>
bool VisitSignature(const TensorList& inputs, Sink&& sink) {
  if (!LayerStack::empty() || CurrentBaseCallObserver() != nullptr ||
      internal::tls_value_read_observer != nullptr) {
    return false;
  }
  sink(GradMode::is_enabled());
  sink(FwdGradMode::is_enabled());
  sink(static_cast<int64_t>(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined() || !t.is_dense()) return false;
    int64_t shares_with = -1;
    for (size_t j = 0; j < i; ++j) {
      if (inputs[j].storage().is_same(t.storage())) {
        shares_with = static_cast<int64_t>(j);
        break;
      }
    }
    sink(static_cast<int64_t>(t.dtype()));
    sink(t.dim());
    for (int64_t d : t.sizes()) sink(d);
    for (int64_t d : t.strides()) sink(d);
    sink(t.storage_offset());
    sink(shares_with);
  }
  return true;
}

bool MakeSignature(const TensorList& inputs, Signature& sig) {
  return VisitSignature(inputs, [&sig](int64_t v) { sig.push_back(v); });
}

// Matches: whether `inputs` have signature `sig`, without building theirs.
bool Matches(const TensorList& inputs, const Signature& sig) {
  size_t i = 0;
  bool same = true;
  const bool traceable = VisitSignature(inputs, [&](int64_t v) {
    same = same && i < sig.size() && sig[i] == v;
    ++i;
  });
  return traceable && same && i == sig.size();
}

struct Entry {
  std::shared_ptr<const Program> program;  // null: untraceable
  std::string reason;
};

}  // namespace

struct JitFunction::State {
  Fn f;
  TraceOptions options;
  mutable std::mutex mu;
  absl::flat_hash_map<Signature, std::shared_ptr<const Entry>> cache;
  // The entry of the last call, tried before hashing (a loop calls with one signature).
  Signature last_signature;
  std::shared_ptr<const Entry> last_entry;
  JitStats stats;

  std::shared_ptr<const Entry> Find(const Signature& sig) {
    if (last_entry != nullptr && sig == last_signature) return last_entry;
    auto it = cache.find(sig);
    if (it == cache.end()) return nullptr;
    last_signature = sig;
    last_entry = it->second;
    return it->second;
  }
};

JitFunction::JitFunction(Fn f, TraceOptions options) : state_(std::make_shared<State>()) {
  state_->f = std::move(f);
  state_->options = options;
}

TensorList JitFunction::operator()(const TensorList& inputs) const {
  State& s = *state_;
  {
    // The common case: the signature of the previous call.
    std::unique_lock<std::mutex> lock(s.mu);
    if (s.last_entry != nullptr && s.last_entry->program != nullptr &&
        Matches(inputs, s.last_signature)) {
      std::shared_ptr<const Entry> entry = s.last_entry;
      ++s.stats.replays;
      lock.unlock();
      return entry->program->Run(inputs);
    }
  }
  Signature sig;
  if (!MakeSignature(inputs, sig)) {
    {
      std::lock_guard<std::mutex> lock(s.mu);
      ++s.stats.eager_calls;
    }
    return s.f(inputs);
  }
  std::shared_ptr<const Entry> entry;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    entry = s.Find(sig);
    if (entry != nullptr) ++(entry->program ? s.stats.replays : s.stats.eager_calls);
  }
  if (entry != nullptr) return entry->program ? entry->program->Run(inputs) : s.f(inputs);

  TraceResult traced = Trace(s.f, inputs, s.options);
  auto fresh = std::make_shared<Entry>(Entry{std::move(traced.program), std::move(traced.reason)});
  {
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.stats.traces;
    ++(fresh->program ? s.stats.programs : s.stats.untraceable);
    s.cache[sig] = fresh;
    s.last_signature = sig;
    s.last_entry = fresh;
  }
  return std::move(traced.outputs);
}

JitStats JitFunction::stats() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->stats;
}

std::shared_ptr<const Program> JitFunction::program(const TensorList& inputs) const {
  Signature sig;
  if (!MakeSignature(inputs, sig)) return nullptr;
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->cache.find(sig);
  return it == state_->cache.end() ? nullptr : it->second->program;
}

std::string JitFunction::untraceable_reason(const TensorList& inputs) const {
  Signature sig;
  if (!MakeSignature(inputs, sig)) return "";
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->cache.find(sig);
  return it == state_->cache.end() ? "" : it->second->reason;
}

JitFunction jit(JitFunction::Fn f, TraceOptions options) {
  return JitFunction(std::move(f), options);
}

}  // namespace ft

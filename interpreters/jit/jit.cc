#include "interpreters/jit/jit.h"

#include <atomic>
#include <mutex>
#include <optional>
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
bool VisitSignature(absl::Span<const Tensor> inputs, Sink&& sink) {
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

bool MakeSignature(absl::Span<const Tensor> inputs, Signature& sig) {
  return VisitSignature(inputs, [&sig](int64_t v) { sig.push_back(v); });
}

// Matches: whether `inputs` have signature `sig`, without building theirs.
bool Matches(absl::Span<const Tensor> inputs, const Signature& sig) {
  size_t i = 0;
  bool same = true;
  const bool traceable = VisitSignature(inputs, [&](int64_t v) {
    same = same && i < sig.size() && sig[i] == v;
    ++i;
  });
  return traceable && same && i == sig.size();
}

// An entry: a signature's programs, one per path through its control-flow guards (NOTE:
// [Guards] in trace.h; one program without guards), or none (untraceable: reason).
struct Entry {
  Signature signature;
  std::vector<std::shared_ptr<const Program>> programs;
  std::string reason;
  bool traceable() const { return !programs.empty(); }
};

// A signature keeps at most this many guarded paths; a call on another path runs eagerly.
constexpr size_t kMaxPaths = 16;

// TryPrograms: the outputs of the first program whose guards hold, or nothing.
std::optional<TensorList> TryPrograms(const Entry& entry, absl::Span<const Tensor> inputs) {
  for (const auto& program : entry.programs) {
    if (std::optional<TensorList> out = program->TryRun(inputs)) return out;
  }
  return std::nullopt;
}

}  // namespace

struct JitFunction::State {
  Fn f;
  TraceOptions options;
  std::mutex mu;  // guards `cache` and `retired`
  absl::flat_hash_map<Signature, std::shared_ptr<const Entry>> cache;
  // Entries a new path replaced: kept, so pointers to entries stay valid.
  std::vector<std::shared_ptr<const Entry>> retired;
  // The last call's entry, tried first without the lock (a loop calls with one signature).
  std::atomic<const Entry*> last{nullptr};
  std::atomic<int64_t> traces{0}, replays{0}, eager_calls{0}, programs{0}, untraceable{0},
      raced_traces{0};

  const Entry* Find(const Signature& sig) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(sig);
    return it == cache.end() ? nullptr : it->second.get();
  }
};

JitFunction::JitFunction(Fn f, TraceOptions options) : state_(std::make_shared<State>()) {
  state_->f = std::move(f);
  state_->options = options;
}

namespace {
// RunEager: f on the inputs, without tracing; its outputs are checked as a trace's are.
TensorList RunEager(const JitFunction::Fn& f, absl::Span<const Tensor> inputs) {
  TensorList outputs = f(TensorList(inputs.begin(), inputs.end()));
  CheckDefined("jit", "f's output", outputs);
  return outputs;
}
}  // namespace

TensorList JitFunction::operator()(absl::Span<const Tensor> inputs) const {
  CheckDefined("jit", "argument", inputs);
  State& s = *state_;
  const Entry* last = s.last.load(std::memory_order_acquire);
  const Entry* tried = nullptr;  // an entry whose programs were tried already
  if (last != nullptr && last->traceable() && Matches(inputs, last->signature)) {
    if (std::optional<TensorList> out = TryPrograms(*last, inputs)) {
      s.replays.fetch_add(1, std::memory_order_relaxed);
      return *std::move(out);
    }
    tried = last;
  }
  Signature sig;
  if (!MakeSignature(inputs, sig)) {
    s.eager_calls.fetch_add(1, std::memory_order_relaxed);
    return RunEager(s.f, inputs);
  }
  const Entry* known = s.Find(sig);
  if (known != nullptr) {
    s.last.store(known, std::memory_order_release);
    if (!known->traceable() || known->programs.size() >= kMaxPaths) {
      if (known->traceable() && known != tried) {
        if (std::optional<TensorList> out = TryPrograms(*known, inputs)) {
          s.replays.fetch_add(1, std::memory_order_relaxed);
          return *std::move(out);
        }
      }
      s.eager_calls.fetch_add(1, std::memory_order_relaxed);
      return RunEager(s.f, inputs);
    }
    if (known != tried) {
      if (std::optional<TensorList> out = TryPrograms(*known, inputs)) {
        s.replays.fetch_add(1, std::memory_order_relaxed);
        return *std::move(out);
      }
    }
    // A path of the control flow no program of this signature has taken: trace it.
  }

  TraceResult traced = Trace(s.f, TensorList(inputs.begin(), inputs.end()), s.options);
  const Entry* entry;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.cache.find(sig);
    const Entry* current = it == s.cache.end() ? nullptr : it->second.get();
    if (current != known) {
      // Another thread added this signature or a path meanwhile: its entry stays.
      s.raced_traces.fetch_add(1, std::memory_order_relaxed);
      entry = current;
    } else if (current == nullptr) {
      Entry fresh{sig, {}, std::move(traced.reason)};
      if (traced.program != nullptr) fresh.programs.push_back(std::move(traced.program));
      auto made = std::make_shared<const Entry>(std::move(fresh));
      entry = made.get();
      s.cache.emplace(std::move(sig), std::move(made));
      s.traces.fetch_add(1, std::memory_order_relaxed);
      (entry->traceable() ? s.programs : s.untraceable).fetch_add(1, std::memory_order_relaxed);
    } else {
      // A new path of a traced signature: its program joins the others (an untraceable
      // path leaves the entry as it was; calls on that path run eagerly after the tries).
      s.traces.fetch_add(1, std::memory_order_relaxed);
      entry = current;
      if (traced.program != nullptr) {
        Entry grown = *current;
        grown.programs.push_back(std::move(traced.program));
        auto made = std::make_shared<const Entry>(std::move(grown));
        s.retired.push_back(std::move(it->second));
        it->second = std::move(made);
        entry = it->second.get();
        s.programs.fetch_add(1, std::memory_order_relaxed);
      } else {
        s.untraceable.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  s.last.store(entry, std::memory_order_release);
  return std::move(traced.outputs);
}

JitStats JitFunction::stats() const {
  const State& s = *state_;
  JitStats r;
  r.traces = s.traces.load(std::memory_order_relaxed);
  r.replays = s.replays.load(std::memory_order_relaxed);
  r.eager_calls = s.eager_calls.load(std::memory_order_relaxed);
  r.programs = s.programs.load(std::memory_order_relaxed);
  r.untraceable = s.untraceable.load(std::memory_order_relaxed);
  r.raced_traces = s.raced_traces.load(std::memory_order_relaxed);
  return r;
}

std::shared_ptr<const Program> JitFunction::program(absl::Span<const Tensor> inputs) const {
  Signature sig;
  if (!MakeSignature(inputs, sig)) return nullptr;
  const Entry* entry = state_->Find(sig);
  return entry == nullptr || !entry->traceable() ? nullptr : entry->programs.front();
}

int JitFunction::num_paths(absl::Span<const Tensor> inputs) const {
  Signature sig;
  if (!MakeSignature(inputs, sig)) return 0;
  const Entry* entry = state_->Find(sig);
  return entry == nullptr ? 0 : static_cast<int>(entry->programs.size());
}

std::string JitFunction::untraceable_reason(absl::Span<const Tensor> inputs) const {
  Signature sig;
  if (!MakeSignature(inputs, sig)) return "";
  const Entry* entry = state_->Find(sig);
  return entry == nullptr ? "" : entry->reason;
}

JitFunction jit(JitFunction::Fn f, TraceOptions options) {
  return JitFunction(std::move(f), options);
}

}  // namespace ft

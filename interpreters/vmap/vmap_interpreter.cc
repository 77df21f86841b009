#include "interpreters/vmap/vmap_interpreter.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>

#include "absl/strings/str_cat.h"
#include "dispatch/dispatch.h"
#include "dispatch/named_axes.h"
#include "interpreters/vmap/batched_tensor.h"
#include "ops/ops.h"

namespace ft {

const char* RandomnessName(Randomness r) {
  switch (r) {
    case Randomness::kError:
      return "error";
    case Randomness::kSame:
      return "same";
    case Randomness::kDifferent:
      return "different";
  }
  return "?";
}

Randomness ParseRandomness(const std::string& name) {
  if (name == "error") return Randomness::kError;
  if (name == "same") return Randomness::kSame;
  if (name == "different") return Randomness::kDifferent;
  ThrowError("vmap: only allowed values for randomness are 'error', 'different', or 'same'. ",
             "Got '", name, "'");
}

VmapInterpreter::VmapInterpreter(int64_t batch_size, Randomness randomness)
    : VmapInterpreter(LayerStack::NewLevel(), batch_size, randomness, 0, batch_size,
                      std::make_shared<RandomDrawLog>()) {}

VmapInterpreter::VmapInterpreter(int64_t level, int64_t batch_size, Randomness randomness,
                                 int64_t chunk_start, int64_t total_batch_size,
                                 std::shared_ptr<RandomDrawLog> draws)
    : Interpreter(TransformType::kVmap, level),
      batch_size_(batch_size),
      randomness_(randomness),
      chunk_start_(chunk_start),
      total_batch_size_(total_batch_size),
      draws_(std::move(draws)) {}

std::string VmapInterpreter::DebugString() const {
  return absl::StrCat("Vmap(level=", level(), ", batch_size=", batch_size_,
                      ", randomness=", RandomnessName(randomness_),
                      axis_name_id_ >= 0 ? absl::StrCat(", axis_name='",
                                                        AxisNameString(axis_name_id_), "'")
                                         : std::string(),
                      ")");
}

namespace {

bool AnyBatchedAt(const ValueList& args, int64_t level) {
  for (const Value& v : args) {
    if (v.is_tensor()) {
      if (MaybeBatchedAt(v.tensor(), level)) return true;
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.tensor_list()) {
        if (MaybeBatchedAt(t, level)) return true;
      }
    }
  }
  return false;
}

}  // namespace

ValueList VmapInterpreter::Process(const Operator& op, ValueList& args) {
  const bool random = op.schema().random;
  if (random && randomness_ == Randomness::kError) {
    ThrowError("vmap: called random operation '", op.name(),
               "' while in randomness error mode (level ", level(),
               "). Please either use the 'same' or 'different' randomness flags on vmap or "
               "perform the randomness operation out of vmap");
  }
  // A collective (OpSchema::axis_arg) always reaches its rule: over this level's own axis
  // it reduces or gathers across the examples even when its input is not batched.
  if (!random && op.schema().axis_arg < 0 && !AnyBatchedAt(args, level())) {
    LowerGuard lower(this);
    return DispatchBoxed(op, args);
  }
  const TransformRule* rule = op.rule(TransformType::kVmap);
  if (rule == nullptr) return LoopFallback(op, args);
  return (*rule)(*this, op, args);
}

namespace {
std::atomic<VmapFallbackMode> g_fallback_mode{VmapFallbackMode::kWarn};
}  // namespace

void SetVmapFallbackMode(VmapFallbackMode mode) { g_fallback_mode.store(mode); }
VmapFallbackMode GetVmapFallbackMode() { return g_fallback_mode.load(); }

ValueList VmapInterpreter::LoopFallback(const Operator& op, ValueList& args) {
  if (OpRegistry::Global().is_builtin(op)) {
    ThrowError("vmap: no batching rule for the built-in op '", op.name(), "' (level ", level(),
               "); this is a bug in ft");
  }
  if (GetVmapFallbackMode() == VmapFallbackMode::kError) {
    ThrowError("vmap: no batching rule for '", op.name(), "' (level ", level(),
               ") and the loop fallback is disabled (SetVmapFallbackMode(kError)); register a ",
               "rule with SetBatchRule");
  }
  {
    static std::mutex mu;
    static std::set<std::string>* warned = new std::set<std::string>();
    std::lock_guard<std::mutex> lock(mu);
    if (warned->insert(op.name()).second) {
      std::fprintf(stderr,
                   "ft warning: vmap has no batching rule for '%s'; running it once per example "
                   "(slow). Register one with SetBatchRule.\n",
                   op.name().c_str());
    }
  }
  if (batch_size_ == 0) {
    ThrowError("vmap: the loop fallback for '", op.name(),
               "' cannot run a batch of size 0; register a batching rule");
  }
  // Unwrap this level's batch dims.
  std::vector<BDim> bdims(args.size());
  ValueList physical;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_tensor_list()) {
      for (const Tensor& t : args[i].tensor_list()) {
        if (MaybeBatchedAt(t, level())) {
          ThrowError("vmap: the loop fallback for '", op.name(),
                     "' does not support batched tensor lists; register a batching rule");
        }
      }
    }
    if (args[i].is_tensor()) {
      auto [value, bdim] = UnwrapBatched(args[i].tensor(), level());
      physical.emplace_back(std::move(value));
      bdims[i] = bdim;
    } else {
      physical.push_back(args[i]);
    }
  }
  std::vector<TensorList> per_output;
  {
    LowerGuard lower(this);
    for (int64_t b = 0; b < batch_size_; ++b) {
      ValueList example = physical;
      for (size_t i = 0; i < args.size(); ++i) {
        if (bdims[i]) example[i] = Value(select(physical[i].tensor(), *bdims[i], b));
      }
      ValueList out = DispatchBoxed(op, example);
      if (per_output.empty()) per_output.resize(out.size());
      for (size_t o = 0; o < out.size(); ++o) {
        if (!out[o].is_tensor()) {
          ThrowError("vmap: the loop fallback for '", op.name(),
                     "' supports tensor outputs only; register a batching rule");
        }
        per_output[o].push_back(out[o].tensor());
      }
    }
  }
  ValueList result;
  for (TensorList& outs : per_output) {
    Tensor stacked;
    {
      LowerGuard lower(this);
      stacked = stack(outs, 0);
    }
    result.emplace_back(MakeBatched(std::move(stacked), 0, level(), alive_flag()));
  }
  return result;
}

void SetBatchRule(const Operator& op, BatchRule rule) {
  const_cast<Operator&>(op).SetRule(
      TransformType::kVmap,
      [rule = std::move(rule)](Interpreter& interpreter, const Operator& op,
                               ValueList& args) -> ValueList {
        auto& vmap = static_cast<VmapInterpreter&>(interpreter);
        const int64_t level = vmap.level();
        BatchedArgs batched;
        batched.values.reserve(args.size());
        for (size_t i = 0; i < args.size(); ++i) {
          const Value& v = args[i];
          if (v.is_tensor()) {
            auto [value, bdim] = UnwrapBatched(v.tensor(), level);
            batched.values.emplace_back(std::move(value));
            batched.bdims.push_back(bdim);
          } else if (v.is_tensor_list()) {
            TensorList values;
            std::vector<BDim> bdims;
            for (const Tensor& t : v.tensor_list()) {
              auto [value, bdim] = UnwrapBatched(t, level);
              values.push_back(std::move(value));
              bdims.push_back(bdim);
            }
            batched.values.emplace_back(std::move(values));
            batched.bdims.push_back(std::nullopt);
            batched.list_bdims[i] = std::move(bdims);
          } else {
            // A copy: callers (e.g. the grad interpreter, which saves its arguments for the
            // backward) may read `args` again after dispatching them.
            batched.values.push_back(v);
            batched.bdims.push_back(std::nullopt);
          }
        }
        const VmapContext ctx{op,
                              level,
                              vmap.batch_size(),
                              vmap.randomness(),
                              vmap.chunk_start(),
                              vmap.total_batch_size(),
                              vmap.draws()};
        BatchedResult result = [&] {
          LowerGuard lower(&vmap);
          return rule(ctx, batched);
        }();
        FT_CHECK(result.values.size() == result.bdims.size());
        const std::optional<int> mutated = op.schema().mutated_arg;
        // Wrap the results in place (no second list).
        ValueList& out = result.values;
        for (size_t i = 0; i < out.size(); ++i) {
          Value& v = out[i];
          if (i == 0 && mutated) {
            // In-place: the caller gets back the very object it passed.
            v = args[*mutated];
          } else if (v.is_tensor() && result.bdims[i]) {
            v = Value(MakeBatched(std::move(v.mutable_tensor()), *result.bdims[i], level,
                                  vmap.alive_flag()));
          } else if (v.is_tensor_list() && result.bdims[i]) {
            for (Tensor& t : v.mutable_tensor_list()) {
              t = MakeBatched(std::move(t), *result.bdims[i], level, vmap.alive_flag());
            }
          }
        }
        return std::move(out);
      });
}

void SetBoxedBatchRule(const Operator& op, BoxedBatchRule rule) {
  const_cast<Operator&>(op).SetRule(
      TransformType::kVmap,
      [rule](Interpreter& interpreter, const Operator& op, ValueList& args) -> ValueList {
        return rule(static_cast<VmapInterpreter&>(interpreter), op, args);
      });
}

}  // namespace ft

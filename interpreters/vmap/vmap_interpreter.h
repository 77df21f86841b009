// ft/interpreters/vmap/vmap_interpreter.h
//
// VmapInterpreter: the interpreter ft::vmap pushes (one per vmap call, at a fresh level), and
// the batching-rule interface every op's vmap rule is written against.
//
// How an op is processed at a vmap level (see docs/architecture.md, "The walk of one op"):
//   1. Random ops obey the randomness setting: kError throws.
//   2. If no tensor argument is batched at this level (and the op is not random), the
//      interpreter lowers at once: an idle level costs one scan of the arguments.
//   3. Otherwise the op's rule (its TransformType::kVmap slot, filled by SetBatchRule) runs:
//      the batched arguments are unwrapped into physical values plus batch dims (BatchedArgs),
//      the interpreter is lowered, the BatchRule computes physical results and their batch
//      dims, and the results are wrapped at this level. An in-place op returns the very
//      argument object it mutated.
//   4. A built-in op without a rule is a bug (ft::Error; the completeness test prevents it);
//      an op a user registered without a rule runs through the loop fallback
//      (NOTE: [Loop fallback]).
//
// A BatchRule is a function of (physical value, optional bdim) pairs: it never sees a
// BatchedTensor, moves or expands batch dims, and calls the op once on the whole batch.
//
// Example (the rule of an elementwise unary op):
//   SetBatchRule(OpFor<&kernels::sin>(), [](const VmapContext& ctx, BatchedArgs& a) {
//     return BatchedResult{{Value(ft::sin(a.tensor(0)))}, {a.bdim(0)}};
//   });
#ifndef FT_INTERPRETERS_VMAP_VMAP_INTERPRETER_H_
#define FT_INTERPRETERS_VMAP_VMAP_INTERPRETER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "dispatch/interpreter.h"
#include "dispatch/operator.h"
#include "dispatch/value.h"
#include "tensor/generator.h"

namespace ft {

// Randomness: what a random op does under vmap (torch.func.vmap's `randomness`).
enum class Randomness {
  kError,      // a random op throws
  kSame,       // one sample, shared by every batch element
  kDifferent,  // independent samples per batch element
};

const char* RandomnessName(Randomness r);
// ParseRandomness accepts "error", "same", "different"; throws ft::Error otherwise.
Randomness ParseRandomness(const std::string& name);

using BDim = std::optional<int64_t>;

// NOTE: [Randomness and chunks]
// With randomness kDifferent, example b of a random op's draw must get the same numbers
// whether vmap runs the batch at once or in chunks. A batched draw therefore claims the
// counters of the WHOLE batch (total_batch_size * per_example) from the generator, and
// example b uses counters first + b * per_example + i. A chunked vmap runs f once per chunk;
// the draws of the first chunk are logged (generator, first counter, per-example count) and
// every later chunk replays the log in order, using its slice of the same counters, so the
// generator ends where an unchunked run leaves it. f must make the same sequence of random
// calls for every chunk (an ft::Error otherwise: a different generator or size, one call
// more, or one fewer). See BatchedDrawOffset (batching_util.h).
struct RandomDrawLog {
  struct Draw {
    Generator* generator;
    uint64_t first;
    int64_t per_example;
  };
  std::vector<Draw> draws;
  size_t next = 0;         // the next draw to replay; reset at the start of every chunk
  bool recording = true;   // the first chunk (or an unchunked run): draws are claimed, logged
};

class VmapInterpreter : public Interpreter {
 public:
  // A vmap over `batch_size` examples. For a chunk of a larger batch, `chunk_start` is the
  // index of its first example in the whole batch of `total_batch_size`, and `draws` is the
  // log shared by the chunks (NOTE: [Randomness and chunks]); unchunked runs own their log.
  VmapInterpreter(int64_t batch_size, Randomness randomness);
  // `level` must come from LayerStack::NewLevel() (ft::vmap takes it before validating its
  // arguments, so that its error messages can name it).
  VmapInterpreter(int64_t level, int64_t batch_size, Randomness randomness, int64_t chunk_start,
                  int64_t total_batch_size, std::shared_ptr<RandomDrawLog> draws);

  int64_t batch_size() const { return batch_size_; }
  Randomness randomness() const { return randomness_; }
  int64_t chunk_start() const { return chunk_start_; }
  int64_t total_batch_size() const { return total_batch_size_; }
  RandomDrawLog* draws() const { return draws_.get(); }
  // axis_name_id: the interned name of this vmap's axis (dispatch/named_axes.h), or -1.
  int64_t axis_name_id() const { return axis_name_id_; }
  void set_axis_name_id(int64_t id) { axis_name_id_ = id; }

  ValueList Process(const Operator& op, ValueList& args) override;
  std::string DebugString() const override;

 private:
  // NOTE: [Loop fallback] below.
  ValueList LoopFallback(const Operator& op, ValueList& args);

  int64_t batch_size_;
  Randomness randomness_;
  int64_t chunk_start_;
  int64_t total_batch_size_;
  std::shared_ptr<RandomDrawLog> draws_;
  int64_t axis_name_id_ = -1;
};

// VmapContext: what a rule knows about the level it runs for.
struct VmapContext {
  const Operator& op;
  int64_t level;
  int64_t batch_size;
  Randomness randomness;
  int64_t chunk_start;        // first example of this chunk in the whole batch (0 unchunked)
  int64_t total_batch_size;   // the whole batch (== batch_size unchunked)
  RandomDrawLog* draws;       // never null
};

// BatchedArgs: an op's arguments with this level's batch dims taken out. values[i] is the
// physical value (for a tensor batched at this level: its value, whose dim bdims[i] is the
// batch dim); non-tensor values pass through with bdims[i] == nullopt. For a TensorList
// argument, list_bdims[i] holds one bdim per element.
struct BatchedArgs {
  ValueList values;
  absl::InlinedVector<BDim, 4> bdims;
  std::map<size_t, std::vector<BDim>> list_bdims;

  const Tensor& tensor(size_t i) const { return values[i].tensor(); }
  BDim bdim(size_t i) const { return bdims[i]; }
};

// BatchedResult: a rule's physical outputs and the batch dim of each (nullopt: the output
// does not vary over the batch). A TensorList output has one bdim for all its elements.
struct BatchedResult {
  ValueList values;
  absl::InlinedVector<BDim, 2> bdims;
};

using BatchRule = std::function<BatchedResult(const VmapContext& ctx, BatchedArgs& args)>;

// NOTE: [Loop fallback]
// Built-in ops all have real batching rules (a completeness test checks it). An op a user
// registered without a vmap rule runs through a fallback instead: once per example (each
// batched argument selected at its batch dim), outputs stacked at dim 0. It is slow and
// says so: the first use of each op prints a warning to stderr, and
// SetVmapFallbackMode(VmapFallbackMode::kError) turns it into an ft::Error. It supports
// ops whose tensor arguments are single tensors and whose outputs are tensors.
enum class VmapFallbackMode { kWarn, kError };
void SetVmapFallbackMode(VmapFallbackMode mode);
VmapFallbackMode GetVmapFallbackMode();

// SetBatchRule installs `rule` in op's kVmap slot, wrapped with the unwrap / lower / wrap
// steps above.
void SetBatchRule(const Operator& op, BatchRule rule);

// BoxedBatchRule: a rule that takes the op's boxed arguments as they reach this level
// (batched tensors and all) and does the unwrap / lower / wrap steps itself, returning
// results wrapped at this level. It is for rule families so cheap that the generic steps
// (BatchedArgs, BatchedResult, two indirect calls) would cost more than the rule itself: the
// pointwise ops, as functorch's boxed pointwise rule. It must leave `args` as it found them.
using BoxedBatchRule = ValueList (*)(VmapInterpreter& vmap, const Operator& op, ValueList& args);

// SetBoxedBatchRule installs `rule` in op's kVmap slot as it is.
void SetBoxedBatchRule(const Operator& op, BoxedBatchRule rule);

}  // namespace ft

#endif  // FT_INTERPRETERS_VMAP_VMAP_INTERPRETER_H_

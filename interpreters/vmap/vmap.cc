#include "interpreters/vmap/vmap.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dispatch/named_axes.h"
#include "interpreters/vmap/batched_tensor.h"
#include "ops/ops.h"
#include "vmap_rules/register.h"

namespace ft {

std::vector<std::optional<int64_t>> Dims::Expand(size_t n, const char* what,
                                                 int64_t level) const {
  const std::vector<std::optional<int64_t>> computed =
      compute_ ? compute_(n) : std::vector<std::optional<int64_t>>();
  if (broadcast_ && !compute_) return std::vector<std::optional<int64_t>>(n, dims_[0]);
  const std::vector<std::optional<int64_t>>& dims = compute_ ? computed : dims_;
  if (dims.size() != n) {
    ThrowError("vmap: ", what, " has ", dims.size(), " entries but there are ", n,
               what[0] == 'i' ? " arguments" : " outputs",
               "; give one entry per item, or a single int/nullopt for all (vmap level ", level,
               ")");
  }
  return dims;
}

namespace {

const char* ValueKindName(const Value& v) { return ValueTagName(v.tag()); }

// NamedAxis::mapped_at for a vmap axis: whether t, through any wrappers of other levels,
// is batched at `level`.
bool IsBatchedAtLevel(const Tensor& t, int64_t level) {
  for (const Tensor* cur = &t; cur != nullptr && cur->defined();
       cur = cur->impl()->wrapped_value()) {
    if (MaybeBatchedAt(*cur, level) != nullptr) return true;
  }
  return false;
}

// One vmap call on a batch (or a chunk of it): wrap, run f at a fresh level, unwrap.
ValueList RunBatched(const ValueFn& f, const ValueList& args,
                     const std::vector<std::optional<int64_t>>& in_dims, const Dims& out_dims,
                     int64_t level, int64_t batch_size, Randomness randomness,
                     int64_t chunk_start, int64_t total_batch_size,
                     std::shared_ptr<RandomDrawLog> draws, int64_t axis_name_id = -1) {
  draws->next = 0;
  draws->recording = chunk_start == 0;
  VmapInterpreter interp(level, batch_size, randomness, chunk_start, total_batch_size,
                         std::move(draws));
  interp.set_axis_name_id(axis_name_id);
  ValueList outputs;
  {
    InterpreterScope scope(&interp);
    // The axis name is in effect while f runs (dispatch/named_axes.h); inner levels see it.
    std::optional<NamedAxisScope> named;
    if (axis_name_id >= 0) {
      named.emplace(NamedAxis{axis_name_id, level, batch_size, nullptr, &IsBatchedAtLevel});
    }
    ValueList wrapped;
    for (size_t i = 0; i < args.size(); ++i) {
      if (in_dims[i]) {
        wrapped.emplace_back(
            MakeBatched(args[i].tensor(), *in_dims[i], interp.level(), interp.alive_flag()));
      } else {
        wrapped.push_back(args[i]);
      }
    }
    outputs = f(wrapped);
  }
  CheckDefined("vmap", "f's output", outputs);
  const std::vector<std::optional<int64_t>> dims =
      out_dims.Expand(outputs.size(), "out_dims", level);
  ValueList result;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& v = outputs[i];
    const std::optional<int64_t> out_dim = dims[i];
    if (!v.is_tensor()) {
      if (out_dim) {
        ThrowError("vmap: must only return Tensors, got type ", ValueKindName(v), " for output ",
                   i, ". Did you mean to set out_dims= to None for output ", i,
                   "? (vmap level ", level, ")");
      }
      result.push_back(v);
      continue;
    }
    const Tensor& t = v.tensor();
    const BatchedTensorImpl* batched = MaybeBatchedAt(t, interp.level());
    if (!out_dim) {
      if (batched) {
        ThrowError("vmap: can not return a BatchedTensor when out_dim is None (output ", i,
                   " depends on the mapped inputs; vmap level ", level, ")");
      }
      result.push_back(v);
      continue;
    }
    if (batched) {
      const Tensor& value = batched->value();
      const int64_t d = WrapDim("vmap: out_dim", *out_dim, value.dim());
      result.emplace_back(movedim(value, batched->bdim(), d));
    } else {
      // The output does not vary over the batch: broadcast it (a view, no copy).
      const int64_t d = WrapDim("vmap: out_dim", *out_dim, t.dim() + 1);
      Shape sizes(t.sizes().begin(), t.sizes().end());
      sizes.insert(sizes.begin() + d, batch_size);
      result.emplace_back(expand(unsqueeze(t, d), sizes));
    }
  }
  return result;
}

ValueList VmapCall(const ValueFn& f, const ValueList& args, const VmapOptions& options) {
  const Dims& in_dims_spec = options.in_dims;
  const Dims& out_dims = options.out_dims;
  const Randomness randomness = options.randomness;
  const std::optional<int64_t> chunk_size = options.chunk_size;
  const int64_t axis_name_id = options.axis_name.empty() ? -1 : AxisNameId(options.axis_name);
  RegisterVmapRules();
  // The level is taken first so that every message can name it.
  const int64_t level = LayerStack::NewLevel();
  if (args.empty()) {
    ThrowError("vmap(f)(*args): got no inputs. Maybe you forgot to add inputs, or you are ",
               "trying to vmap over a function with no inputs. The latter is unsupported. ",
               "(vmap level ", level, ")");
  }
  CheckDefined("vmap", "argument", args);
  if (chunk_size && *chunk_size < 1) {
    ThrowError("vmap: chunk_size should be None or greater than 0. (got ", *chunk_size,
               "; vmap level ", level, ")");
  }
  std::vector<std::optional<int64_t>> in_dims =
      in_dims_spec.Expand(args.size(), "in_dims", level);
  std::optional<int64_t> batch_size;
  bool sizes_differ = false;
  std::vector<std::string> mapped;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!in_dims[i]) continue;
    if (!args[i].is_tensor()) {
      ThrowError("vmap: Got in_dim=", *in_dims[i], " for argument ", i,
                 " but the input is of type ", ValueKindName(args[i]),
                 ". We cannot vmap over non-Tensor arguments, please use None as the "
                 "respective in_dim (vmap level ", level, ")");
    }
    const Tensor& t = args[i].tensor();
    const int64_t rank = t.dim();
    if (*in_dims[i] < -rank || *in_dims[i] >= rank) {
      ThrowError("vmap: Got in_dim=", *in_dims[i], " for argument ", i,
                 ", but that input is a Tensor of dimensionality ", rank,
                 " so expected in_dim to satisfy ", -rank, " <= in_dim < ", rank,
                 ". (vmap level ", level, ")");
    }
    const int64_t d = *in_dims[i] < 0 ? *in_dims[i] + rank : *in_dims[i];
    in_dims[i] = d;
    const int64_t size = t.sizes()[d];
    mapped.push_back(absl::StrCat("argument ", i, ": size ", size, " at in_dim ", d));
    if (batch_size && *batch_size != size) sizes_differ = true;
    if (!batch_size) batch_size = size;
  }
  if (!batch_size) {
    ThrowError("vmap: Expected at least one Tensor to vmap over (every in_dim is None; vmap "
               "level ", level, ")");
  }
  if (sizes_differ) {
    ThrowError("vmap: Expected all tensors to have the same size in the mapped dimension, got ",
               absl::StrJoin(mapped, "; "), " (vmap level ", level, ")");
  }
  const int64_t total = *batch_size;
  if (!chunk_size || *chunk_size >= total || total == 0) {
    return RunBatched(f, args, in_dims, out_dims, level, total, randomness, 0, total,
                      std::make_shared<RandomDrawLog>(), axis_name_id);
  }
  if (axis_name_id >= 0) {
    // A collective over the axis needs every example at once; a chunk holds only some.
    ThrowError("vmap: chunk_size (", *chunk_size, ") cannot be combined with axis_name '",
               options.axis_name, "': a collective over the axis needs all ", total,
               " examples at once (vmap level ", level, ")");
  }
  // Chunked: run each slice of the batch and concatenate each output along its out_dim.
  std::vector<ValueList> chunks;
  auto draws = std::make_shared<RandomDrawLog>();  // NOTE: [Randomness and chunks]
  for (int64_t start = 0; start < total; start += *chunk_size) {
    const int64_t n = std::min(*chunk_size, total - start);
    ValueList slice;
    for (size_t i = 0; i < args.size(); ++i) {
      if (in_dims[i]) {
        slice.emplace_back(narrow(args[i].tensor(), *in_dims[i], start, n));
      } else {
        slice.push_back(args[i]);
      }
    }
    // The first chunk runs at the level taken above; later ones at fresh levels.
    const int64_t chunk_level = start == 0 ? level : LayerStack::NewLevel();
    chunks.push_back(RunBatched(f, slice, in_dims, out_dims, chunk_level, n, randomness, start,
                                total, draws));
    if (start > 0 && draws->next != draws->draws.size()) {
      // Fewer draws than the first chunk: the counters it skipped would stay unused here
      // but be drawn by an unchunked run.
      ThrowError("vmap: with chunk_size and randomness='", RandomnessName(randomness),
                 "', every chunk must make the same random calls (the chunk at example ", start,
                 " made ", draws->next, " random calls, the first chunk ", draws->draws.size(),
                 "; vmap level ", level, ")");
    }
  }
  const std::vector<std::optional<int64_t>> dims =
      out_dims.Expand(chunks[0].size(), "out_dims", level);
  ValueList result;
  for (size_t o = 0; o < chunks[0].size(); ++o) {
    if (!chunks[0][o].is_tensor() || !dims[o]) {
      result.push_back(chunks[0][o]);
      continue;
    }
    TensorList parts;
    for (const ValueList& c : chunks) parts.push_back(c[o].tensor());
    result.emplace_back(cat(parts, *dims[o]));
  }
  return result;
}

}  // namespace

ValueFn internal::VmapWithOptions(ValueFn f, VmapOptions options) {
  return [f = std::move(f), options = std::move(options)](const ValueList& args) {
    return VmapCall(f, args, options);
  };
}

TensorListFn internal::VmapWithOptions(TensorListFn f, VmapOptions options) {
  ValueFn as_values = [f = std::move(f)](const ValueList& args) {
    TensorList tensors;
    for (const Value& v : args) tensors.push_back(v.tensor());
    ValueList out;
    for (Tensor& t : f(tensors)) out.emplace_back(std::move(t));
    return out;
  };
  return [g = std::move(as_values), options = std::move(options)](const TensorList& args) {
    ValueList values(args.begin(), args.end());
    ValueList out = VmapCall(g, values, options);
    TensorList tensors;
    for (Value& v : out) tensors.push_back(std::move(v.mutable_tensor()));
    return tensors;
  };
}

TensorFn internal::VmapWithOptions(TensorFn f, VmapOptions options) {
  ValueFn as_values = [f = std::move(f)](const ValueList& args) {
    ValueList out;
    out.emplace_back(f(args[0].tensor()));
    return out;
  };
  return [g = std::move(as_values), options = std::move(options)](const Tensor& x) {
    const ValueList values = {Value(x)};
    ValueList out = VmapCall(g, values, options);
    return std::move(out[0].mutable_tensor());
  };
}

ValueFn vmap(ValueFn f, Dims in_dims, Dims out_dims, Randomness randomness,
             std::optional<int64_t> chunk_size) {
  return internal::VmapWithOptions(
      std::move(f), VmapOptions{std::move(in_dims), std::move(out_dims), randomness, chunk_size,
                                ""});
}

TensorListFn vmap(TensorListFn f, Dims in_dims, Dims out_dims, Randomness randomness,
                  std::optional<int64_t> chunk_size) {
  return internal::VmapWithOptions(
      std::move(f), VmapOptions{std::move(in_dims), std::move(out_dims), randomness, chunk_size,
                                ""});
}

TensorFn vmap(TensorFn f, Dims in_dims, Dims out_dims, Randomness randomness,
              std::optional<int64_t> chunk_size) {
  return internal::VmapWithOptions(
      std::move(f), VmapOptions{std::move(in_dims), std::move(out_dims), randomness, chunk_size,
                                ""});
}

}  // namespace ft

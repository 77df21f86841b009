// Batching rules: normalization (layer_norm, rms_norm, normalize, group_norm, batch_norm,
// instance_norm).
//
// Every rule first checks the per-example (logical) shapes with the kernel's own checks
// (kernels/normalization.h), so an error under vmap reads like the op's error for one
// example. Then the whole batch runs in one call:
//   - layer_norm / rms_norm normalize trailing dims, so a batch dim moved to the front needs
//     no fold. A batched weight or bias cannot be passed to the op (it must have shape
//     normalized_shape): the op runs without it and the affine map is applied afterwards,
//     the parameter padded to broadcast per example.
//   - normalize: the batch dim goes to the front and dim shifts by one.
//   - group_norm: the batch dim is folded into N ([B, N, C, *] -> [B * N, C, *]); batched
//     weight / bias are applied afterwards as a [B, 1, C, 1, ...] view.
//   - batch_norm / instance_norm: each example normalizes over its OWN batch, so the vmap dim
//     is folded into the CHANNEL dim: [B, N, C, *] -> [N, B * C, *], with every per-channel
//     tensor (running stats, weight, bias) made [B * C]. The statistics of channel (b, c) are
//     then exactly example b's statistics of channel c, and the returned running stats come
//     back as [B, C], batched per example.
#include <optional>
#include <utility>

#include "dispatch/dispatch.h"
#include "interpreters/vmap/batched_tensor.h"
#include "interpreters/vmap/batching_util.h"
#include "kernels/normalization.h"
#include "ops/ops.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

// The logical shape / dtype of an optional tensor argument (nullopt when None).
std::optional<Shape> OptShape(const BatchedArgs& args, size_t i) {
  if (args.values[i].is_none()) return std::nullopt;
  return LogicalShape(args.tensor(i), args.bdim(i));
}
std::optional<DType> OptDType(const BatchedArgs& args, size_t i) {
  if (args.values[i].is_none()) return std::nullopt;
  return args.tensor(i).dtype();
}
bool Batched(const BatchedArgs& args, size_t i) {
  return !args.values[i].is_none() && args.bdim(i).has_value();
}

// x with its batch dim in front when batched, as it is otherwise.
Tensor Front(const BatchedArgs& args, size_t i) {
  return MoveBdimToFront(args.tensor(i), args.bdim(i));
}

// layer_norm (input, normalized_shape, weight, bias, eps) and rms_norm (input,
// normalized_shape, weight, eps): `bias_arg` is 3 for layer_norm, none for rms_norm.
BatchedResult TrailingNormRule(const VmapContext& ctx, BatchedArgs& args,
                               std::optional<size_t> bias_arg) {
  const std::string& name = ctx.op.name();
  const Shape xs = LogicalShape(args.tensor(0), args.bdim(0));
  const Shape& ns = args.values[1].shape();
  kernels::CheckNormalizedShape(name.c_str(), xs, args.tensor(0).dtype(), ns, OptShape(args, 2),
                                OptDType(args, 2),
                                bias_arg ? OptShape(args, *bias_arg) : std::nullopt,
                                bias_arg ? OptDType(args, *bias_arg) : std::nullopt);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const bool params_batched = Batched(args, 2) || (bias_arg && Batched(args, *bias_arg));
  ValueList values = args.values;
  values[0] = Value(Front(args, 0));
  if (!params_batched) return BatchedResult{DispatchBoxed(ctx.op, values), {0}};
  // Normalize without the parameters, then apply them padded to the example's rank.
  values[2] = Value();
  if (bias_arg) values[*bias_arg] = Value();
  Tensor out = DispatchBoxed(ctx.op, values)[0].tensor();
  // Only the bias may be given (and batched): no weight to scale by.
  if (!args.values[2].is_none()) out = out * PadToLogicalRank(Front(args, 2), args.bdim(2), rank);
  if (bias_arg && !args.values[*bias_arg].is_none()) {
    out = out + PadToLogicalRank(Front(args, *bias_arg), args.bdim(*bias_arg), rank);
  }
  return BatchedResult{{Value(out)}, {0}};
}

BatchedResult LayerNormRule(const VmapContext& ctx, BatchedArgs& args) {
  return TrailingNormRule(ctx, args, 3);
}
BatchedResult RmsNormRule(const VmapContext& ctx, BatchedArgs& args) {
  return TrailingNormRule(ctx, args, std::nullopt);
}

// normalize (input, p, dim, eps).
BatchedResult NormalizeRule(const VmapContext& ctx, BatchedArgs& args) {
  const Tensor x = Front(args, 0);
  const Shape xs = LogicalShape(args.tensor(0), args.bdim(0));
  const int64_t dim = args.values[2].to_int();
  kernels::CheckNormalize(xs, x.dtype(), dim);
  ValueList values = args.values;
  if (xs.empty()) {
    // A rank-0 example is its own slice: [B] viewed as [B, 1], normalized along dim 1.
    values[0] = Value(unsqueeze(x, 1));
    values[2] = Value(int64_t{1});
    Tensor out = DispatchBoxed(ctx.op, values)[0].tensor();
    return BatchedResult{{Value(squeeze_dim(out, 1))}, {0}};
  }
  values[0] = Value(x);
  values[2] = Value(PhysicalDim("normalize", dim, static_cast<int64_t>(xs.size())));
  return BatchedResult{DispatchBoxed(ctx.op, values), {0}};
}

// A per-channel parameter [C] (batched: [B, C]) viewed to broadcast against [B, N, C, *]
// (logical rank `rank`): [B, 1, C, 1, ...] when batched, [C, 1, ...] when not.
Tensor ChannelParam(const BatchedArgs& args, size_t i, int64_t rank) {
  const Tensor p = Front(args, i);
  if (!args.bdim(i)) {
    Shape s(static_cast<size_t>(rank - 1), 1);
    s[0] = p.size(0);
    return reshape(p, s);
  }
  Shape s(static_cast<size_t>(rank + 1), 1);
  s[0] = p.size(0);
  s[2] = p.size(1);
  return reshape(p, s);
}

// group_norm (input, num_groups, weight, bias, eps).
BatchedResult GroupNormRule(const VmapContext& ctx, BatchedArgs& args) {
  const Shape xs = LogicalShape(args.tensor(0), args.bdim(0));
  kernels::CheckGroupNorm(xs, args.tensor(0).dtype(), args.values[1].to_int(), OptShape(args, 2),
                          OptDType(args, 2), OptShape(args, 3), OptDType(args, 3));
  const int64_t rank = static_cast<int64_t>(xs.size());
  const bool params_batched = Batched(args, 2) || Batched(args, 3);
  ValueList values = args.values;
  if (params_batched) {
    values[2] = Value();
    values[3] = Value();
  }
  Tensor out;
  if (args.bdim(0)) {
    const Tensor x = Front(args, 0);
    Shape folded(xs.begin(), xs.end());
    folded[0] *= x.size(0);
    values[0] = Value(reshape(x, folded));
    out = DispatchBoxed(ctx.op, values)[0].tensor();
    out = reshape(out, x.sizes());
  } else {
    out = DispatchBoxed(ctx.op, values)[0].tensor();  // [N, C, *]; a parameter is batched
  }
  if (params_batched) {
    if (!args.values[2].is_none()) out = out * ChannelParam(args, 2, rank);
    if (!args.values[3].is_none()) out = out + ChannelParam(args, 3, rank);
  }
  return BatchedResult{{Value(out)}, {0}};
}

// batch_norm / instance_norm (input, running_mean, running_var, weight, bias, flag, momentum,
// eps): the vmap dim folded into the channel dim (see the top of the file).
BatchedResult ChannelNormRule(const VmapContext& ctx, BatchedArgs& args) {
  const std::string& name = ctx.op.name();
  const Shape xs = LogicalShape(args.tensor(0), args.bdim(0));
  const bool flag = args.values[5].to_bool();  // training / use_input_stats
  std::optional<Shape> shapes[4];
  std::optional<DType> dtypes[4];
  for (size_t i = 0; i < 4; ++i) {
    shapes[i] = OptShape(args, i + 1);
    dtypes[i] = OptDType(args, i + 1);
  }
  kernels::CheckChannelNorm(name.c_str(), xs, args.tensor(0).dtype(), shapes, dtypes, !flag,
                            flag);
  const int64_t b = ctx.batch_size;
  const int64_t c = xs[1];
  // [B, N, C, *] -> [N, B, C, *] -> [N, B * C, *].
  Tensor x = movedim(EnsureBatchedFront(args.tensor(0), args.bdim(0), b), 0, 1);
  Shape folded(xs.begin(), xs.end());
  folded[1] = b * c;
  ValueList values = args.values;
  values[0] = Value(reshape(x, folded));
  for (size_t i = 1; i <= 4; ++i) {
    if (args.values[i].is_none()) continue;
    values[i] = Value(reshape(EnsureBatchedFront(args.tensor(i), args.bdim(i), b), {b * c}));
  }
  ValueList out = DispatchBoxed(ctx.op, values);
  Shape unfolded(xs.begin(), xs.end());
  unfolded.insert(unfolded.begin() + 1, b);
  unfolded[2] = c;
  out[0] = Value(reshape(out[0].tensor(), unfolded));
  BatchedResult result;
  result.bdims = {1, std::nullopt, std::nullopt};
  for (size_t k = 1; k <= 2; ++k) {
    if (args.values[k].is_none()) continue;  // the [0] placeholder stays unbatched
    out[k] = Value(reshape(out[k].tensor(), {b, c}));
    result.bdims[k] = 0;
  }
  result.values = std::move(out);
  return result;
}

}  // namespace

void RegisterNormalizationRules() {
  OpRegistry& r = OpRegistry::Global();
  SetBatchRule(r.Get("layer_norm"), &LayerNormRule);
  SetBatchRule(r.Get("rms_norm"), &RmsNormRule);
  SetBatchRule(r.Get("normalize"), &NormalizeRule);
  SetBatchRule(r.Get("group_norm"), &GroupNormRule);
  SetBatchRule(r.Get("batch_norm"), &ChannelNormRule);
  SetBatchRule(r.Get("instance_norm"), &ChannelNormRule);
}

}  // namespace ft::vmap_rules

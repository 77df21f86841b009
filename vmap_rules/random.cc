// Batching rules: the random ops (rand_like, randn_like, bernoulli, dropout, randint) and the
// `*_like` factories (zeros_like, ones_like, full_like, full_like_dtype).
//
// *_like: the fill does not depend on x's values, so the op runs on the physical x and the
// result keeps x's batch dim.
//
// Random ops: the interpreter has already thrown for randomness kError, and calls these rules
// even when no argument is batched (the draw may still vary per example).
//   kSame: one draw of the LOGICAL shape, shared by every example: unbatched when nothing
//     else varies over the batch; bernoulli with a batched p / dropout with a batched x share
//     the uniform numbers (the counters an unbatched call would use) and compare them with
//     each example's p / scale each example's x.
//   kDifferent: one draw of [B] + logical shape (batch in front, bdim 0).
// Every draw goes through Draw (the chunk protocol, NOTE: [Randomness and chunks]).
// rand_like and randn_like read only x's sizes and dtype, so their draws use a plain,
// storage-free template of the wanted shape (ShapeOnly). Invalid arguments are handed to the
// op on the logical arguments, so the op itself throws its own error before any counter is
// consumed.
#include <algorithm>
#include <cstdint>
#include <functional>

#include "dispatch/dispatch.h"
#include "dispatch/interpreter.h"
#include "interpreters/vmap/batching_util.h"
#include "ops/ops.h"
#include "vmap_rules/families.h"

namespace ft::vmap_rules {
namespace {

// WithBatch: [batch_size] + shape.
Shape WithBatch(int64_t batch_size, IntArrayRef shape) {
  Shape s{batch_size};
  s.insert(s.end(), shape.begin(), shape.end());
  return s;
}

// ShapeOnly: a plain tensor of `shape` and `dtype` for ops that read only sizes and dtype: a
// broadcast view of one element (no allocation of the full size). Built with every transform
// excluded, so it is an ordinary constant whatever levels are active.
Tensor ShapeOnly(IntArrayRef shape, DType dtype) {
  ExcludeAllGuard plain;
  return expand(EmptyContiguous({}, dtype), shape);
}

// PlainOnes: a plain tensor of ones (an ordinary constant, like ShapeOnly).
Tensor PlainOnes(IntArrayRef shape, DType dtype) {
  ExcludeAllGuard plain;
  return ones_like(ShapeOnly(shape, dtype));
}

Generator& ResolveGenerator(const Value& v) {
  return v.is_none() ? DefaultGenerator() : *v.generator();
}

// NOTE: [Nested per-example draws]
// BatchedDrawOffset positions the generator for this level only. When vmap levels with
// randomness kDifferent sit below this one (nested vmap; the rule runs lowered, so the layer
// stack holds exactly the levels below), the op this rule calls is drawn again per example by
// each of them: a level below claims its total batch size times what this level asks for. So:
//   - this level claims per_example * (product of their total batch sizes) per example, so
//     that the slice of each of its chunks holds the lower levels' whole draws (chunks of an
//     inner vmap never overlap);
//   - when one of them replays its log (its second or later chunk), that level decides which
//     counters are used and where the generator ends: this level claims nothing (a fresh
//     claim would only move the generator past where an unchunked run leaves it).
struct LowerDraws {
  uint64_t factor = 1;     // product of the total batch sizes of the kDifferent levels below
  bool replaying = false;  // one of them replays the draws of its first chunk
};

LowerDraws InspectLowerLevels() {
  LowerDraws lower;
  for (int i = 0; i < LayerStack::size(); ++i) {
    Interpreter* layer = LayerStack::At(i);
    if (layer->key() != TransformType::kVmap) continue;
    const auto* vmap = static_cast<const VmapInterpreter*>(layer);
    if (vmap->randomness() != Randomness::kDifferent) continue;
    lower.factor *= static_cast<uint64_t>(vmap->total_batch_size());
    const RandomDrawLog* log = vmap->draws();
    lower.replaying = lower.replaying || log->next < log->draws.size();
  }
  return lower;
}

}  // namespace

// Draw runs draw(), the op on the logical shape (kSame) or on the batch-front physical shape
// [B] + logical (kDifferent), `per_example` being the logical numel, under the chunk protocol
// (NOTE: [Randomness and chunks]):
//   kDifferent: example b of the whole batch gets counters first + b * per_example + i,
//     whether vmap runs in chunks or not (BatchedDrawOffset);
//   kSame: the whole batch is one example: every chunk reuses the first chunk's counters, so
//     all chunks share the sample and the generator ends where an unchunked run leaves it
//     (BatchedDrawOffset for a batch of 1).
// A draw that throws gives its counters back.
Tensor Draw(const VmapContext& ctx, Generator& gen, int64_t per_example,
            const std::function<Tensor()>& draw) {
  const LowerDraws lower = InspectLowerLevels();
  if (lower.replaying) return draw();  // NOTE: [Nested per-example draws]
  VmapContext claim = ctx;
  if (ctx.randomness == Randomness::kSame) {
    claim.chunk_start = 0;
    claim.total_batch_size = 1;
  }
  const uint64_t before = gen.offset();
  const uint64_t end =
      BatchedDrawOffset(claim, gen, per_example * static_cast<int64_t>(lower.factor));
  Tensor out;
  try {
    out = draw();
  } catch (...) {
    gen.set_offset(before);
    throw;
  }
  // The draw stays inside the claimed block; max() only guards against a lower level that
  // consumed more than accounted for (the next draw must not reuse its counters).
  gen.set_offset(std::max(end, gen.offset()));
  return out;
}

namespace {

BatchedResult Unbatched(Tensor t) { return {{Value(std::move(t))}, {std::nullopt}}; }
BatchedResult BatchedFront(Tensor t) { return {{Value(std::move(t))}, {int64_t{0}}}; }

// ---- *_like factories ----

BatchedResult LikeRule(const VmapContext& ctx, BatchedArgs& args) {
  return {DispatchBoxed(ctx.op, args.values), {args.bdim(0)}};
}

// ---- rand_like, randn_like (self, generator) ----

BatchedResult RandLikeRule(const VmapContext& ctx, BatchedArgs& args) {
  const Tensor& x = args.tensor(0);
  const Shape logical = LogicalShape(x, args.bdim(0));
  Generator& gen = ResolveGenerator(args.values[1]);
  ValueList call = {Value(ShapeOnly(logical, x.dtype())), Value(&gen)};
  auto run = [&] { return DispatchBoxed(ctx.op, call)[0].tensor(); };
  if (!IsFloating(x.dtype())) return Unbatched(run());  // the op's own dtype error
  if (ctx.randomness == Randomness::kSame) {
    return Unbatched(Draw(ctx, gen, Numel(logical), run));
  }
  call[0] = Value(ShapeOnly(WithBatch(ctx.batch_size, logical), x.dtype()));
  return BatchedFront(Draw(ctx, gen, Numel(logical), run));
}

// ---- bernoulli (self = p, generator) ----

// CheckProbabilities: bernoulli's validation of p, for the shared-draw path that never hands
// p to the kernel. A dense p is read directly (nothing drawn); when p has invalid values the
// kernel is run on it with a scratch generator to throw its own error. A p wrapped by lower
// transforms cannot be read here: the op itself checks it, on a draw whose results are
// dropped and whose counters are given back (the draw that follows reuses them).
void CheckProbabilities(const Tensor& p, Generator& gen) {
  if (p.kind() == TensorKind::kDense) {
    ExcludeAllGuard plain;
    if (p.numel() == 0) return;
    if (!amin(logical_and(ge(p, 0.0), le(p, 1.0))).item<bool>()) {
      Generator scratch;
      (void)bernoulli(p, &scratch);
    }
    return;
  }
  const uint64_t offset = gen.offset();
  (void)bernoulli(p, &gen);
  gen.set_offset(offset);
}

BatchedResult BernoulliRule(const VmapContext& ctx, BatchedArgs& args) {
  const Tensor& p = args.tensor(0);
  const BDim bdim = args.bdim(0);
  Generator& gen = ResolveGenerator(args.values[1]);
  const Shape logical = LogicalShape(p, bdim);
  const int64_t n = Numel(logical);
  if (!IsFloating(p.dtype())) return Unbatched(bernoulli(ShapeOnly(logical, p.dtype()), &gen));
  if (ctx.randomness == Randomness::kDifferent) {
    const Tensor batched = EnsureBatchedFront(p, bdim, ctx.batch_size);
    return BatchedFront(Draw(ctx, gen, n, [&] { return bernoulli(batched, &gen); }));
  }
  if (!bdim) return Unbatched(Draw(ctx, gen, n, [&] { return bernoulli(p, &gen); }));
  // kSame, p varies: the kernel's rule "1 exactly when uniform counter i < p[i]" with one set
  // of uniforms for every example. rand_like in float64 is Generator::Uniform of the same
  // counters, and comparing in float64 is exact for a float32 p, as in the kernel.
  const Tensor front = MoveBdimToFront(p, bdim);
  CheckProbabilities(front, gen);
  const Tensor u =
      Draw(ctx, gen, n, [&] { return rand_like(ShapeOnly(logical, kFloat64), &gen); });
  return BatchedFront(where(lt(u, front), 1.0, zeros_like(front)));
}

// ---- dropout (self, p, train, generator) ----

BatchedResult DropoutRule(const VmapContext& ctx, BatchedArgs& args) {
  const Tensor& x = args.tensor(0);
  const BDim bdim = args.bdim(0);
  const double p = args.values[1].to_double();
  const bool train = args.values[2].to_bool();
  Generator& gen = ResolveGenerator(args.values[3]);
  const Shape logical = LogicalShape(x, bdim);
  const int64_t n = Numel(logical);
  if (!IsFloating(x.dtype()) || !(p >= 0.0 && p <= 1.0)) {
    return Unbatched(dropout(ShapeOnly(logical, x.dtype()), p, train, &gen));  // throws
  }
  // Nothing drawn (x itself, or zeros for p == 1): the result follows x's batch.
  if (!train || p == 0.0 || p == 1.0) return {{Value(dropout(x, p, train, &gen))}, {bdim}};
  if (ctx.randomness == Randomness::kDifferent) {
    const Tensor batched = EnsureBatchedFront(x, bdim, ctx.batch_size);
    return BatchedFront(Draw(ctx, gen, n, [&] { return dropout(batched, p, train, &gen); }));
  }
  if (!bdim) return Unbatched(Draw(ctx, gen, n, [&] { return dropout(x, p, train, &gen); }));
  // kSame, x varies: one keep-mask for every example. dropout of ones gives the kernel's
  // scale (or 0) on the same counters; x * scale is then computed in x's dtype as the kernel
  // does, and dropped elements are exactly 0 (even where x is inf or nan).
  const Tensor mask =
      Draw(ctx, gen, n, [&] { return dropout(PlainOnes(logical, x.dtype()), p, train, &gen); });
  const Tensor front = MoveBdimToFront(x, bdim);
  return BatchedFront(where(ne(mask, 0.0), mul(front, mask), 0.0));
}

// ---- randint (low, high, size, generator) ----

BatchedResult RandintRule(const VmapContext& ctx, BatchedArgs& args) {
  const int64_t low = args.values[0].to_int();
  const int64_t high = args.values[1].to_int();
  const Shape& shape = args.values[2].shape();
  Generator& gen = ResolveGenerator(args.values[3]);
  if (high <= low || std::any_of(shape.begin(), shape.end(), [](int64_t s) { return s < 0; })) {
    return Unbatched(randint(low, high, shape, &gen));  // the op's own error
  }
  const int64_t n = Numel(shape);
  if (ctx.randomness == Randomness::kSame) {
    return Unbatched(Draw(ctx, gen, n, [&] { return randint(low, high, shape, &gen); }));
  }
  const Shape batched = WithBatch(ctx.batch_size, shape);
  return BatchedFront(Draw(ctx, gen, n, [&] { return randint(low, high, batched, &gen); }));
}

}  // namespace

void RegisterRandomRules() {
  OpRegistry& r = OpRegistry::Global();
  for (const char* name : {"zeros_like", "ones_like", "full_like", "full_like_dtype"}) {
    SetBatchRule(r.Get(name), &LikeRule);
  }
  SetBatchRule(r.Get("rand_like"), &RandLikeRule);
  SetBatchRule(r.Get("randn_like"), &RandLikeRule);
  SetBatchRule(r.Get("bernoulli"), &BernoulliRule);
  SetBatchRule(r.Get("dropout"), &DropoutRule);
  SetBatchRule(r.Get("randint"), &RandintRule);
}

}  // namespace ft::vmap_rules

#include "interpreters/vmap/batching_util.h"

#include "ops/ops.h"

namespace ft {

Tensor MoveBdimToFront(const Tensor& x, BDim bdim) {
  if (!bdim || *bdim == 0) return x;
  return movedim(x, *bdim, 0);
}

Tensor PadToLogicalRank(const Tensor& x, BDim bdim, int64_t rank) {
  const int64_t have = LogicalRank(x, bdim);
  if (have >= rank) return x;
  const int64_t insert_at = bdim ? 1 : 0;
  Tensor out = x;
  for (int64_t i = have; i < rank; ++i) out = unsqueeze(out, insert_at);
  return out;
}

Tensor EnsureBatchedFront(const Tensor& x, BDim bdim, int64_t batch_size) {
  if (bdim) return MoveBdimToFront(x, bdim);
  Shape sizes(x.sizes().begin(), x.sizes().end());
  sizes.insert(sizes.begin(), batch_size);
  return expand(unsqueeze(x, 0), sizes);
}

int64_t PhysicalDim(const char* op, int64_t dim, int64_t logical_rank) {
  return WrapDim(op, dim, logical_rank) + 1;
}

uint64_t BatchedDrawOffset(const VmapContext& ctx, Generator& gen, int64_t per_example) {
  RandomDrawLog& log = *ctx.draws;
  const uint64_t n = static_cast<uint64_t>(per_example);
  if (log.recording) {
    // First chunk (or unchunked): claim the counters of the whole batch.
    const uint64_t first = gen.Reserve(static_cast<uint64_t>(ctx.total_batch_size) * n);
    log.draws.push_back({&gen, first, per_example});
  } else if (log.next == log.draws.size()) {
    // A later chunk drawing more often than the first: its extra draw has no counters of
    // the whole batch to replay (claiming new ones would give its examples numbers an
    // unchunked run never draws).
    ThrowError("vmap: ", ctx.op.name(), ": with chunk_size and randomness='",
               RandomnessName(ctx.randomness),
               "', every chunk must make the same random calls (this chunk makes random call ",
               log.next, " but the first chunk made only ", log.draws.size(), "; vmap level ",
               ctx.level, ")");
  }
  const RandomDrawLog::Draw& draw = log.draws[log.next++];
  if (draw.generator != &gen || draw.per_example != per_example) {
    ThrowError("vmap: ", ctx.op.name(), ": with chunk_size and randomness='",
               RandomnessName(ctx.randomness),
               "', every chunk must make the same random calls (this call draws ", per_example,
               " numbers per example; the first chunk's call ", log.next - 1, " drew ",
               draw.per_example, "; vmap level ", ctx.level, ")");
  }
  gen.set_offset(draw.first + static_cast<uint64_t>(ctx.chunk_start) * n);
  return draw.first + static_cast<uint64_t>(ctx.total_batch_size) * n;
}

}  // namespace ft

// ft/cpu/parallel.h
//
// Intra-op parallelism: one process-wide pool of worker threads that the kernels of large
// ops (elementwise on many elements, reductions, matrix products) split their work over.
//
// NOTE: [Intra-op threads]
// - The thread count is GetNumThreads(): FT_NUM_THREADS from the environment (read once, at
//   the first use), else the machine's hardware threads; SetNumThreads(n) changes it (n >= 1;
//   1 runs everything on the calling thread). The pool has n - 1 workers; the calling thread
//   takes a share of the work too.
// - Small work stays serial: ParallelFor runs inline unless there are at least two chunks of
//   `grain` items, so a per-op chain on tiny tensors never touches the pool.
// - Chunk boundaries depend only on (n, thread count, grain, align), never on timing or on
//   which thread runs which chunk: a kernel that combines per-chunk partials in chunk order is
//   deterministic for a given thread count.
// - Elementwise results are bit-identical to one thread: chunks start on 64-byte boundaries
//   of the output (`align`), so Eigen's vectorized loop treats every element as it does in
//   one pass over the whole run (the same elements go through packets, the same through the
//   scalar head and tail). Reductions and matrix products sum in a per-chunk order: the same
//   for a given thread count, possibly different bits from another count.
// - Workers run kernels only: they never see the layer stack (thread-local), a transform or
//   a Python-level callback. A chunk that throws has its exception rethrown on the caller
//   after every chunk finished.
// - Calls made from inside a chunk (a kernel that calls another) and calls made while another
//   thread uses the pool run inline: the pool serves one ParallelFor at a time and never
//   waits on itself.
//
// Example (a kernel over float32, output `out`):
//   internal::ParallelFor(n, /*grain=*/65536, /*align=*/16,
//                         internal::AlignmentPhase(out, sizeof(float)),
//                         [&](int64_t begin, int64_t end) {
//                           for (int64_t i = begin; i < end; ++i) out[i] = f(in[i]);
//                         });
#ifndef FT_CPU_PARALLEL_H_
#define FT_CPU_PARALLEL_H_

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace ft {

// GetNumThreads: the intra-op thread count (NOTE: [Intra-op threads]).
int GetNumThreads();

// SetNumThreads sets the intra-op thread count (>= 1; ft::Error otherwise). The pool grows
// or shrinks at the next parallel op.
void SetNumThreads(int n);

namespace internal {

// ParallelChunks: how many chunks ParallelFor splits n items into now: at most one per
// thread, none under `grain` items; 1 means the work runs inline, on the calling thread.
int64_t ParallelChunks(int64_t n, int64_t grain);

// ChunkBegin: where chunk i of `chunks` starts (ChunkBegin(n, chunks, ...) == n for
// i == chunks). Inner boundaries satisfy (boundary + phase) % align == 0: with phase the
// output's offset from a 64-byte boundary in items, a chunk's output starts 64-byte aligned.
int64_t ChunkBegin(int64_t n, int64_t chunks, int64_t align, int64_t phase, int64_t i);

// ParallelFor runs fn(begin, end) once per chunk, the chunks covering [0, n) in order
// (ParallelChunks, ChunkBegin), and returns when all have run; a chunk's exception is
// rethrown here after the others finished. fn must only compute: no layer stack, no
// transform (NOTE above).
void ParallelFor(int64_t n, int64_t grain, int64_t align, int64_t phase,
                 absl::FunctionRef<void(int64_t, int64_t)> fn);

// ParallelForChunks: the same split, fn(chunk index, begin, end), for kernels that keep one
// partial result per chunk (`chunks` from ParallelChunks).
void ParallelForChunks(int64_t n, int64_t chunks, int64_t align, int64_t phase,
                       absl::FunctionRef<void(int64_t, int64_t, int64_t)> fn);

// AlignmentPhase: how many items of `item_bytes` `data` lies past the last 64-byte boundary
// (the `phase` above), for data aligned to its item size.
int64_t AlignmentPhase(const void* data, int64_t item_bytes);

// InParallelRegion: true inside a ParallelFor chunk (nested parallel calls run inline).
bool InParallelRegion();

}  // namespace internal
}  // namespace ft

#endif  // FT_CPU_PARALLEL_H_

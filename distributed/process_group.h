// ft/distributed/process_group.h
//
// ProcessGroup: the processes that run one program together (SPMD), and the engine calls
// that move bytes between them. ft does no transport of its own: the groups are Gloo's (the
// default, PyTorch's and JAX's CPU engine) and MPI's (Open MPI under mpirun or srun).
//
// A group is the engine's view: contiguous host buffers and counts. The named-axis
// collectives (collectives.h) sit above it: they check that every process agrees on the
// op, dtype and shape, pick the call, and turn an engine failure into an ft::Error naming
// the axis, the op, the rank and the cause.
//
// Invariants:
//   - rank() is in [0, size()); every process of a group calls the same collectives in the
//     same order (SPMD). A group is used by one thread at a time.
//   - Every call returns or throws ft::Error within the group's timeout (a dead or stalled
//     peer, a mismatch the engine detects): never a hang, never an abort.
//   - For a fixed size(), AllReduce gives bit-identical results on every rank and from run
//     to run (a fixed reduction order).
//
// Example (two processes started by `ft_launch -n 2 prog`):
//   std::shared_ptr<ft::dist::ProcessGroup> g = ft::dist::init_process_group();
//   float v = static_cast<float>(g->rank() + 1);
//   g->AllReduce(&v, 1, ft::DType::kFloat32, ft::dist::ReduceOp::kSum);   // v == 3 on both
#ifndef FT_DISTRIBUTED_PROCESS_GROUP_H_
#define FT_DISTRIBUTED_PROCESS_GROUP_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "tensor/dtype.h"

namespace ft::dist {

enum class ReduceOp : uint8_t { kSum, kMax };

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // backend: "gloo" or "mpi".
  virtual std::string backend() const = 0;
  // timeout: how long a call waits for its peers before it throws.
  virtual std::chrono::milliseconds timeout() const = 0;

  // AllReduce reduces `count` elements of `dtype` at `data` over every rank, in place.
  // dtype is one of float32, float64, int64, int32, bool (kMax only for bool).
  virtual void AllReduce(void* data, int64_t count, DType dtype, ReduceOp op) = 0;
  // AllGather concatenates every rank's `bytes` bytes at `in` into `out` (size() * bytes
  // bytes), in rank order.
  virtual void AllGather(const void* in, void* out, int64_t bytes) = 0;
  // ReduceScatter reduces size() * count elements at `in` over every rank and gives rank r
  // the r-th block of `count` elements, at `out`.
  virtual void ReduceScatter(const void* in, void* out, int64_t count, DType dtype,
                             ReduceOp op) = 0;
  // Broadcast copies root's `bytes` bytes at `data` to every rank.
  virtual void Broadcast(void* data, int64_t bytes, int root) = 0;
  virtual void Barrier() = 0;
};

// init_process_group makes the group this process belongs to, from the environment:
//   - FT_RANK, FT_WORLD_SIZE and FT_STORE=file:DIR (a directory every process sees: Gloo's
//     FileStore; ft_launch sets all three): a Gloo group over TCP on loopback or the
//     machine's interface (FT_GLOO_IFACE or FT_GLOO_HOSTNAME choose another);
//   - otherwise the environment of mpirun or srun (OMPI_COMM_WORLD_RANK, PMI_RANK,
//     SLURM_PROCID, ...): an MPI group (FT_BACKEND=gloo bootstraps Gloo from MPI instead);
//   - FT_DIST_TIMEOUT_MS: how long a process waits for its peers (default 30000).
// A peer missing at start-up, a malformed variable or a store that cannot be used is an
// ft::Error naming the variable or the rank.
std::shared_ptr<ProcessGroup> init_process_group();

}  // namespace ft::dist

#endif  // FT_DISTRIBUTED_PROCESS_GROUP_H_

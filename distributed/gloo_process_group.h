// ft/distributed/gloo_process_group.h
//
// GlooProcessGroup: a ProcessGroup on Gloo (PyTorch's CPU collectives library), its processes
// (or threads) connected full-mesh over Gloo's TCP transport. A rendezvous Store is where the
// ranks find each other's addresses: Gloo's FileStore (a directory every process sees) for
// processes, its HashStore (memory) for threads of one process, an MPI-filled one under mpirun
// (mpi_process_group.h).
//
// Invariants:
//   - Every call returns or throws ft::Error within timeout(): connecting (a rank that never
//     publishes its address is named), and each collective (Gloo's options carry the timeout;
//     a peer that died closes its sockets, which fails the call at once).
//   - Messages start with the engine call, then the rank: "AllReduce (gloo): rank 1 of 3:
//     timed out after 500 ms waiting for a peer (...): <Gloo's own words>".
//   - After a call failed the group is broken (a collective cannot be cancelled on the other
//     ranks, so the byte streams no longer line up): every later call throws at once, naming
//     the first failure.
//   - AllReduce is Gloo's ring: each block is reduced in one fixed rank order, then copied to
//     every rank, so for a fixed size() the result is bit-identical on every rank and run.
//     ReduceScatter is Gloo's halving-doubling, also a fixed order for a fixed size().
//   - A store serves one group: Gloo's keys ("rank_0", "0", ...) carry no group name. A
//     FileStore directory must be fresh for every run (stale keys of an earlier run would
//     point at dead addresses).
//
// Example (three threads of one test; testing.h's RunOnThreads does exactly this):
//   auto store = std::make_shared<gloo::rendezvous::HashStore>();
//   // on thread r of 3:
//   std::shared_ptr<ft::dist::ProcessGroup> g =
//       ft::dist::MakeGlooGroup(store, r, 3, std::chrono::milliseconds(5000));
//   int64_t v = r;
//   g->AllReduce(&v, 1, ft::kInt64, ft::dist::ReduceOp::kSum);   // v == 3 on every thread
//
// A benchmark that calls Gloo itself takes the connected context:
//   auto& gloo_group = dynamic_cast<ft::dist::GlooProcessGroup&>(*g);
//   gloo::AllreduceOptions opts(gloo_group.context());
#ifndef FT_DISTRIBUTED_GLOO_PROCESS_GROUP_H_
#define FT_DISTRIBUTED_GLOO_PROCESS_GROUP_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "distributed/process_group.h"

namespace gloo {
class Context;
namespace rendezvous {
class Store;
}  // namespace rendezvous
namespace transport {
class Device;
}  // namespace transport
}  // namespace gloo

namespace ft::dist {

// GlooTransport: where this rank listens. Both empty: 127.0.0.1, for processes of one machine
// (ft_launch, tests). hostname: an address or name of this machine the other ranks can reach;
// iface: a network interface ("eth0") whose address is used. At most one may be set.
struct GlooTransport {
  std::string hostname;
  std::string iface;
};

class GlooProcessGroup final : public ProcessGroup {
 public:
  // Connect makes the group of `size` ranks whose addresses meet in `store`, as `rank`; it
  // returns once every pair is connected. Throws ft::Error for a bad rank or size, a bad
  // transport, or a peer that does not connect within `timeout` (naming the missing ranks).
  static std::shared_ptr<GlooProcessGroup> Connect(gloo::rendezvous::Store& store, int rank,
                                                   int size, std::chrono::milliseconds timeout,
                                                   const GlooTransport& transport = {});
  ~GlooProcessGroup() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "gloo"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }

  void AllReduce(void* data, int64_t count, DType dtype, ReduceOp op) override;
  void AllGather(const void* in, void* out, int64_t bytes) override;
  void ReduceScatter(const void* in, void* out, int64_t count, DType dtype,
                     ReduceOp op) override;
  void Broadcast(void* data, int64_t bytes, int root) override;
  void Barrier() override;

  // context: the connected Gloo context, for code that calls Gloo directly (a benchmark of
  // the engine alone). Calls made on it must follow the same SPMD order on every rank, and
  // should use tags of their own (this group's tags count up from 1).
  std::shared_ptr<gloo::Context> context() const;

 private:
  struct Private {};

 public:
  // Use Connect (the constructor is public only for std::make_shared).
  GlooProcessGroup(Private, int rank, int size, std::chrono::milliseconds timeout,
                   std::shared_ptr<gloo::transport::Device> device,
                   std::shared_ptr<gloo::Context> context);

 private:
  // Run calls `body` (one Gloo collective) and turns what Gloo throws into ft::Error.
  template <typename Body>
  void Run(const char* op, const Body& body);
  uint32_t NextTag() { return next_tag_++; }

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
  uint32_t next_tag_ = 1;
  // broken_: the message of the first failed call; later calls repeat it (see Invariants).
  std::string broken_;
};

// MakeGlooGroup: GlooProcessGroup::Connect over `store`, as a ProcessGroup. The store must
// outlive the call only (the group keeps no reference to it).
std::shared_ptr<ProcessGroup> MakeGlooGroup(std::shared_ptr<gloo::rendezvous::Store> store,
                                            int rank, int size,
                                            std::chrono::milliseconds timeout,
                                            const GlooTransport& transport = {});

}  // namespace ft::dist

#endif  // FT_DISTRIBUTED_GLOO_PROCESS_GROUP_H_

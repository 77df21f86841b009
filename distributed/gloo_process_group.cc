#include "distributed/gloo_process_group.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "distributed/reduce.h"
#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/barrier.h"
#include "gloo/broadcast.h"
#include "gloo/common/error.h"
#include "gloo/reduce_scatter.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/store.h"
#include "gloo/transport/tcp/device.h"
#include "tensor/error.h"

namespace ft::dist {
namespace {

// TimeoutStore bounds every wait of Gloo's rendezvous by the group's timeout. Gloo's
// connectFullMesh calls get() without waiting first, and FileStore's and HashStore's get()
// then wait for Store::kDefaultTimeout (30 s) whatever the context's timeout is.
class TimeoutStore final : public gloo::rendezvous::Store {
 public:
  TimeoutStore(gloo::rendezvous::Store& inner, std::chrono::milliseconds timeout)
      : inner_(inner), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    inner_.set(key, data);
  }
  std::vector<char> get(const std::string& key) override {
    inner_.wait({key}, timeout_);
    return inner_.get(key);
  }
  void wait(const std::vector<std::string>& keys) override { inner_.wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    inner_.wait(keys, std::min(timeout, timeout_));
  }

 private:
  gloo::rendezvous::Store& inner_;
  std::chrono::milliseconds timeout_;
};

// HasKey: whether `key` is in the store now (a wait of one millisecond).
bool HasKey(gloo::rendezvous::Store& store, const std::string& key) {
  try {
    store.wait({key}, std::chrono::milliseconds(1));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// MissingRanks names the ranks that have not published the store key `prefix + rank`
// ("1, 3"); empty when every other rank has. Gloo 2022's connectFullMesh writes "rank_<r>"
// first (its host name), then "<r>" (its pairs' addresses).
std::string MissingRanks(gloo::rendezvous::Store& store, int rank, int size,
                         const std::string& prefix) {
  std::string missing;
  for (int r = 0; r < size; ++r) {
    if (r != rank && !HasKey(store, prefix + std::to_string(r))) {
      absl::StrAppend(&missing, missing.empty() ? "" : ", ", r);
    }
  }
  return missing;
}

bool Contains(const std::string& text, const char* fragment) {
  return text.find(fragment) != std::string::npos;
}

// Explain puts Gloo's message after a sentence saying what it means for the user.
std::string Explain(const std::string& cause, std::chrono::milliseconds timeout) {
  if (Contains(cause, "Timed out") || Contains(cause, "timeout")) {
    return absl::StrCat("timed out after ", timeout.count(),
                        " ms waiting for a peer (one stalled, died or called another "
                        "collective): ",
                        cause);
  }
  if (Contains(cause, "closed") || Contains(cause, "reset") || Contains(cause, "Broken pipe") ||
      Contains(cause, "refused") || Contains(cause, "ECONN")) {
    return absl::StrCat("lost the connection to a peer (it exited or crashed): ", cause);
  }
  return absl::StrCat("Gloo failed: ", cause);
}

// The reductions of Gloo's old-style algorithms (ReduceScatterHalvingDoubling): x op= y.
template <typename T, ReduceOp op>
void ReduceInto(T* x, const T* y, size_t n) {
  ReduceFn<T, op>(x, x, y, n);
}

template <typename T>
const gloo::ReductionFunction<T>* SumFunction() {
  static const gloo::ReductionFunction<T> fn(gloo::SUM, &ReduceInto<T, ReduceOp::kSum>);
  return &fn;
}

template <typename T>
const gloo::ReductionFunction<T>* MaxFunction() {
  static const gloo::ReductionFunction<T> fn(gloo::MAX, &ReduceInto<T, ReduceOp::kMax>);
  return &fn;
}

void CheckCount(const char* op, int64_t count, const void* ptr, const char* what) {
  if (count < 0) {
    ThrowError(op, " (gloo): ", what, " must be >= 0, got ", count);
  }
  if (count > 0 && ptr == nullptr) {
    ThrowError(op, " (gloo): null buffer for ", count, " ", what);
  }
}

}  // namespace

GlooProcessGroup::GlooProcessGroup(Private, int rank, int size,
                                   std::chrono::milliseconds timeout,
                                   std::shared_ptr<gloo::transport::Device> device,
                                   std::shared_ptr<gloo::Context> context)
    : rank_(rank),
      size_(size),
      timeout_(timeout),
      device_(std::move(device)),
      context_(std::move(context)) {}

// The context goes before the device (the pairs live on the device's event loop).
GlooProcessGroup::~GlooProcessGroup() { context_.reset(); }

std::shared_ptr<gloo::Context> GlooProcessGroup::context() const { return context_; }

std::shared_ptr<GlooProcessGroup> GlooProcessGroup::Connect(gloo::rendezvous::Store& store,
                                                            int rank, int size,
                                                            std::chrono::milliseconds timeout,
                                                            const GlooTransport& transport) {
  if (size < 1) {
    ThrowError("init (gloo): the world size must be >= 1, got ", size);
  }
  if (rank < 0 || rank >= size) {
    ThrowError("init (gloo): rank ", rank, " is not in [0, ", size, ")");
  }
  if (timeout.count() <= 0) {
    ThrowError("init (gloo): the timeout must be > 0 ms, got ", timeout.count());
  }
  if (!transport.hostname.empty() && !transport.iface.empty()) {
    ThrowError("init (gloo): give a hostname (", transport.hostname, ") or an interface (",
               transport.iface, "), not both");
  }
  gloo::transport::tcp::attr attr;
  std::string where;
  if (!transport.iface.empty()) {
    attr.iface = transport.iface;
    where = absl::StrCat("interface ", transport.iface);
  } else {
    // Loopback by default: ft_launch's processes share a machine, and an address that other
    // machines can reach must be asked for.
    attr.hostname = transport.hostname.empty() ? "127.0.0.1" : transport.hostname;
    where = absl::StrCat("host ", attr.hostname);
  }
  std::shared_ptr<gloo::transport::Device> device;
  try {
    device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    ThrowError("init (gloo): rank ", rank, " of ", size, ": cannot listen on ", where, ": ",
               e.what());
  }
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->setTimeout(timeout);
  try {
    TimeoutStore bounded(store, timeout);
    context->connectFullMesh(bounded, device);
  } catch (const std::exception& e) {
    std::string missing = MissingRanks(store, rank, size, "rank_");
    if (missing.empty()) {
      missing = MissingRanks(store, rank, size, "");
    }
    if (!missing.empty()) {
      ThrowError("init (gloo): rank ", rank, " of ", size, ": peer rank(s) ", missing,
                 " did not join within ", timeout.count(), " ms (not started, crashed, or "
                 "using another store): ",
                 e.what());
    }
    ThrowError("init (gloo): rank ", rank, " of ", size, ": cannot connect to the peers on ",
               where, " within ", timeout.count(), " ms: ", e.what());
  }
  return std::make_shared<GlooProcessGroup>(Private{}, rank, size, timeout, std::move(device),
                                            std::move(context));
}

template <typename Body>
void GlooProcessGroup::Run(const char* op, const Body& body) {
  if (!broken_.empty()) {
    ThrowError(op, " (gloo): rank ", rank_, " of ", size_,
               ": the group is unusable after an earlier failure: ", broken_);
  }
  std::string cause;
  try {
    body();
    return;
  } catch (const std::exception& e) {
    // gloo::IoException (timeouts, closed connections), gloo::EnforceNotMet (a broken
    // invariant, e.g. a peer's message of the wrong size), std::bad_alloc.
    cause = Explain(e.what(), timeout_);
  }
  broken_ = absl::StrCat(op, ": ", cause);
  ThrowError(op, " (gloo): rank ", rank_, " of ", size_, ": ", cause);
}

void GlooProcessGroup::AllReduce(void* data, int64_t count, DType dtype, ReduceOp op) {
  CheckCount("AllReduce", count, data, "elements");
  CheckReduction("AllReduce (gloo)", dtype, op);
  if (count == 0) {
    return;
  }
  Run("AllReduce", [&] {
    VisitReduceType(dtype, [&](auto zero) {
      using T = decltype(zero);
      gloo::AllreduceOptions opts(context_);
      opts.setOutput(static_cast<T*>(data), static_cast<size_t>(count));
      // The ring: every block reduced in one fixed order, then copied to every rank.
      opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
      opts.setReduceFunction(op == ReduceOp::kSum ? &ReduceFn<T, ReduceOp::kSum>
                                                  : &ReduceFn<T, ReduceOp::kMax>);
      opts.setTag(NextTag());
      opts.setTimeout(timeout_);
      gloo::allreduce(opts);
    });
  });
}

void GlooProcessGroup::AllGather(const void* in, void* out, int64_t bytes) {
  CheckCount("AllGather", bytes, in, "bytes");
  CheckCount("AllGather", bytes, out, "bytes");
  if (bytes == 0) {
    return;
  }
  Run("AllGather", [&] {
    gloo::AllgatherOptions opts(context_);
    // Gloo reads the input only; its API takes a non-const pointer.
    opts.setInput(static_cast<char*>(const_cast<void*>(in)), static_cast<size_t>(bytes));
    opts.setOutput(static_cast<char*>(out), static_cast<size_t>(bytes) * size_);
    opts.setTag(NextTag());
    opts.setTimeout(timeout_);
    gloo::allgather(opts);
  });
}

void GlooProcessGroup::ReduceScatter(const void* in, void* out, int64_t count, DType dtype,
                                     ReduceOp op) {
  CheckCount("ReduceScatter", count, in, "elements");
  CheckCount("ReduceScatter", count, out, "elements");
  CheckReduction("ReduceScatter (gloo)", dtype, op);
  if (count == 0) {
    return;
  }
  const int64_t item = ItemSize(dtype);
  const int64_t total = count * size_;
  if (total > std::numeric_limits<int>::max()) {
    ThrowError("ReduceScatter (gloo): ", total, " elements in all; Gloo's reduce-scatter "
               "counts in int (at most ", std::numeric_limits<int>::max(), ")");
  }
  Run("ReduceScatter", [&] {
    VisitReduceType(dtype, [&](auto zero) {
      using T = decltype(zero);
      // Halving-doubling reduces in place over all size() blocks; `in` is const.
      std::vector<T> work(static_cast<size_t>(total));
      std::memcpy(work.data(), in, static_cast<size_t>(total * item));
      std::vector<int> blocks(static_cast<size_t>(size_), static_cast<int>(count));
      gloo::ReduceScatterHalvingDoubling<T> algorithm(
          context_, {work.data()}, static_cast<int>(total), blocks,
          op == ReduceOp::kSum ? SumFunction<T>() : MaxFunction<T>());
      algorithm.run();
      // The rank's block ends at the start of the buffer (Gloo's own test reads it there).
      std::memcpy(out, work.data(), static_cast<size_t>(count * item));
    });
  });
}

void GlooProcessGroup::Broadcast(void* data, int64_t bytes, int root) {
  CheckCount("Broadcast", bytes, data, "bytes");
  if (root < 0 || root >= size_) {
    ThrowError("Broadcast (gloo): root ", root, " is not a rank of the group [0, ", size_, ")");
  }
  if (bytes == 0) {
    return;
  }
  Run("Broadcast", [&] {
    gloo::BroadcastOptions opts(context_);
    opts.setOutput(static_cast<char*>(data), static_cast<size_t>(bytes));
    opts.setRoot(root);
    opts.setTag(NextTag());
    opts.setTimeout(timeout_);
    gloo::broadcast(opts);
  });
}

void GlooProcessGroup::Barrier() {
  Run("Barrier", [&] {
    gloo::BarrierOptions opts(context_);
    opts.setTag(NextTag());
    opts.setTimeout(timeout_);
    gloo::barrier(opts);
  });
}

std::shared_ptr<ProcessGroup> MakeGlooGroup(std::shared_ptr<gloo::rendezvous::Store> store,
                                            int rank, int size,
                                            std::chrono::milliseconds timeout,
                                            const GlooTransport& transport) {
  if (store == nullptr) {
    ThrowError("init (gloo): the store is null");
  }
  return GlooProcessGroup::Connect(*store, rank, size, timeout, transport);
}

}  // namespace ft::dist

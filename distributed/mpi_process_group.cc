#include "distributed/mpi_process_group.h"

#include <openmpi/mpi.h>  // Debian's path for Open MPI's mpi.h (//third_party:mpi)
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "distributed/file_store.h"
#include "distributed/reduce.h"
#include "tensor/error.h"

namespace ft::dist {
namespace {

// A group broke (a call timed out or failed) somewhere in this process: MPI_Finalize could
// wait forever for the collective left pending, so the exit handler leaves MPI as it is
// (mpirun then reports the job as failed, which it is).
std::atomic<bool> g_mpi_broken{false};

void FinalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && !g_mpi_broken.load()) {
    MPI_Finalize();
  }
}

std::string MpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    return absl::StrCat("MPI error ", code);
  }
  return std::string(text, static_cast<size_t>(length));
}

// EnsureMpi initializes MPI once per process unless the program did.
void EnsureMpi() {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    ThrowError("init (mpi): MPI was already finalized in this process");
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_SERIALIZED) {
      // Still usable when the program calls ft from the thread that initialized MPI only.
      int is_main = 0;
      MPI_Is_thread_main(&is_main);
      if (!is_main) {
        ThrowError("init (mpi): the program initialized MPI below MPI_THREAD_SERIALIZED and "
                   "this thread is not the one that did");
      }
    }
    return;
  }
  int provided = MPI_THREAD_SINGLE;
  int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (rc != MPI_SUCCESS) {
    ThrowError("init (mpi): MPI_Init_thread failed: ", MpiErrorString(rc));
  }
  std::atexit(FinalizeAtExit);
  if (provided < MPI_THREAD_SERIALIZED) {
    ThrowError("init (mpi): this MPI provides thread level ", provided,
               ", below MPI_THREAD_SERIALIZED");
  }
}

// NaN-propagating max for floats, the same value whichever operand comes first (Gloo's
// ReduceFn too), so the MPI and Gloo groups agree; MPI_MAX leaves NaN to the implementation.
template <typename T>
void MpiMaxNan(void* in, void* inout, int* len, MPI_Datatype*) {
  ReduceFn<T, ReduceOp::kMax>(inout, in, inout, static_cast<size_t>(*len));
}

MPI_Op FloatMaxOp(DType dtype) {
  static std::once_flag once;
  static MPI_Op float_max = MPI_OP_NULL;
  static MPI_Op double_max = MPI_OP_NULL;
  std::call_once(once, [] {
    MPI_Op_create(&MpiMaxNan<float>, /*commute=*/1, &float_max);
    MPI_Op_create(&MpiMaxNan<double>, /*commute=*/1, &double_max);
  });
  return dtype == DType::kFloat32 ? float_max : double_max;
}

MPI_Datatype MpiType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return MPI_FLOAT;
    case DType::kFloat64:
      return MPI_DOUBLE;
    case DType::kInt64:
      return MPI_INT64_T;
    case DType::kBool:
      return MPI_UINT8_T;
    default:
      break;
  }
  ThrowDTypeNotSupportedYet(dtype);
}

MPI_Op MpiOp(DType dtype, ReduceOp op) {
  if (op == ReduceOp::kSum) {
    return MPI_SUM;
  }
  return IsFloating(dtype) ? FloatMaxOp(dtype) : MPI_MAX;
}

class MpiProcessGroup final : public ProcessGroup {
 public:
  explicit MpiProcessGroup(std::chrono::milliseconds timeout) : timeout_(timeout) {
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    if (rc != MPI_SUCCESS) {
      ThrowError("init (mpi): MPI_Comm_dup of MPI_COMM_WORLD failed: ", MpiErrorString(rc));
    }
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiProcessGroup() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && broken_.empty()) {
      MPI_Comm_free(&comm_);
    }
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "mpi"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }

  void AllReduce(void* data, int64_t count, DType dtype, ReduceOp op) override {
    CheckReduction("AllReduce (mpi)", dtype, op);
    int n = CheckCount("AllReduce", count, data, "elements");
    if (n == 0) {
      return;
    }
    Start("AllReduce");
    MPI_Request request;
    Check("AllReduce", "MPI_Iallreduce",
          MPI_Iallreduce(MPI_IN_PLACE, data, n, MpiType(dtype), MpiOp(dtype, op), comm_,
                         &request));
    Wait("AllReduce", &request);
  }

  void AllGather(const void* in, void* out, int64_t bytes) override {
    int n = CheckCount("AllGather", bytes, in, "bytes");
    CheckCount("AllGather", bytes * size_, out, "bytes");
    if (n == 0) {
      return;
    }
    Start("AllGather");
    MPI_Request request;
    Check("AllGather", "MPI_Iallgather",
          MPI_Iallgather(in, n, MPI_BYTE, out, n, MPI_BYTE, comm_, &request));
    Wait("AllGather", &request);
  }

  void ReduceScatter(const void* in, void* out, int64_t count, DType dtype,
                     ReduceOp op) override {
    CheckReduction("ReduceScatter (mpi)", dtype, op);
    CheckCount("ReduceScatter", count * size_, in, "elements");
    int n = CheckCount("ReduceScatter", count, out, "elements");
    if (n == 0) {
      return;
    }
    Start("ReduceScatter");
    MPI_Request request;
    Check("ReduceScatter", "MPI_Ireduce_scatter_block",
          MPI_Ireduce_scatter_block(in, out, n, MpiType(dtype), MpiOp(dtype, op), comm_,
                                    &request));
    Wait("ReduceScatter", &request);
  }

  void Broadcast(void* data, int64_t bytes, int root) override {
    int n = CheckCount("Broadcast", bytes, data, "bytes");
    if (root < 0 || root >= size_) {
      ThrowError("Broadcast (mpi): root ", root, " is not a rank of the group [0, ", size_, ")");
    }
    if (n == 0) {
      return;
    }
    Start("Broadcast");
    MPI_Request request;
    Check("Broadcast", "MPI_Ibcast", MPI_Ibcast(data, n, MPI_BYTE, root, comm_, &request));
    Wait("Broadcast", &request);
  }

  void Barrier() override {
    Start("Barrier");
    MPI_Request request;
    Check("Barrier", "MPI_Ibarrier", MPI_Ibarrier(comm_, &request));
    Wait("Barrier", &request);
  }

 private:
  // CheckCount: count as MPI's int, or ft::Error.
  int CheckCount(const char* op, int64_t count, const void* ptr, const char* what) const {
    if (count < 0) {
      ThrowError(op, " (mpi): ", what, " must be >= 0, got ", count);
    }
    if (count > std::numeric_limits<int>::max()) {
      ThrowError(op, " (mpi): ", count, " ", what, " in one call; MPI counts in int (at most ",
                 std::numeric_limits<int>::max(), ")");
    }
    if (count > 0 && ptr == nullptr) {
      ThrowError(op, " (mpi): null buffer for ", count, " ", what);
    }
    return static_cast<int>(count);
  }

  void Start(const char* op) const {
    if (!broken_.empty()) {
      ThrowError(op, " (mpi): rank ", rank_, " of ", size_,
                 ": the group is unusable after an earlier failure: ", broken_);
    }
  }

  [[noreturn]] void Fail(const char* op, const std::string& cause) {
    broken_ = absl::StrCat(op, ": ", cause);
    g_mpi_broken.store(true);
    ThrowError(op, " (mpi): rank ", rank_, " of ", size_, ": ", cause);
  }

  void Check(const char* op, const char* call, int rc) {
    if (rc != MPI_SUCCESS) {
      Fail(op, absl::StrCat(call, " failed: ", MpiErrorString(rc)));
    }
  }

  // Wait polls `request` until it completes, or throws once the timeout passed. It spins
  // for the first 100 µs (small collectives finish there), then sleeps 50 µs between tests.
  void Wait(const char* op, MPI_Request* request) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    const Clock::time_point deadline = start + timeout_;
    for (int64_t polls = 0;; ++polls) {
      int done = 0;
      Check(op, "MPI_Test", MPI_Test(request, &done, MPI_STATUS_IGNORE));
      if (done) {
        return;
      }
      if (polls % 64 == 0) {
        Clock::time_point now = Clock::now();
        if (now >= deadline) {
          Fail(op, absl::StrCat("timed out after ", timeout_.count(),
                                " ms waiting for a peer (one stalled, died or called another "
                                "collective)"));
        }
        if (now - start > std::chrono::microseconds(100)) {
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
      }
    }
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::chrono::milliseconds timeout_;
  std::string broken_;
};

// AllSame: whether every rank passed the same string (MPI_Allgather of fixed-size buffers);
// `all` gets the distinct values, for the message.
bool AllSame(const std::string& mine, int size, std::string* all) {
  constexpr int kWidth = 256;
  std::vector<char> send(kWidth, '\0');
  std::memcpy(send.data(), mine.data(), std::min<size_t>(mine.size(), kWidth - 1));
  std::vector<char> recv(static_cast<size_t>(kWidth) * size);
  MPI_Allgather(send.data(), kWidth, MPI_CHAR, recv.data(), kWidth, MPI_CHAR, MPI_COMM_WORLD);
  bool same = true;
  for (int r = 0; r < size; ++r) {
    std::string value(recv.data() + static_cast<size_t>(r) * kWidth);
    if (all->find(value) == std::string::npos) {
      absl::StrAppend(all, all->empty() ? "" : ", ", value);
    }
    same = same && value == mine;
  }
  return same;
}

}  // namespace

std::shared_ptr<ProcessGroup> MakeMpiGroup(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) {
    ThrowError("init (mpi): the timeout must be > 0 ms, got ", timeout.count());
  }
  EnsureMpi();
  return std::make_shared<MpiProcessGroup>(timeout);
}

std::shared_ptr<ProcessGroup> MakeGlooGroupFromMpi(std::chrono::milliseconds timeout,
                                                   const GlooTransport& transport,
                                                   const std::string& shared_dir) {
  if (timeout.count() <= 0) {
    ThrowError("init (gloo from mpi): the timeout must be > 0 ms, got ", timeout.count());
  }
  EnsureMpi();
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  // Where the ranks can meet: one host needs nothing shared; several need a shared directory
  // and an address the others can reach. Every rank decides the same (same inputs).
  char host[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int host_length = 0;
  MPI_Get_processor_name(host, &host_length);
  std::string hosts;
  const bool one_host = AllSame(std::string(host), size, &hosts);
  if (!one_host && shared_dir.empty()) {
    ThrowError("init (gloo from mpi): the ranks run on several hosts (", hosts,
               "); set FT_STORE=file:DIR to a directory every host sees");
  }
  if (!one_host && transport.hostname.empty() && transport.iface.empty()) {
    ThrowError("init (gloo from mpi): the ranks run on several hosts (", hosts,
               "); set FT_GLOO_IFACE or FT_GLOO_HOSTNAME to an address the others can reach");
  }

  // Rank 0 makes a fresh directory (no stale keys of an earlier run) and tells the others.
  constexpr int kPathMax = 4096;
  std::vector<char> path(kPathMax, '\0');
  int mkdtemp_errno = 0;
  if (rank == 0) {
    std::string base = shared_dir;
    if (base.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      base = tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp";
    }
    std::string pattern = base + "/ft-gloo-store-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (buffer.size() <= static_cast<size_t>(kPathMax) && mkdtemp(buffer.data()) != nullptr) {
      std::memcpy(path.data(), buffer.data(), buffer.size());
    } else {
      mkdtemp_errno = buffer.size() > static_cast<size_t>(kPathMax) ? ENAMETOOLONG : errno;
    }
    // An empty path tells the others that rank 0 failed; it says why below.
  }
  MPI_Bcast(path.data(), kPathMax, MPI_CHAR, 0, MPI_COMM_WORLD);
  const std::string dir(path.data());
  if (dir.empty()) {
    ThrowError("init (gloo from mpi): rank 0 could not make a store directory under ",
               shared_dir.empty() ? "TMPDIR (or /tmp)" : shared_dir, ": ",
               rank == 0 ? std::strerror(mkdtemp_errno) : "see rank 0's error");
  }

  std::shared_ptr<ProcessGroup> group;
  std::string error;
  try {
    PollingFileStore store(dir);
    group = GlooProcessGroup::Connect(store, rank, size, timeout, transport);
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Every rank gets here within the timeout; then the directory is no longer needed.
  int ok = error.empty() ? 1 : 0;
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  if (!error.empty()) {
    throw Error(error);
  }
  if (!all_ok) {
    ThrowError("init (gloo from mpi): rank ", rank, " of ", size,
               ": another rank could not connect (see its error)");
  }
  return group;
}

}  // namespace ft::dist

#include "distributed/process_group.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "distributed/file_store.h"
#include "distributed/gloo_process_group.h"
#include "distributed/mpi_process_group.h"
#include "tensor/error.h"

namespace ft::dist {
namespace {

constexpr const char* kOp = "init_process_group";

std::optional<std::string> Env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) {
    return std::nullopt;
  }
  return std::string(value);
}

// ParseInt: the variable's value as an integer in [lo, hi], or ft::Error naming it.
int64_t ParseInt(const char* name, const std::string& value, int64_t lo, int64_t hi) {
  errno = 0;
  char* end = nullptr;
  long long parsed = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE || parsed < lo ||
      parsed > hi) {
    ThrowError(kOp, ": ", name, "='", value, "' must be an integer in [", lo, ", ", hi, "]");
  }
  return parsed;
}

std::chrono::milliseconds Timeout() {
  std::optional<std::string> value = Env("FT_DIST_TIMEOUT_MS");
  if (!value) {
    return std::chrono::milliseconds(30000);
  }
  // At most a day: a longer wait is a hang by another name.
  return std::chrono::milliseconds(ParseInt("FT_DIST_TIMEOUT_MS", *value, 1, 86400000));
}

GlooTransport Transport() {
  GlooTransport transport;
  transport.iface = Env("FT_GLOO_IFACE").value_or("");
  transport.hostname = Env("FT_GLOO_HOSTNAME").value_or("");
  if (!transport.iface.empty() && !transport.hostname.empty()) {
    ThrowError(kOp, ": set FT_GLOO_IFACE (", transport.iface, ") or FT_GLOO_HOSTNAME (",
               transport.hostname, "), not both");
  }
  return transport;
}

// StoreDir: the directory of FT_STORE=file:DIR, which must exist.
std::string StoreDir(const std::string& value) {
  const std::string prefix = "file:";
  if (value.compare(0, prefix.size(), prefix) != 0 || value.size() == prefix.size()) {
    ThrowError(kOp, ": FT_STORE='", value,
               "' must be file:DIR, a directory every process sees (no other store is "
               "supported)");
  }
  std::string dir = value.substr(prefix.size());
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    ThrowError(kOp, ": FT_STORE='", value, "': ", dir, " is not a directory",
               error ? absl::StrCat(" (", error.message(), ")") : std::string());
  }
  return dir;
}

// The rank variables of the launchers ft knows, with their world sizes, in the order they
// are believed: Open MPI's mpirun, then PMIx, PMI (MPICH, Intel MPI), Slurm's srun.
struct MpiEnv {
  const char* rank;
  const char* size;
};
constexpr MpiEnv kMpiEnvs[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMIX_RANK", nullptr},  // PMIx names no world size; MPI tells it
    {"PMI_RANK", "PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS"},
};

}  // namespace

std::shared_ptr<ProcessGroup> init_process_group() {
  const std::chrono::milliseconds timeout = Timeout();
  const GlooTransport transport = Transport();
  const std::string backend = Env("FT_BACKEND").value_or("");
  if (!backend.empty() && backend != "gloo" && backend != "mpi") {
    ThrowError(kOp, ": FT_BACKEND='", backend, "' must be gloo or mpi");
  }
  std::optional<std::string> rank = Env("FT_RANK");
  std::optional<std::string> size = Env("FT_WORLD_SIZE");
  std::optional<std::string> store = Env("FT_STORE");

  // ft_launch's (or the user's) FT_RANK, FT_WORLD_SIZE, FT_STORE: Gloo over a FileStore.
  if (rank || size) {
    if (!rank || !size || !store) {
      ThrowError(kOp, ": FT_RANK, FT_WORLD_SIZE and FT_STORE go together; missing ",
                 !rank ? "FT_RANK" : !size ? "FT_WORLD_SIZE" : "FT_STORE");
    }
    if (backend == "mpi") {
      ThrowError(kOp, ": FT_BACKEND=mpi needs mpirun or srun; FT_RANK, FT_WORLD_SIZE and "
                 "FT_STORE make a gloo group");
    }
    const int world = static_cast<int>(
        ParseInt("FT_WORLD_SIZE", *size, 1, std::numeric_limits<int>::max()));
    const int me = static_cast<int>(ParseInt("FT_RANK", *rank, 0, world - 1));
    const std::string dir = StoreDir(*store);
    std::shared_ptr<gloo::rendezvous::Store> file_store;
    try {
      file_store = std::make_shared<PollingFileStore>(dir);
    } catch (const std::exception& e) {
      ThrowError(kOp, ": FT_STORE='", *store, "' cannot be used: ", e.what());
    }
    return MakeGlooGroup(file_store, me, world, timeout, transport);
  }

  // mpirun or srun: MPI, or Gloo with MPI as its rendezvous.
  for (const MpiEnv& env : kMpiEnvs) {
    std::optional<std::string> mpi_rank = Env(env.rank);
    if (!mpi_rank) {
      continue;
    }
    int world = std::numeric_limits<int>::max();
    if (env.size != nullptr) {
      if (std::optional<std::string> mpi_size = Env(env.size)) {
        world = static_cast<int>(
            ParseInt(env.size, *mpi_size, 1, std::numeric_limits<int>::max()));
      }
    }
    const int me = static_cast<int>(ParseInt(env.rank, *mpi_rank, 0, world - 1));
    std::shared_ptr<ProcessGroup> group;
    if (backend == "gloo") {
      group = MakeGlooGroupFromMpi(timeout, transport,
                                   store ? StoreDir(*store) : std::string());
    } else {
      group = MakeMpiGroup(timeout);
    }
    // MPI's own numbering must be the launcher's: else the variable belongs to another job
    // (a process started from inside an MPI program, say).
    if (group->rank() != me) {
      ThrowError(kOp, ": ", env.rank, "=", me, " but MPI made this process rank ",
                 group->rank(), " of ", group->size());
    }
    return group;
  }
  ThrowError(kOp, ": no process group in the environment: start the program with "
             "`ft_launch -n N` (which sets FT_RANK, FT_WORLD_SIZE and FT_STORE=file:DIR), "
             "or under mpirun or srun");
}

}  // namespace ft::dist

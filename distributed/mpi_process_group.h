// ft/distributed/mpi_process_group.h
//
// The groups of a program started by mpirun or srun: MakeMpiGroup, a ProcessGroup whose calls
// are MPI's collectives (Open MPI), and MakeGlooGroupFromMpi, a Gloo group whose ranks found
// each other through MPI (Debian's Gloo is built without its own MPI rendezvous).
//
// Both initialize MPI (MPI_Init_thread, MPI_THREAD_SERIALIZED: the group may be used from a
// thread other than main, one at a time) when the program has not, and then finalize it when
// the program exits; a program that initialized MPI itself finalizes it itself.
//
// Invariants:
//   - The MPI group works on a duplicate of MPI_COMM_WORLD (its messages never meet the
//     program's own) whose error handler returns: a failing MPI call is an ft::Error naming
//     the call, the rank and MPI's error string, not an abort.
//   - Timeouts: each call is MPI's non-blocking collective (MPI_Iallreduce, ...) polled until
//     it completes or the group's timeout passes, which throws ft::Error (the group is then
//     unusable: MPI cannot cancel a collective). Under mpirun a process that dies makes
//     mpirun end the whole job.
//   - AllReduce: float max propagates NaN (an MPI operator of ft's, commutative); sums and
//     int64/bool max are MPI's built-in MPI_SUM and MPI_MAX, whose results are the same on
//     every rank; counts above INT_MAX elements (or bytes) are an ft::Error (MPI counts in int).
//   - MakeGlooGroupFromMpi meets through a Gloo FileStore in a fresh directory that rank 0
//     makes and MPI_Bcast names, and that rank 0 removes once every rank connected (or
//     failed): under TMPDIR (or /tmp) when every rank is on one host, else under
//     `shared_dir`, a directory every host sees (FT_STORE=file:DIR), with a transport that
//     other hosts can reach (FT_GLOO_IFACE or FT_GLOO_HOSTNAME). Anything else is an
//     ft::Error saying which variable to set.
//
// Example (under `mpirun -np 2 prog`; init_process_group() makes these from the environment):
//   std::shared_ptr<ft::dist::ProcessGroup> g =
//       ft::dist::MakeMpiGroup(std::chrono::milliseconds(30000));
//   int64_t v = g->rank();
//   g->AllReduce(&v, 1, ft::kInt64, ft::dist::ReduceOp::kMax);   // v == 1 on both
#ifndef FT_DISTRIBUTED_MPI_PROCESS_GROUP_H_
#define FT_DISTRIBUTED_MPI_PROCESS_GROUP_H_

#include <chrono>
#include <memory>
#include <string>

#include "distributed/gloo_process_group.h"
#include "distributed/process_group.h"

namespace ft::dist {

// MakeMpiGroup: every process of MPI_COMM_WORLD, with backend() "mpi".
std::shared_ptr<ProcessGroup> MakeMpiGroup(std::chrono::milliseconds timeout);

// MakeGlooGroupFromMpi: every process of MPI_COMM_WORLD (same ranks), with backend() "gloo".
// shared_dir: empty, or a directory every rank sees (needed when the ranks are on several
// hosts).
std::shared_ptr<ProcessGroup> MakeGlooGroupFromMpi(std::chrono::milliseconds timeout,
                                                   const GlooTransport& transport = {},
                                                   const std::string& shared_dir = "");

}  // namespace ft::dist

#endif  // FT_DISTRIBUTED_MPI_PROCESS_GROUP_H_

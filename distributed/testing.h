// ft/distributed/testing.h  (testonly)
//
// RunOnThreads: a process group whose ranks are threads of the test, for unit tests of the
// engines and of the collectives above them without starting processes. Each thread has its
// own Gloo group (its own TCP device on 127.0.0.1), met through one in-memory HashStore, so
// the bytes go through the same transport as between processes.
//
// Invariants:
//   - fn runs once on each of `size` threads, with the group of rank 0, 1, ... size-1; every
//     thread is joined before RunOnThreads returns, whatever happened.
//   - The first exception any thread threw (in time) is rethrown after all threads ended; a
//     thread whose group could not connect reports that as its exception.
//   - The groups are destroyed only after every thread ended: a rank that returns early or
//     skips a collective is, to its peers, a stalled process (they time out), not a dead one.
//   - Each collective is bounded by `timeout`, so a test whose ranks disagree fails (throws)
//     instead of hanging.
//
// Example:
//   ft::dist::testing::RunOnThreads(3, [](ft::dist::ProcessGroup& g) {
//     double v = g.rank();
//     g.AllReduce(&v, 1, ft::kFloat64, ft::dist::ReduceOp::kSum);
//     EXPECT_EQ(v, 3.0);
//   });
#ifndef FT_DISTRIBUTED_TESTING_H_
#define FT_DISTRIBUTED_TESTING_H_

#include <chrono>
#include <functional>

#include "distributed/process_group.h"

namespace ft::dist::testing {

void RunOnThreads(int size, const std::function<void(ProcessGroup& group)>& fn,
                  std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

}  // namespace ft::dist::testing

#endif  // FT_DISTRIBUTED_TESTING_H_

#include "distributed/testing.h"

#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "distributed/gloo_process_group.h"
#include "gloo/rendezvous/hash_store.h"
#include "tensor/error.h"

namespace ft::dist::testing {

void RunOnThreads(int size, const std::function<void(ProcessGroup& group)>& fn,
                  std::chrono::milliseconds timeout) {
  if (size < 1) {
    ThrowError("RunOnThreads: size must be >= 1, got ", size);
  }
  auto store = std::make_shared<gloo::rendezvous::HashStore>();
  std::mutex mu;
  std::exception_ptr first;
  // The groups outlive every thread's fn: a rank that finished early must not close its
  // connections under a peer still reading its last bytes, and a rank that skipped a
  // collective looks to its peers like a stalled process (a timeout), not a dead one.
  std::vector<std::shared_ptr<ProcessGroup>> groups(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        groups[static_cast<size_t>(rank)] = MakeGlooGroup(store, rank, size, timeout);
        fn(*groups[static_cast<size_t>(rank)]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (first == nullptr) {
          first = std::current_exception();
        }
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  groups.clear();
  if (first != nullptr) {
    std::rethrow_exception(first);
  }
}

}  // namespace ft::dist::testing

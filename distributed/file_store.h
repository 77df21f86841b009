// ft/distributed/file_store.h  (private to //distributed:process_group)
//
// PollingFileStore: Gloo's FileStore (one file per key in a directory every process sees),
// whose wait looks for the keys every 10 ms. Gloo's own wait sleeps a whole second between
// looks, so a timeout of 300 ms would last a second, and every rank would join up to a second
// late.
//
// Example:
//   auto store = std::make_shared<PollingFileStore>("/tmp/ft-store-x1y2");
//   store->wait({"0"}, std::chrono::milliseconds(300));   // throws gloo::IoException after
//                                                          // about 300 ms without the key
#ifndef FT_DISTRIBUTED_FILE_STORE_H_
#define FT_DISTRIBUTED_FILE_STORE_H_

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gloo/common/error.h"
#include "gloo/rendezvous/file_store.h"

namespace ft::dist {

class PollingFileStore final : public gloo::rendezvous::FileStore {
 public:
  explicit PollingFileStore(const std::string& path) : FileStore(path) {}

  void wait(const std::vector<std::string>& keys) override { wait(keys, kDefaultTimeout); }

  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!check(keys)) {
      if (std::chrono::steady_clock::now() >= deadline) {
        std::string names;
        for (const std::string& key : keys) {
          names += (names.empty() ? "" : ", ") + key;
        }
        throw gloo::IoException("Wait timeout for key(s): " + names);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
};

}  // namespace ft::dist

#endif  // FT_DISTRIBUTED_FILE_STORE_H_

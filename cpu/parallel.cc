#include "cpu/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "tensor/error.h"

namespace ft {
namespace {

int DefaultThreads() {
  if (const char* env = std::getenv("FT_NUM_THREADS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (*end == '\0' && v >= 1 && v <= 1024) return static_cast<int>(v);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(std::min(hw, 1024u));
}

std::atomic<int>& NumThreads() {
  static std::atomic<int> n{DefaultThreads()};
  return n;
}

constinit thread_local bool tls_in_parallel = false;

// ChunkRunner runs one chunk of the current job (a FunctionRef, valid for the job's time).
using ChunkRunner = absl::FunctionRef<void(int64_t)>;

// Pool: the workers and the one job they share. A job is published under mu_ with a new
// generation; a worker takes part by registering (active_) under mu_, reading the job there,
// then claiming chunk indices from next_chunk_ until none is left. The caller claims chunks
// too, and returns only when every chunk ran and no worker is still registered, so a
// worker never reads a job after its caller returned.
class Pool {
 public:
  // Run runs chunk_fn(i) for i in [0, chunks) with `threads` - 1 workers and the caller.
  // Inline when another thread is using the pool.
  void Run(int64_t chunks, int threads, ChunkRunner chunk_fn) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) {
      RunInline(chunks, chunk_fn);
      return;
    }
    Resize(threads - 1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &chunk_fn;
      job_chunks_ = chunks;
      remaining_ = chunks;
      next_chunk_.store(0, std::memory_order_relaxed);
      error_ = nullptr;
      ++generation_;
      published_.store(generation_, std::memory_order_release);
    }
    work_cv_.notify_all();
    const int64_t mine = Claim(chunk_fn, chunks);
    std::exception_ptr error;
    {
      std::unique_lock<std::mutex> lock(mu_);
      remaining_ -= mine;
      if (remaining_ != 0 || active_ != 0) {
        // The workers' chunks are about as long as ours: wait for them spinning a little
        // before sleeping (a futex wake-up costs tens of microseconds on a VM).
        lock.unlock();
        SpinUntil([this] { return finished_.load(std::memory_order_acquire) == published(); });
        lock.lock();
      }
      done_cv_.wait(lock, [this] { return remaining_ == 0 && active_ == 0; });
      job_ = nullptr;
      error = error_;
      error_ = nullptr;
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  static void RunInline(int64_t chunks, ChunkRunner chunk_fn) {
    const bool outer = tls_in_parallel;
    tls_in_parallel = true;
    struct Restore {
      bool value;
      ~Restore() { tls_in_parallel = value; }
    } restore{outer};
    for (int64_t i = 0; i < chunks; ++i) chunk_fn(i);
  }

  // Claim runs chunks of the current job until none is left; returns how many it ran. An
  // exception is kept (the first one) and the chunk counts as run.
  int64_t Claim(ChunkRunner chunk_fn, int64_t chunks) {
    tls_in_parallel = true;
    int64_t ran = 0;
    for (;;) {
      const int64_t i = next_chunk_.fetch_add(1, std::memory_order_relaxed);
      if (i >= chunks) break;
      try {
        chunk_fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!error_) error_ = std::current_exception();
      }
      ++ran;
    }
    tls_in_parallel = false;
    return ran;
  }

  // SpinUntil polls `done` for up to kSpinIterations pauses (~50 us); true when it held.
  template <typename Done>
  static bool SpinUntil(Done&& done) {
    for (int i = 0; i < kSpinIterations; ++i) {
      if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    return done();
  }

  uint64_t published() const { return published_.load(std::memory_order_acquire); }

  void WorkerLoop() {
    uint64_t seen = 0;
    for (;;) {
      ChunkRunner* job;
      int64_t chunks;
      // A worker that just finished a job spins briefly for the next one: ops come in
      // sequences, and a sleeping worker takes tens of microseconds to wake.
      SpinUntil([&] { return published() != seen; });
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        if (job_ == nullptr) continue;  // that job is over already
        job = job_;
        chunks = job_chunks_;
        ++active_;
      }
      const int64_t ran = Claim(*job, chunks);
      {
        std::lock_guard<std::mutex> lock(mu_);
        --active_;
        remaining_ -= ran;
        if (remaining_ == 0 && active_ == 0) finished_.store(seen, std::memory_order_release);
      }
      done_cv_.notify_all();
    }
  }

  // Resize keeps `workers` worker threads (busy_ held, no job running).
  void Resize(int workers) {
    workers = std::max(workers, 0);
    if (static_cast<int>(threads_.size()) == workers) return;
    if (static_cast<int>(threads_.size()) > workers) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
      }
      work_cv_.notify_all();
      for (std::thread& t : threads_) t.join();
      threads_.clear();
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = false;
    }
    while (static_cast<int>(threads_.size()) < workers) {
      threads_.emplace_back([this] { WorkerLoop(); });
    }
  }

  std::mutex busy_;  // held by the one ParallelFor using the pool
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::vector<std::thread> threads_;
  ChunkRunner* job_ = nullptr;
  int64_t job_chunks_ = 0;
  int64_t remaining_ = 0;  // chunks not yet run
  int active_ = 0;         // workers registered for the current job
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::atomic<int64_t> next_chunk_{0};
  // For spinning without mu_: the generation of the job last published, and of the last job
  // whose chunks all ran with no worker registered (set by the worker that finished last).
  std::atomic<uint64_t> published_{0};
  std::atomic<uint64_t> finished_{0};
  static constexpr int kSpinIterations = 2000;
};

// Never destroyed: workers blocked in a wait at process exit are simply ended with it.
Pool& ThePool() {
  static auto* pool = new Pool();
  return *pool;
}

}  // namespace

int GetNumThreads() { return NumThreads().load(std::memory_order_relaxed); }

void SetNumThreads(int n) {
  if (n < 1) ThrowError("SetNumThreads: the thread count must be >= 1, got ", n);
  NumThreads().store(n, std::memory_order_relaxed);
}

namespace internal {

bool InParallelRegion() { return tls_in_parallel; }

int64_t ParallelChunks(int64_t n, int64_t grain) {
  const int threads = GetNumThreads();
  if (threads <= 1 || tls_in_parallel || n < 2 * grain) return 1;
  return std::min<int64_t>(threads, n / grain);
}

int64_t ChunkBegin(int64_t n, int64_t chunks, int64_t align, int64_t phase, int64_t i) {
  if (i <= 0) return 0;
  if (i >= chunks) return n;
  // An even share, moved down to the nearest item where (item + phase) % align == 0; never
  // below the previous boundary's share (shares are >= grain >= align apart).
  const int64_t even = n / chunks * i + n % chunks * i / chunks;  // n * i / chunks, no overflow
  const int64_t down = even - (((even + phase) % align) + align) % align;
  return std::max<int64_t>(down, 0);
}

int64_t AlignmentPhase(const void* data, int64_t item_bytes) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(data) % 64) / item_bytes;
}

void ParallelForChunks(int64_t n, int64_t chunks, int64_t align, int64_t phase,
                       absl::FunctionRef<void(int64_t, int64_t, int64_t)> fn) {
  auto run = [&](int64_t i) {
    fn(i, ChunkBegin(n, chunks, align, phase, i), ChunkBegin(n, chunks, align, phase, i + 1));
  };
  if (chunks <= 1) {
    if (n > 0) fn(0, 0, n);
    return;
  }
  // The pool keeps GetNumThreads() - 1 workers whatever this call's chunk count (resizing
  // per call would start and join threads); extra workers find no chunk and wait again.
  ThePool().Run(chunks, GetNumThreads(), run);
}

void ParallelFor(int64_t n, int64_t grain, int64_t align, int64_t phase,
                 absl::FunctionRef<void(int64_t, int64_t)> fn) {
  ParallelForChunks(n, ParallelChunks(n, grain), align, phase,
                    [&](int64_t, int64_t begin, int64_t end) { fn(begin, end); });
}

}  // namespace internal
}  // namespace ft

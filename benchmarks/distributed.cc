// ft/benchmarks/distributed.cc  (testonly)
//
// ft::psum across processes against the engine's own call, side by side in the same run.
// One rank of a group started by ft_launch (2 local processes, Gloo over TCP on loopback):
//   ./bazelw build -c opt //benchmarks:distributed //distributed:ft_launch
//   .bazel/bin/distributed/ft_launch -n 2 .bazel/bin/benchmarks/distributed
// Flags: --rounds=N (default 31), --only=SIZE (one size: 1float, 1KiB, 64KiB or 4MiB).
// Targets (issue "distributed"): psum of a 4 MiB float32 tensor between 2 local processes
// <= 1.1x a direct Gloo allreduce of the same buffer; psum of 1 float <= 1.5x the direct call.
//
// For each size (1 float, 1 KiB, 64 KiB, 4 MiB of float32) these variants run:
//   direct     gloo::allreduce (ring, sum) called on the group's gloo::Context with tags of
//              our own, out of place like psum: input x (kept), output a buffer allocated
//              once, outside the timing (a favour to the direct call); the like-for-like
//              baseline of psum, which keeps its input and returns a new tensor. Its
//              reduction is Gloo's gloo::sum<float>; ProcessGroup::AllReduce uses ft's own
//              (distributed/reduce.h), so "engine" is the baseline with ft's reduction;
//   direct ip  the same call in place on a preallocated buffer (setOutput only): the least
//              a caller who may overwrite its input pays;
//   engine     ProcessGroup::AllReduce in place on a preallocated buffer: the engine call
//              that psum makes for a payload over 256 bytes;
//   psum       ft::psum(x, "dp") with the group bound as axis "dp" (a new tensor per call);
//   record     ProcessGroup::AllGather of 368 bytes: the fixed-size record (header + small
//              payload) every psum gathers first, i.e. the round trip psum adds to the engine;
//   copy       kernels::clone(x) alone (no communication): the copy psum makes of its input
//              before the in-place engine call (payloads over 256 bytes);
//   steps      psum's engine calls written out by hand: record, copy, engine on the copy
//              (for payloads over 256 bytes; at 1 float psum makes only the record).
// psum ~ steps ~ record + copy + engine (+ dispatch): the columns say where psum's time goes.
// The values are checked once before timing: psum, direct and engine agree bit for bit.
//
// Why not Google Benchmark: its iteration count adapts per process, and each rank would make
// a different number of collectives (a deadlock), and its random interleaving is seeded per
// process. Here every rank runs the same fixed schedule in lockstep: `rounds` rounds, each
// timing a batch of `calls` calls of every variant after a barrier, the variants' order
// rotating from round to round (interleaving cancels the machine's slow drifts). Every call
// is timed; a call's time is the slowest rank's (an all-reduce of max over the ranks at the
// end). The first table gives each variant's median over all its calls: on a small shared
// machine a few calls stall for milliseconds (the scheduler; Gloo's device threads), and the
// median of the calls leaves them out. The second table gives the ratios of those medians
// and, for psum / direct, the median over the rounds of the ratio of the batches' mean times
// ("batch means", stalls included). Only rank 0 prints.
//
// FT_BENCH_SMOKE=1 (the smoke test): 2 rounds of 1 call each, only to prove it runs.
// Exit codes: 0; 2 usage; 3 an ft::Error or a Gloo exception; 5 wrong values.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distributed/collectives.h"
#include "distributed/gloo_process_group.h"
#include "distributed/process_group.h"
#include "gloo/allreduce.h"
#include "gloo/context.h"
#include "gloo/math.h"
#include "tensor/copy.h"
#include "tensor/error.h"
#include "tensor/factories.h"
#include "tensor/tensor.h"

namespace ft::bench {
namespace {

using Clock = std::chrono::steady_clock;
using dist::ProcessGroup;
using dist::ReduceOp;

// Tags of the direct Gloo calls: the group's own count up from 1.
constexpr uint32_t kDirectTagBase = 0x80000000u;
// The record every process collective gathers first (distributed/collectives.cc: a 112-byte
// header and a 256-byte small payload).
constexpr int64_t kRecordBytes = 112 + 256;

struct Size {
  const char* label;
  int64_t elements;  // float32
  int calls;         // per timed batch (opt): a batch takes some 20-40 ms
  const char* target;
};

constexpr Size kSizes[] = {
    {"1 float", 1, 200, "<= 1.5x"},
    {"1 KiB", 256, 200, "-"},
    {"64 KiB", 16384, 50, "-"},
    {"4 MiB", 1 << 20, 8, "<= 1.1x"},
};

enum Variant { kDirect, kDirectInPlace, kEngine, kPsum, kRecord, kCopy, kSteps, kVariants };

bool SmokeTest() { return std::getenv("FT_BENCH_SMOKE") != nullptr; }

// DirectAllreduce: gloo::allreduce, ring, sum, on the group's context; out of place from `in`
// to `out`, or in place on `out` when `in` is null.
class DirectAllreduce {
 public:
  explicit DirectAllreduce(const dist::GlooProcessGroup& group)
      : context_(group.context()), timeout_(group.timeout()) {}

  void operator()(float* in, float* out, int64_t count) {
    gloo::AllreduceOptions opts(context_);
    if (in != nullptr) opts.setInput(in, static_cast<size_t>(count));
    opts.setOutput(out, static_cast<size_t>(count));
    opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    opts.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    opts.setTag(next_tag_++);
    opts.setTimeout(timeout_);
    gloo::allreduce(opts);
  }

 private:
  std::shared_ptr<gloo::Context> context_;
  std::chrono::milliseconds timeout_;
  uint32_t next_tag_ = kDirectTagBase;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string Human(double ns) {
  char buf[32];
  if (ns < 1e3) {
    std::snprintf(buf, sizeof(buf), "%.3g ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buf, sizeof(buf), "%.3g us", ns / 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3g ms", ns / 1e6);
  }
  return buf;
}

// Inputs: x[i] = (rank + 1) * (i % 13), whose sums over the ranks are exact in float32.
float Input(int rank, int64_t i) { return static_cast<float>((rank + 1) * (i % 13)); }

// Check runs each variant once on `x` and compares with the closed form; false on a mismatch
// (printed by the rank that sees it).
bool Check(ProcessGroup& g, DirectAllreduce& direct, const Tensor& x, const char* label) {
  const int64_t n = x.numel();
  const int p = g.size();
  std::vector<float> by_direct(static_cast<size_t>(n));
  direct(x.data<float>(), by_direct.data(), n);
  std::vector<float> by_engine(x.data<float>(), x.data<float>() + n);
  g.AllReduce(by_engine.data(), n, kFloat32, ReduceOp::kSum);
  const Tensor y = psum(x, "dp");
  const float* by_psum = y.data<float>();
  bool ok = y.numel() == n;
  for (int64_t i = 0; ok && i < n; ++i) {
    const float want = static_cast<float>(p * (p + 1) / 2 * (i % 13));
    ok = by_direct[i] == want && by_engine[i] == want && by_psum[i] == want;
    if (!ok) {
      std::fprintf(stderr, "rank %d: WRONG at %s element %lld: direct %g engine %g psum %g, "
                   "want %g\n", g.rank(), label, static_cast<long long>(i), by_direct[i],
                   by_engine[i], by_psum[i], want);
    }
  }
  return ok;
}

struct Result {
  // each[v]: every timed call of variant v (the slowest rank's time), in nanoseconds.
  std::vector<double> each[kVariants];
  // batch[v][round]: the mean time per call of variant v's batch in that round (the slowest
  // rank's), stalls included.
  std::vector<double> batch[kVariants];
};

Result Measure(ProcessGroup& g, DirectAllreduce& direct, const Tensor& x, int rounds,
               int calls) {
  const int64_t n = x.numel();
  std::vector<float> out(static_cast<size_t>(n));
  std::vector<float> in_place(static_cast<size_t>(n), 0.0f);
  std::vector<float> engine_buf(static_cast<size_t>(n), 0.0f);
  std::vector<char> record(kRecordBytes, 1);
  std::vector<char> records(static_cast<size_t>(kRecordBytes * g.size()));
  const std::function<void()> call[kVariants] = {
      [&] { direct(x.data<float>(), out.data(), n); },
      [&] { direct(nullptr, in_place.data(), n); },
      [&] { g.AllReduce(engine_buf.data(), n, kFloat32, ReduceOp::kSum); },
      [&] {
        Tensor y = psum(x, "dp");
        if (y.numel() != n) ThrowError("psum: wrong size");
      },
      [&] { g.AllGather(record.data(), records.data(), kRecordBytes); },
      [&] {
        Tensor y = kernels::clone(x);
        if (y.numel() != n) ThrowError("clone: wrong size");
      },
      [&] {
        g.AllGather(record.data(), records.data(), kRecordBytes);
        if (n * 4 <= 256) return;
        Tensor y = kernels::clone(x);
        g.AllReduce(y.data<float>(), n, kFloat32, ReduceOp::kSum);
      },
  };
  // Warm-up: one batch of each (connections, caches, the large-block cache of psum's output).
  for (int v = 0; v < kVariants; ++v) {
    for (int c = 0; c < calls; ++c) call[v]();
  }
  // times[(r * kVariants + v) * (calls + 1) + c]: call c of variant v in round r, then the
  // batch's mean at c = calls; at the end the maximum over the ranks.
  const size_t stride = static_cast<size_t>(calls) + 1;
  std::vector<double> times(static_cast<size_t>(rounds * kVariants) * stride);
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < kVariants; ++k) {
      const int v = (r + k) % kVariants;
      double* at = times.data() + static_cast<size_t>(r * kVariants + v) * stride;
      g.Barrier();
      const Clock::time_point start = Clock::now();
      Clock::time_point before = start;
      for (int c = 0; c < calls; ++c) {
        call[v]();
        const Clock::time_point after = Clock::now();
        at[c] = std::chrono::duration<double, std::nano>(after - before).count();
        before = after;
      }
      at[calls] = std::chrono::duration<double, std::nano>(before - start).count() / calls;
    }
  }
  g.AllReduce(times.data(), static_cast<int64_t>(times.size()), kFloat64, ReduceOp::kMax);
  Result result;
  for (int v = 0; v < kVariants; ++v) {
    for (int r = 0; r < rounds; ++r) {
      const double* at = times.data() + static_cast<size_t>(r * kVariants + v) * stride;
      result.each[v].insert(result.each[v].end(), at, at + calls);
      result.batch[v].push_back(at[calls]);
    }
  }
  return result;
}

int Run(int rounds_flag, const std::string& only) {
  std::shared_ptr<ProcessGroup> group = dist::init_process_group();
  auto* gloo_group = dynamic_cast<dist::GlooProcessGroup*>(group.get());
  if (gloo_group == nullptr) {
    std::fprintf(stderr, "rank %d: the group is %s; this benchmark needs Gloo (ft_launch)\n",
                 group->rank(), group->backend().c_str());
    return 2;
  }
  ProcessGroup& g = *group;
  const bool smoke = SmokeTest();
  const int rounds = smoke ? 2 : rounds_flag;
  DirectAllreduce direct(*gloo_group);
  auto binding = dist::bind_axis("dp", group);
  const bool print = g.rank() == 0;
  if (print) {
    std::printf("psum over %d processes (%s), float32. %d rounds per size, each a batch of "
                "every variant in turn after a barrier. Times: the median over every call "
                "of the slowest rank's time.\n\n",
                g.size(), g.backend().c_str(), rounds);
    std::printf("| size | direct gloo::allreduce | direct, in place "
                "| ProcessGroup::AllReduce | ft::psum | record allgather (%lld B) | copy "
                "| steps by hand |\n",
                static_cast<long long>(kRecordBytes));
    std::printf("|---|---|---|---|---|---|---|---|\n");
  }
  bool ok = true;
  std::vector<std::string> ratios;
  for (const Size& size : kSizes) {
    std::string label = size.label;
    label.erase(std::remove(label.begin(), label.end(), ' '), label.end());
    if (!only.empty() && label != only) continue;
    Tensor x = empty({size.elements}, kFloat32);
    float* data = x.data<float>();
    for (int64_t i = 0; i < size.elements; ++i) data[i] = Input(g.rank(), i);
    // Every rank checks and measures, whatever it found: the schedule stays in lockstep.
    ok = Check(g, direct, x, size.label) && ok;
    const int calls = smoke ? 1 : size.calls;
    const Result res = Measure(g, direct, x, rounds, calls);
    double median[kVariants];
    for (int v = 0; v < kVariants; ++v) median[v] = Median(res.each[v]);
    // The median over the rounds of the ratio of a's and b's batch means (stalls included).
    std::vector<double> batch_ratio;
    for (int r = 0; r < rounds; ++r) {
      batch_ratio.push_back(res.batch[kPsum][r] / res.batch[kDirect][r]);
    }
    if (print) {
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", size.label,
                  Human(median[kDirect]).c_str(), Human(median[kDirectInPlace]).c_str(),
                  Human(median[kEngine]).c_str(), Human(median[kPsum]).c_str(),
                  Human(median[kRecord]).c_str(), Human(median[kCopy]).c_str(),
                  Human(median[kSteps]).c_str());
      std::fflush(stdout);
      char row[256];
      std::snprintf(row, sizeof(row), "| %s | %d x %d | %.2fx | %.2fx | %.2fx | %.2fx | %.2fx "
                    "| %s |", size.label, rounds, calls, median[kPsum] / median[kDirect],
                    Median(batch_ratio), median[kPsum] / median[kDirectInPlace],
                    median[kEngine] / median[kDirectInPlace],
                    median[kRecord] / median[kDirect], size.target);
      ratios.push_back(row);
    }
  }
  if (print) {
    std::printf("\n| size | rounds x calls | psum / direct | same, batch means | psum / direct "
                "in place | engine / direct in place | record / direct "
                "| target (psum / direct) |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const std::string& row : ratios) std::printf("%s\n", row.c_str());
    std::printf("\ndirect: gloo::allreduce (ring) from x into a preallocated buffer; in place: "
                "on a preallocated buffer; ProcessGroup::AllReduce: in place; record "
                "allgather: the round trip every psum makes first; copy: kernels::clone(x), "
                "psum's copy of its input; steps by hand: record, copy, in-place AllReduce of "
                "the copy. Batch means: the median over the rounds of the ratio of the two "
                "batches' mean times (scheduling stalls included).\n");
  }
  return ok ? 0 : 5;
}

}  // namespace
}  // namespace ft::bench

int main(int argc, char** argv) {
  int rounds = 31;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--rounds=", 0) == 0 && std::atoi(arg.c_str() + 9) > 0) {
      rounds = std::atoi(arg.c_str() + 9);
    } else if (arg.rfind("--only=", 0) == 0) {
      only = arg.substr(7);
    } else {
      std::fprintf(stderr, "usage: ft_launch -n 2 %s [--rounds=N] [--only=SIZE]\n"
                   "  SIZE: one of the table's sizes, without spaces (1float, 4MiB, ...)\n",
                   argv[0]);
      return 2;
    }
  }
  const char* rank = std::getenv("FT_RANK");
  try {
    return ft::bench::Run(rounds, only);
  } catch (const ft::Error& e) {
    std::fprintf(stderr, "rank %s: ft::Error: %s\n", rank ? rank : "?", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %s: %s\n", rank ? rank : "?", e.what());
  }
  return 3;
}

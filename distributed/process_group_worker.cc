// process_group_worker: one rank of the multi-process tests (the sh_tests of this package),
// started by ft_launch, by mpirun or by the test script itself.
//
//   process_group_worker MODE [BACKEND] [TOKEN]
//
// MODE:
//   allreduce  every engine call, checked against closed forms of the ranks; float sums
//              bit-identical on every rank; prints "rank R of P (BACKEND): OK".
//   fail       rank 1 exits with code 7 right after joining; the others sleep 60 s (the
//              launcher must stop them).
//   die        after one AllReduce rank 1 kills itself (SIGKILL); the others' next AllReduce
//              must throw ft::Error within twice FT_DIST_TIMEOUT_MS.
//   stall      after one AllReduce rank 1 stops itself (SIGSTOP); as for die.
//   hang       after one AllReduce rank 1 sleeps 30 s (a stall that mpirun can still end:
//              it cannot kill a stopped process quickly); as for die.
//   sleep      every rank sleeps 60 s after joining (for the launcher's --timeout).
// BACKEND: the backend() the group must have ("gloo" or "mpi"; "-" for any). TOKEN: ignored;
// a unique word the tests find the processes by.
//
// Exit codes: 0 success; 3 an ft::Error (printed as "rank R: ft::Error: ..." on stderr, or
// "ft::Error: ..." when there is no group yet); 4 the ft::Error came later than twice the
// timeout; 5 a wrong result; 2 a usage error.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distributed/process_group.h"
#include "tensor/error.h"

namespace {

using ft::dist::ProcessGroup;
using ft::dist::ReduceOp;
using Clock = std::chrono::steady_clock;

int g_rank = -1;
int g_exit = 0;

void Expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: WRONG: %s\n", g_rank, what.c_str());
    g_exit = 5;
  }
}

void AllCalls(ProcessGroup& g) {
  const int p = g.size();
  const int r = g.rank();
  // AllReduce: x[i] = r (i + 1) - i; sum (i + 1) p (p - 1) / 2 - p i, max (p - 1)(i + 1) - i.
  std::vector<double> sum(9);
  std::vector<int64_t> max(9);
  for (int i = 0; i < 9; ++i) {
    sum[i] = r * (i + 1) - i;
    max[i] = (int64_t{1} << 40) + r * (i + 1) - i;
  }
  g.AllReduce(sum.data(), 9, ft::kFloat64, ReduceOp::kSum);
  g.AllReduce(max.data(), 9, ft::kInt64, ReduceOp::kMax);
  for (int i = 0; i < 9; ++i) {
    Expect(sum[i] == (i + 1) * p * (p - 1) / 2 - p * i, "AllReduce sum at " + std::to_string(i));
    Expect(max[i] == (int64_t{1} << 40) + (p - 1) * (i + 1) - i,
           "AllReduce max at " + std::to_string(i));
  }
  uint8_t flag = r == p - 1;
  g.AllReduce(&flag, 1, ft::kBool, ReduceOp::kMax);
  Expect(flag == 1, "AllReduce bool max");

  // AllGather in rank order.
  int32_t mine[2] = {r, 100 + r};
  std::vector<int32_t> all(static_cast<size_t>(2 * p));
  g.AllGather(mine, all.data(), sizeof(mine));
  for (int s = 0; s < p; ++s) {
    Expect(all[2 * s] == s && all[2 * s + 1] == 100 + s, "AllGather block " + std::to_string(s));
  }

  // ReduceScatter of in[k] = r + k: block q's element j sums to p (p - 1) / 2 + p (3 q + j).
  std::vector<float> in(static_cast<size_t>(3 * p));
  for (int k = 0; k < 3 * p; ++k) {
    in[k] = static_cast<float>(r + k);
  }
  float block[3];
  g.ReduceScatter(in.data(), block, 3, ft::kFloat32, ReduceOp::kSum);
  for (int j = 0; j < 3; ++j) {
    Expect(block[j] == static_cast<float>(p * (p - 1) / 2 + p * (3 * r + j)),
           "ReduceScatter at " + std::to_string(j));
  }

  // Broadcast from the last rank.
  int64_t value = r == p - 1 ? 4242 : -1;
  g.Broadcast(&value, sizeof(value), p - 1);
  Expect(value == 4242, "Broadcast");
  g.Barrier();

  // Float sums of data with many magnitudes: bit-identical on every rank.
  std::vector<float> data(10007);
  uint64_t state = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(r + 1);
  for (float& x : data) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = std::ldexp(static_cast<float>(static_cast<int64_t>(state >> 40) - (1 << 23)),
                   static_cast<int>((state >> 33) % 40) - 20);
  }
  g.AllReduce(data.data(), static_cast<int64_t>(data.size()), ft::kFloat32, ReduceOp::kSum);
  std::vector<float> rank0 = data;
  g.Broadcast(rank0.data(), static_cast<int64_t>(rank0.size() * sizeof(float)), 0);
  Expect(std::memcmp(rank0.data(), data.data(), data.size() * sizeof(float)) == 0,
         "float sums differ from rank 0's");
}

// Survive: the next AllReduce must fail (a peer died or stalled) within twice the timeout.
int Survive(ProcessGroup& g) {
  const Clock::time_point start = Clock::now();
  double v = 1.0;
  try {
    g.AllReduce(&v, 1, ft::kFloat64, ReduceOp::kSum);
  } catch (const ft::Error& e) {
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    std::fprintf(stderr, "rank %d: ft::Error after %lld ms: %s\n", g.rank(),
                 static_cast<long long>(elapsed.count()), e.what());
    return elapsed < 2 * g.timeout() ? 3 : 4;
  }
  std::fprintf(stderr, "rank %d: WRONG: AllReduce returned without its peer\n", g.rank());
  return 5;
}

int Run(const std::string& mode, const std::string& backend) {
  std::shared_ptr<ProcessGroup> g = ft::dist::init_process_group();
  g_rank = g->rank();
  if (backend != "-" && g->backend() != backend) {
    std::fprintf(stderr, "rank %d: WRONG: backend %s, expected %s\n", g_rank,
                 g->backend().c_str(), backend.c_str());
    return 5;
  }
  if (mode == "allreduce") {
    AllCalls(*g);
    if (g_exit == 0) {
      std::printf("rank %d of %d (%s): OK\n", g_rank, g->size(), g->backend().c_str());
    }
    return g_exit;
  }
  if (mode == "fail" || mode == "sleep") {
    if (mode == "fail" && g_rank == 1) {
      std::fprintf(stderr, "rank 1: failing on purpose\n");
      return 7;
    }
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return 0;
  }
  if (mode == "die" || mode == "stall" || mode == "hang") {
    double v = 1.0;
    g->AllReduce(&v, 1, ft::kFloat64, ReduceOp::kSum);
    if (v != g->size()) {
      return 5;
    }
    std::fflush(stdout);
    if (g_rank == 1) {
      if (mode == "hang") {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return 0;
      }
      raise(mode == "die" ? SIGKILL : SIGSTOP);
      return 0;  // stall: when the test resumes us (it kills us instead)
    }
    return Survive(*g);
  }
  std::fprintf(stderr, "process_group_worker: unknown mode %s\n", mode.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: process_group_worker MODE [BACKEND] [TOKEN]\n");
    return 2;
  }
  const std::string backend = argc > 2 ? argv[2] : "-";
  int code = 0;
  try {
    code = Run(argv[1], backend);
  } catch (const ft::Error& e) {
    if (g_rank >= 0) {
      std::fprintf(stderr, "rank %d: ft::Error: %s\n", g_rank, e.what());
    } else {
      std::fprintf(stderr, "ft::Error: %s\n", e.what());
    }
    code = 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: std::exception: %s\n", g_rank, e.what());
    code = 1;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  return code;
}

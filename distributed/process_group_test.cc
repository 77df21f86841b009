// Tests of the Gloo process group through RunOnThreads (threads of this test as ranks, over
// TCP on loopback) and of init_process_group's parsing of the environment. Expected values
// are closed forms of the ranks; the multi-process and MPI paths are the sh_tests'.
#include <stdlib.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <memory>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/gloo_process_group.h"
#include "distributed/process_group.h"
#include "distributed/testing.h"
#include "gloo/rendezvous/hash_store.h"
#include "gtest/gtest.h"
#include "tensor/error.h"
#include "tests/test_util.h"

namespace ft::dist {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class GroupSizes : public ::testing::TestWithParam<int> {};

INSTANTIATE_TEST_SUITE_P(P, GroupSizes, ::testing::Values(1, 2, 3));

TEST_P(GroupSizes, RankSizeBackend) {
  const int p = GetParam();
  std::vector<int> seen(static_cast<size_t>(p), -1);
  testing::RunOnThreads(p, [&](ProcessGroup& g) {
    EXPECT_EQ(g.size(), p);
    EXPECT_EQ(g.backend(), "gloo");
    EXPECT_EQ(g.timeout(), milliseconds(10000));
    seen[static_cast<size_t>(g.rank())] = g.rank();
  });
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(seen[static_cast<size_t>(r)], r);
  }
}

// AllReduce of x[i] = r * (i + 1) - i over ranks r in [0, p): the sum is
// (i + 1) p (p - 1) / 2 - p i and the max (p - 1)(i + 1) - i, exact in every dtype.
template <typename T>
void CheckAllReduceArithmetic(int p, DType dtype, T offset) {
  constexpr int64_t kCount = 37;
  testing::RunOnThreads(p, [&](ProcessGroup& g) {
    std::vector<T> sum(kCount);
    std::vector<T> max(kCount);
    for (int64_t i = 0; i < kCount; ++i) {
      sum[i] = static_cast<T>(g.rank() * (i + 1) - i) + offset;
      max[i] = sum[i];
    }
    g.AllReduce(sum.data(), kCount, dtype, ReduceOp::kSum);
    g.AllReduce(max.data(), kCount, dtype, ReduceOp::kMax);
    for (int64_t i = 0; i < kCount; ++i) {
      EXPECT_EQ(sum[i], static_cast<T>((i + 1) * p * (p - 1) / 2 - p * i) + offset * p)
          << DTypeName(dtype) << " rank " << g.rank() << " i " << i;
      EXPECT_EQ(max[i], static_cast<T>((p - 1) * (i + 1) - i) + offset)
          << DTypeName(dtype) << " rank " << g.rank() << " i " << i;
    }
  });
}

TEST_P(GroupSizes, AllReduceSumAndMaxPerDType) {
  CheckAllReduceArithmetic<float>(GetParam(), kFloat32, 0.5f);
  CheckAllReduceArithmetic<double>(GetParam(), kFloat64, -0.25);
  // Beyond 2^32, where an int32 path would wrap.
  CheckAllReduceArithmetic<int64_t>(GetParam(), kInt64, int64_t{1} << 40);
}

TEST_P(GroupSizes, AllReduceBoolMaxIsLogicalOr) {
  const int p = GetParam();
  testing::RunOnThreads(p, [&](ProcessGroup& g) {
    // Element i is true on rank i % (p + 1) only: true after the max unless i % (p + 1) == p.
    std::vector<uint8_t> v(11);
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = static_cast<int>(i % (p + 1)) == g.rank();
    }
    g.AllReduce(v.data(), static_cast<int64_t>(v.size()), kBool, ReduceOp::kMax);
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_EQ(v[i], static_cast<int>(i % (p + 1)) < p ? 1 : 0) << "i " << i;
    }
  });
}

TEST_P(GroupSizes, AllReduceMaxPropagatesNan) {
  testing::RunOnThreads(GetParam(), [&](ProcessGroup& g) {
    float v[2] = {g.rank() == 0 ? std::nanf("") : 1.0f, static_cast<float>(g.rank())};
    g.AllReduce(v, 2, kFloat32, ReduceOp::kMax);
    EXPECT_TRUE(std::isnan(v[0]));
    EXPECT_EQ(v[1], static_cast<float>(GetParam() - 1));
  });
}

TEST_P(GroupSizes, AllGatherIsInRankOrder) {
  const int p = GetParam();
  constexpr int64_t kBytes = 5;
  testing::RunOnThreads(p, [&](ProcessGroup& g) {
    std::vector<uint8_t> in(kBytes);
    for (int64_t j = 0; j < kBytes; ++j) {
      in[j] = static_cast<uint8_t>(g.rank() * 31 + j);
    }
    std::vector<uint8_t> out(kBytes * p, 0xee);
    g.AllGather(in.data(), out.data(), kBytes);
    for (int r = 0; r < p; ++r) {
      for (int64_t j = 0; j < kBytes; ++j) {
        EXPECT_EQ(out[r * kBytes + j], static_cast<uint8_t>(r * 31 + j)) << r << " " << j;
      }
    }
  });
}

// ReduceScatter of in[k] = r + k: rank q gets block q, whose element j is the sum over r of
// (r + q count + j) = p (p - 1) / 2 + p (q count + j), or the max (p - 1) + q count + j.
template <typename T>
void CheckReduceScatter(int p, DType dtype, int64_t count) {
  testing::RunOnThreads(p, [&](ProcessGroup& g) {
    std::vector<T> in(static_cast<size_t>(count * p));
    for (int64_t k = 0; k < count * p; ++k) {
      in[k] = static_cast<T>(g.rank() + k);
    }
    const std::vector<T> original = in;
    std::vector<T> sum(count, T(-1));
    std::vector<T> max(count, T(-1));
    g.ReduceScatter(in.data(), sum.data(), count, dtype, ReduceOp::kSum);
    g.ReduceScatter(in.data(), max.data(), count, dtype, ReduceOp::kMax);
    EXPECT_EQ(in, original) << "ReduceScatter wrote to its input";
    const int64_t q = g.rank();
    for (int64_t j = 0; j < count; ++j) {
      EXPECT_EQ(sum[j], static_cast<T>(p * (p - 1) / 2 + p * (q * count + j)))
          << DTypeName(dtype) << " count " << count << " rank " << q << " j " << j;
      EXPECT_EQ(max[j], static_cast<T>(p - 1 + q * count + j))
          << DTypeName(dtype) << " count " << count << " rank " << q << " j " << j;
    }
  });
}

TEST_P(GroupSizes, ReduceScatterGivesEachRankItsBlock) {
  for (int64_t count : {1, 3, 7, 1000}) {
    CheckReduceScatter<float>(GetParam(), kFloat32, count);
    CheckReduceScatter<double>(GetParam(), kFloat64, count);
    CheckReduceScatter<int64_t>(GetParam(), kInt64, count);
  }
}

TEST_P(GroupSizes, ReduceScatterBoolMax) {
  const int p = GetParam();
  testing::RunOnThreads(p, [&](ProcessGroup& g) {
    // Element k of the whole buffer is true on rank k % (p + 1) only.
    std::vector<uint8_t> in(static_cast<size_t>(2 * p));
    for (size_t k = 0; k < in.size(); ++k) {
      in[k] = static_cast<int>(k % (p + 1)) == g.rank();
    }
    uint8_t out[2] = {9, 9};
    g.ReduceScatter(in.data(), out, 2, kBool, ReduceOp::kMax);
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(out[j], static_cast<int>((2 * g.rank() + j) % (p + 1)) < p ? 1 : 0);
    }
  });
}

TEST_P(GroupSizes, BroadcastFromEachRoot) {
  const int p = GetParam();
  testing::RunOnThreads(p, [&](ProcessGroup& g) {
    for (int root = 0; root < p; ++root) {
      std::vector<int64_t> v(13, -1);
      if (g.rank() == root) {
        for (size_t i = 0; i < v.size(); ++i) {
          v[i] = root * 1000 + static_cast<int64_t>(i);
        }
      }
      g.Broadcast(v.data(), static_cast<int64_t>(v.size() * sizeof(int64_t)), root);
      for (size_t i = 0; i < v.size(); ++i) {
        EXPECT_EQ(v[i], root * 1000 + static_cast<int64_t>(i)) << "root " << root;
      }
    }
  });
}

TEST_P(GroupSizes, BarrierWaitsForEveryRank) {
  const int p = GetParam();
  std::atomic<int> arrived{0};
  testing::RunOnThreads(p, [&](ProcessGroup& g) {
    for (int round = 1; round <= 3; ++round) {
      // The last rank is late: nobody may leave the barrier before it arrived.
      if (g.rank() == p - 1) {
        std::this_thread::sleep_for(milliseconds(50));
      }
      arrived.fetch_add(1);
      g.Barrier();
      EXPECT_GE(arrived.load(), round * p) << "rank " << g.rank() << " round " << round;
      g.Barrier();  // nobody starts the next round before everyone checked this one
    }
  });
}

TEST_P(GroupSizes, ZeroCountsAreNoOps) {
  testing::RunOnThreads(GetParam(), [&](ProcessGroup& g) {
    g.AllReduce(nullptr, 0, kFloat32, ReduceOp::kSum);
    g.AllGather(nullptr, nullptr, 0);
    g.ReduceScatter(nullptr, nullptr, 0, kInt64, ReduceOp::kMax);
    g.Broadcast(nullptr, 0, 0);
    float v = 1.0f;
    g.AllReduce(&v, 1, kFloat32, ReduceOp::kSum);  // the group still works after them
    EXPECT_EQ(v, static_cast<float>(GetParam()));
  });
}

// Float sums of data with many magnitudes round differently in every order; the result must
// still be bit-identical on every rank and in every run (a fixed order per group size).
std::vector<std::vector<float>> FloatSums(int p) {
  constexpr int64_t kCount = 100003;  // odd, so the ring's blocks differ in size
  std::vector<std::vector<float>> results(static_cast<size_t>(p));
  testing::RunOnThreads(p, [&](ProcessGroup& g) {
    std::vector<float> v(kCount);
    uint64_t state = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(g.rank() + 1);
    for (float& x : v) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const int exponent = static_cast<int>((state >> 33) % 40) - 20;
      x = std::ldexp(static_cast<float>(static_cast<int64_t>(state >> 40) - (1 << 23)),
                     exponent) / 8388608.0f;
    }
    g.AllReduce(v.data(), kCount, kFloat32, ReduceOp::kSum);
    results[static_cast<size_t>(g.rank())] = std::move(v);
  });
  return results;
}

TEST_P(GroupSizes, FloatSumsAreBitIdenticalAcrossRanksAndRuns) {
  const int p = GetParam();
  std::vector<std::vector<float>> first = FloatSums(p);
  std::vector<std::vector<float>> second = FloatSums(p);
  for (int r = 0; r < p; ++r) {
    ASSERT_EQ(first[r].size(), first[0].size());
    EXPECT_EQ(std::memcmp(first[r].data(), first[0].data(), first[0].size() * sizeof(float)),
              0)
        << "rank " << r << " differs from rank 0";
    EXPECT_EQ(std::memcmp(second[r].data(), first[r].data(), first[r].size() * sizeof(float)),
              0)
        << "rank " << r << " differs from the first run";
  }
}

TEST(ProcessGroupErrors, BadArgumentsAreFtErrors) {
  testing::RunOnThreads(2, [&](ProcessGroup& g) {
    uint8_t b = 1;
    EXPECT_FT_ERROR(g.AllReduce(&b, 1, kBool, ReduceOp::kSum),
                    "AllReduce (gloo): a sum of bool is not supported");
    float f = 0;
    EXPECT_FT_ERROR(g.AllReduce(&f, -1, kFloat32, ReduceOp::kSum),
                    "AllReduce (gloo): elements must be >= 0, got -1");
    EXPECT_FT_ERROR(g.AllReduce(nullptr, 3, kFloat32, ReduceOp::kSum),
                    "AllReduce (gloo): null buffer for 3 elements");
    EXPECT_FT_ERROR(g.AllReduce(&f, 1, static_cast<DType>(42), ReduceOp::kSum),
                    "AllReduce (gloo): unknown dtype 42");
    EXPECT_FT_ERROR(g.AllReduce(&f, 1, kInt32, ReduceOp::kSum),
                    "AllReduce (gloo): int32 tensors are not reduced yet");
    EXPECT_FT_ERROR(g.Broadcast(&f, 4, 2), "Broadcast (gloo): root 2 is not a rank");
    EXPECT_FT_ERROR(g.Broadcast(&f, 4, -1), "Broadcast (gloo): root -1 is not a rank");
    EXPECT_FT_ERROR(g.AllGather(&f, nullptr, 4), "AllGather (gloo): null buffer");
    EXPECT_FT_ERROR(g.ReduceScatter(&f, &f, 1, kBool, ReduceOp::kSum),
                    "ReduceScatter (gloo): a sum of bool");
    // Rejected arguments break nothing: the group still reduces.
    f = 1.0f;
    g.AllReduce(&f, 1, kFloat32, ReduceOp::kSum);
    EXPECT_EQ(f, 2.0f);
  });
}

TEST(ProcessGroupErrors, BadRankOrSizeAtConnect) {
  auto store = std::make_shared<gloo::rendezvous::HashStore>();
  EXPECT_FT_ERROR(MakeGlooGroup(store, 2, 2, milliseconds(100)),
                  "init (gloo): rank 2 is not in [0, 2)");
  EXPECT_FT_ERROR(MakeGlooGroup(store, 0, 0, milliseconds(100)),
                  "init (gloo): the world size must be >= 1, got 0");
  EXPECT_FT_ERROR(MakeGlooGroup(store, 0, 1, milliseconds(0)),
                  "init (gloo): the timeout must be > 0 ms");
  EXPECT_FT_ERROR(MakeGlooGroup(nullptr, 0, 1, milliseconds(100)), "init (gloo): the store");
  EXPECT_FT_ERROR(MakeGlooGroup(store, 0, 1, milliseconds(100), {"host", "eth0"}),
                  "not both");
}

TEST(ProcessGroupErrors, MissingPeerAtStartupIsNamedWithinTheTimeout) {
  auto store = std::make_shared<gloo::rendezvous::HashStore>();
  const Clock::time_point start = Clock::now();
  // Ranks 0 and 2 of 3 start; rank 1 never does.
  std::string errors[3];
  std::thread rank2([&] {
    try {
      MakeGlooGroup(store, 2, 3, milliseconds(500));
    } catch (const Error& e) {
      errors[2] = e.what();
    }
  });
  try {
    MakeGlooGroup(store, 0, 3, milliseconds(500));
  } catch (const Error& e) {
    errors[0] = e.what();
  }
  rank2.join();
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
  for (int r : {0, 2}) {
    EXPECT_NE(errors[r].find("init (gloo): rank " + std::to_string(r) + " of 3: peer rank(s) 1 "
                             "did not join within 500 ms"),
              std::string::npos)
        << errors[r];
  }
}

// A rank that never calls the collective: the others throw ft::Error within twice the
// timeout, naming the op, their rank and the cause; later calls fail at once.
TEST_P(GroupSizes, StalledPeerTimesOutWithANamedError) {
  const int p = GetParam();
  if (p == 1) {
    GTEST_SKIP() << "one rank has no peer to wait for";
  }
  const milliseconds timeout(500);
  std::mutex mu;
  std::vector<std::string> errors(static_cast<size_t>(p));
  testing::RunOnThreads(
      p,
      [&](ProcessGroup& g) {
        if (g.rank() == 1) {
          std::this_thread::sleep_for(3 * timeout);  // stalled past the others' timeout
          return;
        }
        double v = 1.0;
        const Clock::time_point start = Clock::now();
        try {
          g.AllReduce(&v, 1, kFloat64, ReduceOp::kSum);
          ADD_FAILURE() << "rank " << g.rank() << ": AllReduce returned without rank 1";
        } catch (const Error& e) {
          EXPECT_LT(Clock::now() - start, 2 * timeout) << e.what();
          std::lock_guard<std::mutex> lock(mu);
          errors[static_cast<size_t>(g.rank())] = e.what();
        }
        EXPECT_FT_ERROR(g.Barrier(), "Barrier (gloo): rank " + std::to_string(g.rank()) +
                                         " of " + std::to_string(p) +
                                         ": the group is unusable after an earlier failure: "
                                         "AllReduce");
      },
      timeout);
  for (int r = 0; r < p; ++r) {
    if (r == 1) {
      continue;
    }
    const std::string& e = errors[static_cast<size_t>(r)];
    EXPECT_NE(e.find("AllReduce (gloo): rank " + std::to_string(r) + " of " +
                     std::to_string(p) + ": timed out after 500 ms waiting for a peer"),
              std::string::npos)
        << e;
  }
}

TEST(ProcessGroupErrors, RunOnThreadsRethrowsTheFirstException) {
  EXPECT_FT_ERROR(testing::RunOnThreads(2,
                                        [](ProcessGroup& g) {
                                          if (g.rank() == 1) {
                                            ThrowError("test: rank 1 failed");
                                          }
                                        }),
                  "test: rank 1 failed");
  EXPECT_FT_ERROR(testing::RunOnThreads(0, [](ProcessGroup&) {}), "RunOnThreads: size");
}

// init_process_group reads the environment; each case sets only what it tests.
class InitEnv : public ::testing::Test {
 protected:
  void SetUp() override { Clear(); }
  void TearDown() override { Clear(); }
  static void Clear() {
    for (const char* name :
         {"FT_RANK", "FT_WORLD_SIZE", "FT_STORE", "FT_BACKEND", "FT_DIST_TIMEOUT_MS",
          "FT_GLOO_IFACE", "FT_GLOO_HOSTNAME", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
          "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS"}) {
      unsetenv(name);
    }
  }
  static std::string TempDir() {
    const char* dir = std::getenv("TEST_TMPDIR");
    return dir != nullptr ? dir : "/tmp";
  }
};

TEST_F(InitEnv, NothingSetSaysHowToStart) {
  EXPECT_FT_ERROR(init_process_group(),
                  "init_process_group: no process group in the environment: start the "
                  "program with `ft_launch -n N`");
}

TEST_F(InitEnv, MalformedVariablesAreNamed) {
  setenv("FT_RANK", "0", 1);
  EXPECT_FT_ERROR(init_process_group(), "FT_RANK, FT_WORLD_SIZE and FT_STORE go together; "
                                        "missing FT_WORLD_SIZE");
  setenv("FT_WORLD_SIZE", "2", 1);
  EXPECT_FT_ERROR(init_process_group(), "missing FT_STORE");
  setenv("FT_STORE", "tcp://host:1", 1);
  EXPECT_FT_ERROR(init_process_group(), "FT_STORE='tcp://host:1' must be file:DIR");
  setenv("FT_STORE", "file:/nonexistent/ft-store", 1);
  EXPECT_FT_ERROR(init_process_group(), "/nonexistent/ft-store is not a directory");
  setenv("FT_STORE", ("file:" + TempDir()).c_str(), 1);
  setenv("FT_RANK", "two", 1);
  EXPECT_FT_ERROR(init_process_group(), "FT_RANK='two' must be an integer in [0, 1]");
  setenv("FT_RANK", "2", 1);
  EXPECT_FT_ERROR(init_process_group(), "FT_RANK='2' must be an integer in [0, 1]");
  setenv("FT_RANK", "0", 1);
  setenv("FT_WORLD_SIZE", "0", 1);
  EXPECT_FT_ERROR(init_process_group(), "FT_WORLD_SIZE='0' must be an integer in [1, ");
  setenv("FT_WORLD_SIZE", "2", 1);
  setenv("FT_DIST_TIMEOUT_MS", "-5", 1);
  EXPECT_FT_ERROR(init_process_group(), "FT_DIST_TIMEOUT_MS='-5' must be an integer in [1, ");
  setenv("FT_DIST_TIMEOUT_MS", "100", 1);
  setenv("FT_BACKEND", "nccl", 1);
  EXPECT_FT_ERROR(init_process_group(), "FT_BACKEND='nccl' must be gloo or mpi");
  setenv("FT_BACKEND", "mpi", 1);
  EXPECT_FT_ERROR(init_process_group(), "FT_BACKEND=mpi needs mpirun or srun");
  unsetenv("FT_BACKEND");
  setenv("FT_GLOO_IFACE", "eth0", 1);
  setenv("FT_GLOO_HOSTNAME", "localhost", 1);
  EXPECT_FT_ERROR(init_process_group(), "set FT_GLOO_IFACE (eth0) or FT_GLOO_HOSTNAME");
  unsetenv("FT_GLOO_HOSTNAME");
  setenv("FT_GLOO_IFACE", "ft-no-such-interface0", 1);
  setenv("FT_WORLD_SIZE", "1", 1);
  EXPECT_FT_ERROR(init_process_group(), "cannot listen on interface ft-no-such-interface0");
}

TEST_F(InitEnv, OneRankFileStoreGroup) {
  const std::string dir = TempDir() + "/one-rank-store";
  std::filesystem::create_directories(dir);
  setenv("FT_RANK", "0", 1);
  setenv("FT_WORLD_SIZE", "1", 1);
  setenv("FT_STORE", ("file:" + dir).c_str(), 1);
  setenv("FT_DIST_TIMEOUT_MS", "2000", 1);
  std::shared_ptr<ProcessGroup> g = init_process_group();
  EXPECT_EQ(g->rank(), 0);
  EXPECT_EQ(g->size(), 1);
  EXPECT_EQ(g->backend(), "gloo");
  EXPECT_EQ(g->timeout(), milliseconds(2000));
  int64_t v = 7;
  g->AllReduce(&v, 1, kInt64, ReduceOp::kSum);
  EXPECT_EQ(v, 7);
}

TEST_F(InitEnv, MissingFileStorePeerIsNamed) {
  const std::string dir = TempDir() + "/missing-peer-store";
  std::filesystem::create_directories(dir);
  setenv("FT_RANK", "0", 1);
  setenv("FT_WORLD_SIZE", "2", 1);
  setenv("FT_STORE", ("file:" + dir).c_str(), 1);
  setenv("FT_DIST_TIMEOUT_MS", "300", 1);
  const Clock::time_point start = Clock::now();
  EXPECT_FT_ERROR(init_process_group(),
                  "init (gloo): rank 0 of 2: peer rank(s) 1 did not join within 300 ms");
  EXPECT_LT(Clock::now() - start, milliseconds(600));
}

TEST_F(InitEnv, MalformedMpiVariablesAreNamed) {
  setenv("OMPI_COMM_WORLD_RANK", "x", 1);
  EXPECT_FT_ERROR(init_process_group(), "OMPI_COMM_WORLD_RANK='x' must be an integer");
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  EXPECT_FT_ERROR(init_process_group(), "OMPI_COMM_WORLD_RANK='3' must be an integer in [0, 1]");
}

}  // namespace
}  // namespace ft::dist

// One process of //distributed:collectives_launch_test: the collectives across real processes
// (started by ft_launch, by hand, or by mpirun), each checking its results against what it
// can compute alone (every rank's data comes from the rank's seed).
//   collectives_worker check TOKEN   grad(pmean) against the whole batch in one process, a vmap
//                                     axis inside the process axis, all_gather, psum_scatter,
//                                     jvp/vjp transposition summed over ranks (by psum), results
//                                     bitwise equal on every rank; prints "rank r of P: OK"
//   collectives_worker die TOKEN     one psum, then rank 1 kills itself (SIGKILL) and the
//                                     others' next psum must throw ft::Error (exit 3)
//   collectives_worker stall TOKEN   the same with rank 1 stopping itself (SIGSTOP)
// TOKEN only marks the command line, so that the test can find the processes it started.
// Exit codes: 0 checks held, 1 a check failed, 2 usage, 3 an ft::Error was caught.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "distributed/collectives.h"
#include "distributed/process_group.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tensor/generator.h"

namespace {

using ft::Tensor;
using ft::TensorList;

int g_failures = 0;

void Expect(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "check failed: %s\n", what.c_str());
  ++g_failures;
}

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  return ft::amax(ft::abs(a - b)).item<double>();
}

Tensor Shard(int rank, ft::IntArrayRef shape, uint64_t salt = 0) {
  ft::Generator g(1000 + 17 * static_cast<uint64_t>(rank) + salt);
  return ft::rand_like(ft::zeros(shape, ft::kFloat64), &g) * 2.0 - 1.0;
}

Tensor LocalLoss(const Tensor& w, const Tensor& x, const Tensor& y) {
  Tensor r = ft::matmul(x, w) - y;
  return ft::mean(r * r);
}

void Check(int rank, int size) {
  // grad of the pmean of the local losses: the gradient of the whole batch's loss.
  const Tensor w = Shard(99, {3, 2});
  TensorList xs, ys;
  for (int q = 0; q < size; ++q) {
    xs.push_back(Shard(q, {4, 3}));
    ys.push_back(Shard(q, {4, 2}, 7));
  }
  const Tensor x_all = ft::cat(xs, 0), y_all = ft::cat(ys, 0);
  const Tensor expected = ft::grad(ft::ScalarFn([&](const TensorList& p) {
                            return LocalLoss(p[0], x_all, y_all);
                          }))({w})[0];
  const Tensor got = ft::grad(ft::ScalarFn([&](const TensorList& p) {
                       return ft::pmean(LocalLoss(p[0], xs[rank], ys[rank]), "dp");
                     }))({w})[0];
  Expect(MaxAbsDiff(got, expected) < 1e-12, "grad(pmean(local loss)) is the global gradient");

  // A vmap axis inside the process axis: psum over both is the global sum.
  Tensor global = ft::zeros({3}, ft::kFloat64);
  for (int q = 0; q < size; ++q) global = global + ft::sum(xs[q], {0});
  ft::VmapOptions named;
  named.axis_name = "i";
  const Tensor both = ft::vmap(ft::TensorFn([](const Tensor& x) {
                                 return ft::psum(ft::psum(x, "i"), "dp");
                               }),
                               named)(xs[rank]);
  Expect(MaxAbsDiff(ft::select(both, 0, 0), global) < 1e-12, "psum over 'i' then 'dp'");

  // all_gather and psum_scatter, small and large payloads.
  for (int64_t n : {int64_t{3}, int64_t{4000}}) {
    const Tensor mine = Shard(rank, {size, n}, 11);
    TensorList all;
    Tensor scattered = ft::zeros({n}, ft::kFloat64);
    for (int q = 0; q < size; ++q) {
      all.push_back(Shard(q, {size, n}, 11));
      scattered = scattered + ft::select(all.back(), 0, rank);
    }
    Expect(MaxAbsDiff(ft::all_gather(mine, "dp", 1), ft::stack(all, 1)) == 0, "all_gather");
    Expect(MaxAbsDiff(ft::psum_scatter(mine, "dp", 0), scattered) < 1e-12, "psum_scatter");
  }

  // <J v, u> == sum over ranks of <v, J^T u> for psum (x each rank's own, u shared).
  {
    ft::dist::PerProcessInputs local("dp");
    const Tensor x = Shard(rank, {5}), v = Shard(rank, {5}, 3), u = Shard(0, {5}, 5);
    auto f = ft::TensorListFn([](const TensorList& a) {
      return TensorList{ft::psum(ft::sin(a[0]), "dp")};
    });
    const Tensor jv = ft::jvp(f, {x}, {v}).tangents[0];
    const Tensor jtu = ft::vjp(f, {x}).vjp_fn({u})[0];
    const double lhs = ft::sum(jv * u).item<double>();
    const double rhs = ft::psum(ft::sum(v * jtu), "dp").item<double>();
    Expect(std::fabs(lhs - rhs) < 1e-12, "jvp and vjp of psum are transposes");
  }

  // Bitwise equality: every rank's psum of order-sensitive sums is the same.
  const Tensor noisy = Shard(rank, {1000}) * 1e6 + Shard(rank, {1000}, 13) * 1e-6;
  const Tensor total = ft::psum(noisy, "dp");
  const Tensor rows = ft::all_gather(total, "dp", 0);
  for (int q = 0; q < size; ++q) {
    std::vector<double> a = ft::select(rows, 0, q).to_vector<double>();
    std::vector<double> b = total.to_vector<double>();
    Expect(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0,
           "psum bitwise equal to rank " + std::to_string(q) + "'s");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: collectives_worker check|die|stall [TOKEN]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const auto start = std::chrono::steady_clock::now();
  int rank = -1;
  try {
    auto group = ft::dist::init_process_group();
    rank = group->rank();
    const int size = group->size();
    auto binding = ft::dist::bind_axis("dp", group);
    if (mode == "check") {
      Check(rank, size);
      if (g_failures > 0) return 1;
      std::printf("rank %d of %d (%s): OK\n", rank, size, group->backend().c_str());
      return 0;
    }
    if (mode == "die" || mode == "stall") {
      ft::psum(ft::ones({4}, ft::kFloat64), "dp");
      if (rank == 1) raise(mode == "die" ? SIGKILL : SIGSTOP);
      ft::psum(ft::ones({4}, ft::kFloat64), "dp");
      std::fprintf(stderr, "rank %d: the psum after the peer's end returned\n", rank);
      return 1;
    }
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  } catch (const ft::Error& e) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    std::fprintf(stderr, "rank %d: ft::Error after %lld ms: %s\n", rank,
                 static_cast<long long>(ms), e.what());
    return 3;
  }
}

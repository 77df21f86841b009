// Collectives over process axes: P = 1, 2, 3 ranks as threads of this test, each with its
// own Gloo group over loopback (testing.h), against closed forms each rank can compute
// alone (every rank knows every rank's data: it is made from the rank's seed), and against
// the single-process math on the whole batch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include "control_flow/control_flow.h"
#include "custom_function/function.h"
#include "distributed/collectives.h"
#include "distributed/testing.h"
#include "interpreters/functionalize/functionalize.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jit/jit.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using dist::ProcessGroup;
using testing::Rand;

std::shared_ptr<ProcessGroup> Borrow(ProcessGroup& g) {
  return std::shared_ptr<ProcessGroup>(&g, [](ProcessGroup*) {});
}

// Data of rank r (the same on every rank that asks).
Tensor Shard(int r, IntArrayRef shape, uint64_t salt = 0) {
  return Rand(shape, 1000 + 17 * static_cast<uint64_t>(r) + salt);
}

// Bits: a tensor's bytes, for bitwise comparison across ranks.
std::vector<double> Values(const Tensor& t) { return contiguous(t).to_vector<double>(); }

class ProcessAxis : public ::testing::TestWithParam<int> {};

TEST_P(ProcessAxis, EveryCollectiveMatchesItsClosedForm) {
  const int size = GetParam();
  dist::testing::RunOnThreads(size, [size](ProcessGroup& g) {
    auto binding = dist::bind_axis("dp", Borrow(g));
    const int r = g.rank();
    // Small (one round trip) and large (the engine's own collective) payloads.
    for (const Shape& shape : {Shape{2, 3}, Shape{64, 33}}) {
      Tensor x = Shard(r, shape);
      Tensor total = zeros(shape, kFloat64);
      Tensor biggest = Shard(0, shape);
      TensorList all;
      for (int q = 0; q < size; ++q) {
        total = total + Shard(q, shape);
        biggest = maximum(biggest, Shard(q, shape));
        all.push_back(Shard(q, shape));
      }
      EXPECT_TENSOR_NEAR(psum(x, "dp"), total, 1e-12);
      EXPECT_TENSOR_NEAR(pmean(x, "dp"), total / static_cast<double>(size), 1e-12);
      EXPECT_TENSOR_NEAR(pmax(x, "dp"), biggest, 0);
      EXPECT_TENSOR_NEAR(all_gather(x, "dp", 0), stack(all, 0), 0);
      EXPECT_TENSOR_NEAR(all_gather(x, "dp", -1), stack(all, 2), 0);
      EXPECT_TENSOR_NEAR(all_gather(to(x, kFloat32), "dp", 1), to(stack(all, 1), kFloat32), 0);
    }
    EXPECT_EQ(axis_index("dp").item<int64_t>(), r);
    // A ring over the processes, small and large: rank r gets rank r - 1's shard.
    for (const Shape& shape : {Shape{2}, Shape{100, 10}}) {
      std::vector<std::pair<int64_t, int64_t>> ring;
      for (int q = 0; q < size; ++q) ring.push_back({q, (q + 1) % size});
      EXPECT_TENSOR_NEAR(ppermute(Shard(r, shape), "dp", ring),
                         Shard((r + size - 1) % size, shape), 0);
      // Only rank 0 sends (to the last rank): the others get zeros.
      Tensor one = ppermute(Shard(r, shape), "dp", {{0, size - 1}});
      EXPECT_TENSOR_NEAR(one, r == size - 1 ? Shard(0, shape) : zeros(shape, kFloat64), 0);
    }
    EXPECT_EQ(axis_size("dp"), size);
    // psum_scatter: rank r gets the sum over ranks of their entry r along dim 1.
    for (int64_t cols : {int64_t{3}, int64_t{500}}) {
      const Shape shape = {4, size, cols};
      Tensor expected = zeros({4, cols}, kFloat64);
      for (int q = 0; q < size; ++q) expected = expected + select(Shard(q, shape, 5), 1, r);
      EXPECT_TENSOR_NEAR(psum_scatter(Shard(r, shape, 5), "dp", 1), expected, 1e-12);
    }
    // Integers and bools.
    Tensor ints = full({3}, Scalar(int64_t{r + 1}), kInt64);
    EXPECT_EQ(psum(ints, "dp").to_vector<int64_t>(),
              std::vector<int64_t>(3, int64_t{size} * (size + 1) / 2));
    // A NaN on any rank wins pmax, as it does amax.
    Tensor with_nan = full({2}, Scalar(double(r)), kFloat64);
    if (r == 0) with_nan = cat({full({1}, Scalar(std::nan("")), kFloat64), ones({1}, kFloat64)});
    EXPECT_TRUE(std::isnan(pmax(with_nan, "dp").to_vector<double>()[0]));
    Tensor flags = full({2}, Scalar(r == size - 1), kBool);
    EXPECT_TRUE(pmax(flags, "dp").to_vector<bool>()[0]);
  });
}

TEST_P(ProcessAxis, ResultsAreBitwiseIdenticalOnEveryRank) {
  const int size = GetParam();
  std::mutex mu;
  std::vector<std::vector<double>> seen(static_cast<size_t>(size));
  dist::testing::RunOnThreads(size, [&](ProcessGroup& g) {
    auto binding = dist::bind_axis("dp", Borrow(g));
    // Float sums whose rounding depends on the order of the terms, small and large.
    Tensor x = Shard(g.rank(), {1000}) * 1e6 + Shard(g.rank(), {1000}, 3) * 1e-6;
    std::vector<double> mine = Values(psum(x, "dp"));
    std::vector<double> small = Values(psum(narrow(x, 0, 0, 5), "dp"));
    mine.insert(mine.end(), small.begin(), small.end());
    std::lock_guard<std::mutex> lock(mu);
    seen[static_cast<size_t>(g.rank())] = mine;
  });
  for (int q = 1; q < size; ++q) {
    ASSERT_EQ(seen[q].size(), seen[0].size());
    EXPECT_EQ(std::memcmp(seen[q].data(), seen[0].data(), seen[0].size() * sizeof(double)), 0)
        << "rank " << q;
  }
}

// The data-parallel loss: a linear model's mean squared error on this rank's shard.
Tensor LocalLoss(const Tensor& w, const Tensor& b, const Tensor& x, const Tensor& y) {
  Tensor r = matmul(x, w) + b - y;
  return mean(r * r);
}

TEST_P(ProcessAxis, GradOfPmeanIsTheGlobalMeanGradientWithOneAllReducePerGradient) {
  const int size = GetParam();
  const int64_t per_rank = 4;
  const Tensor w = Rand({3, 2}, 1);
  const Tensor b = Rand({2}, 2);
  // The single-process oracle: the whole batch, all shards concatenated.
  TensorList xs, ys;
  for (int q = 0; q < size; ++q) {
    xs.push_back(Shard(q, {per_rank, 3}));
    ys.push_back(Shard(q, {per_rank, 2}, 7));
  }
  const Tensor x_all = cat(xs, 0);
  const Tensor y_all = cat(ys, 0);
  TensorList expected = grad(ScalarFn([&](const TensorList& p) {
    return LocalLoss(p[0], p[1], x_all, y_all) + 0.05 * sum(p[0] * p[0]);
  }), {0, 1})({w, b});
  dist::testing::RunOnThreads(size, [&](ProcessGroup& g) {
    auto binding = dist::bind_axis("dp", Borrow(g));
    const Tensor x = xs[static_cast<size_t>(g.rank())];
    const Tensor y = ys[static_cast<size_t>(g.rank())];
    const int64_t before = binding.calls();
    // The shards are captured (each process's own data); the parameters are shared; the
    // weight decay term after the pmean is on the shared parameters alone.
    TensorList grads = grad(ScalarFn([&](const TensorList& p) {
      return pmean(LocalLoss(p[0], p[1], x, y), "dp") + 0.05 * sum(p[0] * p[0]);
    }), {0, 1})({w, b});
    EXPECT_TENSOR_NEAR(grads[0], expected[0], 1e-12);
    EXPECT_TENSOR_NEAR(grads[1], expected[1], 1e-12);
    // One psum forward, one per gradient backward.
    EXPECT_EQ(binding.calls() - before, 3);
    // A parameter used twice is still summed once.
    const int64_t twice = binding.calls();
    grad(ScalarFn([&](const TensorList& p) {
      return pmean(LocalLoss(p[0], p[1], x, y) + LocalLoss(p[0], p[1], x * 2.0, y), "dp");
    }), {0, 1})({w, b});
    EXPECT_EQ(binding.calls() - twice, 3);
  });
}

TEST_P(ProcessAxis, PerSampleGradientsStayLocalAndPsumAddsThem) {
  // DP-SGD's shape: per-example gradients by vmap(grad) on the local shard (no collective:
  // each process's own), then one psum of their clipped sum.
  const int size = GetParam();
  const Tensor w = Rand({3, 2}, 3);
  const Tensor b = Rand({2}, 4);
  auto per_example = vmap(grad(ScalarFn([](const TensorList& a) {
                            return LocalLoss(a[0], a[1], unsqueeze(a[2], 0), unsqueeze(a[3], 0));
                          }), {0, 1}),
                          {std::nullopt, std::nullopt, 0, 0});
  Tensor expected = zeros({3, 2}, kFloat64);
  for (int q = 0; q < size; ++q) {
    expected = expected + sum(per_example({w, b, Shard(q, {5, 3}), Shard(q, {5, 2}, 7)})[0], {0});
  }
  dist::testing::RunOnThreads(size, [&](ProcessGroup& g) {
    auto binding = dist::bind_axis("dp", Borrow(g));
    const int q = g.rank();
    TensorList local = per_example({w, b, Shard(q, {5, 3}), Shard(q, {5, 2}, 7)});
    EXPECT_EQ(binding.calls(), 0);  // no collective in the per-example gradients
    EXPECT_TENSOR_NEAR(psum(sum(local[0], {0}), "dp"), expected, 1e-12);
  });
}

TEST_P(ProcessAxis, VmapAxisInsideProcessAxisGivesTheGlobalSum) {
  const int size = GetParam();
  Tensor expected = zeros({3}, kFloat64);
  for (int q = 0; q < size; ++q) expected = expected + sum(Shard(q, {4, 3}), {0});
  dist::testing::RunOnThreads(size, [&](ProcessGroup& g) {
    auto binding = dist::bind_axis("dp", Borrow(g));
    VmapOptions named;
    named.axis_name = "i";
    // psum over "dp" of a batched value: the batch rides along; then over "i".
    Tensor out = vmap(TensorFn([](const Tensor& x) { return psum(psum(x, "dp"), "i"); }),
                      named)(Shard(g.rank(), {4, 3}));
    EXPECT_TENSOR_NEAR(out, expand(unsqueeze(expected, 0), {4, 3}), 1e-12);
    // all_gather over "dp" of a batched value, dim 1: [batch, ranks, 3].
    Tensor gathered = vmap(TensorFn([](const Tensor& x) { return all_gather(x, "dp", 0); }),
                           named)(Shard(g.rank(), {4, 3}));
    EXPECT_EQ(gathered.sizes(), (Shape{4, size, 3}));
    EXPECT_TENSOR_NEAR(select(gathered, 1, size - 1), Shard(size - 1, {4, 3}), 0);
  });
}

TEST_P(ProcessAxis, JvpAndVjpAreTransposesSummedOverRanks) {
  const int size = GetParam();
  const std::vector<std::pair<const char*, TensorFn>> collectives = {
      {"psum", [](const Tensor& x) { return psum(x, "dp"); }},
      {"all_gather", [](const Tensor& x) { return all_gather(x, "dp", 1); }},
      // ppermute's result is each rank's own; gathered, one value for all.
      {"ppermute",
       [size](const Tensor& x) {
         std::vector<std::pair<int64_t, int64_t>> ring;
         for (int q = 0; q < size; ++q) ring.push_back({q, (q + 1) % size});
         return all_gather(ppermute(x, "dp", ring), "dp");
       }},
      // psum_scatter's result is each rank's own; gathered, one value for all.
      {"psum_scatter", [](const Tensor& x) { return all_gather(psum_scatter(x, "dp", 1), "dp"); }},
  };
  for (const auto& entry : collectives) {
    // Named variables: lambdas below capture them (clang 14 cannot capture bindings).
    const char* name = entry.first;
    const TensorFn& c = entry.second;
    std::mutex mu;
    double lhs = 0;  // <J v, u>, summed over ranks where the output varies
    double rhs = 0;  // sum over ranks of <v, J^T u>
    dist::testing::RunOnThreads(size, [&](ProcessGroup& g) {
      auto binding = dist::bind_axis("dp", Borrow(g));
      // x is each rank's own: its cotangent is too.
      dist::PerProcessInputs local("dp");
      const int r = g.rank();
      const Tensor x = Shard(r, {2, size, 3});
      const Tensor v = Shard(r, {2, size, 3}, 11);
      auto f = TensorListFn([&](const TensorList& a) { return TensorList{c(a[0])}; });
      JvpResult j = jvp(f, {x}, {v});
      // Every output here is one value for all ranks, and so is its cotangent.
      const Tensor u = Shard(0, j.outputs[0].sizes(), 13);
      VjpResult back = vjp(f, {x});
      const double mine_rhs = sum(v * back.vjp_fn({u})[0]).item<double>();
      const double mine_lhs = sum(j.tangents[0] * u).item<double>();
      std::lock_guard<std::mutex> lock(mu);
      rhs += mine_rhs;
      if (r == 0) lhs += mine_lhs;
    });
    EXPECT_NEAR(lhs, rhs, 1e-10) << name;
  }
}

TEST_P(ProcessAxis, JitReplaysEveryCollectiveEvenUnused) {
  const int size = GetParam();
  dist::testing::RunOnThreads(size, [size](ProcessGroup& g) {
    auto binding = dist::bind_axis("dp", Borrow(g));
    auto f = jit([](const TensorList& a) {
      psum(a[0] * 3.0, "dp");  // unused: still made, in order, at every replay
      return TensorList{psum(a[0], "dp") / psum(ones({}, kFloat64), "dp")};
    });
    for (int step = 0; step < 3; ++step) {
      const int64_t before = binding.calls();
      Tensor x = full({2}, Scalar(double(g.rank() + step)), kFloat64);
      Tensor out = f({x})[0];
      EXPECT_EQ(binding.calls() - before, 3) << "step " << step;
      const double expected = (size * (size - 1) / 2.0 + size * step) / size;
      EXPECT_NEAR(out.to_vector<double>()[0], expected, 1e-12) << "step " << step;
    }
  });
}

// A custom Function (softplus with its own backward) on the shared parameters and the
// process's data: its call is one op across the axis, so the parameter's gradient is still
// summed once.
struct Softplus : Function<Softplus> {
  static constexpr const char* name = "Softplus";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return log1p(exp(x)); }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& inputs, const Tensor&) {
    ctx.save_for_backward({std::get<0>(inputs)});
    ctx.save_for_forward({std::get<0>(inputs)});
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& grads) {
    return {grads[0] * sigmoid(ctx.saved_tensors()[0])};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& tangents) {
    return {tangents[0] * sigmoid(ctx.saved_tensors()[0])};
  }
};

TEST_P(ProcessAxis, HessianAndCustomFunctionsSeeTheGlobalObjective) {
  const int size = GetParam();
  const Tensor w = Rand({3}, 5);
  TensorList xs;
  for (int q = 0; q < size; ++q) xs.push_back(Shard(q, {4, 3}));
  const Tensor x_all = cat(xs, 0);
  auto loss = [](const Tensor& v, const Tensor& x) {
    return mean(Softplus::apply(matmul(x, v))) + 0.1 * sum(v * v * v);
  };
  const Tensor h_expected =
      hessian(TensorFnOfList([&](const TensorList& a) { return loss(a[0], x_all); }))({w})[0];
  const Tensor g_expected =
      grad(ScalarFn([&](const TensorList& a) { return loss(a[0], x_all); }))({w})[0];
  dist::testing::RunOnThreads(size, [&](ProcessGroup& g) {
    auto binding = dist::bind_axis("dp", Borrow(g));
    const Tensor x = xs[static_cast<size_t>(g.rank())];
    // The mean over the whole batch is the pmean of the shards' means (equal shards).
    auto global = [&](const Tensor& v) {
      return pmean(mean(Softplus::apply(matmul(x, v))), "dp") + 0.1 * sum(v * v * v);
    };
    const int64_t before = binding.calls();
    Tensor gw = grad(ScalarFn([&](const TensorList& a) { return global(a[0]); }))({w})[0];
    EXPECT_EQ(binding.calls() - before, 2);  // the pmean, and one sum of w's gradient
    EXPECT_TENSOR_NEAR(gw, g_expected, 1e-12);
    Tensor h = hessian(TensorFnOfList([&](const TensorList& a) { return global(a[0]); }))({w})[0];
    EXPECT_TENSOR_NEAR(h, h_expected, 1e-12);
  });
}

TEST_P(ProcessAxis, FunctionalizeKeepsCollectives) {
  const int size = GetParam();
  dist::testing::RunOnThreads(size, [size](ProcessGroup& g) {
    auto binding = dist::bind_axis("dp", Borrow(g));
    auto f = functionalize(TensorListFn([](const TensorList& a) {
      Tensor y = clone(a[0]);
      mul_(y, Scalar(2.0));
      psum(y, "dp");  // unused: still made
      return TensorList{psum(y, "dp")};
    }));
    const int64_t before = binding.calls();
    Tensor out = f({full({2}, Scalar(1.0), kFloat64)})[0];
    EXPECT_EQ(binding.calls() - before, 2);
    EXPECT_EQ(out.to_vector<double>()[0], 2.0 * size);
  });
}

TEST_P(ProcessAxis, JitOfGradReplaysTheForwardAndBackwardCollectives) {
  const int size = GetParam();
  const Tensor w = Rand({3, 2}, 9);
  TensorList xs, ys;
  for (int q = 0; q < size; ++q) {
    xs.push_back(Shard(q, {4, 3}, 21));
    ys.push_back(Shard(q, {4, 2}, 22));
  }
  const Tensor x_all = cat(xs, 0), y_all = cat(ys, 0);
  auto oracle = grad(ScalarFn([&](const TensorList& p) {
    return LocalLoss(p[0], zeros({2}, kFloat64), x_all, y_all);
  }));
  dist::testing::RunOnThreads(size, [&](ProcessGroup& g) {
    auto binding = dist::bind_axis("dp", Borrow(g));
    const Tensor x = xs[static_cast<size_t>(g.rank())];
    const Tensor y = ys[static_cast<size_t>(g.rank())];
    auto step = jit(grad(ScalarFn([&](const TensorList& p) {
      return pmean(LocalLoss(p[0], zeros({2}, kFloat64), x, y), "dp");
    })));
    Tensor v = w;
    for (int i = 0; i < 3; ++i) {
      const int64_t before = binding.calls();
      Tensor gv = step({v})[0];
      EXPECT_EQ(binding.calls() - before, 2) << "step " << i;  // pmean, and w's gradient
      EXPECT_TENSOR_NEAR(gv, oracle({v})[0], 1e-12) << "step " << i;
      v = v - 0.1 * gv;
    }
  });
}

TEST_P(ProcessAxis, ControlFlowInsideGradOfPmean) {
  // A loop over the shard (fori_loop) and a scan, inside grad(pmean): the global gradient.
  const int size = GetParam();
  const Tensor w = Rand({1}, 12);
  TensorList xs;
  for (int q = 0; q < size; ++q) xs.push_back(Shard(q, {4}, 31));
  const Tensor x_all = cat(xs, 0);
  auto unrolled = [](const Tensor& v, const Tensor& x) {
    Tensor c = x;
    for (int k = 0; k < 3; ++k) c = tanh(c * v) + 0.1 * x;
    return mean(c);
  };
  const Tensor expected =
      grad(ScalarFn([&](const TensorList& a) { return unrolled(a[0], x_all); }))({w})[0];
  dist::testing::RunOnThreads(size, [&](ProcessGroup& g) {
    auto binding = dist::bind_axis("dp", Borrow(g));
    const Tensor x = xs[static_cast<size_t>(g.rank())];
    Tensor by_fori = grad(ScalarFn([&](const TensorList& a) {
      const Tensor v = a[0];
      TensorList out = fori_loop(0, 3, [&](const Tensor&, const TensorList& c) {
        return TensorList{tanh(c[0] * v) + 0.1 * x};
      }, {x});
      return pmean(mean(out[0]), "dp");
    }))({w})[0];
    EXPECT_TENSOR_NEAR(by_fori, expected, 1e-12);
    Tensor by_scan = grad(ScalarFn([&](const TensorList& a) {
      const Tensor v = a[0];
      ScanResult r = scan([&](const TensorList& c, const TensorList&) {
        Tensor next = tanh(c[0] * v) + 0.1 * x;
        return std::pair<TensorList, TensorList>{{next}, {}};
      }, {x}, {zeros({3}, kFloat64)});
      return pmean(mean(r.carry[0]), "dp");
    }))({w})[0];
    EXPECT_TENSOR_NEAR(by_scan, expected, 1e-12);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, ProcessAxis, ::testing::Values(1, 2, 3));

TEST(ProcessAxisErrors, MismatchedShapesAreAnErrorOnEveryRank) {
  std::mutex mu;
  std::vector<std::string> messages;
  dist::testing::RunOnThreads(2, [&](ProcessGroup& g) {
    auto binding = dist::bind_axis("dp", Borrow(g));
    try {
      psum(zeros({g.rank() == 0 ? 3 : 4}, kFloat64), "dp");
    } catch (const Error& e) {
      std::lock_guard<std::mutex> lock(mu);
      messages.push_back(e.what());
    }
  });
  ASSERT_EQ(messages.size(), 2u);
  for (const std::string& m : messages) {
    EXPECT_NE(m.find("psum over axis 'dp': the processes disagree"), std::string::npos) << m;
    EXPECT_NE(m.find("shape [3]"), std::string::npos) << m;
    EXPECT_NE(m.find("shape [4]"), std::string::npos) << m;
  }
}

TEST(ProcessAxisErrors, DifferentCollectivesAreAnError) {
  std::mutex mu;
  std::vector<std::string> messages;
  dist::testing::RunOnThreads(2, [&](ProcessGroup& g) {
    auto binding = dist::bind_axis("dp", Borrow(g));
    try {
      const Tensor x = zeros({2}, kFloat64);
      if (g.rank() == 0) psum(x, "dp"); else all_gather(x, "dp");
    } catch (const Error& e) {
      std::lock_guard<std::mutex> lock(mu);
      messages.push_back(e.what());
    }
  });
  ASSERT_EQ(messages.size(), 2u);
  for (const std::string& m : messages) {
    EXPECT_NE(m.find("psum of a float64 tensor of shape [2]"), std::string::npos) << m;
    EXPECT_NE(m.find("all_gather of a float64 tensor of shape [2] dim 0"), std::string::npos)
        << m;
  }
}

TEST(ProcessAxisErrors, AStalledPeerIsAnErrorNamingTheAxisOpAndRank) {
  std::mutex mu;
  std::string message;
  const auto start = std::chrono::steady_clock::now();
  dist::testing::RunOnThreads(
      2,
      [&](ProcessGroup& g) {
        auto binding = dist::bind_axis("dp", Borrow(g));
        if (g.rank() == 1) return;  // never makes the collective
        try {
          psum(ones({3}, kFloat64), "dp");
        } catch (const Error& e) {
          std::lock_guard<std::mutex> lock(mu);
          message = e.what();
        }
      },
      std::chrono::milliseconds(500));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_NE(message.find("psum over axis 'dp' (rank 0 of 2, gloo)"), std::string::npos)
      << message;
  EXPECT_LT(elapsed, std::chrono::milliseconds(1000 + 2000));  // 2x the timeout, plus set-up
}

TEST(ProcessAxisErrors, BindingInsideATransformIsRefused) {
  dist::testing::RunOnThreads(1, [](ProcessGroup& g) {
    auto f = grad(TensorFn([&](const Tensor& x) {
      auto binding = dist::bind_axis("dp", Borrow(g));
      return sum(x);
    }));
    EXPECT_FT_ERROR(f(ones({2}, kFloat64)), "bind_axis: axis 'dp' must be bound outside");
    EXPECT_EQ(NamedAxes::depth(), 0);
  });
}

}  // namespace
}  // namespace ft

// The thread model (docs/architecture.md, "Threads"): every transform's state is per thread,
// so threads may run nested transforms at once; tensors are shared handles that any thread
// may read, copy and free; one JitFunction may be called from several threads. Each case
// checks its results bit for bit against the same computation on one thread. Tagged
// `concurrency`: CI also runs it under ThreadSanitizer.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ft.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace ft {
namespace {

constexpr int kThreads = 4;

Tensor Rand(IntArrayRef shape, uint64_t seed) {
  Generator g(seed);
  return rand_like(zeros(shape, kFloat64), &g) * 2.0 - 1.0;
}

// Work: a mix of nested transforms over shared read-only weights, returning every result.
TensorList Work(const Tensor& w, const Tensor& x) {
  auto loss = ScalarFn([w](const TensorList& a) { return sum(tanh(matmul(w, a[0])) * a[0]); });
  TensorList out;
  out.push_back(vmap(grad(loss))({unsqueeze(x, 0) + zeros({3, 1}, kFloat64)})[0]);
  out.push_back(jacrev(loss)({x})[0]);
  out.push_back(hessian(loss)({x})[0]);
  out.push_back(jvp(TensorListFn([w](const TensorList& a) {
                      return TensorList{sin(matmul(w, a[0]))};
                    }),
                    {x}, {ones_like(x)})
                    .tangents[0]);
  out.push_back(vmap(functionalize(TensorFn([](const Tensor& v) {
                  Tensor buf = zeros({v.numel()}, kFloat64);
                  add_(buf, v);
                  mul_(select(buf, 0, 0), 2.0);
                  return buf;
                })))(reshape(x, {2, -1})));
  return out;
}

void ExpectSameBits(const TensorList& a, const TensorList& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(testing::TensorEqual(a[i], b[i])) << i;
}

TEST(Threads, NestedTransformsRunAtOnceAndGiveOneThreadsBits) {
  const Tensor w = Rand({8, 8}, 1);  // shared, read by every thread
  std::vector<Tensor> inputs;
  std::vector<TensorList> expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(Rand({8}, 10 + t));
    expected.push_back(Work(w, inputs.back()));
  }
  std::vector<std::vector<TensorList>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) got[t].push_back(Work(w, inputs[t]));
      EXPECT_TRUE(LayerStack::empty());
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (const TensorList& r : got[t]) ExpectSameBits(r, expected[t]);
  }
}

TEST(Threads, TensorsMadeInOneThreadAreFreedInAnother) {
  // Sizes across the per-thread pools: inline storages, cached heap buffers (up to 64 KiB)
  // and larger ones; views keep their buffers alive across the hand-over.
  const std::vector<int64_t> sizes = {1, 7, 16, 100, 1000, 4000, 16384, 100000};
  for (int round = 0; round < 3; ++round) {
    std::vector<Tensor> made;
    std::thread maker([&] {
      for (int i = 0; i < 200; ++i) {
        Tensor t = full({sizes[i % sizes.size()]}, static_cast<double>(i), kFloat32);
        made.push_back(i % 3 == 0 ? narrow(t, 0, 0, 1) : t);
      }
    });
    maker.join();
    std::thread freer([&] {
      for (size_t i = 0; i < made.size(); ++i) {
        ASSERT_EQ(made[i].to_vector<float>()[0], static_cast<float>(i));
      }
      made.clear();  // the buffers go back to this thread's caches, not the maker's
      for (int i = 0; i < 200; ++i) {
        Tensor t = full({sizes[i % sizes.size()]}, 1.0, kFloat32);
        ASSERT_EQ(sum(t).item<float>(), static_cast<float>(sizes[i % sizes.size()]));
      }
    });
    freer.join();
  }
}

TEST(Threads, OneJitFunctionCalledFromSeveralThreads) {
  const Tensor w = Rand({8, 8}, 2);
  JitFunction jac = jit(jacrev([w](const TensorList& a) { return sin(matmul(w, a[0])) + a[0]; }));
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(Rand({8}, 20 + t));
    expected.push_back(jacrev([w](const TensorList& a) {
                         return sin(matmul(w, a[0])) + a[0];
                       })({inputs.back()})[0]);
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        if (!testing::TensorEqual(jac({inputs[t]})[0], expected[t])) ++mismatches;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  // Threads that met the signature together each traced it; one program was kept.
  const JitStats stats = jac.stats();
  EXPECT_EQ(stats.traces, 1);
  EXPECT_EQ(stats.programs, 1);
  EXPECT_EQ(stats.traces + stats.replays + stats.raced_traces, kThreads * 50);
  EXPECT_EQ(stats.eager_calls, 0);
}

// ---- Intra-op threads (NOTE: [Intra-op threads] in cpu/parallel.h) ----

// WithThreads runs f with the intra-op thread count set to n, restoring it after.
template <typename F>
auto WithThreads(int n, F&& f) {
  const int saved = GetNumThreads();
  SetNumThreads(n);
  auto result = f();
  SetNumThreads(saved);
  return result;
}

// Elementwise ops on large tensors, among them views whose data starts off a 64-byte
// boundary (so the chunk boundaries must follow the output's alignment), are the same bits
// with 1, 2 and 3 threads.
TEST(IntraOpThreads, ElementwiseResultsAreBitIdenticalAcrossThreadCounts) {
  const Tensor big = Rand({3, 100003}, 7);
  const Tensor f32 = to(big, kFloat32);
  auto elementwise = [&] {
    TensorList out;
    for (const Tensor& x : {big, f32, narrow(f32, 1, 3, 99990), select(f32, 0, 1)}) {
      out.push_back(sin(x));
      out.push_back(exp(x) * 0.5 + 1.0);
      out.push_back(tanh(x) * x);
      out.push_back(sqrt(abs(x)) - x);
      out.push_back(x - x * 0.25);
    }
    Tensor inplace = clone(narrow(f32, 1, 5, 99980));  // an in-place op on a fresh buffer
    mul_(inplace, 3.0);
    exp_(inplace);
    out.push_back(inplace);
    out.push_back(to(big, kInt64));
    out.push_back(gt(big, 0.0));
    // A row broadcast over many rows (whole rows per thread).
    out.push_back(reshape(narrow(reshape(f32, {-1}), 0, 0, 280000), {-1, 7}) +
                  arange(0.0, 7.0, 1.0));
    return out;
  };
  const TensorList one = WithThreads(1, elementwise);
  for (int n : {2, 3}) {
    const TensorList many = WithThreads(n, elementwise);
    ExpectSameBits(one, many);
  }
}

// Reductions and matrix products: the same bits every time with the same thread count, and
// close to one thread (their summation order follows the chunks).
TEST(IntraOpThreads, ReductionsAndProductsAreDeterministicForAThreadCount) {
  // Shapes that reach each split: one long row (partials), many rows, one row of many
  // columns, a large product (row blocks), a batch of products and of outer products.
  const Tensor v = Rand({300000}, 8);
  const Tensor rows = Rand({2000, 100}, 9);
  const Tensor cols = Rand({100, 3000}, 10);
  const Tensor a = Rand({300, 200}, 11), b = Rand({200, 150}, 12);
  const Tensor batch = Rand({128, 40, 50}, 13), batch_w = Rand({128, 50, 30}, 14);
  const Tensor outer = Rand({1200, 60}, 15);
  auto work = [&] {
    return TensorList{sum(v),           mean(v),
                      sum(rows, {1}),   amax(rows, {1}),
                      sum(cols, {0}),   sum(square(v)),
                      matmul(a, b),     matmul(to(a, kFloat32), to(b, kFloat32)),
                      matmul(batch, batch_w), matmul(unsqueeze(outer, 2), unsqueeze(outer, 1))};
  };
  const TensorList one = WithThreads(1, work);
  for (int n : {2, 3}) {
    const TensorList x = WithThreads(n, work);
    const TensorList y = WithThreads(n, work);
    ExpectSameBits(x, y);
    ASSERT_EQ(x.size(), one.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double tol = x[i].dtype() == kFloat32 ? 1e-4 : 1e-9;
      EXPECT_TRUE(allclose(x[i], one[i], tol, tol)) << i;
    }
    // Whole outputs per thread (many rows, the columns of one row, batches of products):
    // the one-thread bits.
    for (size_t i : {2u, 3u, 4u, 8u, 9u}) {
      EXPECT_TRUE(testing::TensorEqual(x[i], one[i])) << i;
    }
  }
}

// Transforms on one thread each while the kernels split over the pool: every result is the
// one-thread value (the pool serves one op at a time; the others run inline).
TEST(IntraOpThreads, TransformsOnSeveralThreadsShareThePool) {
  const Tensor w = Rand({200, 200}, 12);
  auto f = [&](const Tensor& v) {
    return vmap(grad(ScalarFn([&w](const TensorList& a) {
      return sum(tanh(matmul(w, a[0])));
    })))({v})[0];
  };
  const Tensor xs = Rand({300, 200}, 13);
  const Tensor expected = WithThreads(1, [&] { return f(xs); });
  const int saved = GetNumThreads();
  SetNumThreads(2);
  std::vector<Tensor> results(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back([&, t] { results[t] = f(xs); });
  for (std::thread& th : threads) th.join();
  SetNumThreads(saved);
  for (const Tensor& r : results) EXPECT_TRUE(allclose(r, expected, 1e-9, 1e-9));
}

}  // namespace
}  // namespace ft

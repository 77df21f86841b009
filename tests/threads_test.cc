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

}  // namespace
}  // namespace ft

// The transforms over trees from several threads at once: each thread's layer stack is its
// own, and one jit over trees (its program table shared, its output structures recorded under
// a lock) is called concurrently with arguments of two structures. Oracle: the same calls made
// eagerly on one thread. .ci/run also runs it under ThreadSanitizer.
#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "ops/ops.h"
#include "tensor/allclose.h"
#include "tests/derivative_checks.h"
#include "tree/transforms.h"
#include "tree/tree.h"

namespace ft {
namespace tree_threads_test {

using testing::Rand;

struct Model {
  Tensor w, b;
  double scale = 1.0;  // static: two values, two structures
};
FT_TREE(Model, w, b, scale);

Tensor Loss(const Model& m, const Tensor& x) {
  return sum(tanh(matmul(x, m.w) + m.b) * m.scale);
}

TEST(TreeThreads, OneJitOverTreesFromFourThreads) {
  constexpr int kThreads = 4, kCalls = 20;
  const Tensor x = Rand({3, 4}, 1);
  const Model a{Rand({4, 2}, 2), Rand({2}, 3), 1.0};
  const Model b{Rand({4, 2}, 4), Rand({2}, 5), 0.5};
  const Model want_a = grad(&Loss)(a, x), want_b = grad(&Loss)(b, x);
  auto jitted = jit(grad(&Loss));
  const Tensor xs = Rand({5, 3, 4}, 6);
  auto per_example = vmap(grad(&Loss), {std::nullopt, 0});
  const Model want_batch = per_example(a, xs);
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kCalls; ++k) {
        const bool first = (k + t) % 2 == 0;
        const Model got = jitted(first ? a : b, x);
        const Model& want = first ? want_a : want_b;
        if (!allclose(got.w, want.w, 1e-12, 1e-12) || got.scale != want.scale) ++failures[t];
        const Model batch = per_example(a, xs);
        if (!allclose(batch.b, want_batch.b, 1e-12, 1e-12)) ++failures[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace tree_threads_test
}  // namespace ft

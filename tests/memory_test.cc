// Memory stays flat: thousands of repeated transform calls (vmap(grad), jacrev, jvp, a custom
// Function under vmap(grad), functionalize) leave resident memory where the first hundred
// left it, and every autograd graph and Function ctx is freed with the last handle to it (no
// reference cycles). Under AddressSanitizer the resident-size check is skipped (its
// quarantine holds freed memory on purpose); LeakSanitizer checks for leaks there instead.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <tuple>
#include <utility>

#include "ft.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

// GCC defines __SANITIZE_*__; clang answers __has_feature instead.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FT_SANITIZED 1
#endif
#endif
#ifdef FT_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

namespace ft {
namespace {

// ResidentBytes: this process's resident set size, from /proc/self/statm.
int64_t ResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long size = 0, resident = 0;
  const int n = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  return n == 2 ? static_cast<int64_t>(resident) * 4096 : -1;
}

// Alive counts the live objects of a Function's ctx state: it drops to zero when every ctx
// (and so every graph node holding one) is freed.
struct Alive {
  static inline int count = 0;
  Alive() { ++count; }
  Alive(const Alive&) { ++count; }
  ~Alive() { --count; }
};

struct Tracked : Function<Tracked> {
  static constexpr const char* name = "Tracked";
  static constexpr bool generate_vmap_rule = true;
  static Tensor forward(const Tensor& x) { return x * x; }
  static void setup_context(FunctionCtx& ctx, const std::tuple<Tensor>& in, const Tensor& out) {
    ctx.state<Alive>();
    ctx.save_for_backward({std::get<0>(in), out});  // an output saved: a cycle if kept wrapped
  }
  static TensorList backward(FunctionCtx& ctx, const TensorList& g) {
    return {g[0] * 2.0 * ctx.saved_tensors()[0]};
  }
  static TensorList jvp(FunctionCtx& ctx, const TensorList& t) {
    return {t[0] * 2.0 * ctx.saved_tensors()[0]};
  }
};

void RunAll(const Tensor& w, const Tensor& xs) {
  auto loss = ScalarFn([w](const TensorList& a) {
    return sum(Tracked::apply(tanh(matmul(w, a[0]))));
  });
  vmap(grad(loss))({xs});
  jacrev(loss)({select(xs, 0, 0)});
  jvp(TensorListFn([w](const TensorList& a) { return TensorList{sin(matmul(w, a[0]))}; }),
      {select(xs, 0, 0)}, {select(xs, 0, 1)});
  vmap(functionalize(TensorFn([](const Tensor& v) {
    Tensor buf = zeros({v.numel()});
    add_(buf, v);
    mul_(narrow(buf, 0, 0, 2), 3.0);
    return buf;
  })))(xs);
  VjpResult r = vjp(TensorListFn([](const TensorList& a) {
                      return TensorList{Tracked::apply(a[0])};
                    }),
                    {select(xs, 0, 0)});
  r.vjp_fn({ones({xs.size(1)})});
}

TEST(Memory, RepeatedTransformsKeepResidentMemoryFlat) {
  Generator g(1);
  const Tensor w = rand_like(zeros({32, 32}), &g);
  const Tensor xs = rand_like(zeros({16, 32}), &g);
  for (int i = 0; i < 200; ++i) RunAll(w, xs);  // warm the per-thread pools and caches
  const int64_t before = ResidentBytes();
  for (int i = 0; i < 3000; ++i) RunAll(w, xs);
  const int64_t after = ResidentBytes();
  EXPECT_EQ(Alive::count, 0) << "Function contexts outlived their graphs";
  if (kSanitized || before < 0) GTEST_SKIP() << "resident size not measured here";
  // 3000 calls of this work allocate gigabytes in all; what stays must not grow with them.
  EXPECT_LT(after - before, int64_t{8} << 20) << "resident " << before << " -> " << after;
}

TEST(Memory, GraphsAndContextsAreFreedWithTheirLastHandle) {
  const Tensor x = ones({3});
  {
    VjpResult r = vjp(TensorListFn([](const TensorList& a) {
                        return TensorList{Tracked::apply(Tracked::apply(a[0]))};
                      }),
                      {x});
    EXPECT_EQ(Alive::count, 2);  // both nodes' contexts, held by vjp_fn's graph
    EXPECT_TENSOR_NEAR(r.vjp_fn({ones({3})})[0], full({3}, 4.0), 1e-6);
  }
  EXPECT_EQ(Alive::count, 0);
  // Inside nested transforms, also when the call throws half way.
  EXPECT_FT_ERROR(grad(ScalarFn([](const TensorList& a) -> Tensor {
                    Tensor y = Tracked::apply(a[0]);
                    (void)y;
                    ThrowError("thrown after recording");
                  }))({x}),
                  "thrown after recording");
  EXPECT_EQ(Alive::count, 0);
  vmap(grad(ScalarFn([](const TensorList& a) { return sum(Tracked::apply(a[0])); })))(
      {ones({4, 3})});
  EXPECT_EQ(Alive::count, 0);
}

}  // namespace
}  // namespace ft

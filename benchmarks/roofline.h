// ft/benchmarks/roofline.h  (testonly)
//
// The machine's limits for the elementwise and reduction figures, measured in the same run as
// ft (issue 22: "the limit column becomes the machine's"):
//   - Triad: STREAM's a[i] = b[i] + s * c[i] over three float arrays. Its time and the bytes
//     it moves (3 arrays; STREAM does not count the write-allocate) give the bandwidth a
//     workload's compulsory traffic is held against (//benchmarks:compare's roofline column).
//   - Chain10Limit / JvpChain10Limit: workloads.h's Chain10 and its jvp as one hand-written
//     pass over strips that stay in L1, calling the same vector functions ft's kernels call
//     (cpu/vecmath.h, SLEEF) for the transcendentals: what the math costs when nothing
//     but the math runs.
// Each runs on ft's intra-op threads (FT_NUM_THREADS), split into the same contiguous
// ranges as ft's kernels, so the 2-thread rows compare like with like.
#ifndef FT_BENCHMARKS_ROOFLINE_H_
#define FT_BENCHMARKS_ROOFLINE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cpu/parallel.h"
#include "cpu/vecmath.h"

namespace ft::bench {

// Elements per strip: 4 KiB of float per buffer, several buffers, all in L1.
inline constexpr int64_t kStrip = 1024;

// Below this many elements a roofline loop runs on one thread (ft's kernels' grain is of
// the same order, tensor/loops.h).
inline constexpr int64_t kRooflineGrain = 1 << 15;

// a[i] = b[i] + 3 c[i] for i in [0, n).
inline void Triad(float* a, const float* b, const float* c, int64_t n) {
  internal::ParallelFor(n, kRooflineGrain, 16, 0, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) a[i] = b[i] + 3.0f * c[i];
  });
}

// The bytes a triad over n floats moves, as STREAM counts them.
inline double TriadBytes(int64_t n) { return 3.0 * 4.0 * static_cast<double>(n); }

// out = Chain10(x) (workloads.h): -sqrt(|exp(tanh(sin(x) * 0.9 + 0.1) * x) - 1|).
inline void Chain10Limit(const float* x, float* out, int64_t n) {
  using vecmath::Fn;
  internal::ParallelFor(n, kRooflineGrain, 16, 0, [&](int64_t begin, int64_t end) {
    float y[kStrip];
    for (int64_t s = begin; s < end; s += kStrip) {
      const int64_t m = std::min(kStrip, end - s);
      const float* xs = x + s;
      vecmath::Apply(Fn::kSin, xs, y, m);
      for (int64_t i = 0; i < m; ++i) y[i] = y[i] * 0.9f + 0.1f;
      vecmath::Apply(Fn::kTanh, y, y, m);
      for (int64_t i = 0; i < m; ++i) y[i] *= xs[i];
      vecmath::Apply(Fn::kExp, y, y, m);
      for (int64_t i = 0; i < m; ++i) y[i] = std::fabs(y[i] - 1.0f);
      vecmath::Apply(Fn::kSqrt, y, y, m);
      for (int64_t i = 0; i < m; ++i) out[s + i] = -y[i];
    }
  });
}

// (out, out_t) = jvp(Chain10, x, t): the primal and its tangent in one pass.
inline void JvpChain10Limit(const float* x, const float* t, float* out, float* out_t,
                            int64_t n) {
  using vecmath::Fn;
  internal::ParallelFor(n, kRooflineGrain, 16, 0, [&](int64_t begin, int64_t end) {
    float y[kStrip], c[kStrip], dy[kStrip];
    for (int64_t s = begin; s < end; s += kStrip) {
      const int64_t m = std::min(kStrip, end - s);
      const float* xs = x + s;
      const float* ts = t + s;
      vecmath::Apply(Fn::kSin, xs, y, m);
      vecmath::Apply(Fn::kCos, xs, c, m);
      for (int64_t i = 0; i < m; ++i) {
        dy[i] = c[i] * 0.9f * ts[i];
        y[i] = y[i] * 0.9f + 0.1f;
      }
      vecmath::Apply(Fn::kTanh, y, y, m);  // y4
      for (int64_t i = 0; i < m; ++i) {
        dy[i] = (1.0f - y[i] * y[i]) * dy[i];  // t4
        dy[i] = dy[i] * xs[i] + y[i] * ts[i];  // d(y4 * x)
        y[i] *= xs[i];
      }
      vecmath::Apply(Fn::kExp, y, y, m);  // y6
      for (int64_t i = 0; i < m; ++i) {
        dy[i] *= y[i];        // t6
        y[i] = y[i] - 1.0f;   // y7 (its tangent is t6)
        c[i] = std::fabs(y[i]);
        dy[i] = y[i] > 0.0f ? dy[i] : y[i] < 0.0f ? -dy[i] : 0.0f;  // |y7|'s: sign(y7) t6
      }
      vecmath::Apply(Fn::kSqrt, c, c, m);  // y9
      for (int64_t i = 0; i < m; ++i) {
        out[s + i] = -c[i];
        out_t[s + i] = -(dy[i] / (2.0f * c[i]));
      }
    }
  });
}

}  // namespace ft::bench

#endif  // FT_BENCHMARKS_ROOFLINE_H_

// ft/cpu/vecmath_isa-inl.h  (internal to //cpu:vecmath; no include guard on purpose)
//
// The body of one capability's table of vecmath functions. Each vecmath_<isa>.cc defines the
// macros below and includes this file once, inside an anonymous namespace of its own, so the
// same source becomes SSE2, AVX2 or AVX-512 code without any of it being shared (and so
// possibly linked in place of another level's copy):
//   FT_VM_VF, FT_VM_VD           the vector types (__m256, __m256d, ...);
//   FT_SLEEF_F(fn, ulp)          SLEEF's float function, e.g. Sleef_expf8_u10avx2;
//   FT_SLEEF_D(fn, ulp)          SLEEF's double function;
//   FT_VM_SQRT_F(v), _D(v)       the hardware square root (correctly rounded).
// It defines kIsaTable, which the including file exports under its level's name.
// The vector types support GCC's element-wise operators (+, -, *, /, unary -), which keeps
// the compositions (sigmoid, rsqrt) readable and the same at every level.

// LoadHead / StoreHead: the first k (< lanes) elements of an array in a vector, the other
// lanes 0, and back. A capability with masked loads and stores defines FT_VM_LOAD_HEAD_F/_D
// and FT_VM_STORE_HEAD_F/_D (AVX2, AVX-512); otherwise the elements go through memory (SSE2).
// Masked, a small tensor's only vector is not copied in through the stack: that copy is a
// store-forwarding stall that every op on a tensor of a few elements would pay.
template <typename V, typename T>
V LoadHeadThroughMemory(const T* p, int64_t k) {
  V v = V{};
  std::memcpy(&v, p, static_cast<size_t>(k) * sizeof(T));
  return v;
}
#ifndef FT_VM_LOAD_HEAD_F
#define FT_VM_LOAD_HEAD_F(p, k) LoadHeadThroughMemory<FT_VM_VF>(p, k)
#define FT_VM_LOAD_HEAD_D(p, k) LoadHeadThroughMemory<FT_VM_VD>(p, k)
#define FT_VM_STORE_HEAD_F(p, k, v) std::memcpy(p, &v, static_cast<size_t>(k) * sizeof(float))
#define FT_VM_STORE_HEAD_D(p, k, v) std::memcpy(p, &v, static_cast<size_t>(k) * sizeof(double))
#endif
inline FT_VM_VF LoadHead(const float* p, int64_t k) { return FT_VM_LOAD_HEAD_F(p, k); }
inline FT_VM_VD LoadHead(const double* p, int64_t k) { return FT_VM_LOAD_HEAD_D(p, k); }
inline void StoreHead(float* p, int64_t k, FT_VM_VF v) { FT_VM_STORE_HEAD_F(p, k, v); }
inline void StoreHead(double* p, int64_t k, FT_VM_VD v) { FT_VM_STORE_HEAD_D(p, k, v); }

// One array function: whole vectors, then the tail padded with zeros into one more vector,
// so every element goes through the same vector code (see vecmath.h).
#define FT_VM_UNARY(NAME, T, V, EXPR)                      \
  void NAME(const T* in, T* out, int64_t n) {              \
    constexpr int64_t kLanes = sizeof(V) / sizeof(T);      \
    int64_t i = 0;                                         \
    for (; i + kLanes <= n; i += kLanes) {                 \
      V x;                                                 \
      std::memcpy(&x, in + i, sizeof(V));                  \
      const V y = (EXPR);                                  \
      std::memcpy(out + i, &y, sizeof(V));                 \
    }                                                      \
    if (i < n) {                                           \
      const V x = LoadHead(in + i, n - i);                 \
      const V y = (EXPR);                                  \
      StoreHead(out + i, n - i, y);                        \
    }                                                      \
  }

#define FT_VM_BINARY(NAME, T, V, EXPR)                     \
  void NAME(const T* a, const T* b, T* out, int64_t n) {   \
    constexpr int64_t kLanes = sizeof(V) / sizeof(T);      \
    int64_t i = 0;                                         \
    for (; i + kLanes <= n; i += kLanes) {                 \
      V x, z;                                              \
      std::memcpy(&x, a + i, sizeof(V));                   \
      std::memcpy(&z, b + i, sizeof(V));                   \
      const V y = (EXPR);                                  \
      std::memcpy(out + i, &y, sizeof(V));                 \
    }                                                      \
    if (i < n) {                                           \
      const V x = LoadHead(a + i, n - i);                  \
      const V z = LoadHead(b + i, n - i);                  \
      const V y = (EXPR);                                  \
      StoreHead(out + i, n - i, y);                        \
    }                                                      \
  }

// Arithmetic: out[i] = a[i * a_step] OP b[i * b_step], each step 1 (an array) or 0 (one
// value, broadcast). IEEE's +, -, *, / round each element the same way at any vector width
// and in scalar code, so these give a scalar loop's bits at every level. That is why the
// tail (fewer than a vector's lanes: all of a small tensor) is a scalar loop: padding it into
// a vector through the stack costs two store-forwarding stalls, which per-op workloads on
// tensors of a few elements paid on every op.
template <typename T, typename V, typename F>
inline void ArithLoop(const T* a, int64_t a_step, const T* b, int64_t b_step, T* out,
                      int64_t n, F op) {
  constexpr int64_t kLanes = sizeof(V) / sizeof(T);
  int64_t i = 0;
  if (n >= kLanes) {
    V a_splat, b_splat;
    for (int64_t j = 0; j < kLanes; ++j) {
      a_splat[j] = a[0];
      b_splat[j] = b[0];
    }
    for (; i + kLanes <= n; i += kLanes) {
      V x = a_splat, z = b_splat;
      if (a_step != 0) std::memcpy(&x, a + i, sizeof(V));
      if (b_step != 0) std::memcpy(&z, b + i, sizeof(V));
      const V y = op(x, z);
      std::memcpy(out + i, &y, sizeof(V));
    }
  }
  for (; i < n; ++i) out[i] = op(a[i * a_step], b[i * b_step]);
}

// Outer: row r of out is a[r * a_step] times b[0, n), ArithLoop's product of a broadcast
// value and an array (so each element is the one IEEE product).
#define FT_VM_OUTER(NAME, T, V)                                                             \
  void NAME(const T* a, int64_t a_step, int64_t m, const T* b, int64_t n, T* out) {        \
    for (int64_t r = 0; r < m; ++r) {                                                       \
      ArithLoop<T, V>(a + r * a_step, 0, b, 1, out + r * n, n,                             \
                      [](auto x, auto z) { return x * z; });                               \
    }                                                                                       \
  }

// EXPR of x and z (vectors or, in the tail, scalars): the same expression both ways.
#define FT_VM_ARITH_OF(NAME, T, V, EXPR)                                                \
  void NAME(const T* a, int64_t a_step, const T* b, int64_t b_step, T* out, int64_t n) { \
    ArithLoop<T, V>(a, a_step, b, b_step, out, n, [](auto x, auto z) { return (EXPR); }); \
  }
#define FT_VM_ARITH(NAME, T, V, OP) FT_VM_ARITH_OF(NAME, T, V, x OP z)
// TailOf: x[i, end) (fewer than a vector's lanes) in a vector, the other lanes 0. Where
// the array holds a whole vector before `end`, it is loaded ending at `end` and the lanes
// before i are masked off: a copy of the tail into a zeroed vector would be a call and a
// store-forwarding stall, a cost every short row pays. A shorter array is LoadHead's.
#define FT_VM_TAIL(T, V, Int)                                                    \
  V TailOf(const T* x, int64_t i, int64_t end) {                                 \
    constexpr int64_t kLanes = sizeof(V) / sizeof(T);                            \
    using IntV = Int __attribute__((vector_size(sizeof(V))));                    \
    V v;                                                                         \
    if (end >= kLanes) {                                                         \
      IntV lane;                                                                 \
      for (int64_t j = 0; j < kLanes; ++j) lane[j] = static_cast<Int>(j);        \
      std::memcpy(&v, x + end - kLanes, sizeof(V));                              \
      return lane >= static_cast<Int>(kLanes - (end - i)) ? v : V{};             \
    }                                                                            \
    return LoadHead(x + i, end - i);                                             \
  }
FT_VM_TAIL(float, FT_VM_VF, int32_t)
FT_VM_TAIL(double, FT_VM_VD, int64_t)
#undef FT_VM_TAIL

// HorizontalSum<T, N>(v): the N lanes of v added in a fixed tree, the high half of the lanes
// onto the low half until one is left (lane j + N/2 onto lane j, then j + N/4 onto j, ...).
// The halves are shuffled in registers: the same additions on a stored copy of the lanes
// wait on store-to-load forwarding at every level, which was a third of a 1000-element row
// sum at AVX-512.
template <int N, typename V, size_t... I>
inline auto LowLanes(V v, std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, static_cast<int>(I)...);
}
template <int N, typename V, size_t... I>
inline auto HighLanes(V v, std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, static_cast<int>(I + N / 2)...);
}
template <typename T, int N, typename V>
inline T HorizontalSum(V v) {
  if constexpr (N == 2) {
    return v[0] + v[1];
  } else {
    return HorizontalSum<T, N / 2>(LowLanes<N>(v, std::make_index_sequence<N / 2>()) +
                                   HighLanes<N>(v, std::make_index_sequence<N / 2>()));
  }
}

// The sum of n elements. Four vector accumulators hide the add's latency; each block of
// kSumBlock elements is summed on its own and added into a running vector total, so no lane
// adds more than ~kSumBlock / lanes + n / kSumBlock terms in sequence (plain accumulation
// would add n / lanes: a float sum of 10^7 elements then loses digits). The tail is padded
// with zeros into one more vector, and the lanes are added in HorizontalSum's tree: the result is a
// function of the values and the capability alone.
inline constexpr int64_t kSumBlock = 4096;
#define FT_VM_SUM(NAME, T, V)                                                   \
  T NAME(const T* x, int64_t n) {                                               \
    constexpr int64_t kLanes = sizeof(V) / sizeof(T);                           \
    V total = V{};                                                              \
    for (int64_t start = 0; start < n; start += kSumBlock) {                    \
      const int64_t end = n - start < kSumBlock ? n : start + kSumBlock;        \
      V a0 = V{}, a1 = V{}, a2 = V{}, a3 = V{};                                 \
      int64_t i = start;                                                        \
      for (; i + 4 * kLanes <= end; i += 4 * kLanes) {                          \
        V v0, v1, v2, v3;                                                       \
        std::memcpy(&v0, x + i, sizeof(V));                                     \
        std::memcpy(&v1, x + i + kLanes, sizeof(V));                            \
        std::memcpy(&v2, x + i + 2 * kLanes, sizeof(V));                        \
        std::memcpy(&v3, x + i + 3 * kLanes, sizeof(V));                        \
        a0 += v0;                                                               \
        a1 += v1;                                                               \
        a2 += v2;                                                               \
        a3 += v3;                                                               \
      }                                                                         \
      for (; i + kLanes <= end; i += kLanes) {                                  \
        V v;                                                                    \
        std::memcpy(&v, x + i, sizeof(V));                                      \
        a0 += v;                                                                \
      }                                                                         \
      if (i < end) {                                                            \
        a1 += TailOf(x, i, end);                                                \
      }                                                                         \
      total += (a0 + a1) + (a2 + a3);                                           \
    }                                                                           \
    return HorizontalSum<T, static_cast<int>(kLanes)>(total);                   \
  }

// SumRows: out[r] = NAME_ONE(x + r * n, n) for r in [0, rows), with the same bits and without
// one dispatch per row. Rows of at most one block are summed two at a time: each row gets
// NAME_ONE's additions in NAME_ONE's order (four accumulators, the tail into the second, the
// block's total added to a zero vector, the lanes in HorizontalSum's tree), but the eight
// chains of a pair hide the add's latency that four cannot, and the loop's set-up and the
// lane sums are paid once per pair. Longer rows and an odd last row take NAME_ONE.
#define FT_VM_SUM_ROWS(NAME, NAME_ONE, T, V)                                    \
  void NAME(const T* x, int64_t rows, int64_t n, T* out) {                      \
    constexpr int64_t kLanes = sizeof(V) / sizeof(T);                           \
    int64_t r = 0;                                                              \
    if (n <= kSumBlock) {                                                       \
      for (; r + 2 <= rows; r += 2) {                                           \
        const T* p = x + r * n;                                                 \
        const T* q = p + n;                                                     \
        V a0 = V{}, a1 = V{}, a2 = V{}, a3 = V{};                               \
        V b0 = V{}, b1 = V{}, b2 = V{}, b3 = V{};                               \
        int64_t i = 0;                                                          \
        for (; i + 4 * kLanes <= n; i += 4 * kLanes) {                          \
          V v0, v1, v2, v3, w0, w1, w2, w3;                                     \
          std::memcpy(&v0, p + i, sizeof(V));                                   \
          std::memcpy(&v1, p + i + kLanes, sizeof(V));                          \
          std::memcpy(&v2, p + i + 2 * kLanes, sizeof(V));                      \
          std::memcpy(&v3, p + i + 3 * kLanes, sizeof(V));                      \
          std::memcpy(&w0, q + i, sizeof(V));                                   \
          std::memcpy(&w1, q + i + kLanes, sizeof(V));                          \
          std::memcpy(&w2, q + i + 2 * kLanes, sizeof(V));                      \
          std::memcpy(&w3, q + i + 3 * kLanes, sizeof(V));                      \
          a0 += v0;                                                             \
          a1 += v1;                                                             \
          a2 += v2;                                                             \
          a3 += v3;                                                             \
          b0 += w0;                                                             \
          b1 += w1;                                                             \
          b2 += w2;                                                             \
          b3 += w3;                                                             \
        }                                                                       \
        for (; i + kLanes <= n; i += kLanes) {                                  \
          V v, w;                                                               \
          std::memcpy(&v, p + i, sizeof(V));                                    \
          std::memcpy(&w, q + i, sizeof(V));                                    \
          a0 += v;                                                              \
          b0 += w;                                                              \
        }                                                                       \
        if (i < n) {                                                            \
          a1 += TailOf(p, i, n);                                                \
          b1 += TailOf(q, i, n);                                                \
        }                                                                       \
        V total_a = V{}, total_b = V{};                                         \
        total_a += (a0 + a1) + (a2 + a3);                                       \
        total_b += (b0 + b1) + (b2 + b3);                                       \
        out[r] = HorizontalSum<T, static_cast<int>(kLanes)>(total_a);           \
        out[r + 1] = HorizontalSum<T, static_cast<int>(kLanes)>(total_b);       \
      }                                                                         \
    }                                                                           \
    for (; r < rows; ++r) out[r] = NAME_ONE(x + r * n, n);                      \
  }

// Columns: out[c] = combine of column c of a rows x cols matrix whose rows are ld apart, for
// c < cols, rows >= 1, folded in row order from the first row (acc = row 0, then
// acc = COMBINE(acc, v) for each next row: a sequential loop's bits per column, so any split
// of the columns gives the same result). COMBINE is an expression in `acc` and `v` valid for
// both a vector and a scalar. Blocks of four vectors of columns stay in registers down all
// the rows; the last columns (fewer than a vector) take a plain loop.
#define FT_VM_COLUMNS(NAME, T, V, COMBINE)                                               \
  void NAME(const T* x, int64_t rows, int64_t cols, int64_t ld, T* out) {               \
    constexpr int64_t kLanes = sizeof(V) / sizeof(T);                                   \
    const auto combine = [](auto acc, auto v) { return (COMBINE); };                    \
    int64_t c = 0;                                                                      \
    for (; c + 4 * kLanes <= cols; c += 4 * kLanes) {                                   \
      V a0, a1, a2, a3;                                                                 \
      std::memcpy(&a0, x + c, sizeof(V));                                               \
      std::memcpy(&a1, x + c + kLanes, sizeof(V));                                      \
      std::memcpy(&a2, x + c + 2 * kLanes, sizeof(V));                                  \
      std::memcpy(&a3, x + c + 3 * kLanes, sizeof(V));                                  \
      for (int64_t r = 1; r < rows; ++r) {                                              \
        const T* p = x + r * ld + c;                                                    \
        V v0, v1, v2, v3;                                                               \
        std::memcpy(&v0, p, sizeof(V));                                                 \
        std::memcpy(&v1, p + kLanes, sizeof(V));                                        \
        std::memcpy(&v2, p + 2 * kLanes, sizeof(V));                                    \
        std::memcpy(&v3, p + 3 * kLanes, sizeof(V));                                    \
        a0 = combine(a0, v0);                                                           \
        a1 = combine(a1, v1);                                                           \
        a2 = combine(a2, v2);                                                           \
        a3 = combine(a3, v3);                                                           \
      }                                                                                 \
      std::memcpy(out + c, &a0, sizeof(V));                                             \
      std::memcpy(out + c + kLanes, &a1, sizeof(V));                                    \
      std::memcpy(out + c + 2 * kLanes, &a2, sizeof(V));                                \
      std::memcpy(out + c + 3 * kLanes, &a3, sizeof(V));                                \
    }                                                                                   \
    for (; c + kLanes <= cols; c += kLanes) {                                           \
      V a;                                                                              \
      std::memcpy(&a, x + c, sizeof(V));                                                \
      for (int64_t r = 1; r < rows; ++r) {                                              \
        V v;                                                                            \
        std::memcpy(&v, x + r * ld + c, sizeof(V));                                     \
        a = combine(a, v);                                                              \
      }                                                                                 \
      std::memcpy(out + c, &a, sizeof(V));                                              \
    }                                                                                   \
    for (; c < cols; ++c) {                                                             \
      T a = x[c];                                                                       \
      for (int64_t r = 1; r < rows; ++r) a = combine(a, x[r * ld + c]);                 \
      out[c] = a;                                                                       \
    }                                                                                   \
  }

// The largest (kMax) or smallest element of x[0, n), n >= 1; NaN when any element is NaN
// (torch.amax / amin). A lane takes v where v is beyond it or v is NaN, so a NaN, once in, stays.
// The tail is the last whole vector of the array (elements seen twice change no extreme), or
// in an array shorter than a vector, padded with copies of its first element.
#define FT_VM_EXTREME(NAME, T, V, BEYOND)                                       \
  T NAME(const T* x, int64_t n) {                                               \
    constexpr int64_t kLanes = sizeof(V) / sizeof(T);                           \
    const auto take = [](V acc, V v) { return ((v BEYOND acc) | (v != v)) ? v : acc; }; \
    V a0 = V{} + x[0], a1 = a0;                                                 \
    int64_t i = 0;                                                              \
    for (; i + 2 * kLanes <= n; i += 2 * kLanes) {                              \
      V v0, v1;                                                                 \
      std::memcpy(&v0, x + i, sizeof(V));                                       \
      std::memcpy(&v1, x + i + kLanes, sizeof(V));                              \
      a0 = take(a0, v0);                                                        \
      a1 = take(a1, v1);                                                        \
    }                                                                           \
    if (i + kLanes <= n) {                                                      \
      V v;                                                                      \
      std::memcpy(&v, x + i, sizeof(V));                                        \
      a0 = take(a0, v);                                                         \
      i += kLanes;                                                              \
    }                                                                           \
    if (i < n) {                                                                \
      V v = V{} + x[i];                                                         \
      if (n >= kLanes) {                                                        \
        std::memcpy(&v, x + n - kLanes, sizeof(V));                             \
      } else {                                                                  \
        std::memcpy(&v, x + i, static_cast<size_t>(n - i) * sizeof(T));         \
      }                                                                         \
      a1 = take(a1, v);                                                         \
    }                                                                           \
    a0 = take(a0, a1);                                                          \
    T lanes[kLanes];                                                            \
    std::memcpy(lanes, &a0, sizeof(V));                                         \
    T best = lanes[0];                                                          \
    for (int64_t j = 1; j < kLanes; ++j) {                                      \
      if (lanes[j] BEYOND best || lanes[j] != lanes[j]) best = lanes[j];        \
    }                                                                           \
    return best;                                                                \
  }

// Splat: every lane v. (V{} + v would turn a -0 into +0, and a bound of -0 must stay -0.)
template <typename V, typename T>
inline V Splat(T v) {
  V out;
  for (size_t j = 0; j < sizeof(V) / sizeof(T); ++j) out[j] = v;
  return out;
}

// The elementwise helpers below take a vector or a scalar alike, so a function written with
// them is one expression at every width, and the scalar loops that must agree with it (the
// tails of Compare and the ParamFn loops) run the same steps.
// |x|: the sign bit cleared (NaN included), as fabs.
inline float AbsOf(float x) { return std::fabs(x); }
inline double AbsOf(double x) { return std::fabs(x); }
inline FT_VM_VF AbsOf(FT_VM_VF x) {
  using Bits = int32_t __attribute__((vector_size(sizeof(FT_VM_VF))));
  return __builtin_bit_cast(FT_VM_VF, __builtin_bit_cast(Bits, x) & 0x7fffffff);
}
inline FT_VM_VD AbsOf(FT_VM_VD x) {
  using Bits = int64_t __attribute__((vector_size(sizeof(FT_VM_VD))));
  return __builtin_bit_cast(FT_VM_VD,
                            __builtin_bit_cast(Bits, x) & int64_t{0x7fffffffffffffff});
}
// std::max and std::min's selections (the first operand unless the second is beyond it: a
// NaN first operand is kept, a NaN second one is not), which activation_math's scalar forms
// of hardtanh, hardsigmoid and hardswish used.
template <typename X>
inline X StdMax(X a, X b) {
  return a < b ? b : a;
}
template <typename X>
inline X StdMin(X a, X b) {
  return b < a ? b : a;
}
template <typename X>
inline X SignOf(X x) {
  const X one = X{} + 1, zero = X{};
  return x != x ? x : (x > zero ? one : zero) - (x < zero ? one : zero);
}
template <typename X>
inline X HardsigmoidOf(X x) {
  const X zero = X{}, three = X{} + 3, six = X{} + 6;
  return x != x ? x : StdMin(StdMax(x + three, zero), six) / six;
}
template <typename X>
inline X HardswishOf(X x) {
  const X zero = X{}, three = X{} + 3, six = X{} + 6;
  return x != x ? x : x * StdMin(StdMax(x + three, zero), six) / six;
}
// The ParamFn functions, of x and the parameters p and q (vectors or scalars alike).
template <typename X>
inline X LeakyReluOf(X x, X p, X /*q*/) {
  return x > X{} ? x : x * p;
}
template <typename X>
inline X HardtanhOf(X x, X p, X q) {
  return x != x ? x : StdMin(StdMax(x, p), q);
}
template <typename X>
inline X ClampOf(X x, X p, X q) {
  x = ((p != p) | (x < p)) ? p : x;
  return ((q != q) | (x > q)) ? q : x;
}

// One ParamFn: whole vectors, then the tail in one more vector (LoadHead), as FT_VM_UNARY.
#define FT_VM_PARAM(NAME, T, V, FN)                        \
  void NAME(T p_value, T q_value, const T* in, T* out, int64_t n) { \
    constexpr int64_t kLanes = sizeof(V) / sizeof(T);      \
    const V p = Splat<V>(p_value), q = Splat<V>(q_value);  \
    int64_t i = 0;                                         \
    for (; i + kLanes <= n; i += kLanes) {                 \
      V x;                                                 \
      std::memcpy(&x, in + i, sizeof(V));                  \
      const V y = FN(x, p, q);                             \
      std::memcpy(out + i, &y, sizeof(V));                 \
    }                                                      \
    if (i < n) {                                           \
      const V y = FN(LoadHead(in + i, n - i), p, q);       \
      StoreHead(out + i, n - i, y);                        \
    }                                                      \
  }

// Compare: out[i] = a[i * a_step] OP b[i * b_step] as a bool (steps as ArithLoop's). A
// vector comparison gives lanes of -1 or 0; narrowed to bytes and negated they are the bools'
// 1 and 0. The tail is scalar code (a comparison is exact at any width).
// BytesOf<N>::type: N bytes as a GCC vector (a vector_size that depends on a template
// parameter is not one GCC accepts, hence the specializations).
template <int N>
struct BytesOf;
template <>
struct BytesOf<2> {
  typedef int8_t type __attribute__((vector_size(2)));
};
template <>
struct BytesOf<4> {
  typedef int8_t type __attribute__((vector_size(4)));
};
template <>
struct BytesOf<8> {
  typedef int8_t type __attribute__((vector_size(8)));
};
template <>
struct BytesOf<16> {
  typedef int8_t type __attribute__((vector_size(16)));
};
template <typename T, typename V, typename F>
inline void CompareLoop(const T* a, int64_t a_step, const T* b, int64_t b_step, bool* out,
                        int64_t n, F cmp) {
  constexpr int64_t kLanes = sizeof(V) / sizeof(T);
  using Bytes = typename BytesOf<static_cast<int>(kLanes)>::type;
  int64_t i = 0;
  if (n >= kLanes) {
    const V a_splat = Splat<V>(a[0]), b_splat = Splat<V>(b[0]);
    for (; i + kLanes <= n; i += kLanes) {
      V x = a_splat, z = b_splat;
      if (a_step != 0) std::memcpy(&x, a + i, sizeof(V));
      if (b_step != 0) std::memcpy(&z, b + i, sizeof(V));
      const Bytes bytes = -__builtin_convertvector(cmp(x, z), Bytes);
      std::memcpy(out + i, &bytes, sizeof(Bytes));
    }
  }
  for (; i < n; ++i) out[i] = cmp(a[i * a_step], b[i * b_step]);
}
#define FT_VM_COMPARE(NAME, T, V, OP)                                                      \
  void NAME(const T* a, int64_t a_step, const T* b, int64_t b_step, bool* out, int64_t n) { \
    CompareLoop<T, V>(a, a_step, b, b_step, out, n, [](auto x, auto z) { return x OP z; }); \
  }

// HorizontalProduct<T, N>(v): the N lanes of v multiplied in HorizontalSum's tree.
template <typename T, int N, typename V>
inline T HorizontalProduct(V v) {
  if constexpr (N == 2) {
    return v[0] * v[1];
  } else {
    return HorizontalProduct<T, N / 2>(LowLanes<N>(v, std::make_index_sequence<N / 2>()) *
                                       HighLanes<N>(v, std::make_index_sequence<N / 2>()));
  }
}

// The product of n elements: four vector accumulators over whole vectors (a product's
// relative error grows by the same bound whatever the order, so no blocking as in Sum), the
// lanes in HorizontalProduct's tree, then the last elements (fewer than a vector) one by one.
#define FT_VM_PROD(NAME, T, V)                                                  \
  T NAME(const T* x, int64_t n) {                                               \
    constexpr int64_t kLanes = sizeof(V) / sizeof(T);                           \
    const V one = V{} + 1;                                                      \
    V a0 = one, a1 = one, a2 = one, a3 = one;                                   \
    int64_t i = 0;                                                              \
    for (; i + 4 * kLanes <= n; i += 4 * kLanes) {                              \
      V v0, v1, v2, v3;                                                         \
      std::memcpy(&v0, x + i, sizeof(V));                                       \
      std::memcpy(&v1, x + i + kLanes, sizeof(V));                              \
      std::memcpy(&v2, x + i + 2 * kLanes, sizeof(V));                          \
      std::memcpy(&v3, x + i + 3 * kLanes, sizeof(V));                          \
      a0 *= v0;                                                                 \
      a1 *= v1;                                                                 \
      a2 *= v2;                                                                 \
      a3 *= v3;                                                                 \
    }                                                                           \
    for (; i + kLanes <= n; i += kLanes) {                                      \
      V v;                                                                      \
      std::memcpy(&v, x + i, sizeof(V));                                        \
      a0 *= v;                                                                  \
    }                                                                           \
    T result = HorizontalProduct<T, static_cast<int>(kLanes)>((a0 * a1) * (a2 * a3)); \
    for (; i < n; ++i) result *= x[i];                                          \
    return result;                                                              \
  }

// sigmoid from t = e^-|x|, see Sigmoid below.
FT_VM_VF SigmoidOf(FT_VM_VF x, FT_VM_VF t) {
  const FT_VM_VF s = 1.0f / (1.0f + t);
  return x >= 0.0f ? s : t * s;
}
FT_VM_VD SigmoidOf(FT_VM_VD x, FT_VM_VD t) {
  const FT_VM_VD s = 1.0 / (1.0 + t);
  return x >= 0.0 ? s : t * s;
}

// Both dtypes of one function.
#define FT_VM_BOTH(NAME, EXPR_F, EXPR_D)             \
  FT_VM_UNARY(NAME##F32, float, FT_VM_VF, EXPR_F)   \
  FT_VM_UNARY(NAME##F64, double, FT_VM_VD, EXPR_D)

FT_VM_BOTH(Exp, FT_SLEEF_F(exp, u10)(x), FT_SLEEF_D(exp, u10)(x))
FT_VM_BOTH(Expm1, FT_SLEEF_F(expm1, u10)(x), FT_SLEEF_D(expm1, u10)(x))
FT_VM_BOTH(Log, FT_SLEEF_F(log, u10)(x), FT_SLEEF_D(log, u10)(x))
// SLEEF's log1p returns inf above 1e38 (float) / 1e307 (double); there log1p(x) and log(x)
// agree to far below an ulp (they differ by about 1 / x).
FT_VM_BOTH(Log1p, x > 1e30f ? FT_SLEEF_F(log, u10)(x) : FT_SLEEF_F(log1p, u10)(x),
           x > 1e300 ? FT_SLEEF_D(log, u10)(x) : FT_SLEEF_D(log1p, u10)(x))
FT_VM_BOTH(Sin, FT_SLEEF_F(sin, u10)(x), FT_SLEEF_D(sin, u10)(x))
FT_VM_BOTH(Cos, FT_SLEEF_F(cos, u10)(x), FT_SLEEF_D(cos, u10)(x))
FT_VM_BOTH(Tan, FT_SLEEF_F(tan, u10)(x), FT_SLEEF_D(tan, u10)(x))
FT_VM_BOTH(Tanh, FT_SLEEF_F(tanh, u10)(x), FT_SLEEF_D(tanh, u10)(x))
// With t = e^-|x| (never overflows): 1 / (1 + t) for x >= 0, t / (1 + t) below, so a
// result far left of 0 keeps its precision down into the denormals instead of becoming
// 1 / inf = 0. A NaN fails x >= 0 and gives NaN * ... = NaN.
FT_VM_UNARY(SigmoidF32, float, FT_VM_VF, SigmoidOf(x, FT_SLEEF_F(exp, u10)(x >= 0.0f ? -x : x)))
FT_VM_UNARY(SigmoidF64, double, FT_VM_VD, SigmoidOf(x, FT_SLEEF_D(exp, u10)(x >= 0.0 ? -x : x)))
FT_VM_BOTH(Sqrt, FT_VM_SQRT_F(x), FT_VM_SQRT_D(x))
FT_VM_BOTH(Rsqrt, 1.0f / FT_VM_SQRT_F(x), 1.0 / FT_VM_SQRT_D(x))
FT_VM_BOTH(Erf, FT_SLEEF_F(erf, u10)(x), FT_SLEEF_D(erf, u10)(x))
FT_VM_BOTH(Erfc, FT_SLEEF_F(erfc, u15)(x), FT_SLEEF_D(erfc, u15)(x))
FT_VM_UNARY(LgammaF64, double, FT_VM_VD, FT_SLEEF_D(lgamma, u10)(x))
// float lgamma through double: SLEEF's float lgamma overflows to inf above 4e36, where the
// value (up to 3.4e38) is still a float; double's range and precision give the float result
// rounded once more (at most 0.5 ulp beyond double's error).
void LgammaF32(const float* in, float* out, int64_t n) {
  constexpr int64_t kBlock = 256;
  double wide[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = n - start < kBlock ? n - start : kBlock;
    for (int64_t i = 0; i < m; ++i) wide[i] = in[start + i];
    LgammaF64(wide, wide, m);
    for (int64_t i = 0; i < m; ++i) out[start + i] = static_cast<float>(wide[i]);
  }
}
FT_VM_BINARY(PowF32, float, FT_VM_VF, FT_SLEEF_F(pow, u10)(x, z))
FT_VM_BINARY(PowF64, double, FT_VM_VD, FT_SLEEF_D(pow, u10)(x, z))
FT_VM_BINARY(Atan2F32, float, FT_VM_VF, FT_SLEEF_F(atan2, u10)(x, z))
FT_VM_BINARY(Atan2F64, double, FT_VM_VD, FT_SLEEF_D(atan2, u10)(x, z))
FT_VM_SUM(SumF32, float, FT_VM_VF)
FT_VM_SUM(SumF64, double, FT_VM_VD)
FT_VM_SUM_ROWS(SumRowsF32, SumF32, float, FT_VM_VF)
FT_VM_SUM_ROWS(SumRowsF64, SumF64, double, FT_VM_VD)
FT_VM_COLUMNS(SumColumnsF32, float, FT_VM_VF, acc + v)
FT_VM_COLUMNS(SumColumnsF64, double, FT_VM_VD, acc + v)
// A column's max / min takes v where v is beyond it or NaN (Max's rule): a NaN, once in,
// stays.
FT_VM_COLUMNS(MaxColumnsF32, float, FT_VM_VF, ((v > acc) | (v != v)) ? v : acc)
FT_VM_COLUMNS(MaxColumnsF64, double, FT_VM_VD, ((v > acc) | (v != v)) ? v : acc)
FT_VM_COLUMNS(MinColumnsF32, float, FT_VM_VF, ((v < acc) | (v != v)) ? v : acc)
FT_VM_COLUMNS(MinColumnsF64, double, FT_VM_VD, ((v < acc) | (v != v)) ? v : acc)
FT_VM_EXTREME(MaxF32, float, FT_VM_VF, >)
FT_VM_EXTREME(MaxF64, double, FT_VM_VD, >)
FT_VM_EXTREME(MinF32, float, FT_VM_VF, <)
FT_VM_EXTREME(MinF64, double, FT_VM_VD, <)
FT_VM_ARITH(AddF32, float, FT_VM_VF, +)
FT_VM_ARITH(SubF32, float, FT_VM_VF, -)
FT_VM_ARITH(MulF32, float, FT_VM_VF, *)
FT_VM_ARITH(DivF32, float, FT_VM_VF, /)
FT_VM_ARITH(AddF64, double, FT_VM_VD, +)
FT_VM_ARITH(SubF64, double, FT_VM_VD, -)
FT_VM_ARITH(MulF64, double, FT_VM_VD, *)
FT_VM_ARITH(DivF64, double, FT_VM_VD, /)
// maximum / minimum: vecmath.h's rule, whose selections compile to blends on vectors (no
// rounding: the same bits at every width and in the scalar tail).
FT_VM_ARITH_OF(MaximumF32, float, FT_VM_VF, MaximumOf(x, z))
FT_VM_ARITH_OF(MinimumF32, float, FT_VM_VF, MinimumOf(x, z))
FT_VM_ARITH_OF(MaximumF64, double, FT_VM_VD, MaximumOf(x, z))
FT_VM_ARITH_OF(MinimumF64, double, FT_VM_VD, MinimumOf(x, z))

// The exact functions (vecmath.h's second group of Fn).
FT_VM_BOTH(Neg, -x, -x)
FT_VM_BOTH(Abs, AbsOf(x), AbsOf(x))
FT_VM_BOTH(Sign, SignOf(x), SignOf(x))
FT_VM_BOTH(Relu, x < FT_VM_VF{} ? FT_VM_VF{} : x, x < FT_VM_VD{} ? FT_VM_VD{} : x)
FT_VM_BOTH(Square, x * x, x * x)
FT_VM_BOTH(Reciprocal, 1.0f / x, 1.0 / x)
FT_VM_BOTH(Floor, FT_SLEEF_F(floor, )(x), FT_SLEEF_D(floor, )(x))
FT_VM_BOTH(Round, FT_SLEEF_F(rint, )(x), FT_SLEEF_D(rint, )(x))
FT_VM_BOTH(Softsign, x / (1.0f + AbsOf(x)), x / (1.0 + AbsOf(x)))
FT_VM_BOTH(Hardsigmoid, HardsigmoidOf(x), HardsigmoidOf(x))
FT_VM_BOTH(Hardswish, HardswishOf(x), HardswishOf(x))
FT_VM_PARAM(LeakyReluF32, float, FT_VM_VF, LeakyReluOf)
FT_VM_PARAM(LeakyReluF64, double, FT_VM_VD, LeakyReluOf)
FT_VM_PARAM(HardtanhF32, float, FT_VM_VF, HardtanhOf)
FT_VM_PARAM(HardtanhF64, double, FT_VM_VD, HardtanhOf)
FT_VM_PARAM(ClampF32, float, FT_VM_VF, ClampOf)
FT_VM_PARAM(ClampF64, double, FT_VM_VD, ClampOf)
FT_VM_COMPARE(EqF32, float, FT_VM_VF, ==)
FT_VM_COMPARE(NeF32, float, FT_VM_VF, !=)
FT_VM_COMPARE(LtF32, float, FT_VM_VF, <)
FT_VM_COMPARE(LeF32, float, FT_VM_VF, <=)
FT_VM_COMPARE(GtF32, float, FT_VM_VF, >)
FT_VM_COMPARE(GeF32, float, FT_VM_VF, >=)
FT_VM_COMPARE(EqF64, double, FT_VM_VD, ==)
FT_VM_COMPARE(NeF64, double, FT_VM_VD, !=)
FT_VM_COMPARE(LtF64, double, FT_VM_VD, <)
FT_VM_COMPARE(LeF64, double, FT_VM_VD, <=)
FT_VM_COMPARE(GtF64, double, FT_VM_VD, >)
FT_VM_COMPARE(GeF64, double, FT_VM_VD, >=)
FT_VM_OUTER(OuterF32, float, FT_VM_VF)
FT_VM_OUTER(OuterF64, double, FT_VM_VD)
FT_VM_PROD(ProdF32, float, FT_VM_VF)
FT_VM_PROD(ProdF64, double, FT_VM_VD)
FT_VM_COLUMNS(ProdColumnsF32, float, FT_VM_VF, acc * v)
FT_VM_COLUMNS(ProdColumnsF64, double, FT_VM_VD, acc * v)

#undef FT_VM_BOTH
#undef FT_VM_ARITH
#undef FT_VM_ARITH_OF
#undef FT_VM_LOAD_HEAD_F
#undef FT_VM_LOAD_HEAD_D
#undef FT_VM_STORE_HEAD_F
#undef FT_VM_STORE_HEAD_D
#undef FT_VM_EXTREME
#undef FT_VM_SUM_ROWS
#undef FT_VM_PARAM
#undef FT_VM_COMPARE
#undef FT_VM_PROD
#undef FT_VM_OUTER
#undef FT_VM_COLUMNS
#undef FT_VM_SUM
#undef FT_VM_BINARY
#undef FT_VM_UNARY

// In Fn's order.
constexpr ::ft::vecmath::internal::Table kIsaTable = {
    {ExpF32, Expm1F32, LogF32, Log1pF32, SinF32, CosF32, TanF32, TanhF32, SigmoidF32, SqrtF32,
     RsqrtF32, ErfF32, ErfcF32, LgammaF32, NegF32, AbsF32, SignF32, ReluF32, SquareF32,
     ReciprocalF32, FloorF32, RoundF32, SoftsignF32, HardsigmoidF32, HardswishF32},
    {ExpF64, Expm1F64, LogF64, Log1pF64, SinF64, CosF64, TanF64, TanhF64, SigmoidF64, SqrtF64,
     RsqrtF64, ErfF64, ErfcF64, LgammaF64, NegF64, AbsF64, SignF64, ReluF64, SquareF64,
     ReciprocalF64, FloorF64, RoundF64, SoftsignF64, HardsigmoidF64, HardswishF64},
    PowF32,
    PowF64,
    Atan2F32,
    Atan2F64,
    SumF32,
    SumF64,
    SumRowsF32,
    SumRowsF64,
    SumColumnsF32,
    SumColumnsF64,
    {MaxF32, MinF32},
    {MaxF64, MinF64},
    {MaxColumnsF32, MinColumnsF32},
    {MaxColumnsF64, MinColumnsF64},
    {AddF32, SubF32, MulF32, DivF32, MaximumF32, MinimumF32},
    {AddF64, SubF64, MulF64, DivF64, MaximumF64, MinimumF64},
    {LeakyReluF32, HardtanhF32, ClampF32},
    {LeakyReluF64, HardtanhF64, ClampF64},
    {EqF32, NeF32, LtF32, LeF32, GtF32, GeF32},
    {EqF64, NeF64, LtF64, LeF64, GtF64, GeF64},
    ProdF32,
    ProdF64,
    ProdColumnsF32,
    ProdColumnsF64,
    OuterF32,
    OuterF64,
};

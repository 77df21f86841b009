// The kernels behind vecmath (kernels::exp, sin, ..., erf, lgamma) at every CPU capability:
// each runs the vector code of the level set (its call counter moves), gives the same bits
// whatever the layout (contiguous, transposed, sliced, expanded) and the thread count, and
// keeps the dtype rules (int64 computes in float32, bool is an error). add, sub, mul, div,
// maximum and minimum on float dtypes run vecmath's Arithmetic in every layout, and the
// comparisons vecmath's Compare, with a scalar loop's bits; the exact unary ops (neg, abs,
// sign, relu, square, reciprocal, floor, round), the piecewise-linear activations and prod
// run vecmath too.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <cstring>
#include <functional>
#include <iterator>
#include <utility>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cpu/cpu_capability.h"
#include "cpu/parallel.h"
#include "cpu/vecmath.h"
#include "gtest/gtest.h"
#include "kernels/activation.h"
#include "kernels/binary.h"
#include "kernels/linalg.h"
#include "kernels/reduction.h"
#include "kernels/test_helpers.h"
#include "kernels/unary.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/error.h"
#include "tensor/factories.h"

namespace ft::kernels {
namespace {

struct Kernel {
  vecmath::Fn fn;
  std::function<Tensor(const Tensor&)> run;
};

std::vector<Kernel> Kernels() {
  using vecmath::Fn;
  return {{Fn::kExp, [](const Tensor& x) { return exp(x); }},
          {Fn::kExpm1, [](const Tensor& x) { return expm1(x); }},
          {Fn::kLog, [](const Tensor& x) { return log(x); }},
          {Fn::kLog1p, [](const Tensor& x) { return log1p(x); }},
          {Fn::kSin, [](const Tensor& x) { return sin(x); }},
          {Fn::kCos, [](const Tensor& x) { return cos(x); }},
          {Fn::kTan, [](const Tensor& x) { return tan(x); }},
          {Fn::kTanh, [](const Tensor& x) { return tanh(x); }},
          {Fn::kSigmoid, [](const Tensor& x) { return sigmoid(x); }},
          {Fn::kSqrt, [](const Tensor& x) { return sqrt(x); }},
          {Fn::kRsqrt, [](const Tensor& x) { return rsqrt(x); }},
          {Fn::kErf, [](const Tensor& x) { return erf(x); }},
          {Fn::kErfc, [](const Tensor& x) { return erfc(x); }},
          {Fn::kLgamma, [](const Tensor& x) { return lgamma(x); }}};
}

// Uniform: a `shape` tensor of T with seeded values uniform in [0.05, 3) (inside every
// function's domain).
template <typename T>
Tensor Uniform(IntArrayRef shape, uint32_t seed) {
  return testing::Uniform(shape, DTypeOf<T>(), seed, 0.05, 3.0);
}

// Bitwise equality, element by element in row-major order.
template <typename T>
void ExpectSameBits(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  const std::vector<T> x = a.to_vector<T>(), y = b.to_vector<T>();
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(std::memcmp(&x[i], &y[i], sizeof(T)), 0)
        << what << " element " << i << ": " << x[i] << " vs " << y[i];
  }
}

// ExpectLayoutsGiveTheSameBits: run on transposed, sliced and expanded views of the [37, 29]
// `base` gives the same view of `contiguous` (run(base)) bit for bit; empty input, empty
// output.
template <typename T>
void ExpectLayoutsGiveTheSameBits(const std::function<Tensor(const Tensor&)>& run,
                                  const Tensor& base, const Tensor& contiguous,
                                  const std::string& what) {
  ExpectSameBits<T>(run(transpose(base, 0, 1)), transpose(contiguous, 0, 1),
                    what + " transposed");
  ExpectSameBits<T>(run(slice(base, 1, 1, std::nullopt, 3)),
                    slice(contiguous, 1, 1, std::nullopt, 3), what + " sliced");
  const Tensor row = slice(base, 0, 0, 1, 1);  // [1, 29]
  ExpectSameBits<T>(run(expand(row, {5, 29})), expand(slice(contiguous, 0, 0, 1, 1), {5, 29}),
                    what + " expanded");
  EXPECT_EQ(run(empty({0, 3}, base.dtype())).numel(), 0) << what;
}

class VecMathKernels : public ::testing::Test {
 protected:
  void TearDown() override {
    SetCpuCapability(MachineCpuCapability());
    SetNumThreads(threads_);
  }
  int threads_ = GetNumThreads();
};

template <typename T>
void CheckLayoutsAtEveryLevel() {
  const Tensor base = Uniform<T>({37, 29}, 3);
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    for (const Kernel& k : Kernels()) {
      const std::string what =
          std::string(vecmath::FnName(k.fn)) + " at " + std::string(CpuCapabilityName(level));
      const int64_t calls = vecmath::CallCount(level);
      const Tensor contiguous = k.run(base);
      EXPECT_GT(vecmath::CallCount(level), calls) << what << ": not the vector path";
      // The oracle: vecmath on each element alone.
      const std::vector<T> x = base.to_vector<T>();
      std::vector<T> expected(x.size());
      for (size_t i = 0; i < x.size(); ++i) vecmath::Apply(k.fn, &x[i], &expected[i], 1);
      ExpectSameBits<T>(contiguous, tensor(expected, {37, 29}), what + " contiguous");
      ExpectLayoutsGiveTheSameBits<T>(k.run, base, contiguous, what);
    }
  }
}

TEST_F(VecMathKernels, Float32LayoutsGiveTheElementsBitsAtEveryLevel) {
  CheckLayoutsAtEveryLevel<float>();
}

TEST_F(VecMathKernels, Float64LayoutsGiveTheElementsBitsAtEveryLevel) {
  CheckLayoutsAtEveryLevel<double>();
}

TEST_F(VecMathKernels, ThreadCountDoesNotChangeBits) {
  const Tensor x = Uniform<float>({1 << 19}, 5);  // several grains: split over threads
  for (const Kernel& k : Kernels()) {
    SetNumThreads(1);
    const Tensor one = k.run(x);
    SetNumThreads(2);
    ExpectSameBits<float>(k.run(x), one, std::string(vecmath::FnName(k.fn)));
  }
}

// sum and mean over contiguous rows run vecmath::Sum at the level set: whole tensors, the
// rows of a matrix, and (through a non-contiguous view) a reduction copied first. Checked
// against a double-precision loop, with the call counter proving the vector path ran.
TEST_F(VecMathKernels, SumAndMeanOfRowsRunTheVectorSum) {
  const Tensor m = Uniform<float>({37, 1001}, 3);
  const std::vector<float> v = m.to_vector<float>();
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    const int64_t before = vecmath::CallCount(level);
    const std::vector<float> rows = sum(m, {1}, false).to_vector<float>();
    const std::vector<float> means = mean(m, {1}, false).to_vector<float>();
    EXPECT_GE(vecmath::CallCount(level), before + 2) << CpuCapabilityName(level);
    double all = 0;
    for (int64_t r = 0; r < 37; ++r) {
      double exact = 0;
      for (int64_t c = 0; c < 1001; ++c) exact += v[static_cast<size_t>(r * 1001 + c)];
      all += exact;
      EXPECT_NEAR(rows[static_cast<size_t>(r)], exact, 1e-5 * 1001) << "row " << r;
      EXPECT_NEAR(means[static_cast<size_t>(r)], exact / 1001, 1e-5) << "row " << r;
    }
    EXPECT_NEAR(sum(m, {}, false).item<float>(), all, 1e-5 * 37 * 1001);
    // Columns (a strided reduction) keep their own path and agree.
    EXPECT_NEAR(sum(sum(m, {0}, false), {}, false).item<float>(), all, 1e-5 * 37 * 1001);
  }
}

// amax and amin over contiguous float and double rows run vecmath::Max / Min at the level
// set, against a loop; a row holding a NaN reduces to NaN, as in PyTorch.
// sum and mean over a dim with dims after it (a bias gradient's sum over the batch, a mean
// over the middle of [A, R, C]) run vecmath::SumColumns, each output a sequential loop over
// the reduced dim (the bits the Eigen column loop gave), at every level and thread count.
template <typename T>
void CheckColumnSums() {
  const Tensor x = Uniform<T>({3, 70, 37}, 21);
  const std::vector<T> v = x.to_vector<T>();
  std::vector<T> over_rows(3 * 37);  // sum over dim 1
  for (int64_t a = 0; a < 3; ++a) {
    for (int64_t c = 0; c < 37; ++c) {
      T acc = v[static_cast<size_t>(a * 70 * 37 + c)];
      for (int64_t r = 1; r < 70; ++r) acc += v[static_cast<size_t>((a * 70 + r) * 37 + c)];
      over_rows[static_cast<size_t>(a * 37 + c)] = acc;
    }
  }
  const Tensor flat = reshape(x, {210, 37});
  std::vector<T> over_batch(37);  // sum over dim 0 of [210, 37]
  for (int64_t c = 0; c < 37; ++c) {
    T acc = v[static_cast<size_t>(c)];
    for (int64_t r = 1; r < 210; ++r) acc += v[static_cast<size_t>(r * 37 + c)];
    over_batch[static_cast<size_t>(c)] = acc;
  }
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    const std::string at = " at " + std::string(CpuCapabilityName(level));
    const int64_t calls = vecmath::CallCount(level);
    ExpectSameBits<T>(sum(x, {1}, false), tensor(over_rows, {3, 37}), "sum over dim 1" + at);
    EXPECT_GT(vecmath::CallCount(level), calls) << "sum over dim 1" << at << ": not the vector path";
    ExpectSameBits<T>(sum(flat, {0}, false), tensor(over_batch, {37}), "sum over dim 0" + at);
    std::vector<T> means = over_batch;
    for (T& m : means) m /= T(210);
    ExpectSameBits<T>(mean(flat, {0}, false), tensor(means, {37}), "mean over dim 0" + at);
  }
  // Wide enough that the columns split over two threads: the same bits.
  const Tensor wide = Uniform<T>({40, 5000}, 22);
  SetNumThreads(1);
  const Tensor one = sum(wide, {0}, false);
  SetNumThreads(2);
  ExpectSameBits<T>(sum(wide, {0}, false), one, "column sums on two threads");
}

TEST_F(VecMathKernels, Float32ColumnSumsRunTheVectorColumns) { CheckColumnSums<float>(); }

TEST_F(VecMathKernels, Float64ColumnSumsRunTheVectorColumns) { CheckColumnSums<double>(); }

// amax and amin over a dim with dims after it run vecmath::MaxColumns / MinColumns: each
// output the loop over the reduced dim (NaN in, NaN out), at every level and thread count.
template <typename T>
void CheckColumnExtremes() {
  std::vector<T> v = Uniform<T>({210, 37}, 23).template to_vector<T>();
  v[5 * 37 + 3] = std::numeric_limits<T>::quiet_NaN();  // column 3 is NaN
  const Tensor x = tensor(v, {210, 37});
  std::vector<T> most(37), least(37);
  for (int64_t c = 0; c < 37; ++c) {
    T hi = v[static_cast<size_t>(c)], lo = hi;
    for (int64_t r = 1; r < 210; ++r) {
      const T e = v[static_cast<size_t>(r * 37 + c)];
      if (e > hi || e != e) hi = e;
      if (e < lo || e != e) lo = e;
    }
    most[static_cast<size_t>(c)] = hi;
    least[static_cast<size_t>(c)] = lo;
  }
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    const std::string at = " at " + std::string(CpuCapabilityName(level));
    const int64_t calls = vecmath::CallCount(level);
    const Tensor hi = amax(x, {0}, false), lo = amin(x, {0}, false);
    EXPECT_GT(vecmath::CallCount(level), calls) << "amax over dim 0" << at;
    const std::vector<T> h = hi.to_vector<T>(), l = lo.to_vector<T>();
    for (size_t c = 0; c < 37; ++c) {
      if (c == 3) {
        EXPECT_TRUE(std::isnan(h[c]) && std::isnan(l[c])) << at;
        continue;
      }
      EXPECT_EQ(h[c], most[c]) << "amax column " << c << at;
      EXPECT_EQ(l[c], least[c]) << "amin column " << c << at;
    }
  }
  const Tensor wide = Uniform<T>({40, 5000}, 24);
  SetNumThreads(1);
  const Tensor one = amax(wide, {0}, false);
  SetNumThreads(2);
  ExpectSameBits<T>(amax(wide, {0}, false), one, "column amax on two threads");
}

TEST_F(VecMathKernels, Float32ColumnExtremesRunTheVectorColumns) { CheckColumnExtremes<float>(); }

TEST_F(VecMathKernels, Float64ColumnExtremesRunTheVectorColumns) {
  CheckColumnExtremes<double>();
}

TEST_F(VecMathKernels, AmaxAndAminOfRowsRunTheVectorExtremes) {
  const Tensor m = Uniform<double>({9, 203}, 4);
  std::vector<double> v = m.to_vector<double>();
  v[5 * 203 + 202] = std::numeric_limits<double>::quiet_NaN();  // row 5's last element
  const Tensor with_nan = tensor(v, {9, 203});
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    const int64_t before = vecmath::CallCount(level);
    const std::vector<double> hi = amax(with_nan, {1}, false).to_vector<double>();
    const std::vector<double> lo = to(amin(to(with_nan, kFloat32), {1}, false), kFloat64).to_vector<double>();
    EXPECT_GE(vecmath::CallCount(level), before + 2 * 9) << CpuCapabilityName(level);
    for (int64_t r = 0; r < 9; ++r) {
      double max = v[static_cast<size_t>(r * 203)], min = max;
      for (int64_t c = 0; c < 203; ++c) {
        max = std::max(max, v[static_cast<size_t>(r * 203 + c)]);
        min = std::min(min, v[static_cast<size_t>(r * 203 + c)]);
      }
      if (r == 5) {
        EXPECT_TRUE(std::isnan(hi[5]) && std::isnan(lo[5])) << CpuCapabilityName(level);
        continue;
      }
      EXPECT_EQ(hi[static_cast<size_t>(r)], max) << "row " << r;
      EXPECT_EQ(lo[static_cast<size_t>(r)], static_cast<double>(static_cast<float>(min)))
          << "row " << r;
    }
  }
}

// The activations built on vecmath (gelu both ways, silu, elu, selu, celu): at every level
// they run the vector code, give the same bits for every layout and thread count, and match
// their closed forms in long double to a few ulps of the result or of x (gelu's tanh form
// loses the digits of 1 + tanh to cancellation for very negative x, as any evaluation of
// that formula does), with NaN and infinities where the closed form has them.
struct Activation {
  const char* name;
  std::function<Tensor(const Tensor&)> run;
  std::function<long double(long double)> exact;
};

std::vector<Activation> Activations() {
  constexpr long double kInvSqrt2 = 0.707106781186547524400844362104849039L;
  constexpr long double kSqrt2OverPi = 0.797884560802865355879892119868763737L;
  constexpr long double kSeluAlpha = 1.6732632423543772848170429916717L;
  constexpr long double kSeluScale = 1.0507009873554804934193349852946L;
  return {
      {"gelu", [](const Tensor& x) { return gelu(x, false); },
       [=](long double v) { return 0.5L * v * std::erfc(-v * kInvSqrt2); }},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, true); },
       [=](long double v) {
         return 0.5L * v * (1.0L + std::tanh(kSqrt2OverPi * (v + 0.044715L * v * v * v)));
       }},
      {"silu", [](const Tensor& x) { return silu(x); },
       [](long double v) { return v / (1.0L + std::exp(-v)); }},
      {"elu", [](const Tensor& x) { return elu(x, 1.3); },
       [](long double v) { return v > 0 ? v : 1.3L * std::expm1(v); }},
      {"selu", [](const Tensor& x) { return selu(x); },
       [=](long double v) { return kSeluScale * (v > 0 ? v : kSeluAlpha * std::expm1(v)); }},
      {"celu", [](const Tensor& x) { return celu(x, 0.7); },
       [](long double v) { return v > 0 ? v : 0.7L * std::expm1(v / 0.7L); }},
  };
}

template <typename T>
void CheckActivationsAtEveryLevel() {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-15, 15);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<T> values = {T(0), T(-0.0), T(inf), T(-inf), std::numeric_limits<T>::quiet_NaN(),
                           T(1e-30), T(-1e-30), T(80), T(-80), T(1e10), T(-1e10)};
  while (values.size() < 37 * 29) values.push_back(static_cast<T>(u(rng)));
  const Tensor base = tensor(values, {37, 29});
  const long double eps = std::numeric_limits<T>::epsilon();
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    for (const Activation& a : Activations()) {
      const std::string what = std::string(a.name) + " at " + std::string(CpuCapabilityName(level));
      const int64_t calls = vecmath::CallCount(level);
      const Tensor contiguous = a.run(base);
      EXPECT_GT(vecmath::CallCount(level), calls) << what << ": not the vector path";
      const std::vector<T> got = contiguous.template to_vector<T>();
      for (size_t i = 0; i < values.size(); ++i) {
        const long double v = values[i], exact = a.exact(v), g = got[i];
        if (std::isnan(exact)) {
          EXPECT_TRUE(std::isnan(g)) << what << " at " << v << ": " << g;
        } else if (std::isinf(exact) || std::fabs(exact) > std::numeric_limits<T>::max()) {
          EXPECT_EQ(g, static_cast<T>(exact)) << what << " at " << v;
        } else {
          EXPECT_LE(std::fabs(g - exact), 64 * eps * (std::fabs(exact) + std::fabs(v)))
              << what << " at " << v << ": " << g << " vs " << static_cast<double>(exact);
        }
      }
      ExpectLayoutsGiveTheSameBits<T>(a.run, base, contiguous, what);
    }
  }
}

TEST_F(VecMathKernels, Float32ActivationsRunTheVectorPathAndMatchTheirClosedForms) {
  CheckActivationsAtEveryLevel<float>();
}

TEST_F(VecMathKernels, Float64ActivationsRunTheVectorPathAndMatchTheirClosedForms) {
  CheckActivationsAtEveryLevel<double>();
}

TEST_F(VecMathKernels, ActivationBitsDoNotDependOnTheThreadCount) {
  // Several grains (split over threads), and an odd length: strips end mid-vector.
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> u(-6, 6);
  std::vector<float> v((1 << 19) + 7);
  for (float& e : v) e = u(rng);
  const Tensor x = tensor(v, {static_cast<int64_t>(v.size())});
  for (const Activation& a : Activations()) {
    SetNumThreads(1);
    const Tensor one = a.run(x);
    SetNumThreads(2);
    ExpectSameBits<float>(a.run(x), one, a.name);
  }
}

// Values that exercise IEEE arithmetic: signed zeros, infinities, NaN, denormals, huge and
// tiny magnitudes, and ordinary numbers.
template <typename T>
std::vector<T> ArithmeticValues(int64_t n, uint32_t seed) {
  using L = std::numeric_limits<T>;
  const T specials[] = {T(0),         -T(0),        L::infinity(), -L::infinity(),
                        L::quiet_NaN(), L::denorm_min(), -L::denorm_min(), L::min(),
                        L::max(),     -L::max(),    T(1),          T(-3.5)};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-4, 4);
  std::vector<T> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = rng() % 4 == 0 ? specials[rng() % std::size(specials)] : static_cast<T>(u(rng));
  }
  return v;
}

template <typename T>
bool SameBits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

template <typename T>
void CheckArithmeticAtEveryLevel() {
  using Op = std::function<Tensor(const Tensor&, const Tensor&)>;
  using Scalar = std::function<T(T, T)>;
  const std::vector<std::pair<Op, Scalar>> ops = {
      {[](const Tensor& a, const Tensor& b) { return add(a, b); }, [](T x, T y) { return x + y; }},
      {[](const Tensor& a, const Tensor& b) { return sub(a, b); }, [](T x, T y) { return x - y; }},
      {[](const Tensor& a, const Tensor& b) { return mul(a, b); }, [](T x, T y) { return x * y; }},
      {[](const Tensor& a, const Tensor& b) { return div(a, b); }, [](T x, T y) { return x / y; }},
      // torch.maximum / minimum: NaN from either side (x's first), else the larger (smaller)
      // value, y between equal ones (-0 and +0 included).
      {[](const Tensor& a, const Tensor& b) { return maximum(a, b); },
       [](T x, T y) { return std::isnan(x) ? x : std::isnan(y) ? y : x > y ? x : y; }},
      {[](const Tensor& a, const Tensor& b) { return minimum(a, b); },
       [](T x, T y) { return std::isnan(x) ? x : std::isnan(y) ? y : x < y ? x : y; }}};
  // (a's shape, b's shape): equal, a broadcast scalar on either side, a repeating row, and a
  // size that leaves a tail shorter than any vector.
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{37, 29}, {37, 29}}, {{37, 29}, {}},    {{1}, {37, 29}},
      {{37, 29}, {1, 29}},  {{29}, {37, 29}},  {{7}, {7}}};
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    for (size_t o = 0; o < ops.size(); ++o) {
      for (size_t c = 0; c < shapes.size(); ++c) {
        const auto& [sa, sb] = shapes[c];
        const std::vector<T> va = ArithmeticValues<T>(Numel(sa), 100 + c);
        const std::vector<T> vb = ArithmeticValues<T>(Numel(sb), 200 + c);
        const Tensor a = tensor(va, sa), b = tensor(vb, sb);
        const int64_t before = vecmath::CallCount(level);
        const Tensor out = contiguous(ops[o].first(a, b));
        const std::string what = std::string(CpuCapabilityName(level)) + " op " +
                                 std::to_string(o) + " shapes " + ShapeToString(sa) + ", " +
                                 ShapeToString(sb);
        EXPECT_GT(vecmath::CallCount(level), before) << what << ": not the vector path";
        // The oracle: the op element by element, broadcasting by hand (row-major, b or a
        // repeating along the leading dims).
        const T* po = out.data<T>();
        const int64_t total = out.numel();
        for (int64_t i = 0; i < total; ++i) {
          const T x = va[static_cast<size_t>(i % static_cast<int64_t>(va.size()))];
          const T y = vb[static_cast<size_t>(i % static_cast<int64_t>(vb.size()))];
          const T want = ops[o].second(x, y);
          ASSERT_TRUE(SameBits(po[i], want) || (std::isnan(po[i]) && std::isnan(want)))
              << what << " at " << i << ": " << x << " op " << y << " gave " << po[i]
              << ", want " << want;
        }
      }
    }
    // In place, through the same path: self's buffer is both an operand and the output.
    const std::vector<T> va = ArithmeticValues<T>(1000, 7), vb = ArithmeticValues<T>(1000, 8);
    Tensor self = tensor(va, {1000});
    add_(self, tensor(vb, {1000}));
    for (int64_t i = 0; i < 1000; ++i) {
      const T want = va[static_cast<size_t>(i)] + vb[static_cast<size_t>(i)];
      ASSERT_TRUE(SameBits(self.data<T>()[i], want) || std::isnan(want)) << "add_ at " << i;
    }
  }
}

// maximum and minimum only select: the result is one operand's exact bits. Which one, for
// the cases a random draw rarely separates: NaNs with different payloads and signs (a's
// wins), a NaN against a number, and signed zeros (b's wins, as in torch), in the vector
// body, in the tail and in a strided layout, at every level.
template <typename T>
void CheckMaximumMinimumSelectExactly() {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  auto nan_with = [](Bits payload, bool negative) {
    T v = std::numeric_limits<T>::quiet_NaN();
    Bits b;
    std::memcpy(&b, &v, sizeof(T));
    b |= payload;
    if (negative) b |= Bits{1} << (8 * sizeof(T) - 1);
    std::memcpy(&v, &b, sizeof(T));
    return v;
  };
  const T nan_a = nan_with(5, false), nan_b = nan_with(9, true);
  // (a, b, maximum, minimum)
  const std::vector<std::array<T, 4>> cases = {
      {-T(0), T(0), T(0), T(0)},   {T(0), -T(0), -T(0), -T(0)}, {nan_a, nan_b, nan_a, nan_a},
      {nan_b, nan_a, nan_b, nan_b}, {T(1), nan_b, nan_b, nan_b}, {nan_a, T(-2), nan_a, nan_a},
      {T(2), T(-3), T(2), T(-3)},   {-std::numeric_limits<T>::infinity(), T(1), T(1),
                                      -std::numeric_limits<T>::infinity()}};
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    for (const int64_t n : {int64_t{1}, int64_t{37}}) {
      for (const auto& c : cases) {
        const Tensor a = tensor(std::vector<T>(static_cast<size_t>(n), c[0]), {n});
        const Tensor b = tensor(std::vector<T>(static_cast<size_t>(n), c[1]), {n});
        // Contiguous (vecmath), and b transposed in a [n, 2] layout (the strided loop).
        const Tensor b2 = transpose(contiguous(expand(reshape(b, {1, n}), {2, n})), 0, 1);
        const Tensor a2 = contiguous(expand(reshape(a, {n, 1}), {n, 2}));
        for (const auto& [hi, lo] : {std::pair{maximum(a, b), minimum(a, b)},
                                     std::pair{contiguous(maximum(a2, b2)),
                                               contiguous(minimum(a2, b2))}}) {
          for (int64_t i = 0; i < hi.numel(); ++i) {
            EXPECT_TRUE(SameBits(hi.template data<T>()[i], c[2])) << CpuCapabilityName(level)
                << " maximum(" << c[0] << ", " << c[1] << ") at " << i << " of " << hi.numel();
            EXPECT_TRUE(SameBits(lo.template data<T>()[i], c[3])) << CpuCapabilityName(level)
                << " minimum(" << c[0] << ", " << c[1] << ") at " << i << " of " << lo.numel();
          }
        }
      }
    }
  }
}

TEST_F(VecMathKernels, MaximumAndMinimumSelectExactlyAtEveryLevel) {
  CheckMaximumMinimumSelectExactly<float>();
  CheckMaximumMinimumSelectExactly<double>();
}

TEST_F(VecMathKernels, Float32ArithmeticGivesAScalarLoopsBitsAtEveryLevel) {
  CheckArithmeticAtEveryLevel<float>();
}

TEST_F(VecMathKernels, Float64ArithmeticGivesAScalarLoopsBitsAtEveryLevel) {
  CheckArithmeticAtEveryLevel<double>();
}

// pow and atan2 of float dtypes run vecmath's Pow and Atan2 at every level and in every
// layout, each element with the bits of that function on its two values alone: equal
// layouts, a scalar second or first operand, a repeating row, transposed and sliced operands.
template <typename T, typename Op, typename VecFn>
void CheckBinaryMathAtEveryLevel(const std::string& name, Op op, VecFn vec_fn) {
  const Tensor base = Uniform<T>({37, 29}, 11);
  std::vector<T> e = Uniform<T>({37, 29}, 12).template to_vector<T>();
  for (T& v : e) v = static_cast<T>(v - 1.5);  // second operands in [-1.45, 1.5)
  const Tensor exponent = tensor(e, {37, 29});
  // The oracle: the vecmath function on each element's values alone, at the level set.
  auto expected = [&vec_fn](const Tensor& a, const Tensor& b) {
    const std::vector<T> x = contiguous(a).to_vector<T>(), y = contiguous(b).to_vector<T>();
    std::vector<T> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) vec_fn(&x[i], &y[i], &out[i], 1);
    return tensor(out, a.sizes());
  };
  const Tensor scalar = tensor(std::vector<T>{T(2.5)}, {});
  const Tensor row = slice(exponent, 0, 0, 1, 1);  // [1, 29]
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    const std::string at = " at " + std::string(CpuCapabilityName(level));
    const int64_t calls = vecmath::CallCount(level);
    ExpectSameBits<T>(op(base, exponent), expected(base, exponent), name + at);
    EXPECT_GT(vecmath::CallCount(level), calls) << name << at << ": not the vector path";
    ExpectSameBits<T>(op(base, scalar), expected(base, expand(scalar, {37, 29})),
                      name + ", scalar second operand" + at);
    ExpectSameBits<T>(op(scalar, exponent), expected(expand(scalar, {37, 29}), exponent),
                      name + ", scalar first operand" + at);
    ExpectSameBits<T>(op(base, row), expected(base, expand(row, {37, 29})),
                      name + ", repeating row" + at);
    const Tensor bt = transpose(base, 0, 1), et = transpose(exponent, 0, 1);
    ExpectSameBits<T>(op(bt, et), expected(bt, et), name + ", transposed" + at);
    const Tensor bs = slice(base, 1, 1, std::nullopt, 3);
    const Tensor es = slice(exponent, 1, 1, std::nullopt, 3);
    ExpectSameBits<T>(op(bs, es), expected(bs, es), name + ", sliced" + at);
    EXPECT_EQ(op(empty({0, 3}, base.dtype()), scalar).numel(), 0);
  }
  // Above the threads' grain the work splits; each element keeps its bits.
  const Tensor big_a = Uniform<T>({300000}, 13), big_b = Uniform<T>({300000}, 14);
  SetNumThreads(1);
  const Tensor one = op(big_a, big_b);
  SetNumThreads(2);
  ExpectSameBits<T>(op(big_a, big_b), one, name + " on two threads");
}

template <typename T>
void CheckPowAtEveryLevel() {
  CheckBinaryMathAtEveryLevel<T>(
      "pow", [](const Tensor& a, const Tensor& b) { return pow(a, b); },
      [](const T* a, const T* b, T* out, int64_t n) { vecmath::Pow(a, b, out, n); });
}

template <typename T>
void CheckAtan2AtEveryLevel() {
  CheckBinaryMathAtEveryLevel<T>(
      "atan2", [](const Tensor& a, const Tensor& b) { return atan2(a, b); },
      [](const T* a, const T* b, T* out, int64_t n) { vecmath::Atan2(a, b, out, n); });
}

TEST_F(VecMathKernels, Float32PowRunsTheVectorPowInEveryLayout) { CheckPowAtEveryLevel<float>(); }

TEST_F(VecMathKernels, Float64PowRunsTheVectorPowInEveryLayout) { CheckPowAtEveryLevel<double>(); }

TEST_F(VecMathKernels, Float32Atan2RunsTheVectorAtan2InEveryLayout) {
  CheckAtan2AtEveryLevel<float>();
}

TEST_F(VecMathKernels, Float64Atan2RunsTheVectorAtan2InEveryLayout) {
  CheckAtan2AtEveryLevel<double>();
}

// The exact unary ops and the piecewise-linear activations run vecmath at every level, in
// every layout, and give their scalar definitions' bits (torch's formulas): values with both
// zeros, infinities, NaN, denormals, huge magnitudes and both signs, contiguous and
// transposed, against a scalar loop.
template <typename T>
void CheckExactUnaryAtEveryLevel() {
  using Op = std::function<Tensor(const Tensor&)>;
  using ScalarFn = std::function<T(T)>;
  const auto min_max = [](T v, T lo, T hi) { return std::min(std::max(v, lo), hi); };
  const std::vector<std::tuple<std::string, Op, ScalarFn>> ops = {
      {"neg", [](const Tensor& x) { return neg(x); }, [](T v) { return -v; }},
      {"abs", [](const Tensor& x) { return abs(x); }, [](T v) { return std::fabs(v); }},
      {"sign", [](const Tensor& x) { return sign(x); },
       [](T v) { return std::isnan(v) ? v : T((v > T(0)) - (v < T(0))); }},
      {"relu", [](const Tensor& x) { return relu(x); }, [](T v) { return v < T(0) ? T(0) : v; }},
      {"square", [](const Tensor& x) { return square(x); }, [](T v) { return v * v; }},
      {"reciprocal", [](const Tensor& x) { return reciprocal(x); },
       [](T v) { return T(1) / v; }},
      {"floor", [](const Tensor& x) { return floor(x); }, [](T v) { return std::floor(v); }},
      {"round", [](const Tensor& x) { return round(x); }, [](T v) { return std::nearbyint(v); }},
      {"softsign", [](const Tensor& x) { return softsign(x); },
       [](T v) { return v / (T(1) + std::fabs(v)); }},
      {"hardsigmoid", [](const Tensor& x) { return hardsigmoid(x); },
       [&](T v) { return std::isnan(v) ? v : min_max(v + T(3), T(0), T(6)) / T(6); }},
      {"hardswish", [](const Tensor& x) { return hardswish(x); },
       [&](T v) { return std::isnan(v) ? v : v * min_max(v + T(3), T(0), T(6)) / T(6); }},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.125); },
       [](T v) { return v > T(0) ? v : v * T(0.125); }},
      {"hardtanh", [](const Tensor& x) { return hardtanh(x, -1.5, 2.0); },
       [&](T v) { return std::isnan(v) ? v : min_max(v, T(-1.5), T(2)); }},
      {"clamp", [](const Tensor& x) { return clamp(x, Scalar(-0.5), Scalar(0.75)); },
       [](T v) { return v < T(-0.5) ? T(-0.5) : (v > T(0.75) ? T(0.75) : v); }}};
  const std::vector<T> values = ArithmeticValues<T>(37 * 29, 31);
  const Tensor base = tensor(values, {37, 29});
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    for (const auto& [name, op, scalar] : ops) {
      const std::string what = name + " at " + std::string(CpuCapabilityName(level));
      const int64_t calls = vecmath::CallCount(level);
      const Tensor out = op(base);
      EXPECT_GT(vecmath::CallCount(level), calls) << what << ": not the vector path";
      const T* po = out.data<T>();
      for (size_t i = 0; i < values.size(); ++i) {
        const T want = scalar(values[i]);
        ASSERT_TRUE(SameBits(po[i], want) || (std::isnan(po[i]) && std::isnan(want)))
            << what << " of " << values[i] << " gave " << po[i] << ", want " << want;
      }
      ExpectSameBits<T>(op(transpose(base, 0, 1)), transpose(out, 0, 1), what + " transposed");
    }
  }
}

TEST_F(VecMathKernels, Float32ExactUnaryOpsRunTheVectorPathWithScalarBits) {
  CheckExactUnaryAtEveryLevel<float>();
}

TEST_F(VecMathKernels, Float64ExactUnaryOpsRunTheVectorPathWithScalarBits) {
  CheckExactUnaryAtEveryLevel<double>();
}

// Comparisons of float dtypes run vecmath::Compare, and add/mul/maximum of non-contiguous
// operands whose runs are unit-stride or broadcast run vecmath::Arithmetic run by run, at
// every level, with C++'s answers element by element: equal layouts, a broadcast scalar, a
// repeating row, a narrowed view (rows of a wider tensor) beside a contiguous and beside a
// broadcast operand. Runs with a stride (a transposed operand, a step slice, an in-place op
// into a transposed view) take Eigen's strided loop, with the same answers.
template <typename T>
void CheckComparisonsAndStridedArithmetic() {
  using Op = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::tuple<std::string, Op, std::function<bool(T, T)>>> comparisons = {
      {"eq", [](const Tensor& a, const Tensor& b) { return eq(a, b); },
       [](T x, T y) { return x == y; }},
      {"ne", [](const Tensor& a, const Tensor& b) { return ne(a, b); },
       [](T x, T y) { return x != y; }},
      {"lt", [](const Tensor& a, const Tensor& b) { return lt(a, b); },
       [](T x, T y) { return x < y; }},
      {"le", [](const Tensor& a, const Tensor& b) { return le(a, b); },
       [](T x, T y) { return x <= y; }},
      {"gt", [](const Tensor& a, const Tensor& b) { return gt(a, b); },
       [](T x, T y) { return x > y; }},
      {"ge", [](const Tensor& a, const Tensor& b) { return ge(a, b); },
       [](T x, T y) { return x >= y; }}};
  const std::vector<std::tuple<std::string, Op, std::function<T(T, T)>>> arithmetic = {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); },
       [](T x, T y) { return x + y; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); },
       [](T x, T y) { return x * y; }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); },
       [](T x, T y) { return std::isnan(x) ? x : std::isnan(y) ? y : x > y ? x : y; }}};
  // Draws from a few values, so equal pairs are common.
  std::vector<T> va = ArithmeticValues<T>(37 * 29, 41), vb = ArithmeticValues<T>(37 * 29, 42);
  for (size_t i = 0; i < va.size(); i += 3) vb[i] = va[i];
  const Tensor a = tensor(va, {37, 29}), b = tensor(vb, {37, 29});
  const Tensor bt = contiguous(transpose(b, 0, 1));  // [29, 37]
  const Tensor scalar = tensor(std::vector<T>{va[5]}, {});
  const Tensor row = slice(b, 0, 3, 4, 1);  // [1, 29]
  const Tensor wide = tensor(ArithmeticValues<T>(37 * 40, 43), {37, 40});
  const Tensor narrowed = slice(wide, 1, 4, 33, 1);  // [37, 29], rows 40 apart
  // (name, a operand, b operand, whether every run is unit-stride or broadcast), each
  // [37, 29] after broadcasting.
  const std::vector<std::tuple<std::string, Tensor, Tensor, bool>> layouts = {
      {"equal", a, b, true},
      {"scalar", a, scalar, true},
      {"row", a, row, true},
      {"narrowed", narrowed, b, true},
      {"narrowed beside a row", row, narrowed, true},
      {"transposed", a, transpose(bt, 0, 1), false},
      {"transposed beside a scalar", transpose(bt, 0, 1), scalar, false},
      {"step slice", slice(tensor(ArithmeticValues<T>(37 * 58, 44), {37, 58}), 1, 0, 58, 2), b,
       false}};
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    for (const auto& [layout, x, y, vector_path] : layouts) {
      const std::vector<T> xs = contiguous(expand(x, {37, 29})).template to_vector<T>();
      const std::vector<T> ys = contiguous(expand(y, {37, 29})).template to_vector<T>();
      for (const auto& [name, op, scalar_op] : comparisons) {
        const std::string what =
            name + " " + layout + " at " + std::string(CpuCapabilityName(level));
        const int64_t calls = vecmath::CallCount(level);
        const Tensor out = contiguous(op(x, y));
        if (vector_path) {
          EXPECT_GT(vecmath::CallCount(level), calls) << what << ": not the vector path";
        }
        ASSERT_EQ(out.dtype(), kBool);
        const bool* po = out.data<bool>();
        for (size_t i = 0; i < xs.size(); ++i) {
          ASSERT_EQ(po[i], scalar_op(xs[i], ys[i])) << what << ": " << xs[i] << ", " << ys[i];
        }
      }
      for (const auto& [name, op, scalar_op] : arithmetic) {
        const std::string what =
            name + " " + layout + " at " + std::string(CpuCapabilityName(level));
        const int64_t calls = vecmath::CallCount(level);
        const Tensor out = contiguous(op(x, y));
        if (vector_path) {
          EXPECT_GT(vecmath::CallCount(level), calls) << what << ": not the vector path";
        }
        const T* po = out.data<T>();
        for (size_t i = 0; i < xs.size(); ++i) {
          const T want = scalar_op(xs[i], ys[i]);
          ASSERT_TRUE(SameBits(po[i], want) || (std::isnan(po[i]) && std::isnan(want)))
              << what << ": " << xs[i] << ", " << ys[i] << " gave " << po[i];
        }
      }
    }
    // In place into a transposed view: the output's runs are strided, and self is also an
    // operand.
    const Tensor self = clone(bt);  // [29, 37]
    mul_(transpose(self, 0, 1), a);
    const std::vector<T> got = contiguous(transpose(self, 0, 1)).template to_vector<T>();
    for (size_t i = 0; i < got.size(); ++i) {
      const T want = vb[i] * va[i];
      ASSERT_TRUE(SameBits(got[i], want) || (std::isnan(got[i]) && std::isnan(want)))
          << "mul_ at " << i;
    }
  }
}

TEST_F(VecMathKernels, Float32ComparisonsAndStridedArithmeticRunTheVectorPath) {
  CheckComparisonsAndStridedArithmetic<float>();
}

TEST_F(VecMathKernels, Float64ComparisonsAndStridedArithmeticRunTheVectorPath) {
  CheckComparisonsAndStridedArithmetic<double>();
}

// prod over rows (vecmath::Prod) and over a dim with dims after it (vecmath::ProdColumns, a
// sequential product per column), at every level and two thread counts, against a long
// double product; zeros and NaN behave as in any product.
template <typename T>
void CheckProdAtEveryLevel() {
  std::mt19937 rng(47);
  std::uniform_real_distribution<double> u(0.9, 1.1);
  std::vector<T> v(static_cast<size_t>(6 * 300 * 5));
  for (T& e : v) e = static_cast<T>(u(rng));
  v[17] = T(0);
  v[400] = std::numeric_limits<T>::quiet_NaN();
  const Tensor x = tensor(v, {6, 300, 5});
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    for (const int64_t dim : {int64_t{2}, int64_t{1}, int64_t{0}}) {
      for (const int threads : {1, 2}) {
        SetNumThreads(threads);
        const int64_t calls = vecmath::CallCount(level);
        const Tensor out = prod(x, {dim}, false);
        const std::string what = "prod over dim " + std::to_string(dim) + " at " +
                                 std::string(CpuCapabilityName(level)) + " on " +
                                 std::to_string(threads) + " threads";
        EXPECT_GT(vecmath::CallCount(level), calls) << what << ": not the vector path";
        const int64_t sizes[3] = {6, 300, 5};
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < dim; ++d) outer *= sizes[d];
        for (int64_t d = dim + 1; d < 3; ++d) inner *= sizes[d];
        const T* po = out.data<T>();
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t c = 0; c < inner; ++c) {
            long double exact = 1;
            bool nan = false;
            for (int64_t r = 0; r < sizes[dim]; ++r) {
              const T e = v[static_cast<size_t>((o * sizes[dim] + r) * inner + c)];
              nan |= std::isnan(e);
              exact *= e;
            }
            const T got = po[o * inner + c];
            if (nan) {
              ASSERT_TRUE(std::isnan(got)) << what;
              continue;
            }
            const long double tolerance = std::fabs(exact) * (sizes[dim] + 1) *
                                          std::numeric_limits<T>::epsilon();
            ASSERT_NEAR(static_cast<long double>(got), exact, tolerance) << what;
          }
        }
      }
    }
  }
}

TEST_F(VecMathKernels, Float32ProdRunsTheVectorProduct) { CheckProdAtEveryLevel<float>(); }

TEST_F(VecMathKernels, Float64ProdRunsTheVectorProduct) { CheckProdAtEveryLevel<double>(); }

// A batch of outer products (per-example weight gradients: [B, m, 1] @ [B, 1, n]) runs
// vecmath::Outer at every level, each element the one product of its two values; a
// column-major b (a transposed [B, n, 1]) takes Eigen's outer product, with the same values.
TEST_F(VecMathKernels, BatchedOuterProductsRunTheVectorPath) {
  const Tensor a = Uniform<float>({6, 13, 1}, 61), b = Uniform<float>({6, 1, 37}, 62);
  const std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>();
  const Tensor b_columns = transpose(contiguous(transpose(b, 1, 2)), 1, 2);  // [6, 1, 37]
  for (CpuCapability level : SupportedCpuCapabilities()) {
    SetCpuCapability(level);
    const int64_t calls = vecmath::CallCount(level);
    const Tensor out = matmul(a, b);
    EXPECT_GT(vecmath::CallCount(level), calls) << CpuCapabilityName(level);
    const Tensor strided = matmul(a, b_columns);
    const std::vector<float> got = out.to_vector<float>();
    const std::vector<float> got_strided = strided.to_vector<float>();
    for (int64_t i = 0; i < 6; ++i) {
      for (int64_t r = 0; r < 13; ++r) {
        for (int64_t j = 0; j < 37; ++j) {
          const size_t at = static_cast<size_t>((i * 13 + r) * 37 + j);
          const float want =
              va[static_cast<size_t>(i * 13 + r)] * vb[static_cast<size_t>(i * 37 + j)];
          ASSERT_EQ(got[at], want) << CpuCapabilityName(level) << " at " << at;
          ASSERT_EQ(got_strided[at], want) << "column-major b at " << at;
        }
      }
    }
  }
}

TEST_F(VecMathKernels, IntegerPowStaysExact) {
  const Tensor a = tensor(std::vector<int64_t>{3, -2, 7, 0}, {4});
  const Tensor b = tensor(std::vector<int64_t>{4, 3, 0, 5}, {4});
  EXPECT_EQ(pow(a, b).to_vector<int64_t>(), (std::vector<int64_t>{81, -8, 1, 0}));
}

TEST_F(VecMathKernels, DtypeRulesAndInPlaceExp) {
  const Tensor ints = tensor(std::vector<int64_t>{0, 1, 2}, {3});
  const Tensor e = exp(ints);
  EXPECT_EQ(e.dtype(), kFloat32);
  EXPECT_FLOAT_EQ(e.to_vector<float>()[2], std::exp(2.0f));
  try {
    erf(tensor(std::vector<bool>{true}, {1}));
    ADD_FAILURE() << "erf of bool did not throw";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("erf: not supported for bool"), std::string::npos);
  }
  // exp_ into a strided view writes through it with exp's bits.
  const Tensor m = Uniform<double>({4, 6}, 9);
  const Tensor expected = exp(m);
  const Tensor in_place = clone(m);
  exp_(transpose(in_place, 0, 1));
  ExpectSameBits<double>(in_place, expected, "exp_ through a transposed view");
  // Special values keep C's answers.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> got = exp(tensor(std::vector<double>{-inf, inf, -1000}, {3}))
                                      .to_vector<double>();
  EXPECT_EQ(got[0], 0.0);
  EXPECT_EQ(got[1], inf);
  EXPECT_EQ(got[2], 0.0);
}

}  // namespace
}  // namespace ft::kernels

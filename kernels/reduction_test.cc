// Tests of the reduction family's kernels (kernels/reduction.h) called directly: the
// reductions over dim lists (sum, mean, prod, amax, amin, logsumexp, var, std, norm),
// argmax / argmin, softmax / log_softmax, the scans (cumsum, cumprod, logcumsumexp,
// linear_recurrence) and sum_to_size.
//
// Oracle: hand-written loops in double precision over the input's values (read in row-major
// order through its strides): ReduceRef groups the elements each output reduces and applies
// the textbook formula (sum, two-pass variance, (sum |x|^p)^(1/p), log(sum(exp(x))), the first
// extreme index ...), ScanRef walks each slice along the scanned dim, and SumToSizeRef adds
// every element into the output index it broadcasts from. Special values (infinities, NaN,
// huge magnitudes, int64 wraparound) are checked against closed forms worked out by hand.
// float64 results are compared to ~1e-12, float32 to ~1e-5 relative. Layouts covered: rank
// 0, size-0 and size-1 dims, every dim subset with negative dims and keepdim, transposed,
// step-sliced, permuted and expanded (stride 0) inputs, and inputs large enough to run on the
// intra-op threads.
#include "kernels/reduction.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/test_helpers.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::NumelOf;
using ::ft::testing::ScopedThreads;
using ::ft::testing::SmallInts;
using ::ft::testing::TransposedCopy;
using ::ft::testing::Uniform;
using ::ft::testing::Values;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

// Enough elements that a reduction splits over the intra-op threads (two grains of 65536).
constexpr int64_t kLarge = 140000;

using Vec = std::vector<double>;
using RowFn = std::function<double(const Vec&)>;
using SliceFn = std::function<Vec(const Vec&)>;
using ReduceKernel = std::function<Tensor(const Tensor&, IntArrayRef, bool)>;

// WrapAdd: a + b with int64 wraparound (PyTorch's integer overflow), without signed UB.
int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

Tensor F64(const Vec& v, IntArrayRef shape) { return tensor(v, shape); }
Tensor F64(const Vec& v) { return tensor(v); }
Tensor F32(const std::vector<float>& v, IntArrayRef shape) { return tensor(v, shape); }
Tensor F32(const std::vector<float>& v) { return tensor(v); }
Tensor I64(const std::vector<int64_t>& v, IntArrayRef shape) { return tensor(v, shape); }
Tensor I64(const std::vector<int64_t>& v) { return tensor(v); }
Tensor Bools(const std::vector<bool>& v, IntArrayRef shape) { return tensor(v, shape); }
Tensor Bools(const std::vector<bool>& v) { return tensor(v); }

// WithZeros: Uniform with every 7th element an exact zero (for prod, norm orders 0 and < 0).
Tensor WithZeros(IntArrayRef shape, DType dtype, uint32_t seed) {
  Vec v = Uniform(shape, kFloat64, seed).to_vector<double>();
  for (size_t i = 0; i < v.size(); i += 7) v[i] = 0.0;
  return to(tensor(v, shape), dtype);
}

// StepSliced: a view with the values of t read every second element of its last dim.
Tensor StepSliced(const Tensor& t) {
  Shape big(t.sizes().begin(), t.sizes().end());
  big.back() = 2 * big.back();
  Tensor storage = zeros(big, t.dtype());
  Tensor view = slice(storage, -1, 0, std::nullopt, 2);
  copy_into(view, t);
  return view;
}

// ReversedLayout: a view with t's values whose strides run backwards (dim 0 fastest).
Tensor ReversedLayout(const Tensor& t) {
  Shape dims;
  for (int64_t d = t.dim() - 1; d >= 0; --d) dims.push_back(d);
  return permute(contiguous(permute(t, dims)), dims);
}

::testing::AssertionResult Near(const Tensor& actual, const Tensor& expected, double atol,
                                double rtol) {
  return ::ft::testing::TensorNear(actual, expected, atol, rtol);
}

// FastNear: TensorNear's rule (same shape and dtype; NaN matches NaN; |a - e| <= atol +
// rtol * |e|) over Values(), for the large inputs, where TensorNear's to_vector dominates
// the test's time in fastbuild.
::testing::AssertionResult FastNear(const Tensor& actual, const Tensor& expected, double atol = 0,
                                    double rtol = 0) {
  if (actual.dtype() != expected.dtype()) {
    return ::testing::AssertionFailure() << "dtype " << DTypeName(actual.dtype()) << " != expected "
                                         << DTypeName(expected.dtype());
  }
  if (actual.sizes() != expected.sizes()) {
    return ::testing::AssertionFailure() << "shape " << ShapeToString(actual.sizes())
                                         << " != expected " << ShapeToString(expected.sizes());
  }
  const Vec a = Values<double>(actual), e = Values<double>(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    if ((std::isnan(a[i]) && std::isnan(e[i])) || a[i] == e[i]) continue;
    if (!(std::fabs(a[i] - e[i]) <= atol + rtol * std::fabs(e[i]))) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << a[i] << " vs expected " << e[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// Tolerances of a float32 / float64 result against the double oracle.
double Atol(DType dtype) { return dtype == kFloat32 ? 1e-5 : 1e-12; }
double Rtol(DType dtype) { return dtype == kFloat32 ? 1e-5 : 1e-12; }

// ---- Oracles ----

// Grouped: the elements each output of a reduction reduces, in row-major order, and the
// reduction's shape.
struct Grouped {
  Shape shape;
  std::vector<Vec> groups;
};

// GroupFor groups x's elements for reducing the dims `dims` (negative dims allowed; an empty
// list reduces every dim); keepdim keeps size-1 dims in the shape.
Grouped GroupFor(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  const int64_t rank = x.dim();
  const std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
  std::vector<char> reduce(static_cast<size_t>(rank), dims.empty());
  for (int64_t d : dims) {
    if (rank > 0) reduce[d < 0 ? d + rank : d] = true;
  }
  Grouped g;
  std::vector<int64_t> out_stride(static_cast<size_t>(rank), 0);  // 0 for reduced dims
  int64_t out_n = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (!reduce[d]) {
      out_stride[d] = out_n;
      out_n *= sizes[d];
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduce[d]) {
      g.shape.push_back(sizes[d]);
    } else if (keepdim) {
      g.shape.push_back(1);
    }
  }
  g.groups.resize(static_cast<size_t>(out_n));
  const Vec v = Values<double>(x);
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  int64_t o = 0;  // the output index of `index`
  for (size_t i = 0; i < v.size(); ++i) {
    g.groups[o].push_back(v[i]);
    for (int64_t d = rank - 1; d >= 0; --d) {  // odometer step
      o += out_stride[d];
      if (++index[d] < sizes[d]) break;
      o -= out_stride[d] * sizes[d];
      index[d] = 0;
    }
  }
  return g;
}

// Apply: f of each group, as a tensor of the reduction's shape and `dtype`.
Tensor Apply(const Grouped& g, const RowFn& f, DType dtype) {
  Vec r;
  for (const Vec& group : g.groups) r.push_back(f(group));
  return to(tensor(r, g.shape), dtype);
}

// ReduceRef: the reduction of x's dims `dims` by f (see GroupFor).
Tensor ReduceRef(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, const RowFn& f,
                 DType dtype) {
  return Apply(GroupFor(x, dims, keepdim), f, dtype);
}

// ScanRef applies f to every slice of x along `dim` (x's shape, `dtype`). Rank 0 is one
// slice of one element.
Tensor ScanRef(const Tensor& x, int64_t dim, const SliceFn& f, DType dtype) {
  const int64_t rank = x.dim();
  const Shape shape(x.sizes().begin(), x.sizes().end());
  if (dim < 0) dim += std::max<int64_t>(rank, 1);
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < dim) outer *= shape[d];
    if (d == dim) n = shape[d];
    if (d > dim) inner *= shape[d];
  }
  const Vec v = Values<double>(x);
  Vec r(v.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      Vec s;
      for (int64_t i = 0; i < n; ++i) s.push_back(v[(o * n + i) * inner + k]);
      const Vec y = f(s);
      for (int64_t i = 0; i < n; ++i) r[(o * n + i) * inner + k] = y[i];
    }
  }
  return to(tensor(r, shape), dtype);
}

bool AnyNaN(const Vec& v) {
  return std::any_of(v.begin(), v.end(), [](double e) { return std::isnan(e); });
}

double SumOf(const Vec& v) {
  double s = 0;
  for (double e : v) s += e;
  return s;
}
double MeanOf(const Vec& v) { return v.empty() ? kNaN : SumOf(v) / static_cast<double>(v.size()); }
double ProdOf(const Vec& v) {
  double p = 1;
  for (double e : v) p *= e;
  return p;
}
double MaxOf(const Vec& v) {
  if (AnyNaN(v)) return kNaN;
  double m = -kInf;
  for (double e : v) m = std::max(m, e);
  return m;
}
double MinOf(const Vec& v) {
  if (AnyNaN(v)) return kNaN;
  double m = kInf;
  for (double e : v) m = std::min(m, e);
  return m;
}
// LogSumExpOf: the definition, log(sum(exp(x))), for inputs of moderate magnitude.
double LogSumExpOf(const Vec& v) {
  double s = 0;
  for (double e : v) s += std::exp(e);
  return std::log(s);
}
double VarOf(const Vec& v, int64_t correction) {
  if (v.empty()) return kNaN;
  const double mu = MeanOf(v);
  double ss = 0;
  for (double e : v) ss += (e - mu) * (e - mu);
  return ss / std::max(0.0, static_cast<double>(v.size()) - static_cast<double>(correction));
}
double NormOf(const Vec& v, double p) {
  if (p == kInf || p == -kInf) {
    if (AnyNaN(v)) return kNaN;
    double m = p > 0 ? 0.0 : kInf;
    for (double e : v) m = p > 0 ? std::max(m, std::fabs(e)) : std::min(m, std::fabs(e));
    return m;
  }
  if (p == 0) {
    double count = 0;
    for (double e : v) count += e != 0 ? 1 : 0;  // NaN != 0
    return count;
  }
  double s = 0;
  for (double e : v) s += std::pow(std::fabs(e), p);
  return std::pow(s, 1.0 / p);
}
// FirstExtremeIndex: the index of the first maximum (kMax) or minimum; a NaN is the extreme
// (the first NaN wins).
template <bool kMax>
double FirstExtremeIndex(const Vec& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) return static_cast<double>(i);
  }
  size_t best = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (kMax ? v[i] > v[best] : v[i] < v[best]) best = i;
  }
  return static_cast<double>(best);
}

struct ReductionCase {
  std::string name;
  ReduceKernel run;
  RowFn ref;
};

// Every dim-list reduction, with the floating oracle of each (var / std / norm at several
// corrections and orders).
std::vector<ReductionCase> FloatingReductions() {
  std::vector<ReductionCase> cases = {
      {"sum", [](const Tensor& x, IntArrayRef d, bool k) { return sum(x, d, k); }, SumOf},
      {"mean", [](const Tensor& x, IntArrayRef d, bool k) { return mean(x, d, k); }, MeanOf},
      {"prod", [](const Tensor& x, IntArrayRef d, bool k) { return prod(x, d, k); }, ProdOf},
      {"amax", [](const Tensor& x, IntArrayRef d, bool k) { return amax(x, d, k); }, MaxOf},
      {"amin", [](const Tensor& x, IntArrayRef d, bool k) { return amin(x, d, k); }, MinOf},
      {"logsumexp", [](const Tensor& x, IntArrayRef d, bool k) { return logsumexp(x, d, k); },
       LogSumExpOf},
  };
  for (int64_t c : {0, 1, 2}) {
    cases.push_back({"var c=" + std::to_string(c),
                     [c](const Tensor& x, IntArrayRef d, bool k) { return var(x, d, c, k); },
                     [c](const Vec& v) { return VarOf(v, c); }});
    cases.push_back(
        {"std c=" + std::to_string(c),
         [c](const Tensor& x, IntArrayRef d, bool k) { return kernels::std(x, d, c, k); },
         [c](const Vec& v) { return std::sqrt(VarOf(v, c)); }});
  }
  for (double p : {2.0, 1.0, 0.0, 3.0, 0.5, kInf, -kInf, -1.5}) {
    cases.push_back({"norm p=" + std::to_string(p),
                     [p](const Tensor& x, IntArrayRef d, bool k) { return norm(x, p, d, k); },
                     [p](const Vec& v) { return NormOf(v, p); }});
  }
  return cases;
}

// Reductions: FloatingReductions(), built once.
const std::vector<ReductionCase>& Reductions() {
  static const auto* const cases = new std::vector<ReductionCase>(FloatingReductions());
  return *cases;
}

// ---- Dim-list reductions ----

TEST(ReductionTest, EveryReductionMatchesDoubleLoopOverEveryDimSubset) {
  uint32_t seed = 1;
  for (DType dtype : {kFloat32, kFloat64}) {
    for (const Shape& shape : {Shape{3, 4, 5}, Shape{2, 1, 3, 4}}) {
      const Tensor x = WithZeros(shape, dtype, seed++);
      const int64_t rank = static_cast<int64_t>(shape.size());
      for (int64_t mask = 0; mask < (int64_t{1} << rank); ++mask) {
        std::vector<int64_t> dims;
        for (int64_t d = 0; d < rank; ++d) {
          if (mask & (int64_t{1} << d)) dims.push_back(d % 2 == 1 ? d - rank : d);  // some < 0
        }
        for (bool keepdim : {false, true}) {
          for (const ReductionCase& c : Reductions()) {
            SCOPED_TRACE(c.name + " " + DTypeName(dtype) + " of " + ShapeToString(shape) +
                         " over " + ShapeToString(dims) + (keepdim ? " keepdim" : ""));
            EXPECT_TRUE(Near(c.run(x, dims, keepdim), ReduceRef(x, dims, keepdim, c.ref, dtype),
                             Atol(dtype), Rtol(dtype)));
          }
        }
      }
    }
  }
}

TEST(ReductionTest, NonContiguousInputsMatchDoubleLoop) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor m = WithZeros({4, 6}, dtype, 11);
    const Tensor cube = WithZeros({3, 4, 5}, dtype, 12);
    const std::vector<Tensor> inputs = {
        TransposedCopy(m),                                      // strides swapped
        StepSliced(m),                                          // every other element
        transpose(m, 0, 1),                                     // a plain transposed view
        expand(WithZeros({1, 6}, dtype, 13), {4, 6}),           // stride 0 over rows
        expand(WithZeros({4, 1}, dtype, 14), {4, 6}),           // stride 0 along a row
        ReversedLayout(cube),                                   // dim 0 fastest
        permute(cube, {2, 0, 1}),                               // a permuted view
        slice(slice(cube, 1, 1, 4, 2), 2, 1, std::nullopt, 3),  // offset and steps
    };
    const std::vector<std::vector<int64_t>> dim_lists = {{}, {0}, {-1}, {0, -1}, {1}};
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (const std::vector<int64_t>& dims : dim_lists) {
        for (const ReductionCase& c : Reductions()) {
          SCOPED_TRACE(c.name + " " + DTypeName(dtype) + " input " + std::to_string(i) + " over " +
                       ShapeToString(dims));
          EXPECT_TRUE(Near(c.run(inputs[i], dims, false),
                           ReduceRef(inputs[i], dims, false, c.ref, dtype), Atol(dtype),
                           Rtol(dtype)));
        }
      }
    }
  }
}

TEST(ReductionTest, RankZeroReducesItsSingleElement) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor x = scalar_tensor(-2.5, dtype);
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{}, {0}, {-1}}) {
      for (bool keepdim : {false, true}) {
        for (const ReductionCase& c : Reductions()) {
          SCOPED_TRACE(c.name + " " + DTypeName(dtype) + " over " + ShapeToString(dims));
          const Tensor out = c.run(x, dims, keepdim);
          EXPECT_EQ(out.dim(), 0);
          EXPECT_TRUE(Near(out, to(F64({c.ref({-2.5})}, {}), dtype), Atol(dtype), Rtol(dtype)));
        }
      }
    }
  }
  // var / std of one element with correction 1: 0 / 0.
  EXPECT_TRUE(std::isnan(var(scalar_tensor(1.0, kFloat64), {}, 1, false).item<double>()));
  EXPECT_EQ(sum(scalar_tensor(int64_t{7}), {0}, false).item<int64_t>(), 7);
  EXPECT_FT_ERROR(sum(scalar_tensor(1.0), {0, -1}, false),
                  "sum: dim 0 appears more than once in the dim list [0, -1]");
  EXPECT_FT_ERROR(mean(scalar_tensor(1.0), {1}, false),
                  "mean: dim 1 is out of range for a tensor of rank 0");
}

TEST(ReductionTest, DimErrorsNameTheOp) {
  const Tensor x = zeros({2, 3});
  for (const ReductionCase& c : Reductions()) {
    const std::string op = c.name.substr(0, c.name.find(' '));
    SCOPED_TRACE(c.name);
    EXPECT_FT_ERROR(c.run(x, {2}, false), op + ": dim 2 is out of range for a tensor of rank 2");
    EXPECT_FT_ERROR(c.run(x, {-3}, false), op + ": dim -3 is out of range for a tensor of rank 2");
    EXPECT_FT_ERROR(c.run(x, {1, -1}, false),
                    op + ": dim 1 appears more than once in the dim list [1, -1]");
  }
}

TEST(ReductionTest, SizeZeroDimsGiveTheIdentityOrThrow) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor x = zeros({2, 0, 3}, dtype);
    const std::vector<std::pair<std::string, double>> identities = {{"sum", 0.0},
                                                                    {"mean", kNaN},
                                                                    {"prod", 1.0},
                                                                    {"logsumexp", -kInf},
                                                                    {"var c=1", kNaN},
                                                                    {"std c=1", kNaN},
                                                                    {"norm p=2.000000", 0.0},
                                                                    {"norm p=1.000000", 0.0},
                                                                    {"norm p=0.000000", 0.0},
                                                                    {"norm p=0.500000", 0.0}};
    for (const ReductionCase& c : Reductions()) {
      for (const auto& [name, identity] : identities) {
        if (c.name != name) continue;
        SCOPED_TRACE(c.name + " " + DTypeName(dtype));
        EXPECT_TENSOR_EQ(c.run(x, {1}, false), to(full({2, 3}, identity), dtype));
        EXPECT_TENSOR_EQ(c.run(x, {-2}, true), to(full({2, 1, 3}, identity), dtype));
        EXPECT_TENSOR_EQ(c.run(x, {}, false), to(full({}, identity), dtype));
        // Reducing a non-empty dim of an empty tensor: an empty result.
        EXPECT_EQ(c.run(x, {0}, false).sizes(), IntArrayRef({0, 3}));
        EXPECT_EQ(c.run(x, {2}, true).sizes(), IntArrayRef({2, 0, 1}));
      }
    }
    // No identity: amax, amin, and the p = inf and p < 0 norms throw on an empty slice...
    EXPECT_FT_ERROR(amax(x, {1}, false),
                    "amax: cannot reduce over a zero-size dimension (dim 1 of shape [2, 0, 3])");
    EXPECT_FT_ERROR(amin(x, {}, false), "amin: cannot reduce over a zero-size dimension");
    EXPECT_FT_ERROR(norm(x, kInf, {1}, false),
                    "norm: cannot reduce over a zero-size dimension (dim 1 of shape [2, 0, 3]): "
                    "the p = inf norm has no identity");
    EXPECT_FT_ERROR(norm(x, -kInf, {1}, false), "norm: cannot reduce over a zero-size dimension");
    EXPECT_FT_ERROR(norm(x, -1.0, {}, false), "norm: cannot reduce over a zero-size dimension");
    // ... but not when only non-empty dims are reduced.
    EXPECT_EQ(amax(x, {0, 2}, false).sizes(), IntArrayRef({0}));
    EXPECT_EQ(amin(x, {2}, true).sizes(), IntArrayRef({2, 0, 1}));
    EXPECT_EQ(norm(x, kInf, {0}, false).sizes(), IntArrayRef({0, 3}));
  }
  // Empty tensors with huge other dims (their size products overflow int64).
  const Tensor huge = zeros({0, int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_EQ(sum(huge, {2}, false).sizes(), IntArrayRef({0, int64_t{1} << 40}));
  EXPECT_EQ(sum(huge, {1, 2}, true).sizes(), IntArrayRef({0, 1, 1}));
  EXPECT_EQ(amax(huge, {1}, false).sizes(), IntArrayRef({0, int64_t{1} << 40}));
}

// ---- dtypes ----

TEST(ReductionDTypeTest, IntegerSumAndProdAreExactInt64AndWrap) {
  const int64_t big = (int64_t{1} << 53) + 1;  // not representable in double
  const Tensor x = I64({big, big, 1, kI64Max, 1, 2}, {3, 2});
  EXPECT_TENSOR_EQ(sum(x, {0}, false), I64({big + 2, WrapAdd(WrapAdd(big, kI64Max), 2)}));
  EXPECT_TENSOR_EQ(sum(x, {1}, false), I64({2 * big, kI64Min, 3}));
  EXPECT_TENSOR_EQ(sum(transpose(x, 0, 1), {0}, true), I64({2 * big, kI64Min, 3}, {1, 3}));
  EXPECT_TENSOR_EQ(sum(I64({kI64Max, 1}), {}, false), tensor(std::vector<int64_t>{kI64Min}, {}));
  const int64_t two32 = int64_t{1} << 32;
  EXPECT_TENSOR_EQ(prod(I64({two32, two32, 3, 5}, {2, 2}), {1}, false), I64({0, 15}));
  EXPECT_TENSOR_EQ(prod(I64({two32, 3, two32, 5}, {2, 2}), {0}, false), I64({0, 15}));
  EXPECT_TENSOR_EQ(prod(I64({-big, 3}), {}, false), tensor(std::vector<int64_t>{-3 * big}, {}));
  // bool sums and products count in int64.
  const Tensor b = Bools({true, false, true, true, true, true}, {2, 3});
  EXPECT_TENSOR_EQ(sum(b, {1}, false), I64({2, 3}));
  EXPECT_TENSOR_EQ(sum(b, {}, false), tensor(std::vector<int64_t>{5}, {}));
  EXPECT_TENSOR_EQ(prod(b, {0}, false), I64({1, 0, 1}));
  // Empty integer slices: the identities in int64.
  EXPECT_TENSOR_EQ(sum(zeros({0, 2}, kInt64), {0}, false), I64({0, 0}));
  EXPECT_TENSOR_EQ(prod(zeros({2, 0}, kBool), {1}, false), I64({1, 1}));
}

TEST(ReductionDTypeTest, AmaxAminKeepIntegerAndBoolDtypes) {
  const Tensor x = I64({kI64Min, 5, kI64Max, -3, 0, 5}, {2, 3});
  EXPECT_TENSOR_EQ(amax(x, {1}, false), I64({kI64Max, 5}));
  EXPECT_TENSOR_EQ(amin(x, {1}, false), I64({kI64Min, -3}));
  EXPECT_TENSOR_EQ(amax(x, {0}, false), I64({-3, 5, kI64Max}));
  EXPECT_TENSOR_EQ(amin(TransposedCopy(x), {}, false), tensor(std::vector<int64_t>{kI64Min}, {}));
  const Tensor b = Bools({false, false, true, true, true, true}, {3, 2});
  EXPECT_TENSOR_EQ(amax(b, {1}, false), Bools({false, true, true}));  // any
  EXPECT_TENSOR_EQ(amin(b, {1}, false), Bools({false, true, true}));  // all
  EXPECT_TENSOR_EQ(amax(b, {0}, true), Bools({true, true}, {1, 2}));
  EXPECT_TENSOR_EQ(amin(b, {0}, false), Bools({false, false}));
}

TEST(ReductionDTypeTest, LogsumexpOfIntegersIsFloat32) {
  const Tensor x = I64({0, 1, 2, 2}, {2, 2});
  EXPECT_TRUE(Near(logsumexp(x, {1}, false),
                   F32({static_cast<float>(std::log(1.0 + std::exp(1.0))),
                        static_cast<float>(2.0 + std::log(2.0))}),
                   1e-6, 1e-6));
  EXPECT_TRUE(Near(logsumexp(Bools({true, false}), {}, false),
                   F32({static_cast<float>(std::log(1.0 + std::exp(1.0)))}, {}), 1e-6, 1e-6));
}

TEST(ReductionDTypeTest, FloatingOnlyKernelsRejectIntegerAndBool) {
  for (const Tensor& x : {I64({1, 2, 3}), Bools({true, false, true})}) {
    const std::string got = std::string("got ") + DTypeName(x.dtype()) + " of shape [3]";
    EXPECT_FT_ERROR(mean(x, {}, false),
                    "mean: could not infer the output dtype; input dtype must be floating point");
    EXPECT_FT_ERROR(var(x, {}, 1, false),
                    "var: expected a floating point tensor (float32 or float64), " + got);
    EXPECT_FT_ERROR(kernels::std(x, {}, 1, false), "std: expected a floating point tensor");
    EXPECT_FT_ERROR(norm(x, 2, {}, false), "norm: expected a floating point tensor");
    EXPECT_FT_ERROR(softmax(x, 0), "softmax: expected a floating point tensor");
    EXPECT_FT_ERROR(log_softmax(x, 0), "log_softmax: expected a floating point tensor");
    EXPECT_FT_ERROR(logcumsumexp(x, 0), "logcumsumexp: expected a floating point tensor");
  }
}

// ---- NaN and infinities ----

TEST(ReductionSpecialValuesTest, NaNPropagatesFromEveryPositionInRowsAndColumns) {
  for (DType dtype : {kFloat32, kFloat64}) {
    for (int64_t n : {37, 1000}) {  // vector bodies and scalar tails
      for (int64_t pos : {int64_t{0}, int64_t{1}, n / 2, n - 2, n - 1}) {
        SCOPED_TRACE(std::string(DTypeName(dtype)) + " n=" + std::to_string(n) + " pos " +
                     std::to_string(pos));
        // Rows: one row of n per output; NaN in row 1 only.
        Vec rows = Uniform({3, n}, kFloat64, 21).to_vector<double>();
        rows[static_cast<size_t>(n + pos)] = kNaN;
        const Tensor r = to(F64(rows, {3, n}), dtype);
        // Columns: reduce dim 0 of [n, 3]; NaN in column 1 only.
        Vec cols = Uniform({n, 3}, kFloat64, 22).to_vector<double>();
        cols[static_cast<size_t>(pos * 3 + 1)] = kNaN;
        const Tensor c = to(F64(cols, {n, 3}), dtype);
        for (const ReductionCase& k : Reductions()) {
          if (k.name == "norm p=0.000000") continue;  // counts NaN as nonzero: below
          SCOPED_TRACE(k.name);
          const Tensor out_rows = k.run(r, {1}, false);
          const Tensor out_cols = k.run(c, {0}, false);
          EXPECT_TRUE(std::isnan(out_rows.to_vector<double>()[1]));
          EXPECT_TRUE(std::isnan(out_cols.to_vector<double>()[1]));
          EXPECT_TRUE(Near(out_rows, ReduceRef(r, {1}, false, k.ref, dtype), Atol(dtype), 1e-4));
          EXPECT_TRUE(Near(out_cols, ReduceRef(c, {0}, false, k.ref, dtype), Atol(dtype), 1e-4));
        }
      }
    }
  }
  EXPECT_TENSOR_EQ(norm(F64({kNaN, 0.0, 2.0}), 0.0, {}, false), F64({2.0}, {}));
}

TEST(ReductionSpecialValuesTest, InfinitiesFollowIeee) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor x = to(F64({kInf, 1.0, -kInf, -kInf, kInf, -kInf}, {3, 2}), dtype);
    EXPECT_TENSOR_EQ(sum(x, {1}, false), to(F64({kInf, -kInf, kNaN}), dtype));
    EXPECT_TENSOR_EQ(amax(x, {1}, false), to(F64({kInf, -kInf, kInf}), dtype));
    EXPECT_TENSOR_EQ(amin(x, {0}, false), to(F64({-kInf, -kInf}), dtype));
    EXPECT_TENSOR_EQ(mean(x, {1}, false), to(F64({kInf, -kInf, kNaN}), dtype));
    EXPECT_TENSOR_EQ(norm(x, 2.0, {1}, false), to(F64({kInf, kInf, kInf}), dtype));
    EXPECT_TENSOR_EQ(norm(x, kInf, {}, false), to(F64({kInf}, {}), dtype));
    EXPECT_TENSOR_EQ(norm(x, -kInf, {1}, false), to(F64({1.0, kInf, kInf}), dtype));
    EXPECT_TENSOR_EQ(prod(x, {1}, false), to(F64({kInf, kInf, -kInf}), dtype));
  }
}

TEST(ReductionSpecialValuesTest, LogsumexpIsStableAndExactAtInfinities) {
  const double log2 = std::log(2.0);
  // (values of one slice, closed form)
  const std::vector<std::pair<Vec, double>> cases = {
      {{1000, 1000}, 1000 + log2},   {{-1000, -1000}, -1000 + log2},
      {{-kInf, -kInf}, -kInf},       {{kInf, 1}, kInf},
      {{kInf, -kInf}, kInf},         {{-kInf, 0}, 0.0},
      {{0, 0, 0, 0}, std::log(4.0)}, {{kNaN, 1}, kNaN},
      {{kInf, kInf}, kInf},          {{80, 80}, 80 + log2}};
  for (DType dtype : {kFloat32, kFloat64}) {
    for (const auto& [v, want] : cases) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + std::to_string(v[0]));
      const int64_t n = static_cast<int64_t>(v.size());
      const Tensor expected = to(F64({want}, {}), dtype);
      const double tol = dtype == kFloat32 ? 1e-4 : 1e-12;
      const Tensor row = to(F64(v, {1, n}), dtype);
      EXPECT_TRUE(Near(logsumexp(row, {1}, false), to(F64({want}), dtype), 0, tol));
      // The same slice down a column (inner > 1), next to a column of zeros.
      Vec two_cols;
      for (double e : v) {
        two_cols.push_back(e);
        two_cols.push_back(0.0);
      }
      const Tensor cols = to(F64(two_cols, {n, 2}), dtype);
      EXPECT_TRUE(Near(logsumexp(cols, {0}, false),
                       to(F64({want, std::log(static_cast<double>(n))}), dtype), 0, tol));
      EXPECT_TRUE(Near(logsumexp(row, {}, false), expected, 0, tol));
    }
  }
}

TEST(ReductionVarianceTest, CorrectionAndEdgeCases) {
  const Tensor x = F64({1, 2, 3, 4});  // mean 2.5, sum of squared deviations 5
  EXPECT_DOUBLE_EQ(var(x, {}, 0, false).item<double>(), 1.25);
  EXPECT_DOUBLE_EQ(var(x, {}, 1, false).item<double>(), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(var(x, {}, 2, false).item<double>(), 2.5);
  EXPECT_DOUBLE_EQ(var(x, {}, -1, false).item<double>(), 1.0);
  EXPECT_EQ(var(x, {}, 4, false).item<double>(), kInf);  // 5 / 0
  EXPECT_EQ(var(x, {}, 9, false).item<double>(), kInf);  // max(0, N - correction)
  EXPECT_DOUBLE_EQ(kernels::std(x, {}, 0, false).item<double>(), std::sqrt(1.25));
  EXPECT_TRUE(std::isnan(var(F64({3, 3, 3}), {}, 3, false).item<double>()));  // 0 / 0
  EXPECT_EQ(var(F64({3}), {}, 0, false).item<double>(), 0.0);
  EXPECT_TRUE(std::isnan(kernels::std(F64({3}), {}, 1, false).item<double>()));
  // A large common offset: the two-pass variance keeps the small spread.
  EXPECT_NEAR(var(F64({1e8 + 1, 1e8 + 2, 1e8 + 3, 1e8 + 4}), {}, 1, false).item<double>(),
              5.0 / 3.0, 1e-7);
  EXPECT_NEAR(var(F32({1e4f + 1, 1e4f + 2, 1e4f + 3, 1e4f + 4}), {}, 1, false).item<float>(),
              5.0 / 3.0, 1e-3);
  // Down columns (inner > 1) and along rows, with keepdim.
  const Tensor m = F64({1, 10, 2, 20, 3, 30, 4, 40}, {4, 2});
  EXPECT_TRUE(Near(var(m, {0}, 1, true), F64({5.0 / 3.0, 500.0 / 3.0}, {1, 2}), 0, 1e-12));
  EXPECT_TRUE(Near(kernels::std(m, {1}, 0, false), F64({4.5, 9.0, 13.5, 18.0}), 0, 1e-12));
  // std of an infinite spread is inf, not nan (scalar square roots).
  EXPECT_EQ(kernels::std(F32({0.0f, 3e38f}), {}, 1, false).item<float>(),
            std::numeric_limits<float>::infinity());
}

TEST(ReductionNormTest, EveryOrderOnAHandWorkedVector) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor x = to(F64({3, -4, 0}), dtype);
    const double tol = dtype == kFloat32 ? 1e-6 : 1e-14;
    const auto check = [&](double p, double want) {
      SCOPED_TRACE("p = " + std::to_string(p));
      EXPECT_TRUE(Near(norm(x, p, {}, false), to(F64({want}, {}), dtype), 0, tol));
    };
    check(2, 5);
    check(1, 7);
    check(0, 2);
    check(kInf, 4);
    check(-kInf, 0);
    check(3, std::cbrt(91.0));
    check(0.5, std::pow(std::sqrt(3.0) + 2.0, 2.0));
    check(-1, 0);  // 1 / (1/3 + 1/4 + 1/0)
    EXPECT_TRUE(Near(norm(to(F64({3, -4}), dtype), -1, {}, false),
                     to(F64({1.0 / (1.0 / 3 + 1.0 / 4)}, {}), dtype), 0, tol));
    // -0 has norm +0.
    const Tensor z = norm(to(F64({-0.0}), dtype), 2, {}, false);
    EXPECT_EQ(z.to_vector<double>()[0], 0.0);
    EXPECT_FALSE(std::signbit(z.to_vector<double>()[0]));
  }
}

// ---- argmax / argmin ----

TEST(ReductionArgTest, FirstExtremeAlongEveryDimMatchesDoubleLoop) {
  for (DType dtype : {kFloat32, kFloat64, kInt64, kBool}) {
    const int64_t lo = dtype == kBool ? 0 : -2, hi = dtype == kBool ? 1 : 2;
    const Tensor cube = SmallInts({3, 4, 5}, dtype, 31, lo, hi);  // many ties
    const std::vector<Tensor> inputs = {cube, ReversedLayout(cube), permute(cube, {1, 2, 0}),
                                        StepSliced(cube)};
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& x = inputs[i];
      for (int64_t dim : {0, 1, 2, -1, -3}) {
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(std::string(DTypeName(dtype)) + " input " + std::to_string(i) + " dim " +
                       std::to_string(dim) + (keepdim ? " keepdim" : ""));
          EXPECT_TENSOR_EQ(argmax(x, dim, keepdim),
                           ReduceRef(x, {dim}, keepdim, FirstExtremeIndex<true>, kInt64));
          EXPECT_TENSOR_EQ(argmin(x, dim, keepdim),
                           ReduceRef(x, {dim}, keepdim, FirstExtremeIndex<false>, kInt64));
        }
      }
      // The flattened tensor (row-major in x's logical order, whatever its layout).
      EXPECT_TENSOR_EQ(argmax(x, std::nullopt, false),
                       ReduceRef(x, {}, false, FirstExtremeIndex<true>, kInt64));
      EXPECT_TENSOR_EQ(argmin(x, std::nullopt, true),
                       ReduceRef(x, {}, true, FirstExtremeIndex<false>, kInt64));
    }
  }
}

TEST(ReductionArgTest, TiesNaNInfinitiesAndRankZero) {
  EXPECT_EQ(argmax(F64({1, 3, 3, 2}), std::nullopt, false).item<int64_t>(), 1);
  EXPECT_EQ(argmin(F64({2, 1, 1, 5}), 0, false).item<int64_t>(), 1);
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor x = to(F64({1, kNaN, 5, kNaN, -kInf}), dtype);
    EXPECT_EQ(argmax(x, 0, false).item<int64_t>(), 1);  // NaN is the maximum...
    EXPECT_EQ(argmin(x, 0, false).item<int64_t>(), 1);  // ... and the minimum
    EXPECT_EQ(argmin(to(F64({1, -kInf, 5, -kInf}), dtype), 0, false).item<int64_t>(), 1);
    EXPECT_EQ(argmax(to(F64({-kInf, -kInf}), dtype), 0, false).item<int64_t>(), 0);
    // NaN down a column too.
    EXPECT_TENSOR_EQ(argmax(to(F64({1, 2, kNaN, 0, 3, kNaN}, {3, 2}), dtype), 0, false),
                     I64({1, 2}));
  }
  EXPECT_EQ(argmax(I64({kI64Min, kI64Max, kI64Max}), 0, false).item<int64_t>(), 1);
  EXPECT_EQ(argmin(Bools({true, false, false}), std::nullopt, false).item<int64_t>(), 1);
  // Rank 0: the single element is its own extreme, whatever dim names it.
  const Tensor s = scalar_tensor(4.0);
  for (std::optional<int64_t> dim :
       {std::optional<int64_t>{}, std::optional<int64_t>{0}, std::optional<int64_t>{-1}}) {
    for (bool keepdim : {false, true}) {
      const Tensor out = argmax(s, dim, keepdim);
      EXPECT_EQ(out.dim(), 0);
      EXPECT_EQ(out.dtype(), kInt64);
      EXPECT_EQ(out.item<int64_t>(), 0);
      EXPECT_EQ(argmin(s, dim, keepdim).item<int64_t>(), 0);
    }
  }
  // keepdim without a dim keeps x's rank with size-1 dims.
  EXPECT_TENSOR_EQ(argmax(F32({0, 9, 1, 2, 3, 4}, {2, 3}), std::nullopt, true), I64({1}, {1, 1}));
  // A non-empty dim of an empty tensor: an empty result.
  EXPECT_EQ(argmax(zeros({0, 3}), 1, false).sizes(), IntArrayRef({0}));
}

TEST(ReductionArgTest, Errors) {
  EXPECT_FT_ERROR(argmax(zeros({2, 0}), std::nullopt, false),
                  "argmax: cannot reduce over a zero-size dimension (the flattened input of "
                  "shape [2, 0] is empty)");
  EXPECT_FT_ERROR(argmin(zeros({0}), std::nullopt, true),
                  "argmin: cannot reduce over a zero-size dimension (the flattened input");
  EXPECT_FT_ERROR(argmax(zeros({2, 0}), 1, false),
                  "argmax: cannot reduce over a zero-size dimension (dim 1 of shape [2, 0]): an "
                  "empty slice has no extreme element");
  EXPECT_FT_ERROR(argmin(zeros({0, 3}), -2, false),
                  "argmin: cannot reduce over a zero-size dimension (dim 0 of shape [0, 3])");
  EXPECT_FT_ERROR(argmax(zeros({2, 3}), 2, false),
                  "argmax: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(argmin(scalar_tensor(1.0), 1, false),
                  "argmin: dim 1 is out of range for a tensor of rank 0");
}

// ---- softmax / log_softmax ----

Vec SoftmaxOf(const Vec& v) {  // exp(x) / sum(exp(x)), moderate inputs
  double s = 0;
  for (double e : v) s += std::exp(e);
  Vec y;
  for (double e : v) y.push_back(std::exp(e) / s);
  return y;
}
Vec LogSoftmaxOf(const Vec& v) {
  const double lse = LogSumExpOf(v);
  Vec y;
  for (double e : v) y.push_back(e - lse);
  return y;
}

TEST(ReductionSoftmaxTest, MatchesDoubleLoopAlongEveryDimAndLayout) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor cube = Uniform({3, 4, 5}, dtype, 41, -4.0, 4.0);
    const std::vector<Tensor> inputs = {cube, ReversedLayout(cube), permute(cube, {2, 0, 1}),
                                        StepSliced(cube),
                                        expand(Uniform({1, 4, 1}, dtype, 42), {3, 4, 5})};
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (int64_t dim : {0, 1, 2, -1, -2}) {
        SCOPED_TRACE(std::string(DTypeName(dtype)) + " input " + std::to_string(i) + " dim " +
                     std::to_string(dim));
        EXPECT_TRUE(Near(softmax(inputs[i], dim), ScanRef(inputs[i], dim, SoftmaxOf, dtype),
                         Atol(dtype) / 10, Rtol(dtype)));
        EXPECT_TRUE(Near(log_softmax(inputs[i], dim), ScanRef(inputs[i], dim, LogSoftmaxOf, dtype),
                         Atol(dtype), Rtol(dtype)));
      }
    }
  }
}

TEST(ReductionSoftmaxTest, ExactZerosAtMinusInfinityAndUnderflow) {
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const double far = dtype == kFloat32 ? -120.0 : -800.0;  // exp underflows to exactly 0
    // Rows (inner == 1) and the same values down columns (inner > 1).
    const Tensor rows = to(F64({0, -kInf, 0, -kInf, far, 1, 1000, 1000, -1000}, {3, 3}), dtype);
    const Tensor want_soft =
        to(F64({0.5, 0, 0.5, 0, 0, 1, 0.5, 0.5, 0}, {3, 3}), dtype);  // exp(far) == 0
    EXPECT_TENSOR_EQ(softmax(rows, 1), want_soft);
    EXPECT_TENSOR_EQ(softmax(transpose(rows, 0, 1), 0), transpose(want_soft, 0, 1));
    EXPECT_TENSOR_EQ(softmax(contiguous(transpose(rows, 0, 1)), 0),
                     contiguous(transpose(want_soft, 0, 1)));
    const double l2 = std::log(2.0);
    const Tensor want_log =
        to(F64({-l2, -kInf, -l2, -kInf, far - 1, 0, -l2, -l2, -2000 - l2}, {3, 3}), dtype);
    const double tol = dtype == kFloat32 ? 1e-5 : 1e-12;
    EXPECT_TRUE(Near(log_softmax(rows, 1), want_log, 0, tol));
    EXPECT_TRUE(Near(log_softmax(contiguous(transpose(rows, 0, 1)), 0),
                     contiguous(transpose(want_log, 0, 1)), 0, tol));
    // A slice of all -inf is nan (-inf - -inf), in both layouts.
    const Tensor dead = to(F64({-kInf, -kInf, 0, 1}, {2, 2}), dtype);
    EXPECT_TRUE(Near(
        softmax(dead, 1),
        to(F64({kNaN, kNaN, 1 / (1 + std::exp(1.0)), 1 / (1 + std::exp(-1.0))}, {2, 2}), dtype), 0,
        tol));
    EXPECT_TRUE(std::isnan(softmax(contiguous(transpose(dead, 0, 1)), 0).to_vector<double>()[0]));
    EXPECT_TRUE(std::isnan(log_softmax(dead, 1).to_vector<double>()[1]));
  }
}

// Regression: Eigen's vectorized exp clamps its argument (at -88.72 for float32, -709.78 for
// float64), so softmax returned ~2.9e-39 / ~5.6e-309 for every probability whose true value
// is a smaller subnormal (e.g. 5.5e-42 for a float32 logit 95 below the max), and only those
// below the underflow point were fixed up to 0.
TEST(ReductionSoftmaxTest, SubnormalProbabilitiesMatchStdExp) {
  struct Case {
    DType dtype;
    std::vector<double> gaps;  // logit - max
    double subnormal_ulp;
  };
  const std::vector<Case> cases = {{kFloat32,
                                    {-87, -88.5, -90, -95, -100, -103, -104.5, -110, -kInf},
                                    static_cast<double>(std::numeric_limits<float>::denorm_min())},
                                   {kFloat64,
                                    {-700, -709, -710, -720, -740, -745, -745.5, -800, -kInf},
                                    std::numeric_limits<double>::denorm_min()}};
  for (const Case& c : cases) {
    for (double gap : c.gaps) {
      SCOPED_TRACE(std::string(DTypeName(c.dtype)) + " gap " + std::to_string(gap));
      // A slice of 16: the max (0) and 15 copies of the gap, long enough for vector code.
      Vec row(16, gap);
      row[0] = 0.0;
      const double p = std::exp(gap) / (1.0 + 15.0 * std::exp(gap));
      Vec want(16, p);
      want[0] = 1.0 / (1.0 + 15.0 * std::exp(gap));
      const Tensor expected = to(F64(want), c.dtype);
      const double atol = 2 * c.subnormal_ulp, rtol = c.dtype == kFloat32 ? 1e-6 : 1e-14;
      EXPECT_TRUE(Near(softmax(to(F64(row), c.dtype), 0), expected, atol, rtol));
      // Down a column (inner > 1), next to a column of equal logits.
      Vec cols;
      for (double e : row) {
        cols.push_back(e);
        cols.push_back(0.0);
      }
      const Tensor out = softmax(to(F64(cols, {16, 2}), c.dtype), 0);
      EXPECT_TRUE(Near(select(out, 1, 0), expected, atol, rtol));
      EXPECT_TRUE(Near(select(out, 1, 1), to(full({16}, 1.0 / 16), c.dtype), 0, rtol));
    }
  }
}

TEST(ReductionSoftmaxTest, RankZeroSizeOneAndSizeZero) {
  for (DType dtype : {kFloat32, kFloat64}) {
    EXPECT_TENSOR_EQ(softmax(scalar_tensor(-3.0, dtype), 0), to(F64({1.0}, {}), dtype));
    EXPECT_TENSOR_EQ(log_softmax(scalar_tensor(-3.0, dtype), -1), to(F64({0.0}, {}), dtype));
    EXPECT_TENSOR_EQ(softmax(to(F64({2, -7}, {2, 1}), dtype), 1), to(F64({1, 1}, {2, 1}), dtype));
    EXPECT_TENSOR_EQ(log_softmax(to(F64({2, -7}, {1, 2}), dtype), 0),
                     to(F64({0, 0}, {1, 2}), dtype));
    EXPECT_EQ(softmax(zeros({0, 3}, dtype), 1).sizes(), IntArrayRef({0, 3}));
    EXPECT_EQ(log_softmax(zeros({2, 0}, dtype), 1).sizes(), IntArrayRef({2, 0}));
  }
  EXPECT_FT_ERROR(softmax(zeros({2, 3}), 2),
                  "softmax: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(log_softmax(zeros({2, 3}), -3),
                  "log_softmax: dim -3 is out of range for a tensor of rank 2");
}

// ---- Scans ----

Vec CumSumOf(const Vec& v) {
  Vec y;
  double s = 0;
  for (size_t i = 0; i < v.size(); ++i) y.push_back(s = (i == 0 ? v[0] : s + v[i]));
  return y;
}
Vec CumProdOf(const Vec& v) {
  Vec y;
  double p = 1;
  for (double e : v) y.push_back(p *= e);
  return y;
}
Vec LogCumSumExpOf(const Vec& v) {  // log of the running sum of exp, moderate inputs
  Vec y;
  double s = 0;
  for (double e : v) y.push_back(std::log(s += std::exp(e)));
  return y;
}

struct ScanCase {
  std::string name;
  std::function<Tensor(const Tensor&, int64_t)> run;
  SliceFn ref;
};

std::vector<ScanCase> FloatingScans() {
  return {{"cumsum", [](const Tensor& x, int64_t d) { return cumsum(x, d); }, CumSumOf},
          {"cumprod", [](const Tensor& x, int64_t d) { return cumprod(x, d); }, CumProdOf},
          {"logcumsumexp", [](const Tensor& x, int64_t d) { return logcumsumexp(x, d); },
           LogCumSumExpOf}};
}

TEST(ReductionScanTest, MatchesDoubleLoopAlongEveryDimAndLayout) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor cube = WithZeros({3, 4, 5}, dtype, 51);
    const std::vector<Tensor> inputs = {cube,
                                        ReversedLayout(cube),
                                        permute(cube, {1, 2, 0}),
                                        StepSliced(cube),
                                        expand(Uniform({3, 1, 5}, dtype, 52), {3, 4, 5}),
                                        zeros({0, 4, 5}, dtype),
                                        Uniform({3, 1, 5}, dtype, 53)};
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (int64_t dim : {0, 1, 2, -1, -3}) {
        for (const ScanCase& c : FloatingScans()) {
          SCOPED_TRACE(c.name + " " + DTypeName(dtype) + " input " + std::to_string(i) + " dim " +
                       std::to_string(dim));
          EXPECT_TRUE(Near(c.run(inputs[i], dim), ScanRef(inputs[i], dim, c.ref, dtype),
                           Atol(dtype), Rtol(dtype)));
        }
      }
    }
    for (const ScanCase& c : FloatingScans()) {
      SCOPED_TRACE(c.name);
      EXPECT_TRUE(Near(c.run(scalar_tensor(0.75, dtype), 0), to(F64({c.ref({0.75})[0]}, {}), dtype),
                       Atol(dtype), Rtol(dtype)));
      EXPECT_TRUE(Near(c.run(scalar_tensor(0.75, dtype), -1),
                       to(F64({c.ref({0.75})[0]}, {}), dtype), Atol(dtype), Rtol(dtype)));
      const std::string op = c.name;
      EXPECT_FT_ERROR(c.run(zeros({2, 3}, dtype), 2),
                      op + ": dim 2 is out of range for a tensor of rank 2");
      EXPECT_FT_ERROR(c.run(scalar_tensor(1.0, dtype), 1),
                      op + ": dim 1 is out of range for a tensor of rank 0");
    }
  }
}

TEST(ReductionScanTest, IntegerScansAreExactInt64AndWrap) {
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_TENSOR_EQ(cumsum(I64({big, 1, kI64Max, 2}), 0),
                   I64({big, big + 1, WrapAdd(big + 1, kI64Max), WrapAdd(big + 3, kI64Max)}));
  EXPECT_TENSOR_EQ(cumsum(I64({1, 2, 3, 4, 5, 6}, {2, 3}), 0), I64({1, 2, 3, 5, 7, 9}, {2, 3}));
  EXPECT_TENSOR_EQ(cumsum(transpose(I64({1, 2, 3, 4, 5, 6}, {2, 3}), 0, 1), 1),
                   I64({1, 5, 2, 7, 3, 9}, {3, 2}));
  const int64_t two32 = int64_t{1} << 32;
  EXPECT_TENSOR_EQ(cumprod(I64({two32, two32, 5}), 0), I64({two32, 0, 0}));
  EXPECT_TENSOR_EQ(cumprod(I64({-big, 3, -1}), 0), I64({-big, -3 * big, 3 * big}));
  EXPECT_TENSOR_EQ(cumprod(I64({2, 3, 4, 5}, {2, 2}), 0), I64({2, 3, 8, 15}, {2, 2}));
  // bool counts in int64.
  EXPECT_TENSOR_EQ(cumsum(Bools({true, false, true, true}), 0), I64({1, 1, 2, 3}));
  EXPECT_TENSOR_EQ(cumprod(Bools({true, true, false, true}), 0), I64({1, 1, 0, 0}));
  EXPECT_TENSOR_EQ(cumsum(tensor(std::vector<bool>{true}, {}), 0),
                   tensor(std::vector<int64_t>{1}, {}));
  EXPECT_EQ(cumsum(zeros({0}, kBool), 0).dtype(), kInt64);
  EXPECT_FT_ERROR(cumsum(I64({1}), 1), "cumsum: dim 1 is out of range for a tensor of rank 1");
  EXPECT_FT_ERROR(cumprod(I64({1}), -2), "cumprod: dim -2 is out of range for a tensor of rank 1");
}

TEST(ReductionScanTest, SpecialValues) {
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const auto t = [&](const Vec& v) { return to(F64(v), dtype); };
    // cumsum keeps a leading -0 (it starts from x[0], not from 0 + x[0]).
    const Tensor neg_zero = cumsum(t({-0.0, -0.0}), 0);
    EXPECT_TRUE(std::signbit(neg_zero.to_vector<double>()[0]));
    EXPECT_TRUE(std::signbit(neg_zero.to_vector<double>()[1]));
    EXPECT_TENSOR_EQ(cumsum(t({1, kNaN, 2}), 0), t({1, kNaN, kNaN}));
    EXPECT_TENSOR_EQ(cumsum(t({kInf, 1, -kInf}), 0), t({kInf, kInf, kNaN}));
    EXPECT_TENSOR_EQ(cumprod(t({2, 0, kInf}), 0), t({2, 0, kNaN}));
    EXPECT_TENSOR_EQ(cumprod(t({-1, kNaN, 0}), 0), t({-1, kNaN, kNaN}));
    // logcumsumexp: an empty sum so far is -inf, +inf absorbs, NaN propagates, and huge
    // values do not overflow.
    EXPECT_TENSOR_EQ(logcumsumexp(t({-kInf, -kInf, 0, -kInf}), 0), t({-kInf, -kInf, 0, 0}));
    EXPECT_TENSOR_EQ(logcumsumexp(t({1, kInf, 2}), 0), t({1, kInf, kInf}));
    EXPECT_TENSOR_EQ(logcumsumexp(t({1, kNaN, 2}), 0), t({1, kNaN, kNaN}));
    EXPECT_TENSOR_EQ(logcumsumexp(t({-kInf, kInf}), 0), t({-kInf, kInf}));
    const double tol = dtype == kFloat32 ? 1e-4 : 1e-12;
    EXPECT_TRUE(Near(logcumsumexp(t({1000, 1000, 1000}), 0),
                     t({1000, 1000 + std::log(2.0), 1000 + std::log(3.0)}), 0, tol));
    EXPECT_TRUE(
        Near(logcumsumexp(t({-1000, -1000}), 0), t({-1000, -1000 + std::log(2.0)}), 0, tol));
    // Down a column (inner > 1).
    EXPECT_TENSOR_EQ(logcumsumexp(to(F64({-kInf, 1, 0, kNaN}, {2, 2}), dtype), 0),
                     to(F64({-kInf, 1, 0, kNaN}, {2, 2}), dtype));
  }
}

// ---- linear_recurrence ----

// RecurrenceRef: s[0] = b[0], s[i] = a[i] * s[i - 1] + b[i] along `dim` of `shape` (a and b
// broadcast to it by expand, the numpy rule).
Tensor RecurrenceRef(const Tensor& a, const Tensor& b, IntArrayRef shape, int64_t dim,
                     DType dtype) {
  const Tensor ea = contiguous(to(expand(a, shape), kFloat64));
  const Tensor eb = contiguous(to(expand(b, shape), kFloat64));
  const Vec va = Values<double>(ea), vb = Values<double>(eb);
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (dim < 0) dim += std::max<int64_t>(rank, 1);
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < dim) outer *= shape[d];
    if (d == dim) n = shape[d];
    if (d > dim) inner *= shape[d];
  }
  Vec s(vb.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t at = (o * n + i) * inner + k;
        s[at] = i == 0 ? vb[at] : va[at] * s[at - inner] + vb[at];
      }
    }
  }
  return to(tensor(s, shape), dtype);
}

TEST(ReductionLinearRecurrenceTest, MatchesDoubleLoopWithBroadcastingAndLayouts) {
  // The header's example.
  EXPECT_TENSOR_EQ(linear_recurrence(F64({0.0, 0.5, 0.5}), F64({1.0, 1.0, 1.0}), 0),
                   F64({1.0, 1.5, 1.75}));
  for (DType dtype : {kFloat32, kFloat64}) {
    struct Case {
      Tensor a, b;
      Shape shape;
    };
    const std::vector<Case> cases = {
        {Uniform({4, 3}, dtype, 61), Uniform({4, 3}, dtype, 62), {4, 3}},
        {Uniform({4, 1}, dtype, 63), Uniform({4, 3}, dtype, 64), {4, 3}},
        {Uniform({3}, dtype, 65), Uniform({4, 3}, dtype, 66), {4, 3}},
        {Uniform({4, 3}, dtype, 67), Uniform({3}, dtype, 68), {4, 3}},
        {scalar_tensor(0.5, dtype), Uniform({2, 5}, dtype, 69), {2, 5}},
        {TransposedCopy(Uniform({4, 3}, dtype, 70)),
         StepSliced(Uniform({4, 3}, dtype, 71)),
         {4, 3}},
        {ReversedLayout(Uniform({2, 3, 4}, dtype, 72)), Uniform({2, 1, 4}, dtype, 73), {2, 3, 4}},
        {Uniform({0, 3}, dtype, 74), Uniform({3}, dtype, 75), {0, 3}},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      const int64_t rank = static_cast<int64_t>(c.shape.size());
      for (int64_t dim = -rank; dim < rank; ++dim) {
        SCOPED_TRACE(std::string(DTypeName(dtype)) + " case " + std::to_string(i) + " dim " +
                     std::to_string(dim));
        EXPECT_TRUE(Near(linear_recurrence(c.a, c.b, dim),
                         RecurrenceRef(c.a, c.b, c.shape, dim, dtype), Atol(dtype), Rtol(dtype)));
      }
    }
    // a = 1 is cumsum of b; a = 0 is b itself; a[0] is never read (NaN there is harmless).
    const Tensor b = to(F64({1, 2, 3, 4}), dtype);
    EXPECT_TENSOR_EQ(linear_recurrence(to(F64({kNaN, 1, 1, 1}), dtype), b, 0),
                     to(F64({1, 3, 6, 10}), dtype));
    EXPECT_TENSOR_EQ(linear_recurrence(to(F64({kNaN, 0, 0, 0}), dtype), b, 0), b);
    // Rank 0: s = b.
    EXPECT_TENSOR_EQ(linear_recurrence(scalar_tensor(3.0, dtype), scalar_tensor(-2.0, dtype), 0),
                     to(F64({-2.0}, {}), dtype));
  }
}

TEST(ReductionLinearRecurrenceTest, PromotesAndRejectsBadInputs) {
  // float32 with float64 -> float64; int64 with float32 -> float32.
  const Tensor mixed = linear_recurrence(F32({0.5f, 0.5f}), F64({1.0, 1.0}), 0);
  EXPECT_TENSOR_EQ(mixed, F64({1.0, 1.5}));
  EXPECT_TENSOR_EQ(linear_recurrence(I64({0, 2, 2}), F32({1.0f, 1.0f, 1.0f}), 0),
                   F32({1.0f, 3.0f, 7.0f}));
  EXPECT_TENSOR_EQ(linear_recurrence(F64({0, 2}), Bools({true, true}), 0), F64({1.0, 3.0}));
  EXPECT_FT_ERROR(linear_recurrence(I64({1, 2, 3}), I64({1, 2, 3}), 0),
                  "linear_recurrence: expected floating point tensors, got int64 a of shape [3] "
                  "and int64 b of shape [3]");
  EXPECT_FT_ERROR(linear_recurrence(Bools({true}), I64({1}), 0),
                  "linear_recurrence: expected floating point tensors");
  EXPECT_FT_ERROR(linear_recurrence(zeros({2}), zeros({3}), 0),
                  "linear_recurrence: shapes [2] and [3] cannot be broadcast together");
  EXPECT_FT_ERROR(linear_recurrence(zeros({3}), zeros({2, 3}), 2),
                  "linear_recurrence: dim 2 is out of range for a tensor of rank 2");
}

// ---- sum_to_size ----

// SumToSizeRef adds every element of x into the element of `size` it broadcasts from.
Tensor SumToSizeRef(const Tensor& x, IntArrayRef size, DType dtype) {
  const Vec v = Values<double>(x);
  const std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
  const int64_t rank = x.dim();
  const int64_t lead = rank - static_cast<int64_t>(size.size());
  Vec r(static_cast<size_t>(NumelOf(size)), 0.0);
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t o = 0;
    for (size_t j = 0; j < size.size(); ++j) o = o * size[j] + (size[j] == 1 ? 0 : index[lead + j]);
    r[o] += v[i];
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return to(tensor(r, size), dtype);
}

TEST(ReductionSumToSizeTest, SumsTheBroadcastDimsAway) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor x = Uniform({2, 3, 4}, dtype, 81);
    for (const Shape& size : {Shape{3, 1}, Shape{1, 1}, Shape{4}, Shape{}, Shape{1, 3, 1},
                              Shape{2, 1, 4}, Shape{1, 1, 1}, Shape{3, 4}, Shape{1, 4}}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " to " + ShapeToString(size));
      const Tensor out = sum_to_size(x, size);
      EXPECT_TRUE(out.is_contiguous());
      EXPECT_TRUE(Near(out, SumToSizeRef(x, size, dtype), Atol(dtype), Rtol(dtype)));
      EXPECT_TRUE(Near(sum_to_size(ReversedLayout(x), size), SumToSizeRef(x, size, dtype),
                       Atol(dtype), Rtol(dtype)));
    }
    // Already the size: a fresh copy, never an alias of x.
    const Tensor same = sum_to_size(x, {2, 3, 4});
    EXPECT_TENSOR_EQ(same, x);
    EXPECT_FALSE(same.storage().is_same(x.storage()));
  }
  // int64 stays exact; bool counts in int64, even when nothing is summed.
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_TENSOR_EQ(sum_to_size(I64({big, 1, kI64Max, 1}, {2, 2}), {1, 2}),
                   I64({WrapAdd(big, kI64Max), 2}, {1, 2}));
  EXPECT_TENSOR_EQ(sum_to_size(Bools({true, true, false, true}, {2, 2}), {2}), I64({1, 2}));
  EXPECT_TENSOR_EQ(sum_to_size(Bools({true, false}), {2}), I64({1, 0}));
  // Size-0 dims.
  EXPECT_TENSOR_EQ(sum_to_size(zeros({0, 3}), {1, 3}), zeros({1, 3}));
  EXPECT_EQ(sum_to_size(zeros({2, 0}), {0}).sizes(), IntArrayRef({0}));
  EXPECT_TENSOR_EQ(sum_to_size(zeros({0}), {1}), zeros({1}));
  // Rank 0.
  EXPECT_TENSOR_EQ(sum_to_size(scalar_tensor(2.5), {}), F32({2.5f}, {}));
}

TEST(ReductionSumToSizeTest, RejectsSizesXDoesNotBroadcastFrom) {
  EXPECT_FT_ERROR(sum_to_size(zeros({4}), {2, 3}),
                  "sum_to_size: size [2, 3] is not expandable to size [4]");
  EXPECT_FT_ERROR(sum_to_size(zeros({3}), {1, 3}),
                  "sum_to_size: size [1, 3] is not expandable to size [3]");
  EXPECT_FT_ERROR(sum_to_size(zeros({2, 3}), {2}),
                  "sum_to_size: size [2] is not expandable to size [2, 3]");
  EXPECT_FT_ERROR(sum_to_size(zeros({2, 3}), {0, 3}),
                  "sum_to_size: size [0, 3] is not expandable to size [2, 3]");
  EXPECT_FT_ERROR(sum_to_size(scalar_tensor(1.0), {1}),
                  "sum_to_size: size [1] is not expandable to size []");
}

// ---- Large inputs: the intra-op threaded paths ----

TEST(ReductionLargeInputTest, ReductionsOnThreadsMatchDoubleLoop) {
  ScopedThreads threads(3);
  const std::vector<ReductionCase>& reductions = Reductions();
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const double rtol = dtype == kFloat32 ? 1e-4 : 1e-10;
    // Positive values, so that |sum| is close to sum |x| and a relative tolerance is fair.
    const Tensor x = Uniform({kLarge}, dtype, 91, 0.5, 1.5);
    // One long row (sum splits it into per-thread partials).
    const Grouped all = GroupFor(x, {}, false);
    for (const ReductionCase& c : reductions) {
      if (c.name != "sum" && c.name != "mean" && c.name != "amax" && c.name != "amin" &&
          c.name != "logsumexp" && c.name != "var c=1" && c.name != "norm p=2.000000" &&
          c.name != "norm p=inf") {
        continue;  // (prod below, on values near 1)
      }
      SCOPED_TRACE(c.name);
      EXPECT_TRUE(FastNear(c.run(x, {}, false), Apply(all, c.ref, dtype), 0, rtol));
    }
    // Down the columns of one output row ([2, 70000] over dim 0: the columns split), along
    // many short rows ([70000, 2] over dim 1: the rows split), and a few long rows.
    const Tensor wide = reshape(x, {2, kLarge / 2});
    const Tensor tall = reshape(x, {kLarge / 2, 2});
    const Tensor blocks = reshape(x, {7, kLarge / 7});
    const Grouped wide_g = GroupFor(wide, {0}, false);
    const Grouped tall_g = GroupFor(tall, {1}, false);
    const Grouped blocks_g = GroupFor(blocks, {1}, true);
    for (const ReductionCase& c : reductions) {
      if (c.name != "sum" && c.name != "mean" && c.name != "prod" && c.name != "amax" &&
          c.name != "amin" && c.name != "norm p=2.000000") {
        continue;
      }
      SCOPED_TRACE(c.name);
      EXPECT_TRUE(FastNear(c.run(wide, {0}, false), Apply(wide_g, c.ref, dtype), 0, rtol));
      EXPECT_TRUE(FastNear(c.run(tall, {1}, false), Apply(tall_g, c.ref, dtype), 0, rtol));
      if (c.name != "prod") {
        EXPECT_TRUE(FastNear(c.run(blocks, {1}, true), Apply(blocks_g, c.ref, dtype), 0, rtol));
      }
    }
    // The product of one long row of values near 1. float32 accumulates in float32 (as
    // PyTorch's CPU prod does), whose rounding drifts by up to ~n * eps over n factors.
    const Tensor near_one = Uniform({kLarge}, dtype, 92, 1.0 - 1e-5, 1.0 + 1e-5);
    EXPECT_TRUE(FastNear(prod(near_one, {}, false), ReduceRef(near_one, {}, false, ProdOf, dtype),
                         0, dtype == kFloat32 ? 5e-3 : 1e-10));
    // A NaN in the second thread's chunk, and one in the last element.
    Vec with_nan = Values<double>(x);
    with_nan[kLarge / 2 + 3] = kNaN;
    const Tensor y = to(F64(with_nan), dtype);
    EXPECT_TRUE(std::isnan(amax(y, {}, false).item<double>()));
    EXPECT_TRUE(std::isnan(amin(y, {}, false).item<double>()));
    EXPECT_TRUE(std::isnan(sum(y, {}, false).item<double>()));
    EXPECT_EQ(argmax(y, std::nullopt, false).item<int64_t>(), kLarge / 2 + 3);
    with_nan[kLarge / 2 + 3] = 1.0;
    with_nan[kLarge - 1] = kNaN;
    const Tensor z = reshape(to(F64(with_nan), dtype), {2, kLarge / 2});
    EXPECT_TRUE(FastNear(amax(z, {0}, false), ReduceRef(z, {0}, false, MaxOf, dtype)));
    EXPECT_TRUE(FastNear(amin(z, {1}, false), ReduceRef(z, {1}, false, MinOf, dtype)));
    // argmax / argmin of a planted extreme.
    Vec planted = Values<double>(x);
    planted[kLarge - 17] = 9.0;
    planted[kLarge / 3] = -9.0;
    const Tensor p = to(F64(planted), dtype);
    EXPECT_EQ(argmax(p, 0, false).item<int64_t>(), kLarge - 17);
    EXPECT_EQ(argmin(p, std::nullopt, false).item<int64_t>(), kLarge / 3);
  }
  // int64 sums stay exact on the threads.
  const Tensor ints = SmallInts({kLarge}, kInt64, 93, -1000000, 1000000);
  const std::vector<int64_t> iv = Values<int64_t>(ints);
  int64_t total = 0;
  for (int64_t e : iv) total += e;
  EXPECT_EQ(sum(ints, {}, false).item<int64_t>(), total);
  const std::vector<int64_t> col_sums =
      Values<int64_t>(sum(reshape(ints, {2, kLarge / 2}), {0}, false));
  for (int64_t j = 0; j < kLarge / 2; j += 997) {
    EXPECT_EQ(col_sums[j], iv[j] + iv[kLarge / 2 + j]) << j;
  }
}

// ---- The dtypes of issue 43 (NOTE: [Reductions over the new dtypes] in reduction.cc) ----
// Oracles: GroupFor's groups (values read exactly as doubles) summed in long double and
// rounded once for float16 / bfloat16; complex values read as std::complex<double> and
// reduced in complex<double> loops; integers added and multiplied exactly in unsigned 64-bit
// arithmetic (int64's wraparound).

const DType kNewInts[] = {kInt8, kInt16, kInt32, kUInt8};
const DType kHalves[] = {kFloat16, kBFloat16};
const DType kComplexes[] = {kComplex64, kComplex128};
const std::vector<std::vector<int64_t>> kDimLists = {{}, {0}, {1}, {-1}, {0, 2}, {1, 2}, {0, 1, 2}};

// RoundTo: v rounded once to a 16-bit floating dtype (exactly through float: every value
// the oracles round is a float's value or off it by less than float32 can see).
double RoundTo(double v, DType dtype) {
  const float f = static_cast<float>(v);
  return dtype == kFloat16 ? static_cast<float>(Half(f)) : static_cast<float>(BFloat16(f));
}

// Ulps: |a - b| over the spacing of the 16-bit dtype at b.
double Ulps(double a, double b, DType dtype) {
  if (a == b || (std::isnan(a) && std::isnan(b))) return 0;
  const int mantissa = dtype == kFloat16 ? 10 : 7;
  const double tiny = dtype == kFloat16 ? 0x1p-14 : 0x1p-126;
  return std::fabs(a - b) / std::ldexp(1.0, std::ilogb(std::max(std::fabs(b), tiny)) - mantissa);
}

std::vector<std::complex<double>> ComplexValues(const Tensor& t) {
  return to(t, kComplex128).to_vector<std::complex<double>>();
}

// ComplexOf: the complex128 tensor re + i im (float64 tensors of one shape).
Tensor ComplexOf(const Tensor& re, const Tensor& im) {
  const Vec r = re.to_vector<double>(), i = im.to_vector<double>();
  std::vector<std::complex<double>> v;
  for (size_t k = 0; k < r.size(); ++k) v.emplace_back(r[k], i[k]);
  return tensor(v, re.sizes());
}

// ComplexGroups: GroupFor's grouping of a complex tensor's values.
std::vector<std::vector<std::complex<double>>> ComplexGroups(const Tensor& x,
                                                             const std::vector<int64_t>& dims) {
  const std::vector<std::complex<double>> v = ComplexValues(x);
  Vec re_v, im_v;
  for (const auto& c : v) {
    re_v.push_back(c.real());
    im_v.push_back(c.imag());
  }
  const Grouped re = GroupFor(F64(re_v, x.sizes()), dims, false);
  const Grouped im = GroupFor(F64(im_v, x.sizes()), dims, false);
  std::vector<std::vector<std::complex<double>>> out(re.groups.size());
  for (size_t g = 0; g < out.size(); ++g) {
    for (size_t i = 0; i < re.groups[g].size(); ++i) {
      out[g].emplace_back(re.groups[g][i], im.groups[g][i]);
    }
  }
  return out;
}

TEST(ReductionNewDTypes, HalfSumsAndMeansRoundOnce) {
  for (DType dtype : kHalves) {
    for (bool keepdim : {false, true}) {
      for (const auto& dims : kDimLists) {
        const Tensor c = Uniform({3, 4, 5}, dtype, 7, -4, 4);
        for (const Tensor& x : {c, TransposedCopy(c), StepSliced(c)}) {
          SCOPED_TRACE(::testing::Message()
                       << DTypeName(dtype) << " dims " << dims.size() << " keepdim " << keepdim);
          const Grouped g = GroupFor(to(x, kFloat64), dims, keepdim);
          const Tensor s = sum(x, dims, keepdim);
          const Tensor m = mean(x, dims, keepdim);
          ASSERT_EQ(s.dtype(), dtype);
          ASSERT_EQ(m.dtype(), dtype);
          ASSERT_EQ(s.sizes(), IntArrayRef(g.shape));
          const Vec sv = to(s, kFloat64).to_vector<double>();
          const Vec mv = to(m, kFloat64).to_vector<double>();
          for (size_t o = 0; o < g.groups.size(); ++o) {
            long double exact = 0;
            for (double v : g.groups[o]) exact += v;
            const double n = static_cast<double>(g.groups[o].size());
            EXPECT_LE(Ulps(sv[o], RoundTo(static_cast<double>(exact), dtype), dtype), 1) << o;
            EXPECT_LE(Ulps(mv[o], RoundTo(static_cast<double>(exact) / n, dtype), dtype), 1) << o;
          }
        }
      }
    }
  }
}

// A long float16 sum accumulates in float32 with float32's blocked sum (on the intra-op
// threads here): kLarge copies of 0.1 sum to the correctly rounded value, where a float32
// running sum would be off by far more than float16's spacing, and a float16 one would stop.
TEST(ReductionNewDTypes, LongHalfSumsAreAccurate) {
  ScopedThreads threads(4);
  for (DType dtype : kHalves) {
    const double tenth = RoundTo(0.1, dtype);
    const Tensor x = to(full({kLarge}, 0.1), dtype);
    const double want = RoundTo(tenth * kLarge, dtype);
    EXPECT_EQ(to(sum(x, {}, false), kFloat64).item<double>(), want) << DTypeName(dtype);
    EXPECT_EQ(to(mean(x, {}, false), kFloat64).item<double>(), RoundTo(tenth, dtype))
        << DTypeName(dtype);
    const Tensor rows = reshape(x, {4, kLarge / 4});
    for (double v : to(sum(rows, {1}, false), kFloat64).to_vector<double>()) {
      EXPECT_EQ(v, RoundTo(tenth * (kLarge / 4), dtype));
    }
    // Columns (a reduced dim with dims after it) accumulate down the rows in float32.
    const Tensor cols = reshape(x, {kLarge / 7, 7});
    for (double v : to(sum(cols, {0}, false), kFloat64).to_vector<double>()) {
      EXPECT_LE(Ulps(v, RoundTo(tenth * (kLarge / 7), dtype), dtype), 1);
    }
  }
}

TEST(ReductionNewDTypes, IntegersSumAndMultiplyInInt64) {
  for (DType dtype : kNewInts) {
    for (const auto& dims : kDimLists) {
      const int64_t lo = dtype == kUInt8 ? 0 : dtype == kInt8 ? -128 : -30000;
      const int64_t hi = dtype == kUInt8 ? 255 : dtype == kInt8 ? 127 : 30000;
      const Tensor c = SmallInts({3, 4, 5}, dtype, 11, lo, hi);
      for (const Tensor& x : {c, TransposedCopy(c)}) {
        SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " dims " << dims.size());
        const Grouped g = GroupFor(to(x, kFloat64), dims, false);
        const Tensor s = sum(x, dims, false);
        const Tensor p = prod(x, dims, false);
        ASSERT_EQ(s.dtype(), kInt64);
        ASSERT_EQ(p.dtype(), kInt64);
        const std::vector<int64_t> sv = s.to_vector<int64_t>();
        const std::vector<int64_t> pv = p.to_vector<int64_t>();
        for (size_t o = 0; o < g.groups.size(); ++o) {
          uint64_t want_s = 0, want_p = 1;  // wraps as int64 does
          for (double v : g.groups[o]) {
            want_s += static_cast<uint64_t>(static_cast<int64_t>(v));
            want_p *= static_cast<uint64_t>(static_cast<int64_t>(v));
          }
          EXPECT_EQ(sv[o], static_cast<int64_t>(want_s)) << o;
          EXPECT_EQ(pv[o], static_cast<int64_t>(want_p)) << o;  // wraps over 60 elements
        }
      }
    }
  }
  // bool sums count; an int32 sum does not wrap at int32's bounds.
  EXPECT_EQ(sum(to(I64({kI64Max, kI64Max}), kInt32), {}, false).item<int64_t>(), -2);  // -1 + -1
  const Tensor big = to(I64({2147483647, 2147483647}), kInt32);
  EXPECT_EQ(sum(big, {}, false).item<int64_t>(), 4294967294);
}

TEST(ReductionNewDTypes, ComplexSumMeanProd) {
  for (DType dtype : kComplexes) {
    const double tol = dtype == kComplex64 ? 2e-5 : 1e-13;
    for (const auto& dims : kDimLists) {
      const Tensor c = to(ComplexOf(Uniform({3, 4, 5}, kFloat64, 3, 0.7, 1.3),
                                    Uniform({3, 4, 5}, kFloat64, 4, -0.4, 0.4)),
                          dtype);
      for (const Tensor& x : {c, TransposedCopy(c), StepSliced(c)}) {
        SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " dims " << dims.size());
        const auto groups = ComplexGroups(x, dims);
        const Tensor s = sum(x, dims, true);
        ASSERT_EQ(s.dtype(), dtype);
        ASSERT_EQ(s.sizes(), IntArrayRef(GroupFor(to(x, kFloat64), dims, true).shape));
        const auto sv = ComplexValues(s);
        const auto mv = ComplexValues(mean(x, dims, false));
        const auto pv = ComplexValues(prod(x, dims, false));
        for (size_t o = 0; o < groups.size(); ++o) {
          std::complex<double> want_s = 0, want_p = 1;
          for (const auto& v : groups[o]) {
            want_s += v;
            want_p *= v;
          }
          const double n = static_cast<double>(groups[o].size());
          EXPECT_LE(std::abs(sv[o] - want_s), tol * n) << o;
          EXPECT_LE(std::abs(mv[o] - want_s / n), tol) << o;
          EXPECT_LE(std::abs(pv[o] - want_p), tol * n * std::abs(want_p)) << o;
        }
      }
    }
  }
}

TEST(ReductionNewDTypes, ExtremesAndIndices) {
  for (DType dtype : {kInt8, kInt16, kInt32, kUInt8, kFloat16, kBFloat16}) {
    const Tensor c = SmallInts({3, 4, 5}, dtype, 5, dtype == kUInt8 ? 0 : -3, 3);
    for (const Tensor& x : {c, TransposedCopy(c)}) {
      for (const auto& dims : kDimLists) {
        SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " dims " << dims.size());
        const Grouped g = GroupFor(to(x, kFloat64), dims, true);
        const Tensor hi = amax(x, dims, true);
        const Tensor lo = amin(x, dims, true);
        ASSERT_EQ(hi.dtype(), dtype);
        ASSERT_EQ(hi.sizes(), IntArrayRef(g.shape));
        const Vec hv = to(hi, kFloat64).to_vector<double>();
        const Vec lv = to(lo, kFloat64).to_vector<double>();
        for (size_t o = 0; o < g.groups.size(); ++o) {
          EXPECT_EQ(hv[o], *std::max_element(g.groups[o].begin(), g.groups[o].end()));
          EXPECT_EQ(lv[o], *std::min_element(g.groups[o].begin(), g.groups[o].end()));
        }
      }
      for (int64_t dim : {0, 1, -1}) {
        const Grouped g = GroupFor(to(x, kFloat64), {dim}, false);
        const std::vector<int64_t> imax = argmax(x, dim, false).to_vector<int64_t>();
        const std::vector<int64_t> imin = argmin(x, dim, false).to_vector<int64_t>();
        for (size_t o = 0; o < g.groups.size(); ++o) {
          const Vec& v = g.groups[o];
          EXPECT_EQ(imax[o], std::max_element(v.begin(), v.end()) - v.begin());  // the first
          EXPECT_EQ(imin[o], std::min_element(v.begin(), v.end()) - v.begin());
        }
      }
    }
  }
  // float16 / bfloat16 keep NaN (it propagates; argmax picks the first), infinities, -0.0.
  for (DType dtype : kHalves) {
    const Tensor x = to(F64({1.0, -kInf, -0.0, 65504.0, kNaN, 2.0}, {2, 3}), dtype);
    const Vec hi = to(amax(x, {1}, false), kFloat64).to_vector<double>();
    EXPECT_EQ(hi[0], 1.0);
    EXPECT_TRUE(std::isnan(hi[1]));
    EXPECT_EQ(to(amin(x, {1}, false), kFloat64).to_vector<double>()[0], -kInf);
    EXPECT_EQ(argmax(x, std::nullopt, false).item<int64_t>(), 4);
    EXPECT_TRUE(std::isnan(to(amin(x, {1}, false), kFloat64).to_vector<double>()[1]));
    EXPECT_EQ(argmin(x, 1, false).to_vector<int64_t>(), (std::vector<int64_t>{1, 1}));
  }
  const Tensor c = to(F64({1, 2}), kComplex64);
  EXPECT_FT_ERROR(amax(c, {}, false), "amax: not supported for complex64 tensors (shape [2])");
  EXPECT_FT_ERROR(argmax(c, std::nullopt, false), "argmax: not supported for complex64");
  EXPECT_FT_ERROR(amin(to(zeros({0, 2}), kInt8), {0}, false), "zero-size dimension");
}

TEST(ReductionNewDTypes, Scans) {
  for (DType dtype : {kInt8, kInt16, kInt32, kUInt8, kBool}) {
    const Tensor x = SmallInts({6, 5}, dtype, 9, dtype == kUInt8 || dtype == kBool ? 0 : -100,
                               dtype == kBool ? 1 : 100);
    for (int64_t dim : {0, 1}) {
      const Tensor s = cumsum(x, dim);
      const Tensor p = cumprod(x, dim);
      ASSERT_EQ(s.dtype(), kInt64);
      ASSERT_EQ(p.dtype(), kInt64);
      const std::vector<int64_t> v = to(x, kInt64).to_vector<int64_t>();
      const std::vector<int64_t> sv = s.to_vector<int64_t>(), pv = p.to_vector<int64_t>();
      for (int64_t i = 0; i < 6; ++i) {
        for (int64_t j = 0; j < 5; ++j) {
          uint64_t want_s = 0, want_p = 1;
          for (int64_t k = 0; k <= (dim == 0 ? i : j); ++k) {
            const int64_t e = dim == 0 ? v[k * 5 + j] : v[i * 5 + k];
            want_s += static_cast<uint64_t>(e);
            want_p *= static_cast<uint64_t>(e);
          }
          EXPECT_EQ(sv[i * 5 + j], static_cast<int64_t>(want_s));
          EXPECT_EQ(pv[i * 5 + j], static_cast<int64_t>(want_p));
        }
      }
    }
  }
  // float16 / bfloat16: a float32 running value rounded at each output.
  for (DType dtype : kHalves) {
    const Tensor x = Uniform({300}, dtype, 2, 0.5, 1.5);
    const Vec v = to(x, kFloat64).to_vector<double>();
    const Vec sv = to(cumsum(x, 0), kFloat64).to_vector<double>();
    const Vec pv = to(cumprod(x, 0), kFloat64).to_vector<double>();
    float acc_s = 0, acc_p = 1;
    for (size_t i = 0; i < v.size(); ++i) {
      acc_s = i == 0 ? static_cast<float>(v[0]) : acc_s + static_cast<float>(v[i]);
      acc_p = i == 0 ? static_cast<float>(v[0]) : acc_p * static_cast<float>(v[i]);
      EXPECT_EQ(sv[i], RoundTo(acc_s, dtype)) << i;
      EXPECT_EQ(pv[i], RoundTo(acc_p, dtype)) << i;
    }
    EXPECT_EQ(cumsum(x, 0).dtype(), dtype);
  }
  // complex: a complex128 running value, rounded per output to complex64.
  for (DType dtype : kComplexes) {
    const Tensor c = to(
        ComplexOf(Uniform({4, 7}, kFloat64, 3, 0.7, 1.3), Uniform({4, 7}, kFloat64, 4, -0.4, 0.4)),
        dtype);
    const Tensor x = TransposedCopy(c);
    const auto v = ComplexValues(x);
    const auto sv = ComplexValues(cumsum(x, 1));
    const auto pv = ComplexValues(cumprod(x, 1));
    EXPECT_EQ(cumsum(x, 1).dtype(), dtype);
    for (int64_t i = 0; i < 4; ++i) {
      std::complex<double> acc_s = 0, acc_p = 1;
      for (int64_t j = 0; j < 7; ++j) {
        acc_s += v[i * 7 + j];
        acc_p *= v[i * 7 + j];
        const std::complex<double> ws =
            dtype == kComplex64 ? std::complex<double>(std::complex<float>(acc_s)) : acc_s;
        const std::complex<double> wp =
            dtype == kComplex64 ? std::complex<double>(std::complex<float>(acc_p)) : acc_p;
        EXPECT_LE(std::abs(sv[i * 7 + j] - ws), 1e-15 * std::abs(ws)) << i << "," << j;
        EXPECT_LE(std::abs(pv[i * 7 + j] - wp), 1e-15 * std::abs(wp)) << i << "," << j;
      }
    }
  }
}

TEST(ReductionNewDTypes, EmptyAndRankZero) {
  EXPECT_EQ(sum(to(zeros({0, 3}), kInt32), {0}, false).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(prod(to(zeros({2, 0}), kUInt8), {1}, true).sizes(), IntArrayRef({2, 1}));
  EXPECT_EQ(prod(to(zeros({2, 0}), kUInt8), {1}, true).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(ComplexValues(prod(to(zeros({0, 2}), kComplex64), {0}, false)),
            (std::vector<std::complex<double>>{1, 1}));
  EXPECT_EQ(ComplexValues(sum(to(zeros({0, 2}), kComplex128), {}, false)),
            (std::vector<std::complex<double>>{0}));
  const auto m = ComplexValues(mean(to(zeros({0}), kComplex64), {}, false));
  EXPECT_TRUE(std::isnan(m[0].real()) && std::isnan(m[0].imag()));
  EXPECT_TRUE(
      std::isnan(to(mean(to(zeros({0, 4}), kFloat16), {}, false), kFloat64).item<double>()));
  EXPECT_EQ(sum(to(zeros({0}), kBFloat16), {}, false).dtype(), kBFloat16);
  EXPECT_EQ(cumsum(to(zeros({0, 2}), kComplex64), 0).sizes(), IntArrayRef({0, 2}));
  EXPECT_EQ(cumprod(to(zeros({3, 0}), kInt16), 1).dtype(), kInt64);
  EXPECT_EQ(cumsum(to(zeros({0}), kFloat16), 0).dtype(), kFloat16);
  // Rank 0: the single element (every dim list names it).
  const Tensor z = to(tensor(std::vector<std::complex<double>>{{1.5, -2}}, {}), kComplex64);
  EXPECT_EQ(ComplexValues(sum(z, {}, false)), (std::vector<std::complex<double>>{{1.5, -2}}));
  EXPECT_EQ(ComplexValues(sum(z, {0}, true)), (std::vector<std::complex<double>>{{1.5, -2}}));
  EXPECT_EQ(sum(z, {-1}, false).dim(), 0);
  EXPECT_EQ(ComplexValues(prod(z, {}, false)), (std::vector<std::complex<double>>{{1.5, -2}}));
  EXPECT_EQ(cumsum(to(I64({7}, {}), kInt8), 0).to_vector<int64_t>(), (std::vector<int64_t>{7}));
  EXPECT_EQ(to(mean(to(F64({3.0}, {}), kBFloat16), {}, false), kFloat64).item<double>(), 3.0);
  EXPECT_FT_ERROR(mean(to(I64({1}), kInt16), {}, false), "could not infer the output dtype");
}

}  // namespace
}  // namespace ft::kernels

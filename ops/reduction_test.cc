#include "ops/reduction.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interop/npy.h"
#include "ops/ops.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tensor/shape.h"
#include "tests/test_util.h"

namespace ft {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using Vec = std::vector<double>;
using RefFn = std::function<double(const Vec&)>;

// Values: deterministic, varied, no exact zeros, magnitudes in [-1.5, 1.8].
Vec Values(int64_t n, int seed = 0) {
  Vec v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(((i * 37 + seed * 11) % 23) / 7.0 - 1.5 + 0.01 * (i % 13));
  return v;
}

Tensor Make(const Vec& xs, IntArrayRef shape, DType dtype) {
  return kernels::to(tensor(xs, shape), dtype);
}

// ReversedLayout returns a non-contiguous view with c's values whose strides run backwards
// (the last dim is the slowest), i.e. a materialized transpose viewed transposed.
Tensor ReversedLayout(const Tensor& c) {
  Shape rshape(c.sizes().rbegin(), c.sizes().rend());
  Tensor y = EmptyContiguous(rshape, c.dtype());
  Shape rstrides = ContiguousStrides(rshape);
  Shape strides(rstrides.rbegin(), rstrides.rend());
  Tensor view =
      MakeDense(y.storage(), c.dtype(), Shape(c.sizes().begin(), c.sizes().end()), strides, 0);
  kernels::copy_into(view, c);
  return view;
}

// Layouts: the same values as contiguous, stride-2 and reversed-strides tensors.
std::vector<std::pair<std::string, Tensor>> Layouts(const Tensor& c) {
  std::vector<std::pair<std::string, Tensor>> out = {{"contiguous", c}};
  if (c.dim() >= 1 && c.numel() > 1) {
    out.push_back({"stride2", testing::NonContiguousCopy(c)});
    EXPECT_FALSE(out.back().second.is_contiguous());
  }
  if (c.dim() >= 2 && c.numel() > 1) {
    out.push_back({"reversed", ReversedLayout(c)});
    EXPECT_FALSE(out.back().second.is_contiguous());
  }
  return out;
}

std::vector<int64_t> MultiIndex(int64_t linear, IntArrayRef shape) {
  std::vector<int64_t> idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = linear % shape[d];
    linear /= shape[d];
  }
  return idx;
}

// RefReduce: groups the row-major values `xs` of `shape` by their kept indices and applies
// f to each group (in row-major order), hand-rolled independently of the kernels.
Tensor RefReduce(const Vec& xs, IntArrayRef shape, const std::vector<int64_t>& dims, bool keepdim,
                 const RefFn& f, DType dtype) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(rank, dims.empty());
  for (int64_t d : dims) {
    if (rank > 0) reduced[d < 0 ? d + rank : d] = true;
  }
  Shape out_shape;
  int64_t groups = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      out_shape.push_back(shape[d]);
      groups *= shape[d];
    } else if (keepdim) {
      out_shape.push_back(1);
    }
  }
  std::vector<Vec> g(groups);
  for (int64_t i = 0; i < static_cast<int64_t>(xs.size()); ++i) {
    const std::vector<int64_t> idx = MultiIndex(i, shape);
    int64_t key = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduced[d]) key = key * shape[d] + idx[d];
    }
    g[key].push_back(xs[i]);
  }
  Vec out;
  for (const Vec& group : g) out.push_back(f(group));
  return Make(out, out_shape, dtype);
}

// RefAlongDim applies f (a vector -> same-length vector) to every 1-D slice along dim.
Tensor RefAlongDim(const Vec& xs, IntArrayRef shape, int64_t dim,
                   const std::function<Vec(const Vec&)>& f, DType dtype) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  Vec out(xs.size());
  if (rank == 0) {
    out = f(xs);
    return Make(out, shape, dtype);
  }
  dim = dim < 0 ? dim + rank : dim;
  for (int64_t i = 0; i < static_cast<int64_t>(xs.size()); ++i) {
    std::vector<int64_t> idx = MultiIndex(i, shape);
    if (idx[dim] != 0) continue;
    std::vector<int64_t> lin;
    Vec slice;
    for (int64_t k = 0; k < shape[dim]; ++k) {
      idx[dim] = k;
      int64_t l = 0;
      for (int64_t d = 0; d < rank; ++d) l = l * shape[d] + idx[d];
      lin.push_back(l);
      slice.push_back(xs[l]);
    }
    const Vec r = f(slice);
    for (size_t k = 0; k < lin.size(); ++k) out[lin[k]] = r[k];
  }
  return Make(out, shape, dtype);
}

double RefSum(const Vec& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
double RefMean(const Vec& v) { return RefSum(v) / static_cast<double>(v.size()); }
double RefProd(const Vec& v) {
  double p = 1;
  for (double x : v) p *= x;
  return p;
}
double RefMax(const Vec& v) { return *std::max_element(v.begin(), v.end()); }
double RefMin(const Vec& v) { return *std::min_element(v.begin(), v.end()); }
double RefLogSumExp(const Vec& v) {
  double s = 0;
  for (double x : v) s += std::exp(x);
  return std::log(s);
}
RefFn RefVar(int64_t correction, bool take_sqrt) {
  return [=](const Vec& v) {
    const double n = static_cast<double>(v.size());
    const double mu = RefMean(v);
    double ss = 0;
    for (double x : v) ss += (x - mu) * (x - mu);
    const double r = ss / std::max(0.0, n - static_cast<double>(correction));
    return take_sqrt ? std::sqrt(r) : r;
  };
}
RefFn RefNorm(double p) {
  return [=](const Vec& v) {
    if (p == kInf || p == -kInf) {
      double best = std::fabs(v[0]);
      for (double x : v) best = p > 0 ? std::max(best, std::fabs(x)) : std::min(best, std::fabs(x));
      return best;
    }
    double s = 0;
    for (double x : v) s += p == 0 ? (x != 0) : std::pow(std::fabs(x), p);
    return p == 0 ? s : std::pow(s, 1.0 / p);
  };
}

struct Shapes {
  Shape shape;
  std::vector<std::vector<int64_t>> dim_lists;
};

// Shapes and dim lists covering: all dims ({}), trailing (inner == 1), leading and middle
// (inner > 1), non-adjacent (permuted copy), size-1 dims between reduced ones, negative
// dims, size-0 and size-1 dims, rank 0, and runs long enough for Eigen's vectorized paths.
std::vector<Shapes> ShapeCases() {
  return {
      {{}, {{}, {0}, {-1}}},
      {{5}, {{}, {0}, {-1}}},
      {{2, 3, 4}, {{}, {0}, {1}, {2}, {-1}, {0, 2}, {-1, 0}, {1, 2}, {0, 1}, {2, 1, 0}}},
      {{3, 1, 4}, {{0, 2}, {1}, {0, 1}, {-2, -1}}},
      {{2, 3, 2, 5}, {{1, 3}, {0, 2}, {3, 0}, {1, 2}, {0, 1, 3}}},
      {{3, 37, 19}, {{1}, {2}, {0, 2}, {}}},
      {{1, 1}, {{}, {0}, {1}}},
  };
}

using ReduceFn = std::function<Tensor(const Tensor&, IntArrayRef, bool)>;

struct ReduceCase {
  std::string name;
  ReduceFn op;
  RefFn ref;
};

std::vector<ReduceCase> FloatReduceCases() {
  std::vector<ReduceCase> cases = {
      {"sum", [](const Tensor& x, IntArrayRef d, bool k) { return sum(x, d, k); }, RefSum},
      {"mean", [](const Tensor& x, IntArrayRef d, bool k) { return mean(x, d, k); }, RefMean},
      {"prod", [](const Tensor& x, IntArrayRef d, bool k) { return prod(x, d, k); }, RefProd},
      {"amax", [](const Tensor& x, IntArrayRef d, bool k) { return amax(x, d, k); }, RefMax},
      {"amin", [](const Tensor& x, IntArrayRef d, bool k) { return amin(x, d, k); }, RefMin},
      {"logsumexp", [](const Tensor& x, IntArrayRef d, bool k) { return logsumexp(x, d, k); },
       RefLogSumExp},
  };
  for (int64_t c : {0, 1, 2}) {
    cases.push_back({"var" + std::to_string(c),
                     [c](const Tensor& x, IntArrayRef d, bool k) { return var(x, d, c, k); },
                     RefVar(c, false)});
    cases.push_back({"std" + std::to_string(c),
                     [c](const Tensor& x, IntArrayRef d, bool k) { return std(x, d, c, k); },
                     RefVar(c, true)});
  }
  for (double p : {2.0, 1.0, 3.0, 0.5, kInf, -kInf, 0.0}) {
    cases.push_back({"norm" + std::to_string(p),
                     [p](const Tensor& x, IntArrayRef d, bool k) { return norm(x, p, d, k); },
                     RefNorm(p)});
  }
  return cases;
}

TEST(ReductionOps, FloatReductionsMatchLoops) {
  for (const ReduceCase& c : FloatReduceCases()) {
    for (const Shapes& s : ShapeCases()) {
      const Vec xs = Values(Numel(s.shape));
      for (DType dtype : {kFloat64, kFloat32}) {
        const double tol = dtype == kFloat32 ? 1e-4 : 1e-12;
        for (const auto& [layout, x] : Layouts(Make(xs, s.shape, dtype))) {
          for (const std::vector<int64_t>& dims : s.dim_lists) {
            int64_t count = dims.empty() ? Numel(s.shape) : 1;
            for (int64_t d : dims)
              count *= s.shape.empty() ? 1 : s.shape[d < 0 ? d + s.shape.size() : d];
            if (c.name == "prod" && count > 40) continue;  // keep products in float range
            for (bool keepdim : {false, true}) {
              SCOPED_TRACE(c.name + " " + ShapeToString(s.shape) + " dims " + ShapeToString(dims) +
                           " keepdim " + std::to_string(keepdim) + " " + DTypeName(dtype) + " " +
                           layout);
              Tensor expected = RefReduce(xs, s.shape, dims, keepdim, c.ref, dtype);
              Tensor actual = c.op(x, dims, keepdim);
              EXPECT_TRUE(actual.is_contiguous());
              EXPECT_TRUE(testing::TensorNear(actual, expected, tol, tol));
            }
          }
        }
      }
    }
  }
}

TEST(ReductionOps, ExpandedInput) {
  // A [4, 3] view of one row (stride 0 in dim 0).
  Tensor row = tensor({1.0, -2.0, 3.5});
  Tensor x = MakeDense(row.storage(), kFloat64, {4, 3}, {0, 1}, 0);
  EXPECT_TENSOR_NEAR(sum(x, {0}), tensor({4.0, -8.0, 14.0}), 1e-12);
  EXPECT_TENSOR_NEAR(sum(x, {1}), tensor({2.5, 2.5, 2.5, 2.5}), 1e-12);
  EXPECT_TENSOR_NEAR(amax(x), scalar_tensor(3.5, kFloat64), 0);
  EXPECT_TENSOR_NEAR(var(x, {0}), tensor({0.0, 0.0, 0.0}), 1e-12);
  EXPECT_TENSOR_NEAR(
      cumsum(x, 0),
      tensor({1.0, -2.0, 3.5, 2.0, -4.0, 7.0, 3.0, -6.0, 10.5, 4.0, -8.0, 14.0}, {4, 3}), 1e-12);
  EXPECT_TENSOR_EQ(argmin(x, 1), tensor(std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_TENSOR_NEAR(sum_to_size(x, {3}), tensor({4.0, -8.0, 14.0}), 1e-12);
}

TEST(ReductionOps, DefaultsAndConvenience) {
  Tensor x = tensor({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2});
  EXPECT_TENSOR_EQ(sum(x), scalar_tensor(10.0f));
  EXPECT_TENSOR_EQ(mean(x), scalar_tensor(2.5f));
  EXPECT_TENSOR_EQ(prod(x), scalar_tensor(24.0f));
  EXPECT_TENSOR_EQ(amax(x), scalar_tensor(4.0f));
  EXPECT_TENSOR_EQ(amin(x), scalar_tensor(1.0f));
  EXPECT_TENSOR_NEAR(var(x), scalar_tensor(5.0f / 3.0f), 1e-6);
  EXPECT_TENSOR_NEAR(std(x), scalar_tensor(std::sqrt(5.0f / 3.0f)), 1e-6);
  EXPECT_TENSOR_NEAR(norm(x), scalar_tensor(std::sqrt(30.0f)), 1e-6);
  EXPECT_TENSOR_EQ(argmax(x), scalar_tensor(int64_t{3}));
  EXPECT_TENSOR_EQ(argmin(x), scalar_tensor(int64_t{0}));
  EXPECT_TENSOR_EQ(mean(x, {-1}, true), tensor({1.5f, 3.5f}, {2, 1}));
  EXPECT_TENSOR_EQ(argmax(x, 0), tensor(std::vector<int64_t>{1, 1}));
  EXPECT_TENSOR_EQ(sum_to_size(x, {1, 2}), tensor({4.0f, 6.0f}, {1, 2}));
}

TEST(ReductionOps, SizeZeroReductionsGiveIdentities) {
  Tensor e = zeros({2, 0, 3});
  EXPECT_TENSOR_EQ(sum(e, {1}), zeros({2, 3}));
  EXPECT_TENSOR_EQ(sum(e), scalar_tensor(0.0f));
  EXPECT_TENSOR_EQ(prod(e, {1}), ones({2, 3}));
  EXPECT_TENSOR_EQ(mean(e, {1}), full({2, 3}, kNaN, kFloat32));
  EXPECT_TENSOR_EQ(logsumexp(e, {1}, true), full({2, 1, 3}, -kInf, kFloat32));
  EXPECT_TENSOR_EQ(var(e, {1}), full({2, 3}, kNaN, kFloat32));
  EXPECT_TENSOR_EQ(std(e), scalar_tensor(kNaN, kFloat32));
  EXPECT_TENSOR_EQ(norm(e, 2, {1}), zeros({2, 3}));
  EXPECT_TENSOR_EQ(norm(e, 0, {1}), zeros({2, 3}));
  EXPECT_TENSOR_EQ(norm(e, 1.5), scalar_tensor(0.0f));
  EXPECT_TENSOR_EQ(sum(zeros({0}, kInt64)), scalar_tensor(int64_t{0}));
  EXPECT_TENSOR_EQ(prod(zeros({0}, kBool)), scalar_tensor(int64_t{1}));
  // Reducing a non-empty dim of an empty tensor gives an empty result (no error even for
  // ops without an identity).
  EXPECT_EQ(amax(e, {2}).sizes(), (IntArrayRef{2, 0}));
  EXPECT_EQ(amin(e, {0, 2}, true).sizes(), (IntArrayRef{1, 0, 1}));
  EXPECT_EQ(argmax(e, 2).sizes(), (IntArrayRef{2, 0}));
  EXPECT_EQ(argmin(e, 0, true).sizes(), (IntArrayRef{1, 0, 3}));
  EXPECT_EQ(norm(e, kInf, {2}).sizes(), (IntArrayRef{2, 0}));
  EXPECT_EQ(sum(e, {0}).sizes(), (IntArrayRef{0, 3}));
  EXPECT_EQ(var(e, {2}).sizes(), (IntArrayRef{2, 0}));
  EXPECT_EQ(argmax(e, 2).dtype(), kInt64);
}

TEST(ReductionOps, RankZero) {
  Tensor s = scalar_tensor(-2.5, kFloat64);
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{-1}}) {
    for (bool keepdim : {false, true}) {
      EXPECT_TENSOR_EQ(sum(s, dims, keepdim), s);
      EXPECT_TENSOR_EQ(mean(s, dims, keepdim), s);
      EXPECT_TENSOR_EQ(prod(s, dims, keepdim), s);
      EXPECT_TENSOR_EQ(amax(s, dims, keepdim), s);
      EXPECT_TENSOR_EQ(amin(s, dims, keepdim), s);
      EXPECT_TENSOR_NEAR(logsumexp(s, dims, keepdim), s, 1e-15);
      EXPECT_TENSOR_EQ(var(s, dims, 0, keepdim), scalar_tensor(0.0, kFloat64));
      EXPECT_TENSOR_EQ(var(s, dims, 1, keepdim), scalar_tensor(kNaN, kFloat64));
      EXPECT_TENSOR_EQ(norm(s, 2, dims, keepdim), scalar_tensor(2.5, kFloat64));
    }
  }
  for (std::optional<int64_t> dim :
       {std::optional<int64_t>{}, std::optional<int64_t>{0}, std::optional<int64_t>{-1}}) {
    EXPECT_TENSOR_EQ(argmax(s, dim, true), scalar_tensor(int64_t{0}));
    EXPECT_TENSOR_EQ(argmin(s, dim), scalar_tensor(int64_t{0}));
  }
  EXPECT_TENSOR_EQ(softmax(s, 0), scalar_tensor(1.0, kFloat64));
  EXPECT_TENSOR_EQ(log_softmax(s, -1), scalar_tensor(0.0, kFloat64));
  EXPECT_TENSOR_EQ(cumsum(s, 0), s);
  EXPECT_TENSOR_EQ(sum_to_size(s, {}), s);
  EXPECT_FALSE(sum_to_size(s, {}).is_same(s));
  EXPECT_TENSOR_EQ(sum_to_size(tensor({1.0, 2.0}, {2, 1}), {}), scalar_tensor(3.0, kFloat64));
}

TEST(ReductionOps, IntegerAndBoolDtypes) {
  Tensor i = tensor(std::vector<int64_t>{3, -1, 4, 1, -5, 9}, {2, 3});
  Tensor b = tensor(std::vector<bool>{true, false, true, false, false, false}, {2, 3});
  for (const auto& [layout, x] : Layouts(i)) {
    SCOPED_TRACE(layout);
    EXPECT_TENSOR_EQ(sum(x), scalar_tensor(int64_t{11}));
    EXPECT_TENSOR_EQ(sum(x, {0}), tensor(std::vector<int64_t>{4, -6, 13}));
    EXPECT_TENSOR_EQ(prod(x, {1}), tensor(std::vector<int64_t>{-12, -45}));
    EXPECT_TENSOR_EQ(amax(x, {1}), tensor(std::vector<int64_t>{4, 9}));
    EXPECT_TENSOR_EQ(amin(x, {0}, true), tensor(std::vector<int64_t>{1, -5, 4}, {1, 3}));
    EXPECT_TENSOR_EQ(argmax(x, 1), tensor(std::vector<int64_t>{2, 2}));
    EXPECT_TENSOR_EQ(argmin(x), scalar_tensor(int64_t{4}));
    EXPECT_TENSOR_EQ(cumsum(x, 1), tensor(std::vector<int64_t>{3, 2, 6, 1, -4, 5}, {2, 3}));
    EXPECT_TENSOR_EQ(cumsum(x, 0), tensor(std::vector<int64_t>{3, -1, 4, 4, -6, 13}, {2, 3}));
    Tensor lse = logsumexp(x, {1});
    EXPECT_EQ(lse.dtype(), kFloat32);
    EXPECT_TENSOR_NEAR(lse,
                       tensor({static_cast<float>(RefLogSumExp({3, -1, 4})),
                               static_cast<float>(RefLogSumExp({1, -5, 9}))}),
                       1e-5);
    EXPECT_TENSOR_EQ(sum_to_size(x, {1, 3}), tensor(std::vector<int64_t>{4, -6, 13}, {1, 3}));
  }
  for (const auto& [layout, x] : Layouts(b)) {
    SCOPED_TRACE(layout);
    EXPECT_TENSOR_EQ(sum(x), scalar_tensor(int64_t{2}));
    EXPECT_TENSOR_EQ(sum(x, {1}), tensor(std::vector<int64_t>{2, 0}));
    EXPECT_TENSOR_EQ(prod(x, {0}), tensor(std::vector<int64_t>{0, 0, 0}));
    EXPECT_TENSOR_EQ(amax(x, {1}), tensor(std::vector<bool>{true, false}));
    EXPECT_TENSOR_EQ(amin(x, {0}), tensor(std::vector<bool>{false, false, false}));
    EXPECT_TENSOR_EQ(amax(x), scalar_tensor(true));
    EXPECT_TENSOR_EQ(argmax(x, 1), tensor(std::vector<int64_t>{0, 0}));
    EXPECT_TENSOR_EQ(argmin(x, 1), tensor(std::vector<int64_t>{1, 0}));
    EXPECT_TENSOR_EQ(cumsum(x, 1), tensor(std::vector<int64_t>{1, 1, 2, 0, 0, 0}, {2, 3}));
    EXPECT_EQ(logsumexp(x).dtype(), kFloat32);
    EXPECT_TENSOR_NEAR(logsumexp(x, {1}),
                       tensor({static_cast<float>(RefLogSumExp({1, 0, 1})),
                               static_cast<float>(RefLogSumExp({0, 0, 0}))}),
                       1e-5);
    EXPECT_TENSOR_EQ(sum_to_size(x, {3}), tensor(std::vector<int64_t>{1, 0, 1}));
  }
  // Integer overflow wraps (two's complement) instead of being undefined.
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_TENSOR_EQ(sum(tensor(std::vector<int64_t>{big, 1})),
                   scalar_tensor(std::numeric_limits<int64_t>::min()));
  EXPECT_TENSOR_EQ(prod(tensor(std::vector<int64_t>{big, 2})), scalar_tensor(int64_t{-2}));
}

TEST(ReductionOps, DtypeErrors) {
  Tensor i = tensor(std::vector<int64_t>{1, 2});
  Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_FT_ERROR(mean(i),
                  "mean: could not infer the output dtype; input dtype must be floating point, "
                  "got int64 (shape [2]): mean takes floating point and complex tensors");
  EXPECT_FT_ERROR(mean(b, {0}),
                  "mean: could not infer the output dtype; input dtype must be "
                  "floating point, got bool");
  EXPECT_FT_ERROR(var(i), "var: expected a floating point tensor");
  EXPECT_FT_ERROR(std(b), "std: expected a floating point tensor");
  EXPECT_FT_ERROR(norm(i), "norm: expected a floating point tensor");
  EXPECT_FT_ERROR(softmax(i, 0), "softmax: expected a floating point tensor");
  EXPECT_FT_ERROR(log_softmax(b, 0), "log_softmax: expected a floating point tensor");
}

TEST(ReductionOps, DimErrors) {
  Tensor x = ones({2, 3});
  EXPECT_FT_ERROR(sum(x, {2}), "sum: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(mean(x, {-3}), "mean: dim -3 is out of range");
  EXPECT_FT_ERROR(prod(x, {0, -2}), "prod: dim 0 appears more than once");
  EXPECT_FT_ERROR(amax(x, {1, 1}), "amax: dim 1 appears more than once");
  EXPECT_FT_ERROR(amin(x, {5}), "amin: dim 5 is out of range");
  EXPECT_FT_ERROR(logsumexp(x, {-1, 1}), "logsumexp: dim 1 appears more than once");
  EXPECT_FT_ERROR(var(x, {3}), "var: dim 3 is out of range");
  EXPECT_FT_ERROR(std(x, {0, 0}), "std: dim 0 appears more than once");
  EXPECT_FT_ERROR(norm(x, 2, {2}), "norm: dim 2 is out of range");
  EXPECT_FT_ERROR(argmax(x, 2), "argmax: dim 2 is out of range");
  EXPECT_FT_ERROR(argmin(x, -3), "argmin: dim -3 is out of range");
  EXPECT_FT_ERROR(softmax(x, 2), "softmax: dim 2 is out of range");
  EXPECT_FT_ERROR(log_softmax(x, -3), "log_softmax: dim -3 is out of range");
  EXPECT_FT_ERROR(cumsum(x, 2), "cumsum: dim 2 is out of range");
  EXPECT_FT_ERROR(sum(scalar_tensor(1.0f), {1}), "sum: dim 1 is out of range");
}

TEST(ReductionOps, NoIdentityErrors) {
  Tensor e = zeros({0, 3});
  EXPECT_FT_ERROR(amax(e),
                  "amax: cannot reduce over a zero-size dimension (dim 0 of shape [0, 3])");
  EXPECT_FT_ERROR(amin(e, {0}), "amin: cannot reduce over a zero-size dimension");
  EXPECT_FT_ERROR(amax(zeros({0}, kBool)), "amax: cannot reduce over a zero-size dimension");
  EXPECT_FT_ERROR(argmax(e), "argmax: cannot reduce over a zero-size dimension");
  EXPECT_FT_ERROR(argmax(e, 0), "argmax: cannot reduce over a zero-size dimension (dim 0");
  EXPECT_FT_ERROR(argmin(e, -2, true), "argmin: cannot reduce over a zero-size dimension");
  EXPECT_FT_ERROR(argmin(e), "argmin: cannot reduce over a zero-size dimension");
  EXPECT_FT_ERROR(norm(e, kInf), "norm: cannot reduce over a zero-size dimension");
  EXPECT_FT_ERROR(norm(e, -kInf, {0}), "norm: cannot reduce over a zero-size dimension");
  EXPECT_FT_ERROR(norm(e, -1.0, {0}), "p = -1 norm has no identity");
}

TEST(ReductionOps, NaNPropagation) {
  // Runs long enough for Eigen's packet paths; NaN at the start, middle and end.
  for (int64_t pos : {0, 5, 16, 36}) {
    for (DType dtype : {kFloat32, kFloat64}) {
      Vec v = Values(37);
      v[pos] = kNaN;
      Tensor x = Make(v, {37}, dtype);
      SCOPED_TRACE(std::to_string(pos) + " " + DTypeName(dtype));
      EXPECT_TRUE(std::isnan(amax(x).item<double>()));
      EXPECT_TRUE(std::isnan(amin(x).item<double>()));
      EXPECT_TRUE(std::isnan(logsumexp(x).item<double>()));
      EXPECT_TRUE(std::isnan(norm(x, kInf).item<double>()));
      EXPECT_EQ(argmax(x).item<int64_t>(), pos);
      EXPECT_EQ(argmin(x).item<int64_t>(), pos);
      // Along a leading dim (inner > 1): only column 1 has the NaN.
      Vec cols(37 * 2);
      for (int64_t r = 0; r < 37; ++r) {
        cols[2 * r] = v[r] == v[r] ? v[r] : 0.5;
        cols[2 * r + 1] = v[r];
      }
      Tensor m = Make(cols, {37, 2}, dtype);
      Tensor mx = amax(m, {0});
      EXPECT_FALSE(std::isnan(mx.to_vector<double>()[0]));
      EXPECT_TRUE(std::isnan(mx.to_vector<double>()[1]));
      EXPECT_TRUE(std::isnan(amin(m, {0}).to_vector<double>()[1]));
      EXPECT_TRUE(std::isnan(logsumexp(m, {0}).to_vector<double>()[1]));
      EXPECT_EQ(argmax(m, 0).to_vector<int64_t>()[1], pos);
      EXPECT_EQ(argmin(m, 0).to_vector<int64_t>()[1], pos);
    }
  }
}

TEST(ReductionOps, LogSumExpIsStable) {
  for (DType dtype : {kFloat32, kFloat64}) {
    Tensor big = Make({1000.0, 1000.0, 999.0, 1001.0}, {2, 2}, dtype);
    const double l0 = 1000.0 + std::log(2.0);
    EXPECT_TENSOR_NEAR(logsumexp(big, {1}),
                       Make({l0, 1001.0 + std::log1p(std::exp(-2.0))}, {2}, dtype), 1e-3);
    EXPECT_TENSOR_NEAR(
        logsumexp(big, {0}),
        Make({1000.0 + std::log1p(std::exp(-1.0)), 1001.0 + std::log1p(std::exp(-1.0))}, {2},
             dtype),
        1e-3);
    // Infinite entries: -inf rows give -inf, +inf gives +inf (no inf - inf = nan).
    Tensor inf = Make({-kInf, -kInf, kInf, 1.0, -kInf, 2.0}, {3, 2}, dtype);
    EXPECT_TENSOR_NEAR(logsumexp(inf, {1}), Make({-kInf, kInf, 2.0}, {3}, dtype), 1e-6);
    Tensor inf_t = Make({-kInf, kInf, -kInf, -kInf, 1.0, 2.0}, {2, 3}, dtype);
    EXPECT_TENSOR_NEAR(logsumexp(inf_t, {0}), Make({-kInf, kInf, 2.0}, {3}, dtype), 1e-6);
  }
}

TEST(ReductionOps, VarCorrectionAtLeastCount) {
  Tensor x = tensor({1.0, 3.0});
  EXPECT_TENSOR_EQ(var(x, {}, 2), scalar_tensor(kInf, kFloat64));
  EXPECT_TENSOR_EQ(var(x, {}, 5), scalar_tensor(kInf, kFloat64));
  EXPECT_TENSOR_EQ(std(x, {}, 3), scalar_tensor(kInf, kFloat64));
  EXPECT_TENSOR_EQ(var(tensor({2.0, 2.0}), {}, 2), scalar_tensor(kNaN, kFloat64));
  EXPECT_TENSOR_EQ(var(x, {}, -1), scalar_tensor(2.0 / 3.0, kFloat64));
  // A huge negative correction: computed without int64 overflow.
  EXPECT_TENSOR_NEAR(var(x, {}, std::numeric_limits<int64_t>::min()),
                     scalar_tensor(2.0 / (2.0 + 9223372036854775808.0), kFloat64), 1e-30);
  // Size-1 reduced dims: var with Bessel's correction is nan, population var is 0.
  Tensor col = ones({3, 1});
  EXPECT_TENSOR_EQ(var(col, {1}), full({3}, kNaN, kFloat32));
  EXPECT_TENSOR_EQ(var(col, {1}, 0, true), zeros({3, 1}));
}

TEST(ReductionOps, NormSpecialValues) {
  Tensor x = tensor({0.0, -3.0, 0.0, 4.0, 0.0, -1.0}, {2, 3});
  EXPECT_TENSOR_EQ(norm(x, 0), scalar_tensor(3.0, kFloat64));
  EXPECT_TENSOR_EQ(norm(x, 0, {1}), tensor({1.0, 2.0}));
  EXPECT_TENSOR_EQ(norm(x, 0, {0}), tensor({1.0, 1.0, 1.0}));
  EXPECT_TENSOR_EQ(norm(x, kInf, {0}), tensor({4.0, 3.0, 1.0}));
  EXPECT_TENSOR_EQ(norm(x, -kInf, {1}), tensor({0.0, 0.0}));
  EXPECT_TENSOR_EQ(norm(x, -kInf, {0}), tensor({0.0, 0.0, 0.0}));
  EXPECT_TENSOR_NEAR(norm(x, 2, {0, 1}, true), tensor({std::sqrt(26.0)}, {1, 1}), 1e-12);
  EXPECT_TENSOR_NEAR(norm(x, 1), scalar_tensor(8.0, kFloat64), 1e-12);
  EXPECT_TENSOR_NEAR(norm(tensor({3.0f, 4.0f}), -2.0),
                     scalar_tensor(static_cast<float>(std::pow(1 / 9.0 + 1 / 16.0, -0.5))), 1e-6);
}

TEST(ReductionOps, ArgMaxArgMinMatchLoops) {
  for (const Shapes& s : ShapeCases()) {
    if (Numel(s.shape) == 0) continue;
    for (int seed : {0, 3}) {
      // Few distinct values so ties are common: the first occurrence must win.
      Vec xs = Values(Numel(s.shape), seed);
      for (double& v : xs) v = std::round(v);
      for (DType dtype : {kFloat64, kFloat32, kInt64}) {
        for (const auto& [layout, x] : Layouts(Make(xs, s.shape, dtype))) {
          const int64_t rank = static_cast<int64_t>(s.shape.size());
          std::vector<std::optional<int64_t>> dims = {std::nullopt};
          for (int64_t d = -std::max<int64_t>(rank, 1); d < std::max<int64_t>(rank, 1); ++d) {
            dims.push_back(d);
          }
          for (std::optional<int64_t> dim : dims) {
            for (bool keepdim : {false, true}) {
              SCOPED_TRACE(ShapeToString(s.shape) + " dim " +
                           (dim ? std::to_string(*dim) : "none") + " keepdim " +
                           std::to_string(keepdim) + " " + DTypeName(dtype) + " " + layout);
              const std::vector<int64_t> ref_dims =
                  dim && rank > 0 ? std::vector<int64_t>{*dim} : std::vector<int64_t>{};
              Tensor expected_max = RefReduce(
                  xs, s.shape, ref_dims, keepdim,
                  [](const Vec& v) {
                    return static_cast<double>(std::max_element(v.begin(), v.end()) - v.begin());
                  },
                  kInt64);
              Tensor expected_min = RefReduce(
                  xs, s.shape, ref_dims, keepdim,
                  [](const Vec& v) {
                    return static_cast<double>(std::min_element(v.begin(), v.end()) - v.begin());
                  },
                  kInt64);
              if (!dim && keepdim) {  // flattened: shape [1, 1, ...] of the input's rank
                EXPECT_EQ(expected_max.sizes(), IntArrayRef(Shape(rank, 1)));
              }
              EXPECT_TENSOR_EQ(argmax(x, dim, keepdim), expected_max);
              EXPECT_TENSOR_EQ(argmin(x, dim, keepdim), expected_min);
            }
          }
        }
      }
    }
  }
}

Vec RefSoftmax(const Vec& v) {
  double m = -kInf;
  for (double x : v) m = std::max(m, x);
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  Vec out;
  for (double x : v) out.push_back(std::exp(x - m) / s);
  return out;
}
Vec RefLogSoftmax(const Vec& v) {
  Vec out = RefSoftmax(v);
  for (double& x : out) x = std::log(x);
  return out;
}
Vec RefCumprod(const Vec& v) {
  Vec r(v.size());
  double acc = 1.0;
  for (size_t i = 0; i < v.size(); ++i) r[i] = acc *= v[i];
  return r;
}
Vec RefLogcumsumexp(const Vec& v) {
  Vec r(v.size());
  double acc = 0.0;
  for (size_t i = 0; i < v.size(); ++i) r[i] = std::log(acc += std::exp(v[i]));
  return r;
}
Vec RefCumsum(const Vec& v) {
  Vec out;
  double s = 0;
  for (double x : v) out.push_back(s += x);
  return out;
}

TEST(ReductionOps, SoftmaxLogSoftmaxCumsumMatchLoops) {
  using DimFn = std::function<Tensor(const Tensor&, int64_t)>;
  const std::vector<std::tuple<std::string, DimFn, std::function<Vec(const Vec&)>>> cases = {
      {"softmax", [](const Tensor& x, int64_t d) { return softmax(x, d); }, RefSoftmax},
      {"log_softmax", [](const Tensor& x, int64_t d) { return log_softmax(x, d); }, RefLogSoftmax},
      {"cumsum", [](const Tensor& x, int64_t d) { return cumsum(x, d); }, RefCumsum},
      {"cumprod", [](const Tensor& x, int64_t d) { return cumprod(x, d); }, RefCumprod},
      {"logcumsumexp", [](const Tensor& x, int64_t d) { return logcumsumexp(x, d); },
       RefLogcumsumexp},
  };
  const std::vector<Shape> shapes = {{}, {7}, {2, 3, 4}, {3, 1, 4}, {2, 0, 3}, {3, 37, 19}};
  for (const auto& [name, op, ref] : cases) {
    for (const Shape& shape : shapes) {
      const Vec xs = Values(Numel(shape));
      const int64_t rank = static_cast<int64_t>(shape.size());
      for (DType dtype : {kFloat64, kFloat32}) {
        const double tol = dtype == kFloat32 ? 3e-5 : 1e-12;
        for (const auto& [layout, x] : Layouts(Make(xs, shape, dtype))) {
          for (int64_t d = -std::max<int64_t>(rank, 1); d < std::max<int64_t>(rank, 1); ++d) {
            SCOPED_TRACE(name + " " + ShapeToString(shape) + " dim " + std::to_string(d) + " " +
                         DTypeName(dtype) + " " + layout);
            Tensor actual = op(x, d);
            EXPECT_TRUE(actual.is_contiguous());
            EXPECT_TRUE(
                testing::TensorNear(actual, RefAlongDim(xs, shape, d, ref, dtype), tol, tol));
          }
        }
      }
    }
  }
}

TEST(ReductionOps, SoftmaxIsStableAndHandlesInfinities) {
  for (DType dtype : {kFloat32, kFloat64}) {
    // Large logits: exp would overflow without the max shift.
    Tensor big = Make({1000.0, 1001.0, 1002.0}, {3}, dtype);
    const Vec ref = RefSoftmax({0.0, 1.0, 2.0});
    EXPECT_TENSOR_NEAR(softmax(big, 0), Make(ref, {3}, dtype), 1e-6);
    EXPECT_TENSOR_NEAR(log_softmax(big, 0), Make(RefLogSoftmax({0.0, 1.0, 2.0}), {3}, dtype), 1e-5);
    // -inf entries get probability 0 (log -inf); an all -inf row is nan, as in PyTorch.
    Tensor m = Make({-kInf, 0.0, -kInf, -kInf}, {2, 2}, dtype);
    EXPECT_TENSOR_EQ(softmax(m, 1), Make({0.0, 1.0, kNaN, kNaN}, {2, 2}, dtype));
    EXPECT_TENSOR_EQ(log_softmax(m, 1), Make({-kInf, 0.0, kNaN, kNaN}, {2, 2}, dtype));
    EXPECT_TENSOR_EQ(softmax(m, 0), Make({kNaN, 1.0, kNaN, 0.0}, {2, 2}, dtype));
    EXPECT_TENSOR_EQ(log_softmax(m, 0), Make({kNaN, 0.0, kNaN, -kInf}, {2, 2}, dtype));
    // exp of a very negative shifted logit underflows to exactly 0 (as std::exp does).
    Tensor far = Make({0.0, -800.0, -800.0, 0.0}, {2, 2}, dtype);
    EXPECT_TENSOR_EQ(softmax(far, 1), Make({1.0, 0.0, 0.0, 1.0}, {2, 2}, dtype));
    EXPECT_TENSOR_EQ(softmax(far, 0), Make({1.0, 0.0, 0.0, 1.0}, {2, 2}, dtype));
    EXPECT_TENSOR_NEAR(log_softmax(far, 0), Make({0.0, -800.0, -800.0, 0.0}, {2, 2}, dtype), 1e-9);
  }
}

TEST(ReductionOps, CumprodOfIntegersAndBools) {
  EXPECT_TENSOR_EQ(cumprod(tensor(std::vector<int64_t>{2, -3, 0, 5}), 0),
                   tensor(std::vector<int64_t>{2, -6, 0, 0}));
  EXPECT_TENSOR_EQ(cumprod(tensor(std::vector<bool>{true, true, false, true}), 0),
                   tensor(std::vector<int64_t>{1, 1, 0, 0}));
  // int64 products wrap like cumsum's sums (two's complement), never UB.
  const int64_t big = int64_t{1} << 62;
  EXPECT_TENSOR_EQ(cumprod(tensor(std::vector<int64_t>{big, 4}), 0),
                   tensor(std::vector<int64_t>{big, 0}));
}

TEST(ReductionOps, LogcumsumexpIsStable) {
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    // exp(1000) overflows; the running log-sum-exp does not.
    EXPECT_TENSOR_NEAR(
        logcumsumexp(Make({1000.0, 1000.0, 999.0}, {3}, dtype), 0),
        Make({1000.0, 1000.0 + std::log(2.0), 1000.0 + std::log(2.0 + std::exp(-1.0))}, {3}, dtype),
        1e-5);
    // A prefix of -inf is an empty sum so far (-inf); +inf absorbs; NaN propagates.
    EXPECT_TENSOR_EQ(logcumsumexp(Make({-kInf, -kInf, 0.0, kInf, 1.0}, {5}, dtype), 0),
                     Make({-kInf, -kInf, 0.0, kInf, kInf}, {5}, dtype));
    EXPECT_TENSOR_EQ(logcumsumexp(Make({0.0, kNaN, 1.0}, {3}, dtype), 0),
                     Make({0.0, kNaN, kNaN}, {3}, dtype));
  }
  EXPECT_FT_ERROR(logcumsumexp(tensor(std::vector<int64_t>{1, 2}), 0),
                  "logcumsumexp: expected a floating point tensor");
  EXPECT_FT_ERROR(logcumsumexp(zeros({2, 3}), 2), "logcumsumexp: dim 2 is out of range");
  EXPECT_FT_ERROR(cumprod(zeros({2, 3}), -3), "cumprod: dim -3 is out of range");
}

// linear_recurrence against the loop s[i] = a[i] s[i - 1] + b[i], s[0] = b[0], over
// broadcast operands, every dim, both dtypes and non-contiguous layouts.
TEST(ReductionOps, LinearRecurrenceMatchesLoop) {
  struct Case {
    Shape a, b;
  };
  for (const Case& c : std::vector<Case>{{{2, 3, 4}, {2, 3, 4}},
                                         {{3, 4}, {2, 3, 4}},
                                         {{2, 1, 4}, {1, 3, 1}},
                                         {{}, {5}},
                                         {{4}, {}},
                                         {{2, 0}, {2, 0}}}) {
    const Shape shape = BroadcastShapes("test", c.a, c.b);
    const int64_t rank = static_cast<int64_t>(shape.size());
    for (DType dtype : {kFloat64, kFloat32}) {
      const Tensor a = Make(Values(Numel(c.a)), c.a, dtype) * 0.9;
      const Tensor b = Make(Values(Numel(c.b)), c.b, dtype);
      // The reference: expanded operands, the loop along each dim in float64.
      const Tensor af = contiguous(to(expand(a, shape), kFloat64));
      const Tensor bf = contiguous(to(expand(b, shape), kFloat64));
      for (int64_t d = -std::max<int64_t>(rank, 1); d < std::max<int64_t>(rank, 1); ++d) {
        SCOPED_TRACE(ShapeToString(c.a) + " " + ShapeToString(c.b) + " dim " + std::to_string(d) +
                     " " + DTypeName(dtype));
        const Tensor got = linear_recurrence(a, b, d);
        ASSERT_EQ(got.sizes(), IntArrayRef(shape));
        EXPECT_EQ(got.dtype(), dtype);
        if (rank == 0) {
          EXPECT_TENSOR_EQ(got, b);
          continue;
        }
        if (got.numel() == 0) continue;  // the shape is all there is
        const int64_t wd = d < 0 ? d + rank : d;
        const Tensor am = movedim(af, wd, -1), bm = movedim(bf, wd, -1);
        const int64_t n = shape[static_cast<size_t>(wd)];
        const Tensor a2 = contiguous(reshape(am, {-1, n})), b2 = contiguous(reshape(bm, {-1, n}));
        const std::vector<double> av = a2.to_vector<double>(), bv = b2.to_vector<double>();
        std::vector<double> want(bv.size());
        for (size_t row = 0; n > 0 && row < bv.size() / static_cast<size_t>(n); ++row) {
          double s = 0.0;
          for (int64_t i = 0; i < n; ++i) {
            const size_t k = row * static_cast<size_t>(n) + static_cast<size_t>(i);
            s = i == 0 ? bv[k] : av[k] * s + bv[k];
            want[k] = s;
          }
        }
        const Tensor expected = movedim(reshape(tensor(want, a2.sizes()), am.sizes()), -1, wd);
        const double tol = dtype == kFloat32 ? 1e-5 : 1e-13;
        EXPECT_TRUE(testing::TensorNear(to(got, kFloat64), expected, tol, tol));
        // A transposed b gives the same values.
        if (b.dim() >= 2) {
          const Tensor bt = transpose(contiguous(transpose(b, 0, -1)), 0, -1);
          EXPECT_TENSOR_EQ(linear_recurrence(a, bt, d), got);
        }
      }
    }
  }
  EXPECT_TENSOR_EQ(linear_recurrence(tensor({0.0, 0.5, 0.5}), tensor({1.0, 1.0, 1.0}), 0),
                   tensor({1.0, 1.5, 1.75}));
  // Errors name the op and the operands.
  EXPECT_FT_ERROR(linear_recurrence(zeros({2, 3}), zeros({4}), 0),
                  "linear_recurrence: shapes [2, 3] and [4] cannot be broadcast together");
  EXPECT_FT_ERROR(linear_recurrence(zeros({2, 3}), zeros({2, 3}), 2),
                  "linear_recurrence: dim 2 is out of range");
  EXPECT_FT_ERROR(
      linear_recurrence(tensor(std::vector<int64_t>{1}), tensor(std::vector<int64_t>{1}), 0),
      "linear_recurrence: expected floating point tensors, got int64 a of shape [1]");
}

TEST(ReductionOps, CumsumKeepsNegativeZero) {
  Tensor c = cumsum(tensor({-0.0, 1.0}), 0);
  EXPECT_TRUE(std::signbit(c.to_vector<double>()[0]));
}

TEST(ReductionOps, SumToSize) {
  const Vec xs = Values(24);
  const Shape shape = {2, 3, 4};
  for (DType dtype : {kFloat64, kFloat32}) {
    const double tol = dtype == kFloat32 ? 1e-5 : 1e-12;
    for (const auto& [layout, x] : Layouts(Make(xs, shape, dtype))) {
      SCOPED_TRACE(layout + " " + DTypeName(dtype));
      const auto expect = [&, x = x](IntArrayRef size, const std::vector<int64_t>& dims) {
        Tensor expected = RefReduce(xs, shape, dims, /*keepdim=*/true, RefSum, dtype);
        // Drop the leading dims the size does not have.
        const Shape want(size.begin(), size.end());
        expected = MakeDense(expected.storage(), dtype, want, ContiguousStrides(want), 0);
        Tensor actual = sum_to_size(x, size);
        EXPECT_TRUE(testing::TensorNear(actual, expected, tol, tol)) << ShapeToString(size);
      };
      expect({3, 4}, {0});
      expect({4}, {0, 1});
      expect({1, 4}, {0, 1});
      expect({2, 1, 4}, {1});
      expect({2, 3, 1}, {2});
      expect({1, 3, 1}, {0, 2});
      expect({3, 1}, {0, 2});
      expect({1}, {0, 1, 2});
      expect({1, 1, 1}, {0, 1, 2});
      Tensor same = sum_to_size(x, {2, 3, 4});  // nothing to reduce: a copy
      EXPECT_TENSOR_EQ(same, Make(xs, shape, dtype));
      EXPECT_FALSE(same.is_same(x));
      EXPECT_TRUE(same.is_contiguous());
    }
  }
  // Size-0 dims: summing a size-0 dim to 1 gives zeros; a size-0 target keeps it.
  EXPECT_TENSOR_EQ(sum_to_size(zeros({0, 3}), {1, 3}), zeros({1, 3}));
  EXPECT_TENSOR_EQ(sum_to_size(ones({2, 0}), {0}), zeros({0}));
  EXPECT_TENSOR_EQ(sum_to_size(ones({4, 1}), {1}), full({1}, 4.0f));
  EXPECT_EQ(sum_to_size(tensor(std::vector<bool>{true, true}, {2}), {2}).dtype(), kInt64);
}

TEST(ReductionOps, SumToSizeErrors) {
  Tensor x = ones({4});
  EXPECT_FT_ERROR(sum_to_size(x, {2, 3}), "sum_to_size: size [2, 3] is not expandable to size [4]");
  EXPECT_FT_ERROR(sum_to_size(x, {3}), "sum_to_size: size [3] is not expandable to size [4]");
  EXPECT_FT_ERROR(sum_to_size(x, {1, 4}), "sum_to_size: size [1, 4] is not expandable");
  EXPECT_FT_ERROR(sum_to_size(ones({2, 3}), {2, 2}),
                  "size [2, 2] is not expandable to size [2, 3]");
  EXPECT_FT_ERROR(sum_to_size(ones({2, 3}), {-1, 3}), "size [-1, 3] is not expandable");
  EXPECT_FT_ERROR(sum_to_size(ones({2, 0}), {1, 2}),
                  "size [1, 2] is not expandable to size [2, 0]");
  EXPECT_FT_ERROR(sum_to_size(scalar_tensor(1.0f), {1}), "size [1] is not expandable to size []");
}

TEST(ReductionOps, ResultsAreFreshAndDeterministic) {
  Tensor x = Make(Values(3 * 37 * 19), {3, 37, 19}, kFloat32);
  Tensor a = sum(x, {0, 2});
  Tensor b = sum(x, {0, 2});
  EXPECT_TENSOR_EQ(a, b);
  EXPECT_FALSE(sum(x, {}).is_same(x));
  Tensor one = ones({1, 3});
  Tensor r = sum(one, {0});  // only a size-1 dim is reduced
  EXPECT_FALSE(r.storage().data() == one.storage().data());
  EXPECT_TENSOR_EQ(r, ones({3}));
}

// ---- The dtypes of issue 43 against torch 1.13 ----
// Fixtures: tests/fixtures/torch/reduction_dtypes, written by
// tools/torch_fixtures/reduction_dtypes.py, which checks each of torch's results against
// exact integer arithmetic, math.fsum and plain Python loops before saving it. Each case
// runs through the op table (so the registered dtypes are checked too) on the contiguous
// input and on a reversed-strides copy of it, which must give the same bits.

std::string DTypesFixture(const std::string& file) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string root =
      srcdir != nullptr ? std::string(srcdir) + "/" + (workspace ? workspace : "ft") + "/" : "";
  return root + "tests/fixtures/torch/reduction_dtypes/" + file + ".npy";
}

// FromStored: a fixture array (float64, int64 or bool; complex as [..., 2] float64) as a
// tensor of `dtype`. Every stored value is exact in `dtype`.
Tensor FromStored(const Tensor& stored, DType dtype) {
  if (IsComplex(dtype)) {
    const std::vector<double> parts = stored.to_vector<double>();
    std::vector<std::complex<double>> values(parts.size() / 2);
    for (size_t i = 0; i < values.size(); ++i) values[i] = {parts[2 * i], parts[2 * i + 1]};
    const Shape shape(stored.sizes().begin(), stored.sizes().end() - 1);
    return kernels::to(tensor(values, shape), dtype);
  }
  return kernels::to(stored, dtype);
}

// Parts: a tensor's values as doubles (complex: real, imaginary interleaved).
std::vector<double> Parts(const Tensor& t) {
  if (IsComplex(t.dtype())) {
    std::vector<double> out;
    for (const std::complex<double>& c :
         kernels::to(t, kComplex128).to_vector<std::complex<double>>()) {
      out.push_back(c.real());
      out.push_back(c.imag());
    }
    return out;
  }
  return kernels::to(t, kFloat64).to_vector<double>();
}

bool SameValue(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// UlpsApart: |a - b| in units in the last place of `dtype` at b (NaN equal to NaN; an
// infinity only equal to itself).
double UlpsApart(double a, double b, DType dtype) {
  if (SameValue(a, b)) return 0;
  if (!std::isfinite(a) || !std::isfinite(b)) return kInf;
  const int mantissa = dtype == kFloat16 ? 10 : 7;
  const double tiny = dtype == kFloat16 ? 0x1p-14 : 0x1p-126;
  const double spacing = std::ldexp(1.0, std::ilogb(std::max(std::fabs(b), tiny)) - mantissa);
  return std::fabs(a - b) / spacing;
}

const char* const kFixtureOps[] = {"sum",    "mean",   "prod",   "amax",    "amin",
                                   "argmax", "argmin", "cumsum", "cumprod", "logsumexp"};

Tensor RunFixtureOp(int64_t op, const Tensor& x, int64_t arg, bool keepdim) {
  Shape dims;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if ((arg >> d) & 1) dims.push_back(d);
  }
  const std::optional<int64_t> dim = arg < 0 ? std::nullopt : std::optional<int64_t>(arg);
  switch (op) {
    case 0:
      return sum(x, dims, keepdim);
    case 1:
      return mean(x, dims, keepdim);
    case 2:
      return prod(x, dims, keepdim);
    case 3:
      return amax(x, dims, keepdim);
    case 4:
      return amin(x, dims, keepdim);
    case 5:
      return argmax(x, dim, keepdim);
    case 6:
      return argmin(x, dim, keepdim);
    case 7:
      return cumsum(x, arg);
    case 8:
      return cumprod(x, arg);
    default:
      return logsumexp(x, dims, keepdim);
  }
}

TEST(ReductionDTypes, MatchTorch) {
  const Tensor index = LoadNpy(DTypesFixture("index.index"));
  ASSERT_EQ(index.dim(), 2);
  ASSERT_EQ(index.size(1), 5);
  const std::vector<int64_t> rows = index.to_vector<int64_t>();
  const int64_t cases = index.size(0);
  EXPECT_GT(cases, 400);
  int64_t once_exact = 0;
  int64_t once_cases = 0;
  double worst_vs_torch = 0;
  for (int64_t c = 0; c < cases; ++c) {
    const int64_t* row = &rows[static_cast<size_t>(5 * c)];
    const int64_t op = row[0];
    const DType in_dtype = kAllDTypes[row[1]];
    const DType out_dtype = kAllDTypes[row[2]];
    const int64_t arg = row[3];
    const bool keepdim = row[4] != 0;
    const std::string name = absl::StrCat("c", c);
    SCOPED_TRACE(absl::StrCat("case ", name, ": ", kFixtureOps[op], " of ", DTypeName(in_dtype),
                              " arg ", arg, " keepdim ", keepdim));
    const Tensor x = FromStored(LoadNpy(DTypesFixture(name + ".x")), in_dtype);
    const Tensor want_stored = LoadNpy(DTypesFixture(name + ".out"));
    const Tensor got = RunFixtureOp(op, x, arg, keepdim);
    ASSERT_EQ(got.dtype(), out_dtype);
    const Shape want_shape(want_stored.sizes().begin(),
                           want_stored.sizes().end() - (IsComplex(out_dtype) ? 1 : 0));
    ASSERT_EQ(got.sizes(), IntArrayRef(want_shape));
    const std::vector<double> got_v = Parts(got);
    const std::vector<double> want_v = Parts(kernels::to(want_stored, kFloat64));
    ASSERT_EQ(got_v.size(), want_v.size());
    // The same bits from a non-contiguous input.
    if (x.dim() >= 2 && x.numel() > 1) {
      const std::vector<double> strided = Parts(RunFixtureOp(op, ReversedLayout(x), arg, keepdim));
      for (size_t i = 0; i < got_v.size(); ++i) EXPECT_TRUE(SameValue(strided[i], got_v[i])) << i;
    }
    const bool half = out_dtype == kFloat16 || out_dtype == kBFloat16;
    if (half && (op == 0 || op == 1)) {
      // ft rounds once: against fsum rounded once (a near tie may round the other way after
      // float32 accumulation), and torch within its own intermediate roundings.
      const std::vector<double> once = Parts(LoadNpy(DTypesFixture(name + ".once")));
      ++once_cases;
      bool exact = true;
      for (size_t i = 0; i < got_v.size(); ++i) {
        EXPECT_LE(UlpsApart(got_v[i], once[i], out_dtype), 1) << i;
        exact = exact && SameValue(got_v[i], once[i]);
        const double vs_torch = UlpsApart(got_v[i], want_v[i], out_dtype);
        EXPECT_LE(vs_torch, 4) << i << ": ft " << got_v[i] << " torch " << want_v[i];
        worst_vs_torch = std::max(worst_vs_torch, vs_torch);
      }
      once_exact += exact;
    } else if ((IsComplex(out_dtype) && (op == 0 || op == 1 || op == 2)) ||
               out_dtype == kFloat32) {
      // Complex sums, means and products (ft and torch add in different orders) and
      // logsumexp (float32).
      const double eps = out_dtype == kComplex128 ? 1e-13 : 2e-5;
      double scale = 1;
      for (double v : want_v) scale = std::max(scale, std::fabs(v));
      for (size_t i = 0; i < got_v.size(); ++i) {
        if (std::isnan(want_v[i])) {
          EXPECT_TRUE(std::isnan(got_v[i])) << i;  // the mean of nothing
        } else {
          EXPECT_NEAR(got_v[i], want_v[i], eps * scale) << i;
        }
      }
    } else if (IsComplex(out_dtype)) {
      // Scans: the complex128 running value as torch's, rounded per output.
      for (size_t i = 0; i < got_v.size(); ++i) {
        EXPECT_NEAR(got_v[i], want_v[i], 1e-6 * std::max(1.0, std::fabs(want_v[i]))) << i;
      }
    } else {
      // Integers, extremes, indices and bfloat16 scans: exact.
      for (size_t i = 0; i < got_v.size(); ++i) {
        EXPECT_TRUE(SameValue(got_v[i], want_v[i]))
            << i << ": ft " << got_v[i] << " torch " << want_v[i];
      }
    }
  }
  // Most once-rounded sums and means are exact; report how far torch's were.
  EXPECT_GE(once_exact * 10, once_cases * 9) << once_exact << " of " << once_cases;
  std::cout << "ReductionDTypes: " << cases << " cases; " << once_exact << " of " << once_cases
            << " float16 / bfloat16 sums and means equal fsum rounded once; ft is within "
            << worst_vs_torch << " ulp of torch 1.13\n";
}

// Integer (and bool) results are int64; int64 and unsigned integer sums, prods and scans wrap
// exactly: checked here on the op table's path with hand-computed values.
TEST(ReductionDTypes, IntegersAccumulateInInt64) {
  const Tensor i32 =
      kernels::to(tensor(std::vector<int64_t>{2147483647, 2147483647, 5}, {3}), kInt32);
  EXPECT_EQ(sum(i32).dtype(), kInt64);
  EXPECT_EQ(sum(i32).item<int64_t>(), int64_t{2} * 2147483647 + 5);  // no int32 wrap
  EXPECT_EQ(cumsum(i32, 0).to_vector<int64_t>(),
            (std::vector<int64_t>{2147483647, 4294967294, 4294967299}));
  // 2147483647^2 * 5 wraps in int64, as torch's int64 product does (computed here unsigned).
  EXPECT_EQ(prod(i32).item<int64_t>(),
            static_cast<int64_t>(uint64_t{2147483647} * 2147483647 * 5));
  const Tensor u8 = kernels::to(tensor(std::vector<int64_t>{255, 255, 255, 255}, {2, 2}), kUInt8);
  EXPECT_EQ(sum(u8, {0}).to_vector<int64_t>(), (std::vector<int64_t>{510, 510}));
  EXPECT_EQ(amax(u8).dtype(), kUInt8);
  EXPECT_EQ(amax(u8).item<uint8_t>(), 255);
  EXPECT_EQ(argmin(u8).item<int64_t>(), 0);
  EXPECT_FT_ERROR(mean(u8), "mean: could not infer the output dtype");
  EXPECT_FT_ERROR(mean(kernels::to(i32, kInt8)), "must be floating point, got int8");
}

// The op table refuses complex amax / amin / argmax / argmin by name (torch refuses them
// too) and still refuses the dtypes this family's other kernels are not written for.
TEST(ReductionDTypes, Refusals) {
  const Tensor c = kernels::to(ones({2, 2}), kComplex64);
  EXPECT_FT_ERROR(amax(c), "amax: argument 'self' is complex64");
  EXPECT_FT_ERROR(amin(c, {0}), "amin: argument 'self' is complex64");
  EXPECT_FT_ERROR(argmax(c), "argmax: argument 'self' is complex64");
  EXPECT_FT_ERROR(argmin(c, 0), "argmin: argument 'self' is complex64");
  const Tensor h = kernels::to(ones({2}), kFloat16);
  EXPECT_FT_ERROR(var(h), "var: argument 'self' is float16");
  EXPECT_FT_ERROR(softmax(h, 0), "softmax: argument 'self' is float16");
  EXPECT_FT_ERROR(logsumexp(h), "logsumexp: argument 'self' is float16");
}

// sum_to_size, autograd's reduction, takes every dtype with sum's dtype rule.
TEST(ReductionDTypes, SumToSize) {
  const Tensor i8 = kernels::to(tensor(std::vector<int64_t>{100, 100, 100, -3}, {2, 2}), kInt8);
  EXPECT_EQ(sum_to_size(i8, {1, 2}).to_vector<int64_t>(), (std::vector<int64_t>{200, 97}));
  EXPECT_EQ(sum_to_size(i8, {2, 2}).dtype(), kInt64);
  const Tensor h = kernels::to(tensor({1.5, 2.0, 3.0, 4.25}, {2, 2}), kBFloat16);
  Tensor r = sum_to_size(h, {2, 1});
  EXPECT_EQ(r.dtype(), kBFloat16);
  EXPECT_EQ(kernels::to(r, kFloat64).to_vector<double>(), (std::vector<double>{3.5, 7.25}));
  const Tensor c = tensor(std::vector<std::complex<double>>{{1, 2}, {3, -4}}, {2});
  EXPECT_EQ(sum_to_size(c, {1}).to_vector<std::complex<double>>(),
            (std::vector<std::complex<double>>{{4, -2}}));
}

}  // namespace
}  // namespace ft

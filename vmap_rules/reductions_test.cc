// vmap of every reduction and dim-wise op against the loop-and-stack oracle, plus the ops'
// own errors under vmap (naming logical dims and shapes).
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"
#include "tests/vmap_check.h"

namespace ft {
namespace {

using testing::ArgSpec;
using testing::CheckVmap;
using testing::IndexMaker;
using testing::UniformMaker;
using testing::ValueMaker;

using DimList = std::vector<int64_t>;
using DimListOp = Tensor (*)(const Tensor&, IntArrayRef, bool);

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string DimsName(const DimList& dims, bool keepdim) {
  std::string s = "dims {";
  for (int64_t d : dims) s += std::to_string(d) + ",";
  return s + "} keepdim " + (keepdim ? "true" : "false");
}

// BoolMaker: bool tensors with both values (about half true).
ValueMaker BoolMaker() {
  return [](IntArrayRef shape, uint64_t seed) {
    return gt(UniformMaker()(shape, seed), 0.0);
  };
}

// The dim lists every dim-list reduction is checked with, per example shape.
struct DimCase {
  Shape shape;
  DimList dims;
};
const std::vector<DimCase>& DimCases() {
  static const std::vector<DimCase> cases = {
      {{2, 3, 4}, {}},      {{2, 3, 4}, {0}},     {{2, 3, 4}, {-1}},   {{2, 3, 4}, {1}},
      {{2, 3, 4}, {0, 2}},  {{2, 3, 4}, {-1, 0}}, {{2, 3, 4}, {0, 1, 2}},
      {{5}, {}},            {{5}, {-1}},          {{}, {}},            {{}, {0}},
      {{}, {-1}},
  };
  return cases;
}

TEST(ReductionRules, SumMeanProdAmaxAminLogsumexp) {
  const std::vector<std::pair<const char*, DimListOp>> ops = {
      {"sum", &sum},   {"mean", &mean}, {"prod", &prod},
      {"amax", &amax}, {"amin", &amin}, {"logsumexp", &logsumexp}};
  for (const auto& [name, op] : ops) {
    for (const DimCase& c : DimCases()) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(std::string(name) + " shape " + ShapeToString(c.shape) + " " +
                     DimsName(c.dims, keepdim));
        auto f = [op = op, dims = c.dims, keepdim](const TensorList& a) {
          return TensorList{op(a[0], dims, keepdim)};
        };
        EXPECT_TRUE(CheckVmap(f, {ArgSpec{c.shape}}));
      }
    }
  }
}

TEST(ReductionRules, IntegerAndBoolDtypes) {
  // sum / prod of int64 and bool give int64; amax / amin of bool stay bool (any / all).
  for (const DimListOp op : std::vector<DimListOp>{&sum, &prod, &amax, &amin}) {
    for (bool keepdim : {false, true}) {
      auto f = [op, keepdim](const TensorList& a) {
        return TensorList{op(a[0], {-1}, keepdim), op(a[1], {}, keepdim)};
      };
      EXPECT_TRUE(CheckVmap(f, {ArgSpec{{2, 3}, IndexMaker(5)}, ArgSpec{{3, 2}, BoolMaker()}}));
    }
  }
  EXPECT_TRUE(CheckVmap([](const TensorList& a) { return TensorList{sum(a[0])}; },
                        {ArgSpec{{}, BoolMaker()}}));
}

TEST(ReductionRules, VarStd) {
  using VarOp = Tensor (*)(const Tensor&, IntArrayRef, int64_t, bool);
  for (VarOp op : std::vector<VarOp>{&var, &std}) {
    for (const DimCase& c : DimCases()) {
      for (int64_t correction : {0, 1, 2}) {
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(std::string(op == &var ? "var" : "std") + " shape " +
                       ShapeToString(c.shape) + " " + DimsName(c.dims, keepdim) +
                       " correction " + std::to_string(correction));
          auto f = [op, dims = c.dims, correction, keepdim](const TensorList& a) {
            return TensorList{op(a[0], dims, correction, keepdim)};
          };
          EXPECT_TRUE(CheckVmap(f, {ArgSpec{c.shape}}));
        }
      }
    }
  }
}

TEST(ReductionRules, Norm) {
  for (double p : {2.0, 1.0, 3.0, 0.5, 0.0, kInf, -kInf, -1.0}) {
    for (const DimCase& c : DimCases()) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE("norm p " + std::to_string(p) + " shape " + ShapeToString(c.shape) + " " +
                     DimsName(c.dims, keepdim));
        auto f = [p, dims = c.dims, keepdim](const TensorList& a) {
          return TensorList{norm(a[0], p, dims, keepdim)};
        };
        EXPECT_TRUE(CheckVmap(f, {ArgSpec{c.shape}}));
      }
    }
  }
}

TEST(ReductionRules, ReductionsOverZeroSizeDimsWithIdentity) {
  // sum of nothing is 0, prod 1, logsumexp -inf, mean nan; the batch dim is not reduced.
  auto f = [](const TensorList& a) {
    return TensorList{sum(a[0], {1}), prod(a[0], {1}, true), logsumexp(a[0], {-1}),
                      mean(a[0], {}), norm(a[0], 2.0, {1})};
  };
  EXPECT_TRUE(CheckVmap(f, {ArgSpec{{2, 0}}}));
}

TEST(ReductionRules, ArgmaxArgmin) {
  using ArgOp = Tensor (*)(const Tensor&, std::optional<int64_t>, bool);
  const std::vector<std::pair<Shape, std::vector<std::optional<int64_t>>>> cases = {
      {{2, 3, 4}, {std::nullopt, 0, 1, -1, 2, -3}},
      {{5}, {std::nullopt, 0, -1}},
      {{}, {std::nullopt, 0, -1}},
  };
  for (ArgOp op : std::vector<ArgOp>{&argmax, &argmin}) {
    for (const auto& [shape, dims] : cases) {
      for (const auto& dim : dims) {
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(std::string(op == &argmax ? "argmax" : "argmin") + " shape " +
                       ShapeToString(shape) + " dim " + (dim ? std::to_string(*dim) : "None") +
                       " keepdim " + (keepdim ? "true" : "false"));
          auto f = [op, dim = dim, keepdim](const TensorList& a) {
            return TensorList{op(a[0], dim, keepdim)};
          };
          EXPECT_TRUE(CheckVmap(f, {ArgSpec{shape}}));
          // Few distinct values: ties must pick the first extreme, as per example.
          EXPECT_TRUE(CheckVmap(f, {ArgSpec{shape, IndexMaker(3)}}));
        }
      }
    }
  }
}

TEST(ReductionRules, SoftmaxLogSoftmaxCumsum) {
  using DimOp = Tensor (*)(const Tensor&, int64_t);
  const std::vector<std::pair<const char*, DimOp>> ops = {
      {"softmax", &softmax},   {"log_softmax", &log_softmax},   {"cumsum", &cumsum},
      {"cumprod", &cumprod}, {"logcumsumexp", &logcumsumexp}};
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 3, 4}, {0, 1, 2, -1, -3}}, {{5}, {0, -1}}, {{}, {0, -1}}};
  for (const auto& [name, op] : ops) {
    for (const auto& [shape, dims] : cases) {
      for (int64_t dim : dims) {
        SCOPED_TRACE(std::string(name) + " shape " + ShapeToString(shape) + " dim " +
                     std::to_string(dim));
        auto f = [op = op, dim = dim](const TensorList& a) { return TensorList{op(a[0], dim)}; };
        EXPECT_TRUE(CheckVmap(f, {ArgSpec{shape}}));
      }
    }
  }
  // cumsum of int64 and bool gives int64.
  auto int_cumsum = [](const TensorList& a) {
    return TensorList{cumsum(a[0], -1), cumsum(a[1], 0), cumsum(a[2], 0)};
  };
  EXPECT_TRUE(CheckVmap(int_cumsum, {ArgSpec{{2, 3}, IndexMaker(7)}, ArgSpec{{4}, BoolMaker()},
                                     ArgSpec{{}, BoolMaker()}}));
}

// linear_recurrence(a, b, dim): a and b broadcast, so every mix of batched and shared
// operands of different ranks must line up the examples.
TEST(ReductionRules, LinearRecurrence) {
  struct Case {
    Shape a, b;
    std::vector<int64_t> dims;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {2, 3}, {0, 1, -1}}, {{3}, {2, 3}, {0, 1, -2}}, {{2, 1}, {1, 4}, {0, 1}},
      {{4}, {4}, {0, -1}},          {{}, {3}, {0}},             {{}, {}, {0, -1}},
      {{2, 0}, {2, 0}, {1, 0}}};
  for (const Case& c : cases) {
    for (int64_t dim : c.dims) {
      SCOPED_TRACE("a " + ShapeToString(c.a) + " b " + ShapeToString(c.b) + " dim " +
                   std::to_string(dim));
      auto f = [dim = dim](const TensorList& x) {
        return TensorList{linear_recurrence(x[0], x[1], dim)};
      };
      EXPECT_TRUE(CheckVmap(f, {ArgSpec{c.a}, ArgSpec{c.b}}));
    }
  }
  // The op's own errors under vmap, naming the logical shapes.
  const Tensor a = zeros({3, 2, 4});
  const Tensor b = zeros({3, 5});
  const TensorListFn bad_shapes = [](const TensorList& x) {
    return TensorList{linear_recurrence(x[0], x[1], 0)};
  };
  EXPECT_FT_ERROR(vmap(bad_shapes)({a, b}), "linear_recurrence: shapes [2, 4] and [5]");
  const TensorListFn bad_dim = [](const TensorList& x) {
    return TensorList{linear_recurrence(x[0], x[0], 2)};
  };
  EXPECT_FT_ERROR(vmap(bad_dim)({zeros({3, 2, 4})}), "dim 2 is out of range");
}

TEST(ReductionRules, SumToSize) {
  const std::vector<std::pair<Shape, std::vector<Shape>>> cases = {
      {{2, 3, 4},
       {{3, 4}, {1, 4}, {3, 1}, {4}, {1}, {}, {2, 3, 4}, {2, 1, 1}, {1, 1, 1}, {2, 3, 1}}},
      {{3}, {{3}, {1}, {}}},
      {{}, {{}}},
      {{2, 1}, {{2, 1}, {1, 1}, {1}}},
  };
  for (const auto& [shape, sizes] : cases) {
    for (const Shape& size : sizes) {
      SCOPED_TRACE("sum_to_size " + ShapeToString(shape) + " -> " + ShapeToString(size));
      auto f = [size = size](const TensorList& a) { return TensorList{sum_to_size(a[0], size)}; };
      EXPECT_TRUE(CheckVmap(f, {ArgSpec{shape}}));
      // int64 and bool give int64.
      EXPECT_TRUE(CheckVmap(f, {ArgSpec{shape, IndexMaker(5)}}));
      EXPECT_TRUE(CheckVmap(f, {ArgSpec{shape, BoolMaker()}}));
    }
  }
}

TEST(ReductionRules, SumToSizeReturnsNewTensor) {
  // Even when nothing is summed, the result never aliases the input (as the op).
  const Tensor xs = UniformMaker()({3, 2, 4}, 7);
  Tensor got = vmap([](const Tensor& x) { return sum_to_size(x, {2, 4}); })(xs);
  EXPECT_TENSOR_EQ(got, xs);
  EXPECT_FALSE(got.storage().is_same(xs.storage()));
  Tensor lead = vmap([](const Tensor& x) { return sum_to_size(x, {4}); })(xs);
  EXPECT_TENSOR_NEAR(lead, sum(xs, {1}), 1e-12);
}

TEST(ReductionRules, EmptyDimListReducesOnlyLogicalDims) {
  const Tensor xs = UniformMaker()({3, 2, 4}, 11);
  auto f = [](const Tensor& x) { return sum(x); };
  Tensor got = vmap(TensorFn(f), 1)(xs);  // batch of 2, examples [3, 4]
  EXPECT_EQ(got.sizes(), IntArrayRef(Shape{2}));
  EXPECT_TENSOR_NEAR(got, sum(xs, {0, 2}), 1e-12);
  Tensor kept = vmap([](const Tensor& x) { return mean(x, {}, true); })(xs);
  EXPECT_EQ(kept.sizes(), IntArrayRef(Shape{3, 1, 1}));
  Tensor flat = vmap([](const Tensor& x) { return argmax(x, std::nullopt, true); })(xs);
  EXPECT_EQ(flat.sizes(), IntArrayRef(Shape{3, 1, 1}));
  EXPECT_EQ(flat.dtype(), kInt64);
}

TEST(ReductionRules, ErrorsNameLogicalDims) {
  const Tensor xs = zeros({3, 2, 4});  // batch 3, examples of rank 2 and shape [2, 4]
  auto run = [&](TensorFn f) { return vmap(std::move(f))(xs); };
  EXPECT_FT_ERROR(run([](const Tensor& x) { return sum(x, {2}); }),
                  "sum: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return mean(x, {-3}); }),
                  "mean: dim -3 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return prod(x, {1, -1}); }),
                  "prod: dim 1 appears more than once in the dim list [1, -1]");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return var(x, {0, 0}); }),
                  "var: dim 0 appears more than once");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return norm(x, 2.0, {5}); }),
                  "norm: dim 5 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return argmax(x, 2); }),
                  "argmax: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return softmax(x, -3); }),
                  "softmax: dim -3 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return log_softmax(x, 2); }),
                  "log_softmax: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return cumsum(x, 2); }),
                  "cumsum: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return sum_to_size(x, {3}); }),
                  "sum_to_size: size [3] is not expandable to size [2, 4]");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return sum_to_size(x, {1, 2, 4}); }),
                  "sum_to_size: size [1, 2, 4] is not expandable to size [2, 4]");
  // Rank-0 examples: dims 0 and -1 name the single element, once.
  const Tensor scalars = zeros({3});
  EXPECT_FT_ERROR(vmap([](const Tensor& x) { return sum(x, {0, -1}); })(scalars),
                  "sum: dim 0 appears more than once in the dim list [0, -1]");
  EXPECT_FT_ERROR(vmap([](const Tensor& x) { return amax(x, {1}); })(scalars),
                  "amax: dim 1 is out of range for a tensor of rank 0");
  EXPECT_FT_ERROR(vmap([](const Tensor& x) { return cumsum(x, 1); })(scalars),
                  "cumsum: dim 1 is out of range for a tensor of rank 0");
}

TEST(ReductionRules, ErrorsForEmptySlicesAndDtypes) {
  const Tensor empty = zeros({3, 2, 0});  // examples of shape [2, 0]
  auto run = [&](TensorFn f) { return vmap(std::move(f))(empty); };
  EXPECT_FT_ERROR(run([](const Tensor& x) { return amax(x, {1}); }),
                  "amax: cannot reduce over a zero-size dimension (dim 1 of shape [2, 0])");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return amin(x); }),
                  "amin: cannot reduce over a zero-size dimension (dim 1 of shape [2, 0])");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return norm(x, kInf, {-1}); }),
                  "norm: cannot reduce over a zero-size dimension (dim 1 of shape [2, 0])");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return norm(x, -2.0); }),
                  "norm has no identity");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return argmin(x, -1); }),
                  "argmin: cannot reduce over a zero-size dimension (dim 1 of shape [2, 0])");
  EXPECT_FT_ERROR(run([](const Tensor& x) { return argmax(x); }),
                  "argmax: cannot reduce over a zero-size dimension (the flattened input of "
                  "shape [2, 0] is empty)");
  // Reductions over the non-empty dim of such examples work.
  Tensor ok = run([](const Tensor& x) { return amax(x, {0}); });
  EXPECT_EQ(ok.sizes(), IntArrayRef(Shape{3, 0}));
  // Dtype errors come from the op itself.
  const Tensor ints = zeros({3, 2}, kInt64);
  EXPECT_FT_ERROR(vmap([](const Tensor& x) { return mean(x); })(ints),
                  "mean: could not infer the output dtype; input dtype must be floating point, "
                  "got int64 (shape [2])");
  EXPECT_FT_ERROR(vmap([](const Tensor& x) { return softmax(x, 0); })(ints),
                  "softmax: expected a floating point tensor (float32 or float64), got int64 of "
                  "shape [2]");
  EXPECT_FT_ERROR(vmap([](const Tensor& x) { return log_softmax(x, 0); })(ints),
                  "log_softmax: expected a floating point tensor");
  EXPECT_FT_ERROR(vmap([](const Tensor& x) { return var(x); })(ints),
                  "var: expected a floating point tensor (float32 or float64), got int64 of "
                  "shape [2]");
  EXPECT_FT_ERROR(vmap([](const Tensor& x) { return std(x, {0}); })(ints), "std: expected");
  EXPECT_FT_ERROR(vmap([](const Tensor& x) { return norm(x); })(ints), "norm: expected");
}

}  // namespace
}  // namespace ft

// The loss kernels (kernels/loss.h): mse_loss, l1_loss, smooth_l1_loss, huber_loss,
// binary_cross_entropy, binary_cross_entropy_with_logits, kl_div, nll_loss and cross_entropy
// (class indices and class probabilities), under every reduction (none, mean, sum, and
// kl_div's batchmean), with weights, pos_weight, ignore_index and label smoothing; float32,
// float64 and mixed dtypes; broadcasting; rank 0, size 0 and non-contiguous (transposed,
// strided, expanded) arguments; and the Check* helpers with every documented error. Oracle:
// each loss's definition (torch.nn.functional's formulas) evaluated in double precision by
// hand-written loops over to_vector<double>() values, reduced by hand.
#include "kernels/loss.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/test_helpers.h"
#include "kernels/view.h"
#include "tensor/copy.h"
#include "tensor/factories.h"
#include "tensor/tensor.h"
#include "tests/test_util.h"

namespace ft::kernels {
namespace {

using ::ft::testing::RandomInts;
using ::ft::testing::TransposedCopy;
using ::ft::testing::Uniform;

const std::vector<DType> kFloatDTypes = {kFloat32, kFloat64};
const std::vector<int64_t> kReductions = {kLossNone, kLossMean, kLossSum};
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// t's values broadcast to `shape`, row-major, in double.
std::vector<double> Values(const Tensor& t, IntArrayRef shape) {
  return expand(t, shape).to_vector<double>();
}

// The reduction of the per-element losses `none` (of `shape`), as a tensor of `dtype`.
Tensor Reduced(const std::vector<double>& none, IntArrayRef shape, int64_t reduction, DType dtype,
               double batch = 1) {
  double s = 0;
  for (double v : none) s += v;
  switch (reduction) {
    case kLossNone:
      return to(tensor(none, shape), dtype);
    case kLossMean:
      return scalar_tensor(none.empty() ? kNaN : s / static_cast<double>(none.size()), dtype);
    case kLossSum:
      return scalar_tensor(s, dtype);
    default:
      return scalar_tensor(s / batch, dtype);
  }
}

// Tolerances: float32 results carry ~1e-7 relative rounding per operation.
::testing::AssertionResult Near(const Tensor& actual, const Tensor& expected) {
  const bool f32 = expected.dtype() == kFloat32;
  return testing::TensorNear(actual, expected, f32 ? 2e-5 : 1e-12, f32 ? 2e-5 : 1e-12);
}

// ---------------------------------------------------------------------------------------
// The pointwise losses (mse, l1, smooth_l1, huber)

struct PointwiseCase {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&, int64_t)> kernel;
  std::function<double(double, double)> oracle;  // the loss of one (input, target) pair
};

std::vector<PointwiseCase> PointwiseCases() {
  const auto smooth = [](double beta) {
    return [beta](double x, double t) {
      const double z = std::fabs(x - t);
      return z < beta ? 0.5 * z * z / beta : z - 0.5 * beta;
    };
  };
  const auto huber = [](double delta) {
    return [delta](double x, double t) {
      const double z = std::fabs(x - t);
      return z < delta ? 0.5 * z * z : delta * (z - 0.5 * delta);
    };
  };
  return {
      {"mse_loss", [](const Tensor& x, const Tensor& t, int64_t r) { return mse_loss(x, t, r); },
       [](double x, double t) { return (x - t) * (x - t); }},
      {"l1_loss", [](const Tensor& x, const Tensor& t, int64_t r) { return l1_loss(x, t, r); },
       [](double x, double t) { return std::fabs(x - t); }},
      {"smooth_l1_loss(beta=1)",
       [](const Tensor& x, const Tensor& t, int64_t r) { return smooth_l1_loss(x, t, r, 1.0); },
       smooth(1.0)},
      {"smooth_l1_loss(beta=0.3)",
       [](const Tensor& x, const Tensor& t, int64_t r) { return smooth_l1_loss(x, t, r, 0.3); },
       smooth(0.3)},
      {"smooth_l1_loss(beta=0)",
       [](const Tensor& x, const Tensor& t, int64_t r) { return smooth_l1_loss(x, t, r, 0.0); },
       [](double x, double t) { return std::fabs(x - t); }},
      {"huber_loss(delta=1)",
       [](const Tensor& x, const Tensor& t, int64_t r) { return huber_loss(x, t, r, 1.0); },
       huber(1.0)},
      {"huber_loss(delta=2.5)",
       [](const Tensor& x, const Tensor& t, int64_t r) { return huber_loss(x, t, r, 2.5); },
       huber(2.5)},
  };
}

// Checks one pointwise case on (x, target) against its oracle under every reduction.
void CheckPointwise(const PointwiseCase& c, const Tensor& x, const Tensor& t, DType out_dtype) {
  const Shape shape = BroadcastShapes("test", x.sizes(), t.sizes());
  const std::vector<double> xv = Values(x, shape), tv = Values(t, shape);
  std::vector<double> none(xv.size());
  for (size_t i = 0; i < none.size(); ++i) none[i] = c.oracle(xv[i], tv[i]);
  for (int64_t r : kReductions) {
    SCOPED_TRACE(::testing::Message() << c.name << " reduction " << r);
    EXPECT_TRUE(Near(c.kernel(x, t, r), Reduced(none, shape, r, out_dtype)));
  }
}

TEST(PointwiseLossTest, MatchTheirDefinitionsUnderEveryReduction) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    // Differences of every size, so both branches of smooth_l1 / huber are hit.
    const Tensor x = Uniform({3, 5}, dtype, 1, -3, 3);
    const Tensor t = Uniform({3, 5}, dtype, 2, -3, 3);
    for (const PointwiseCase& c : PointwiseCases()) CheckPointwise(c, x, t, dtype);
  }
}

TEST(PointwiseLossTest, BroadcastInputAgainstTarget) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Uniform({3, 1}, dtype, 3);
    const Tensor t = Uniform({4}, dtype, 4);
    for (const PointwiseCase& c : PointwiseCases()) {
      EXPECT_EQ(c.kernel(x, t, kLossNone).sizes(), (Shape{3, 4})) << c.name;
      CheckPointwise(c, x, t, dtype);
      CheckPointwise(c, t, x, dtype);  // and the other way round
    }
    // A rank-0 target against a [2, 3] input.
    const Tensor s = scalar_tensor(0.5, dtype);
    for (const PointwiseCase& c : PointwiseCases())
      CheckPointwise(c, Uniform({2, 3}, dtype, 5), s, dtype);
  }
}

TEST(PointwiseLossTest, NonContiguousArguments) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Uniform({4, 3}, dtype, 6);
    const Tensor t = Uniform({4, 3}, dtype, 7);
    const Tensor expanded = expand(Uniform({1, 3}, dtype, 8), {4, 3});
    for (const PointwiseCase& c : PointwiseCases()) {
      CheckPointwise(c, TransposedCopy(x), testing::NonContiguousCopy(t), dtype);
      CheckPointwise(c, slice(Uniform({8, 3}, dtype, 9), 0, 0, 8, 2), expanded, dtype);
    }
  }
}

TEST(PointwiseLossTest, MixedDtypesComputeInTheirPromotedDtype) {
  const Tensor x = Uniform({5}, kFloat32, 10);
  const Tensor t = Uniform({5}, kFloat64, 11);
  for (const PointwiseCase& c : PointwiseCases()) {
    EXPECT_EQ(c.kernel(x, t, kLossNone).dtype(), kFloat64) << c.name;
    EXPECT_EQ(c.kernel(t, x, kLossSum).dtype(), kFloat64) << c.name;
    CheckPointwise(c, x, t, kFloat64);
  }
}

TEST(PointwiseLossTest, RankZeroAndSizeZero) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    for (const PointwiseCase& c : PointwiseCases()) {
      CheckPointwise(c, scalar_tensor(1.75, dtype), scalar_tensor(-0.5, dtype), dtype);
      // Size 0: "none" is empty, the mean of nothing is NaN (as torch), the sum 0.
      const Tensor e = zeros({0, 3}, dtype);
      EXPECT_EQ(c.kernel(e, e, kLossNone).sizes(), (Shape{0, 3})) << c.name;
      CheckPointwise(c, e, zeros({3}, dtype), dtype);
    }
  }
}

TEST(PointwiseLossTest, HandWorkedValues) {
  const Tensor x = tensor({0.0, 0.5, 3.0});
  const Tensor t = tensor({0.0, 0.0, 0.0});
  // |d| = 0, 0.5, 3: mse 0 + 0.25 + 9; smooth_l1(beta 1): 0, 0.125, 2.5; huber(delta 2): 0,
  // 0.125, 2 * (3 - 1) = 4.
  EXPECT_TENSOR_NEAR(mse_loss(x, t, kLossSum), scalar_tensor(9.25, kFloat64), 1e-15);
  EXPECT_TENSOR_NEAR(l1_loss(x, t, kLossMean), scalar_tensor(3.5 / 3, kFloat64), 1e-15);
  EXPECT_TENSOR_NEAR(smooth_l1_loss(x, t, kLossNone, 1.0), tensor({0.0, 0.125, 2.5}), 1e-15);
  EXPECT_TENSOR_NEAR(huber_loss(x, t, kLossNone, 2.0), tensor({0.0, 0.125, 4.0}), 1e-15);
  // At z == beta / delta the two branches meet: 0.5 beta and 0.5 delta^2.
  EXPECT_TENSOR_NEAR(smooth_l1_loss(tensor({2.0}), tensor({0.0}), kLossNone, 2.0), tensor({1.0}),
                     1e-15);
  EXPECT_TENSOR_NEAR(huber_loss(tensor({2.0}), tensor({0.0}), kLossNone, 2.0), tensor({2.0}),
                     1e-15);
}

TEST(PointwiseLossTest, Errors) {
  const Tensor x = zeros({2, 3});
  EXPECT_FT_ERROR(mse_loss(x, x, 3),
                  "mse_loss: reduction must be none (0), mean (1), sum (2), "
                  "got 3");
  EXPECT_FT_ERROR(l1_loss(x, x, -1),
                  "l1_loss: reduction must be none (0), mean (1), sum (2), "
                  "got -1");
  EXPECT_FT_ERROR(mse_loss(zeros({2, 3}, kInt64), x, kLossMean),
                  "mse_loss: expected floating point input and target, got int64 and float32");
  EXPECT_FT_ERROR(l1_loss(x, zeros({2, 3}, kBool), kLossMean),
                  "l1_loss: expected floating point input and target, got float32 and bool");
  EXPECT_FT_ERROR(huber_loss(x, zeros({4}), kLossMean, 1.0), "huber_loss: shapes [2, 3] and [4]");
  EXPECT_FT_ERROR(smooth_l1_loss(x, x, kLossMean, -0.5),
                  "smooth_l1_loss: beta must be non-negative, got -0.5");
  EXPECT_FT_ERROR(smooth_l1_loss(x, x, kLossMean, kNaN),
                  "smooth_l1_loss: beta must be non-negative, got nan");
  EXPECT_FT_ERROR(huber_loss(x, x, kLossMean, 0.0), "huber_loss: delta must be positive, got 0");
  EXPECT_FT_ERROR(huber_loss(x, x, kLossMean, -1.0), "huber_loss: delta must be positive, got -1");
}

// ---------------------------------------------------------------------------------------
// binary_cross_entropy

// -w (t log x + (1 - t) log(1 - x)), each log clamped at -100 (torch).
double BceOracle(double x, double t, double w) {
  const double log_p = std::max(std::log(x), -100.0);
  const double log_q = std::max(std::log(1 - x), -100.0);
  return -w * (t * log_p + (1 - t) * log_q);
}

void CheckBce(const Tensor& x, const Tensor& t, const std::optional<Tensor>& w, DType dtype) {
  const Shape shape(x.sizes().begin(), x.sizes().end());
  const std::vector<double> xv = Values(x, shape), tv = Values(t, shape);
  const std::vector<double> wv = w ? Values(*w, shape) : std::vector<double>(xv.size(), 1.0);
  std::vector<double> none(xv.size());
  for (size_t i = 0; i < none.size(); ++i) none[i] = BceOracle(xv[i], tv[i], wv[i]);
  for (int64_t r : kReductions) {
    SCOPED_TRACE(::testing::Message() << "reduction " << r);
    EXPECT_TRUE(Near(binary_cross_entropy(x, t, w, r), Reduced(none, shape, r, dtype)));
  }
}

TEST(BinaryCrossEntropyTest, MatchesTheDefinitionWithAndWithoutWeights) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Uniform({3, 4}, dtype, 20, 0.01, 0.99);
    const Tensor t = Uniform({3, 4}, dtype, 21, 0, 1);  // soft targets
    CheckBce(x, t, std::nullopt, dtype);
    CheckBce(x, t, Uniform({3, 4}, dtype, 22, 0, 2), dtype);
    CheckBce(x, t, Uniform({4}, dtype, 23, 0, 2), dtype);     // broadcast along rows
    CheckBce(x, t, Uniform({3, 1}, dtype, 24, 0, 2), dtype);  // broadcast along columns
    CheckBce(TransposedCopy(x), testing::NonContiguousCopy(t),
             expand(Uniform({1}, dtype, 25, 0, 2), {4}), dtype);
  }
}

TEST(BinaryCrossEntropyTest, LogsAreClampedAtMinus100) {
  // x = 0 or 1 gives finite losses: 100 when the target is the other end, 0 when it matches.
  const Tensor x = tensor({0.0, 0.0, 1.0, 1.0, 0.5});
  const Tensor t = tensor({0.0, 1.0, 0.0, 1.0, 1.0});
  EXPECT_TENSOR_NEAR(binary_cross_entropy(x, t, std::nullopt, kLossNone),
                     tensor({0.0, 100.0, 100.0, 0.0, std::log(2.0)}), 1e-12);
  CheckBce(to(x, kFloat32), to(t, kFloat32), std::nullopt, kFloat32);
  // x = 1e-50 (log = -115): also clamped.
  EXPECT_TENSOR_NEAR(binary_cross_entropy(tensor({1e-50}), tensor({1.0}), std::nullopt, kLossSum),
                     scalar_tensor(100.0, kFloat64), 1e-12);
}

TEST(BinaryCrossEntropyTest, MixedDtypesRankZeroAndSizeZero) {
  const Tensor x = Uniform({5}, kFloat32, 26, 0.1, 0.9);
  const Tensor t = Uniform({5}, kFloat64, 27, 0, 1);
  EXPECT_EQ(binary_cross_entropy(x, t, std::nullopt, kLossNone).dtype(), kFloat64);
  CheckBce(x, t, std::nullopt, kFloat64);
  CheckBce(scalar_tensor(0.25, kFloat64), scalar_tensor(1.0, kFloat64),
           scalar_tensor(3.0, kFloat64), kFloat64);
  CheckBce(zeros({0, 2}), zeros({0, 2}), std::nullopt, kFloat32);
}

TEST(BinaryCrossEntropyTest, Errors) {
  const Tensor x = full({2, 3}, 0.5);
  EXPECT_FT_ERROR(
      binary_cross_entropy(tensor({0.5f, 1.5f}), tensor({0.0f, 1.0f}), std::nullopt, kLossMean),
      "binary_cross_entropy: all elements of input should be between 0 and 1");
  EXPECT_FT_ERROR(binary_cross_entropy(tensor({-0.1}), tensor({0.0}), std::nullopt, kLossMean),
                  "binary_cross_entropy: all elements of input should be between 0 and 1");
  EXPECT_FT_ERROR(binary_cross_entropy(tensor({kNaN}), tensor({0.0}), std::nullopt, kLossMean),
                  "binary_cross_entropy: all elements of input should be between 0 and 1");
  EXPECT_FT_ERROR(binary_cross_entropy(x, zeros({3}), std::nullopt, kLossMean),
                  "binary_cross_entropy: target size [3] must be the same as input size [2, 3]");
  EXPECT_FT_ERROR(binary_cross_entropy(x, x, zeros({4}), kLossMean),
                  "binary_cross_entropy: weight of shape [4] does not broadcast to input shape "
                  "[2, 3]");
  EXPECT_FT_ERROR(binary_cross_entropy(x, x, zeros({1, 2, 3}), kLossMean),
                  "binary_cross_entropy: weight of shape [1, 2, 3] does not broadcast");
  EXPECT_FT_ERROR(binary_cross_entropy(x, x, zeros({3}, kInt64), kLossMean),
                  "binary_cross_entropy: expected a floating point weight, got int64");
  EXPECT_FT_ERROR(binary_cross_entropy(zeros({2}, kInt64), zeros({2}), std::nullopt, kLossMean),
                  "binary_cross_entropy: expected floating point input and target, got int64");
  EXPECT_FT_ERROR(binary_cross_entropy(x, x, std::nullopt, 3),
                  "binary_cross_entropy: reduction must be none (0), mean (1), sum (2), got 3");
}

// ---------------------------------------------------------------------------------------
// binary_cross_entropy_with_logits

// softplus(z) = log(1 + e^z), evaluated without overflow.
double Softplus(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }

// w (pw t (-log sigmoid(x)) + (1 - t) (-log(1 - sigmoid(x)))), with -log sigmoid(x) =
// softplus(-x) and -log(1 - sigmoid(x)) = softplus(x).
double BceLogitsOracle(double x, double t, double w, double pw) {
  return w * (pw * t * Softplus(-x) + (1 - t) * Softplus(x));
}

void CheckBceLogits(const Tensor& x, const Tensor& t, const std::optional<Tensor>& w,
                    const std::optional<Tensor>& pw, DType dtype) {
  const Shape shape(x.sizes().begin(), x.sizes().end());
  const std::vector<double> xv = Values(x, shape), tv = Values(t, shape);
  const std::vector<double> wv = w ? Values(*w, shape) : std::vector<double>(xv.size(), 1.0);
  const std::vector<double> pv = pw ? Values(*pw, shape) : std::vector<double>(xv.size(), 1.0);
  std::vector<double> none(xv.size());
  for (size_t i = 0; i < none.size(); ++i) none[i] = BceLogitsOracle(xv[i], tv[i], wv[i], pv[i]);
  for (int64_t r : kReductions) {
    SCOPED_TRACE(::testing::Message() << "reduction " << r);
    EXPECT_TRUE(
        Near(binary_cross_entropy_with_logits(x, t, w, r, pw), Reduced(none, shape, r, dtype)));
  }
}

TEST(BinaryCrossEntropyWithLogitsTest, MatchesTheDefinitionWithWeightAndPosWeight) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Uniform({3, 4}, dtype, 30, -4, 4);
    const Tensor t = Uniform({3, 4}, dtype, 31, 0, 1);
    const Tensor w = Uniform({3, 1}, dtype, 32, 0, 2);
    const Tensor pw = Uniform({4}, dtype, 33, 0.5, 3);  // one per class (last dim)
    CheckBceLogits(x, t, std::nullopt, std::nullopt, dtype);
    CheckBceLogits(x, t, w, std::nullopt, dtype);
    CheckBceLogits(x, t, std::nullopt, pw, dtype);
    CheckBceLogits(x, t, w, pw, dtype);
    CheckBceLogits(TransposedCopy(x), testing::NonContiguousCopy(t),
                   expand(Uniform({1, 1}, dtype, 34, 0, 2), {3, 1}),
                   slice(Uniform({8}, dtype, 35, 0.5, 3), 0, 0, 8, 2), dtype);
  }
}

TEST(BinaryCrossEntropyWithLogitsTest, StableForLargeLogits) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    // A naive log(sigmoid(x)) overflows to -inf here; the loss is |x| where the target
    // disagrees with the sign of x and ~0 where it agrees.
    const Tensor x = to(tensor({100.0, -100.0, 100.0, -100.0, 800.0, -800.0}), dtype);
    const Tensor t = to(tensor({0.0, 1.0, 1.0, 0.0, 0.0, 0.0}), dtype);
    EXPECT_TRUE(Near(binary_cross_entropy_with_logits(x, t, std::nullopt, kLossNone, std::nullopt),
                     to(tensor({100.0, 100.0, 0.0, 0.0, 800.0, 0.0}), dtype)));
    CheckBceLogits(x, t, std::nullopt, to(tensor({2.0}), dtype), dtype);
  }
}

TEST(BinaryCrossEntropyWithLogitsTest, MixedDtypesRankZeroAndSizeZero) {
  const Tensor x = Uniform({2, 2}, kFloat64, 36);
  const Tensor t = Uniform({2, 2}, kFloat32, 37, 0, 1);
  CheckBceLogits(x, t, Uniform({2}, kFloat32, 38, 0, 1), std::nullopt, kFloat64);
  CheckBceLogits(scalar_tensor(-1.5f, kFloat32), scalar_tensor(1.0f, kFloat32), std::nullopt,
                 scalar_tensor(4.0f, kFloat32), kFloat32);
  CheckBceLogits(zeros({0}), zeros({0}), std::nullopt, ones({1}), kFloat32);
}

TEST(BinaryCrossEntropyWithLogitsTest, Errors) {
  const Tensor x = zeros({2, 3});
  const char* op = "binary_cross_entropy_with_logits";
  EXPECT_FT_ERROR(
      binary_cross_entropy_with_logits(x, zeros({2, 1}), std::nullopt, kLossMean, std::nullopt),
      std::string(op) + ": target size [2, 1] must be the same as input size [2, 3]");
  EXPECT_FT_ERROR(binary_cross_entropy_with_logits(x, x, std::nullopt, kLossMean, zeros({2})),
                  std::string(op) +
                      ": pos_weight of shape [2] does not broadcast to input "
                      "shape [2, 3]");
  EXPECT_FT_ERROR(binary_cross_entropy_with_logits(x, x, zeros({3, 3}), kLossMean, std::nullopt),
                  std::string(op) + ": weight of shape [3, 3] does not broadcast");
  EXPECT_FT_ERROR(
      binary_cross_entropy_with_logits(x, x, std::nullopt, kLossMean, zeros({3}, kBool)),
      std::string(op) + ": expected a floating point pos_weight, got bool");
  EXPECT_FT_ERROR(binary_cross_entropy_with_logits(x, zeros({2, 3}, kInt64), std::nullopt,
                                                   kLossMean, std::nullopt),
                  std::string(op) +
                      ": expected floating point input and target, got float32 "
                      "and int64");
  EXPECT_FT_ERROR(binary_cross_entropy_with_logits(x, x, std::nullopt, 5, std::nullopt),
                  std::string(op) + ": reduction must be none (0), mean (1), sum (2), got 5");
}

// ---------------------------------------------------------------------------------------
// kl_div

void CheckKlDiv(const Tensor& x, const Tensor& t, bool log_target, DType dtype) {
  const Shape shape = BroadcastShapes("test", x.sizes(), t.sizes());
  const std::vector<double> xv = Values(x, shape), tv = Values(t, shape);
  std::vector<double> none(xv.size());
  for (size_t i = 0; i < none.size(); ++i) {
    if (log_target) {
      none[i] = std::exp(tv[i]) * (tv[i] - xv[i]);
    } else {
      // t (log t - x), with 0 log 0 = 0 (torch's xlogy).
      none[i] = (tv[i] == 0 ? 0.0 : tv[i] * std::log(tv[i])) - tv[i] * xv[i];
    }
  }
  const double batch = x.dim() == 0 ? 1.0 : static_cast<double>(x.size(0));
  for (int64_t r : {kLossNone, kLossMean, kLossSum, kLossBatchMean}) {
    SCOPED_TRACE(::testing::Message() << "log_target " << log_target << " reduction " << r);
    EXPECT_TRUE(Near(kl_div(x, t, r, log_target), Reduced(none, shape, r, dtype, batch)));
  }
}

TEST(KlDivTest, MatchesTheDefinitionUnderEveryReductionIncludingBatchmean) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Uniform({4, 3}, dtype, 40, -3, 0);  // log-probabilities
    const Tensor t = Uniform({4, 3}, dtype, 41, 0, 1);
    CheckKlDiv(x, t, false, dtype);
    CheckKlDiv(x, Uniform({4, 3}, dtype, 42, -3, 0), true, dtype);
    CheckKlDiv(TransposedCopy(x), testing::NonContiguousCopy(t), false, dtype);
    // Broadcasting: batchmean divides by the input's dim 0 (4 here, 1 below).
    CheckKlDiv(x, Uniform({3}, dtype, 43, 0, 1), false, dtype);
    CheckKlDiv(Uniform({1, 3}, dtype, 44, -3, 0), t, false, dtype);
  }
}

TEST(KlDivTest, ZeroTargetsContributeZeroAndNegativeTargetsAreNaN) {
  const Tensor x = tensor({-1.0, -2.0, -0.5});
  const Tensor t = tensor({0.0, 0.5, -0.25});
  const std::vector<double> v = kl_div(x, t, kLossNone, false).to_vector<double>();
  EXPECT_EQ(v[0], 0.0);
  EXPECT_NEAR(v[1], 0.5 * std::log(0.5) + 1.0, 1e-15);
  EXPECT_TRUE(std::isnan(v[2]));  // xlogy(-0.25, -0.25) is NaN in torch too
}

TEST(KlDivTest, RankZeroSizeZeroAndMixedDtypes) {
  // A rank-0 input: batchmean is the sum.
  CheckKlDiv(scalar_tensor(-0.7, kFloat64), scalar_tensor(0.3, kFloat64), false, kFloat64);
  CheckKlDiv(scalar_tensor(-0.7f, kFloat32), scalar_tensor(-1.2f, kFloat32), true, kFloat32);
  // Size 0: batchmean over a batch of 0 is 0 / 0.
  CheckKlDiv(zeros({0, 2}), zeros({0, 2}), false, kFloat32);
  EXPECT_TRUE(
      std::isnan(kl_div(zeros({0, 2}), zeros({0, 2}), kLossBatchMean, false).item<float>()));
  const Tensor x = Uniform({2, 2}, kFloat32, 45, -2, 0);
  const Tensor t = Uniform({2, 2}, kFloat64, 46, 0, 1);
  EXPECT_EQ(kl_div(x, t, kLossNone, false).dtype(), kFloat64);
  CheckKlDiv(x, t, false, kFloat64);
}

TEST(KlDivTest, Errors) {
  const Tensor x = zeros({2, 3});
  EXPECT_FT_ERROR(kl_div(x, x, 4, false),
                  "kl_div: reduction must be none (0), mean (1), sum (2) "
                  "or batchmean (3), got 4");
  EXPECT_FT_ERROR(kl_div(x, zeros({2, 3}, kInt64), kLossMean, false),
                  "kl_div: expected floating point input and target, got float32 and int64");
  EXPECT_FT_ERROR(kl_div(x, zeros({3, 3}), kLossMean, true), "kl_div: shapes [2, 3] and [3, 3]");
  // batchmean is kl_div's alone.
  EXPECT_FT_ERROR(mse_loss(x, x, kLossBatchMean),
                  "mse_loss: reduction must be none (0), mean "
                  "(1), sum (2), got 3");
}

// ---------------------------------------------------------------------------------------
// nll_loss and cross_entropy

// The layout of a class loss's input: [C] (n = 1, k = 1) or [N, C, d1, ...] (k = prod d).
struct ClassDims {
  int64_t n, c, k;
};
ClassDims DimsOf(IntArrayRef shape) {
  if (shape.size() == 1) return {1, shape[0], 1};
  int64_t k = 1;
  for (size_t d = 2; d < shape.size(); ++d) k *= shape[d];
  return {shape[0], shape[1], k};
}

// Log-softmax over the class dim, in double (shifted by the max).
std::vector<double> LogSoftmaxOracle(const std::vector<double>& x, ClassDims d) {
  std::vector<double> out(x.size());
  for (int64_t i = 0; i < d.n; ++i) {
    for (int64_t j = 0; j < d.k; ++j) {
      const auto at = [&](int64_t c) { return static_cast<size_t>((i * d.c + c) * d.k + j); };
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < d.c; ++c) m = std::max(m, x[at(c)]);
      double s = 0;
      for (int64_t c = 0; c < d.c; ++c) s += std::exp(x[at(c)] - m);
      for (int64_t c = 0; c < d.c; ++c) out[at(c)] = x[at(c)] - m - std::log(s);
    }
  }
  return out;
}

// The class-index loss over log-probabilities `lp`, with label smoothing e (0 for nll_loss):
// per target position (1 - e) (-w[t] lp[t]) + e / C (-sum_c w[c] lp[c]), 0 where t ==
// ignore_index; mean divides the sum by the summed w[t] of the kept targets.
Tensor ClassOracle(const std::vector<double>& lp, ClassDims d, const Tensor& target,
                   const std::optional<Tensor>& weight, int64_t ignore_index, int64_t reduction,
                   double e, DType dtype) {
  const std::vector<int64_t> t = target.to_vector<int64_t>();
  const std::vector<double> w =
      weight ? weight->to_vector<double>() : std::vector<double>(static_cast<size_t>(d.c), 1.0);
  std::vector<double> none(t.size(), 0.0);
  double wsum = 0;
  for (int64_t i = 0; i < d.n; ++i) {
    for (int64_t j = 0; j < d.k; ++j) {
      const size_t pos = static_cast<size_t>(i * d.k + j);
      if (t[pos] == ignore_index) continue;
      const auto at = [&](int64_t c) { return static_cast<size_t>((i * d.c + c) * d.k + j); };
      double smooth = 0;
      for (int64_t c = 0; c < d.c; ++c) smooth -= w[static_cast<size_t>(c)] * lp[at(c)];
      const double wt = w[static_cast<size_t>(t[pos])];
      none[pos] = (1 - e) * (-wt * lp[at(t[pos])]) + e / static_cast<double>(d.c) * smooth;
      wsum += wt;
    }
  }
  if (reduction == kLossNone) return to(tensor(none, target.sizes()), dtype);
  double s = 0;
  for (double v : none) s += v;
  return scalar_tensor(reduction == kLossSum ? s : s / wsum, dtype);
}

void CheckNll(const Tensor& x, const Tensor& target, const std::optional<Tensor>& weight,
              int64_t ignore_index) {
  const ClassDims d = DimsOf(x.sizes());
  const std::vector<double> lp = x.to_vector<double>();
  for (int64_t r : kReductions) {
    SCOPED_TRACE(::testing::Message() << "nll_loss reduction " << r);
    EXPECT_TRUE(Near(nll_loss(x, target, weight, ignore_index, r),
                     ClassOracle(lp, d, target, weight, ignore_index, r, 0.0, x.dtype())));
  }
}

void CheckCrossEntropy(const Tensor& x, const Tensor& target, const std::optional<Tensor>& weight,
                       int64_t ignore_index, double e) {
  const ClassDims d = DimsOf(x.sizes());
  const std::vector<double> lp = LogSoftmaxOracle(x.to_vector<double>(), d);
  for (int64_t r : kReductions) {
    SCOPED_TRACE(::testing::Message() << "cross_entropy reduction " << r << " smoothing " << e);
    EXPECT_TRUE(Near(cross_entropy(x, target, weight, ignore_index, r, e),
                     ClassOracle(lp, d, target, weight, ignore_index, r, e, x.dtype())));
  }
}

// Seeded class indices in [0, c) as an int64 tensor of `shape`, with `ignored` positions set
// to ignore_index.
Tensor Labels(IntArrayRef shape, int64_t c, uint32_t seed, const std::vector<size_t>& ignored = {},
              int64_t ignore_index = -100) {
  std::vector<int64_t> v = RandomInts(Numel(shape), 0, c, seed);
  for (size_t i : ignored) v[i] = ignore_index;
  return tensor(v, shape);
}

TEST(NllLossTest, MatchesTheDefinitionForEveryInputRank) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor w = Uniform({4}, dtype, 50, 0.2, 2);
    // [N, C] with target [N].
    const Tensor x2 = Uniform({5, 4}, dtype, 51, -3, 0);
    const Tensor t2 = Labels({5}, 4, 52);
    CheckNll(x2, t2, std::nullopt, -100);
    CheckNll(x2, t2, w, -100);
    // [N, C, d1, d2] with target [N, d1, d2].
    const Tensor x4 = Uniform({2, 4, 3, 2}, dtype, 53, -3, 0);
    const Tensor t4 = Labels({2, 3, 2}, 4, 54);
    CheckNll(x4, t4, std::nullopt, -100);
    CheckNll(x4, t4, w, -100);
    // [C] with a rank-0 target.
    const Tensor x1 = Uniform({4}, dtype, 55, -3, 0);
    const Tensor t0 = tensor(std::vector<int64_t>{2}, {});
    EXPECT_EQ(nll_loss(x1, t0, std::nullopt, -100, kLossNone).sizes(), IntArrayRef{});
    CheckNll(x1, t0, std::nullopt, -100);
    CheckNll(x1, t0, w, -100);
  }
}

TEST(NllLossTest, HandWorkedWeightedMeanDividesByTheTargetsWeights) {
  // -w[t] x[n, t]: rows pick 0.5 (w 2), 0.25 (w 1), 1.0 (w 3); mean = (1 + 0.25 + 3) / 6.
  const Tensor x = tensor({-0.5, -9.0, -9.0, -9.0, -0.25, -9.0, -9.0, -9.0, -1.0}, {3, 3});
  const Tensor t = tensor(std::vector<int64_t>{0, 1, 2});
  const Tensor w = tensor({2.0, 1.0, 3.0});
  EXPECT_TENSOR_NEAR(nll_loss(x, t, w, -100, kLossNone), tensor({1.0, 0.25, 3.0}), 1e-15);
  EXPECT_TENSOR_NEAR(nll_loss(x, t, w, -100, kLossMean), scalar_tensor(4.25 / 6, kFloat64), 1e-15);
  EXPECT_TENSOR_NEAR(nll_loss(x, t, w, -100, kLossSum), scalar_tensor(4.25, kFloat64), 1e-15);
}

TEST(NllLossTest, IgnoreIndexDropsTargetsFromSumAndDenominator) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Uniform({6, 3}, dtype, 56, -3, 0);
    const Tensor w = Uniform({3}, dtype, 57, 0.5, 2);
    // The default -100, and an ignore_index that is a valid class.
    CheckNll(x, Labels({6}, 3, 58, {1, 4}), w, -100);
    const Tensor t = tensor(std::vector<int64_t>{0, 1, 2, 1, 1, 0});
    CheckNll(x, t, std::nullopt, 1);
    CheckNll(x, t, w, 1);
    const std::vector<double> none = nll_loss(x, t, w, 1, kLossNone).to_vector<double>();
    EXPECT_EQ(none[1], 0.0);
    EXPECT_EQ(none[3], 0.0);
    // Every target ignored: the mean is 0 / 0 = NaN (torch), the sum 0.
    const Tensor all = full({6}, int64_t{-100}, kInt64);
    EXPECT_TRUE(std::isnan(nll_loss(x, all, w, -100, kLossMean).item<double>()));
    EXPECT_EQ(nll_loss(x, all, w, -100, kLossSum).item<double>(), 0.0);
  }
}

TEST(NllLossTest, NonContiguousArgumentsAndSizeZero) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = TransposedCopy(Uniform({5, 3}, dtype, 59, -3, 0));
    const Tensor t = testing::NonContiguousCopy(Labels({5}, 3, 60));
    const Tensor w = testing::NonContiguousCopy(Uniform({3}, dtype, 61, 0.5, 2));
    ASSERT_FALSE(x.is_contiguous());
    CheckNll(x, t, w, -100);
    CheckNll(slice(Uniform({10, 3}, dtype, 62, -3, 0), 0, 1, 10, 2), t, std::nullopt, -100);
    // An empty batch: "none" is [0], the mean NaN, the sum 0.
    const Tensor e = zeros({0, 3}, dtype);
    const Tensor te = zeros({0}, kInt64);
    EXPECT_EQ(nll_loss(e, te, std::nullopt, -100, kLossNone).sizes(), (Shape{0}));
    EXPECT_TRUE(std::isnan(nll_loss(e, te, std::nullopt, -100, kLossMean).item<double>()));
    EXPECT_EQ(nll_loss(e, te, std::nullopt, -100, kLossSum).item<double>(), 0.0);
  }
}

TEST(NllLossTest, Errors) {
  const Tensor x = zeros({2, 3});
  const Tensor t = tensor(std::vector<int64_t>{0, 2});
  EXPECT_FT_ERROR(nll_loss(x, tensor(std::vector<int64_t>{0, 3}), std::nullopt, -100, kLossMean),
                  "nll_loss: target 3 is out of bounds for 3 classes");
  EXPECT_FT_ERROR(nll_loss(x, tensor(std::vector<int64_t>{-1, 0}), std::nullopt, -100, kLossSum),
                  "nll_loss: target -1 is out of bounds for 3 classes");
  EXPECT_FT_ERROR(nll_loss(x, zeros({2}), std::nullopt, -100, kLossMean),
                  "nll_loss: expected an int64 target of class indices, got float32");
  EXPECT_FT_ERROR(nll_loss(x, zeros({3}, kInt64), std::nullopt, -100, kLossMean),
                  "nll_loss: target shape [3] does not match input shape [2, 3] (expected target "
                  "shape [2])");
  EXPECT_FT_ERROR(nll_loss(zeros({3}), zeros({1}, kInt64), std::nullopt, -100, kLossMean),
                  "nll_loss: target shape [1] does not match input shape [3] (expected target "
                  "shape [])");
  EXPECT_FT_ERROR(nll_loss(x, t, zeros({4}), -100, kLossMean),
                  "nll_loss: weight must be a 1-D tensor of 3 class weights, got [4]");
  EXPECT_FT_ERROR(nll_loss(x, t, zeros({1, 3}), -100, kLossMean),
                  "nll_loss: weight must be a 1-D tensor of 3 class weights, got [1, 3]");
  EXPECT_FT_ERROR(nll_loss(x, t, zeros({3}, kInt64), -100, kLossMean),
                  "nll_loss: expected a floating point weight, got int64");
  EXPECT_FT_ERROR(nll_loss(zeros({}), zeros({}, kInt64), std::nullopt, -100, kLossMean),
                  "nll_loss: expected an input of 1 or more dims ([C] or [N, C, d1, ...]), got []");
  EXPECT_FT_ERROR(nll_loss(zeros({2, 3}, kInt64), t, std::nullopt, -100, kLossMean),
                  "nll_loss: expected a floating point input, got int64");
  EXPECT_FT_ERROR(nll_loss(x, t, std::nullopt, -100, 3),
                  "nll_loss: reduction must be none (0), mean (1), sum (2), got 3");
}

TEST(CrossEntropyTest, ClassIndicesMatchLogSoftmaxThenNll) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor w = Uniform({4}, dtype, 70, 0.2, 2);
    const Tensor x2 = Uniform({5, 4}, dtype, 71, -3, 3);
    const Tensor t2 = Labels({5}, 4, 72, {3});
    const Tensor x3 = Uniform({2, 4, 3}, dtype, 73, -3, 3);
    const Tensor t3 = Labels({2, 3}, 4, 74, {0, 4});
    const Tensor x1 = Uniform({4}, dtype, 75, -3, 3);
    const Tensor t0 = tensor(std::vector<int64_t>{1}, {});
    for (const std::optional<Tensor>& weight :
         {std::optional<Tensor>(), std::optional<Tensor>(w)}) {
      CheckCrossEntropy(x2, t2, weight, -100, 0.0);
      CheckCrossEntropy(x3, t3, weight, -100, 0.0);
      CheckCrossEntropy(x1, t0, weight, -100, 0.0);
    }
  }
}

TEST(CrossEntropyTest, ClassIndicesWithLabelSmoothingWeightsAndIgnoreIndex) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor w = Uniform({4}, dtype, 76, 0.2, 2);
    const Tensor x = Uniform({6, 4}, dtype, 77, -3, 3);
    const Tensor t = Labels({6}, 4, 78, {2, 5}, 3);  // ignore_index 3 is a valid class
    const Tensor x3 = Uniform({2, 4, 2, 2}, dtype, 79, -3, 3);
    const Tensor t3 = Labels({2, 2, 2}, 4, 80, {1, 6});
    for (double e : {0.1, 0.5, 1.0}) {
      CheckCrossEntropy(x, t, std::nullopt, 3, e);
      CheckCrossEntropy(x, t, w, 3, e);
      CheckCrossEntropy(x3, t3, w, -100, e);
      CheckCrossEntropy(Uniform({4}, dtype, 81, -3, 3), tensor(std::vector<int64_t>{0}, {}), w,
                        -100, e);
    }
  }
}

TEST(CrossEntropyTest, HandWorkedUniformLogits) {
  // Equal logits: log_softmax = -log C for every class, so the loss is log C, smoothed or not.
  const Tensor x = zeros({2, 4}, kFloat64);
  const Tensor t = tensor(std::vector<int64_t>{0, 3});
  EXPECT_TENSOR_NEAR(cross_entropy(x, t, std::nullopt, -100, kLossMean, 0.0),
                     scalar_tensor(std::log(4.0), kFloat64), 1e-15);
  EXPECT_TENSOR_NEAR(cross_entropy(x, t, std::nullopt, -100, kLossNone, 0.3),
                     tensor({std::log(4.0), std::log(4.0)}), 1e-15);
}

TEST(CrossEntropyTest, StableForLargeLogitsAndNonContiguous) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = to(tensor({1000.0, 0.0, -1000.0, -500.0, 500.0, 0.0}, {2, 3}), dtype);
    const Tensor t = tensor(std::vector<int64_t>{2, 1});
    // Row 0: target -1000 against a max of 1000: 2000. Row 1: the max: ~0.
    EXPECT_TRUE(Near(cross_entropy(x, t, std::nullopt, -100, kLossNone, 0.0),
                     to(tensor({2000.0, 0.0}), dtype)));
    CheckCrossEntropy(TransposedCopy(x), testing::NonContiguousCopy(t), std::nullopt, -100, 0.2);
    CheckCrossEntropy(TransposedCopy(Uniform({3, 5}, dtype, 82)),
                      testing::NonContiguousCopy(Labels({3}, 5, 83)),
                      testing::NonContiguousCopy(Uniform({5}, dtype, 84, 0.2, 2)), -100, 0.25);
  }
}

// The probability-target loss: -sum_c w[c] ((1 - e) p[c] + e / C) lsm[c] per position; mean
// divides by the number of positions (numel / C).
void CheckProbCrossEntropy(const Tensor& x, const Tensor& p, const std::optional<Tensor>& weight,
                           double e, DType dtype) {
  const ClassDims d = DimsOf(x.sizes());
  const std::vector<double> lp = LogSoftmaxOracle(x.to_vector<double>(), d);
  const std::vector<double> pv = p.to_vector<double>();
  const std::vector<double> w =
      weight ? weight->to_vector<double>() : std::vector<double>(static_cast<size_t>(d.c), 1.0);
  std::vector<double> none(static_cast<size_t>(d.n * d.k), 0.0);
  for (int64_t i = 0; i < d.n; ++i) {
    for (int64_t j = 0; j < d.k; ++j) {
      for (int64_t c = 0; c < d.c; ++c) {
        const size_t at = static_cast<size_t>((i * d.c + c) * d.k + j);
        const double tc = (1 - e) * pv[at] + e / static_cast<double>(d.c);
        none[static_cast<size_t>(i * d.k + j)] -= w[static_cast<size_t>(c)] * tc * lp[at];
      }
    }
  }
  Shape none_shape;  // the input's shape without the class dim
  for (int64_t dim = 0; dim < x.dim(); ++dim) {
    if (dim != LossClassDim(x.dim())) none_shape.push_back(x.size(dim));
  }
  for (int64_t r : kReductions) {
    SCOPED_TRACE(::testing::Message() << "reduction " << r << " smoothing " << e);
    EXPECT_TRUE(Near(cross_entropy(x, p, weight, -100, r, e), Reduced(none, none_shape, r, dtype)));
  }
}

TEST(CrossEntropyTest, ClassProbabilitiesWithWeightsAndLabelSmoothing) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor w = Uniform({3}, dtype, 90, 0.2, 2);
    const Tensor x = Uniform({4, 3}, dtype, 91, -3, 3);
    const Tensor p = Uniform({4, 3}, dtype, 92, 0, 1);  // need not sum to 1
    const Tensor x3 = Uniform({2, 3, 5}, dtype, 93, -3, 3);
    const Tensor p3 = Uniform({2, 3, 5}, dtype, 94, 0, 1);
    for (double e : {0.0, 0.2, 1.0}) {
      CheckProbCrossEntropy(x, p, std::nullopt, e, dtype);
      CheckProbCrossEntropy(x, p, w, e, dtype);
      CheckProbCrossEntropy(x3, p3, w, e, dtype);
      CheckProbCrossEntropy(Uniform({3}, dtype, 95), Uniform({3}, dtype, 96, 0, 1), w, e, dtype);
      CheckProbCrossEntropy(TransposedCopy(x), testing::NonContiguousCopy(p), w, e, dtype);
    }
  }
}

TEST(CrossEntropyTest, ClassProbabilitiesMixedDtypesAndSizeZero) {
  const Tensor x = Uniform({2, 3}, kFloat32, 97);
  const Tensor p = Uniform({2, 3}, kFloat64, 98, 0, 1);
  EXPECT_EQ(cross_entropy(x, p, std::nullopt, -100, kLossNone, 0.0).dtype(), kFloat64);
  CheckProbCrossEntropy(x, p, std::nullopt, 0.1, kFloat64);
  // An empty batch: the mean over no positions is NaN.
  CheckProbCrossEntropy(zeros({0, 3}), zeros({0, 3}), std::nullopt, 0.0, kFloat32);
}

TEST(CrossEntropyTest, Errors) {
  const Tensor x = zeros({2, 3});
  const Tensor t = tensor(std::vector<int64_t>{0, 2});
  EXPECT_FT_ERROR(cross_entropy(x, t, std::nullopt, -100, kLossMean, 1.5),
                  "cross_entropy: label_smoothing must be in [0, 1], got 1.5");
  EXPECT_FT_ERROR(cross_entropy(x, t, std::nullopt, -100, kLossMean, -0.1),
                  "cross_entropy: label_smoothing must be in [0, 1], got -0.1");
  EXPECT_FT_ERROR(cross_entropy(x, t, std::nullopt, -100, kLossMean, kNaN),
                  "cross_entropy: label_smoothing must be in [0, 1], got nan");
  EXPECT_FT_ERROR(
      cross_entropy(x, tensor(std::vector<int64_t>{3, 0}), std::nullopt, -100, kLossMean, 0.0),
      "cross_entropy: target 3 is out of bounds for 3 classes");
  EXPECT_FT_ERROR(
      cross_entropy(x, tensor(std::vector<int64_t>{3, 0}), std::nullopt, -100, kLossMean, 0.5),
      "cross_entropy: target 3 is out of bounds for 3 classes");
  EXPECT_FT_ERROR(cross_entropy(x, zeros({2, 3}, kBool), std::nullopt, -100, kLossMean, 0.0),
                  "cross_entropy: expected an int64 target of class indices, got bool");
  EXPECT_FT_ERROR(cross_entropy(x, zeros({3}, kInt64), std::nullopt, -100, kLossMean, 0.0),
                  "cross_entropy: target shape [3] does not match input shape [2, 3]");
  EXPECT_FT_ERROR(cross_entropy(x, t, zeros({2}), -100, kLossMean, 0.0),
                  "cross_entropy: weight must be a 1-D tensor of 3 class weights, got [2]");
  // Probability targets.
  EXPECT_FT_ERROR(cross_entropy(x, zeros({3, 3}), std::nullopt, -100, kLossMean, 0.0),
                  "cross_entropy: a target of class probabilities must have the input's shape "
                  "[2, 3], got [3, 3]");
  EXPECT_FT_ERROR(cross_entropy(x, zeros({2, 3}), std::nullopt, 0, kLossMean, 0.0),
                  "cross_entropy: ignore_index (0) is not supported for targets of class "
                  "probabilities");
  EXPECT_FT_ERROR(cross_entropy(x, zeros({2, 3}), zeros({4}), -100, kLossMean, 0.0),
                  "cross_entropy: weight must be a 1-D tensor of 3 class weights, got [4]");
  EXPECT_FT_ERROR(cross_entropy(zeros({}), zeros({}), std::nullopt, -100, kLossMean, 0.0),
                  "cross_entropy: expected an input of 1 or more dims");
  EXPECT_FT_ERROR(
      cross_entropy(zeros({2, 3}, kInt64), zeros({2, 3}), std::nullopt, -100, kLossMean, 0.0),
      "cross_entropy: expected a floating point input, got int64");
  EXPECT_FT_ERROR(cross_entropy(x, t, std::nullopt, -100, 3, 0.0),
                  "cross_entropy: reduction must be none (0), mean (1), sum (2), got 3");
}

TEST(LossLayoutTest, ContiguousViewsAtAStorageOffset) {
  // Rows of bigger tensors: contiguous, but their element 0 is not the storage's.
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = narrow(Uniform({6, 4}, dtype, 100, 0.05, 0.95), 0, 2, 3);
    const Tensor t = narrow(Uniform({5, 4}, dtype, 101, 0, 1), 0, 1, 3);
    const Tensor w = narrow(Uniform({6}, dtype, 102, 0.5, 2), 0, 2, 4);
    ASSERT_TRUE(x.is_contiguous());
    ASSERT_GT(x.storage_offset(), 0);
    for (const PointwiseCase& c : PointwiseCases()) CheckPointwise(c, x, t, dtype);
    CheckBce(x, t, w, dtype);
    CheckBceLogits(x, t, w, w, dtype);
    CheckKlDiv(x, t, false, dtype);
    const Tensor labels = narrow(Labels({5}, 4, 103), 0, 2, 3);
    CheckNll(x, labels, w, -100);
    CheckCrossEntropy(x, labels, w, -100, 0.1);
    CheckProbCrossEntropy(x, t, w, 0.1, dtype);
  }
}

// ---------------------------------------------------------------------------------------
// The Check* helpers on shapes and dtypes alone

TEST(CheckLossReductionTest, AcceptsTheCodesOfTheOp) {
  for (int64_t r : kReductions) {
    EXPECT_NO_THROW(CheckLossReduction("mse_loss", r));
    EXPECT_NO_THROW(CheckLossReduction("kl_div", r, true));
  }
  EXPECT_NO_THROW(CheckLossReduction("kl_div", kLossBatchMean, true));
  EXPECT_FT_ERROR(CheckLossReduction("l1_loss", kLossBatchMean),
                  "l1_loss: reduction must be none (0), mean (1), sum (2), got 3");
  EXPECT_FT_ERROR(CheckLossReduction("kl_div", -1, true),
                  "kl_div: reduction must be none (0), mean (1), sum (2) or batchmean (3), got -1");
  EXPECT_FT_ERROR(CheckLossReduction("kl_div", 4, true), "kl_div: reduction must be");
}

TEST(CheckPointwiseLossTest, ReturnsTheShapeOfTheNoneLoss) {
  const Shape a = {3, 1}, b = {4}, c = {3, 4};
  EXPECT_EQ(CheckPointwiseLoss("mse_loss", {a, kFloat32}, {b, kFloat64}, false), (Shape{3, 4}));
  EXPECT_EQ(CheckPointwiseLoss("mse_loss", {{}, kFloat32}, {c, kFloat32}, false), (Shape{3, 4}));
  EXPECT_EQ(CheckPointwiseLoss("binary_cross_entropy", {c, kFloat64}, {c, kFloat32}, true), c);
  EXPECT_EQ(CheckPointwiseLoss("binary_cross_entropy", {{}, kFloat64}, {{}, kFloat64}, true),
            Shape{});
  EXPECT_FT_ERROR(CheckPointwiseLoss("binary_cross_entropy", {a, kFloat32}, {c, kFloat32}, true),
                  "binary_cross_entropy: target size [3, 4] must be the same as input size [3, 1]");
  EXPECT_FT_ERROR(CheckPointwiseLoss("l1_loss", {c, kFloat32}, {a, kInt64}, false),
                  "l1_loss: expected floating point input and target, got float32 and int64");
  const Shape d = {5};
  EXPECT_FT_ERROR(CheckPointwiseLoss("huber_loss", {c, kFloat32}, {d, kFloat32}, false),
                  "huber_loss: shapes [3, 4] and [5]");
}

TEST(CheckLossWeightTest, WeightMustBeFloatingAndBroadcastToTheShape) {
  const Shape shape = {2, 3, 4};
  for (const Shape& w : {Shape{}, Shape{4}, Shape{1}, Shape{3, 1}, Shape{2, 1, 4}, shape}) {
    EXPECT_NO_THROW(CheckLossWeight("bce", "weight", {w, kFloat32}, shape)) << ShapeToString(w);
  }
  for (const Shape& w : {Shape{3}, Shape{2, 1}, Shape{1, 2, 3, 4}, Shape{5, 3, 4}}) {
    EXPECT_FT_ERROR(CheckLossWeight("bce", "pos_weight", {w, kFloat64}, shape),
                    "bce: pos_weight of shape " + ShapeToString(w) +
                        " does not broadcast to input shape [2, 3, 4]");
  }
  const Shape four = {4};
  EXPECT_FT_ERROR(CheckLossWeight("bce", "weight", {four, kInt64}, shape),
                  "bce: expected a floating point weight, got int64");
}

TEST(CheckLossScalarTest, EachOpChecksItsOwnScalar) {
  EXPECT_NO_THROW(CheckLossScalar("smooth_l1_loss", 0.0));
  EXPECT_FT_ERROR(CheckLossScalar("smooth_l1_loss", -1e-300),
                  "smooth_l1_loss: beta must be "
                  "non-negative");
  EXPECT_NO_THROW(CheckLossScalar("huber_loss", 1e-300));
  EXPECT_FT_ERROR(CheckLossScalar("huber_loss", 0.0), "huber_loss: delta must be positive, got 0");
  EXPECT_FT_ERROR(CheckLossScalar("huber_loss", kNaN), "huber_loss: delta must be positive");
  EXPECT_NO_THROW(CheckLossScalar("cross_entropy", 0.0));
  EXPECT_NO_THROW(CheckLossScalar("cross_entropy", 1.0));
  EXPECT_FT_ERROR(CheckLossScalar("cross_entropy", 1.0000001),
                  "cross_entropy: label_smoothing "
                  "must be in [0, 1]");
  // Other ops have no scalar to check.
  EXPECT_NO_THROW(CheckLossScalar("mse_loss", -5.0));
  EXPECT_NO_THROW(CheckLossScalar("nll_loss", kNaN));
}

TEST(CheckClassLossTest, InputTargetAndWeightShapes) {
  const Shape c = {5}, nc = {2, 5}, ncd = {2, 5, 3, 4}, n = {2}, nd = {2, 3, 4}, w5 = {5};
  EXPECT_NO_THROW(CheckClassLoss("nll_loss", {c, kFloat32}, {{}, kInt64}, std::nullopt));
  EXPECT_NO_THROW(CheckClassLoss("nll_loss", {nc, kFloat64}, {n, kInt64}, LossArg{w5, kFloat64}));
  EXPECT_NO_THROW(CheckClassLoss("nll_loss", {ncd, kFloat32}, {nd, kInt64}, LossArg{w5, kFloat64}));
  EXPECT_FT_ERROR(CheckClassLoss("nll_loss", {ncd, kFloat32}, {n, kInt64}, std::nullopt),
                  "nll_loss: target shape [2] does not match input shape [2, 5, 3, 4] (expected "
                  "target shape [2, 3, 4])");
  EXPECT_FT_ERROR(CheckClassLoss("cross_entropy", {c, kFloat32}, {n, kInt64}, std::nullopt),
                  "cross_entropy: target shape [2] does not match input shape [5] (expected "
                  "target shape [])");
  EXPECT_FT_ERROR(CheckClassLoss("nll_loss", {nc, kFloat32}, {n, kFloat32}, std::nullopt),
                  "nll_loss: expected an int64 target of class indices, got float32");
  const Shape w4 = {4};
  EXPECT_FT_ERROR(CheckClassLoss("nll_loss", {nc, kFloat32}, {n, kInt64}, LossArg{w4, kFloat32}),
                  "nll_loss: weight must be a 1-D tensor of 5 class weights, got [4]");
  EXPECT_FT_ERROR(CheckClassLoss("nll_loss", {nc, kFloat32}, {n, kInt64}, LossArg{w5, kBool}),
                  "nll_loss: expected a floating point weight, got bool");
  EXPECT_FT_ERROR(CheckClassLoss("nll_loss", {{}, kFloat32}, {{}, kInt64}, std::nullopt),
                  "nll_loss: expected an input of 1 or more dims ([C] or [N, C, d1, ...]), got []");
  EXPECT_FT_ERROR(CheckClassLoss("nll_loss", {nc, kInt64}, {n, kInt64}, std::nullopt),
                  "nll_loss: expected a floating point input, got int64");
}

TEST(CheckProbLossTest, TargetOfTheInputsShapeNoIgnoreIndexAndClassWeights) {
  const Shape nc = {2, 5}, c = {5}, w5 = {5}, w2 = {2};
  EXPECT_NO_THROW(CheckProbLoss({nc, kFloat32}, {nc, kFloat64}, LossArg{w5, kFloat32}, -100));
  EXPECT_NO_THROW(CheckProbLoss({c, kFloat32}, {c, kFloat32}, std::nullopt, -1));
  EXPECT_FT_ERROR(CheckProbLoss({nc, kFloat32}, {c, kFloat32}, std::nullopt, -100),
                  "cross_entropy: a target of class probabilities must have the input's shape "
                  "[2, 5], got [5]");
  EXPECT_FT_ERROR(CheckProbLoss({nc, kFloat32}, {nc, kFloat32}, std::nullopt, 0),
                  "cross_entropy: ignore_index (0) is not supported for targets of class "
                  "probabilities");
  EXPECT_FT_ERROR(CheckProbLoss({nc, kFloat32}, {nc, kFloat32}, LossArg{w2, kFloat32}, -100),
                  "cross_entropy: weight must be a 1-D tensor of 5 class weights, got [2]");
  EXPECT_FT_ERROR(CheckProbLoss({{}, kFloat32}, {{}, kFloat32}, std::nullopt, -100),
                  "cross_entropy: expected an input of 1 or more dims");
}

TEST(LossHelpersTest, IsProbTargetAndLossClassDim) {
  EXPECT_TRUE(IsProbTarget(kFloat32));
  EXPECT_TRUE(IsProbTarget(kFloat64));
  EXPECT_FALSE(IsProbTarget(kInt64));
  EXPECT_FALSE(IsProbTarget(kBool));
  EXPECT_EQ(LossClassDim(1), 0);
  EXPECT_EQ(LossClassDim(2), 1);
  EXPECT_EQ(LossClassDim(4), 1);
}

}  // namespace
}  // namespace ft::kernels

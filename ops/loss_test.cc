// The losses against PyTorch 1.13 (fixtures written by tools/torch_fixtures/loss.py: outputs,
// vjps and jvps for every op and reduction, float64), closed forms, float32, size-0 and size-1
// dims, non-contiguous inputs, second derivatives, and every error.
#include "ops/loss.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interop/npy.h"
#include "interpreters/grad/grad.h"
#include "interpreters/gradcheck/gradcheck.h"
#include "interpreters/jvp/jvp.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

Shape ShapeOf(IntArrayRef s) { return Shape(s.begin(), s.end()); }
// S: a float64 0-dim tensor.
Tensor S(double v) { return scalar_tensor(Scalar(v), kFloat64); }

using testing::NonContiguousCopy;

constexpr double kTol = 1e-12;

std::string FixturePath(const std::string& file) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string root = srcdir != nullptr
                               ? std::string(srcdir) + "/" + (workspace ? workspace : "ft") + "/"
                               : "";
  return root + "tests/fixtures/torch/loss/" + file + ".npy";
}
Tensor Fx(const std::string& c, const std::string& name) {
  return LoadNpy(FixturePath(c + "." + name));
}
bool HasFx(const std::string& c, const std::string& name) {
  return std::ifstream(FixturePath(c + "." + name)).good();
}

const char* kNames[] = {"none", "mean", "sum", "batchmean"};

// CheckFixture: f(input, target) against the case's output, its vjp (input, and target when
// the fixture has one) and its jvp.
void CheckFixture(const std::string& c, const std::function<Tensor(const TensorList&)>& f,
                  bool target_grad) {
  SCOPED_TRACE(c);
  const Tensor x = Fx(c, "input"), t = Fx(c, "target");
  EXPECT_TENSOR_NEAR(f({x, t}), Fx(c, "output"), kTol);
  auto as_list = [f](const TensorList& a) { return TensorList{f(a)}; };
  VjpResult r = vjp(as_list, {x, t});
  const TensorList g = r.vjp_fn({Fx(c, "grad_out")});
  EXPECT_TENSOR_NEAR(g[0], Fx(c, "grad_input"), kTol);
  if (target_grad) {
    EXPECT_TENSOR_NEAR(g[1], Fx(c, "grad_target"), kTol);
  }
  const Tensor tx = Fx(c, "tangent_input");
  const Tensor tt = target_grad ? Fx(c, "tangent_target") : zeros_like(t);
  EXPECT_TENSOR_NEAR(jvp(as_list, {x, t}, {tx, tt}).tangents[0], Fx(c, "jvp"), kTol);
}

// A target without a tangent (int64 classes, bce's target): jvp along the input only.
void CheckFixtureInputOnly(const std::string& c, const std::function<Tensor(const Tensor&)>& f) {
  SCOPED_TRACE(c);
  const Tensor x = Fx(c, "input");
  EXPECT_TENSOR_NEAR(f(x), Fx(c, "output"), kTol);
  auto as_list = [f](const TensorList& a) { return TensorList{f(a[0])}; };
  VjpResult r = vjp(as_list, {x});
  EXPECT_TENSOR_NEAR(r.vjp_fn({Fx(c, "grad_out")})[0], Fx(c, "grad_input"), kTol);
  if (HasFx(c, "jvp")) {
    // torch's forward mode of binary_cross_entropy goes through its backward, whose
    // denominator max(x (1 - x), 1e-12) rounds differently: 1e-9.
    EXPECT_TENSOR_NEAR(jvp(as_list, {x}, {Fx(c, "tangent_input")}).tangents[0], Fx(c, "jvp"),
                       1e-9);
  }
}

TEST(LossOps, ElementwiseLossesMatchTorch) {
  for (int r = 0; r < 3; ++r) {
    const auto red = static_cast<Reduction::Mode>(r);
    const std::string n = kNames[r];
    CheckFixture("mse_" + n, [red](const TensorList& a) { return mse_loss(a[0], a[1], red); },
                 true);
    CheckFixture("mse_bcast_" + n,
                 [red](const TensorList& a) { return mse_loss(a[0], a[1], red); }, true);
    CheckFixture("l1_" + n, [red](const TensorList& a) { return l1_loss(a[0], a[1], red); },
                 true);
    CheckFixture("smooth_l1_" + n,
                 [red](const TensorList& a) { return smooth_l1_loss(a[0], a[1], red, 0.5); },
                 true);
    CheckFixture("smooth_l1_default_" + n,
                 [red](const TensorList& a) { return smooth_l1_loss(a[0], a[1], red); }, true);
    CheckFixture("huber_" + n,
                 [red](const TensorList& a) { return huber_loss(a[0], a[1], red, 0.5); }, true);
    CheckFixture("huber_default_" + n,
                 [red](const TensorList& a) { return huber_loss(a[0], a[1], red); }, true);
  }
  for (int r = 0; r < 4; ++r) {
    const auto red = static_cast<Reduction::Mode>(r);
    CheckFixture(std::string("kl_div_") + kNames[r],
                 [red](const TensorList& a) { return kl_div(a[0], a[1], red); }, true);
    CheckFixture(std::string("kl_div_logt_") + kNames[r],
                 [red](const TensorList& a) { return kl_div(a[0], a[1], red, true); }, true);
  }
}

TEST(LossOps, BinaryLossesMatchTorch) {
  for (int r = 0; r < 3; ++r) {
    const auto red = static_cast<Reduction::Mode>(r);
    const std::string n = kNames[r];
    CheckFixture("bce_logits_" + n,
                 [red](const TensorList& a) {
                   return binary_cross_entropy_with_logits(a[0], a[1], std::nullopt, red);
                 },
                 true);
    const Tensor t = Fx("bce_" + n, "target");
    CheckFixtureInputOnly("bce_" + n, [red, t](const Tensor& x) {
      return binary_cross_entropy(x, t, std::nullopt, red);
    });
  }
}

TEST(LossOps, WeightedBinaryLossesMatchTorch) {
  for (int r = 0; r < 3; ++r) {
    const auto red = static_cast<Reduction::Mode>(r);
    const std::string c = std::string("bce_weighted_") + kNames[r];
    const Tensor t = Fx(c, "target"), w = Fx(c, "weight");
    CheckFixtureInputOnly(c, [red, w, t](const Tensor& in) {
      return binary_cross_entropy(in, t, w, red);
    });
    const std::string l = std::string("bce_logits_weighted_") + kNames[r];
    const Tensor lw = Fx(l, "weight"), pw = Fx(l, "pos_weight");
    CheckFixture(l, [red, lw, pw](const TensorList& a) {
      return binary_cross_entropy_with_logits(a[0], a[1], lw, red, pw);
    }, true);
  }
}

TEST(LossOps, BceClampsTheLogAt100) {
  EXPECT_TENSOR_NEAR(binary_cross_entropy(Fx("bce_clamp", "input"), Fx("bce_clamp", "target"),
                                          std::nullopt, Reduction::kNone),
                     Fx("bce_clamp", "output"), 0.0);
  // Finite gradients at 0 and 1: a clamped log has zero slope, the other log its exact one
  // (torch's backward divides by max(x (1 - x), 1e-12) and gives 0 at (0, 0) and (1, 1)).
  const Tensor g = grad([](const TensorList& a) {
    return binary_cross_entropy(a[0], a[1], std::nullopt, Reduction::kSum);
  })({Fx("bce_clamp", "input"), Fx("bce_clamp", "target")})[0];
  EXPECT_TENSOR_NEAR(g, tensor({1.0, 0.0, 0.0, -1.0}, {4}), 0.0);
}

TEST(LossOps, ClassLossesMatchTorch) {
  for (int r = 0; r < 3; ++r) {
    const auto red = static_cast<Reduction::Mode>(r);
    const std::string n = kNames[r];
    struct Case {
      std::string name;
      bool ce;
      bool weighted;
      int64_t ignore;
      double eps;
    };
    const std::vector<Case> cases = {
        {"nll", false, false, -100, 0},         {"nll_weighted", false, true, -100, 0},
        {"nll_ignore", false, true, -100, 0},   {"nll_ignore1", false, false, 1, 0},
        {"nll_1d", false, false, -100, 0},      {"nll_4d", false, true, -100, 0},
        {"ce", true, false, -100, 0},           {"ce_weighted", true, true, -100, 0},
        {"ce_ignore_smooth", true, true, -100, 0.2}, {"ce_smooth", true, false, -100, 0.3},
        {"ce_1d", true, false, -100, 0.1},      {"ce_4d", true, true, -100, 0.1},
    };
    for (const Case& k : cases) {
      const std::string c = k.name + "_" + n;
      const Tensor t = Fx(c, "target");
      const std::optional<Tensor> w =
          k.weighted ? std::optional<Tensor>(Fx(c, "weight")) : std::nullopt;
      CheckFixtureInputOnly(c, [&k, red, t, w](const Tensor& x) {
        return k.ce ? cross_entropy(x, t, w, k.ignore, red, k.eps)
                    : nll_loss(x, t, w, k.ignore, red);
      });
    }
    for (const std::string extra : {"", "_weighted", "_smooth", "_weighted_smooth"}) {
      const std::string c = "ce_prob" + extra + "_" + n;
      const std::optional<Tensor> w = extra.find("weighted") != std::string::npos
                                          ? std::optional<Tensor>(Fx(c, "weight"))
                                          : std::nullopt;
      const double eps = extra.find("smooth") != std::string::npos ? 0.2 : 0.0;
      CheckFixture(c, [red, w, eps](const TensorList& a) {
        return cross_entropy(a[0], a[1], w, -100, red, eps);
      }, true);
    }
  }
}

TEST(LossOps, ClosedFormsAndDefaults) {
  const Tensor x = tensor({1.0, 2.0, 4.0}, {3});
  const Tensor t = tensor({1.5, 0.0, 1.0}, {3});
  EXPECT_TENSOR_NEAR(mse_loss(x, t), S(((0.25 + 4 + 9) / 3.0)), kTol);
  EXPECT_TENSOR_NEAR(l1_loss(x, t, Reduction::kSum), S(5.5), kTol);
  // smooth_l1 (beta 1): 0.125, 1.5, 2.5; huber (delta 1) is the same for delta = beta = 1.
  EXPECT_TENSOR_NEAR(smooth_l1_loss(x, t, Reduction::kNone), tensor({0.125, 1.5, 2.5}, {3}),
                     kTol);
  EXPECT_TENSOR_NEAR(huber_loss(x, t, Reduction::kNone, 2.0), tensor({0.125, 2.0, 4.0}, {3}),
                     kTol);
  // beta = 0 is l1.
  EXPECT_TENSOR_NEAR(smooth_l1_loss(x, t, Reduction::kNone, 0.0), tensor({0.5, 2.0, 3.0}, {3}),
                     kTol);
  // kl_div: 0 log 0 = 0.
  EXPECT_TENSOR_NEAR(kl_div(tensor({-1.0, -2.0}, {2}), tensor({0.0, 0.5}, {2}), Reduction::kNone),
                     tensor({0.0, 0.5 * std::log(0.5) + 1.0}, {2}), kTol);
  // kl_div batchmean of a 0-dim input is its sum.
  EXPECT_TENSOR_NEAR(kl_div(S(-1.0), S(0.5),
                            Reduction::kBatchMean),
                     S((0.5 * std::log(0.5) + 0.5)), kTol);
  // bce_with_logits is stable at large logits.
  const Tensor big = tensor({1000.0, -1000.0}, {2});
  EXPECT_TENSOR_NEAR(binary_cross_entropy_with_logits(big, tensor({1.0, 0.0}, {2}), std::nullopt,
                                                      Reduction::kNone),
                     zeros({2}, kFloat64), kTol);
  EXPECT_TENSOR_NEAR(binary_cross_entropy_with_logits(big, tensor({0.0, 1.0}, {2}), std::nullopt,
                                                      Reduction::kNone),
                     tensor({1000.0, 1000.0}, {2}), kTol);
  // nll: every target ignored gives NaN for mean, 0 for sum.
  const Tensor lsm = tensor({-1.0, -2.0, -3.0, -4.0}, {2, 2});
  const Tensor ign = tensor({-100, -100}, {2});
  EXPECT_TRUE(std::isnan(nll_loss(lsm, ign).item<double>()));
  EXPECT_EQ(nll_loss(lsm, ign, std::nullopt, -100, Reduction::kSum).item<double>(), 0.0);
  // The header's example.
  const Tensor logits = tensor({2.0, 0.5, -1.0, 0.1, 0.2, 3.0}, {2, 3});
  const Tensor labels = tensor({0, 2}, {2});
  const Tensor each = cross_entropy(logits, labels, std::nullopt, -100, Reduction::kNone);
  EXPECT_EQ(ShapeOf(each.sizes()), Shape{2});
  EXPECT_TENSOR_NEAR(cross_entropy(logits, labels), mean(each), kTol);
  EXPECT_TENSOR_NEAR(mse_loss(tensor({1.0, 2.0}, {2}), tensor({1.0, 4.0}, {2})),
                     S(2.0), kTol);
  EXPECT_EQ(ParseReduction("batchmean"), Reduction::kBatchMean);
  EXPECT_EQ(ParseReduction("none"), Reduction::kNone);
}

TEST(LossOps, Float32AndNonContiguous) {
  const Tensor x = Fx("mse_mean", "input"), t = Fx("mse_mean", "target");
  const Tensor x32 = to(x, kFloat32), t32 = to(t, kFloat32);
  EXPECT_EQ(mse_loss(x32, t32).dtype(), kFloat32);
  EXPECT_TENSOR_NEAR(mse_loss(x32, t32), to(Fx("mse_mean", "output"), kFloat32), 1e-6);
  EXPECT_EQ(mse_loss(x32, t).dtype(), kFloat64);  // promoted
  EXPECT_TENSOR_NEAR(huber_loss(NonContiguousCopy(x), transpose(NonContiguousCopy(transpose(t, 0, 1)), 0, 1),
                                Reduction::kNone, 0.5),
                     Fx("huber_none", "output"), kTol);
  const std::string c = "ce_4d_mean";
  const Tensor lx = Fx(c, "input"), lt = Fx(c, "target"), w = Fx(c, "weight");
  EXPECT_TENSOR_NEAR(cross_entropy(NonContiguousCopy(lx), NonContiguousCopy(lt), w, -100,
                                   Reduction::kMean, 0.1),
                     Fx(c, "output"), kTol);
  EXPECT_TENSOR_NEAR(cross_entropy(to(lx, kFloat32), lt, to(w, kFloat32), -100,
                                   Reduction::kMean, 0.1),
                     to(Fx(c, "output"), kFloat32), 1e-5);
  const std::string b = "bce_logits_sum";
  EXPECT_TENSOR_NEAR(binary_cross_entropy_with_logits(to(Fx(b, "input"), kFloat32),
                                                      to(Fx(b, "target"), kFloat32),
                                                      std::nullopt, Reduction::kSum),
                     to(Fx(b, "output"), kFloat32), 1e-5);
}

TEST(LossOps, EmptyAndSizeOne) {
  const Tensor e = zeros({0, 3}, kFloat64);
  EXPECT_TRUE(std::isnan(mse_loss(e, e).item<double>()));
  EXPECT_EQ(l1_loss(e, e, Reduction::kSum).item<double>(), 0.0);
  EXPECT_EQ(ShapeOf(smooth_l1_loss(e, e, Reduction::kNone).sizes()), (Shape{0, 3}));
  EXPECT_TRUE(std::isnan(nll_loss(e, zeros({0}, kInt64)).item<double>()));
  EXPECT_TRUE(std::isnan(cross_entropy(e, e).item<double>()));
  EXPECT_EQ(ShapeOf(cross_entropy(e, zeros({0}, kInt64), std::nullopt, -100, Reduction::kNone)
                      .sizes()),
            (Shape{0}));
  EXPECT_EQ(binary_cross_entropy(e, e, std::nullopt, Reduction::kSum).item<double>(), 0.0);
  // One class: log_softmax is 0, so the class-index cross entropy is 0.
  EXPECT_TENSOR_NEAR(cross_entropy(ones({2, 1}, kFloat64), zeros({2}, kInt64)),
                     S(0.0), kTol);
  const Tensor one = full({1, 1}, 0.3, kFloat64);
  EXPECT_TENSOR_NEAR(mse_loss(one, zeros({1, 1}, kFloat64)), S(0.09), kTol);
  const Tensor gx = grad([](const TensorList& a) {
    return binary_cross_entropy_with_logits(a[0], a[1], std::nullopt, Reduction::kMean);
  })({e, e})[0];
  EXPECT_EQ(ShapeOf(gx.sizes()), (Shape{0, 3}));
}

TEST(LossOps, SecondDerivatives) {
  const Tensor x = Fx("ce_smooth_mean", "input");
  const Tensor t = Fx("ce_smooth_mean", "target");
  const Tensor w = Fx("ce_weighted_mean", "weight");
  auto check = [](const TensorFnOfList& f, const TensorList& args) {
    const GradcheckResult g1 = gradcheck(f, args);
    EXPECT_TRUE(g1.ok) << g1.message;
    const GradcheckResult j = jvpcheck(f, args);
    EXPECT_TRUE(j.ok) << j.message;
    const GradcheckResult g2 = gradgradcheck(f, args);
    EXPECT_TRUE(g2.ok) << g2.message;
  };
  // The class weights are differentiated too (kMean's denominator included).
  for (int r = 0; r < 3; ++r) {
    const auto red = static_cast<Reduction::Mode>(r);
    check([&](const TensorList& a) { return cross_entropy(a[0], t, a[1], 1, red, 0.2); },
          {x, w});
    check([&](const TensorList& a) { return nll_loss(log_softmax(a[0], 1), t, a[1], 2, red); },
          {x, w});
  }
  check([&](const TensorList& a) { return cross_entropy(a[0], t, w, 1, Reduction::kMean, 0.2); },
        {x});
  const Tensor p = Fx("ce_prob_mean", "target");
  check([](const TensorList& a) { return cross_entropy(a[0], a[1], a[2], -100,
                                                       Reduction::kMean, 0.3); },
        {x, p, Fx("ce_weighted_mean", "weight")});
  check([](const TensorList& a) { return cross_entropy(a[0], a[1], std::nullopt, -100,
                                                       Reduction::kSum, 0.1); },
        {x, p});
  const Tensor lx = Fx("bce_logits_mean", "input"), lt = Fx("bce_logits_mean", "target");
  check([](const TensorList& a) {
    return binary_cross_entropy_with_logits(a[0], a[1], a[2], Reduction::kMean, a[3]);
  }, {lx, lt, ones({4}, kFloat64) * 1.5, ones({4}, kFloat64) * 0.7});
  const Tensor px = Fx("bce_mean", "input"), pt = Fx("bce_mean", "target");
  check([](const TensorList& a) { return binary_cross_entropy(a[0], a[1], a[2]); },
        {px, pt, ones({4}, kFloat64) * 1.5});
  check([](const TensorList& a) { return kl_div(a[0], a[1], Reduction::kBatchMean); },
        {Fx("kl_div_mean", "input"), Fx("kl_div_mean", "target")});
  check([](const TensorList& a) { return kl_div(a[0], a[1], Reduction::kSum, true); },
        {Fx("kl_div_logt_mean", "input"), Fx("kl_div_logt_mean", "target")});
  check([](const TensorList& a) { return mse_loss(a[0], a[1]); }, {x, p});
  check([](const TensorList& a) { return huber_loss(a[0] * 0.1, a[1], Reduction::kSum, 2.0); },
        {x, p});
  check([](const TensorList& a) { return smooth_l1_loss(a[0] * 0.1, a[1], Reduction::kMean, 2.0); },
        {x, p});
  // hessian of the mse loss: 2 / n on the diagonal.
  const TensorList h =
      hessian([](const TensorList& a) { return mse_loss(a[0], a[1]); })({x, p});
  EXPECT_TENSOR_NEAR(reshape(h[0], {12, 12}), eye(12, kFloat64) * (2.0 / 12.0), kTol);
}

TEST(LossOps, Errors) {
  const Tensor x = zeros({3, 4}, kFloat64);
  const Tensor i = zeros({3, 4}, kInt64);
  EXPECT_FT_ERROR(mse_loss(x, zeros({5}, kFloat64)), "mse_loss");
  EXPECT_FT_ERROR(mse_loss(x, zeros({5}, kFloat64)), "[3, 4]");
  EXPECT_FT_ERROR(l1_loss(x, i), "l1_loss: expected floating point input and target, got float64 and int64");
  EXPECT_FT_ERROR(mse_loss(x, x, static_cast<Reduction::Mode>(3)),
                  "mse_loss: reduction must be none (0), mean (1), sum (2), got 3");
  EXPECT_FT_ERROR(kl_div(x, x, static_cast<Reduction::Mode>(4)),
                  "kl_div: reduction must be none (0), mean (1), sum (2) or batchmean (3), got 4");
  EXPECT_FT_ERROR(smooth_l1_loss(x, x, Reduction::kMean, -1.0),
                  "smooth_l1_loss: beta must be non-negative, got -1");
  EXPECT_FT_ERROR(huber_loss(x, x, Reduction::kMean, 0.0), "huber_loss: delta must be positive, got 0");
  EXPECT_FT_ERROR(binary_cross_entropy(x, zeros({4}, kFloat64)),
                  "binary_cross_entropy: target size [4] must be the same as input size [3, 4]");
  EXPECT_FT_ERROR(binary_cross_entropy(x + 2.0, x),
                  "binary_cross_entropy: all elements of input should be between 0 and 1");
  EXPECT_FT_ERROR(binary_cross_entropy(x, x, zeros({3}, kFloat64)),
                  "binary_cross_entropy: weight of shape [3] does not broadcast to input shape [3, 4]");
  EXPECT_FT_ERROR(binary_cross_entropy_with_logits(x, x, std::nullopt, Reduction::kMean,
                                                   zeros({5}, kFloat64)),
                  "binary_cross_entropy_with_logits: pos_weight of shape [5] does not broadcast");
  EXPECT_FT_ERROR(binary_cross_entropy_with_logits(x, x, zeros({4}, kInt64)),
                  "expected a floating point weight, got int64");
  EXPECT_FT_ERROR(nll_loss(x, tensor({0, 1, 4}, {3})),
                  "nll_loss: target 4 is out of bounds for 4 classes");
  EXPECT_FT_ERROR(nll_loss(x, tensor({0, -1, 2}, {3})),
                  "nll_loss: target -1 is out of bounds for 4 classes");
  EXPECT_FT_ERROR(nll_loss(x, zeros({2}, kInt64)),
                  "nll_loss: target shape [2] does not match input shape [3, 4] (expected target "
                  "shape [3])");
  EXPECT_FT_ERROR(nll_loss(x, zeros({3}, kFloat64)),
                  "nll_loss: expected an int64 target of class indices, got float64");
  EXPECT_FT_ERROR(nll_loss(S(1.0), zeros({}, kInt64)),
                  "nll_loss: expected an input of 1 or more dims");
  EXPECT_FT_ERROR(nll_loss(i, zeros({3}, kInt64)), "nll_loss: expected a floating point input, got int64");
  EXPECT_FT_ERROR(nll_loss(x, zeros({3}, kInt64), ones({3}, kFloat64)),
                  "nll_loss: weight must be a 1-D tensor of 4 class weights, got [3]");
  EXPECT_FT_ERROR(nll_loss(zeros({4}, kFloat64), zeros({1}, kInt64)),
                  "nll_loss: target shape [1] does not match input shape [4] (expected target shape [])");
  EXPECT_FT_ERROR(cross_entropy(x, tensor({0, 9, 1}, {3})),
                  "cross_entropy: target 9 is out of bounds for 4 classes");
  EXPECT_FT_ERROR(cross_entropy(x, zeros({3}, kInt64), std::nullopt, -100, Reduction::kMean, 1.5),
                  "cross_entropy: label_smoothing must be in [0, 1], got 1.5");
  EXPECT_FT_ERROR(cross_entropy(x, x, std::nullopt, 0),
                  "cross_entropy: ignore_index (0) is not supported for targets of class probabilities");
  EXPECT_FT_ERROR(cross_entropy(x, zeros({3, 5}, kFloat64)),
                  "cross_entropy: a target of class probabilities must have the input's shape [3, 4], got [3, 5]");
  EXPECT_FT_ERROR(cross_entropy(x, zeros({3}, kBool)),
                  "cross_entropy: expected an int64 target of class indices, got bool");
  EXPECT_FT_ERROR(ParseReduction("avg"), "ParseReduction: reduction must be");
}

}  // namespace
}  // namespace ft

// The normalization ops (layer_norm, rms_norm, normalize, group_norm, batch_norm,
// instance_norm) against PyTorch fixtures (tests/fixtures/torch/normalization, written by
// tools/torch_fixtures/normalization.py) and closed forms: values, vjp and jvp, float32 and
// float64, size-0 and size-1 dims, non-contiguous inputs, and every error.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "interop/npy.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jvp/jvp.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::NonContiguousCopy;

Tensor Fx(const std::string& case_name, const std::string& array) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  std::string root;
  if (srcdir != nullptr) {
    root = std::string(srcdir) + "/" + (workspace != nullptr ? workspace : "ft") + "/";
  }
  return LoadNpy(root + "tests/fixtures/torch/normalization/" + case_name + "." + array +
                 ".npy");
}

TensorList Inputs(const std::string& c, int n) {
  TensorList r;
  for (int i = 0; i < n; ++i) r.push_back(Fx(c, "in" + std::to_string(i)));
  return r;
}

// CheckFixture: f(in0..) == out, its vjp along cot == vjp0.., its jvp along t0.. == jvp.
void CheckFixture(const std::string& c, int n, const TensorListFn& f, double tol = 1e-10) {
  SCOPED_TRACE(c);
  const TensorList in = Inputs(c, n);
  const VjpResult r = vjp(f, in);
  EXPECT_TENSOR_NEAR(r.outputs[0], Fx(c, "out"), tol);
  TensorList cot = {Fx(c, "cot")};
  for (size_t k = 1; k < r.outputs.size(); ++k) cot.push_back(zeros_like(r.outputs[k]));
  const TensorList g = r.vjp_fn(cot);
  for (int i = 0; i < n; ++i) EXPECT_TENSOR_NEAR(g[i], Fx(c, "vjp" + std::to_string(i)), tol);
  TensorList t;
  for (int i = 0; i < n; ++i) t.push_back(Fx(c, "t" + std::to_string(i)));
  EXPECT_TENSOR_NEAR(jvp(f, in, t).tangents[0], Fx(c, "jvp"), tol);
}

// Float32 runs agree with float64 (each op computes in its input's dtype).
void CheckFloat32(const TensorListFn& f, const TensorList& in64) {
  TensorList in32;
  for (const Tensor& t : in64) in32.push_back(to(t, kFloat32));
  const Tensor out32 = f(in32)[0];
  EXPECT_EQ(out32.dtype(), kFloat32);
  EXPECT_TENSOR_NEAR(to(out32, kFloat64), f(in64)[0], 1e-4);
}

// CheckHessian: hessian(f) (jacfwd of jacrev, every formula differentiated again) against
// central differences of grad(f), for a scalar f of one float64 argument.
void CheckHessian(const TensorFnOfList& f, const Tensor& x, double tol = 1e-6) {
  const Tensor h = hessian(f)({x})[0];
  const int64_t n = x.numel();
  ASSERT_EQ(h.numel(), n * n);
  const TensorListFn g = grad(f);
  const Tensor flat = reshape(x, {n});
  const double eps = 1e-5;
  for (int64_t i = 0; i < n; ++i) {
    const Tensor e = reshape(one_hot(full({}, i, kInt64), n), {n});
    const Tensor step = to(e, kFloat64) * eps;
    const Tensor plus = g({reshape(flat + step, x.sizes())})[0];
    const Tensor minus = g({reshape(flat - step, x.sizes())})[0];
    const Tensor fd = reshape((plus - minus) / (2 * eps), {n});
    EXPECT_TENSOR_NEAR(select(reshape(h, {n, n}), 0, i), fd, tol) << "row " << i;
  }
}

// ---- layer_norm ----

TEST(LayerNorm, MatchesTorch) {
  CheckFixture("layer_norm_affine", 3, [](const TensorList& a) {
    return TensorList{layer_norm(a[0], {5}, a[1], a[2])};
  });
  CheckFixture("layer_norm_2d", 1, [](const TensorList& a) {
    return TensorList{layer_norm(a[0], {4, 5}, std::nullopt, std::nullopt, 1e-3)};
  });
  CheckFixture("layer_norm_weight", 2, [](const TensorList& a) {
    return TensorList{layer_norm(a[0], {5}, a[1])};
  });
}

TEST(LayerNorm, Float32NonContiguousAndClosedForm) {
  const TensorList in = Inputs("layer_norm_affine", 3);
  auto f = [](const TensorList& a) { return TensorList{layer_norm(a[0], {5}, a[1], a[2])}; };
  CheckFloat32(f, in);
  EXPECT_TENSOR_NEAR(layer_norm(NonContiguousCopy(in[0]), {5}, in[1], in[2]), f(in)[0], 1e-12);
  // Closed form: (x - mean) / sqrt(var + eps) * w + b.
  const Tensor& x = in[0];
  const Tensor expected =
      (x - mean(x, {-1}, true)) / sqrt(var(x, {-1}, 0, true) + 1e-5) * in[1] + in[2];
  EXPECT_TENSOR_NEAR(f(in)[0], expected, 1e-12);
}

TEST(LayerNorm, EmptyAndSizeOne) {
  EXPECT_EQ(layer_norm(zeros({0, 3}, kFloat64), {3}).sizes(), IntArrayRef({0, 3}));
  // One element per slice: the centered value is 0, so the output is the bias.
  const Tensor x = tensor({1.0, 2.0, 3.0}, {3, 1});
  EXPECT_TENSOR_NEAR(layer_norm(x, {1}, tensor({2.0}, {1}), tensor({0.5}, {1})),
                     full({3, 1}, 0.5, kFloat64), 0);
  EXPECT_EQ(layer_norm(zeros({2, 0}, kFloat64), {0}).sizes(), IntArrayRef({2, 0}));
}

TEST(LayerNorm, Errors) {
  const Tensor x = zeros({2, 3}, kFloat64);
  EXPECT_FT_ERROR(layer_norm(x, {4}), "layer_norm: given normalized_shape [4]");
  EXPECT_FT_ERROR(layer_norm(x, {2, 3, 1}), "got an input of shape [2, 3]");
  EXPECT_FT_ERROR(layer_norm(x, {}), "layer_norm: expected normalized_shape to have at least");
  EXPECT_FT_ERROR(layer_norm(x, {3}, zeros({2}, kFloat64)), "weight of shape [2]");
  EXPECT_FT_ERROR(layer_norm(x, {3}, std::nullopt, zeros({3, 1}, kFloat64)),
                  "bias of shape [3, 1]");
  EXPECT_FT_ERROR(layer_norm(x, {3}, zeros({3}, kFloat32)), "expected weight to have the input's");
  EXPECT_FT_ERROR(layer_norm(zeros({2, 3}, kInt64), {3}), "layer_norm: expected a floating");
}

// ---- rms_norm ----

TEST(RmsNorm, MatchesDefinition) {
  CheckFixture("rms_norm_weight", 2, [](const TensorList& a) {
    return TensorList{rms_norm(a[0], {4}, a[1])};
  });
  CheckFixture("rms_norm_eps", 1, [](const TensorList& a) {
    return TensorList{rms_norm(a[0], {3, 4}, std::nullopt, 1e-3)};
  });
  // Its definition in ft ops, with the default eps of each dtype.
  const Tensor x = Fx("rms_norm_weight", "in0");
  EXPECT_TENSOR_NEAR(rms_norm(x, {4}),
                     x * rsqrt(mean(x * x, {-1}, true) +
                               std::numeric_limits<double>::epsilon()),
                     1e-14);
  const Tensor x32 = to(x, kFloat32);
  EXPECT_TENSOR_NEAR(rms_norm(x32, {4}),
                     x32 * rsqrt(mean(x32 * x32, {-1}, true) +
                                 static_cast<double>(std::numeric_limits<float>::epsilon())),
                     1e-6);
  // A zero row stays zero (sqrt(eps) > 0): no division by zero.
  EXPECT_TENSOR_NEAR(rms_norm(zeros({2, 3}, kFloat64), {3}), zeros({2, 3}, kFloat64), 0);
}

TEST(RmsNorm, Float32NonContiguousEmptyAndErrors) {
  const TensorList in = Inputs("rms_norm_weight", 2);
  auto f = [](const TensorList& a) { return TensorList{rms_norm(a[0], {4}, a[1])}; };
  CheckFloat32(f, in);
  EXPECT_TENSOR_NEAR(rms_norm(NonContiguousCopy(in[0]), {4}, in[1]), f(in)[0], 1e-12);
  EXPECT_EQ(rms_norm(zeros({0, 4}, kFloat64), {4}).sizes(), IntArrayRef({0, 4}));
  EXPECT_FT_ERROR(rms_norm(in[0], {3}), "rms_norm: given normalized_shape [3]");
  EXPECT_FT_ERROR(rms_norm(in[0], {4}, zeros({3}, kFloat64)), "rms_norm: expected weight");
  EXPECT_FT_ERROR(rms_norm(zeros({2}, kBool), {2}), "rms_norm: expected a floating");
}

// ---- normalize ----

TEST(Normalize, MatchesTorch) {
  CheckFixture("normalize_default", 1, [](const TensorList& a) {
    return TensorList{normalize(a[0])};
  });
  CheckFixture("normalize_p1_dim0", 1, [](const TensorList& a) {
    return TensorList{normalize(a[0], 1.0, 0)};
  });
  CheckFixture("normalize_p3_last", 1, [](const TensorList& a) {
    return TensorList{normalize(a[0], 3.0, -1, 1e-6)};
  });
  EXPECT_TENSOR_NEAR(normalize(Fx("normalize_zero_row", "in0")), Fx("normalize_zero_row", "out"),
                     1e-14);
}

TEST(Normalize, ZeroSliceGradientIsFinite) {
  // The denominator is clamped at eps: a zero slice has gradient g / eps, never nan.
  const Tensor x = zeros({1, 3}, kFloat64);
  const Tensor g = grad([](const Tensor& a) { return sum(normalize(a, 2.0, 1, 0.5)); })(x);
  EXPECT_TENSOR_NEAR(g, full({1, 3}, 2.0, kFloat64), 1e-12);
}

TEST(Normalize, ModesEmptyFloat32AndErrors) {
  const Tensor x = Fx("normalize_default", "in0");
  CheckFloat32([](const TensorList& a) { return TensorList{normalize(a[0])}; }, {x});
  EXPECT_TENSOR_NEAR(normalize(NonContiguousCopy(x)), normalize(x), 1e-14);
  // A rank-0 input is its own slice.
  EXPECT_TENSOR_NEAR(normalize(scalar_tensor(-3.0, kFloat64), 2.0, 0),
                     scalar_tensor(-1.0, kFloat64), 1e-15);
  EXPECT_EQ(normalize(zeros({0, 3}, kFloat64)).sizes(), IntArrayRef({0, 3}));
  EXPECT_TENSOR_NEAR(normalize(zeros({2, 0}, kFloat64), 2.0, 0), zeros({2, 0}, kFloat64), 0);
  EXPECT_FT_ERROR(normalize(x, 2.0, 2), "normalize: dim 2 is out of range");
  EXPECT_FT_ERROR(normalize(zeros({3}, kInt64), 2.0, 0), "normalize: expected a floating");
}

// ---- group_norm ----

TEST(GroupNorm, MatchesTorch) {
  CheckFixture("group_norm_affine", 3, [](const TensorList& a) {
    return TensorList{group_norm(a[0], 3, a[1], a[2])};
  });
  CheckFixture("group_norm_4d", 1, [](const TensorList& a) {
    return TensorList{group_norm(a[0], 2, std::nullopt, std::nullopt, 1e-3)};
  });
}

TEST(GroupNorm, ClosedFormFloat32EmptyAndErrors) {
  const TensorList in = Inputs("group_norm_affine", 3);
  auto f = [](const TensorList& a) { return TensorList{group_norm(a[0], 3, a[1], a[2])}; };
  CheckFloat32(f, in);
  EXPECT_TENSOR_NEAR(group_norm(NonContiguousCopy(in[0]), 3, in[1], in[2]), f(in)[0], 1e-12);
  // One group per channel on [N, C, L] is instance_norm; one group is layer_norm over [C, L].
  EXPECT_TENSOR_NEAR(group_norm(in[0], 6), instance_norm(in[0]).output, 1e-12);
  EXPECT_TENSOR_NEAR(group_norm(in[0], 1), layer_norm(in[0], {6, 3}), 1e-12);
  EXPECT_EQ(group_norm(zeros({0, 4, 2}, kFloat64), 2).sizes(), IntArrayRef({0, 4, 2}));
  EXPECT_EQ(group_norm(zeros({2, 4, 0}, kFloat64), 2).sizes(), IntArrayRef({2, 4, 0}));
  EXPECT_FT_ERROR(group_norm(in[0], 4), "group_norm: expected the number of channels (6");
  EXPECT_FT_ERROR(group_norm(in[0], 0), "group_norm: num_groups must be positive");
  EXPECT_FT_ERROR(group_norm(zeros({6}, kFloat64), 3), "at least 2 dims), got shape [6]");
  EXPECT_FT_ERROR(group_norm(in[0], 3, zeros({3}, kFloat64)), "group_norm: expected weight of");
  EXPECT_FT_ERROR(group_norm(in[0], 3, std::nullopt, zeros({6}, kFloat32)), "expected bias to");
  EXPECT_FT_ERROR(group_norm(zeros({2, 6}, kInt64), 3), "group_norm: expected a floating");
}

// ---- batch_norm ----

TEST(BatchNorm, MatchesTorch) {
  for (const char* c : {"batch_norm_train", "batch_norm_eval"}) {
    const bool training = std::string(c) == "batch_norm_train";
    const Tensor rm = Fx(c, "rm");
    const Tensor rv = Fx(c, "rv");
    CheckFixture(c, 3, [&](const TensorList& a) {
      return TensorList{batch_norm(a[0], rm, rv, a[1], a[2], training, 0.2, 1e-4).output};
    });
    const NormResult r =
        batch_norm(Fx(c, "in0"), rm, rv, Fx(c, "in1"), Fx(c, "in2"), training, 0.2, 1e-4);
    EXPECT_TENSOR_NEAR(*r.running_mean, Fx(c, "new_rm"), 1e-12);
    EXPECT_TENSOR_NEAR(*r.running_var, Fx(c, "new_rv"), 1e-12);
    // Functional: the arguments are untouched.
    EXPECT_TENSOR_EQ(rm, Fx(c, "rm"));
  }
  CheckFixture("batch_norm_nostats", 1, [](const TensorList& a) {
    return TensorList{batch_norm(a[0], std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                                 true).output};
  });
  const NormResult r =
      batch_norm(Fx("batch_norm_nostats", "in0"), std::nullopt, std::nullopt, std::nullopt,
                 std::nullopt, true);
  EXPECT_FALSE(r.running_mean.has_value());
  EXPECT_FALSE(r.running_var.has_value());
}

TEST(BatchNorm, RunningStatGradients) {
  // new_mean = 0.9 rm + 0.1 mean(x, {0}); new_var = 0.9 rv + 0.1 var(x, {0}) (unbiased).
  const Tensor x = Fx("batch_norm_nostats", "in0");
  const Tensor rm = Fx("batch_norm_train", "rm");
  const Tensor rv = Fx("batch_norm_train", "rv");
  const TensorList g = grad(
      [](const TensorList& a) {
        const NormResult r = batch_norm(a[0], a[1], a[2], std::nullopt, std::nullopt, true);
        return sum(*r.running_mean * 2.0) + sum(*r.running_var);
      },
      {0, 1, 2})({x, rm, rv});
  EXPECT_TENSOR_NEAR(g[0], full({5, 3}, 0.2 / 5, kFloat64) + (x - mean(x, {0}, true)) * (0.2 / 4),
                     1e-12);
  EXPECT_TENSOR_NEAR(g[1], full({3}, 1.8, kFloat64), 1e-12);
  EXPECT_TENSOR_NEAR(g[2], full({3}, 0.9, kFloat64), 1e-12);
  // Eval: out = (x - rm) / sqrt(rv + eps); d out / d rm = -1 / sqrt(rv + eps).
  const Tensor grm = grad(
      [&](const TensorList& a) {
        return sum(batch_norm(x, a[0], rv, std::nullopt, std::nullopt, false).output);
      },
      {0})({rm})[0];
  EXPECT_TENSOR_NEAR(grm, -5.0 * rsqrt(rv + 1e-5), 1e-12);
}

TEST(BatchNorm, EmptyInputPassesTheRunningStatsThroughWithTheirGradients) {
  // No elements, no statistic: the step returns the running stats as given (PyTorch), so
  // their derivative is the identity in both modes, not 1 - momentum.
  const Tensor rm = Fx("batch_norm_train", "rm");
  const Tensor rv = Fx("batch_norm_train", "rv");
  const auto step = [](const TensorList& a) {
    const NormResult r = batch_norm(a[0], a[1], a[2], std::nullopt, std::nullopt, true, 0.1);
    return sum(*r.running_mean * 2.0) + sum(*r.running_var);
  };
  for (const Tensor& x : {zeros({0, 3}, kFloat64), zeros({4, 3, 0}, kFloat64)}) {
    const TensorList g = grad(step, {0, 1, 2})({x, rm, rv});
    EXPECT_EQ(g[0].sizes(), x.sizes());
    EXPECT_TENSOR_NEAR(g[1], full({3}, 2.0, kFloat64), 0.0);
    EXPECT_TENSOR_NEAR(g[2], full({3}, 1.0, kFloat64), 0.0);
    const TensorList t = {zeros_like(x), full({3}, 0.5, kFloat64), full({3}, 0.25, kFloat64)};
    // d(step) = 2 * sum(d rm) + sum(d rv) = 2 * 1.5 + 0.75.
    const TensorListFn f = [&](const TensorList& a) { return TensorList{step(a)}; };
    EXPECT_TENSOR_NEAR(jvp(f, {x, rm, rv}, t).tangents[0], full({}, 3.75, kFloat64), 1e-15);
  }
  // instance_norm over N = 2 empty instances passes them through too.
  const Tensor gi = grad(
      [](const TensorList& a) {
        return sum(*instance_norm(a[0], a[1], a[2], std::nullopt, std::nullopt, true, 0.1)
                        .running_mean);
      },
      {1})({zeros({2, 3, 0}, kFloat64), rm, rv})[0];
  EXPECT_TENSOR_NEAR(gi, full({3}, 1.0, kFloat64), 0.0);
}

TEST(BatchNorm, Float32NonContiguousEmptyAndErrors) {
  const TensorList in = Inputs("batch_norm_train", 3);
  const Tensor rm = Fx("batch_norm_train", "rm");
  const Tensor rv = Fx("batch_norm_train", "rv");
  CheckFloat32([](const TensorList& a) {
    return TensorList{batch_norm(a[0], a[1], a[2], std::nullopt, std::nullopt, true).output};
  }, {in[0], rm, rv});
  EXPECT_TENSOR_NEAR(batch_norm(NonContiguousCopy(in[0]), rm, rv, in[1], in[2], true).output,
                     batch_norm(in[0], rm, rv, in[1], in[2], true).output, 1e-12);
  EXPECT_EQ(batch_norm(zeros({0, 3}, kFloat64), rm, rv).output.sizes(), IntArrayRef({0, 3}));
  // One value per channel is fine in eval mode.
  EXPECT_EQ(batch_norm(zeros({1, 3}, kFloat64), rm, rv).output.sizes(), IntArrayRef({1, 3}));
  EXPECT_FT_ERROR(batch_norm(zeros({1, 3}, kFloat64), rm, rv, std::nullopt, std::nullopt, true),
                  "batch_norm: expected more than 1 value per channel");
  EXPECT_FT_ERROR(batch_norm(in[0], std::nullopt, std::nullopt),
                  "batch_norm: running_mean and running_var must be given");
  EXPECT_FT_ERROR(batch_norm(in[0], zeros({4}, kFloat64), rv),
                  "expected running_mean of shape [3]");
  EXPECT_FT_ERROR(batch_norm(in[0], rm, rv, zeros({2}, kFloat64)), "expected weight of shape [3]");
  EXPECT_FT_ERROR(batch_norm(in[0], rm, to(rv, kFloat32)), "expected running_var to have");
  EXPECT_FT_ERROR(batch_norm(zeros({3}, kFloat64), rm, rv), "batch_norm: expected an input of");
  EXPECT_FT_ERROR(batch_norm(zeros({2, 3}, kInt64), std::nullopt, std::nullopt, std::nullopt,
                             std::nullopt, true),
                  "batch_norm: expected a floating");
}

// ---- instance_norm ----

TEST(InstanceNorm, MatchesTorch) {
  const Tensor rm = Fx("instance_norm_stats", "rm");
  const Tensor rv = Fx("instance_norm_stats", "rv");
  CheckFixture("instance_norm_stats", 3, [&](const TensorList& a) {
    return TensorList{instance_norm(a[0], rm, rv, a[1], a[2], true, 0.3).output};
  });
  const NormResult r = instance_norm(Fx("instance_norm_stats", "in0"), rm, rv,
                                     std::nullopt, std::nullopt, true, 0.3);
  EXPECT_TENSOR_NEAR(*r.running_mean, Fx("instance_norm_stats", "new_rm"), 1e-12);
  EXPECT_TENSOR_NEAR(*r.running_var, Fx("instance_norm_stats", "new_rv"), 1e-12);
  CheckFixture("instance_norm_plain", 1, [](const TensorList& a) {
    return TensorList{instance_norm(a[0]).output};
  });
  CheckFixture("instance_norm_eval", 3, [&](const TensorList& a) {
    return TensorList{instance_norm(a[0], rm, rv, a[1], a[2], false).output};
  });
  const NormResult e = instance_norm(Fx("instance_norm_eval", "in0"), rm, rv, std::nullopt,
                                     std::nullopt, false);
  EXPECT_TENSOR_EQ(*e.running_mean, rm);
}

TEST(InstanceNorm, Float32NonContiguousEmptyAndErrors) {
  const Tensor x = Fx("instance_norm_plain", "in0");
  CheckFloat32([](const TensorList& a) { return TensorList{instance_norm(a[0]).output}; }, {x});
  EXPECT_TENSOR_NEAR(instance_norm(NonContiguousCopy(x)).output, instance_norm(x).output, 1e-12);
  EXPECT_EQ(instance_norm(zeros({0, 3, 2}, kFloat64)).output.sizes(), IntArrayRef({0, 3, 2}));
  EXPECT_FT_ERROR(instance_norm(zeros({2, 3, 1}, kFloat64)),
                  "instance_norm: expected more than 1 value per instance");
  EXPECT_FT_ERROR(instance_norm(x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, false),
                  "use_input_stats = false");
  EXPECT_FT_ERROR(instance_norm(x, zeros({2}, kFloat64)), "expected running_mean of shape [3]");
  EXPECT_FT_ERROR(instance_norm(zeros({3}, kFloat64)), "instance_norm: expected an input of");
}

TEST(Normalization, HessianMatchesFiniteDifferences) {
  const Tensor x = Fx("rms_norm_weight", "in0");  // [3, 4]
  const Tensor c = Fx("rms_norm_weight", "in1");  // [4]
  CheckHessian([&](const TensorList& a) {
    return sum(pow(layer_norm(a[0], {4}, c, c * 0.5), 3.0));
  }, x);
  CheckHessian([&](const TensorList& a) { return sum(pow(rms_norm(a[0], {4}, c), 3.0)); }, x);
  CheckHessian([&](const TensorList& a) { return sum(pow(normalize(a[0], 3.0, 0), 3.0) * c); },
               x);
  CheckHessian([&](const TensorList& a) {
    return sum(pow(group_norm(reshape(a[0], {3, 4, 1}), 2, c), 3.0));
  }, x);
  CheckHessian([&](const TensorList& a) {
    const NormResult r = batch_norm(a[0], c, c * c + 0.5, c, std::nullopt, true, 0.3);
    return sum(pow(r.output, 3.0)) + sum(*r.running_var * *r.running_var);
  }, x);
  CheckHessian([&](const TensorList& a) {
    const NormResult r =
        instance_norm(reshape(a[0], {1, 3, 4}), std::nullopt, narrow(c, 0, 0, 3) * 0.0 + 1.0);
    return sum(pow(r.output, 3.0)) + sum(*r.running_var * *r.running_var);
  }, x);
}

}  // namespace
}  // namespace ft

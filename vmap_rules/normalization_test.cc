// vmap of the normalization ops against the loop-and-stack oracle (every in_dim, batch sizes
// 0, 1 and 3, batched and unbatched mixes of the tensor arguments), and the ops' own errors
// under vmap (naming per-example shapes).
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"
#include "tests/vmap_check.h"
#include "tests/vmap_oracle.h"

namespace ft {
namespace {

using testing::ArgSpec;
using testing::CheckVmap;
using testing::LoopFn;
using testing::LoopVmap;
using testing::UniformMaker;

// Positive values for variances and weights.
const ArgSpec Positive(Shape shape) { return ArgSpec{std::move(shape), UniformMaker(0.5, 1.5)}; }

TensorList All(const NormResult& r) {
  TensorList out = {r.output};
  if (r.running_mean) out.push_back(*r.running_mean);
  if (r.running_var) out.push_back(*r.running_var);
  return out;
}

// Batch size 0: each output is [0] + the per-example output's shape.
void CheckEmptyBatch(const LoopFn& f, const std::vector<Shape>& shapes) {
  TensorList args;
  TensorList example;
  for (const Shape& s : shapes) {
    Shape b(s.begin(), s.end());
    b.insert(b.begin(), 0);
    args.push_back(zeros(b, kFloat64));
    example.push_back(ones(s, kFloat64));
  }
  const TensorList got = vmap(f, 0)(args);
  const TensorList one = f(example);
  ASSERT_EQ(got.size(), one.size());
  for (size_t i = 0; i < got.size(); ++i) {
    Shape expected(one[i].sizes().begin(), one[i].sizes().end());
    expected.insert(expected.begin(), 0);
    EXPECT_EQ(got[i].sizes(), IntArrayRef(expected)) << i;
  }
}

TEST(NormalizationVmap, LayerNorm) {
  EXPECT_TRUE(CheckVmap([](const TensorList& a) {
    return TensorList{layer_norm(a[0], {4}, a[1], a[2])};
  }, {ArgSpec{{3, 4}}, Positive({4}), ArgSpec{{4}}}));
  EXPECT_TRUE(CheckVmap([](const TensorList& a) {
    return TensorList{layer_norm(a[0], {2, 3}, std::nullopt, std::nullopt, 1e-3)};
  }, {ArgSpec{{2, 3}}}));
  EXPECT_TRUE(CheckVmap([](const TensorList& a) {
    return TensorList{layer_norm(a[0], {3}, a[1])};
  }, {ArgSpec{{2, 2, 3}}, Positive({3})}));
  CheckEmptyBatch([](const TensorList& a) { return TensorList{layer_norm(a[0], {4})}; },
                  {{3, 4}});
}

// Found by nn_fuzzer (tests/fuzz/corpus/nn_fuzzer/regression-layer-norm-batched-bias-only): a
// batched bias without a weight made the rule read the absent weight (an FT_CHECK abort).
TEST(NormalizationVmap, LayerNormBatchedBiasWithoutWeight) {
  EXPECT_TRUE(CheckVmap([](const TensorList& a) {
    return TensorList{layer_norm(a[0], {4}, std::nullopt, a[1])};
  }, {ArgSpec{{3, 4}}, ArgSpec{{4}}}));
}

TEST(NormalizationVmap, RmsNorm) {
  EXPECT_TRUE(CheckVmap([](const TensorList& a) {
    return TensorList{rms_norm(a[0], {4}, a[1])};
  }, {ArgSpec{{3, 4}}, Positive({4})}));
  EXPECT_TRUE(CheckVmap([](const TensorList& a) {
    return TensorList{rms_norm(a[0], {2, 3}, std::nullopt, 1e-3)};
  }, {ArgSpec{{2, 3}}}));
  CheckEmptyBatch([](const TensorList& a) { return TensorList{rms_norm(a[0], {4})}; }, {{3, 4}});
}

TEST(NormalizationVmap, Normalize) {
  for (int64_t dim : {0, 1, -1}) {
    EXPECT_TRUE(CheckVmap([dim](const TensorList& a) {
      return TensorList{normalize(a[0], 2.0, dim)};
    }, {ArgSpec{{3, 4}}})) << dim;
  }
  EXPECT_TRUE(CheckVmap([](const TensorList& a) {
    return TensorList{normalize(a[0], 1.0, 0, 1e-6)};
  }, {ArgSpec{{5}}}));
  // A rank-0 example.
  EXPECT_TRUE(CheckVmap([](const TensorList& a) {
    return TensorList{normalize(a[0], 2.0, 0)};
  }, {ArgSpec{{}}}));
  CheckEmptyBatch([](const TensorList& a) { return TensorList{normalize(a[0])}; }, {{3, 4}});
}

TEST(NormalizationVmap, GroupNorm) {
  EXPECT_TRUE(CheckVmap([](const TensorList& a) {
    return TensorList{group_norm(a[0], 2, a[1], a[2])};
  }, {ArgSpec{{2, 4, 3}}, Positive({4}), ArgSpec{{4}}}));
  EXPECT_TRUE(CheckVmap([](const TensorList& a) {
    return TensorList{group_norm(a[0], 3)};
  }, {ArgSpec{{2, 3}}}));
  CheckEmptyBatch([](const TensorList& a) { return TensorList{group_norm(a[0], 2)}; },
                  {{2, 4, 3}});
}

TEST(NormalizationVmap, BatchNormEachExampleOwnBatch) {
  for (bool training : {true, false}) {
    EXPECT_TRUE(CheckVmap([training](const TensorList& a) {
      return All(batch_norm(a[0], a[1], a[2], a[3], a[4], training, 0.2));
    }, {ArgSpec{{3, 2, 2}}, ArgSpec{{2}}, Positive({2}), Positive({2}), ArgSpec{{2}}}))
        << training;
  }
  EXPECT_TRUE(CheckVmap([](const TensorList& a) {
    return All(batch_norm(a[0], std::nullopt, std::nullopt, std::nullopt, std::nullopt, true));
  }, {ArgSpec{{4, 3}}}));
  CheckEmptyBatch([](const TensorList& a) {
    return All(batch_norm(a[0], a[1], a[2], std::nullopt, std::nullopt, true));
  }, {{3, 2}, {2}, {2}});
}

TEST(NormalizationVmap, InstanceNorm) {
  for (bool stats : {true, false}) {
    EXPECT_TRUE(CheckVmap([stats](const TensorList& a) {
      return All(instance_norm(a[0], a[1], a[2], a[3], a[4], stats, 0.3));
    }, {ArgSpec{{2, 2, 3}}, ArgSpec{{2}}, Positive({2}), Positive({2}), ArgSpec{{2}}}))
        << stats;
  }
  EXPECT_TRUE(CheckVmap([](const TensorList& a) { return All(instance_norm(a[0])); },
                        {ArgSpec{{2, 3, 4}}}));
  CheckEmptyBatch([](const TensorList& a) { return All(instance_norm(a[0])); }, {{2, 2, 3}});
}

TEST(NormalizationVmap, ErrorsNamePerExampleShapes) {
  const Tensor x = zeros({5, 2, 3}, kFloat64);
  auto run = [&](const TensorListFn& f, const TensorList& args) {
    return vmap(f, std::vector<std::optional<int64_t>>(args.size(), 0))(args);
  };
  EXPECT_FT_ERROR(run([](const TensorList& a) { return TensorList{layer_norm(a[0], {2})}; }, {x}),
                  "got an input of shape [2, 3]");
  EXPECT_FT_ERROR(run([](const TensorList& a) { return TensorList{layer_norm(a[0], {3}, a[1])}; },
                      {x, zeros({5, 2}, kFloat64)}),
                  "got weight of shape [2]");
  EXPECT_FT_ERROR(run([](const TensorList& a) { return TensorList{rms_norm(a[0], {2})}; }, {x}),
                  "rms_norm: given normalized_shape [2]");
  EXPECT_FT_ERROR(run([](const TensorList& a) { return TensorList{normalize(a[0], 2.0, 2)}; },
                      {x}),
                  "normalize: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(run([](const TensorList& a) { return TensorList{group_norm(a[0], 2)}; }, {x}),
                  "input shape [2, 3]) to be divisible by num_groups = 2");
  EXPECT_FT_ERROR(run([](const TensorList& a) {
    return All(batch_norm(a[0], std::nullopt, std::nullopt, std::nullopt, std::nullopt, true));
  }, {zeros({5, 1, 3}, kFloat64)}), "more than 1 value per channel when computing batch "
                                    "statistics, got input shape [1, 3]");
  EXPECT_FT_ERROR(run([](const TensorList& a) { return All(instance_norm(a[0], a[1])); },
                      {zeros({5, 2, 3, 4}, kFloat64), zeros({5, 2}, kFloat64)}),
                  "expected running_mean of shape [3]");
}

}  // namespace
}  // namespace ft

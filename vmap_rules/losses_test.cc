// vmap of the losses against the loop-and-stack oracle: every reduction, broadcasting and
// same-shape operands, batched and unbatched mixes of input, target, weight and pos_weight
// (CheckVmap tries every in_dim combination, batch sizes 1 and 3, nested levels), class
// losses of rank 1, 2 and 3 with ignored targets and per-example class weights, batch size 0,
// and errors under vmap reading like the op's errors for one example.
#include <functional>
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

Shape ShapeOf(IntArrayRef s) { return Shape(s.begin(), s.end()); }

using testing::ArgSpec;
using testing::CheckVmap;
using testing::IndexMaker;
using testing::UniformMaker;

constexpr Reduction::Mode kModes[] = {Reduction::kNone, Reduction::kMean, Reduction::kSum};

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return std::string(e.message());
  }
  return "<no error>";
}

TEST(LossRules, BroadcastingLosses) {
  using Fn = std::function<Tensor(const Tensor&, const Tensor&, Reduction::Mode)>;
  const std::vector<std::pair<const char*, Fn>> ops = {
      {"mse", [](const Tensor& x, const Tensor& t, Reduction::Mode r) { return mse_loss(x, t, r); }},
      {"l1", [](const Tensor& x, const Tensor& t, Reduction::Mode r) { return l1_loss(x, t, r); }},
      {"smooth_l1",
       [](const Tensor& x, const Tensor& t, Reduction::Mode r) {
         return smooth_l1_loss(x, t, r, 0.7);
       }},
      {"huber",
       [](const Tensor& x, const Tensor& t, Reduction::Mode r) { return huber_loss(x, t, r, 0.6); }},
      {"kl_div", [](const Tensor& x, const Tensor& t, Reduction::Mode r) { return kl_div(x, t, r); }},
      {"kl_div_log",
       [](const Tensor& x, const Tensor& t, Reduction::Mode r) { return kl_div(x, t, r, true); }},
  };
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {3, 4}}, {{3, 4}, {4}}, {{2, 1}, {2, 3}}, {{}, {3}}, {{}, {}}};
  for (const auto& [name, fn] : ops) {
    for (Reduction::Mode r : kModes) {
      for (const auto& [sx, st] : shapes) {
        SCOPED_TRACE(::testing::Message() << name << " reduction " << int64_t{r} << " "
                                          << ShapeToString(sx) << " " << ShapeToString(st));
        EXPECT_TRUE(CheckVmap([fn = fn, r](const TensorList& a) { return TensorList{fn(a[0], a[1], r)}; },
                              {ArgSpec{sx}, ArgSpec{st, UniformMaker(0.0, 1.0)}}));
      }
    }
  }
  // batchmean divides by each example's own dim 0.
  for (const Shape& s : {Shape{3, 4}, Shape{}, Shape{5}}) {
    EXPECT_TRUE(CheckVmap(
        [](const TensorList& a) { return TensorList{kl_div(a[0], a[1], Reduction::kBatchMean)}; },
        {ArgSpec{s}, ArgSpec{s, UniformMaker(0.0, 1.0)}}));
  }
}

TEST(LossRules, BinaryLosses) {
  for (Reduction::Mode r : kModes) {
    SCOPED_TRACE(int64_t{r});
    EXPECT_TRUE(CheckVmap(
        [r](const TensorList& a) { return TensorList{binary_cross_entropy(a[0], a[1], a[2], r)}; },
        {ArgSpec{{3, 4}, UniformMaker(0.05, 0.95)}, ArgSpec{{3, 4}, UniformMaker(0.0, 1.0)},
         ArgSpec{{4}, UniformMaker(0.5, 2.0)}}));
    EXPECT_TRUE(CheckVmap(
        [r](const TensorList& a) {
          return TensorList{binary_cross_entropy(a[0], a[1], std::nullopt, r)};
        },
        {ArgSpec{{}, UniformMaker(0.05, 0.95)}, ArgSpec{{}, UniformMaker(0.0, 1.0)}}));
    EXPECT_TRUE(CheckVmap(
        [r](const TensorList& a) {
          return TensorList{binary_cross_entropy_with_logits(a[0], a[1], a[2], r, a[3])};
        },
        {ArgSpec{{3, 4}, UniformMaker(-3.0, 3.0)}, ArgSpec{{3, 4}, UniformMaker(0.0, 1.0)},
         ArgSpec{{3, 1}, UniformMaker(0.5, 2.0)}, ArgSpec{{4}, UniformMaker(0.5, 2.0)}}));
    EXPECT_TRUE(CheckVmap(
        [r](const TensorList& a) {
          return TensorList{binary_cross_entropy_with_logits(a[0], a[1], std::nullopt, r)};
        },
        {ArgSpec{{2, 3}, UniformMaker(-3.0, 3.0)}, ArgSpec{{2, 3}, UniformMaker(0.0, 1.0)}}));
  }
}

TEST(LossRules, NllLoss) {
  struct Case {
    Shape x, t;
  };
  const std::vector<Case> cases = {{{3, 4}, {3}}, {{4}, {}}, {{2, 4, 3}, {2, 3}},
                                   {{2, 4, 1, 2}, {2, 1, 2}}};
  for (const Case& c : cases) {
    for (Reduction::Mode r : kModes) {
      SCOPED_TRACE(::testing::Message() << ShapeToString(c.x) << " reduction " << int64_t{r});
      // Weighted, with class 1 ignored (IndexMaker draws it often).
      EXPECT_TRUE(CheckVmap(
          [r](const TensorList& a) { return TensorList{nll_loss(a[0], a[1], a[2], 1, r)}; },
          {ArgSpec{c.x}, ArgSpec{c.t, IndexMaker(4)}, ArgSpec{{4}, UniformMaker(0.5, 2.0)}}));
      EXPECT_TRUE(CheckVmap(
          [r](const TensorList& a) { return TensorList{nll_loss(a[0], a[1], std::nullopt, -100, r)}; },
          {ArgSpec{c.x}, ArgSpec{c.t, IndexMaker(4)}}));
    }
  }
}

TEST(LossRules, CrossEntropyClassIndices) {
  struct Case {
    Shape x, t;
  };
  const std::vector<Case> cases = {{{3, 4}, {3}}, {{4}, {}}, {{2, 4, 3}, {2, 3}}};
  for (const Case& c : cases) {
    for (Reduction::Mode r : kModes) {
      for (double eps : {0.0, 0.25}) {
        SCOPED_TRACE(::testing::Message() << ShapeToString(c.x) << " reduction " << int64_t{r}
                                          << " eps " << eps);
        EXPECT_TRUE(CheckVmap(
            [r, eps](const TensorList& a) {
              return TensorList{cross_entropy(a[0], a[1], a[2], 2, r, eps)};
            },
            {ArgSpec{c.x}, ArgSpec{c.t, IndexMaker(4)}, ArgSpec{{4}, UniformMaker(0.5, 2.0)}}));
        EXPECT_TRUE(CheckVmap(
            [r, eps](const TensorList& a) {
              return TensorList{cross_entropy(a[0], a[1], std::nullopt, -100, r, eps)};
            },
            {ArgSpec{c.x}, ArgSpec{c.t, IndexMaker(4)}}));
      }
    }
  }
}

TEST(LossRules, CrossEntropyProbabilities) {
  for (const Shape& s : {Shape{3, 4}, Shape{4}, Shape{2, 4, 2}}) {
    for (Reduction::Mode r : kModes) {
      SCOPED_TRACE(::testing::Message() << ShapeToString(s) << " reduction " << int64_t{r});
      EXPECT_TRUE(CheckVmap(
          [r](const TensorList& a) {
            return TensorList{cross_entropy(a[0], a[1], a[2], -100, r, 0.1)};
          },
          {ArgSpec{s}, ArgSpec{s, UniformMaker(0.0, 1.0)}, ArgSpec{{4}, UniformMaker(0.5, 2.0)}}));
      EXPECT_TRUE(CheckVmap(
          [r](const TensorList& a) {
            return TensorList{cross_entropy(a[0], a[1], std::nullopt, -100, r)};
          },
          {ArgSpec{s}, ArgSpec{s, UniformMaker(0.0, 1.0)}}));
    }
  }
}

// Batch size 0: the right shape for every reduction (no example, no value).
TEST(LossRules, EmptyBatch) {
  const Tensor x = zeros({0, 3, 4}, kFloat64);
  const Tensor t = zeros({0, 3}, kInt64);
  for (Reduction::Mode r : kModes) {
    const Shape per = r == Reduction::kNone ? Shape{0, 3, 4} : Shape{0};
    auto mse = [r](const TensorList& a) { return TensorList{mse_loss(a[0], a[1], r)}; };
    EXPECT_EQ(ShapeOf(vmap(TensorListFn(mse), {0, 0})({x, x})[0].sizes()), per);
    EXPECT_EQ(ShapeOf(vmap(TensorListFn(mse), {0, std::nullopt})({x, ones({3, 4}, kFloat64)})[0]
                        .sizes()),
              per);
    auto bce = [r](const TensorList& a) {
      return TensorList{binary_cross_entropy_with_logits(a[0], a[1], std::nullopt, r)};
    };
    EXPECT_EQ(ShapeOf(vmap(TensorListFn(bce), {0, 0})({x, x})[0].sizes()), per);
    const Shape per_class = r == Reduction::kNone ? Shape{0, 3} : Shape{0};
    auto nll = [r](const TensorList& a) {
      return TensorList{nll_loss(a[0], a[1], std::nullopt, -100, r)};
    };
    EXPECT_EQ(ShapeOf(vmap(TensorListFn(nll), {0, 0})({x, t})[0].sizes()), per_class);
    auto ce = [r](const TensorList& a) {
      return TensorList{cross_entropy(a[0], a[1], a[2], -100, r, 0.1)};
    };
    EXPECT_EQ(ShapeOf(vmap(TensorListFn(ce), {0, 0, std::nullopt})({x, t, ones({4}, kFloat64)})[0]
                        .sizes()),
              per_class);
  }
}

TEST(LossRules, ErrorsReadLikeOneExample) {
  const Tensor x = zeros({2, 3, 4}, kFloat64);
  auto mse = [](const TensorList& a) { return TensorList{mse_loss(a[0], a[1])}; };
  EXPECT_EQ(ErrorOf([&] { vmap(TensorListFn(mse), {0, 0})({x, zeros({2, 5}, kFloat64)}); }),
            ErrorOf([&] { mse_loss(zeros({3, 4}, kFloat64), zeros({5}, kFloat64)); }));
  auto bad_reduction = [](const TensorList& a) {
    return TensorList{l1_loss(a[0], a[1], static_cast<Reduction::Mode>(7))};
  };
  EXPECT_EQ(ErrorOf([&] { vmap(TensorListFn(bad_reduction), {0, 0})({x, x}); }),
            "l1_loss: reduction must be none (0), mean (1), sum (2), got 7");
  auto bce = [](const TensorList& a) {
    return TensorList{binary_cross_entropy_with_logits(a[0], a[1], a[2])};
  };
  EXPECT_EQ(ErrorOf([&] {
              vmap(TensorListFn(bce), {0, 0, 0})({x, x, zeros({2, 5}, kFloat64)});
            }),
            ErrorOf([&] {
              binary_cross_entropy_with_logits(zeros({3, 4}, kFloat64), zeros({3, 4}, kFloat64),
                                               zeros({5}, kFloat64));
            }));
  auto nll = [](const TensorList& a) { return TensorList{nll_loss(a[0], a[1])}; };
  EXPECT_EQ(ErrorOf([&] { vmap(TensorListFn(nll), {0, 0})({x, full({2, 3}, 9, kInt64)}); }),
            "nll_loss: target 9 is out of bounds for 4 classes");
  EXPECT_EQ(ErrorOf([&] { vmap(TensorListFn(nll), {0, 0})({x, zeros({2, 4}, kInt64)}); }),
            ErrorOf([&] { nll_loss(zeros({3, 4}, kFloat64), zeros({4}, kInt64)); }));
  auto ce = [](const TensorList& a) { return TensorList{cross_entropy(a[0], a[1], a[2])}; };
  EXPECT_EQ(ErrorOf([&] {
              vmap(TensorListFn(ce), {0, 0, 0})({x, zeros({2, 3}, kInt64), ones({2, 5}, kFloat64)});
            }),
            ErrorOf([&] {
              cross_entropy(zeros({3, 4}, kFloat64), zeros({3}, kInt64), ones({5}, kFloat64));
            }));
  auto ce_prob = [](const TensorList& a) {
    return TensorList{cross_entropy(a[0], a[1], std::nullopt, 0)};
  };
  EXPECT_EQ(ErrorOf([&] { vmap(TensorListFn(ce_prob), {0, 0})({x, x}); }),
            ErrorOf([&] {
              cross_entropy(zeros({3, 4}, kFloat64), zeros({3, 4}, kFloat64), std::nullopt, 0);
            }));
}

}  // namespace
}  // namespace ft

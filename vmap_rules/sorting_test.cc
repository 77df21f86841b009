// vmap of sort, argsort and topk against the loop-and-stack oracle, and their errors under
// vmap (same messages as the op on one example). Inputs come from UniformMaker: distinct
// values, so the order (and the indices) do not depend on tie-breaking.
#include <functional>
#include <string>

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

// The message of the ft::Error fn throws ("<no error>" when it does not throw), without the
// transform stack a vmap call appends (NOTE: [Transform stack in errors]): the op's words.
std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return std::string(e.message());
  }
  return "<no error>";
}

struct DimCase {
  Shape shape;
  int64_t dim;
};

const std::vector<DimCase>& DimCases() {
  static const std::vector<DimCase> cases = {
      {{5}, 0},       {{5}, -1},      {{3, 4}, 0},   {{3, 4}, 1},   {{3, 4}, -1},
      {{3, 4}, -2},   {{2, 3, 4}, 1}, {{2, 3, 4}, -1}, {{2, 3, 4}, 0}, {{}, 0},
      {{}, -1}};
  return cases;
}

TEST(SortingRules, Sort) {
  for (const DimCase& c : DimCases()) {
    for (bool descending : {false, true}) {
      SCOPED_TRACE(::testing::Message() << ShapeToString(c.shape) << " dim " << c.dim
                                        << " descending " << descending);
      auto f = [&](const TensorList& a) {
        auto [v, i] = sort(a[0], c.dim, descending);
        return TensorList{v, i};
      };
      EXPECT_TRUE(CheckVmap(f, {ArgSpec{c.shape}}));
    }
  }
}

TEST(SortingRules, SortDefaultsAndOtherDtypes) {
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) {
        auto [v, i] = sort(a[0]);
        return TensorList{v, i};
      },
      {ArgSpec{{3, 6}, UniformMaker(-1.0, 1.0, kFloat32)}}));
  // int64 keys (ties possible: the order is stable, so indices are still deterministic).
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) {
        auto [v, i] = sort(a[0], 0, true);
        return TensorList{v, i};
      },
      {ArgSpec{{6, 2}, IndexMaker(100)}}));
}

TEST(SortingRules, Argsort) {
  for (const DimCase& c : DimCases()) {
    for (bool descending : {false, true}) {
      SCOPED_TRACE(::testing::Message() << ShapeToString(c.shape) << " dim " << c.dim
                                        << " descending " << descending);
      auto f = [&](const TensorList& a) {
        return TensorList{argsort(a[0], c.dim, descending)};
      };
      EXPECT_TRUE(CheckVmap(f, {ArgSpec{c.shape}}));
    }
  }
  EXPECT_TRUE(CheckVmap([](const TensorList& a) { return TensorList{argsort(a[0])}; },
                        {ArgSpec{{2, 5}}}));
}

TEST(SortingRules, Topk) {
  struct TopkCase {
    Shape shape;
    int64_t k;
    int64_t dim;
  };
  const std::vector<TopkCase> cases = {
      {{5}, 2, 0},     {{5}, 5, -1},     {{5}, 0, -1},     {{3, 4}, 2, 0},
      {{3, 4}, 3, 1},  {{3, 4}, 1, -1},  {{3, 4}, 3, -2},  {{2, 3, 4}, 2, 1},
      {{2, 3, 4}, 4, -1}, {{}, 1, 0},    {{}, 1, -1}};
  for (const TopkCase& c : cases) {
    for (bool largest : {true, false}) {
      for (bool sorted : {true, false}) {
        SCOPED_TRACE(::testing::Message() << ShapeToString(c.shape) << " k " << c.k << " dim "
                                          << c.dim << " largest " << largest << " sorted "
                                          << sorted);
        auto f = [&](const TensorList& a) {
          auto [v, i] = topk(a[0], c.k, c.dim, largest, sorted);
          return TensorList{v, i};
        };
        EXPECT_TRUE(CheckVmap(f, {ArgSpec{c.shape}}));
      }
    }
  }
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) {
        auto [v, i] = topk(a[0], 3);
        return TensorList{v * 2.0, i};
      },
      {ArgSpec{{4, 6}}}));
}

// Errors under vmap carry exactly the message the op gives for one example (logical dims,
// logical shapes), not the physical ones.
TEST(SortingRules, ErrorsNameLogicalDimsAndShapes) {
  const Tensor example = ones({3, 4});
  const Tensor batch = ones({3, 4, 7});  // mapped at dim 2: examples are [3, 4]
  auto vm = [&](const std::function<Tensor(const Tensor&)>& f) {
    return ErrorOf([&] { vmap(TensorFn(f), 2)(batch); });
  };
  auto eager = [&](const std::function<Tensor(const Tensor&)>& f) {
    return ErrorOf([&] { f(example); });
  };
  const std::vector<std::function<Tensor(const Tensor&)>> bad = {
      [](const Tensor& x) { return std::get<0>(sort(x, 2)); },
      [](const Tensor& x) { return std::get<0>(sort(x, -3)); },
      [](const Tensor& x) { return argsort(x, 2); },
      [](const Tensor& x) { return argsort(x, -3, true); },
      [](const Tensor& x) { return std::get<0>(topk(x, 2, 2)); },
      [](const Tensor& x) { return std::get<0>(topk(x, 5, -1)); },
      [](const Tensor& x) { return std::get<0>(topk(x, 4, 0)); },
      [](const Tensor& x) { return std::get<0>(topk(x, -1, 1)); },
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE(i);
    const std::string want = eager(bad[i]);
    EXPECT_NE(want, "<no error>");
    EXPECT_EQ(vm(bad[i]), want);
  }
  EXPECT_FT_ERROR(vmap(TensorFn([](const Tensor& x) { return argsort(x, 2); }), 2)(batch),
                  "argsort: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FT_ERROR(
      vmap(TensorFn([](const Tensor& x) { return std::get<1>(topk(x, 5, -1)); }), 2)(batch),
      "topk: k (5) is out of range for dimension 1 of size 4 (shape [3, 4])");

  // Rank 0 per example: dims 0 and -1 only, and k must be 1.
  const Tensor scalars = ones({4});
  for (const auto& f : std::vector<std::function<Tensor(const Tensor&)>>{
           [](const Tensor& x) { return std::get<0>(sort(x, 1)); },
           [](const Tensor& x) { return argsort(x, -2); },
           [](const Tensor& x) { return std::get<0>(topk(x, 0)); },
           [](const Tensor& x) { return std::get<0>(topk(x, 2, 0)); }}) {
    const std::string want = ErrorOf([&] { f(scalar_tensor(1.0)); });
    EXPECT_NE(want, "<no error>");
    EXPECT_EQ(ErrorOf([&] { vmap(TensorFn(f))(scalars); }), want);
  }
}

}  // namespace
}  // namespace ft

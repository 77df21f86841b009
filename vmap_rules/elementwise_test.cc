// vmap of every elementwise and in-place op against the loop-and-stack oracle.
#include <cstdint>
#include <optional>
#include <random>
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
using testing::LoopFn;
using testing::LoopVmap;
using testing::TensorNear;
using testing::CheckVmap;
using testing::UniformMaker;

using Unary = Tensor (*)(const Tensor&);
using Binary = Tensor (*)(const Tensor&, const Tensor&);

TEST(ElementwiseRules, UnaryOps) {
  const std::vector<std::pair<const char*, Unary>> ops = {
      {"neg", &neg},     {"abs", &abs},         {"sign", &sign},     {"exp", &exp},
      {"expm1", &expm1}, {"log", &log},         {"log1p", &log1p},   {"sin", &sin},
      {"cos", &cos},     {"tan", &tan},         {"tanh", &tanh},     {"sigmoid", &sigmoid},
      {"relu", &relu},   {"sqrt", &sqrt},       {"rsqrt", &rsqrt},   {"square", &square},
      {"reciprocal", &reciprocal}, {"floor", &floor}, {"round", &round},
      {"logical_not", &logical_not}};
  for (const auto& [name, op] : ops) {
    SCOPED_TRACE(name);
    auto f = [op = op](const TensorList& a) { return TensorList{op(a[0])}; };
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{2, 3}, UniformMaker(0.1, 1.0)}}));
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{}, UniformMaker(0.1, 1.0)}}));
  }
}

TEST(ElementwiseRules, BinaryOpsWithBroadcasting) {
  const std::vector<std::pair<const char*, Binary>> ops = {
      {"add", &add},         {"sub", &sub},       {"mul", &mul},
      {"div", &div},         {"pow", &pow},       {"maximum", &maximum},
      {"minimum", &minimum}, {"atan2", &atan2},   {"eq", &eq},
      {"ne", &ne},           {"lt", &lt},         {"le", &le},
      {"gt", &gt},           {"ge", &ge},         {"logical_and", &logical_and},
      {"logical_or", &logical_or}};
  for (const auto& [name, op] : ops) {
    SCOPED_TRACE(name);
    auto f = [op = op](const TensorList& a) { return TensorList{op(a[0], a[1])}; };
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{2, 3}, UniformMaker(0.1, 1.0)},
                              ArgSpec{{3}, UniformMaker(0.1, 1.0)}}));
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{}, UniformMaker(0.1, 1.0)},
                              ArgSpec{{2, 1}, UniformMaker(0.1, 1.0)}}));
  }
}

TEST(ElementwiseRules, ScalarOverloadsWhereAndClamp) {
  EXPECT_TRUE(CheckVmap([](const TensorList& a) { return TensorList{a[0] * 2.5 - 1.0}; },
                        {ArgSpec{{4}}}));
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) { return TensorList{where(gt(a[0], 0.0), a[1], a[2])}; },
      {ArgSpec{{2, 3}}, ArgSpec{{3}}, ArgSpec{{2, 1}}}));
  EXPECT_TRUE(CheckVmap(
      [](const TensorList& a) { return TensorList{clamp(a[0], -0.5, 0.25)}; }, {ArgSpec{{5}}}));
}

TEST(ElementwiseRules, InPlaceOpsOnBufferCreatedInside) {
  using InPlace = Tensor (*)(const Tensor&, const Tensor&);
  for (InPlace op : std::vector<InPlace>{&add_, &sub_, &mul_, &div_, &copy_}) {
    auto f = [op](const TensorList& a) {
      // A buffer made inside the function, batched whenever either input is (writing
      // batched values into an unbatched buffer is an error: tested in vmap_test).
      Tensor buf = a[0] + zeros_like(a[1]);
      Tensor r = op(buf, a[1]);
      EXPECT_TRUE(r.is_same(buf));
      return TensorList{buf};
    };
    EXPECT_TRUE(CheckVmap(f, {ArgSpec{{2, 3}, UniformMaker(0.5, 1.0)},
                              ArgSpec{{3}, UniformMaker(0.5, 1.0)}}));
  }
  auto unary_inplace = [](const TensorList& a) {
    Tensor buf = clone(a[0]);
    exp_(buf);
    clamp_(buf, 1.2, 2.0);
    Tensor z = clone(a[0]);
    fill_(z, 3.0);
    zero_(buf);
    return TensorList{buf + z};
  };
  EXPECT_TRUE(CheckVmap(unary_inplace, {ArgSpec{{4}}}));
}

// ---- Nested vmaps: NOTE: [Consecutive vmap levels] in elementwise.cc ----
// Nested levels whose batch dims line up run a pointwise op in one call; every other layout
// walks level by level. Random pointwise programs under 2-4 nested vmaps, each level mapping
// its arguments at random dims (or not at all), against nested loops of the same program.

// A random pointwise program over a pool that starts as its inputs plus `captured` (plain
// tensors, or values of an outer level). Its output is the last value.
LoopFn RandomPointwiseProgram(uint64_t seed, TensorList captured) {
  return [seed, captured](const TensorList& inputs) {
    std::mt19937_64 rng(seed);
    TensorList pool = inputs;
    pool.insert(pool.end(), captured.begin(), captured.end());
    auto pick = [&] { return pool[rng() % pool.size()]; };
    for (int step = 0; step < 8; ++step) {
      const Tensor a = pick(), b = pick();
      switch (rng() % 9) {
        case 0: pool.push_back(sin(a)); break;
        case 1: pool.push_back(tanh(a) * 0.5 + 0.25); break;
        case 2: pool.push_back(a + b); break;
        case 3: pool.push_back(a * b); break;
        case 4: pool.push_back(sub(a, b)); break;
        case 5: pool.push_back(maximum(a, b)); break;
        case 6: pool.push_back(where(gt(a, b), a, neg(b))); break;
        case 7: pool.push_back(exp(a * 0.1)); break;
        default: pool.push_back(square(a) - 1.0); break;
      }
    }
    return TensorList{pool.back()};
  };
}

// The physical shape of an argument of per-example shape `logical` mapped at `dims`
// (innermost level first; nullopt: not mapped at that level) with batch sizes `batch`.
Shape PhysicalShape(Shape logical, const std::vector<std::optional<int64_t>>& dims,
                    const std::vector<int64_t>& batch) {
  for (size_t level = 0; level < dims.size(); ++level) {
    if (!dims[level]) continue;
    const int64_t rank = static_cast<int64_t>(logical.size()) + 1;
    const int64_t at = *dims[level] < 0 ? *dims[level] + rank : *dims[level];
    logical.insert(logical.begin() + at, batch[level]);
  }
  return logical;
}

TEST(ElementwiseRules, NestedLevelsAgreeWithNestedLoops) {
  std::mt19937_64 rng(2026);
  int collapsible = 0;
  for (int trial = 0; trial < 80; ++trial) {
    SCOPED_TRACE(trial);
    const int depth = 2 + trial % 3;
    const Shape x_logical = trial % 2 ? Shape{2, 3} : Shape{3};
    const Shape y_logical = trial % 4 < 2 ? x_logical : Shape{3};
    // Per level (innermost first): x always mapped, y mapped or not; dims 0, 1 or -1.
    std::vector<int64_t> batch;
    std::vector<std::optional<int64_t>> x_dims, y_dims;
    bool all_front = true;
    for (int level = 0; level < depth; ++level) {
      batch.push_back(1 + static_cast<int64_t>(rng() % 3));
      const int64_t choices[] = {0, 0, 1, -1};
      x_dims.push_back(choices[rng() % 4]);
      y_dims.push_back(rng() % 3 == 0 ? std::nullopt : std::optional<int64_t>(choices[rng() % 4]));
      all_front = all_front && *x_dims.back() == 0;
    }
    collapsible += all_front ? 1 : 0;
    const Tensor x = UniformMaker()(PhysicalShape(x_logical, x_dims, batch), rng());
    const Tensor y = UniformMaker()(PhysicalShape(y_logical, y_dims, batch), rng());
    // A captured plain tensor: a scalar, a row that broadcasts, or one of higher rank.
    const Shape w_shapes[] = {Shape{}, Shape{3}, Shape{2, 1, 3}};
    const Tensor w = UniformMaker()(w_shapes[rng() % 3], rng());
    const LoopFn program = RandomPointwiseProgram(rng(), {w});
    TensorListFn batched = program;
    LoopFn loops = program;
    for (int level = 0; level < depth; ++level) {
      const std::vector<std::optional<int64_t>> dims = {x_dims[level], y_dims[level]};
      batched = vmap(batched, Dims(dims));
      loops = [loops, dims](const TensorList& a) { return LoopVmap(loops, a, dims, {0}); };
    }
    EXPECT_TRUE(TensorNear(batched({x, y})[0], loops({x, y})[0], 1e-12));
  }
  EXPECT_GT(collapsible, 0);  // the one-call path was exercised
}

// The innermost function reads a value batched at the outermost level only: under three
// levels the top two collapse around it, and the value stays batched below them.
TEST(ElementwiseRules, NestedLevelsWithAValueOfAnOuterLevel) {
  const Tensor x = UniformMaker()({2, 3, 4, 5}, 1);
  const Tensor y = UniformMaker()({2, 5}, 2);
  auto inner_program = [](const Tensor& xi, const Tensor& c) { return sin(xi * c) + c * 0.5; };
  TensorListFn batched = [&](const TensorList& outer) {
    const Tensor c = cos(outer[1]);  // batched at the outer level only
    TensorListFn middle = vmap(vmap(TensorListFn([&](const TensorList& a) {
      return TensorList{inner_program(a[0], c)};
    })));
    return middle({outer[0]});
  };
  LoopFn loops = [&](const TensorList& outer) {
    const Tensor c = cos(outer[1]);
    LoopFn innermost = [&](const TensorList& a) { return TensorList{inner_program(a[0], c)}; };
    LoopFn middle = [&](const TensorList& a) { return LoopVmap(innermost, a, {0}, {0}); };
    return LoopVmap(middle, {outer[0]}, {0}, {0});
  };
  const Tensor expected = LoopVmap(loops, {x, y}, {0, 0}, {0})[0];
  EXPECT_TRUE(TensorNear(vmap(batched)({x, y})[0], expected, 1e-12));
}

}  // namespace
}  // namespace ft

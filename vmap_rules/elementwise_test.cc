// vmap of every elementwise and in-place op against the loop-and-stack oracle.
#include "dispatch/ops.h"
#include "gtest/gtest.h"
#include "interpreters/vmap/vmap.h"
#include "tensor/factories.h"
#include "tests/test_util.h"
#include "tests/vmap_check.h"

namespace ft {
namespace {

using testing::ArgSpec;
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

}  // namespace
}  // namespace ft

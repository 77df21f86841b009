// Control flow over trees against closed forms and loops over examples: while_loop and
// fori_loop with struct carries, scan with tree carries, xs and ys (forward, reverse, and its
// gradient), cond and switch_case with tree operands under vmap, and the structure errors.
#include "tree/control_flow.h"

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/interpreter.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"
#include "tree/transforms.h"
#include "tree/tree.h"

namespace ft {
namespace tree_control_flow_test {

using testing::Rand;

struct Doubling {
  Tensor value, steps;
  std::string note;  // static: carried unchanged
};
FT_TREE(Doubling, value, steps, note);

// Doubles value until it exceeds `limit`; counts the steps.
Doubling DoubleUntil(const Doubling& start, double limit) {
  return while_loop([limit](const Doubling& d) { return le(d.value, limit); },
                    [](const Doubling& d) {
                      return Doubling{d.value * 2.0, d.steps + 1.0, d.note};
                    },
                    start);
}

TEST(TreeControlFlow, WhileLoopWithAStructCarryAgainstClosedForms) {
  const Doubling start{full({}, 0.75, kFloat64), zeros({}, kFloat64), "kept"};
  const Doubling end = DoubleUntil(start, 10.0);
  EXPECT_EQ(end.value.item<double>(), 12.0);  // 0.75 * 2^4
  EXPECT_EQ(end.steps.item<double>(), 4.0);
  EXPECT_EQ(end.note, "kept");
  // Under vmap, per-example trip counts, against each example alone.
  const Tensor starts = tensor({0.75, 3.0, 20.0, 0.1});
  auto batched = vmap([](const Tensor& v) {
    return DoubleUntil({v, zeros({}, kFloat64), "b"}, 10.0).steps;
  });
  const Tensor steps = batched(starts);
  for (int64_t b = 0; b < 4; ++b) {
    const Doubling one = DoubleUntil({select(starts, 0, b), zeros({}, kFloat64), "b"}, 10.0);
    EXPECT_EQ(select(steps, 0, b).item<double>(), one.steps.item<double>());
  }
  // d end.value / d start.value = 2^steps.
  auto final_value = [](const Tensor& v) {
    return DoubleUntil({v, zeros({}, kFloat64), ""}, 10.0).value;
  };
  EXPECT_NEAR(grad(final_value)(full({}, 0.75, kFloat64)).item<double>(), 16.0, 1e-14);
}

TEST(TreeControlFlow, ForiLoopSumsSquares) {
  using Carry = std::map<std::string, Tensor>;
  const Carry init{{"squares", zeros({}, kFloat64)}, {"count", zeros({}, kFloat64)}};
  const Carry out = fori_loop(
      1, 6,
      [](const Tensor& i, const Carry& c) {
        const Tensor fi = to(i, kFloat64);
        return Carry{{"squares", c.at("squares") + fi * fi}, {"count", c.at("count") + 1.0}};
      },
      init);
  EXPECT_EQ(out.at("squares").item<double>(), 55.0);  // 1 + 4 + 9 + 16 + 25
  EXPECT_EQ(out.at("count").item<double>(), 5.0);
}

struct Inputs {
  Tensor a, b;
};
FT_TREE(Inputs, a, b);

// Running sums of a and of a * b: carry {sa, sab}, ys (sa_t, a_t * b_t).
TreeScanResult<std::pair<Tensor, Tensor>, std::pair<Tensor, Tensor>> RunningSums(
    const Inputs& xs, bool reverse) {
  const std::pair<Tensor, Tensor> init{zeros({2}, kFloat64), zeros({2}, kFloat64)};
  return scan(
      [](const std::pair<Tensor, Tensor>& c, const Inputs& x) {
        std::pair<Tensor, Tensor> next{c.first + x.a, c.second + x.a * x.b};
        return std::pair{next, std::pair<Tensor, Tensor>{next.first, x.a * x.b}};
      },
      init, xs, ScanOptions{.reverse = reverse});
}

TEST(TreeControlFlow, ScanOverTreesAgainstCumulativeSums) {
  const Inputs xs{Rand({5, 2}, 1), Rand({5, 2}, 2)};
  const auto r = RunningSums(xs, false);
  EXPECT_TENSOR_NEAR(r.carry.first, sum(xs.a, {0}), 1e-15);
  EXPECT_TENSOR_NEAR(r.carry.second, sum(xs.a * xs.b, {0}), 1e-15);
  EXPECT_TENSOR_NEAR(r.ys.first, cumsum(xs.a, 0), 1e-15);
  EXPECT_TENSOR_NEAR(r.ys.second, xs.a * xs.b, 1e-15);
  // Reverse: ys[t] is still step t's; the running sum now starts at the end.
  const auto rev = RunningSums(xs, true);
  EXPECT_TENSOR_NEAR(rev.ys.first, flip(cumsum(flip(xs.a, {0}), 0), {0}), 1e-15);
  // The gradient of sum(carry.second) w.r.t. xs.a is xs.b (closed form), a tree of Inputs.
  auto loss = [](const Inputs& in) { return sum(RunningSums(in, false).carry.second); };
  const Inputs g = grad(loss)(xs);
  EXPECT_TENSOR_NEAR(g.a, xs.b, 1e-15);
  EXPECT_TENSOR_NEAR(g.b, xs.a, 1e-15);
}

struct Operands {
  Tensor x;
  double scale = 1.0;
};
FT_TREE(Operands, x, scale);

TEST(TreeControlFlow, CondAndSwitchCaseWithTreeOperands) {
  auto branchy = [](const Tensor& p, const Tensor& v) {
    const std::map<std::string, Tensor> out = cond(
        gt(sum(v), 0.0),
        [](const Operands& o, const Tensor& w) {
          return std::map<std::string, Tensor>{{"y", o.x * o.scale * w}};
        },
        [](const Operands& o, const Tensor& w) {
          return std::map<std::string, Tensor>{{"y", o.x - w}};
        },
        Operands{p, 3.0}, v);
    return out.at("y");
  };
  const Tensor ps = Rand({4, 3}, 3), vs = Rand({4, 3}, 4);
  const Tensor batched = vmap(branchy)(ps, vs);  // a batched predicate: per example
  for (int64_t b = 0; b < 4; ++b) {
    const Tensor p = select(ps, 0, b), v = select(vs, 0, b);
    const Tensor want = sum(v).item<double>() > 0 ? p * 3.0 * v : p - v;
    EXPECT_TENSOR_NEAR(select(batched, 0, b), want, 1e-15);
  }
  // switch_case: branches of one signature.
  std::vector<std::function<Operands(const Operands&)>> branches = {
      [](const Operands& o) { return Operands{o.x + 1.0, o.scale}; },
      [](const Operands& o) { return Operands{o.x * 2.0, o.scale}; }};
  const Operands in{Rand({3}, 5), 2.0};
  const Operands second = switch_case(full({}, int64_t{1}), branches, in);
  EXPECT_TENSOR_NEAR(second.x, in.x * 2.0, 0);
  EXPECT_EQ(second.scale, 2.0);
}

TEST(TreeControlFlow, StructureErrorsNameThePath) {
  const Doubling start{full({}, 1.0, kFloat64), zeros({}, kFloat64), "a"};
  EXPECT_FT_ERROR(
      while_loop([](const Doubling& d) { return le(d.value, 4.0); },
                 [](const Doubling& d) { return Doubling{d.value * 2.0, d.steps, "b"}; }, start),
      "while_loop: the body's result must have the structure of the carry; they differ at "
      ".note: the string \"a\" vs the string \"b\"");
  // Branches that return different structures, seen when both run (a batched predicate).
  auto mismatched = [](const Tensor& v) {
    return cond(
        gt(v, 0.0), [](const Tensor& w) { return std::vector<Tensor>{w}; },
        [](const Tensor& w) { return std::vector<Tensor>{w, w}; }, v)[0];
  };
  EXPECT_FT_ERROR(vmap(mismatched)(Rand({3}, 6)),
                  "cond: the branches' results must have the structure of one another; they "
                  "differ at the root: a vector of 1 vs a vector of 2");
  EXPECT_TRUE(LayerStack::empty());
}

}  // namespace tree_control_flow_test
}  // namespace ft

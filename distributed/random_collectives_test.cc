// Random programs of collectives over a vmap axis against an oracle written on the stacked
// batch in plain ops (no named axis, no collective): the values of the programs, and the
// gradient of their batch mean with respect to a shared parameter through vmap(grad(pmean)),
// against ft::grad of the oracle. A mismatch prints the program.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "distributed/collectives.h"
#include "interpreters/grad/grad.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"

namespace ft {
namespace {

using testing::Rand;

// One step of a program. Each member's value has shape [B, C] (B the number of members, so
// that psum_scatter over dim 0 fits); the stacked batch has shape [B, B, C].
struct Step {
  std::string name;
  std::function<Tensor(const Tensor& v)> member;   // inside vmap, over axis "i"
  std::function<Tensor(const Tensor& vs)> stacked;  // the oracle on [B, B, C]
};

std::vector<Step> Steps(int64_t b, std::mt19937& rng) {
  const int64_t k = std::uniform_int_distribution<int64_t>(0, b - 1)(rng);
  auto expand_all = [b](const Tensor& one) {  // [B, C] for every member: [B, B, C]
    return expand(unsqueeze(one, 0), {b, one.sizes()[0], one.sizes()[1]});
  };
  return {
      {"psum", [](const Tensor& v) { return psum(v, "i"); },
       [=](const Tensor& vs) { return expand_all(sum(vs, {0})); }},
      {"pmean", [](const Tensor& v) { return pmean(v, "i"); },
       [=](const Tensor& vs) { return expand_all(mean(vs, {0})); }},
      {"gather_select", [k](const Tensor& v) { return select(all_gather(v, "i", 0), 0, k); },
       [=](const Tensor& vs) { return expand_all(select(vs, 0, k)); }},
      {"gather_last_dim",
       [k](const Tensor& v) { return select(all_gather(v, "i", -1), -1, k) * 0.5; },
       [=](const Tensor& vs) { return expand_all(select(vs, 0, k)) * 0.5; }},
      {"scatter",
       [b](const Tensor& v) {
         Tensor mine = psum_scatter(v, "i", 0);  // [C]
         return expand(unsqueeze(mine, 0), {b, mine.sizes()[0]});
       },
       [b](const Tensor& vs) {
         Tensor total = sum(vs, {0});  // [B, C]: row i is member i's share
         return expand(unsqueeze(total, 1), {b, b, total.sizes()[1]});
       }},
      {"index_scale",
       [](const Tensor& v) { return v * (to(axis_index("i"), kFloat64) + 1.0); },
       [b](const Tensor& vs) {
         return vs * reshape(arange(1.0, static_cast<double>(b) + 1.0, 1.0, kFloat64),
                             {b, 1, 1});
       }},
      {"ring",
       [b](const Tensor& v) {
         std::vector<std::pair<int64_t, int64_t>> pairs;
         for (int64_t i = 0; i < b; ++i) pairs.push_back({i, (i + 1) % b});
         return ppermute(v, "i", pairs);
       },
       [](const Tensor& vs) { return roll(vs, {1}, {0}); }},
      {"sin", [](const Tensor& v) { return sin(v); }, [](const Tensor& vs) { return sin(vs); }},
      {"affine", [](const Tensor& v) { return v * 0.7 + 0.1; },
       [](const Tensor& vs) { return vs * 0.7 + 0.1; }},
      {"square", [](const Tensor& v) { return v * v; }, [](const Tensor& vs) { return vs * vs; }},
  };
}

TEST(RandomCollectives, ProgramsAndTheirGradientsMatchTheStackedOracle) {
  std::mt19937 rng(2024);
  int programs = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const int64_t b = std::uniform_int_distribution<int64_t>(1, 4)(rng);
    const int64_t c = std::uniform_int_distribution<int64_t>(1, 3)(rng);
    const int length = std::uniform_int_distribution<int>(1, 5)(rng);
    const std::vector<Step> steps = Steps(b, rng);
    std::vector<const Step*> program;
    std::string text;
    for (int s = 0; s < length; ++s) {
      const Step& step = steps[std::uniform_int_distribution<size_t>(0, steps.size() - 1)(rng)];
      program.push_back(&step);
      text += (s == 0 ? "" : " -> ") + step.name;
    }
    const Tensor xs = Rand({b, b, c}, 100 + static_cast<uint64_t>(trial));
    const Tensor w = Rand({b, c}, 500 + static_cast<uint64_t>(trial));
    auto member = [&](const Tensor& theta, const Tensor& x) {
      Tensor v = theta * x;
      for (const Step* step : program) v = step->member(v);
      return v;
    };
    auto stacked = [&](const Tensor& theta, const Tensor& x_all) {
      Tensor v = unsqueeze(theta, 0) * x_all;
      for (const Step* step : program) v = step->stacked(v);
      return v;
    };
    VmapOptions options;
    options.in_dims = {std::nullopt, 0};
    options.axis_name = "i";
    // Values.
    Tensor got = vmap(TensorListFn([&](const TensorList& a) {
                        return TensorList{member(a[0], a[1])};
                      }),
                      options)({w, xs})[0];
    EXPECT_TENSOR_NEAR(got, stacked(w, xs), 1e-10) << "program " << text << " (B=" << b << ")";
    // The gradient of the batch mean of sum(v), on every member, w shared.
    Tensor g = vmap(grad(ScalarFn([&](const TensorList& a) {
                      return pmean(sum(member(a[0], a[1])), "i");
                    })),
                    options)({w, xs})[0];
    Tensor expected = grad(ScalarFn([&](const TensorList& a) {
                        return sum(stacked(a[0], xs)) / static_cast<double>(b);
                      }))({w})[0];
    EXPECT_TENSOR_NEAR(g, expand(unsqueeze(expected, 0), {b, b, c}), 1e-10)
        << "program " << text << " (B=" << b << ")";
    ++programs;
  }
  EXPECT_EQ(programs, 150);
  EXPECT_EQ(NamedAxes::depth(), 0);
}

}  // namespace
}  // namespace ft

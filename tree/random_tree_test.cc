// Random trees against invariants and independent oracles: for many seeds, a tree of random
// shape (vectors, maps, optionals, pairs, static leaves) must round-trip through flatten and
// unflatten, equal its own structure and differ from any one-node edit of it (at the edited
// path, both ways), and vmap / grad over it must match a loop over examples and the closed
// form of the function.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/interpreter.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "tensor/allclose.h"
#include "tensor/factories.h"
#include "tests/derivative_checks.h"
#include "tests/test_util.h"
#include "tree/transforms.h"
#include "tree/tree.h"

namespace ft {
namespace {

using Leaf = std::pair<Tensor, std::vector<Tensor>>;
using Node = std::map<std::string, std::optional<Leaf>>;
struct Random {
  std::vector<Node> nodes;
  int64_t tag = 0;
  std::string label;
};
FT_TREE(Random, nodes, tag, label);  // in Random's namespace (the anonymous one)

// MakeRandom: a tree of random shape from `seed`; every tensor [batch, ...] when batch > 0
// (for vmap), else without the batch dim.
Random MakeRandom(uint32_t seed, int64_t batch = 0) {
  std::mt19937 rng(seed);
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  uint64_t tensor_seed = seed * 1000ULL;
  auto t = [&] {
    Shape shape;
    if (batch > 0) shape.push_back(batch);
    for (int d = pick(3); d > 0; --d) shape.push_back(1 + pick(3));
    return testing::Rand(shape, ++tensor_seed);
  };
  Random r;
  r.tag = pick(5);
  r.label = std::string(static_cast<size_t>(pick(3)), 'x');
  for (int n = pick(4); n > 0; --n) {
    Node node;
    for (int k = pick(4); k > 0; --k) {
      std::optional<Leaf> leaf;
      if (pick(4) != 0) {
        leaf.emplace();
        leaf->first = t();
        for (int m = pick(3); m > 0; --m) leaf->second.push_back(t());
      }
      node["k" + std::to_string(pick(6))] = leaf;
    }
    r.nodes.push_back(node);
  }
  return r;
}

// Edit: one random change to r's structure, and the path where the structures then differ.
std::pair<Random, std::string> Edit(const Random& r, uint32_t seed) {
  std::mt19937 rng(seed);
  Random e = r;
  const uint32_t what = rng() % 4;
  if (what == 0 || e.nodes.empty()) {
    e.nodes.push_back({});
    return {e, ".nodes"};
  }
  const size_t i = rng() % e.nodes.size();
  Node& node = e.nodes[i];
  const std::string at = ".nodes[" + std::to_string(i) + "]";
  if (what == 1 || node.empty()) {
    node["new"] = std::nullopt;  // another key: the map differs
    return {e, at};
  }
  auto it = node.begin();
  std::advance(it, static_cast<ptrdiff_t>(rng() % node.size()));
  const std::string leaf_at = at + "[\"" + it->first + "\"]";
  if (what == 2 || !it->second.has_value()) {
    it->second = it->second.has_value() ? std::nullopt
                                        : std::optional<Leaf>(Leaf{zeros({1}), {}});
    return {e, leaf_at};
  }
  it->second->second.push_back(zeros({1}));
  return {e, leaf_at + "[1]"};
}

TEST(RandomTrees, RoundTripAndStructureInvariants) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(seed);
    const Random r = MakeRandom(seed);
    auto [leaves, def] = tree_flatten(r);
    ASSERT_EQ(leaves.size(), def.num_leaves());
    ASSERT_EQ(def.LeafPaths().size(), leaves.size());
    const Random back = tree_unflatten<Random>(def, leaves);
    ASSERT_TRUE(tree_structure(back) == def) << def.ToString();
    const TensorList again = tree_leaves(back);
    for (size_t i = 0; i < leaves.size(); ++i) ASSERT_TRUE(again[i].is_same(leaves[i]));
    // Paths are distinct.
    std::vector<std::string> paths = def.LeafPaths();
    std::sort(paths.begin(), paths.end());
    ASSERT_EQ(std::adjacent_find(paths.begin(), paths.end()), paths.end());
    // tree_map over three copies is elementwise.
    const Random sum = tree_map(
        [](const Tensor& a, const Tensor& b, const Tensor& c) { return a + b * 2.0 - c; }, r, r, r);
    const TensorList summed = tree_leaves(sum);
    for (size_t i = 0; i < leaves.size(); ++i) {
      ASSERT_TRUE(allclose(summed[i], leaves[i] * 2.0, 1e-15, 1e-15));
    }
    // One edit: a difference at the edited path, seen from both sides.
    auto [edited, at] = Edit(r, seed * 7 + 1);
    const TreeDef edited_def = tree_structure(edited);
    const std::optional<std::string> d1 = def.FirstDifference(edited_def);
    const std::optional<std::string> d2 = edited_def.FirstDifference(def);
    ASSERT_TRUE(d1.has_value() && d2.has_value());
    EXPECT_EQ(d1->rfind("at " + at + ":", 0), 0u) << *d1;
    EXPECT_EQ(d2->rfind("at " + at + ":", 0), 0u) << *d2;
    EXPECT_THROW(tree_map([](const Tensor& a, const Tensor&) { return a; }, r, edited), Error);
  }
}

// f: the sum over every leaf of sum(sin(leaf) * leaf) * (tag + 1).
Tensor SumOfLeaves(const Random& r) {
  Tensor total = zeros({}, kFloat64);
  for (const Tensor& leaf : tree_leaves(r)) total = total + sum(sin(leaf) * leaf);
  return total * static_cast<double>(r.tag + 1);
}

TEST(RandomTrees, VmapAndGradAgainstLoopsAndTheClosedForm) {
  constexpr int64_t kBatch = 3;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(seed);
    const Random r = MakeRandom(seed, kBatch);
    if (tree_leaves(r).empty()) continue;
    const Tensor batched = vmap(&SumOfLeaves)(r);
    const Random g = vmap(grad(&SumOfLeaves))(r);
    for (int64_t b = 0; b < kBatch; ++b) {
      const Random one = tree_map([b](const Tensor& t) { return select(t, 0, b); }, r);
      EXPECT_NEAR(select(batched, 0, b).item<double>(), SumOfLeaves(one).item<double>(), 1e-12);
      // d/dx sum(sin(x) x) = sin(x) + x cos(x), times (tag + 1).
      const Random expected = tree_map(
          [&one](const Tensor& x) {
            return (sin(x) + x * cos(x)) * static_cast<double>(one.tag + 1);
          },
          one);
      const TensorList got = tree_leaves(g);
      const TensorList want = tree_leaves(expected);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_TENSOR_NEAR(select(got[i], 0, b), want[i], 1e-13);
      }
    }
    EXPECT_EQ(g.label, r.label);
  }
  EXPECT_TRUE(LayerStack::empty());
}

}  // namespace
}  // namespace ft

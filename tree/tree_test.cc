// The tree library against hand-built expectations: leaf order, structures, paths, round
// trips through every kind of node, tree_map over several trees, and every error.
#include "tree/tree.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft {
namespace tree_test {

struct Linear {
  Tensor w, b;
};
FT_TREE(Linear, w, b);

struct Mlp {
  std::vector<Linear> layers;
  double dropout = 0.0;
  std::optional<Tensor> scale;
  std::string name;
  int not_in_the_tree = 7;
};
FT_TREE(Mlp, layers, dropout, scale, name);

struct Everything {
  std::array<Tensor, 2> pair_of;
  std::tuple<Tensor, int64_t, bool> mixed;
  std::pair<Tensor, std::optional<Tensor>> first_second;
  std::map<std::string, Tensor> named;
  Mlp mlp;
};
FT_TREE(Everything, pair_of, mixed, first_second, named, mlp);

Tensor Full(double v) { return full({2}, v, kFloat64); }

Mlp MakeMlp(double base, bool with_scale = true) {
  Mlp m;
  m.layers = {{Full(base + 1), Full(base + 2)}, {Full(base + 3), Full(base + 4)}};
  m.dropout = 0.25;
  if (with_scale) m.scale = Full(base + 5);
  m.name = "net";
  return m;
}

std::vector<double> FirstValues(const TensorList& leaves) {
  std::vector<double> out;
  for (const Tensor& t : leaves) out.push_back(t.to_vector<double>()[0]);
  return out;
}

TEST(Tree, LeavesStructureAndPathsInDeclaredOrder) {
  Mlp m = MakeMlp(0);
  auto [leaves, def] = tree_flatten(m);
  EXPECT_EQ(FirstValues(leaves), (std::vector<double>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(leaves[0].is_same(m.layers[0].w));  // handles, not copies
  EXPECT_EQ(def.num_leaves(), 5u);
  EXPECT_EQ(def.ToString(),
            "Mlp{layers: vector[Linear{w: *, b: *}, Linear{w: *, b: *}], dropout: 0.25, "
            "scale: *, name: \"net\"}");
  EXPECT_EQ(tree_leaf_paths(m), (std::vector<std::string>{".layers[0].w", ".layers[0].b",
                                                          ".layers[1].w", ".layers[1].b",
                                                          ".scale"}));
  // An empty optional is an empty subtree: one leaf fewer, a different structure.
  Mlp no_scale = MakeMlp(0, false);
  EXPECT_EQ(tree_leaves(no_scale).size(), 4u);
  EXPECT_FALSE(tree_structure(no_scale) == def);
  EXPECT_EQ(*def.FirstDifference(tree_structure(no_scale)),
            "at .scale: a Tensor vs None (an empty optional)");
}

TEST(Tree, RoundTripThroughEveryKindOfNode) {
  Everything e;
  e.pair_of = {Full(1), Full(2)};
  e.mixed = {Full(3), 42, true};
  e.first_second = {Full(4), std::nullopt};
  e.named = {{"beta", Full(6)}, {"alpha", Full(5)}};  // flattened in key order
  e.mlp = MakeMlp(10);
  auto [leaves, def] = tree_flatten(e);
  EXPECT_EQ(FirstValues(leaves), (std::vector<double>{1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15}));
  EXPECT_EQ(def.LeafPaths()[4], ".named[\"alpha\"]");
  Everything back = tree_unflatten<Everything>(def, leaves);
  EXPECT_TRUE(back.pair_of[1].is_same(e.pair_of[1]));
  EXPECT_EQ(std::get<1>(back.mixed), 42);
  EXPECT_TRUE(std::get<2>(back.mixed));
  EXPECT_FALSE(back.first_second.second.has_value());
  EXPECT_TRUE(back.named.at("beta").is_same(e.named.at("beta")));
  EXPECT_EQ(back.mlp.dropout, 0.25);
  EXPECT_EQ(back.mlp.name, "net");
  EXPECT_EQ(back.mlp.not_in_the_tree, 7);  // not a field of the tree: default
  EXPECT_TRUE(tree_structure(back) == def);
  // Leaves alone, and the empty cases.
  EXPECT_EQ(tree_leaves(Full(1)).size(), 1u);
  EXPECT_EQ(tree_leaves(std::vector<Tensor>{}).size(), 0u);
  EXPECT_EQ(tree_structure(std::vector<Tensor>{}).ToString(), "vector[]");
  EXPECT_EQ(tree_structure(3).ToString(), "3");
  EXPECT_EQ(tree_unflatten<int>(tree_structure(3), {}), 3);
  EXPECT_EQ(tree_unflatten<std::vector<Tensor>>(tree_structure(std::vector<Tensor>{}), {}).size(),
            0u);
}

TEST(Tree, MapOverOneAndSeveralTrees) {
  Mlp a = MakeMlp(0), b = MakeMlp(100);
  Mlp doubled = tree_map([](const Tensor& t) { return t * 2.0; }, a);
  EXPECT_EQ(FirstValues(tree_leaves(doubled)), (std::vector<double>{2, 4, 6, 8, 10}));
  EXPECT_EQ(doubled.name, "net");
  Mlp sum = tree_map([](const Tensor& x, const Tensor& y) { return x + y; }, a, b);
  EXPECT_EQ(FirstValues(tree_leaves(sum)), (std::vector<double>{102, 104, 106, 108, 110}));
  Mlp three = tree_map([](const Tensor& x, const Tensor& y, const Tensor& z) { return x * y - z; },
                       a, b, a);
  EXPECT_TENSOR_NEAR(three.layers[1].b, Full(4.0 * 104.0 - 4.0), 0);
  std::vector<std::string> seen;
  tree_map_with_path(
      [&](const std::string& path, const Tensor& t) {
        seen.push_back(path);
        return t;
      },
      a);
  EXPECT_EQ(seen, tree_leaf_paths(a));
  // Different static values are different structures (they are part of the tree).
  Mlp renamed = MakeMlp(0);
  renamed.name = "other";
  EXPECT_FT_ERROR(tree_map([](const Tensor& x, const Tensor& y) { return x + y; }, a, renamed),
                  "tree_map: tree 1 differs from tree 0 at .name: the string \"net\" vs the "
                  "string \"other\"; tree 0: Mlp{");
}

TEST(Tree, MismatchesNameThePathAndBothStructures) {
  Mlp a = MakeMlp(0), b = MakeMlp(0);
  b.layers.push_back({Full(1), Full(2)});
  EXPECT_FT_ERROR(tree_map([](const Tensor& x, const Tensor& y) { return x + y; }, a, b),
                  "tree_map: tree 1 differs from tree 0 at .layers: a vector of 2 vs a vector "
                  "of 3; tree 0: Mlp{layers: vector[Linear{w: *, b: *}, Linear{w: *, b: *}], "
                  "dropout: 0.25, scale: *, name: \"net\"}, tree 1: Mlp{layers: vector[");
  std::map<std::string, Tensor> m1{{"a", Full(1)}}, m2{{"b", Full(1)}};
  EXPECT_FT_ERROR(tree_map([](const Tensor& x, const Tensor& y) { return x + y; }, m1, m2),
                  "tree_map: tree 1 differs from tree 0 at the root: a map{a} vs a map{b}");
  // Unflatten into a type that cannot hold the structure, or with the wrong leaf count.
  const TreeDef def = tree_structure(a);
  EXPECT_FT_ERROR(tree_unflatten<Mlp>(def, {Full(1)}),
                  "tree_unflatten: the structure has 5 tensor leaves but 1 tensors were given");
  EXPECT_FT_ERROR(tree_unflatten<Linear>(def, tree_leaves(a)),
                  "tree_unflatten: at the root the structure holds Mlp{layers, dropout, scale, "
                  "name} where the type holds Linear");
  EXPECT_FT_ERROR(tree_unflatten<std::vector<Tensor>>(tree_structure(std::vector<Linear>{
                                                           {Full(1), Full(2)}}),
                                                       {Full(1), Full(2)}),
                  "tree_unflatten: at [0] the structure holds Linear{w, b} where the type "
                  "holds a Tensor");
  const TreeDef two = tree_structure(std::array<Tensor, 2>{Full(1), Full(2)});
  EXPECT_FT_ERROR((tree_unflatten<std::array<Tensor, 3>>(two, {Full(1), Full(2)})),
                  "tree_unflatten: at the root the structure holds an array of 2 where the type "
                  "holds an array of a different size");
  EXPECT_FT_ERROR(tree_unflatten<double>(tree_structure(true), {}),
                  "tree_unflatten: at the root the structure holds the bool true where the type "
                  "holds double");
}

TEST(Tree, ADefFromNodesIsCheckedAndAWellFormedOneRoundTrips) {
  using Kind = TreeDef::Kind;
  // The structure of std::vector<Tensor>{a, b}, written out, equals the flattened one.
  std::vector<TreeDef::Node> nodes = tree_structure(std::vector<Tensor>{Full(1), Full(2)}).nodes();
  EXPECT_TRUE(TreeDef(nodes) == tree_structure(std::vector<Tensor>{Full(3), Full(4)}));
  std::vector<TreeDef::Node> short_count = nodes;
  short_count[0].num_children = 3;
  EXPECT_FT_ERROR(TreeDef(short_count), "TreeDef: the nodes end inside node 2's children");
  std::vector<TreeDef::Node> wrong_leaves = nodes;
  wrong_leaves[0].num_leaves = 5;
  EXPECT_FT_ERROR(TreeDef(wrong_leaves),
                  "TreeDef: node 0 claims 3 nodes and 5 leaves but its subtree has 3 and 2");
  std::vector<TreeDef::Node> extra = nodes;
  extra.push_back(extra[1]);
  EXPECT_FT_ERROR(TreeDef(extra), "TreeDef: 1 nodes after the end of the tree");
  std::vector<TreeDef::Node> keyless = nodes;
  keyless[0].kind = Kind::kDict;
  EXPECT_FT_ERROR(TreeDef(keyless), "TreeDef: node 0 (vector) has 2 children but 0 keys");
}

}  // namespace tree_test
}  // namespace ft

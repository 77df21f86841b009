// The backward engine on hand-built graphs: order, accumulation, pruning, naming.
#include "autograd/graph.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/ops.h"
#include "tensor/factories.h"
#include "tests/test_util.h"

namespace ft::autograd {
namespace {

// A node that records when it ran and passes `scale * grad` to each next edge.
std::shared_ptr<FunctionNode> Scale(const std::string& name, EdgeList next,
                                    double scale, std::vector<std::string>* log) {
  const size_t n = next.size();
  return std::make_shared<FunctionNode>(name, std::move(next), 1,
                                        [=](const TensorList& g) {
                                          log->push_back(name);
                                          return TensorList(n, g[0] * scale);
                                        });
}

TEST(Engine, DiamondAccumulatesAndRunsEachNodeOnceInTopologicalOrder) {
  std::vector<std::string> log;
  auto leaf = std::make_shared<LeafNode>();
  auto a = Scale("A", {Edge{leaf, 0}}, 2.0, &log);             // x -> a = 2x
  auto b = Scale("B", {Edge{a, 0}}, 3.0, &log);                // b = 3a
  auto c = Scale("C", {Edge{a, 0}}, 5.0, &log);                // c = 5a
  auto d = std::make_shared<FunctionNode>(                     // d = b + c
      "D", EdgeList{Edge{b, 0}, Edge{c, 0}}, 1, [&](const TensorList& g) {
        log.push_back("D");
        return TensorList{g[0], g[0]};
      });
  TensorList grads = RunBackward({{Edge{d, 0}, ones({1}, kFloat64)}}, {Edge{leaf, 0}});
  // dd/dx = (3 + 5) * 2 = 16.
  EXPECT_TENSOR_EQ(grads[0], tensor({16.0}));
  EXPECT_EQ(log, (std::vector<std::string>{"D", "C", "B", "A"}));
}

// NOTE: [Freeing saved values]: with release_saved, each node's saved values go as soon as
// it ran (a chain holds fewer and fewer of them), and the graph refuses a second run.
TEST(Engine, ReleaseSavedFreesEachNodesValuesAfterItRan) {
  auto leaf = std::make_shared<LeafNode>();
  Edge tip{leaf, 0};
  std::vector<std::weak_ptr<int>> saved;  // what each node's backward captured
  std::vector<long> alive_when_run;       // how many were still alive when each one ran
  for (int i = 0; i < 4; ++i) {
    auto value = std::make_shared<int>(i);
    saved.push_back(value);
    tip = Edge{std::make_shared<FunctionNode>(
                   "Node" + std::to_string(i), EdgeList{tip}, 1,
                   [value, &saved, &alive_when_run](const TensorList& g) {
                     alive_when_run.push_back(std::count_if(
                         saved.begin(), saved.end(), [](const auto& w) { return !w.expired(); }));
                     return TensorList{g[0] * 2.0};
                   }),
               0};
  }
  // Without release: the graph keeps everything and runs again.
  EXPECT_TENSOR_EQ(RunBackward({{tip, ones({1}, kFloat64)}}, {Edge{leaf, 0}})[0], tensor({16.0}));
  EXPECT_EQ(alive_when_run, (std::vector<long>{4, 4, 4, 4}));
  alive_when_run.clear();
  EXPECT_TENSOR_EQ(RunBackward({{tip, ones({1}, kFloat64)}}, {Edge{leaf, 0}}, true)[0],
                   tensor({16.0}));
  EXPECT_EQ(alive_when_run, (std::vector<long>{4, 3, 2, 1}));
  EXPECT_TRUE(std::all_of(saved.begin(), saved.end(), [](const auto& w) { return w.expired(); }));
  EXPECT_FT_ERROR(RunBackward({{tip, ones({1}, kFloat64)}}, {Edge{leaf, 0}}),
                  "grad: Node3 ran after its saved values were freed");
}

TEST(Engine, PrunesBranchesThatReachNoInput) {
  std::vector<std::string> log;
  auto wanted = std::make_shared<LeafNode>();
  auto other = std::make_shared<LeafNode>();
  auto a = Scale("A", {Edge{wanted, 0}}, 2.0, &log);
  auto b = Scale("B", {Edge{other, 0}}, 3.0, &log);
  auto top = std::make_shared<FunctionNode>(
      "Top", EdgeList{Edge{a, 0}, Edge{b, 0}}, 1,
      [](const TensorList& g) { return TensorList{g[0], g[0]}; });
  TensorList grads =
      RunBackward({{Edge{top, 0}, ones({1}, kFloat64)}}, {Edge{wanted, 0}});
  EXPECT_TENSOR_EQ(grads[0], tensor({2.0}));
  EXPECT_EQ(log, (std::vector<std::string>{"A"}));  // B was never run
  // An input no root reaches gets an undefined gradient.
  auto lonely = std::make_shared<LeafNode>();
  EXPECT_FALSE(RunBackward({{Edge{top, 0}, ones({1}, kFloat64)}}, {Edge{lonely, 0}})[0].defined());
}

TEST(Engine, MultiOutputNodesGetOneSlotPerOutputAndGraphsRunTwice) {
  // split-like node: two outputs (slots 0 and 1) whose gradients it adds up for its input.
  std::vector<std::string> log;
  auto leaf = std::make_shared<LeafNode>();
  auto split = std::make_shared<FunctionNode>("Split", EdgeList{Edge{leaf, 0}}, 2,
                                              [&](const TensorList& g) {
                                                log.push_back("Split");
                                                EXPECT_EQ(g.size(), 2u);
                                                return TensorList{g[0] + g[1] * 10.0};
                                              });
  auto first = Scale("First", {Edge{split, 0}}, 2.0, &log);
  auto second = Scale("Second", {Edge{split, 1}}, 3.0, &log);
  const std::vector<std::pair<Edge, Tensor>> roots = {{Edge{first, 0}, ones({1}, kFloat64)},
                                                      {Edge{second, 0}, ones({1}, kFloat64)}};
  // 2 * 1 + 3 * 10 = 32, the same on a second run over the same graph.
  EXPECT_TENSOR_EQ(RunBackward(roots, {Edge{leaf, 0}})[0], tensor({32.0}));
  EXPECT_TENSOR_EQ(RunBackward(roots, {Edge{leaf, 0}})[0], tensor({32.0}));
  EXPECT_EQ(log, (std::vector<std::string>{"Second", "First", "Split", "Second", "First",
                                           "Split"}));
}

// NOTE: [Nodes with one owner] in graph.cc: nodes owned only by the edge leading to them are
// walked without the index. Here nothing but edges owns the inner nodes (as after a chain of
// ops whose tensors are gone): a chain, a diamond whose shared node has two owning edges,
// several edges into one leaf, and a root owned by the root list alone.
TEST(Engine, GraphsOwnedOnlyByTheirEdges) {
  std::vector<std::string> log;
  auto leaf = std::make_shared<LeafNode>();
  Edge tip{leaf, 0};
  double expected = 1.0;
  for (int i = 0; i < 50; ++i) {  // a chain: x -> 2x -> 2(2x) + x -> ...
    const double scale = i % 2 == 0 ? 2.0 : 0.5;
    if (i % 10 == 9) {  // every tenth node also feeds the leaf directly: y = s * (t + x)
      tip = Edge{std::make_shared<FunctionNode>(
                     "AddLeaf", EdgeList{tip, Edge{leaf, 0}}, 1,
                     [scale](const TensorList& g) {
                       return TensorList{g[0] * scale, g[0] * scale};
                     }),
                 0};
      expected = scale * (expected + 1.0);
    } else {
      tip = Edge{Scale("Chain", {tip}, scale, &log), 0};
      expected *= scale;
    }
  }
  // A diamond on top, its shared node owned by two edges only.
  auto shared = Scale("Shared", {tip}, 3.0, &log);
  auto left = Scale("Left", {Edge{shared, 0}}, 1.0, &log);
  auto right = Scale("Right", {Edge{shared, 0}}, 1.0, &log);
  shared.reset();
  auto top = std::make_shared<FunctionNode>(
      "Top", EdgeList{Edge{left, 0}, Edge{right, 0}}, 1,
      [](const TensorList& g) { return TensorList{g[0], g[0]}; });
  left.reset();
  right.reset();
  tip = Edge{};
  std::vector<std::pair<Edge, Tensor>> roots;
  roots.push_back({Edge{std::move(top), 0}, ones({1}, kFloat64)});  // the list owns the root
  ASSERT_EQ(roots[0].first.node.use_count(), 1);
  const TensorList grads = RunBackward(roots, {Edge{leaf, 0}});
  EXPECT_TENSOR_EQ(grads[0], tensor({6.0 * expected}));
  EXPECT_EQ(std::count(log.begin(), log.end(), "Shared"), 1);  // run once, both gradients in
  // The same graph again, and asking for a leaf twice.
  const TensorList twice = RunBackward(roots, {Edge{leaf, 0}, Edge{leaf, 0}});
  EXPECT_TENSOR_EQ(twice[0], tensor({6.0 * expected}));
  EXPECT_TENSOR_EQ(twice[1], tensor({6.0 * expected}));
}

// Many requested inputs (past the linear scan of targets): each gets its own gradient.
TEST(Engine, ManyInputsEachGetTheirGradient) {
  std::vector<std::string> log;
  std::vector<std::shared_ptr<LeafNode>> leaves;
  EdgeList edges;
  for (int i = 0; i < 20; ++i) {
    leaves.push_back(std::make_shared<LeafNode>());
    edges.push_back(Edge{Scale("Scale", {Edge{leaves.back(), 0}}, i + 1.0, &log), 0});
  }
  auto top = std::make_shared<FunctionNode>("Top", edges, 1, [](const TensorList& g) {
    return TensorList(20, g[0]);
  });
  edges.clear();
  std::vector<Edge> inputs;
  for (int i = 19; i >= 0; --i) inputs.push_back(Edge{leaves[static_cast<size_t>(i)], 0});
  const TensorList grads = RunBackward({{Edge{top, 0}, ones({1}, kFloat64)}}, inputs);
  for (int i = 0; i < 20; ++i) {
    EXPECT_TENSOR_EQ(grads[static_cast<size_t>(i)], tensor({20.0 - i})) << i;
  }
}

TEST(Engine, GraphStringListsNewestFirst) {
  std::vector<std::string> log;
  auto leaf = std::make_shared<LeafNode>();
  auto a = Scale("SinBackward", {Edge{leaf, 0}}, 1.0, &log);
  auto b = Scale("MulBackward", {Edge{a, 0}}, 1.0, &log);
  EXPECT_EQ(GraphString(Edge{b, 0}),
            "MulBackward -> SinBackward\nSinBackward -> AccumulateGrad\nAccumulateGrad");
}

}  // namespace
}  // namespace ft::autograd

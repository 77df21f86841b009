// The backward engine on hand-built graphs: order, accumulation, pruning, naming.
#include "autograd/graph.h"

#include <string>
#include <vector>

#include "dispatch/ops.h"
#include "gtest/gtest.h"
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

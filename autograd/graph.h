// ft/autograd/graph.h
//
// The autograd graph and its backward engine, as the grad transform (interpreters/grad)
// records it: one Node per differentiable op call, whose Apply maps the gradients of its
// outputs to the gradients of its inputs; Edges point from a node to the nodes that produced
// its inputs. A LeafNode marks an input being differentiated: gradients collect there.
//
// NOTE: [Deterministic backward]
// Every node gets a sequence number from a per-process counter when it is created, and an
// edge always points to an older node (an op's inputs exist before it runs). Processing the
// nodes reachable from the outputs in decreasing sequence number is therefore a topological
// order in which every node's incoming gradients are complete when it runs, and gradient
// contributions are summed in a fixed order: results are bit-identical run to run. Nodes
// that reach no requested input are pruned (never run).
//
// Node::Apply is written with the public ops, so a backward run while outer transforms are
// active is itself transformed (grad of grad, vmap of grad).
//
// Example:
//   auto leaf = std::make_shared<LeafNode>();
//   ... build nodes whose edges reach Edge{leaf, 0} ...
//   TensorList g = RunBackward({{Edge{node, 0}, ones_like(y)}}, {Edge{leaf, 0}});
#ifndef FT_AUTOGRAD_GRAPH_H_
#define FT_AUTOGRAD_GRAPH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "tensor/tensor.h"

namespace ft::autograd {

class Node;

// Edge: input `input_nr` of `node` (a node's inputs are its op's outputs' gradients).
struct Edge {
  std::shared_ptr<Node> node;
  int input_nr = 0;
  bool valid() const { return node != nullptr; }
};

// EdgeList: a node's next edges. Most ops have one or two tensor inputs; keeping those
// inline spares every recorded op a heap allocation.
using EdgeList = absl::InlinedVector<Edge, 2>;

class Node {
 public:
  Node(EdgeList next_edges, int num_inputs);
  // Frees the nodes only this one kept alive without recursing into them (NOTE: [Freeing
  // long graphs] in graph.cc).
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // name: what GraphString and messages call the node ("SinBackward"). Computed on demand,
  // so that recording a node (once per op) never copies a string.
  virtual std::string name() const = 0;
  uint64_t sequence_nr() const { return sequence_nr_; }
  // next_edges[i]: where the gradient of the op's i-th differentiable input goes.
  const EdgeList& next_edges() const { return next_edges_; }
  // num_inputs: how many gradients flow into this node (one per output of the op).
  int num_inputs() const { return num_inputs_; }

  // Apply maps the gradients of the op's outputs (num_inputs() of them; undefined: no
  // gradient reached that output) to one gradient per next edge (undefined: none). The node
  // owns `grad_outputs` (the engine hands them over and never reads them again), so it may
  // reuse the list instead of copying it. Apply must not modify the node: a graph may be
  // run backward more than once (a vjp_fn called twice).
  virtual TensorList Apply(TensorList grad_outputs) = 0;

 private:
  uint64_t sequence_nr_;
  EdgeList next_edges_;
  int num_inputs_;
};

// LeafNode: an input being differentiated; gradients arriving here are the results.
class LeafNode : public Node {
 public:
  LeafNode() : Node({}, 1) {}
  std::string name() const override { return "AccumulateGrad"; }
  TensorList Apply(TensorList) override { return {}; }
};

// FunctionNode: a node whose backward is a function (the op's derivative formula with the
// values it saved captured).
class FunctionNode : public Node {
 public:
  using Backward = std::function<TensorList(const TensorList& grad_outputs)>;
  FunctionNode(std::string name, EdgeList next_edges, int num_inputs, Backward backward)
      : Node(std::move(next_edges), num_inputs),
        name_(std::move(name)),
        backward_(std::move(backward)) {}
  std::string name() const override { return name_; }
  TensorList Apply(TensorList grad_outputs) override { return backward_(grad_outputs); }

 private:
  std::string name_;
  Backward backward_;
};

// RunBackward propagates `roots` (an edge and the gradient flowing into it) back to
// `inputs` and returns the gradient that reached each input (undefined when none did).
// See NOTE: [Deterministic backward].
TensorList RunBackward(const std::vector<std::pair<Edge, Tensor>>& roots,
                       const std::vector<Edge>& inputs);

// GraphString: the nodes reachable from `root`, newest first, one per line
// ("MulBackward -> SinBackward, AccumulateGrad"), for debugging and tests.
std::string GraphString(const Edge& root);

}  // namespace ft::autograd

#endif  // FT_AUTOGRAD_GRAPH_H_

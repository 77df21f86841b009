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

  // ReleaseSaved frees the values the node saved for Apply, once a backward that runs its
  // graph only once (NOTE: [Freeing saved values]) has applied it; Apply afterwards throws
  // ft::Error (ThrowReleased). The default saves nothing to free.
  virtual void ReleaseSaved() {}

  // ThrowReleased: the error of an Apply after ReleaseSaved, naming the node.
  [[noreturn]] void ThrowReleased() const;

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
  TensorList Apply(TensorList grad_outputs) override;
  void ReleaseSaved() override { backward_ = nullptr; }

 private:
  std::string name_;
  Backward backward_;
};

// NOTE: [Freeing saved values]
// A node keeps what its formula reads (an op's inputs or outputs) until the graph dies, so
// that a vjp_fn can be called again. grad runs its graph once: with `release_saved`,
// RunBackward frees each node's saved values right after the node ran, as PyTorch's
// backward does without retain_graph. A training step then holds, at any point of the
// backward pass, the activations the rest of it still needs and the gradients made so far,
// not every activation until the end.

// RunBackward propagates `roots` (an edge and the gradient flowing into it) back to
// `inputs` and returns the gradient that reached each input (undefined when none did).
// See NOTE: [Deterministic backward]. `release_saved`: free each node's saved values after
// it ran (NOTE: [Freeing saved values]); the graph cannot be run backward again.
TensorList RunBackward(const std::vector<std::pair<Edge, Tensor>>& roots,
                       const std::vector<Edge>& inputs, bool release_saved = false);

// GraphString: the nodes reachable from `root`, newest first, one per line
// ("MulBackward -> SinBackward, AccumulateGrad"), for debugging and tests.
std::string GraphString(const Edge& root);

}  // namespace ft::autograd

#endif  // FT_AUTOGRAD_GRAPH_H_

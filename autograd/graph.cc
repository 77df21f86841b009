#include "autograd/graph.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dispatch/ops.h"

namespace ft::autograd {
namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};
}  // namespace

Node::Node(std::string name, std::vector<Edge> next_edges, int num_inputs)
    : name_(std::move(name)),
      sequence_nr_(g_next_sequence_nr.fetch_add(1)),
      next_edges_(std::move(next_edges)),
      num_inputs_(num_inputs) {}

namespace {

// Reachable nodes, and whether each reaches one of the targets (needed).
void Collect(Node* node, const std::unordered_set<Node*>& targets,
             std::unordered_map<Node*, bool>& needed) {
  // Iterative DFS (graphs can be deep: a long chain of ops).
  std::vector<std::pair<Node*, size_t>> stack = {{node, 0}};
  needed.emplace(node, targets.count(node) > 0);
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    if (next < n->next_edges().size()) {
      Node* child = n->next_edges()[next++].node.get();
      if (child == nullptr) continue;
      auto [it, inserted] = needed.emplace(child, targets.count(child) > 0);
      if (inserted) stack.push_back({child, 0});
      continue;
    }
    Node* done = n;
    stack.pop_back();
    bool any = needed[done];
    for (const Edge& e : done->next_edges()) {
      if (e.node && needed[e.node.get()]) any = true;
    }
    needed[done] = any;
  }
}

void Accumulate(Tensor& slot, const Tensor& g) {
  if (!g.defined()) return;
  slot = slot.defined() ? add(slot, g) : g;
}

}  // namespace

TensorList RunBackward(const std::vector<std::pair<Edge, Tensor>>& roots,
                       const std::vector<Edge>& inputs) {
  std::unordered_set<Node*> targets;
  for (const Edge& e : inputs) {
    if (e.valid()) targets.insert(e.node.get());
  }
  std::unordered_map<Node*, bool> needed;
  for (const auto& [edge, grad] : roots) {
    if (edge.valid()) Collect(edge.node.get(), targets, needed);
  }
  // Gradient buffers, keyed by node; processed newest first (NOTE: [Deterministic backward]).
  std::map<uint64_t, Node*, std::greater<uint64_t>> order;
  for (const auto& [node, need] : needed) {
    if (need) order.emplace(node->sequence_nr(), node);
  }
  std::unordered_map<Node*, TensorList> buffers;
  for (const auto& [edge, grad] : roots) {
    if (!edge.valid() || !needed[edge.node.get()]) continue;
    TensorList& buf = buffers[edge.node.get()];
    buf.resize(static_cast<size_t>(edge.node->num_inputs()));
    Accumulate(buf[static_cast<size_t>(edge.input_nr)], grad);
  }
  std::unordered_map<Node*, TensorList> results;
  for (const auto& [seq, node] : order) {
    TensorList grads = std::move(buffers[node]);
    grads.resize(static_cast<size_t>(node->num_inputs()));
    if (targets.count(node)) {
      results[node] = grads;
      continue;  // a leaf: nothing flows further
    }
    bool any = false;
    for (const Tensor& g : grads) any = any || g.defined();
    if (!any) continue;
    TensorList out = node->Apply(grads);
    FT_CHECK(out.size() == node->next_edges().size());
    for (size_t i = 0; i < out.size(); ++i) {
      const Edge& e = node->next_edges()[i];
      if (!e.valid() || !out[i].defined() || !needed[e.node.get()]) continue;
      TensorList& buf = buffers[e.node.get()];
      buf.resize(static_cast<size_t>(e.node->num_inputs()));
      Accumulate(buf[static_cast<size_t>(e.input_nr)], out[i]);
    }
  }
  TensorList out;
  for (const Edge& e : inputs) {
    if (!e.valid() || !results.count(e.node.get())) {
      out.emplace_back();
      continue;
    }
    out.push_back(results[e.node.get()][static_cast<size_t>(e.input_nr)]);
  }
  return out;
}

std::string GraphString(const Edge& root) {
  if (!root.valid()) return "";
  std::unordered_map<Node*, bool> seen;
  Collect(root.node.get(), {}, seen);
  std::map<uint64_t, Node*, std::greater<uint64_t>> order;
  for (const auto& [node, unused] : seen) order.emplace(node->sequence_nr(), node);
  std::vector<std::string> lines;
  for (const auto& [seq, node] : order) {
    std::vector<std::string> next;
    for (const Edge& e : node->next_edges()) next.push_back(e.valid() ? e.node->name() : "None");
    lines.push_back(next.empty() ? node->name()
                                 : absl::StrCat(node->name(), " -> ", absl::StrJoin(next, ", ")));
  }
  return absl::StrJoin(lines, "\n");
}

}  // namespace ft::autograd

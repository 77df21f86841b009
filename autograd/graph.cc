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

// The reachable part of a graph, indexed: nodes[i], and each node's index (one hash map for
// the whole walk; everything else is a flat vector indexed like `nodes`).
struct Reachable {
  std::vector<Node*> nodes;
  std::unordered_map<Node*, int> index;
  std::vector<char> needed;  // reaches one of the targets
};

int Visit(Reachable& r, Node* node, const std::unordered_set<Node*>& targets) {
  auto [it, inserted] = r.index.emplace(node, static_cast<int>(r.nodes.size()));
  if (inserted) {
    r.nodes.push_back(node);
    r.needed.push_back(targets.count(node) > 0 ? 1 : 0);
  }
  return it->second;
}

// Collect: iterative DFS (graphs can be deep: a long chain of ops) that also decides which
// nodes reach a target, children before parents.
void Collect(Reachable& r, Node* root, const std::unordered_set<Node*>& targets) {
  if (r.index.count(root)) return;
  std::vector<std::pair<int, size_t>> stack = {{Visit(r, root, targets), 0}};
  while (!stack.empty()) {
    const int n = stack.back().first;
    const size_t next = stack.back().second;
    Node* node = r.nodes[static_cast<size_t>(n)];
    if (next < node->next_edges().size()) {
      ++stack.back().second;
      Node* child = node->next_edges()[next].node.get();
      if (child == nullptr || r.index.count(child)) continue;
      stack.push_back({Visit(r, child, targets), 0});
      continue;
    }
    stack.pop_back();
    char any = r.needed[static_cast<size_t>(n)];
    for (const Edge& e : node->next_edges()) {
      if (e.node && r.needed[static_cast<size_t>(r.index.at(e.node.get()))]) any = 1;
    }
    r.needed[static_cast<size_t>(n)] = any;
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
  Reachable r;
  for (const auto& [edge, grad] : roots) {
    if (edge.valid()) Collect(r, edge.node.get(), targets);
  }
  const size_t count = r.nodes.size();
  std::vector<TensorList> buffers(count);
  auto buffer = [&](int i) -> TensorList& {
    TensorList& buf = buffers[static_cast<size_t>(i)];
    buf.resize(static_cast<size_t>(r.nodes[static_cast<size_t>(i)]->num_inputs()));
    return buf;
  };
  for (const auto& [edge, grad] : roots) {
    if (!edge.valid()) continue;
    const int i = r.index.at(edge.node.get());
    if (r.needed[static_cast<size_t>(i)]) Accumulate(buffer(i)[static_cast<size_t>(edge.input_nr)], grad);
  }
  // Newest first (NOTE: [Deterministic backward]).
  std::vector<int> order;
  for (size_t i = 0; i < count; ++i) {
    if (r.needed[i]) order.push_back(static_cast<int>(i));
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return r.nodes[static_cast<size_t>(a)]->sequence_nr() >
           r.nodes[static_cast<size_t>(b)]->sequence_nr();
  });
  for (int i : order) {
    Node* node = r.nodes[static_cast<size_t>(i)];
    if (targets.count(node)) continue;  // a leaf: its buffer is the result
    TensorList& grads = buffer(i);
    bool any = false;
    for (const Tensor& g : grads) any = any || g.defined();
    if (!any) continue;
    TensorList out = node->Apply(grads);
    grads.clear();  // free the incoming gradients early
    FT_CHECK(out.size() == node->next_edges().size());
    for (size_t k = 0; k < out.size(); ++k) {
      const Edge& e = node->next_edges()[k];
      if (!e.valid() || !out[k].defined()) continue;
      const int j = r.index.at(e.node.get());
      if (!r.needed[static_cast<size_t>(j)]) continue;
      Accumulate(buffer(j)[static_cast<size_t>(e.input_nr)], out[k]);
    }
  }
  TensorList result;
  for (const Edge& e : inputs) {
    auto it = e.valid() ? r.index.find(e.node.get()) : r.index.end();
    if (it == r.index.end()) {
      result.emplace_back();
      continue;
    }
    TensorList& buf = buffers[static_cast<size_t>(it->second)];
    result.push_back(static_cast<size_t>(e.input_nr) < buf.size() ? buf[static_cast<size_t>(e.input_nr)]
                                                                   : Tensor());
  }
  return result;
}

std::string GraphString(const Edge& root) {
  if (!root.valid()) return "";
  Reachable r;
  Collect(r, root.node.get(), {});
  std::map<uint64_t, Node*, std::greater<uint64_t>> order;
  for (Node* node : r.nodes) order.emplace(node->sequence_nr(), node);
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

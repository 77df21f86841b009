#include "autograd/graph.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/ops.h"

namespace ft::autograd {
namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};
}  // namespace

Node::Node(EdgeList next_edges, int num_inputs)
    : sequence_nr_(g_next_sequence_nr.fetch_add(1)),
      next_edges_(std::move(next_edges)),
      num_inputs_(num_inputs) {}

// NOTE: [Freeing long graphs]
// A node owns the nodes its edges lead to, so freeing the newest node of a chain frees the
// next one from inside its destructor, and so on: one stack frame per op, which overflows
// the stack on a graph of a few hundred thousand ops (a long loop, an RNN over many steps).
// Instead, a destructor hands its edges' nodes to a queue owned by the outermost node
// destructor running on the thread, which frees them one by one: each node is then freed from
// that one frame, whatever the depth of the graph. Destructors run members before the base,
// so whatever a derived node's members free (saved tensors, wrappers holding edges of lower
// levels) goes through here too. The queue lives in that frame, not in a thread_local
// object, so a node freed during thread exit never meets a destroyed queue.
Node::~Node() {
  static constinit thread_local std::vector<std::shared_ptr<Node>>* pending = nullptr;
  if (pending != nullptr) {  // inside an outer node's destructor: it frees these
    for (Edge& e : next_edges_) {
      if (e.node != nullptr) pending->push_back(std::move(e.node));
    }
    return;
  }
  std::vector<std::shared_ptr<Node>> queue;
  for (Edge& e : next_edges_) {
    if (e.node != nullptr) queue.push_back(std::move(e.node));
  }
  pending = &queue;
  while (!queue.empty()) {
    std::shared_ptr<Node> node = std::move(queue.back());
    queue.pop_back();
    node.reset();  // may free it, whose destructor only queues its own edges
  }
  pending = nullptr;
}

namespace {

// Targets: the nodes gradients are requested at. Usually one to a few: a linear scan beats
// hashing them; a set only for many (a model's parameter list).
class Targets {
 public:
  explicit Targets(const std::vector<Edge>& inputs) {
    for (const Edge& e : inputs) {
      if (e.valid()) list_.push_back(e.node.get());
    }
    if (list_.size() > kScanned) set_.insert(list_.begin(), list_.end());
  }
  bool contains(const Node* node) const {
    if (list_.size() > kScanned) return set_.contains(node);
    return std::find(list_.begin(), list_.end(), node) != list_.end();
  }

 private:
  static constexpr size_t kScanned = 8;
  absl::InlinedVector<const Node*, kScanned> list_;
  absl::flat_hash_set<const Node*> set_;
};

// The reachable part of a graph, indexed: nodes[i], and where each node's edges lead. The
// hash map is consulted once per shared node, while walking; everything after that is flat
// vectors indexed like `nodes` (no per-node allocation, no lookups on the backward loop).
//
// NOTE: [Nodes with one owner] A node whose only owner is the edge being followed (its
// shared_ptr's use count is 1) is reached by no other edge, is no root and no target (the
// caller's root and input lists own those too): the walk can add it without asking the
// index whether it was seen. In a chain of ops whose intermediate tensors are gone, that is
// every node but the newest and the leaves. A count read while another thread copies the
// pointer can only be too high, which takes the indexed path: still right.
struct Reachable {
  struct Entry {
    Node* node;
    uint64_t sequence_nr;
    int first_edge;  // edge k of the node leads to child[first_edge + k] (-1: no node)
    int first_slot;  // its incoming gradients are slots[first_slot + i], i < num_inputs
    bool target;     // one of the requested inputs
    bool needed;     // reaches one of the targets
  };
  std::vector<Entry> nodes;
  std::vector<int> child;
  int num_slots = 0;
  absl::flat_hash_map<const Node*, int> index;  // nodes with more than one owner
};

int Append(Reachable& r, Node* node, bool target) {
  r.nodes.push_back(Reachable::Entry{node, node->sequence_nr(), static_cast<int>(r.child.size()),
                                     r.num_slots, target, target});
  r.child.resize(r.child.size() + node->next_edges().size(), -1);
  r.num_slots += node->num_inputs();
  return static_cast<int>(r.nodes.size()) - 1;
}

// Visit returns the index of `node`, adding it (and room for its edges and slots) if it is
// new; `added` tells which. Roots are always indexed (RunBackward looks them up).
int Visit(Reachable& r, const std::shared_ptr<Node>& node, const Targets& targets, bool& added,
          bool is_root = false) {
  added = true;
  if (!is_root && node.use_count() == 1) return Append(r, node.get(), false);  // NOTE above
  auto [it, inserted] = r.index.try_emplace(node.get(), static_cast<int>(r.nodes.size()));
  added = inserted;
  if (inserted) Append(r, node.get(), targets.contains(node.get()));
  return it->second;
}

// Collect: iterative DFS (graphs can be deep: a long chain of ops) that also decides which
// nodes reach a target, children before parents.
void Collect(Reachable& r, const std::shared_ptr<Node>& root, const Targets& targets) {
  bool added = false;
  const int root_index = Visit(r, root, targets, added, /*is_root=*/true);
  if (!added) return;
  std::vector<std::pair<int, size_t>> stack = {{root_index, 0}};
  while (!stack.empty()) {
    const int n = stack.back().first;
    const size_t next = stack.back().second;
    Node* node = r.nodes[static_cast<size_t>(n)].node;
    if (next < node->next_edges().size()) {
      ++stack.back().second;
      const std::shared_ptr<Node>& child = node->next_edges()[next].node;
      if (child == nullptr) continue;
      const int c = Visit(r, child, targets, added);
      // `r.nodes` may have grown: index it again rather than holding a reference.
      r.child[static_cast<size_t>(r.nodes[static_cast<size_t>(n)].first_edge) + next] = c;
      if (added) stack.push_back({c, 0});
      continue;
    }
    stack.pop_back();
    Reachable::Entry& entry = r.nodes[static_cast<size_t>(n)];
    for (size_t k = 0; k < node->next_edges().size(); ++k) {
      const int c = r.child[static_cast<size_t>(entry.first_edge) + k];
      if (c >= 0 && r.nodes[static_cast<size_t>(c)].needed) entry.needed = true;
    }
  }
}

void Accumulate(Tensor& slot, const Tensor& g) {
  if (!g.defined()) return;
  slot = slot.defined() ? add(slot, g) : g;
}

}  // namespace

void Node::ThrowReleased() const {
  ThrowError("grad: ", name(), " ran after its saved values were freed (its graph was run "
             "backward by grad, which runs a graph once; use vjp to run one again)");
}

TensorList FunctionNode::Apply(TensorList grad_outputs) {
  if (!backward_) ThrowReleased();
  return backward_(grad_outputs);
}

TensorList RunBackward(const std::vector<std::pair<Edge, Tensor>>& roots,
                       const std::vector<Edge>& inputs, bool release_saved) {
  const Targets targets(inputs);
  Reachable r;
  // Training loops run the same backward over and over: room for as many nodes as this
  // thread's last backward reached spares the index's rehashes and the vectors' regrowth.
  static constinit thread_local size_t last_size = 0;
  static constinit thread_local size_t last_indexed = 0;
  r.nodes.reserve(last_size);
  r.child.reserve(2 * last_size);
  r.index.reserve(last_indexed);
  for (const auto& [edge, grad] : roots) {
    if (edge.valid()) Collect(r, edge.node, targets);
  }
  last_size = std::min<size_t>(r.nodes.size(), size_t{1} << 16);
  last_indexed = std::min<size_t>(r.index.size(), size_t{1} << 16);
  // Every reachable node's incoming gradients, side by side (Entry::first_slot).
  std::vector<Tensor> slots(static_cast<size_t>(r.num_slots));
  auto slot = [&](int node, int input_nr) -> Tensor& {
    const Reachable::Entry& entry = r.nodes[static_cast<size_t>(node)];
    FT_CHECK(input_nr >= 0 && input_nr < entry.node->num_inputs());
    return slots[static_cast<size_t>(entry.first_slot + input_nr)];
  };
  for (const auto& [edge, grad] : roots) {
    if (!edge.valid()) continue;
    const int i = r.index.at(edge.node.get());
    if (r.nodes[static_cast<size_t>(i)].needed) Accumulate(slot(i, edge.input_nr), grad);
  }
  // Newest first (NOTE: [Deterministic backward]).
  std::vector<int> order;
  order.reserve(r.nodes.size());
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    if (r.nodes[i].needed && !r.nodes[i].target) order.push_back(static_cast<int>(i));
  }
  auto newer = [&](int a, int b) {
    return r.nodes[static_cast<size_t>(a)].sequence_nr >
           r.nodes[static_cast<size_t>(b)].sequence_nr;
  };
  // The walk from the root meets a chain of ops newest first already: checking is linear,
  // sorting is not (sequence numbers are unique, so either way gives the same order).
  if (!std::is_sorted(order.begin(), order.end(), newer)) {
    std::sort(order.begin(), order.end(), newer);
  }
  if (release_saved) {
    // Nodes no input is reached through never run: what they saved can go now.
    for (const Reachable::Entry& entry : r.nodes) {
      if (!entry.needed && !entry.target) entry.node->ReleaseSaved();
    }
  }
  // A node's result list, once its gradients are accumulated, carries the next node's
  // incoming gradients: one heap list per node instead of two.
  TensorList incoming;
  for (int i : order) {
    const Reachable::Entry& entry = r.nodes[static_cast<size_t>(i)];
    Node* node = entry.node;
    const auto first = slots.begin() + entry.first_slot;
    const auto last = first + node->num_inputs();
    if (std::none_of(first, last, [](const Tensor& g) { return g.defined(); })) {
      if (release_saved) node->ReleaseSaved();  // no gradient reached it: it will not run
      continue;
    }
    // Hand the incoming gradients over (this frees them as early as the node allows).
    incoming.assign(std::make_move_iterator(first), std::make_move_iterator(last));
    TensorList out = node->Apply(std::move(incoming));
    if (release_saved) node->ReleaseSaved();
    FT_CHECK(out.size() == node->next_edges().size());
    for (size_t k = 0; k < out.size(); ++k) {
      const int j = r.child[static_cast<size_t>(entry.first_edge) + k];
      if (j < 0 || !out[k].defined() || !r.nodes[static_cast<size_t>(j)].needed) continue;
      Accumulate(slot(j, node->next_edges()[k].input_nr), out[k]);
    }
    out.clear();
    incoming = std::move(out);
  }
  TensorList result;
  result.reserve(inputs.size());
  for (const Edge& e : inputs) {
    auto it = e.valid() ? r.index.find(e.node.get()) : r.index.end();
    if (it == r.index.end() || e.input_nr < 0 || e.input_nr >= e.node->num_inputs()) {
      result.emplace_back();
      continue;
    }
    result.push_back(slot(it->second, e.input_nr));
  }
  return result;
}

std::string GraphString(const Edge& root) {
  if (!root.valid()) return "";
  Reachable r;
  Collect(r, root.node, Targets({}));
  std::map<uint64_t, Node*, std::greater<uint64_t>> order;
  for (const Reachable::Entry& entry : r.nodes) order.emplace(entry.sequence_nr, entry.node);
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

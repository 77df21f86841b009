#include "tree/tree.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ft {
namespace {

using Kind = TreeDef::Kind;
using Node = TreeDef::Node;

std::string StaticToString(const StaticLeaf& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return absl::StrCat(*i);
  if (const auto* d = std::get_if<double>(&v)) return absl::StrCat(*d);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return absl::StrCat("\"", std::get<std::string>(v), "\"");
}

// Describe: one node, for messages ("a Tensor", "a vector of 3", "Mlp{w, b}", "2.5").
std::string Describe(const Node& n) {
  switch (n.kind) {
    case Kind::kTensor:
      return "a Tensor";
    case Kind::kStatic:
      return absl::StrCat("the ", n.type, " ", StaticToString(n.value));
    case Kind::kNone:
      return "None (an empty optional)";
    case Kind::kSequence:
      return absl::StrCat(n.type[0] == 'a' ? "an " : "a ", n.type, " of ", n.num_children);
    case Kind::kDict:
    case Kind::kStruct: {
      std::string out = absl::StrCat(n.kind == Kind::kDict ? "a map" : n.type, "{");
      for (size_t i = 0; i < n.num_children; ++i) {
        absl::StrAppend(&out, i == 0 ? "" : ", ", (*n.keys)[i]);
      }
      return out + "}";
    }
  }
  return "?";
}

std::string ChildStep(const Node& parent, size_t i) {
  switch (parent.kind) {
    case Kind::kDict:
      return tree_internal::KeyStep((*parent.keys)[i]);
    case Kind::kStruct:
      return tree_internal::FieldStep((*parent.keys)[i]);
    default:
      return tree_internal::IndexStep(i);
  }
}

// Print: the subtree at nodes[i] into out; returns the index after it.
size_t Print(const std::vector<Node>& nodes, size_t i, std::string& out) {
  const Node& n = nodes[i];
  switch (n.kind) {
    case Kind::kTensor:
      out += "*";
      return i + 1;
    case Kind::kStatic:
      out += StaticToString(n.value);
      return i + 1;
    case Kind::kNone:
      out += "None";
      return i + 1;
    default:
      break;
  }
  const bool keyed = n.kind == Kind::kDict || n.kind == Kind::kStruct;
  absl::StrAppend(&out, n.kind == Kind::kDict ? "map" : n.type, keyed ? "{" : "[");
  size_t next = i + 1;
  for (size_t c = 0; c < n.num_children; ++c) {
    if (c > 0) out += ", ";
    if (keyed) absl::StrAppend(&out, (*n.keys)[c], ": ");
    next = Print(nodes, next, out);
  }
  out += keyed ? "}" : "]";
  return next;
}

// Paths: appends the path of every tensor leaf under nodes[i] (whose path is `path`).
size_t Paths(const std::vector<Node>& nodes, size_t i, std::string& path,
             std::vector<std::string>& out) {
  const Node& n = nodes[i];
  if (n.kind == Kind::kTensor) out.push_back(path);
  size_t next = i + 1;
  for (size_t c = 0; c < n.num_children; ++c) {
    const size_t size = path.size();
    path += ChildStep(n, c);
    next = Paths(nodes, next, path, out);
    path.resize(size);
  }
  return next;
}

bool SameNode(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.num_children != b.num_children) return false;
  if (std::string_view(a.type) != std::string_view(b.type)) return false;
  if ((a.kind == Kind::kDict || a.kind == Kind::kStruct) && a.keys != b.keys &&
      *a.keys != *b.keys) {
    return false;
  }
  return a.kind != Kind::kStatic || a.value == b.value;
}

// Differ: the first node where the subtrees at a[i] and b[j] differ, with its path.
std::optional<std::string> Differ(const std::vector<Node>& a, size_t i,
                                  const std::vector<Node>& b, size_t j, std::string& path) {
  if (!SameNode(a[i], b[j])) {
    return absl::StrCat("at ", path.empty() ? "the root" : path, ": ", Describe(a[i]), " vs ",
                        Describe(b[j]));
  }
  size_t ci = i + 1, cj = j + 1;
  for (size_t c = 0; c < a[i].num_children; ++c) {
    const size_t size = path.size();
    path += ChildStep(a[i], c);
    if (auto d = Differ(a, ci, b, cj, path)) return d;
    path.resize(size);
    ci += a[ci].num_nodes;
    cj += b[cj].num_nodes;
  }
  return std::nullopt;
}

// Validate: checks the subtree at nodes[i] (at nesting `depth`) and returns the index after
// it; throws on any inconsistency.
size_t Validate(const std::vector<Node>& nodes, size_t i, int depth) {
  constexpr int kMaxDepth = 1000;
  if (depth > kMaxDepth) ThrowError("TreeDef: nesting deeper than ", kMaxDepth);
  if (i >= nodes.size()) ThrowError("TreeDef: the nodes end inside node ", i - 1, "'s children");
  const Node& n = nodes[i];
  if (n.type == nullptr) ThrowError("TreeDef: node ", i, " has no type name");
  const bool leaf = n.kind == Kind::kTensor || n.kind == Kind::kStatic || n.kind == Kind::kNone;
  if (n.kind > Kind::kStruct) ThrowError("TreeDef: node ", i, " has an unknown kind");
  if (leaf && n.num_children != 0) {
    ThrowError("TreeDef: leaf node ", i, " claims ", n.num_children, " children");
  }
  if ((n.kind == Kind::kDict || n.kind == Kind::kStruct) &&
      (n.keys == nullptr || n.keys->size() != n.num_children)) {
    ThrowError("TreeDef: node ", i, " (", n.type, ") has ", n.num_children,
               " children but ", n.keys == nullptr ? 0 : n.keys->size(), " keys");
  }
  size_t next = i + 1;
  size_t leaves = n.kind == Kind::kTensor ? 1 : 0;
  for (size_t c = 0; c < n.num_children; ++c) {
    const size_t child = next;
    next = Validate(nodes, child, depth + 1);
    leaves += nodes[child].num_leaves;
  }
  if (n.num_nodes != next - i || n.num_leaves != leaves) {
    ThrowError("TreeDef: node ", i, " claims ", n.num_nodes, " nodes and ", n.num_leaves,
               " leaves but its subtree has ", next - i, " and ", leaves);
  }
  return next;
}

}  // namespace

TreeDef::TreeDef(std::vector<Node> nodes) : nodes_(std::move(nodes)) {
  if (nodes_.empty()) return;
  const size_t end = Validate(nodes_, 0, 0);
  if (end != nodes_.size()) {
    ThrowError("TreeDef: ", nodes_.size() - end, " nodes after the end of the tree");
  }
}

std::string TreeDef::ToString() const {
  if (nodes_.empty()) return "<empty>";
  std::string out;
  Print(nodes_, 0, out);
  return out;
}

std::vector<std::string> TreeDef::LeafPaths() const {
  std::vector<std::string> out;
  if (nodes_.empty()) return out;
  std::string path;
  Paths(nodes_, 0, path, out);
  return out;
}

std::optional<std::string> TreeDef::FirstDifference(const TreeDef& other) const {
  if (nodes_.empty() || other.nodes_.empty()) {
    if (nodes_.empty() && other.nodes_.empty()) return std::nullopt;
    return "at the root: an empty structure vs a tree";
  }
  std::string path;
  return Differ(nodes_, 0, other.nodes_, 0, path);
}

namespace tree_internal {

size_t Builder::Open(Kind kind, const char* type,
                     std::shared_ptr<const std::vector<std::string>> keys, size_t num_children) {
  // num_leaves holds the leaf count at the opening until Close turns it into the subtree's.
  nodes.push_back({kind, type, std::move(keys), num_children, 1, leaves.size(), {}});
  return nodes.size() - 1;
}

void Builder::Close(size_t index) {
  Node& n = nodes[index];
  n.num_nodes = nodes.size() - index;
  n.num_leaves = leaves.size() - n.num_leaves;
}

const Node& Reader::Peek() const {
  if (node >= def.nodes().size()) {
    ThrowError("tree_unflatten: the structure ends before ", path.empty() ? "the root" : path,
               " (structure: ", def.ToString(), ")");
  }
  return def.nodes()[node];
}

void Reader::Mismatch(const char* want, const Node* found) const {
  ThrowError("tree_unflatten: at ", path.empty() ? "the root" : path, " the structure holds ",
             Describe(found != nullptr ? *found : Peek()), " where the type holds ", want,
             " (structure: ", def.ToString(), ")");
}

const Node& Reader::Take(Kind kind, const char* want) {
  const Node& n = Peek();
  if (n.kind != kind) Mismatch(want);
  ++node;
  return n;
}

Tensor Reader::NextLeaf() {
  if (leaf >= leaves.size()) ThrowLeafCount("tree_unflatten", leaf + 1, leaves.size());
  return leaves[leaf++];
}

std::string IndexStep(size_t i) { return absl::StrCat("[", i, "]"); }
std::string FieldStep(const std::string& name) { return absl::StrCat(".", name); }
std::string KeyStep(const std::string& key) { return absl::StrCat("[\"", key, "\"]"); }

std::shared_ptr<const std::vector<std::string>> SplitFieldNames(const char* names) {
  auto out = std::make_shared<std::vector<std::string>>();
  std::string current;
  for (const char* c = names; ; ++c) {
    if (*c == ',' || *c == '\0') {
      out->push_back(current);
      current.clear();
      if (*c == '\0') break;
    } else if (*c != ' ' && *c != '\t' && *c != '\n') {
      current += *c;
    }
  }
  return out;
}

void ThrowLeafCount(const char* what, size_t expected, size_t got) {
  ThrowError(what, ": the structure has ", expected, " tensor leaves but ", got,
             " tensors were given");
}

void CheckSameStructure(const char* what, const TreeDef& first, size_t index,
                        const TreeDef& other) {
  if (auto difference = first.FirstDifference(other)) {
    ThrowError(what, ": tree ", index, " differs from tree 0 ", *difference, "; tree 0: ",
               first.ToString(), ", tree ", index, ": ", other.ToString());
  }
}

}  // namespace tree_internal
}  // namespace ft

// tree_fuzzer: trees (tree/tree.h, tree/transforms.h) from decoded bytes. Three parts per
// input: a TreeDef built from arbitrary preorder nodes (kinds, child counts, keys, subtree
// sizes, all decoded, so mostly malformed), which must be refused with an ft::Error or be a
// structure every reader handles (printing, paths, comparison, unflattening into several C++
// types, in_dims expansion); a typed tree of decoded shape rebuilt from its own structure and
// compared with a decoded edit of itself; and tree_map / tree_stack over trees that may not
// match. The only outcomes are values or ft::Errors (RunInput checks), never a crash.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ops/ops.h"
#include "tensor/error.h"
#include "tensor/factories.h"
#include "tests/fuzz/fuzz_input.h"
#include "tree/transforms.h"
#include "tree/tree.h"

namespace ft::fuzz {
namespace {

using Kind = TreeDef::Kind;
using Nested = std::vector<std::map<std::string, std::optional<std::pair<Tensor, int64_t>>>>;

// DecodeNodes: up to 12 nodes with decoded fields, usually close to consistent.
std::vector<TreeDef::Node> DecodeNodes(FuzzInput& in) {
  static const char* const kTypes[] = {"Tensor", "int64_t", "None", "vector", "map", "S"};
  const int64_t count = in.Below(13);
  std::vector<TreeDef::Node> nodes;
  for (int64_t i = 0; i < count; ++i) {
    TreeDef::Node n;
    const int64_t kind = in.Below(7);  // 6: an out-of-range kind
    n.kind = static_cast<Kind>(kind);
    n.type = kTypes[kind % 6];
    n.num_children = static_cast<size_t>(in.Below(4));
    n.num_nodes = static_cast<size_t>(in.Below(13));
    n.num_leaves = static_cast<size_t>(in.Below(8));
    if (in.Bool()) {
      auto keys = std::make_shared<std::vector<std::string>>();
      const int64_t num_keys = in.Below(4);
      for (int64_t k = 0; k < num_keys; ++k) keys->push_back(std::string(1, 'a' + in.Below(3)));
      n.keys = std::move(keys);
    }
    if (n.kind == Kind::kStatic) n.value = in.Below(3);
    nodes.push_back(std::move(n));
  }
  return nodes;
}

template <typename T>
void TryUnflatten(const TreeDef& def) {
  TensorList leaves;
  for (size_t i = 0; i < def.num_leaves(); ++i) leaves.push_back(ones({1}));
  try {
    (void)tree_unflatten<T>(def, leaves);
  } catch (const Error&) {
  }
}

void ArbitraryDef(FuzzInput& in) {
  std::vector<TreeDef::Node> nodes = DecodeNodes(in);
  const TreeDef def(std::move(nodes));  // may throw: the common, refused case
  (void)def.ToString();
  const std::vector<std::string> paths = def.LeafPaths();
  if (paths.size() != def.num_leaves()) std::abort();
  if (def.FirstDifference(def).has_value()) std::abort();
  TryUnflatten<Tensor>(def);
  TryUnflatten<int64_t>(def);
  TryUnflatten<std::vector<Tensor>>(def);
  TryUnflatten<std::map<std::string, Tensor>>(def);
  TryUnflatten<std::vector<std::optional<Tensor>>>(def);
  TryUnflatten<std::tuple<Tensor, int64_t>>(def);
  TryUnflatten<Nested>(def);
  // in_dims over it as one argument: a dim for all, or a list or fields that may not fit.
  const int64_t form = in.Below(3);
  const TreeDims dims = form == 0   ? TreeDims(in.OptionalDim(2))
                        : form == 1 ? TreeDims({TreeDims(0), TreeDims(std::nullopt)})
                                    : TreeDims::Fields({{"a", 0}, {"b", 1}});
  const std::vector<std::optional<int64_t>> expanded = TreeDims({dims}).ExpandArguments({def});
  if (expanded.size() != def.num_leaves()) std::abort();
}

Nested DecodeNested(FuzzInput& in) {
  Nested out(static_cast<size_t>(in.Below(4)));
  for (auto& m : out) {
    const int64_t keys = in.Below(4);
    for (int64_t k = 0; k < keys; ++k) {
      const std::string key(1, 'a' + in.Below(4));
      if (in.Bool()) {
        m[key] = std::pair<Tensor, int64_t>{full({in.Below(3)}, 1.0), in.Below(2)};
      } else {
        m[key] = std::nullopt;
      }
    }
  }
  return out;
}

void TypedTrees(FuzzInput& in) {
  const Nested a = DecodeNested(in);
  const Nested b = DecodeNested(in);
  auto [leaves, def] = tree_flatten(a);
  const Nested back = tree_unflatten<Nested>(def, leaves);
  if (!(tree_structure(back) == def)) std::abort();
  const bool same = tree_structure(b) == def;
  if (same != !def.FirstDifference(tree_structure(b)).has_value()) std::abort();
  if (same != !tree_structure(b).FirstDifference(def).has_value()) std::abort();
  (void)tree_map([](const Tensor& x, const Tensor& y) { return x + y; }, a, b);
  (void)tree_stack(std::vector<Nested>{a, b}, in.Dim(2));
  (void)tree_unstack(a, in.Dim(2));
}

}  // namespace
}  // namespace ft::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ft::fuzz::RunInput([&] {
    ft::fuzz::FuzzInput in(data, size);
    const int64_t part = in.Below(2);
    if (part == 0) {
      ft::fuzz::ArbitraryDef(in);
    } else {
      ft::fuzz::TypedTrees(in);
    }
  });
  return 0;
}

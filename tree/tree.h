// ft/tree/tree.h
//
// Trees: your own structs of tensors as values the transforms take and return (JAX's pytrees,
// torch.func's dicts of named parameters). A tree is a Tensor, a static leaf, or a container
// of trees:
//   Tensor                                   a leaf the transforms see
//   int, int64_t, double, float, bool, std::string
//                                            a static leaf: carried in the structure, passed
//                                            through every transform unchanged
//   std::optional<T>                         nullopt is an empty subtree (JAX's None)
//   std::vector<T>, std::array<T, N>, std::tuple<Ts...>, std::pair<A, B>
//                                            sequences, children in order
//   std::map<std::string, T>                 a dict, children in key order
//   a struct declared with FT_TREE           its listed fields, in the listed order
//
//   struct Linear { ft::Tensor w, b; };
//   FT_TREE(Linear, w, b);                   // at namespace scope, after the struct
//   struct Mlp { std::vector<Linear> layers; double dropout = 0.0; };
//   FT_TREE(Mlp, layers, dropout);
//
// A struct must be default-constructible with public fields; FT_TREE names the fields that
// belong to the tree (others keep their default value when a tree is rebuilt).
//
// The library:
//   tree_leaves(t)              the tensor leaves, depth first, in order (TensorList)
//   tree_structure(t)           the TreeDef: node kinds, field names and keys, sizes, static
//                               values (everything but the tensors)
//   tree_flatten(t)             {leaves, structure}
//   tree_unflatten<T>(def, leaves)   the inverse; the structure must be one T can hold
//   tree_map(fn, t, rest...)    a T whose leaf i is fn(leaf i of t, leaf i of each rest);
//                               every tree must have t's structure
//   tree_map_with_path(fn, t, rest...)   the same, fn(path, leaves...) with the leaf's path
//                               (".layers[1].w", "[\"bias\"]")
//   tree_leaf_paths(t)          the paths of the tensor leaves, in order
//
// Invariants: flattening is deterministic (fields in FT_TREE order, map keys sorted,
// sequences in order); tree_unflatten<T>(tree_structure(t), tree_leaves(t)) rebuilds t's
// tree fields, sharing its tensors. Leaves are handles: nothing is copied.
//
// Errors (ft::Error): a structure mismatch names the path of the first difference and both
// structures ("tree_map: tree 1 differs from tree 0 at .layers[1]: a vector of 2 vs a vector
// of 3; tree 0: Mlp{...}, tree 1: Mlp{...}"); tree_unflatten names the path whose node does
// not fit the type, and a leaf count that does not match.
//
// Example:
//   Mlp p = ...;
//   Mlp half = ft::tree_map([](const ft::Tensor& t) { return t * 0.5; }, p);
//   Mlp sum = ft::tree_map([](const ft::Tensor& a, const ft::Tensor& b) { return a + b; },
//                          p, half);
//   ft::TensorList leaves = ft::tree_leaves(p);   // layers[0].w, layers[0].b, layers[1].w...
#ifndef FT_TREE_TREE_H_
#define FT_TREE_TREE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "tensor/error.h"
#include "tensor/tensor.h"

namespace ft {

// StaticLeaf: the value of a non-tensor leaf (integers are held as int64_t, floats as double).
using StaticLeaf = std::variant<int64_t, double, bool, std::string>;

// TreeDef: the structure of a tree, everything but its tensors. Nodes are kept in preorder;
// each records its kind, a type name for messages, its keys (struct fields, map keys), its
// number of children, and how many nodes and tensor leaves its subtree holds.
class TreeDef {
 public:
  enum class Kind : uint8_t {
    kTensor,    // a tensor leaf
    kStatic,    // a static leaf (value())
    kNone,      // an empty std::optional
    kSequence,  // vector, array, tuple, pair: children in order
    kDict,      // std::map<std::string, T>: keys() in order
    kStruct,    // an FT_TREE struct: keys() are its field names
  };
  struct Node {
    Kind kind = Kind::kTensor;
    const char* type = "";  // "Tensor", "vector", "tuple", "Mlp", "int64_t", ...
    std::shared_ptr<const std::vector<std::string>> keys;  // kDict and kStruct
    size_t num_children = 0;
    size_t num_nodes = 1;   // nodes in this subtree, itself included
    size_t num_leaves = 0;  // tensor leaves in this subtree
    StaticLeaf value;       // kStatic
  };

  TreeDef() = default;
  // TreeDef(nodes): a structure from its preorder nodes. Throws ft::Error ("TreeDef: ...")
  // unless they describe one tree: counts of children, nodes and leaves that add up, keys for
  // every map and struct child, a type name on every node, nesting at most 1000 deep.
  explicit TreeDef(std::vector<Node> nodes);
  // For the library's own flattening, whose nodes are well formed by construction.
  struct Trusted {};
  TreeDef(std::vector<Node> nodes, Trusted) : nodes_(std::move(nodes)) {}

  const std::vector<Node>& nodes() const { return nodes_; }
  // num_leaves: the number of tensor leaves.
  size_t num_leaves() const { return nodes_.empty() ? 0 : nodes_[0].num_leaves; }
  // ToString: a compact picture, e.g. `Mlp{layers: vector[Linear{w: *, b: *}, ...], ...}`;
  // `*` is a tensor leaf, static leaves print their value, `None` an empty optional.
  std::string ToString() const;
  // LeafPaths: each tensor leaf's path from the root, in leaf order (".w", "[0].b", "[\"k\"]").
  std::vector<std::string> LeafPaths() const;
  // FirstDifference: nullopt when both structures are equal (kinds, types, keys, sizes and
  // static values); otherwise "at <path>: <this node> vs <other node>".
  std::optional<std::string> FirstDifference(const TreeDef& other) const;
  bool operator==(const TreeDef& other) const { return !FirstDifference(other).has_value(); }

 private:
  std::vector<Node> nodes_;
};

namespace tree_internal {

// Builder: what flattening appends to.
struct Builder {
  std::vector<TreeDef::Node> nodes;
  TensorList leaves;
  // Open / Close bracket a container's children (Close fills in the subtree counts).
  size_t Open(TreeDef::Kind kind, const char* type,
              std::shared_ptr<const std::vector<std::string>> keys, size_t num_children);
  void Close(size_t index);
};

// Reader: what unflattening consumes, with the path of the node being read for messages.
struct Reader {
  const TreeDef& def;
  const TensorList& leaves;
  size_t node = 0;
  size_t leaf = 0;
  std::string path;
  // Take: the next node, which must be of `kind` (or throws naming the path, the node found
  // and `want`, a description of what the C++ type holds).
  const TreeDef::Node& Take(TreeDef::Kind kind, const char* want);
  const TreeDef::Node& Peek() const;
  // Mismatch: throws that `found` (by default the next node) is not `want`.
  [[noreturn]] void Mismatch(const char* want, const TreeDef::Node* found = nullptr) const;
  Tensor NextLeaf();
};

// PathScope: appends one step to a Reader's path for the duration of a child's read.
class PathScope {
 public:
  PathScope(Reader& r, std::string_view step) : r_(r), size_(r.path.size()) {
    r.path.append(step);
  }
  ~PathScope() { r_.path.resize(size_); }
  PathScope(const PathScope&) = delete;
  PathScope& operator=(const PathScope&) = delete;

 private:
  Reader& r_;
  size_t size_;
};

std::string IndexStep(size_t i);
std::string FieldStep(const std::string& name);
std::string KeyStep(const std::string& key);
// SplitFieldNames: FT_TREE's "w1, b1, w2" into {"w1", "b1", "w2"}.
std::shared_ptr<const std::vector<std::string>> SplitFieldNames(const char* names);

}  // namespace tree_internal

// TreeTraits<T>: how T flattens and unflattens. Specialized below for every tree kind; a type
// without a specialization (and without FT_TREE) is not a tree.
template <typename T, typename Enable = void>
struct TreeTraits;

// Tree: T can be flattened and rebuilt.
template <typename T>
concept Tree = requires { TreeTraits<std::decay_t<T>>::kTree; };

template <>
struct TreeTraits<Tensor> {
  static constexpr bool kTree = true;
  static void Flatten(const Tensor& t, tree_internal::Builder& b) {
    b.nodes.push_back({TreeDef::Kind::kTensor, "Tensor", nullptr, 0, 1, 1, {}});
    b.leaves.push_back(t);
  }
  static Tensor Unflatten(tree_internal::Reader& r) {
    r.Take(TreeDef::Kind::kTensor, "a Tensor");
    return r.NextLeaf();
  }
};

// Static leaves: integers, floating point, bool and strings.
template <typename T>
concept StaticLeafType =
    std::is_arithmetic_v<T> || std::is_same_v<T, std::string>;

template <StaticLeafType T>
struct TreeTraits<T> {
  static constexpr bool kTree = true;
  static constexpr const char* TypeName() {
    if constexpr (std::is_same_v<T, bool>) return "bool";
    else if constexpr (std::is_same_v<T, std::string>) return "string";
    else if constexpr (std::is_floating_point_v<T>) return "double";
    else return "int64_t";
  }
  static void Flatten(const T& v, tree_internal::Builder& b) {
    StaticLeaf value;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
      value = v;
    } else if constexpr (std::is_floating_point_v<T>) {
      value = static_cast<double>(v);
    } else {
      value = static_cast<int64_t>(v);
    }
    b.nodes.push_back({TreeDef::Kind::kStatic, TypeName(), nullptr, 0, 1, 0, std::move(value)});
  }
  static T Unflatten(tree_internal::Reader& r) {
    const TreeDef::Node& node = r.Take(TreeDef::Kind::kStatic, TypeName());
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
      if (!std::holds_alternative<T>(node.value)) r.Mismatch(TypeName(), &node);
      return std::get<T>(node.value);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!std::holds_alternative<double>(node.value)) r.Mismatch(TypeName(), &node);
      return static_cast<T>(std::get<double>(node.value));
    } else {
      if (!std::holds_alternative<int64_t>(node.value)) r.Mismatch(TypeName(), &node);
      return static_cast<T>(std::get<int64_t>(node.value));
    }
  }
};

template <Tree T>
struct TreeTraits<std::optional<T>> {
  static constexpr bool kTree = true;
  static void Flatten(const std::optional<T>& v, tree_internal::Builder& b) {
    if (v.has_value()) {
      TreeTraits<T>::Flatten(*v, b);
    } else {
      b.nodes.push_back({TreeDef::Kind::kNone, "None", nullptr, 0, 1, 0, {}});
    }
  }
  static std::optional<T> Unflatten(tree_internal::Reader& r) {
    if (r.Peek().kind == TreeDef::Kind::kNone) {
      r.Take(TreeDef::Kind::kNone, "None");
      return std::nullopt;
    }
    return TreeTraits<T>::Unflatten(r);
  }
};

template <Tree T>
struct TreeTraits<std::vector<T>> {
  static constexpr bool kTree = true;
  static void Flatten(const std::vector<T>& v, tree_internal::Builder& b) {
    const size_t index = b.Open(TreeDef::Kind::kSequence, "vector", nullptr, v.size());
    for (const T& e : v) TreeTraits<T>::Flatten(e, b);
    b.Close(index);
  }
  static std::vector<T> Unflatten(tree_internal::Reader& r) {
    const TreeDef::Node& node = r.Take(TreeDef::Kind::kSequence, "a vector");
    std::vector<T> out;
    out.reserve(node.num_children);
    for (size_t i = 0; i < node.num_children; ++i) {
      tree_internal::PathScope step(r, tree_internal::IndexStep(i));
      out.push_back(TreeTraits<T>::Unflatten(r));
    }
    return out;
  }
};

template <Tree T, size_t N>
struct TreeTraits<std::array<T, N>> {
  static constexpr bool kTree = true;
  static void Flatten(const std::array<T, N>& v, tree_internal::Builder& b) {
    const size_t index = b.Open(TreeDef::Kind::kSequence, "array", nullptr, N);
    for (const T& e : v) TreeTraits<T>::Flatten(e, b);
    b.Close(index);
  }
  static std::array<T, N> Unflatten(tree_internal::Reader& r) {
    const TreeDef::Node& node = r.Take(TreeDef::Kind::kSequence, "an array");
    if (node.num_children != N) r.Mismatch("an array of a different size", &node);
    std::array<T, N> out;
    for (size_t i = 0; i < N; ++i) {
      tree_internal::PathScope step(r, tree_internal::IndexStep(i));
      out[i] = TreeTraits<T>::Unflatten(r);
    }
    return out;
  }
};

template <Tree... Ts>
struct TreeTraits<std::tuple<Ts...>> {
  static constexpr bool kTree = true;
  static void Flatten(const std::tuple<Ts...>& v, tree_internal::Builder& b) {
    const size_t index = b.Open(TreeDef::Kind::kSequence, "tuple", nullptr, sizeof...(Ts));
    std::apply([&](const Ts&... e) { (TreeTraits<Ts>::Flatten(e, b), ...); }, v);
    b.Close(index);
  }
  static std::tuple<Ts...> Unflatten(tree_internal::Reader& r) {
    const TreeDef::Node& node = r.Take(TreeDef::Kind::kSequence, "a tuple");
    if (node.num_children != sizeof...(Ts)) r.Mismatch("a tuple of a different size", &node);
    return [&]<size_t... I>(std::index_sequence<I...>) {
      // Braced initialization evaluates the elements in order.
      return std::tuple<Ts...>{ReadElement<Ts>(r, I)...};
    }(std::index_sequence_for<Ts...>());
  }
  template <typename T>
  static T ReadElement(tree_internal::Reader& r, size_t i) {
    tree_internal::PathScope step(r, tree_internal::IndexStep(i));
    return TreeTraits<T>::Unflatten(r);
  }
};

template <Tree A, Tree B>
struct TreeTraits<std::pair<A, B>> {
  static constexpr bool kTree = true;
  static void Flatten(const std::pair<A, B>& v, tree_internal::Builder& b) {
    const size_t index = b.Open(TreeDef::Kind::kSequence, "pair", nullptr, 2);
    TreeTraits<A>::Flatten(v.first, b);
    TreeTraits<B>::Flatten(v.second, b);
    b.Close(index);
  }
  static std::pair<A, B> Unflatten(tree_internal::Reader& r) {
    const TreeDef::Node& node = r.Take(TreeDef::Kind::kSequence, "a pair");
    if (node.num_children != 2) r.Mismatch("a pair", &node);
    std::optional<A> first;
    {
      tree_internal::PathScope step(r, tree_internal::IndexStep(0));
      first.emplace(TreeTraits<A>::Unflatten(r));
    }
    tree_internal::PathScope step(r, tree_internal::IndexStep(1));
    return {std::move(*first), TreeTraits<B>::Unflatten(r)};
  }
};

template <Tree T>
struct TreeTraits<std::map<std::string, T>> {
  static constexpr bool kTree = true;
  static void Flatten(const std::map<std::string, T>& v, tree_internal::Builder& b) {
    auto keys = std::make_shared<std::vector<std::string>>();
    keys->reserve(v.size());
    for (const auto& [key, value] : v) keys->push_back(key);
    const size_t index = b.Open(TreeDef::Kind::kDict, "map", std::move(keys), v.size());
    for (const auto& [key, value] : v) TreeTraits<T>::Flatten(value, b);
    b.Close(index);
  }
  static std::map<std::string, T> Unflatten(tree_internal::Reader& r) {
    const TreeDef::Node& node = r.Take(TreeDef::Kind::kDict, "a map");
    std::map<std::string, T> out;
    for (size_t i = 0; i < node.num_children; ++i) {
      const std::string& key = (*node.keys)[i];
      tree_internal::PathScope step(r, tree_internal::KeyStep(key));
      out.emplace(key, TreeTraits<T>::Unflatten(r));
    }
    return out;
  }
};

// Structs declared with FT_TREE (found by argument-dependent lookup of FtTreeFields).
template <typename T>
concept TreeStruct = requires(T& t, const T& c) {
  FtTreeFields(t);
  FtTreeFields(c);
  FtTreeFieldNames(static_cast<const T*>(nullptr));
  FtTreeTypeName(static_cast<const T*>(nullptr));
};

template <TreeStruct T>
struct TreeTraits<T> {
  static constexpr bool kTree = true;
  static const std::shared_ptr<const std::vector<std::string>>& Names() {
    static const std::shared_ptr<const std::vector<std::string>> names =
        tree_internal::SplitFieldNames(FtTreeFieldNames(static_cast<const T*>(nullptr)));
    return names;
  }
  static void Flatten(const T& v, tree_internal::Builder& b) {
    auto fields = FtTreeFields(v);
    constexpr size_t n = std::tuple_size_v<decltype(fields)>;
    const char* type = FtTreeTypeName(static_cast<const T*>(nullptr));
    const size_t index = b.Open(TreeDef::Kind::kStruct, type, Names(), n);
    std::apply(
        [&](const auto&... f) { (TreeTraits<std::decay_t<decltype(f)>>::Flatten(f, b), ...); },
        fields);
    b.Close(index);
  }
  static T Unflatten(tree_internal::Reader& r) {
    const char* type = FtTreeTypeName(static_cast<const T*>(nullptr));
    const TreeDef::Node& node = r.Take(TreeDef::Kind::kStruct, type);
    if (node.keys != Names() && *node.keys != *Names()) r.Mismatch(type, &node);
    T out{};
    auto fields = FtTreeFields(out);
    size_t i = 0;
    std::apply(
        [&](auto&... f) {
          ((ReadField(r, f, (*Names())[i]), ++i), ...);
        },
        fields);
    return out;
  }
  template <typename F>
  static void ReadField(tree_internal::Reader& r, F& field, const std::string& name) {
    tree_internal::PathScope step(r, tree_internal::FieldStep(name));
    field = TreeTraits<F>::Unflatten(r);
  }
};

// ---- The library ----

// FT_TREE_INTERNAL_REQUIRE: what a library call on a type that is not a tree says.
#define FT_TREE_INTERNAL_REQUIRE(T)                                                         \
  static_assert(::ft::Tree<T>,                                                              \
                "not a tree: a tree is a Tensor, a number, bool or string, an optional, "   \
                "vector, array, tuple, pair or map<string, _> of trees, or a struct "       \
                "declared with FT_TREE(Type, fields...) in the struct's own namespace")


// tree_flatten: the tensor leaves of `tree`, in order, and its structure.
template <typename T>
std::pair<TensorList, TreeDef> tree_flatten(const T& tree) {
  FT_TREE_INTERNAL_REQUIRE(T);
  tree_internal::Builder b;
  TreeTraits<std::decay_t<T>>::Flatten(tree, b);
  return {std::move(b.leaves), TreeDef(std::move(b.nodes), TreeDef::Trusted{})};
}

// tree_leaves: the tensor leaves of `tree`, in order.
template <typename T>
TensorList tree_leaves(const T& tree) {
  FT_TREE_INTERNAL_REQUIRE(T);
  return tree_flatten(tree).first;
}

// tree_structure: the structure of `tree`.
template <typename T>
TreeDef tree_structure(const T& tree) {
  FT_TREE_INTERNAL_REQUIRE(T);
  return tree_flatten(tree).second;
}

// tree_leaf_paths: the path of each tensor leaf of `tree`, in leaf order.
template <typename T>
std::vector<std::string> tree_leaf_paths(const T& tree) {
  FT_TREE_INTERNAL_REQUIRE(T);
  return tree_structure(tree).LeafPaths();
}

namespace tree_internal {
[[noreturn]] void ThrowLeafCount(const char* what, size_t expected, size_t got);
void CheckSameStructure(const char* what, const TreeDef& first, size_t index,
                        const TreeDef& other);
}  // namespace tree_internal

// tree_unflatten: the T with structure `def` and tensor leaves `leaves` (in order). Throws
// when `def` is not a structure T holds (naming the path) or the leaf count differs.
template <typename T>
T tree_unflatten(const TreeDef& def, const TensorList& leaves) {
  FT_TREE_INTERNAL_REQUIRE(T);
  if (leaves.size() != def.num_leaves()) {
    tree_internal::ThrowLeafCount("tree_unflatten", def.num_leaves(), leaves.size());
  }
  tree_internal::Reader r{def, leaves, 0, 0, std::string()};
  return TreeTraits<std::decay_t<T>>::Unflatten(r);
}

// tree_map: a T whose tensor leaf i is fn(leaf i of tree, leaf i of each of rest...); static
// leaves are tree's. Every tree in rest must have tree's structure (ft::Error naming the first
// difference otherwise). fn returns a Tensor.
template <typename T, typename Fn, typename... Rest>
T tree_map(Fn&& fn, const T& tree, const Rest&... rest) {
  FT_TREE_INTERNAL_REQUIRE(T);
  // Named variables, not structured bindings: clang 14 cannot capture those in lambdas.
  std::pair<TensorList, TreeDef> flat = tree_flatten(tree);
  const TensorList& leaves = flat.first;
  const TreeDef& def = flat.second;
  std::array<TensorList, sizeof...(Rest)> others;
  if constexpr (sizeof...(Rest) > 0) {
    size_t k = 0;
    (
        [&](const auto& other) {
          auto [other_leaves, other_def] = tree_flatten(other);
          tree_internal::CheckSameStructure("tree_map", def, k + 1, other_def);
          others[k++] = std::move(other_leaves);
        }(rest),
        ...);
  }
  TensorList mapped(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    mapped[i] = [&]<size_t... I>(std::index_sequence<I...>) {
      return Tensor(fn(leaves[i], others[I][i]...));
    }(std::make_index_sequence<sizeof...(Rest)>());
  }
  return tree_unflatten<T>(def, mapped);
}

// tree_map_with_path: tree_map with the leaf's path first: fn(path, leaf, rest leaves...).
template <typename T, typename Fn, typename... Rest>
T tree_map_with_path(Fn&& fn, const T& tree, const Rest&... rest) {
  FT_TREE_INTERNAL_REQUIRE(T);
  const std::vector<std::string> paths = tree_leaf_paths(tree);
  size_t i = 0;
  return tree_map(
      [&](const Tensor& leaf, const auto&... others) { return fn(paths[i++], leaf, others...); },
      tree, rest...);
}

}  // namespace ft

// FT_TREE(Type, field, ...): declares the struct Type a tree of the listed fields (1 to 32), in
// that order. Write it at namespace scope in Type's namespace, after Type's definition.
#define FT_TREE(Type, ...)                                                       \
  [[maybe_unused]] inline auto FtTreeFields(Type& ft_tree_self) {                \
    return std::tie(FT_TREE_INTERNAL_FIELDS(ft_tree_self, __VA_ARGS__));         \
  }                                                                              \
  [[maybe_unused]] inline auto FtTreeFields(const Type& ft_tree_self) {          \
    return std::tie(FT_TREE_INTERNAL_FIELDS(ft_tree_self, __VA_ARGS__));         \
  }                                                                              \
  [[maybe_unused]] inline constexpr const char* FtTreeFieldNames(const Type*) {  \
    return #__VA_ARGS__;                                                         \
  }                                                                              \
  [[maybe_unused]] inline constexpr const char* FtTreeTypeName(const Type*) {   \
    return #Type;                                                                \
  }                                                                              \
  static_assert(true, "")

// FT_TREE_INTERNAL_FIELDS(s, a, b, c) -> s.a, s.b, s.c (up to 32 fields).
#define FT_TREE_I_X(x) x
#define FT_TREE_I_CAT(a, b) FT_TREE_I_CAT2(a, b)
#define FT_TREE_I_CAT2(a, b) a##b
#define FT_TREE_I_NTH(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, \
                      _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, \
                      _31, _32, N, ...)                                                     \
  N
#define FT_TREE_I_COUNT(...)                                                                \
  FT_TREE_I_X(FT_TREE_I_NTH(__VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, \
                            19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1))
#define FT_TREE_INTERNAL_FIELDS(s, ...) \
  FT_TREE_I_X(FT_TREE_I_CAT(FT_TREE_I_F, FT_TREE_I_COUNT(__VA_ARGS__))(s, __VA_ARGS__))
#define FT_TREE_I_F1(s, a) s.a
#define FT_TREE_I_F2(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F1(s, __VA_ARGS__))
#define FT_TREE_I_F3(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F2(s, __VA_ARGS__))
#define FT_TREE_I_F4(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F3(s, __VA_ARGS__))
#define FT_TREE_I_F5(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F4(s, __VA_ARGS__))
#define FT_TREE_I_F6(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F5(s, __VA_ARGS__))
#define FT_TREE_I_F7(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F6(s, __VA_ARGS__))
#define FT_TREE_I_F8(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F7(s, __VA_ARGS__))
#define FT_TREE_I_F9(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F8(s, __VA_ARGS__))
#define FT_TREE_I_F10(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F9(s, __VA_ARGS__))
#define FT_TREE_I_F11(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F10(s, __VA_ARGS__))
#define FT_TREE_I_F12(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F11(s, __VA_ARGS__))
#define FT_TREE_I_F13(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F12(s, __VA_ARGS__))
#define FT_TREE_I_F14(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F13(s, __VA_ARGS__))
#define FT_TREE_I_F15(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F14(s, __VA_ARGS__))
#define FT_TREE_I_F16(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F15(s, __VA_ARGS__))
#define FT_TREE_I_F17(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F16(s, __VA_ARGS__))
#define FT_TREE_I_F18(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F17(s, __VA_ARGS__))
#define FT_TREE_I_F19(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F18(s, __VA_ARGS__))
#define FT_TREE_I_F20(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F19(s, __VA_ARGS__))
#define FT_TREE_I_F21(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F20(s, __VA_ARGS__))
#define FT_TREE_I_F22(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F21(s, __VA_ARGS__))
#define FT_TREE_I_F23(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F22(s, __VA_ARGS__))
#define FT_TREE_I_F24(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F23(s, __VA_ARGS__))
#define FT_TREE_I_F25(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F24(s, __VA_ARGS__))
#define FT_TREE_I_F26(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F25(s, __VA_ARGS__))
#define FT_TREE_I_F27(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F26(s, __VA_ARGS__))
#define FT_TREE_I_F28(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F27(s, __VA_ARGS__))
#define FT_TREE_I_F29(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F28(s, __VA_ARGS__))
#define FT_TREE_I_F30(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F29(s, __VA_ARGS__))
#define FT_TREE_I_F31(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F30(s, __VA_ARGS__))
#define FT_TREE_I_F32(s, a, ...) s.a, FT_TREE_I_X(FT_TREE_I_F31(s, __VA_ARGS__))

#endif  // FT_TREE_TREE_H_

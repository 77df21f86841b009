#include "tree/transforms.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "tensor/dtype.h"

namespace ft {
namespace {

std::string Where(const std::string& path) { return path.empty() ? "the root" : path; }

}  // namespace

TreeDims TreeDims::Fields(std::initializer_list<std::pair<std::string, TreeDims>> fields) {
  TreeDims d(std::nullopt);
  d.kind_ = Kind::kFields;
  for (const auto& [name, dims] : fields) {
    d.names_.push_back(name);
    d.entries_.push_back(dims);
  }
  return d;
}

std::string TreeDims::ToString() const {
  switch (kind_) {
    case Kind::kDim:
      return dim_.has_value() ? absl::StrCat(*dim_) : "nullopt";
    case Kind::kSequence: {
      std::string out = "{";
      for (size_t i = 0; i < entries_.size(); ++i) {
        absl::StrAppend(&out, i == 0 ? "" : ", ", entries_[i].ToString());
      }
      return out + "}";
    }
    case Kind::kFields: {
      std::string out = "Fields{";
      for (size_t i = 0; i < entries_.size(); ++i) {
        absl::StrAppend(&out, i == 0 ? "" : ", ", names_[i], ": ", entries_[i].ToString());
      }
      return out + "}";
    }
  }
  return "?";
}

void TreeDims::Expand(const TreeDef& def, size_t node, std::string& path, const char* what,
                      std::vector<std::optional<int64_t>>& out) const {
  if (node >= def.nodes().size()) {  // an empty structure (a default TreeDef): no leaves
    if (kind_ == Kind::kDim) return;
    ThrowError("vmap: ", what, " ", ToString(), " does not fit ", Where(path),
               ": the structure is empty");
  }
  const TreeDef::Node& n = def.nodes()[node];
  if (kind_ == Kind::kDim) {
    out.insert(out.end(), n.num_leaves, dim_);
    return;
  }
  auto mismatch = [&](const std::string& why) {
    ThrowError("vmap: ", what, " ", ToString(), " does not fit ", Where(path), ": ", why,
               " (", what, " is a prefix of the structure ", def.ToString(), ")");
  };
  const bool keyed = n.kind == TreeDef::Kind::kDict || n.kind == TreeDef::Kind::kStruct;
  if (kind_ == Kind::kSequence) {
    if (n.kind != TreeDef::Kind::kSequence) {
      mismatch("a list of entries for a node that is no sequence");
    }
    if (entries_.size() != n.num_children) {
      mismatch(absl::StrCat(entries_.size(), " entries for ", n.num_children, " elements"));
    }
  } else {
    if (!keyed) mismatch("fields for a node that is no struct or map");
    std::vector<std::string> given = names_, held = *n.keys;
    std::sort(given.begin(), given.end());
    std::sort(held.begin(), held.end());
    if (given != held) {
      mismatch(absl::StrCat("the fields named are not the node's (", n.type, " has ",
                            absl::StrJoin(*n.keys, ", "), ")"));
    }
  }
  size_t child = node + 1;
  for (size_t c = 0; c < n.num_children; ++c) {
    const TreeDims* entry = &entries_[c];
    std::string step = tree_internal::IndexStep(c);
    if (keyed) {
      const std::string& key = (*n.keys)[c];
      entry = &entries_[static_cast<size_t>(
          std::find(names_.begin(), names_.end(), key) - names_.begin())];
      step = n.kind == TreeDef::Kind::kStruct ? tree_internal::FieldStep(key)
                                              : tree_internal::KeyStep(key);
    }
    const size_t size = path.size();
    path += step;
    entry->Expand(def, child, path, what, out);
    path.resize(size);
    child += def.nodes()[child].num_nodes;
  }
}

std::vector<std::optional<int64_t>> TreeDims::ExpandArguments(
    const std::vector<TreeDef>& defs) const {
  std::vector<std::optional<int64_t>> out;
  if (kind_ == Kind::kFields) {
    ThrowError("vmap: in_dims ", ToString(), " names fields, but in_dims has one entry per ",
               "argument (or one dim for all); wrap it: {TreeDims::Fields(...), ...}");
  }
  if (kind_ == Kind::kSequence && entries_.size() != defs.size()) {
    ThrowError("vmap: in_dims ", ToString(), " has ", entries_.size(), " entries but f takes ",
               defs.size(), " arguments; give one entry per argument, or one dim for all");
  }
  for (size_t k = 0; k < defs.size(); ++k) {
    std::string path = absl::StrCat("arg", k);
    const TreeDims& entry = kind_ == Kind::kSequence ? entries_[k] : *this;
    entry.Expand(defs[k], 0, path, "in_dims", out);
  }
  return out;
}

namespace tree_internal {

std::vector<int64_t> LeafIndices(const char* what, const FlatArgs& flat,
                                 const std::vector<size_t>& arguments) {
  std::vector<int64_t> out;
  for (size_t a : arguments) {
    std::vector<std::string> paths;
    for (size_t i = flat.offsets[a]; i < flat.offsets[a + 1]; ++i) {
      const Tensor& leaf = flat.leaves[i];
      if (leaf.defined() && !IsFloating(leaf.dtype())) {
        if (paths.empty()) paths = flat.defs[a].LeafPaths();
        ThrowError(what, ": the leaf arg", a, paths[i - flat.offsets[a]], " is a ",
                   DTypeName(leaf.dtype()), " tensor; only floating-point leaves are ",
                   "differentiated (make it a static leaf, or move it to an argument that is ",
                   "not in argnums)");
      }
      out.push_back(static_cast<int64_t>(i));
    }
  }
  if (out.empty()) {
    ThrowError(what, ": the arguments at argnums hold no tensor leaves (nothing to ",
               "differentiate)");
  }
  return out;
}

bool NamesLeafPositions(const Error& e) {
  return absl::StartsWith(e.message(), "vmap: ") &&
         e.message().find("argument ") != absl::string_view::npos;
}

void RethrowWithLeafPaths(const Error& e, const FlatArgs& flat) {
  std::string paths;
  constexpr size_t kMaxListed = 16;
  size_t listed = 0;
  for (size_t a = 0; a < flat.defs.size() && listed < kMaxListed; ++a) {
    const std::vector<std::string> leaf_paths = flat.defs[a].LeafPaths();
    for (size_t i = 0; i < leaf_paths.size() && listed < kMaxListed; ++i, ++listed) {
      absl::StrAppend(&paths, listed == 0 ? "" : ", ", flat.offsets[a] + i, " is arg", a,
                      leaf_paths[i]);
    }
  }
  if (listed < flat.leaves.size()) absl::StrAppend(&paths, ", ...");
  ThrowError(std::string(e.message()), " [over trees, argument i is tensor leaf i: ", paths,
             "]");
}

int64_t UnstackSize(const TensorList& leaves, int64_t dim) {
  if (leaves.empty()) ThrowError("tree_unstack: the tree has no tensor leaves to unstack");
  std::optional<int64_t> size;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const Tensor& leaf = leaves[i];
    const int64_t rank = leaf.dim();
    if (dim < -rank || dim >= rank) {
      ThrowError("tree_unstack: dim ", dim, " is out of range for leaf ", i, " of shape ",
                 ShapeToString(leaf.sizes()));
    }
    const int64_t n = leaf.sizes()[static_cast<size_t>(dim < 0 ? dim + rank : dim)];
    if (size.has_value() && n != *size) {
      ThrowError("tree_unstack: leaf ", i, " has size ", n, " at dim ", dim, " but leaf 0 has ",
                 *size, " (every leaf must have the same size there)");
    }
    size = n;
  }
  return *size;
}

void CheckLike(const char* what, const char* role, const char* counterpart, const TreeDef& like,
               const TreeDef& tree) {
  if (auto difference = like.FirstDifference(tree)) {
    ThrowError(what, ": ", role, " must have the structure of ", counterpart, "; they differ ",
               *difference, " (expected ", like.ToString(), ", got ", tree.ToString(), ")");
  }
}

}  // namespace tree_internal
}  // namespace ft

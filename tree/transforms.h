// ft/tree/transforms.h
//
// The transforms over trees (tree/tree.h): vmap, grad, grad_and_value, vjp, jvp, jacrev,
// jacfwd, hessian, jit, functionalize and checkpoint take functions whose arguments and
// results are trees (your FT_TREE structs, vectors, maps, tuples, tensors, static leaves) and
// return trees, the way JAX's transforms take pytrees:
//
//   struct Mlp { ft::Tensor w1, b1, w2, b2; };
//   FT_TREE(Mlp, w1, b1, w2, b2);
//   auto loss = [](const Mlp& p, const ft::Tensor& x, const ft::Tensor& y) -> ft::Tensor {...};
//   Mlp g = ft::grad(loss)(params, x, y);                      // d loss / d params, an Mlp
//   auto [gp, gx] = ft::grad(loss, ft::argnums<0, 1>)(params, x, y);   // a std::tuple
//   Mlp per_example = ft::vmap(ft::grad(loss), {std::nullopt, 0, 0})(params, xs, ys);
//
// Each is an overload of the transform of the same name. It applies to a callable with one
// fixed signature (a function, a lambda without `auto` parameters, a transformed function)
// whose arguments and result are trees, except the signatures the TensorList forms already
// take, which keep their meaning: any function of one TensorList (or ValueList) (grad of
// f(TensorList) differentiates argnums of the list), and Tensor(const Tensor&) for grad, vmap
// and functionalize (their TensorFn forms; the same meaning).
//
// How: the arguments are flattened into one list of tensor leaves; the transform of that
// flat function runs (so trees cost one flatten and one unflatten per call, nothing per op);
// results are rebuilt with the structure the function produced. Static leaves (ints,
// doubles, strings) are part of the structure and pass through every transform.
//
// Per transform:
//   grad(f, argnums<I...>)        f returns a scalar Tensor, or std::pair<Tensor, Aux> (JAX's
//                                 has_aux: aux is returned beside, not differentiated). The
//                                 result has the type of argument I (a std::tuple for
//                                 several), std::pair<that, Aux> with aux. Every tensor leaf
//                                 of the selected arguments must be floating point.
//   grad_and_value(f, argnums<I...>)   {grads, value}; value is f's result (with its aux).
//   vjp(f, args...)               {outputs, vjp_fn}: vjp_fn(cotangent tree shaped like the
//                                 outputs) returns the cotangents of every argument (a tuple
//                                 for several).
//   jvp(f, std::tuple{args...}, std::tuple{tangents...})   {outputs, tangents}; tangents have
//                                 their primals' structure. For one argument jvp(f, x, t).
//   jacrev / jacfwd(f, argnums<I...>)   f returns one Tensor; each leaf of the result (the
//                                 argument's structure) is d out / d leaf, of shape
//                                 out.shape + leaf.shape.
//   hessian(f, argnums<I>)        f returns a scalar Tensor; the blocks d2f / d leaf_a d leaf_b
//                                 as a std::map from leaf a's path to a tree of argument I's
//                                 structure holding leaf b's blocks (a Tensor when argument I
//                                 is one).
//   vmap(f, in_dims, out_dims, randomness, chunk_size)   in_dims and out_dims are TreeDims,
//                                 tree prefixes (JAX's rule): a dim (or nullopt) applies to
//                                 every leaf below; a braced list gives one entry per
//                                 argument (in_dims) or per element of a sequence;
//                                 TreeDims::Fields({{"w", 0}, {"b", std::nullopt}}) one per
//                                 struct field or map key (every one named).
//   jit(f, options)               traced once per structure and static values (and tensor
//                                 signature, as ft::jit); the output's structure must depend
//                                 only on those.
//   functionalize(f, options), checkpoint(f, options)   as their TensorList forms.
//
// And stacking: tree_stack(trees, dim) stacks trees of one structure leaf by leaf (an
// ensemble's parameters, torch.func.stack_module_state); tree_unstack(tree, dim) undoes it.
//
// Errors (ft::Error): every message starts with the transform's name. A tangent or cotangent
// tree whose structure differs from its primal's names the path and both structures; an
// in_dims/out_dims prefix that does not fit names the path; an integer leaf selected by grad
// names its path.
#ifndef FT_TREE_TRANSFORMS_H_
#define FT_TREE_TRANSFORMS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "control_flow/control_flow.h"
#include "interpreters/functionalize/functionalize.h"
#include "interpreters/grad/grad.h"
#include "interpreters/jit/jit.h"
#include "interpreters/jvp/jvp.h"
#include "interpreters/vmap/vmap.h"
#include "ops/ops.h"
#include "tree/tree.h"

namespace ft {

// argnums<I...>: which arguments grad, grad_and_value, jacrev, jacfwd and hessian
// differentiate (JAX's argnums), as template arguments so the result's type follows.
template <size_t... I>
struct Argnums {};
template <size_t... I>
inline constexpr Argnums<I...> argnums{};

// TreeDims: vmap's in_dims / out_dims over trees, a prefix of the structure (see above).
class TreeDims {
 public:
  TreeDims(int64_t dim) : dim_(dim) {}                 // NOLINT
  TreeDims(int dim) : dim_(int64_t{dim}) {}            // NOLINT
  TreeDims(std::nullopt_t) {}                          // NOLINT
  TreeDims(std::optional<int64_t> dim) : dim_(dim) {}  // NOLINT
  // One entry per argument (at the top of in_dims) or per element of a sequence.
  TreeDims(std::initializer_list<TreeDims> entries)  // NOLINT
      : kind_(Kind::kSequence), entries_(entries) {}
  // One entry per struct field or map key, by name; every field or key must be named.
  static TreeDims Fields(std::initializer_list<std::pair<std::string, TreeDims>> fields);

  // Expand: the dims of every tensor leaf of the subtree at def's node `node` whose path is
  // `path`, appended to `out`; `what` ("in_dims", "out_dims") names it in errors.
  void Expand(const TreeDef& def, size_t node, std::string& path, const char* what,
              std::vector<std::optional<int64_t>>& out) const;
  // ExpandArguments: in_dims over the arguments (a dim for all, or one entry per argument).
  std::vector<std::optional<int64_t>> ExpandArguments(const std::vector<TreeDef>& defs) const;
  std::string ToString() const;

 private:
  enum class Kind { kDim, kSequence, kFields };
  Kind kind_ = Kind::kDim;
  std::optional<int64_t> dim_;
  std::vector<TreeDims> entries_;
  std::vector<std::string> names_;  // kFields: entries_[i] is for names_[i]
};

// Results of the tree forms of vjp, jvp and grad_and_value.
template <typename R, typename G>
struct TreeVjpResult {
  R outputs;
  std::function<G(const R& cotangents)> vjp_fn;
};
template <typename R>
struct TreeJvpResult {
  R outputs;
  R tangents;
};
template <typename G, typename R>
struct TreeGradAndValue {
  G grads;
  R value;
};

namespace tree_internal {

// ---- Signatures ----
template <typename R, typename... A>
struct FixedSignature {
  using Result = std::decay_t<R>;
  using Args = std::tuple<std::decay_t<A>...>;
};
template <typename M>
struct MemberSignature {};
template <typename C, typename R, typename... A>
struct MemberSignature<R (C::*)(A...)> : FixedSignature<R, A...> {};
template <typename C, typename R, typename... A>
struct MemberSignature<R (C::*)(A...) const> : FixedSignature<R, A...> {};
template <typename C, typename R, typename... A>
struct MemberSignature<R (C::*)(A...) noexcept> : FixedSignature<R, A...> {};
template <typename C, typename R, typename... A>
struct MemberSignature<R (C::*)(A...) const noexcept> : FixedSignature<R, A...> {};
template <typename F, typename = void>
struct Signature {};
template <typename F>
struct Signature<F, std::void_t<decltype(&F::operator())>>
    : MemberSignature<decltype(&F::operator())> {};
template <typename R, typename... A>
struct Signature<R (*)(A...), void> : FixedSignature<R, A...> {};
template <typename R, typename... A>
struct Signature<R (*)(A...) noexcept, void> : FixedSignature<R, A...> {};

template <typename F>
using ResultOf = typename Signature<std::decay_t<F>>::Result;
template <typename F>
using ArgsOf = typename Signature<std::decay_t<F>>::Args;

template <typename Tuple>
struct AllTrees : std::false_type {};
template <typename... A>
struct AllTrees<std::tuple<A...>> : std::bool_constant<(Tree<A> && ...)> {};

// The signatures the TensorList forms of the transforms take keep those forms: a function of
// one TensorList (or ValueList) everywhere, and Tensor(const Tensor&) where a transform has a
// form of its own for it (grad, vmap, functionalize).
template <typename R, typename Args>
constexpr bool kTensorListForm = std::is_same_v<Args, std::tuple<TensorList>> ||
                                 std::is_same_v<Args, std::tuple<ValueList>>;
template <typename R, typename Args>
constexpr bool kTensorFnForm = std::is_same_v<Args, std::tuple<Tensor>> &&
                               std::is_same_v<R, Tensor>;

}  // namespace tree_internal

// TreeFunction: a callable with one fixed signature over trees, not a TensorList form.
template <typename F>
concept TreeFunction = requires {
  typename tree_internal::ResultOf<F>;
  typename tree_internal::ArgsOf<F>;
} && tree_internal::AllTrees<tree_internal::ArgsOf<F>>::value &&
    Tree<tree_internal::ResultOf<F>> &&
    !tree_internal::kTensorListForm<tree_internal::ResultOf<F>, tree_internal::ArgsOf<F>>;
// TreeFunctionBesideTensorFn: a TreeFunction other than Tensor(const Tensor&), for the
// transforms whose TensorFn form takes that one.
template <typename F>
concept TreeFunctionBesideTensorFn =
    TreeFunction<F> &&
    !tree_internal::kTensorFnForm<tree_internal::ResultOf<F>, tree_internal::ArgsOf<F>>;

namespace tree_internal {

// FlatArgs: the arguments' tensor leaves, one after another, and each argument's structure.
struct FlatArgs {
  TensorList leaves;
  std::vector<TreeDef> defs;
  std::vector<size_t> offsets;  // argument k's leaves start at offsets[k]; last: the total
};

template <typename... Args>
FlatArgs FlattenArgs(const Args&... args) {
  FlatArgs flat;
  flat.defs.reserve(sizeof...(Args));
  flat.offsets.reserve(sizeof...(Args) + 1);
  Builder b;
  (
      [&](const auto& arg) {
        flat.offsets.push_back(b.leaves.size());
        const size_t first = b.nodes.size();
        TreeTraits<std::decay_t<decltype(arg)>>::Flatten(arg, b);
        flat.defs.emplace_back(
            std::vector<TreeDef::Node>(
                std::make_move_iterator(b.nodes.begin() + static_cast<ptrdiff_t>(first)),
                std::make_move_iterator(b.nodes.end())),
            TreeDef::Trusted{});
      }(args),
      ...);
  flat.offsets.push_back(b.leaves.size());
  flat.leaves = std::move(b.leaves);
  return flat;
}

// UnflattenAt: an A with structure `def` from `leaves`, starting at leaf `offset`.
template <typename A>
A UnflattenAt(const TreeDef& def, const TensorList& leaves, size_t offset) {
  Reader r{def, leaves, 0, offset, std::string()};
  return TreeTraits<A>::Unflatten(r);
}

template <typename... Args, size_t... I>
std::tuple<Args...> UnflattenArgs(const FlatArgs& flat, const TensorList& leaves,
                                  std::index_sequence<I...>) {
  return std::tuple<Args...>{UnflattenAt<Args>(flat.defs[I], leaves, flat.offsets[I])...};
}

// CallTypedWith<Args...>: f (any callable taking those arguments) on the arguments rebuilt
// from `leaves` (with flat's structures).
template <typename... Args, typename F>
decltype(auto) CallTypedWith(const F& f, const FlatArgs& flat, const TensorList& leaves) {
  return std::apply(f, UnflattenArgs<Args...>(flat, leaves, std::index_sequence_for<Args...>()));
}

// CallTyped: CallTypedWith for a TreeFunction, its result as F's result type.
template <typename F, typename... Args>
ResultOf<F> CallTyped(const F& f, const FlatArgs& flat, const TensorList& leaves) {
  return CallTypedWith<Args...>(f, flat, leaves);
}

// CallFlat: CallTyped's result flattened, its structure stored in *out_def.
template <typename F, typename... Args>
TensorList CallFlat(const F& f, const FlatArgs& flat, const TensorList& leaves,
                    TreeDef* out_def) {
  auto [out, def] = tree_flatten(CallTyped<F, Args...>(f, flat, leaves));
  *out_def = std::move(def);
  return out;
}

// WithArgs<std::tuple<Args...>>::Make(body): a callable with the fixed signature
// (const Args&...), so that transformed functions are TreeFunctions again and nest.
template <typename Tuple>
struct WithArgs;
template <typename... Args>
struct WithArgs<std::tuple<Args...>> {
  template <typename Body>
  static auto Make(Body body) {
    return [body = std::move(body)](const Args&... args) { return body(args...); };
  }
};

template <typename... T>
struct OneOrTuple {
  using type = std::tuple<T...>;
};
template <typename T>
struct OneOrTuple<T> {
  using type = T;
};
// Selected<Args, I...>: argument I's type, or a tuple of them for several.
template <typename Args, size_t... I>
using Selected = typename OneOrTuple<std::tuple_element_t<I, Args>...>::type;

// LeafIndices: the leaves of the arguments I..., in order; checks each is floating point
// (naming `what`, the argument and the leaf's path otherwise).
std::vector<int64_t> LeafIndices(const char* what, const FlatArgs& flat,
                                 const std::vector<size_t>& arguments);

// RebuildSelected<Args, I...>: the Selected tree from `values`, one per leaf of arguments
// I... in order (gradients, Jacobians), with those arguments' structures.
template <size_t K, size_t... I>
inline constexpr size_t kNth = std::array<size_t, sizeof...(I)>{I...}[K];
template <typename Args, size_t... I>
Selected<Args, I...> RebuildSelected(const FlatArgs& flat, const TensorList& values) {
  constexpr std::array<size_t, sizeof...(I)> index{I...};
  std::array<size_t, sizeof...(I)> starts{};
  size_t at = 0;
  for (size_t k = 0; k < index.size(); ++k) {
    starts[k] = at;
    at += flat.offsets[index[k] + 1] - flat.offsets[index[k]];
  }
  if constexpr (sizeof...(I) == 1) {
    return UnflattenAt<Selected<Args, I...>>(flat.defs[index[0]], values, 0);
  } else {
    return [&]<size_t... K>(std::index_sequence<K...>) {
      return Selected<Args, I...>{UnflattenAt<std::tuple_element_t<kNth<K, I...>, Args>>(
          flat.defs[kNth<K, I...>], values, starts[K])...};
    }(std::make_index_sequence<sizeof...(I)>());
  }
}

template <typename R>
struct AuxSplit {
  static constexpr bool kHasAux = false;
};
template <typename Aux>
struct AuxSplit<std::pair<Tensor, Aux>> {
  static constexpr bool kHasAux = true;
  using AuxType = Aux;
};

// RethrowWithLeafPaths: rethrows `e`, raised by a TensorList form that names its arguments
// by position ("argument 3"), with the path of each leaf position (`what` names the
// transform). Only runs on the error path.
[[noreturn]] void RethrowWithLeafPaths(const Error& e, const FlatArgs& flat);
// NamesLeafPositions: whether `e` is one of vmap's messages naming an argument by position.
bool NamesLeafPositions(const Error& e);

// UnstackSize: the size every leaf has at `dim` (ft::Error naming the leaves otherwise, or
// when there are none).
int64_t UnstackSize(const TensorList& leaves, int64_t dim);

// CheckLike: `tree` (`role`: "the tangents") must have `like`'s structure (`counterpart`:
// "the primals"); ft::Error naming `what`, the path of the first difference and both.
void CheckLike(const char* what, const char* role, const char* counterpart, const TreeDef& like,
               const TreeDef& tree);

}  // namespace tree_internal

// ---- grad, grad_and_value ----

template <TreeFunction F, size_t... I>
auto grad_and_value(F f, Argnums<I...>) {
  using R = tree_internal::ResultOf<F>;
  using Args = tree_internal::ArgsOf<F>;
  using G = tree_internal::Selected<Args, I...>;
  using Split = tree_internal::AuxSplit<R>;
  static_assert(std::is_same_v<R, Tensor> || Split::kHasAux,
                "grad over trees: f must return a scalar ft::Tensor, or a "
                "std::pair<ft::Tensor, Aux> whose second member is returned beside (has_aux)");
  static_assert(sizeof...(I) > 0 && ((I < std::tuple_size_v<Args>) && ...),
                "grad over trees: every argnum must name an argument of f");
  return tree_internal::WithArgs<Args>::Make([f](const auto&... args) {
    const tree_internal::FlatArgs flat = tree_internal::FlattenArgs(args...);
    const std::vector<int64_t> leaves =
        tree_internal::LeafIndices("grad", flat, std::vector<size_t>{I...});
    TreeDef aux_def;
    AuxFn flat_fn = [&](const TensorList& l) -> std::pair<Tensor, TensorList> {
      R r = tree_internal::CallTyped<F, std::decay_t<decltype(args)>...>(f, flat, l);
      if constexpr (Split::kHasAux) {
        auto [aux, def] = tree_flatten(r.second);
        aux_def = std::move(def);
        return {r.first, std::move(aux)};
      } else {
        return {r, TensorList()};
      }
    };
    GradWithAux out = grad_with_aux(flat_fn, leaves)(flat.leaves);
    G grads = tree_internal::RebuildSelected<Args, I...>(flat, out.grads);
    if constexpr (Split::kHasAux) {
      using Aux = typename Split::AuxType;
      R value{out.value, tree_unflatten<Aux>(aux_def, out.aux)};
      return TreeGradAndValue<G, R>{std::move(grads), std::move(value)};
    } else {
      return TreeGradAndValue<G, R>{std::move(grads), out.value};
    }
  });
}
template <TreeFunction F>
auto grad_and_value(F f) {
  return grad_and_value(std::move(f), argnums<0>);
}

template <TreeFunction F, size_t... I>
auto grad(F f, Argnums<I...> selected) {
  using Args = tree_internal::ArgsOf<F>;
  using Split = tree_internal::AuxSplit<tree_internal::ResultOf<F>>;
  auto both = grad_and_value(std::move(f), selected);
  return tree_internal::WithArgs<Args>::Make([both](const auto&... args) {
    auto out = both(args...);
    if constexpr (Split::kHasAux) {
      return std::pair{std::move(out.grads), std::move(out.value.second)};
    } else {
      return std::move(out.grads);
    }
  });
}
template <TreeFunctionBesideTensorFn F>
auto grad(F f) {
  return grad(std::move(f), argnums<0>);
}

// ---- vjp, jvp ----

template <TreeFunction F, Tree... A>
  requires std::is_same_v<tree_internal::ArgsOf<F>, std::tuple<A...>>
auto vjp(F f, const A&... primals) {
  using R = tree_internal::ResultOf<F>;
  using G = typename tree_internal::OneOrTuple<A...>::type;
  auto flat = std::make_shared<const tree_internal::FlatArgs>(
      tree_internal::FlattenArgs(primals...));
  auto out_def = std::make_shared<TreeDef>();
  TensorListFn flat_fn = [&f, flat, out_def](const TensorList& l) {
    return tree_internal::CallFlat<F, A...>(f, *flat, l, out_def.get());
  };
  VjpResult out = vjp(flat_fn, flat->leaves);
  auto vjp_fn = [flat, out_def, inner = std::move(out.vjp_fn)](const R& cotangents) -> G {
    auto [leaves, def] = tree_flatten(cotangents);
    tree_internal::CheckLike("vjp", "the cotangents", "the outputs", *out_def, def);
    const TensorList grads = inner(leaves);
    if constexpr (sizeof...(A) == 1) {
      return tree_internal::UnflattenAt<A...>(flat->defs[0], grads, 0);
    } else {
      return [&]<size_t... I>(std::index_sequence<I...>) {
        return G{tree_internal::UnflattenAt<A>(flat->defs[I], grads, flat->offsets[I])...};
      }(std::index_sequence_for<A...>());
    }
  };
  return TreeVjpResult<R, G>{tree_unflatten<R>(*out_def, out.outputs), std::move(vjp_fn)};
}

template <TreeFunction F, Tree... A>
  requires std::is_same_v<tree_internal::ArgsOf<F>, std::tuple<A...>>
auto jvp(F f, const std::tuple<A...>& primals, const std::tuple<A...>& tangents) {
  using R = tree_internal::ResultOf<F>;
  const tree_internal::FlatArgs flat = std::apply(
      [](const A&... a) { return tree_internal::FlattenArgs(a...); }, primals);
  const tree_internal::FlatArgs flat_t = std::apply(
      [](const A&... a) { return tree_internal::FlattenArgs(a...); }, tangents);
  for (size_t k = 0; k < sizeof...(A); ++k) {
    tree_internal::CheckLike("jvp", "the tangents", "the primals", flat.defs[k],
                             flat_t.defs[k]);
  }
  TreeDef out_def;
  TensorListFn flat_fn = [&](const TensorList& l) {
    return tree_internal::CallFlat<F, A...>(f, flat, l, &out_def);
  };
  JvpResult out = jvp(flat_fn, flat.leaves, flat_t.leaves);
  return TreeJvpResult<R>{tree_unflatten<R>(out_def, out.outputs),
                          tree_unflatten<R>(out_def, out.tangents)};
}
// jvp of a function of one argument: jvp(f, x, t).
template <TreeFunction F, Tree A>
  requires std::is_same_v<tree_internal::ArgsOf<F>, std::tuple<A>>
auto jvp(F f, const A& primal, const A& tangent) {
  return jvp(std::move(f), std::tuple<A>(primal), std::tuple<A>(tangent));
}

// ---- jacrev, jacfwd, hessian ----

namespace tree_internal {

// Jacobian: the Jacobian (by `transform`, jacrev's or jacfwd's TensorList form) of F's one
// Tensor output w.r.t. the leaves of arguments I..., rebuilt as those arguments' trees.
template <typename F, size_t... I, typename Transform>
auto Jacobian(const char* what, F f, Transform transform) {
  using R = ResultOf<F>;
  using Args = ArgsOf<F>;
  static_assert(std::is_same_v<R, Tensor>,
                "jacrev / jacfwd / hessian over trees: f must return one ft::Tensor (for tree "
                "outputs, use vjp or jvp, or one jacobian per output leaf)");
  static_assert(sizeof...(I) > 0 && ((I < std::tuple_size_v<Args>) && ...),
                "jacrev / jacfwd over trees: every argnum must name an argument of f");
  return WithArgs<Args>::Make([f, what, transform](const auto&... args) {
    const FlatArgs flat = FlattenArgs(args...);
    const std::vector<int64_t> leaves = LeafIndices(what, flat, std::vector<size_t>{I...});
    TensorFnOfList flat_fn = [&](const TensorList& l) {
      return CallTyped<F, std::decay_t<decltype(args)>...>(f, flat, l);  // one Tensor
    };
    return RebuildSelected<Args, I...>(flat, transform(flat_fn, leaves)(flat.leaves));
  });
}

}  // namespace tree_internal

template <TreeFunction F, size_t... I>
auto jacrev(F f, Argnums<I...>) {
  return tree_internal::Jacobian<F, I...>(
      "jacrev", std::move(f), [](TensorFnOfList g, std::vector<int64_t> leaves) {
        return jacrev(std::move(g), std::move(leaves));
      });
}
template <TreeFunction F>
auto jacrev(F f) {
  return jacrev(std::move(f), argnums<0>);
}

template <TreeFunction F, size_t... I>
auto jacfwd(F f, Argnums<I...>) {
  return tree_internal::Jacobian<F, I...>(
      "jacfwd", std::move(f), [](TensorFnOfList g, std::vector<int64_t> leaves) {
        return jacfwd(std::move(g), std::move(leaves));
      });
}
template <TreeFunction F>
auto jacfwd(F f) {
  return jacfwd(std::move(f), argnums<0>);
}

template <TreeFunction F, size_t I>
auto hessian(F f, Argnums<I>) {
  using R = tree_internal::ResultOf<F>;
  using Args = tree_internal::ArgsOf<F>;
  using A = std::tuple_element_t<I, Args>;
  static_assert(std::is_same_v<R, Tensor>, "hessian over trees: f must return a scalar Tensor");
  return tree_internal::WithArgs<Args>::Make([f](const auto&... args) {
    const tree_internal::FlatArgs flat = tree_internal::FlattenArgs(args...);
    const std::vector<int64_t> leaves =
        tree_internal::LeafIndices("hessian", flat, std::vector<size_t>{I});
    TensorFnOfList flat_fn = [&](const TensorList& l) {
      return tree_internal::CallTyped<F, std::decay_t<decltype(args)>...>(f, flat, l);
    };
    const TensorList blocks = hessian(flat_fn, leaves)(flat.leaves);
    if constexpr (std::is_same_v<A, Tensor>) {
      return blocks[0];
    } else {
      const size_t n = leaves.size();
      const std::vector<std::string> paths = flat.defs[I].LeafPaths();
      std::map<std::string, A> out;
      for (size_t a = 0; a < n; ++a) {
        const TensorList row(blocks.begin() + static_cast<ptrdiff_t>(a * n),
                             blocks.begin() + static_cast<ptrdiff_t>((a + 1) * n));
        out.emplace(paths[a], tree_unflatten<A>(flat.defs[I], row));
      }
      return out;
    }
  });
}
template <TreeFunction F>
auto hessian(F f) {
  return hessian(std::move(f), argnums<0>);
}

// ---- vmap ----

// TreeVmapOptions: every setting of a vmap over trees by name, e.g. a named axis for the
// collectives of //distributed: vmap(&Loss, TreeVmapOptions{.in_dims = {0, 0},
// .axis_name = "member"}). Like VmapOptions, it is taken by a deduced type, so a braced list
// still means in_dims.
struct TreeVmapOptions {
  TreeDims in_dims = 0;
  TreeDims out_dims = 0;
  Randomness randomness = Randomness::kError;
  std::optional<int64_t> chunk_size = std::nullopt;
  std::string axis_name;
};

template <TreeFunctionBesideTensorFn F, typename O,
          typename = std::enable_if_t<std::is_same_v<O, TreeVmapOptions>>>
auto vmap(F f, const O& options) {
  using R = tree_internal::ResultOf<F>;
  using Args = tree_internal::ArgsOf<F>;
  return tree_internal::WithArgs<Args>::Make([f, options](const auto&... args) {
    const tree_internal::FlatArgs flat = tree_internal::FlattenArgs(args...);
    auto out_def = std::make_shared<TreeDef>();
    TensorListFn flat_fn = [&](const TensorList& l) {
      return tree_internal::CallFlat<F, std::decay_t<decltype(args)>...>(f, flat, l,
                                                                        out_def.get());
    };
    const TreeDims& out_dims = options.out_dims;
    Dims leaf_out_dims = Dims::Deferred([&out_dims, out_def](size_t) {
      std::vector<std::optional<int64_t>> dims;
      std::string path;
      out_dims.Expand(*out_def, 0, path, "out_dims", dims);
      return dims;
    });
    VmapOptions leaf_options;
    leaf_options.in_dims = Dims(options.in_dims.ExpandArguments(flat.defs));
    leaf_options.out_dims = leaf_out_dims;
    leaf_options.randomness = options.randomness;
    leaf_options.chunk_size = options.chunk_size;
    leaf_options.axis_name = options.axis_name;
    const TensorListFn batched = vmap(flat_fn, leaf_options);
    TensorList out;
    try {
      out = batched(flat.leaves);
    } catch (const Error& e) {
      // vmap's own checks name leaves by position: say which path each is.
      if (tree_internal::NamesLeafPositions(e)) {
        tree_internal::RethrowWithLeafPaths(e, flat);
      }
      throw;
    }
    return tree_unflatten<R>(*out_def, out);
  });
}

template <TreeFunctionBesideTensorFn F>
auto vmap(F f, TreeDims in_dims = 0, TreeDims out_dims = 0,
          Randomness randomness = Randomness::kError,
          std::optional<int64_t> chunk_size = std::nullopt) {
  TreeVmapOptions options;
  options.in_dims = std::move(in_dims);
  options.out_dims = std::move(out_dims);
  options.randomness = randomness;
  options.chunk_size = chunk_size;
  return vmap(std::move(f), options);
}

// ---- jit ----

template <TreeFunction F>
auto jit(F f, TraceOptions options = {}) {
  using R = tree_internal::ResultOf<F>;
  using Args = tree_internal::ArgsOf<F>;
  // One JitFunction per argument structure (static values included), each remembering the
  // structure of the outputs its trace produced.
  struct Entry {
    std::vector<TreeDef> defs;
    std::shared_ptr<JitFunction> fn;
    std::shared_ptr<TreeDef> out_def;
  };
  struct State {
    State(F fn, TraceOptions o) : f(std::move(fn)), options(o) {}
    F f;
    TraceOptions options;
    std::mutex mu;
    std::vector<std::shared_ptr<Entry>> entries;
  };
  auto state = std::make_shared<State>(std::move(f), options);
  return tree_internal::WithArgs<Args>::Make([state](const auto&... args) {
    tree_internal::FlatArgs flat = tree_internal::FlattenArgs(args...);
    std::shared_ptr<Entry> entry;
    {
      std::lock_guard<std::mutex> lock(state->mu);
      for (const auto& e : state->entries) {
        if (e->defs == flat.defs) entry = e;
      }
      if (entry == nullptr) {
        entry = std::make_shared<Entry>();
        entry->defs = flat.defs;
        entry->out_def = std::make_shared<TreeDef>();
        auto meta = std::make_shared<const tree_internal::FlatArgs>(
            tree_internal::FlatArgs{{}, flat.defs, flat.offsets});
        std::weak_ptr<State> weak = state;
        auto out_def = entry->out_def;
        entry->fn = std::make_shared<JitFunction>(
            [weak, meta, out_def](const TensorList& l) {
              std::shared_ptr<State> s = weak.lock();
              TreeDef def;
              TensorList out = tree_internal::CallFlat<F, std::decay_t<decltype(args)>...>(
                  s->f, *meta, l, &def);
              std::lock_guard<std::mutex> relock(s->mu);
              *out_def = std::move(def);
              return out;
            },
            state->options);
        state->entries.push_back(entry);
      }
    }
    const TensorList out = (*entry->fn)(flat.leaves);
    std::lock_guard<std::mutex> lock(state->mu);
    return tree_unflatten<R>(*entry->out_def, out);
  });
}

// ---- functionalize, checkpoint ----

namespace tree_internal {

// ThroughFlat: f wrapped by a transform of TensorList functions (`transform(flat_fn)`
// returns a TensorListFn), rebuilding f's result.
template <typename F, typename Transform>
auto ThroughFlat(F f, Transform transform) {
  using R = ResultOf<F>;
  using Args = ArgsOf<F>;
  return WithArgs<Args>::Make([f, transform](const auto&... args) {
    const FlatArgs flat = FlattenArgs(args...);
    auto out_def = std::make_shared<TreeDef>();
    TensorListFn flat_fn = [f, &flat, out_def](const TensorList& l) {
      return CallFlat<F, std::decay_t<decltype(args)>...>(f, flat, l, out_def.get());
    };
    const TensorList out = transform(std::move(flat_fn))(flat.leaves);
    return tree_unflatten<R>(*out_def, out);
  });
}

}  // namespace tree_internal

template <TreeFunctionBesideTensorFn F>
auto functionalize(F f, FunctionalizeOptions options = {}) {
  return tree_internal::ThroughFlat(std::move(f), [options](TensorListFn g) {
    return functionalize(std::move(g), options);
  });
}

template <TreeFunction F>
auto checkpoint(F f, CheckpointOptions options = {}) {
  return tree_internal::ThroughFlat(std::move(f), [options](TensorListFn g) {
    return checkpoint(std::move(g), options);
  });
}

// ---- Stacking trees ----

// tree_stack: one tree whose leaves are the leaves of `trees` stacked along a new dim `dim`
// (torch.func.stack_module_state, JAX's tree_map(stack, *trees)): the parameters of an
// ensemble, for vmap. The trees must share one structure (ft::Error naming the first
// difference otherwise); static leaves are the first tree's.
template <typename T>
T tree_stack(const std::vector<T>& trees, int64_t dim = 0) {
  FT_TREE_INTERNAL_REQUIRE(T);
  if (trees.empty()) ThrowError("tree_stack: no trees to stack");
  auto [first, def] = tree_flatten(trees[0]);
  std::vector<TensorList> columns(first.size());
  for (size_t k = 0; k < trees.size(); ++k) {
    auto [leaves, other] = tree_flatten(trees[k]);
    if (k > 0) tree_internal::CheckSameStructure("tree_stack", def, k, other);
    for (size_t i = 0; i < leaves.size(); ++i) columns[i].push_back(std::move(leaves[i]));
  }
  TensorList stacked;
  stacked.reserve(columns.size());
  for (const TensorList& column : columns) stacked.push_back(stack(column, dim));
  return tree_unflatten<T>(def, stacked);
}

// tree_unstack: the inverse of tree_stack: size(dim) trees, tree k holding each leaf's slice
// k along `dim`. Every leaf must have the same size at `dim`.
template <typename T>
std::vector<T> tree_unstack(const T& tree, int64_t dim = 0) {
  FT_TREE_INTERNAL_REQUIRE(T);
  auto [leaves, def] = tree_flatten(tree);
  const int64_t n = tree_internal::UnstackSize(leaves, dim);
  std::vector<T> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    TensorList slice;
    slice.reserve(leaves.size());
    for (const Tensor& leaf : leaves) slice.push_back(select(leaf, dim, k));
    out.push_back(tree_unflatten<T>(def, slice));
  }
  return out;
}

}  // namespace ft

#endif  // FT_TREE_TRANSFORMS_H_

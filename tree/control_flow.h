// ft/tree/control_flow.h
//
// Control flow over trees: cond, switch_case, while_loop, fori_loop and scan
// (control_flow/control_flow.h) with carries, operands, xs and results that are trees, JAX's
// lax ops over pytrees. Each flattens what it is given, runs the TensorList form (so every
// transform and jit see the same higher-order ops), and rebuilds the trees:
//
//   struct State { ft::Tensor y, t, h; int64_t order; };
//   FT_TREE(State, y, t, h, order);
//   State end = ft::while_loop([](const State& s) { return ft::lt(s.t, 1.0); },
//                              [](const State& s) { return Step(s); }, start);
//   auto [h, ys] = ft::scan([&](const ft::Tensor& h, const Inputs& x) {
//     ft::Tensor next = ft::tanh(ft::matmul(h, w) + ft::matmul(x.u, v));
//     return std::pair{next, next};
//   }, h0, inputs);                                          // ys: Tensor [T, ...]
//
//   cond(pred, true_fn, false_fn, operands...)     true_fn(operands...) and false_fn(...)
//                                                  return trees of one structure
//   switch_case(index, branches, operands...)      branches: std::vector of std::function
//   while_loop(cond_fn, body_fn, init)             body_fn returns a tree of init's structure
//   fori_loop(lower, upper, body, init)            body(i, carry) -> carry
//   scan(f, init, xs, options)                     f(carry, x) -> std::pair{carry, y}; x is
//                                                  xs with every leaf's step t (dim 0); the
//                                                  result's ys stack each y leaf along dim 0
// The TensorList forms keep their signatures (these overloads never take a bare TensorList).
//
// Errors (ft::Error): a body or branch whose result's structure differs from what it must
// match (the carry, the other branch) names the op, the path of the difference and both
// structures, before the TensorList form checks shapes and dtypes.
#ifndef FT_TREE_CONTROL_FLOW_H_
#define FT_TREE_CONTROL_FLOW_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "control_flow/control_flow.h"
#include "tree/transforms.h"
#include "tree/tree.h"

namespace ft {

// TreeScanResult: scan over trees' final carry and stacked outputs.
template <typename C, typename Y>
struct TreeScanResult {
  C carry;
  Y ys;
};

namespace tree_internal {

// NotTensorLists: the tree overloads stay out of the TensorList forms' way.
template <typename... T>
constexpr bool kNotTensorLists = !(std::is_same_v<std::decay_t<T>, TensorList> || ...);

// SameStructureSlot: the structure the first of several branches returned, and a check that
// every later one returns the same.
struct SameStructureSlot {
  std::optional<TreeDef> def;
  void Record(const char* what, const char* role, const TreeDef& got);
};

}  // namespace tree_internal

// while_loop over a tree carry.
template <typename CondF, typename BodyF, typename C>
  requires Tree<C> && tree_internal::kNotTensorLists<C>
C while_loop(CondF cond_fn, BodyF body_fn, const C& init) {
  // Named variables, not structured bindings: clang 14 cannot capture those in lambdas.
  const std::pair<TensorList, TreeDef> flat = tree_flatten(init);
  const TensorList& leaves = flat.first;
  const TreeDef& def = flat.second;
  CondFn flat_cond = [&](const TensorList& l) {
    return Tensor(cond_fn(tree_unflatten<C>(def, l)));
  };
  TensorListFn flat_body = [&](const TensorList& l) {
    auto [out, out_def] = tree_flatten(C(body_fn(tree_unflatten<C>(def, l))));
    tree_internal::CheckLike("while_loop", "the body's result", "the carry", def, out_def);
    return out;
  };
  return tree_unflatten<C>(def, while_loop(flat_cond, flat_body, leaves));
}

// fori_loop over a tree carry.
template <typename BodyF, typename C>
  requires Tree<C> && tree_internal::kNotTensorLists<C>
C fori_loop(int64_t lower, int64_t upper, BodyF body, const C& init) {
  const std::pair<TensorList, TreeDef> flat = tree_flatten(init);
  const TensorList& leaves = flat.first;
  const TreeDef& def = flat.second;
  ForiBodyFn flat_body = [&](const Tensor& i, const TensorList& l) {
    auto [out, out_def] = tree_flatten(C(body(i, tree_unflatten<C>(def, l))));
    tree_internal::CheckLike("fori_loop", "the body's result", "the carry", def, out_def);
    return out;
  };
  return tree_unflatten<C>(def, fori_loop(lower, upper, flat_body, leaves));
}

// scan over a tree carry and tree xs; f(carry, x) returns std::pair{carry, y}.
template <typename F, typename C, typename X>
  requires Tree<C> && Tree<X> && tree_internal::kNotTensorLists<C, X>
auto scan(F f, const C& init, const X& xs, ScanOptions options = {}) {
  using Y = std::decay_t<decltype(std::declval<F&>()(init, xs).second)>;
  const std::pair<TensorList, TreeDef> carry_flat = tree_flatten(init);
  const std::pair<TensorList, TreeDef> x_flat = tree_flatten(xs);
  const TreeDef& carry_def = carry_flat.second;
  const TreeDef& x_def = x_flat.second;
  TreeDef y_def;
  ScanFn flat_f = [&](const TensorList& c, const TensorList& x) {
    auto [next, y] = f(tree_unflatten<C>(carry_def, c), tree_unflatten<X>(x_def, x));
    auto [next_leaves, next_def] = tree_flatten(C(next));
    tree_internal::CheckLike("scan", "the carry f returned", "the init carry", carry_def,
                             next_def);
    auto [y_leaves, def] = tree_flatten(Y(y));
    y_def = std::move(def);
    return std::pair<TensorList, TensorList>{std::move(next_leaves), std::move(y_leaves)};
  };
  // (With no step, the TensorList form still runs f once on zeros to learn the ys.)
  ScanResult out = scan(flat_f, carry_flat.first, x_flat.first, options);
  return TreeScanResult<C, Y>{tree_unflatten<C>(carry_def, out.carry),
                              tree_unflatten<Y>(y_def, out.ys)};
}

// cond over tree operands: true_fn(operands...) or false_fn(operands...).
template <typename TrueF, typename FalseF, typename... Ops>
  requires(Tree<Ops> && ...) && tree_internal::kNotTensorLists<Ops...>
auto cond(const Tensor& pred, TrueF true_fn, FalseF false_fn, const Ops&... operands) {
  using R = std::decay_t<decltype(true_fn(operands...))>;
  const tree_internal::FlatArgs flat = tree_internal::FlattenArgs(operands...);
  tree_internal::SameStructureSlot result;
  auto branch = [&](auto& fn) {
    return TensorListFn([&](const TensorList& l) {
      auto [out, def] = tree_flatten(R(tree_internal::CallTypedWith<Ops...>(fn, flat, l)));
      result.Record("cond", "the branches' results", def);
      return out;
    });
  };
  const TensorList out = cond(pred, branch(true_fn), branch(false_fn), flat.leaves);
  return tree_unflatten<R>(*result.def, out);
}

// switch_case over tree operands: branches[index](operands...).
template <typename R, typename... Ops>
  requires Tree<R> && (Tree<Ops> && ...) && tree_internal::kNotTensorLists<Ops...>
R switch_case(const Tensor& index, const std::vector<std::function<R(const Ops&...)>>& branches,
              const Ops&... operands) {
  const tree_internal::FlatArgs flat = tree_internal::FlattenArgs(operands...);
  tree_internal::SameStructureSlot result;
  std::vector<TensorListFn> flat_branches;
  flat_branches.reserve(branches.size());
  for (const auto& fn : branches) {
    flat_branches.push_back([&](const TensorList& l) {
      auto [out, def] = tree_flatten(tree_internal::CallTypedWith<Ops...>(fn, flat, l));
      result.Record("switch_case", "the branches' results", def);
      return out;
    });
  }
  const TensorList out = switch_case(index, flat_branches, flat.leaves);
  return tree_unflatten<R>(*result.def, out);
}

}  // namespace ft

#endif  // FT_TREE_CONTROL_FLOW_H_
